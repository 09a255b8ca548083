import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {drainFlag} from '../../cli/gateway-flags.js'
import {out, printFields} from '../../core/output.js'
import type {GatewayInfo} from '../../services/gateway.js'
import {gatewayStateFields, isGatewayRunning, restartGateway} from '../../services/gateway.js'

export default class GatewayRestart extends BaseCommand {
  static summary = 'Restarts the gateway to load policy and provider changes.'
  static description =
    'Stops the daemon gracefully (if it runs) and starts it again on the same port (or --port). Keys issued through the daemon work at once and need no restart.'

  static examples = ['<%= config.bin %> gateway restart', '<%= config.bin %> gateway restart --no-sim']

  static flags = {
    port: Flags.integer({description: 'Port to start on (default: the running one).', min: 1, max: 65535}),
    sim: Flags.boolean({
      description:
        'Run the offline simulator inside the daemon and route to it (default: as the running daemon did; when stopped, as it last ran).',
      allowNo: true,
    }),
    drain: drainFlag,
  }

  async run(): Promise<GatewayInfo> {
    const {flags} = await this.parse(GatewayRestart)
    const wasRunning = isGatewayRunning()
    const state = await restartGateway({
      port: flags.port,
      sim: flags.sim,
      drainMs: flags.drain * 1000,
      signal: this.signal,
    })
    if (!this.jsonEnabled()) {
      out(
        wasRunning ? `Gateway restarted at ${state.url}` : `Gateway was not running; started at ${state.url}`,
      )
      printFields(gatewayStateFields(state))
    }
    return state
  }
}
