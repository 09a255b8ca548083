import {Args} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {out} from '../../core/output.js'
import type {CancelResult} from '../../services/gamma-tasks.js'
import {cancelGammaTask, gammaApi} from '../../services/gamma-tasks.js'
import {notePlatformId} from '../../cli/gamma.js'

export default class GammaCancel extends BaseCommand {
  static summary = 'Cancels a queued gamma task, or deletes a succeeded or failed one.'
  static description =
    'One DELETE on the task; the platform decides by state: queued -> cancelled (no charge); succeeded or failed -> ' +
    'record deleted; running or already cancelled -> refused (exit 5) with an explanation.'

  static examples = [
    '<%= config.bin %> gamma cancel cgt-20260101-abc',
    '<%= config.bin %> gamma cancel cgt-20260101-abc --json',
  ]

  static args = {id: Args.string({description: 'Task id.', required: true})}

  async run(): Promise<CancelResult> {
    const {args} = await this.parse(GammaCancel)
    const result = await cancelGammaTask(gammaApi(), args.id, this.signal)
    if (!this.jsonEnabled()) {
      if (result.action === 'cancelled')
        out(`Cancelled task ${result.task_id} (it had not started; no charge).`)
      else if (result.action === 'deleted') out(`Deleted task ${result.task_id}.`)
      else out(`Task ${result.task_id}: ${result.action} (status ${result.status ?? 'unknown'}).`)
      notePlatformId(this.verbose, 'delete', result.platform_id)
    }
    return result
  }
}
