/**
 * A passed-through JSON answer whose client left after the upstream's headers, before the answer's
 * first byte reached it: the gateway reads the upstream's answer to its end (which the upstream
 * bills) and the 499 row holds its usage; an answer that never ends is given up at the idle
 * timeout, as before. In this process, with a scripted upstream that sends its headers, waits, then
 * sends the body (or nothing more).
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {CHAT_ANSWER_BILLED, leaveChat, ProxyGateway, startUpstream} from './proxy-fixture.js'

const ANSWER = CHAT_ANSWER_BILLED

/** Called once the upstream sent its headers. */
let headersSent: () => void = () => undefined
/**
 * What the upstream does after its headers: its body 300 ms later, nothing more, or a blank every
 * 200 ms (OpenRouter's keep-alive for an answer not streamed), within the idle timeout each.
 */
let body: 'later' | 'never' | 'trickle' | 'large' = 'later'
/** 'large': set once the upstream wrote its whole answer (30 MB, in 64 KB writes as it drains). */
let upstreamFinished = false
/** Resolved when the upstream's answer closed (ended, or its connection gone). */
let upstreamClosed: Promise<void> = Promise.resolve()
let upstream: Upstream
let target: ProxyTarget
const gateway = new ProxyGateway({
  route: () => ({
    targets: [target],
    timeouts: {connectMs: 2_000, firstByteMs: 2_000, idleMs: 1_000},
  }),
})

beforeAll(async () => {
  upstream = await startUpstream((_req, res) => {
    upstreamClosed = new Promise((resolve) => res.on('close', () => resolve()))
    res.writeHead(200, {'content-type': 'application/json'})
    res.flushHeaders()
    headersSent()
    if (body === 'later') setTimeout(() => res.end(ANSWER), 300)
    if (body === 'large') {
      upstreamFinished = false
      res.on('finish', () => (upstreamFinished = true))
      const piece = Buffer.alloc(64 * 1024, 'a')
      let left = 30 * 16
      const write = (): void => {
        while (left > 0) {
          left--
          if (left === 0) res.end(piece)
          else if (!res.write(piece)) {
            res.once('drain', write)
            return
          }
        }
      }
      write()
    }
    if (body === 'trickle') {
      const timer = setInterval(() => res.write(' '), 200)
      res.on('close', () => clearInterval(timer))
    }
  })
  target = {
    provider: {name: 'up', family: 'chat', baseUrl: upstream.origin, credential: {secret: 'k'}},
    model: 'm',
  }
  await gateway.listen()
})

afterEach(() => {
  gateway.results.length = 0
  body = 'later'
})

afterAll(async () => {
  upstream.close()
  await gateway.close()
})

/** A chat client that leaves once the upstream has sent its headers (before any byte reached it). */
const leaveAfterHeaders = (): Promise<void> =>
  leaveChat(gateway.url, new Promise<void>((resolve) => (headersSent = resolve)))

describe('a passed-through JSON answer whose client left before its first byte', () => {
  it('the 499 row holds the usage of the answer the upstream went on to send (it bills it)', async () => {
    await leaveAfterHeaders()
    const [result] = await gateway.settled(1)
    expect(result).toMatchObject({status: 499, clientAborted: true, error: 'client closed the connection'})
    expect(result!.usage).toMatchObject({inputTokens: 1200, outputTokens: 40})
  })

  it('an answer that never ends is given up at the idle timeout: a 499 row without usage', async () => {
    body = 'never'
    const started = performance.now()
    await leaveAfterHeaders()
    const [result] = await gateway.settled(1)
    expect(result).toMatchObject({status: 499, clientAborted: true})
    expect(result!.usage).toBeNull()
    // (the upstream's connection is let go, not held)
    await upstreamClosed
    expect(performance.now() - started).toBeLessThan(2_500)
  })

  it('an answer that trickles blanks is given up at the idle timeout counted from the client leaving (review72 #1)', async () => {
    body = 'trickle'
    const started = performance.now()
    await leaveAfterHeaders()
    // (each blank comes within the idle timeout: before, it was read on as long as they came, the
    // row unwritten and the upstream held)
    const closed = await Promise.race([
      upstreamClosed.then(() => 'closed'),
      new Promise((resolve) => setTimeout(() => resolve('held'), 3_000)),
    ])
    expect(closed).toBe('closed')
    const [result] = await gateway.settled(1)
    expect(result).toMatchObject({status: 499, clientAborted: true, error: 'client closed the connection'})
    expect(result!.usage).toBeNull()
    expect(performance.now() - started).toBeLessThan(2_500)
  }, 10_000)

  it('a large answer is not read on once the tap holds more than it keeps (review72, tap.ts)', async () => {
    body = 'large'
    const sent = new Promise<void>((resolve) => (headersSent = resolve))
    const controller = new AbortController()
    const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: JSON.stringify({model: 'm', messages: [{role: 'user', content: 'hi'}]}),
      signal: controller.signal,
    })
    await sent
    // the client reads 17 MB of the 30 MB answer, then leaves: past 16 MB the tap reads no usage,
    // so the other 13 MB (before: up to 16 MB more) are of no use to the row
    const reader = answer.body!.getReader()
    let read = 0
    while (read < 17 * 1024 * 1024) {
      const {value, done} = await reader.read()
      if (done) break
      read += value.length
    }
    controller.abort()
    await reader.cancel().catch(() => undefined)
    await upstreamClosed
    expect(upstreamFinished).toBe(false)
    const [result] = await gateway.settled(1)
    expect(result).toMatchObject({status: 200, clientAborted: true, error: 'client closed the connection'})
    expect(result!.usage).toBeNull()
  }, 20_000)
})
