/**
 * The simulator refuses what Anthropic and OpenAI refuse in a request's content, in their words:
 * whitespace-only text (Anthropic) and a tool schema whose top level is a union (both).
 */
import {describe, expect, it} from 'vitest'

import {validateChatBody} from '../chat.js'
import {messagesContentProblem} from './messages.js'

const user = (content: unknown) => ({role: 'user', content})
const BLANK = 'text content blocks must contain non-whitespace text'

describe('the Messages simulator refuses as Anthropic does', () => {
  it.each([
    ['a blank system string', {system: '  ', messages: [user('hi')]}, `system: ${BLANK}`],
    [
      'a system of blank blocks',
      {system: [{type: 'text', text: '\n'}], messages: [user('hi')]},
      `system: ${BLANK}`,
    ],
    ['a user turn of " "', {messages: [user(' ')]}, `messages: ${BLANK}`],
    [
      'an assistant turn of "\\n\\n" alone',
      {messages: [user('hi'), {role: 'assistant', content: [{type: 'text', text: '\n\n'}]}, user('go')]},
      `messages: ${BLANK}`,
    ],
    [
      "a tool's result of a blank line",
      {
        messages: [
          user('ls'),
          {role: 'assistant', content: [{type: 'tool_use', id: 't', name: 'ls', input: {}}]},
          user([{type: 'tool_result', tool_use_id: 't', content: [{type: 'text', text: '\n'}]}]),
        ],
      },
      `messages: ${BLANK}`,
    ],
    [
      'a top-level anyOf in input_schema',
      {
        messages: [user('hi')],
        tools: [
          {name: 'a', input_schema: {type: 'object'}},
          {name: 'b', input_schema: {type: 'object', anyOf: []}},
        ],
      },
      'tools.1.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level',
    ],
  ])('%s', (_, body, problem) => {
    expect(messagesContentProblem(body)).toBe(problem)
  })

  it.each([
    [
      '"\\n\\n" beside a tool_use',
      {
        messages: [
          user('hi'),
          {
            role: 'assistant',
            content: [
              {type: 'text', text: '\n\n'},
              {type: 'tool_use', id: 't', name: 'a', input: {}},
            ],
          },
        ],
      },
    ],
    [
      'a union below the top level',
      {
        messages: [user('hi')],
        tools: [{name: 'a', input_schema: {type: 'object', properties: {x: {anyOf: [{type: 'string'}]}}}}],
      },
    ],
    ['text with a character', {system: ' .', messages: [user(' x ')]}],
  ])('takes %s', (_, body) => {
    expect(messagesContentProblem(body)).toBeUndefined()
  })
})

describe('the chat simulator refuses a top-level union schema as OpenAI does', () => {
  it('names the function', () => {
    const body = {
      model: 'sim-mini',
      messages: [user('hi')],
      tools: [{type: 'function', function: {name: 'fetch', parameters: {oneOf: [{type: 'object'}]}}}],
    }
    expect(() => validateChatBody(body)).toThrow(
      "Invalid schema for function 'fetch': schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level.",
    )
    const fine = {
      ...body,
      tools: [{type: 'function', function: {name: 'fetch', parameters: {type: 'object'}}}],
    }
    expect(() => validateChatBody(fine)).not.toThrow()
  })
})
