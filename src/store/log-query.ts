/**
 * Reading the gateway's request log: recent rows (`gwctl logs`, `/api/logs`) and usage pivots
 * (`gwctl usage`, `/api/usage`) from the hourly roll-up plus the raw rows of a partial hour. The
 * writer (batching, retries, retention) is log-store.ts, which re-exports these types.
 */
import type BetterSqlite3 from 'better-sqlite3'

import type {LogEntry} from './log-store.js'
import {
  brokenExpr,
  COUNT_FIELDS,
  errorCase,
  logRowConditions,
  statusCondition,
  TOKEN_SUMS,
  usageCounts,
  zeroTotals,
} from './usage-sql.js'

type Db = BetterSqlite3.Database

export const HOUR_MS = 3_600_000

export interface LogRow extends LogEntry {
  id: number
  requestId: string | null
}

export type StatusFilter = '2xx' | '4xx' | '5xx' | 'fallback'
export const STATUS_FILTERS: readonly StatusFilter[] = ['2xx', '4xx', '5xx', 'fallback']

export interface LogFilters {
  agentId?: string
  policyId?: string
  status?: StatusFilter
  /** Unix seconds: only requests at or after. */
  since?: number
  /** Most rows returned by {@link LogStore.queryLogs} (default 50). */
  limit?: number
}

export type Pivot = 'agent' | 'key' | 'provider' | 'model' | 'project' | 'policy'
export const PIVOTS: readonly Pivot[] = ['agent', 'key', 'provider', 'model', 'project', 'policy']

export interface UsageRow {
  /** The pivot value (null for rows without one, e.g. no project); `all` without a pivot. */
  key: string | null
  requests: number
  /** Requests answered with a status of 400 or more, or whose answer broke after its status (`broken`). */
  errors: number
  fallbacks: number
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  reasoningTokens: number
}

const PIVOT_COLUMNS: Record<Pivot, string> = {
  agent: 'agent_id',
  key: 'key_prefix',
  provider: 'provider',
  model: 'model',
  project: 'project',
  policy: 'policy_id',
}

/** Recent requests, newest first. */
export function selectLogs(db: Db, filters: LogFilters = {}): LogRow[] {
  const params: Record<string, unknown> = {}
  const where = logRowConditions(filters, params, brokenExpr(db))
  params.limit = Math.max(0, Math.floor(filters.limit ?? 50))
  const sql = `SELECT * FROM logs ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
    ORDER BY ts DESC, id DESC LIMIT @limit`
  return (db.prepare(sql).all(params) as Array<Record<string, unknown>>).map(toRow)
}

/**
 * Usage summed per pivot value (one row `all` without a pivot), largest token total first.
 * Reads the hourly roll-up, plus the raw rows of the partial hour after `since`.
 */
export function selectUsage(db: Db, filters: Omit<LogFilters, 'limit'> & {pivot?: Pivot} = {}): UsageRow[] {
  const column = filters.pivot ? PIVOT_COLUMNS[filters.pivot] : undefined
  const hourWhere: string[] = []
  const rawWhere: string[] = []
  const params: Record<string, unknown> = {}
  const broken = brokenExpr(db)
  if (filters.agentId !== undefined) {
    hourWhere.push('agent_id = @agentId')
    rawWhere.push('agent_id = @agentId')
    params.agentId = filters.agentId
  }
  if (filters.policyId !== undefined) {
    hourWhere.push('policy_id = @policyId')
    rawWhere.push('policy_id = @policyId')
    params.policyId = filters.policyId
  }
  switch (filters.status) {
    case '2xx':
    case '4xx':
    case '5xx':
      hourWhere.push('status_class = @statusClass')
      params.statusClass = filters.status
      rawWhere.push(statusCondition(filters.status, broken))
      break
    case 'fallback':
      hourWhere.push('fallback = 1')
      rawWhere.push(statusCondition(filters.status, broken))
      break
  }
  let rawPart = ''
  if (filters.since !== undefined) {
    const sinceMs = Math.round(filters.since * 1000)
    const firstFullHour = Math.ceil(sinceMs / HOUR_MS)
    hourWhere.push('hour >= @firstFullHour')
    params.firstFullHour = firstFullHour
    params.sinceMs = sinceMs
    params.hourStartMs = firstFullHour * HOUR_MS
    const keyExpr = column ? `COALESCE(${column}, '')` : "'all'"
    rawPart = `UNION ALL SELECT ${keyExpr} AS k, 1, ${errorCase(broken)}, fallback,
      input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, reasoning_tokens
      FROM logs WHERE ${['ts >= @sinceMs', 'ts < @hourStartMs', ...rawWhere].join(' AND ')}`
  }
  const hourKey = column ?? "'all'"
  const sql = `SELECT k, SUM(requests) AS requests, SUM(errors) AS errors, SUM(fallbacks) AS fallbacks,
      ${TOKEN_SUMS}
    FROM (
      SELECT ${hourKey} AS k, requests, errors, CASE WHEN fallback = 1 THEN requests ELSE 0 END AS fallbacks,
        input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, reasoning_tokens
      FROM usage_hourly ${hourWhere.length ? 'WHERE ' + hourWhere.join(' AND ') : ''}
      ${rawPart}
    )
    GROUP BY k
    ORDER BY (SUM(input_tokens) + SUM(output_tokens)) DESC, SUM(requests) DESC, k`
  return (db.prepare(sql).all(params) as Array<Record<string, number | string>>).map((r) => ({
    key: r.k === '' ? null : String(r.k),
    ...usageCounts(r),
  }))
}

function toRow(r: Record<string, unknown>): LogRow {
  return {
    id: Number(r.id),
    time: Number(r.ts),
    agentId: (r.agent_id as string | null) ?? null,
    keyPrefix: (r.key_prefix as string | null) ?? null,
    policyId: (r.policy_id as string | null) ?? null,
    entrance: String(r.entrance),
    requestedModel: (r.requested_model as string | null) ?? null,
    provider: (r.provider as string | null) ?? null,
    model: (r.model as string | null) ?? null,
    status: Number(r.status),
    fallback: r.fallback === 1,
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    cacheReadTokens: Number(r.cache_read_tokens),
    cacheCreationTokens: Number(r.cache_creation_tokens),
    // (a database of before the column, opened read-only: 0)
    cache1hTokens: Number(r.cache_1h_tokens ?? 0),
    reasoningTokens: Number(r.reasoning_tokens),
    latencyMs: Number(r.latency_ms),
    ttfbMs: r.ttfb_ms === null ? null : Number(r.ttfb_ms),
    error: (r.error as string | null) ?? null,
    project: (r.project as string | null) ?? null,
    requestId: (r.request_id as string | null) ?? null,
    upstreamFamily: (r.upstream_family as string | null | undefined) ?? null,
    broken: r.broken === 1,
    // (only on such a row: `gwctl logs --json` shows it there)
    ...(r.billed_try === 1 ? {billedTry: true} : {}),
  }
}

/** The sum of usage rows (every field of a row but its pivot key). */
export type UsageTotals = Omit<UsageRow, 'key'>

/** Adds up usage rows, for the totals line of `gwctl usage` and `/api/usage`. */
export function usageTotals(rows: readonly UsageRow[]): UsageTotals {
  const totals = zeroTotals()
  for (const r of rows) for (const k of COUNT_FIELDS) totals[k] += r[k]
  return totals
}

/** The log database opened to read, for commands run while the gateway is stopped. */
export interface LogReader {
  queryLogs(filters?: LogFilters): LogRow[]
  usage(filters?: Omit<LogFilters, 'limit'> & {pivot?: Pivot}): UsageRow[]
  close(): void
}

/**
 * Opens the log database read-only: no schema statements, no WAL switch, no write lock, nothing
 * prepared for writing (what `LogStore.open` does for the daemon, a third of `gwctl logs`' time
 * in the database). Undefined when there is no database or it holds no log tables yet (nothing
 * logged); a damaged file throws.
 */
export async function openLogReader(path: string): Promise<LogReader | undefined> {
  const {openSqlite} = await import('./sqlite.js')
  let db: Db
  try {
    db = openSqlite(path, {readonly: true, fileMustExist: true})
  } catch (error) {
    if ((error as {code?: string}).code === 'SQLITE_CANTOPEN') return undefined
    throw error
  }
  try {
    const {n} = db
      .prepare(
        "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('logs', 'usage_hourly')",
      )
      .get() as {n: number}
    if (n < 2) {
      db.close()
      return undefined
    }
  } catch (error) {
    db.close()
    throw error
  }
  return {
    queryLogs: (filters) => selectLogs(db, filters),
    usage: (filters) => selectUsage(db, filters),
    close: () => db.close(),
  }
}
