/**
 * Budgets as the running gateway enforces them (docs/BUDGETS.md): one in-memory counter per
 * budget, filled from `logs.db` at start and when the budgets change, and kept by the requests
 * themselves after that (no SQLite read per request).
 *
 * Before a request is forwarded, {@link BudgetBook.admit} finds the budgets that cover it. One
 * whose spend plus the reservations of the requests under way has reached its limit refuses it
 * (`block`: 429) or sends it to its fallback target; otherwise the request's estimated cost (its
 * input bytes / 4 plus its output cap) is reserved against every covering budget. When the
 * answer ends, {@link BudgetBook.settle} releases the reservation and adds the real tokens, priced
 * as `gwctl usage` prices them. So N concurrent requests can overshoot a limit by at most the
 * reservation of the last one let through (when its real cost stays within its estimate).
 */
import type BetterSqlite3 from 'better-sqlite3'

import type {BudgetPricer, BudgetRecord, BudgetSubject, BudgetView} from '../gateway/budgets.js'
import {
  BUDGET_THRESHOLDS,
  BudgetCounter,
  budgetCovers,
  budgetView,
  exceededMessage,
  formatBudgetAmount,
  onExceedLabel,
  periodBounds,
  scopeLabel,
} from '../gateway/budgets.js'
import {RouteError} from '../gateway/policy.js'
import type {LogEntry} from '../store/log-store.js'
import type {UsageGroup} from '../store/usage-query.js'
import type {Family, ProviderConfig} from '../store/schema.js'
import type {BodyFacts} from './router/proxy-types.js'
import {emitGatewayEvent} from './events.js'

/** Output tokens assumed for a request that states no cap. */
export const DEFAULT_OUTPUT_ESTIMATE = 4096

interface Live {
  record: BudgetRecord
  /** The current period, Unix ms. */
  start: number
  reset: number
  counter: BudgetCounter
  /** Held by requests under way (in the budget's unit). */
  reserved: number
  /** Requests under way holding a reservation. */
  holding: number
  /** Highest threshold already told in this period (0: none). */
  told: number
  /** A fallback was already logged in this period. */
  fellBackLogged: boolean
}

/** What one request holds against one budget until its answer ends. */
export interface Reservation {
  live: Live
  start: number
  amount: number
}

/** What the book decided for one request. */
export interface Admission {
  reservations: Reservation[]
  /** The budget is spent and its action is a fallback: go there instead (and say why). */
  fallback?: {provider: string; model?: string; reason: string}
}

/** A 429 for a spent budget whose action is `block`, in the entrance's shape, with Retry-After. */
export class BudgetExceededError extends RouteError {
  constructor(
    message: string,
    readonly headers: Record<string, string>,
  ) {
    super(429, message, 'budget_exceeded')
  }
}

/** What a request is estimated to use before it is sent. */
export interface RequestEstimate {
  provider: string | null
  model: string | null
  inputTokens: number
  outputTokens: number
}

export interface BudgetBookOptions {
  pricer: BudgetPricer
  /** The logged groups of a budget since `sinceMs` (the usage query of `gwctl usage`). */
  readSpend: (record: BudgetRecord, sinceMs: number) => UsageGroup[]
  /** An agent's name for the messages (agent budgets hold the id). */
  nameOf?: (agentId: string) => string | undefined
  /** One line to the daemon log. */
  log?: (line: string) => void
  now?: () => number
}

export class BudgetBook {
  private live: Live[] = []
  private readonly now: () => number

  constructor(
    records: readonly BudgetRecord[],
    private readonly options: BudgetBookOptions,
  ) {
    this.now = options.now ?? Date.now
    this.replace(records)
  }

  get size(): number {
    return this.live.length
  }

  /**
   * Takes a new list of budgets: one unchanged (same id, scope, target, period, unit) keeps its
   * counter and reservations; a new or changed one reads its period's spend from the log.
   */
  replace(records: readonly BudgetRecord[]): void {
    const old = new Map(this.live.map((l) => [l.record.id, l]))
    this.live = records.map((record) => {
      const kept = old.get(record.id)
      const r = kept?.record
      if (
        kept &&
        r &&
        r.scope === record.scope &&
        r.target === record.target &&
        r.period === record.period &&
        r.unit === record.unit
      ) {
        kept.record = record
        // a new limit may put the budget back under a threshold: told again when crossed
        kept.told = this.passed(kept)
        return kept
      }
      return this.load(record)
    })
  }

  private load(record: BudgetRecord): Live {
    const {start, reset} = periodBounds(record.period, this.now())
    const counter = new BudgetCounter(this.options.pricer)
    for (const g of this.options.readSpend(record, start)) counter.add(g.provider, g.model, g)
    const live: Live = {
      record,
      start,
      reset,
      counter,
      reserved: 0,
      holding: 0,
      told: 0,
      fellBackLogged: false,
    }
    live.told = this.passed(live)
    return live
  }

  /** The highest threshold the budget's spend has reached (0: none). */
  private passed(l: Live): number {
    const ratio = l.counter.spent(l.record.unit) / l.record.limit
    let told = 0
    for (const t of BUDGET_THRESHOLDS) if (ratio >= t) told = t
    return told
  }

  /** Moves a budget into the period of now (a new day, week or month starts from nothing). */
  private current(l: Live, now: number): Live {
    if (now < l.reset && now >= l.start) return l
    const {start, reset} = periodBounds(l.record.period, now)
    l.start = start
    l.reset = reset
    l.counter = new BudgetCounter(this.options.pricer)
    l.reserved = 0
    l.holding = 0
    l.told = 0
    l.fellBackLogged = false
    return l
  }

  /**
   * Decides on one request of `who`: undefined when no budget covers it. Throws
   * {@link BudgetExceededError} when a covering budget is spent and blocks.
   */
  admit(who: BudgetSubject, estimate: RequestEstimate): Admission | undefined {
    let covering: Live[] | undefined
    for (const l of this.live) if (budgetCovers(l.record, who)) (covering ??= []).push(l)
    if (!covering) return undefined
    const now = this.now()
    let fallback: Admission['fallback']
    for (const l of covering) {
      this.current(l, now)
      if (l.counter.spent(l.record.unit) + l.reserved < l.record.limit) continue
      const view = this.viewOf(l, now)
      const message = exceededMessage(view)
      const action = l.record.onExceed
      if (action.action === 'block') {
        throw new BudgetExceededError(message, {
          'retry-after': String(Math.max(1, Math.ceil((l.reset - now) / 1000))),
        })
      }
      if (!fallback) {
        fallback = {
          provider: action.provider,
          ...(action.model ? {model: action.model} : {}),
          reason: `${message} Sent to ${onExceedLabel(action)}.`,
        }
        if (!l.fellBackLogged) {
          l.fellBackLogged = true
          this.options.log?.(
            `${new Date(now).toISOString()} budget: ${scopeLabel(l.record, view.name)} ${l.record.period} is spent: requests go to ${onExceedLabel(action)} until ${new Date(l.reset).toISOString()}`,
          )
        }
      }
    }
    const reservations: Reservation[] = []
    for (const l of covering) {
      const amount = this.estimateIn(l.record.unit, estimate)
      l.reserved += amount
      l.holding++
      reservations.push({live: l, start: l.start, amount})
    }
    return fallback ? {reservations, fallback} : {reservations}
  }

  private estimateIn(unit: BudgetRecord['unit'], e: RequestEstimate): number {
    if (unit === 'tokens') return e.inputTokens + e.outputTokens
    const cost = this.options.pricer.cost(
      e.model,
      {inputTokens: e.inputTokens, outputTokens: e.outputTokens, cacheReadTokens: 0, cacheCreationTokens: 0},
      e.provider,
    )
    return cost ?? 0
  }

  /**
   * Releases the reservations of a finished request and counts what it really used: its row
   * (`entry`), and the rows of its tries whose answers the client never got but their upstream
   * billed (`tries`: ./router/log-entry.ts `billedTryEntries`).
   */
  settle(reservations: readonly Reservation[], entry: LogEntry, tries?: readonly LogEntry[]): void {
    for (const r of reservations) {
      const l = r.live
      // a request of a period that has ended since: that period's count is gone
      if (l.start !== r.start) continue
      l.reserved = Math.max(l.reserved - r.amount, 0)
      l.holding = Math.max(l.holding - 1, 0)
      if (l.holding === 0) l.reserved = 0 // no float residue once nothing is under way
    }
    if (tries) for (const tried of tries) this.count(reservations, tried)
    this.count(reservations, entry)
  }

  /** Counts a finished request's row in the periods its reservations were made in. */
  private count(reservations: readonly Reservation[], entry: LogEntry): void {
    const tokens = {
      // usage counts as input what was neither read from nor written to the cache
      inputTokens: Math.max(entry.inputTokens - entry.cacheReadTokens - entry.cacheCreationTokens, 0),
      outputTokens: entry.outputTokens,
      cacheReadTokens: entry.cacheReadTokens,
      cacheCreationTokens: entry.cacheCreationTokens,
      cache1hTokens: entry.cache1hTokens ?? 0,
      requests: 1,
    }
    const used =
      tokens.inputTokens + tokens.outputTokens + tokens.cacheReadTokens + tokens.cacheCreationTokens
    for (const r of reservations) {
      const l = r.live
      // a request of a period that has ended since: that period's count is gone; a request logged
      // in the previous period (it arrived before the reset) is not this one's
      if (l.start !== r.start || entry.time < l.start || used === 0) continue
      l.counter.add(entry.provider, entry.model, tokens)
      this.tell(l)
    }
  }

  /** Emits the 80 % and 100 % events once per period each (both when one request passes both). */
  private tell(l: Live): void {
    const reached = this.passed(l)
    if (reached <= l.told) return
    const view = this.viewOf(l, this.now())
    for (const t of BUDGET_THRESHOLDS) {
      if (t <= l.told || t > reached) continue
      const threshold = Math.round(t * 100)
      this.options.log?.(
        `${new Date().toISOString()} budget: ${scopeLabel(l.record, view.name)} ${l.record.period} reached ${threshold} % (${formatBudgetAmount(l.record.unit, view.spent)} of ${formatBudgetAmount(l.record.unit, l.record.limit)})`,
      )
      emitGatewayEvent({type: 'budget', threshold, budget: view})
    }
    l.told = reached
  }

  private viewOf(l: Live, now: number): BudgetView {
    const name = l.record.scope === 'agent' ? this.options.nameOf?.(l.record.target) : undefined
    return budgetView(l.record, l.counter, {reserved: l.reserved, nowMs: now, name, source: 'gateway'})
  }

  /** Every budget as it stands now. */
  views(): BudgetView[] {
    const now = this.now()
    return this.live.map((l) => this.viewOf(this.current(l, now), now))
  }
}

const GEMINI_MODEL = /\/models\/([^/:]+):/

/**
 * The estimate of a request before it is sent: input tokens as its body's bytes / 4 (JSON's own
 * characters make that generous), output as its stated cap (`max_tokens`,
 * `max_completion_tokens`, `max_output_tokens`, `generationConfig.maxOutputTokens`), else
 * {@link DEFAULT_OUTPUT_ESTIMATE}.
 */
export function estimateRequest(
  family: Family,
  url: string,
  json: unknown,
  bodyBytes: number,
): {requestedModel: string | undefined; inputTokens: number; outputTokens: number} {
  const body =
    json && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : {}
  const config = body.generationConfig as Record<string, unknown> | undefined
  return estimate(
    family,
    url,
    body.model,
    family === 'gemini'
      ? config?.maxOutputTokens
      : (body.max_tokens ?? body.max_completion_tokens ?? body.max_output_tokens),
    bodyBytes,
  )
}

/**
 * The same estimate from what the entrance's check read of the body (`BodyFacts`): the model and
 * the caps are those a parse reads. Undefined when the check could not read the model (a
 * non-ASCII name): the caller parses the body.
 */
export function estimateFromFacts(
  family: Family,
  url: string,
  facts: BodyFacts,
  bodyBytes: number,
): {requestedModel: string | undefined; inputTokens: number; outputTokens: number} | undefined {
  if (family !== 'gemini' && facts.model === undefined) return undefined
  return estimate(
    family,
    url,
    facts.model,
    family === 'gemini' ? facts.maxOutputTokens : facts.maxTokens,
    bodyBytes,
  )
}

function estimate(
  family: Family,
  url: string,
  model: unknown,
  cap: unknown,
  bodyBytes: number,
): {requestedModel: string | undefined; inputTokens: number; outputTokens: number} {
  let requestedModel: string | undefined
  if (family === 'gemini') {
    const m = GEMINI_MODEL.exec(url)
    requestedModel = m ? decodeURIComponent(m[1]) : undefined
  } else requestedModel = typeof model === 'string' ? model : undefined
  const outputTokens =
    typeof cap === 'number' && Number.isFinite(cap) && cap > 0 ? Math.ceil(cap) : DEFAULT_OUTPUT_ESTIMATE
  return {requestedModel, inputTokens: Math.ceil(bodyBytes / 4), outputTokens}
}

/**
 * A book for `records` with the pricer of `gwctl usage` (services/usage-cost.ts, loaded here
 * only when a budget exists: a daemon without budgets never loads it) and the providers' own
 * prices.
 */
export async function createBudgetBook(
  records: readonly BudgetRecord[],
  options: Omit<BudgetBookOptions, 'pricer'> & {providers: readonly ProviderConfig[]},
): Promise<BudgetBook> {
  const {createPricer} = await import('../services/usage-cost.js')
  const overrides = new Map(options.providers.filter((p) => p.prices).map((p) => [p.name, p.prices!]))
  const pricer = await createPricer(overrides)
  return new BudgetBook(records, {...options, pricer})
}

/** What the budget endpoints need of the daemon (a part of GatewayContext). */
export interface BudgetHost {
  store: {path: string; data: {agents: ReadonlyArray<{id: string; name: string}>}}
  routing?: {
    router: {budgets: BudgetBook | undefined}
    logs: {read<T>(query: (db: BetterSqlite3.Database) => T): T}
    providers: readonly ProviderConfig[]
  }
  log(line: string): void
}

/** Loads the budgets into the router (none: the router has no book, and nothing is loaded). */
export async function installBudgets(host: BudgetHost, records: readonly BudgetRecord[]): Promise<void> {
  const routing = host.routing
  if (!routing) return
  if (records.length === 0) {
    routing.router.budgets = undefined
    return
  }
  if (routing.router.budgets) {
    routing.router.budgets.replace(records)
    return
  }
  const {budgetSpendGroups} = await import('../store/budget-query.js')
  routing.router.budgets = await createBudgetBook(records, {
    providers: routing.providers,
    readSpend: (record, sinceMs) =>
      routing.logs.read((db) => budgetSpendGroups(db, record.scope, record.target, sinceMs)),
    nameOf: (id) => host.store.data.agents.find((a) => a.id === id)?.name,
    log: host.log,
  })
}

/** Every budget as the gateway enforces it now (none: []). */
export function budgetViews(host: Pick<BudgetHost, 'routing'>): BudgetView[] {
  return host.routing?.router.budgets?.views() ?? []
}

/**
 * Reads the budgets from the state file on disk (the CLI writes them under the lock) and
 * enforces them from now on. Throws a sentence when the file cannot be read or is not valid.
 */
export async function reloadBudgets(host: BudgetHost): Promise<BudgetView[]> {
  const {readFile} = await import('node:fs/promises')
  const {upgradeState, validateState} = await import('../store/state-schema.js')
  let data: unknown
  try {
    data = upgradeState(JSON.parse(await readFile(host.store.path, 'utf8')))
  } catch (error) {
    throw new Error(`cannot read ${host.store.path}: ${(error as Error).message}`)
  }
  const problems = validateState(data)
  if (problems.length > 0)
    throw new Error(`${host.store.path} is not valid: ${problems.slice(0, 3).join('; ')}`)
  const records = (data as {budgets?: BudgetRecord[]}).budgets ?? []
  await installBudgets(host, records)
  host.log(`${new Date().toISOString()} budgets: ${records.length} loaded`)
  return budgetViews(host)
}
