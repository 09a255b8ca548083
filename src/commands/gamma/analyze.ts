import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {StatusLine, colorErr, err, out} from '../../core/output.js'
import {buildContextRequest} from '../../services/gamma-content.js'
import type {GammaResult} from '../../services/gamma-tasks.js'
import {createGammaTask, gammaApi, pollGammaTask} from '../../services/gamma-tasks.js'
import {
  contentFlags,
  notePlatformId,
  printCreated,
  readContent,
  usageLine,
  waitFlags,
  waitOptions,
  waitProgress,
} from '../../cli/gamma.js'

export default class GammaAnalyze extends BaseCommand {
  static summary = 'Creates a context-analysis task (h3_context_ir) that returns an enhanced prompt.'
  static description =
    'Takes the same content as generate and creates no video. With --wait it prints the enhanced prompt alone on stdout ' +
    '(so it can be piped into `gamma generate --text -`) and the token usage on stderr.'

  static examples = [
    '<%= config.bin %> gamma analyze --text "a fox in snow" --ref-image https://example.com/fox.png --duration 5 --wait',
    '<%= config.bin %> gamma analyze --text "a fox" --duration 5 --wait | <%= config.bin %> gamma generate --text - --resolution 768P --duration 5 --ratio 16:9',
  ]

  static flags = {
    ...contentFlags,
    duration: Flags.string({char: 'd', description: 'Whole seconds, 4-15 (required).'}),
    ratio: Flags.string({description: 'adaptive (default), 21:9, 16:9, 4:3, 1:1, 3:4 or 9:16.'}),
    'callback-url': Flags.string({description: 'URL that receives a POST on each status change.'}),
    ...waitFlags,
  }

  async run(): Promise<GammaResult> {
    const {flags} = await this.parse(GammaAnalyze)
    const request = buildContextRequest({
      content: await readContent(flags),
      duration: flags.duration,
      ratio: flags.ratio,
      callbackUrl: flags['callback-url'],
    })
    const api = gammaApi()
    const created = await createGammaTask(api, 'h3_context_ir', request, this.signal)
    const human = !this.jsonEnabled()
    if (human) notePlatformId(this.verbose, 'create', created.platform_id)
    if (!flags.wait) {
      if (human) printCreated(created)
      return created
    }
    const line = new StatusLine()
    const final = await pollGammaTask(api, created.task_id, {
      ...waitOptions(flags),
      signal: this.signal,
      onProgress: waitProgress(line, created.task_id, this.verbose),
    }).finally(() => line.done())
    if (human) {
      out(final.task.content?.prompt ?? '')
      const usage = usageLine(final.task)
      if (usage) err(colorErr().dim(`usage: ${usage}`))
      notePlatformId(this.verbose, 'result', final.platform_id)
    }
    return final
  }
}
