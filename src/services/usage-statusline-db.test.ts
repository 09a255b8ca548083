import {join} from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import {modelDollars, statuslineSums, usageWindows} from '../gateway/usage-windows.js'
import type {LogEntry} from '../store/log-store.js'
import {LogStore} from '../store/log-store.js'
import {openSqlite} from '../store/sqlite.js'
import {usageEntries} from '../store/usage-entries.js'
import {createPricer} from './usage-cost.js'
import {activeWindow, figuresFromDatabase} from './usage-statusline-db.js'

const HOUR = 3_600_000
const NOW = Date.parse('2026-11-20T12:30:00Z')

function random(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

/** Times since 40 hours ago: bursts, pauses, and now and then a gap of more than 5 hours. */
function times(next: () => number, until = NOW): number[] {
  const ts: number[] = []
  let t = until - 40 * HOUR
  for (;;) {
    t += next() < 0.05 ? 7 * HOUR * next() : 30 * 60_000 * next()
    if (t >= until) return ts
    ts.push(Math.floor(t))
  }
}

describe('the statusline’s active window from logs.db', () => {
  it('is the window usage-windows.ts cuts, from the times alone', () => {
    for (let seed = 1; seed <= 200; seed++) {
      const next = random(seed)
      const ts = times(next, NOW - 6 * HOUR * next())
      const expected = usageWindows(
        ts.map((t) => ({
          ts: t,
          model: null,
          provider: null,
          inputTokens: 1,
          outputTokens: 0,
          cacheReadTokens: 0,
          cacheCreationTokens: 0,
          cache1hTokens: 0,
        })),
        NOW,
      ).findLast((w) => w.active)
      const got = activeWindow(ts, NOW)
      if (!expected) expect(got, `seed ${seed}`).toBeNull()
      else
        expect(got, `seed ${seed}`).toEqual({
          start: expected.start,
          end: expected.end,
          firstAt: expected.firstAt,
          lastAt: expected.lastAt,
        })
    }
  })
})

describe('the statusline’s figures from logs.db', () => {
  let home: {home: string; cleanup: () => void}
  const saved = process.env.GWCTL_HOME
  beforeEach(() => {
    home = tempHome()
    process.env.GWCTL_HOME = home.home
  })
  afterEach(() => {
    process.env.GWCTL_HOME = saved
    home.cleanup()
  })

  const entry = (time: number, model: string, input: number, read: number): LogEntry => ({
    time,
    agentId: 'agt_1',
    keyPrefix: null,
    policyId: 'default',
    entrance: 'messages',
    requestedModel: model,
    provider: 'anthropic',
    model,
    status: time % 13 === 0 ? 502 : 200,
    fallback: false,
    inputTokens: time % 13 === 0 ? 0 : input,
    outputTokens: time % 13 === 0 ? 0 : 100,
    cacheReadTokens: time % 13 === 0 ? 0 : read,
    cacheCreationTokens: 0,
    reasoningTokens: 0,
    latencyMs: 1,
    ttfbMs: null,
    error: null,
    project: null,
  })

  it('are the dollars of the per-request sums: today, the window and its $/h (error rows and an unpriced model included)', async () => {
    const path = join(home.home, 'logs.db')
    const none = await figuresFromDatabase({now: NOW, todayStartMs: NOW - 12 * HOUR, session: 's', path})
    expect(none).toEqual({
      today: {usd: 0, unpriced: false},
      session: {usd: 0, unpriced: false, requests: 0},
      window: null,
    })
    const next = random(7)
    const store = await LogStore.open(path, {batchSize: 1e9, flushMs: 1e9})
    const models = ['claude-sonnet-4-5', 'gpt-5', 'sim-mini']
    // up to 6 hours ago, then a burst in the last 40 minutes: an active window from 11:00
    const ts = [
      ...times(next, NOW - 6 * HOUR),
      ...Array.from({length: 30}, (_, i) => NOW - 40 * 60_000 + i * 77_000),
    ]
    for (const t of ts)
      store.append(
        entry(
          t,
          models[Math.floor(next() * 3)],
          1000 + Math.floor(next() * 50_000),
          Math.floor(next() * 900),
        ),
      )
    store.flush()
    store.close()
    const pricer = await createPricer()
    for (const todayStartMs of [Date.parse('2026-11-20T00:00:00Z'), Date.parse('2026-11-19T23:00:00Z')]) {
      const got = await figuresFromDatabase({now: NOW, todayStartMs, session: 's', path})
      // the reference: every row as an object, cut and summed in JavaScript (the path it replaces)
      const db = openSqlite(path, {readonly: true})
      const rows = usageEntries(db, {source: 'all', sinceMs: Math.min(todayStartMs, NOW - 29 * HOUR)})
      db.close()
      const sums = statuslineSums(rows, {now: NOW, todayStartMs, session: 's'})
      const today = modelDollars(sums.today, pricer)
      expect(today.unpriced).toBe(true) // sim-mini has no price
      expect(got.today.unpriced).toBe(true)
      expect(got.today.usd).toBeCloseTo(today.usd, 9)
      expect(got.session).toEqual({usd: 0, unpriced: false, requests: 0})
      expect(sums.window).toMatchObject({
        start: Date.parse('2026-11-20T11:00:00Z'),
        requests: ts.filter((t) => t >= NOW - HOUR && t % 13 !== 0).length,
      })
      const w = modelDollars(sums.window!.models, pricer)
      expect(got.window).toMatchObject({unpriced: true, end: sums.window!.end, perHour: null})
      expect(got.window!.usd).toBeCloseTo(w.usd, 9)
    }
  })
})
