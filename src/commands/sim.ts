import {Flags} from '@oclif/core'

import {BaseCommand} from '../core/base-command.js'
import {UsageError} from '../core/errors.js'
import {colorErr, err, out} from '../core/output.js'

export default class Sim extends BaseCommand {
  static summary = 'Runs the offline simulator of the platform (not the real service).'
  static description =
    'Starts a local HTTP server on 127.0.0.1 that behaves like the remote platform, for trying gwctl and scripts offline. ' +
    'It accepts any non-empty API key unless --api-key is given. Faults can be injected with --fault or the x-sim-fault request header.'

  static examples = [
    '<%= config.bin %> sim --port 4010',
    '$ GWCTL_BASE_URL=http://127.0.0.1:4010/api/v1 GWCTL_API_KEY=sim <%= config.bin %> video create --model Alpha2.6-T2V --prompt "a cat" --wait',
    '<%= config.bin %> sim --task-seconds 5 --fault "status=503,times=2,path=/videos,method=POST"',
  ]

  static enableJsonFlag = false

  static flags = {
    port: Flags.integer({
      description: 'Port to listen on (0 picks a free one).',
      default: 4010,
      min: 0,
      max: 65535,
      env: 'GWCTL_SIM_PORT',
    }),
    'task-seconds': Flags.integer({
      description: 'Seconds a video task takes from creation to its end.',
      default: 20,
      min: 1,
    }),
    'time-scale': Flags.integer({
      description: 'Simulated seconds per real second (e.g. 3600 makes a day pass in 24 s).',
      default: 1,
      min: 1,
    }),
    'api-key': Flags.string({description: 'Accept only this API key (default: any non-empty key).'}),
    fault: Flags.string({
      description:
        'Queue a fault for matching requests (repeatable), e.g. "status=503,times=2,path=/videos".',
      multiple: true,
    }),
  }

  async run(): Promise<void> {
    const {flags} = await this.parse(Sim)
    const {startSim} = await import('../sim/server.js')
    const {parseFault} = await import('../sim/faults.js')
    for (const spec of flags.fault ?? []) {
      try {
        parseFault(spec)
      } catch (error) {
        throw new UsageError(`Bad --fault "${spec}": ${(error as Error).message}.`)
      }
    }
    const sim = await startSim({
      port: flags.port,
      taskSeconds: flags['task-seconds'],
      timeScale: flags['time-scale'],
      apiKey: flags['api-key'],
      faults: flags.fault,
    }).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE')
        throw new UsageError(`Port ${flags.port} is taken.`, {
          code: 'port_in_use',
          hint: 'Pick another with --port, or --port 0 for a free one.',
        })
      throw error
    })
    const c = colorErr()
    err(
      c.yellowBold('gwctl simulator') +
        c.yellow(' — offline stand-in for the platform, not the real service'),
    )
    out(`base-url: ${sim.baseUrl}`)
    err(
      c.dim(
        `Try:  GWCTL_BASE_URL=${sim.baseUrl} GWCTL_API_KEY=${flags['api-key'] ?? 'sim-key'} gwctl video models`,
      ),
    )
    err(c.dim('Ctrl-C stops it.'))
    await new Promise<void>((resolve) => {
      this.signal.addEventListener('abort', () => resolve(), {once: true})
    })
    await sim.close()
  }
}
