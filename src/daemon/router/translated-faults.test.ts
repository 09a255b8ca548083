/**
 * An upstream's failing stream through the translated relay (in this process, a scripted upstream
 * of each family): what the client gets, what its log row holds and what the breaker is told.
 * The stream translators' table of faults is src/protocols/stream-faults.test.ts; this is what
 * only shows here: the status, the row's usage and error, the breaker, and an upstream that goes
 * silent or drops the connection mid-answer (the client gets its error event, never a hang).
 */
import {afterAll, afterEach, beforeAll, describe, expect, it, vi} from 'vitest'

import {StreamTranslator} from '../../protocols/translate.js'

import type {Family, ProviderConfig, TimeoutSettings} from '../../store/schema.js'
import {BreakerRegistry} from './breaker.js'
import {logEntryFor} from './log-entry.js'
import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {ProxyGateway, startUpstream} from './proxy-fixture.js'
import {STOPPED_GRACE_MS} from './translated.js'

const TIMEOUTS: TimeoutSettings = {connectMs: 1_000, firstByteMs: 1_000, idleMs: 300}

const data = (payload: unknown): string => `data: ${JSON.stringify(payload)}\n\n`
const named = (payload: Record<string, unknown>): string => `event: ${String(payload.type)}\n${data(payload)}`
const chatChunk = (delta: Record<string, unknown>, finish: string | null = null, extra = {}): string =>
  data({
    id: 'chatcmpl-up',
    object: 'chat.completion.chunk',
    model: 'up',
    choices: [{index: 0, delta, finish_reason: finish}],
    ...extra,
  })

/** Each upstream family's stream of some text ("Hello"), before its end. */
const TEXT: Record<Family, string> = {
  chat: chatChunk({role: 'assistant', content: ''}) + chatChunk({content: 'Hello'}),
  messages:
    named({
      type: 'message_start',
      message: {id: 'msg_up', model: 'up', content: [], usage: {input_tokens: 7, output_tokens: 1}},
    }) +
    named({type: 'content_block_start', index: 0, content_block: {type: 'text', text: ''}}) +
    named({type: 'content_block_delta', index: 0, delta: {type: 'text_delta', text: 'Hello'}}),
  responses:
    named({type: 'response.created', response: {id: 'resp_up', model: 'up', status: 'in_progress'}}) +
    named({
      type: 'response.output_item.added',
      output_index: 0,
      item: {type: 'message', id: 'msg_1', role: 'assistant', content: []},
    }) +
    named({type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Hello'}),
  gemini: data({candidates: [{content: {role: 'model', parts: [{text: 'Hello'}]}}], modelVersion: 'up'}),
}

const PATH: Record<Family, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
  gemini: '/v1beta/models/up:streamGenerateContent?alt=sse',
}
const BODY: Record<Family, unknown> = {
  chat: {model: 'up', stream: true, messages: [{role: 'user', content: 'hi'}]},
  responses: {model: 'up', stream: true, input: 'hi'},
  messages: {model: 'up', max_tokens: 64, stream: true, messages: [{role: 'user', content: 'hi'}]},
  gemini: {contents: [{role: 'user', parts: [{text: 'hi'}]}]},
}

/** What the scripted upstream does: write `body`, then end, go silent or drop the connection. */
let script: {
  body: string
  then: 'end' | 'stall' | 'drop' | 'heartbeat'
  json?: boolean
  status?: number
  headers?: Record<string, string>
  /** Written `ms` after `body`, then the end (the stream idle or beating in between, as `then` says). */
  after?: {ms: number; body: string}
} = {
  body: '',
  then: 'end',
}
let upstream: Upstream
let targets: () => ProxyTarget[] = () => []
let timeouts = TIMEOUTS
const gateway = new ProxyGateway({route: () => ({targets: targets(), timeouts})})
const {results} = gateway

beforeAll(async () => {
  upstream = await startUpstream((_req, res) => {
    res.writeHead(script.status ?? 200, {
      'content-type': script.json ? 'application/json' : 'text/event-stream',
      ...script.headers,
    })
    if (script.then === 'end' && !script.after) {
      res.end(script.body)
      return
    }
    res.write(script.body)
    const after = script.after
    if (after) {
      const beat = script.then === 'heartbeat' ? setInterval(() => res.write(': ping\n\n'), 50) : undefined
      const last = setTimeout(() => {
        clearInterval(beat)
        res.end(after.body)
      }, after.ms)
      res.on('close', () => {
        clearInterval(beat)
        clearTimeout(last)
      })
      return
    }
    if (script.then === 'drop') setTimeout(() => res.socket?.destroy(), 20)
    // 'heartbeat': an SSE comment every 50 ms, never the end (a server that keeps the stream
    // open: bifrost #6784), until the gateway closes the connection
    if (script.then === 'heartbeat') {
      const beat = setInterval(() => res.write(': ping\n\n'), 50)
      res.on('close', () => clearInterval(beat))
    }
    // 'stall': nothing more until the gateway gives up (its idle timeout) and closes
  })
  await gateway.listen()
})

afterEach(() => {
  results.length = 0
  timeouts = TIMEOUTS
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

const provider = (family: Family): ProviderConfig => ({
  name: `up-${family}`,
  family,
  baseUrl: upstream.origin,
  credential: {secret: 'upstream-key'},
})

/** Sends `client`'s stream request to an upstream of `up` that follows `s`. */
async function run(
  client: Family,
  up: Family,
  s: typeof script,
  stream = true,
  headers: Record<string, string> = {},
) {
  script = s
  const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
  targets = () => [{provider: provider(up), translate: true, breaker: breakers.get('up')}]
  const started = performance.now()
  // (a Gemini client's JSON answer is another method's)
  const path = stream || client !== 'gemini' ? PATH[client] : '/v1beta/models/up:generateContent'
  const res = await fetch(gateway.url + path, {
    method: 'POST',
    headers: {'content-type': 'application/json', ...headers},
    body: JSON.stringify(stream ? BODY[client] : {...(BODY[client] as object), stream: false}),
  })
  const headersMs = performance.now() - started
  const text = await res.text()
  const ms = performance.now() - started
  const [result] = await gateway.settled()
  const row = logEntryFor(client, {agentId: null, keyPrefix: null, policyId: null, project: null}, result)
  return {res, text, ms, headersMs, result, row, breaker: breakers.snapshotOf('up').state}
}

/** The client's error event, in its own protocol, with `message` in it. */
const ERROR_EVENT: Record<Family, (message: string) => RegExp> = {
  chat: (m) => new RegExp(`data: \\{"error":\\{"message":"[^"]*${m}`),
  responses: (m) => new RegExp(`event: error\\ndata: \\{"type":"error",.*"message":"[^"]*${m}`),
  messages: (m) =>
    new RegExp(`event: error\\ndata: \\{"type":"error","error":\\{"type":"api_error","message":"[^"]*${m}`),
  gemini: (m) => new RegExp(`\\{"error":\\{"code":502,"message":"[^"]*${m}`),
}

const FAMILIES: Family[] = ['chat', 'responses', 'messages', 'gemini']
const DIRECTIONS = FAMILIES.flatMap((up) =>
  FAMILIES.filter((client) => client !== up).map((client) => [up, client] as const),
)

describe('an upstream that goes silent mid-answer', () => {
  it.each(DIRECTIONS)(
    '%s upstream, %s client: the error event after the idle timeout, no hang',
    async (up, client) => {
      const {res, text, ms, result, row, breaker} = await run(client, up, {body: TEXT[up], then: 'stall'})
      expect(res.status).toBe(200)
      expect(text).toContain('Hello')
      expect(text).toMatch(ERROR_EVENT[client]('up-\\S+: stream broke after the first byte'))
      expect(ms).toBeLessThan(5_000)
      expect(result).toMatchObject({status: 200, broken: true})
      expect(row).toMatchObject({status: 200, broken: true})
      expect(row.outputTokens).toBeGreaterThan(0)
      expect(breaker).toBe('open')
    },
  )
})

describe('a chat upstream whose chunks say "finish_reason": "" (SenseNova, Perplexity, Together)', () => {
  // an empty finish is none yet (research55 F1): read as the stop, the stall after it would end
  // the client's answer as a whole one
  const EMPTY = chatChunk({role: 'assistant', content: ''}, '') + chatChunk({content: 'Hello'}, '')
  it.each(FAMILIES.filter((f) => f !== 'chat'))(
    '%s client: silent before the real finish is an answer broken off, not a whole one',
    async (client) => {
      const {text, result, breaker} = await run(client, 'chat', {body: EMPTY, then: 'stall'})
      expect(text).toContain('Hello')
      expect(text).toMatch(ERROR_EVENT[client]('up-\\S+: stream broke after the first byte'))
      expect(text).not.toMatch(/message_stop|response\.completed|"finishReason":"STOP"/)
      expect(result).toMatchObject({status: 200, broken: true})
      expect(breaker).toBe('open')
    },
  )
  it.each(FAMILIES.filter((f) => f !== 'chat'))('%s client: the real finish ends it', async (client) => {
    const body =
      EMPTY +
      chatChunk({content: ' there'}, '') +
      chatChunk({}, 'stop') +
      data({choices: [], usage: {prompt_tokens: 7, completion_tokens: 3, total_tokens: 10}}) +
      'data: [DONE]\n\n'
    const {text, result, row} = await run(client, 'chat', {body, then: 'end'})
    expect(text).toContain(' there')
    expect(text).not.toMatch(ERROR_EVENT[client](''))
    expect(result.error).toBeNull()
    expect(row).toMatchObject({inputTokens: 7, outputTokens: 3})
  })
})

describe('an upstream that drops the connection mid-answer', () => {
  it.each(DIRECTIONS)(
    '%s upstream, %s client: the error event; the row and breaker a failure',
    async (up, client) => {
      const {res, text, result, row, breaker} = await run(client, up, {body: TEXT[up], then: 'drop'})
      expect(res.status).toBe(200)
      expect(text).toContain('Hello')
      expect(text).toMatch(ERROR_EVENT[client]('up-\\S+: '))
      expect(result).toMatchObject({status: 200, broken: true})
      expect(row.outputTokens).toBeGreaterThan(0)
      expect(breaker).toBe('open')
    },
  )
})

describe('an upstream that says its answer broke off', () => {
  const BROKE: Array<[Family, string, RegExp]> = [
    [
      'chat',
      TEXT.chat + chatChunk({}, 'insufficient_system_resource') + 'data: [DONE]\n\n',
      /finish_reason insufficient_system_resource/,
    ],
    [
      'gemini',
      TEXT.gemini + data({candidates: [{content: {role: 'model', parts: []}, finishReason: 'OTHER'}]}),
      /finishReason OTHER/,
    ],
    [
      'messages',
      TEXT.messages + named({type: 'error', error: {type: 'overloaded_error', message: 'Overloaded'}}),
      /Overloaded/,
    ],
    [
      'responses',
      TEXT.responses +
        named({
          type: 'response.failed',
          response: {status: 'failed', error: {code: 'server_error', message: 'failed'}},
        }),
      /failed/,
    ],
  ]
  it.each(BROKE)(
    '%s upstream: every client gets an error event, the row an error',
    async (up, body, said) => {
      for (const client of FAMILIES.filter((f) => f !== up)) {
        results.length = 0
        const {res, text, result, row, breaker} = await run(client, up, {body, then: 'end'})
        expect(res.status).toBe(200)
        expect(text).toContain('Hello')
        expect(text).toMatch(said)
        // no normal end after it
        expect(text).not.toMatch(/\[DONE\]|message_stop|response\.completed|"finishReason"/)
        expect(result).toMatchObject({status: 200, broken: true})
        expect(row.error).toMatch(said)
        expect(row.outputTokens).toBeGreaterThan(0)
        // the upstream answered (as an error event of its own on a route that does not translate)
        expect(breaker).toBe('closed')
      }
    },
  )
})

describe('an upstream that stops its answer, then closes without its last event', () => {
  // servers that leave `[DONE]` out (bifrost #6784), a relay that drops `message_stop`
  const WHOLE: Array<[Family, string]> = [
    [
      'chat',
      TEXT.chat +
        chatChunk({}, 'stop') +
        data({choices: [], usage: {prompt_tokens: 7, completion_tokens: 3, total_tokens: 10}}),
    ],
    [
      'messages',
      TEXT.messages +
        named({type: 'content_block_stop', index: 0}) +
        named({type: 'message_delta', delta: {stop_reason: 'end_turn'}, usage: {output_tokens: 3}}),
    ],
  ]
  it.each(
    WHOLE.flatMap(([up, body]) =>
      (['end', 'stall', 'heartbeat'] as const).map((then) => [up, then, body] as const),
    ),
  )('%s upstream, then %s: every client gets the whole answer, the row an answer', async (up, then, body) => {
    for (const client of FAMILIES.filter((f) => f !== up)) {
      results.length = 0
      const {res, text, ms, result, row, breaker} = await run(client, up, {body, then})
      // at most the grace after the stop, never the heartbeats' forever
      expect(ms).toBeLessThan(STOPPED_GRACE_MS + 1_500)
      expect(res.status).toBe(200)
      expect(text).toContain('Hello')
      // the client's own end of a stream, no error event
      expect(text).toMatch(
        {
          chat: /data: \[DONE\]/,
          responses: /response\.completed/,
          messages: /message_stop/,
          gemini: /"finishReason":"STOP"/,
        }[client],
      )
      expect(text).not.toMatch(ERROR_EVENT[client](''))
      expect(result.error).toBeNull()
      expect(result.broken).toBeUndefined()
      expect(row).toMatchObject({status: 200, inputTokens: 7, outputTokens: 3})
      expect(breaker).toBe('closed')
    }
  })
})

describe("a chat upstream's error chunk naming a spent quota (OpenAI-compatible servers)", () => {
  const quota = data({
    error: {
      message: 'You exceeded your current quota',
      type: 'insufficient_quota',
      code: 'insufficient_quota',
    },
  })
  it("after the first byte: the client's in-stream rate-limit error, no breaker failure", async () => {
    const {res, text, result, breaker} = await run('messages', 'chat', {body: TEXT.chat + quota, then: 'end'})
    expect(res.status).toBe(200)
    expect(text).toMatch(
      /event: error\ndata: \{"type":"error","error":\{"type":"rate_limit_error","message":"[^"]*You exceeded your current quota/,
    )
    expect(result.error).toContain('insufficient_quota: You exceeded your current quota')
    expect(breaker).toBe('closed')
  })

  it("as the stream's first chunk: an HTTP 429 that says no retry helps, no breaker failure", async () => {
    const {res, text, result, breaker} = await run('messages', 'chat', {
      body: quota + 'data: [DONE]\n\n',
      then: 'end',
    })
    expect(res.status).toBe(429)
    expect(res.headers.get('x-should-retry')).toBe('false')
    expect(JSON.parse(text).error).toMatchObject({type: 'rate_limit_error'})
    expect(JSON.parse(text).error.message).toContain('(no retry helps: insufficient_quota)')
    expect(result).toMatchObject({status: 429})
    expect(breaker).toBe('closed')
  })
})

describe("a chat upstream's error chunk naming a rate limit (OpenAI-compatible servers), as the stream's first chunk", () => {
  // Codex retries a 429 only with retry-after (docs/RELIABILITY.md, "A 429 Codex would not
  // retry"): a bare one ended its turn, "exceeded retry limit, last status: 429" (review68 F2)
  const CODEX = {originator: 'codex_exec', 'user-agent': 'codex_exec/0.171.0'}
  const limited = (message: string) =>
    data({error: {message, type: 'requests', code: 'rate_limit_exceeded'}}) + 'data: [DONE]\n\n'

  it('reaches Codex as a 429 with the wait its words state as retry-after', async () => {
    const body = limited('Rate limit reached for requests. Please try again in 1s.')
    const {res, text, breaker} = await run('responses', 'chat', {body, then: 'end'}, true, CODEX)
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(res.headers.get('x-should-retry')).toBeNull()
    expect(JSON.parse(text).error).toMatchObject({code: 'rate_limit_exceeded'})
    expect(breaker).toBe('closed')
  })

  it("LiteLLM's proxy (its code the status as a string) and a relay's Anthropic type name: a 429 too, not a 502", async () => {
    // LiteLLM's ProxyException writes `code` as str(status) and its type as the exception's:
    // `data: {"error": {"message": ..., "type": "None", "param": "None", "code": "429"}}`
    const litellm =
      data({
        error: {
          message: 'litellm.RateLimitError: Rate limit reached',
          type: 'None',
          param: 'None',
          code: '429',
        },
      }) + 'data: [DONE]\n\n'
    const viaLitellm = await run('responses', 'chat', {body: litellm, then: 'end'}, true, CODEX)
    expect(viaLitellm.res.status).toBe(429)
    expect(viaLitellm.res.headers.get('retry-after')).toBe('2')
    expect(JSON.parse(viaLitellm.text).error.code).toBeNull() // (LiteLLM's "None" names nothing)
    expect(viaLitellm.breaker).toBe('closed')
    const named =
      data({error: {message: 'Too many requests', type: 'rate_limit_error', code: null}}) + 'data: [DONE]\n\n'
    const viaRelay = await run('messages', 'chat', {body: named, then: 'end'})
    expect(viaRelay.res.status).toBe(429)
    expect(JSON.parse(viaRelay.text).error).toMatchObject({type: 'rate_limit_error'})
    // a code that is no status (a vendor's own number) stays a 502
    const other = data({error: {message: 'engine failure', code: '1234'}}) + 'data: [DONE]\n\n'
    expect((await run('messages', 'chat', {body: other, then: 'end'})).res.status).toBe(502)
  })

  it('with no wait in its words: retry-after 2 (the first of the waits the gateway gives Codex)', async () => {
    const {res} = await run(
      'responses',
      'chat',
      {body: limited('Rate limit reached'), then: 'end'},
      true,
      CODEX,
    )
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('2')
  })

  it('a spent quota gets none: no wait helps it', async () => {
    const body =
      data({
        error: {
          message: 'You exceeded your current quota',
          type: 'insufficient_quota',
          code: 'insufficient_quota',
        },
      }) + 'data: [DONE]\n\n'
    const {res} = await run('responses', 'chat', {body, then: 'end'}, true, CODEX)
    expect(res.status).toBe(429)
    expect(res.headers.get('x-should-retry')).toBe('false')
    expect(res.headers.get('retry-after')).toBeNull()
  })
})

describe('a chat upstream whose chunks say "error": null', () => {
  it('is an answer like any other (servers and gateways write it: gollm "explicit error: null must stream through")', async () => {
    const body =
      chatChunk({role: 'assistant', content: 'Hello'}, null, {error: null}) +
      chatChunk({}, 'stop', {error: null}) +
      'data: [DONE]\n\n'
    for (const client of ['messages', 'responses', 'gemini'] as const) {
      const {res, text, result} = await run(client, 'chat', {body, then: 'end'})
      expect([client, res.status]).toEqual([client, 200])
      expect(text).toContain('Hello')
      expect(text).not.toMatch(ERROR_EVENT[client](''))
      expect(result).toMatchObject({status: 200})
      expect(result.broken).toBeUndefined()
    }
  })
})

describe('a Responses upstream that acks at once and answers later (OpenAI: "then nothing until the first output item", vercel/ai #18154)', () => {
  const RESPONSE = {id: 'resp_up', object: 'response', model: 'up', status: 'in_progress', output: []}
  const ACK =
    named({type: 'response.created', sequence_number: 0, response: RESPONSE}) +
    named({type: 'response.in_progress', sequence_number: 1, response: RESPONSE})
  const ANSWER =
    named({
      type: 'response.output_item.added',
      output_index: 0,
      item: {type: 'message', id: 'msg_1', role: 'assistant', content: []},
    }) +
    named({
      type: 'response.content_part.added',
      output_index: 0,
      content_index: 0,
      part: {type: 'output_text', text: ''},
    }) +
    named({type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Hello'}) +
    named({
      type: 'response.completed',
      response: {
        ...RESPONSE,
        status: 'completed',
        usage: {input_tokens: 5, output_tokens: 1, total_tokens: 6},
      },
    })

  it("gives the client its headers and start at the ack's grace, not at the first output item 1.2 s later; the row's time to first byte with them", async () => {
    timeouts = {connectMs: 1_000, firstByteMs: 5_000, idleMs: 5_000}
    // (the translation's modules load on the first translated request)
    await run('messages', 'responses', {body: ACK + ANSWER, then: 'end'})
    for (const client of ['messages', 'chat'] as const) {
      results.length = 0
      const {res, text, headersMs, result} = await run(client, 'responses', {
        body: ACK,
        then: 'end',
        after: {ms: 1200, body: ANSWER},
      })
      expect([client, res.status]).toEqual([client, 200])
      expect(text).toContain('Hello')
      // (START_GRACE_MS after the ack; held to the item: ~1200 ms)
      expect(headersMs, client).toBeLessThan(600)
      expect(result.ttfbMs ?? Infinity, client).toBeLessThan(600)
    }
  })

  it('SSE comments after the ack hold nothing past the grace', async () => {
    const {res, text, headersMs} = await run('messages', 'responses', {
      body: ACK,
      then: 'heartbeat',
      after: {ms: 1200, body: ANSWER},
    })
    expect(res.status).toBe(200)
    expect(text).toContain('Hello')
    expect(headersMs).toBeLessThan(600)
  })

  it("a failure after the grace is the stream's error event, as before the start was held", async () => {
    const failed = named({
      type: 'response.failed',
      response: {
        ...RESPONSE,
        status: 'failed',
        error: {code: 'rate_limit_exceeded', message: 'Rate limit reached for requests'},
      },
    })
    const {res, text, result} = await run('messages', 'responses', {
      body: ACK,
      then: 'end',
      after: {ms: 400, body: failed},
    })
    expect(res.status).toBe(200)
    expect(text).toMatch(/^event: message_start\n/)
    expect(text).toMatch(
      /event: error\ndata: \{"type":"error","error":\{"type":"rate_limit_error","message":"[^"]*Rate limit reached/,
    )
    expect(result).toMatchObject({status: 200, broken: true})
  })
})

describe("a Messages upstream's refusal stop to a Responses client", () => {
  it('is incomplete for content_filter; the row an answer with the upstream usage', async () => {
    const body =
      TEXT.messages +
      named({type: 'content_block_stop', index: 0}) +
      named({type: 'message_delta', delta: {stop_reason: 'refusal'}, usage: {output_tokens: 3}}) +
      named({type: 'message_stop'})
    const {text, result, row} = await run('responses', 'messages', {body, then: 'end'})
    expect(text).toMatch(
      /event: response\.incomplete\ndata: .*"incomplete_details":\{"reason":"content_filter"\}/,
    )
    expect(result.error).toBeNull()
    expect(result.broken).toBeUndefined()
    expect(row).toMatchObject({status: 200, inputTokens: 7, outputTokens: 3})
  })
})

describe('a JSON answer that is an error alone (a relay of the one-api kind)', () => {
  it.each(DIRECTIONS)(
    '%s upstream, %s client: the upstream\'s words and status in the client\'s error, not a 502 "cannot be translated"',
    async (up, client) => {
      const body = JSON.stringify({
        error: {message: 'quota exceeded for upstream-key', type: 'insufficient_quota', code: 429},
      })
      const {res, text, result, breaker} = await run(client, up, {body, then: 'end', json: true}, false)
      expect(res.status).toBe(429)
      expect(text).toContain('upstream answered 200 with an error: quota exceeded for [redacted]')
      expect(text).not.toContain('upstream-key')
      expect(result).toMatchObject({status: 429})
      // (`insufficient_quota`: no wait cures it, and the client's SDK is told so)
      expect(res.headers.get('x-should-retry')).toBe('false')
      // (the request's last answer: no breaker failure)
      expect(breaker).toBe('closed')
      // no code: a 502, and a 4xx code is not the breaker's
      const plain = await run(
        client,
        up,
        {body: JSON.stringify({error: 'bad model name'}), then: 'end', json: true},
        false,
      )
      expect(plain.res.status).toBe(502)
      expect(plain.text).toContain('with an error: bad model name')
      const refused = await run(
        client,
        up,
        {body: JSON.stringify({error: {message: 'no', code: '400'}}), then: 'end', json: true},
        false,
      )
      expect(refused.res.status).toBe(400)
      expect(refused.breaker).toBe('closed')
    },
  )
})

describe('a JSON answer that is an error alone naming a rate limit (not a spent quota)', () => {
  // Codex retries no 429 without `retry-after` (it ends the turn): the wait the words state, else 2 s
  it.each(DIRECTIONS)(
    '%s upstream, %s client: a 429 with retry-after, no x-should-retry',
    async (up, client) => {
      const said = (message: string) =>
        JSON.stringify({error: {message, type: 'rate_limit_exceeded', code: 429}})
      const stated = await run(
        client,
        up,
        {body: said('Rate limit reached. Please try again in 7.2s.'), then: 'end', json: true},
        false,
      )
      expect(stated.res.status).toBe(429)
      expect(stated.res.headers.get('retry-after')).toBe('8')
      expect(stated.res.headers.get('x-should-retry')).toBeNull()
      expect(stated.breaker).toBe('closed')
      const none = await run(client, up, {body: said('Too many requests'), then: 'end', json: true}, false)
      expect(none.res.status).toBe(429)
      expect(none.res.headers.get('retry-after')).toBe('2')
    },
  )
})

describe('a 429 answered as its status whose words alone state the wait (no retry-after, no RetryInfo)', () => {
  // the status path reads the words as a stream's first event and a 200's error do (review74 #1
  // read them only beside RetryInfo): the client's SDK waits what they say
  it.each(DIRECTIONS)('%s upstream, %s client: retry-after the wait its words state', async (up, client) => {
    const said = (message: string) =>
      JSON.stringify({error: {message, type: 'requests', code: 'rate_limit_exceeded'}})
    const stated = await run(
      client,
      up,
      {body: said('Rate limit reached. Please try again in 7.2s.'), then: 'end', json: true, status: 429},
      false,
    )
    expect(stated.res.status).toBe(429)
    expect(stated.res.headers.get('retry-after')).toBe('8')
    expect(stated.res.headers.get('x-should-retry')).toBeNull()
    // (none stated: none said, as before; a spent quota's words neither)
    const none = await run(
      client,
      up,
      {body: said('Too many requests'), then: 'end', json: true, status: 429},
      false,
    )
    expect(none.res.headers.get('retry-after')).toBeNull()
    const spent = JSON.stringify({
      error: {
        message: 'Quota spent. Please try again in 7.2s.',
        type: 'insufficient_quota',
        code: 'insufficient_quota',
      },
    })
    const quota = await run(client, up, {body: spent, then: 'end', json: true, status: 429}, false)
    expect(quota.res.headers.get('x-should-retry')).toBe('false')
    expect(quota.res.headers.get('retry-after')).toBeNull()
  })
})

describe("Groq's per-day 429, whose words state a long wait, on every translated entrance", () => {
  // small60 sent the words' 13m55.2s as `retry-after: 836`, which Codex retries 5 times, each
  // waited: 70 minutes; the SDKs honour a retry-after only below 60 s
  const TPD =
    'Rate limit reached for model `llama-3.3-70b-versatile` in organization `org_x` service tier `on_demand` on tokens per day (TPD): Limit 100000, Used 99763, Requested 1204. Please try again in 13m55.2s. Need more tokens?'
  const json = (message: string) =>
    JSON.stringify({error: {message, type: 'tokens', code: 'rate_limit_exceeded'}})
  const CODEX = {originator: 'codex_exec', 'user-agent': 'codex_exec/0.171.0'}
  /** The answers a chat upstream says a 429's `message` in: as its status, inside a 200's JSON, as a stream's first chunk. */
  const ways = (message: string) =>
    [
      [{body: json(message), then: 'end', json: true, status: 429}, false],
      // (a relay of the one-api kind: the status as the code)
      [
        {
          body: JSON.stringify({error: {message, type: 'rate_limit_exceeded', code: 429}}),
          then: 'end',
          json: true,
        },
        false,
      ],
      [{body: data(JSON.parse(json(message))) + 'data: [DONE]\n\n', then: 'end'}, true],
    ] as const

  it.each(['responses', 'messages', 'gemini'] as const)(
    'chat upstream, %s client: a 429 that no retry helps, no retry-after',
    async (client) => {
      for (const [s, stream] of ways(TPD)) {
        const {res, text, result, breaker} = await run(client, 'chat', {...s}, stream, CODEX)
        expect(res.status).toBe(429)
        expect(res.headers.get('retry-after')).toBeNull()
        expect(res.headers.get('x-should-retry')).toBe('false')
        expect(text).toContain('tokens per day (TPD)')
        expect(result.error).toContain('(no retry helps: a daily quota)')
        expect(breaker).toBe('closed')
      }
    },
  )

  it.each(['responses', 'messages', 'gemini'] as const)(
    'chat upstream, %s client: a per-minute wait past a minute gets no retry-after but x-should-retry: false (a Gemini client its RetryInfo); one within, its own',
    async (client) => {
      const tpm = TPD.replace('tokens per day (TPD)', 'tokens per minute (TPM)')
      for (const [s, stream] of ways(tpm)) {
        const {res, text} = await run(client, 'chat', {...s}, stream, CODEX)
        expect(res.status).toBe(429)
        if (client === 'gemini') {
          // (Gemini CLI reads RetryInfo, not the header, and ends the turn on one past 5 minutes)
          expect(JSON.parse(text).error.details).toContainEqual({
            '@type': 'type.googleapis.com/google.rpc.RetryInfo',
            retryDelay: '836s',
          })
          continue
        }
        // (the SDKs would retry on their own short backoff into the 14 minutes, Codex wait 836 s 5 times)
        expect(res.headers.get('retry-after')).toBeNull()
        expect(res.headers.get('x-should-retry')).toBe('false')
      }
      for (const [s, stream] of ways(tpm.replace('13m55.2s', '41.3s'))) {
        const {res} = await run(client, 'chat', {...s}, stream, CODEX)
        expect(res.headers.get('retry-after')).toBe('42')
      }
    },
  )
})

describe('a JSON answer that is an error alone stating a prompt past the window (LM Studio, llama.cpp relays)', () => {
  const said =
    'Input does not fit in context length. The input has 9000 tokens, but the context length only supports 4096 tokens.'
  const WORDS: Record<Family, RegExp> = {
    chat: /"code":"context_length_exceeded"/,
    responses: /"code":"context_length_exceeded"/,
    messages: /prompt is too long: 9000 tokens > 4096 maximum/,
    gemini: /input token count/i,
  }
  it.each(DIRECTIONS.filter(([up]) => up === 'chat' || up === 'messages'))(
    '%s upstream, %s client: a 400 in the overflow words the agent compacts on, the window kept',
    async (up, client) => {
      const {res, text, result, breaker} = await run(
        client,
        up,
        {body: JSON.stringify({error: said}), then: 'end', json: true},
        false,
      )
      expect(res.status).toBe(400)
      expect(text).toMatch(WORDS[client])
      expect(result).toMatchObject({status: 400, contextWindow: 4096})
      expect(result.error).toContain('with an error: Input does not fit')
      expect(breaker).toBe('closed')
    },
  )
  it("words already the client's own are a 400 whatever the body's code", async () => {
    const body = JSON.stringify({
      error: {message: 'prompt is too long: 9000 tokens > 4096 maximum', code: 500},
    })
    const {res, text, breaker} = await run('messages', 'chat', {body, then: 'end', json: true}, false)
    expect(res.status).toBe(400)
    expect(JSON.parse(text)).toMatchObject({
      error: {message: 'prompt is too long: 9000 tokens > 4096 maximum'},
    })
    expect(breaker).toBe('closed')
    // a chat client's own words get its code too, as on an error status
    const chat = JSON.stringify({error: {message: 'context_length_exceeded: 9000 > 4096', code: 500}})
    const own = await run('chat', 'messages', {body: chat, then: 'end', json: true}, false)
    expect(own.res.status).toBe(400)
    expect(JSON.parse(own.text)).toMatchObject({error: {code: 'context_length_exceeded'}})
  })
})

describe('a 429 with retry-after to a Gemini client (Gemini CLI reads the wait from the body only)', () => {
  it.each(['chat', 'messages', 'responses'] as const)(
    '%s upstream: the wait as Google states it, RetryInfo in the error details, and the header kept',
    async (up) => {
      for (const stream of [true, false]) {
        const body = JSON.stringify({error: {message: 'Rate limit reached', type: 'rate_limit_error'}})
        const {res, text} = await run(
          'gemini',
          up,
          {body, then: 'end', json: true, status: 429, headers: {'retry-after': '7'}},
          stream,
        )
        expect(res.status).toBe(429)
        expect(res.headers.get('retry-after')).toBe('7')
        expect(JSON.parse(text)).toMatchObject({
          error: {
            code: 429,
            status: 'RESOURCE_EXHAUSTED',
            details: [{'@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s'}],
          },
        })
      }
      // no wait said: no details; another client's body stays its own shape
      const plain = await run(
        'gemini',
        up,
        {body: JSON.stringify({error: {message: 'busy'}}), then: 'end', json: true, status: 429},
        false,
      )
      expect(JSON.parse(plain.text).error.details).toBeUndefined()
    },
  )
})

describe('a translation that throws as the stream ends', () => {
  // (a fault of gwctl's own translator, which no upstream should find: it fails that stream, as a
  // throw in a chunk's translation does, never the daemon; the end runs from a timer and from the
  // body's events, where a throw would be the process's)
  afterEach(() => {
    vi.restoreAllMocks()
  })
  it.each(['end', 'stall'] as const)(
    'chat upstream that stops, then %s without its last event: the client gets an error event, the row a broken stream',
    async (then) => {
      vi.spyOn(StreamTranslator.prototype, 'end').mockImplementationOnce(() => {
        throw new Error('translator fault')
      })
      // (no `[DONE]`: the answer is ended by the gateway, at the body's end or the grace's)
      const body = TEXT.chat + chatChunk({}, 'stop')
      const {res, text, result} = await run('messages', 'chat', {body, then})
      expect(res.status).toBe(200)
      expect(text).toContain('Hello')
      expect(text).toMatch(ERROR_EVENT.messages('stream broke after the first byte: translator fault'))
      expect(result).toMatchObject({status: 200, broken: true})
    },
  )
})

describe("an upstream whose stream's first event is its error (nothing went to the client)", () => {
  // Gemini's in-stream 503, OpenRouter's first-line error, a 429 said so
  const FIRST: Array<[Family, string, number, RegExp]> = [
    [
      'gemini',
      data({error: {code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE'}}),
      503,
      /overloaded/,
    ],
    ['chat', data({error: {code: 502, message: 'Provider returned error'}}), 502, /Provider returned error/],
    [
      'chat',
      data({error: {code: 429, message: 'Rate limit exceeded', type: 'rate_limit_error'}}),
      429,
      /Rate limit/,
    ],
  ]

  it.each(FIRST)(
    '%s upstream (%#): with no target left, the client gets that status as an error answer in its shape',
    async (up, body, status, words) => {
      for (const client of FAMILIES.filter((f) => f !== up)) {
        const {res, text, result, row, breaker} = await run(client, up, {body, then: 'end'})
        expect([client, res.status]).toEqual([client, status])
        expect(res.headers.get('content-type')).toContain('application/json')
        expect(text).toMatch(words)
        expect(result).toMatchObject({status})
        expect(row.status).toBe(status)
        expect(row.error).toMatch(words)
        // an upstream failure: the breaker counts it, but for a 429 that is the request's last
        // answer (no other target: ./rate-limit.ts settle429)
        expect(breaker).toBe(status === 429 ? 'closed' : 'open')
      }
    },
  )

  it('goes to the next target when the policy has one, the failing one counted', async () => {
    const sim = await startUpstream((_req, res) => {
      res.writeHead(200, {'content-type': 'text/event-stream'})
      res.end(TEXT.chat + chatChunk({}, 'stop') + 'data: [DONE]\n\n')
    })
    try {
      script = {body: FIRST[0][1], then: 'end'}
      const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
      const second: ProviderConfig = {
        name: 'up-second',
        family: 'chat',
        baseUrl: sim.origin,
        credential: {secret: 'k'},
      }
      targets = () => [
        {provider: provider('gemini'), translate: true, breaker: breakers.get('up')},
        {provider: second, translate: true, breaker: breakers.get('second')},
      ]
      const res = await fetch(gateway.url + PATH.messages, {
        method: 'POST',
        headers: {'content-type': 'application/json'},
        body: JSON.stringify(BODY.messages),
      })
      const text = await res.text()
      const [result] = await gateway.settled()
      expect(res.status).toBe(200)
      expect(text).toContain('Hello')
      expect(text).not.toContain('overloaded')
      expect(result).toMatchObject({provider: 'up-second', fallback: true})
      expect(result.error).toMatch(/fell back after: .*overloaded/)
      expect(breakers.snapshotOf('up').state).toBe('open')
    } finally {
      sim.close()
    }
  })

  it('a refusal said so (a 4xx) is answered with its status, the breaker not counting it', async () => {
    const body = data({
      error: {code: 400, message: 'Invalid request: unknown field', type: 'invalid_request_error'},
    })
    const {res, text, breaker} = await run('messages', 'chat', {body, then: 'end'})
    expect(res.status).toBe(400)
    expect(JSON.parse(text)).toMatchObject({type: 'error', error: {type: 'invalid_request_error'}})
    expect(text).toContain('unknown field')
    expect(breaker).toBe('closed')
  })
})

describe("Google's quota 429 as a stream's first event (Gemini's streamGenerateContent, relays that keep Google's error)", () => {
  // answered as the same 429 said by its status: a daily quota `x-should-retry: false`, which
  // Claude Code's and the OpenAI SDKs obey (./rate-limit.ts `noWaitHelps`), and to a Gemini client
  // a QuotaFailure naming a daily quota; a per-minute one its wait as `retry-after` (close58): the
  // longer of RetryInfo's, which Google cuts to whole seconds, and its words' (python-genai #2114:
  // "Please retry in 58.934310785s." with retryDelay "58s"; review74 #1)
  const googleError = (per: 'PerDay' | 'PerMinute', code: number) => ({
    error: {
      code,
      message:
        'You exceeded your current quota, please check your plan and billing details.\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10\nPlease retry in 37.5s.',
      status: 'RESOURCE_EXHAUSTED',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [
            {
              quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
              quotaId: `GenerateRequests${per}PerProjectPerModel-FreeTier`,
            },
          ],
        },
        {'@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '37s'},
      ],
    },
  })
  // a Gemini stream's chunk; a relay's chat stream (one-api kinds forward Google's error as it was)
  // or Messages stream (its `event: error`, Google's details kept, as the simulator says it)
  const UPSTREAMS: Array<[Family, (per: 'PerDay' | 'PerMinute') => string]> = [
    ['gemini', (per) => data(googleError(per, 429))],
    ['chat', (per) => data(googleError(per, 429)) + 'data: [DONE]\n\n'],
    [
      'messages',
      (per) => {
        const {message, details} = googleError(per, 429).error
        return named({type: 'error', error: {type: 'rate_limit_error', message, details}})
      },
    ],
  ]
  const CASES = UPSTREAMS.flatMap(([up, body]) =>
    FAMILIES.filter((f) => f !== up).map((client) => [up, client, body] as const),
  )

  it.each(CASES)(
    '%s upstream, %s client: a daily quota is a 429 that says no retry helps, no retry-after',
    async (up, client, body) => {
      const {res, text, result, breaker} = await run(client, up, {body: body('PerDay'), then: 'end'})
      expect(res.status).toBe(429)
      expect(res.headers.get('x-should-retry')).toBe('false')
      expect(res.headers.get('retry-after')).toBeNull()
      expect(result.error).toContain('(no retry helps: a daily quota)')
      expect(breaker).toBe('closed')
      if (client === 'gemini') {
        const details = JSON.parse(text).error.details as Array<Record<string, unknown>>
        // (Gemini CLI 0.61 classifyGoogleError: a quotaId that includes "PerDay" ends the turn)
        expect(details.map((d) => d['@type'])).toEqual(['type.googleapis.com/google.rpc.QuotaFailure'])
        expect(JSON.stringify(details)).toContain('PerDay')
      }
    },
  )

  it.each(CASES)(
    "%s upstream, %s client: a per-minute quota's wait is its words' 37.5 s, rounded up, not RetryInfo's 37 s",
    async (up, client, body) => {
      const {res, text} = await run(client, up, {body: body('PerMinute'), then: 'end'})
      expect(res.status).toBe(429)
      expect(res.headers.get('retry-after')).toBe('38')
      expect(res.headers.get('x-should-retry')).toBeNull()
      if (client === 'gemini')
        expect(JSON.parse(text).error.details).toEqual([
          {'@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '38s'},
        ])
    },
  )

  it("a relay's 200 JSON answer of that error alone: the same waits", async () => {
    const json = (per: 'PerDay' | 'PerMinute') => ({
      body: JSON.stringify(googleError(per, 429)),
      then: 'end' as const,
      json: true,
    })
    const minute = await run('messages', 'chat', json('PerMinute'), false)
    expect(minute.res.status).toBe(429)
    expect(minute.res.headers.get('retry-after')).toBe('38')
    results.length = 0
    const day = await run('messages', 'chat', json('PerDay'), false)
    expect(day.res.status).toBe(429)
    expect(day.res.headers.get('x-should-retry')).toBe('false')
    expect(day.res.headers.get('retry-after')).toBeNull()
    // the row says why, as a stream's and a status's rows do (review74 #4)
    expect(day.result.error).toContain('upstream answered 200 with an error: You exceeded your current quota')
    expect(day.result.error).toContain('(no retry helps: a daily quota)')
  })

  it('the same error answered with its status 429 (the Gemini API itself): the same wait', async () => {
    for (const client of FAMILIES.filter((f) => f !== 'gemini')) {
      const {res} = await run(
        client,
        'gemini',
        {body: JSON.stringify(googleError('PerMinute', 429)), then: 'end', json: true, status: 429},
        false,
      )
      expect(res.status).toBe(429)
      expect(res.headers.get('retry-after')).toBe('38')
    }
  })

  it("a Messages relay's event: error holding Google's error as Google wrote it (a numeric code, no type): that status (review74 #3)", async () => {
    const body = (per: 'PerDay' | 'PerMinute') => named({type: 'error', ...googleError(per, 429)})
    for (const client of FAMILIES.filter((f) => f !== 'messages')) {
      results.length = 0
      const day = await run(client, 'messages', {body: body('PerDay'), then: 'end'})
      expect(day.res.status).toBe(429)
      expect(day.res.headers.get('x-should-retry')).toBe('false')
      expect(day.result.error).toContain('(no retry helps: a daily quota)')
      const minute = await run(client, 'messages', {body: body('PerMinute'), then: 'end'})
      expect(minute.res.status).toBe(429)
      expect(minute.res.headers.get('retry-after')).toBe('38')
    }
    // a numeric code that is no status is not read as one: the type's status, else a 500
    const odd = named({type: 'error', error: {code: 7, message: 'odd'}})
    expect((await run('chat', 'messages', {body: odd, then: 'end'})).res.status).toBe(500)
  })
})
