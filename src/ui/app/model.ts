/**
 * The terminal app's data and the pure functions that shape it for the screen: names for agent
 * ids, request filters, per-provider health, hourly and daily buckets, sparklines, heatmaps and
 * fixed-width cells. No React here, so it is tested directly.
 */
import {printable} from '../../core/output.js'
import type {BreakerSnapshot} from '../../gateway/events.js'
import type {Family, PolicyConfig} from '../../store/schema.js'
import type {AgentView} from '../../gateway/views.js'
import type {DashboardRoute} from '../../services/dashboard.js'
import {targetsOf} from '../../cli/dashboard-text.js'
import type {LogEntry} from '../../store/log-store.js'
import type {LogRow, UsageRow} from '../../store/log-query.js'
import {zeroTotals} from '../../store/usage-sql.js'

export interface GatewayInfo {
  pid: number
  port: number
  uptime_s: number
  version: string
}

/** An agent row; the agents issue adds `binding`, `discovered` and paths (shown when present). */
export type AppAgent = AgentView & {
  binding?: {state?: string} | null
  discovered?: boolean
  /** `claude-code`, `codex`, `gemini-cli` when known (what `agents enable` takes). */
  tool?: string | null
  /** False for a discovered agent that holds no key yet (rotate and policy need one). */
  keyed?: boolean
}

/**
 * A usage row with its cost from the usage service (`gwctl usage`): `costUSD` null and models in
 * `unpricedModels` when no price is known ("unpriced", never 0).
 */
export type AppUsageRow = UsageRow & {
  cost?: number | null
  costUsd?: number | null
  costUSD?: number | null
  unpricedModels?: string[]
}

export interface AppData {
  /** null: the gateway is stopped. */
  gateway: GatewayInfo | null
  agents: AppAgent[]
  policies: PolicyConfig[]
  routes: DashboardRoute[]
  /** Newest first. */
  requests: LogRow[]
  /** Requests of the last 28 days (for buckets, today's tokens and provider health). */
  history: LogEntry[]
  usage: Partial<Record<string, AppUsageRow[]>>
  /** When this snapshot was taken (Unix ms). */
  loadedAt: number
}

export const EMPTY_DATA: AppData = {
  gateway: null,
  agents: [],
  policies: [],
  routes: [],
  requests: [],
  history: [],
  usage: {},
  loadedAt: 0,
}

/** Fits text (escaped: names and models come from outside) into exactly `width` columns. */
export function cell(text: string | number | null | undefined, width: number, right = false): string {
  if (width <= 0) return ''
  const s = printable(String(text ?? ''))
  const cut = s.length > width ? s.slice(0, Math.max(0, width - 1)) + '…' : s
  return right ? cut.padStart(width) : cut.padEnd(width)
}

/** id -> name of every agent. */
export function agentNames(agents: readonly Pick<AgentView, 'agentId' | 'name'>[]): Map<string, string> {
  return new Map(agents.map((a) => [a.agentId, a.name]))
}

/** The agent's name; its id when unknown; `-` for none. With `verbose`, `name (id)`. */
export function agentLabel(id: string | null, names: Map<string, string>, verbose = false): string {
  if (!id) return '-'
  const name = names.get(id)
  if (!name) return id
  return verbose ? `${name} (${id})` : name
}

/** `bound`, `unbound` or `stale`: the agents issue's binding when present, else the route. */
export function bindingOf(agent: AppAgent): string {
  return agent.binding?.state ?? (agent.enabled ? 'bound' : 'unbound')
}

/** `1.2k`, `3.4M` */
export function compact(n: number): string {
  if (n < 1000) return String(Math.round(n))
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`
  return `${(n / 1_000_000).toFixed(n < 10_000_000 ? 1 : 0)}M`
}

/** `12:04:05` in local time. */
export function clock(ms: number): string {
  const d = new Date(ms)
  const p = (n: number) => String(n).padStart(2, '0')
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`
}

/** `3s ago`, `5m ago`, `2h ago`, `4d ago`; `never`. */
export function ago(ms: number | null, now: number): string {
  if (ms === null) return 'never'
  const s = Math.max(0, Math.floor((now - ms) / 1000))
  if (s < 60) return `${s}s ago`
  if (s < 3600) return `${Math.floor(s / 60)}m ago`
  if (s < 86_400) return `${Math.floor(s / 3600)}h ago`
  return `${Math.floor(s / 86_400)}d ago`
}

/** Local midnight of the day of `now`. */
export function startOfDay(now: number): number {
  const d = new Date(now)
  d.setHours(0, 0, 0, 0)
  return d.getTime()
}

export function tokensOf(r: Pick<LogEntry, 'inputTokens' | 'outputTokens'>): number {
  return r.inputTokens + r.outputTokens
}

/** Tokens per agent since local midnight. */
export function todayTokens(history: readonly LogEntry[], now: number): Map<string, number> {
  const since = startOfDay(now)
  const out = new Map<string, number>()
  for (const r of history) {
    if (r.time < since || !r.agentId) continue
    out.set(r.agentId, (out.get(r.agentId) ?? 0) + tokensOf(r))
  }
  return out
}

/** Latest request time per agent (Unix ms). */
export function lastRequest(history: readonly LogEntry[]): Map<string, number> {
  const out = new Map<string, number>()
  for (const r of history) if (r.agentId && r.time > (out.get(r.agentId) ?? 0)) out.set(r.agentId, r.time)
  return out
}

export interface ProviderHealth {
  requests: number
  errors: number
  /** Median latency (ms), null without requests. */
  p50: number | null
}

/** Error rate and median latency per provider over the last `windowMs`. */
export function providerHealth(
  history: readonly LogEntry[],
  now: number,
  windowMs = 5 * 60_000,
): Map<string, ProviderHealth> {
  const latencies = new Map<string, number[]>()
  const out = new Map<string, ProviderHealth>()
  for (const r of history) {
    if (r.time < now - windowMs || !r.provider) continue
    const h = out.get(r.provider) ?? {requests: 0, errors: 0, p50: null}
    h.requests++
    if (r.status >= 500 || r.status === 429) h.errors++
    out.set(r.provider, h)
    latencies.set(r.provider, [...(latencies.get(r.provider) ?? []), r.latencyMs])
  }
  for (const [provider, list] of latencies) {
    const sorted = list.sort((a, b) => a - b)
    out.get(provider)!.p50 = sorted[Math.floor((sorted.length - 1) / 2)]
  }
  return out
}

/** Tokens per hour for the last 24 hours, oldest first (24 numbers). */
export function hourlyTokens(history: readonly LogEntry[], now: number): number[] {
  const hour = 3_600_000
  const end = Math.floor(now / hour) * hour + hour
  const buckets = Array.from({length: 24}, () => 0)
  for (const r of history) {
    const i = 23 - Math.floor((end - 1 - r.time) / hour)
    if (i >= 0 && i < 24) buckets[i] += tokensOf(r)
  }
  return buckets
}

/** Tokens per local day for the last `days` days, oldest first. */
export function dailyTokens(history: readonly LogEntry[], now: number, days = 28): number[] {
  const today = startOfDay(now)
  const buckets = Array.from({length: days}, () => 0)
  for (const r of history) {
    const back = Math.round((today - startOfDay(r.time)) / 86_400_000)
    if (back >= 0 && back < days) buckets[days - 1 - back] += tokensOf(r)
  }
  return buckets
}

const SPARK = '▁▂▃▄▅▆▇█'

/** One character per value, scaled to the largest; a blank for zero. */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values)
  return values
    .map((v) => (v <= 0 || max === 0 ? ' ' : SPARK[Math.min(7, Math.floor((v / max) * 7.999))]))
    .join('')
}

const HEAT = '·░▒▓█'

/** Days as rows of 7 (oldest week first), each a shade from none `·` to most `█`. */
export function heatmap(values: readonly number[]): string[] {
  const max = Math.max(0, ...values)
  const shades = values.map((v) =>
    v <= 0 || max === 0 ? HEAT[0] : HEAT[1 + Math.min(3, Math.floor((v / max) * 3.999))],
  )
  const rows: string[] = []
  for (let i = 0; i < shades.length; i += 7) rows.push(shades.slice(i, i + 7).join(' '))
  return rows
}

/** The requests filter typed after `/`: `2xx`/`4xx`/`5xx`, `fallback`, or text in agent/model/provider. */
export function matchesFilter(r: LogEntry, filter: string, names: Map<string, string>): boolean {
  const f = filter.trim().toLowerCase()
  if (!f) return true
  if (/^[245]xx$/.test(f)) return Math.floor(r.status / 100) === Number(f[0])
  if (f === 'fallback' || f === 'fb') return r.fallback
  const hay = [
    agentLabel(r.agentId, names),
    r.agentId ?? '',
    r.provider ?? '',
    r.model ?? '',
    r.requestedModel ?? '',
  ]
  return hay.some((h) => h.toLowerCase().includes(f))
}

/** A breaker state with the retry countdown when open: `open 12s`. */
export function circuitText(
  c: Pick<BreakerSnapshot, 'state' | 'retryAt'> | null | undefined,
  now: number,
): string {
  const state = c?.state ?? 'closed'
  if (state === 'open' && c?.retryAt) return `open ${Math.max(0, Math.ceil((c.retryAt - now) / 1000))}s`
  return state
}

export interface RouteRow {
  policyId: string
  family: Family
  /** `provider` or `provider:model`, in order. */
  targets: string[]
  /** The targets translated from the route's family (docs/TRANSLATION.md). */
  translated?: string[]
  agents: number | null
}

/**
 * The routes: the gateway's effective ones (its dashboard, with default routes filled in) while
 * it runs, else every (policy, family) with targets in the state file.
 */
export function routeRows(data: Pick<AppData, 'routes' | 'policies'>): RouteRow[] {
  const label = (t: {provider: string; model?: string}) => (t.model ? `${t.provider}:${t.model}` : t.provider)
  if (data.routes.length > 0) {
    return data.routes.map((r) => ({
      policyId: r.policyId ?? '?',
      family: (r.family ?? 'chat') as Family,
      targets: targetsOf(r).map(label),
      translated: targetsOf(r)
        .filter((t) => (t as {translate?: boolean}).translate)
        .map(label),
      agents: typeof r.agents === 'number' ? r.agents : null,
    }))
  }
  const out: RouteRow[] = []
  for (const p of data.policies)
    for (const [family, targets] of Object.entries(p.routes))
      if ((targets ?? []).length > 0)
        out.push({
          policyId: p.id,
          family: family as Family,
          targets: targets!.map(label),
          translated: targets!.filter((t) => t.translate).map(label),
          agents: null,
        })
  return out
}

/** Applies a breaker event to the routes' targets (the event stream's `breaker`). */
export function withBreaker(
  routes: readonly DashboardRoute[],
  provider: string,
  state: BreakerSnapshot['state'],
  retryAt: number | null,
): DashboardRoute[] {
  return routes.map((r) => ({
    ...r,
    targets: r.targets?.map((t) =>
      t.provider === provider
        ? {
            ...t,
            circuit: {
              provider,
              state,
              retryAt,
              consecutiveFailures: t.circuit?.consecutiveFailures ?? 0,
              openedAt: t.circuit?.openedAt ?? null,
              retryInMs: null,
              lastError: t.circuit?.lastError ?? null,
            },
          }
        : t,
    ),
  }))
}

/** The breaker of a provider as the dashboard's routes last said. */
export function breakerOf(
  routes: readonly DashboardRoute[],
  provider: string,
): Pick<BreakerSnapshot, 'state' | 'retryAt'> | null {
  for (const r of routes)
    for (const t of r.targets ?? []) if (t.provider === provider && t.circuit) return t.circuit
  return null
}

type CostFields = Pick<AppUsageRow, 'cost' | 'costUsd' | 'costUSD' | 'unpricedModels'>

/**
 * Cost per agent since local midnight, with the usage service's pricer (`price`); an agent whose
 * requests have no price is unpriced (never $0).
 */
export function todayCost(
  history: readonly LogEntry[],
  now: number,
  price: (e: LogEntry) => number | null | undefined,
): Map<string, CostFields> {
  const since = startOfDay(now)
  const out = new Map<string, {costUSD: number | null; unpricedModels: string[]}>()
  for (const r of history) {
    if (r.time < since || !r.agentId) continue
    const c = price(r)
    if (c === undefined) continue
    const row = out.get(r.agentId) ?? {costUSD: null, unpricedModels: []}
    if (c !== null) row.costUSD = (row.costUSD ?? 0) + c
    else if (!row.unpricedModels.includes(r.model ?? '(unknown)'))
      row.unpricedModels.push(r.model ?? '(unknown)')
    out.set(r.agentId, row)
  }
  return out
}

/** The cost of a usage row when the usage service knows it. */
export function costOf(r: CostFields): number | null {
  const c = r.costUSD ?? r.cost ?? r.costUsd
  return typeof c === 'number' ? c : null
}

/** `$1.23`, `$0.0123`, `unpriced` (no price known: never `$0`), `$1.23+` (some models unpriced). */
export function costText(r: CostFields): string {
  const c = costOf(r)
  const unpriced = (r.unpricedModels ?? []).length > 0
  if (c === null) return unpriced ? 'unpriced' : '-'
  return `$${c.toFixed(c < 1 ? 4 : 2)}${unpriced ? '+' : ''}`
}

const ENTRANCE_TOOLS: Record<string, string> = {
  messages: 'claude-code',
  responses: 'codex',
  gemini: 'gemini-cli',
}

/**
 * The usage row a request counts in, per grouping, as the usage service groups gateway rows
 * (tool by entrance, day in UTC); undefined for a grouping it cannot tell.
 */
export function usageKeyOf(pivot: string, e: LogEntry): string | null | undefined {
  const fields: Record<string, string | null> = {
    agent: e.agentId,
    model: e.model,
    provider: e.provider,
    project: e.project,
    key: e.keyPrefix,
    tool: ENTRANCE_TOOLS[e.entrance] ?? null,
    day: new Date(e.time).toISOString().slice(0, 10),
  }
  return pivot in fields ? (fields[pivot] === '' ? null : fields[pivot]) : undefined
}

/** Input tokens as the usage service counts them: without the cache reads and writes. */
export function uncachedInput(
  e: Pick<LogEntry, 'inputTokens' | 'cacheReadTokens' | 'cacheCreationTokens'>,
): number {
  return Math.max(e.inputTokens - e.cacheReadTokens - e.cacheCreationTokens, 0)
}

/**
 * Applies one finished request (the event stream's `request`) to the data: the row on top of the
 * requests, the entry in the history (today's tokens, buckets, provider health) and its tokens and
 * cost added to its row of each usage grouping. `cost` is the pricer's answer for the request:
 * null when its model has no price (the row becomes unpriced-in-part, never $0), undefined when
 * there is no pricer (the cost stays as it was).
 */
export function applyRequest(
  data: AppData,
  entry: LogEntry,
  cost?: number | null,
  options: {usage?: boolean; id?: number} = {},
): AppData {
  const usage: AppData['usage'] = {}
  const input = uncachedInput(entry)
  const tokens = input + entry.outputTokens + entry.cacheReadTokens + entry.cacheCreationTokens
  for (const [pivot, rows] of Object.entries(data.usage)) {
    const key = usageKeyOf(pivot, entry)
    if (!rows || key === undefined || options.usage === false) {
      usage[pivot] = rows
      continue
    }
    const i = rows.findIndex((r) => r.key === key)
    const before: AppUsageRow = i >= 0 ? rows[i] : {key, ...zeroTotals()}
    const after: AppUsageRow = {
      ...before,
      requests: before.requests + 1,
      errors: before.errors + (entry.status >= 400 || entry.broken ? 1 : 0),
      fallbacks: before.fallbacks + (entry.fallback ? 1 : 0),
      inputTokens: before.inputTokens + input,
      outputTokens: before.outputTokens + entry.outputTokens,
      cacheReadTokens: before.cacheReadTokens + entry.cacheReadTokens,
      cacheCreationTokens: before.cacheCreationTokens + entry.cacheCreationTokens,
      reasoningTokens: before.reasoningTokens + entry.reasoningTokens,
    }
    if (typeof cost === 'number') after.costUSD = (costOf(before) ?? 0) + cost
    else if (cost === null && tokens > 0) {
      const model = entry.model ?? '(unknown)'
      const unpriced = before.unpricedModels ?? []
      after.unpricedModels = unpriced.includes(model) ? unpriced : [...unpriced, model]
    }
    usage[pivot] = i >= 0 ? rows.map((r, j) => (j === i ? after : r)) : [...rows, after]
  }
  return {
    ...data,
    requests: [
      {...entry, id: options.id ?? -Date.now(), requestId: entry.requestId ?? null},
      ...data.requests,
    ].slice(0, 500),
    history: [...data.history, entry],
    usage,
  }
}
