/**
 * `gwctl usage` across sources (gateway log, agent history, both), `gwctl usage rescan` and
 * `gwctl usage reconcile`. The history lives in the log database; without a running daemon
 * (which scans every 60 s) `gwctl usage` scans incrementally before answering.
 */
import {existsSync} from 'node:fs'

import type BetterSqlite3 from 'better-sqlite3'

import {UsageError} from '../core/errors.js'
import type {AgentTool} from '../store/history-rows.js'
import {agentHomes} from '../agent-tools/agent-homes.js'
import type {ScanStats} from '../agent-tools/history/scan.js'
import type {LogFilters, Pivot, StatusFilter, UsageRow} from '../store/log-query.js'
import type {Reconciliation} from '../store/reconcile-query.js'
import type {UsageGroup, UsagePivotAll, UsageQueryFilters} from '../store/usage-query.js'
import {fileHasBytes, homeFile, pendingFileOf} from '../store/paths.js'
import {COUNT_FIELDS, sortUsageRows, zeroTotals} from '../store/usage-sql.js'
import {liveGatewayPort} from './gateway-api.js'
import type {UsageResult} from './logs.js'
import type {Pricer} from './usage-cost.js'
import {openHistory, rescanHistory} from './usage-rescan.js'

export {openHistory, rescanHistory}

/** Pivots `gwctl usage` offers. */
export const USAGE_PIVOTS_ALL = [
  'agent',
  'key',
  'provider',
  'model',
  'project',
  'day',
  'month',
  'tool',
  'session',
] as const

/** A usage row (the gateway's fields, the same for history) with its total and cost. */
export interface UsageReportRow extends UsageRow {
  /** The part of `cacheCreationTokens` written to the 1-hour cache (priced at 2x input). */
  cache1hTokens: number
  totalTokens: number
  /** Estimated USD; null when no model of the row has a price ("unpriced"). */
  costUSD: number | null
  /** Models of the row without a price (their tokens are not in `costUSD`). */
  unpricedModels: string[]
  /** `--breakdown`: the row per model, largest first. */
  breakdown?: Array<Omit<UsageReportRow, 'key' | 'breakdown'> & {model: string | null}>
}

export interface UsageReport {
  pivot: UsagePivotAll | null
  /** Which sources were counted. */
  include: UsageQueryFilters['source']
  rows: UsageReportRow[]
  totals: Omit<UsageReportRow, 'key'>
  source: 'database'
  /** The incremental scan done before answering (no daemon running), if any. */
  scan?: Pick<ScanStats, 'files' | 'filesRead' | 'rows' | 'durationMs'>
}

/** Checks a `--timezone` value. */
export function checkTimezone(zone: string | undefined): void {
  if (zone === undefined) return
  try {
    new Intl.DateTimeFormat('en-US', {timeZone: zone})
  } catch {
    throw new UsageError(
      `"${zone}" is not a time zone: use an IANA name such as UTC, Europe/Paris or America/New_York.`,
      {
        code: 'invalid_timezone',
      },
    )
  }
}

const emptyTotals = (): Omit<UsageReportRow, 'key'> => ({
  ...zeroTotals(),
  cache1hTokens: 0,
  totalTokens: 0,
  costUSD: null,
  unpricedModels: [],
})

function add(
  into: Omit<UsageReportRow, 'key'>,
  g: UsageGroup,
  cost: number | null,
  model: string | null,
): void {
  for (const k of COUNT_FIELDS) into[k] += g[k]
  into.cache1hTokens += g.cache1hTokens ?? 0
  const tokens = g.inputTokens + g.outputTokens + g.cacheReadTokens + g.cacheCreationTokens
  into.totalTokens += tokens
  if (cost !== null) into.costUSD = (into.costUSD ?? 0) + cost
  else if (tokens > 0) {
    const name = model ?? '(unknown)'
    if (!into.unpricedModels.includes(name)) into.unpricedModels.push(name)
  }
}

/** Folds model groups into pivot rows with totals and cost. */
export function reportRows(
  groups: readonly UsageGroup[],
  pricer: Pricer,
  pivot: UsagePivotAll | null,
  options: {breakdown?: boolean} = {},
): Pick<UsageReport, 'rows' | 'totals'> {
  const byKey = new Map<string | null, UsageReportRow>()
  const totals = emptyTotals()
  for (const g of groups) {
    let row = byKey.get(g.key)
    if (!row)
      byKey.set(g.key, (row = {key: g.key, ...emptyTotals(), ...(options.breakdown ? {breakdown: []} : {})}))
    const cost = pricer.cost(g.model, g, g.provider)
    add(row, g, cost, g.model)
    add(totals, g, cost, g.model)
    if (row.breakdown) {
      let line = row.breakdown.find((m) => m.model === g.model)
      if (!line) row.breakdown.push((line = {model: g.model, ...emptyTotals()}))
      add(line, g, cost, g.model)
    }
  }
  const rows = sortUsageRows([...byKey.values()], pivot === 'month' ? 'day' : pivot)
  for (const row of rows) row.breakdown?.sort((a, b) => b.totalTokens - a.totalTokens)
  return {rows, totals}
}

/**
 * Applies the rows that wait in logs.pending (a gateway stopped while logs.db was locked) before
 * the log database is read: one `stat` when there are none (log-pending.ts is loaded only when
 * there are; with a gateway running it leaves them to the gateway).
 */
export async function applyPendingLogRows(): Promise<void> {
  if (fileHasBytes(pendingFileOf(homeFile('logDb'))))
    await (await import('./log-pending.js')).applyPendingLogs()
}

/**
 * Usage from the log database over the chosen sources, scanning history first when no daemon runs.
 * `scanned`: the caller's own scan just before (its summary), or null when it found a daemon,
 * which scans; undefined to decide here.
 */
export async function usageReport(
  filters: UsageQueryFilters & {
    signal?: AbortSignal
    scanned?: UsageReport['scan'] | null
    breakdown?: boolean
  },
): Promise<UsageReport> {
  const {signal, scanned, breakdown, ...query} = filters
  checkTimezone(query.timezone)
  const scan = scanned === undefined ? await scanUnlessDaemon(query.source, signal) : (scanned ?? undefined)
  const empty = {pivot: query.pivot ?? null, include: query.source, source: 'database' as const, scan}
  await applyPendingLogRows()
  if (!existsSync(homeFile('logDb'))) return {...empty, rows: [], totals: emptyTotals()}
  const [{usageGroups}, {createPricer}] = await Promise.all([
    import('../store/usage-query.js'),
    import('./usage-cost.js'),
  ])
  // Gemini CLI, OpenCode and Qwen Code record no request id: `all` counts the calls reconcile
  // matches by time once.
  const reconcileQuery = query.source === 'all' ? await import('../store/reconcile-query.js') : undefined
  const timeMatchedKeys =
    reconcileQuery && (query.tool === undefined || reconcileQuery.TIME_MATCHED_TOOLS.has(query.tool))
      ? reconcileQuery.timeMatchedHistoryKeys
      : undefined
  // (the gateway's rows of each tool: asked for, or needed to match the time-matched tools)
  const agentTools =
    timeMatchedKeys || query.pivot === 'tool' || query.tool !== undefined ? await agentToolsOf() : undefined
  const groups = await readUsageDatabase((db) =>
    usageGroups(
      db,
      query,
      timeMatchedKeys?.(db, {sinceMs: query.since === undefined ? 0 : query.since * 1000, agentTools}) ?? [],
    ),
  )
  return {...empty, ...reportRows(groups, await createPricer(), query.pivot ?? null, {breakdown})}
}

/**
 * The gateway's usage per pivot value with the gateway stopped (what `getUsage` reads from the log
 * database: every prompt token as input, largest first) and the usage report of the same rows
 * (their cost), from one query on one connection where the two took two of each: `gwctl usage`
 * prints both. Undefined where that query cannot answer byte for byte as `getUsage` does: a
 * status filter (the two queries class a broken answer of a 4xx status apart), no log database,
 * or one without both log tables; the caller then asks each on its own. A pricer that fails
 * leaves the report undefined (the rows print without cost), as a failed report does there.
 */
export async function gatewayUsageReport(
  filters: Omit<LogFilters, 'limit' | 'status'> & {pivot?: Pivot; status?: StatusFilter},
): Promise<{usage: UsageResult; report: UsageReport | undefined} | undefined> {
  if (filters.status !== undefined) return undefined
  await applyPendingLogRows()
  if (!existsSync(homeFile('logDb'))) return undefined
  const {usageGroups} = await import('../store/usage-query.js')
  const query: UsageQueryFilters = {
    source: 'gateway',
    pivot: filters.pivot,
    agentId: filters.agentId,
    policyId: filters.policyId,
    since: filters.since,
  }
  const groups = await readUsageDatabase((db) =>
    db
      .prepare(
        "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('logs', 'usage_hourly')",
      )
      .pluck()
      .get() === 2
      ? usageGroups(db, query, [], {promptTokens: true})
      : undefined,
  )
  if (!groups) return undefined
  // getUsage's rows: summed per pivot value, in selectUsage's order (input + output tokens, then
  // requests, descending, then the value as SQLite orders it: its UTF-8 bytes, none as '')
  const byKey = new Map<string | null, UsageRow>()
  for (const g of groups) {
    let row = byKey.get(g.key)
    if (!row) byKey.set(g.key, (row = {key: g.key, ...zeroTotals()}))
    for (const k of COUNT_FIELDS) if (k !== 'inputTokens') row[k] += g[k]
    row.inputTokens += g.promptTokens ?? 0
  }
  const rows = [...byKey.values()].sort(
    (a, b) =>
      b.inputTokens + b.outputTokens - (a.inputTokens + a.outputTokens) ||
      b.requests - a.requests ||
      Buffer.compare(Buffer.from(a.key ?? ''), Buffer.from(b.key ?? '')),
  )
  const totals = zeroTotals()
  for (const r of rows) for (const k of COUNT_FIELDS) totals[k] += r[k]
  const usage: UsageResult = {pivot: filters.pivot ?? null, rows, totals, source: 'database'}
  let report: UsageReport | undefined
  try {
    const {createPricer} = await import('./usage-cost.js')
    const pivot = filters.pivot ?? null
    report = {
      pivot,
      include: 'gateway',
      source: 'database',
      ...reportRows(groups, await createPricer(), pivot),
    }
  } catch {
    report = undefined
  }
  return {usage, report}
}

/**
 * Scans the agents' history incrementally when the source includes it and no daemon runs (the
 * daemon scans every 60 s); the gateway's rows need no scan, nor the probe that decides on one.
 */
export async function scanUnlessDaemon(
  source: UsageQueryFilters['source'],
  signal?: AbortSignal,
): Promise<UsageReport['scan']> {
  if (source === 'gateway' || (await liveGatewayPort(signal)) !== undefined) return undefined
  return scanSummary(await rescanHistory({signal}))
}

/**
 * Runs `read` on a read-only connection to the log database: usage only reads it, and the
 * history tables are already in their current layout wherever a scan or a daemon opened the
 * history store (its open checks the layout and migrates; loading it is most of what a read-only
 * `gwctl usage` would otherwise load). A read that fails there (a database of an older layout
 * nobody opened since) runs again on the history store, which migrates it first.
 */
export async function readUsageDatabase<T>(read: (db: BetterSqlite3.Database) => T): Promise<T> {
  await applyPendingLogRows()
  const {openSqlite} = await import('../store/sqlite.js')
  let db: BetterSqlite3.Database | undefined
  try {
    db = openSqlite(homeFile('logDb'), {readonly: true, fileMustExist: true})
    return read(db)
  } catch (error) {
    if (!(error instanceof Error) || error.name !== 'SqliteError') throw error
  } finally {
    db?.close()
  }
  const store = await openHistory()
  try {
    return read(store.db)
  } finally {
    store.close()
  }
}

/**
 * Whether the history tables hold any row (false when there is no database yet); `scanFirst`
 * scans incrementally before asking.
 */
export async function historyHasRows(
  options: {
    scanFirst?: boolean
    signal?: AbortSignal
    /** Told what the scan read (nothing, when there is no history folder to scan). */
    onScan?: (scan: NonNullable<UsageReport['scan']>) => void
  } = {},
): Promise<boolean> {
  const hasRows = (db: BetterSqlite3.Database): boolean =>
    db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'history'").get() !== undefined &&
    db.prepare('SELECT 1 FROM history LIMIT 1').get() !== undefined
  const recorded = () => existsSync(homeFile('logDb')) && readUsageDatabase(hasRows)
  if (!options.scanFirst) return recorded()
  // No agent history folder on this machine: an incremental scan would find nothing to read, so
  // the history store (opened to write, its layout checked) is not opened either.
  if (!agentHomes().some((home) => home.historyDirs.some((dir) => existsSync(dir)))) {
    options.onScan?.({files: 0, filesRead: 0, rows: 0, durationMs: 0})
    return recorded()
  }
  const store = await openHistory()
  try {
    // scanned and asked on one connection (`gwctl usage` without a daemon does both)
    const {scanHistory} = await import('../agent-tools/history/scan.js')
    // (not inside `onScan?.(…)`: an optional call skips its arguments when there is no callback)
    const stats = await scanHistory(store, {signal: options.signal})
    options.onScan?.(scanSummary(stats))
    return hasRows(store.db)
  } finally {
    store.close()
  }
}

function scanSummary(s: ScanStats): NonNullable<UsageReport['scan']> {
  return {files: s.files, filesRead: s.filesRead, rows: s.rows, durationMs: s.durationMs}
}

export type ReconcileResult = Reconciliation & {since: number}

/**
 * The agent tool of each agent in the gateway's state: its binding's, the tool it was issued for
 * (`sourceTool`), else its kind's (`opencode_subagent` is OpenCode's). The gateway's rows are
 * given to their agent's tool by it: OpenCode and Qwen Code come in through the entrances of the
 * other tools (messages, chat, ...).
 */
export async function agentToolsOf(): Promise<Record<string, AgentTool>> {
  const [{StateStore}, {agentToolOf}] = await Promise.all([
    import('../store/state.js'),
    import('./agent-tool.js'),
  ])
  const path = homeFile('state')
  if (!existsSync(path)) return {}
  const state = (await StateStore.open(path)).data
  const bound = new Map((state.bindings ?? []).map((b) => [b.agentId, b.tool]))
  const result: Record<string, AgentTool> = {}
  for (const a of state.agents) {
    const tool = agentToolOf(a, bound.get(a.id))
    if (tool) result[a.id] = tool
  }
  return result
}

/** `gwctl usage reconcile`: gateway log vs agent history since `since` (Unix seconds). */
export async function reconcileUsage(options: {
  since: number
  tool?: AgentTool
  signal?: AbortSignal
}): Promise<ReconcileResult> {
  if ((await liveGatewayPort(options.signal)) === undefined) await rescanHistory({signal: options.signal})
  const empty = {since: options.since, days: [], onlyHistory: [], onlyGateway: [], differences: []}
  await applyPendingLogRows()
  if (!existsSync(homeFile('logDb'))) return empty
  const {reconcile} = await import('../store/reconcile-query.js')
  const store = await openHistory()
  try {
    const agentTools = await agentToolsOf()
    return {
      since: options.since,
      ...reconcile(store.db, {sinceMs: options.since * 1000, tool: options.tool, agentTools}),
    }
  } finally {
    store.close()
  }
}
