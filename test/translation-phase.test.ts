/**
 * GPT-5.3-codex and later label each assistant message of the Responses API `commentary` (a
 * preamble before tool calls) or `final_answer`, and OpenAI's guidance is to send the label back
 * on every assistant message of the history (dropping it degrades the model: it repeats its
 * preamble as its answer). A Claude Code or chat conversation translated to OpenAI's Responses
 * API gets the labels derived from its history; a model before GPT-5.3 gets none. The real
 * daemon, the simulator (which stands for OpenAI's API), the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {phase: ['sim-responses', 'gpt-5.5'], older: ['sim-responses', 'gpt-5.2']},
  {prefix: 'ph', families: ['messages', 'chat']},
)

const RESPONSES = /\/responses$/

/** Claude Code's history: a preamble and a Read, its result, the answer, then a new prompt. */
const claudeHistory: Anthropic.MessageParam[] = [
  {role: 'user', content: 'What is in a.txt?'},
  {
    role: 'assistant',
    content: [
      {type: 'text', text: 'I will read the file.'},
      {type: 'tool_use', id: 'toolu_01', name: 'Read', input: {file_path: 'a.txt'}},
    ],
  },
  {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_01', content: 'hello'}]},
  {role: 'assistant', content: [{type: 'text', text: 'It says hello.'}]},
  {role: 'user', content: 'Say hello.'},
]

const READ: Anthropic.Tool = {
  name: 'Read',
  description: 'Read a file.',
  input_schema: {type: 'object', properties: {file_path: {type: 'string'}}, required: ['file_path']},
}

/** The assistant message items the upstream got: their text and phase. */
const assistantItems = (input: Array<Record<string, any>>): Array<[string, unknown]> =>
  input
    .filter((i) => i.type === 'message' && i.role === 'assistant')
    .map((i) => [i.content.map((c: {text: string}) => c.text).join(''), i.phase])

describe('phase on the assistant messages sent to a Responses upstream', {timeout: 60_000}, () => {
  it('Claude Code to gpt-5.5: the preamble commentary, the answer final_answer; the answer parsed', async () => {
    await takeSimCalls(gw.simOrigin, RESPONSES)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('phase')!, maxRetries: 0})
    const answer = await client.messages
      .stream({model: 'claude-sonnet-4-5', max_tokens: 256, tools: [READ], messages: claudeHistory})
      .finalMessage()
    expect(answer.content.some((b) => b.type === 'text' && b.text.length > 0)).toBe(true)
    const calls = await takeSimCalls(gw.simOrigin, RESPONSES)
    expect(calls).toHaveLength(1)
    expect(assistantItems(calls[0].input)).toEqual([
      ['I will read the file.', 'commentary'],
      ['It says hello.', 'final_answer'],
    ])
    // on assistant messages only
    expect(calls[0].input.filter((i: {phase?: unknown}) => i.phase !== undefined)).toHaveLength(2)
    expect((await projectLogRows(gw.base, 'ph-phase', 1)).map((r) => [r.status, r.error])).toEqual([
      [200, null],
    ])
  })

  it("a chat client's assistant message with its tool_calls: the content commentary", async () => {
    await takeSimCalls(gw.simOrigin, RESPONSES)
    const client = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('phase')!, maxRetries: 0})
    const answer = await client.chat.completions.create({
      model: 'gpt-5.5',
      tools: [{type: 'function', function: {name: 'read', parameters: {type: 'object'}}}],
      messages: [
        {role: 'user', content: 'What is in a.txt?'},
        {
          role: 'assistant',
          content: 'Reading it.',
          tool_calls: [{id: 'call_1', type: 'function', function: {name: 'read', arguments: '{}'}}],
        },
        {role: 'tool', tool_call_id: 'call_1', content: 'hello'},
        {role: 'assistant', content: 'It says hello.'},
        {role: 'user', content: 'Say hello.'},
      ],
    })
    expect(answer.choices[0].message.content).toBeTruthy()
    const [call] = await takeSimCalls(gw.simOrigin, RESPONSES)
    expect(assistantItems(call.input)).toEqual([
      ['Reading it.', 'commentary'],
      ['It says hello.', 'final_answer'],
    ])
  })

  it('to gpt-5.2, which does not label its messages: none', async () => {
    await takeSimCalls(gw.simOrigin, RESPONSES)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('older')!, maxRetries: 0})
    await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      tools: [READ],
      messages: claudeHistory,
    })
    const [call] = await takeSimCalls(gw.simOrigin, RESPONSES)
    expect(assistantItems(call.input)).toEqual([
      ['I will read the file.', undefined],
      ['It says hello.', undefined],
    ])
  })
})
