import {Args} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {out} from '../../core/output.js'
import {assertSettingKey, unsetSetting} from '../../store/settings.js'

export default class ConfigUnset extends BaseCommand {
  static summary = 'Removes a stored setting.'
  static examples = ['<%= config.bin %> config unset api-key']

  static args = {key: Args.string({description: 'Setting name.', required: true})}

  async run(): Promise<{key: string; removed: boolean}> {
    const {args} = await this.parse(ConfigUnset)
    assertSettingKey(args.key)
    const removed = unsetSetting(args.key)
    if (!this.jsonEnabled()) out(removed ? `${args.key} removed` : `${args.key} was not set`)
    return {key: args.key, removed}
  }
}
