import {describe, expect, it} from 'vitest'

import {ChatReader} from './chat.js'
import {GeminiReader} from './gemini.js'
import {createUsageTap} from './index.js'
import {headString, tailObject} from './json-tail.js'
import {MessagesReader} from './messages.js'
import {ResponsesReader} from './responses.js'
import type {Reader} from './tap.js'
import {obj} from './tap.js'

type Family = Parameters<typeof createUsageTap>[0]

/** The tap's reading of a JSON answer, fed in pieces of `size` bytes. */
function tapped(family: Family, text: string, size = 1 << 20) {
  const tap = createUsageTap(family, false)
  const bytes = Buffer.from(text)
  for (let i = 0; i < bytes.length; i += size) tap.feed(bytes.subarray(i, i + size))
  tap.end()
  return {usage: tap.usage(), malformed: tap.malformed()}
}

/** What the reader makes of the whole answer parsed (the tap's reading before the tail read). */
function parsedWhole(family: Family, text: string) {
  const reader: Reader =
    family === 'chat'
      ? new ChatReader()
      : family === 'messages'
        ? new MessagesReader()
        : family === 'gemini'
          ? new GeminiReader()
          : new ResponsesReader()
  let payload: unknown
  try {
    payload = JSON.parse(text)
  } catch {
    return {usage: undefined, malformed: true}
  }
  const p = obj(payload)
  if (p) reader.onPayload(p, undefined)
  return {usage: reader.usage(), malformed: false}
}

const chat = (usage: string, extra = '') =>
  `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Héllo ✓ \\"usage\\": {\\"prompt_tokens\\": 99}"},"finish_reason":"stop"}],"usage":${usage}${extra}}`
const usage =
  '{"prompt_tokens":10,"completion_tokens":17,"total_tokens":27,"prompt_tokens_details":{"cached_tokens":3},"completion_tokens_details":{"reasoning_tokens":2}}'
const messages = (type: string, u: string) =>
  `{"id":"msg_1","type":"${type}","role":"assistant","model":"m","content":[{"type":"text","text":"PONG"}],"stop_reason":"end_turn","stop_sequence":null,"usage":${u}}`
const messagesUsage =
  '{"input_tokens":11,"cache_creation_input_tokens":2,"cache_read_input_tokens":4,"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":2},"output_tokens":10,"service_tier":"standard"}'
const gemini = (u: string) =>
  `{"candidates":[{"content":{"role":"model","parts":[{"text":"PONG"}]},"index":0,"finishReason":"STOP"}],"usageMetadata":${u},"modelVersion":"m","responseId":"r"}`
const geminiUsage =
  '{"promptTokenCount":10,"candidatesTokenCount":5,"totalTokenCount":15,"cachedContentTokenCount":2,"thoughtsTokenCount":3,"promptTokensDetails":[{"modality":"TEXT","tokenCount":10}]}'

/** Answers of each family the tail read must read exactly as the whole parse does. */
const CASES: Array<[Family, string, string]> = [
  ['chat', 'the common answer', chat(usage)],
  [
    'chat',
    'members after the usage, objects among them',
    chat(usage, ',"service_tier":"default","meta":{"usage":{"prompt_tokens":1}},"x":[1,{"a":"}"}]'),
  ],
  ['chat', 'pretty-printed', JSON.stringify(JSON.parse(chat(usage)), null, 2) + '\n'],
  ['chat', 'a usage of null', chat('null')],
  ['chat', 'a usage that is an array', chat('[1,2]')],
  [
    'chat',
    'a nested usage after the top-level one',
    chat(usage, ',"choices2":[{"usage":{"prompt_tokens":5}}]'),
  ],
  ['chat', 'a nested usage and no top-level one', '{"choices":[{"usage":{"prompt_tokens":5}}]}'],
  [
    'chat',
    'the top-level usage given twice (the last wins)',
    chat('{"prompt_tokens":1}', `,"usage":${usage}`),
  ],
  [
    'chat',
    'a usage whose strings hold braces and quotes',
    chat('{"prompt_tokens":7,"note":"}]\\"{[","completion_tokens":2}'),
  ],
  ['chat', 'no usage', '{"id":"c","choices":[]}'],
  ['chat', 'a key ending in usage', '{"id":"c","x\\"usage":{"prompt_tokens":5}}'],
  ['chat', 'an answer that is an array', `[{"usage":${usage}}]`],
  ['chat', 'cut in the usage', chat(usage).slice(0, -20)],
  ['chat', 'cut after the usage', chat(usage).slice(0, -1)],
  ['chat', 'something after the answer', chat(usage) + ' x'],
  ['chat', 'a closer of the wrong kind', chat(usage).slice(0, -1) + ']'],
  ['messages', 'the common answer', messages('message', messagesUsage)],
  ['messages', 'not a message', messages('error', messagesUsage)],
  ['messages', 'its type after an object member', `{"content":[],"type":"message","usage":${messagesUsage}}`],
  ['messages', 'its type with an escape', messages('mess\\u0061ge', messagesUsage)],
  ['gemini', 'the common answer', gemini(geminiUsage)],
  ['gemini', 'no usage', '{"candidates":[]}'],
  [
    'responses',
    'the common answer (read whole)',
    `{"id":"resp_1","object":"response","usage":{"input_tokens":4,"input_tokens_details":{"cached_tokens":1},"output_tokens":5,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":9}}`,
  ],
]

describe('usage from the tail of a JSON answer', () => {
  it.each(CASES)('%s, %s: the same usage and verdict as parsing the whole answer', (family, _name, text) => {
    const whole = parsedWhole(family, text)
    for (const size of [1, 7, 1 << 20]) {
      const got = tapped(family, text, size)
      expect(got.usage).toEqual(whole.usage)
      expect(got.malformed !== undefined).toBe(whole.malformed)
    }
  })

  it('reads the common answers from their tail alone', () => {
    const key = Buffer.from('"usage"')
    expect(tailObject(Buffer.from(chat(usage)), key)).toEqual(JSON.parse(usage))
    expect(tailObject(Buffer.from(` \n${chat(usage, ',"a":{"b":[{}]}')}\n`), key)).toEqual(JSON.parse(usage))
    expect(tailObject(Buffer.from(messages('message', messagesUsage)), key)).toEqual(
      JSON.parse(messagesUsage),
    )
    expect(tailObject(Buffer.from(gemini(geminiUsage)), Buffer.from('"usageMetadata"'))).toEqual(
      JSON.parse(geminiUsage),
    )
    expect(headString(Buffer.from(messages('message', messagesUsage)), 'type')).toBe('message')
  })

  it('leaves to the whole parse what the tail cannot tell', () => {
    const key = Buffer.from('"usage"')
    for (const text of [
      chat(usage, ',"meta":{"usage":{"prompt_tokens":1}}'),
      chat(usage).slice(0, -1),
      `[{"usage":${usage}}]`,
      chat('null'),
      '{"x\\"usage":{"a":1}}',
      chat(usage) + ' x',
    ])
      expect(tailObject(Buffer.from(text), key)).toBeUndefined()
    expect(headString(Buffer.from(`{"content":[],"type":"message"}`), 'type')).toBeUndefined()
  })

  it('flags a cut answer as malformed, as before', () => {
    const got = tapped('chat', chat(usage).slice(0, 40))
    expect(got.usage).toBeUndefined()
    expect(got.malformed).toMatch(/^malformed JSON \(/)
  })

  it('counts the usage of an answer broken before its usage key (the one reading that changed)', () => {
    // the tail read does not look at the bytes before the key; the whole parse saw a broken answer
    for (const broken of [
      `{"id":"c","choices":[{"index":0,,}],"usage":${usage}}`,
      chat(usage) + chat(usage),
    ]) {
      expect(parsedWhole('chat', broken).malformed).toBe(true)
      expect(tapped('chat', broken)).toEqual({
        usage: {
          inputTokens: 10,
          outputTokens: 17,
          cacheReadTokens: 3,
          cacheCreationTokens: 0,
          reasoningTokens: 2,
        },
        malformed: undefined,
      })
    }
  })
})
