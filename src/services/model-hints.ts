/**
 * "Did you mean" for the model of a policy target (`--target sim-chat:sim-mni`). A typo there is
 * accepted by every check (any name is a valid model) and shows only at request time, as the
 * upstream's 404 or, on the simulator, which answers any name, not at all. Where the provider's
 * model names are known (the simulator's list, a preset's documented names, the provider's own
 * model map, its API's list as `gwctl providers models` last fetched it), a name close to one of them but not one of them is worth a warning. Never a
 * refusal: providers add models all the time, so a name far from every known one says nothing.
 */
import {SIM_MODELS} from '../gateway/effective-providers.js'
import type {Family, PolicyConfig, ProviderConfig} from '../store/schema.js'
import {FAMILIES} from '../store/schema.js'
import {cachedModels} from './provider-models.js'
import {PROVIDER_PRESETS} from './provider-presets.js'

/** The model names a provider is known to serve, or none when nothing is known. */
export function knownModels(provider: ProviderConfig): string[] {
  const names = new Set<string>()
  if (provider.origin === 'sim') for (const m of SIM_MODELS[provider.family]) names.add(m)
  const base = provider.baseUrl.replace(/\/+$/, '')
  for (const preset of PROVIDER_PRESETS) {
    if (preset.baseUrl === base) for (const m of preset.models ?? []) names.add(m)
  }
  for (const [requested, upstream] of Object.entries(provider.models ?? {})) {
    names.add(requested)
    names.add(upstream)
  }
  // the provider's own list, as `gwctl providers models` last asked it
  if (provider.origin !== 'sim') for (const m of cachedModels(provider)) names.add(m)
  return [...names]
}

/** What a preset of `provider`'s base URL says of `model` if its vendor retired it. */
function retiredModel(provider: ProviderConfig, model: string): {on: string; use: string} | undefined {
  if (provider.origin === 'sim') return undefined
  const base = provider.baseUrl.replace(/\/+$/, '')
  for (const preset of PROVIDER_PRESETS)
    if (preset.baseUrl === base && preset.retired && Object.hasOwn(preset.retired, model))
      return preset.retired[model]
  return undefined
}

/** Damerau-Levenshtein distance (adjacent transpositions count one), case-sensitive. */
function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({length: a.length + 1}, (_, i) => [i])
  for (let j = 1; j <= b.length; j++) rows[0][j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d = Math.min(d, rows[i - 2][j - 2] + 1)
      rows[i][j] = d
    }
  }
  return rows[a.length][b.length]
}

/**
 * Whether two names of one length differ in one digit only (a version: `glm-4.7`, `glm-4.6`); two
 * digits swapped (`qwen3-23b` for `qwen3-32b`) stay a typo.
 */
function versionsApart(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  let apart = 0
  for (let i = 0; i < a.length; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x === y) continue
    if (x < 48 || x > 57 || y < 48 || y > 57 || ++apart > 1) return false
  }
  return apart === 1
}

/**
 * The known name `name` is probably a typo of: the same name in other case, else the nearest one
 * within a quarter of its length (at least one edit, at most three). Undefined for a known name or
 * one far from all of them (a model the list does not have yet).
 */
export function didYouMean(name: string, known: readonly string[]): string | undefined {
  if (known.includes(name)) return undefined
  const folded = known.find((k) => k.toLowerCase() === name.toLowerCase())
  if (folded) return folded
  const allowed = Math.min(3, Math.max(1, Math.floor(name.length / 4)))
  let best: {name: string; d: number} | undefined
  for (const k of known) {
    // another version of a known model (glm-4.7 beside glm-4.6, o4-mini beside o3-mini) is no
    // typo: likely a model newer than the list
    if (versionsApart(name, k)) continue
    const d = distance(name, k)
    if (d <= allowed && (!best || d < best.d)) best = {name: k, d}
  }
  return best?.name
}

/**
 * Warnings for the targets of a policy's routes (only `families`, when given): a model that is
 * probably a typo of one the provider is known to serve. The simulator's `+quirk` suffixes are
 * not part of the name (it strips them).
 */
export function targetModelWarnings(
  policy: PolicyConfig,
  providers: readonly ProviderConfig[],
  families: readonly Family[] = FAMILIES,
): string[] {
  const byName = new Map(providers.map((p) => [p.name, p]))
  const warnings: string[] = []
  for (const family of families) {
    for (const target of policy.routes[family] ?? []) {
      const provider = byName.get(target.provider)
      if (!provider || !target.model) continue
      const model = provider.origin === 'sim' ? target.model.split('+')[0] : target.model
      const retired = retiredModel(provider, model)
      if (retired) {
        warnings.push(
          `${target.provider}:${target.model}: ${provider.name} retired "${model}" on ${retired.on}; use "${retired.use}" (kept as given: requests naming it are refused upstream)`,
        )
        continue
      }
      const guess = didYouMean(model, knownModels(provider))
      if (guess) {
        warnings.push(
          `${target.provider}:${target.model}: ${provider.name} lists no model "${model}"; did you mean "${guess}"? (kept as given: the provider may have added it)`,
        )
      }
    }
  }
  return warnings
}
