/**
 * Policies and providers: JSON Schemas (for the state store), validation, route resolution
 * (entrance family -> ordered targets), default providers, and credentials.
 */
import type {ValidateFunction} from 'ajv'

import type {FieldHelp} from '../core/schema-errors.js'
import {describeSchemaErrors} from '../core/schema-errors.js'
import {closest} from '../core/suggest.js'

import type {Credential, Family, PolicyConfig, PolicyTarget, ProviderConfig} from '../store/schema.js'
import {POLICY_SCHEMA, PROVIDER_SCHEMA} from '../store/schema.js'
import {DEFAULT_BREAKER, DEFAULT_TIMEOUTS, FAMILIES} from '../store/schema.js'

/** A request the router cannot route: `status` is the HTTP status to answer (400, 502 or 503). */
export class RouteError extends Error {
  constructor(
    readonly status: 400 | 429 | 502 | 503,
    message: string,
    /** The error body's `code` (chat and responses shapes), e.g. `no_provider`. */
    readonly code?: string,
  ) {
    super(message)
    this.name = 'RouteError'
  }
}

let validators: {provider: ValidateFunction; policy: ValidateFunction} | undefined

async function compiled(): Promise<NonNullable<typeof validators>> {
  if (!validators) {
    const {Ajv} = await import('ajv')
    const ajv = new Ajv({allErrors: true, strict: true})
    validators = {provider: ajv.compile(PROVIDER_SCHEMA), policy: ajv.compile(POLICY_SCHEMA)}
  }
  return validators
}

const NAME_RULE = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"

/** How schema errors name the fields of providers and policies (see core/schema-errors.ts). */
const FIELD_HELP: Record<string, FieldHelp> = {
  name: {label: 'NAME', rule: NAME_RULE, example: 'my-openai'},
  id: {label: 'ID', rule: NAME_RULE, example: 'team-default'},
  family: {label: '--family'},
  baseUrl: {
    label: '--base-url',
    rule: 'an http(s) URL without spaces, query or fragment',
    example: 'https://api.openai.com/v1',
  },
  credential: {
    rule: 'either {"env": "VAR_NAME"} or {"secret": "..."}',
    example: '--api-key-env OPENAI_API_KEY',
  },
  'credential.env': {label: '--api-key-env', rule: 'a shell variable name', example: 'OPENAI_API_KEY'},
  failureThreshold: {example: '5'},
  cooldownMs: {example: '30000'},
  provider: {example: '"openai"'},
}

/** Schema problems of a provider or policy value, as sentences (empty when valid). */
export async function schemaProblems(kind: 'provider' | 'policy', value: unknown): Promise<string[]> {
  const validate = (await compiled())[kind]
  if (validate(value)) return []
  return describeSchemaErrors(kind, validate.errors ?? [], FIELD_HELP)
}

/** Rules beyond the schema: every target names a known provider of the route's family. */
export function policyProblems(policy: PolicyConfig, providers: readonly ProviderConfig[]): string[] {
  const byName = new Map(providers.map((p) => [p.name, p]))
  const problems: string[] = []
  for (const family of FAMILIES) {
    for (const target of policy.routes[family] ?? []) {
      const provider = byName.get(target.provider)
      if (!provider) {
        // a typo is the usual cause: name the provider meant, else the ones there are
        const names = providers.map((p) => p.name)
        const near = closest(target.provider, names)
        problems.push(
          `policy ${policy.id}: ${family} target "${target.provider}" is not a known provider (${near ? `did you mean "${near}"?` : `known: ${names.join(', ') || 'none'}`})`,
        )
      } else if (provider.family !== family && !target.translate)
        problems.push(
          `policy ${policy.id}: ${family} target "${target.provider}" speaks ${provider.family}, not ${family}`,
        )
    }
  }
  return problems
}

export interface ResolvedTarget {
  provider: ProviderConfig
  /** Model rewrite of the target, if any. */
  model?: string
  /** The provider speaks another family than the route: requests and answers are translated. */
  translate?: true
}

// The daemon routes every request against the same providers array (built once at start):
// index it once per array rather than building a Map per request. The index remembers the
// elements it was built from, so an array edited in place is re-indexed.
const byNameCache = new WeakMap<
  readonly ProviderConfig[],
  {items: ProviderConfig[]; byName: Map<string, ProviderConfig>}
>()
function providersByName(providers: readonly ProviderConfig[]): Map<string, ProviderConfig> {
  const cached = byNameCache.get(providers)
  if (cached && cached.items.length === providers.length && cached.items.every((p, i) => p === providers[i]))
    return cached.byName
  const byName = new Map(providers.map((p) => [p.name, p]))
  byNameCache.set(providers, {items: [...providers], byName})
  return byName
}

/**
 * The ordered targets of `family` in `policy`. Throws {@link RouteError}: 400 for a target whose
 * provider speaks another family (spec 7), 502 when the policy has no usable target.
 * Targets naming unknown providers are skipped.
 */
export function resolveTargets(
  policy: PolicyConfig,
  family: Family,
  providers: readonly ProviderConfig[],
): ResolvedTarget[] {
  const byName = providersByName(providers)
  const targets: ResolvedTarget[] = []
  for (const target of policy.routes[family] ?? ([] as PolicyTarget[])) {
    const provider = byName.get(target.provider)
    if (!provider) continue
    const translate = provider.family !== family
    if (translate && !target.translate)
      throw new RouteError(
        400,
        `policy "${policy.id}" routes ${family} requests to provider "${provider.name}", which speaks ${provider.family}; fix the policy (cross-family targets are not allowed unless marked for translation: \`gwctl policies route ${policy.id} --family ${family} --target ${provider.name} --translate\`)`,
      )
    const resolved: ResolvedTarget = target.model ? {provider, model: target.model} : {provider}
    if (translate) resolved.translate = true
    targets.push(resolved)
  }
  if (targets.length === 0)
    throw new RouteError(502, `policy "${policy.id}" has no provider configured for ${family} requests`)
  return targets
}

/** The upstream model for a request: the target's rewrite, else the provider's mapping, else as asked. */
export function upstreamModel(target: ResolvedTarget, requested: string | undefined): string | undefined {
  if (target.model) return target.model
  const models = target.provider.models
  // own keys only: a requested `constructor` or `__proto__` is a name, not Object.prototype's
  if (requested !== undefined && models && Object.hasOwn(models, requested) && models[requested])
    return models[requested]
  return requested
}

export interface DefaultProviderOptions {
  env?: NodeJS.ProcessEnv
  /** The remote platform, from settings `base-url` / `api-key` (or their env overrides). */
  platform?: {baseUrl?: string; apiKey?: string; apiKeyFromEnv?: string}
  /** Origin of the simulator when the gateway runs with `--sim`, e.g. `http://127.0.0.1:4010`. */
  simOrigin?: string
}

/** Providers derived from the simulator, vendor env vars and the platform settings, in that order. */
export function defaultProviders(options: DefaultProviderOptions = {}): ProviderConfig[] {
  const env = options.env ?? process.env
  const providers: ProviderConfig[] = []
  if (options.simOrigin) {
    for (const family of FAMILIES)
      providers.push({
        name: `sim-${family}`,
        family,
        baseUrl: options.simOrigin,
        credential: {secret: 'sim-key'},
        origin: 'sim',
      })
  }
  if (env.OPENAI_API_KEY) {
    const credential = {env: 'OPENAI_API_KEY'}
    providers.push(
      {name: 'openai', family: 'chat', baseUrl: 'https://api.openai.com', credential, origin: 'env'},
      {
        name: 'openai-responses',
        family: 'responses',
        baseUrl: 'https://api.openai.com',
        credential,
        origin: 'env',
      },
    )
  }
  if (env.ANTHROPIC_API_KEY)
    providers.push({
      name: 'anthropic',
      family: 'messages',
      baseUrl: 'https://api.anthropic.com',
      credential: {env: 'ANTHROPIC_API_KEY'},
      origin: 'env',
    })
  const geminiVar = env.GEMINI_API_KEY ? 'GEMINI_API_KEY' : env.GOOGLE_API_KEY ? 'GOOGLE_API_KEY' : undefined
  if (geminiVar)
    providers.push({
      name: 'gemini',
      family: 'gemini',
      baseUrl: 'https://generativelanguage.googleapis.com',
      credential: {env: geminiVar},
      origin: 'env',
    })
  const platform = options.platform
  if (platform?.baseUrl) {
    const credential: Credential | undefined = platform.apiKeyFromEnv
      ? {env: platform.apiKeyFromEnv}
      : platform.apiKey
        ? {secret: platform.apiKey}
        : undefined
    providers.push({
      name: 'platform',
      family: 'chat',
      baseUrl: platform.baseUrl,
      ...(credential ? {credential} : {}),
      origin: 'platform',
    })
  }
  return providers
}

/**
 * A policy routing each family to the given providers in order. When simulator providers are
 * present, a family with a simulator provider routes only to it, so `--sim` never leaves the machine.
 */
export function defaultPolicy(providers: readonly ProviderConfig[], id = 'default'): PolicyConfig {
  const routes: PolicyConfig['routes'] = {}
  for (const family of FAMILIES) {
    const ofFamily = providers.filter((p) => p.family === family)
    const sim = ofFamily.filter((p) => p.origin === 'sim')
    const chosen = sim.length > 0 ? sim : ofFamily
    if (chosen.length > 0) routes[family] = chosen.map((p) => ({provider: p.name}))
  }
  return {id, routes, fallbacks: true, breaker: {...DEFAULT_BREAKER}, timeouts: {...DEFAULT_TIMEOUTS}}
}

/** The credential value, read at request time (env vars may change between requests). */
export function resolveCredential(
  credential: Credential | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (!credential) return undefined
  if ('env' in credential) return env[credential.env] || undefined
  return credential.secret || undefined
}

/** How a credential is shown: `env OPENAI_API_KEY` or `secret (stored)`; never the value. */
export function describeCredential(credential: Credential | undefined): string {
  if (!credential) return 'none'
  return 'env' in credential ? `env ${credential.env}` : 'secret (stored)'
}

/** A provider safe to print or return from the management API: the secret value replaced. */
export function redactProvider(provider: ProviderConfig): ProviderConfig {
  if (!provider.credential || !('secret' in provider.credential)) return provider
  return {...provider, credential: {secret: '[redacted]'}}
}
