/**
 * Long-context prices, judged per request wherever requests are summed before they are priced.
 * Claude Sonnet 4.5 (genai-prices' table) bills a request whose input context (input + cache read
 * + cache write) is over 200 000 tokens at its long-context rates, the whole request: USD per 1M
 * input 6, cache read 0.60, output 22.50 (below: 3, 0.30, 15).
 *
 * Three requests of one model in one 15-minute bucket and one hour (so a day's row, the hourly
 * roll-up, a 5-hour window, a budget and a /metrics series each sum them), hand-priced:
 *   A  50 000 input + 200 000 cache read = 250 000 context, 10 000 output: over 200k
 *      50 000 x 6 + 200 000 x 0.60 + 10 000 x 22.50 = 0.30 + 0.12 + 0.225 = $0.645
 *   B  20 000 input + 30 000 cache read = 50 000 context, 2 000 output: base
 *      20 000 x 3 + 30 000 x 0.30 + 2 000 x 15 = 0.06 + 0.009 + 0.03 = $0.099
 *   C  150 000 input + 50 000 cache read = 200 000 context exactly (not over), 1 000 output: base
 *      150 000 x 3 + 50 000 x 0.30 + 1 000 x 15 = 0.45 + 0.015 + 0.015 = $0.48
 * Together $1.224. Priced as three requests of the average size (166 667 tokens, all base), the
 * sum would be $0.939; as one request of the sum (500 000 tokens), $2.052.
 */
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {BudgetCounter} from '../src/gateway/budgets.js'
import {modelDollars, statuslineSums, usageWindows} from '../src/gateway/usage-windows.js'
import {GatewayMetrics} from '../src/daemon/telemetry/metrics.js'
import {statuslineAnswer} from '../src/daemon/usage-memory.js'
import {priceModels} from '../src/services/usage-blocks.js'
import {createPricer} from '../src/services/usage-cost.js'
import {figuresFromDatabase} from '../src/services/usage-statusline-db.js'
import {reportRows} from '../src/services/usage.js'
import {budgetSpendGroups} from '../src/store/budget-query.js'
import {CONTEXT_EDGES, FAMILY_EDGES, bandSql, contextBand} from '../src/store/context-bands.js'
import type {LogEntry} from '../src/store/log-store.js'
import {LogStore} from '../src/store/log-store.js'
import {openSqlite} from '../src/store/sqlite.js'
import {usageEntries} from '../src/store/usage-entries.js'
import {usageGroups} from '../src/store/usage-query.js'
import {tempHome} from './helpers/cli.js'

const MODEL = 'claude-sonnet-4-5'
const NOW = Date.parse('2026-11-20T12:30:00Z')
const A = 0.645
const B = 0.099
const C = 0.48
const EXACT = A + B + C
const AVERAGED = 0.939

/** A gateway log row: the log counts the cache inside input, as the gateway writes it. */
const request = (minute: number, context: number, cacheRead: number, output: number): LogEntry => ({
  time: Date.parse('2026-11-20T12:00:00Z') + minute * 60_000,
  agentId: 'agt_1',
  keyPrefix: 'gw-abc',
  policyId: 'default',
  entrance: 'messages',
  requestedModel: MODEL,
  provider: 'anthropic',
  model: MODEL,
  status: 200,
  fallback: false,
  inputTokens: context,
  outputTokens: output,
  cacheReadTokens: cacheRead,
  cacheCreationTokens: 0,
  reasoningTokens: 0,
  latencyMs: 1,
  ttfbMs: null,
  error: null,
  project: 'web',
})
const REQUESTS = [
  request(2, 250_000, 200_000, 10_000),
  request(5, 50_000, 30_000, 2_000),
  request(9, 200_000, 50_000, 1_000),
]

describe('long-context prices, per request', () => {
  let home: {home: string; cleanup: () => void}
  const saved = process.env.GWCTL_HOME
  let path: string
  beforeEach(async () => {
    home = tempHome()
    process.env.GWCTL_HOME = home.home
    path = join(home.home, 'logs.db')
    const store = await LogStore.open(path, {batchSize: 1e9, flushMs: 1e9})
    for (const r of REQUESTS) store.append(r)
    store.flush()
    store.close()
  })
  afterEach(() => {
    process.env.GWCTL_HOME = saved
    home.cleanup()
  })

  it('the pricer: a request over the threshold pays its tier, one at it does not; a sum with its bands costs what its requests cost', async () => {
    const pricer = await createPricer(new Map())
    const one = (r: LogEntry) =>
      pricer.cost(MODEL, {
        inputTokens: r.inputTokens - r.cacheReadTokens,
        outputTokens: r.outputTokens,
        cacheReadTokens: r.cacheReadTokens,
        cacheCreationTokens: 0,
      })
    expect(one(REQUESTS[0])).toBeCloseTo(A, 12)
    expect(one(REQUESTS[1])).toBeCloseTo(B, 12)
    expect(one(REQUESTS[2])).toBeCloseTo(C, 12)
    const sum = {inputTokens: 220_000, outputTokens: 13_000, cacheReadTokens: 280_000, cacheCreationTokens: 0}
    // without bands: the average request (what a sum was priced as before)
    expect(pricer.cost(MODEL, {...sum, requests: 3})).toBeCloseTo(AVERAGED, 12)
    // with A in its band (C at exactly 200 000 is in the band past 199 999, priced at the base)
    const band = (r: LogEntry) => ({
      requests: 1,
      inputTokens: r.inputTokens - r.cacheReadTokens,
      outputTokens: r.outputTokens,
      cacheReadTokens: r.cacheReadTokens,
      cacheCreationTokens: 0,
      cache1hTokens: 0,
    })
    expect(contextBand(250_000)).toBe(3)
    expect(contextBand(200_000)).toBe(2)
    expect(contextBand(50_000)).toBe(0)
    expect(
      pricer.cost(MODEL, {...sum, requests: 3, bands: {3: band(REQUESTS[0]), 2: band(REQUESTS[2])}}),
    ).toBeCloseTo(EXACT, 12)
  })

  it('usage (day rows, the hourly roll-up or the requests, since or not) and budgets', async () => {
    const pricer = await createPricer(new Map())
    const db = openSqlite(path, {readonly: true})
    try {
      const day = Date.parse('2026-11-20T00:00:00Z') / 1000
      const variants = [
        {f: {source: 'gateway' as const, pivot: 'day' as const}, rollUp: true},
        {f: {source: 'gateway' as const, pivot: 'day' as const, since: day}, rollUp: true},
        // since inside the hour: its requests come from the log, not the roll-up
        {f: {source: 'all' as const, pivot: 'model' as const, since: day + 12 * 3600 + 60}, rollUp: true},
        {f: {source: 'all' as const, pivot: 'project' as const}, rollUp: false},
        {f: {source: 'gateway' as const, until: NOW / 1000}, rollUp: true},
      ]
      for (const {f, rollUp} of variants) {
        const groups = usageGroups(db, f, [], {rollUp})
        const {totals} = reportRows(groups, pricer, f.pivot ?? null)
        expect(totals.requests, JSON.stringify(f)).toBe(3)
        expect(totals.costUSD, JSON.stringify(f)).toBeCloseTo(EXACT, 12)
      }
      // a budget's spend, read from the log database (the daemon at start, budgets list stopped)
      for (const scope of ['agent', 'key', 'policy', 'project'] as const) {
        const target = {agent: 'agt_1', key: 'gw-abc', policy: 'default', project: 'web'}[scope]
        const counter = new BudgetCounter(pricer)
        for (const g of budgetSpendGroups(db, scope, target, Date.parse('2026-11-20T00:00:00Z')))
          counter.add(g.provider, g.model, g)
        expect(counter.spentUSD, scope).toBeCloseTo(EXACT, 12)
      }
    } finally {
      db.close()
    }
    // and the running gateway's counter, request by request
    const counter = new BudgetCounter(pricer)
    for (const r of REQUESTS)
      counter.add(r.provider, r.model, {
        inputTokens: r.inputTokens - r.cacheReadTokens,
        outputTokens: r.outputTokens,
        cacheReadTokens: r.cacheReadTokens,
        cacheCreationTokens: 0,
        requests: 1,
      })
    expect(counter.spentUSD).toBeCloseTo(EXACT, 12)
  })

  it('usage blocks and the statusline (from logs.db and from the daemon’s memory)', async () => {
    const pricer = await createPricer(new Map())
    const db = openSqlite(path, {readonly: true})
    const entries = usageEntries(db, {source: 'all'})
    db.close()
    const [block] = usageWindows(entries, NOW)
    expect(block.requests).toBe(3)
    expect(priceModels(block.models, pricer).costUSD).toBeCloseTo(EXACT, 12)

    const todayStartMs = Date.parse('2026-11-20T00:00:00Z')
    const stopped = await figuresFromDatabase({now: NOW, todayStartMs, path})
    expect(stopped.today.usd).toBeCloseTo(EXACT, 12)
    expect(stopped.window?.usd).toBeCloseTo(EXACT, 12)

    const sums = statuslineSums(entries, {now: NOW, todayStartMs})
    expect(modelDollars(sums.today, pricer).usd).toBeCloseTo(EXACT, 12)
    const store = {usageEntries: () => entries.map((e) => ({...e, session: null}))}
    const running = statuslineAnswer(store as never, {todayStartMs, now: NOW}, pricer)
    expect(running.figures?.today.usd).toBeCloseTo(EXACT, 12)
    expect(running.figures?.window?.usd).toBeCloseTo(EXACT, 12)
    // the answer goes to the CLI as JSON: its sums keep their bands
    const wire = JSON.parse(JSON.stringify(running)) as typeof running
    expect(modelDollars(wire.today, pricer).usd).toBeCloseTo(EXACT, 12)
  })

  it('/metrics: gwctl_cost_usd_total of a route', async () => {
    const pricer = await createPricer(new Map())
    const metrics = new GatewayMetrics({}, async () => pricer)
    for (const r of REQUESTS) metrics.record(r)
    const text = await metrics.text()
    const line = text
      .split('\n')
      .find((l) => l.startsWith('gwctl_cost_usd_total{') && l.includes(`model="${MODEL}"`))
    expect(Number(line?.split(' ').at(-1))).toBeCloseTo(EXACT, 12)
  })

  it('every threshold of the bundled price table is a band edge', async () => {
    const {createRequire} = await import('node:module')
    const lib = createRequire(import.meta.url)('@pydantic/genai-prices') as {
      waitForUpdate: () => Promise<Array<{id: string; models: Array<{id: string; prices: unknown}>}> | null>
    }
    const starts = new Set<number>()
    const startsById = new Map<string, Set<number>>()
    for (const provider of (await lib.waitForUpdate()) ?? [])
      for (const model of provider.models as Array<{id: string; prices: unknown}>) {
        const all = Array.isArray(model.prices)
          ? (model.prices as Array<{prices: Record<string, unknown>}>).map((p) => p.prices)
          : [model.prices as Record<string, unknown>]
        for (const prices of all)
          for (const price of Object.values(prices))
            if (price && typeof price === 'object')
              for (const tier of (price as {tiers: Array<{start: number}>}).tiers) {
                starts.add(tier.start)
                const id = `${provider.id}/${model.id}`
                startsById.set(id, new Set([...(startsById.get(id) ?? []), tier.start]))
              }
      }
    expect(starts.size).toBeGreaterThan(0)
    for (const start of starts) expect(CONTEXT_EDGES, `tier start ${start}`).toContain(start)
    // a family's own edges (the usage query's fewer bands) hold every start of its models
    for (const family of FAMILY_EDGES) {
      for (const edge of family.edges) expect(CONTEXT_EDGES).toContain(edge)
      for (const [id, own] of startsById)
        if (id.toLowerCase().includes(family.prefix))
          for (const start of own) expect(family.edges, `${id}: tier start ${start}`).toContain(start)
    }
    expect([...startsById.keys()].some((id) => id.includes('claude'))).toBe(true)
  })

  it('the usage query cuts a family’s requests at its own edges only: fewer groups, the same dollars', async () => {
    // claude requests at 150k and 180k context (between the table's 128k and 200k edges, which
    // only other models have) stay with the 50k one: one group, not two; the 250k one apart
    const db = openSqlite(join(home.home, 'logs.db'))
    const band = (model: string, context: number) =>
      (db.prepare(`SELECT ${bandSql(String(context), '@model')} AS b`).get({model}) as {b: number}).b
    try {
      expect(band('claude-sonnet-4-5-20250929', 150_000)).toBe(0)
      expect(band('claude-sonnet-4-5-20250929', 200_000)).toBe(0)
      expect(band('claude-sonnet-4-5-20250929', 200_001)).toBe(contextBand(200_001))
      expect(band('Claude-Opus-4-6', 300_000)).toBe(contextBand(200_001))
      expect(band('gemini-1.5-pro', 150_000)).toBe(contextBand(150_000))
      expect(band('gpt-5.4', 150_000)).toBe(0)
      expect(band('gpt-5.4', 272_000)).toBe(contextBand(272_000))
      // another model: every edge
      expect(band('grok-4.5', 199_999)).toBe(contextBand(199_999))
      expect(band('grok-4.5', 150_000)).toBe(contextBand(150_000))
      expect(band('claude-sonnet-4-5', 100_000)).toBe(0)
    } finally {
      db.close()
    }
  })
})

/**
 * The reviewer's probe (mu60): a billed try's row (a try whose upstream billed an answer the client
 * never got: LogEntry `billedTry`) is one request as any row. Counted as none, the pricer averaged
 * a 50 000-token request and a 180 000-token try as one request of 230 000 tokens, over 200k:
 *   $1.425 from logs.db (230 000 x 6 + 2 000 x 22.50) against the running gateway's
 *   $0.72 (50 000 x 3 + 2 000 x 15 = 0.18, and 180 000 x 3 = 0.54), all base,
 * so a budget read back after a restart or by `gwctl budgets list` could read spent when not.
 */
describe("a billed try's row, priced from logs.db as live", () => {
  let home: {home: string; cleanup: () => void}
  let path: string
  const LIVE = 0.72
  const answer = {...request(2, 50_000, 0, 2_000), requestId: 'req_a'}
  const tried: LogEntry = {
    ...request(2, 180_000, 0, 0),
    requestId: null,
    billedTry: true,
    error:
      "billed 180000 input tokens for what the client never got (its request's answer is in the row of x/y)",
  }
  beforeEach(async () => {
    home = tempHome()
    path = join(home.home, 'logs.db')
    const store = await LogStore.open(path, {batchSize: 1e9, flushMs: 1e9})
    store.append(tried)
    store.append(answer)
    store.flush()
    store.close()
  })
  afterEach(() => home.cleanup())

  it('usage, budgets, the statusline and /metrics count two requests and $0.72', async () => {
    const pricer = await createPricer(new Map())
    const live = new BudgetCounter(pricer)
    const metrics = new GatewayMetrics({}, async () => pricer)
    for (const r of [tried, answer]) {
      live.add(r.provider, r.model, {...r, cacheCreationTokens: 0, requests: 1})
      metrics.record(r)
    }
    expect(live.spentUSD).toBeCloseTo(LIVE, 12)
    const line = (await metrics.text())
      .split('\n')
      .find((l) => l.startsWith('gwctl_cost_usd_total{') && l.includes(`model="${MODEL}"`))
    expect(Number(line?.split(' ').at(-1))).toBeCloseTo(LIVE, 12)

    const db = openSqlite(path, {readonly: true})
    try {
      for (const rollUp of [true, false]) {
        const f = {source: 'gateway' as const, pivot: 'model' as const}
        const {totals} = reportRows(usageGroups(db, f, [], {rollUp}), pricer, f.pivot)
        expect(totals, `rollUp ${rollUp}`).toMatchObject({requests: 2})
        expect(totals.costUSD, `rollUp ${rollUp}`).toBeCloseTo(LIVE, 12)
      }
      const counter = new BudgetCounter(pricer)
      for (const g of budgetSpendGroups(db, 'agent', 'agt_1', Date.parse('2026-11-20T00:00:00Z')))
        counter.add(g.provider, g.model, g)
      expect(counter.spentUSD).toBeCloseTo(LIVE, 12)
      const [block] = usageWindows(usageEntries(db, {source: 'all'}), NOW)
      expect(block.requests).toBe(2)
      expect(priceModels(block.models, pricer).costUSD).toBeCloseTo(LIVE, 12)
    } finally {
      db.close()
    }
    const todayStartMs = Date.parse('2026-11-20T00:00:00Z')
    expect((await figuresFromDatabase({now: NOW, todayStartMs, path})).today.usd).toBeCloseTo(LIVE, 12)
  })
})
