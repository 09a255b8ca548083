/**
 * Issue 29, items 2 and 3, over all four entrances against the simulator (in this process):
 * - `stall` (a 200 with its headers, then silence) on a non-stream request: nothing reached the
 *   client, so the next target is tried; with none left the client gets a 504 in its entrance's
 *   shape (the pass-through relay and the translated one alike);
 * - the `no-terminal` quirk (a stream that ends cleanly without `[DONE]`, `message_stop`,
 *   `response.completed` or a `finishReason`): the client gets its protocol's error event, the
 *   result (the log row) an error and `broken`, the breaker a failure.
 * audit58: a stream cut or silent mid-answer ends with an error event whose words OpenCode
 * retries; a stream's headers then nothing is not "after the first byte"; an answer not streamed
 * waits for its headers up to the idle timeout.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {parseFault} from '../../sim/faults.js'
import type {Simulator} from '../../sim/server.js'
import {startSim} from '../../sim/server.js'
import type {Family, ProviderConfig, TimeoutSettings} from '../../store/schema.js'
import {BreakerRegistry} from './breaker.js'
import {logEntryFor} from './log-entry.js'
import type {ProxyTarget} from './proxy.js'
import {ProxyGateway} from './proxy-fixture.js'

const TIMEOUTS: TimeoutSettings = {connectMs: 1_000, firstByteMs: 1_000, idleMs: 300}

let sim: Simulator
let targets: (family: Family) => ProxyTarget[]
let timeouts = TIMEOUTS
const gateway = new ProxyGateway({route: (family) => ({targets: targets(family), timeouts})})
const {results} = gateway

const FAMILIES: Record<Family, {path: (stream: boolean) => string; body: (stream: boolean) => unknown}> = {
  chat: {
    path: () => '/v1/chat/completions',
    body: (stream: boolean) => ({model: 'sim-mini', stream, messages: [{role: 'user', content: 'faults'}]}),
  },
  responses: {
    path: () => '/v1/responses',
    body: (stream: boolean) => ({model: 'sim-mini', stream, input: 'faults'}),
  },
  messages: {
    path: () => '/v1/messages',
    body: (stream: boolean) => ({
      model: 'claude-sim',
      max_tokens: 64,
      stream,
      messages: [{role: 'user', content: 'faults'}],
    }),
  },
  gemini: {
    path: (stream: boolean) =>
      stream
        ? '/v1beta/models/gemini-sim:streamGenerateContent?alt=sse'
        : '/v1beta/models/gemini-sim:generateContent',
    body: () => ({contents: [{role: 'user', parts: [{text: 'faults'}]}]}),
  },
}

/** The simulator as a provider of `family` (`origin: 'sim'`: the `x-sim-*` headers reach it). */
const simProvider = (name: string, family: Family): ProviderConfig => ({
  name,
  family,
  baseUrl: sim.origin,
  credential: {secret: `upstream-key-${name}`},
  origin: 'sim',
})

beforeAll(async () => {
  sim = await startSim()
  await gateway.listen()
})

afterEach(() => {
  results.length = 0
  sim.faults.clear()
  timeouts = TIMEOUTS
})

afterAll(async () => {
  await gateway.close()
  await sim.close()
})

async function send(family: Family, stream: boolean, headers: Record<string, string> = {}, body?: unknown) {
  const spec = FAMILIES[family]
  const res = await fetch(gateway.url + spec.path(stream), {
    method: 'POST',
    headers: {'content-type': 'application/json', ...headers},
    body: JSON.stringify(body ?? spec.body(stream)),
  })
  const text = await res.text()
  const [result] = await gateway.settled()
  return {res, text, result}
}

/** True when `text` is an error body in `family`'s shape with `status`. */
function inShape(family: Family, status: number, text: string): boolean {
  const body = JSON.parse(text) as {type?: string; error?: {message?: string; code?: number; status?: string}}
  if (family === 'messages') return body.type === 'error' && typeof body.error?.message === 'string'
  if (family === 'gemini') return body.error?.code === status && typeof body.error.status === 'string'
  return typeof body.error?.message === 'string'
}

const families = Object.keys(FAMILIES) as Family[]

describe('a non-stream 200 whose body stalls after its headers (sim fault `stall`)', () => {
  it.each(families)('%s: falls back to the next target; the row says why', async (family) => {
    const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
    targets = (f) =>
      ['up', 'alt'].map((name) => ({provider: simProvider(`${name}-${f}`, f), breaker: breakers.get(name)}))
    sim.faults.add(parseFault(`stall,path=${FAMILIES[family].path(false).split('?')[0]}`))
    const {res, text, result} = await send(family, false)
    expect(res.status).toBe(200)
    expect(JSON.parse(text)).toBeTypeOf('object')
    expect(result).toMatchObject({status: 200, provider: `alt-${family}`, fallback: true})
    expect(result.error).toMatch(
      /^fell back after: up-\S+: upstream answered 200, then its body failed before the first byte: read timed out: upstream silent for 300 ms \(idle timeout\)/,
    )
    expect(result.usage?.outputTokens).toBeGreaterThan(0)
    expect(breakers.snapshotOf('up').state).toBe('open')
    expect(breakers.snapshotOf('alt').state).toBe('closed')
  })

  it.each(families)('%s: with no target left, 504 in the entrance shape', async (family) => {
    targets = (f) => [{provider: simProvider(`up-${f}`, f)}]
    const {res, text, result} = await send(family, false, {'x-sim-fault': 'stall'})
    expect(res.status).toBe(504)
    expect(inShape(family, 504, text)).toBe(true)
    expect(text).toContain('idle timeout')
    expect(result.status).toBe(504)
    expect(result.error).toMatch(/no fallback is left: up-\S+: upstream answered 200, then its body failed/)
  })

  it.each(families)(
    '%s entrance, translated upstream: falls back, then 504 when none is left',
    async (family) => {
      // the upstream of another family: messages for every entrance but messages (chat for it)
      const upFamily: Family = family === 'messages' ? 'chat' : 'messages'
      targets = () =>
        ['up', 'alt'].map((name) => ({
          provider: simProvider(`${name}-${upFamily}`, upFamily),
          translate: true,
        }))
      sim.faults.add(parseFault(`stall,path=${FAMILIES[upFamily].path(false)}`))
      const first = await send(family, false)
      expect(first.res.status).toBe(200)
      expect(first.result).toMatchObject({status: 200, provider: `alt-${upFamily}`, fallback: true})
      expect(first.result.error).toMatch(
        /^fell back after: up-\S+: upstream answered 200, then its body failed before the first byte/,
      )
      results.length = 0
      targets = () => [{provider: simProvider(`up-${upFamily}`, upFamily), translate: true}]
      const second = await send(family, false, {'x-sim-fault': 'stall'})
      expect(second.res.status).toBe(504)
      expect(inShape(family, 504, second.text)).toBe(true)
    },
  )
})

describe('a stream that ends cleanly without its terminal event (sim quirk `no-terminal`)', () => {
  // Responses and Gemini: the terminal event carries the answer's end and usage
  const errorEvent: Partial<Record<Family, RegExp>> = {
    responses:
      /event: error\ndata: \{"type":"error","code":"api_error","message":"up-responses: stream ended without its terminal event \(response\.completed\)"/,
    gemini:
      /data: \{"error":\{"code":502,"message":"up-gemini: stream ended without its terminal event \(a chunk with finishReason\)"/,
  }

  it.each(families.filter((f) => errorEvent[f]))(
    '%s: the client gets the error event, the row an error (broken), the breaker a failure',
    async (family) => {
      const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
      targets = (f) => [{provider: simProvider(`up-${f}`, f), breaker: breakers.get('up')}]
      const {res, text, result} = await send(family, true, {'x-sim-quirk': 'no-terminal'})
      expect(res.status).toBe(200)
      expect(text).toMatch(errorEvent[family]!)
      // the error event is the last one, on a line of its own
      expect(text.endsWith('\n\n')).toBe(true)
      expect(result).toMatchObject({status: 200, broken: true})
      expect(result.error).toMatch(/stream ended without its terminal event/)
      expect(breakers.snapshotOf('up').state).toBe('open')
      const row = logEntryFor(family, {agentId: null, keyPrefix: null, policyId: null, project: null}, result)
      expect(row).toMatchObject({status: 200, broken: true})
    },
  )

  // Chat and Messages: the answer's stop came before (a finish_reason, message_delta's
  // stop_reason with the usage): whole, as the official SDKs read it (servers that leave `[DONE]`
  // out, bifrost #6784; a relay that drops `message_stop`)
  it.each(['chat', 'messages'] as const)(
    '%s: after its stop, whole: no error event appended, the row an answer with its usage',
    async (family) => {
      const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
      targets = (f) => [{provider: simProvider(`up-${f}`, f), breaker: breakers.get('up')}]
      const {res, text, result} = await send(family, true, {'x-sim-quirk': 'no-terminal'})
      expect(res.status).toBe(200)
      expect(text).not.toMatch(/\[DONE\]|message_stop/)
      expect(text).not.toMatch(/event: error|"error":\{/)
      expect(result.error).toBeNull()
      expect(result.broken).toBeUndefined()
      expect(result.usage?.outputTokens).toBeGreaterThan(0)
      expect(breakers.snapshotOf('up').state).toBe('closed')
    },
  )

  it.each(families)('%s: a complete stream is no error and closes nothing', async (family) => {
    const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
    targets = (f) => [{provider: simProvider(`up-${f}`, f), breaker: breakers.get('up')}]
    const {res, text, result} = await send(family, true)
    expect(res.status).toBe(200)
    expect(text).not.toMatch(/event: error|"error":\{/)
    expect(result.error).toBeNull()
    expect(result.broken).toBeUndefined()
    expect(breakers.snapshotOf('up').state).toBe('closed')
  })
})

describe("Google's thought-only answer without finishReason (sim quirk `thoughts-no-finish`)", () => {
  it('gemini passed through: the STOP chunk appended, no error, the breaker untouched', async () => {
    const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
    targets = (f) => [{provider: simProvider(`up-${f}`, f), breaker: breakers.get('up')}]
    const {res, text, result} = await send('gemini', true, {'x-sim-quirk': 'thoughts-no-finish'})
    expect(res.status).toBe(200)
    expect(text).not.toMatch(/"error":\{/)
    expect(text).toMatch(
      /data: \{"candidates":\[\{"content":\{"role":"model","parts":\[\]\},"finishReason":"STOP","index":0\}\],"usageMetadata":\{[^\n]*"thoughtsTokenCount":\d+[^\n]*\}\}\n\n$/,
    )
    expect(result.error).toBeNull()
    expect(result.broken).toBeUndefined()
    expect(result.usage?.reasoningTokens).toBeGreaterThan(0)
    expect(result.usage?.outputTokens).toBe(result.usage?.reasoningTokens)
    expect(breakers.snapshotOf('up')).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })

  // translated: an answer with no text nor call (research56 F4, docs/TRANSLATION.md "Gemini's empty
  // STOP"); none of it shown (no thoughts asked for), so it went again, empty again: a 502 in the
  // entrance's shape that its client retries, the breaker untouched
  it.each(['chat', 'responses', 'messages'] as const)(
    '%s entrance translated to it: no part shown, sent again once, then a 502 to retry; the breaker untouched',
    async (family) => {
      const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
      targets = () => [
        {provider: simProvider('up-gemini', 'gemini'), translate: true, breaker: breakers.get('up')},
      ]
      const {res, text, result} = await send(family, true, {'x-sim-quirk': 'thoughts-no-finish'})
      expect(res.status).toBe(502)
      expect(text).toContain('the upstream answered nothing (Gemini finishReason STOP with no text or call)')
      expect(result.error).toMatch(/, twice \(sent again once\): the client got a 502 to retry$/)
      expect(breakers.snapshotOf('up').consecutiveFailures).toBe(0)
    },
  )

  // the thoughts shown: each thought chunk with the running usage of thoughts (Gemini 2.5), then
  // the ending chunk with no part; with `no-terminal` the stream ends after the last thought chunk
  const shown = {
    contents: [{role: 'user', parts: [{text: 'faults'}]}],
    generationConfig: {thinkingConfig: {includeThoughts: true}},
  }
  const thinking = {
    model: 'claude-sim',
    max_tokens: 4096,
    stream: true,
    thinking: {type: 'enabled', budget_tokens: 2048},
    messages: [{role: 'user', content: 'faults'}],
  }

  it('gemini passed through, the thoughts shown: whole after the ending chunk', async () => {
    const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
    targets = (f) => [{provider: simProvider(`up-${f}`, f), breaker: breakers.get('up')}]
    const {text, result} = await send('gemini', true, {'x-sim-quirk': 'thoughts-no-finish'}, shown)
    expect(text).toMatch(/"thought":true\}\][^\n]*"usageMetadata":\{[^\n]*"thoughtsTokenCount":\d+/)
    expect(text).toMatch(/"finishReason":"STOP"[^\n]*\n\n$/)
    expect(result.error).toBeNull()
    expect(breakers.snapshotOf('up')).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })

  it('gemini passed through, cut after a thought chunk with usage: truncated, the error event, a breaker failure', async () => {
    const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
    targets = (f) => [{provider: simProvider(`up-${f}`, f), breaker: breakers.get('up')}]
    const quirk = {'x-sim-quirk': 'thoughts-no-finish,no-terminal'}
    const {res, text, result} = await send('gemini', true, quirk, shown)
    expect(res.status).toBe(200)
    // the upstream's last chunk is a thought chunk with a usage of thoughts only
    expect(text).toMatch(/"thought":true\}\][^\n]*"thoughtsTokenCount":\d+[^\n]*\n\n(\r?\n)?data: \{"error"/)
    expect(text).not.toMatch(/"finishReason"/)
    expect(text).toMatch(
      /data: \{"error":\{"code":502,"message":"up-gemini: stream ended without its terminal event \(a chunk with finishReason\)"[^\n]*\n\n$/,
    )
    expect(result).toMatchObject({status: 200, broken: true})
    expect(result.error).toMatch(/stream ended without its terminal event/)
    expect(breakers.snapshotOf('up')).toMatchObject({state: 'open', consecutiveFailures: 1})
  })

  it('messages translated to gemini, cut after a thought chunk with usage: a 502 error event, a breaker failure', async () => {
    const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
    targets = () => [
      {provider: simProvider('up-gemini', 'gemini'), translate: true, breaker: breakers.get('up')},
    ]
    const quirk = {'x-sim-quirk': 'thoughts-no-finish,no-terminal'}
    const {res, text, result} = await send('messages', true, quirk, thinking)
    expect(res.status).toBe(200)
    expect(text).toContain('"type":"thinking_delta"')
    expect(text).not.toMatch(/end_turn|message_stop/)
    expect(text).toMatch(/event: error\ndata: [^\n]*upstream stream ended before a chunk with finishReason/)
    expect(result).toMatchObject({status: 200, broken: true})
    expect(result.error).toMatch(/upstream stream ended before a chunk with finishReason/)
    expect(breakers.snapshotOf('up')).toMatchObject({state: 'open', consecutiveFailures: 1})
  })
})

describe('an upstream error event mid-stream (issue 25, item 3)', () => {
  const withMarker = (family: Family): unknown => {
    const body = FAMILIES[family].body(true) as Record<string, any>
    const text = 'please [error-mid-stream] now'
    if (family === 'responses') return {...body, input: text}
    if (family === 'gemini') return {contents: [{role: 'user', parts: [{text}]}]}
    return {...body, messages: [{role: 'user', content: text}]}
  }

  it.each(families)(
    '%s entrance: the row keeps the 200, says the stream error with its code, counts the streamed tokens',
    async (family) => {
      // the simulator's chat upstream fails mid-stream on the marker: pass-through for the chat
      // entrance, translated for the three others
      targets = () => [
        family === 'chat'
          ? {provider: simProvider('up-chat', 'chat')}
          : {provider: simProvider('up-chat', 'chat'), translate: true},
      ]
      const spec = FAMILIES[family]
      const res = await fetch(gateway.url + spec.path(true), {
        method: 'POST',
        headers: {'content-type': 'application/json'},
        body: JSON.stringify(withMarker(family)),
      })
      const text = await res.text()
      for (let i = 0; i < 200 && results.length === 0; i++) await new Promise((r) => setTimeout(r, 5))
      const result = results[0]
      expect(res.status).toBe(200)
      expect(text).toContain('failed mid-stream')
      expect(result).toMatchObject({status: 200, broken: true})
      expect(result.error).toMatch(/provider_stream_error: provider \S+ failed mid-stream/)
      expect(result.usage?.outputTokens).toBeGreaterThan(0)
      const row = logEntryFor(family, {agentId: null, keyPrefix: null, policyId: null, project: null}, result)
      expect(row).toMatchObject({status: 200, broken: true, error: result.error})
      expect(row.outputTokens).toBeGreaterThan(0)
    },
  )
})

/**
 * OpenCode 1.18.33's retry patterns for an error that is not an HTTP status, such as a stream's
 * error event: read from its binary (`strings opencode | grep econnreset`, the list `Rd` of
 * `function ga`), the ones a network failure or a timeout would match.
 */
const OPENCODE_RETRIED = [
  /429|500|502|503|504|524/i,
  /overloaded|service unavailable|service_unavailable|service-unavailable|internal error|internal_error|internal server error|server error|server_error|server-error|provider returned error|provider_returned_error|provider-returned-error/i,
  /terminated|fetch failed|failed to fetch|network[-_\s]error|upstream connect|connection error|connection refused|connection lost|socket connection was closed|socket hang up|reset before headers|getaddrinfo|enotfound|eai_again|econnrefused|econnreset|etimedout/i,
  /^timeout$|\b(?:request|response|connection|network|stream|read) (?:timeout|timed out|time out)\b/i,
]

/** The message of a stream's last event (its error event), in any of the four families' shapes. */
function lastEventMessage(text: string): string {
  const lines = text.split('\n').filter((line) => line.startsWith('data: '))
  const body = JSON.parse(lines.at(-1)!.slice('data: '.length)) as {
    message?: string
    error?: {message?: string}
  }
  return body.error?.message ?? body.message ?? ''
}

describe('a stream cut or silent mid-answer (audit58 finding 1)', () => {
  const cases = [
    {name: 'cut', fault: 'reset,chunk-delay=20', words: /closed by upstream/},
    {
      name: 'silent past the idle timeout',
      fault: 'chunk-delay=3000',
      words: /upstream silent for 300 ms \(idle timeout\)/,
    },
  ]
  const routes: {entrance: Family; upstream: Family}[] = [
    ...families.map((f) => ({entrance: f, upstream: f})),
    // OpenCode's own entrance on an OpenAI-compatible server
    {entrance: 'messages', upstream: 'chat'},
  ]
  for (const c of cases)
    it.each(routes)(
      `${c.name}, $entrance entrance on $upstream: the last event's words are ones OpenCode retries`,
      async ({entrance, upstream}) => {
        const provider = simProvider(`up-${upstream}`, upstream)
        targets = () => [entrance === upstream ? {provider} : {provider, translate: true}]
        const {res, text, result} = await send(entrance, true, {'x-sim-fault': c.fault})
        expect(res.status).toBe(200)
        const message = lastEventMessage(text)
        // the detail stays
        expect(message).toMatch(/^up-\S+: stream /)
        expect(message).toMatch(c.words)
        expect(OPENCODE_RETRIED.some((pattern) => pattern.test(message))).toBe(true)
        expect(result).toMatchObject({status: 200, broken: true})
      },
    )
})

describe("a pass-through stream's headers, then nothing (sim fault `stall`, audit58 finding 2)", () => {
  it.each(families)('%s: the row says no body byte went, the client gets the error event', async (family) => {
    targets = (f) => [{provider: simProvider(`up-${f}`, f)}]
    const {res, text, result} = await send(family, true, {'x-sim-fault': 'stall'})
    expect(res.status).toBe(200)
    expect(result).toMatchObject({status: 200, broken: true, ttfbMs: null})
    expect(result.error).toBe(
      `up-${family}: stream sent its headers, then nothing: read timed out: upstream silent for 300 ms (idle timeout)`,
    )
    expect(lastEventMessage(text)).toBe(result.error)
  })
})

describe('an answer not streamed waits for its headers up to the idle timeout (audit58 finding 3)', () => {
  // (undici's header timer ticks in steps of about half a second: the delays leave room for it)
  const slow = {connectMs: 1_000, firstByteMs: 500, idleMs: 3_000}

  it.each(families)('%s: a JSON answer slower than the first-byte timeout is answered', async (family) => {
    timeouts = slow
    targets = (f) => [{provider: simProvider(`up-${f}`, f)}]
    const {res, text, result} = await send(family, false, {'x-sim-fault': 'delay=2000'})
    expect(res.status).toBe(200)
    expect(JSON.parse(text)).toBeTypeOf('object')
    expect(result.error).toBeNull()
    expect(result.usage?.outputTokens).toBeGreaterThan(0)
  })

  it('messages entrance translated to chat: answered too', async () => {
    timeouts = slow
    targets = () => [{provider: simProvider('up-chat', 'chat'), translate: true}]
    const {res, result} = await send('messages', false, {'x-sim-fault': 'delay=2000'})
    expect(res.status).toBe(200)
    expect(result.error).toBeNull()
  })

  it.each(families)('%s: a stream as slow gets the 504 at the first-byte timeout', async (family) => {
    timeouts = slow
    targets = (f) => [{provider: simProvider(`up-${f}`, f)}]
    const {res, text, result} = await send(family, true, {'x-sim-fault': 'delay=2000'})
    expect(res.status).toBe(504)
    expect(inShape(family, 504, text)).toBe(true)
    expect(text).toContain(`up-${family}: no answer within 500 ms (first-byte timeout)`)
    expect(result.status).toBe(504)
  })

  it('a JSON answer slower than the idle timeout gets the 504 naming it', async () => {
    timeouts = slow
    targets = (f) => [{provider: simProvider(`up-${f}`, f)}]
    const {res, text, result} = await send('messages', false, {'x-sim-fault': 'delay=5000'})
    expect(res.status).toBe(504)
    expect(inShape('messages', 504, text)).toBe(true)
    expect(text).toContain('up-messages: no answer within 3000 ms (idle timeout')
    expect(result.error).toMatch(
      /no answer within 3000 ms \(idle timeout: the wait of a request not streamed\)$/,
    )
  })
})
