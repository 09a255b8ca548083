import {Args} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {StatusLine} from '../../core/output.js'
import type {GammaPollResult} from '../../services/gamma-tasks.js'
import {assertCanWrite, gammaApi, pollGammaTask} from '../../services/gamma-tasks.js'
import {
  downloadProgress,
  outputFlags,
  printPolled,
  waitFlags,
  waitOptions,
  waitProgress,
} from '../../cli/gamma.js'

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

  async run(): Promise<GammaPollResult> {
    const {args, flags} = await this.parse(GammaPoll)
    assertCanWrite(flags.output, flags.force)
    const line = new StatusLine()
    const result = await pollGammaTask(gammaApi(), args.id, {
      ...waitOptions(flags),
      output: flags.output,
      signal: this.signal,
      onProgress: waitProgress(line, args.id, this.verbose),
      onDownloadProgress: downloadProgress(line, flags.output),
    }).finally(() => line.done())
    if (!this.jsonEnabled()) printPolled(result, this.verbose)
    return result
  }
}
