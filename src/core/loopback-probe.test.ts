import {createServer, type Server} from 'node:http'
import {afterEach, describe, expect, it} from 'vitest'

import {freePort} from '../../test/helpers/cli.js'
import {probeHealth} from './loopback-probe.js'

let server: Server | undefined

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  server = undefined
})

async function serve(status: number, body: string): Promise<{port: number; paths: string[]}> {
  const port = await freePort()
  const paths: string[] = []
  server = createServer((req, res) => {
    paths.push(`${req.method} ${req.url} ${req.headers.host}`)
    res.writeHead(status, {'content-type': 'application/json'})
    res.end(body)
  })
  await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', () => resolve()))
  return {port, paths}
}

describe('probeHealth (the CLI asking the local gateway whether it is there, without undici)', () => {
  it('is true for a 200 {"status":"ok"} on GET /health', async () => {
    const {port, paths} = await serve(200, '{"status":"ok","pid":1}')
    expect(await probeHealth(port)).toBe(true)
    // the daemon answers only a loopback Host naming its port
    expect(paths).toEqual([`GET /health 127.0.0.1:${port}`])
  })

  it('is false for another status, another body, or a body that is not JSON', async () => {
    expect(await probeHealth((await serve(503, '{"status":"ok"}')).port)).toBe(false)
    await new Promise<void>((resolve) => server!.close(() => resolve()))
    expect(await probeHealth((await serve(200, '{"status":"draining"}')).port)).toBe(false)
    await new Promise<void>((resolve) => server!.close(() => resolve()))
    expect(await probeHealth((await serve(200, '<html>')).port)).toBe(false)
  })

  it('is false when nothing listens on the port', async () => {
    expect(await probeHealth(await freePort())).toBe(false)
  })

  it('is false, not hanging, when the server never answers or the caller aborts', async () => {
    const port = await freePort()
    server = createServer(() => {})
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', () => resolve()))
    expect(await probeHealth(port, {timeoutMs: 100})).toBe(false)
    const controller = new AbortController()
    const pending = probeHealth(port, {signal: controller.signal, timeoutMs: 60_000})
    controller.abort()
    expect(await pending).toBe(false)
    server.closeAllConnections()
  })
})

describe('probeHealth and a chunked answer', () => {
  it('is true for a 200 {"status":"ok"} written in pieces', async () => {
    const port = await freePort()
    server = createServer((_req, res) => {
      res.writeHead(200, {'content-type': 'application/json'})
      res.write('{"status"')
      setTimeout(() => res.end(':"ok"}'), 20)
    })
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', () => resolve()))
    expect(await probeHealth(port)).toBe(true)
  })
})
