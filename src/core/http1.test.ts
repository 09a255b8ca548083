import {createServer, type Server} from 'node:http'
import {afterEach, describe, expect, it} from 'vitest'

import {freePort} from '../../test/helpers/cli.js'
import {exchange, readAnswer} from './http1.js'

const bytes = (text: string) => Buffer.from(text, 'latin1')
const TIMEOUTS = {connect: 2_000, headers: 2_000, body: 2_000}
let server: Server | undefined

afterEach(async () => {
  server?.closeAllConnections()
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  server = undefined
})

async function serve(handler: Parameters<typeof createServer>[1]): Promise<number> {
  const port = await freePort()
  server = createServer(handler)
  await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', () => resolve()))
  return port
}

describe('readAnswer', () => {
  it('waits for the whole body a content-length announces, and keeps the headers', () => {
    const whole =
      'HTTP/1.1 200 OK\r\nContent-Length: 15\r\nX-Note: a:b\r\nSet: 1\r\nset: 2\r\n\r\n{"status":"ok"}'
    expect(readAnswer(bytes(whole.slice(0, 20)), false)).toBeUndefined()
    expect(readAnswer(bytes(whole.slice(0, -3)), false)).toBeUndefined()
    expect(readAnswer(bytes(whole.slice(0, -3)), true)).toBeUndefined()
    const answer = readAnswer(bytes(whole), false)!
    expect(answer.status).toBe(200)
    expect(answer.body.toString()).toBe('{"status":"ok"}')
    expect(answer.headers).toEqual({'content-length': '15', 'x-note': 'a:b', set: '1, 2'})
  })

  it('joins a chunked body, and reads to the end of the connection without a length', () => {
    const chunked =
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n4\r\n{"st\r\nb\r\natus":"ok"}\r\n0\r\n\r\n'
    expect(readAnswer(bytes(chunked.slice(0, 60)), false)).toBeUndefined()
    expect(readAnswer(bytes(chunked), false)!.body.toString()).toBe('{"status":"ok"}')
    const open = 'HTTP/1.0 503 Busy\r\n\r\n{"status":"ok"}'
    expect(readAnswer(bytes(open), false)).toBeUndefined()
    expect(readAnswer(bytes(open), true)).toMatchObject({status: 503})
  })

  it('refuses what is not HTTP/1.x', () => {
    expect(() => readAnswer(bytes('SSH-2.0-OpenSSH\r\n\r\n'), true)).toThrow(/not HTTP/)
    expect(() => readAnswer(bytes('HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n{}'), false)).toThrow(
      /content-length/,
    )
    expect(() => readAnswer(bytes('HTTP/1.1 200 OK\r\nno colon\r\n\r\n'), false)).toThrow(/header/)
  })
})

describe('exchange (one request to the daemon on its own connection)', () => {
  it('sends the method, target, headers and body, and reads a chunked answer', async () => {
    const seen: string[] = []
    const port = await serve((req, res) => {
      let body = ''
      req.on('data', (c: Buffer) => (body += c.toString()))
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${req.headers.host} ${req.headers['content-type']} ${body}`)
        res.writeHead(201, {'content-type': 'application/json', 'x-request-id': 'r1'})
        res.write('{"ok":')
        setTimeout(() => res.end('true}'), 20)
      })
    })
    const answer = await exchange(port, {
      method: 'POST',
      target: '/api/keys/issue?x=1',
      headers: {'content-type': 'application/json'},
      payload: Buffer.from('{"a":1}'),
      timeouts: TIMEOUTS,
    })
    expect(seen).toEqual([`POST /api/keys/issue?x=1 127.0.0.1:${port} application/json {"a":1}`])
    expect(answer.status).toBe(201)
    expect(answer.headers['x-request-id']).toBe('r1')
    expect(JSON.parse(answer.body.toString())).toEqual({ok: true})
  })

  it('rejects with the code the CLI words: refused, no answer in time, stopped mid-answer, aborted', async () => {
    await expect(exchange(await freePort(), {target: '/', timeouts: TIMEOUTS})).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    })
    const silent = await serve(() => {})
    await expect(
      exchange(silent, {target: '/', timeouts: {...TIMEOUTS, headers: 100}}),
    ).rejects.toMatchObject({code: 'HEADERS_TIMEOUT'})
    server!.closeAllConnections()
    await new Promise<void>((resolve) => server!.close(() => resolve()))
    const stalled = await serve((_req, res) => {
      res.writeHead(200, {'content-length': '100'})
      res.write('{"partial":')
    })
    await expect(exchange(stalled, {target: '/', timeouts: {...TIMEOUTS, body: 100}})).rejects.toMatchObject({
      code: 'BODY_TIMEOUT',
    })
    const controller = new AbortController()
    const pending = exchange(stalled, {target: '/', signal: controller.signal, timeouts: TIMEOUTS})
    controller.abort(new Error('stop'))
    await expect(pending).rejects.toThrow('stop')
  })

  it('stops reading an answer larger than allowed', async () => {
    const port = await serve((_req, res) => res.end('x'.repeat(10_000)))
    await expect(exchange(port, {target: '/', timeouts: TIMEOUTS, maxBytes: 1_000})).rejects.toMatchObject({
      code: 'ANSWER_TOO_LARGE',
    })
  })
})
