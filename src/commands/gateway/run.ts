import {BaseCommand} from '../../core/base-command.js'
import {drainFlag, simFlag, startPortFlag} from '../../cli/gateway-flags.js'
import {resolvePort} from '../../services/gateway.js'

export default class GatewayRun extends BaseCommand {
  static summary = 'Runs the gateway in the foreground (for systemd, launchd and containers).'
  static description =
    'Serves on 127.0.0.1 until SIGTERM or Ctrl-C, then drains in-flight requests and exits. Logs one line per request (method, path, status, time, agent id; never keys or headers) to stdout.'

  static examples = [
    '<%= config.bin %> gateway run',
    '<%= config.bin %> gateway run --port 4400',
    '<%= config.bin %> gateway run --sim',
  ]

  static enableJsonFlag = false

  static flags = {
    port: startPortFlag,
    sim: simFlag,
    drain: drainFlag,
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(GatewayRun)
    const {runDaemonUntilSignalled} = await import('../../daemon/lifecycle.js')
    this.releaseSignals() // the daemon stops on SIGTERM/SIGINT itself, draining first
    await runDaemonUntilSignalled({
      port: resolvePort(flags.port),
      version: this.config.version,
      drainMs: flags.drain * 1000,
      sim: flags.sim,
    })
  }
}
