import {Args} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {formatBytes, out} from '../../core/output.js'
import {assertCanWrite, gammaApi} from '../../services/gamma-tasks.js'
import type {GammaResult} from '../../cli/gamma.js'
import {downloadWithProgress, outputFlags, printTask, waitFlags, waitWithStatus} from '../../cli/gamma.js'

export default class GammaPoll extends BaseCommand {
  static summary = 'Waits for a gamma task to finish, optionally downloading its video.'
  static description =
    'Polls every --interval seconds until the task is succeeded (exit 0), failed or cancelled (exit 8), or --timeout passes (exit 5).'

  static examples = [
    '<%= config.bin %> gamma poll cgt-20260101-abc',
    '<%= config.bin %> gamma poll cgt-20260101-abc --interval 5 --output fox.mp4',
  ]

  static args = {id: Args.string({description: 'Task id.', required: true})}

  static flags = {interval: waitFlags.interval, timeout: waitFlags.timeout, ...outputFlags}

  async run(): Promise<GammaResult> {
    const {args, flags} = await this.parse(GammaPoll)
    assertCanWrite(flags.output, flags.force)
    const api = gammaApi()
    const final = await waitWithStatus(api, args.id, {
      interval: flags.interval,
      timeout: flags.timeout,
      signal: this.signal,
      verbose: this.verbose,
    })
    const result: GammaResult = {task_id: args.id, ...final}
    if (flags.output !== undefined)
      result.file = await downloadWithProgress(api, final.task, flags.output, this.signal)
    if (!this.jsonEnabled()) {
      printTask(final, this.verbose)
      if (result.file) out(`Saved ${result.file.path} (${formatBytes(result.file.bytes)}).`)
    }
    return result
  }
}
