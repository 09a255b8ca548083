import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {buildGenerationRequest} from '../../services/gamma-content.js'
import type {GammaResult} from '../../services/gamma-tasks.js'
import {assertCanWrite, createGammaTask, gammaApi} from '../../services/gamma-tasks.js'
import {contentFlags, finishCreate, outputFlags, readContent, waitFlags} from '../../cli/gamma.js'

export default class GammaGenerate extends BaseCommand {
  static summary = 'Creates a Gamma-H3 video generation task.'
  static description =
    'Text-to-video, image-to-video (first and/or last frame) or multimodal reference video. ' +
    'The content is checked against the rules of the API before anything is sent: exactly one non-empty text; ' +
    'frames (--first-frame, --last-frame, --image) and references (--ref-*) never together; ' +
    'pure text-to-video needs a concrete --ratio; --duration 4-15; --resolution 768P or 2K.'

  static examples = [
    '<%= config.bin %> gamma generate --text "a red fox in snow" --resolution 768P --duration 5 --ratio 16:9 --wait',
    '<%= config.bin %> gamma generate --text "she turns around" --first-frame https://example.com/a.png --resolution 2K --duration 8 -o fox.mp4',
    '<%= config.bin %> gamma generate --text "dance like this" --ref-video https://example.com/d.mp4 --ref-audio https://example.com/m.mp3 --resolution 768P --duration 10',
    '<%= config.bin %> gamma analyze --text "a fox" --duration 5 --wait | <%= config.bin %> gamma generate --text - --resolution 768P --duration 5 --ratio 16:9',
  ]

  static flags = {
    ...contentFlags,
    resolution: Flags.string({char: 'r', description: 'Output resolution (required): 768P or 2K.'}),
    duration: Flags.string({char: 'd', description: 'Whole seconds, 4-15 (required).'}),
    ratio: Flags.string({description: 'adaptive (default), 21:9, 16:9, 4:3, 1:1, 3:4 or 9:16.'}),
    watermark: Flags.boolean({description: 'Add the AIGC watermark (aigc_watermark).'}),
    'callback-url': Flags.string({description: 'URL that receives a POST on each status change.'}),
    ...waitFlags,
    ...outputFlags,
  }

  async run(): Promise<GammaResult> {
    const {flags} = await this.parse(GammaGenerate)
    const content = await readContent(flags)
    const request = buildGenerationRequest({
      content,
      resolution: flags.resolution,
      duration: flags.duration,
      ratio: flags.ratio,
      watermark: flags.watermark,
      callbackUrl: flags['callback-url'],
    })
    assertCanWrite(flags.output, flags.force)
    const api = gammaApi()
    const created = await createGammaTask(api, 'video_generation', request, this.signal)
    return finishCreate(api, created, flags, {
      signal: this.signal,
      verbose: this.verbose,
      json: this.jsonEnabled(),
    })
  }
}
