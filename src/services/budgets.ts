/**
 * `gwctl budgets`: set, list and remove the budgets the gateway enforces (docs/BUDGETS.md).
 * Budgets live in the state file (written under the lock, schema-checked); a running gateway is
 * told to reload them, so a change applies to its next request. `list` shows the gateway's live
 * counters while it runs, else the same figures computed from the log database.
 */
import {existsSync} from 'node:fs'

import {NotFoundError, UsageError} from '../core/errors.js'
import type {BudgetPeriod, BudgetRecord, BudgetScope, BudgetView} from '../gateway/budgets.js'
import {
  BudgetCounter,
  budgetView,
  parseBudgetAmount,
  parseOnExceed,
  periodBounds,
} from '../gateway/budgets.js'
import {fileHasBytes, homeFile, pendingFileOf} from '../store/paths.js'
import type {GatewayState} from '../store/state-schema.js'
import {gatewayGet, liveGatewayPort} from './gateway-api.js'
import {daemonClient} from './gateway.js'
import {knownProviders} from './policies.js'

export interface BudgetSelector {
  scope: BudgetScope
  /** Agent id or name, key prefix, policy id or project name, as typed. */
  target: string
}

export interface SetBudgetOptions extends BudgetSelector {
  period: BudgetPeriod
  amount: string
  tokens: boolean
  /** `block` (default) or `fallback:PROVIDER[:MODEL]`. */
  onExceed?: string
  signal?: AbortSignal
}

/** Where a change stands in the gateway: applied now, at its next start, or not (why). */
export interface Applied {
  gateway: 'applied' | 'not running' | 'failed'
  problem?: string
}

const PROJECT_RULE = /^[^\p{Cc}]{1,200}$/u

/** The stored target of a selector (an agent's id, a key's display prefix), checked against the state. */
function resolveTarget(state: GatewayState, sel: BudgetSelector): {target: string; name?: string} {
  const given = sel.target.trim()
  if (!given) throw new UsageError(`--${sel.scope} needs a value.`, {code: 'invalid_budget_scope'})
  switch (sel.scope) {
    case 'agent': {
      const byId = state.agents.find((a) => a.id === given)
      if (byId) return {target: byId.id, name: byId.name}
      const named = state.agents.filter((a) => a.name === given)
      if (named.length === 1) return {target: named[0].id, name: named[0].name}
      if (named.length > 1)
        throw new UsageError(
          `Several agents are named "${given}" (${named.map((a) => a.id).join(', ')}); give the agent id.`,
          {
            code: 'ambiguous_agent',
          },
        )
      throw new NotFoundError(`No agent has the id or name "${given}".`, {
        code: 'unknown_agent',
        hint: 'See `gwctl agents list`; an agent exists once a key was issued for it.',
      })
    }
    case 'key': {
      const stem = (p: string) => p.replace(/…$|\.\.\.$/, '')
      const wanted = stem(given)
      const keys = state.keys.filter((k) => k.revokedAt === undefined && stem(k.prefix).startsWith(wanted))
      const prefixes = [...new Set(keys.map((k) => k.prefix))]
      if (prefixes.length === 1) return {target: prefixes[0]}
      if (prefixes.length > 1)
        throw new UsageError(
          `The prefix "${given}" matches several keys (${prefixes.join(', ')}); give more of it.`,
          {
            code: 'ambiguous_key',
          },
        )
      throw new NotFoundError(`No active key starts with "${given}".`, {
        code: 'unknown_key',
        hint: 'Key prefixes are shown by `gwctl agents list` and `gwctl logs`.',
      })
    }
    case 'policy':
      if (state.policies.some((p) => p.id === given)) return {target: given}
      throw new NotFoundError(`No policy "${given}".`, {
        code: 'unknown_policy',
        hint: 'See `gwctl policies list`.',
      })
    case 'project':
      if (!PROJECT_RULE.test(given))
        throw new UsageError(`A project name is 1-200 characters without control characters.`, {
          code: 'invalid_budget_scope',
        })
      return {target: given}
  }
}

function newId(taken: ReadonlySet<string>): string {
  for (;;) {
    const id = `bgt_${Math.floor(Math.random() * 2 ** 32)
      .toString(16)
      .padStart(8, '0')}`
    if (!taken.has(id)) return id
  }
}

/**
 * Sets a budget: a new one, or the one of the same scope, period and unit changed. Exit 2 for an
 * amount or action that breaks its rule, 7 for an agent, key, policy or provider that does not
 * exist.
 */
export async function setBudget(
  options: SetBudgetOptions,
): Promise<{budget: BudgetRecord; created: boolean; applied: Applied}> {
  const limit = parseBudgetAmount(options.amount, options.tokens)
  if (typeof limit === 'string')
    throw new UsageError(`Budget amount: ${limit}.`, {code: 'invalid_budget_amount'})
  const onExceed = parseOnExceed(options.onExceed ?? 'block')
  if (typeof onExceed === 'string')
    throw new UsageError(`--on-exceed: ${onExceed}.`, {code: 'invalid_on_exceed'})
  const {withState} = await import('../store/state.js')
  const result = await withState((store) => {
    const state = store.data
    const {target} = resolveTarget(state, options)
    if (onExceed.action === 'fallback') {
      const providers = knownProviders(state)
      if (!providers.some((p) => p.name === onExceed.provider))
        throw new NotFoundError(`--on-exceed: no provider "${onExceed.provider}".`, {
          code: 'unknown_provider',
          hint: `Known providers: ${providers.map((p) => p.name).join(', ')} (\`gwctl providers list\`).`,
        })
    }
    const unit = options.tokens ? 'tokens' : 'usd'
    const budgets = (state.budgets ??= [])
    const now = Math.floor(Date.now() / 1000)
    const existing = budgets.find(
      (b) =>
        b.scope === options.scope && b.target === target && b.period === options.period && b.unit === unit,
    )
    if (existing) {
      existing.limit = limit
      existing.onExceed = onExceed
      existing.updatedAt = now
      return {budget: existing, created: false}
    }
    const budget: BudgetRecord = {
      id: newId(new Set(budgets.map((b) => b.id))),
      scope: options.scope,
      target,
      period: options.period,
      unit,
      limit,
      onExceed,
      createdAt: now,
      updatedAt: now,
    }
    budgets.push(budget)
    return {budget, created: true}
  }, homeFile('state'))
  return {...result, applied: await tellGateway(options.signal)}
}

/**
 * Removes the budget `id`, or those of a scope (and period, when given). Exit 7 when none
 * matches.
 */
export async function removeBudgets(
  selection: {id?: string} | (BudgetSelector & {period?: BudgetPeriod}),
  signal?: AbortSignal,
): Promise<{removed: BudgetRecord[]; applied: Applied}> {
  const {withState} = await import('../store/state.js')
  const removed = await withState((store) => {
    const budgets = store.data.budgets ?? []
    let match: (b: BudgetRecord) => boolean
    if ('scope' in selection) {
      // an agent or key that no longer exists may still have a budget: match what is stored too
      let target = selection.target.trim()
      try {
        target = resolveTarget(store.data, selection).target
      } catch (error) {
        if (!(error instanceof NotFoundError)) throw error
      }
      match = (b) =>
        b.scope === selection.scope &&
        b.target === target &&
        (selection.period === undefined || b.period === selection.period)
    } else match = (b) => b.id === selection.id
    const gone = budgets.filter(match)
    if (gone.length === 0)
      throw new NotFoundError('No budget matches.', {
        code: 'unknown_budget',
        hint: 'See `gwctl budgets list`.',
      })
    store.data.budgets = budgets.filter((b) => !match(b))
    return gone
  }, homeFile('state'))
  return {removed, applied: await tellGateway(signal)}
}

/** Asks a running gateway to reload the budgets from the state file. */
async function tellGateway(signal?: AbortSignal): Promise<Applied> {
  const port = await liveGatewayPort(signal)
  if (port === undefined) return {gateway: 'not running'}
  try {
    await (await daemonClient(port)).request('POST', '/api/budgets/reload', {signal})
    return {gateway: 'applied'}
  } catch (error) {
    return {gateway: 'failed', problem: (error as Error).message}
  }
}

/** Every budget with what it has spent: the gateway's live counters, else from the log database. */
export async function listBudgets(signal?: AbortSignal): Promise<BudgetView[]> {
  const port = await liveGatewayPort(signal)
  if (port !== undefined) {
    try {
      return (await gatewayGet<{budgets?: BudgetView[]}>(port, '/api/budgets', {}, signal)).budgets ?? []
    } catch (error) {
      // a gateway from before budgets (404): the files say the same
      if (!(error instanceof NotFoundError)) throw error
    }
  }
  const {StateStore} = await import('../store/state.js')
  return budgetsFromDatabase((await StateStore.open(homeFile('state'))).data)
}

/**
 * The budgets of `state` with what each spent in its period, from the log database with the
 * pricer of `gwctl usage` (the figures a stopped gateway would start from).
 */
export async function budgetsFromDatabase(state: GatewayState, nowMs = Date.now()): Promise<BudgetView[]> {
  const budgets = state.budgets ?? []
  if (budgets.length === 0) return []
  const names = new Map(state.agents.map((a) => [a.id, a.name]))
  const name = (b: BudgetRecord) => (b.scope === 'agent' ? (names.get(b.target) ?? null) : undefined)
  const [{createPricer, providerPrices}, {budgetSpendGroups}, {openSqlite}] = await Promise.all([
    import('./usage-cost.js'),
    import('../store/budget-query.js'),
    import('../store/sqlite.js'),
  ])
  const pricer = await createPricer(providerPrices())
  const path = homeFile('logDb')
  // rows a gateway stopped while logs.db was locked left in logs.pending count too (log-pending.ts)
  if (fileHasBytes(pendingFileOf(path))) await (await import('./log-pending.js')).applyPendingLogs()
  const db = existsSync(path) ? openSqlite(path, {readonly: true, fileMustExist: true}) : undefined
  try {
    return budgets.map((b) => {
      const counter = new BudgetCounter(pricer)
      const hasLogs =
        db !== undefined &&
        db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'logs'").get()
      if (hasLogs)
        for (const g of budgetSpendGroups(db!, b.scope, b.target, periodBounds(b.period, nowMs).start))
          counter.add(g.provider, g.model, g)
      return budgetView(b, counter, {nowMs, name: name(b), source: 'database'})
    })
  } finally {
    db?.close()
  }
}
