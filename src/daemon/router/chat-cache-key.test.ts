/**
 * Codex's `prompt_cache_key` to OpenAI's own chat completions (Responses translated to chat): the
 * key goes to `api.openai.com` and Moonshot's API, which take it, as `x-grok-conv-id` to xAI, and
 * to no other chat server (most refuse it); one
 * that refuses it anyway learns to go without. A chat client's own key, passed through, goes as it
 * came. A request whose body names no key: its session header's, else (to an upstream that routes
 * by one) a key derived from its first turn. The proxy in this process; `api.openai.com` is a scripted upstream on 127.0.0.1 (the
 * gateway's connection pool for that origin is pointed there: nothing leaves this machine).
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {headerCacheKey} from '../../protocols/cache-key.js'
import type {ProxyTarget} from './proxy.js'
import type {Refusal, Upstream} from './proxy-fixture.js'
import {CHAT_ANSWER, chatTarget, ProxyGateway, startJudgedUpstream, startUpstream} from './proxy-fixture.js'

const OPENAI = 'https://api.openai.com'
const MOONSHOT = 'https://api.moonshot.ai'
const XAI = 'https://api.x.ai'
/** The headers of each request xAI's stand-in got. */
const xaiHeaders: Array<Record<string, unknown>> = []
let xai: Upstream

const received: Buffer[] = []
let refusal: ((body: Record<string, unknown>) => Refusal | undefined) | undefined
let targets: ProxyTarget[] = []
let upstream: Upstream
let gateway: ProxyGateway

const CHAT_STREAM = `data: ${JSON.stringify({
  id: 'c',
  object: 'chat.completion.chunk',
  model: 'm',
  choices: [{index: 0, delta: {role: 'assistant', content: 'done'}, finish_reason: 'stop'}],
})}\n\ndata: [DONE]\n\n`

beforeAll(async () => {
  upstream = await startJudgedUpstream(received, (body) => refusal?.(body), {
    stream: CHAT_STREAM,
    json: CHAT_ANSWER,
  })
  xai = await startUpstream((req, res) => {
    xaiHeaders.push({...req.headers})
    res.writeHead(200, {'content-type': 'application/json'})
    res.end(CHAT_ANSWER)
  })
  gateway = new ProxyGateway({route: () => ({targets})})
  // OpenAI's and Moonshot's origins, served by the scripted upstream; xAI's by its stand-in
  const get = gateway.pools.get.bind(gateway.pools)
  gateway.pools.get = (origin, timeouts) =>
    get(
      origin === OPENAI || origin === MOONSHOT ? upstream.origin : origin === XAI ? xai.origin : origin,
      timeouts,
    )
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
  xai.close()
})

const post = (path: string, body: unknown) =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer client-key'},
    body: JSON.stringify(body),
  })

/** Codex's request, cut down: its conversation id is the cache key. */
const codex = {
  model: 'gpt-5.4',
  instructions: 'You are Codex.',
  input: [{type: 'message', role: 'user', content: [{type: 'input_text', text: 'hi'}]}],
  prompt_cache_key: 'conv-019a',
  stream: false,
}

/** A chat provider's target, translated from the Responses entrance. */
const translated = (name: string, model: string, baseUrl: string): ProxyTarget => ({
  ...chatTarget(name, model, baseUrl),
  translate: true,
})

const sent = (i: number) => JSON.parse(String(received[i])) as Record<string, unknown>

describe('prompt_cache_key to a chat upstream', () => {
  it("Codex to OpenAI's chat completions: its key goes as prompt_cache_key", async () => {
    received.length = 0
    targets = [translated('openai', 'gpt-5.4', `${OPENAI}/v1`)]
    const res = await post('/v1/responses', codex)
    expect(res.status).toBe(200)
    expect(received).toHaveLength(1)
    expect(sent(0)).toMatchObject({
      model: 'gpt-5.4',
      messages: [
        {role: 'system', content: 'You are Codex.'},
        {role: 'user', content: 'hi'},
      ],
      prompt_cache_key: 'conv-019a',
    })
  })

  it("Codex to Moonshot's (Kimi's) chat completions: its key goes as prompt_cache_key, as Kimi's own clients send it", async () => {
    received.length = 0
    targets = [translated('kimi', 'kimi-k2.6', `${MOONSHOT}/v1`)]
    expect((await post('/v1/responses', codex)).status).toBe(200)
    expect(sent(0)).toMatchObject({model: 'kimi-k2.6', prompt_cache_key: 'conv-019a'})
  })

  it("Codex to xAI: the conversation named in x-grok-conv-id (its cache's routing), no body field", async () => {
    xaiHeaders.length = 0
    targets = [translated('xai', 'grok-4.3', `${XAI}/v1`)]
    const r = await post('/v1/responses', codex)
    expect(r.status, await r.text()).toBe(200)
    expect(xaiHeaders).toHaveLength(1)
    expect(xaiHeaders[0]['x-grok-conv-id']).toBe('conv-019a')
    // a request without a key: one derived from its first turn (protocols/cache-key.ts), the same
    // on its next turn
    const {prompt_cache_key: _, ...keyless} = codex
    expect((await post('/v1/responses', keyless)).status).toBe(200)
    const turn2 = {
      ...keyless,
      input: [
        ...keyless.input,
        {type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'hello'}]},
        {type: 'message', role: 'user', content: [{type: 'input_text', text: 'again'}]},
      ],
    }
    expect((await post('/v1/responses', turn2)).status).toBe(200)
    expect(xaiHeaders[1]['x-grok-conv-id']).toMatch(/^gw-[\w-]{32}$/)
    expect(xaiHeaders[2]['x-grok-conv-id']).toBe(xaiHeaders[1]['x-grok-conv-id'])
  })

  it('Codex to another chat server: no key', async () => {
    received.length = 0
    targets = [translated('deepseek', 'deepseek-v4-flash', upstream.origin)]
    expect((await post('/v1/responses', codex)).status).toBe(200)
    expect(sent(0)).toHaveProperty('messages')
    expect(sent(0)).not.toHaveProperty('prompt_cache_key')
  })

  it("Gemini CLI (no id anywhere) to OpenAI's chat completions: a key derived from its first turn's context, kept on turn 2", async () => {
    received.length = 0
    targets = [translated('openai', 'gpt-5.4', `${OPENAI}/v1`)]
    const first = {
      role: 'user',
      parts: [{text: '<session_context>/home/u/work</session_context>'}, {text: 'hi'}],
    }
    const system = {parts: [{text: 'You are Gemini CLI.'}]}
    const path = '/v1beta/models/gemini-3.8-flash:generateContent'
    expect((await post(path, {systemInstruction: system, contents: [first]})).status).toBe(200)
    const contents = [
      first,
      {role: 'model', parts: [{text: 'hello'}]},
      {role: 'user', parts: [{text: 'again'}]},
    ]
    expect((await post(path, {systemInstruction: system, contents})).status).toBe(200)
    // another folder's conversation (the prompt alone does not tell them apart: a resumed session
    // drops it from its first turn)
    const other = {role: 'user', parts: [{text: '<session_context>/srv</session_context>'}, {text: 'hi'}]}
    expect((await post(path, {systemInstruction: system, contents: [other]})).status).toBe(200)
    const got = received.map((b) => JSON.parse(String(b)).prompt_cache_key as string)
    expect(got[0]).toMatch(/^gw-[\w-]{32}$/)
    expect(got[1]).toBe(got[0])
    expect(got[2]).toMatch(/^gw-[\w-]{32}$/)
    expect(got[2]).not.toBe(got[0])
  })

  it("OpenCode's session header to OpenAI's chat completions is the key; to another chat server none", async () => {
    received.length = 0
    const opencode = {model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{role: 'user', content: 'hi'}]}
    const withSession = (path: string, body: unknown) =>
      fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': 'client-key',
          'x-session-affinity': 'ses_1',
        },
        body: JSON.stringify(body),
      })
    targets = [translated('openai', 'gpt-5.4', `${OPENAI}/v1`)]
    expect((await withSession('/v1/messages', opencode)).status).toBe(200)
    targets = [translated('deepseek', 'deepseek-v4-flash', upstream.origin)]
    expect((await withSession('/v1/messages', opencode)).status).toBe(200)
    expect(sent(0)).toMatchObject({prompt_cache_key: headerCacheKey({'x-session-affinity': 'ses_1'})})
    expect(sent(1)).not.toHaveProperty('prompt_cache_key')
  })

  it("a key derived for OpenAI's chat completions is not sent to a fallback that does not route by one (review58)", async () => {
    received.length = 0
    // OpenAI's answers 503; the fallback, a Responses server on this machine (its cache is one
    // machine's: no key), gets the request without the key derived for OpenAI's
    refusal = (body) =>
      body.model === 'gpt-5.4'
        ? {status: 503, body: {error: {message: 'overloaded', type: 'server_error'}}}
        : undefined
    targets = [
      translated('openai', 'gpt-5.4', `${OPENAI}/v1`),
      {
        provider: {name: 'local', family: 'responses', baseUrl: upstream.origin, credential: {secret: 'k'}},
        model: 'qwen3',
        translate: true,
      },
    ]
    try {
      // (a Gemini CLI-like chat client without a key; the answer of the stand-in is chat's, which a
      // Responses decoder refuses: only what each target got matters here)
      await post('/v1/chat/completions', {model: 'gpt-5.4', messages: [{role: 'user', content: 'hi'}]})
    } finally {
      refusal = undefined
    }
    expect(received).toHaveLength(2)
    expect(sent(0).prompt_cache_key).toMatch(/^gw-[\w-]{32}$/)
    expect(sent(1).model).toBe('qwen3')
    expect(sent(1)).not.toHaveProperty('prompt_cache_key')
  })

  it('a keyless request translated to another chat server: no key derived', async () => {
    received.length = 0
    targets = [translated('deepseek', 'deepseek-v4-flash', upstream.origin)]
    const {prompt_cache_key: _, ...keyless} = codex
    expect((await post('/v1/responses', keyless)).status).toBe(200)
    expect(sent(0)).not.toHaveProperty('prompt_cache_key')
  })

  it("a chat client without a key, passed through to OpenAI's chat completions with a session header: as it came", async () => {
    received.length = 0
    targets = [chatTarget('openai', 'gpt-5.4', `${OPENAI}/v1`)]
    const body = {model: 'gpt-5.4', messages: [{role: 'user', content: 'hi'}]}
    const res = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer client-key',
        'x-session-id': 'ses_2',
      },
      body: JSON.stringify(body),
    })
    expect(res.status).toBe(200)
    expect(String(received[0])).toBe(JSON.stringify(body))
  })

  it("a chat client's own key, passed through, goes as it came", async () => {
    received.length = 0
    targets = [chatTarget('deepseek', 'deepseek-v4-flash', upstream.origin)]
    const body = {
      model: 'deepseek-v4-flash',
      messages: [{role: 'user', content: 'hi'}],
      prompt_cache_key: 'ses_abc',
    }
    expect((await post('/v1/chat/completions', body)).status).toBe(200)
    expect(String(received[0])).toBe(JSON.stringify(body))
  })

  it('refused anyway (a server behind that host that does not take it): learned away, one try', async () => {
    received.length = 0
    gateway.results.length = 0
    targets = [translated('openai-strict', 'gpt-5.4', `${OPENAI}/v1`)]
    refusal = (body) =>
      body.prompt_cache_key === undefined
        ? undefined
        : {
            status: 400,
            body: {
              error: {
                message: 'Unrecognized request argument supplied: prompt_cache_key',
                type: 'invalid_request_error',
                param: null,
                code: null,
              },
            },
          }
    try {
      expect((await post('/v1/responses', codex)).status).toBe(200)
      expect(received.map((b) => JSON.parse(String(b)).prompt_cache_key)).toEqual(['conv-019a', undefined])
      const [result] = await gateway.settled(1)
      expect(result.error).toMatch(/refused prompt_cache_key: sent again without it/)
      // the next request goes without it at once
      expect((await post('/v1/responses', codex)).status).toBe(200)
      expect(received).toHaveLength(3)
      expect(sent(2)).not.toHaveProperty('prompt_cache_key')
    } finally {
      refusal = undefined
    }
  })
})
