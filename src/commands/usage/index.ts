import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {colorErr, err, out, renderTable} from '../../core/output.js'
import {AGENT_TOOLS} from '../../agent-tools/agent-homes.js'
import type {AgentTool} from '../../store/history-rows.js'
import {liveGatewayPort} from '../../services/gateway-api.js'
import {filtersFromFlags, isFiltered, resolveAgentFilter} from '../../services/log-filters.js'
import type {UsageResult} from '../../services/logs.js'
import {STATUS_VALUES, USAGE_PIVOTS, agentNames, getUsage, usageKeyLabel} from '../../services/logs.js'
import {usageColumns} from '../../cli/log-columns.js'
import type {UsageReport} from '../../services/usage.js'
import {
  USAGE_PIVOTS_ALL,
  checkTimezone,
  gatewayUsageReport,
  historyHasRows,
  usageReport,
} from '../../services/usage.js'
import {formatCost, reportColumns} from '../../cli/usage-columns.js'
import type {Pivot} from '../../store/log-query.js'
import type {UsagePivotAll, UsageSource} from '../../store/usage-query.js'
import {USAGE_SOURCES} from '../../store/usage-query.js'

export default class Usage extends BaseCommand {
  static summary =
    'Shows token usage and cost, through the gateway and from the agents’ own history, pivoted.'
  static description =
    'Requests, errors, fallbacks, tokens (input, output, cache read/write, reasoning, total) and estimated cost per agent, key, ' +
    'provider, model, project, day, tool or session, largest first, with totals. --source gateway counts what passed through the ' +
    'gateway, history what Claude Code, Codex CLI and Gemini CLI recorded in their session logs, all (default) both, each request ' +
    'once (a history line whose request id the gateway logged is the same request). Without a running daemon the history is ' +
    'scanned incrementally first. --since takes a duration back from now (30m, 1h, 7d) or Unix seconds. With no flag at all ' +
    'it prints the daily table of the last 7 days (`usage daily`, as ccusage does); `--json` alone keeps the totals object. ' +
    'See also `usage daily`, `usage monthly`, `usage session` and `usage blocks` (5-hour windows).'

  static examples = [
    '<%= config.bin %> usage',
    '<%= config.bin %> usage --pivot day --timezone Europe/Paris --since 7d',
    '<%= config.bin %> usage --source history --tool codex --pivot session --json',
    '<%= config.bin %> usage --pivot project --agent agt_0123456789abcdef --json',
  ]

  static flags = {
    pivot: Flags.string({
      description: 'Group by (day is UTC unless --timezone).',
      options: [...USAGE_PIVOTS_ALL],
    }),
    source: Flags.string({
      description: 'Which records to count.',
      options: [...USAGE_SOURCES],
      default: 'all',
    }),
    tool: Flags.string({description: 'Only this agent tool.', options: [...AGENT_TOOLS]}),
    timezone: Flags.string({description: 'IANA time zone of the day pivot (default UTC).'}),
    since: Flags.string({description: 'Only requests since: 30m, 1h, 7d, or Unix seconds.'}),
    agent: Flags.string({description: 'Only this agent (id or name).'}),
    policy: Flags.string({description: 'Only this policy id.'}),
    status: Flags.string({description: 'Only this status class.', options: [...STATUS_VALUES]}),
  }

  async run(): Promise<UsageResult | UsageReport> {
    const {flags} = await this.parse(Usage)
    // no flag at all: the daily table of the last days, as ccusage prints by default
    if (!this.jsonEnabled() && this.argv.every((a) => a === '--verbose')) {
      const {printPeriodReport, reportBounds} = await import('../../cli/usage-columns.js')
      const report = await usageReport({
        source: 'all',
        pivot: 'day',
        ...(await reportBounds({source: 'all'}, '7d')),
        signal: this.signal,
      })
      printPeriodReport(report, {header: 'DAY', json: false, empty: 'No usage in the last 7 days.'}, out)
      return report
    }
    checkTimezone(flags.timezone)
    const filters = await resolveAgentFilter(filtersFromFlags(flags), this.signal)
    const source = flags.source as UsageSource
    const pivot = flags.pivot as UsagePivotAll | undefined
    // agent and key pivots show the agent's name (JSON: `name` beside the key; the id with --verbose)
    const names = pivot === 'agent' || pivot === 'key' ? await agentNames(this.signal) : undefined
    const label = (k: string | null) => (names ? usageKeyLabel(pivot as Pivot, k, names, this.verbose) : k)
    const withName = <R extends {key: string | null}>(r: R): R | (R & {name: string | null}) =>
      names
        ? {
            ...r,
            name:
              r.key === null
                ? null
                : ((pivot === 'agent' ? names.byId : names.byKeyPrefix).get(r.key) ?? null),
          }
        : r
    const gatewayShaped =
      (pivot === undefined || (USAGE_PIVOTS as readonly string[]).includes(pivot)) &&
      !flags.tool &&
      !flags.timezone
    // The gateway's own answer (its API while it runs) when nothing else is asked for or recorded.
    // `all` asks first whether any agent history is recorded (scanning it when no daemon does)
    const live = gatewayShaped && source === 'all' ? await liveGatewayPort(this.signal) : undefined
    // and the report below reuses that scan: one scan per call (a no-change scan stats every file)
    let scanned: UsageReport['scan'] | null = live === undefined ? undefined : null
    const historyFirst =
      gatewayShaped && source === 'all'
        ? await historyHasRows({
            scanFirst: live === undefined,
            signal: this.signal,
            onScan: (s) => (scanned = s),
          })
        : undefined
    if (gatewayShaped && (source === 'gateway' || historyFirst === false)) {
      const port = source === 'all' ? live : await liveGatewayPort(this.signal)
      // the gateway stopped: its rows and their cost from one read of the log database
      const both =
        port === undefined
          ? await gatewayUsageReport({...filters, pivot: pivot as Pivot | undefined})
          : undefined
      const result =
        both?.usage ??
        (await getUsage({
          ...filters,
          pivot: pivot as Pivot | undefined,
          signal: this.signal,
          gatewayPort: port ?? null,
        }))
      // the gateway's `inputTokens` counts every prompt token, cache reads and writes included
      // (its one meaning for every protocol): the total is input + output, cache not added again
      const withTotal = <T extends {inputTokens: number; outputTokens: number}>(r: T) => ({
        ...r,
        totalTokens: r.inputTokens + r.outputTokens,
      })
      const cost = both
        ? both.report
        : await usageReport({...filters, source: 'gateway', pivot, signal: this.signal}).catch(
            () => undefined,
          )
      const costRow = (key: string | null) => cost?.rows.find((c) => c.key === key)
      // the 1-hour part of the cache writes and the cost come from the usage report of the same rows
      const augmented = {
        ...result,
        rows: result.rows.map((r) => ({
          ...withTotal(r),
          ...(cost ? {cache1hTokens: costRow(r.key)?.cache1hTokens ?? 0} : {}),
          costUSD: costRow(r.key)?.costUSD ?? null,
        })),
        totals: {
          ...withTotal(result.totals),
          ...(cost ? {cache1hTokens: cost.totals.cache1hTokens} : {}),
          costUSD: cost?.totals.costUSD ?? null,
        },
      }
      if (!this.jsonEnabled()) {
        if (result.rows.length === 0)
          out(isFiltered(filters) ? 'No requests match these filters.' : 'No usage logged yet.')
        else {
          // the same cost as the other sources' table (usage-cost): `unpriced`, never $0
          const priced = (key: string | null) => {
            const c = key === 'TOTAL' ? cost?.totals : cost?.rows.find((x) => x.key === key)
            return c ? formatCost(c) : '-'
          }
          const columns = [
            ...usageColumns(result.pivot, label),
            {header: 'COST', value: (r: {key: string | null}) => priced(r.key), align: 'right' as const},
          ]
          const rows = result.pivot ? [...result.rows, {key: 'TOTAL', ...result.totals}] : result.rows
          out(renderTable(rows, columns))
        }
        if (result.source === 'database')
          err(colorErr().dim('The gateway is stopped: read from the log database.'))
      }
      return {...augmented, rows: augmented.rows.map((r) => withName(r))}
    }
    const report = await usageReport({
      ...filters,
      source,
      pivot,
      tool: flags.tool as AgentTool | undefined,
      timezone: flags.timezone,
      signal: this.signal,
      ...(historyFirst === undefined ? {} : {scanned}),
    })
    if (!this.jsonEnabled()) {
      if (report.rows.length === 0) out('No usage matches these filters.')
      else {
        const rows = report.pivot ? [...report.rows, {key: 'TOTAL', ...report.totals}] : report.rows
        out(renderTable(rows, reportColumns(report.pivot, label)))
      }
    }
    return {...report, rows: report.rows.map((r) => withName(r))}
  }
}
