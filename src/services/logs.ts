/**
 * `gwctl logs` and `gwctl usage`: the request log and usage pivots, from the running gateway's
 * management API, or straight from the log database when it is stopped (better-sqlite3 is
 * loaded only then).
 */
import {existsSync, readFileSync} from 'node:fs'

import {UsageError} from '../core/errors.js'
import type {LogReader} from '../store/log-query.js'
import {usageTotals} from '../store/log-query.js'
import type {LogEntry} from '../store/log-store.js'
import type {LogFilters, LogRow, Pivot, StatusFilter, UsageRow, UsageTotals} from '../store/log-query.js'
import {fileHasBytes, homeFile, pendingFileOf} from '../store/paths.js'
import {gatewayGet, liveGatewayPort} from './gateway-api.js'
import type {GatewayEvent} from '../gateway/events.js'
import type {AgentView} from '../gateway/views.js'

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

/** Reads the log database (read-only); undefined when nothing was ever logged. */
async function withDatabase<T>(use: (store: LogReader) => T): Promise<T | undefined> {
  const path = homeFile('logDb')
  // rows a gateway stopped while logs.db was locked left in logs.pending: applied first (one stat
  // when there are none; log-pending.ts)
  if (fileHasBytes(pendingFileOf(path))) await (await import('./log-pending.js')).applyPendingLogs()
  if (!existsSync(path)) return undefined
  const {openLogReader} = await import('../store/log-query.js')
  const reader = await openLogReader(path)
  if (!reader) return undefined
  try {
    return use(reader)
  } finally {
    reader.close()
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

export interface UsageResult {
  pivot: Pivot | null
  rows: UsageRow[]
  totals: UsageTotals
  source: 'gateway' | 'database'
}

/** Usage per pivot value, from the gateway or the log database. */
export async function getUsage(
  query: Omit<LogQuery, 'limit'> & {
    pivot?: Pivot
    /** The port of the gateway that answers when the caller has asked already (null: none does). */
    gatewayPort?: number | null
  } = {},
): Promise<UsageResult> {
  const {signal, gatewayPort, ...filters} = query
  const port = gatewayPort === undefined ? await liveGatewayPort(signal) : (gatewayPort ?? undefined)
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

/** Who an agent id and a key prefix belong to, by name (`gwctl agents list`'s data). */
export interface AgentNames {
  byId: Map<string, string>
  byKeyPrefix: Map<string, string>
}

/**
 * Agent names straight from the state file, without the state store (lowdb, the schema and its
 * validator, the key helpers: about a dozen modules, and `gwctl logs` prints names on every
 * call). Every key not revoked names its agent (as `listAgents` names an agent by its active key;
 * a revoked key names nobody). Undefined when the file does not have the expected shape: the
 * caller then asks the store, which reports what is wrong. Empty when there is no state file yet.
 */
export function namesFromStateFile(path: string): AgentNames | undefined {
  let data: {agents?: unknown; keys?: unknown}
  try {
    data = JSON.parse(readFileSync(path, 'utf8')) as typeof data
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {byId: new Map(), byKeyPrefix: new Map()}
    return undefined
  }
  const {agents, keys} = data ?? {}
  if (!Array.isArray(agents) || !Array.isArray(keys)) return undefined
  const byId = new Map<string, string>()
  for (const a of agents as Array<{id?: unknown; name?: unknown}>) {
    if (typeof a?.id !== 'string' || typeof a.name !== 'string') return undefined
    byId.set(a.id, a.name)
  }
  const byKeyPrefix = new Map<string, string>()
  for (const k of keys as Array<{prefix?: unknown; agentId?: unknown; revokedAt?: unknown}>) {
    if (typeof k?.prefix !== 'string' || typeof k.agentId !== 'string') return undefined
    const name = byId.get(k.agentId)
    if (k.revokedAt === undefined && name !== undefined) byKeyPrefix.set(k.prefix, name)
  }
  return {byId, byKeyPrefix}
}

/** Names of the known agents; empty maps when neither the gateway nor the state file answers. */
export async function agentNames(signal?: AbortSignal): Promise<AgentNames> {
  try {
    // the gateway that answers `gwctl logs` names its agents (as `gwctl agents list` shows them)
    const port = await liveGatewayPort(signal)
    let agents: Array<Pick<AgentView, 'agentId' | 'name' | 'keyPrefix'>>
    if (port !== undefined) {
      agents = (await gatewayGet<{agents: AgentView[]}>(port, '/api/agents', {}, signal)).agents
    } else {
      const names = namesFromStateFile(homeFile('state'))
      if (names) return names
      const {listAgents} = await import('./gateway-keys.js')
      agents = await listAgents({signal})
    }
    return {
      byId: new Map(agents.map((a) => [a.agentId, a.name])),
      byKeyPrefix: new Map(agents.filter((a) => a.keyPrefix).map((a) => [a.keyPrefix!, a.name])),
    }
  } catch {
    return {byId: new Map(), byKeyPrefix: new Map()}
  }
}

/** A log row with its agent's name beside the id (null when the agent is unknown). */
export type NamedLogRow = LogRow & {agentName: string | null}

export function withAgentNames(rows: readonly LogRow[], names: AgentNames): NamedLogRow[] {
  return rows.map((r) => ({...r, agentName: r.agentId ? (names.byId.get(r.agentId) ?? null) : null}))
}

/** A usage row's pivot value with the agent's name for the agent and key pivots. */
export function usageKeyLabel(
  pivot: Pivot | null,
  key: string | null,
  names: AgentNames,
  verbose = false,
): string | null {
  if (key === null) return null
  const name =
    pivot === 'agent' ? names.byId.get(key) : pivot === 'key' ? names.byKeyPrefix.get(key) : undefined
  if (!name) return key
  if (pivot === 'agent') return verbose ? `${name} (${key})` : name
  return `${key} (${name})`
}

/** True when a log row passes the filters (the event stream sends every row). */
export function rowMatches(r: LogEntry, filters: LogFilters): boolean {
  if (filters.agentId && r.agentId !== filters.agentId) return false
  if (filters.policyId && r.policyId !== filters.policyId) return false
  if (filters.since !== undefined && r.time < filters.since * 1000) return false
  if (filters.status === 'fallback') return r.fallback
  if (filters.status) return Math.floor(r.status / 100) === Number(filters.status[0])
  return true
}

/**
 * `gwctl logs --follow`: the latest `limit` rows, then each request as it finishes, from the
 * gateway's event stream (no polling). Waits for the gateway while it is stopped and picks up
 * again when it restarts; `onDown` says so. Runs until the signal aborts.
 */
export async function followLogs(
  query: LogQuery,
  onRows: (rows: LogRow[]) => void | Promise<void>,
  options: {onDown?: (reason: string) => void; retryMs?: number} = {},
): Promise<void> {
  const {signal, ...filters} = query
  const seen = new Set<string>()
  const keyOf = (r: LogEntry) => `${r.time}|${r.requestId ?? ''}|${r.agentId ?? ''}|${r.status}`
  let nextId = -1
  let backlog: LogRow[] | null = null
  let first = true
  let printing: Promise<void> = Promise.resolve()
  const emit = (rows: LogRow[]) => {
    const fresh = rows.filter((r) => !seen.has(keyOf(r)))
    for (const r of fresh) seen.add(keyOf(r))
    if (seen.size > 5000) for (const k of [...seen].slice(0, 3000)) seen.delete(k)
    if (fresh.length > 0) printing = printing.then(() => onRows(fresh)).catch(() => undefined)
  }
  const {followEvents} = await import('./gateway-events.js')
  await followEvents(
    () => liveGatewayPort(signal).catch(() => undefined),
    {
      onUp() {
        // events that arrive while the backlog loads wait behind it
        backlog = []
        const since = first ? filters.since : Math.floor(Date.now() / 1000) - 60
        void getLogs({...filters, since, limit: first ? filters.limit : 1000, signal})
          .then(({logs}) => emit([...logs].reverse()))
          .catch(() => undefined)
          .finally(() => {
            const waiting = backlog ?? []
            backlog = null
            emit(waiting)
          })
        first = false
      },
      onDown: options.onDown,
      onEvent(event: GatewayEvent) {
        if (event.type !== 'request' || !rowMatches(event.entry, filters)) return
        const row: LogRow = {...event.entry, id: nextId--, requestId: event.entry.requestId ?? null}
        if (backlog) backlog.push(row)
        else emit([row])
      },
    },
    {signal, retryMs: options.retryMs},
  )
  await printing
}
