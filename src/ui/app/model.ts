/**
 * The terminal app's data and the pure functions every part of it shares: the data's types,
 * names for agent ids, the request filter, small formatters and fixed-width cells. The routes'
 * and providers' rows are in `model-routes.ts`, the requests' and usage rows (buckets, costs,
 * applying a request) in `model-usage.ts`. No React here, so it is tested directly.
 */
import {printable} from '../../core/output.js'
import type {PolicyConfig} from '../../store/schema.js'
import type {BudgetView} from '../../gateway/budgets.js'
import type {AgentView} from '../../gateway/views.js'
import type {DashboardRoute} from '../../services/dashboard.js'
import type {LogEntry} from '../../store/log-store.js'
import type {LogRow, UsageRow} from '../../store/log-query.js'
import type {BindingStatus} from '../../services/agent-binding.js'

/** The app's views, in the order of their tabs (and keys 1-5). */
export const VIEWS = ['Agents', 'Routes', 'Requests', 'Usage', 'Windows'] as const
export type ViewName = (typeof VIEWS)[number]

export interface GatewayInfo {
  pid: number
  port: number
  uptime_s: number
  version: string
}

/** An agent row; the agents issue adds `binding`, `discovered` and paths (shown when present). */
export type AppAgent = AgentView & {
  /** Whether its own config points at the gateway (`agents list`'s BINDING), when known. */
  binding?: Pick<BindingStatus, 'state' | 'files' | 'problems'> | null
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
  /** Budgets with what they spent (the running gateway's counters; absent: none or stopped). */
  budgets?: BudgetView[]
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

/**
 * Whether the agent's own config points at the gateway, in the words of `gwctl agents list`'s
 * BINDING: `bound`, `unbound`, `stale`, or `-` for an agent gwctl cannot bind (one that only
 * holds a key, a sub-agent). Whether its policy routes it somewhere is the ROUTE, not this.
 */
export function bindingOf(agent: AppAgent): string {
  if (!bindable(agent)) return '-'
  return agent.binding?.state ?? 'unbound'
}

/** A coding agent gwctl can bind (`agents enable TOOL`): a known tool, not a sub-agent. */
export function bindable(agent: AppAgent): boolean {
  return Boolean(agent.tool) && !agent.parentAgentName && agent.binding !== undefined
}

/** Its config is bound (or was, and is stale): a new key must go into that config. */
export function isBound(agent: AppAgent): boolean {
  return bindable(agent) && (agent.binding?.state === 'bound' || agent.binding?.state === 'stale')
}

/** What the Agents view's keys do to an agent; only those that apply to it are offered. */
export type AgentAction = 'bind' | 'unbind' | 'rotate' | 'policy'

/** The actions that apply to `agent`, with `policies` the policies there are. */
export function agentActions(agent: AppAgent | undefined, policies: readonly {id: string}[]): AgentAction[] {
  if (!agent) return []
  const out: AgentAction[] = []
  if (bindable(agent) && agent.binding?.state !== 'bound') out.push('bind')
  if (isBound(agent)) out.push('unbind')
  const keyed = agent.keyed !== false
  if (keyed) out.push('rotate')
  if (keyed && policies.some((p) => p.id !== agent.policyId)) out.push('policy')
  return out
}

/** `~/.claude/settings.json` for a path in `home`. */
export function shortPath(path: string, home: string): string {
  return home && (path === home || path.startsWith(home + '/')) ? '~' + path.slice(home.length) : path
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
