// `gwctl usage` with the gateway stopped reads the gateway's rows and their cost in one query
// (gatewayUsageReport): what it prints must stay byte for byte what the two reads it replaces
// (getUsage's selectUsage, usageReport's groups) gave, over rows that make those two differ
// where they could: no agent, keys SQLite and JavaScript order apart, ties, broken answers,
// fallbacks, cache tokens above the prompt, a partial first hour.
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest'

import {freePort, tempHome} from '../../test/helpers/cli.js'
import {logEntry} from '../../test/helpers/log-entry.js'
import {LogStore} from '../store/log-store.js'
import type {Pivot} from '../store/log-query.js'
import {getUsage} from './logs.js'
import {gatewayUsageReport, usageReport} from './usage.js'

const HOUR = 3_600_000
const T0 = Date.UTC(2026, 10, 20, 10, 0)

describe('the gateway rows and their cost in one read (gateway stopped)', () => {
  let home: string
  let cleanup: () => void
  beforeAll(async () => {
    ;({home, cleanup} = tempHome())
    vi.stubEnv('GWCTL_HOME', home)
    vi.stubEnv('GWCTL_GATEWAY_PORT', String(await freePort())) // nothing listens there
    const store = await LogStore.open(join(home, 'logs.db'), {batchSize: 1e9, flushMs: 1e9})
    const projects = [null, '', '/p/a', '/p/b', '/p/c', '/p/é']
    const agents = [null, 'agent-a', 'agent-b', 'agent-c']
    for (let i = 0; i < 240; i++) {
      store.append(
        logEntry({
          time: T0 + Math.floor((i / 240) * 6 * HOUR) + (i % 7) * 1000,
          agentId: agents[i % 4],
          keyPrefix: agents[i % 4] === null ? null : `gw-${agents[i % 4]}`,
          policyId: i % 3 === 0 ? 'strict' : 'default',
          provider: i % 5 === 0 ? 'other' : 'sim',
          model: ['sim-mini', 'claude-sonnet-4-5', 'gpt-5', null][i % 4],
          status: i % 11 === 0 ? 502 : i % 13 === 0 ? 429 : 200,
          broken: i % 17 === 0,
          fallback: i % 9 === 0,
          // equal token totals across keys (ties ordered by requests, then by key)
          inputTokens: i % 6 === 0 ? 3 : 1000 + (i % 4) * 10,
          outputTokens: 20,
          // more cache than prompt on some rows: the report's input (prompt less cache, at least
          // 0) cannot give the prompt back, so the one read sums the prompt apart
          cacheReadTokens: i % 6 === 0 ? 50 : 100,
          cacheCreationTokens: i % 8,
          reasoningTokens: i % 3,
          project: projects[i % 6],
        }),
      )
    }
    // two projects of the same tokens and requests, ordered by their names: U+FF5E sorts after
    // U+1F600 by JavaScript's `<` (UTF-16 units), before it in SQLite (UTF-8 bytes)
    for (const project of ['/p/\u{1f600}', '/p/\uff5e'])
      store.append(logEntry({time: T0 + 30 * 60_000, inputTokens: 7, outputTokens: 1, project}))
    store.flush()
    store.close()
  })
  afterAll(() => {
    vi.unstubAllEnvs()
    cleanup()
  })

  const pivots: Array<Pivot | undefined> = [
    undefined,
    'agent',
    'key',
    'provider',
    'model',
    'project',
    'policy',
  ]
  // a `since` inside an hour reads that hour's requests from the log, the rest from the roll-up
  const sinces = [undefined, (T0 + 2 * HOUR + 17 * 60_000) / 1000, (T0 + 3 * HOUR) / 1000]

  it('prints what getUsage and usageReport printed, for every pivot, filter and start', async () => {
    let compared = 0
    for (const pivot of pivots)
      for (const since of sinces)
        for (const filter of [{}, {agentId: 'agent-b'}, {policyId: 'strict'}]) {
          const filters = {...filter, pivot, since}
          const both = await gatewayUsageReport(filters)
          expect(both).toBeDefined()
          const usage = await getUsage({...filters, gatewayPort: null})
          // the same bytes: same rows, same order, same fields in the same order
          expect(JSON.stringify(both!.usage)).toBe(JSON.stringify(usage))
          const report = await usageReport({...filters, source: 'gateway'})
          expect(JSON.stringify({rows: both!.report!.rows, totals: both!.report!.totals})).toBe(
            JSON.stringify({rows: report.rows, totals: report.totals}),
          )
          compared += usage.rows.length
        }
    // (the fixture gives the pivots rows to order: more than one per pivot)
    expect(compared).toBeGreaterThan(pivots.length * sinces.length * 3)
    const byProject = (await gatewayUsageReport({pivot: 'project'}))!.usage.rows.map((r) => r.key)
    expect(byProject.slice(-2)).toEqual(['/p/\uff5e', '/p/\u{1f600}'])
  })

  it('leaves a status filter, and a home without a log database, to the two reads', async () => {
    expect(await gatewayUsageReport({status: '4xx'})).toBeUndefined()
    vi.stubEnv('GWCTL_HOME', join(home, 'empty'))
    expect(await gatewayUsageReport({})).toBeUndefined()
    vi.stubEnv('GWCTL_HOME', home)
  })
})
