/**
 * The effective providers and policies: what the daemon routes with (built once at start; policy
 * and provider changes take effect on `gwctl gateway restart`) and what `doctor` checks.
 *
 * - Providers: the user's (state file) first, then the defaults (`defaultProviders`: the simulator
 *   with `--sim`, vendor env vars, the platform settings); a default whose name a user provider
 *   already has is left out.
 * - Default routes: each family a policy has no targets for (all of them in the seeded `default`
 *   and `claude_code_default` until a user adds targets) routes to the available providers of
 *   that family (`defaultPolicy`: only the simulator's when it runs). A family with targets of
 *   its own is used exactly as written; routing one family never takes the others' defaults.
 */
import {getSetting} from '../store/settings.js'
import type {GatewayState} from '../store/state-schema.js'
import type {DefaultProviderOptions} from './policy.js'
import {defaultPolicy, defaultProviders} from './policy.js'
import type {Family, PolicyConfig, ProviderConfig} from '../store/schema.js'
import {FAMILIES} from '../store/schema.js'

/** Models the simulator's providers list on `GET /v1/models` (it answers any name). */
export const SIM_MODELS: Record<Family, string[]> = {
  chat: ['sim-mini', 'sim-pro', 'sim-reasoner'],
  responses: ['sim-mini', 'sim-pro', 'sim-reasoner'],
  messages: ['claude-sim'],
  gemini: ['gemini-sim'],
}

/** User providers, then the defaults whose names are free. */
export function effectiveProviders(
  state: Pick<GatewayState, 'providers'>,
  options: DefaultProviderOptions = {},
): ProviderConfig[] {
  const user = state.providers.map((p) => ({...p, origin: p.origin ?? ('user' as const)}))
  const names = new Set(user.map((p) => p.name))
  const defaults = defaultProviders(options)
    .filter((p) => !names.has(p.name))
    .map((p) =>
      p.origin === 'sim' ? {...p, models: Object.fromEntries(SIM_MODELS[p.family].map((m) => [m, m]))} : p,
    )
  return [...user, ...defaults]
}

/** The families of a policy that have no targets of their own (they get the default routes). */
export function familiesOnDefaults(policy: PolicyConfig): Family[] {
  return FAMILIES.filter((f) => (policy.routes[f] ?? []).length === 0)
}

/** The policies as routed: each family without targets gets routes to its available providers. */
export function effectivePolicies(
  policies: readonly PolicyConfig[],
  providers: readonly ProviderConfig[],
): PolicyConfig[] {
  let defaults: PolicyConfig['routes'] | undefined
  return policies.map((p) => {
    const missing = familiesOnDefaults(p)
    if (missing.length === 0) return p
    defaults ??= defaultPolicy(providers, p.id).routes
    const routes: PolicyConfig['routes'] = {...p.routes}
    for (const family of missing) {
      if (defaults[family]) routes[family] = defaults[family]
      else delete routes[family]
    }
    return {...p, routes}
  })
}

/** The platform provider's settings: `base-url`, and `api-key` (by env var name when set there). */
export function platformSettings(env: NodeJS.ProcessEnv = process.env): DefaultProviderOptions['platform'] {
  const baseUrl = getSetting('base-url')
  if (!baseUrl) return undefined
  if (env.GWCTL_API_KEY) return {baseUrl, apiKeyFromEnv: 'GWCTL_API_KEY'}
  return {baseUrl, apiKey: getSetting('api-key')}
}
