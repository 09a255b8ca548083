import {join} from 'node:path'

import Database from 'better-sqlite3'
import fc from 'fast-check'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import type {LogEntry} from './log-store.js'
import {LogStore} from './log-store.js'
import type {UsageGroup, UsageQueryFilters} from './usage-query.js'
import {usageGroups} from './usage-query.js'
import {COUNT_FIELDS} from './usage-sql.js'

const HOUR = 3_600_000
const START = Date.parse('2026-11-20T00:00:00Z')

const entryArb = fc.record({
  offsetMs: fc.oneof(fc.integer({min: 0, max: 4 * HOUR}), fc.integer({min: 0, max: 3 * 24 * HOUR})),
  agent: fc.constantFrom('agt_1', 'agt_2', null),
  model: fc.constantFrom('claude-sonnet-4-5', 'gpt-5', null),
  provider: fc.constantFrom('sim', 'platform'),
  project: fc.constantFrom('/p/a', '/p/b', null),
  policy: fc.constantFrom('default', 'claude_code_default'),
  entrance: fc.constantFrom('messages', 'responses', 'gemini', 'chat'),
  status: fc.constantFrom(200, 200, 200, 429, 499, 502),
  fallback: fc.boolean(),
  cacheRead: fc.nat(5000),
  cacheWrite: fc.nat(500),
  oneHour: fc.nat(500),
  extraInput: fc.nat(3000),
  output: fc.nat(2000),
  reasoning: fc.nat(100),
})

/** Groups summed by (key, provider, model), in a fixed order (the day pivot folds buckets into days later). */
function merged(groups: UsageGroup[]): UsageGroup[] {
  const byKey = new Map<string, UsageGroup>()
  for (const g of groups) {
    const id = JSON.stringify([g.key, g.provider, g.model])
    const into = byKey.get(id)
    if (!into) byKey.set(id, {...g})
    else {
      for (const k of COUNT_FIELDS) into[k] += g[k]
      into.cache1hTokens = (into.cache1hTokens ?? 0) + (g.cache1hTokens ?? 0)
    }
  }
  return [...byKey.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, g]) => g)
}

describe('usage from the hourly roll-up', () => {
  let home: {home: string; cleanup: () => void}
  beforeEach(() => {
    home = tempHome()
  })
  afterEach(() => home.cleanup())

  it('gives exactly what the per-request rows give, for every pivot, filter and --since', async () => {
    let round = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(entryArb, {minLength: 1, maxLength: 120}),
        fc.nat(4 * HOUR),
        async (rows, sinceOffset) => {
          const path = join(home.home, `logs-${round++}.db`)
          const store = await LogStore.open(path, {batchSize: 1e9, flushMs: 1e9})
          const db = new Database(path, {readonly: true})
          try {
            // every request twice: the roll-up must sum rows that share an hour and every key
            for (const [i, r] of [...rows, ...rows].entries()) {
              const entry: LogEntry = {
                time: START + r.offsetMs,
                agentId: r.agent,
                keyPrefix: r.agent ? `gwk_${r.agent}` : null,
                policyId: r.policy,
                entrance: r.entrance,
                requestedModel: r.model,
                provider: r.provider,
                model: r.model,
                status: r.status,
                fallback: r.fallback,
                inputTokens: r.cacheRead + r.cacheWrite + r.extraInput,
                outputTokens: r.output,
                cacheReadTokens: r.cacheRead,
                cacheCreationTokens: r.cacheWrite,
                cache1hTokens: Math.min(r.oneHour, r.cacheWrite),
                reasoningTokens: r.reasoning,
                latencyMs: 1,
                ttfbMs: 1,
                error: null,
                project: r.project,
                requestId: `req_${i}`,
              }
              store.append(entry)
            }
            store.flush()
            const since = (START + sinceOffset) / 1000
            const cases: UsageQueryFilters[] = []
            for (const pivot of [
              undefined,
              'agent',
              'key',
              'provider',
              'model',
              'project',
              'policy',
              'day',
            ] as const)
              for (const extra of [
                {},
                {since},
                {status: '2xx'},
                {status: '5xx'},
                {status: 'fallback'},
                {agentId: 'agt_1'},
              ] as const)
                cases.push({source: 'all', pivot, ...extra} as UsageQueryFilters)
            cases.push({source: 'gateway', pivot: 'day', timezone: 'Europe/Paris', since})
            for (const f of cases) {
              const rolled = usageGroups(db, f)
              const perRequest = usageGroups(db, f, [], {rollUp: false})
              expect(merged(rolled), JSON.stringify(f)).toEqual(merged(perRequest))
            }
          } finally {
            db.close()
            store.close()
          }
        },
      ),
      {numRuns: 25},
    )
  })

  it('a database from before the 1-hour column: read-only it counts 0; the first open to write adds the columns', async () => {
    const path = join(home.home, 'old.db')
    // the layout of the logs and roll-up tables before `cache_1h_tokens`, with one request in it
    const old = new Database(path)
    old.exec(`CREATE TABLE logs (id INTEGER PRIMARY KEY, ts INTEGER NOT NULL, agent_id TEXT, key_prefix TEXT,
      policy_id TEXT, entrance TEXT NOT NULL, requested_model TEXT, provider TEXT, model TEXT, status INTEGER NOT NULL,
      fallback INTEGER NOT NULL DEFAULT 0, input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
      cache_read_tokens INTEGER NOT NULL DEFAULT 0, cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
      reasoning_tokens INTEGER NOT NULL DEFAULT 0, latency_ms REAL NOT NULL DEFAULT 0, ttfb_ms REAL, error TEXT,
      project TEXT, request_id TEXT, upstream_family TEXT, broken INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE usage_hourly (hour INTEGER NOT NULL, agent_id TEXT NOT NULL DEFAULT '', key_prefix TEXT NOT NULL DEFAULT '',
      policy_id TEXT NOT NULL DEFAULT '', provider TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '',
      project TEXT NOT NULL DEFAULT '', status_class TEXT NOT NULL, fallback INTEGER NOT NULL, requests INTEGER NOT NULL,
      errors INTEGER NOT NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL,
      cache_read_tokens INTEGER NOT NULL, cache_creation_tokens INTEGER NOT NULL, reasoning_tokens INTEGER NOT NULL,
      PRIMARY KEY (hour, agent_id, key_prefix, policy_id, provider, model, project, status_class, fallback)) WITHOUT ROWID;
    INSERT INTO logs (ts, entrance, provider, model, status, input_tokens, output_tokens, cache_read_tokens,
      cache_creation_tokens) VALUES (${START}, 'messages', 'anthropic', 'claude-sonnet-4-5', 200, 1000, 10, 100, 800);
    INSERT INTO usage_hourly VALUES (${START / HOUR}, '', '', '', 'anthropic', 'claude-sonnet-4-5', '', '2xx', 0, 1, 0,
      1000, 10, 100, 800, 0);`)
    old.close()
    const groups = (rollUp: boolean) => {
      const db = new Database(path, {readonly: true})
      try {
        return usageGroups(db, {source: 'gateway'}, [], {rollUp}).map((g) => [
          g.requests,
          g.cacheCreationTokens,
          g.cache1hTokens,
        ])
      } finally {
        db.close()
      }
    }
    expect(groups(true)).toEqual([[1, 800, 0]])
    expect(groups(false)).toEqual([[1, 800, 0]])
    const store = await LogStore.open(path)
    store.append({
      time: START + 60_000,
      agentId: null,
      keyPrefix: null,
      policyId: null,
      entrance: 'messages',
      requestedModel: 'claude-sonnet-4-5',
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      status: 200,
      fallback: false,
      inputTokens: 1000,
      outputTokens: 10,
      cacheReadTokens: 100,
      cacheCreationTokens: 800,
      cache1hTokens: 600,
      reasoningTokens: 0,
      latencyMs: 1,
      ttfbMs: 1,
      error: null,
      project: null,
    })
    store.close()
    const columns = (table: string) => {
      const db = new Database(path, {readonly: true})
      try {
        return (db.prepare(`PRAGMA table_info(${table})`).all() as Array<{name: string; dflt_value: string}>)
          .filter((c) => c.name === 'cache_1h_tokens')
          .map((c) => c.dflt_value)
      } finally {
        db.close()
      }
    }
    expect(columns('logs')).toEqual(['0'])
    expect(columns('usage_hourly')).toEqual(['0'])
    // the old row counts 0 one-hour writes, the new one its 600; roll-up and rows agree
    expect(groups(true)).toEqual([[2, 1600, 600]])
    expect(groups(false)).toEqual([[2, 1600, 600]])
  })
})
