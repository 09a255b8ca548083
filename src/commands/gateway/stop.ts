import {BaseCommand} from '../../core/base-command.js'
import {drainFlag} from '../../cli/gateway-flags.js'
import {out} from '../../core/output.js'
import {stopGateway} from '../../services/gateway.js'

export default class GatewayStop extends BaseCommand {
  static summary = 'Stops the gateway daemon gracefully.'
  static description =
    'Sends SIGTERM: the daemon stops accepting, lets in-flight requests finish for up to --drain seconds, saves its state and exits. A daemon that outlives the bound (plus 5 s) is killed.'

  static examples = ['<%= config.bin %> gateway stop', '<%= config.bin %> gateway stop --drain 30']

  static flags = {
    drain: drainFlag,
  }

  async run(): Promise<{wasRunning: boolean; pid: number | null}> {
    const {flags} = await this.parse(GatewayStop)
    const result = await stopGateway({drainMs: flags.drain * 1000, signal: this.signal})
    if (!this.jsonEnabled())
      out(result.wasRunning ? `Gateway stopped (pid ${result.pid}).` : 'Gateway was not running.')
    return result
  }
}
