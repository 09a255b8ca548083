/** Upstream connection pools and the join of a provider base URL with an entrance path. */
import {createRequire} from 'node:module'
import type {Pool} from 'undici'

import type {TimeoutSettings} from '../../store/schema.js'

let PoolClass: typeof Pool | undefined

/**
 * undici, loaded with the first upstream pool: it is a fifth of an idle daemon's memory (about
 * 20 MB resident), and a daemon whose agents send nothing never needs it. The first model request
 * after a start pays for the load (about 0.1 s, once).
 */
function poolClass(): typeof Pool {
  PoolClass ??= (createRequire(import.meta.url)('undici') as {Pool: typeof Pool}).Pool
  return PoolClass
}

/** One keep-alive undici Pool per upstream origin (and timeout set). */
export class UpstreamPools {
  private readonly pools = new Map<string, Pool>()
  /**
   * The pool each timeouts object and origin got last, with the timeouts it was made for (an
   * object edited in place is looked up again): no key string built per request.
   */
  private recent = new WeakMap<TimeoutSettings, Map<string, {pool: Pool; timeouts: TimeoutSettings}>>()

  get(origin: string, timeouts: TimeoutSettings): Pool {
    let byOrigin = this.recent.get(timeouts)
    const hit = byOrigin?.get(origin)
    if (
      hit &&
      hit.timeouts.connectMs === timeouts.connectMs &&
      hit.timeouts.firstByteMs === timeouts.firstByteMs &&
      hit.timeouts.idleMs === timeouts.idleMs
    )
      return hit.pool
    const pool = this.lookup(origin, timeouts)
    if (!byOrigin) this.recent.set(timeouts, (byOrigin = new Map()))
    byOrigin.set(origin, {pool, timeouts: {...timeouts}})
    return pool
  }

  private lookup(origin: string, timeouts: TimeoutSettings): Pool {
    const key = `${origin}|${timeouts.connectMs}|${timeouts.firstByteMs}|${timeouts.idleMs}`
    let pool = this.pools.get(key)
    if (!pool) {
      pool = new (poolClass())(origin, {
        connect: {timeout: timeouts.connectMs},
        headersTimeout: timeouts.firstByteMs,
        bodyTimeout: timeouts.idleMs,
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 600_000,
      })
      this.pools.set(key, pool)
    }
    return pool
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()]
    this.pools.clear()
    this.recent = new WeakMap()
    await Promise.all(pools.map((p) => p.close().catch(() => p.destroy())))
  }
}

let sharedPools: UpstreamPools | undefined
/** The process-wide pools used when {@link ProxyOptions.pools} is not given. */
export function defaultPools(): UpstreamPools {
  sharedPools ??= new UpstreamPools()
  return sharedPools
}

const parsedBases = new Map<string, {origin: string; path: string; versioned: boolean}>()

/**
 * A base path that ends in its API's version (`/v1`, `/api/paas/v4`, `/api/v3`, `/v1beta`), or in
 * Google's OpenAI-compatible `/v1beta/openai`: the base URL as the vendor's OpenAI SDK settings give
 * it, to which a path without the version is joined.
 */
const VERSIONED_BASE = /\/v\d+[a-z]*\d*(?:\/openai)?$/
/** An entrance path's version: dropped after a base that has its own. */
const ENTRANCE_VERSION = /^\/v1(?:beta|alpha)?(?=[/?])/

/**
 * Joins a provider base URL and an entrance path. A base that ends in a version takes the path
 * without the entrance's (`.../v1` + `/v1/x` -> `.../v1/x`; Z.AI's `.../api/paas/v4` +
 * `/v1/chat/completions` -> `.../api/paas/v4/chat/completions`, as OpenAI's SDK joins its
 * `baseURL`); any other base (an origin, Anthropic-style `.../api/anthropic`, a proxy's prefix)
 * takes the path whole.
 */
export function upstreamPath(baseUrl: string, path: string): {origin: string; path: string} {
  let base = parsedBases.get(baseUrl)
  if (!base) {
    const url = new URL(baseUrl)
    const basePath = url.pathname.replace(/\/+$/, '')
    base = {origin: url.origin, path: basePath, versioned: VERSIONED_BASE.test(basePath)}
    if (parsedBases.size > 1000) parsedBases.clear()
    parsedBases.set(baseUrl, base)
  }
  // (`/v1/` or `/v1?`, nearly every request, by a character; `/v1beta` by the expression)
  const rest =
    !base.versioned || !path.startsWith('/v1')
      ? path
      : path.charCodeAt(3) === 47 || path.charCodeAt(3) === 63
        ? path.slice(3)
        : path.replace(ENTRANCE_VERSION, '')
  return {origin: base.origin, path: base.path + rest}
}
