import {afterAll, afterEach, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import type {Simulator} from './server.js'
import {startSim} from './server.js'

describe('simulator request record', () => {
  let sim: Simulator
  beforeEach(async () => {
    sim = await startSim({})
  })
  afterEach(async () => {
    await sim.close()
  })

  it('keeps no credential: headers and the Gemini ?key= are redacted', async () => {
    const secret = 'AIza-very-secret-key-0001'
    const res = await fetch(`${sim.origin}/v1beta/models/gemini-sim:generateContent?key=${secret}&alt=json`, {
      method: 'POST',
      headers: {'content-type': 'application/json', 'x-goog-api-key': secret},
      body: JSON.stringify({contents: [{role: 'user', parts: [{text: 'hi'}]}]}),
    })
    await res.arrayBuffer()
    const listed = await (await fetch(`${sim.origin}/__sim/requests`)).text()
    expect(listed).toContain('"alt":"json"')
    expect(listed).toContain('"key":"[redacted]"')
    expect(listed).not.toContain(secret)
    expect(JSON.stringify(sim.requests)).not.toContain(secret)
  })

  it('refuses a foreign Host (DNS rebinding) and serves the loopback names', async () => {
    const {request} = await import('node:http')
    const get = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(`${sim.origin}/__sim/requests`, {headers: {host}}, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        req.on('error', reject)
        req.end()
      })
    const port = new URL(sim.origin).port
    expect(await get('evil.example')).toBe(403)
    expect(await get(`127.0.0.1.evil.example:${port}`)).toBe(403)
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`])
      expect(await get(host)).toBe(200)
  })

  it('answers a body nested 100 000 deep with a typed 400 in the route shape, and stays up', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000)
    const messages = await fetch(`${sim.origin}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: {'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01'},
      body: `{"model":"claude-sim","messages":[{"role":"user","content":${deep}}]}`,
    })
    expect(messages.status).toBe(400)
    const error = (await messages.json()) as {type: string; error: {type: string; message: string}}
    expect(error.type).toBe('error') // the Anthropic shape
    expect(error.error.type).toBe('invalid_request_error')
    expect(error.error.message).toBe('request body nests JSON deeper than 512 levels')
    const chat = await fetch(`${sim.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: {'content-type': 'application/json', authorization: 'Bearer k'},
      body: `{"model":"gpt-sim","messages":${deep}}`,
    })
    expect(chat.status).toBe(400)
    expect(((await chat.json()) as {error: {message: string}}).error.message).toContain('nests JSON deeper')
    expect((await fetch(`${sim.origin}/__sim/requests`)).status).toBe(200)
  })
})

describe('the in-stream and quota faults', () => {
  let sim: Simulator
  beforeAll(async () => {
    sim = await startSim({})
  })
  afterAll(async () => {
    await sim.close()
  })

  const ask = (path: string, body: unknown, fault: string) =>
    fetch(`${sim.origin}${path}`, {
      method: 'POST',
      headers: {'content-type': 'application/json', 'x-sim-fault': fault},
      body: JSON.stringify(body),
    })

  it("says OpenAI's insufficient_quota inside a 200 stream: Responses after response.created, chat as a data line", async () => {
    const responses = await ask(
      '/v1/responses',
      {model: 'gpt-5', input: 'hi', stream: true},
      'insufficient-quota,in-stream',
    )
    expect(responses.status).toBe(200)
    const events = [...(await responses.text()).matchAll(/^event: (.+)$/gm)].map((m) => m[1])
    expect(events).toEqual(['response.created', 'response.in_progress', 'response.failed'])
    const chat = await ask(
      '/v1/chat/completions',
      {model: 'sim-pro', messages: [{role: 'user', content: 'hi'}], stream: true},
      'insufficient-quota,in-stream',
    )
    expect(chat.status).toBe(200)
    const text = await chat.text()
    expect(JSON.parse(text.split('\n')[0].slice('data: '.length)).error).toMatchObject({
      code: 'insufficient_quota',
    })
    expect(text).toContain('data: [DONE]')
    // a request for JSON gets the status, as without it
    const json = await ask('/v1/responses', {model: 'gpt-5', input: 'hi'}, 'insufficient-quota,in-stream')
    expect(json.status).toBe(429)
  })

  it("says Google's words with the delay uncut, RetryInfo cut to whole seconds (python-genai #2114)", async () => {
    const res = await ask(
      '/v1beta/models/gemini-sim:generateContent',
      {contents: [{role: 'user', parts: [{text: 'hi'}]}]},
      'status=429,retry-delay=37.5s',
    )
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBeNull()
    const {error} = (await res.json()) as {error: {message: string; details: Array<Record<string, unknown>>}}
    expect(error.message).toMatch(
      /^You exceeded your current quota, please check your plan and billing details\./,
    )
    expect(error.message).toContain(
      '\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: gemini-2.5-flash\nPlease retry in 37.5s.',
    )
    expect(error.details.at(-1)).toEqual({
      '@type': 'type.googleapis.com/google.rpc.RetryInfo',
      retryDelay: '37s',
    })
    // (a daily quota with no delay: its limit, no retry words; a fault's own words kept)
    const day = await ask(
      '/v1/chat/completions',
      {model: 'sim-pro', messages: [{role: 'user', content: 'hi'}]},
      'status=429,per-day',
    )
    const said = ((await day.json()) as {error: {message: string}}).error.message
    expect(said).toContain('limit: 250, model: gemini-2.5-flash')
    expect(said).not.toContain('retry')
  })
})
