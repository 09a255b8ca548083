/**
 * SQL shared by the gateway's own usage and log queries (log-store.ts) and the cross-source usage
 * (usage-query.ts): the status filter on raw log rows, the token sums and the row they map to.
 */
import type {LogFilters, StatusFilter, UsageTotals} from './log-query.js'

/**
 * The expression of a row's `broken` flag (an answer that broke after its status went out: a cut
 * or truncated stream) on `db`: the column, or `0` on a database made before it that was opened
 * read-only and so not given the column yet.
 */
export function brokenExpr(db: {prepare(sql: string): {all(): unknown[]}}): string {
  let expr = brokenExprs.get(db)
  if (expr === undefined) {
    const columns = db.prepare('PRAGMA table_info(logs)').all() as Array<{name: string}>
    expr = columns.some((c) => c.name === 'broken') ? 'broken' : '0'
    brokenExprs.set(db, expr)
  }
  return expr
}
const brokenExprs = new WeakMap<object, string>()

/**
 * The words of a billed try's own row (daemon/router/proxy.ts `billedTryError`, daemon/router/
 * log-entry.ts `billedTryEntries`) as a condition: how such a row written before the `billed_try`
 * column is known, once, when the column is added (log-store.ts `addColumns`), or on a database
 * made before it that was opened read-only.
 */
export const BILLED_TRY_NOTE = `(request_id IS NULL AND error LIKE '%for what the client never got (its request''s answer is in the row of %')`

/**
 * The expression of a row's `billed_try` flag (a billed try's row of its own: log-store.ts
 * LogEntry `billedTry`) on `db`: the column, or {@link BILLED_TRY_NOTE} (0 or 1) on a database
 * made before it that was opened read-only.
 */
export function billedTryExpr(db: {prepare(sql: string): {all(): unknown[]}}): string {
  let expr = billedTryExprs.get(db)
  if (expr === undefined) {
    const columns = db.prepare('PRAGMA table_info(logs)').all() as Array<{name: string}>
    expr = columns.some((c) => c.name === 'billed_try') ? 'billed_try' : `COALESCE(${BILLED_TRY_NOTE}, 0)`
    billedTryExprs.set(db, expr)
  }
  return expr
}
const billedTryExprs = new WeakMap<object, string>()

/**
 * The expression of the 1-hour part of a row's cache writes in `table` (`logs` or
 * `usage_hourly`) on `db`: the column `cache_1h_tokens`, or `0` on a database made before it that
 * was opened read-only and so not given the column yet (its rows knew no 1-hour writes).
 */
export function cache1hExpr(
  db: {prepare(sql: string): {all(): unknown[]}},
  table: 'logs' | 'usage_hourly',
): string {
  let exprs = cache1hExprs.get(db)
  if (!exprs) cache1hExprs.set(db, (exprs = new Map()))
  let expr = exprs.get(table)
  if (expr === undefined) {
    const columns = db.prepare(`PRAGMA table_info(${table})`).all() as Array<{name: string}>
    expr = columns.some((c) => c.name === 'cache_1h_tokens') ? 'cache_1h_tokens' : '0'
    exprs.set(table, expr)
  }
  return expr
}
const cache1hExprs = new WeakMap<object, Map<string, string>>()

/**
 * The condition a `--status` filter puts on raw rows (`status`, `fallback`, `broken` columns). A
 * broken answer (status 200, then the stream broke: the client got an error event) counts as
 * `5xx`, an upstream failure, and not as `2xx`.
 */
export function statusCondition(status: StatusFilter, broken = 'broken'): string {
  switch (status) {
    case '2xx':
      return `status < 400 AND ${broken} = 0`
    case '4xx':
      return 'status >= 400 AND status < 500'
    case '5xx':
      return `(status >= 500 OR ${broken} = 1)`
    case 'fallback':
      return 'fallback = 1'
  }
}

/** The 0/1 error of a raw row: a status of 400 or more, or an answer that broke after its status. */
export function errorCase(broken = 'broken'): string {
  return `CASE WHEN status >= 400 OR ${broken} = 1 THEN 1 ELSE 0 END`
}

/**
 * The conditions the gateway filters (agent, policy, `since` in Unix seconds, status) put on raw
 * log rows (`agent_id`, `policy_id`, `ts` in ms, `status`, `fallback`); their values go into
 * `params`. Shared by `gwctl logs` and both usage queries.
 */
export function logRowConditions(
  f: Omit<LogFilters, 'limit'>,
  params: Record<string, unknown>,
  broken = 'broken',
): string[] {
  const where: string[] = []
  if (f.agentId !== undefined) {
    where.push('agent_id = @agentId')
    params.agentId = f.agentId
  }
  if (f.policyId !== undefined) {
    where.push('policy_id = @policyId')
    params.policyId = f.policyId
  }
  if (f.since !== undefined) {
    where.push('ts >= @sinceMs')
    params.sinceMs = Math.round(f.since * 1000)
  }
  if (f.status) where.push(statusCondition(f.status, broken))
  return where
}

/** The token sums of a usage query, as the columns {@link usageCounts} reads. */
export const TOKEN_SUMS = `SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
  SUM(cache_read_tokens) AS cache_read_tokens, SUM(cache_creation_tokens) AS cache_creation_tokens,
  SUM(reasoning_tokens) AS reasoning_tokens`

/** The counts of a query row holding `requests`, `errors`, `fallbacks` and {@link TOKEN_SUMS}. */
export function usageCounts(r: Record<string, unknown>): UsageTotals {
  return {
    requests: Number(r.requests),
    errors: Number(r.errors),
    fallbacks: Number(r.fallbacks),
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    cacheReadTokens: Number(r.cache_read_tokens),
    cacheCreationTokens: Number(r.cache_creation_tokens),
    reasoningTokens: Number(r.reasoning_tokens),
  }
}

/** The fields of usage counts, in display order. */
export const COUNT_FIELDS = [
  'requests',
  'errors',
  'fallbacks',
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheCreationTokens',
  'reasoningTokens',
] as const satisfies ReadonlyArray<keyof UsageTotals>

/** Usage counts of nothing. */
export function zeroTotals(): UsageTotals {
  return {
    requests: 0,
    errors: 0,
    fallbacks: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    reasoningTokens: 0,
  }
}

/**
 * The one order of usage rows (`gwctl usage`, the app's Usage view, live rows included): most
 * tokens first (input, output, cache reads and writes), then most requests, then by key; by day,
 * oldest day first.
 */
export function sortUsageRows<T extends UsageTotals & {key: string | null}>(
  rows: T[],
  pivot: string | null,
): T[] {
  const tokens = (r: T) => r.inputTokens + r.outputTokens + r.cacheReadTokens + r.cacheCreationTokens
  if (pivot === 'day') return rows.sort((a, b) => String(a.key).localeCompare(String(b.key)))
  return rows.sort(
    (a, b) => tokens(b) - tokens(a) || b.requests - a.requests || String(a.key).localeCompare(String(b.key)),
  )
}
