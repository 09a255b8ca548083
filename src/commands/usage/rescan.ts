import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {err, out, renderTable} from '../../core/output.js'
import {AGENT_TOOLS} from '../../agent-tools/agent-homes.js'
import type {AgentTool} from '../../store/history-rows.js'
import type {ScanStats} from '../../agent-tools/history/scan.js'
import {rescanHistory} from '../../services/usage-rescan.js'

export default class UsageRescan extends BaseCommand {
  static summary = 'Rescans the local history of Claude Code, Codex CLI and Gemini CLI.'
  static description =
    'Reads every session log of the agent tools again, whole, into the log database (a rescan never counts a line twice). ' +
    '--incremental reads only what changed (the daemon and `gwctl usage` do that on their own). ' +
    'Prints files, lines and rows read, skipped lines by reason, unreadable files, and the time taken.'

  static examples = ['<%= config.bin %> usage rescan', '<%= config.bin %> usage rescan --tool codex --json']

  static flags = {
    tool: Flags.string({description: 'Only this agent tool.', options: [...AGENT_TOOLS], multiple: true}),
    incremental: Flags.boolean({description: 'Only read what changed since the last scan.'}),
  }

  async run(): Promise<ScanStats> {
    const {flags} = await this.parse(UsageRescan)
    const stats = await rescanHistory({
      full: !flags.incremental,
      tools: flags.tool as AgentTool[] | undefined,
      signal: this.signal,
    })
    if (!this.jsonEnabled()) {
      // Only for the table.
      const {formatCount} = await import('../../cli/log-columns.js')
      const skipped = Object.entries(stats.skipped)
        .map(([k, n]) => `${k} ${formatCount(n)}`)
        .join(', ')
      out(
        renderTable(
          [
            ['Files', `${formatCount(stats.files)} (${formatCount(stats.filesRead)} read)`],
            ['Lines', formatCount(stats.lines)],
            ['Rows', formatCount(stats.rows)],
            ['Skipped', skipped || '-'],
            ['Time', `${stats.durationMs} ms`],
          ],
          [
            {header: 'SCAN', value: (r) => r[0]},
            {header: '', value: (r) => r[1]},
          ],
        ),
      )
      for (const e of stats.errors) err(`Could not read ${e.path}: ${e.error}`)
    }
    return stats
  }
}
