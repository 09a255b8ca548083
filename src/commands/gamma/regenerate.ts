import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {UsageError} from '../../core/errors.js'
import {buildRegenerationRequest} from '../../services/gamma-content.js'
import type {GammaResult} from '../../services/gamma-tasks.js'
import {
  assertCanWrite,
  checkRegenerationSource,
  createGammaTask,
  gammaApi,
} from '../../services/gamma-tasks.js'
import {
  contentFlags,
  finishCreate,
  notePlatformId,
  outputFlags,
  readContent,
  waitFlags,
} from '../../cli/gamma.js'

export default class GammaRegenerate extends BaseCommand {
  static summary = 'Creates a regeneration task that upscales a 768P video to 2K.'
  static description =
    'Two forms: --from TASK_ID (a succeeded generation task created within the last 7 days; it is queried first and ' +
    'nothing is sent when it does not qualify), or --base-video URL plus the original content exactly as it was fed ' +
    'to the model (the final prompt, all references identical). The base video needs an audio track, 24 fps, sides ' +
    'divisible by 32, at most 768x1344 and 4-15 s. Resolution is always 2K.'

  static examples = [
    '<%= config.bin %> gamma regenerate --from cgt-20260101-abc --wait -o fox-2k.mp4',
    '<%= config.bin %> gamma regenerate --base-video https://example.com/fox-768p.mp4 --text "a red fox in snow" --first-frame https://example.com/a.png',
  ]

  static flags = {
    from: Flags.string({
      description: 'Task id of the succeeded 768P generation task.',
      exclusive: ['base-video'],
    }),
    'base-video': Flags.string({description: 'URL of the original 768P video (form by original video).'}),
    ...contentFlags,
    resolution: Flags.string({char: 'r', description: 'Output resolution: only 2K.', default: '2K'}),
    watermark: Flags.boolean({description: 'Add the AIGC watermark (aigc_watermark).'}),
    'callback-url': Flags.string({description: 'URL that receives a POST on each status change.'}),
    ...waitFlags,
    ...outputFlags,
  }

  async run(): Promise<GammaResult> {
    const {flags} = await this.parse(GammaRegenerate)
    const byTask = flags.from !== undefined
    const hasContent =
      flags.content !== undefined ||
      ['text', 'first-frame', 'last-frame', 'image', 'ref-image', 'ref-video', 'ref-audio'].some(
        (k) => flags[k as keyof typeof flags] !== undefined,
      )
    if (!byTask && flags['base-video'] === undefined && flags.content === undefined) {
      throw new UsageError(
        'Rule "regeneration-form": give --from TASK_ID, or --base-video URL with the original content.',
        {
          code: 'content_rule',
          details: {rule: 'regeneration-form'},
          hint: 'See `gwctl gamma regenerate --help`.',
        },
      )
    }
    const request = buildRegenerationRequest({
      sourceTaskId: flags.from,
      content: byTask && !hasContent ? undefined : await readContent(flags, {baseVideo: flags['base-video']}),
      resolution: flags.resolution,
      watermark: flags.watermark,
      callbackUrl: flags['callback-url'],
    })
    assertCanWrite(flags.output, flags.force)
    const api = gammaApi()
    if (request.source_task_id !== undefined) {
      const source = await checkRegenerationSource(api, request.source_task_id, this.signal)
      if (!this.jsonEnabled()) notePlatformId(this.verbose, 'source query', source.platform_id)
    }
    const created = await createGammaTask(api, 'video_regeneration', request, this.signal)
    return finishCreate(api, created, flags, {
      signal: this.signal,
      verbose: this.verbose,
      json: this.jsonEnabled(),
    })
  }
}
