import {BaseCommand} from '../../core/base-command.js'
import {printTable} from '../../core/output.js'
import type {ProviderPreset} from '../../services/provider-presets.js'
import {PROVIDER_PRESETS} from '../../services/provider-presets.js'

export default class ProvidersPresets extends BaseCommand {
  static summary = 'Lists the known providers `providers add --preset` fills in.'
  static description =
    "Each preset's protocol family, base URL (as the vendor documents it for its SDK) and the environment variable its key is read from " +
    '(none for a server on this machine). `gwctl providers add NAME --preset P` (or `gwctl providers add P`) adds one; flags given win.'

  static examples = [
    '<%= config.bin %> providers presets',
    '<%= config.bin %> providers add deepseek',
    '<%= config.bin %> providers add glm --preset zai-coding --api-key-env GLM_KEY',
  ]

  async run(): Promise<{presets: readonly ProviderPreset[]}> {
    await this.parse(ProvidersPresets)
    if (!this.jsonEnabled()) {
      printTable(
        PROVIDER_PRESETS,
        [
          {header: 'PRESET', value: (p) => p.name},
          {header: 'FAMILY', value: (p) => p.family},
          {header: 'BASE URL', value: (p) => p.baseUrl},
          {header: 'KEY', value: (p) => p.keyEnv ?? '-'},
          {header: 'WHAT', value: (p) => p.about},
        ],
        'No presets.',
      )
    }
    return {presets: PROVIDER_PRESETS}
  }
}
