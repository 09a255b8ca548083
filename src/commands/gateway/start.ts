import {BaseCommand} from '../../core/base-command.js'
import {simFlag, startPortFlag} from '../../cli/gateway-flags.js'
import {out, printFields} from '../../core/output.js'
import type {GatewayInfo} from '../../services/gateway.js'
import {startGateway, gatewayStateFields} from '../../services/gateway.js'

export default class GatewayStart extends BaseCommand {
  static summary = 'Starts the gateway daemon in the background and waits until it answers.'
  static description =
    'Spawns the daemon detached (what `gwctl gateway run` runs, without the CLI around it), with its log in <GWCTL_HOME>/gateway.log and its pid in <GWCTL_HOME>/gateway.pid. Refuses when it already runs or when the port is taken (naming the process that holds it, where that can be found).'

  static examples = [
    '<%= config.bin %> gateway start',
    '<%= config.bin %> gateway start --port 4400',
    '<%= config.bin %> gateway start --sim',
  ]

  static flags = {
    port: startPortFlag,
    sim: simFlag,
  }

  async run(): Promise<GatewayInfo> {
    const {flags} = await this.parse(GatewayStart)
    const state = await startGateway({port: flags.port, sim: flags.sim, signal: this.signal})
    if (!this.jsonEnabled()) {
      out(`Gateway running at ${state.url}`)
      printFields(gatewayStateFields(state))
    }
    return state
  }
}
