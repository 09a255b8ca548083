import {request} from 'node:http'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {freePort, tempHome} from '../../test/helpers/cli.js'
import type {GatewayEvent} from '../gateway/events.js'
import {followEvents, streamEvents} from '../services/gateway-events.js'
import {StateStore} from '../store/state.js'
import {emitGatewayEvent, sseFrame} from './events.js'
import {KeyIndex} from '../gateway/keys.js'
import {gatewayRoutes} from './lifecycle.js'
import type {GatewayContext, RunningServer} from './server.js'
import {listen} from './server.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function gateway(port?: number): Promise<{server: RunningServer; port: number}> {
  const t = tempHome()
  cleanups.push(t.cleanup)
  const store = await StateStore.open(join(t.home, 'state.json'))
  const p = port ?? (await freePort())
  const context: GatewayContext = {
    store,
    index: new KeyIndex(store.data),
    port: p,
    version: '1.2.3',
    startedAt: Date.now(),
    log: () => undefined,
    touch: () => undefined,
  }
  const server = await listen(gatewayRoutes(), context, p)
  cleanups.push(() => server.stop(0))
  return {server, port: p}
}

function rawGet(port: number, headers: Record<string, string>): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const req = request({host: '127.0.0.1', port, path: '/api/events', headers}, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c: string) => {
        body += c
        if (res.statusCode === 200) req.destroy()
      })
      res.on('close', () => resolve({status: res.statusCode ?? 0, body}))
    })
    req.on('error', reject)
    req.end()
  })
}

const entry = {
  time: 1,
  agentId: 'agt_1',
  keyPrefix: 'gw-ab',
  policyId: 'default',
  entrance: 'chat',
  requestedModel: 'm',
  provider: 'p',
  model: 'm',
  status: 200,
  fallback: false,
  inputTokens: 3,
  outputTokens: 4,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  reasoningTokens: 0,
  latencyMs: 5,
  ttfbMs: 2,
  error: null,
  project: null,
}

describe('GET /api/events', () => {
  it('streams hello, then each event as one SSE frame with JSON on one line', async () => {
    const {port} = await gateway()
    const got: GatewayEvent[] = []
    const hello: unknown[] = []
    const controller = new AbortController()
    const done = streamEvents(
      port,
      {
        onUp: (info) => {
          hello.push(info)
          emitGatewayEvent({type: 'request', entry})
          emitGatewayEvent({type: 'breaker', provider: 'p', state: 'open', retryAt: 99})
        },
        onEvent: (e) => {
          got.push(e)
          if (got.length === 2) controller.abort()
        },
      },
      controller.signal,
    )
    await done
    expect(hello).toEqual([{pid: process.pid, port, version: '1.2.3'}])
    expect(got).toEqual([
      {type: 'request', entry},
      {type: 'breaker', provider: 'p', state: 'open', retryAt: 99},
    ])
  })

  it('keeps the loopback Host and Origin rules of the management API', async () => {
    const {port} = await gateway()
    expect((await rawGet(port, {host: 'evil.example'})).status).toBe(403)
    expect((await rawGet(port, {host: `127.0.0.1:${port}`, origin: 'http://evil.example'})).status).toBe(403)
    const ok = await rawGet(port, {host: `localhost:${port}`})
    expect(ok.status).toBe(200)
    expect(ok.body).toMatch(/^id: 0\nevent: hello\ndata: \{"pid":/)
  })

  it('ends open streams when the gateway stops, so stop does not wait for them', async () => {
    const {server, port} = await gateway()
    let opened!: () => void
    const up = new Promise<void>((r) => (opened = r))
    const ended = streamEvents(port, {onUp: () => opened(), onEvent: () => undefined})
    await up
    await server.stop(60_000)
    await ended // resolves: a 60 s drain would time the test out
  })

  it('frames cannot be split by a newline inside a value', () => {
    expect(sseFrame(3, 'agent', {change: 'a\nevent: x'})).toBe(
      'id: 3\nevent: agent\ndata: {"change":"a\\nevent: x"}\n\n',
    )
  })
})

describe('followEvents', () => {
  it('says when the gateway is down and reconnects when it comes back', async () => {
    const port = await freePort()
    const log: string[] = []
    const controller = new AbortController()
    let started = false
    const following = followEvents(
      async () => port,
      {
        onUp: () => {
          log.push('up')
          emitGatewayEvent({type: 'agent', agentId: 'agt_1', change: 'enabled'})
        },
        onDown: () => {
          if (log.at(-1) !== 'down') log.push('down')
          if (!started) {
            started = true
            void gateway(port)
          }
        },
        onEvent: (e) => {
          log.push(e.type)
          controller.abort()
        },
      },
      {signal: controller.signal, retryMs: 50},
    )
    await following
    expect(log).toEqual(['down', 'up', 'agent'])
  })
})
