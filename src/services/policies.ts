/**
 * `gwctl policies`: routing policies in the state file. Every change is validated against
 * POLICY_SCHEMA and the cross-family/unknown-provider rules, written under the state lock, and
 * takes effect when the gateway (re)starts.
 */
import {NotFoundError, UsageError} from '../core/errors.js'
import {defaultProviders, policyProblems, schemaProblems} from '../gateway/policy.js'
import {targetLabel} from '../gateway/views.js'
import type {Family, PolicyConfig, PolicyTarget, ProviderConfig} from '../store/schema.js'
import {DEFAULT_BREAKER, DEFAULT_TIMEOUTS, FAMILIES} from '../store/schema.js'
import {homeFile} from '../store/paths.js'
import type {GatewayState} from '../store/state-schema.js'
import {StateStore, withState} from '../store/state.js'
import {autoModeChanged} from './auto-mode.js'
import {targetModelWarnings} from './model-hints.js'

/** Every policy in the state file. */
export async function listPolicies(): Promise<PolicyConfig[]> {
  const store = await StateStore.open(homeFile('state'))
  return store.data.policies
}

/** Every policy with the providers their targets may name (for labels of translated targets). */
export async function policiesWithProviders(): Promise<{
  policies: PolicyConfig[]
  providers: ProviderConfig[]
}> {
  const store = await StateStore.open(homeFile('state'))
  return {policies: store.data.policies, providers: knownProviders(store.data)}
}

/** One policy; exit 7 when there is none with this id. */
export async function getPolicy(id: string): Promise<PolicyConfig> {
  const policy = (await listPolicies()).find((p) => p.id === id)
  if (!policy) throw policyNotFound(id)
  return policy
}

function policyNotFound(id: string): NotFoundError {
  return new NotFoundError(`No policy "${id}".`, {hint: 'See `gwctl policies list`.'})
}

/**
 * The providers a policy may name: those in the state, plus the defaults the gateway derives at
 * start (vendor env vars, the platform, `--sim`) under their fixed names, unless a state
 * provider has taken the name.
 */
export function knownProviders(state: Pick<GatewayState, 'providers'>): ProviderConfig[] {
  const defaults = defaultProviders({
    env: {OPENAI_API_KEY: '-', ANTHROPIC_API_KEY: '-', GEMINI_API_KEY: '-'},
    platform: {baseUrl: 'http://platform.invalid'},
    simOrigin: 'http://sim.invalid',
  })
  const names = new Set(state.providers.map((p) => p.name))
  return [...state.providers, ...defaults.filter((p) => !names.has(p.name))]
}

/** Schema and routing problems of a policy (empty when it may be saved). */
export async function checkPolicy(policy: unknown, providers: readonly ProviderConfig[]): Promise<string[]> {
  const problems = await schemaProblems('policy', policy)
  if (problems.length > 0) return problems
  return policyProblems(policy as PolicyConfig, providers)
}

/** The hint for a refused policy: the fields at fault, or the rule of targets when one is. */
export function policyHint(problems: readonly string[]): string {
  const crossFamily = problems.some((p) => / speaks \w+, not \w+$/.test(p))
  if (crossFamily)
    return 'A target must name a provider of its route family (`gwctl providers list`), unless it is marked for translation: add --translate to `gwctl policies route`, or "translate": true to the target (docs/TRANSLATION.md).'
  const fields = [
    ...new Set(problems.flatMap((p) => [...p.matchAll(/policy field "([^"]+)"/g)].map((m) => m[1]))),
  ]
  const aboutTargets = problems.some((p) => /\btargets?\b|\bprovider\b/i.test(p))
  if (fields.length > 0 && !fields.some((f) => f.startsWith('routes')) && !aboutTargets) {
    return `Fix ${fields.map((f) => `"${f}"`).join(', ')} in the policy JSON (\`gwctl policies show ID --json\` prints a valid one; README "Routing" has the format).`
  }
  return 'A target must name a provider of its route family (`gwctl providers list`); see README "Routing" for the policy format.'
}

function refuse(problems: string[]): never {
  throw new UsageError(`The policy is not valid: ${problems.join('; ')}`, {
    code: 'invalid_policy',
    hint: policyHint(problems),
  })
}

/** Parses policy JSON text; fills fallbacks, breaker and timeouts with the defaults when missing. */
export function parsePolicyText(id: string, text: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`The policy is not JSON: ${(error as Error).message}`, {code: 'invalid_json'})
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError('The policy must be a JSON object.', {code: 'invalid_policy'})
  }
  const policy = value as Record<string, unknown>
  if (policy.id !== undefined && policy.id !== id) {
    throw new UsageError(`The file's policy id "${String(policy.id)}" differs from "${id}".`, {
      code: 'policy_id_mismatch',
      hint: 'Leave "id" out of the file, or make it match the command line.',
    })
  }
  return {
    fallbacks: true,
    breaker: {...DEFAULT_BREAKER},
    timeouts: {...DEFAULT_TIMEOUTS},
    routes: {},
    ...policy,
    id,
  }
}

/** Creates or replaces a policy from JSON text. */
export async function setPolicy(
  id: string,
  text: string,
): Promise<{policy: PolicyConfig; created: boolean; warnings: string[]}> {
  const candidate = parsePolicyText(id, text)
  const schema = await schemaProblems('policy', candidate)
  if (schema.length > 0) refuse(schema)
  return withState(async (store) => {
    const problems = await checkPolicy(candidate, knownProviders(store.data))
    if (problems.length > 0) refuse(problems)
    const policy = candidate as unknown as PolicyConfig
    const before = {policies: [...store.data.policies], providers: store.data.providers}
    const index = store.data.policies.findIndex((p) => p.id === id)
    if (index >= 0) store.data.policies[index] = policy
    else store.data.policies.push(policy)
    const warnings = targetModelWarnings(policy, knownProviders(store.data))
    const autoMode = autoModeChanged(before, store.data, id)
    return {policy, created: index < 0, warnings: autoMode ? [...warnings, autoMode] : warnings}
  }, homeFile('state'))
}

/** `PROVIDER` or `PROVIDER:MODEL` -> a target (the model may itself hold colons). */
export function parseTarget(text: string): PolicyTarget {
  const at = text.indexOf(':')
  const provider = (at < 0 ? text : text.slice(0, at)).trim()
  const model = at < 0 ? '' : text.slice(at + 1).trim()
  if (!provider || (at >= 0 && !model)) {
    throw new UsageError(`The target "${text}" is not PROVIDER or PROVIDER:MODEL.`, {
      code: 'invalid_target',
      hint: 'e.g. --target anthropic --target openai-responses:gpt-5',
    })
  }
  return model ? {provider, model} : {provider}
}

/**
 * Sets one family's ordered targets (creating the policy with defaults when it is new).
 * `translate`: true marks the cross-family targets for translation, false marks none, undefined
 * keeps each target's mark as the route had it.
 */
export async function routePolicy(
  id: string,
  family: string,
  targets: readonly string[],
  options: {translate?: boolean} = {},
): Promise<{policy: PolicyConfig; created: boolean; providers: ProviderConfig[]; warnings: string[]}> {
  if (!(FAMILIES as readonly string[]).includes(family)) {
    throw new UsageError(`"${family}" is not a family (${FAMILIES.join(', ')}).`, {code: 'invalid_family'})
  }
  if (targets.length === 0) {
    throw new UsageError('Give at least one --target.', {code: 'missing_target'})
  }
  const parsed = targets.map(parseTarget)
  return withState(async (store) => {
    const before = store.data.policies.find((p) => p.id === id)?.routes[family as Family] ?? []
    const known = new Map(knownProviders(store.data).map((p) => [p.name, p]))
    for (const target of parsed) {
      const provider = known.get(target.provider)
      // --translate marks the route's cross-family targets (a same-family target needs none);
      // without an answer either way (the app reordering a route), each target keeps its mark
      const translate =
        options.translate ?? before.some((t) => t.provider === target.provider && t.translate === true)
      if (translate && provider && provider.family !== family) target.translate = true
    }
    const existing = store.data.policies.find((p) => p.id === id)
    const base: PolicyConfig = existing ?? {
      id,
      routes: {},
      fallbacks: true,
      breaker: {...DEFAULT_BREAKER},
      timeouts: {...DEFAULT_TIMEOUTS},
    }
    const policy: PolicyConfig = {...base, routes: {...base.routes, [family as Family]: parsed}}
    const providers = knownProviders(store.data)
    const problems = await checkPolicy(policy, providers)
    if (problems.length > 0) refuse(problems)
    const prior = {policies: [...store.data.policies], providers: store.data.providers}
    if (existing) store.data.policies[store.data.policies.indexOf(existing)] = policy
    else store.data.policies.push(policy)
    const warnings = targetModelWarnings(policy, providers, [family as Family])
    const autoMode = family === 'messages' ? autoModeChanged(prior, store.data, id) : undefined
    if (autoMode) warnings.push(autoMode)
    return {policy, created: !existing, providers, warnings}
  }, homeFile('state'))
}

/** Removes a policy; refused (exit 2) for `default` and while agents are bound to it. */
export async function removePolicy(id: string): Promise<PolicyConfig> {
  if (id === 'default') {
    throw new UsageError(
      'The `default` policy cannot be removed: agents without their own fall back to it.',
      {
        code: 'policy_required',
        hint: 'Change its routes instead: gwctl policies route default --family FAMILY --target PROVIDER',
      },
    )
  }
  return withState((store) => {
    const index = store.data.policies.findIndex((p) => p.id === id)
    if (index < 0) throw policyNotFound(id)
    const bound = store.data.agents.filter((a) => a.policyId === id)
    if (bound.length > 0) {
      throw new UsageError(
        `${bound.length} agent${bound.length === 1 ? ' is' : 's are'} bound to policy "${id}" (${bound
          .slice(0, 3)
          .map((a) => a.name)
          .join(', ')}${bound.length > 3 ? ', ...' : ''}).`,
        {code: 'policy_in_use', hint: 'Issue their keys with another --policy-id first.'},
      )
    }
    const [removed] = store.data.policies.splice(index, 1)
    return removed
  }, homeFile('state'))
}

/**
 * `messages -> anthropic, corp:glm-4.6 (chat, translated)` lines of a policy, one per routed
 * family; a translated target names the family its provider speaks when `providers` know it.
 */
export function routeLines(policy: PolicyConfig, providers: readonly ProviderConfig[] = []): string[] {
  return FAMILIES.filter((f) => (policy.routes[f] ?? []).length > 0).map(
    (f) => `${f} -> ${(policy.routes[f] ?? []).map((t) => targetLabel(t, f, providers)).join(', ')}`,
  )
}
