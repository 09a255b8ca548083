import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {colorErr, err, out, renderTable} from '../../core/output.js'
import {filtersFromFlags, isFiltered, resolveAgentFilter} from '../../services/log-filters.js'
import type {UsageResult} from '../../services/logs.js'
import {
  STATUS_VALUES,
  USAGE_PIVOTS,
  agentNames,
  getUsage,
  usageColumns,
  usageKeyLabel,
} from '../../services/logs.js'
import type {Pivot} from '../../store/log-store.js'

export default class Usage extends BaseCommand {
  static summary = 'Shows token usage through the gateway, pivoted.'
  static description =
    'Requests, errors, fallbacks and tokens (input, output, cache read/write, reasoning) per agent, key, provider, model or project, ' +
    'largest first, with totals. Reads the running gateway (GET /api/usage), or the log database directly when it is stopped. ' +
    '--since takes a duration back from now (30m, 1h, 7d) or Unix seconds; without it, all logged requests count.'

  static examples = [
    '<%= config.bin %> usage',
    '<%= config.bin %> usage --pivot model --since 7d',
    '<%= config.bin %> usage --pivot project --agent agt_0123456789abcdef --json',
  ]

  static flags = {
    pivot: Flags.string({description: 'Group by.', options: [...USAGE_PIVOTS]}),
    since: Flags.string({description: 'Only requests since: 30m, 1h, 7d, or Unix seconds.'}),
    agent: Flags.string({description: 'Only this agent (id or name).'}),
    policy: Flags.string({description: 'Only this policy id.'}),
    status: Flags.string({description: 'Only this status class.', options: [...STATUS_VALUES]}),
  }

  async run(): Promise<UsageResult> {
    const {flags} = await this.parse(Usage)
    const filters = await resolveAgentFilter(filtersFromFlags(flags), this.signal)
    const usage = await getUsage({...filters, pivot: flags.pivot as Pivot | undefined, signal: this.signal})
    // agent and key pivots show the agent's name (JSON: `name` beside the key)
    const names = usage.pivot === 'agent' || usage.pivot === 'key' ? await agentNames(this.signal) : undefined
    const label = (k: string | null, verbose = this.verbose) =>
      names ? usageKeyLabel(usage.pivot, k, names, verbose) : k
    const nameOf = (k: string | null) =>
      k === null ? null : ((usage.pivot === 'agent' ? names?.byId : names?.byKeyPrefix)?.get(k) ?? null)
    const result = names ? {...usage, rows: usage.rows.map((r) => ({...r, name: nameOf(r.key)}))} : usage
    if (!this.jsonEnabled()) {
      if (result.rows.length === 0)
        out(isFiltered(filters) ? 'No requests match these filters.' : 'No usage logged yet.')
      else {
        const columns = usageColumns(result.pivot, (k) => label(k))
        const rows = result.pivot ? [...result.rows, {key: 'TOTAL', ...result.totals}] : result.rows
        out(renderTable(rows, columns))
      }
      if (result.source === 'database')
        err(colorErr().dim('The gateway is stopped: read from the log database.'))
    }
    return result
  }
}
