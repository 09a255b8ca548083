import {Args} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {out} from '../../core/output.js'
import {budgetPeriod, budgetPeriodFlags, budgetScope, budgetScopeFlags} from '../../cli/budgets.js'
import type {BudgetRecord} from '../../gateway/budgets.js'
import {UsageError} from '../../core/errors.js'
import type {Applied} from '../../services/budgets.js'
import {printApplied} from './set.js'

export default class BudgetsRemove extends BaseCommand {
  static summary = 'Removes budgets: one by id, or those of a scope (and period).'
  static description =
    'Give a budget id (`gwctl budgets list`), or a scope flag with an optional period flag. Exit 7 when no budget matches.'

  static examples = [
    '<%= config.bin %> budgets remove bgt_1a2b3c4d',
    '<%= config.bin %> budgets remove --agent codex --daily',
    '<%= config.bin %> budgets remove --project web',
  ]

  static args = {
    id: Args.string({description: 'Budget id.', required: false, ignoreStdin: true}),
  }

  static flags = {...budgetScopeFlags, ...budgetPeriodFlags}

  async run(): Promise<{removed: BudgetRecord[]; applied: Applied}> {
    const {args, flags} = await this.parse(BudgetsRemove)
    const scoped = flags.agent ?? flags.key ?? flags.policy ?? flags.project
    if ((args.id === undefined) === (scoped === undefined))
      throw new UsageError(
        'Give either a budget id or a scope flag (--agent, --key, --policy or --project), not both and not neither.',
        {
          code: 'invalid_budget_scope',
        },
      )
    const {removeBudgets} = await import('../../services/budgets.js')
    const result = await removeBudgets(
      args.id !== undefined ? {id: args.id} : {...budgetScope(flags), period: budgetPeriod(flags, false)},
      this.signal,
    )
    if (!this.jsonEnabled()) {
      out(`Removed ${result.removed.map((b) => b.id).join(', ')}.`)
      printApplied(result.applied)
    }
    return result
  }
}
