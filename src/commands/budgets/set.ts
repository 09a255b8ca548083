import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {colorErr, err, out} from '../../core/output.js'
import {budgetPeriod, budgetPeriodFlags, budgetScope, budgetScopeFlags} from '../../cli/budgets.js'
import type {BudgetRecord} from '../../gateway/budgets.js'
import {formatBudgetAmount, onExceedLabel} from '../../gateway/budgets.js'
import type {Applied} from '../../services/budgets.js'

export default class BudgetsSet extends BaseCommand {
  static summary = 'Sets a budget the gateway enforces: USD or tokens per day, week or month.'
  static description =
    'One scope (--agent, --key, --policy or --project) and one period (--daily, --weekly, --monthly, UTC). AMOUNT is USD ' +
    '(estimated cost, priced as `gwctl usage` prices it) or, with --tokens, tokens (input + output + cache; 500k, 2M). ' +
    'When a request finds the budget spent: --on-exceed block (default) answers 429 with Retry-After; ' +
    'fallback:PROVIDER[:MODEL] sends it to that target instead. Setting the same scope, period and unit again changes it. ' +
    'A running gateway applies it at once. Exit 2 for a bad amount or action, 7 for an unknown agent, key, policy or provider.'

  static examples = [
    '<%= config.bin %> budgets set --agent codex --daily 5 --on-exceed fallback:openai:gpt-4o-mini',
    '<%= config.bin %> budgets set --project web --monthly 200',
    '<%= config.bin %> budgets set --key gw-3f9a --weekly 2M --tokens',
  ]

  static args = {
    amount: Args.string({
      description: 'USD (5, 2.50) or, with --tokens, tokens (500k, 2M).',
      required: true,
      ignoreStdin: true,
    }),
  }

  static flags = {
    ...budgetScopeFlags,
    ...budgetPeriodFlags,
    tokens: Flags.boolean({description: 'AMOUNT is tokens (input + output + cache), not USD.'}),
    'on-exceed': Flags.string({
      description: 'What a request gets once the budget is spent: block (429), or fallback:PROVIDER[:MODEL].',
      default: 'block',
      helpValue: 'block|fallback:PROVIDER[:MODEL]',
    }),
  }

  async run(): Promise<{budget: BudgetRecord; created: boolean; applied: Applied}> {
    const {args, flags} = await this.parse(BudgetsSet)
    const {scope, target} = budgetScope(flags)
    const period = budgetPeriod(flags, true)!
    const {setBudget} = await import('../../services/budgets.js')
    const result = await setBudget({
      scope,
      target,
      period,
      amount: args.amount,
      tokens: flags.tokens,
      onExceed: flags['on-exceed'],
      signal: this.signal,
    })
    if (!this.jsonEnabled()) {
      const b = result.budget
      out(
        `${result.created ? 'Set' : 'Changed'} budget ${b.id}: ${scope} "${target}" ${formatBudgetAmount(b.unit, b.limit)} ${period}, then ${onExceedLabel(b.onExceed)}.`,
      )
      printApplied(result.applied)
    }
    return result
  }
}

/** What the gateway did with the change, on stderr. */
export function printApplied(applied: Applied): void {
  if (applied.gateway === 'applied') err(colorErr().dim('The running gateway applies it now.'))
  else if (applied.gateway === 'not running') err(colorErr().dim('The gateway applies it when it starts.'))
  else
    err(
      colorErr().yellow(
        `The running gateway did not reload the budgets (${applied.problem}); \`gwctl gateway restart\` applies them.`,
      ),
    )
}
