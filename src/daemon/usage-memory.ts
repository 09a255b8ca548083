/**
 * `GET /api/usage/statusline?today=MS&session=ID`: what `gwctl statusline` shows, from the
 * daemon's memory. On the first call the requests of the last two days are read once from the log
 * database (gateway log and agents' history, each request once); from then on each finished
 * request of the event bus is added in memory, and the database is read again only when the
 * history scanner reports new rows (`usage` events). Nothing listens, and nothing is kept, until
 * a statusline asks: the request path of a gateway without a statusline is untouched.
 *
 * The figures are kept ready, so an answer is a lookup: today's per-model sums (per local midnight
 * asked) and the active window's (from its first request) are running sums that each request
 * adds to; the window's cut is a walk over the request times since the line's look-back (the
 * same first request as the database path, so both show the same window), and a session's sums
 * add up its own requests only (history rows; a gateway request has no session). The answer
 * carries the per-model sums and, priced with `gwctl usage`'s pricer (services/usage-cost.ts,
 * loaded by `import()` on the first call, as the budgets load it), the dollars the line prints
 * (`figures`), so the CLI loads no price table.
 */
import {statSync} from 'node:fs'

import type {GatewayEvent} from '../gateway/events.js'
import type {ModelSums, StatuslineFigures, StatuslineSums} from '../gateway/usage-windows.js'
import {
  STATUSLINE_LOOKBACK_MS,
  WINDOW_MS,
  addSums,
  burnRate,
  floorToHour,
  modelDollars as dollars,
  totalTokens,
  zeroSums,
} from '../gateway/usage-windows.js'
import type {LogStore} from '../store/log-store.js'
import {homeFile} from '../store/paths.js'
import type {ProviderConfig} from '../store/schema.js'
import type {SessionEntry} from '../store/usage-entries.js'
import {onGatewayEvent} from './events.js'
import type {PublishedKey} from './statusline-file.js'
import {StatuslinePublisher} from './statusline-file.js'
import type {GatewayContext, GatewayRequest} from './server.js'
import {sendJson} from './server.js'

/** Entries older than this go at the next trim (a statusline looks back a day and 5 hours, or to midnight). */
const KEEP_MS = 2 * 24 * 3_600_000
/** How many local midnights keep their running sums (clients in a few time zones, a day change). */
const TODAYS = 4

/** What prices a model's sums (services/usage-cost.ts's Pricer). */
export interface StatuslinePricer {
  cost(model: string | null, tokens: ModelSums, provider?: string | null): number | null
}

export type {StatuslineFigures}

type Models = Map<string, ModelSums>

const modelKey = (e: {provider: string | null; model: string | null}) =>
  `${e.provider ?? ''}\u0000${e.model ?? ''}`

function addModel(models: Models, e: SessionEntry): void {
  const key = modelKey(e)
  let m = models.get(key)
  if (!m) models.set(key, (m = {model: e.model, provider: e.provider, ...zeroSums()}))
  addSums(m, e)
}

/** The first index of `entries` (ascending ts) at or after `ts`. */
function firstAtOrAfter(entries: readonly SessionEntry[], ts: number): number {
  let lo = 0
  let hi = entries.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (entries[mid].ts < ts) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Inserts `e` into `entries` (ascending ts) after the entries of the same time. */
function insertSorted(entries: SessionEntry[], e: SessionEntry): void {
  let i = entries.length
  while (i > 0 && entries[i - 1].ts > e.ts) i--
  entries.splice(i, 0, e)
}

/** Per-model sums of the entries at or after `from` (kept as requests arrive). */
interface Running {
  from: number
  models: Models
}

class UsageMemory {
  /** Ascending ts. */
  private entries: SessionEntry[] = []
  private from = Number.POSITIVE_INFINITY
  /** The database has rows memory lacks (a history scan): read it again. */
  private stale = true
  /** Today's sums per local midnight asked, and the active window's from its first request. */
  private todays: Running[] = []
  private window: Running | undefined
  private sessions = new Map<string, SessionEntry[]>()
  private unsubscribe: (() => void) | undefined
  /** Called when the figures may have changed (a request added, the database to read again). */
  changed: (() => void) | undefined

  constructor(private readonly logs: LogStore) {}

  /** Memory that reaches back to `sinceMs` at `now`. */
  private ensure(sinceMs: number, now: number): void {
    if (this.stale || sinceMs < this.from) {
      const from = Math.min(sinceMs, now - KEEP_MS)
      this.unsubscribe ??= onGatewayEvent((event) => this.onEvent(event))
      this.entries = this.logs.usageEntries({source: 'all', sinceMs: from})
      this.from = from
      this.stale = false
      this.todays = []
      this.window = undefined
      this.indexSessions()
    }
    // what is older than the memory keeps goes (a long-running daemon between history scans);
    // the running sums start later than that, and stay
    if (this.entries.length > 0 && this.entries[0].ts < now - KEEP_MS - 3_600_000) {
      this.entries = this.entries.slice(firstAtOrAfter(this.entries, now - KEEP_MS))
      this.from = Math.max(this.from, now - KEEP_MS)
      this.indexSessions()
    }
  }

  private indexSessions(): void {
    this.sessions.clear()
    for (const e of this.entries) {
      if (!e.session) continue
      const own = this.sessions.get(e.session)
      if (own) own.push(e)
      else this.sessions.set(e.session, [e])
    }
  }

  /** The running sums from `from` (made from memory when new). */
  private running(list: Running | undefined, from: number): Running {
    if (list?.from === from) return list
    const models: Models = new Map()
    for (let i = firstAtOrAfter(this.entries, from); i < this.entries.length; i++)
      addModel(models, this.entries[i])
    return {from, models}
  }

  private onEvent(event: GatewayEvent): void {
    if (event.type === 'usage') {
      this.stale = true
      this.changed?.()
    } else if (event.type === 'request' && !this.stale) {
      const e = event.entry
      const entry: SessionEntry = {
        ts: e.time,
        model: e.model,
        provider: e.provider,
        session: null,
        inputTokens: Math.max(e.inputTokens - e.cacheReadTokens - e.cacheCreationTokens, 0),
        outputTokens: e.outputTokens,
        cacheReadTokens: e.cacheReadTokens,
        cacheCreationTokens: e.cacheCreationTokens,
        cache1hTokens: e.cache1hTokens ?? 0,
      }
      if (totalTokens(entry) <= 0) return
      // a request answered while a longer one started earlier is still streaming: in time order
      if (this.entries.length === 0 || entry.ts >= this.entries.at(-1)!.ts) this.entries.push(entry)
      else insertSorted(this.entries, entry)
      for (const r of this.todays) if (entry.ts >= r.from) addModel(r.models, entry)
      if (this.window && entry.ts >= this.window.from) addModel(this.window.models, entry)
      this.changed?.()
    }
  }

  /**
   * The active window of the entries since `sinceMs`, cut as gateway/usage-windows.ts does (from
   * the same first request as the database path, so both show the same window): a walk over the
   * times alone; its sums are the running ones.
   */
  private activeWindow(sinceMs: number, now: number) {
    const entries = this.entries
    const first = firstAtOrAfter(entries, sinceMs)
    if (first >= entries.length) return null
    let startAt = entries[first].ts
    let start = floorToHour(startAt)
    for (let i = first + 1; i < entries.length; i++) {
      const ts = entries[i].ts
      if (ts - start > WINDOW_MS || ts - entries[i - 1].ts > WINDOW_MS) {
        startAt = ts
        start = floorToHour(ts)
      }
    }
    const lastAt = entries[entries.length - 1].ts
    if (!(now - lastAt < WINDOW_MS && now < start + WINDOW_MS)) return null
    this.window = this.running(this.window, startAt)
    const models = [...this.window.models.values()].map((m) => ({...m}))
    const sums = zeroSums()
    for (const m of models) addSums(sums, m)
    return {
      start,
      end: start + WINDOW_MS,
      firstAt: startAt,
      lastAt,
      gap: false,
      active: true,
      ...sums,
      models,
    }
  }

  /** The per-model sums of today, of the session and of the active window. */
  sums(options: {todayStartMs: number; session?: string; now: number}): StatuslineSums {
    const {todayStartMs, session, now} = options
    const sinceMs = Math.min(todayStartMs, now - STATUSLINE_LOOKBACK_MS)
    this.ensure(sinceMs, now)
    let today = this.todays.find((r) => r.from === todayStartMs)
    if (!today) {
      today = this.running(undefined, todayStartMs)
      this.todays = [today, ...this.todays].slice(0, TODAYS)
    }
    let sessionSums: ModelSums[] | null = null
    if (session !== undefined) {
      const own = this.sessions.get(session) ?? []
      const models: Models = new Map()
      for (let i = firstAtOrAfter(own, sinceMs); i < own.length; i++) addModel(models, own[i])
      sessionSums = [...models.values()]
    }
    return {
      today: [...today.models.values()].map((m) => ({...m})),
      session: sessionSums,
      window: this.activeWindow(sinceMs, now),
    }
  }

  close(): void {
    this.unsubscribe?.()
  }
}

const memories = new WeakMap<LogStore, UsageMemory>()

/** The dollars of `sums`, as the line prints them. */
export function statuslineFigures(sums: StatuslineSums, pricer: StatuslinePricer): StatuslineFigures {
  const w = sums.window
  const inWindow = w && dollars(w.models, pricer)
  const rate = w && inWindow && burnRate(w, inWindow.unpriced ? null : inWindow.usd)
  return {
    today: dollars(sums.today, pricer),
    session: sums.session && {
      ...dollars(sums.session, pricer),
      requests: sums.session.reduce((n, m) => n + m.requests, 0),
    },
    window: w && inWindow && {...inWindow, end: w.end, perHour: rate?.costPerHour ?? null},
  }
}

function memoryOf(logs: LogStore): UsageMemory {
  let memory = memories.get(logs)
  if (!memory) memories.set(logs, (memory = new UsageMemory(logs)))
  return memory
}

/** The sums of today (from `today`, Unix ms), the session and the active window, and their dollars with a pricer. */
export function statuslineAnswer(
  logs: LogStore,
  options: {todayStartMs: number; session?: string; now?: number},
  pricer?: StatuslinePricer,
): StatuslineSums & {source: 'daemon'; figures?: StatuslineFigures} {
  const now = options.now ?? Date.now()
  const sums = memoryOf(logs).sums({...options, now})
  return {source: 'daemon', ...sums, ...(pricer ? {figures: statuslineFigures(sums, pricer)} : {})}
}

/**
 * `gwctl usage`'s pricer with the gateway's providers' own prices, made on the first answer and
 * again when `prices.json` changes (`gwctl usage prices update`); undefined when it cannot load.
 */
let pricing:
  | {providers: readonly ProviderConfig[]; mtime: number; pricer: Promise<StatuslinePricer | undefined>}
  | undefined

function pricerFor(providers: readonly ProviderConfig[]): Promise<StatuslinePricer | undefined> {
  let mtime = 0
  try {
    mtime = statSync(homeFile('prices')).mtimeMs
  } catch {
    // no downloaded table: the bundled one
  }
  if (!pricing || pricing.providers !== providers || pricing.mtime !== mtime) {
    const overrides = new Map(providers.filter((p) => p.prices).map((p) => [p.name, p.prices!]))
    pricing = {
      providers,
      mtime,
      pricer: import('../services/usage-cost.js').then(
        ({createPricer}) => createPricer(overrides),
        () => undefined,
      ),
    }
  }
  return pricing.pricer
}

/** A running publisher per log store (the daemon has one). */
const publishers = new WeakMap<LogStore, StatuslinePublisher<StatuslineFigures>>()

/**
 * From now on, writes the figures of `key` (with those of the other keys asked lately) to the
 * published file whenever they may change.
 */
function publishStatusline(logs: LogStore, key: PublishedKey, pricer: StatuslinePricer): void {
  let publisher = publishers.get(logs)
  if (!publisher) {
    const memory = memoryOf(logs)
    publisher = new StatuslinePublisher(homeFile('statusline'), (k, now) =>
      statuslineFigures(memory.sums({...k, now}), publishedPricer),
    )
    publishers.set(logs, publisher)
    memory.changed = () => publisher!.changed()
  }
  // the pricer of the last answer (a new one after `gwctl usage prices update` or a provider's prices)
  publishedPricer = pricer
  publisher.ask(key)
}

let publishedPricer: StatuslinePricer

export async function statuslineHandler(request: GatewayRequest, context: GatewayContext): Promise<void> {
  if (!context.routing) return sendJson(request.res, 503, {error: {message: 'The gateway has no log store.'}})
  const today = Number(request.query.get('today'))
  const session = request.query.get('session') ?? undefined
  try {
    const pricer = await pricerFor(context.routing.providers)
    const now = Date.now()
    // a local midnight is at most a day (25 hours across a DST change) back: anything else would
    // make memory reach back that far (a read of the whole log), so the last 24 hours stand for it
    const todayStartMs =
      Number.isFinite(today) && today >= now - 25 * 3_600_000 && today <= now ? today : now - 24 * 3_600_000
    const answer = statuslineAnswer(
      context.routing.logs,
      {todayStartMs, session: session || undefined, now},
      pricer,
    )
    sendJson(request.res, 200, answer)
    // the next calls for this midnight and session read the figures from a file (statusline-file.ts)
    if (pricer && todayStartMs === today)
      publishStatusline(context.routing.logs, {todayStartMs, session: session || undefined}, pricer)
  } catch (error) {
    sendJson(request.res, 500, {error: {message: (error as Error).message}})
  }
}
