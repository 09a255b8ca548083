import {EventEmitter} from 'node:events'
import type {IncomingMessage, ServerResponse} from 'node:http'
import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {Readable} from 'node:stream'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {freePort, tempHome} from '../../test/helpers/cli.js'
import {StateStore} from '../store/state.js'
import {KeyIndex, generateKey} from '../gateway/keys.js'
import {gatewayRoutes} from './lifecycle.js'
import type {GatewayContext, RunningServer} from './server.js'
import {createHandler, listen} from './server.js'

/** A response object that records what the handler writes (no socket). */
class FakeResponse extends EventEmitter {
  statusCode = 200
  headers: Record<string, string | number> = {}
  body = ''
  headersSent = false
  writableFinished = false
  writeHead(status: number, headers: Record<string, string | number> = {}) {
    this.statusCode = status
    for (const [k, v] of Object.entries(headers)) this.headers[k.toLowerCase()] = v
    this.headersSent = true
    return this
  }
  setHeader(name: string, value: string) {
    this.headers[name.toLowerCase()] = value
  }
  write(chunk: string | Buffer) {
    this.headersSent = true
    this.body += String(chunk)
    return true
  }
  end(chunk?: string | Buffer) {
    if (chunk) this.body += String(chunk)
    this.headersSent = true
    this.writableFinished = true
    this.emit('finish')
    this.emit('close')
  }
  destroy() {
    this.emit('close')
  }
}

interface Injected {
  status: number
  headers: Record<string, string | number>
  body: any
  text: string
}

async function setup(port: number) {
  const store = await StateStore.open(join(process.env.GWCTL_HOME!, 'state.json'))
  await store.save()
  const lines: string[] = []
  const context: GatewayContext = {
    store,
    index: new KeyIndex(store.data),
    port,
    version: 'test',
    startedAt: Date.now(),
    log: (line) => lines.push(line),
    touch: () => undefined,
  }
  return {context, lines}
}

function injector(context: GatewayContext) {
  const handler = createHandler(gatewayRoutes(), context)
  return async (
    method: string,
    url: string,
    options: {headers?: Record<string, string>; body?: unknown} = {},
  ): Promise<Injected> => {
    const raw =
      options.body === undefined
        ? ''
        : typeof options.body === 'string'
          ? options.body
          : JSON.stringify(options.body)
    const req = Object.assign(Readable.from(raw ? [Buffer.from(raw)] : []), {
      method,
      url,
      headers: {host: `127.0.0.1:${context.port}`, ...lowerKeys(options.headers ?? {})},
    }) as unknown as IncomingMessage
    const res = new FakeResponse()
    await handler(req, res as unknown as ServerResponse)
    let body: unknown
    try {
      body = JSON.parse(res.body)
    } catch {
      body = undefined
    }
    return {status: res.statusCode, headers: res.headers, body, text: res.body}
  }
}

function lowerKeys(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]))
}

const person = {employeeName: 'Ada', employeeContact: 'ada@example.com'}
const json = {'content-type': 'application/json'}

/** Each test of the calling suite runs with its own GWCTL_HOME; servers it starts are stopped after it. */
function isolate(): {servers: RunningServer[]} {
  const servers: RunningServer[] = []
  let cleanup: () => void = () => undefined
  let saved: string | undefined
  beforeEach(() => {
    const t = tempHome()
    cleanup = t.cleanup
    saved = process.env.GWCTL_HOME
    process.env.GWCTL_HOME = t.home
  })
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.stop(0)
    if (saved === undefined) delete process.env.GWCTL_HOME
    else process.env.GWCTL_HOME = saved
    cleanup()
  })
  return {servers}
}

describe('gateway handler (no socket)', () => {
  isolate()

  it('answers /health, /help and 404/405 as JSON', async () => {
    const {context} = await setup(40001)
    const call = injector(context)
    const health = await call('GET', '/health')
    expect(health.status).toBe(200)
    expect(Object.keys(health.body).sort()).toEqual(['status', 'timestamp'])
    expect(health.body.status).toBe('ok')
    expect(Number.isInteger(health.body.timestamp)).toBe(true)
    const help = await call('GET', '/help')
    expect(help.headers['content-type']).toMatch(/text\/html/)
    for (const path of [
      '/health',
      '/api/keys/issue',
      '/api/agents',
      '/api/keys',
      '/v1/chat/completions',
      '/v1/responses',
      '/v1/messages',
      ':generateContent',
    ]) {
      expect(help.text).toContain(path)
    }
    expect(help.text).toContain('curl ')
    const missing = await call('GET', '/nope')
    expect(missing.status).toBe(404)
    expect(missing.body.error.code).toBe('not_found')
    const gemini404 = await call('GET', '/v1beta/other')
    expect(gemini404.body.error).toMatchObject({code: 404, status: 'NOT_FOUND'})
    const wrongMethod = await call('GET', '/api/keys/issue')
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.headers.allow).toBe('POST')
  })

  it('issues per spec 2.3, returns the key once, and lists prefixes only', async () => {
    const {context, lines} = await setup(40002)
    const call = injector(context)
    const issued = await call('POST', '/api/keys/issue', {
      headers: json,
      body: {...person, agentName: 'laptop', agentType: 'claude_code', sourceTool: 'test'},
    })
    expect(issued.status).toBe(200)
    expect(Object.keys(issued.body).sort()).toEqual(
      ['agentId', 'createdAt', 'employeeId', 'keyId', 'keyPrefix', 'keyValue', 'policyId'].sort(),
    )
    expect(issued.body.policyId).toBe('claude_code_default')
    const key = issued.body.keyValue as string
    const keys = await call('GET', '/api/keys')
    expect(keys.body.keys[0]).toMatchObject({keyPrefix: issued.body.keyPrefix, status: 'active'})
    expect(keys.text).not.toContain(key)
    expect(keys.text).not.toContain(context.store.data.keys[0].hash)
    const agents = await call('GET', '/api/agents')
    expect(agents.body.agents[0]).toMatchObject({
      agentId: issued.body.agentId,
      keyPrefix: issued.body.keyPrefix,
      policyId: 'claude_code_default',
      route: {family: 'messages', targets: []},
      enabled: false,
      lastSeenAt: null,
    })
    expect(readFileSync(context.store.path, 'utf8')).not.toContain(key)
    expect(lines.join('\n')).not.toContain(key)
  })

  it('refuses bad issue bodies with 400 naming fields, and needs JSON', async () => {
    const {context} = await setup(40003)
    const call = injector(context)
    const missing = await call('POST', '/api/keys/issue', {headers: json, body: {agentType: 'codex'}})
    expect(missing.status).toBe(400)
    expect(missing.body.error.message).toBe(
      'Missing required fields: employeeName, employeeContact, agentName.',
    )
    const sub = await call('POST', '/api/keys/issue', {
      headers: json,
      body: {...person, agentName: 'a', agentType: 'codex_subagent'},
    })
    expect(sub.status).toBe(400)
    expect(sub.body.error.message).toContain('parentAgentId')
    const bad = await call('POST', '/api/keys/issue', {headers: json, body: '{"agentName":'})
    expect(bad.status).toBe(400)
    expect(bad.body.error.code).toBe('invalid_json')
    const form = await call('POST', '/api/keys/issue', {
      headers: {'content-type': 'application/x-www-form-urlencoded'},
      body: 'agentName=x',
    })
    expect(form.status).toBe(400)
    expect(form.body.error.code).toBe('invalid_content_type')
  })

  it('refuses foreign Host names and cross-site Origins, and sends no CORS headers', async () => {
    const {context} = await setup(40004)
    const call = injector(context)
    const rebinding = await call('GET', '/api/agents', {headers: {host: 'attacker.example:40004'}})
    expect(rebinding.status).toBe(403)
    expect(rebinding.body.error.code).toBe('bad_host')
    expect((await call('GET', '/health', {headers: {host: '127.0.0.1:1'}})).status).toBe(403)
    expect((await call('GET', '/health', {headers: {host: 'localhost:40004'}})).status).toBe(200)
    const csrf = await call('POST', '/api/keys/issue', {
      headers: {...json, origin: 'https://evil.example'},
      body: {...person, agentName: 'a', agentType: 'codex'},
    })
    expect(csrf.status).toBe(403)
    expect(csrf.body.error.code).toBe('bad_origin')
    expect(context.store.data.agents).toHaveLength(0)
    const same = await call('GET', '/api/keys', {headers: {origin: 'http://127.0.0.1:40004'}})
    expect(same.status).toBe(200)
    expect(Object.keys(same.headers).filter((h) => h.startsWith('access-control-'))).toEqual([])
  })
})

/** Each entrance with each credential form it accepts. */
const ENTRANCES: Array<{
  name: string
  method: string
  path: string
  family: 'chat' | 'responses' | 'messages' | 'gemini'
  forms: Array<(key: string) => {headers?: Record<string, string>; query?: string}>
}> = [
  {
    name: 'chat',
    method: 'POST',
    path: '/v1/chat/completions',
    family: 'chat',
    forms: [(k) => ({headers: {authorization: `Bearer ${k}`}})],
  },
  {
    name: 'responses',
    method: 'POST',
    path: '/v1/responses',
    family: 'responses',
    forms: [(k) => ({headers: {authorization: `Bearer ${k}`}})],
  },
  {
    name: 'messages',
    method: 'POST',
    path: '/v1/messages?beta=true',
    family: 'messages',
    forms: [(k) => ({headers: {'x-api-key': k}}), (k) => ({headers: {authorization: `Bearer ${k}`}})],
  },
  {
    name: 'count_tokens',
    method: 'POST',
    path: '/v1/messages/count_tokens',
    family: 'messages',
    forms: [(k) => ({headers: {'x-api-key': k}}), (k) => ({headers: {authorization: `Bearer ${k}`}})],
  },
  {
    name: 'generateContent',
    method: 'POST',
    path: '/v1beta/models/gemini-2.5-flash:generateContent',
    family: 'gemini',
    forms: [
      (k) => ({headers: {'x-vendor-api-key': k}}),
      (k) => ({headers: {'x-goog-api-key': k}}),
      (k) => ({query: `key=${k}`}),
      (k) => ({headers: {authorization: `Bearer ${k}`}}),
    ],
  },
  {
    name: 'streamGenerateContent',
    method: 'POST',
    path: '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    family: 'gemini',
    forms: [(k) => ({headers: {'x-goog-api-key': k}}), (k) => ({query: `key=${k}`})],
  },
  {
    name: 'models',
    method: 'GET',
    path: '/v1/models',
    family: 'chat',
    forms: [(k) => ({headers: {authorization: `Bearer ${k}`}})],
  },
]

function expectShape(family: string, body: any, status: number): void {
  if (family === 'messages') {
    expect(body.type).toBe('error')
    expect(typeof body.error.type).toBe('string')
    expect(typeof body.error.message).toBe('string')
  } else if (family === 'gemini') {
    expect(body.error.code).toBe(status)
    expect(typeof body.error.status).toBe('string')
  } else {
    expect(typeof body.error.message).toBe('string')
    expect(typeof body.error.type).toBe('string')
  }
}

describe('gateway server (real socket)', () => {
  const {servers} = isolate()

  async function start() {
    const port = await freePort()
    const {context, lines} = await setup(port)
    servers.push(await listen(gatewayRoutes(), context, port))
    const base = `http://127.0.0.1:${port}`
    const issue = async (agentName: string, agentType = 'generic_agent') => {
      const res = await fetch(`${base}/api/keys/issue`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({...person, agentName, agentType}),
      })
      return {status: res.status, headers: res.headers, body: (await res.json()) as any}
    }
    const call = async (
      e: (typeof ENTRANCES)[number],
      cred: {headers?: Record<string, string>; query?: string},
    ) => {
      const url = base + e.path + (cred.query ? (e.path.includes('?') ? '&' : '?') + cred.query : '')
      const res = await fetch(url, {
        method: e.method,
        headers: {...json, ...cred.headers},
        body: e.method === 'POST' ? JSON.stringify({model: 'm', messages: []}) : undefined,
      })
      return {status: res.status, body: (await res.json()) as any}
    }
    return {base, context, lines, issue, call, port}
  }

  it('authenticates every entrance with every credential form: valid -> 503 no provider, forged -> 400, missing/unknown/revoked -> 401', async () => {
    const {issue, call, lines} = await start()
    const first = await issue('agent-1')
    expect(first.status).toBe(200)
    const other = first.body.keyValue as string
    const key = (await issue('agent-2')).body.keyValue as string
    for (const e of ENTRANCES) {
      for (const form of e.forms) {
        const ok = await call(e, form(key))
        expect(ok.status, `${e.name} ${JSON.stringify(form('K'))}`).toBe(503)
        expectShape(e.family, ok.body, 503)
        expect(JSON.stringify(ok.body)).toMatch(/[Nn]o provider is configured/)

        const forged = await call(e, form(key.slice(0, 20) + (key[20] === 'a' ? 'b' : 'a') + key.slice(21)))
        expect(forged.status, e.name).toBe(400)
        expectShape(e.family, forged.body, 400)

        const unknown = await call(e, form(generateKey()))
        expect(unknown.status, e.name).toBe(401)
        expectShape(e.family, unknown.body, 401)
      }
      const none = await call(e, {})
      expect(none.status, e.name).toBe(401)
      expectShape(e.family, none.body, 401)
    }
    // a key issued for another agent does not revoke this one
    expect((await call(ENTRANCES[0], ENTRANCES[0].forms[0](other))).status).toBe(503)
    expect(lines.join('\n')).not.toContain(key)
  })

  it('rotates: after a new issue for the same agent the old key gets 401 at once; within 5 s -> 429 with Retry-After', async () => {
    const {issue, call, context} = await start()
    const first = await issue('laptop', 'codex')
    const again = await issue('laptop', 'codex')
    expect(again.status).toBe(429)
    expect(Number(again.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(again.body.error.code).toBe('rate_limited')
    // move the last issue back in time instead of sleeping 5 s
    context.store.data.agents[0].lastIssuedAtMs! -= 6000
    const second = await issue('laptop', 'codex')
    expect(second.status).toBe(200)
    expect(second.body.agentId).toBe(first.body.agentId)
    const responses = ENTRANCES[1]
    const revoked = await call(responses, responses.forms[0](first.body.keyValue))
    expect(revoked.status).toBe(401)
    // a rotated key points at the newer one: issuing yet another would revoke the key in use
    expect(revoked.body.error.message).toBe(
      "The gateway key was revoked (a newer key was issued for this agent). Use that key (`gwctl key list` shows its prefix; `gwctl agents enable AGENT --rotate` rewrites a bound agent's config).",
    )
    expect((await call(responses, responses.forms[0](second.body.keyValue))).status).toBe(503)
  })

  it('answers a model name that is not validly percent-encoded with 400 in the Gemini shape, not 500', async () => {
    const {issue, base, lines} = await start()
    const key = (await issue('a')).body.keyValue as string
    const res = await fetch(`${base}/v1beta/models/%E0%A4%A:generateContent`, {
      method: 'POST',
      headers: {'x-goog-api-key': key, ...json},
      body: '{}',
    })
    expect(res.status).toBe(400)
    const body = (await res.json()) as any
    expect(body.error.status).toBe('INVALID_ARGUMENT')
    expect(body.error.message).toMatch(/not validly percent-encoded/)
    expect(lines.join('\n')).not.toMatch(/error in POST/)
  })

  it('limits body size and answers malformed JSON on an entrance with 400 in its shape', async () => {
    const {issue, base} = await start()
    const key = (await issue('a')).body.keyValue as string
    const bad = await fetch(`${base}/v1/messages`, {
      method: 'POST',
      headers: {'x-api-key': key, ...json},
      body: '{"model":',
    })
    expect(bad.status).toBe(400)
    expect(((await bad.json()) as any).type).toBe('error')
    const big = await fetch(`${base}/api/keys/issue`, {
      method: 'POST',
      headers: json,
      body: 'x'.repeat(100_000),
    })
    expect(big.status).toBe(413)
  })
})

describe('official SDKs read the gateway errors in their own protocol', () => {
  const {servers} = isolate()

  it('openai, @anthropic-ai/sdk and @google/genai get typed errors with the gateway message', async () => {
    const port = await freePort()
    const {context} = await setup(port)
    servers.push(await listen(gatewayRoutes(), context, port))
    const base = `http://127.0.0.1:${port}`
    const res = await fetch(`${base}/api/keys/issue`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({...person, agentName: 'sdk', agentType: 'generic_agent'}),
    })
    const key = ((await res.json()) as any).keyValue as string

    const {default: OpenAI} = await import('openai')
    const openai = new OpenAI({apiKey: key, baseURL: `${base}/v1`, maxRetries: 0})
    const chat = await openai.chat.completions
      .create({model: 'm', messages: [{role: 'user', content: 'hi'}]})
      .catch((e) => e)
    expect(chat).toBeInstanceOf(OpenAI.APIError)
    expect(chat.status).toBe(503)
    expect(chat.message).toContain('No provider is configured')
    const unknown = await new OpenAI({apiKey: generateKey(), baseURL: `${base}/v1`, maxRetries: 0}).responses
      .create({model: 'm', input: 'hi'})
      .catch((e) => e)
    expect(unknown).toBeInstanceOf(OpenAI.AuthenticationError)

    const {default: Anthropic} = await import('@anthropic-ai/sdk')
    const anthropic = new Anthropic({apiKey: key, baseURL: base, maxRetries: 0})
    const msg = await anthropic.messages
      .create({model: 'm', max_tokens: 8, messages: [{role: 'user', content: 'hi'}]})
      .catch((e) => e)
    expect(msg).toBeInstanceOf(Anthropic.APIError)
    expect(msg.status).toBe(503)
    expect(msg.error).toMatchObject({type: 'error', error: {type: 'api_error'}})
    const forged = await new Anthropic({
      apiKey: key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a'),
      baseURL: base,
      maxRetries: 0,
    }).messages
      .create({model: 'm', max_tokens: 8, messages: [{role: 'user', content: 'hi'}]})
      .catch((e) => e)
    expect(forged).toBeInstanceOf(Anthropic.BadRequestError)

    const {GoogleGenAI, ApiError} = await import('@google/genai')
    const genai = new GoogleGenAI({apiKey: key, httpOptions: {baseUrl: base}})
    const gem = await genai.models
      .generateContent({model: 'gemini-2.5-flash', contents: 'hi'})
      .catch((e) => e)
    expect(gem).toBeInstanceOf(ApiError)
    expect(gem.status).toBe(503)
    expect(gem.message).toContain('No provider is configured')
  })
})

describe('graceful stop', () => {
  isolate()

  it('lets an in-flight request finish, refuses new connections, and cuts requests that outlive the bound', async () => {
    const port = await freePort()
    const {context} = await setup(port)
    let release: () => void = () => undefined
    const routes = [
      {
        method: 'GET',
        path: '/slow',
        family: 'chat' as const,
        management: true,
        maxBodyBytes: 1024,
        handler: async (request: any) => {
          await new Promise<void>((resolve) => (release = resolve))
          request.res.writeHead(200, {'content-type': 'text/plain'})
          request.res.end('done')
        },
      },
      {
        method: 'GET',
        path: '/hang',
        family: 'chat' as const,
        management: true,
        maxBodyBytes: 1024,
        handler: () => new Promise<void>(() => undefined),
      },
    ]
    const server = await listen(routes, context, port)
    const slow = fetch(`http://127.0.0.1:${port}/slow`).then(async (r) => [r.status, await r.text()])
    await new Promise((r) => setTimeout(r, 100))
    const stopping = server.stop(10_000)
    await new Promise((r) => setTimeout(r, 100))
    await expect(fetch(`http://127.0.0.1:${port}/slow`)).rejects.toThrow()
    release()
    expect(await slow).toEqual([200, 'done'])
    await stopping

    const port2 = await freePort()
    const server2 = await listen(routes, {...context, port: port2}, port2)
    const hung = fetch(`http://127.0.0.1:${port2}/hang`).catch((e: Error) => e)
    await new Promise((r) => setTimeout(r, 100))
    await server2.stop(200)
    expect(await hung).toBeInstanceOf(Error)
  })
})

describe('isoTime', () => {
  it('writes the same time as toISOString', async () => {
    const {isoTime} = await import('./server.js')
    const base = Date.UTC(2026, 10, 23, 11, 17, 18)
    for (const ms of [
      0,
      -1,
      5,
      59,
      999,
      base,
      base + 7,
      base + 42,
      base + 999,
      base + 1000,
      base + 61_001,
      253402300799999,
    ])
      expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString())
  })
})
