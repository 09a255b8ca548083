import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {out} from '../../core/output.js'
import {AGENT_TOOLS} from '../../agent-tools/agent-homes.js'
import {printPeriodReport, reportBounds, reportFlags} from '../../cli/usage-columns.js'
import type {AgentTool} from '../../store/history-rows.js'
import type {UsageReport} from '../../services/usage.js'
import {checkTimezone, usageReport} from '../../services/usage.js'
import type {UsageSource} from '../../store/usage-query.js'

export default class UsageMonthly extends BaseCommand {
  static summary = 'Usage per calendar month, like ccusage monthly.'
  static description =
    'Requests, tokens (input, output, cache write, cache read, total) and cost per calendar month of --timezone (UTC by default), ' +
    'oldest first, with the total. Cost: 5-minute cache writes at their ' +
    'price, 1-hour writes at 2x input, long-context tiers per request, and "unpriced" for a model without a price (never $0).'

  static examples = [
    '<%= config.bin %> usage monthly',
    '<%= config.bin %> usage monthly --since 20261101 --until 20261115 --breakdown',
    '<%= config.bin %> usage monthly --source history --timezone Europe/Paris --json',
  ]

  static flags = {
    ...reportFlags,
    tool: Flags.string({description: 'Only this agent tool.', options: [...AGENT_TOOLS]}),
  }

  async run(): Promise<UsageReport> {
    const {flags} = await this.parse(UsageMonthly)
    checkTimezone(flags.timezone)
    const report = await usageReport({
      source: flags.source as UsageSource,
      pivot: 'month',
      ...(await reportBounds(flags)),
      timezone: flags.timezone,
      tool: flags.tool as AgentTool | undefined,
      breakdown: flags.breakdown,
      signal: this.signal,
    })
    printPeriodReport(report, {header: 'MONTH', compact: flags.compact, json: this.jsonEnabled()}, out)
    return report
  }
}
