import {Flags} from '@oclif/core'

import {BaseCommand} from '../core/base-command.js'
import {ExitCode} from '../core/errors.js'
import {colorErr, err, formatDuration, out, printFields, printJson, printTable} from '../core/output.js'
import type {GatewayLiveness} from '../services/gateway.js'
import type {StatusSnapshot} from '../services/status.js'
import type {TelemetryStatus} from '../gateway/telemetry.js'
import {homeFile} from '../store/paths.js'

/** `metrics at …; OTLP export …` for the fields. */
function telemetryLine(t: TelemetryStatus, url: string): string {
  const metrics = `metrics at ${url}${t.metrics}`
  const o = t.otlp
  if (o.state === 'off') return `${metrics}; OTLP export off`
  const counts = `${o.exported} spans sent, ${o.queued} queued, ${o.dropped} dropped`
  return o.state === 'failing'
    ? `${metrics}; OTLP export to ${o.endpoint} FAILING (${o.lastError}; ${counts})`
    : `${metrics}; OTLP export to ${o.endpoint} (${counts})`
}

export default class Status extends BaseCommand {
  static summary = 'Prints a one-time snapshot: gateway state, agents, agents per route, latest request.'
  static description =
    'Exits 0 when the gateway runs and answers, 6 when it is stopped or unhealthy. --quiet only checks that (for scripts): it prints nothing, or with --json only {healthy, gateway} (and problem, fix).'
  static examples = [
    '<%= config.bin %> status',
    '<%= config.bin %> status --quiet && echo gateway up',
    '<%= config.bin %> status --json',
  ]

  static flags = {
    quiet: Flags.boolean({
      char: 'q',
      description:
        'Only check that the gateway runs and answers: print nothing, the exit code tells (--json: {healthy, gateway}).',
    }),
  }

  async run(): Promise<StatusSnapshot | GatewayLiveness> {
    const {flags} = await this.parse(Status)
    if (flags.quiet) {
      // Scripts call this in loops: only whether the gateway runs and answers, nothing else loaded
      // (no state file, no agent discovery). --json prints that answer as its one document.
      const {gatewayLiveness} = await import('../services/gateway.js')
      const live = await gatewayLiveness({signal: this.signal})
      if (!live.healthy) {
        if (this.jsonEnabled()) printJson(live)
        this.exit(ExitCode.gatewayDown)
      }
      return live
    }
    const {getStatus} = await import('../services/status.js')
    const snapshot = await getStatus({signal: this.signal})
    // --json always prints its one document: --quiet silences the human output only.
    if (this.jsonEnabled()) {
      if (!snapshot.healthy) {
        printJson(snapshot)
        this.exit(ExitCode.gatewayDown)
      }
      return snapshot
    }
    const g = snapshot.gateway
    printFields({
      gateway: snapshot.degraded ? `${g.state} (degraded)` : g.state,
      degraded: snapshot.degraded,
      url: g.url,
      pid: g.pid ?? undefined,
      uptime: g.uptimeSeconds === null ? undefined : formatDuration(g.uptimeSeconds * 1000),
      version: g.version ?? undefined,
      agents: `${snapshot.agents.discovered} (${snapshot.agents.enabled} routed)`,
      'coding agents': `${snapshot.localAgents.discovered} found, ${snapshot.localAgents.bound} bound${snapshot.localAgents.stale.length > 0 ? ` (${snapshot.localAgents.stale.length} stale)` : ''}`,
      'latest request': snapshot.latestRequestAt
        ? new Date(snapshot.latestRequestAt * 1000).toISOString()
        : 'none',
      telemetry: snapshot.telemetry ? telemetryLine(snapshot.telemetry, g.url) : undefined,
    })
    if (snapshot.agentsPerRoute.length > 0) {
      out()
      printTable(snapshot.agentsPerRoute, [
        {header: 'ROUTE', value: (r) => r.route},
        {header: 'AGENTS', value: (r) => r.agents, align: 'right'},
      ])
    }
    if (snapshot.budgets.length > 0) {
      const {budgetColumns} = await import('../cli/budgets.js')
      out()
      printTable(
        snapshot.budgets,
        budgetColumns.filter((c) => c.header !== 'ID' && c.header !== 'ON EXCEED'),
      )
    }
    if (snapshot.degraded)
      err(
        colorErr().yellow(
          `The gateway is degraded: ${snapshot.degraded}. Model traffic still flows; the daemon log ${homeFile('daemonLog')} says more.`,
        ),
      )
    for (const s of snapshot.localAgents.stale) {
      for (const p of s.problems)
        err(colorErr().yellow(`Stale binding of ${s.tool}: ${p.problem}. Fix: ${p.fix}`))
    }
    if (!snapshot.healthy) {
      err(
        colorErr().dim(
          `${snapshot.problem ?? 'The gateway is not healthy.'} ${snapshot.fix ?? 'Start it with `gwctl gateway start`.'}`,
        ),
      )
      this.exit(ExitCode.gatewayDown)
    }
    return snapshot
  }
}
