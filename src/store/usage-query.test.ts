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
    else for (const k of COUNT_FIELDS) into[k] += g[k]
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
})
