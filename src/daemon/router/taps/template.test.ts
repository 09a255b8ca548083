/**
 * The chat tap reads the text chunks of a stream that differ from the last parsed one only in
 * their text without a parse (protocols/sse-template.ts). What the log row gets must not change:
 * each stream here is tapped as it is and with the template path off, and both must agree.
 */
import {describe, expect, it, vi} from 'vitest'

import {ChatReader} from './chat.js'
import {Tap} from './tap.js'

const head =
  '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":'
const text = (content: string): string =>
  `data: ${head}{"content":"${content}"},"finish_reason":null}],"usage":null}`
const first = `data: ${head}{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`
const stop = `data: ${head}{},"finish_reason":"stop"}],"usage":null}`
const usage =
  'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":4}}'
const stream = (events: string[]): string => events.join('\n\n') + '\n\n'

function tap(sse: string, templates: boolean, size = 11) {
  const reader = new ChatReader()
  if (!templates) Object.assign(reader, {templateKey: undefined})
  const t = new Tap(reader, true)
  const bytes = Buffer.from(sse)
  for (let i = 0; i < bytes.length; i += size) t.feed(bytes.subarray(i, i + size))
  t.end()
  return {usage: t.usage(), malformed: t.malformed(), outcome: t.outcome()}
}

const both = (sse: string) => {
  const fast = tap(sse, true)
  expect(fast).toEqual(tap(sse, false))
  return fast
}

describe('chat usage tap: text chunks read without a parse', () => {
  it('reads a whole stream as a parse of every chunk would', () => {
    const got = both(
      stream([first, text('He'), text('llo \\"x\\" é'), text(''), text('!'), stop, usage, 'data: [DONE]']),
    )
    expect(got.usage).toMatchObject({inputTokens: 5, outputTokens: 4})
    expect(got.outcome).toEqual({kind: 'complete'})
    expect(got.malformed).toBeUndefined()
  })

  it("still counts a cut text chunk as malformed (the simulator's `malformed` fault)", () => {
    const cut = text('lo').slice(0, -20)
    const got = both(stream([first, text('He'), cut, text('!'), stop, usage, 'data: [DONE]']))
    expect(got.malformed).toBe('1 stream event of malformed JSON')
  })

  it('counts the text chunks of a stream that broke with an error before its usage', () => {
    const error = 'data: {"error":{"message":"overloaded","code":"overloaded"}}'
    const got = both(stream([first, text('a'), text('b'), text(''), text('c'), error]))
    // three non-empty deltas streamed, the input unknown
    expect(got.usage).toMatchObject({inputTokens: 0, outputTokens: 3})
    expect(got.outcome).toEqual({kind: 'error', message: 'overloaded: overloaded'})
  })

  it('counts tool-argument chunks as a parse would (each one a delta, empty or not)', () => {
    const call = (fn: string, extra = ''): string =>
      `data: ${head}{"tool_calls":[{"index":0${extra},"function":${fn}}]},"finish_reason":null}],"usage":null}`
    const args = (inner: string): string => call(`{"arguments":"${inner}"}`)
    const error = 'data: {"error":{"message":"cut"}}'
    const got = both(
      stream([
        first,
        call('{"name":"f","arguments":""}', ',"id":"t1"'),
        args('{\\"a'),
        args(''),
        args('\\":1}'),
        error,
      ]),
    )
    // the call's first chunk and three argument chunks
    expect(got.usage).toMatchObject({outputTokens: 4})
  })

  it("reads OpenAI's chunks without a parse although each carries its own `obfuscation` padding", () => {
    const openai = (delta: string, finish = 'null', usage = 'null', pad = 'x'): string =>
      `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-5","service_tier":"default","system_fingerprint":null,"choices":[{"index":0,"delta":${delta},"logprobs":null,"finish_reason":${finish}}],"usage":${usage},"obfuscation":"${pad}"}`
    const pads = ['Qk', 'a1B2c3', 'z', 'LmNoPqRsTuV', '9', 'abc']
    const events = [
      openai('{"role":"assistant","content":"","refusal":null}'),
      ...['He', 'llo', ' \\"x\\"', ' é', '', '!'].map((t, i) =>
        openai(`{"content":"${t}"}`, 'null', 'null', pads[i]),
      ),
      openai('{}', '"stop"', 'null', 'zz'),
      `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"gpt-5","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":5},"obfuscation":"p"}`,
      'data: [DONE]',
    ]
    const parse = vi.spyOn(JSON, 'parse')
    try {
      const fast = tap(stream(events), true)
      // whole chunks parsed: the first, the first text chunk (which teaches the template), the
      // finish and the usage (the text with escapes is decoded alone)
      const chunks = () => parse.mock.calls.filter(([arg]) => String(arg).startsWith('{')).length
      expect(chunks()).toBe(4)
      parse.mockClear()
      expect(fast).toEqual(tap(stream(events), false))
      expect(chunks()).toBe(events.length - 1)
      expect(fast.usage).toMatchObject({inputTokens: 7, outputTokens: 5})
      expect(fast.malformed).toBeUndefined()
    } finally {
      parse.mockRestore()
    }
  })

  it('parses a chunk whose text would change its structure (an error smuggled in)', () => {
    const smuggled = text(
      'x"},"finish_reason":null}],"error":{"message":"boom"},"extra":[{"delta":{"content":"y',
    )
    const got = both(stream([first, text('a'), smuggled, stop, 'data: [DONE]']))
    expect(got.outcome).toEqual({kind: 'error', message: 'boom'})
  })
})
