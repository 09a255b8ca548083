/**
 * A provider's own model list (`gwctl providers models NAME`): what its API says it serves, from
 * the list endpoint of its family (OpenAI's and every OpenAI-compatible server's `GET /models`,
 * Anthropic's `GET /v1/models`, Google's `GET /v1beta/models`), asked with the key the gateway
 * uses for it. Kept in `provider-models.json` (0600) for a few days, where "did you mean" on a
 * policy target's model (./model-hints.ts) reads it: a typo of a model of the user's own provider
 * gets a hint, not only one of the simulator's or a preset's.
 */
import {readFileSync} from 'node:fs'

import {writeFileAtomic} from '../core/atomic-file.js'
import {AuthError, ConfigError, NotFoundError, UpstreamError, isAbortError} from '../core/errors.js'
import {SIM_MODELS} from '../gateway/effective-providers.js'
import {resolveCredential} from '../gateway/policy.js'
import {upstreamPath} from '../gateway/upstream-path.js'
import {homeFile} from '../store/paths.js'
import type {Family, ProviderConfig} from '../store/schema.js'
import {StateStore} from '../store/state.js'

/** How long a fetched list is taken as it is (`--refresh` asks again at once). */
export const MODELS_FRESH_MS = 3 * 24 * 3600 * 1000
/** How long one list request may take, connection and body. */
const LIST_TIMEOUT_MS = 15_000
/** Pages of a paged list (Anthropic's, Google's) asked for at most. */
const MAX_PAGES = 20

export interface ProviderModels {
  provider: string
  family: Family
  baseUrl: string
  models: string[]
  /** `upstream`: asked now; `cache`: as asked at `fetchedAt`; `simulator`: its fixed list. */
  source: 'upstream' | 'cache' | 'simulator'
  /** When the list was asked (ISO 8601); absent for the simulator's. */
  fetchedAt?: string
}

interface CacheEntry {
  baseUrl: string
  fetchedAt: string
  models: string[]
}

interface CacheFile {
  version: 1
  providers: Record<string, CacheEntry>
}

function readCache(env: NodeJS.ProcessEnv = process.env): CacheFile {
  try {
    const parsed = JSON.parse(readFileSync(homeFile('providerModels', env), 'utf8')) as CacheFile
    if (parsed && parsed.version === 1 && parsed.providers && typeof parsed.providers === 'object')
      return parsed
  } catch {
    // none yet, or not ours: an empty one
  }
  return {version: 1, providers: {}}
}

/**
 * The names a provider's own list gave when it was last asked (any age: a hint, never a rule), or
 * none when it was never asked or its base URL changed since. A small file read, at `policies
 * route`/`set` time only.
 */
export function cachedModels(
  provider: Pick<ProviderConfig, 'name' | 'baseUrl'>,
  env = process.env,
): string[] {
  const entry = readCache(env).providers[provider.name]
  return entry && entry.baseUrl === provider.baseUrl && Array.isArray(entry.models) ? entry.models : []
}

/**
 * The list request of `family` for a provider at `baseUrl`: the path joined as the gateway joins
 * a request's (a base ending in a version takes the path without `/v1`: `https://api.z.ai/api/
 * paas/v4` + `/v1/models` -> `.../api/paas/v4/models`), and the headers its key goes in.
 */
export function listRequest(
  family: Family,
  baseUrl: string,
  key: string | undefined,
  page?: string,
): {url: string; headers: Record<string, string>} {
  const {origin, path} = upstreamPath(baseUrl, family === 'gemini' ? '/v1beta/models' : '/v1/models')
  const url = new URL(origin + path)
  const headers: Record<string, string> = {accept: 'application/json'}
  if (family === 'messages') {
    headers['anthropic-version'] = '2023-06-01'
    if (key) headers['x-api-key'] = key
    url.searchParams.set('limit', '1000')
    if (page) url.searchParams.set('after_id', page)
  } else if (family === 'gemini') {
    if (key) headers['x-goog-api-key'] = key
    url.searchParams.set('pageSize', '1000')
    if (page) url.searchParams.set('pageToken', page)
  } else if (key) headers.authorization = `Bearer ${key}`
  return {url: url.toString(), headers}
}

/** The model names of one page of a list answer, and the next page's token (paged lists). */
export function parseList(family: Family, body: unknown): {models: string[]; next?: string} {
  const o = (body ?? {}) as Record<string, any>
  if (family === 'gemini') {
    const models = (Array.isArray(o.models) ? o.models : [])
      .map((m: any) => (typeof m?.name === 'string' ? m.name.replace(/^models\//, '') : undefined))
      .filter((m: unknown): m is string => typeof m === 'string' && m !== '')
    return {
      models,
      next: typeof o.nextPageToken === 'string' && o.nextPageToken ? o.nextPageToken : undefined,
    }
  }
  // OpenAI's `{data: [{id}]}` (Anthropic's the same, with `has_more` and `last_id`); Ollama's
  // native `{models: [{name}]}` where a base URL points at it
  const list: any[] = Array.isArray(o.data) ? o.data : Array.isArray(o.models) ? o.models : []
  const models = list
    .map((m) => (typeof m?.id === 'string' ? m.id : typeof m?.name === 'string' ? m.name : undefined))
    .filter((m): m is string => typeof m === 'string' && m !== '')
  const next =
    family === 'messages' && o.has_more === true && typeof o.last_id === 'string' ? o.last_id : undefined
  return {models, next}
}

/** The provider named `name`, as the state file has it (its secret, if any, too). */
async function findProvider(name: string, env: NodeJS.ProcessEnv): Promise<ProviderConfig> {
  const store = await StateStore.open(homeFile('state', env))
  const provider = store.data.providers.find((p) => p.name === name)
  if (provider) return provider
  // the simulator's providers exist while a gateway runs with --sim: their list is fixed
  const sim = (Object.keys(SIM_MODELS) as Family[]).find((f) => name === `sim-${f}`)
  if (sim) return {name, family: sim, baseUrl: 'http://127.0.0.1', origin: 'sim'}
  const known = store.data.providers.map((p) => p.name)
  throw new NotFoundError(`No provider "${name}".`, {
    code: 'provider_not_found',
    hint: known.length
      ? `Providers: ${known.join(', ')} (gwctl providers list).`
      : 'Add one with `gwctl providers add`.',
  })
}

/**
 * The models `name` serves: the simulator's fixed list, the cached one while fresh, else asked of
 * its API now (`refresh`: always asked) and cached.
 */
export async function providerModels(
  name: string,
  options: {refresh?: boolean; signal?: AbortSignal; env?: NodeJS.ProcessEnv; now?: number} = {},
): Promise<ProviderModels> {
  const env = options.env ?? process.env
  const now = options.now ?? Date.now()
  const provider = await findProvider(name, env)
  const view = {provider: provider.name, family: provider.family, baseUrl: provider.baseUrl}
  if (provider.origin === 'sim')
    return {...view, models: [...SIM_MODELS[provider.family]], source: 'simulator'}
  const cache = readCache(env)
  const entry = cache.providers[provider.name]
  if (
    !options.refresh &&
    entry?.baseUrl === provider.baseUrl &&
    now - Date.parse(entry.fetchedAt) < MODELS_FRESH_MS
  )
    return {...view, models: entry.models, source: 'cache', fetchedAt: entry.fetchedAt}
  const models = await askList(provider, env, options.signal)
  const fetchedAt = new Date(now).toISOString()
  // (read again: another command may have written it meanwhile)
  const latest = readCache(env)
  latest.providers[provider.name] = {baseUrl: provider.baseUrl, fetchedAt, models}
  await writeFileAtomic(homeFile('providerModels', env), `${JSON.stringify(latest, null, 2)}\n`)
  return {...view, models, source: 'upstream', fetchedAt}
}

async function askList(
  provider: ProviderConfig,
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
): Promise<string[]> {
  const key = resolveCredential(provider.credential, env)
  if (provider.credential && 'env' in provider.credential && key === undefined)
    throw new ConfigError(`${provider.credential.env} is not set: ${provider.name}'s key is read from it.`, {
      code: 'credential_unset',
      hint: `export ${provider.credential.env}=... in this shell, then run the command again.`,
    })
  const models: string[] = []
  let page: string | undefined
  for (let i = 0; i < MAX_PAGES; i++) {
    const {url, headers} = listRequest(provider.family, provider.baseUrl, key, page)
    const shown = url.replace(/([?&](?:key)=)[^&]*/g, '$1[redacted]')
    let response: Response
    const timeout = AbortSignal.timeout(LIST_TIMEOUT_MS)
    try {
      response = await fetch(url, {headers, signal: signal ? AbortSignal.any([signal, timeout]) : timeout})
    } catch (error) {
      if (signal?.aborted) throw error
      const why =
        isAbortError(error) || timeout.aborted
          ? `no answer within ${LIST_TIMEOUT_MS / 1000} s`
          : describe(error)
      throw new UpstreamError(`${provider.name}: ${shown} could not be reached: ${why}.`, {
        code: 'upstream_unreachable',
        hint: `Check the provider's base URL (${provider.baseUrl}) and that the server runs.`,
      })
    }
    const text = await response.text().catch(() => '')
    const said = key ? text.split(key).join('[redacted]') : text
    if (response.status === 401 || response.status === 403)
      throw new AuthError(`${provider.name} refused its key (${response.status}) listing its models.`, {
        code: 'provider_auth',
        hint: provider.credential
          ? `Check the key in ${'env' in provider.credential ? provider.credential.env : 'the stored secret'} (gwctl providers add ${provider.name} ... replaces it).`
          : `${provider.name} has no key: add one with \`gwctl providers add ${provider.name} --api-key-env VAR\`.`,
        details: {status: response.status},
      })
    if (response.status === 404 || response.status === 405)
      throw new UpstreamError(`${provider.name} has no model list at ${shown} (${response.status}).`, {
        code: 'no_model_list',
        status: response.status,
        hint: 'Some servers list no models: name the model the provider documents in --target PROVIDER:MODEL.',
      })
    if (!response.ok)
      throw new UpstreamError(
        `${provider.name} answered ${response.status} listing its models: ${said.replace(/\s+/g, ' ').trim().slice(0, 200) || 'an empty body'}.`,
        {code: 'upstream_error', status: response.status},
      )
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      throw new UpstreamError(`${provider.name}'s model list at ${shown} is no JSON.`, {
        code: 'upstream_error',
      })
    }
    const parsed = parseList(provider.family, body)
    models.push(...parsed.models)
    if (!parsed.next) break
    page = parsed.next
  }
  return [...new Set(models)].sort()
}

function describe(error: unknown): string {
  const cause = (error as {cause?: {code?: string; message?: string}})?.cause
  return cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error)
}
