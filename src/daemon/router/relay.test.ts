/**
 * The pass-through relay on the wire (a chat client, an upstream body the test pushes, in this
 * process): the chunks of one tick go out as one chunk of the client's body, in order, and a
 * later tick's chunks are never held for the next ones; the usage tap reads every byte; an error
 * or a client that leaves in the middle of a tick's chunks, and a slow client, behave as when
 * each chunk was written as it came.
 */
import type {IncomingMessage, Server, ServerResponse} from 'node:http'
import {createServer, request} from 'node:http'
import type {AddressInfo} from 'node:net'
import {performance} from 'node:perf_hooks'
import {Readable} from 'node:stream'
import type {Dispatcher} from 'undici'
import {afterEach, describe, expect, it} from 'vitest'

import type {ProxyResult} from './proxy-types.js'
import {recordSocketWrites} from './proxy-fixture.js'
import {relay} from './relay.js'

const event = (content: string): string =>
  `data: ${JSON.stringify({id: 'c1', choices: [{index: 0, delta: {content}, finish_reason: null}]})}\n\n`
const USAGE = `data: ${JSON.stringify({id: 'c1', choices: [], usage: {prompt_tokens: 3, completion_tokens: 7}})}\n\n`
const DONE = 'data: [DONE]\n\n'

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

interface Run {
  /** The upstream body: each `push` is one 'data' event of the relay. */
  body: Readable
  result: ProxyResult
  /** The socket writes to the client, in order (each as text). */
  writes: string[]
  /** The client's body so far. */
  received: () => string
  /** Resolves with the relay's return once it settled. */
  relayed: Promise<unknown>
  /** Resolves when the client's answer ended (or broke). */
  answered: Promise<void>
  /** The client's response, to pause or destroy. */
  client: Promise<IncomingMessage>
}

const servers: Array<Server> = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

/** A server whose one answer is `relay` of a body the test pushes, and a client that asks it. */
async function start(options: {readClient?: boolean} = {}): Promise<Run> {
  const body = new Readable({read() {}})
  const writes: string[] = []
  const result: ProxyResult = {
    status: 0,
    provider: 'up',
    model: 'm',
    requestedModel: 'm',
    fallback: false,
    stream: false,
    usage: null,
    latencyMs: 0,
    ttfbMs: null,
    error: null,
    requestId: '',
    clientAborted: false,
    attempts: [],
  }
  let relayed!: Promise<unknown>
  const server = createServer((req, res: ServerResponse) => {
    recordSocketWrites(res, writes)
    const upstream = {
      statusCode: 200,
      headers: {'content-type': 'text/event-stream', 'x-request-id': 'up-1'},
      body,
    } as unknown as Dispatcher.ResponseData
    const clientGone = {aborted: false}
    res.on('close', () => {
      if (!res.writableFinished) clientGone.aborted = true
    })
    relayed = relay(
      {
        res,
        family: 'chat',
        result,
        started: performance.now(),
        addedUsage: false,
        timeouts: {connectMs: 2_000, firstByteMs: 2_000, idleMs: 2_000},
        clientGone,
      },
      upstream,
      200,
      {provider: {name: 'up', family: 'chat', baseUrl: 'http://127.0.0.1:9'} as never},
      undefined,
    )
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  let text = ''
  let onResponse!: (res: IncomingMessage) => void
  const client = new Promise<IncomingMessage>((resolve) => (onResponse = resolve))
  const answered = new Promise<void>((resolve) => {
    const req = request(
      {host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', agent: false},
      (res) => {
        onResponse(res)
        if (options.readClient !== false)
          res.on('data', (c: Buffer) => {
            text += c.toString()
          })
        res.on('end', resolve)
        res.on('error', () => resolve())
        res.on('close', resolve)
      },
    )
    req.on('error', () => resolve())
    req.end('{}')
  })
  await client
  // the relay reads the body from here on (its 'data' listener is on)
  await tick()
  return {
    body,
    result,
    writes,
    received: () => text,
    relayed: (async () => {
      await tick()
      return relayed
    })(),
    answered,
    client,
  }
}

/** Waits until `check` holds, a tick at a time (at most ~2 s). */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 1))
  expect(check()).toBe(true)
}

/** The chunks of the client's chunked body in the socket writes (their data, in order). */
function bodyChunks(writes: string[]): string[] {
  const wire = writes.join('')
  const chunked = wire.slice(wire.indexOf('\r\n\r\n') + 4)
  const chunks: string[] = []
  for (let at = 0; at < chunked.length;) {
    const eol = chunked.indexOf('\r\n', at)
    const size = parseInt(chunked.slice(at, eol), 16)
    if (size === 0) break
    chunks.push(chunked.slice(eol + 2, eol + 2 + size))
    at = eol + 2 + size + 2
  }
  return chunks
}

describe('pass-through stream relay', () => {
  it("writes one tick's chunks as one chunk of the body, in order, and the tap reads them all", async () => {
    const run = await start()
    const events = ['a', 'b', 'c', 'd', 'e'].map(event)
    // the usage chunk cut in two, its halves in two 'data' events of the same tick
    for (const e of [...events, USAGE.slice(0, 40), USAGE.slice(40), DONE]) run.body.push(e)
    run.body.push(null)
    await run.answered
    await run.relayed
    const sent = events.join('') + USAGE + DONE
    expect(run.received()).toBe(sent)
    expect(bodyChunks(run.writes)).toEqual([sent])
    expect(run.result).toMatchObject({status: 200, stream: true, error: null})
    expect(run.result.usage).toMatchObject({inputTokens: 3, outputTokens: 7})
  })

  it("sends each tick's chunks before the next tick's come, and times the first byte by the first", async () => {
    const run = await start()
    run.body.push(event('one'))
    run.body.push(event('two'))
    const firstPushed = performance.now()
    // the next reads come only once the client has the last: a batch held past its tick hangs here
    await until(() => run.received().includes('two'))
    const firstWrite = run.result.ttfbMs
    expect(firstWrite).not.toBeNull()
    run.body.push(event('three'))
    await until(() => run.received().includes('three'))
    run.body.push(USAGE)
    run.body.push(DONE)
    run.body.push(null)
    await run.answered
    await run.relayed
    expect(run.received()).toBe(event('one') + event('two') + event('three') + USAGE + DONE)
    expect(bodyChunks(run.writes)).toEqual([event('one') + event('two'), event('three'), USAGE + DONE])
    // the row's first byte is the first tick's write, not a later one's
    expect(run.result.ttfbMs).toBe(firstWrite)
    expect(run.result.ttfbMs!).toBeLessThanOrEqual(performance.now() - firstPushed + 50)
    expect(run.result.usage).toMatchObject({inputTokens: 3, outputTokens: 7})
  })

  it("writes a tick's chunks before an upstream error in the same tick, then the error event", async () => {
    const run = await start()
    run.body.push(event('one'))
    run.body.push(event('two'))
    run.body.push(event('three'))
    // the error in the same tick as the chunks (a parser error in the read that brought them)
    run.body.emit('error', new Error('socket hang up'))
    await run.answered
    await run.relayed
    const text = run.received()
    expect(text.startsWith(event('one') + event('two') + event('three') + 'data: {"error":')).toBe(true)
    expect(text).toContain('stream broke after the first byte: socket hang up')
    expect(run.result).toMatchObject({broken: true, clientAborted: false})
    expect(run.result.error).toContain('stream broke after the first byte')
  })

  it("drops a tick's chunks once the client left, as before: the row says so and the body is let go", async () => {
    const run = await start()
    run.body.push(event('one'))
    await until(() => run.received().includes('one'))
    ;(await run.client).destroy()
    await run.answered
    await new Promise((resolve) => setTimeout(resolve, 20))
    run.body.push(event('two'))
    run.body.push(event('three'))
    await run.relayed
    expect(run.result).toMatchObject({clientAborted: true, error: 'client closed the connection'})
    expect(run.body.destroyed).toBe(true)
    expect(run.writes.join('')).not.toContain('two')
  })

  it('pauses the upstream for a slow client (no unbounded buffering), then relays every byte in order', async () => {
    const run = await start({readClient: false})
    const client = await run.client
    client.pause()
    const size = 64 * 1024
    const piece = (i: number): string => `data: ${String(i).padStart(8, '0')}${'x'.repeat(size - 16)}\n\n`
    let pushed = 0
    // four reads a tick until the relay pauses its upstream
    while (!run.body.isPaused() && pushed < 1024) {
      for (let i = 0; i < 4; i++) run.body.push(piece(pushed++))
      await tick()
    }
    expect(run.body.isPaused()).toBe(true)
    // the socket's and the kernel's buffers, not the whole stream: far fewer than the 64 MB allowed
    expect(pushed).toBeLessThan(512)
    let text = ''
    client.on('data', (c: Buffer) => (text += c.toString()))
    client.resume()
    run.body.push(DONE)
    run.body.push(null)
    await run.answered
    await run.relayed
    expect(text.length).toBe(pushed * size + DONE.length)
    expect(text.endsWith(DONE)).toBe(true)
    expect(run.result).toMatchObject({status: 200, error: null})
    for (let i = 0; i < pushed; i++)
      expect(text.slice(i * size + 6, i * size + 14)).toBe(String(i).padStart(8, '0'))
  })
})
