import {Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {out, printTable} from '../../core/output.js'
import type {SettingView} from '../../services/settings-view.js'
import {viewSettings} from '../../services/settings-view.js'
import {settingsPath} from '../../store/settings.js'

export default class ConfigList extends BaseCommand {
  static summary = 'Lists every setting with its effective value and where it comes from.'
  static examples = ['<%= config.bin %> config list', '<%= config.bin %> config list --json']

  static flags = {reveal: Flags.boolean({description: 'Show secret values in full.'})}

  async run(): Promise<{path: string; settings: SettingView[]}> {
    const {flags} = await this.parse(ConfigList)
    const settings = viewSettings(flags.reveal)
    const path = settingsPath()
    if (!this.jsonEnabled()) {
      printTable(settings, [
        {header: 'KEY', value: (s) => s.key},
        {header: 'VALUE', value: (s) => s.value ?? '-'},
        {header: 'SOURCE', value: (s) => (s.source === 'env' ? `env ${s.env}` : s.source)},
      ])
      out()
      out(`settings file: ${path}`)
    }
    return {path, settings}
  }
}
