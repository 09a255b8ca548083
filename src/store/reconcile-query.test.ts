import {join} from 'node:path'

import Database from 'better-sqlite3'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import {writeFixtureHistory} from '../../test/helpers/history.js'
import {scanHistory} from '../agent-tools/history/scan.js'
import {HistoryStore} from './history-store.js'
import type {LogEntry} from './log-store.js'
import {LogStore} from './log-store.js'
import {reconcile, timeMatchedHistoryKeys} from './reconcile-query.js'
import {usageGroups} from './usage-query.js'

const entry = (o: Partial<LogEntry>): LogEntry => ({
  time: Date.parse('2025-08-21T10:00:05Z'),
  agentId: 'agt_1',
  keyPrefix: 'gwk_1',
  policyId: 'default',
  entrance: 'messages',
  requestedModel: null,
  provider: 'sim',
  model: 'm',
  status: 200,
  fallback: false,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  reasoningTokens: 0,
  latencyMs: 1,
  ttfbMs: 1,
  error: null,
  project: null,
  ...o,
})

/**
 * A billed try's own row (`try_`: its note, its flag) and its request's answer row, of one Gemini
 * CLI request, as daemon/router/log-entry.ts `billedTryEntries` writes them: the try at the
 * request's time, no request id, nearer to the history row than the answer's row, which the
 * fallback wrote at its end.
 */
function appendTryAndAnswer(logs: LogStore, try_: Pick<LogEntry, 'error' | 'billedTry'>): void {
  const at = (t: string) => Date.parse(`2025-08-21T${t}Z`)
  const common = {entrance: 'gemini', model: 'gemini-2.5-pro'}
  logs.append(
    entry({
      ...common,
      ...try_,
      time: at('12:00:02'),
      requestId: null,
      provider: 'up-gemini',
      inputTokens: 900,
    }),
  )
  logs.append(
    entry({...common, time: at('12:00:03'), requestId: 'g-answer', inputTokens: 7, outputTokens: 3}),
  )
  logs.flush()
}

/** A billed try's note, as a gateway of before the `billed_try` flag wrote it. */
const OLD_NOTE =
  "up-gemini: answered nothing, twice (sent again once); billed 900 input tokens for what the client never got (its request's answer is in the row of up-gemini/gemini-2.5-pro)"

describe('reconcile and --source all', () => {
  let home: {home: string; cleanup: () => void}
  let logs: LogStore
  let history: HistoryStore
  beforeEach(async () => {
    home = tempHome()
    const db = join(home.home, 'logs.db')
    logs = await LogStore.open(db)
    history = await HistoryStore.open(db)
    const env = {HOME: join(home.home, 'user-home')}
    writeFixtureHistory(env.HOME)
    await scanHistory(history, {env})
    // Claude msg_A through the gateway: the gateway counts cache tokens inside input.
    logs.append(
      entry({
        time: Date.parse('2025-08-20T23:59:31Z'),
        requestId: 'req_A',
        inputTokens: 160,
        outputTokens: 20,
        cacheReadTokens: 50,
        cacheCreationTokens: 100,
      }),
    )
    // Codex resp_1, one output token apart.
    logs.append(
      entry({
        entrance: 'responses',
        requestId: 'resp_1',
        inputTokens: 1000,
        outputTokens: 126,
        cacheReadTokens: 250,
      }),
    )
    // A request the history does not have (yet).
    logs.append(entry({requestId: 'req_GW', inputTokens: 5, outputTokens: 5}))
    logs.flush()
  })
  afterEach(() => {
    logs.close()
    history.close()
    home.cleanup()
  })

  it('matches by request id, lists what only one side has and the token differences', () => {
    const r = reconcile(history.db, {sinceMs: 0})
    expect(r.differences).toEqual([
      {
        requestId: 'resp_1',
        tool: 'codex',
        time: Date.parse('2025-08-21T10:00:05Z'),
        gateway: {inputTokens: 750, outputTokens: 126, cacheReadTokens: 250, cacheCreationTokens: 0},
        history: {inputTokens: 750, outputTokens: 125, cacheReadTokens: 250, cacheCreationTokens: 0},
      },
    ])
    expect(r.onlyGateway.map((g) => g.requestId)).toEqual(['req_GW'])
    expect(r.onlyHistory).toHaveLength(6)
    const claude20 = r.days.find((d) => d.tool === 'claude-code' && d.day === '2025-08-20')
    expect(claude20).toMatchObject({
      matched: 1,
      onlyHistory: 0,
      onlyGateway: 0,
      differing: 0,
      gatewayTokens: 180,
      historyTokens: 180,
    })
    const claude21 = r.days.find((d) => d.tool === 'claude-code' && d.day === '2025-08-21')
    expect(claude21).toMatchObject({matched: 0, onlyHistory: 1, onlyGateway: 1})
    expect(
      reconcile(history.db, {sinceMs: 0, tool: 'gemini-cli'}).days.every((d) => d.tool === 'gemini-cli'),
    ).toBe(true)
  })

  it('matches Gemini CLI rows (no request id) by tool, model and time; an extra gateway call stays only-gateway', () => {
    const at = (t: string) => Date.parse(`2025-08-21T${t}Z`)
    const gemini = (time: number, requestId: string, model = 'gemini-2.5-pro') =>
      entry({entrance: 'gemini', time, requestId, model, inputTokens: 7, outputTokens: 3})
    logs.append(gemini(at('12:00:03'), 'g-answer')) // the answer of m1 (history 12:00:02)
    logs.append(gemini(at('12:00:04'), 'g-internal')) // an internal call the history does not record
    logs.append(gemini(at('12:05:01'), 'g-m2')) // m2 (history 12:05:00)
    logs.append(gemini(at('12:05:02'), 'g-other-model', 'gemini-2.5-flash'))
    logs.flush()
    const r = reconcile(history.db, {sinceMs: 0, tool: 'gemini-cli'})
    const day21 = r.days.find((d) => d.day === '2025-08-21')!
    expect(day21).toMatchObject({matched: 2, matchedByTime: 2, onlyGateway: 2, onlyHistory: 0})
    expect(r.onlyGateway.map((g) => g.requestId).sort()).toEqual(['g-internal', 'g-other-model'])
    // matched by time, the token counts are still compared (and listed under the gateway's id)
    expect(r.differences.map((d) => d.requestId).sort()).toEqual(['g-answer', 'g-m2'])
    // a history row with no gateway row near it stays only-history (the 20th: nothing logged)
    expect(r.days.find((d) => d.day === '2025-08-20')).toMatchObject({matched: 0, onlyHistory: 1})
  })

  it("leaves out a billed try's own row (Gemini's empty 200 the client never got) by its flag: the answer's row is matched", () => {
    // (its flag, not its note's words, tells: a note in other words is left out all the same)
    appendTryAndAnswer(logs, {error: 'up-gemini: answered nothing, twice (sent again once)', billedTry: true})
    const r = reconcile(history.db, {sinceMs: 0, tool: 'gemini-cli'})
    expect(r.days.find((d) => d.day === '2025-08-21')).toMatchObject({
      matched: 1,
      matchedByTime: 1,
      onlyGateway: 0,
    })
    expect(r.differences.map((d) => d.requestId)).toEqual(['g-answer'])
  })

  /** A billed try's row and its answer's, in the database as a gateway of before the column left it: its path. */
  function beforeTheFlag(): string {
    appendTryAndAnswer(logs, {error: OLD_NOTE})
    logs.close()
    const path = join(home.home, 'logs.db')
    const old = new Database(path)
    old.exec('ALTER TABLE logs DROP COLUMN billed_try')
    old.close()
    return path
  }

  it("a billed try's row written before the flag is flagged when the database is opened to write (its note's words, once)", async () => {
    const path = beforeTheFlag()
    logs = await LogStore.open(path)
    const rows = logs.queryLogs()
    expect(rows.find((r) => r.error === OLD_NOTE)).toMatchObject({billedTry: true})
    expect(rows.find((r) => r.requestId === 'g-answer')!.billedTry).toBeUndefined()
    const fresh = new Database(path, {readonly: true})
    try {
      expect(
        reconcile(fresh, {sinceMs: 0, tool: 'gemini-cli'}).days.find((d) => d.day === '2025-08-21'),
      ).toMatchObject({matched: 1, onlyGateway: 0})
    } finally {
      fresh.close()
    }
  })

  it('the column and the rows it marks are added in one transaction: an open killed between them marks the rows at the next', async () => {
    const path = beforeTheFlag()
    // the marking UPDATE fails once (as a kill after the ALTER would end it)
    const exec = Database.prototype.exec
    const spy = vi.spyOn(Database.prototype, 'exec').mockImplementation(function (
      this: Database.Database,
      sql,
    ) {
      if (sql.startsWith('UPDATE logs SET billed_try')) {
        spy.mockRestore()
        throw new Error('killed')
      }
      return exec.call(this, sql)
    })
    await expect(LogStore.open(path)).rejects.toThrow('killed')
    spy.mockRestore()
    logs = await LogStore.open(path)
    expect(logs.queryLogs().find((r) => r.error === OLD_NOTE)).toMatchObject({billedTry: true})
  })

  it('--source all counts a request the gateway logged once', () => {
    const requests = (source: 'gateway' | 'history' | 'all') =>
      usageGroups(history.db, {source, pivot: 'tool'})
        .filter((g) => g.key === 'claude-code')
        .reduce((n, g) => n + g.requests, 0)
    expect(requests('gateway')).toBe(2)
    expect(requests('history')).toBe(2)
    expect(requests('all')).toBe(3)
  })

  it('--source all counts a Gemini CLI call (no request id) once, by the matching reconcile uses', () => {
    const at = (t: string) => Date.parse(`2025-08-21T${t}Z`)
    const gemini = (time: number, requestId: string, model = 'gemini-2.5-pro') =>
      entry({entrance: 'gemini', time, requestId, model, inputTokens: 7, outputTokens: 3})
    logs.append(gemini(at('12:00:03'), 'g-answer'))
    logs.append(gemini(at('12:00:04'), 'g-internal'))
    logs.append(gemini(at('12:05:01'), 'g-m2'))
    logs.append(gemini(at('12:05:02'), 'g-other-model', 'gemini-2.5-flash'))
    logs.flush()
    const keys = timeMatchedHistoryKeys(history.db)
    const r = reconcile(history.db, {sinceMs: 0, tool: 'gemini-cli'})
    expect(keys).toHaveLength(r.days.reduce((n, d) => n + d.matchedByTime, 0))
    expect(keys).toHaveLength(2)
    const count = (tool: string, source: 'gateway' | 'history' | 'all', matched: string[] = []) =>
      usageGroups(history.db, {source, pivot: 'tool'}, matched)
        .filter((g) => g.key === tool)
        .reduce((n, g) => ({requests: n.requests + g.requests, output: n.output + g.outputTokens}), {
          requests: 0,
          output: 0,
        })
    const gateway = count('gemini-cli', 'gateway')
    const own = count('gemini-cli', 'history')
    expect(gateway.requests).toBe(4)
    expect(own.requests).toBe(3)
    // 4 gateway calls + 3 history rows, 2 of them the same calls: 5 requests, not 7
    const all = count('gemini-cli', 'all', keys)
    expect(all.requests).toBe(5)
    // the matched pair counts the gateway's tokens: the unmatched history row's are added
    const unmatched = history.db
      .prepare(
        `SELECT SUM(output_tokens) AS o FROM history WHERE tool = 'gemini-cli'
          AND key NOT IN (SELECT value FROM json_each(?))`,
      )
      .get(JSON.stringify(keys)) as {o: number}
    expect(all.output).toBe(gateway.output + unmatched.o)
    // Claude rows are still deduplicated by request id; --since narrows the matching too
    expect(count('claude-code', 'all', keys).requests).toBe(3)
    expect(timeMatchedHistoryKeys(history.db, {sinceMs: at('12:05:00')})).toHaveLength(1)
  })
})
