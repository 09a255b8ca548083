/** Upstream connection pools (the join of a base URL and a path is in gateway/upstream-path.ts). */
import {createRequire} from 'node:module'
import type {LookupFunction} from 'node:net'
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
  /**
   * What ends each JSON answer read on after its client left (relay.ts): a graceful close of the
   * pools would wait for it (up to the idle timeout), so `close` ends them first (review72 #2).
   */
  readonly readingOn = new Set<() => void>()

  /**
   * @param lookup How upstream host names resolve (default: the system's). Tests: a vendor's name
   * (Amazon Bedrock's) to this machine, where a scripted upstream stands for it.
   */
  constructor(private readonly lookup_?: LookupFunction) {}

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
        connect: this.lookup_
          ? {timeout: timeouts.connectMs, lookup: this.lookup_}
          : {timeout: timeouts.connectMs},
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
    for (const stop of [...this.readingOn]) stop()
    const pools = [...this.pools.values()]
    this.pools.clear()
    this.recent = new WeakMap()
    await Promise.all(pools.map((p) => p.close().catch(() => p.destroy())))
  }
}

/**
 * How long a request waits for its answer's headers when that is not the pool's first-byte
 * timeout (undefined: the pool's). A stream's headers come before its first event, so a silent
 * one is caught at the first-byte timeout; an answer not streamed comes whole with its headers,
 * so it waits up to the idle timeout when that is longer: a long compaction (Codex's
 * `/responses/compact`), a JSON summary, Claude Code's non-streaming fallback with a large
 * `max_tokens` may legitimately take minutes, and a 504 at the first-byte timeout would have its
 * client send the whole request again (direct, the Anthropic and OpenAI SDKs wait 10 minutes).
 * Given to undici per request (`headersTimeout`), not as a pool of its own, and by proxy.ts only
 * at a request's last target (with another target left the policy's first-byte timeout sends it
 * on) and never for a count of tokens (`stream` true there: a live upstream answers at once).
 */
export function answerWaitMs(timeouts: TimeoutSettings, stream: boolean): number | undefined {
  return stream || timeouts.idleMs <= timeouts.firstByteMs ? undefined : timeouts.idleMs
}

let sharedPools: UpstreamPools | undefined
/** The process-wide pools used when {@link ProxyOptions.pools} is not given. */
export function defaultPools(): UpstreamPools {
  sharedPools ??= new UpstreamPools()
  return sharedPools
}
