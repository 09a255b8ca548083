/**
 * The OTLP export thread (dist/daemon/telemetry/otlp-thread.js, docs/TELEMETRY.md "Export runs in
 * a thread of its own"): a burst of rows far past the queue bound, towards a collector that never
 * answers, leaves the queue at its bound and every row accounted for (queued or dropped), on the
 * gateway's side as in the thread; and a stop is bounded.
 */
import {createServer} from 'node:net'
import type {Server, Socket} from 'node:net'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {ROOT} from './helpers/cli.js'
import {logEntry} from './helpers/log-entry.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A TCP server on a free loopback port that accepts and never says a byte. */
async function silentCollector(): Promise<string> {
  const sockets: Socket[] = []
  const server: Server = createServer((s) => sockets.push(s))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  )
  return `http://127.0.0.1:${(server.address() as {port: number}).port}`
}

function row(i: number) {
  return logEntry({
    time: 1_800_000_000_000 + i,
    agentId: 'agt_1',
    keyPrefix: 'gw-secretpre',
    provider: 'sim-chat',
    outputTokens: 4,
    latencyMs: 12,
    ttfbMs: 3,
    requestId: `req_${i}`,
  })
}

async function start(base: string, maxQueue: number) {
  const {OtlpThread} = await import(join(ROOT, 'dist', 'daemon', 'telemetry', 'otlp-thread.js'))
  const thread = await OtlpThread.start({
    endpoint: base,
    tracesUrl: `${base}/v1/traces`,
    metricsUrl: `${base}/v1/metrics`,
    headers: {},
    serviceName: 'test',
    version: '0',
    maxQueue,
    delayMs: 0,
    timeoutMs: 60_000,
    metricIntervalMs: 60_000,
  })
  cleanups.push(() => thread.close(100))
  return thread
}

describe('the OTLP export thread', {timeout: 60_000}, () => {
  it('never has more than 2048 rows in flight to the thread: the rest wait on the gateway side, counted as queued', async () => {
    const thread = await start(await silentCollector(), 100_000)
    for (let b = 0; b < 10; b++) thread.post(Array.from({length: 1000}, (_, i) => row(b * 1000 + i)))
    expect(thread.inFlight).toBeLessThanOrEqual(2048)
    expect(thread.stats.queued).toBe(10_000)
    expect(thread.stats.dropped).toBe(0)
    // the thread takes them all in time, in bounded steps
    let stats = await thread.fresh()
    for (let i = 0; i < 100 && thread.waiting.length + thread.inFlight > 0; i++) {
      await new Promise((r) => setTimeout(r, 50))
      stats = await thread.fresh()
    }
    expect(thread.waiting.length + thread.inFlight).toBe(0)
    expect(stats.queued).toBe(10_000)
    expect(stats.dropped).toBe(0)
  })

  it('a burst past the bound towards a silent collector: the queue stays bounded, every row queued or dropped, the stop bounded', async () => {
    const base = await silentCollector()
    const maxQueue = 50
    const thread = await start(base, maxQueue)
    const total = 10_000
    // ten folds in one go, faster than any thread takes them
    for (let b = 0; b < 10; b++) thread.post(Array.from({length: 1000}, (_, i) => row(b * 1000 + i)))
    // the gateway's side holds at most the bound (plus what is in flight to the thread)
    expect(thread.stats.queued).toBeLessThanOrEqual(maxQueue + 2048)
    expect(thread.stats.queued + thread.stats.dropped).toBe(total)
    // once the thread has taken everything: the queue at its bound (and the batch under way)
    let stats = await thread.fresh()
    for (let i = 0; i < 100 && stats.queued > maxQueue + 512; i++) {
      await new Promise((r) => setTimeout(r, 50))
      stats = await thread.fresh()
    }
    expect(stats.queued).toBeLessThanOrEqual(maxQueue + 512)
    expect(stats.exported).toBe(0)
    expect(stats.queued + stats.dropped).toBe(total)
    expect(stats.dropped).toBeGreaterThanOrEqual(total - maxQueue - 512)
    // the stop: the export under way never answers; close() returns within its bound
    const t0 = Date.now()
    await thread.close(500)
    expect(Date.now() - t0).toBeLessThan(5000)
  })
})
