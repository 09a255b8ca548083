import {BaseCommand} from '../../core/base-command.js'
import {out, printTable} from '../../core/output.js'
import type {VideoModel} from '../../api/video-catalog.js'
import {
  ALPHA_SIZES,
  BETA_ASPECTS,
  BETA_SIZES,
  VIDEO_MODELS,
  describeDuration,
} from '../../api/video-catalog.js'

const AUDIO: Record<VideoModel['audio'], string> = {
  'audio-url': 'via --audio-url',
  supported: 'yes',
  'not-supported': 'no',
  'listed-as-supported': 'listed (warns)',
  'not-stated': 'not stated (refused)',
}

export default class VideoModels extends BaseCommand {
  static summary = 'Lists the Alpha and Beta video models with their modes, durations, audio and sizes.'
  static description =
    'Prints the model table of the /videos API as gwctl validates it: mode, duration range and default, audio support, ' +
    'resolutions, and the size tables of both families.'

  static examples = ['<%= config.bin %> video models', '<%= config.bin %> video models --json']

  async run(): Promise<{
    models: readonly VideoModel[]
    alpha_sizes: typeof ALPHA_SIZES
    beta_sizes: typeof BETA_SIZES
  }> {
    await this.parse(VideoModels)
    if (!this.jsonEnabled()) {
      printTable(VIDEO_MODELS, [
        {header: 'MODEL', value: (m) => m.name},
        {header: 'FAMILY', value: (m) => m.family},
        {header: 'MODE', value: (m) => m.mode},
        {header: `DURATION`, value: (m) => `${m.duration.field}: ${describeDuration(m.duration)}`},
        {header: 'AUDIO', value: (m) => AUDIO[m.audio]},
        {
          header: 'RESOLUTION',
          value: (m) =>
            m.resolutions ? m.resolutions.join('/') + (m.resolutionRequired ? ' (required)' : '') : '-',
        },
      ])
      out()
      out('Alpha sizes (--size, x or *):')
      for (const [tier, sizes] of Object.entries(ALPHA_SIZES)) out(`  ${tier.padEnd(6)} ${sizes.join('  ')}`)
      out()
      out('Beta sizes by resolution (--resolution with --size):')
      out(`  ${''.padEnd(6)} ${BETA_ASPECTS.map((a) => a.padEnd(10)).join(' ')}`.trimEnd())
      for (const [tier, row] of Object.entries(BETA_SIZES)) {
        out(`  ${tier.padEnd(6)} ${BETA_ASPECTS.map((a) => row[a].padEnd(10)).join(' ')}`.trimEnd())
      }
    }
    return {models: VIDEO_MODELS, alpha_sizes: ALPHA_SIZES, beta_sizes: BETA_SIZES}
  }
}
