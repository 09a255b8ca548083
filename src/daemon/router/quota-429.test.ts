/**
 * A 429 as the client's SDK reads it (audit57 #1-#3): a quota no wait cures (Google's daily quota,
 * OpenAI's `insufficient_quota`) says `x-should-retry: false`, and to a Gemini client a
 * `QuotaFailure` naming a daily quota, so that no SDK retries it; a wait given only as
 * `retry-after-ms` is said as `retry-after` (and Google's RetryInfo) too; a 429 that is the
 * request's last answer is no breaker failure, one that sends it to another target is. The proxy in
 * front of the simulator, the clients the official SDKs with their default retries.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {simProxy} from '../../../test/helpers/sim-proxy.js'
import {parseFault} from '../../sim/faults.js'
import type {Simulator} from '../../sim/server.js'
import type {Family} from '../../store/schema.js'
import {CircuitBreaker} from './breaker.js'
import type {GatewayRoute} from './proxy-fixture.js'
import {askMessages} from './proxy-fixture.js'

let sim: Simulator
let route: (family: Family) => GatewayRoute
const proxied = simProxy({route: (family) => route(family)})
const {gateway, target, upstreamCalls} = proxied

/** Claude Code's SDK, retrying as it does by default (2 retries, honouring `x-should-retry`). */
const claude = () => new Anthropic({baseURL: gateway.url, apiKey: 'gw-key'})
const askClaude = () =>
  claude()
    .messages.create({model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{role: 'user', content: 'hi'}]})
    .then(
      () => undefined,
      (e: unknown) => e as InstanceType<typeof Anthropic.APIError>,
    )
const openai = () => new OpenAI({baseURL: `${gateway.url}/v1`, apiKey: 'gw-key'})

/** A Gemini client's request (Gemini CLI's shape), answered as JSON. */
const askGemini = () =>
  fetch(`${gateway.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
    method: 'POST',
    headers: {'content-type': 'application/json', 'x-goog-api-key': 'gw-key'},
    body: JSON.stringify({contents: [{role: 'user', parts: [{text: 'hi'}]}]}),
  })

beforeAll(async () => {
  sim = await proxied.start()
})

afterEach(() => proxied.clear())

afterAll(() => proxied.close())

describe('a quota no wait cures, through translation: the client is told not to retry', () => {
  it("Google's daily quota to Claude Code's SDK: one request, x-should-retry: false, no retry-after", async () => {
    route = () => ({targets: [target('gemini', {model: 'gemini-2.5-flash', translate: true})]})
    sim.faults.add(parseFault('status=429,per-day,times=0,path=/models/'))
    const error = await askClaude()
    expect(error).toBeInstanceOf(Anthropic.RateLimitError)
    expect(error?.headers?.get('x-should-retry')).toBe('false')
    expect(error?.headers?.get('retry-after')).toBeNull()
    expect(error?.message).toContain('no retry helps: a daily quota')
    expect(upstreamCalls('/models/')).toHaveLength(1)
  })

  it("OpenAI's insufficient_quota to Claude Code's SDK and to an OpenAI SDK chat client: one request each", async () => {
    route = () => ({targets: [target('responses', {model: 'gpt-5', translate: true})]})
    sim.faults.add(parseFault('insufficient-quota,times=0,path=/responses'))
    const error = await askClaude()
    expect(error).toBeInstanceOf(Anthropic.RateLimitError)
    expect(error?.headers?.get('x-should-retry')).toBe('false')
    expect(error?.message).toContain('You exceeded your current quota')
    expect(error?.message).toContain('no retry helps: insufficient_quota')
    expect(upstreamCalls('/responses')).toHaveLength(1)
    const chat = await openai()
      .chat.completions.create({model: 'gpt-5', messages: [{role: 'user', content: 'hi'}]})
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    expect(chat).toBeInstanceOf(OpenAI.RateLimitError)
    // (OpenAI's code kept: Codex says "Quota exceeded. Check your plan and billing details." on it)
    expect((chat as InstanceType<typeof OpenAI.APIError>).code).toBe('insufficient_quota')
    expect(upstreamCalls('/responses')).toHaveLength(2)
  })

  it("OpenAI's insufficient_quota to a Gemini client: a QuotaFailure naming a daily quota, which Gemini CLI ends on", async () => {
    route = () => ({targets: [target('responses', {model: 'gpt-5', translate: true})]})
    sim.faults.add(parseFault('insufficient-quota,path=/responses'))
    const res = await askGemini()
    expect(res.status).toBe(429)
    const body = (await res.json()) as {
      error: {code: number; status: string; message: string; details?: Array<Record<string, unknown>>}
    }
    expect(body.error).toMatchObject({code: 429, status: 'RESOURCE_EXHAUSTED'})
    expect(body.error.message).toContain('You exceeded your current quota')
    // (Google's words for a quota of none, which Gemini CLI reads before the details: its
    // TerminalQuotaError then says this message, the upstream's words, not its own daily-quota text;
    // "remaining": OpenAI says the same of an empty balance and of a monthly budget reached, a
    // limit of $120 say, review68)
    expect(body.error.message).toMatch(/\(remaining limit: 0\)$/)
    // (Gemini CLI 0.61 classifyGoogleError's test, on the lowercased message)
    expect(/limit:\s*0(?!\d|\.\d)/.test(body.error.message.toLowerCase())).toBe(true)
    const failure = body.error.details?.find(
      (d) => d['@type'] === 'type.googleapis.com/google.rpc.QuotaFailure',
    )
    // (Gemini CLI 0.61 classifyGoogleError: a quotaId that includes "PerDay" is a TerminalQuotaError)
    expect((failure?.violations as Array<{quotaId: string}>)[0].quotaId).toContain('PerDay')
  })

  it('a per-minute quota keeps its wait and says nothing of retrying', async () => {
    route = () => ({targets: [target('gemini', {model: 'gemini-2.5-flash', translate: true})]})
    sim.faults.add(parseFault('status=429,retry-delay=1s,path=/models/'))
    const res = await askMessages(gateway.url)
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(res.headers.get('x-should-retry')).toBeNull()
  })
})

describe('a quota no wait cures, said in a stream before any output', () => {
  /** Claude Code's SDK streaming (as Claude Code asks), read to its end: the error it throws, if any. */
  const streamClaude = async (): Promise<unknown> => {
    try {
      const stream = await claude().messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        stream: true,
        messages: [{role: 'user', content: 'hi'}],
      })
      let text = ''
      for await (const event of stream)
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta')
          text += event.delta.text
      return text
    } catch (error) {
      return error
    }
  }

  it("a Responses stream's response.failed (insufficient_quota) after response.created: an HTTP 429 to Claude Code, x-should-retry: false, one request", async () => {
    const breaker = new CircuitBreaker('sim-responses')
    route = () => ({targets: [target('responses', {model: 'gpt-5', translate: true, breaker})]})
    sim.faults.add(parseFault('insufficient-quota,in-stream,times=0,path=/responses'))
    const error = (await streamClaude()) as InstanceType<typeof Anthropic.APIError>
    expect(error).toBeInstanceOf(Anthropic.RateLimitError)
    expect(error.headers?.get('x-should-retry')).toBe('false')
    expect(error.message).toContain('You exceeded your current quota')
    expect(error.message).toContain('no retry helps: insufficient_quota')
    expect(upstreamCalls('/responses')).toHaveLength(1)
    expect(gateway.results[0]).toMatchObject({status: 429})
    expect(breaker.snapshot()).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })

  it("Google's daily quota as a Gemini stream's first chunk (per-day,in-stream): an HTTP 429 to Claude Code, x-should-retry: false, one request", async () => {
    route = () => ({targets: [target('gemini', {model: 'gemini-2.5-flash', translate: true})]})
    sim.faults.add(parseFault('status=429,per-day,in-stream,times=0,path=/models/'))
    const error = (await streamClaude()) as InstanceType<typeof Anthropic.APIError>
    expect(error).toBeInstanceOf(Anthropic.RateLimitError)
    expect(error.headers?.get('x-should-retry')).toBe('false')
    expect(error.headers?.get('retry-after')).toBeNull()
    expect(error.message).toContain('no retry helps: a daily quota')
    // (the SDK retried it twice, on the `retry-after: 2` it was given)
    expect(upstreamCalls('/models/')).toHaveLength(1)
  })

  it('with another target left: that target answers the stream', async () => {
    route = () => ({
      targets: [
        target('responses', {model: 'gpt-5', translate: true}),
        target('chat', {model: 'sim-pro', translate: true}),
      ],
      fallbacks: true,
    })
    sim.faults.add(parseFault('insufficient-quota,in-stream,path=/responses'))
    const text = await streamClaude()
    expect(typeof text).toBe('string')
    expect(text).not.toBe('')
    expect(gateway.results[0]).toMatchObject({status: 200, fallback: true, provider: 'sim-chat'})
  })

  it('a chat stream that starts with an error chunk (insufficient_quota): an HTTP 429 to Claude Code, x-should-retry: false', async () => {
    route = () => ({targets: [target('chat', {model: 'sim-pro', translate: true})]})
    sim.faults.add(parseFault('insufficient-quota,in-stream,times=0,path=/chat/completions'))
    const error = (await streamClaude()) as InstanceType<typeof Anthropic.APIError>
    expect(error).toBeInstanceOf(Anthropic.RateLimitError)
    expect(error.headers?.get('x-should-retry')).toBe('false')
    expect(upstreamCalls('/chat/completions')).toHaveLength(1)
  })
})

describe('a quota no wait cures, passed through', () => {
  /** An OpenAI SDK client's chat request to `sim-pro`: the error it throws (undefined: none). */
  const chatRefusal = () =>
    openai()
      .chat.completions.create({model: 'sim-pro', messages: [{role: 'user', content: 'hi'}]})
      .then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      )

  it("OpenAI's insufficient_quota to an OpenAI SDK client: x-should-retry: false, one request (the SDK retried it twice)", async () => {
    route = (family) => ({targets: [target(family)]})
    sim.faults.add(parseFault('insufficient-quota,times=0,path=/chat/completions'))
    const error = await chatRefusal()
    expect(error).toBeInstanceOf(OpenAI.RateLimitError)
    expect(error?.code).toBe('insufficient_quota')
    expect(error?.headers?.get('x-should-retry')).toBe('false')
    expect(upstreamCalls('/chat/completions')).toHaveLength(1)
  })

  it("Groq's and OpenAI's per-day limit in words (TPD) to an OpenAI SDK client: x-should-retry: false, one request", async () => {
    route = (family) => ({targets: [target(family)]})
    sim.faults.add(
      parseFault(
        'status=429,times=0,path=/chat/completions,message=Rate limit reached for model sim-pro on tokens per day (TPD): Limit 100000 Used 99763. Please try again in 13m55.2s.',
      ),
    )
    const error = await chatRefusal()
    expect(error).toBeInstanceOf(OpenAI.RateLimitError)
    expect(error?.message).toContain('tokens per day (TPD)')
    expect(error?.headers?.get('x-should-retry')).toBe('false')
    expect(upstreamCalls('/chat/completions')).toHaveLength(1)
  })
})

describe('a wait given only as retry-after-ms', () => {
  it('reaches Claude Code as retry-after in whole seconds, rounded up', async () => {
    route = () => ({targets: [target('responses', {model: 'gpt-5', translate: true})]})
    sim.faults.add(parseFault('status=429,retry-after-ms=1500,path=/responses'))
    const res = await askMessages(gateway.url)
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after-ms')).toBe('1500')
    expect(res.headers.get('retry-after')).toBe('2')
  })

  it("reaches a Gemini client as Google's RetryInfo", async () => {
    route = () => ({targets: [target('responses', {model: 'gpt-5', translate: true})]})
    sim.faults.add(parseFault('status=429,retry-after-ms=1500,path=/responses'))
    const res = await askGemini()
    expect(res.status).toBe(429)
    const body = (await res.json()) as {error: {details?: unknown[]}}
    expect(body.error.details).toEqual([
      {'@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '2s'},
    ])
  })
})

describe('the breaker and a 429', () => {
  const sevenRequests = async (): Promise<number[]> => {
    const statuses: number[] = []
    for (let i = 0; i < 7; i++) {
      const res = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: {'content-type': 'application/json', authorization: 'Bearer gw-key'},
        body: JSON.stringify({model: 'sim-pro', messages: [{role: 'user', content: 'hi'}]}),
      })
      await res.text()
      statuses.push(res.status)
    }
    return statuses
  }

  it('a 429 that is the last answer counts nothing: the seventh request still gets the upstream 429 and its wait', async () => {
    const breaker = new CircuitBreaker('sim-chat')
    route = (family) => ({targets: [target(family, {breaker})], fallbacks: true})
    sim.faults.add(parseFault('status=429,retry-after=1,times=7,path=/chat/completions'))
    expect(await sevenRequests()).toEqual([429, 429, 429, 429, 429, 429, 429])
    expect(upstreamCalls('/chat/completions')).toHaveLength(7)
    expect(breaker.snapshot()).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })

  it('a 429 that sends the request to a fallback counts: the breaker opens and later requests go to the fallback at once', async () => {
    const breaker = new CircuitBreaker('first')
    // (the fallback another family's, so that the queued 429s are the first target's only)
    route = (family) => ({
      targets: [
        target(family, {breaker}, 'first'),
        target('responses', {model: 'gpt-5', translate: true}, 'second'),
      ],
      fallbacks: true,
    })
    sim.faults.add(parseFault('status=429,retry-after=1,times=0,path=/chat/completions'))
    expect(await sevenRequests()).toEqual([200, 200, 200, 200, 200, 200, 200])
    expect(breaker.state).toBe('open')
    // 5 tries of the first target (each 429, then the fallback), then only the fallback
    expect(upstreamCalls('/chat/completions')).toHaveLength(5)
    expect(upstreamCalls('/responses')).toHaveLength(7)
  })

  it('a half-open trial answered 429 opens the breaker again, as before', async () => {
    let now = 0
    const breaker = new CircuitBreaker('sim-chat', {failureThreshold: 1, cooldownMs: 1000}, () => now)
    breaker.recordFailure('before')
    now = 1000
    route = (family) => ({targets: [target(family, {breaker})]})
    sim.faults.add(parseFault('status=429,retry-after=1,path=/chat/completions'))
    const statuses = await sevenRequests()
    expect(statuses[0]).toBe(429)
    expect(statuses.slice(1)).toEqual([503, 503, 503, 503, 503, 503])
    expect(breaker.state).toBe('open')
  })
})
