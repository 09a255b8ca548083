import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {out} from '../../core/output.js'
import {AGENT_TOOLS} from '../../agent-tools/agent-homes.js'
import {
  activeLines,
  blocksTable,
  compactWanted,
  reportBounds,
  reportFlags,
  weeksTable,
} from '../../cli/usage-columns.js'
import type {AgentTool} from '../../store/history-rows.js'
import type {BlocksReport} from '../../services/usage-blocks.js'
import {usageBlocks} from '../../services/usage-blocks.js'
import {checkTimezone} from '../../services/usage.js'
import type {UsageSource} from '../../store/usage-query.js'

export default class UsageBlocks extends BaseCommand {
  static summary =
    'Usage in 5-hour windows, with the active window’s burn rate and projection (ccusage blocks).'
  static description =
    'Cuts the requests into 5-hour windows as ccusage does: a window starts at the first request after a pause, floored to ' +
    'the hour, and lasts 5 hours; a request more than 5 hours after the window start or after the request before it starts ' +
    'the next one, and a pause of more than 5 hours shows as a gap. Each window has its requests, tokens, cost and models; ' +
    'the active one its time left, burn rate (tokens per minute, dollars per hour, from its first to its last request) and ' +
    'the projection to its end. Weekly totals (Monday to Sunday in --timezone) follow. The last 7 days unless --since. ' +
    '--live redraws the view from the gateway’s events (the daemon must run); it is also the Windows tab of `gwctl app`.'

  static examples = [
    '<%= config.bin %> usage blocks',
    '<%= config.bin %> usage blocks --active --json',
    '<%= config.bin %> usage blocks --since 20261101 --breakdown',
    '<%= config.bin %> usage blocks --live',
  ]

  static flags = {
    ...reportFlags,
    tool: Flags.string({description: 'Only this agent tool.', options: [...AGENT_TOOLS]}),
    active: Flags.boolean({description: 'Only the active window.'}),
    live: Flags.boolean({
      description: 'A live view, redrawn as the gateway answers requests (q to quit).',
      exclusive: ['json'],
    }),
  }

  async run(): Promise<BlocksReport | void> {
    const {flags} = await this.parse(UsageBlocks)
    checkTimezone(flags.timezone)
    const options = {
      source: flags.source as UsageSource,
      ...(await reportBounds(flags, flags.since ? undefined : '7d')),
      tool: flags.tool as AgentTool | undefined,
      timezone: flags.timezone,
      breakdown: flags.breakdown,
    }
    if (flags.live) {
      const {runBlocksLive} = await import('../../ui/app/views/blocks.js')
      await runBlocksLive({...options, signal: this.signal})
      return
    }
    const report = await usageBlocks({...options, signal: this.signal})
    const shown = flags.active ? {...report, blocks: report.active ? [report.active] : []} : report
    if (!this.jsonEnabled()) {
      const compact = compactWanted(flags.compact)
      if (shown.blocks.length > 0) out(blocksTable(shown, compact))
      out('')
      out(activeLines(report.active, report.timezone, compact).join('\n'))
      if (!flags.active && report.weeks.length > 0) {
        out('')
        out(weeksTable(report.weeks, compact))
      }
    }
    return shown
  }
}
