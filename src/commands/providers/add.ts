import {Args, Flags} from '@oclif/core'

import type {AppliesOn} from '../../cli/applies-on.js'
import {printAppliesOn} from '../../cli/applies-on.js'
import {BaseCommand} from '../../core/base-command.js'
import {UsageError} from '../../core/errors.js'
import {out, warn} from '../../core/output.js'
import type {ProviderConfig} from '../../store/schema.js'
import {FAMILIES, PLAIN_TOOLS} from '../../store/schema.js'
import {providerPreset} from '../../services/provider-presets.js'
import {addProvider, credentialLabel} from '../../services/providers.js'
import {readAllStdin} from '../../cli/stdin.js'

export default class ProvidersAdd extends BaseCommand {
  static summary = 'Adds an upstream provider to the gateway.'
  static description =
    'Validates the provider and writes it to the state file under its lock; a running gateway loads it on `gwctl gateway restart`, a stopped one when it starts. ' +
    'A known provider needs no family or base URL: --preset (or a NAME that is a preset, given neither) fills in its family, ' +
    'base URL and key variable (`gwctl providers presets` lists them; flags given win). ' +
    'The credential is the name of an environment variable (--api-key-env, read at each request) or a key piped on stdin ' +
    '(--api-key-stdin), stored in the 0600 state file and never printed. ' +
    "--plain-tools (a responses provider's) says when Codex's namespaces, custom tools and Lite item go to it as plain functions: " +
    'auto (the default): to a server on this machine or the local network from the first request, and to another once it refused them; ' +
    'always: from the first request, whatever the host (a server that drops or mangles them without an error); ' +
    'never: as they came, whatever the host, nothing learned (a local relay in front of OpenAI).'

  static examples = [
    '<%= config.bin %> providers add deepseek',
    '<%= config.bin %> providers add glm --preset zai-coding',
    '<%= config.bin %> providers add anthropic-eu --family messages --base-url https://api.anthropic.com --api-key-env ANTHROPIC_EU_KEY',
    '$ printf %s "$KEY" | <%= config.bin %> providers add corp-chat --family chat --base-url https://llm.example.com/v1 --api-key-stdin',
    '<%= config.bin %> providers add litellm --family responses --base-url http://localhost:4000 --api-key-env LITELLM_KEY --plain-tools never',
    '<%= config.bin %> providers add litellm --family responses --base-url http://localhost:4000 --plain-tools auto --replace',
    '<%= config.bin %> providers add openai-mini --family chat --base-url https://api.openai.com --api-key-env OPENAI_API_KEY --model gpt-5=gpt-5-mini --input-price 0.25 --output-price 2',
  ]

  static args = {
    name: Args.string({
      description: 'Provider name (letters, digits, `.`, `_`, `-`).',
      required: true,
      ignoreStdin: true,
    }),
  }

  static flags = {
    preset: Flags.string({
      description:
        'A known provider whose family, base URL and key variable fill in what is not given (gwctl providers presets).',
    }),
    family: Flags.string({
      description: "Protocol the provider speaks (the preset's when not given).",
      options: [...FAMILIES],
    }),
    'base-url': Flags.string({
      description:
        'Upstream base URL as the vendor gives it for its SDK, e.g. https://api.anthropic.com or https://api.z.ai/api/paas/v4 (a base ending in its own version gets /chat/completions, not /v1/chat/completions).',
    }),
    'api-key-env': Flags.string({
      description: 'Environment variable holding the key (read at each request).',
      exclusive: ['api-key-stdin'],
    }),
    'api-key-stdin': Flags.boolean({
      description: 'Read the key from stdin and store it (0600, never printed).',
      exclusive: ['api-key-env'],
    }),
    model: Flags.string({description: 'Model mapping FROM=TO (repeatable).', multiple: true}),
    'input-price': Flags.string({description: 'Price per 1M input tokens.'}),
    'output-price': Flags.string({description: 'Price per 1M output tokens.'}),
    replace: Flags.boolean({
      description:
        'Replace the provider of that name in place: policies keep routing to it, its credential is kept unless a new one is given (never carried to another host).',
    }),
    'plain-tools': Flags.string({
      description: "When Codex's tool shapes go to a responses provider as plain functions (default auto).",
      options: [...PLAIN_TOOLS],
    }),
  }

  async run(): Promise<{provider: ProviderConfig; appliesOn: AppliesOn}> {
    const {args, flags} = await this.parse(ProvidersAdd)
    const secret = flags['api-key-stdin'] ? await readAllStdin('--api-key-stdin', this.signal) : undefined
    const provider = await addProvider({
      name: args.name,
      preset: flags.preset,
      family: flags.family,
      baseUrl: flags['base-url'],
      apiKeyEnv: flags['api-key-env'],
      apiKeySecret: secret,
      models: flags.model,
      inputPrice: price(flags['input-price'], '--input-price'),
      outputPrice: price(flags['output-price'], '--output-price'),
      plainTools: flags['plain-tools'],
      replace: flags.replace,
    })
    // (a preset's key variable counts as given)
    const envName = provider.credential && 'env' in provider.credential ? provider.credential.env : undefined
    // (a preset of a server on this machine, which needs none, says so in its own line)
    if (!provider.credential && !(provider.preset && !providerPreset(provider.preset)?.keyEnv)) {
      warn(
        `${provider.name} has no credential: requests go upstream without a key. Add one with --api-key-env VAR or --api-key-stdin if the upstream needs it.`,
      )
    } else if (envName && !process.env[envName]) {
      warn(
        `${envName} is not set in this shell; the gateway reads it from its own environment at each request.`,
      )
    }
    if (!this.jsonEnabled()) {
      out(
        `${provider.replaced ? 'Replaced' : 'Added'} provider ${provider.name} (${provider.family}, ${provider.baseUrl}, credential: ${credentialLabel(provider)}${provider.plainTools ? `, plain tools: ${provider.plainTools}` : ''})${provider.preset ? ` from preset ${provider.preset}` : ''}.`,
      )
    }
    const appliesOn = await printAppliesOn(this.jsonEnabled())
    return {provider, appliesOn}
  }
}

function price(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) {
    throw new UsageError(`${flag} must be a number of 0 or more, not "${value}".`, {code: 'invalid_price'})
  }
  return n
}
