/** Upstream connection pools and the join of a provider base URL with an entrance path. */
import {Pool} from 'undici'

import type {TimeoutSettings} from '../types.js'

/** One keep-alive undici Pool per upstream origin (and timeout set). */
export class UpstreamPools {
  private readonly pools = new Map<string, Pool>()

  get(origin: string, timeouts: TimeoutSettings): Pool {
    const key = `${origin}|${timeouts.connectMs}|${timeouts.firstByteMs}|${timeouts.idleMs}`
    let pool = this.pools.get(key)
    if (!pool) {
      pool = new Pool(origin, {
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
    await Promise.all(pools.map((p) => p.close().catch(() => p.destroy())))
  }
}

let sharedPools: UpstreamPools | undefined
/** The process-wide pools used when {@link ProxyOptions.pools} is not given. */
export function defaultPools(): UpstreamPools {
  sharedPools ??= new UpstreamPools()
  return sharedPools
}

const parsedBases = new Map<string, {origin: string; path: string}>()

/** Joins a provider base URL and an entrance path (`.../v1` + `/v1/x` -> `.../v1/x`). */
export function upstreamPath(baseUrl: string, path: string): {origin: string; path: string} {
  let base = parsedBases.get(baseUrl)
  if (!base) {
    const url = new URL(baseUrl)
    base = {origin: url.origin, path: url.pathname.replace(/\/+$/, '')}
    if (parsedBases.size > 1000) parsedBases.clear()
    parsedBases.set(baseUrl, base)
  }
  const basePath = base.path
  let rest = path
  for (const version of ['/v1', '/v1beta']) {
    if (basePath.endsWith(version) && (rest.startsWith(version + '/') || rest.startsWith(version + '?'))) {
      rest = rest.slice(version.length)
      break
    }
  }
  return {origin: base.origin, path: basePath + rest}
}
