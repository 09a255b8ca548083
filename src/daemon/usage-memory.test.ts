import {existsSync} from 'node:fs'
import {join} from 'node:path'

import {describe, expect, it, onTestFinished} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'

import type {LogEntry, LogStore} from '../store/log-store.js'
import type {EntryFilters, SessionEntry} from '../store/usage-entries.js'
import {emitGatewayEvent} from './events.js'
import {statuslineSums} from '../gateway/usage-windows.js'
import {statuslineAnswer, statuslineHandler} from './usage-memory.js'

const HOUR = 3_600_000
const NOW = Date.parse('2026-11-20T12:30:00Z')

const row = (ts: number, input: number, session: string | null = null): SessionEntry => ({
  ts,
  model: 'claude-sonnet-4-5',
  provider: null,
  session,
  inputTokens: input,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  cache1hTokens: 0,
})

/** A log store that only answers `usageEntries`, counting its reads. */
function fakeStore(rows: SessionEntry[]) {
  const reads: EntryFilters[] = []
  const store = {
    usageEntries(f: EntryFilters) {
      reads.push(f)
      return rows.filter((r) => f.sinceMs === undefined || r.ts >= f.sinceMs)
    },
  }
  return {store: store as unknown as LogStore, reads}
}

const logEntry = (time: number, inputTokens: number, cacheReadTokens = 0): LogEntry => ({
  time,
  agentId: 'agt_1',
  keyPrefix: null,
  policyId: 'default',
  entrance: 'messages',
  requestedModel: 'claude-sonnet-4-5',
  provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  status: 200,
  fallback: false,
  inputTokens,
  outputTokens: 10,
  cacheReadTokens,
  cacheCreationTokens: 0,
  reasoningTokens: 0,
  latencyMs: 1,
  ttfbMs: null,
  error: null,
  project: null,
})

describe('the daemon’s statusline memory', () => {
  it('reads the database once, then follows the event bus; a history scan makes it read again', () => {
    const rows = [row(NOW - 30 * HOUR, 5), row(NOW - 2 * HOUR, 100, 'sess'), row(NOW - HOUR, 50)]
    const {store, reads} = fakeStore(rows)
    const midnight = Date.parse('2026-11-20T00:00:00Z')
    const first = statuslineAnswer(store, {todayStartMs: midnight, session: 'sess', now: NOW})
    expect(reads).toHaveLength(1)
    expect(first.source).toBe('daemon')
    expect(first.today.map((m) => [m.requests, m.inputTokens])).toEqual([[2, 150]])
    expect(first.session!.map((m) => m.inputTokens)).toEqual([100])
    expect(first.window).toMatchObject({requests: 2, inputTokens: 150, active: true})

    // a request the gateway served: in memory, input without its cached part, no database read
    emitGatewayEvent({type: 'request', entry: logEntry(NOW - 60_000, 1000, 400)})
    // an error without usage adds nothing
    emitGatewayEvent({type: 'request', entry: {...logEntry(NOW, 0), outputTokens: 0, status: 502}})
    const second = statuslineAnswer(store, {todayStartMs: midnight, session: 'sess', now: NOW})
    expect(reads).toHaveLength(1)
    expect(second.today.map((m) => m.requests).reduce((a, b) => a + b)).toBe(3)
    expect(second.window).toMatchObject({requests: 3, inputTokens: 750, cacheReadTokens: 400})

    // the history scanner added rows: the next answer reads them
    rows.push(row(NOW - 10 * 60_000, 7, 'sess'))
    emitGatewayEvent({type: 'usage', rows: 1})
    const third = statuslineAnswer(store, {todayStartMs: midnight, session: 'sess', now: NOW})
    expect(reads).toHaveLength(2)
    expect(third.session!.map((m) => m.inputTokens)).toEqual([107])
  })
})

/** A pseudo-random sequence (the same on every run). */
function random(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

const byModel = (sums: ReadonlyArray<{provider: string | null; model: string | null}> | null) =>
  sums && [...sums].sort((a, b) => `${a.provider}/${a.model}`.localeCompare(`${b.provider}/${b.model}`))

describe('the statusline memory’s running sums', () => {
  it('equal the sums computed afresh over every request, after requests in and out of order, day changes and a window cut', () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const next = random(seed)
      const models = ['claude-sonnet-4-5', 'claude-opus-4-1', 'gpt-5']
      // history rows of the last 40 hours, with bursts and gaps of more than 5 hours
      const rows: SessionEntry[] = []
      let ts = NOW - 40 * HOUR
      while (ts < NOW - HOUR) {
        ts += next() < 0.05 ? 6 * HOUR * next() : 20 * 60_000 * next()
        rows.push({
          ...row(ts, 1 + Math.floor(next() * 1000), next() < 0.5 ? 'sess' : 'other'),
          model: models[seed % 3],
        })
      }
      const {store} = fakeStore(rows)
      const all: SessionEntry[] = [...rows]
      const check = (now: number, todayStartMs: number) => {
        const got = statuslineAnswer(store, {todayStartMs, session: 'sess', now})
        const since = Math.min(todayStartMs, now - 29 * HOUR)
        const expected = statuslineSums(
          [...all].filter((e) => e.ts >= since).sort((a, b) => a.ts - b.ts),
          {now, todayStartMs, session: 'sess'},
        )
        expect(byModel(got.today), `seed ${seed}`).toEqual(byModel(expected.today))
        expect(byModel(got.session)).toEqual(byModel(expected.session))
        if (expected.window === null) expect(got.window).toBeNull()
        else {
          const {models: a, ...w} = got.window!
          const {models: b, ...v} = expected.window
          expect(w).toEqual(v)
          expect(byModel(a)).toEqual(byModel(b))
        }
      }
      const midnight = Date.parse('2026-11-20T00:00:00Z')
      check(NOW, midnight)
      // requests served through the gateway: most in order, some finishing after a later one
      let now = NOW
      for (let i = 0; i < 300; i++) {
        now += 60_000 * next() * (i === 150 ? 400 : 3) // once, a pause of hours: a new window
        const time = next() < 0.2 ? now - 10 * 60_000 * next() : now
        const input = 100 + Math.floor(next() * 5000)
        const read = Math.floor(input * next() * 0.5)
        const entry = logEntry(Math.floor(time), input, read)
        emitGatewayEvent({type: 'request', entry: {...entry, model: models[(seed + i) % 3]}})
        all.push({
          ...row(Math.floor(time), input - read),
          model: models[(seed + i) % 3],
          provider: 'anthropic',
          outputTokens: 10,
          cacheReadTokens: read,
        })
        if (i % 37 === 0) check(now, midnight)
        // a client in another zone, and the next day
        if (i % 53 === 0) check(now, midnight - 5 * HOUR)
        if (i % 71 === 0) check(now, midnight + 24 * HOUR > now ? midnight : midnight + 24 * HOUR)
      }
      check(now, midnight)
    }
  })

  it('prices the sums it answers: today, the session (with its request count) and the window with its $/h', () => {
    const rows = [row(NOW - 2 * HOUR, 1_000_000, 'sess'), row(NOW - HOUR, 2_000_000)]
    const {store} = fakeStore(rows)
    // $1 per 1M input tokens; another model is unpriced
    const pricer = {
      cost: (model: string | null, t: {inputTokens: number}) =>
        model === 'unknown' ? null : t.inputTokens / 1e6,
    }
    const midnight = Date.parse('2026-11-20T00:00:00Z')
    const answer = statuslineAnswer(store, {todayStartMs: midnight, session: 'sess', now: NOW}, pricer)
    expect(answer.figures).toEqual({
      today: {usd: 3, unpriced: false},
      session: {usd: 1, unpriced: false, requests: 1},
      // $3 from the first request to the last, an hour apart
      window: {usd: 3, unpriced: false, end: answer.window!.end, perHour: 3},
    })
    expect(answer.window!.end - NOW).toBe(2.5 * HOUR) // started 10:00, floored, 12:30 now
    emitGatewayEvent({type: 'request', entry: {...logEntry(NOW - 60_000, 500), model: 'unknown'}})
    const after = statuslineAnswer(store, {todayStartMs: midnight, now: NOW}, pricer).figures!
    expect(after.today).toEqual({usd: 3, unpriced: true})
    expect(after.session).toBeNull()
    expect(after.window).toMatchObject({usd: 3, unpriced: true, perHour: null})
  })
})

describe('GET /api/usage/statusline', () => {
  it('answers the sums and their dollars; a `today` that is no local midnight of the last day reads no further back than two days', async () => {
    // the pricer's memo goes to a home of this test's own
    const {home, cleanup} = tempHome()
    const saved = process.env.GWCTL_HOME
    process.env.GWCTL_HOME = home
    onTestFinished(() => {
      process.env.GWCTL_HOME = saved
      cleanup()
    })
    const {store, reads} = fakeStore([row(Date.now() - HOUR, 100_000)])
    const answers: Array<{status: number; body: unknown}> = []
    const request = (query: string) =>
      ({
        query: new URLSearchParams(query),
        res: {
          writeHead: (status: number) => answers.push({status, body: undefined}),
          end: (text: string) => (answers.at(-1)!.body = JSON.parse(text)),
        },
      }) as unknown as Parameters<typeof statuslineHandler>[0]
    const context = {routing: {logs: store, providers: []}} as unknown as Parameters<
      typeof statuslineHandler
    >[1]
    await statuslineHandler(request('today=1&session=s'), context)
    expect(answers[0].status).toBe(200)
    expect(reads[0].sinceMs).toBeGreaterThanOrEqual(Date.now() - 2 * 24 * HOUR - 60_000)
    const body = answers[0].body as {
      today: Array<{inputTokens: number}>
      figures: {today: {usd: number}; session: unknown}
    }
    expect(body.today.map((m) => m.inputTokens)).toEqual([100_000])
    // claude-sonnet-4-5 at $3 per 1M input tokens (under its 200k long-context tier)
    expect(body.figures.today.usd).toBeCloseTo(0.3, 9)
    expect(existsSync(join(home, 'price-memo.json'))).toBe(true)
    expect(body.figures.session).toEqual({usd: 0, unpriced: false, requests: 0})
  })
})
