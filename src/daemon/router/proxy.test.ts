/**
 * The proxy in front of the simulator (and of small custom upstreams where the sim cannot show
 * something), behind a tiny node:http server that plays the daemon's part.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import type {IncomingMessage} from 'node:http'
import {setTimeout as sleep} from 'node:timers/promises'
import OpenAI from 'openai'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {freePort} from '../../../test/helpers/cli.js'
import {simProxy} from '../../../test/helpers/sim-proxy.js'
import {parseFault} from '../../sim/faults.js'
import type {Simulator} from '../../sim/server.js'
import type {Family, ProviderConfig} from '../../store/schema.js'
import {DEFAULT_TIMEOUTS} from '../../store/schema.js'
import {BreakerRegistry} from './breaker.js'
import type {ProxyTarget} from './proxy.js'
import {topLevelFields, upstreamPath} from './proxy.js'
import type {GatewayRoute} from './proxy-fixture.js'
import {startUpstream} from './proxy-fixture.js'

const GW_KEY = 'gw-SECRETgatewaykey0123456789'

let sim: Simulator
let gatewayUrl: string
let route: (family: Family) => GatewayRoute
const proxied = simProxy({route: (family) => route(family)})
const {gateway} = proxied

const provider = (name: string, family: Family, baseUrl: string): ProviderConfig => ({
  name,
  family,
  baseUrl,
  credential: {secret: `upstream-key-${name}`},
})

/** The sim as a provider of `family` (several names may share the sim). */
const simTarget = (family: Family, name = `sim-${family}`, extra: Partial<ProxyTarget> = {}): ProxyTarget =>
  proxied.target(family, extra, name)

let deadOrigin: string

beforeAll(async () => {
  sim = await proxied.start()
  deadOrigin = `http://127.0.0.1:${await freePort()}`
  gatewayUrl = gateway.url
})

afterEach(() => proxied.clear())

afterAll(() => proxied.close())

describe('SDKs through the proxy to the simulator: usage recorded to the token', () => {
  beforeAll(() => {
    route = (family) => ({targets: [simTarget(family)]})
  })

  it('openai responses, non-stream and stream', async () => {
    const client = new OpenAI({apiKey: GW_KEY, baseURL: gatewayUrl + '/v1', maxRetries: 0})
    const plain = await client.responses.create({
      model: 'gpt-sim',
      input: 'count my tokens',
      reasoning: {effort: 'low'},
    })
    const stream = client.responses.stream({model: 'gpt-sim', input: 'and stream them'})
    const streamed = await stream.finalResponse()
    const [r1, r2] = await gateway.settled(2)
    for (const [result, response] of [
      [r1, plain],
      [r2, streamed],
    ] as const) {
      const u = response.usage!
      expect(result.usage).toEqual({
        inputTokens: u.input_tokens,
        outputTokens: u.output_tokens,
        cacheReadTokens: u.input_tokens_details.cached_tokens,
        cacheCreationTokens: 0,
        reasoningTokens: u.output_tokens_details.reasoning_tokens,
        // the id Codex records as token_usage_record.response_id: the key of `usage reconcile`
        responseId: response.id,
      })
      expect(result).toMatchObject({
        status: 200,
        provider: 'sim-responses',
        model: 'gpt-sim',
        fallback: false,
      })
    }
    expect(r1.usage?.reasoningTokens).toBeGreaterThan(0)
    expect(r2.stream).toBe(true)
    expect(r2.ttfbMs).not.toBeNull()
  })

  it('anthropic messages: stream().finalMessage(), non-stream, countTokens (beta path)', async () => {
    const client = new Anthropic({apiKey: GW_KEY, baseURL: gatewayUrl, maxRetries: 0})
    const params = {model: 'claude-sim', max_tokens: 64, messages: [{role: 'user' as const, content: 'Hi'}]}
    const streamed = await client.messages
      .stream({...params, thinking: {type: 'enabled', budget_tokens: 1024}})
      .finalMessage()
    const {data: plain, response} = await client.messages.create(params).withResponse()
    const count = await client.beta.messages.countTokens({model: 'claude-sim', messages: params.messages})
    expect(count.input_tokens).toBeGreaterThan(0)
    expect(response.headers.get('request-id')).toMatch(/^req_/)
    const [r1, r2, r3] = await gateway.settled(3)
    for (const [result, message] of [
      [r1, streamed],
      [r2, plain],
    ] as const) {
      const u = message.usage
      const cacheRead = u.cache_read_input_tokens ?? 0
      const cacheCreation = u.cache_creation_input_tokens ?? 0
      expect(result.usage).toEqual({
        inputTokens: u.input_tokens + cacheRead + cacheCreation,
        outputTokens: u.output_tokens,
        cacheReadTokens: cacheRead,
        cacheCreationTokens: cacheCreation,
        // the SDK's final message keeps the TTL breakdown of the writes
        cache1hTokens: u.cache_creation?.ephemeral_1h_input_tokens ?? 0,
        reasoningTokens: 0,
      })
    }
    expect(r2.requestId).toBe(response.headers.get('request-id'))
    expect(r3).toMatchObject({status: 200, usage: null})
    expect(sim.requests.at(-1)).toMatchObject({path: '/v1/messages/count_tokens', query: {beta: 'true'}})
  })

  it('google genai generateContent and generateContentStream', async () => {
    const client = new GoogleGenAI({apiKey: GW_KEY, httpOptions: {baseUrl: gatewayUrl}})
    const plain = await client.models.generateContent({
      model: 'gemini-sim',
      contents: 'hello',
      config: {thinkingConfig: {thinkingBudget: 100}},
    })
    let last
    for await (const chunk of await client.models.generateContentStream({
      model: 'gemini-sim',
      contents: 'stream',
    }))
      last = chunk
    const [r1, r2] = await gateway.settled(2)
    for (const [result, response] of [
      [r1, plain],
      [r2, last!],
    ] as const) {
      const m = response.usageMetadata!
      expect(result.usage).toEqual({
        inputTokens: m.promptTokenCount,
        outputTokens: (m.candidatesTokenCount ?? 0) + (m.thoughtsTokenCount ?? 0),
        cacheReadTokens: m.cachedContentTokenCount,
        cacheCreationTokens: 0,
        reasoningTokens: m.thoughtsTokenCount ?? 0,
      })
    }
    expect(r1.usage?.reasoningTokens).toBeGreaterThan(0)
    // the sim sends no request id for Gemini: the proxy mints one
    expect(r2.requestId).toMatch(/^req_[0-9a-f]{24}$/)
  })
})

describe('routing and failure', () => {
  it('falls back in policy order: connect error, then 503, then success', async () => {
    sim.faults.add(parseFault('reset,times=1,path=/v1/messages'))
    sim.faults.add(parseFault('status=503,times=1,path=/v1/messages'))
    route = (family) => ({
      targets: [
        {provider: provider('dead', family, deadOrigin)},
        simTarget(family, 'dropped'),
        simTarget(family, 'flaky'),
        simTarget(family, 'good', {model: 'claude-rewritten'}),
      ],
    })
    const client = new Anthropic({apiKey: GW_KEY, baseURL: gatewayUrl, maxRetries: 0})
    const message = await client.messages.create({
      model: 'claude-asked',
      max_tokens: 10,
      messages: [{role: 'user', content: 'x'}],
    })
    expect(message.model).toBe('claude-rewritten')
    const [result] = await gateway.settled(1)
    expect(result).toMatchObject({
      status: 200,
      provider: 'good',
      model: 'claude-rewritten',
      requestedModel: 'claude-asked',
      fallback: true,
    })
    expect(result.attempts).toEqual([
      {provider: 'dead', error: 'dead: connection refused'},
      {provider: 'dropped', error: 'dropped: connection lost: closed by upstream'},
      {provider: 'flaky', status: 503, error: 'flaky: upstream answered 503'},
      {provider: 'good', status: 200},
    ])
    expect(result.error).toBe(
      'fell back after: dead: connection refused; dropped: connection lost: closed by upstream; flaky: upstream answered 503',
    )
    expect(sim.requests.map((r) => (r.body as {model: string}).model)).toEqual([
      'claude-asked',
      'claude-asked',
      'claude-rewritten',
    ])
  })

  it('falls back on a first-byte timeout and on 429, and rewrites the Gemini model in the path', async () => {
    sim.faults.add(parseFault('delay=2000,times=1,path=:generateContent'))
    sim.faults.add(parseFault('status=429,times=1,path=:generateContent'))
    route = (family) => ({
      targets: [
        simTarget(family, 'slow'),
        simTarget(family, 'limited'),
        simTarget(family, 'fast', {model: 'gemini-other'}),
      ],
      // (a request not streamed waits up to the idle timeout when that is longer: ./pools.ts)
      timeouts: {...DEFAULT_TIMEOUTS, firstByteMs: 200, idleMs: 200},
    })
    const res = await fetch(`${gatewayUrl}/v1beta/models/gemini-sim:generateContent?key=${GW_KEY}`, {
      method: 'POST',
      body: JSON.stringify({contents: [{parts: [{text: 'hi'}]}]}),
    })
    expect(res.status).toBe(200)
    const [result] = await gateway.settled(1)
    expect(result.attempts.map((a) => a.error)).toEqual([
      'slow: no answer within 200 ms (first-byte timeout)',
      'limited: upstream answered 429',
      undefined,
    ])
    expect(result).toMatchObject({provider: 'fast', model: 'gemini-other', fallback: true})
    expect(sim.requests.map((r) => r.path)).toEqual([
      '/v1beta/models/gemini-sim:generateContent',
      '/v1beta/models/gemini-sim:generateContent',
      '/v1beta/models/gemini-other:generateContent',
    ])
    expect(sim.requests.every((r) => Object.keys(r.query).length === 0)).toBe(true)
  })

  it('passes the last upstream 429 through with retry-after when nothing is left to try', async () => {
    sim.faults.add(parseFault('status=429,retry-after=7,times=1,path=/v1/responses'))
    route = (family) => ({targets: [simTarget(family)]})
    const res = await fetch(`${gatewayUrl}/v1/responses`, {
      method: 'POST',
      headers: {authorization: `Bearer ${GW_KEY}`},
      body: JSON.stringify({model: 'm', input: 'x'}),
    })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('7')
    expect(((await res.json()) as {error: {type: string}}).error.type).toBe('rate_limit_error')
    expect(res.headers.get('x-request-id')).toMatch(/^req_/)
  })

  it("answers 502 in each family's error shape when no fallback is left", async () => {
    route = (family) => ({
      targets: [{provider: provider('dead', family, deadOrigin)}, simTarget(family)],
      fallbacks: false,
    })
    const shapes: Record<Family, [string, string, object]> = {
      chat: [
        '/v1/chat/completions',
        JSON.stringify({model: 'm', messages: []}),
        {error: {type: 'api_error', param: null, code: null}},
      ],
      responses: ['/v1/responses', JSON.stringify({model: 'm', input: 'x'}), {error: {type: 'api_error'}}],
      messages: [
        '/v1/messages',
        JSON.stringify({model: 'm', messages: []}),
        {type: 'error', error: {type: 'api_error'}},
      ],
      gemini: [
        '/v1beta/models/g:generateContent',
        JSON.stringify({contents: []}),
        {error: {code: 502, status: 'UNAVAILABLE'}},
      ],
    }
    for (const [family, [path, body, shape]] of Object.entries(shapes)) {
      const res = await fetch(gatewayUrl + path, {method: 'POST', body})
      expect(res.status, family).toBe(502)
      const json = (await res.json()) as Record<string, unknown>
      expect(json, family).toMatchObject(shape)
      expect(JSON.stringify(json)).toContain('connection refused')
      if (family === 'messages') expect(json.request_id).toBe(res.headers.get('request-id'))
    }
    expect(sim.requests).toHaveLength(0)
  })

  it('breaker: opens after N failures (then 503 in the family shape), half-opens after the cooldown, closes on success', async () => {
    let now = 1_000_000
    const breakers = new BreakerRegistry(
      () => ({failureThreshold: 2, cooldownMs: 10_000}),
      () => now,
    )
    route = (family) => ({targets: [simTarget(family, 'sim', {breaker: breakers.get('sim')})]})
    sim.faults.add(parseFault('status=500,times=3,path=/v1/messages'))
    const send = async (): Promise<{
      status: number
      json: Record<string, unknown>
      retryAfter: string | null
    }> => {
      const res = await fetch(`${gatewayUrl}/v1/messages`, {
        method: 'POST',
        headers: {'x-api-key': GW_KEY},
        body: JSON.stringify({model: 'm', max_tokens: 5, messages: [{role: 'user', content: 'x'}]}),
      })
      return {
        status: res.status,
        json: (await res.json()) as Record<string, unknown>,
        retryAfter: res.headers.get('retry-after'),
      }
    }
    expect((await send()).status).toBe(500)
    expect(breakers.snapshotOf('sim').state).toBe('closed')
    expect((await send()).status).toBe(500)
    expect(breakers.snapshotOf('sim')).toMatchObject({state: 'open', consecutiveFailures: 2})
    const open = await send()
    expect(open.status).toBe(503)
    expect(open.json).toMatchObject({type: 'error', error: {type: 'api_error'}})
    expect(JSON.stringify(open.json)).toContain('circuit-broken (open): sim; retry in 10 s')
    expect(open.retryAfter).toBe('10')
    expect(sim.requests).toHaveLength(2)
    now += 10_000
    expect(breakers.snapshotOf('sim').state).toBe('half-open')
    expect((await send()).status).toBe(500) // the trial fails: open again
    expect(breakers.snapshotOf('sim').state).toBe('open')
    now += 10_000
    expect((await send()).status).toBe(200)
    expect(breakers.snapshotOf('sim')).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })

  it('skips an open breaker and uses the next target', async () => {
    const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
    breakers.get('first').recordFailure('down')
    route = (family) => ({
      targets: [
        simTarget(family, 'first', {breaker: breakers.get('first')}),
        simTarget(family, 'second', {breaker: breakers.get('second')}),
      ],
    })
    const res = await fetch(`${gatewayUrl}/v1/responses`, {
      method: 'POST',
      body: JSON.stringify({model: 'm', input: 'x'}),
    })
    expect(res.status).toBe(200)
    const [result] = await gateway.settled(1)
    expect(result.attempts).toEqual([
      {provider: 'first', skipped: 'circuit-open', error: 'first: breaker open'},
      {provider: 'second', status: 200},
    ])
    expect(result.fallback).toBe(true)
    // the fallback row says why the first target was not tried (issue 25)
    expect(result.error).toBe('fell back after: first: breaker open')
  })

  it("a reset mid-stream ends the stream with the family's error event", async () => {
    route = (family) => ({targets: [simTarget(family)]})
    const cases: Array<[string, unknown, RegExp]> = [
      [
        '/v1/messages',
        {model: 'm', max_tokens: 5, stream: true, messages: [{role: 'user', content: 'x'}]},
        /event: error\ndata: \{"type":"error","error":\{"type":"api_error","message":"sim-messages: stream broke after the first byte: connection lost: closed by upstream"\}\}\n\n$/,
      ],
      [
        '/v1/responses',
        {model: 'm', input: 'x', stream: true},
        /event: error\ndata: \{"type":"error","code":"api_error",.*"sequence_number":(\d+)\}\n\n$/,
      ],
      [
        '/v1beta/models/g:streamGenerateContent?alt=sse',
        {contents: [{parts: [{text: 'x'}]}]},
        // (the sim's Gemini answer is two events: it resets the connection right after writing
        // the first, which never leaves it, so only the headers reached the client)
        /data: \{"error":\{"code":502,"message":"sim-gemini: stream sent its headers, then nothing: connection lost: closed by upstream","status":"UNAVAILABLE"\}\}\n\n$/,
      ],
    ]
    for (const [path, body, tail] of cases) {
      sim.faults.add(parseFault('reset,chunk-delay=5,times=1'))
      const res = await fetch(gatewayUrl + path, {method: 'POST', body: JSON.stringify(body)})
      expect(res.status).toBe(200)
      const text = await res.text()
      expect(text.startsWith('event: ') || text.startsWith('data: ')).toBe(true)
      expect(text).toMatch(tail)
      if (path === '/v1/responses') {
        // the error event continues the stream's sequence numbers
        const numbers = [...text.matchAll(/"sequence_number":(\d+)/g)].map((m) => Number(m[1]))
        expect(numbers.length).toBeGreaterThan(2)
        expect(numbers).toEqual(numbers.map((_, i) => i))
      }
    }
    const all = await gateway.settled(3)
    expect(all.map((r) => r.error?.replace(/^sim-\w+: /, '')).sort()).toEqual([
      'stream broke after the first byte: connection lost: closed by upstream',
      'stream broke after the first byte: connection lost: closed by upstream',
      'stream sent its headers, then nothing: connection lost: closed by upstream',
    ])
  })

  it('the anthropic SDK sees the mid-stream error as an APIError', async () => {
    route = (family) => ({targets: [simTarget(family)]})
    sim.faults.add(parseFault('reset,chunk-delay=5,times=1'))
    const client = new Anthropic({apiKey: GW_KEY, baseURL: gatewayUrl, maxRetries: 0})
    const error = await client.messages
      .stream({model: 'm', max_tokens: 5, messages: [{role: 'user', content: 'x'}]})
      .finalMessage()
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.APIError)
  })
})

describe('what leaves the machine', () => {
  it('never forwards the gateway key; sets the provider credential in its family form; forwards protocol headers', async () => {
    const seen: Array<{url: string; headers: IncomingMessage['headers']}> = []
    const upstream = await startUpstream((req, res) => {
      seen.push({url: req.url ?? '', headers: req.headers})
      res.writeHead(200, {'content-type': 'application/json'})
      res.end('{}')
    })
    try {
      route = (family) => ({targets: [{provider: provider(`u-${family}`, family, upstream.origin)}]})
      const credentialHeaders = {
        authorization: `Bearer ${GW_KEY}`,
        'x-api-key': GW_KEY,
        'x-goog-api-key': GW_KEY,
        'x-vendor-api-key': GW_KEY,
        cookie: `session=${GW_KEY}`,
        'x-gw-project': 'proj',
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'claude-code-20250219',
        'openai-beta': 'responses=v1',
        'user-agent': 'test-agent/1.0',
      }
      for (const path of [
        '/v1/chat/completions',
        '/v1/responses',
        '/v1/messages?beta=true',
        `/v1beta/models/g:generateContent?key=${GW_KEY}&alt=json`,
      ])
        await (
          await fetch(gatewayUrl + path, {method: 'POST', headers: credentialHeaders, body: '{"model":"m"}'})
        ).text()
      expect(seen).toHaveLength(4)
      for (const {url, headers} of seen) {
        expect(JSON.stringify({url, headers})).not.toContain('SECRETgatewaykey')
        expect(headers.cookie).toBeUndefined()
        expect(headers['x-gw-project']).toBeUndefined()
        expect(headers['x-vendor-api-key']).toBeUndefined()
        expect(headers['anthropic-beta']).toBe('claude-code-20250219')
        expect(headers['user-agent']).toBe('test-agent/1.0')
      }
      const [chat, responses, messages, gemini] = seen
      expect(chat.headers.authorization).toBe('Bearer upstream-key-u-chat')
      expect(responses.headers.authorization).toBe('Bearer upstream-key-u-responses')
      expect(messages.headers['x-api-key']).toBe('upstream-key-u-messages')
      expect(messages.headers.authorization).toBeUndefined()
      expect(messages.url).toBe('/v1/messages?beta=true')
      expect(gemini.headers['x-goog-api-key']).toBe('upstream-key-u-gemini')
      expect(gemini.url).toBe('/v1beta/models/g:generateContent?alt=json')
    } finally {
      upstream.close()
    }
  })

  it("redacts the provider's credential when an upstream error quotes it back", async () => {
    const upstream = await startUpstream((req, res) => {
      const key = String(req.headers.authorization ?? req.headers['x-api-key']).replace(/^Bearer /, '')
      const text = JSON.stringify({
        error: {message: `Incorrect API key provided: ${key}.`, type: 'invalid_request_error'},
      })
      res.writeHead(401, {'content-type': 'application/json', 'content-length': Buffer.byteLength(text)})
      res.end(text)
    })
    try {
      route = (family) => ({targets: [{provider: provider(`u-${family}`, family, upstream.origin)}]})
      const res = await fetch(`${gatewayUrl}/v1/chat/completions`, {method: 'POST', body: '{"model":"m"}'})
      const text = await res.text()
      expect(res.status).toBe(401)
      expect(text).not.toContain('upstream-key-u-chat')
      expect(JSON.parse(text).error.message).toBe('Incorrect API key provided: [redacted].')
    } finally {
      upstream.close()
    }
  })

  it('a provider whose env credential is unset is skipped with a clear reason', async () => {
    route = (family) => ({
      targets: [
        {provider: {...provider('needs-env', family, sim.origin), credential: {env: 'GWCTL_TEST_UNSET_VAR'}}},
      ],
    })
    const res = await fetch(`${gatewayUrl}/v1/responses`, {method: 'POST', body: '{"model":"m","input":"x"}'})
    expect(res.status).toBe(502)
    expect(await res.text()).toContain('environment variable GWCTL_TEST_UNSET_VAR is not set')
    expect(sim.requests).toHaveLength(0)
  })
})

describe('chat streams and client aborts', () => {
  const chunk = (extra: object): string =>
    `data: ${JSON.stringify({id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', ...extra})}\n\n`

  it('asks upstream for stream usage and hides the extra usage chunk from a client that did not ask', async () => {
    const bodies: Array<Record<string, unknown>> = []
    const upstream = await startUpstream((_req, res, body) => {
      const json = JSON.parse(body.toString()) as Record<string, unknown>
      bodies.push(json)
      res.writeHead(200, {'content-type': 'text/event-stream'})
      res.write(
        chunk({
          choices: [{index: 0, delta: {role: 'assistant', content: ''}, finish_reason: null}],
          usage: null,
        }),
      )
      res.write(chunk({choices: [{index: 0, delta: {content: 'Hi'}, finish_reason: null}], usage: null}))
      res.write(chunk({choices: [{index: 0, delta: {}, finish_reason: 'stop'}], usage: null}))
      if ((json.stream_options as {include_usage?: boolean} | undefined)?.include_usage)
        // split across writes, to prove the filter waits only for a whole event
        for (const part of chunk({
          choices: [],
          usage: {prompt_tokens: 9, completion_tokens: 2, total_tokens: 11},
        }).match(/.{1,10}/gs)!)
          res.write(part)
      res.end('data: [DONE]\n\n')
    })
    try {
      route = (family) => ({targets: [{provider: provider('chat-up', family, upstream.origin)}]})
      const client = new OpenAI({apiKey: GW_KEY, baseURL: gatewayUrl + '/v1', maxRetries: 0})
      const seen: unknown[] = []
      for await (const c of await client.chat.completions.create({
        model: 'm',
        messages: [{role: 'user', content: 'x'}],
        stream: true,
      }))
        seen.push(c)
      expect(seen).toHaveLength(3)
      expect(seen.every((c) => (c as {choices: unknown[]}).choices.length === 1)).toBe(true)
      const withUsage: unknown[] = []
      for await (const c of await client.chat.completions.create({
        model: 'm',
        messages: [{role: 'user', content: 'x'}],
        stream: true,
        stream_options: {include_usage: true},
      }))
        withUsage.push(c)
      expect(withUsage).toHaveLength(4)
      expect(withUsage.at(-1)).toMatchObject({choices: [], usage: {prompt_tokens: 9}})
      expect(bodies.map((b) => b.stream_options)).toEqual([{include_usage: true}, {include_usage: true}])
      const [r1, r2] = await gateway.settled(2)
      expect(r1.usage).toEqual({
        inputTokens: 9,
        outputTokens: 2,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
        reasoningTokens: 0,
      })
      expect(r2.usage).toEqual(r1.usage)
      expect(r1.requestId).toMatch(/^req_/)
    } finally {
      upstream.close()
    }
  })

  it('a client disconnect aborts the upstream request at once', async () => {
    let upstreamClosedEarly: () => void = () => undefined
    const closed = new Promise<void>((resolve) => (upstreamClosedEarly = resolve))
    let finished = false
    const upstream = await startUpstream(async (_req, res) => {
      res.on('close', () => {
        if (!finished) upstreamClosedEarly()
      })
      res.writeHead(200, {'content-type': 'text/event-stream'})
      for (let i = 0; i < 200 && !res.destroyed; i++) {
        res.write(chunk({choices: [{index: 0, delta: {content: `${i}`}, finish_reason: null}], usage: null}))
        await sleep(50)
      }
      finished = true
      res.end('data: [DONE]\n\n')
    })
    try {
      route = (family) => ({targets: [{provider: provider('slow', family, upstream.origin)}]})
      const controller = new AbortController()
      const res = await fetch(`${gatewayUrl}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({model: 'm', stream: true, stream_options: {include_usage: true}, messages: []}),
        signal: controller.signal,
      })
      const reader = res.body!.getReader()
      const first = await reader.read()
      expect(new TextDecoder().decode(first.value)).toContain('"content":"0"')
      controller.abort()
      await closed
      expect(finished).toBe(false)
      const [result] = await gateway.settled(1)
      expect(result).toMatchObject({clientAborted: true, error: 'client closed the connection'})
    } finally {
      upstream.close()
    }
  })

  it("a client that leaves after the upstream's headers, before a JSON answer's first byte: a 499 row, as before any answer, with the answer's usage", async () => {
    // (the answer is read on to its end for its usage, which the upstream bills: not aborted)
    let upstreamClosed: (ended: boolean) => void = () => undefined
    const closed = new Promise<boolean>((resolve) => (upstreamClosed = resolve))
    const upstream = await startUpstream(async (_req, res) => {
      res.on('close', () => upstreamClosed(res.writableEnded))
      res.writeHead(200, {'content-type': 'application/json'})
      res.flushHeaders()
      await sleep(1_500)
      if (!res.destroyed)
        res.end(JSON.stringify({id: 'c1', choices: [], usage: {prompt_tokens: 7, completion_tokens: 2}}))
    })
    try {
      route = (family) => ({targets: [{provider: provider('slow', family, upstream.origin)}]})
      const controller = new AbortController()
      const answer = fetch(`${gatewayUrl}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({model: 'm', messages: []}),
        signal: controller.signal,
      })
      // (the client has no response yet: its head goes with the first body byte)
      setTimeout(() => controller.abort(), 300)
      await expect(answer).rejects.toThrow()
      expect(await closed).toBe(true)
      const [result] = await gateway.settled(1)
      expect(result).toMatchObject({status: 499, clientAborted: true, error: 'client closed the connection'})
      expect(result!.usage).toMatchObject({inputTokens: 7, outputTokens: 2})
    } finally {
      upstream.close()
    }
  })
})

describe('upstreamPath', () => {
  it('joins base URLs and entrance paths without doubling the version', () => {
    expect(upstreamPath('https://api.anthropic.com', '/v1/messages?beta=true')).toEqual({
      origin: 'https://api.anthropic.com',
      path: '/v1/messages?beta=true',
    })
    expect(upstreamPath('https://platform.test/api/v1/', '/v1/chat/completions').path).toBe(
      '/api/v1/chat/completions',
    )
    expect(upstreamPath('http://127.0.0.1:9/proxy', '/v1beta/models/g:generateContent').path).toBe(
      '/proxy/v1beta/models/g:generateContent',
    )
    expect(upstreamPath('http://h/x/v1beta', '/v1beta/models/g:countTokens').path).toBe(
      '/x/v1beta/models/g:countTokens',
    )
  })

  it("takes a base that ends in another version as OpenAI's SDK takes its baseURL: the entrance's version dropped", () => {
    const join = (base: string, path: string) => upstreamPath(base, path).path
    // Z.AI (GLM) and BigModel, Volcengine Ark: their documented OpenAI-compatible base URLs
    expect(join('https://api.z.ai/api/paas/v4', '/v1/chat/completions')).toBe('/api/paas/v4/chat/completions')
    expect(join('https://open.bigmodel.cn/api/paas/v4/', '/v1/models')).toBe('/api/paas/v4/models')
    expect(join('https://ark.cn-beijing.volces.com/api/v3', '/v1/chat/completions')).toBe(
      '/api/v3/chat/completions',
    )
    // Google's OpenAI-compatible endpoint
    expect(join('https://generativelanguage.googleapis.com/v1beta/openai', '/v1/chat/completions')).toBe(
      '/v1beta/openai/chat/completions',
    )
    // a Gemini base that names v1: the entrance's v1beta gives way to it
    expect(join('https://h/v1', '/v1beta/models/g:generateContent?alt=sse')).toBe(
      '/v1/models/g:generateContent?alt=sse',
    )
    expect(join('https://api.groq.com/openai/v1', '/v1/chat/completions')).toBe('/openai/v1/chat/completions')
    // no version in the base: the path whole (Anthropic-style bases, origins, a proxy's prefix)
    expect(join('https://api.z.ai/api/anthropic', '/v1/messages')).toBe('/api/anthropic/v1/messages')
    expect(join('https://openrouter.ai/api', '/v1/chat/completions')).toBe('/api/v1/chat/completions')
    expect(join('https://api.deepseek.com', '/v1/chat/completions')).toBe('/v1/chat/completions')
    // a path that only starts like a version is not one
    expect(join('https://h/api/v4', '/v1x/y')).toBe('/api/v4/v1x/y')
  })
})

describe('topLevelFields', () => {
  const scan = (value: unknown): unknown =>
    topLevelFields(Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)))

  it('reads the top-level model and stream, never nested ones', () => {
    expect(
      scan({
        metadata: {model: 'nested', stream: false},
        messages: [{content: '"model":"x"'}],
        model: 'top',
        stream: true,
      }),
    ).toEqual({
      model: 'top',
      modelAt: [97, 102],
      stream: true,
    })
    expect(scan({model: 'm', max_tokens: 5, messages: [{role: 'user', content: 'x'}]})).toEqual({
      model: 'm',
      modelAt: [9, 12],
    })
    const spaced = ' {"stream" : false , "model" : "claude"} '
    expect(scan(spaced)).toEqual({model: 'claude', modelAt: [31, 39], stream: false})
    expect(spaced.slice(31, 39)).toBe('"claude"')
  })

  it('gives up (so the caller parses) on odd values and non-objects', () => {
    expect(scan({model: 'with \\ escape'})).toBeUndefined()
    expect(scan('{"mod\\u0065l":"x","stream":true}')).toBeUndefined()
    expect(scan({model: 'modèle'})).toBeUndefined()
    expect(scan({model: 5})).toBeUndefined()
    expect(scan([1, 2])).toBeUndefined()
    expect(scan('{"model":"unterminated')).toBeUndefined()
  })
})

describe('idle timeout and simulator faults', () => {
  it('an upstream silent for longer than idleMs after the first byte ends the stream with an error event', async () => {
    const upstream = await startUpstream(async (_req, res) => {
      res.writeHead(200, {'content-type': 'text/event-stream'})
      res.write(
        'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
      )
      await sleep(3000)
      res.end()
    })
    try {
      route = (family) => ({
        targets: [{provider: provider('stalls', family, upstream.origin)}],
        timeouts: {...DEFAULT_TIMEOUTS, idleMs: 200},
      })
      const res = await fetch(`${gatewayUrl}/v1/messages`, {
        method: 'POST',
        body: '{"model":"m","stream":true}',
      })
      const text = await res.text()
      expect(text).toMatch(/^event: message_start\n/)
      expect(text).toContain(
        'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"stalls: stream broke after the first byte: read timed out: upstream silent for 200 ms (idle timeout)"}}',
      )
      const [result] = await gateway.settled(1)
      expect(result.usage).toMatchObject({inputTokens: 3, outputTokens: 1})
    } finally {
      upstream.close()
    }
  })

  it('x-sim-fault reaches simulator providers only', async () => {
    const seen: IncomingMessage['headers'][] = []
    const upstream = await startUpstream((req, res) => {
      seen.push(req.headers)
      res.writeHead(200, {'content-type': 'application/json'})
      res.end('{}')
    })
    try {
      route = (family) => ({targets: [{provider: {...provider('sim', family, sim.origin), origin: 'sim'}}]})
      const res = await fetch(`${gatewayUrl}/v1/responses`, {
        method: 'POST',
        headers: {'x-sim-fault': 'status=418'},
        body: '{"model":"m","input":"x"}',
      })
      expect(res.status).toBe(418)
      route = (family) => ({targets: [{provider: provider('real', family, upstream.origin)}]})
      await (
        await fetch(`${gatewayUrl}/v1/responses`, {
          method: 'POST',
          headers: {'x-sim-fault': 'status=418'},
          body: '{}',
        })
      ).text()
      expect(seen[0]['x-sim-fault']).toBeUndefined()
    } finally {
      upstream.close()
    }
  })
})

describe('a stream that breaks mid-event', () => {
  it('starts the error event on its own after a blank line', async () => {
    const upstream = await startUpstream((_req, res) => {
      res.writeHead(200, {'content-type': 'text/event-stream'})
      res.write('data: {"candidates":[{"content":{"parts":[{"text":"PO"}]}}]}\n\ndata: {"candidates":[{"cont')
      setTimeout(() => res.destroy(), 20)
    })
    try {
      route = (family) => ({targets: [{provider: provider('breaks', family, upstream.origin)}]})
      const res = await fetch(`${gatewayUrl}/v1beta/models/g:streamGenerateContent?alt=sse`, {
        method: 'POST',
        body: '{}',
      })
      const text = await res.text()
      expect(text).toMatch(
        /"cont\n\ndata: \{"error":\{"code":502,"message":"breaks: stream broke after the first byte: [^"]+","status":"UNAVAILABLE"\}\}\n\n$/,
      )
    } finally {
      upstream.close()
    }
  })
})

describe('pass-through streaming', () => {
  it('the client gets each event while the upstream is still streaming (nothing buffered)', async () => {
    let release: () => void = () => undefined
    const released = new Promise<void>((resolve) => (release = resolve))
    const upstream = await startUpstream(async (_req, res) => {
      res.writeHead(200, {'content-type': 'text/event-stream', 'request-id': 'req_upstream1'})
      res.write(
        'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":4,"output_tokens":1}}}\n\n',
      )
      await released
      res.write(
        'event: message_delta\ndata: {"type":"message_delta","delta":{},"usage":{"output_tokens":9}}\n\n',
      )
      res.end('event: message_stop\ndata: {"type":"message_stop"}\n\n')
    })
    try {
      route = (family) => ({targets: [{provider: provider('streamer', family, upstream.origin)}]})
      const res = await fetch(`${gatewayUrl}/v1/messages`, {
        method: 'POST',
        body: '{"model":"m","stream":true}',
      })
      expect(res.headers.get('request-id')).toBe('req_upstream1')
      const reader = res.body!.getReader()
      const first = new TextDecoder().decode((await reader.read()).value)
      expect(first).toContain('message_start')
      release()
      let rest = ''
      for (let r = await reader.read(); !r.done; r = await reader.read())
        rest += new TextDecoder().decode(r.value)
      expect(rest).toContain('message_stop')
      const [result] = await gateway.settled(1)
      expect(result.usage).toMatchObject({inputTokens: 4, outputTokens: 9})
      expect(result.requestId).toBe('req_upstream1')
    } finally {
      upstream.close()
    }
  })
})
