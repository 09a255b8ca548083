import {Args, Flags} from '@oclif/core'

import type {VideoTask} from '../../api/videos.js'
import {BaseCommand} from '../../core/base-command.js'
import {StatusLine, out, savedLine} from '../../core/output.js'
import {pollVideoTask} from '../../services/video-tasks.js'
import {downloadProgress, printTask, waitProgress} from '../../cli/video-print.js'

export default class VideoPoll extends BaseCommand {
  static summary = 'Waits for a video task to end, optionally downloading the video.'
  static description =
    'Queries the task every --interval seconds (default: setting video.interval, else 15) with a live status line on a ' +
    'terminal, until it completes (exit 0), fails (exit 8), expires (exit 7) or --timeout passes (exit 5). Ctrl-C stops ' +
    'waiting; the task keeps running.'

  static examples = [
    '<%= config.bin %> video poll task_0123abcd',
    '<%= config.bin %> video poll task_0123abcd --interval 5 --timeout 600 --output clip.mp4',
  ]

  static args = {id: Args.string({description: 'Task id from `gwctl video create`.', required: true})}
  static flags = {
    interval: Flags.integer({
      description: 'Seconds between polls (default: setting video.interval, else 15).',
      min: 1,
      env: 'GWCTL_VIDEO_INTERVAL',
    }),
    timeout: Flags.integer({
      description: 'Stop waiting after this many seconds (0 = never; the task keeps running).',
      min: 0,
    }),
    output: Flags.string({char: 'o', description: 'Download the finished video to this file.'}),
    force: Flags.boolean({description: 'Overwrite the --output file if it exists.'}),
    provider: Flags.string({description: 'Provider hint sent with each query (default: from the journal).'}),
  }

  async run(): Promise<VideoTask & {download?: {path: string; bytes: number}}> {
    const {args, flags} = await this.parse(VideoPoll)
    const line = new StatusLine()
    const result = await pollVideoTask(args.id, {
      intervalSeconds: flags.interval,
      timeoutSeconds: flags.timeout,
      output: flags.output,
      force: flags.force,
      provider: flags.provider,
      signal: this.signal,
      onProgress: waitProgress(line),
      onDownloadProgress: downloadProgress(line),
    }).finally(() => line.done())
    const task = {...result.task, ...(result.download ? {download: result.download} : {})}
    if (!this.jsonEnabled()) {
      printTask(result.task)
      if (result.download) out(savedLine(result.download.path, result.download.bytes))
    }
    return task
  }
}
