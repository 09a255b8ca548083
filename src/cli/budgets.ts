/** The flags `gwctl budgets set` and `remove` share, and the table of `budgets list` and `status`. */
import {Flags} from '@oclif/core'

import {UsageError} from '../core/errors.js'
import type {Column} from '../core/output.js'
import type {BudgetPeriod, BudgetScope, BudgetView} from '../gateway/budgets.js'
import {BUDGET_PERIODS, BUDGET_SCOPES, formatBudgetAmount} from '../gateway/budgets.js'

export const budgetScopeFlags = {
  agent: Flags.string({description: 'Scope: this agent (name or id).', helpValue: 'NAME'}),
  key: Flags.string({
    description: 'Scope: the key with this prefix (as `agents list` shows it).',
    helpValue: 'PREFIX',
  }),
  policy: Flags.string({description: 'Scope: every agent of this policy.', helpValue: 'ID'}),
  project: Flags.string({
    description:
      'Scope: requests with this x-gw-project header (else the agent name, as the log row has it).',
    helpValue: 'NAME',
  }),
}

export const budgetPeriodFlags = {
  daily: Flags.boolean({description: 'Per UTC day (resets at 00:00 UTC).'}),
  weekly: Flags.boolean({description: 'Per week (resets Monday 00:00 UTC).'}),
  monthly: Flags.boolean({description: 'Per calendar month (resets on the 1st, 00:00 UTC).'}),
}

/** The one scope flag given; exit 2 unless exactly one is. */
export function budgetScope(flags: Partial<Record<BudgetScope, string>>): {
  scope: BudgetScope
  target: string
} {
  const given = BUDGET_SCOPES.filter((s) => flags[s] !== undefined)
  if (given.length !== 1)
    throw new UsageError(
      `A budget has exactly one scope: give one of --agent, --key, --policy or --project${given.length > 1 ? ` (got --${given.join(', --')})` : ''}.`,
      {code: 'invalid_budget_scope'},
    )
  return {scope: given[0], target: flags[given[0]]!}
}

/** The period flag given (undefined when none and `required` is false); exit 2 for several. */
export function budgetPeriod(
  flags: Partial<Record<BudgetPeriod, boolean>>,
  required: boolean,
): BudgetPeriod | undefined {
  const given = BUDGET_PERIODS.filter((p) => flags[p])
  if (given.length > 1 || (required && given.length === 0))
    throw new UsageError(`A budget has exactly one period: give one of --daily, --weekly or --monthly.`, {
      code: 'invalid_budget_period',
    })
  return given[0]
}

/** `agent codex`, `key gw-ab12…`, ... */
export function budgetScopeText(b: BudgetView): string {
  return `${b.scope} ${b.name ?? b.target}`
}

/** `2026-11-27 00:00 UTC (in 5h 12m)` */
export function resetText(b: BudgetView, nowMs = Date.now()): string {
  const left = Math.max(0, b.resetAt - nowMs)
  const h = Math.floor(left / 3_600_000)
  const m = Math.floor((left % 3_600_000) / 60_000)
  const when = new Date(b.resetAt).toISOString().slice(0, 16).replace('T', ' ')
  return `${when} UTC (in ${h >= 48 ? `${Math.floor(h / 24)}d ${h % 24}h` : `${h}h ${m}m`})`
}

export const budgetColumns: Column<BudgetView>[] = [
  {header: 'ID', value: (b) => b.id},
  {header: 'SCOPE', value: (b) => budgetScopeText(b)},
  {header: 'PERIOD', value: (b) => b.period},
  {header: 'SPENT', value: (b) => formatBudgetAmount(b.unit, b.spent), align: 'right'},
  {header: 'LIMIT', value: (b) => formatBudgetAmount(b.unit, b.limit), align: 'right'},
  {header: '%', value: (b) => `${b.percent}%`, align: 'right'},
  {header: 'RESETS', value: (b) => resetText(b)},
  {header: 'ON EXCEED', value: (b) => b.onExceed},
]
