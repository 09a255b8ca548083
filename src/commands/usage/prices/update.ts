import {Flags} from '@oclif/core'

import {BaseCommand} from '../../../core/base-command.js'
import {out} from '../../../core/output.js'
import type {PricesStatus} from '../../../services/usage-prices.js'
import {pricesStatus, resetPrices, updatePrices} from '../../../services/usage-prices.js'
import {printStatus} from './index.js'

export default class UsagePricesUpdate extends BaseCommand {
  static summary = 'Downloads the current price table (the only time gwctl fetches prices).'
  static description =
    "Downloads @pydantic/genai-prices' current data file, checks that the library can price from it, and keeps it in " +
    '<GWCTL_HOME>/prices.json, which `gwctl usage` then prefers to the bundled table. Data that cannot be used is ' +
    'refused and the table in use is kept. --reset goes back to the bundled table.'

  static examples = [
    '<%= config.bin %> usage prices update',
    '<%= config.bin %> usage prices update --url https://mirror.example.com/genai-prices/data.json',
    '<%= config.bin %> usage prices update --reset',
  ]

  static flags = {
    url: Flags.string({
      description:
        "Where to download the data file from (default: GWCTL_PRICES_URL, else genai-prices' own).",
      exclusive: ['reset'],
    }),
    reset: Flags.boolean({description: 'Forget the downloaded table and use the bundled one again.'}),
  }

  async run(): Promise<PricesStatus> {
    const {flags} = await this.parse(UsagePricesUpdate)
    if (flags.reset) {
      const removed = resetPrices()
      const status = await pricesStatus()
      if (!this.jsonEnabled()) {
        out(removed ? 'Back to the bundled price table.' : 'The bundled price table was already in use.')
        printStatus(status)
      }
      return status
    }
    const status = await updatePrices({url: flags.url, signal: this.signal})
    if (!this.jsonEnabled()) {
      out('Price table updated.')
      printStatus(status)
    }
    return status
  }
}
