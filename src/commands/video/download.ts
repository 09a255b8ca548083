import {Args, Flags} from '@oclif/core'

import type {VideoTask} from '../../api/videos.js'
import {BaseCommand} from '../../core/base-command.js'
import {StatusLine, out, savedLine} from '../../core/output.js'
import {downloadVideo} from '../../services/video-tasks.js'
import {downloadProgress} from '../../cli/video-print.js'

export default class VideoDownload extends BaseCommand {
  static summary = 'Downloads the video of a completed task.'
  static description =
    'Queries the task for a fresh video_url and saves the video through FILE.part, renamed when complete. Refuses to ' +
    'overwrite an existing file without --force. Video URLs are valid for 24 hours.'

  static examples = [
    '<%= config.bin %> video download task_0123abcd --output clip.mp4',
    '<%= config.bin %> video download task_0123abcd -o clip.mp4 --force',
  ]

  static args = {id: Args.string({description: 'Task id.', required: true})}
  static flags = {
    output: Flags.string({char: 'o', description: 'File to write.', required: true}),
    force: Flags.boolean({description: 'Overwrite the file if it exists.'}),
    provider: Flags.string({description: 'Provider hint sent with the query (default: from the journal).'}),
  }

  async run(): Promise<{id: string; path: string; bytes: number; task: VideoTask}> {
    const {args, flags} = await this.parse(VideoDownload)
    const line = new StatusLine()
    const result = await downloadVideo(args.id, flags.output, {
      force: flags.force,
      provider: flags.provider,
      signal: this.signal,
      onProgress: downloadProgress(line),
    }).finally(() => line.done())
    if (!this.jsonEnabled()) out(savedLine(result.path, result.bytes))
    return {id: args.id, path: result.path, bytes: result.bytes, task: result.task}
  }
}
