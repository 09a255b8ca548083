/**
 * `gwctl providers`: the upstream providers of the gateway. Changes go to the state file under
 * its lock and take effect when the gateway (re)starts; the list comes from the running gateway
 * (with each provider's circuit state) or, when it is stopped, from the state file.
 */
import {NotFoundError, UsageError} from '../core/errors.js'
import type {BreakerSnapshot} from '../gateway/events.js'
import {describeCredential, redactProvider, schemaProblems} from '../gateway/policy.js'
import type {Family, PlainTools, PolicyConfig, ProviderConfig} from '../store/schema.js'
import {FAMILIES, PLAIN_TOOLS} from '../store/schema.js'
import {homeFile} from '../store/paths.js'
import {StateStore, withState} from '../store/state.js'
import {agentViews} from '../gateway/views.js'
import {gatewayGet, liveGatewayPort} from './gateway-api.js'
import {PROVIDER_PRESETS, providerPreset} from './provider-presets.js'

/** A provider as listed: redacted, with its breaker and where policies use it. */
export interface ProviderView extends ProviderConfig {
  /** The breaker's state while the gateway runs; null when it is stopped (or not tracked yet). */
  circuit: BreakerSnapshot | null
  /** Entrance families whose routes target this provider (in any policy). */
  families: Family[]
  /** Policies that target this provider. */
  policies: string[]
  /**
   * A change in the state file the running gateway has not loaded yet (`gwctl gateway restart`
   * loads it): `added` (not live yet), `removed` (still live), `changed` (live with old values).
   */
  pending?: 'added' | 'removed' | 'changed'
  /** From the running gateway: its own environment lacks the credential's variable. */
  credentialUnset?: true
}

export interface ProviderList {
  providers: ProviderView[]
  /** Where the list came from: the running gateway, or the state file. */
  source: 'gateway' | 'state-file'
  /** The agent whose compatible providers were asked for. */
  agent?: {agentId: string; name: string; policyId: string; family: Family}
}

export interface AddProviderInput {
  name: string
  /** The protocol family; the preset's when not given. */
  family?: string
  /** The base URL; the preset's when not given. */
  baseUrl?: string
  /**
   * A known provider (./provider-presets.ts) whose family, base URL and key variable fill in what
   * is not given; without it, the preset named like the provider when neither family nor base
   * URL is given (`gwctl providers add deepseek`).
   */
  preset?: string
  /** Set by {@link withPreset}: `apiKeyEnv` is the preset's, not given (a replaced provider keeps its own). */
  presetKey?: boolean
  /** Name of the environment variable holding the key. */
  apiKeyEnv?: string
  /** The key itself (from stdin); stored 0600 in the state, never printed. */
  apiKeySecret?: string
  /** `FROM=TO` model mappings. */
  models?: readonly string[]
  inputPrice?: number
  outputPrice?: number
  /** `auto` (the default, not stored), `always` or `never`: a Responses provider's only. */
  plainTools?: string
  /**
   * Replace a provider of that name in place (policies keep routing to it), keeping its
   * credential when none is given and the host is the same; its family changes only while no
   * policy routes to it.
   */
  replace?: boolean
}

/** `FROM=TO` pairs -> a mapping; exit 2 naming the bad pair. */
export function parseModelMappings(pairs: readonly string[] = []): Record<string, string> | undefined {
  if (pairs.length === 0) return undefined
  const models: Array<[string, string]> = []
  for (const pair of pairs) {
    const at = pair.indexOf('=')
    const from = at > 0 ? pair.slice(0, at).trim() : ''
    const to = at > 0 ? pair.slice(at + 1).trim() : ''
    if (!from || !to) {
      throw new UsageError(`The model mapping "${pair}" is not FROM=TO.`, {
        code: 'invalid_model_mapping',
        hint: 'e.g. --model claude-sonnet-4-5=claude-sonnet-4-5-20250929',
      })
    }
    models.push([from, to])
  }
  // fromEntries defines own keys: `__proto__=x` is a mapping like any other, not a prototype
  return Object.fromEntries(models)
}

function hasUserinfo(url: string): boolean {
  try {
    const parsed = new URL(url)
    return parsed.username !== '' || parsed.password !== ''
  } catch {
    return false // the schema names the problem
  }
}

/**
 * A base URL that ends in an endpoint of the four protocols (a URL pasted from a vendor's curl
 * example): the gateway would add the request's path after it, and every request would be a 404.
 */
const ENDPOINT_PATH =
  /(?:\/chat\/completions|\/responses|\/messages|\/models\/[^/]+:(?:stream)?generateContent)$/i

/**
 * `input` with its preset's family, base URL and (for a new provider given no credential) key
 * variable filled in, and the preset used; exit 2 for an unknown preset, or for a provider with
 * neither its family and base URL nor a preset.
 */
export function withPreset(input: AddProviderInput): AddProviderInput & {family: string; baseUrl: string} {
  const named =
    input.preset ?? (input.family === undefined && input.baseUrl === undefined ? input.name : undefined)
  const preset = named === undefined ? undefined : providerPreset(named)
  if (input.preset !== undefined && !preset) {
    throw new UsageError(`No preset named "${input.preset}".`, {
      code: 'unknown_preset',
      hint: `Presets: ${PROVIDER_PRESETS.map((p) => p.name).join(', ')} (gwctl providers presets).`,
    })
  }
  const family = input.family ?? preset?.family
  const baseUrl = input.baseUrl ?? preset?.baseUrl
  if (family === undefined || baseUrl === undefined) {
    const missing = [family === undefined ? '--family' : '', baseUrl === undefined ? '--base-url' : '']
    throw new UsageError(`Missing ${missing.filter(Boolean).join(' and ')} for provider "${input.name}".`, {
      code: 'missing_flags',
      hint: `Give them, or start from a known provider: --preset NAME (${PROVIDER_PRESETS.slice(0, 6)
        .map((p) => p.name)
        .join(', ')}, ...: gwctl providers presets).`,
    })
  }
  // a preset's base URL speaks its family: another family there would be a 404 on every request
  if (preset && input.baseUrl === undefined && family !== preset.family) {
    const instead = PROVIDER_PRESETS.filter(
      (p) => p.family === family && p.keyEnv !== undefined && p.keyEnv === preset.keyEnv,
    ).map((p) => p.name)
    throw new UsageError(
      `Preset "${preset.name}" is a ${preset.family} provider: its base URL takes no ${family} requests.`,
      {
        // (not `invalid_flags`, whose hint the command replaces with its usage line)
        code: 'preset_family',
        hint: instead.length
          ? `For ${family}: --preset ${instead.join(' or --preset ')}`
          : `Give the ${family} endpoint's --base-url too, or leave --family out.`,
      },
    )
  }
  // (the key variable is the vendor's: not sent to a base URL given in its place; a provider
  // replaced keeps its own credential, addProvider)
  const presetKey =
    preset?.keyEnv !== undefined &&
    input.apiKeyEnv === undefined &&
    input.apiKeySecret === undefined &&
    input.baseUrl === undefined
  const keyEnv = presetKey ? preset.keyEnv : input.apiKeyEnv
  return {
    ...input,
    family,
    baseUrl,
    apiKeyEnv: keyEnv,
    preset: preset?.name,
    presetKey: presetKey || input.presetKey === true,
  }
}

/** The provider `add` would store, validated against PROVIDER_SCHEMA (exit 2 on a problem). */
export async function buildProvider(given: AddProviderInput): Promise<ProviderConfig> {
  const input = withPreset(given)
  if (input.apiKeyEnv !== undefined && input.apiKeySecret !== undefined) {
    throw new UsageError('Give either --api-key-env or --api-key-stdin, not both.', {code: 'invalid_flags'})
  }
  if (input.apiKeySecret !== undefined && input.apiKeySecret.trim() === '') {
    throw new UsageError('No API key arrived on stdin.', {
      code: 'missing_api_key',
      hint: 'e.g. printf %s "$KEY" | gwctl providers add NAME ... --api-key-stdin',
    })
  }
  if (hasUserinfo(input.baseUrl)) {
    throw new UsageError('The base URL must not carry credentials (user:password@host).', {
      code: 'invalid_provider',
      hint: 'Listings would show them and the gateway never sends them: pass the key with --api-key-env or --api-key-stdin.',
    })
  }
  const endpoint = ENDPOINT_PATH.exec(input.baseUrl.replace(/\/+$/, ''))
  if (endpoint) {
    const base = input.baseUrl.replace(/\/+$/, '').slice(0, endpoint.index)
    throw new UsageError(
      `The base URL names an endpoint (${endpoint[0].replace(/^\//, '')}), not a base: gwctl adds each request's path to it.`,
      {code: 'invalid_provider', hint: `Give its base: --base-url ${base}`},
    )
  }
  const provider: ProviderConfig = {
    name: input.name,
    family: input.family as Family,
    baseUrl: input.baseUrl.replace(/\/+$/, ''),
    origin: 'user',
  }
  if (input.apiKeyEnv !== undefined) provider.credential = {env: input.apiKeyEnv}
  if (input.apiKeySecret !== undefined) provider.credential = {secret: input.apiKeySecret.trim()}
  const models = parseModelMappings(input.models)
  if (models) provider.models = models
  const plainTools = plainToolsOf(input.plainTools, provider.family)
  if (plainTools !== 'auto') provider.plainTools = plainTools
  if (input.inputPrice !== undefined || input.outputPrice !== undefined) {
    provider.prices = {}
    if (input.inputPrice !== undefined) provider.prices.input = input.inputPrice
    if (input.outputPrice !== undefined) provider.prices.output = input.outputPrice
  }
  const problems = await schemaProblems('provider', provider)
  if (problems.length > 0) {
    throw new UsageError(`The provider is not valid: ${problems.join('; ')}`, {
      code: 'invalid_provider',
      hint: 'Names are letters, digits, `.`, `_`, `-`; the base URL is http(s)://host[/path]; env var names are shell names.',
    })
  }
  return provider
}

/** `--plain-tools`: one of PLAIN_TOOLS, and other than `auto` for a Responses provider only (exit 2). */
function plainToolsOf(value: string | undefined, family: Family): PlainTools {
  if (value === undefined) return 'auto'
  if (!(PLAIN_TOOLS as readonly string[]).includes(value)) {
    throw new UsageError(`--plain-tools must be one of ${PLAIN_TOOLS.join(', ')}, not "${value}".`, {
      code: 'invalid_plain_tools',
    })
  }
  // (an unknown family is the schema's to name)
  if (value !== 'auto' && family !== 'responses' && FAMILIES.includes(family)) {
    throw new UsageError(
      `--plain-tools ${value} applies to a responses provider only, not to a ${family} one.`,
      {
        code: 'invalid_plain_tools',
        hint: "Codex's tool shapes reach only a provider of its own family as they came; to any other they are translated.",
      },
    )
  }
  return value as PlainTools
}

/**
 * Adds a provider to the state file (under its lock), or with `replace` puts it in the place of
 * the one of that name. Returns it redacted, and whether it replaced one.
 */
export async function addProvider(
  given: AddProviderInput,
): Promise<ProviderConfig & {replaced?: boolean; preset?: string}> {
  const input = withPreset(given)
  const provider = await buildProvider(input)
  const replaced = await withState((store) => {
    const index = store.data.providers.findIndex((p) => p.name === provider.name)
    if (index < 0) {
      store.data.providers.push(provider)
      return false
    }
    if (!input.replace) {
      throw new UsageError(`A provider named "${provider.name}" already exists.`, {
        code: 'provider_exists',
        hint: `Change it in place: gwctl providers add ${provider.name} ... --replace (policies keep routing to it)`,
      })
    }
    const old = store.data.providers[index]
    const users = old.family === provider.family ? [] : policiesUsing(store.data.policies, provider.name)
    if (users.length > 0) {
      throw new UsageError(
        `Provider "${provider.name}" speaks ${old.family}, and ${users.length === 1 ? 'policy' : 'policies'} ${users.join(', ')} ${users.length === 1 ? 'routes' : 'route'} to it: its family cannot change to ${provider.family}.`,
        {
          code: 'provider_in_use',
          hint: `Add it under another name, or change their routes first, e.g. gwctl policies route ${users[0]} --family ${familiesUsing(store.data.policies, provider.name)[0]} --target OTHER`,
        },
      )
    }
    // (a preset's key variable stands for no credential given: the provider's own is kept)
    if ((!provider.credential || input.presetKey) && old.credential) {
      if (originOf(old.baseUrl) === originOf(provider.baseUrl)) provider.credential = old.credential
      // the key was given for the old host: never sent to another one without being given again
      // (a preset's variable, the vendor's own, goes to the vendor's host in its place)
      else if (!input.presetKey)
        throw new UsageError(
          `Provider "${provider.name}" moves from ${originOf(old.baseUrl)} to ${originOf(provider.baseUrl)}: its credential is not carried to another host.`,
          {
            code: 'credential_not_kept',
            hint: 'Give it again with --api-key-env VAR or --api-key-stdin (or none, for a server that needs no key: remove the provider and add it).',
          },
        )
    }
    store.data.providers[index] = provider
    return true
  }, homeFile('state'))
  // (a copy: what was stored stays as it was)
  const redacted: ProviderConfig & {replaced?: boolean; preset?: string} = {...redactProvider(provider)}
  if (replaced) redacted.replaced = true
  if (input.preset !== undefined) redacted.preset = input.preset
  return redacted
}

/** Removes a provider; refused (exit 2) while a policy still routes to it. */
export async function removeProvider(name: string): Promise<ProviderConfig> {
  return withState((store) => {
    const index = store.data.providers.findIndex((p) => p.name === name)
    if (index < 0) {
      throw new NotFoundError(`No provider named "${name}" in the state file.`, {
        hint: 'See `gwctl providers list`. Default providers (env vars, platform, --sim) cannot be removed.',
      })
    }
    const users = policiesUsing(store.data.policies, name)
    if (users.length > 0) {
      throw new UsageError(
        `${users.length === 1 ? 'Policy' : 'Policies'} ${users.join(', ')} still ${users.length === 1 ? 'routes' : 'route'} to provider "${name}".`,
        {
          code: 'provider_in_use',
          hint: `Change their routes first, e.g. gwctl policies route ${users[0]} --family ${store.data.providers[index].family} --target OTHER`,
        },
      )
    }
    const [removed] = store.data.providers.splice(index, 1)
    return redactProvider(removed)
  }, homeFile('state'))
}

/** A base URL's scheme, host and port (`https://api.example.com:8443`), lower-cased. */
function originOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).origin
  } catch {
    return baseUrl
  }
}

function policiesUsing(policies: readonly PolicyConfig[], name: string): string[] {
  return policies
    .filter((p) => FAMILIES.some((f) => (p.routes[f] ?? []).some((t) => t.provider === name)))
    .map((p) => p.id)
}

function familiesUsing(policies: readonly PolicyConfig[], name: string): Family[] {
  return FAMILIES.filter((f) => policies.some((p) => (p.routes[f] ?? []).some((t) => t.provider === name)))
}

/**
 * Providers from the running gateway (with circuit state), else from the state file. With an
 * agent (id or name): only the providers its policy routes to, family by family, in order.
 */
export async function listProviders(
  options: {agent?: string; signal?: AbortSignal} = {},
): Promise<ProviderList> {
  const port = await liveGatewayPort(options.signal)
  const store = await StateStore.open(homeFile('state'))
  const {policies, providers} = store.data
  let agentView: AgentViewOf | undefined
  try {
    agentView = options.agent === undefined ? undefined : findAgent(store.data, options.agent)
  } catch (error) {
    // the running daemon may know an agent its state file does not show yet: let it answer
    if (!(error instanceof NotFoundError && port !== undefined)) throw error
  }
  if (port !== undefined) {
    const body = await gatewayGet<{providers: ProviderView[]}>(
      port,
      '/api/providers',
      {agent: options.agent},
      options.signal,
    ).catch((error: unknown) => {
      // The daemon's 404 points at its API; say it as the stopped-gateway path does.
      if (error instanceof NotFoundError && options.agent !== undefined) throw unknownAgent(options.agent)
      throw error
    })
    // Defence in depth: whatever the daemon sent, no secret value leaves this function.
    let live: ProviderView[] = body.providers.map((p) => ({...p, ...redactProvider(p)}))
    if (options.agent !== undefined) {
      if (!agentView) return {providers: live, source: 'gateway'}
      // An agent speaks one protocol: only providers of its entrance family can serve it, and
      // those its route translates to.
      const translated = new Set(agentView.route.targets.filter((t) => t.translate).map((t) => t.provider))
      live = live.filter((p) => p.family === agentView.route.family || translated.has(p.name))
      return {providers: live, source: 'gateway', agent: agentSummary(agentView)}
    }
    return {providers: withPending(live, providers, policies), source: 'gateway'}
  }
  let chosen: ProviderConfig[] = providers
  let agent: ProviderList['agent']
  if (agentView) {
    agent = agentSummary(agentView)
    // As the gateway answers: the providers the agent's policy routes to for its family, in order.
    const policy = policies.find((p) => p.id === agentView.policyId)
    const byName = new Map(providers.map((p) => [p.name, p]))
    const family = agentView.route.family
    chosen = []
    for (const target of policy?.routes[family] ?? []) {
      const p = byName.get(target.provider)
      if (p && (p.family === family || target.translate) && !chosen.includes(p)) chosen.push(p)
    }
  }
  return {
    providers: chosen.map((p) => ({
      ...redactProvider(p),
      circuit: null,
      families: familiesUsing(policies, p.name),
      policies: policiesUsing(policies, p.name),
    })),
    source: 'state-file',
    ...(agent ? {agent} : {}),
  }
}

type AgentViewOf = ReturnType<typeof agentViews>[number]

function findAgent(state: Parameters<typeof agentViews>[0], agent: string): AgentViewOf {
  const views = agentViews(state)
  const byId = views.find((v) => v.agentId === agent)
  if (byId) return byId
  const named = views.filter((v) => v.name === agent)
  if (named.length > 1) {
    throw new UsageError(
      `Several agents are named "${agent}" (${named.map((v) => v.agentId).join(', ')}); give the agent id.`,
      {code: 'ambiguous_agent'},
    )
  }
  if (!named[0]) throw unknownAgent(agent)
  return named[0]
}

function agentSummary(view: AgentViewOf): NonNullable<ProviderList['agent']> {
  return {agentId: view.agentId, name: view.name, policyId: view.policyId, family: view.route.family}
}

/**
 * The live list with what the state file changed since the gateway started: added providers are
 * shown (not live yet), removed or changed ones marked, as `policies list` shows the file.
 */
function withPending(
  live: ProviderView[],
  stored: readonly ProviderConfig[],
  policies: readonly PolicyConfig[],
): ProviderView[] {
  const storedByName = new Map(stored.map((p) => [p.name, p]))
  const liveNames = new Set(live.map((p) => p.name))
  const marked = live.map((p): ProviderView => {
    const now = storedByName.get(p.name)
    if ((p.origin ?? 'user') !== 'user') return p
    if (!now) return {...p, pending: 'removed'}
    const same =
      now.family === p.family &&
      now.baseUrl === p.baseUrl &&
      (now.plainTools ?? 'auto') === (p.plainTools ?? 'auto') &&
      JSON.stringify(now.models ?? {}) === JSON.stringify(p.models ?? {})
    return same ? p : {...p, pending: 'changed'}
  })
  const added = stored
    .filter((p) => !liveNames.has(p.name))
    .map((p): ProviderView => ({
      ...redactProvider(p),
      circuit: null,
      families: familiesUsing(policies, p.name),
      policies: policiesUsing(policies, p.name),
      pending: 'added',
    }))
  return [...marked, ...added]
}

/** The circuit column: `closed`, `open (retry in 12s)`, or why it is unknown. */
export function circuitLabel(view: ProviderView, source: ProviderList['source']): string {
  if (view.pending === 'added') return 'pending restart (added)'
  if (source === 'state-file') return 'unknown (gateway stopped)'
  if (view.pending === 'removed') return 'pending restart (removed)'
  const c = view.circuit
  if (!c) return 'closed'
  if (c.state === 'open' && c.retryInMs !== null) return `open (retry in ${Math.ceil(c.retryInMs / 1000)}s)`
  if (c.consecutiveFailures > 0 && c.state === 'closed') return `closed (${c.consecutiveFailures} failed)`
  return c.state
}

/**
 * The credential column: `env VAR`, `secret (stored)` or `none`; never a value. The defaults that
 * the gateway makes up say where their key comes from (none of them is stored in the state file).
 */
export function credentialLabel(view: ProviderConfig & {origin?: string}): string {
  if (view.credential && 'secret' in view.credential) {
    if (view.origin === 'platform') return 'setting api-key'
    if (view.origin === 'sim') return 'simulator'
  }
  return describeCredential(view.credential)
}

function unknownAgent(agent: string): NotFoundError {
  return new NotFoundError(`No agent has the id or name "${agent}".`, {
    hint: 'See `gwctl agents list` for the ids and names.',
  })
}
