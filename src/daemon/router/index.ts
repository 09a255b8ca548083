/**
 * The routing engine in one object, for the daemon's `forward`: policy -> targets -> breakers ->
 * proxy -> log row. Holds what lives as long as the daemon (connection pools, breakers).
 */
import {emitGatewayEvent} from '../events.js'
import type {IncomingHttpHeaders, ServerResponse} from 'node:http'

import type {LogStore} from '../../store/log-store.js'
import type {Family, PolicyConfig, ProviderConfig} from '../types.js'
import {DEFAULT_BREAKER, DEFAULT_TIMEOUTS} from '../types.js'
import type {BreakerSnapshot, Clock} from './breaker.js'
import {BreakerRegistry} from './breaker.js'
import type {RequestIdentity} from './log-entry.js'
import {logEntryFor} from './log-entry.js'
import {resolveTargets, RouteError} from './policy.js'
import type {ProxyResult} from './proxy.js'
import {gatewayAnswered, proxyRequest, sendFamilyError, UpstreamPools} from './proxy.js'

export {BreakerRegistry, CircuitBreaker} from './breaker.js'
export type {BreakerSnapshot, BreakerState} from './breaker.js'
export {logEntryFor} from './log-entry.js'
export type {RequestIdentity} from './log-entry.js'
export * from './policy.js'
export {proxyRequest, sendFamilyError, UpstreamPools} from './proxy.js'
export type {ProxyAttempt, ProxyOptions, ProxyRequest, ProxyResult, ProxyTarget} from './proxy.js'
export {createUsageTap} from './taps/index.js'
export type {Usage, UsageTap} from './taps/index.js'

export interface RouterOptions {
  /** Where each request's row goes (none: not logged). */
  logStore?: LogStore
  /** Where `{env}` credentials are read (default `process.env`). */
  env?: NodeJS.ProcessEnv
  /** Told about an unexpected error of one request (the daemon log). */
  onError?: (message: string) => void
  /** Clock of the breakers (tests). */
  clock?: Clock
}

export interface RouteInput {
  family: Family
  method: string
  /** Path and query as received (the daemon may already have removed `key=`). */
  url: string
  headers: IncomingHttpHeaders
  body: Buffer
  /** Aborted when the client goes away. */
  signal?: AbortSignal
  /** The caller's policy (undefined: unknown policy id, answered 502). */
  policy: PolicyConfig | undefined
  providers: readonly ProviderConfig[]
  /** Who is calling, for the log row; `project` is overridden by an `x-gw-project` header. */
  identity: RequestIdentity
}

export class Router {
  readonly pools = new UpstreamPools()
  readonly breakers: BreakerRegistry

  constructor(private readonly options: RouterOptions = {}) {
    this.breakers = new BreakerRegistry(() => DEFAULT_BREAKER, options.clock)
  }

  /** Routes one request and logs it. Never throws for upstream or policy trouble. */
  async route(input: RouteInput, res: ServerResponse): Promise<ProxyResult> {
    const time = Date.now()
    const header = input.headers['x-gw-project']
    const identity: RequestIdentity = {
      ...input.identity,
      project: typeof header === 'string' && header.trim() ? header.trim() : input.identity.project,
    }
    let result: ProxyResult
    try {
      if (!input.policy)
        throw new RouteError(
          502,
          `policy "${identity.policyId ?? ''}" does not exist; fix the agent's policy`,
        )
      const policy = input.policy
      const targets = resolveTargets(policy, input.family, input.providers).map((t) => ({
        ...t,
        breaker: this.breakers.get(t.provider.name, policy.breaker ?? DEFAULT_BREAKER),
      }))
      result = await proxyRequest(
        {
          family: input.family,
          method: input.method,
          url: input.url,
          headers: input.headers,
          body: input.body,
        },
        res,
        {
          targets,
          fallbacks: policy.fallbacks,
          timeouts: policy.timeouts ?? DEFAULT_TIMEOUTS,
          env: this.options.env,
          pools: this.pools,
          signal: input.signal,
        },
      )
    } catch (error) {
      if (error instanceof RouteError) {
        const requestId = sendFamilyError(res, input.family, error.status, error.message)
        result = gatewayAnswered(error.status, error.message, time, requestId)
      } else {
        // A bug or an exhausted resource, not an upstream answer: answered in the entrance's
        // shape (a stream already started is cut) and logged like any other request.
        const message = `internal error in the gateway: ${(error as Error)?.message ?? String(error)}`
        this.options.onError?.(message)
        if (res.headersSent) res.destroy()
        const requestId = sendFamilyError(
          res,
          input.family,
          500,
          'The gateway failed to handle the request; see the daemon log.',
        )
        result = gatewayAnswered(500, message, time, requestId)
      }
    }
    const entry = logEntryFor(input.family, identity, result, time)
    this.options.logStore?.append(entry)
    emitGatewayEvent({type: 'request', entry})
    return result
  }

  /** Breaker state of each provider (closed for those never used). */
  breakerStates(providers: readonly ProviderConfig[]): BreakerSnapshot[] {
    return providers.map((p) => this.breakers.snapshotOf(p.name))
  }

  async close(): Promise<void> {
    await this.pools.close()
  }
}
