import {BaseCommand} from '../../core/base-command.js'
import {drainFlag, simFlag, startPortFlag} from '../../ui/gateway-flags.js'
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
    const {runDaemon} = await import('../../daemon/lifecycle.js')
    // The first SIGTERM/SIGINT starts a graceful stop; repeats (some libraries re-raise the
    // signal) must not cut the drain short: the stop has its own bound.
    this.releaseSignals()
    const stop = new AbortController()
    const onSignal = (): void => stop.abort()
    process.on('SIGTERM', onSignal)
    process.on('SIGINT', onSignal)
    try {
      await runDaemon({
        port: resolvePort(flags.port),
        version: this.config.version,
        signal: stop.signal,
        drainMs: flags.drain * 1000,
        sim: flags.sim,
      })
    } finally {
      process.off('SIGTERM', onSignal)
      process.off('SIGINT', onSignal)
    }
  }
}
