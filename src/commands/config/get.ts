import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {NotFoundError} from '../../core/errors.js'
import {out} from '../../core/output.js'
import type {SettingView} from '../../services/settings-view.js'
import {viewSetting} from '../../services/settings-view.js'
import {assertSettingKey} from '../../store/settings.js'

export default class ConfigGet extends BaseCommand {
  static summary = 'Prints the effective value of a setting (secrets masked unless --reveal).'
  static examples = ['<%= config.bin %> config get base-url', '<%= config.bin %> config get api-key --reveal']

  static args = {key: Args.string({description: 'Setting name.', required: true})}
  static flags = {reveal: Flags.boolean({description: 'Show secret values in full.'})}

  async run(): Promise<SettingView> {
    const {args, flags} = await this.parse(ConfigGet)
    assertSettingKey(args.key)
    const view = viewSetting(args.key, flags.reveal)
    if (view.value === null) {
      throw new NotFoundError(`Setting "${args.key}" is not set.`, {
        code: 'setting_unset',
        hint: `Set it with \`gwctl config set ${args.key} <VALUE>\`.`,
      })
    }
    if (!this.jsonEnabled()) out(view.value)
    return view
  }
}
