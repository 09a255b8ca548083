/**
 * The requests and usage of the terminal app, shaped for the screen: tokens per agent, hour and
 * day, sparklines and heatmaps, costs, and applying one finished request to the data. No React
 * here, so it is tested directly.
 */
import {agentToolOf} from '../../services/agent-tool.js'
import type {LogEntry} from '../../store/log-store.js'
import {sortUsageRows, zeroTotals} from '../../store/usage-sql.js'
import type {AppAgent, AppData, AppUsageRow} from './model.js'
import {startOfDay, tokensOf} from './model.js'

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
 * The agent tool of each agent the app lists (agent id -> tool), by the usage service's rule
 * (`agentToolOf`: binding, source tool, agent kind).
 */
export function agentToolMap(
  agents: readonly Pick<AppAgent, 'agentId' | 'type' | 'sourceTool' | 'tool'>[],
): Map<string, string> {
  const out = new Map<string, string>()
  for (const a of agents) {
    const tool = agentToolOf(a, a.tool)
    if (tool) out.set(a.agentId, tool)
  }
  return out
}

/**
 * The usage row a request counts in, per grouping, as the usage service groups gateway rows
 * (tool by the request's agent, `tools` from `agentToolMap`, else by entrance; day in UTC);
 * undefined for a grouping it cannot tell.
 */
export function usageKeyOf(
  pivot: string,
  e: LogEntry,
  tools: ReadonlyMap<string, string> = new Map(),
): string | null | undefined {
  const fields: Record<string, string | null> = {
    agent: e.agentId,
    model: e.model,
    provider: e.provider,
    project: e.project,
    key: e.keyPrefix,
    tool: (e.agentId ? tools.get(e.agentId) : undefined) ?? ENTRANCE_TOOLS[e.entrance] ?? null,
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
  const tools = data.usage.tool ? agentToolMap(data.agents) : undefined
  for (const [pivot, rows] of Object.entries(data.usage)) {
    const key = usageKeyOf(pivot, entry, tools)
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
    // in the usage service's order, as a reload would show them (a grown row moves up)
    usage[pivot] = sortUsageRows(i >= 0 ? rows.map((r, j) => (j === i ? after : r)) : [...rows, after], pivot)
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
