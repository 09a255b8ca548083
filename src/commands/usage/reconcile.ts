import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {out, renderTable} from '../../core/output.js'
import {AGENT_TOOLS} from '../../agent-tools/agent-homes.js'
import type {AgentTool} from '../../store/history-rows.js'
import {formatCount} from '../../cli/log-columns.js'
import {parseSince} from '../../services/logs.js'
import type {ReconcileResult} from '../../services/usage.js'
import {reconcileUsage} from '../../services/usage.js'

export default class UsageReconcile extends BaseCommand {
  static summary = 'Compares, request by request, what the gateway saw with what each agent recorded.'
  static description =
    'Per tool and UTC day: requests matched by request id, only in the agent history (traffic that bypassed the gateway), ' +
    'only in the gateway log (history lost or not yet written), and matched requests whose token counts differ, each listed ' +
    'with its request id. Gemini CLI records no request id: its rows are matched by tool, model and time (within 5 minutes; ' +
    'equal tokens first), counted in BY TIME. The history is scanned incrementally first when no daemon does it.'

  static examples = [
    '<%= config.bin %> usage reconcile',
    '<%= config.bin %> usage reconcile --since 1d --tool codex --json',
  ]

  static flags = {
    since: Flags.string({
      description: 'Only requests since: 30m, 1h, 7d (default), or Unix seconds.',
      default: '7d',
    }),
    tool: Flags.string({description: 'Only this agent tool.', options: [...AGENT_TOOLS]}),
  }

  async run(): Promise<ReconcileResult> {
    const {flags} = await this.parse(UsageReconcile)
    const since = parseSince(flags.since)
    const result = await reconcileUsage({
      since,
      tool: flags.tool as AgentTool | undefined,
      signal: this.signal,
    })
    if (!this.jsonEnabled()) {
      if (result.days.length === 0) {
        out('No requests of agent tools in this period.')
        return result
      }
      out(
        renderTable(result.days, [
          {header: 'DAY', value: (d) => d.day},
          {header: 'TOOL', value: (d) => d.tool},
          {header: 'MATCHED', value: (d) => formatCount(d.matched), align: 'right'},
          {header: 'BY TIME', value: (d) => formatCount(d.matchedByTime), align: 'right'},
          {header: 'ONLY HISTORY', value: (d) => formatCount(d.onlyHistory), align: 'right'},
          {header: 'ONLY GATEWAY', value: (d) => formatCount(d.onlyGateway), align: 'right'},
          {header: 'TOKENS DIFFER', value: (d) => formatCount(d.differing), align: 'right'},
          {header: 'GATEWAY TOKENS', value: (d) => formatCount(d.gatewayTokens), align: 'right'},
          {header: 'HISTORY TOKENS', value: (d) => formatCount(d.historyTokens), align: 'right'},
        ]),
      )
      const list = (title: string, items: Array<{requestId: string | null; tool: string; time: number}>) => {
        if (items.length === 0) return
        out('')
        out(`${title} (${items.length}):`)
        for (const r of items.slice(0, 50))
          out(
            `  ${new Date(r.time).toISOString()}  ${r.tool}  ${r.requestId ?? '(no request id in the history)'}`,
          )
        if (items.length > 50) out(`  … ${items.length - 50} more (--json lists all)`)
      }
      list('Only in the history', result.onlyHistory)
      list('Only in the gateway log', result.onlyGateway)
      if (result.differences.length > 0) {
        out('')
        out(`Token differences (${result.differences.length}):`)
        for (const d of result.differences.slice(0, 50))
          out(
            `  ${d.requestId}  ${d.tool}  gateway in/out/cache ${d.gateway.inputTokens}/${d.gateway.outputTokens}/${d.gateway.cacheReadTokens + d.gateway.cacheCreationTokens}` +
              `  history ${d.history.inputTokens}/${d.history.outputTokens}/${d.history.cacheReadTokens + d.history.cacheCreationTokens}`,
          )
      }
    }
    return result
  }
}
