import {Args, Flags} from '@oclif/core'

import type {VideoTask} from '../../api/videos.js'
import {BaseCommand} from '../../core/base-command.js'
import {assertTaskNotEnded, getVideoTask} from '../../services/video-tasks.js'
import {printTask} from '../../cli/video-print.js'
import {findVideoTask} from '../../store/video-journal.js'

export default class VideoGet extends BaseCommand {
  static summary = 'Shows the current state of a video task.'
  static description =
    'Queries the task once, sending the provider hint remembered in the local journal. Exits 8 when the task failed ' +
    'and 7 when its id is past the 24 hours the platform keeps it (status UNKNOWN).'

  static examples = [
    '<%= config.bin %> video get task_0123abcd',
    '<%= config.bin %> video get task_0123abcd --json',
  ]

  static args = {id: Args.string({description: 'Task id from `gwctl video create`.', required: true})}
  static flags = {
    provider: Flags.string({description: 'Provider hint sent with the query (default: from the journal).'}),
  }

  async run(): Promise<VideoTask> {
    const {args, flags} = await this.parse(VideoGet)
    const task = await getVideoTask(args.id, {provider: flags.provider, signal: this.signal})
    if (!this.jsonEnabled() && task.status !== 'UNKNOWN') {
      // a Beta task's answer leaves out its model and provider: the journal of its create has them
      const known = findVideoTask(args.id)
      printTask({...task, model: task.model ?? known?.model, provider: task.provider ?? known?.provider})
    }
    assertTaskNotEnded(task, args.id)
    return task
  }
}
