import {Args} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {maskSecret, out} from '../../core/output.js'
import {SETTINGS, assertSettingKey, setSetting} from '../../store/settings.js'

export default class ConfigSet extends BaseCommand {
  static summary = 'Stores a setting.'
  static description = `Known settings: ${Object.keys(SETTINGS).join(', ')}. The settings file is written with mode 0600.`
  static examples = [
    '<%= config.bin %> config set base-url https://example.com/api/v1',
    '<%= config.bin %> config set api-key sk-...',
  ]

  static args = {
    key: Args.string({description: 'Setting name.', required: true}),
    value: Args.string({description: 'New value.', required: true}),
  }

  async run(): Promise<{key: string; value: string}> {
    const {args} = await this.parse(ConfigSet)
    assertSettingKey(args.key)
    setSetting(args.key, args.value)
    const shown =
      SETTINGS[args.key as keyof typeof SETTINGS] && 'secret' in SETTINGS[args.key]
        ? maskSecret(args.value)
        : args.value
    if (!this.jsonEnabled()) out(`${args.key} = ${shown}`)
    return {key: args.key, value: shown}
  }
}
