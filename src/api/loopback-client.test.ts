import {createServer} from 'node:http'
import type {Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {afterEach, describe, expect, it} from 'vitest'

import {ExitCode, GwError} from '../core/errors.js'
import {LoopbackClient} from './loopback-client.js'

describe('LoopbackClient (the management API client on node:http)', () => {
  let server: Server | undefined
  afterEach(async () => {
    server?.closeAllConnections()
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined))
    server = undefined
  })

  async function serve(handler: Parameters<typeof createServer>[1]): Promise<number> {
    server = createServer(handler)
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
    return (server!.address() as AddressInfo).port
  }

  it('sends the query and a JSON body, and parses the JSON answer', async () => {
    const seen: Array<{method?: string; url?: string; type?: string; body: string}> = []
    const port = await serve((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        seen.push({method: req.method, url: req.url, type: req.headers['content-type'], body})
        res.writeHead(200, {'content-type': 'application/json'}).end('{"ok":true,"n":2}')
      })
    })
    const client = new LoopbackClient(port)
    const got = await client.request<{ok: boolean}>('GET', '/api/logs', {
      query: {limit: 5, agent: 'a b', skip: undefined},
    })
    expect(got.body).toEqual({ok: true, n: 2})
    await client.request('POST', '/api/keys/revoke', {body: {keyId: 'k1'}})
    expect(seen).toEqual([
      {method: 'GET', url: '/api/logs?limit=5&agent=a+b', type: undefined, body: ''},
      {method: 'POST', url: '/api/keys/revoke', type: 'application/json', body: '{"keyId":"k1"}'},
    ])
  })

  it('turns an error answer into the typed error the platform client gives, naming the gateway', async () => {
    const port = await serve((req, res) => {
      const status = req.url === '/api/missing' ? 404 : 503
      res.writeHead(status, {'content-type': 'application/json', 'retry-after': '3'})
      res.end(JSON.stringify({error: {message: status === 404 ? 'no such agent' : 'log store is full'}}))
    })
    const client = new LoopbackClient(port)
    const missing = await client.request('GET', '/api/missing').catch((e: GwError) => e)
    expect(missing).toBeInstanceOf(GwError)
    expect((missing as GwError).exitCode).toBe(ExitCode.notFound)
    expect((missing as GwError).message).toBe('The local gateway answered 404: no such agent')
    const busy = (await client.request('GET', '/api/x').catch((e: GwError) => e)) as GwError
    expect(busy.message).toBe('The local gateway answered 503: log store is full')
    expect(busy.details?.status).toBe(503)
    expect(busy.details?.retry_after_seconds).toBe(3)
  })

  it('says nothing is listening (code network) when the port is closed', async () => {
    const port = await serve(() => undefined)
    server!.close()
    await new Promise((resolve) => setTimeout(resolve, 20))
    server = undefined
    const error = (await new LoopbackClient(port).request('GET', '/api/status').catch((e) => e)) as GwError
    expect(error.code).toBe('network')
    expect(error.message).toBe(`Network error: nothing is listening at http://127.0.0.1:${port}.`)
  })

  it('gives up on a daemon that accepts but never answers, after the headers timeout', async () => {
    const port = await serve(() => undefined) // never answers
    const error = (await new LoopbackClient(port)
      .request('GET', '/api/status', {headersTimeoutMs: 100})
      .catch((e) => e)) as GwError
    expect(error.code).toBe('network')
    expect(error.message).toBe(`Network error: http://127.0.0.1:${port} sent no answer in time.`)
  })

  it('is interrupted by its signal (exit 130)', async () => {
    const port = await serve(() => undefined)
    const controller = new AbortController()
    const pending = new LoopbackClient(port)
      .request('GET', '/api/status', {signal: controller.signal})
      .catch((e) => e)
    setTimeout(() => controller.abort(), 50)
    const error = (await pending) as GwError
    expect(error.exitCode).toBe(ExitCode.interrupted)
  })
})
