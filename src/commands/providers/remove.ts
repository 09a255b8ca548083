import {Args} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {colorErr, err, out} from '../../core/output.js'
import type {ProviderConfig} from '../../store/schema.js'
import {removeProvider} from '../../services/providers.js'

export default class ProvidersRemove extends BaseCommand {
  static summary = 'Removes an upstream provider from the gateway.'
  static description =
    'Removes a provider added with `providers add` from the state file (under its lock); `gwctl gateway restart` applies it. ' +
    'Refused (exit 2) while a policy still routes to it; exit 7 when there is no such provider.'

  static examples = ['<%= config.bin %> providers remove corp-chat']

  static args = {
    name: Args.string({description: 'Provider name.', required: true, ignoreStdin: true}),
  }

  async run(): Promise<{provider: ProviderConfig; appliesOn: string}> {
    const {args} = await this.parse(ProvidersRemove)
    const provider = await removeProvider(args.name)
    if (!this.jsonEnabled()) {
      out(`Removed provider ${provider.name}.`)
      err(colorErr().dim('Run `gwctl gateway restart` to apply it.'))
    }
    return {provider, appliesOn: 'gwctl gateway restart'}
  }
}
