import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {GwError} from '../core/errors.js'
import {AuthError, NotFoundError, UpstreamError} from '../core/errors.js'
import type {Simulator} from '../sim/server.js'
import {startSim} from '../sim/server.js'
import {PlatformClient, backoffDelay, errorFromResponse, isLocalGateway, parseRetryAfter} from './http.js'
import {videos} from './videos.js'

const KEY = 'sk-test-very-secret-key-0001'
const BODY = {model: 'Alpha2.6-T2V', prompt: 'a fox'}

describe('PlatformClient against the simulator', () => {
  let sim: Simulator
  let client: PlatformClient
  beforeEach(async () => {
    sim = await startSim({taskSeconds: 1, apiKey: KEY})
    client = new PlatformClient({baseUrl: sim.baseUrl, apiKey: KEY, backoffMs: 1})
  })
  afterEach(async () => {
    await sim.close()
  })

  const count = (method: string) =>
    sim.requests.filter((r) => r.method === method && r.path.endsWith('/videos')).length

  it('retries a 429 with Retry-After, even for POST, and then succeeds', async () => {
    sim.faults.add({status: 429, retryAfter: '0', method: 'POST', path: '/videos'})
    const task = await videos(client).create(BODY)
    expect(task.status).toBe('queued')
    expect(count('POST')).toBe(2)
  })

  it('retries 503 for GET until it answers', async () => {
    const {id} = await videos(client).create(BODY)
    sim.faults.add({status: 503, method: 'GET', times: 2})
    const task = await videos(client).get(id)
    expect(task.id).toBe(id)
    expect(sim.requests.filter((r) => r.method === 'GET').length).toBe(3)
  })

  it('does not retry a POST answered 502 (the create may have happened)', async () => {
    sim.faults.add({status: 502, method: 'POST'})
    const error = await videos(client)
      .create(BODY)
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(UpstreamError)
    expect((error as UpstreamError).status).toBe(502)
    expect((error as UpstreamError).exitCode).toBe(5)
    expect(count('POST')).toBe(1)
  })

  it('refuses an id of dots (URL would resolve it to another endpoint) and sends nothing', async () => {
    for (const id of ['..', '.'])
      await expect(videos(client).get(id)).rejects.toMatchObject({exitCode: 2, code: 'invalid_id'})
    await expect(client.request('DELETE', '/multimodal/gamma/videos/%2E%2e')).rejects.toMatchObject({
      code: 'invalid_id',
    })
    expect(sim.requests).toHaveLength(0)
    expect(client.url('/videos/a..b').pathname).toBe('/api/v1/videos/a..b')
  })

  it('never repeats its API key when the platform quotes it in an error', async () => {
    sim.faults.add({status: 401, method: 'GET', message: `Incorrect API key provided: ${KEY}.`})
    const error = (await videos(client)
      .get('task_x')
      .catch((e: unknown) => e)) as AuthError
    expect(error).toBeInstanceOf(AuthError)
    expect(error.message).toBe('The platform answered 401: Incorrect API key provided: [redacted].')
    expect(JSON.stringify(error.toJSON())).not.toContain(KEY)
  })

  it('gives up after the last attempt and keeps the upstream status and message', async () => {
    sim.faults.add({status: 504, method: 'GET', times: 0, message: 'gateway timeout upstream'})
    const error = (await videos(client)
      .get('task_x')
      .catch((e: unknown) => e)) as UpstreamError
    expect(error.status).toBe(504)
    expect(error.message).toContain('gateway timeout upstream')
    expect(error.hint).toContain('try again in a while')
    expect(sim.requests.filter((r) => r.method === 'GET').length).toBe(4)
  })

  it('does not wait for a Retry-After beyond 60 s', async () => {
    sim.faults.add({status: 429, retryAfter: '3600', method: 'POST'})
    const error = (await videos(client)
      .create(BODY)
      .catch((e: unknown) => e)) as UpstreamError
    expect(error.code).toBe('rate_limited')
    expect(error.hint).toContain('run the command again')
    expect(count('POST')).toBe(1)
  })

  it('maps 401 to AuthError (exit 4) without the key anywhere', async () => {
    const bad = new PlatformClient({baseUrl: sim.baseUrl, apiKey: 'sk-wrong-secret-9999', backoffMs: 1})
    const error = (await videos(bad)
      .get('task_x')
      .catch((e: unknown) => e)) as AuthError
    expect(error).toBeInstanceOf(AuthError)
    expect(error.exitCode).toBe(4)
    expect(error.hint).toContain('gwctl config set api-key')
    const text = JSON.stringify(error.toJSON()) + error.message + (error.stack ?? '')
    expect(text).not.toContain('sk-wrong-secret-9999')
    expect(sim.requests.at(-1)?.headers.authorization).toBe('[redacted]')
  })

  it('maps 404 to NotFoundError (exit 7) and 400 to an upstream error carrying the message', async () => {
    const missing = await videos(client)
      .get('task_never')
      .catch((e: unknown) => e)
    expect(missing).toBeInstanceOf(NotFoundError)
    expect((missing as NotFoundError).exitCode).toBe(7)
    const bad = (await videos(client)
      .create({model: 'Nope'})
      .catch((e: unknown) => e)) as UpstreamError
    expect(bad.status).toBe(400)
    expect(bad.message).toContain('unknown model: Nope')
  })

  it('keeps the key out of network errors', async () => {
    const url = sim.baseUrl
    await sim.close()
    const gone = new PlatformClient({baseUrl: url, apiKey: KEY, backoffMs: 1, attempts: 2})
    const error = (await videos(gone)
      .get('task_x')
      .catch((e: unknown) => e)) as GwError
    expect(error.code).toBe('network')
    expect(JSON.stringify(error.toJSON()) + error.message).not.toContain(KEY)
    sim = await startSim({taskSeconds: 1})
  })
})

describe('retry helpers', () => {
  it.each([
    [{'retry-after': '2'}, 2000],
    [{'retry-after': '0.5'}, 500],
    [{'retry-after-ms': '150'}, 150],
    [{'retry-after': 'soon'}, undefined],
    [{}, undefined],
  ])('parseRetryAfter(%j) = %s', (headers, ms) => {
    expect(parseRetryAfter(headers)).toBe(ms)
  })

  it('parses an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(parseRetryAfter({'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT'}, now)).toBe(5000)
  })

  it('backs off with full jitter, capped at 8 s', () => {
    expect(backoffDelay(0, 400, () => 1)).toBe(400)
    expect(backoffDelay(3, 400, () => 0.5)).toBe(1600)
    expect(backoffDelay(10, 400, () => 1)).toBe(8000)
    expect(backoffDelay(5, 400, () => 0)).toBe(0)
  })
})

describe('errorFromResponse: the one place that words HTTP errors', () => {
  it('names who answered', () => {
    expect(errorFromResponse(500, {error: {message: 'x'}}).message).toBe('The platform answered 500: x')
    expect(errorFromResponse(500, {error: {message: 'x'}}, {}, {answeredBy: 'gateway'}).message).toBe(
      'The local gateway answered 500: x',
    )
  })

  it('a malformed gateway key (400 invalid_api_key) is an auth error, exit 4', () => {
    const error = errorFromResponse(
      400,
      {error: {message: 'The gateway key is malformed', code: 'invalid_api_key'}},
      {},
      {answeredBy: 'gateway'},
    )
    expect(error).toBeInstanceOf(AuthError)
    expect(error.exitCode).toBe(4)
    expect(error.hint).toContain('gwctl key issue')
  })

  it('a 404 for an endpoint below a base URL without /api/v1 hints at the base URL', () => {
    const error = errorFromResponse(
      404,
      {error: {message: 'no such endpoint: POST /videos'}},
      {},
      {
        baseUrl: 'http://host:9',
      },
    )
    expect(error).toMatchObject({code: 'no_such_endpoint', exitCode: 7})
    expect(error.hint).toContain('http://host:9/api/v1')
    // a task that is not there, below a good base URL, is just not found
    const task = errorFromResponse(
      404,
      {error: {message: 'task not found'}},
      {},
      {baseUrl: 'http://h/api/v1'},
    )
    expect(task.code).toBe('not_found')
  })

  it("a 404 for an endpoint below the gateway's bare origin hints at /v1", () => {
    const answered = {answeredBy: 'gateway' as const}
    const bare = errorFromResponse(
      404,
      {error: {message: 'No such endpoint: GET /models. See GET /help.'}},
      {},
      {...answered, baseUrl: 'http://127.0.0.1:41531'},
    )
    expect(bare).toMatchObject({code: 'no_such_endpoint', exitCode: 7})
    expect(bare.hint).toBe(
      "No such endpoint below http://127.0.0.1:41531: the gateway's base URL ends in /v1 (e.g. http://127.0.0.1:41531/v1). Fix it with GWCTL_BASE_URL or `gwctl config set base-url`.",
    )
    // below /v1 the 404 is about something else (a model the route does not know): no base-URL hint
    const model = errorFromResponse(
      404,
      {error: {message: 'model "x" does not exist'}},
      {},
      {...answered, baseUrl: 'http://127.0.0.1:41531/v1'},
    )
    expect(model.code).toBe('not_found')
  })

  it('a 504 after the user own --timeout says so; a 429 says how long Retry-After asks', () => {
    const late = errorFromResponse(504, {error: {message: 'no first token'}}, {}, {userTimeoutSeconds: 1})
    expect(late.hint).toContain('Your --timeout 1')
    expect(errorFromResponse(504, {}).hint).toContain('failed on its side')
    expect(errorFromResponse(429, {}, {'retry-after': '120'}).hint).toContain('wait 120 s')
    expect(errorFromResponse(429, {}).hint).toContain('wait a little')
  })
})

describe('isLocalGateway', () => {
  it('is a loopback base on the gateway port, not any local server', () => {
    expect(isLocalGateway('http://127.0.0.1:4317/v1')).toBe(true)
    expect(isLocalGateway('http://localhost:4317')).toBe(true)
    expect(isLocalGateway('http://127.0.0.1:8000/v1')).toBe(false)
    expect(isLocalGateway('https://api.example.com:4317/v1')).toBe(false)
  })
})
