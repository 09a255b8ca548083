import {Args, Flags} from '@oclif/core'

import {BaseCommand} from '../../core/base-command.js'
import {colorErr, err, out} from '../../core/output.js'
import type {ProviderModels} from '../../services/provider-models.js'

export default class ProvidersModels extends BaseCommand {
  static summary = 'Lists the models a provider serves, as its own API lists them.'
  static description =
    "Asks the provider's list endpoint (GET /models on a chat or responses provider, Anthropic's /v1/models, Google's /v1beta/models) with the key the gateway uses for it " +
    '(its variable read from this shell, or the stored secret; never printed), and keeps the list for 3 days in provider-models.json (0600), where `policies route` and `policies set` read it ' +
    'to say "did you mean" for a model close to one of them. The simulator\'s providers list their fixed models. ' +
    'Exits 3 when the key variable is not set, 4 when the provider refuses the key, 5 when it cannot be reached or has no list, 7 for an unknown provider.'

  static examples = [
    '<%= config.bin %> providers models deepseek',
    '<%= config.bin %> providers models ollama --refresh',
    '<%= config.bin %> providers models corp --quiet | grep glm',
  ]

  static args = {
    name: Args.string({
      description: 'Provider name (gwctl providers list).',
      required: true,
      ignoreStdin: true,
    }),
  }

  static flags = {
    refresh: Flags.boolean({
      description: 'Ask the provider now, even when a list of the last 3 days is kept.',
    }),
    quiet: Flags.boolean({char: 'q', description: 'Only the model names, one a line (for scripts).'}),
  }

  async run(): Promise<ProviderModels> {
    const {args, flags} = await this.parse(ProvidersModels)
    const {providerModels} = await import('../../services/provider-models.js')
    const list = await providerModels(args.name, {refresh: flags.refresh, signal: this.signal})
    if (this.jsonEnabled()) return list
    if (flags.quiet) {
      for (const model of list.models) out(model)
      return list
    }
    const when =
      list.source === 'simulator'
        ? "the simulator's list"
        : list.source === 'cache'
          ? `as listed ${list.fetchedAt} (--refresh asks again)`
          : 'listed now'
    err(
      colorErr().dim(
        `${list.provider} (${list.family}, ${list.source === 'simulator' ? 'the simulator' : list.baseUrl}): ${list.models.length} model${list.models.length === 1 ? '' : 's'}, ${when}`,
      ),
    )
    for (const model of list.models) out(model)
    if (list.models.length === 0)
      err('The provider lists no models: name the one it documents in --target PROVIDER:MODEL.')
    return list
  }
}
