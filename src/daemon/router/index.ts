/**
 * The routing engine in one object, for the daemon's `forward`: policy -> targets -> breakers ->
 * proxy -> log row. Holds what lives as long as the daemon (connection pools, breakers).
 */
import {emitGatewayEvent} from '../events.js'
import type {IncomingHttpHeaders, ServerResponse} from 'node:http'
import type {LookupFunction} from 'node:net'

import type {LogEntry, LogStore} from '../../store/log-store.js'
import type {Family, PolicyConfig, PolicyTarget, ProviderConfig} from '../../store/schema.js'
import {DEFAULT_BREAKER, DEFAULT_TIMEOUTS} from '../../store/schema.js'
import type {BreakerSnapshot} from '../../gateway/events.js'
import type {Clock} from './breaker.js'
import {BreakerRegistry} from './breaker.js'
import type {RequestIdentity} from './log-entry.js'
import {billedTryEntries, logEntryFor} from './log-entry.js'
import {resolveTargets, RouteError, upstreamModel} from '../../gateway/policy.js'
import type {Admission, BudgetBook} from '../budgets.js'
import {BudgetExceededError, estimateFromFacts, estimateRequest} from '../budgets.js'
import {BoundedCarry} from '../../protocols/carry.js'
import {parseJsonBytes} from '../../protocols/json-bytes.js'
import type {ProxyResult, ProxyTarget} from './proxy.js'
import type {BodyFacts} from './proxy-types.js'
import {gatewayAnswered, proxyRequest, sendFamilyError, UpstreamPools} from './proxy.js'

/** A count of tokens costs nothing: budgets let it through. */
const COUNT_TOKENS = /(?:\/count_tokens|:countTokens)(?:\?|$)/

export interface RouterOptions {
  /** Where each request's row goes (none: not logged). */
  logStore?: LogStore
  /** Where `{env}` credentials are read (default `process.env`). */
  env?: NodeJS.ProcessEnv
  /** Told about an unexpected error of one request (the daemon log). */
  onError?: (message: string) => void
  /** Clock of the breakers (tests). */
  clock?: Clock
  /** Budgets to enforce (also settable later: `router.budgets`). */
  budgets?: BudgetBook
  /** How upstream host names resolve (tests: a vendor's name to this machine; UpstreamPools). */
  lookup?: LookupFunction
}

export interface RouteInput {
  family: Family
  method: string
  /** Path and query as received (the daemon may already have removed `key=`). */
  url: string
  headers: IncomingHttpHeaders
  body: Buffer
  /**
   * The body as the entrance already parsed it (undefined: not parsed, or empty); saves the
   * router reading `model`/`stream` from the raw bytes again.
   */
  json?: unknown
  /** What the entrance's check read of the body, when it did not parse it whole. */
  facts?: BodyFacts
  /** Aborted when the client goes away. */
  signal?: AbortSignal
  /** The caller's policy (undefined: unknown policy id, answered 502). */
  policy: PolicyConfig | undefined
  providers: readonly ProviderConfig[]
  /** Who is calling, for the log row; `project` is overridden by an `x-gw-project` header. */
  identity: RequestIdentity
}

/** True when `a` holds the same providers as `b` (a list edited in place is not the same). */
function sameItems(a: readonly ProviderConfig[], b: readonly ProviderConfig[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** True when a policy's route still names the same providers and models as when it was resolved. */
function sameRoutes(a: readonly PolicyTarget[], b: readonly PolicyTarget[]): boolean {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++)
    if (a[i].provider !== b[i].provider || a[i].model !== b[i].model || a[i].translate !== b[i].translate)
      return false
  return true
}

interface ResolvedRoute {
  /** Copies of what the targets were resolved from, to notice an in-place edit. */
  providers: ProviderConfig[]
  routes: PolicyTarget[]
  targets: ProxyTarget[]
}

/** The budgets' decision with the fallback target resolved. */
type RoutedAdmission = Omit<Admission, 'fallback'> & {
  fallback?: NonNullable<Admission['fallback']> & {targets: ProxyTarget[]}
}

/** How long Router `close` waits for the requests under way to write their rows. */
const CLOSE_WAIT_MS = 1_000

/** A request that used nothing (releases reservations without counting). */
const EMPTY_ENTRY: LogEntry = {
  time: 0,
  agentId: null,
  keyPrefix: null,
  policyId: null,
  entrance: 'chat',
  requestedModel: null,
  provider: null,
  model: null,
  status: 0,
  fallback: false,
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  reasoningTokens: 0,
  latencyMs: 0,
  ttfbMs: null,
  error: null,
  project: null,
  requestId: null,
  upstreamFamily: null,
}

export class Router {
  readonly pools: UpstreamPools
  /** Opaque turn-2 state of translated routes whose clients cannot carry it (lost on restart). */
  readonly carry = new BoundedCarry()
  readonly breakers: BreakerRegistry
  /** The budgets enforced (undefined: none, and the request path does nothing for them). */
  budgets: BudgetBook | undefined
  /** Resolved targets per policy object and family (see targetsOf). */
  private readonly resolved = new WeakMap<PolicyConfig, Map<Family, ResolvedRoute>>()
  /** Requests being routed (their rows not yet written), and what `close` is told by when none are left. */
  private routing = 0
  private drained: (() => void) | undefined

  constructor(private readonly options: RouterOptions = {}) {
    this.pools = new UpstreamPools(options.lookup)
    this.breakers = new BreakerRegistry(() => DEFAULT_BREAKER, options.clock)
    this.budgets = options.budgets
  }

  /** Routes one request and logs it. Never throws for upstream or policy trouble. */
  async route(input: RouteInput, res: ServerResponse): Promise<ProxyResult> {
    const time = Date.now()
    this.routing++
    const header = input.headers['x-gw-project']
    const project = typeof header === 'string' ? header.trim() : ''
    const identity: RequestIdentity = project ? {...input.identity, project} : input.identity
    let result: ProxyResult
    const book = this.budgets
    let admission: RoutedAdmission | undefined
    try {
      if (!input.policy)
        throw new RouteError(
          502,
          `policy "${identity.policyId ?? ''}" does not exist; fix the agent's policy`,
        )
      const policy = input.policy
      if ((policy.routes[input.family] ?? []).length === 0)
        throw new RouteError(
          503,
          `No provider is configured for this route (policy "${policy.id}", ${input.family}). Add a provider and a route to the policy, then restart the gateway.`,
          'no_provider',
        )
      let targets = this.targetsOf(policy, input.family, input.providers)
      if (book !== undefined && !COUNT_TOKENS.test(input.url)) {
        admission = this.admit(book, input, identity, targets, policy)
        if (admission?.fallback) targets = admission.fallback.targets
      }
      result = await proxyRequest(
        {
          family: input.family,
          method: input.method,
          url: input.url,
          headers: input.headers,
          body: input.body,
          json: input.json,
          facts: input.facts,
        },
        res,
        {
          targets,
          fallbacks: policy.fallbacks,
          timeouts: policy.timeouts ?? DEFAULT_TIMEOUTS,
          env: this.options.env,
          pools: this.pools,
          signal: input.signal,
          carry: this.carry,
          agentId: identity.agentId ?? undefined,
          project: identity.project ?? undefined,
          policyId: identity.policyId ?? undefined,
        },
      )
    } catch (error) {
      if (error instanceof RouteError) {
        const requestId = sendFamilyError(res, input.family, error.status, error.message, {
          code: error.code,
          ...(error instanceof BudgetExceededError ? {headers: error.headers} : {}),
        })
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
    if (admission?.fallback) {
      // the row says why it went elsewhere (as a fallback after failures does)
      result.fallback = true
      result.error = result.error ? `${admission.fallback.reason} ${result.error}` : admission.fallback.reason
    }
    const entry = logEntryFor(input.family, identity, result, time)
    // (the tries of other providers whose answers the client never got but which were billed: a
    // row each, of their provider and model; most requests have none)
    const tries = result.billedTries ? billedTryEntries(input.family, identity, result, time) : undefined
    if (admission) book!.settle(admission.reservations, entry, tries)
    this.options.logStore?.append(entry)
    emitGatewayEvent({type: 'request', entry})
    if (tries)
      for (const tried of tries) {
        this.options.logStore?.append(tried)
        emitGatewayEvent({type: 'request', entry: tried})
      }
    if (--this.routing === 0) this.drained?.()
    return result
  }

  /**
   * The budgets' decision on one request (see daemon/budgets.ts): undefined when none covers it;
   * with a fallback, the one target to use instead. Throws BudgetExceededError (429), or a
   * RouteError when the fallback names a provider the gateway does not have.
   */
  private admit(
    book: BudgetBook,
    input: RouteInput,
    identity: RequestIdentity,
    targets: readonly ProxyTarget[],
    policy: PolicyConfig,
  ): RoutedAdmission | undefined {
    const e =
      (input.json === undefined && input.facts
        ? estimateFromFacts(input.family, input.url, input.facts, input.body.length)
        : undefined) ??
      estimateRequest(input.family, input.url, input.json ?? parsedBody(input.body), input.body.length)
    const first = targets[0]
    const admission = book.admit(identity, {
      provider: first?.provider.name ?? null,
      model: (first ? upstreamModel(first, e.requestedModel) : e.requestedModel) ?? null,
      inputTokens: e.inputTokens,
      outputTokens: e.outputTokens,
    })
    if (!admission?.fallback) return admission as RoutedAdmission | undefined
    const {provider: name, model} = admission.fallback
    const provider = input.providers.find((p) => p.name === name)
    if (!provider) {
      book.settle(admission.reservations, {...EMPTY_ENTRY, time: Date.now()})
      throw new RouteError(
        503,
        `${admission.fallback.reason} The fallback provider "${name}" is not configured; fix the budget (\`gwctl budgets set ... --on-exceed\`) or add the provider.`,
        'budget_fallback_unavailable',
      )
    }
    const target: ProxyTarget = {
      provider,
      breaker: this.breakers.get(provider.name, policy.breaker ?? DEFAULT_BREAKER),
      ...(model ? {model} : {}),
      ...(provider.family !== input.family ? {translate: true as const} : {}),
    }
    return {...admission, fallback: {...admission.fallback, targets: [target]}}
  }

  /**
   * The targets of `family` in `policy`, each with its provider's breaker: resolved once per
   * policy object and provider list (a reload brings new ones), not per request. The breaker
   * still takes the policy's settings on every request, as when it was looked up each time.
   */
  private targetsOf(
    policy: PolicyConfig,
    family: Family,
    providers: readonly ProviderConfig[],
  ): readonly ProxyTarget[] {
    let byFamily = this.resolved.get(policy)
    if (!byFamily) {
      byFamily = new Map()
      this.resolved.set(policy, byFamily)
    }
    const settings = policy.breaker ?? DEFAULT_BREAKER
    const routes = policy.routes[family] ?? []
    const cached = byFamily.get(family)
    if (cached && sameItems(cached.providers, providers) && sameRoutes(cached.routes, routes)) {
      for (const target of cached.targets) target.breaker!.configure(settings)
      return cached.targets
    }
    // throws RouteError for a policy that cannot route `family`: not cached, so it is thrown again
    const targets = resolveTargets(policy, family, providers).map((t) => ({
      ...t,
      breaker: this.breakers.get(t.provider.name, settings),
    }))
    byFamily.set(family, {
      providers: [...providers],
      routes: routes.map((r) => ({...r})),
      targets,
    })
    return targets
  }

  /** Breaker state of each provider (closed for those never used). */
  breakerStates(providers: readonly ProviderConfig[]): BreakerSnapshot[] {
    return providers.map((p) => this.breakers.snapshotOf(p.name))
  }

  /**
   * Closes the pools, which first ends the JSON answers read on after their clients left (relay.ts:
   * a graceful close would wait for them, up to the idle timeout), and waits, up to
   * {@link CLOSE_WAIT_MS}, for the requests under way to write their rows: the daemon's stop
   * writes the queued rows after this, and is killed at its drain bound plus 5 s (review72 #2).
   * By then the server has let every client go, so what is left ends at once (an upstream request
   * is aborted when its client leaves).
   */
  async close(): Promise<void> {
    const closed = this.pools.close()
    if (this.routing > 0)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, CLOSE_WAIT_MS)
        timer.unref()
        this.drained = () => {
          clearTimeout(timer)
          resolve()
        }
      })
    this.drained = undefined
    await closed
  }
}

/** A body the entrance did not parse whole, parsed for a budget's estimate (undefined: not JSON). */
function parsedBody(body: Buffer): unknown {
  if (body.length === 0) return undefined
  try {
    return parseJsonBytes(body)
  } catch {
    return undefined
  }
}
