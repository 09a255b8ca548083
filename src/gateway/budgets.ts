/**
 * Budgets: the vocabulary the CLI, the app and the daemon share (docs/BUDGETS.md).
 *
 * A budget caps what requests through the gateway may spend in a period, in USD or in tokens, for
 * one scope: an agent, a key, a policy, or a project (the `x-gw-project` header; else the agent's
 * name, as the log row has it). Periods are calendar periods in UTC: a day from 00:00, a week from
 * Monday 00:00, a month from the 1st.
 *
 * What is spent is counted exactly as `gwctl usage --source gateway` counts it: the token sums of
 * the logged requests grouped by provider and model, each group priced by the same pricer (a
 * group of n requests as n requests of its average size). {@link BudgetCounter} holds those sums;
 * the daemon keeps one per budget in memory and the CLI fills one from `logs.db` when the daemon
 * is stopped, so both show the same figure.
 */
import type {ContextBands} from '../store/context-bands.js'
import {addBands} from '../store/context-bands.js'
import type {BudgetRecord, BudgetScope, BudgetPeriod} from '../store/state-schema.js'
import {roundUsd} from '../core/usd.js'

export type {BudgetRecord, BudgetScope, BudgetPeriod} from '../store/state-schema.js'

export const BUDGET_SCOPES = ['agent', 'key', 'policy', 'project'] as const satisfies readonly BudgetScope[]
export const BUDGET_PERIODS = ['daily', 'weekly', 'monthly'] as const satisfies readonly BudgetPeriod[]

/** Share of the limit at which a budget tells its viewers (an event and a daemon log line). */
export const BUDGET_THRESHOLDS = [0.8, 1] as const

/** Largest USD limit and token limit (a typo guard: beyond these no budget means anything). */
export const MAX_BUDGET_USD = 1_000_000
export const MAX_BUDGET_TOKENS = 1e13

const DAY_MS = 86_400_000

/** Start and end (the reset) of the period holding `nowMs`, in Unix ms, UTC. */
export function periodBounds(period: BudgetPeriod, nowMs: number): {start: number; reset: number} {
  const d = new Date(nowMs)
  const y = d.getUTCFullYear()
  const m = d.getUTCMonth()
  const day = Date.UTC(y, m, d.getUTCDate())
  switch (period) {
    case 'daily':
      return {start: day, reset: day + DAY_MS}
    case 'weekly': {
      // getUTCDay: 0 Sunday ... 6 Saturday; weeks start on Monday (ISO 8601)
      const start = day - ((d.getUTCDay() + 6) % 7) * DAY_MS
      return {start, reset: start + 7 * DAY_MS}
    }
    case 'monthly':
      return {start: Date.UTC(y, m, 1), reset: Date.UTC(y, m + 1, 1)}
  }
}

/** Who a request is for, as its log row names it. */
export interface BudgetSubject {
  agentId: string | null
  keyPrefix: string | null
  policyId: string | null
  project: string | null
}

/** True when `budget` covers a request of `who`. */
export function budgetCovers(budget: Pick<BudgetRecord, 'scope' | 'target'>, who: BudgetSubject): boolean {
  switch (budget.scope) {
    case 'agent':
      return who.agentId === budget.target
    case 'key':
      return who.keyPrefix === budget.target
    case 'policy':
      return who.policyId === budget.target
    case 'project':
      return who.project === budget.target
  }
}

/**
 * Parses an amount: USD (`5`, `$5`, `2.50`) or, with `tokens`, a whole number of tokens with an
 * optional k/M/B suffix (`500k`, `2M`). Returns the number, or a sentence saying what is wrong.
 */
export function parseBudgetAmount(text: string, tokens: boolean): number | string {
  const value = text.trim()
  if (tokens) {
    const m = /^(\d+(?:\.\d+)?)([kKmMbB]?)$/.exec(value)
    if (!m)
      return `"${text}" is not a token amount: give a whole number, optionally with k, M or B (500k, 2M)`
    const scale = {'': 1, k: 1e3, m: 1e6, b: 1e9}[m[2].toLowerCase() as '' | 'k' | 'm' | 'b']
    const n = Number(m[1]) * scale
    if (!Number.isInteger(n)) return `"${text}" is not a whole number of tokens`
    if (n <= 0 || n > MAX_BUDGET_TOKENS)
      return `a token budget must be between 1 and ${MAX_BUDGET_TOKENS} tokens`
    return n
  }
  const m = /^\$?(\d+(?:\.\d+)?)$/.exec(value)
  if (!m)
    return `"${text}" is not an amount in USD: give a number such as 5 or 2.50 (add --tokens for a token budget)`
  const n = Number(m[1])
  if (n <= 0 || n > MAX_BUDGET_USD) return `a USD budget must be more than 0 and at most ${MAX_BUDGET_USD}`
  return n
}

/** What `--on-exceed` says, parsed. */
export type OnExceed = BudgetRecord['onExceed']

/** Parses `block` or `fallback:PROVIDER[:MODEL]`; a sentence when it is neither. */
export function parseOnExceed(text: string): OnExceed | string {
  if (text === 'block') return {action: 'block'}
  const m = /^fallback:([^:]+)(?::(.+))?$/.exec(text)
  if (!m)
    return `"${text}" is not an action: use block, or fallback:PROVIDER[:MODEL] (fallback:openai:gpt-4o-mini)`
  return m[2] ? {action: 'fallback', provider: m[1], model: m[2]} : {action: 'fallback', provider: m[1]}
}

/** `block` or `fallback:PROVIDER[:MODEL]`, as `--on-exceed` takes it. */
export function onExceedLabel(o: OnExceed): string {
  return o.action === 'block' ? 'block' : `fallback:${o.provider}${o.model ? `:${o.model}` : ''}`
}

/** An amount as people read it: `$5.00`, `$0.0123`, `1,200,000 tokens`. */
export function formatBudgetAmount(unit: BudgetRecord['unit'], amount: number): string {
  if (unit === 'tokens') return `${Math.round(amount).toLocaleString('en-US')} tokens`
  amount = roundUsd(amount)
  return amount !== 0 && Math.abs(amount) < 0.01 ? `$${amount.toFixed(4)}` : `$${amount.toFixed(2)}`
}

/** `agent "codex"`, `project "web"`, ... (`name`: the agent's name where the target is its id). */
export function scopeLabel(b: Pick<BudgetRecord, 'scope' | 'target'>, name?: string | null): string {
  return `${b.scope} "${name ?? b.target}"`
}

/** The tokens of one request or a group of them, as usage counts them (input without cache). */
export interface BudgetTokens {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  /** The part of `cacheCreationTokens` written to the 1-hour cache (priced at 2x input). */
  cache1hTokens?: number
  /** How many requests these are (priced as that many of the average size, per context band). */
  requests: number
  /** Of a group read from the log database: its requests past a long-context threshold, by band. */
  bands?: ContextBands
}

/** The pricer `gwctl usage` uses (services/usage-cost.ts), as budgets need it. */
export interface BudgetPricer {
  cost(
    model: string | null,
    tokens: Omit<BudgetTokens, 'requests'> & {requests?: number},
    provider?: string | null,
  ): number | null
}

interface Group extends BudgetTokens {
  cache1hTokens: number
  provider: string | null
  model: string | null
  /** USD of the group, null when unpriced (recomputed when the group changes). */
  cost: number | null
}

/**
 * The spend of one budget in one period: token sums per provider and model, each group priced as
 * `gwctl usage` prices it. Adding a request recomputes its group's cost only.
 */
export class BudgetCounter {
  private readonly groups = new Map<string, Group>()
  private tokenSum = 0

  constructor(private readonly pricer: BudgetPricer | undefined) {}

  /** Adds one request (or a group read from the log database). */
  add(provider: string | null, model: string | null, t: BudgetTokens): void {
    const key = `${provider ?? ''}\u0000${model ?? ''}`
    let g = this.groups.get(key)
    if (!g) {
      g = {
        provider,
        model,
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
        cache1hTokens: 0,
        requests: 0,
        cost: null,
      }
      this.groups.set(key, g)
    }
    g.inputTokens += t.inputTokens
    g.outputTokens += t.outputTokens
    g.cacheReadTokens += t.cacheReadTokens
    g.cacheCreationTokens += t.cacheCreationTokens
    g.cache1hTokens += t.cache1hTokens ?? 0
    g.requests += t.requests
    // a request past a long-context threshold counts in its band (its tier is its own)
    addBands(g, t)
    this.tokenSum += t.inputTokens + t.outputTokens + t.cacheReadTokens + t.cacheCreationTokens
    if (this.pricer) g.cost = this.pricer.cost(g.model, g, g.provider)
  }

  /** USD spent (the priced groups; see {@link unpricedModels}). */
  get spentUSD(): number {
    // summed afresh (a handful of groups): a running total would drift from usage's sum by rounding
    let sum = 0
    for (const g of this.groups.values()) if (g.cost !== null) sum += g.cost
    return sum
  }

  get tokens(): number {
    return this.tokenSum
  }

  /** Models with tokens but no price: their tokens are not in {@link spentUSD}. */
  get unpricedModels(): string[] {
    const names = new Set<string>()
    for (const g of this.groups.values()) {
      const tokens = g.inputTokens + g.outputTokens + g.cacheReadTokens + g.cacheCreationTokens
      if (g.cost === null && tokens > 0) names.add(g.model ?? '(unknown)')
    }
    return [...names]
  }

  spent(unit: BudgetRecord['unit']): number {
    return unit === 'usd' ? this.spentUSD : this.tokenSum
  }
}

/** A budget as `budgets list`, `status`, `dashboard --json` and the app show it. */
export interface BudgetView {
  id: string
  scope: BudgetScope
  /** Agent id, key prefix, policy id or project name. */
  target: string
  /** The agent's name (agent budgets), when known. */
  name?: string | null
  period: BudgetPeriod
  unit: BudgetRecord['unit']
  limit: number
  /** Spent in the current period (USD or tokens). */
  spent: number
  /** Held by requests under way (estimated; 0 when the gateway is stopped). */
  reserved: number
  /** spent / limit, in percent (may pass 100). */
  percent: number
  state: 'ok' | 'warning' | 'exceeded'
  /** Unix ms: the period's start and its end (when it resets). */
  periodStart: number
  resetAt: number
  onExceed: string
  /** Models seen without a price (USD budgets): their tokens count for nothing. */
  unpricedModels: string[]
  /** Where the figures come from: the running gateway's counters, or the log database. */
  source: 'gateway' | 'database'
}

/** The view of `record` with what `counter` holds. */
export function budgetView(
  record: BudgetRecord,
  counter: BudgetCounter,
  options: {reserved?: number; nowMs?: number; name?: string | null; source: BudgetView['source']},
): BudgetView {
  const {start, reset} = periodBounds(record.period, options.nowMs ?? Date.now())
  const spent = counter.spent(record.unit)
  const ratio = spent / record.limit
  return {
    id: record.id,
    scope: record.scope,
    target: record.target,
    ...(options.name !== undefined ? {name: options.name} : {}),
    period: record.period,
    unit: record.unit,
    limit: record.limit,
    spent: record.unit === 'usd' ? Math.round(spent * 1e9) / 1e9 : spent,
    reserved:
      record.unit === 'usd'
        ? Math.round((options.reserved ?? 0) * 1e9) / 1e9
        : Math.round(options.reserved ?? 0),
    percent: Math.round(ratio * 1000) / 10,
    state: ratio >= 1 ? 'exceeded' : ratio >= BUDGET_THRESHOLDS[0] ? 'warning' : 'ok',
    periodStart: start,
    resetAt: reset,
    onExceed: onExceedLabel(record.onExceed),
    unpricedModels: record.unit === 'usd' ? counter.unpricedModels : [],
    source: options.source,
  }
}

/** The sentence of a 429 (or a fallback's log row) for a budget that is spent. */
export function exceededMessage(view: BudgetView): string {
  const amount = (n: number) => formatBudgetAmount(view.unit, n)
  const reserved = view.reserved > 0 ? ` (+ ${amount(view.reserved)} reserved by requests under way)` : ''
  return `Budget exceeded: ${scopeLabel(view, view.name)} has spent ${amount(view.spent)} of its ${view.period} budget of ${amount(view.limit)}${reserved}. It resets at ${new Date(view.resetAt).toISOString()}.`
}
