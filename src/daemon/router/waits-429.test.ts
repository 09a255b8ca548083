/**
 * The wait a 429 states in its body alone, as the client's SDK reads it (waits61): passed through
 * untranslated, the Anthropic and OpenAI SDKs get `retry-after` from Google's RetryInfo or from the
 * words ("Please try again in 20s"), the body's bytes as they came; a Gemini client Google's body
 * alone, which Gemini CLI reads. A wait past a minute, up to 5, `retry-after` to a client that waits
 * it (the OpenAI SDK) and nothing to Codex and Claude Code (mw61); a longer one, RetryInfo's or
 * `retry-after-ms`'s, `x-should-retry: false`. And a 200 whose body is an error named by a string
 * code (OpenRouter, new-api, one-api) gets the status that code means, not a 502, unless another
 * target may answer (mw61). The clients are the official SDKs, in front of a scripted upstream.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, afterEach, beforeAll, describe, expect, it, vi} from 'vitest'

import {chatChunk, chatSse} from '../../protocols/cm-test-helpers.js'
import {CircuitBreaker} from './breaker.js'
import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {
  askMessages,
  chatTarget,
  claudeCodeHeaders,
  messagesTarget,
  ProxyGateway,
  responsesTarget,
  startUpstream,
} from './proxy-fixture.js'

type Answer = {status: number; body: string; headers?: Record<string, string>; sse?: boolean}
/** What the scripted upstream answers (the `then` ones first, one a call), and how often it was asked. */
let answer: Answer
let then: Answer[] = []
let calls = 0
let upstream: Upstream
/** A second upstream, a chat server that streams `done`, and how often it was asked. */
let other: Upstream
let otherCalls = 0
let targets: ProxyTarget[] = []
const gateway = new ProxyGateway({route: () => ({targets})})

beforeAll(async () => {
  upstream = await startUpstream((_req, res) => {
    calls++
    const next = then.shift() ?? answer
    res.writeHead(next.status, {
      'content-type': next.sse ? 'text/event-stream' : 'application/json',
      ...next.headers,
    })
    res.end(next.body)
  })
  other = await startUpstream((_req, res) => {
    otherCalls++
    res.writeHead(200, {'content-type': 'text/event-stream'})
    res.end(chatSse([chatChunk({role: 'assistant', content: 'done'}), chatChunk({}, 'stop'), '[DONE]']))
  })
  await gateway.listen()
})
afterEach(() => {
  calls = 0
  otherCalls = 0
  then = []
  gateway.results.length = 0
  vi.restoreAllMocks()
})
afterAll(async () => {
  upstream.close()
  other.close()
  await gateway.close()
})

/**
 * The waits of these lengths an SDK sleeps (its `setTimeout`), recorded and cut to nothing: what
 * it would have waited, without the test waiting it.
 */
function cutWaits(...lengths: number[]): number[] {
  const waited: number[] = []
  const real = globalThis.setTimeout
  vi.spyOn(globalThis, 'setTimeout').mockImplementation(((
    fn: (...args: unknown[]) => void,
    ms?: number,
    ...args: unknown[]
  ) => {
    if (ms !== undefined && lengths.includes(ms)) {
      waited.push(ms)
      return real(fn, 0, ...args)
    }
    return real(fn, ms, ...args)
  }) as typeof setTimeout)
  return waited
}

const geminiTarget = (): ProxyTarget => ({
  provider: {name: 'up-gemini', family: 'gemini', baseUrl: upstream.origin, credential: {secret: 'g-key'}},
  model: 'gemini-2.5-flash',
})

/**
 * The Anthropic SDK (`retries` as it is told: 2 by default). Claude Code is built on it, but its own
 * retry loop decides on a 429 (../../../docs/TRANSLATION.md, "What each client reads"): its requests
 * are sent with `claudeCodeHeaders`.
 */
const claude = (maxRetries = 2) => new Anthropic({baseURL: gateway.url, apiKey: 'gw-key', maxRetries})
/** The error the Anthropic SDK throws on a request, streamed or not (undefined: none). */
const askClaude = async (maxRetries = 2, stream = false) => {
  try {
    const request = {
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{role: 'user' as const, content: 'hi'}],
    }
    if (stream) for await (const _ of await claude(maxRetries).messages.create({...request, stream})) void _
    else await claude(maxRetries).messages.create(request)
    return undefined
  } catch (error) {
    return error as InstanceType<typeof Anthropic.APIError>
  }
}
/** The text of the Anthropic SDK's streamed answer (no retries). */
const streamedText = async (): Promise<string> => {
  let text = ''
  const stream = await claude(0).messages.create({
    model: 'claude-sonnet-4-5',
    max_tokens: 64,
    stream: true,
    messages: [{role: 'user', content: 'hi'}],
  })
  for await (const event of stream)
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text
  return text
}
/** An OpenAI SDK chat client's request: the error it throws (undefined: none). */
const askChat = (maxRetries = 2) =>
  new OpenAI({baseURL: `${gateway.url}/v1`, apiKey: 'gw-key', maxRetries}).chat.completions
    .create({model: 'sim-pro', messages: [{role: 'user', content: 'hi'}]})
    .then(
      () => undefined,
      (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
    )

/** Google's 429 (per minute) as the Gemini API answers it: RetryInfo cut to whole seconds, the words uncut. */
const google = (retryDelay: string, words: string) =>
  JSON.stringify({
    error: {
      code: 429,
      message: `You exceeded your current quota. Please retry in ${words}.`,
      status: 'RESOURCE_EXHAUSTED',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [{quotaId: 'GenerateRequestsPerMinutePerProjectPerModel-FreeTier'}],
        },
        {'@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay},
      ],
    },
  })

/** An OpenAI-compatible server's rate-limit 429 with `message`, and the wait `headers` it sends. */
const limited = (message: string, headers: Record<string, string>) => ({
  status: 429,
  body: JSON.stringify({error: {message, code: 'rate_limit_exceeded'}}),
  headers,
})

/** A Messages relay's rate-limit 429 body, its `words` saying the wait. */
const rateLimitError = (words: string) =>
  JSON.stringify({type: 'error', error: {type: 'rate_limit_error', message: words}})

describe('a 429 passed through whose body alone states its wait', () => {
  it("the Anthropic SDK on a Messages relay whose words say the wait: retry-after, the body's bytes as they came", async () => {
    targets = [messagesTarget('relay', 'claude-sonnet-4-5', upstream.origin)]
    const body = rateLimitError('Rate limited. Please try again in 20s.')
    answer = {status: 429, body}
    const error = await askClaude(0)
    expect(error).toBeInstanceOf(Anthropic.RateLimitError)
    expect(error?.headers?.get('retry-after')).toBe('20')
    expect(error?.headers?.get('x-should-retry')).toBeNull()
    expect(await (await askMessages(gateway.url)).text()).toBe(body)
  })

  it("an OpenAI SDK chat client on a relay forwarding Google's 429: the longer of RetryInfo's 37 s and the words' 37.5 s", async () => {
    targets = [chatTarget('relay', 'sim-pro', upstream.origin)]
    answer = {status: 429, body: `[${google('37s', '37.5s')}]`}
    const error = await askChat(0)
    expect(error).toBeInstanceOf(OpenAI.RateLimitError)
    expect(error?.headers?.get('retry-after')).toBe('38')
  })

  it("the upstream's own retry-after stays as it came", async () => {
    targets = [chatTarget('relay', 'sim-pro', upstream.origin)]
    answer = limited('Please try again in 20s.', {'retry-after': '5'})
    const error = await askChat(0)
    expect(error?.headers?.get('retry-after')).toBe('5')
  })

  it('a RetryInfo of an hour that is no daily quota: x-should-retry: false, and the SDK asks once (with no header it retried twice on its own backoff)', async () => {
    targets = [chatTarget('relay', 'sim-pro', upstream.origin)]
    answer = {status: 429, body: google('3600s', '3600s')}
    const error = await askChat()
    expect(error).toBeInstanceOf(OpenAI.RateLimitError)
    expect(error?.headers?.get('x-should-retry')).toBe('false')
    expect(error?.headers?.get('retry-after')).toBeNull()
    expect(calls).toBe(1)
  })

  it('a wait past a minute in retry-after-ms only is not made a retry-after to Codex (which would wait it 5 times)', async () => {
    targets = [responsesTarget('relay', 'gpt-5', upstream.origin)]
    answer = limited('Rate limited', {'retry-after-ms': '3600000'})
    const res = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: {'content-type': 'application/json', originator: 'codex_exec', authorization: 'Bearer gw-key'},
      body: JSON.stringify({model: 'gpt-5', input: 'hi'}),
    })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after-ms')).toBe('3600000')
    expect(res.headers.get('retry-after')).toBeNull()
    expect(calls).toBe(1)
  })

  it("a chat relay's retry-after-ms of an hour: x-should-retry: false beside it, and the OpenAI SDK asks once (it slept the hour on retry-after-ms alone)", async () => {
    targets = [chatTarget('relay', 'sim-pro', upstream.origin)]
    answer = limited('Rate limited', {'retry-after-ms': '3600000'})
    const slept = cutWaits(3_600_000)
    const error = await askChat()
    expect(error).toBeInstanceOf(OpenAI.RateLimitError)
    expect(error?.headers?.get('x-should-retry')).toBe('false')
    expect(error?.headers?.get('retry-after-ms')).toBe('3600000')
    expect(error?.headers?.get('retry-after')).toBeNull()
    expect(slept).toEqual([])
    expect(calls).toBe(1)
  })

  it("a Gemini client: Google's body as it came and no header (Gemini CLI reads RetryInfo from the body)", async () => {
    targets = [geminiTarget()]
    const body = google('37s', '37.5s')
    answer = {status: 429, body}
    const res = await fetch(`${gateway.url}/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: 'POST',
      headers: {'content-type': 'application/json', 'x-goog-api-key': 'gw-key'},
      body: JSON.stringify({contents: [{role: 'user', parts: [{text: 'hi'}]}]}),
    })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBeNull()
    expect(await res.text()).toBe(body)
  })
})

describe('a RetryInfo past a minute, translated', () => {
  it("Google's hour-long RetryInfo to the Anthropic SDK: x-should-retry: false, one request (retry-after: 3600 had it retry twice on its own backoff)", async () => {
    targets = [{...geminiTarget(), translate: true}]
    answer = {status: 429, body: google('3600s', '3600s')}
    const error = await askClaude()
    expect(error).toBeInstanceOf(Anthropic.RateLimitError)
    expect(error?.headers?.get('x-should-retry')).toBe('false')
    expect(error?.headers?.get('retry-after')).toBeNull()
    expect(error?.message).toContain('Please retry in 3600s')
    expect(calls).toBe(1)
  })
})

describe('a wait past a minute up to 5: retry-after to a client that waits it, nothing to Codex and Claude Code', () => {
  const gemini = (): ProxyTarget[] => [{...geminiTarget(), translate: true}]
  const GEMINI_ANSWER = JSON.stringify({
    candidates: [{content: {role: 'model', parts: [{text: 'done'}]}, finishReason: 'STOP'}],
    usageMetadata: {promptTokenCount: 1, candidatesTokenCount: 1},
  })

  it("Google's RetryInfo of 61 s, then the answer: the OpenAI SDK waits the 61 s and gets it (x-should-retry: false had it throw the first 429)", async () => {
    targets = gemini()
    then = [{status: 429, body: google('61s', '61s')}]
    answer = {status: 200, body: GEMINI_ANSWER}
    const slept = cutWaits(61_000)
    const chat = await new OpenAI({baseURL: `${gateway.url}/v1`, apiKey: 'gw-key'}).chat.completions.create({
      model: 'sim-pro',
      messages: [{role: 'user', content: 'hi'}],
    })
    expect(chat.choices[0]?.message.content).toBe('done')
    expect(slept).toEqual([61_000])
    expect(calls).toBe(2)
  })

  it('Codex gets neither header: it would wait 61 s 5 times, and without retry-after ends the turn saying the 429', async () => {
    targets = gemini()
    answer = {status: 429, body: google('61s', '61s')}
    const res = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: {'content-type': 'application/json', originator: 'codex_exec', authorization: 'Bearer gw-key'},
      body: JSON.stringify({model: 'gpt-5', input: 'hi'}),
    })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBeNull()
    expect(res.headers.get('x-should-retry')).toBeNull()
    expect(calls).toBe(1)
  })

  it('Claude Code gets neither: it ends the request at once on a retry-after past 60 s, and retries on its own backoff without one (2.1.328)', async () => {
    targets = [messagesTarget('relay', 'claude-sonnet-4-5', upstream.origin)]
    const body = rateLimitError('Rate limited. Please try again in 1m5s.')
    answer = {status: 429, body}
    const request = {model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{role: 'user', content: 'hi'}]}
    const res = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: claudeCodeHeaders(),
      body: JSON.stringify(request),
    })
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBeNull()
    expect(res.headers.get('x-should-retry')).toBeNull()
    expect(await res.text()).toBe(body)
    // (the Anthropic SDK's own client: retry-after, which it honours below 60 s only, backing off on its own)
    const error = await askClaude(0)
    expect(error?.headers?.get('retry-after')).toBe('65')
    expect(error?.headers?.get('x-should-retry')).toBeNull()
  })
})

describe('a 200 whose body is an error named by a string code, translated', () => {
  const said = (code: string, message: string) =>
    JSON.stringify({error: {code, message, type: 'new_api_error'}})
  const relay = (): ProxyTarget[] => [{...chatTarget('relay', 'sim-pro', upstream.origin), translate: true}]

  it.each([
    ['model_not_found', 'The model `x` does not exist', Anthropic.NotFoundError, 404],
    ['invalid_api_key', 'Incorrect API key provided', Anthropic.AuthenticationError, 401],
    [
      'context_length_exceeded',
      "This model's maximum context length is 4096 tokens",
      Anthropic.BadRequestError,
      400,
    ],
    ['weird_failure', 'Something broke', Anthropic.InternalServerError, 502],
  ] as const)('%s to the Anthropic SDK: %s, the words kept', async (code, message, type, status) => {
    targets = relay()
    answer = {status: 200, body: said(code, message)}
    const error = await askClaude(0)
    expect(error).toBeInstanceOf(type)
    expect(error?.status).toBe(status)
    expect(error?.message).toContain(message)
  })

  it('rate_limit_exceeded to the Anthropic SDK: a 429 with the wait its words state', async () => {
    targets = relay()
    answer = {status: 200, body: said('rate_limit_exceeded', 'Rate limit reached. Please try again in 20s.')}
    const error = await askClaude(0)
    expect(error).toBeInstanceOf(Anthropic.RateLimitError)
    expect(error?.headers?.get('retry-after')).toBe('20')
  })

  it('insufficient_quota: a 429 no SDK retries (one request), and its code to a Responses client (Codex reads it)', async () => {
    targets = relay()
    answer = {status: 200, body: said('insufficient_quota', 'You exceeded your current quota')}
    const error = await askClaude()
    expect(error).toBeInstanceOf(Anthropic.RateLimitError)
    expect(error?.headers?.get('x-should-retry')).toBe('false')
    expect(calls).toBe(1)
    const responses = await new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: 'gw-key',
      maxRetries: 0,
    }).responses
      .create({model: 'sim-pro', input: 'hi'})
      .then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof OpenAI.APIError>,
      )
    expect(responses).toBeInstanceOf(OpenAI.RateLimitError)
    expect(responses?.code).toBe('insufficient_quota')
  })

  it.each([
    [
      'a chat stream',
      'model_not_found',
      () => `data: ${said('model_not_found', 'No such model: sim-pro')}\n\n`,
    ],
    [
      'a chat stream',
      'invalid_api_key',
      () => `data: ${said('invalid_api_key', 'Incorrect API key provided')}\n\n`,
    ],
    [
      'a Responses stream',
      'model_not_found',
      () =>
        `event: response.failed\ndata: ${JSON.stringify({
          type: 'response.failed',
          response: {id: 'r', status: 'failed', error: {code: 'model_not_found', message: 'No such model'}},
        })}\n\n`,
    ],
  ])(
    "%s's first event naming %s on the first of two targets: the second's answer, the first's breaker not told",
    async (_, code, sse) => {
      const breaker = new CircuitBreaker('relayA')
      const first: ProxyTarget =
        _ === 'a chat stream'
          ? {...chatTarget('relayA', 'sim-pro', upstream.origin), translate: true, breaker}
          : {...responsesTarget('relayA', 'gpt-5', upstream.origin), translate: true, breaker}
      targets = [first, {...chatTarget('relayB', 'sim-pro', other.origin), translate: true}]
      answer = {status: 200, sse: true, body: sse()}
      expect(await streamedText()).toBe('done')
      expect([calls, otherCalls]).toEqual([1, 1])
      expect(breaker.snapshot()).toMatchObject({state: 'closed', consecutiveFailures: 0})
      expect(gateway.results[0]).toMatchObject({status: 200, provider: 'relayB', fallback: true})
      expect(String(gateway.results[0]?.error)).toContain(
        code === 'model_not_found' ? 'No such model' : 'Incorrect API key',
      )
    },
  )

  it("a client's model typo on targets that pass the client's model: its 404 at once, every time, and no breaker opens (rv-mends #2)", async () => {
    const breaker = new CircuitBreaker('relayA')
    // (two relays that take the client's model, as a target with no `model` passes it)
    const relayA: ProxyTarget = {
      ...chatTarget('relayA', '', upstream.origin),
      model: undefined,
      translate: true,
      breaker,
    }
    targets = [relayA, {...chatTarget('relayB', '', other.origin), model: undefined, translate: true}]
    answer = {
      status: 200,
      sse: true,
      body: `data: ${said('model_not_found', 'The model `claude-sonet-4` does not exist')}\n\n`,
    }
    for (let k = 0; k < 5; k++) {
      const error = await claude(0)
        .messages.create({
          model: 'claude-sonet-4',
          max_tokens: 64,
          stream: true,
          messages: [{role: 'user', content: 'hi'}],
        })
        .then(
          async (stream) => {
            for await (const _ of stream) void _
          },
          (e: unknown) => e as InstanceType<typeof Anthropic.APIError>,
        )
      expect(error).toBeInstanceOf(Anthropic.NotFoundError)
      expect(error?.message).toContain('claude-sonet-4')
    }
    // one call a request, the second relay never asked
    expect([calls, otherCalls]).toEqual([5, 0])
    expect(breaker.snapshot()).toMatchObject({state: 'closed', consecutiveFailures: 0})
    // a correct request on a route whose only target is relayA (it once got a 503: circuit-broken)
    targets = [{...relayA, provider: {...relayA.provider, baseUrl: other.origin}}]
    expect(await streamedText()).toBe('done')
  })

  it("a chat stream's first chunk naming model_not_found, the last target: a 404 to the Anthropic SDK's stream", async () => {
    targets = relay()
    answer = {status: 200, sse: true, body: `data: ${said('model_not_found', 'No such model: sim-pro')}\n\n`}
    const error = await askClaude(0, true)
    expect(error).toBeInstanceOf(Anthropic.NotFoundError)
    expect(error?.message).toContain('No such model: sim-pro')
  })
})
