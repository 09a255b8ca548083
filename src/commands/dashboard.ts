import {BaseCommand} from '../core/base-command.js'
import {out} from '../core/output.js'
import type {DashboardData} from '../services/dashboard.js'
import {dashboardText} from '../cli/dashboard-text.js'
import {getDashboard} from '../services/dashboard.js'
import {liveGatewayPort} from '../services/gateway-api.js'
import {GatewayDownError} from '../core/errors.js'

export default class Dashboard extends BaseCommand {
  static summary = 'Shows the live gateway dashboard.'
  static description =
    'On a terminal: a live view of the gateway (state, routes with their circuit breakers, recent requests, usage by model), ' +
    'refreshed every second; q or Ctrl-C quits. Not on a terminal: one text snapshot. With --json: GET /api/dashboard ' +
    '(routes, recent_requests, recent_usage, gateway). Exit 6 when the gateway is stopped. `gwctl` with no arguments opens it too.'

  static examples = [
    '<%= config.bin %> dashboard',
    '<%= config.bin %> dashboard --json',
    '<%= config.bin %> dashboard | cat',
  ]

  async run(): Promise<DashboardData | undefined> {
    await this.parse(Dashboard)
    const port = await liveGatewayPort(this.signal)
    if (port === undefined) {
      throw new GatewayDownError('The gateway is not running.', {
        hint: 'Start it with `gwctl gateway start`.',
      })
    }
    const data = await getDashboard({port, signal: this.signal})
    if (this.jsonEnabled()) return data
    if (!process.stdout.isTTY || !process.stdin.isTTY) {
      out(dashboardText(data))
      return undefined
    }
    this.releaseSigint()
    delete process.env.CI // as in `gwctl open`: on a terminal, Ink must draw every frame
    const {runLiveDashboard} = await import('../ui/dashboard/live.js')
    await runLiveDashboard((signal) => getDashboard({port, signal}), {initial: data, signal: this.signal})
    return undefined
  }
}
