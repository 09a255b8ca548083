/**
 * The wait a 429 states in its body alone, as the client's SDK reads it (waits61): passed through
 * untranslated, the Anthropic and OpenAI SDKs get `retry-after` from Google's RetryInfo or from the
 * words ("Please try again in 20s"), the body's bytes as they came; a wait past a minute,
 * RetryInfo's too, `x-should-retry: false` rather than a `retry-after` the Anthropic SDK ignores and
 * the OpenAI SDK and Codex wait out; a Gemini client
 * Google's body alone, which Gemini CLI reads. And a 200 whose body is an error named by a string
 * code (OpenRouter, new-api, one-api) gets the status that code means, not a 502. The clients are
 * the official SDKs, in front of a scripted upstream.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {
  askMessages,
  chatTarget,
  messagesTarget,
  ProxyGateway,
  responsesTarget,
  startUpstream,
} from './proxy-fixture.js'

/** What the scripted upstream answers, and how often it was asked. */
let answer: {status: number; body: string; headers?: Record<string, string>; sse?: boolean}
let calls = 0
let upstream: Upstream
let targets: ProxyTarget[] = []
const gateway = new ProxyGateway({route: () => ({targets})})

beforeAll(async () => {
  upstream = await startUpstream((_req, res) => {
    calls++
    res.writeHead(answer.status, {
      'content-type': answer.sse ? 'text/event-stream' : 'application/json',
      ...answer.headers,
    })
    res.end(answer.body)
  })
  await gateway.listen()
})
afterEach(() => {
  calls = 0
  gateway.results.length = 0
})
afterAll(async () => {
  upstream.close()
  await gateway.close()
})

const geminiTarget = (): ProxyTarget => ({
  provider: {name: 'up-gemini', family: 'gemini', baseUrl: upstream.origin, credential: {secret: 'g-key'}},
  model: 'gemini-2.5-flash',
})

/** Claude Code's SDK (`retries` as it is told: 2 by default). */
const claude = (maxRetries = 2) => new Anthropic({baseURL: gateway.url, apiKey: 'gw-key', maxRetries})
/** The error Claude Code's SDK throws on a request, streamed or not (undefined: none). */
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

describe('a 429 passed through whose body alone states its wait', () => {
  it("Claude Code's SDK on a Messages relay whose words say the wait: retry-after, the body's bytes as they came", async () => {
    targets = [messagesTarget('relay', 'claude-sonnet-4-5', upstream.origin)]
    const body = JSON.stringify({
      type: 'error',
      error: {type: 'rate_limit_error', message: 'Rate limited. Please try again in 20s.'},
    })
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

  it('a RetryInfo of an hour that is no daily quota: x-should-retry: false, and the SDK asks once (on retry-after: 3600 it waited the hour)', async () => {
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
  it("Google's hour-long RetryInfo to Claude Code's SDK: x-should-retry: false, one request (retry-after: 3600 had it retry twice on its own backoff)", async () => {
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
  ] as const)('%s to Claude Code: %s, the words kept', async (code, message, type, status) => {
    targets = relay()
    answer = {status: 200, body: said(code, message)}
    const error = await askClaude(0)
    expect(error).toBeInstanceOf(type)
    expect(error?.status).toBe(status)
    expect(error?.message).toContain(message)
  })

  it('rate_limit_exceeded to Claude Code: a 429 with the wait its words state', async () => {
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

  it("a chat stream's first chunk naming model_not_found: a 404 to Claude Code's stream", async () => {
    targets = relay()
    answer = {status: 200, sse: true, body: `data: ${said('model_not_found', 'No such model: sim-pro')}\n\n`}
    const error = await askClaude(0, true)
    expect(error).toBeInstanceOf(Anthropic.NotFoundError)
    expect(error?.message).toContain('No such model: sim-pro')
  })
})
