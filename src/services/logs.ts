/**
 * `gwctl logs` and `gwctl usage`: the request log and usage pivots, from the running gateway's
 * management API, or straight from the log database when it is stopped (better-sqlite3 is
 * loaded only then).
 */
import {existsSync} from 'node:fs'
import {setTimeout as sleep} from 'node:timers/promises'

import {UsageError} from '../core/errors.js'
import type {Column} from '../core/output.js'
import type {
  LogFilters,
  LogRow,
  LogStore,
  Pivot,
  StatusFilter,
  UsageRow,
  UsageTotals,
} from '../store/log-store.js'
import {usageTotals} from '../store/log-store.js'
import {homeFile} from '../store/paths.js'
import {gatewayGet, liveGatewayPort} from './gateway-api.js'

/** Pivots of `gwctl usage` (spec 4.3; the store also knows `policy`). */
export const USAGE_PIVOTS = ['agent', 'key', 'provider', 'model', 'project'] as const
export const STATUS_VALUES: readonly StatusFilter[] = ['2xx', '4xx', '5xx', 'fallback']

const UNIT_SECONDS: Record<string, number> = {s: 1, m: 60, h: 3600, d: 86_400, w: 604_800}

/**
 * `--since`: a duration back from now (`90s`, `30m`, `1h`, `7d`, `2w`) or Unix seconds. Returns
 * Unix seconds; exit 2 for anything else.
 */
export function parseSince(text: string, nowMs: number = Date.now()): number {
  const value = text.trim()
  if (/^\d+$/.test(value)) return Number(value)
  const match = /^(\d+(?:\.\d+)?)\s*([smhdw])$/i.exec(value)
  if (!match) {
    throw new UsageError(`"${text}" is not a time: use a duration like 30m, 1h, 7d, or Unix seconds.`, {
      code: 'invalid_since',
    })
  }
  return Math.floor(nowMs / 1000 - Number(match[1]) * UNIT_SECONDS[match[2].toLowerCase()])
}

/** `--limit`: a whole number from 1 to 10000. */
export function parseLimit(value: number | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!Number.isInteger(value) || value < 1 || value > 10_000) {
    throw new UsageError(`--limit must be a whole number from 1 to 10000, not ${value}.`, {
      code: 'invalid_limit',
    })
  }
  return value
}

export interface LogQuery extends LogFilters {
  signal?: AbortSignal
}

export interface LogsResult {
  /** Newest first, as the API returns them. */
  logs: LogRow[]
  source: 'gateway' | 'database'
}

function apiQuery(filters: LogFilters & {pivot?: string}): Record<string, string | number | undefined> {
  return {
    agent_id: filters.agentId,
    policy_id: filters.policyId,
    status: filters.status,
    since: filters.since,
    limit: filters.limit,
    pivot: filters.pivot,
  }
}

async function withDatabase<T>(use: (store: LogStore) => T): Promise<T | undefined> {
  const path = homeFile('logDb')
  if (!existsSync(path)) return undefined
  const {LogStore: Store} = await import('../store/log-store.js')
  const store = await Store.open(path)
  try {
    return use(store)
  } finally {
    store.close()
  }
}

/** Log rows from the gateway, or from the log database when it is stopped. */
export async function getLogs(query: LogQuery = {}): Promise<LogsResult> {
  const {signal, ...filters} = query
  const port = await liveGatewayPort(signal)
  if (port !== undefined) {
    const body = await gatewayGet<{logs: LogRow[]}>(port, '/api/logs', apiQuery(filters), signal)
    return {logs: body.logs, source: 'gateway'}
  }
  const logs = (await withDatabase((store) => store.queryLogs(filters))) ?? []
  return {logs, source: 'database'}
}

/**
 * Polls for new rows every `intervalMs` and hands each new batch (oldest first) to `onRows`,
 * until the signal aborts. The first batch is the latest `limit` rows.
 */
export async function followLogs(
  query: LogQuery,
  onRows: (rows: LogRow[]) => void,
  options: {intervalMs?: number} = {},
): Promise<void> {
  const seen = new Set<number>()
  let since = query.since
  let first = true
  while (!query.signal?.aborted) {
    const {logs} = await getLogs({...query, since, limit: first ? query.limit : 1000})
    const fresh = logs.filter((r) => !seen.has(r.id)).reverse()
    for (const r of fresh) {
      seen.add(r.id)
      const s = Math.floor(r.time / 1000)
      if (since === undefined || s > since) since = s
    }
    // Rows at the same second as `since` come back again; forget the older ids.
    if (seen.size > 5000) for (const id of [...seen].slice(0, seen.size - 2000)) seen.delete(id)
    if (fresh.length > 0) onRows(fresh)
    first = false
    try {
      await sleep(options.intervalMs ?? 1000, undefined, {signal: query.signal})
    } catch {
      return
    }
  }
}

export interface UsageResult {
  pivot: Pivot | null
  rows: UsageRow[]
  totals: UsageTotals
  source: 'gateway' | 'database'
}

/** Usage per pivot value, from the gateway or the log database. */
export async function getUsage(query: Omit<LogQuery, 'limit'> & {pivot?: Pivot} = {}): Promise<UsageResult> {
  const {signal, ...filters} = query
  const port = await liveGatewayPort(signal)
  if (port !== undefined) {
    const body = await gatewayGet<{pivot?: Pivot | null; rows: UsageRow[]; totals?: UsageTotals}>(
      port,
      '/api/usage',
      apiQuery(filters),
      signal,
    )
    return {
      pivot: body.pivot ?? filters.pivot ?? null,
      rows: body.rows,
      totals: {...usageTotals(body.rows), ...body.totals},
      source: 'gateway',
    }
  }
  const rows = (await withDatabase((store) => store.usage(filters))) ?? []
  return {pivot: filters.pivot ?? null, rows, totals: usageTotals(rows), source: 'database'}
}

/** `2026-11-22 03:57:11` in local time. */
export function formatTime(ms: number): string {
  const d = new Date(ms)
  const p = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`
}

function ms(value: number | null): string {
  return value === null ? '-' : `${Math.round(value)}ms`
}

function truncate(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + '…' : text
}

/** `1,234,567` */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US')
}

/** The columns of the log table (oldest row at the top). */
export const LOG_COLUMNS: Column<LogRow>[] = [
  {header: 'TIME', value: (r) => formatTime(r.time)},
  {header: 'AGENT', value: (r) => r.agentId ?? '-'},
  {header: 'ENTRANCE', value: (r) => r.entrance},
  {
    header: 'PROVIDER/MODEL',
    value: (r) => (r.provider ? `${r.provider}/${r.model ?? r.requestedModel ?? '?'}` : '-'),
  },
  {header: 'STATUS', value: (r) => r.status, align: 'right'},
  {header: 'FALLBACK', value: (r) => (r.fallback ? 'yes' : '-')},
  {header: 'IN', value: (r) => r.inputTokens, align: 'right'},
  {header: 'OUT', value: (r) => r.outputTokens, align: 'right'},
  {header: 'CACHED', value: (r) => r.cacheReadTokens + r.cacheCreationTokens, align: 'right'},
  {header: 'LATENCY', value: (r) => ms(r.latencyMs), align: 'right'},
  {header: 'TTFB', value: (r) => ms(r.ttfbMs), align: 'right'},
  {header: 'ERROR', value: (r) => (r.error ? truncate(r.error.replace(/\s+/g, ' '), 60) : '')},
]

/** Fixed widths of the columns when following (rows arrive one batch at a time). */
const FOLLOW_WIDTHS = [19, 20, 9, 32, 6, 8, 7, 7, 7, 9, 8, 0]

/** One line per row with fixed column widths, for `--follow`; the header when `header`. */
export function followLines(rows: readonly LogRow[], header = false): string[] {
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => {
        const width = FOLLOW_WIDTHS[i]
        if (width === 0) return cell
        const text = truncate(cell, width)
        return LOG_COLUMNS[i].align === 'right' ? text.padStart(width) : text.padEnd(width)
      })
      .join('  ')
      .trimEnd()
  const lines = rows.map((r) => line(LOG_COLUMNS.map((c) => String(c.value(r) ?? ''))))
  return header ? [line(LOG_COLUMNS.map((c) => c.header)), ...lines] : lines
}

/** The columns of the usage table; the first is the pivot value. */
export function usageColumns(pivot: Pivot | null): Column<UsageRow & {key: string | null}>[] {
  return [
    {header: (pivot ?? 'scope').toUpperCase(), value: (r) => r.key ?? '(none)'},
    {header: 'REQUESTS', value: (r) => formatCount(r.requests), align: 'right'},
    {header: 'ERRORS', value: (r) => formatCount(r.errors), align: 'right'},
    {header: 'FALLBACKS', value: (r) => formatCount(r.fallbacks), align: 'right'},
    {header: 'INPUT', value: (r) => formatCount(r.inputTokens), align: 'right'},
    {header: 'OUTPUT', value: (r) => formatCount(r.outputTokens), align: 'right'},
    {header: 'CACHE READ', value: (r) => formatCount(r.cacheReadTokens), align: 'right'},
    {header: 'CACHE WRITE', value: (r) => formatCount(r.cacheCreationTokens), align: 'right'},
    {header: 'REASONING', value: (r) => formatCount(r.reasoningTokens), align: 'right'},
  ]
}
