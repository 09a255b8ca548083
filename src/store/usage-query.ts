/**
 * Usage across sources: the gateway's request log (`logs`) and the agents' own history
 * (`history`), in the same SQLite file. `all` never counts a request twice: a history row whose
 * request id the gateway logged is the same request, and the gateway's row stands for it; so does
 * a Gemini CLI row (no request id) that reconcile matches to a gateway row by time.
 *
 * Rows come back grouped by pivot value and model (and provider), so the caller can price each
 * model; the `day` pivot is grouped in 15-minute buckets and folded into days of any time zone.
 */
import type BetterSqlite3 from 'better-sqlite3'

import type {AgentTool} from '../scanners/agent-homes.js'
import type {StatusFilter} from './log-store.js'
import {statusCondition, TOKEN_SUMS, usageCounts} from './usage-sql.js'

export type UsageSource = 'gateway' | 'history' | 'all'
export const USAGE_SOURCES: readonly UsageSource[] = ['gateway', 'history', 'all']
export type UsagePivotAll =
  'agent' | 'key' | 'provider' | 'model' | 'project' | 'policy' | 'day' | 'tool' | 'session'

export interface UsageQueryFilters {
  source: UsageSource
  pivot?: UsagePivotAll
  tool?: AgentTool
  agentId?: string
  policyId?: string
  status?: StatusFilter
  /** Unix seconds. */
  since?: number
  /** IANA zone for the `day` pivot (default UTC). */
  timezone?: string
}

/** One group: pivot value x provider x model. */
export interface UsageGroup {
  key: string | null
  provider: string | null
  model: string | null
  requests: number
  errors: number
  fallbacks: number
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  reasoningTokens: number
}

const BUCKET_MS = 900_000

/** The agent tool a gateway row came from, by its entrance (`chat` is any client). */
const GATEWAY_TOOL = `CASE entrance WHEN 'messages' THEN 'claude-code' WHEN 'responses' THEN 'codex'
  WHEN 'gemini' THEN 'gemini-cli' ELSE NULL END`

/** The gateway logs every prompt token as input; here input is what was not read from or written to cache. */
export const GATEWAY_INPUT = 'MAX(input_tokens - cache_read_tokens - cache_creation_tokens, 0)'

const PIVOT_EXPR: Record<UsagePivotAll, string> = {
  agent: 'agent_id',
  key: 'key_prefix',
  provider: 'provider',
  model: 'model',
  project: 'project',
  policy: 'policy_id',
  tool: 'tool',
  session: 'session',
  day: `ts / ${BUCKET_MS}`,
}

function hasTable(db: BetterSqlite3.Database, name: string): boolean {
  return db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(name) !== undefined
}

/**
 * The union of the selected sources as one row set with common columns. `all` leaves out the
 * history rows the gateway logged: by request id, and the keys in `@timeMatched` (a JSON array of
 * the Gemini CLI rows `timeMatchedHistoryKeys` in reconcile-query.ts matched by time).
 */
function sourceSql(db: BetterSqlite3.Database, source: UsageSource): string {
  const logs = hasTable(db, 'logs')
  const parts: string[] = []
  if (source !== 'history' && logs)
    parts.push(`SELECT ts, agent_id, key_prefix, policy_id, provider, model, project, NULL AS session,
      ${GATEWAY_TOOL} AS tool, status, fallback, ${GATEWAY_INPUT} AS input_tokens, output_tokens, cache_read_tokens,
      cache_creation_tokens, reasoning_tokens FROM logs`)
  if (source !== 'gateway' && hasTable(db, 'history')) {
    const notLogged =
      source === 'all' && logs
        ? `WHERE (request_id IS NULL OR request_id NOT IN (SELECT request_id FROM logs WHERE request_id IS NOT NULL))
            AND key NOT IN (SELECT value FROM json_each(@timeMatched))`
        : ''
    parts.push(`SELECT ts, NULL AS agent_id, NULL AS key_prefix, NULL AS policy_id, NULL AS provider, model,
      project, session, tool, 200 AS status, 0 AS fallback, input_tokens,
      output_tokens, cache_read_tokens, cache_creation_tokens, reasoning_tokens FROM history ${notLogged}`)
  }
  return parts.length > 0 ? parts.join(' UNION ALL ') : ''
}

/** `YYYY-MM-DD` of `ms` in `timeZone`. */
export function dayIn(ms: number, format: Intl.DateTimeFormat): string {
  return format.format(new Date(ms))
}

/** A formatter for days in `timeZone`; throws RangeError for an unknown zone. */
export function dayFormat(timeZone = 'UTC'): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-CA', {timeZone, year: 'numeric', month: '2-digit', day: '2-digit'})
}

/**
 * Usage grouped by pivot value, provider and model. With `source: 'all'`, `timeMatched` holds the
 * keys of history rows matched to gateway rows by time (counted once, as the gateway's).
 */
export function usageGroups(
  db: BetterSqlite3.Database,
  f: UsageQueryFilters,
  timeMatched: readonly string[] = [],
): UsageGroup[] {
  const from = sourceSql(db, f.source)
  if (from === '') return []
  const where: string[] = []
  const params: Record<string, unknown> = {}
  if (from.includes('@timeMatched')) params.timeMatched = JSON.stringify(timeMatched)
  if (f.tool) {
    where.push('tool = @tool')
    params.tool = f.tool
  }
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
  if (f.status) where.push(statusCondition(f.status))
  const keyExpr = f.pivot ? PIVOT_EXPR[f.pivot] : `'all'`
  const sql = `SELECT ${keyExpr} AS k, provider, model, COUNT(*) AS requests,
      SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END) AS errors, SUM(fallback) AS fallbacks, ${TOKEN_SUMS}
    FROM (${from}) ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
    GROUP BY k, provider, model`
  const rows = db.prepare(sql).all(params) as Array<Record<string, number | string | null>>
  const format = f.pivot === 'day' ? dayFormat(f.timezone) : undefined
  return rows.map((r) => ({
    key: format ? dayIn(Number(r.k) * BUCKET_MS, format) : r.k === null || r.k === '' ? null : String(r.k),
    provider: r.provider === null ? null : String(r.provider),
    model: r.model === null ? null : String(r.model),
    ...usageCounts(r),
  }))
}
