/**
 * A 429 with nothing left to try: Codex, which retries none that says no `retry-after`, gets its
 * request sent again to the same target after the short wait the upstream states
 * (`retry-after-ms`, else Google's RetryInfo, else 2 s then 4 s; at most 2 more tries, 30 s in
 * all); one with `retry-after` (which Codex retries itself), any other client, a long wait, a daily
 * quota get the 429 at once, as before. A translated answer of a Gemini upstream's 429 says Google's
 * wait in `retry-after`. A 429 that is a request's last answer is no breaker failure, its waited tries neither. The
 * proxy in front of the simulator (faults queued with `times`), each wait either real and short
 * (`retry-after-ms`) or recorded by an injected sleep.
 */
import Anthropic from '@anthropic-ai/sdk'
import {setTimeout as sleep} from 'node:timers/promises'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {simProxy} from '../../../test/helpers/sim-proxy.js'
import {parseFault} from '../../sim/faults.js'
import type {Simulator} from '../../sim/server.js'
import type {Family} from '../../store/schema.js'
import {CircuitBreaker} from './breaker.js'
import {logEntryFor} from './log-entry.js'
import type {GatewayRoute, ProxyGatewayOptions} from './proxy-fixture.js'

let sim: Simulator
let route: (family: Family) => GatewayRoute
/** The waits the proxy asked for, when `fakeWaits` is on (then none is waited). */
let waits: number[] = []
const options: ProxyGatewayOptions = {route: (family) => route(family)}
const proxied = simProxy(options)
const {gateway, target, upstreamCalls} = proxied
const fakeWaits = (on: boolean): void => {
  options.sleep = on
    ? (ms) => {
        waits.push(ms)
        return Promise.resolve()
      }
    : undefined
}

/** Codex 0.171's headers (as captured), on a streamed Responses request. */
const CODEX_HEADERS = {
  'content-type': 'application/json',
  accept: 'text/event-stream',
  originator: 'codex_exec',
  'user-agent': 'codex_exec/0.171.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.171.0)',
}
const OPENAI_SDK_HEADERS = {'content-type': 'application/json', 'user-agent': 'OpenAI/JS 5.23.2'}

const ask = (headers: Record<string, string>, signal?: AbortSignal, stream = true) =>
  fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: {authorization: 'Bearer gw-key', ...headers},
    body: JSON.stringify({model: 'gpt-sim', input: 'hello', stream}),
    signal,
  })

const row = (i = 0) =>
  logEntryFor(
    'responses',
    {agentId: null, keyPrefix: null, policyId: null, project: null},
    gateway.results[i],
  )

beforeAll(async () => {
  sim = await proxied.start()
})

afterEach(() => {
  proxied.clear()
  waits = []
  fakeWaits(false)
})

afterAll(() => proxied.close())

describe('Codex on a single target answered 429', () => {
  beforeAll(() => {
    route = (family) => ({targets: [target(family)], fallbacks: true})
  })

  it('waits the time the upstream states and sends the same request again: 200, one row with the note', async () => {
    sim.faults.add(parseFault('status=429,retry-after-ms=60,path=/responses'))
    const started = Date.now()
    const res = await ask(CODEX_HEADERS)
    const text = await res.text()
    expect(res.status).toBe(200)
    expect(text).toContain('response.completed')
    expect(Date.now() - started).toBeGreaterThanOrEqual(55)
    const calls = upstreamCalls('/responses')
    expect(calls).toHaveLength(2)
    expect(calls[1].body).toEqual(calls[0].body)
    await gateway.settled(1)
    expect(gateway.results).toHaveLength(1)
    expect(row()).toMatchObject({
      status: 200,
      fallback: false,
      error: 'sim-responses waited 0.1s for a 429 (Codex does not retry one)',
    })
    expect(row().outputTokens).toBeGreaterThan(0)
  })

  it('without a stated wait: 2 s, then 4 s, then the 429 to the client with both waits on its row', async () => {
    fakeWaits(true)
    sim.faults.add(parseFault('status=429,times=3,path=/responses'))
    const res = await ask(CODEX_HEADERS)
    expect(res.status).toBe(429)
    expect(((await res.json()) as {error: {message: string}}).error.message).toBe(
      'simulated fault: status 429',
    )
    expect(waits).toEqual([2000, 4000])
    expect(upstreamCalls('/responses')).toHaveLength(3)
    await gateway.settled(1)
    expect(row()).toMatchObject({
      status: 429,
      error:
        'sim-responses: upstream answered 429; sim-responses waited 6s for 2 429s (Codex does not retry one)',
    })
  })

  it('a 429 whose words alone state the wait (no header, no RetryInfo): that wait, not 2 s', async () => {
    fakeWaits(true)
    sim.faults.add(
      parseFault(
        'status=429,message=Rate limit reached for gpt-sim. Please try again in 1.5s.,path=/responses',
      ),
    )
    const res = await ask(CODEX_HEADERS)
    expect(res.status).toBe(200)
    expect(waits).toEqual([1500])
    expect(upstreamCalls('/responses')).toHaveLength(2)
  })

  it('stops at 30 s waited in all: a second wait of 20 s is not taken', async () => {
    fakeWaits(true)
    sim.faults.add(parseFault('status=429,retry-after-ms=20000,times=3,path=/responses'))
    const res = await ask(CODEX_HEADERS)
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after-ms')).toBe('20000')
    // Codex reads no retry-after-ms: the wait in seconds too, which it then waits out itself
    expect(res.headers.get('retry-after')).toBe('20')
    expect(waits).toEqual([20_000])
    expect(upstreamCalls('/responses')).toHaveLength(2)
  })

  it('a longer wait goes to the client at once, as before', async () => {
    fakeWaits(true)
    sim.faults.add(parseFault('status=429,retry-after-ms=60000,path=/responses'))
    const res = await ask(CODEX_HEADERS)
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after-ms')).toBe('60000')
    expect(res.headers.get('retry-after')).toBe('60')
    expect(waits).toEqual([])
    expect(upstreamCalls('/responses')).toHaveLength(1)
    await gateway.settled(1)
    expect(row().error).toBe('sim-responses: upstream answered 429')
  })

  it('a 429 with retry-after goes to Codex as it came: Codex retries that one itself', async () => {
    fakeWaits(true)
    sim.faults.add(parseFault('status=429,retry-after=1,path=/responses'))
    const res = await ask(CODEX_HEADERS)
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(waits).toEqual([])
    expect(upstreamCalls('/responses')).toHaveLength(1)
  })

  it('a client that is not Codex gets the 429 at once, as before', async () => {
    fakeWaits(true)
    sim.faults.add(parseFault('status=429,retry-after-ms=50,path=/responses'))
    const res = await ask(OPENAI_SDK_HEADERS)
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after-ms')).toBe('50')
    // (and the wait in whole seconds, which Claude Code's own retry loop reads)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(waits).toEqual([])
    expect(upstreamCalls('/responses')).toHaveLength(1)
  })

  it('a client that leaves while it waits: no further try, a 499 row', async () => {
    sim.faults.add(parseFault('status=429,retry-after-ms=400,path=/responses'))
    const controller = new AbortController()
    const asked = ask(CODEX_HEADERS, controller.signal).catch((error: Error) => error)
    await sleep(100)
    controller.abort()
    expect(await asked).toBeInstanceOf(Error)
    await sleep(600)
    expect(upstreamCalls('/responses')).toHaveLength(1)
    await gateway.settled(1)
    expect(row()).toMatchObject({status: 499, error: 'client closed the connection'})
  })

  it('a client of a request not streamed (held for its usage) that leaves while it waits: the wait ends there', async () => {
    // (a wait of 20 s: the row is written when the client leaves, not once the wait is over)
    sim.faults.add(parseFault('status=429,retry-after-ms=20000,path=/responses'))
    const controller = new AbortController()
    const asked = ask(CODEX_HEADERS, controller.signal, false).catch((error: Error) => error)
    // (once the 429 came and the wait began)
    while (upstreamCalls('/responses').length === 0) await sleep(20)
    await sleep(500)
    controller.abort()
    expect(await asked).toBeInstanceOf(Error)
    await gateway.settled(1)
    expect(gateway.results).toHaveLength(1)
    expect(upstreamCalls('/responses')).toHaveLength(1)
    expect(row()).toMatchObject({status: 499, error: 'client closed the connection'})
  })
})

describe('Codex through translation to Gemini answered 429 (the wait in the body only)', () => {
  beforeAll(() => {
    route = () => ({targets: [target('gemini', {model: 'gemini-2.5-flash', translate: true})]})
  })

  it("Google's RetryInfo is the wait: then the answer", async () => {
    fakeWaits(true)
    sim.faults.add(parseFault('status=429,retry-delay=0.05s,path=/models/'))
    const res = await ask(CODEX_HEADERS)
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('response.completed')
    expect(waits).toEqual([50])
    expect(upstreamCalls('/models/')).toHaveLength(2)
    await gateway.settled(1)
    expect(row().error).toBe('sim-gemini waited 0.1s for a 429 (Codex does not retry one)')
  })

  it('a daily quota is not waited for, whatever its retryDelay; a retryDelay past the cap neither', async () => {
    fakeWaits(true)
    sim.faults.add(parseFault('status=429,retry-delay=20s,per-day,path=/models/'))
    const daily = await ask(CODEX_HEADERS)
    expect(daily.status).toBe(429)
    // (no retry-after either: a wait of seconds does not help a daily quota)
    expect(daily.headers.get('retry-after')).toBeNull()
    sim.faults.add(parseFault('status=429,retry-delay=37.5s,path=/models/'))
    const long = await ask(CODEX_HEADERS)
    expect(long.status).toBe(429)
    expect(long.headers.get('retry-after')).toBe('38')
    expect(waits).toEqual([])
    expect(upstreamCalls('/models/')).toHaveLength(2)
  })
})

describe("the breaker counts no 429 that is a request's last answer, a waited try's neither", () => {
  it('three 429s of one request count nothing: both waits happen, the breaker stays closed', async () => {
    fakeWaits(true)
    const breaker = new CircuitBreaker('sim-responses', {failureThreshold: 1, cooldownMs: 60_000})
    route = (family) => ({targets: [target(family, {breaker})]})
    sim.faults.add(parseFault('status=429,times=3,path=/responses'))
    const res = await ask(CODEX_HEADERS)
    expect(res.status).toBe(429)
    expect(waits).toEqual([2000, 4000])
    expect(upstreamCalls('/responses')).toHaveLength(3)
    expect(breaker.snapshot()).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })

  it("two requests that each wait twice and another client's 429 count nothing (threshold 1: still closed)", async () => {
    fakeWaits(true)
    const breaker = new CircuitBreaker('sim-responses', {failureThreshold: 1, cooldownMs: 60_000})
    route = (family) => ({targets: [target(family, {breaker})]})
    sim.faults.add(parseFault('status=429,times=6,path=/responses'))
    expect((await ask(CODEX_HEADERS)).status).toBe(429)
    expect((await ask(CODEX_HEADERS)).status).toBe(429)
    expect(upstreamCalls('/responses')).toHaveLength(6)
    sim.faults.add(parseFault('status=429,path=/responses'))
    expect((await ask(OPENAI_SDK_HEADERS)).status).toBe(429)
    expect(breaker.snapshot()).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })

  it('a waited try that took a half-open trial (the breaker opened meanwhile) opens it again on its 429', async () => {
    let now = 0
    const breaker = new CircuitBreaker('sim-responses', {failureThreshold: 1, cooldownMs: 1000}, () => now)
    options.sleep = (ms) => {
      waits.push(ms)
      // other requests open the breaker while this one waits, and its cooldown passes
      breaker.recordFailure('another request')
      now += 1000
      return Promise.resolve()
    }
    route = (family) => ({targets: [target(family, {breaker})]})
    sim.faults.add(parseFault('status=429,times=2,path=/responses'))
    const res = await ask(CODEX_HEADERS)
    expect(res.status).toBe(429)
    expect(waits).toEqual([2000])
    expect(upstreamCalls('/responses')).toHaveLength(2)
    expect(breaker.state).toBe('open')
    expect(breaker.canTry()).toBe(false)
  })

  it('a half-open trial answered 429 is not waited for (the breaker opens again, as before)', async () => {
    fakeWaits(true)
    let now = 0
    const breaker = new CircuitBreaker('sim-responses', {failureThreshold: 1, cooldownMs: 1000}, () => now)
    breaker.recordFailure('before')
    now = 1000
    expect(breaker.state).toBe('half-open')
    route = (family) => ({targets: [target(family, {breaker})]})
    sim.faults.add(parseFault('status=429,retry-after-ms=10,path=/responses'))
    const res = await ask(CODEX_HEADERS)
    expect(res.status).toBe(429)
    expect(waits).toEqual([])
    expect(upstreamCalls('/responses')).toHaveLength(1)
    expect(breaker.state).toBe('open')
  })

  it('with a fallback left, a 429 moves on at once, as before', async () => {
    fakeWaits(true)
    route = (family) => ({targets: [target(family, {}, 'first'), target(family, {}, 'second')]})
    sim.faults.add(parseFault('status=429,retry-after-ms=10,path=/responses'))
    const res = await ask(CODEX_HEADERS)
    expect(res.status).toBe(200)
    await res.text()
    expect(waits).toEqual([])
    await gateway.settled(1)
    expect(row()).toMatchObject({fallback: true, error: 'fell back after: first: upstream answered 429'})
  })
})

describe("a Gemini upstream's 429 through translation, for any client", () => {
  beforeAll(() => {
    route = () => ({targets: [target('gemini', {model: 'gemini-2.5-flash', translate: true})]})
  })

  const claude = () => new Anthropic({baseURL: gateway.url, apiKey: 'gw-key', maxRetries: 0})
  const refused = async () => {
    const error = await claude()
      .messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        messages: [{role: 'user', content: 'hi'}],
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(error).toBeInstanceOf(Anthropic.RateLimitError)
    return error as InstanceType<typeof Anthropic.RateLimitError>
  }

  it("gets retry-after from Google's RetryInfo, in whole seconds", async () => {
    sim.faults.add(parseFault('status=429,retry-delay=1.5s,path=/models/'))
    const error = await refused()
    expect(error.headers?.get('retry-after')).toBe('2')
    expect(upstreamCalls('/models/')).toHaveLength(1)
  })

  it("keeps the upstream's own retry-after over the body's", async () => {
    sim.faults.add(parseFault('status=429,retry-after=7,retry-delay=30s,path=/models/'))
    const error = await refused()
    expect(error.headers?.get('retry-after')).toBe('7')
  })
})
