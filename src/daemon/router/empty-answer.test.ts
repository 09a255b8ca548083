/**
 * Gemini's empty STOP through the translated relay (research56 F4; in this process, a scripted
 * Gemini upstream): an answer with no text nor call of which the client saw nothing goes again
 * once, the same bytes; a second empty answer is a 502 the client's SDK retries; one whose thoughts
 * streamed ends with an error event (Messages' `overloaded_error`, which Claude Code retries). None is a breaker failure; the row says each.
 * A stream that fails while its start is held (nothing sent) fails before the first byte.
 */
import type {IncomingHttpHeaders, IncomingMessage, ServerResponse} from 'node:http'

import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {EMPTY_ANSWER} from '../../protocols/gemini-parts.js'
import type {Family, ProviderConfig, TimeoutSettings} from '../../store/schema.js'
import {BreakerRegistry} from './breaker.js'
import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {ProxyGateway, recordSocketWrites, startUpstream} from './proxy-fixture.js'

const TIMEOUTS: TimeoutSettings = {connectMs: 1_000, firstByteMs: 1_000, idleMs: 1_000}

const data = (payload: unknown): string => `data: ${JSON.stringify(payload)}\r\n\r\n`

const usage = {promptTokenCount: 900, totalTokenCount: 900}
const EMPTY = {candidates: [{content: {role: 'model'}, finishReason: 'STOP', index: 0}], usageMetadata: usage}
const WHOLE = {
  candidates: [
    {content: {role: 'model', parts: [{text: 'Done: a holds file body.'}]}, finishReason: 'STOP', index: 0},
  ],
  usageMetadata: {promptTokenCount: 900, candidatesTokenCount: 8, totalTokenCount: 908},
}
const THOUGHT = {
  candidates: [{content: {role: 'model', parts: [{text: 'Let me think', thought: true}]}, index: 0}],
  usageMetadata: {promptTokenCount: 900, thoughtsTokenCount: 40},
}
const SIGNED_STOP = {
  candidates: [
    {content: {role: 'model', parts: [{text: '', thoughtSignature: 'c2ln'}]}, finishReason: 'STOP', index: 0},
  ],
  usageMetadata: {promptTokenCount: 900, thoughtsTokenCount: 40, totalTokenCount: 940},
}

/**
 * (`pauseMs`: the stream's first chunk alone, then the rest that much later; `reset`: the
 * connection dropped before an answer; `firstThenReset`: a stream's first chunk, then its
 * connection dropped)
 */
type Answer =
  | {stream: unknown[]; pauseMs?: number}
  | {json: unknown}
  | {status: number; json: unknown}
  | {reset: true}
  | {firstThenReset: unknown}
/** What the upstream answers, one entry a request, in order (the last one again after). */
let answers: Answer[] = []
const received: Buffer[] = []
/** The headers of each request the upstream received. */
const receivedHeaders: IncomingHttpHeaders[] = []
/** The same of a second upstream, B (a target after the first, in `run`'s `two`). */
let answersB: Answer[] = []
const receivedB: Buffer[] = []
let upstream: Upstream
let upstreamB: Upstream
let targets: () => ProxyTarget[] = () => []
/** What each write to the client's socket held, in order, and when (the last request's). */
const writes: string[] = []
const writtenAt: number[] = []
writes.push = (...chunks: string[]) => {
  for (const _ of chunks) writtenAt.push(performance.now())
  return Array.prototype.push.apply(writes, chunks)
}
/** When the upstream sent the rest of a stream with `pauseMs`. */
let restSentAt = 0
/** The upstream answers whose connection closed before they ended (the gateway aborted them). */
let cutOff = 0
const gateway = new ProxyGateway({
  route: () => ({targets: targets(), timeouts: TIMEOUTS}),
  onResponse: (res) => {
    writes.length = 0
    writtenAt.length = 0
    recordSocketWrites(res, writes)
  },
})
const {results} = gateway

const answering =
  (list: () => Answer[], got: Buffer[], headers?: IncomingHttpHeaders[]) =>
  async (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const answer = list()[Math.min(got.length, list().length - 1)]!
    got.push(body)
    headers?.push(req.headers)
    res.on('close', () => {
      if (!res.writableEnded) cutOff++
    })
    if ('reset' in answer) {
      res.socket?.destroy()
      return
    }
    if ('firstThenReset' in answer) {
      res.writeHead(200, {'content-type': 'text/event-stream'})
      res.write(data(answer.firstThenReset))
      await new Promise((resolve) => setTimeout(resolve, 100))
      res.socket?.destroy()
      return
    }
    if ('stream' in answer) {
      res.writeHead(200, {'content-type': 'text/event-stream'})
      if (answer.pauseMs !== undefined) {
        res.write(data(answer.stream[0]))
        await new Promise((resolve) => setTimeout(resolve, answer.pauseMs))
        restSentAt = performance.now()
        res.end(answer.stream.slice(1).map(data).join(''))
        return
      }
      res.end(answer.stream.map(data).join(''))
      return
    }
    res.writeHead('status' in answer ? answer.status : 200, {'content-type': 'application/json'})
    res.end(JSON.stringify(answer.json))
  }

beforeAll(async () => {
  upstream = await startUpstream(answering(() => answers, received, receivedHeaders))
  upstreamB = await startUpstream(answering(() => answersB, receivedB))
  await gateway.listen()
})

afterEach(() => {
  results.length = 0
  received.length = 0
  receivedHeaders.length = 0
  receivedB.length = 0
  answersB = [{stream: [WHOLE]}]
  cutOff = 0
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
  upstreamB.close()
})

const provider: ProviderConfig = {
  name: 'up-gemini',
  family: 'gemini',
  baseUrl: '',
  credential: {secret: 'upstream-key'},
}

const PATH: Record<Exclude<Family, 'gemini'>, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
}

/** Each client's tool loop, the tool result last. */
const BODY: Record<Exclude<Family, 'gemini'>, Record<string, unknown>> = {
  messages: {
    model: 'up',
    max_tokens: 1000,
    tools: [
      {name: 'Read', description: 'r', input_schema: {type: 'object', properties: {p: {type: 'string'}}}},
    ],
    messages: [
      {role: 'user', content: 'read a'},
      {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_1', name: 'Read', input: {p: 'a'}}]},
      {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'file body'}]},
    ],
  },
  responses: {
    model: 'up',
    input: [
      {type: 'message', role: 'user', content: 'read a'},
      {type: 'function_call', call_id: 'call_1', name: 'read', arguments: '{"p":"a"}'},
      {type: 'function_call_output', call_id: 'call_1', output: 'file body'},
    ],
    tools: [
      {type: 'function', name: 'read', parameters: {type: 'object', properties: {p: {type: 'string'}}}},
    ],
  },
  chat: {
    model: 'up',
    messages: [
      {role: 'user', content: 'read a'},
      {
        role: 'assistant',
        content: null,
        tool_calls: [{id: 'call_1', type: 'function', function: {name: 'read', arguments: '{"p":"a"}'}}],
      },
      {role: 'tool', tool_call_id: 'call_1', content: 'file body'},
    ],
    tools: [
      {
        type: 'function',
        function: {name: 'read', parameters: {type: 'object', properties: {p: {type: 'string'}}}},
      },
    ],
  },
}

async function run(
  client: Exclude<Family, 'gemini'>,
  stream: boolean,
  {two = false, headers = {}}: {two?: boolean; headers?: Record<string, string>} = {},
) {
  const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
  targets = () => [
    {provider: {...provider, baseUrl: upstream.origin}, translate: true, breaker: breakers.get('up')},
    ...(two
      ? [
          {
            provider: {...provider, name: 'up-gemini-b', baseUrl: upstreamB.origin},
            translate: true as const,
            breaker: breakers.get('b'),
          },
        ]
      : []),
  ]
  const res = await fetch(gateway.url + PATH[client], {
    method: 'POST',
    headers: {'content-type': 'application/json', ...headers},
    body: JSON.stringify({...BODY[client], stream}),
  })
  const text = await res.text()
  const [result] = await gateway.settled()
  return {
    res,
    text,
    result: result!,
    breaker: breakers.snapshotOf('up').state,
    failures: breakers.snapshotOf('up').consecutiveFailures,
  }
}

const SENT_AGAIN = `up-gemini: ${EMPTY_ANSWER}: the request went again once, unseen by the client`
/**
 * The note of a row answered by B after an answer of up-gemini's that the client never saw (its
 * billed prompt: 900 tokens an answer): its tokens said, not counted under B's name (review67 #2).
 */
const unseenBy = (tokens: number): RegExp =>
  new RegExp(
    `up-gemini/up billed ${tokens} input tokens for what the client never got \\(counted in a row of its own, not in this one, which is up-gemini-b/up's\\)`,
  )

describe("Gemini's empty STOP, translated: sent again once", () => {
  it('(warm-up: the translation modules load with the first translated request)', async () => {
    answers = [{stream: [WHOLE]}]
    await run('messages', true)
  })

  it('a Messages stream: the second answer whole, the same bytes sent twice, the row says so', async () => {
    answers = [{stream: [EMPTY]}, {stream: [WHOLE]}]
    const {res, text, result, breaker} = await run('messages', true)
    expect(res.status).toBe(200)
    // one message_start: the empty answer's never went out
    expect(text.match(/event: message_start/g)).toHaveLength(1)
    expect(text).toContain('Done: a holds file body.')
    expect(text).toContain('"stop_reason":"end_turn"')
    expect(received).toHaveLength(2)
    expect(received[1]!.equals(received[0]!)).toBe(true)
    expect(result).toMatchObject({status: 200, error: SENT_AGAIN})
    expect(result.broken ?? false).toBe(false)
    // (the row bills both prompts: Google's usage of the empty answer, then the whole one's)
    expect(result.usage).toMatchObject({inputTokens: 1800, outputTokens: 8})
    expect(breaker).toBe('closed')
  })

  it('a Messages JSON answer: the same', async () => {
    answers = [{json: EMPTY}, {json: WHOLE}]
    const {res, text, result, breaker} = await run('messages', false)
    expect(res.status).toBe(200)
    const message = JSON.parse(text) as {content: Array<{type: string; text?: string}>; stop_reason: string}
    expect(message.content).toEqual([{type: 'text', text: 'Done: a holds file body.'}])
    expect(message.stop_reason).toBe('end_turn')
    expect(received).toHaveLength(2)
    expect(received[1]!.equals(received[0]!)).toBe(true)
    expect(result).toMatchObject({status: 200, error: SENT_AGAIN})
    // (the row bills both prompts: Google's usage of the empty answer, then the whole one's)
    expect(result.usage).toMatchObject({inputTokens: 1800, outputTokens: 8})
    expect(breaker).toBe('closed')
  })

  it('a whole answer goes once; its start waits for its first part (a chunk without one first, 150 ms before)', async () => {
    answers = [{stream: [{usageMetadata: usage}, WHOLE], pauseMs: 150}]
    const {text, result} = await run('messages', true)
    expect(received).toHaveLength(1)
    expect(text.match(/event: message_start/g)).toHaveLength(1)
    // the client's first byte (the head and message_start) went once the text came, not at the
    // first chunk, 150 ms before it
    const first = writes.findIndex((w) => w.includes('event: message_start'))
    expect(first).toBe(0)
    expect(writtenAt[0]).toBeGreaterThanOrEqual(restSentAt)
    expect(text).toContain('Done: a holds file body.')
    expect(result).toMatchObject({status: 200, error: null})
  })

  it('the answer sent again answers 503: the client gets it, the breaker counts it', async () => {
    answers = [
      {stream: [EMPTY]},
      {status: 503, json: {error: {code: 503, message: 'The model is overloaded.'}}},
    ]
    const {res, result, breaker} = await run('messages', true)
    expect(res.status).toBe(503)
    expect(received).toHaveLength(2)
    expect(result.error).toMatch(/The model is overloaded/)
    expect(breaker).toBe('open')
  })

  it.each([
    ['messages', true, 'a 503', 503],
    ['messages', false, 'a 503', 503],
    ['responses', true, 'a 503', 503],
    ['messages', true, 'a reset', 502],
    ['chat', false, 'a reset', 502],
  ] as const)(
    "the answer sent again (to a %s client, stream %s) is %s: the row bills Google's usage of the empty answer once",
    async (client, stream, resend, status) => {
      answers = [
        stream ? {stream: [EMPTY]} : {json: EMPTY},
        resend === 'a reset'
          ? {reset: true}
          : {status: 503, json: {error: {code: 503, message: 'The model is overloaded.'}}},
      ]
      const {res, result} = await run(client, stream)
      expect(res.status).toBe(status)
      expect(received).toHaveLength(2)
      expect(result.status).toBe(status)
      // (900, not 1800; and no response id: the client saw no response)
      expect(result.usage).toEqual({
        inputTokens: 900,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
        reasoningTokens: 0,
      })
    },
  )

  it('the client leaves while the start is held (no part yet): a 499 row, the upstream request aborted', async () => {
    answers = [{stream: [{usageMetadata: usage}, WHOLE], pauseMs: 1500}]
    const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
    targets = () => [
      {provider: {...provider, baseUrl: upstream.origin}, translate: true, breaker: breakers.get('up')},
    ]
    const leave = new AbortController()
    const answer = fetch(gateway.url + PATH.messages, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: JSON.stringify({...BODY.messages, stream: true}),
      signal: leave.signal,
    })
    // (the head waits for the first part: the fetch has no response to give yet)
    setTimeout(() => leave.abort(), 150)
    await expect(answer).rejects.toThrow()
    const [result] = await gateway.settled()
    expect(writes).toHaveLength(0)
    expect(result).toMatchObject({status: 499, clientAborted: true, error: 'client closed the connection'})
    expect(received).toHaveLength(1)
    // (the upstream's side of the connection closes a moment later, before its answer's end)
    for (let waited = 0; cutOff === 0 && waited < 800; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20))
    expect(cutOff).toBe(1)
    expect(breakers.snapshotOf('up')).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })
})

describe("Gemini's empty STOP, translated: the resend's status, headers; a failed finish", () => {
  it('the answer sent again answers 503 with a target after: the next target answers (as a first answer would)', async () => {
    answers = [
      {stream: [EMPTY]},
      {status: 503, json: {error: {code: 503, message: 'The model is overloaded.'}}},
    ]
    const {res, text, result, breaker} = await run('messages', true, {two: true})
    expect(res.status).toBe(200)
    expect(text).toContain('Done: a holds file body.')
    expect(received).toHaveLength(2)
    expect(receivedB).toHaveLength(1)
    expect(result).toMatchObject({status: 200, provider: 'up-gemini-b', fallback: true})
    expect(result.error).toMatch(/fell back after: up-gemini: upstream answered 503/)
    // (the empty answer's prompt, which Google billed, said on the row, not counted under B: a
    // cost estimate would price it at B's rates, and B's line in `gwctl usage` would hold it)
    expect(result.usage).toMatchObject({inputTokens: 900, outputTokens: 8})
    expect(result.error).toMatch(unseenBy(900))
    // (a 503 counts, as any first answer's)
    expect(breaker).toBe('open')
  })

  it('the same for a JSON answer', async () => {
    answers = [{json: EMPTY}, {status: 429, json: {error: {code: 429, message: 'Resource exhausted.'}}}]
    answersB = [{json: WHOLE}]
    const {res, text, result} = await run('chat', false, {two: true})
    expect(res.status).toBe(200)
    expect(text).toContain('Done: a holds file body.')
    expect(receivedB).toHaveLength(1)
    expect(result).toMatchObject({status: 200, provider: 'up-gemini-b'})
    expect(result.usage).toMatchObject({inputTokens: 900, outputTokens: 8})
    expect(result.error).toMatch(unseenBy(900))
  })

  it("the request sent again goes without the client's idempotency key", async () => {
    answers = [{stream: [EMPTY]}, {stream: [WHOLE]}]
    const {res} = await run('chat', true, {headers: {'idempotency-key': 'stainless-retry-1'}})
    expect(res.status).toBe(200)
    expect(receivedHeaders).toHaveLength(2)
    expect(receivedHeaders[0]!['idempotency-key']).toBe('stainless-retry-1')
    expect(receivedHeaders[1]!['idempotency-key']).toBeUndefined()
    expect(received[1]!.equals(received[0]!)).toBe(true)
  })

  it.each([
    ['MALFORMED_FUNCTION_CALL', /upstream produced a malformed function call/],
    ['UNEXPECTED_TOOL_CALL', /finishReason UNEXPECTED_TOOL_CALL/],
    ['OTHER', /finishReason OTHER/],
  ])(
    'a stream whose first event is a failed finish (%s): a 502 in the client shape, the model answered (no breaker failure, no other target)',
    async (finish, said) => {
      answers = [
        {
          stream: [
            {
              candidates: [
                {
                  content: {role: 'model'},
                  finishReason: finish,
                  finishMessage: 'Malformed: print(x)',
                  index: 0,
                },
              ],
              usageMetadata: usage,
            },
          ],
        },
      ]
      const {res, text, result, breaker, failures} = await run('messages', true, {two: true})
      expect(res.status).toBe(502)
      expect(text).toMatch(/"type":"api_error"/)
      expect(text).toMatch(said)
      expect(received).toHaveLength(1)
      expect(receivedB).toHaveLength(0)
      expect(result.status).toBe(502)
      expect(result.error).toMatch(said)
      expect(breaker).toBe('closed')
      expect(failures).toBe(0)
      // (Google bills the answer: its usage on the row)
      expect(result.usage).toMatchObject({inputTokens: 900, outputTokens: 0})
    },
  )

  it.each([
    ['MALFORMED_FUNCTION_CALL', /upstream produced a malformed function call/],
    ['UNEXPECTED_TOOL_CALL', /finishReason UNEXPECTED_TOOL_CALL/],
  ])(
    'a JSON answer with a failed finish (%s): the same 502, its usage on the row, no breaker failure, no other target',
    async (finish, said) => {
      answers = [
        {
          json: {
            candidates: [{content: {role: 'model'}, finishReason: finish, index: 0}],
            usageMetadata: usage,
          },
        },
      ]
      answersB = [{json: WHOLE}]
      const {res, text, result, breaker, failures} = await run('messages', false, {two: true})
      expect(res.status).toBe(502)
      expect(text).toMatch(/"type":"api_error"/)
      expect(text).toMatch(said)
      expect(received).toHaveLength(1)
      expect(receivedB).toHaveLength(0)
      expect(result.status).toBe(502)
      expect(result.error).toMatch(said)
      expect(breaker).toBe('closed')
      expect(failures).toBe(0)
      // (Google bills the answer: its usage on the row)
      expect(result.usage).toMatchObject({inputTokens: 900, outputTokens: 0})
    },
  )
})

describe("Gemini's empty STOP, translated: twice, or after thoughts", () => {
  it.each([true, false])(
    'twice empty with a target after (stream %s): the next target answers, the first not counted a failure',
    async (stream) => {
      answers = stream ? [{stream: [EMPTY]}] : [{json: EMPTY}]
      answersB = stream ? [{stream: [WHOLE]}] : [{json: WHOLE}]
      const {res, text, result, breaker, failures} = await run('messages', stream, {two: true})
      expect(res.status).toBe(200)
      expect(text).toContain('Done: a holds file body.')
      expect(received).toHaveLength(2)
      expect(receivedB).toHaveLength(1)
      expect(result).toMatchObject({status: 200, provider: 'up-gemini-b', fallback: true})
      expect(result.error).toMatch(
        /fell back after: .*the upstream answered nothing .*, twice \(sent again once\)/,
      )
      // (both empty answers' prompts, which Google billed, said on the row, not under B)
      expect(result.usage).toMatchObject({inputTokens: 900, outputTokens: 8})
      expect(result.error).toMatch(unseenBy(1800))
      expect(breaker).toBe('closed')
      expect(failures).toBe(0)
    },
  )

  it("twice empty, then another model of the same provider answers: the empty answers' tokens said, not counted under that model", async () => {
    answers = [{stream: [EMPTY]}, {stream: [EMPTY]}, {stream: [WHOLE]}]
    targets = () => [
      {provider: {...provider, baseUrl: upstream.origin}, model: 'gemini-a', translate: true},
      {provider: {...provider, baseUrl: upstream.origin}, model: 'gemini-b', translate: true},
    ]
    const res = await fetch(gateway.url + PATH.messages, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: JSON.stringify({...BODY.messages, stream: true}),
    })
    expect(await res.text()).toContain('Done: a holds file body.')
    const [result] = await gateway.settled()
    expect(received).toHaveLength(3)
    expect(result).toMatchObject({status: 200, provider: 'up-gemini', model: 'gemini-b', fallback: true})
    expect(result!.usage).toMatchObject({inputTokens: 900, outputTokens: 8})
    expect(result!.error).toMatch(
      /up-gemini\/gemini-a billed 1800 input tokens for what the client never got \(counted in a row of its own, not in this one, which is up-gemini\/gemini-b's\)/,
    )
    // (that row: gemini-a's, of the first target)
    expect(result!.billedTries).toMatchObject([
      {
        provider: 'up-gemini',
        model: 'gemini-a',
        usage: {inputTokens: 1800, outputTokens: 0},
        fallback: false,
      },
    ])
  })

  it.each([
    [
      'messages',
      true,
      /"type":"error","error":\{"type":"api_error","message":"up-gemini \(gemini, translated\): the upstream answered nothing/,
    ],
    ['messages', false, /"type":"api_error"/],
    ['responses', true, /"type":"api_error"/],
    ['chat', false, /"type":"api_error"/],
  ] as const)(
    'twice empty, to a %s client (stream %s): a 502 in its shape, no breaker failure',
    async (client, stream, said) => {
      answers = stream ? [{stream: [EMPTY]}] : [{json: EMPTY}]
      const {res, text, result, breaker} = await run(client, stream)
      expect(res.status).toBe(502)
      expect(text).toMatch(said)
      expect(text).toContain(EMPTY_ANSWER)
      expect(received).toHaveLength(2)
      expect(result.status).toBe(502)
      expect(result.error).toMatch(
        /the upstream answered nothing .*, twice \(sent again once\): the client got a 502 to retry/,
      )
      expect(result.usage).toMatchObject({inputTokens: 1800, outputTokens: 0})
      expect(breaker).toBe('closed')
    },
  )

  it('thoughts streamed, then STOP with no answer part, to a Messages client: overloaded_error after the thinking', async () => {
    answers = [{stream: [THOUGHT, SIGNED_STOP]}]
    const {res, text, result, breaker} = await run('messages', true)
    expect(res.status).toBe(200)
    expect(text).toContain('"thinking":"Let me think"')
    expect(text).not.toContain('end_turn')
    expect(text).toContain(
      `event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"${EMPTY_ANSWER}"}}`,
    )
    expect(received).toHaveLength(1)
    expect(result).toMatchObject({status: 200, broken: true})
    expect(result.error).toMatch(
      /answered nothing .* after its thoughts streamed: the client got an error event/,
    )
    expect(result.usage).toMatchObject({inputTokens: 900, outputTokens: 40})
    expect(breaker).toBe('closed')
  })

  it('the same to a Responses client: response.failed with server_error', async () => {
    answers = [{stream: [THOUGHT, SIGNED_STOP]}]
    const {text, breaker} = await run('responses', true)
    expect(text).toMatch(
      /event: response\.failed\ndata: .*"error":\{"code":"server_error","message":"the upstream answered nothing/,
    )
    expect(text).not.toContain('response.completed')
    expect(breaker).toBe('closed')
  })
})

describe('a Gemini stream that fails while its start is held (nothing sent to the client)', () => {
  const BEFORE_FIRST_BYTE = /up-gemini: upstream answered 200, then its body failed before the first byte/

  it('a usage chunk, then a reset, with a target after: the next target answers, the first counted a failure', async () => {
    answers = [{firstThenReset: {usageMetadata: usage}}]
    const {res, text, result, breaker} = await run('messages', true, {two: true})
    expect(res.status).toBe(200)
    // one answer: B's, whole (no error event of A's before it)
    expect(text.match(/event: message_start/g)).toHaveLength(1)
    expect(text).not.toContain('event: error')
    expect(text).toContain('Done: a holds file body.')
    expect(receivedB).toHaveLength(1)
    expect(result).toMatchObject({status: 200, provider: 'up-gemini-b', fallback: true})
    expect(result.broken ?? false).toBe(false)
    expect(result.error).toMatch(/^fell back after: /)
    expect(result.error).toMatch(BEFORE_FIRST_BYTE)
    // (the prompt Google reported before the reset, which it bills: said, not counted under B)
    expect(result.usage).toMatchObject({inputTokens: 900, outputTokens: 8})
    expect(result.error).toMatch(unseenBy(900))
    expect(breaker).toBe('open')
  })

  it("the same with no target after: a 502 in the client's shape, not a 200 with an error event", async () => {
    answers = [{firstThenReset: {usageMetadata: usage}}]
    const {res, text, result, breaker} = await run('messages', true)
    expect(res.status).toBe(502)
    expect(res.headers.get('content-type')).toMatch(/application\/json/)
    expect(JSON.parse(text)).toMatchObject({type: 'error', error: {type: 'api_error'}})
    expect(result.status).toBe(502)
    expect(result.broken ?? false).toBe(false)
    expect(result.error).toMatch(BEFORE_FIRST_BYTE)
    expect(result.error).not.toMatch(/after the first byte/)
    // (the prompt Google reported before the reset: the row used to keep no usage)
    expect(result.usage).toMatchObject({inputTokens: 900, outputTokens: 0})
    expect(breaker).toBe('open')
  })

  it('a usage chunk, then silence past the idle timeout, to a chat client: a 504 in its shape', async () => {
    // (the rest long after the idle timeout: a loaded machine may read the first chunk late, and
    // the idle clock starts then)
    answers = [{stream: [{usageMetadata: usage}, WHOLE], pauseMs: 4_000}]
    const {res, text, result} = await run('chat', true)
    expect(res.status).toBe(504)
    expect(JSON.parse(text)).toMatchObject({error: {message: expect.stringMatching(BEFORE_FIRST_BYTE)}})
    expect(result.status).toBe(504)
    expect(result.error).toMatch(BEFORE_FIRST_BYTE)
    expect(result.usage).toMatchObject({inputTokens: 900, outputTokens: 0})
  })
})
