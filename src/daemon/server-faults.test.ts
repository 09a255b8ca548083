/**
 * What a hostile or broken client sees at the socket (issue 14): requests Node's HTTP parser
 * refuses get a JSON error, and the simulator's control endpoints follow the gateway's Origin rule.
 */
import {connect} from 'node:net'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'

import {freePort, tempHome} from '../../test/helpers/cli.js'
import {startSim} from '../sim/server.js'
import {StateStore} from '../store/state.js'
import {KeyIndex} from '../gateway/keys.js'
import {gatewayRoutes} from './lifecycle.js'
import type {GatewayContext, RunningServer} from './server.js'
import {listen} from './server.js'

let server: RunningServer | undefined
let cleanup: () => void = () => undefined
let saved: string | undefined

beforeEach(() => {
  const t = tempHome()
  cleanup = t.cleanup
  saved = process.env.GWCTL_HOME
  process.env.GWCTL_HOME = t.home
})

afterEach(async () => {
  await server?.stop(0)
  server = undefined
  if (saved === undefined) delete process.env.GWCTL_HOME
  else process.env.GWCTL_HOME = saved
  cleanup()
})

async function start(): Promise<number> {
  const port = await freePort()
  const store = await StateStore.open(join(process.env.GWCTL_HOME!, 'state.json'))
  const context: GatewayContext = {
    store,
    index: new KeyIndex(store.data),
    port,
    version: 'test',
    startedAt: Date.now(),
    log: () => undefined,
    touch: () => undefined,
  }
  server = await listen(gatewayRoutes(), context, port)
  return port
}

/** Sends raw bytes on a new connection; resolves to everything the server answered. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')))
    socket.on('end', () => resolve(answer))
    socket.on('error', reject)
    socket.write(bytes)
  })
}

const bodyOf = (answer: string): unknown => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))

describe('requests the HTTP parser refuses', () => {
  it('answer 400 or 431 with a JSON error, and the gateway serves the next request', async () => {
    const port = await start()
    const cases = [
      `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Bad: a\u0000b\r\n\r\n`,
      `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
    ]
    for (const request of cases) {
      const answer = await raw(port, request)
      expect(answer).toMatch(/^HTTP\/1\.1 400 /)
      // in the shape of the entrance the request line names (issue 29)
      expect(bodyOf(answer)).toMatchObject({type: 'error', error: {type: 'invalid_request_error'}})
    }
    const big = await raw(
      port,
      `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    )
    expect(big).toMatch(/^HTTP\/1\.1 431 /)
    expect(bodyOf(big)).toMatchObject({error: {code: 'headers_too_large'}})
    // a path `new URL` would read as a host (`//`) is a 404 in JSON, not a closed socket
    const slashes = await raw(port, `GET // HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)
    expect(slashes).toMatch(/^HTTP\/1\.1 404 /)
    expect(bodyOf(slashes)).toMatchObject({error: {code: 'not_found'}})
    const health = await fetch(`http://127.0.0.1:${port}/health`)
    expect(health.status).toBe(200)
  })
})

describe('issue 29, item 7: edges of the HTTP layer', () => {
  it('a 405 to a chunked body (malformed after the answer) is the only answer on that socket', async () => {
    const port = await start()
    for (const connection of ['Connection: close\r\n', '']) {
      const answer = await raw(
        port,
        `GET /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nTransfer-Encoding: chunked\r\n${connection}\r\nzz\r\n{}\r\n0\r\n\r\n`,
      )
      expect(answer).toMatch(/^HTTP\/1\.1 405 /)
      expect(answer.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1)
    }
  })

  it('every early answer to a malformed chunked body (405, 404, the management 405, no key) is the only answer on its socket', async () => {
    const port = await start()
    const cases: Array<[string, string, RegExp]> = [
      ['GET', '/v1/chat/completions', /^HTTP\/1\.1 405 /],
      ['POST', '/nope', /^HTTP\/1\.1 404 /],
      ['DELETE', '/health', /^HTTP\/1\.1 405 /],
      ['POST', '/api/keys', /^HTTP\/1\.1 405 /],
      // read before the key is checked: the body's own 400, in the entrance's shape
      ['POST', '/v1/messages', /^HTTP\/1\.1 400 /],
      ['POST', '/v1beta/models/g:generateContent', /^HTTP\/1\.1 400 /],
    ]
    for (const [method, path, status] of cases)
      for (const connection of ['Connection: close\r\n', '']) {
        const answer = await raw(
          port,
          `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nTransfer-Encoding: chunked\r\n${connection}\r\nzz\r\n{}\r\n0\r\n\r\n`,
        )
        expect(answer, `${method} ${path} ${connection}`).toMatch(status)
        expect(answer.match(/HTTP\/1\.1 \d{3} /g), `${method} ${path} ${connection}`).toHaveLength(1)
        expect(bodyOf(answer)).toBeTruthy()
      }
  })

  it('Host: an empty one and an HTTP/1.0 request without one are 400 in JSON; two equal ones, or a loopback one after another, are refused', async () => {
    const port = await start()
    const host = `Host: 127.0.0.1:${port}\r\n`
    for (const request of [
      `GET /health HTTP/1.1\r\nHost: \r\nConnection: close\r\n\r\n`,
      `GET /health HTTP/1.0\r\n\r\n`,
    ]) {
      const answer = await raw(port, request)
      expect(answer).toMatch(/^HTTP\/1\.1 400 /)
      expect(bodyOf(answer)).toMatchObject({error: {code: 'missing_host'}})
    }
    for (const hosts of [host + host, `Host: evil.example\r\n${host}`]) {
      const answer = await raw(port, `GET /health HTTP/1.1\r\n${hosts}Connection: close\r\n\r\n`)
      expect(answer).toMatch(/^HTTP\/1\.1 400 /)
      expect(bodyOf(answer)).toMatchObject({error: {code: 'bad_host'}})
    }
    const gemini = await raw(
      port,
      `POST /v1beta/models/g:generateContent HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
    )
    expect(gemini).toMatch(/^HTTP\/1\.1 400 /)
    expect(bodyOf(gemini)).toMatchObject({error: {code: 400, status: 'INVALID_ARGUMENT'}})
  })

  it('431 (headers too large) is in the shape of the entrance the path names', async () => {
    const port = await start()
    const big = (path: string) =>
      raw(port, `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    const messages = await big('/v1/messages')
    expect(messages).toMatch(/^HTTP\/1\.1 431 /)
    expect(bodyOf(messages)).toMatchObject({type: 'error', error: {type: 'invalid_request_error'}})
    const gemini = await big('/v1beta/models/g:generateContent')
    expect(gemini).toMatch(/^HTTP\/1\.1 431 /)
    expect(bodyOf(gemini)).toMatchObject({error: {code: 431, status: 'FAILED_PRECONDITION'}})
    const chat = await big('/v1/chat/completions')
    expect(bodyOf(chat)).toMatchObject({error: {type: 'invalid_request_error', code: 'headers_too_large'}})
  })

  it('a request without Host gets a 400 with a JSON error in the shape of its path', async () => {
    const port = await start()
    const answer = await raw(
      port,
      `POST /v1/messages HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`,
    )
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(bodyOf(answer)).toMatchObject({type: 'error', error: {type: 'invalid_request_error'}})
  })

  it('two Host headers are refused, even when the first is loopback', async () => {
    const port = await start()
    const answer = await raw(
      port,
      `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nHost: evil.example\r\nConnection: close\r\n\r\n`,
    )
    expect(answer).toMatch(/^HTTP\/1\.1 400 /)
    expect(bodyOf(answer)).toMatchObject({error: {code: 'bad_host'}})
    const one = await raw(
      port,
      `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`,
    )
    expect(one).toMatch(/^HTTP\/1\.1 200 /)
  })
})

describe('the simulator control endpoints', () => {
  it('refuse cross-origin and `null` origins with 403, and take same-origin and Origin-less requests', async () => {
    const sim = await startSim({port: 0, host: '127.0.0.1'})
    try {
      for (const origin of ['http://evil.example', 'null']) {
        for (const [method, path] of [
          ['POST', '/__sim/faults'],
          ['GET', '/__sim/requests'],
        ]) {
          const res = await fetch(sim.origin + path, {
            method,
            headers: {origin, 'content-type': 'application/json'},
            body: method === 'POST' ? '{"fault":"status=500"}' : undefined,
          })
          expect(res.status).toBe(403)
          expect(((await res.json()) as {error: {type: string}}).error.type).toBe('permission_error')
        }
      }
      expect(sim.faults.take('POST', '/v1/chat/completions')).toBeUndefined() // no fault was queued
      const same = await fetch(sim.origin + '/__sim/requests', {headers: {origin: sim.origin}})
      expect(same.status).toBe(200)
      const none = await fetch(sim.origin + '/__sim/requests')
      expect(none.status).toBe(200)
    } finally {
      await sim.close()
    }
  })
})

describe('a log store that cannot write', () => {
  it('leaves /health and /api/status at 200 with a `degraded` reason, logged once, cleared when writes work again', async () => {
    const {LogStore} = await import('../store/log-store.js')
    const opened: Array<Awaited<ReturnType<typeof LogStore.open>>> = []
    const open = LogStore.open.bind(LogStore)
    const spy = vi.spyOn(LogStore, 'open').mockImplementation(async (path, options) => {
      const store = await open(path, options)
      opened.push(store)
      return store
    })
    const {runDaemon} = await import('./lifecycle.js')
    const port = await freePort()
    const lines: string[] = []
    const stop = new AbortController()
    const running = runDaemon({port, version: 'test', signal: stop.signal, log: (l) => lines.push(l)})
    const base = `http://127.0.0.1:${port}`
    let health: Response | undefined
    for (let i = 0; i < 100 && !health; i++) {
      health = await fetch(`${base}/health`).catch(() => undefined)
      if (!health) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(((await health!.json()) as {degraded?: string}).degraded).toBeUndefined()
    // SQLite's page limit makes every write fail with SQLITE_FULL, as a full disk does
    const db = (opened[0] as unknown as {db: {pragma(source: string, options?: object): unknown}}).db
    db.pragma(`max_page_count = ${Number(db.pragma('page_count', {simple: true}))}`)
    const row = {
      time: Date.now(),
      agentId: 'a',
      keyPrefix: 'gw-x',
      policyId: 'default',
      entrance: 'chat' as const,
      requestedModel: 'm',
      provider: 'p',
      model: 'm',
      status: 200,
      fallback: false,
      inputTokens: 1,
      outputTokens: 1,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      reasoningTokens: 0,
      latencyMs: 1,
      ttfbMs: 1,
      error: null,
      project: null,
      requestId: 'r',
    }
    for (let i = 0; i < 50; i++) opened[0].append({...row, error: 'x'.repeat(400)})
    await new Promise((resolve) => setTimeout(resolve, 50))
    for (const path of ['/health', '/api/status']) {
      const after = await fetch(base + path)
      expect(after.status).toBe(200)
      const body = (await after.json()) as {status: string; degraded?: string}
      expect(body.status).toBe('ok')
      expect(body.degraded).toMatch(/^log store: could not write a batch: database or disk is full \(since /)
    }
    expect(lines.filter((l) => l.includes('error: log store: could not write a batch'))).toHaveLength(1)

    db.pragma('max_page_count = 1000000')
    opened[0].append(row)
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(((await (await fetch(`${base}/health`)).json()) as {degraded?: string}).degraded).toBeUndefined()
    expect(lines.filter((l) => l.includes('log store: writing again'))).toHaveLength(1)
    stop.abort()
    await running
    spy.mockRestore()
  })
})
