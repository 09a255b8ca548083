import {Args} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import type {GammaPollResult} from '../../services/gamma-tasks.js'
import {assertCanWrite, gammaApi} from '../../services/gamma-tasks.js'
import {outputFlags, waitAndPrint, waitFlags} from '../../cli/gamma.js'

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
    return waitAndPrint(gammaApi(), args.id, flags, {
      signal: this.signal,
      verbose: this.verbose,
      json: this.jsonEnabled(),
    })
  }
}
