import {Args} from '@oclif/core'

import type {AppliesOn} from '../../cli/applies-on.js'
import {printAppliesOn} from '../../cli/applies-on.js'
import {BaseCommand} from '../../core/base-command.js'
import {out} from '../../core/output.js'
import type {ProviderConfig} from '../../store/schema.js'
import {removeProvider} from '../../services/providers.js'

export default class ProvidersRemove extends BaseCommand {
  static summary = 'Removes an upstream provider from the gateway.'
  static description =
    'Removes a provider added with `providers add` from the state file (under its lock); a running gateway applies it on `gwctl gateway restart`, a stopped one when it starts. ' +
    'Refused (exit 2) while a policy still routes to it; exit 7 when there is no such provider.'

  static examples = ['<%= config.bin %> providers remove corp-chat']

  static args = {
    name: Args.string({description: 'Provider name.', required: true, ignoreStdin: true}),
  }

  async run(): Promise<{provider: ProviderConfig; appliesOn: AppliesOn}> {
    const {args} = await this.parse(ProvidersRemove)
    const provider = await removeProvider(args.name)
    if (!this.jsonEnabled()) {
      out(`Removed provider ${provider.name}.`)
    }
    const appliesOn = await printAppliesOn(this.jsonEnabled())
    return {provider, appliesOn}
  }
}
