/**
 * An image or document inside a tool result refused by a server that takes it in a user turn
 * (Ollama's and LM Studio's `/v1/messages`, Zen's and relays' `/v1/responses`): learned per
 * provider and model only from a request that held media inside a result, in the servers' words,
 * and applied to Messages bodies passed through and translated Messages and Responses bodies.
 */
import {describe, expect, it} from 'vitest'

import {
  adaptPassedMessages,
  decodeClientRequest,
  encodeUpstreamRequest,
  sentOfPassedMessages,
} from '../../protocols/translate.js'
import {
  describeAdaptation,
  refusesMediaInResults,
  rewritesMessagesBody,
  UpstreamAdaptations,
} from './adaptations.js'

const OLLAMA = JSON.stringify({
  type: 'error',
  error: {type: 'invalid_request_error', message: 'Input should be a valid string (ref: a9065c14-0b1e-4c55)'},
})
const LMSTUDIO = JSON.stringify({
  type: 'error',
  error: {
    type: 'invalid_request_error',
    message: 'Only text tool_result blocks are supported when tool_result.content is an array.',
  },
})
const ZEN = JSON.stringify({
  error: {
    param: 'messages.14.user.content.str',
    type: 'invalid_request_error',
    message: '1 validation error: Input should be a valid string',
  },
})
const RELAY = JSON.stringify({
  error: {type: 'invalid_request_error', message: 'Invalid input', param: 'messages.12.content'},
})
const NOTE =
  'refused an image or document inside a tool result: sent again with each one right after the results, in a user turn, the result keeping its text (or "[image attached below]")'

const png = {type: 'image', source: {type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo='}}

/** Claude Code's turn after its Read of a PNG (`inResult`), or the same image in a user message. */
const claudeCode = (inResult: boolean): Record<string, unknown> => ({
  model: 'qwen3-vl:8b',
  max_tokens: 32000,
  messages: [
    {role: 'user', content: [{type: 'text', text: 'What is on the screenshot?'}, ...(inResult ? [] : [png])]},
    {
      role: 'assistant',
      content: [{type: 'tool_use', id: 'toolu_1', name: 'Read', input: {file_path: '/s.png'}}],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_1',
          content: inResult ? [png] : [{type: 'text', text: 'ok'}],
          cache_control: {type: 'ephemeral'},
        },
      ],
    },
  ],
  stream: true,
})

describe('refusesMediaInResults', () => {
  it("the servers' words", () => {
    for (const text of [OLLAMA, LMSTUDIO, ZEN]) {
      expect(refusesMediaInResults(text, 'messages')).toBe(true)
      expect(refusesMediaInResults(text, 'responses')).toBe(true)
    }
    // a relay's bare "Invalid input" is read only of a Responses body, only with a param naming a content
    expect(refusesMediaInResults(RELAY, 'responses')).toBe(true)
    expect(refusesMediaInResults(RELAY, 'messages')).toBe(false)
    const tools = JSON.stringify({error: {message: 'Invalid input', param: 'tools.3.parameters'}})
    expect(refusesMediaInResults(tools, 'responses')).toBe(false)
  })

  it('other refusals are not it', () => {
    for (const message of [
      'messages: text content blocks must contain non-whitespace text',
      'Input should be a valid integer',
      'Invalid input: expected string, received number',
      '"qwen3:8b" does not support thinking',
    ]) {
      expect(refusesMediaInResults(JSON.stringify({error: {message, param: 'content'}}), 'responses')).toBe(
        false,
      )
      expect(refusesMediaInResults(message, 'messages')).toBe(false)
    }
    // pydantic's words for another string field (FastAPI's detail list, a param elsewhere): not it
    const userId = JSON.stringify({
      detail: [
        {type: 'string_type', loc: ['body', 'metadata', 'user_id'], msg: 'Input should be a valid string'},
      ],
    })
    expect(refusesMediaInResults(userId, 'messages')).toBe(false)
    const elsewhere = JSON.stringify({
      error: {message: 'Input should be a valid string', param: 'metadata.user_id'},
    })
    expect(
      refusesMediaInResults(
        JSON.stringify({error: {message: 'x: Input should be a valid string', param: 'metadata.user_id'}}),
        'messages',
      ),
    ).toBe(false)
    expect(refusesMediaInResults(elsewhere, 'messages')).toBe(false)
    const atContent = JSON.stringify({
      detail: [
        {
          type: 'string_type',
          loc: ['body', 'messages', 2, 'content', 0, 'content'],
          msg: 'Input should be a valid string',
        },
      ],
    })
    expect(refusesMediaInResults(atContent, 'messages')).toBe(true)
    // pydantic's plain text: the location's line, then the words
    expect(
      refusesMediaInResults(
        '1 validation error for ChatRequest\nmessages.3.content\n  Input should be a valid string',
        'messages',
      ),
    ).toBe(true)
    expect(
      refusesMediaInResults(
        '1 validation error for ChatRequest\nmetadata.user_id\n  Input should be a valid string',
        'messages',
      ),
    ).toBe(false)
  })
})

describe('learned from a Messages body passed through', () => {
  it("Ollama's and LM Studio's words, with an image inside a result: learned, and the body rewritten", () => {
    for (const words of [OLLAMA, LMSTUDIO]) {
      const a = new UpstreamAdaptations()
      const body = claudeCode(true)
      expect(a.learn('ollama', 'qwen3-vl:8b', words, sentOfPassedMessages(body), 400)).toBe(NOTE)
      const learned = a.get('ollama', 'qwen3-vl:8b')!
      expect(learned).toEqual({mediaOutOfResults: true})
      expect(rewritesMessagesBody(learned)).toBe(true)
      const sent = JSON.parse(String(adaptPassedMessages(body, learned))) as {messages: unknown[]}
      expect(sent.messages[2]).toEqual({
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: '[image attached below]',
            cache_control: {type: 'ephemeral'},
          },
          png,
        ],
      })
      // (learned once: the same refusal again teaches nothing)
      expect(
        a.learn('ollama', 'qwen3-vl:8b', words, sentOfPassedMessages(body, learned), 400),
      ).toBeUndefined()
      expect(a.list()[0].rules).toEqual([
        'images and documents inside tool results sent right after the results, in the user turn, the result keeping its text (refused inside them)',
      ])
    }
  })

  it('not learned from the same words to a body without media inside a result, nor from another refusal', () => {
    const a = new UpstreamAdaptations()
    expect(a.learn('ollama', 'm', OLLAMA, sentOfPassedMessages(claudeCode(false)), 400)).toBeUndefined()
    const other = JSON.stringify({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'messages.2: tool_use ids were found without tool_result',
      },
    })
    expect(a.learn('ollama', 'm', other, sentOfPassedMessages(claudeCode(true)), 400)).toBeUndefined()
    expect(a.get('ollama', 'm')).toBeUndefined()
  })
})

describe('learned from a Responses body passed through (learnMediaOutOfResults)', () => {
  it("Zen's 422 and a relay's Invalid input: learned once; another refusal teaches nothing", () => {
    const a = new UpstreamAdaptations()
    expect(a.learnMediaOutOfResults('zen', 'glm-5.3-flash', ZEN, undefined)).toBe(NOTE)
    const learned = a.get('zen', 'glm-5.3-flash')
    expect(learned).toEqual({mediaOutOfResults: true})
    expect(a.learnMediaOutOfResults('zen', 'glm-5.3-flash', ZEN, learned)).toBeUndefined()
    expect(a.learnMediaOutOfResults('relay', 'z-ai/glm-5.3-flash', RELAY, undefined)).toBe(NOTE)
    expect(
      a.learnMediaOutOfResults('other', 'm', JSON.stringify({error: {message: 'Bad'}}), undefined),
    ).toBeUndefined()
    expect(describeAdaptation({mediaOutOfResults: true})).toHaveLength(1)
  })
})

describe('translated requests', () => {
  /** Codex's view_image output. */
  const codex = () =>
    decodeClientRequest(
      'responses',
      {
        model: 'gpt-5.6',
        input: [
          {type: 'message', role: 'user', content: [{type: 'input_text', text: 'look'}]},
          {type: 'function_call', call_id: 'call_1', name: 'view_image', arguments: '{"path":"/s.png"}'},
          {
            type: 'function_call_output',
            call_id: 'call_1',
            output: [{type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo='}],
          },
        ],
      },
      {},
    )

  it("Codex translated to LM Studio's Messages endpoint: learned from its words, the image sent after the result", () => {
    const a = new UpstreamAdaptations()
    const first = encodeUpstreamRequest(codex(), 'messages', 'qwen3-vl')
    expect(a.learn('lmstudio', 'qwen3-vl', LMSTUDIO, first.sent, 400)).toBe(NOTE)
    const again = encodeUpstreamRequest(codex(), 'messages', 'qwen3-vl', {}, a.get('lmstudio', 'qwen3-vl'))
    const messages = (JSON.parse(String(again.body)) as {messages: Array<{content: unknown}>}).messages
    expect(messages.at(-1)!.content).toEqual([
      expect.objectContaining({type: 'tool_result', content: '[image attached below]'}),
      expect.objectContaining({type: 'image'}),
    ])
  })

  it('Claude Code translated to a Responses server: the image in a user message after the output', () => {
    const a = new UpstreamAdaptations()
    const claude = decodeClientRequest('messages', claudeCode(true), {})
    const first = encodeUpstreamRequest(claude, 'responses', 'glm-5.3-flash')
    expect(a.learn('zen', 'glm-5.3-flash', ZEN, first.sent, 422)).toBe(NOTE)
    const again = encodeUpstreamRequest(
      claude,
      'responses',
      'glm-5.3-flash',
      {},
      a.get('zen', 'glm-5.3-flash'),
    )
    const input = (JSON.parse(String(again.body)) as {input: Array<Record<string, unknown>>}).input
    const at = input.findIndex((i) => i.type === 'function_call_output')
    expect(input[at].output).toBe('[image attached below]')
    expect(input[at + 1]).toEqual({
      type: 'message',
      role: 'user',
      content: [expect.objectContaining({type: 'input_image'})],
    })
    // a translated request without media inside a result learns nothing from the same words
    const plain = encodeUpstreamRequest(
      decodeClientRequest('messages', claudeCode(false), {}),
      'responses',
      'x',
    )
    expect(new UpstreamAdaptations().learn('zen', 'x', ZEN, plain.sent, 422)).toBeUndefined()
  })
})
