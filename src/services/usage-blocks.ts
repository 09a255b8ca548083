/**
 * `gwctl usage blocks`: the 5-hour windows of usage (gateway/usage-windows.ts, ccusage's rules)
 * priced, with the active window's burn rate and projection, and the weekly totals beside them.
 * Also what the statusline and the live view price a window with.
 */
import {existsSync} from 'node:fs'

import type {AgentTool} from '../store/history-rows.js'
import type {LogEntry} from '../store/log-store.js'
import {homeFile} from '../store/paths.js'
import type {EntryFilters, SessionEntry, UsageEntry} from '../store/usage-entries.js'
import type {UsageSource} from '../store/usage-query.js'
import {dayFormat} from '../store/usage-query.js'
import type {BurnRate, ModelSums, Projection, TokenSums, UsageWindow} from '../gateway/usage-windows.js'
import {
  WINDOW_MS,
  addSums,
  burnRate,
  modelSums,
  projection,
  totalTokens,
  usageWindows,
  zeroSums,
} from '../gateway/usage-windows.js'
import type {Pricer} from './usage-cost.js'
import type {UsageReport} from './usage.js'
import {applyPendingLogRows, checkTimezone, readUsageDatabase, scanUnlessDaemon} from './usage.js'

/** Dollars of some per-model sums, and the models without a price. */
export interface Priced {
  costUSD: number | null
  unpricedModels: string[]
}

export function priceModels(models: readonly ModelSums[], pricer: Pricer): Priced {
  let costUSD: number | null = null
  const unpricedModels: string[] = []
  for (const m of models) {
    const cost = pricer.cost(m.model, m, m.provider)
    if (cost !== null) costUSD = (costUSD ?? 0) + cost
    else if (totalTokens(m) > 0) {
      const name = m.model ?? '(unknown)'
      if (!unpricedModels.includes(name)) unpricedModels.push(name)
    }
  }
  return {costUSD, unpricedModels}
}

/** A model's share of a block or week, with its dollars (`--breakdown`). */
export interface ModelLine extends TokenSums, Priced {
  model: string | null
  totalTokens: number
}

export interface BlockRow extends TokenSums, Priced {
  /** ISO times. */
  start: string
  end: string
  firstAt: string | null
  lastAt: string | null
  gap: boolean
  active: boolean
  totalTokens: number
  models: string[]
  burnRate: BurnRate | null
  projection: Projection | null
  /** Minutes left in an active window. */
  remainingMinutes: number | null
  breakdown?: ModelLine[]
}

export interface WeekRow extends TokenSums, Priced {
  /** The Monday the week starts (YYYY-MM-DD, in the report's time zone). */
  week: string
  totalTokens: number
  breakdown?: ModelLine[]
}

export interface BlocksReport {
  include: UsageSource
  timezone: string
  blocks: BlockRow[]
  /** The active window, also in `blocks`; null when none is. */
  active: BlockRow | null
  weeks: WeekRow[]
  scan?: UsageReport['scan']
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

/** Sums as a report shows them: their context bands (what the pricer needed) left out. */
function withoutBands<T extends {bands?: unknown}>(sums: T): Omit<T, 'bands'> {
  const {bands: _bands, ...rest} = sums
  return rest
}

function modelLines(models: readonly ModelSums[], pricer: Pricer): ModelLine[] {
  // one line per model (providers of one model folded after pricing each)
  const byModel = new Map<string, ModelLine>()
  for (const m of models) {
    const priced = priceModels([m], pricer)
    const key = m.model ?? ''
    let line = byModel.get(key)
    if (!line)
      byModel.set(
        key,
        (line = {model: m.model, ...zeroSums(), totalTokens: 0, costUSD: null, unpricedModels: []}),
      )
    addSums(line, m)
    line.totalTokens += totalTokens(m)
    if (priced.costUSD !== null) line.costUSD = (line.costUSD ?? 0) + priced.costUSD
    for (const u of priced.unpricedModels) if (!line.unpricedModels.includes(u)) line.unpricedModels.push(u)
  }
  return [...byModel.values()].map(withoutBands).sort((a, b) => b.totalTokens - a.totalTokens)
}

/** One window priced, with its rate and projection at `now`. */
export function blockRow(w: UsageWindow, pricer: Pricer, now: number, breakdown = false): BlockRow {
  const priced = priceModels(w.models, pricer)
  const projected = projection(w, priced.costUSD, now)
  const {models, start, end, firstAt, lastAt, ...rest} = w
  return {
    ...withoutBands(rest),
    start: iso(start)!,
    end: iso(end)!,
    firstAt: iso(firstAt),
    lastAt: iso(lastAt),
    totalTokens: totalTokens(w),
    ...priced,
    models: [...new Set(models.map((m) => m.model ?? '(unknown)'))],
    burnRate: burnRate(w, priced.costUSD),
    projection: projected,
    remainingMinutes: w.active ? Math.max(0, Math.round((end - now) / 60_000)) : null,
    ...(breakdown ? {breakdown: modelLines(models, pricer)} : {}),
  }
}

/** Monday (YYYY-MM-DD) of the week `ms` falls in, in the zone of `format`. */
export function weekOf(ms: number, format: Intl.DateTimeFormat): string {
  const day = format.format(new Date(ms))
  const date = new Date(`${day}T00:00:00Z`)
  const sinceMonday = (date.getUTCDay() + 6) % 7
  return new Date(date.getTime() - sinceMonday * 86_400_000).toISOString().slice(0, 10)
}

/** Totals per week (Monday to Sunday in `timezone`), oldest first. */
export function weekRows(
  entries: readonly UsageEntry[],
  pricer: Pricer,
  timezone = 'UTC',
  breakdown = false,
): WeekRow[] {
  const format = dayFormat(timezone)
  const byWeek = new Map<string, UsageEntry[]>()
  for (const e of entries) {
    const week = weekOf(e.ts, format)
    const list = byWeek.get(week)
    if (list) list.push(e)
    else byWeek.set(week, [e])
  }
  return [...byWeek.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([week, list]) => {
      const sums = zeroSums()
      for (const e of list) addSums(sums, e)
      const models = modelSums(list)
      return {
        week,
        ...withoutBands(sums),
        totalTokens: totalTokens(sums),
        ...priceModels(models, pricer),
        ...(breakdown ? {breakdown: modelLines(models, pricer)} : {}),
      }
    })
}

/** Windows and weeks of `entries`, priced. */
export function blocksOf(
  entries: readonly UsageEntry[],
  pricer: Pricer,
  options: {now?: number; timezone?: string; breakdown?: boolean; sinceMs?: number} = {},
): Pick<BlocksReport, 'blocks' | 'active' | 'weeks'> {
  const now = options.now ?? Date.now()
  const windows = usageWindows(entries, now).filter(
    (w) => options.sinceMs === undefined || w.end > options.sinceMs,
  )
  const blocks = windows.map((w) => blockRow(w, pricer, now, options.breakdown))
  const shown = options.sinceMs === undefined ? entries : entries.filter((e) => e.ts >= options.sinceMs!)
  return {
    blocks,
    active: blocks.find((b) => b.active) ?? null,
    weeks: weekRows(shown, pricer, options.timezone, options.breakdown),
  }
}

export interface BlocksOptions {
  source: UsageSource
  /** Unix seconds. */
  since?: number
  until?: number
  tool?: AgentTool
  agentId?: string
  timezone?: string
  breakdown?: boolean
  signal?: AbortSignal
  now?: number
}

/**
 * Reads the requests and cuts them into windows. With `since`, the requests of the day before
 * it are read too, so that a window it falls inside starts where ccusage's would (a chain of
 * windows longer than a day without a 5-hour pause can still start differently).
 */
export async function usageBlocks(options: BlocksOptions): Promise<BlocksReport> {
  checkTimezone(options.timezone)
  const scan = await scanUnlessDaemon(options.source, options.signal)
  const sinceMs = options.since === undefined ? undefined : options.since * 1000
  const entries = await readEntries({
    source: options.source,
    ...(sinceMs === undefined ? {} : {sinceMs: sinceMs - 24 * 3_600_000 - WINDOW_MS}),
    ...(options.until === undefined ? {} : {untilMs: options.until * 1000}),
    tool: options.tool,
    agentId: options.agentId,
  })
  const {createPricer} = await import('./usage-cost.js')
  const pricer = await createPricer()
  return {
    include: options.source,
    timezone: options.timezone ?? 'UTC',
    ...blocksOf(entries, pricer, {
      now: options.now,
      timezone: options.timezone,
      breakdown: options.breakdown,
      sinceMs,
    }),
    ...(scan ? {scan} : {}),
  }
}

/** The requests of the log database over the chosen sources (none without a database). */
export async function readEntries(f: EntryFilters): Promise<SessionEntry[]> {
  await applyPendingLogRows()
  if (!existsSync(homeFile('logDb'))) return []
  const {usageEntries} = await import('../store/usage-entries.js')
  const timeMatchedKeys =
    f.source === 'all' && (f.tool === undefined || f.tool === 'gemini-cli')
      ? (await import('../store/reconcile-query.js')).timeMatchedHistoryKeys
      : undefined
  // a tool's gateway rows are its agents' (OpenCode and Qwen Code come in through others' entrances)
  const agentTools =
    f.tool !== undefined || timeMatchedKeys ? await (await import('./usage.js')).agentToolsOf() : undefined
  const filters = agentTools ? {...f, agentTools} : f
  return readUsageDatabase((db) =>
    usageEntries(db, filters, timeMatchedKeys?.(db, {sinceMs: f.sinceMs ?? 0, agentTools}) ?? []),
  )
}

/** A gateway log row as a window entry (its input without the cached part, as the usage query). */
export function entryFromLog(e: LogEntry): UsageEntry {
  return {
    ts: e.time,
    model: e.model,
    provider: e.provider,
    inputTokens: Math.max(e.inputTokens - e.cacheReadTokens - e.cacheCreationTokens, 0),
    outputTokens: e.outputTokens,
    cacheReadTokens: e.cacheReadTokens,
    cacheCreationTokens: e.cacheCreationTokens,
    cache1hTokens: e.cache1hTokens ?? 0,
  }
}

/**
 * What the live windows view (`usage blocks --live`, the app's Windows tab) runs on: the
 * requests read once from the log database, then each request the gateway's event stream
 * reports appended in memory (`add`), and the database read again only when the daemon says it
 * added history rows (`reload`): no history file is read by the view.
 */
export interface LiveBlocks {
  reload(): Promise<void>
  /** Appends a finished request of the event stream; false when it carries no usage. */
  add(e: LogEntry): boolean
  report(now?: number): Pick<BlocksReport, 'blocks' | 'active' | 'weeks' | 'timezone'>
}

export async function liveBlocks(
  options: Omit<BlocksOptions, 'signal' | 'now' | 'until'> & {sinceMs?: number},
): Promise<LiveBlocks> {
  const {createPricer} = await import('./usage-cost.js')
  const pricer = await createPricer()
  const sinceMs = options.sinceMs ?? (options.since === undefined ? undefined : options.since * 1000)
  const readFrom = sinceMs === undefined ? undefined : sinceMs - 24 * 3_600_000 - WINDOW_MS
  let entries: UsageEntry[] = []
  const live = {
    async reload() {
      entries = await readEntries({
        source: options.source,
        ...(readFrom === undefined ? {} : {sinceMs: readFrom}),
        tool: options.tool,
        agentId: options.agentId,
      })
    },
    add(e: LogEntry) {
      if (options.source === 'history' || (options.agentId && e.agentId !== options.agentId)) return false
      const entry = entryFromLog(e)
      if (totalTokens(entry) === 0) return false
      entries.push(entry)
      return true
    },
    report(now = Date.now()) {
      return {
        timezone: options.timezone ?? 'UTC',
        ...blocksOf(entries, pricer, {
          now,
          timezone: options.timezone,
          breakdown: options.breakdown,
          sinceMs,
        }),
      }
    },
  }
  await live.reload()
  return live
}
