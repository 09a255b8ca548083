import {Args} from '@oclif/core'

import type {GammaTaskResponse} from '../../api/gamma.js'
import {BaseCommand} from '../../core/base-command.js'
import {assertGammaTaskNotEnded, gammaApi, getGammaTask} from '../../services/gamma-tasks.js'
import {printTask} from '../../cli/gamma.js'

export default class GammaGet extends BaseCommand {
  static summary = 'Shows one gamma task (any type) as it is now.'
  static description =
    'Queries the task once. Tasks are visible for 7 days after creation; an unknown or older id exits 7. A failed ' +
    'task exits 8 with the reason the platform gave, as `video get` does.'
  static examples = [
    '<%= config.bin %> gamma get cgt-20260101-abc',
    '<%= config.bin %> gamma get cgt-20260101-abc --json',
  ]

  static args = {id: Args.string({description: 'Task id.', required: true})}

  async run(): Promise<GammaTaskResponse> {
    const {args} = await this.parse(GammaGet)
    const response = await getGammaTask(gammaApi(), args.id, this.signal)
    if (!this.jsonEnabled()) printTask(response, this.verbose)
    assertGammaTaskNotEnded(response, args.id, {cancelled: false})
    return response
  }
}
