import {Flags} from '@oclif/core'

import {BaseCommand} from '../core/base-command.js'
import {isAbortError} from '../core/errors.js'
import {colorErr, err, out, printTable} from '../core/output.js'
import {filtersFromFlags, isFiltered, resolveAgentFilter} from '../services/log-filters.js'
import type {LogsResult} from '../services/logs.js'
import type {NamedLogRow} from '../services/logs.js'
import {LOG_COLUMNS, agentCell, followLines} from '../cli/log-columns.js'
import {STATUS_VALUES, agentNames, followLogs, getLogs, withAgentNames} from '../services/logs.js'

export default class Logs extends BaseCommand {
  static summary = "Shows the gateway's request log."
  static description =
    'One line per request, newest at the top (as the dashboard and the app list them; --follow appends new ones below): time, agent, entrance, provider/model, status, fallback, tokens in/out/cached, latency, ' +
    'time to first byte and error. Reads the running gateway (GET /api/logs), or the log database directly when it is stopped. ' +
    'Agents show by name (--verbose adds the id; --json has agentId and agentName). ' +
    "--follow prints each new request as it finishes, from the gateway's event stream, until Ctrl-C (with --json: one JSON row per line); " +
    'it waits while the gateway is stopped and picks up again when it restarts. ' +
    '--since takes a duration back from now (30m, 1h, 7d) or Unix seconds.'

  static examples = [
    '<%= config.bin %> logs',
    '<%= config.bin %> logs --agent agt_0123456789abcdef --status 5xx --since 1h',
    '<%= config.bin %> logs --status fallback --limit 200 --json',
    '<%= config.bin %> logs --follow',
  ]

  static flags = {
    agent: Flags.string({description: 'Only this agent (id or name).'}),
    policy: Flags.string({description: 'Only this policy id.'}),
    status: Flags.string({description: 'Only this status class.', options: [...STATUS_VALUES]}),
    since: Flags.string({description: 'Only requests since: 30m, 1h, 7d, or Unix seconds.'}),
    limit: Flags.integer({description: 'Most rows (default 50).'}),
    follow: Flags.boolean({char: 'f', description: 'Keep printing new requests until Ctrl-C.'}),
  }

  async run(): Promise<LogsResult | undefined> {
    const {flags} = await this.parse(Logs)
    const filters = await resolveAgentFilter(filtersFromFlags(flags), this.signal)
    // the rows and the names behind them asked at once (with a running gateway, two round trips each)
    const fetching = flags.follow ? undefined : getLogs({...filters, signal: this.signal})
    fetching?.catch(() => undefined) // awaited below; a failure must not go unhandled meanwhile
    let names = await agentNames(this.signal)
    // text shows `name (id)` with --verbose; --json always has both fields
    const forText = (rows: NamedLogRow[]) => rows.map((r) => ({...r, agentName: agentCell(r, this.verbose)}))
    if (!fetching) {
      let header = !this.jsonEnabled()
      try {
        await followLogs(
          {...filters, signal: this.signal},
          async (rows) => {
            if (rows.some((r) => r.agentId && !names.byId.has(r.agentId)))
              names = await agentNames(this.signal)
            const named = withAgentNames(rows, names)
            if (this.jsonEnabled()) for (const r of named) out(JSON.stringify(r))
            else for (const line of followLines(forText(named), header)) out(line)
            header = false
          },
          {onDown: (reason) => err(colorErr().dim(`${reason} Waiting for it to start…`))},
        )
      } catch (error) {
        if (!this.signal.aborted && !isAbortError(error)) throw error
      }
      return undefined
    }
    const fetched = await fetching
    const result = {...fetched, logs: withAgentNames(fetched.logs, names)}
    if (!this.jsonEnabled()) {
      printTable(
        forText(result.logs),
        LOG_COLUMNS,
        isFiltered(filters) ? 'No requests match these filters.' : 'No requests logged yet.',
      )
      if (result.source === 'database')
        err(colorErr().dim('The gateway is stopped: read from the log database.'))
    }
    return result
  }
}
