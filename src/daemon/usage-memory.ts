/**
 * `GET /api/usage/statusline?today=MS&session=ID`: what `gwctl statusline` prices, from the
 * daemon's memory. On the first call the requests of the last day (and of today) are read once
 * from the log database (gateway log and agents' history, each request once); from then on each
 * finished request of the event bus is appended in memory, and the database is read again only
 * when the history scanner reports new rows (`usage` events). Nothing listens, and nothing is
 * kept, until a statusline asks: the request path of a gateway without a statusline is untouched.
 * The answer is per-model token sums of today, of the session and of the active 5-hour window
 * (gateway/usage-windows.ts); the CLI prices them (its price memo), so no price table loads here.
 */
import type {GatewayEvent} from '../gateway/events.js'
import type {StatuslineSums} from '../gateway/usage-windows.js'
import {STATUSLINE_LOOKBACK_MS, statuslineSums, totalTokens} from '../gateway/usage-windows.js'
import type {LogStore} from '../store/log-store.js'
import type {SessionEntry} from '../store/usage-entries.js'
import {onGatewayEvent} from './events.js'
import type {GatewayContext, GatewayRequest} from './server.js'
import {sendJson} from './server.js'

/** Entries older than this go at the next reload (a statusline looks back a day and 5 hours, or to midnight). */
const KEEP_MS = 2 * 24 * 3_600_000

class UsageMemory {
  private entries: SessionEntry[] = []
  private from = Number.POSITIVE_INFINITY
  private stale = true
  private unsubscribe: (() => void) | undefined

  constructor(private readonly logs: LogStore) {}

  /** The entries since `sinceMs`, read from the database when memory does not reach that far. */
  since(sinceMs: number, now: number): SessionEntry[] {
    if (this.stale || sinceMs < this.from) {
      const from = Math.min(sinceMs, now - KEEP_MS)
      this.unsubscribe ??= onGatewayEvent((event) => this.onEvent(event))
      this.entries = this.logs.usageEntries({source: 'all', sinceMs: from})
      this.from = from
      this.stale = false
    }
    // what is older than the memory keeps goes (a long-running daemon between history scans)
    if (this.entries.length > 0 && this.entries[0].ts < now - KEEP_MS - 3_600_000) {
      this.entries = this.entries.filter((e) => e.ts >= now - KEEP_MS)
      this.from = Math.max(this.from, now - KEEP_MS)
    }
    let first = 0
    while (first < this.entries.length && this.entries[first].ts < sinceMs) first++
    return this.entries.slice(first)
  }

  private onEvent(event: GatewayEvent): void {
    if (event.type === 'usage') this.stale = true
    else if (event.type === 'request') {
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
      if (totalTokens(entry) > 0) this.entries.push(entry)
    }
  }

  close(): void {
    this.unsubscribe?.()
  }
}

const memories = new WeakMap<LogStore, UsageMemory>()

/** The sums of today (from `today`, Unix ms), the session and the active window. */
export function statuslineAnswer(
  logs: LogStore,
  options: {todayStartMs: number; session?: string; now?: number},
): StatuslineSums & {source: 'daemon'} {
  const now = options.now ?? Date.now()
  let memory = memories.get(logs)
  if (!memory) memories.set(logs, (memory = new UsageMemory(logs)))
  const entries = memory.since(Math.min(options.todayStartMs, now - STATUSLINE_LOOKBACK_MS), now)
  return {source: 'daemon', ...statuslineSums(entries, {now, ...options})}
}

export function statuslineHandler(request: GatewayRequest, context: GatewayContext): void {
  if (!context.routing) return sendJson(request.res, 503, {error: {message: 'The gateway has no log store.'}})
  const today = Number(request.query.get('today'))
  const session = request.query.get('session') ?? undefined
  const now = Date.now()
  const todayStartMs = Number.isFinite(today) && today > 0 && today <= now ? today : now - 24 * 3_600_000
  try {
    sendJson(
      request.res,
      200,
      statuslineAnswer(context.routing.logs, {todayStartMs, session: session || undefined, now}),
    )
  } catch (error) {
    sendJson(request.res, 500, {error: {message: (error as Error).message}})
  }
}
