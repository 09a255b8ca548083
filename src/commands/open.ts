import {Flags} from '@oclif/core'

import {BaseCommand} from '../core/base-command.js'
import {UsageError} from '../core/errors.js'

const VIEWS = ['agents', 'routes', 'requests', 'usage', 'windows'] as const

export default class Open extends BaseCommand {
  static summary = 'Opens the terminal app: agents, routes and providers, live requests, usage.'
  static description =
    'A full-screen app on the terminal (what `gwctl` with no arguments opens): Agents (bind, rotate keys, change policy), ' +
    'Routes and providers (circuit state, error rate, latency; reorder targets), Requests (live, filter, details) and Usage ' +
    '(totals, 24 h sparkline, 4-week heatmap) and Windows (5-hour windows, burn rate, weeks). Live from the gateway event stream; it reconnects when the gateway restarts. ' +
    'Keys: Tab or 1-5 switch views, arrows and Enter select, / filters, ? help, q quits. NO_COLOR gives a monochrome app. ' +
    'Needs a terminal (exit 2 otherwise: use `gwctl dashboard` for a text snapshot).'

  static examples = [
    '<%= config.bin %> open',
    '<%= config.bin %> open --view requests',
    'NO_COLOR=1 <%= config.bin %> open',
  ]

  static flags = {
    view: Flags.string({description: 'The view to open on.', options: [...VIEWS], default: 'agents'}),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Open)
    if (!process.stdout.isTTY || !process.stdin.isTTY) {
      throw new UsageError('`gwctl open` needs a terminal.', {
        code: 'not_a_terminal',
        hint: 'For a text snapshot use `gwctl dashboard` (or `gwctl dashboard --json`).',
      })
    }
    this.releaseSigint()
    // Ink draws only the last frame when it thinks it runs in CI (is-in-ci reads `CI` when Ink is
    // imported); a terminal was just checked, so a shell that exports CI=true still gets the app.
    delete process.env.CI
    const {runApp} = await import('../ui/app/run.js')
    const view = (flags.view[0].toUpperCase() + flags.view.slice(1)) as
      'Agents' | 'Routes' | 'Requests' | 'Usage' | 'Windows'
    await runApp({signal: this.signal, view})
  }
}
