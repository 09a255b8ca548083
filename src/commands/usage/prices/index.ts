import {BaseCommand} from '../../../core/base-command.js'
import {out, printFields} from '../../../core/output.js'
import type {PricesStatus} from '../../../services/usage-prices.js'
import {pricesStatus} from '../../../services/usage-prices.js'

export default class UsagePrices extends BaseCommand {
  static summary = 'Shows the price table `gwctl usage` estimates cost from.'
  static description =
    'The table shipped with gwctl (@pydantic/genai-prices, offline) unless `gwctl usage prices update` downloaded a newer one. ' +
    "A provider's own --input-price/--output-price always wins for the requests it answered."

  static examples = ['<%= config.bin %> usage prices', '<%= config.bin %> usage prices --json']

  async run(): Promise<PricesStatus> {
    await this.parse(UsagePrices)
    const status = await pricesStatus()
    if (!this.jsonEnabled()) printStatus(status)
    return status
  }
}

/** The human form of a price table status (shared with `usage prices update`). */
export function printStatus(status: PricesStatus): void {
  printFields({
    Table:
      status.table === 'bundled'
        ? `bundled with gwctl (@pydantic/genai-prices ${status.bundledVersion})`
        : `downloaded ${status.fetchedAt} from ${status.source}`,
    Providers: status.providers,
    Models: status.models,
    ...(status.file ? {File: status.file} : {}),
  })
  if (status.problem) out(`Note: ${status.problem}.`)
}
