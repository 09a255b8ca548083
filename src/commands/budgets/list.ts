import {BaseCommand} from '../../core/base-command.js'
import {colorErr, err, printTable} from '../../core/output.js'
import {budgetColumns} from '../../cli/budgets.js'
import type {BudgetView} from '../../gateway/budgets.js'

export default class BudgetsList extends BaseCommand {
  static summary = 'Lists the budgets: scope, period, spent, limit and when each resets.'
  static description =
    'Spent is what `gwctl usage --source gateway` reports for the scope since the period started. While the gateway runs ' +
    'it comes from its live counters (`reserved`: what requests under way hold); when it is stopped, from the log database.'

  static examples = ['<%= config.bin %> budgets list', '<%= config.bin %> budgets list --json']

  async run(): Promise<{budgets: BudgetView[]}> {
    await this.parse(BudgetsList)
    const {listBudgets} = await import('../../services/budgets.js')
    const budgets = await listBudgets(this.signal)
    if (!this.jsonEnabled()) {
      printTable(budgets, budgetColumns, 'No budgets. Set one with `gwctl budgets set`.')
      for (const b of budgets)
        if (b.unpricedModels.length > 0)
          err(
            colorErr().yellow(
              `${b.id}: no price is known for ${b.unpricedModels.join(', ')}; those tokens count for nothing in a USD budget (set provider prices with \`gwctl providers add --input-price/--output-price\`, or use --tokens).`,
            ),
          )
      if (budgets.length > 0 && budgets[0].source === 'database')
        err(colorErr().dim('The gateway is stopped: spent is read from the log database.'))
    }
    return {budgets}
  }
}
