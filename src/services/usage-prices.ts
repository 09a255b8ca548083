/**
 * `gwctl usage prices [update]`: which price table `gwctl usage` estimates cost from, and, only
 * when the user asks, a newer one. The table shipped with `@pydantic/genai-prices` is used offline
 * by default; `update` downloads the same project's current data file (`REMOTE_DATA_JSON_URL`,
 * or `--url` / `GWCTL_PRICES_URL` for a mirror), checks it with the library itself (the data it
 * cannot load is refused and the table in use is kept), and keeps it in `prices.json` (0600,
 * written atomically), which `createPricer` then prefers. `--reset` goes back to the bundled one.
 */
import {rmSync, statSync} from 'node:fs'

import {writeFileAtomic} from '../core/atomic-file.js'
import {ConfigError, UpstreamError, UsageError, isAbortError} from '../core/errors.js'
import {ensureHome, homeFile} from '../store/paths.js'
import type {SavedPrices} from './usage-cost.js'
import {activateSavedPrices, bundledVersion, library, loadPriceData, readSavedPrices} from './usage-cost.js'

export interface PricesStatus {
  /** `bundled` (the table shipped with gwctl) or `updated` (prices.json). */
  table: 'bundled' | 'updated'
  /** The genai-prices version whose table is bundled. */
  bundledVersion: string
  providers: number
  models: number
  /** Of an updated table: its URL and download time. */
  source?: string
  fetchedAt?: string
  file?: string
  /** Set when prices.json exists but cannot be used (the bundled table is used instead). */
  problem?: string
}

function count(data: readonly unknown[]): {providers: number; models: number} {
  let models = 0
  for (const p of data) {
    const list = (p as {models?: unknown})?.models
    if (Array.isArray(list)) models += list.length
  }
  return {providers: data.length, models}
}

/** Which table is in use, with its size. */
export async function pricesStatus(path: string = homeFile('prices')): Promise<PricesStatus> {
  const version = bundledVersion()
  const lib = library()
  let saved: SavedPrices | undefined
  let problem: string | undefined
  try {
    saved = readSavedPrices(path)
  } catch (error) {
    problem = `${(error as Error).message}; the bundled table is used`
  }
  if (saved) {
    problem = activateSavedPrices(path)
    if (!problem)
      return {
        table: 'updated',
        bundledVersion: version,
        ...count(saved.data),
        source: saved.source,
        fetchedAt: saved.fetchedAt,
        file: path,
      }
  }
  const bundled = (await lib.waitForUpdate()) ?? []
  return {table: 'bundled', bundledVersion: version, ...count(bundled), ...(problem ? {problem} : {})}
}

export interface UpdateOptions {
  /** Where to download from (default: `GWCTL_PRICES_URL`, else genai-prices' data file). */
  url?: string
  path?: string
  timeoutMs?: number
  signal?: AbortSignal
  env?: NodeJS.ProcessEnv
}

/** Downloads the current price data, checks it and keeps it in prices.json. */
export async function updatePrices(options: UpdateOptions = {}): Promise<PricesStatus> {
  const lib = library()
  const env = options.env ?? process.env
  const url = options.url ?? env.GWCTL_PRICES_URL ?? lib.REMOTE_DATA_JSON_URL
  let parsedUrl: URL
  try {
    parsedUrl = new URL(url)
  } catch {
    throw new UsageError(`The price data URL "${url}" is not a URL.`, {
      hint: 'Give an http(s) URL with --url.',
    })
  }
  if (parsedUrl.protocol !== 'https:' && parsedUrl.protocol !== 'http:')
    throw new UsageError(`The price data URL must be http(s), not ${parsedUrl.protocol}`)
  const path = options.path ?? homeFile('prices')
  const timeout = AbortSignal.timeout(options.timeoutMs ?? 30_000)
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout
  let text: string
  try {
    const res = await fetch(parsedUrl, {signal, headers: {accept: 'application/json'}})
    text = await res.text()
    if (!res.ok)
      throw new UpstreamError(`The price data server answered ${res.status} for ${url}.`, {
        code: 'prices_unavailable',
        status: res.status,
        hint: 'Nothing changed; try again later, or point --url at a mirror.',
      })
  } catch (error) {
    if (error instanceof UpstreamError) throw error
    if (isAbortError(error) && options.signal?.aborted) throw error
    const cause = ((error as Error).cause ?? error) as Error
    const reason = isAbortError(error) ? 'no answer within 30 s' : (cause.message ?? String(cause))
    throw new UpstreamError(`Could not download the price data from ${url}: ${reason}.`, {
      code: 'prices_unavailable',
      hint: 'Nothing changed: gwctl keeps using the table it has. Check the network, or point --url at a mirror.',
    })
  }
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch (error) {
    throw new UpstreamError(`The price data from ${url} is not JSON (${(error as Error).message}).`, {
      code: 'prices_invalid',
      hint: 'Nothing changed: gwctl keeps using the table it has.',
    })
  }
  if (!Array.isArray(data) || data.length === 0)
    throw new UpstreamError(`The price data from ${url} is not a list of providers.`, {
      code: 'prices_invalid',
      hint: 'Nothing changed: gwctl keeps using the table it has.',
    })
  try {
    loadPriceData(lib, data)
  } catch (error) {
    // the library keeps its previous data when it refuses a list
    throw new UpstreamError(`The price data from ${url} cannot be used: ${(error as Error).message}.`, {
      code: 'prices_invalid',
      hint: 'Nothing changed: gwctl keeps using the table it has.',
    })
  }
  const saved: SavedPrices = {source: url, fetchedAt: new Date().toISOString(), data}
  ensureHome()
  try {
    await writeFileAtomic(path, JSON.stringify(saved), 0o600)
  } catch (error) {
    throw new ConfigError(`Could not write ${path}: ${(error as Error).message}`, {code: 'prices_unwritable'})
  }
  return {
    table: 'updated',
    bundledVersion: bundledVersion(),
    ...count(data),
    source: url,
    fetchedAt: saved.fetchedAt,
    file: path,
  }
}

/** Goes back to the bundled table; true when there was an updated one. */
export function resetPrices(path: string = homeFile('prices')): boolean {
  try {
    statSync(path)
  } catch {
    return false
  }
  rmSync(path, {force: true})
  return true
}
