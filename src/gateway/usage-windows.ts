/**
 * 5-hour usage windows ("blocks") as ccusage computes them, shared by `gwctl usage blocks`, the
 * statusline and the daemon's statusline answer (docs/USAGE-WINDOWS.md):
 *
 * - the entries are taken in time order; a window starts at the first entry after a gap, floored
 *   to the (UTC) hour, and lasts 5 hours;
 * - an entry more than 5 hours after the window's start, or more than 5 hours after the entry
 *   before it, closes the window and starts the next one (floored again);
 * - when the entry before it is more than 5 hours back, a gap window (no entries) covers the
 *   time from 5 hours after that entry to this one;
 * - a window is active while now is before its end and less than 5 hours after its last entry.
 *
 * Pure: no I/O, no prices. The caller prices each window's per-model sums (`models`) and passes
 * the dollars to {@link burnRate} and {@link projection}.
 */

import type {ContextBands} from '../store/context-bands.js'
import {addBands} from '../store/context-bands.js'
import type {UsageEntry} from '../store/usage-entries.js'

export const WINDOW_MS = 5 * 3_600_000
const HOUR_MS = 3_600_000

export type TokenSums = Pick<
  UsageEntry,
  'inputTokens' | 'outputTokens' | 'cacheReadTokens' | 'cacheCreationTokens' | 'cache1hTokens'
> & {
  requests: number
  /** The requests past the first long-context threshold, by band (store/context-bands.ts). */
  bands?: ContextBands
}

/** One model's share of a window (what a pricer prices). */
export interface ModelSums extends TokenSums {
  model: string | null
  provider: string | null
}

export interface UsageWindow extends TokenSums {
  /** Unix ms: the hour the window starts (a gap: 5 hours after the entry before it). */
  start: number
  /** Unix ms: start + 5 hours (a gap: the next entry). */
  end: number
  /** Unix ms of the first and last entry (null for a gap). */
  firstAt: number | null
  lastAt: number | null
  gap: boolean
  active: boolean
  models: ModelSums[]
}

export const zeroSums = (): TokenSums => ({
  requests: 0,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  cache1hTokens: 0,
})

const SUM_FIELDS = [
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheCreationTokens',
  'cache1hTokens',
] as const

/**
 * Adds `e` (an entry, or sums of `requests` entries) into `into`, and into its context bands (an
 * entry by its own context, a sum by its bands), so that a long-context tier is priced per request.
 */
export function addSums(into: TokenSums, e: Omit<TokenSums, 'requests'> & {requests?: number}): void {
  into.requests += e.requests ?? 1
  for (const k of SUM_FIELDS) into[k] += e[k]
  addBands(into, e)
}

/** What prices a model's sums (services/usage-cost.ts's Pricer fits it). */
export interface SumsPricer {
  cost(model: string | null, tokens: ModelSums, provider?: string | null): number | null
}

/** Dollars, and whether some model had no price (its tokens are not in `usd`). */
export interface Dollars {
  usd: number
  unpriced: boolean
}

/**
 * What `gwctl statusline` shows, priced: by the daemon (daemon/usage-memory.ts, also in the file it
 * publishes) or from logs.db (services/usage-statusline-db.ts).
 */
export interface StatuslineFigures {
  today: Dollars
  /** Null when no session was asked for; `requests` 0 when gwctl has no record of it. */
  session: (Dollars & {requests: number}) | null
  /** The active 5-hour window; `end` in Unix ms; `perHour` null when unpriced or a single instant. */
  window: (Dollars & {end: number; perHour: number | null}) | null
}

/**
 * The dollars of per-model sums: each model priced apart (its bands apart), `unpriced` when one
 * has no price. The one sum of the statusline's figures, from the daemon's memory
 * (daemon/usage-memory.ts) or from logs.db (services/usage-statusline-db.ts).
 */
export function modelDollars(models: readonly ModelSums[], pricer: SumsPricer): Dollars {
  let usd = 0
  let unpriced = false
  for (const m of models) {
    const c = pricer.cost(m.model, m, m.provider)
    if (c === null) unpriced = true
    else usd += c
  }
  return {usd, unpriced}
}

/** input + output + cache read + cache write, as ccusage's total. */
export function totalTokens(s: Omit<TokenSums, 'requests' | 'cache1hTokens'>): number {
  return s.inputTokens + s.outputTokens + s.cacheReadTokens + s.cacheCreationTokens
}

/** Per model (and provider) sums of `entries`. */
export function modelSums(entries: Iterable<UsageEntry>): ModelSums[] {
  const byModel = new Map<string, ModelSums>()
  for (const e of entries) {
    const id = `${e.provider ?? ''}\u0000${e.model ?? ''}`
    let m = byModel.get(id)
    if (!m) byModel.set(id, (m = {model: e.model, provider: e.provider, ...zeroSums()}))
    addSums(m, e)
  }
  return [...byModel.values()]
}

export const floorToHour = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS

function window(start: number, entries: UsageEntry[], now: number, durationMs: number): UsageWindow {
  const sums = zeroSums()
  for (const e of entries) addSums(sums, e)
  const end = start + durationMs
  const lastAt = entries.at(-1)!.ts
  return {
    start,
    end,
    firstAt: entries[0].ts,
    lastAt,
    gap: false,
    active: now - lastAt < durationMs && now < end,
    ...sums,
    models: modelSums(entries),
  }
}

/** The windows of `entries` (any order), oldest first, gaps included. */
export function usageWindows(
  entries: readonly UsageEntry[],
  now: number = Date.now(),
  durationMs: number = WINDOW_MS,
): UsageWindow[] {
  const sorted = entries.every((e, i) => i === 0 || entries[i - 1].ts <= e.ts)
    ? entries
    : [...entries].sort((a, b) => a.ts - b.ts)
  const windows: UsageWindow[] = []
  let start: number | undefined
  let current: UsageEntry[] = []
  for (const e of sorted) {
    if (start === undefined) {
      start = floorToHour(e.ts)
      current = [e]
      continue
    }
    const last = current.at(-1)!.ts
    const sinceLast = e.ts - last
    if (e.ts - start > durationMs || sinceLast > durationMs) {
      windows.push(window(start, current, now, durationMs))
      if (sinceLast > durationMs)
        windows.push({
          start: last + durationMs,
          end: e.ts,
          firstAt: null,
          lastAt: null,
          gap: true,
          active: false,
          ...zeroSums(),
          models: [],
        })
      start = floorToHour(e.ts)
      current = [e]
    } else current.push(e)
  }
  if (start !== undefined) windows.push(window(start, current, now, durationMs))
  return windows
}

export interface BurnRate {
  /** All tokens (cache included) per minute, first to last entry of the window. */
  tokensPerMinute: number
  /** Input + output per minute (ccusage's indicator). */
  nonCacheTokensPerMinute: number
  /** USD per hour; null when the window is unpriced. */
  costPerHour: number | null
}

/** The window's burn rate, from its first to its last entry; null for a gap or a single instant. */
export function burnRate(w: UsageWindow, costUSD: number | null): BurnRate | null {
  if (w.gap || w.firstAt === null || w.lastAt === null) return null
  const minutes = (w.lastAt - w.firstAt) / 60_000
  if (minutes <= 0) return null
  return {
    tokensPerMinute: totalTokens(w) / minutes,
    nonCacheTokensPerMinute: (w.inputTokens + w.outputTokens) / minutes,
    costPerHour: costUSD === null ? null : (costUSD / minutes) * 60,
  }
}

export interface Projection {
  /** Tokens at the window's end at the current rate. */
  totalTokens: number
  /** USD at the window's end at the current rate (null when unpriced). */
  costUSD: number | null
  remainingMinutes: number
}

/** Where an active window ends up at its burn rate; null when it is not active or has no rate. */
export function projection(
  w: UsageWindow,
  costUSD: number | null,
  now: number = Date.now(),
): Projection | null {
  if (!w.active || w.gap) return null
  const rate = burnRate(w, costUSD)
  if (!rate) return null
  const remainingMinutes = Math.max(0, (w.end - now) / 60_000)
  return {
    totalTokens: Math.round(totalTokens(w) + rate.tokensPerMinute * remainingMinutes),
    costUSD:
      costUSD === null || rate.costPerHour === null
        ? null
        : costUSD + (rate.costPerHour / 60) * remainingMinutes,
    remainingMinutes: Math.round(remainingMinutes),
  }
}

/** What a statusline prices: per-model sums of today, of one session and of the active window. */
export interface StatuslineSums {
  today: ModelSums[]
  /** Null when no session was asked for. */
  session: ModelSums[] | null
  window: (Omit<UsageWindow, 'models'> & {models: ModelSums[]}) | null
}

/**
 * The statusline's sums of `entries` (which must reach back to at least a day before `now`, so
 * that the active window starts where it would over the whole history, and to `todayStartMs`).
 */
export function statuslineSums(
  entries: ReadonlyArray<UsageEntry & {session?: string | null}>,
  options: {now: number; todayStartMs: number; session?: string},
): StatuslineSums {
  const windows = usageWindows(entries, options.now)
  const active = windows.findLast((w) => w.active) ?? null
  return {
    today: modelSums(entries.filter((e) => e.ts >= options.todayStartMs)),
    session:
      options.session === undefined ? null : modelSums(entries.filter((e) => e.session === options.session)),
    window: active,
  }
}

/** How far back a statusline reads: a day before the active window could have started. */
export const STATUSLINE_LOOKBACK_MS = 24 * 3_600_000 + WINDOW_MS
