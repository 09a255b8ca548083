/**
 * The management endpoints of routing: `/api/logs`, `/api/usage`, `/api/providers` and
 * `/api/dashboard` (spec 4.3), plus the circuit state the agent views show per target.
 *
 * Shapes (field names are the log store's; see README "Management API"):
 * - `GET /api/logs?agent_id&policy_id&status&since&limit` -> `{logs: LogRow[]}`, newest first.
 * - `GET /api/usage?<same filters but limit>&pivot` -> `{pivot, rows: UsageRow[], totals}`.
 * - `GET /api/providers[?agent=ID_OR_NAME]` -> `{providers: [{...provider, circuit, families, policies}]}`.
 * - `GET /api/dashboard` -> `{routes, recent_requests, recent_usage, gateway}`.
 * A bad parameter value is a 400 naming it (`code: invalid_parameter`, `param`).
 */
import type {LogFilters, LogRow, Pivot, StatusFilter, UsageRow} from '../store/log-query.js'
import {isDamage} from '../store/log-store.js'
import {markDamaged} from '../store/log-db-check.js'
import {PIVOTS, STATUS_FILTERS, usageTotals} from '../store/log-query.js'
import type {GatewayState} from '../store/state-schema.js'
import type {BreakerSnapshot} from '../gateway/events.js'
import {redactProvider} from '../gateway/policy.js'
import type {Routing} from './routing.js'
import {routedState} from './routing.js'
import {budgetViews} from './budgets.js'
import type {GatewayContext, GatewayRequest} from './server.js'
import {sendJson} from './server.js'
import type {AgentView} from '../gateway/views.js'
import {agentViews, routeLabel} from '../gateway/views.js'
import type {Family, PolicyTarget, ProviderConfig} from '../store/schema.js'
import {FAMILIES} from '../store/schema.js'

/** Most rows one `/api/logs` call returns. */
export const MAX_LOG_LIMIT = 10_000

/** A query parameter with a value the endpoint does not accept. */
export class ParameterError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message)
  }
}

function sendParameterError(request: GatewayRequest, error: ParameterError): void {
  sendJson(request.res, 400, {
    error: {
      message: error.message,
      type: 'invalid_request_error',
      param: error.param,
      code: 'invalid_parameter',
    },
  })
}

function single(query: URLSearchParams, name: string): string | undefined {
  const values = query.getAll(name)
  if (values.length === 0) return undefined
  if (values.length > 1) throw new ParameterError(name, `Query parameter "${name}" is given more than once.`)
  const value = values[0].trim()
  if (value === '') throw new ParameterError(name, `Query parameter "${name}" is empty.`)
  return value
}

/** Parses the log filters of spec 4.3 (`limit` only when `withLimit`). Throws {@link ParameterError}. */
export function parseLogFilters(query: URLSearchParams, withLimit = true): LogFilters {
  const filters: LogFilters = {}
  const agentId = single(query, 'agent_id')
  if (agentId !== undefined) filters.agentId = agentId
  const policyId = single(query, 'policy_id')
  if (policyId !== undefined) filters.policyId = policyId
  const status = single(query, 'status')
  if (status !== undefined) {
    if (!STATUS_FILTERS.includes(status as StatusFilter))
      throw new ParameterError(
        'status',
        `Query parameter "status" must be one of ${STATUS_FILTERS.join(', ')} (got "${status}").`,
      )
    filters.status = status as StatusFilter
  }
  const since = single(query, 'since')
  if (since !== undefined) {
    if (!/^\d+(\.\d+)?$/.test(since))
      throw new ParameterError('since', `Query parameter "since" must be Unix seconds (got "${since}").`)
    filters.since = Number(since)
  }
  if (withLimit) {
    const limit = single(query, 'limit')
    if (limit !== undefined) {
      if (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > MAX_LOG_LIMIT)
        throw new ParameterError(
          'limit',
          `Query parameter "limit" must be an integer from 1 to ${MAX_LOG_LIMIT} (got "${limit}").`,
        )
      filters.limit = Number(limit)
    }
  } else if (query.has('limit')) {
    // accepted and ignored: usage sums every matching row
  }
  return filters
}

/** Parses `pivot` (absent: one row `all`). Throws {@link ParameterError}. */
export function parsePivot(query: URLSearchParams): Pivot | undefined {
  const pivot = single(query, 'pivot')
  if (pivot === undefined) return undefined
  if (!PIVOTS.includes(pivot as Pivot))
    throw new ParameterError(
      'pivot',
      `Query parameter "pivot" must be one of ${PIVOTS.join(', ')} (got "${pivot}").`,
    )
  return pivot as Pivot
}

/** A policy target with its provider's breaker state (null: the provider is not known). */
export interface TargetView extends PolicyTarget {
  circuit: BreakerSnapshot | null
}

function targetViews(routing: Routing, targets: readonly PolicyTarget[]): TargetView[] {
  const known = new Set(routing.providers.map((p) => p.name))
  return targets.map((t) => ({
    ...t,
    circuit: known.has(t.provider) ? routing.router.breakers.snapshotOf(t.provider) : null,
  }))
}

/** `/api/agents` entries: routes as routed (default routes filled in), each target with its circuit. */
export function routedAgentViews(state: GatewayState, routing: Routing | undefined): AgentView[] {
  const views = agentViews(routedState(state, routing))
  if (!routing) return views
  return views.map((v) => ({
    ...v,
    route: {family: v.route.family, targets: targetViews(routing, v.route.targets)},
  }))
}

export interface ProviderView extends ProviderConfig {
  circuit: BreakerSnapshot | null
  families: Family[]
  /** Ids of the policies with a target naming this provider. */
  policies: string[]
  /**
   * Set when the credential's variable is not in the gateway's own environment (it reads it there
   * at each request): every request to the provider fails until the gateway is started with it.
   */
  credentialUnset?: true
}

function providerView(routing: Routing, provider: ProviderConfig): ProviderView {
  const policies = [...routing.policies.values()]
    .filter((p) => FAMILIES.some((f) => (p.routes[f] ?? []).some((t) => t.provider === provider.name)))
    .map((p) => p.id)
  const credential = provider.credential
  const unset = credential !== undefined && 'env' in credential && !process.env[credential.env]
  return {
    ...redactProvider(provider),
    circuit: routing.router.breakers.snapshotOf(provider.name),
    families: [provider.family],
    policies,
    ...(unset ? {credentialUnset: true as const} : {}),
  }
}

/** Every provider, or (with `agent`) those the agent's policy routes to, in route order per family. */
export function providerViews(
  routing: Routing,
  state: GatewayState,
  agent?: string,
): {providers: ProviderView[]} | {notFound: string} | {ambiguous: string[]} {
  if (agent === undefined) return {providers: routing.providers.map((p) => providerView(routing, p))}
  let found = state.agents.find((a) => a.id === agent)
  if (!found) {
    const named = state.agents.filter((a) => a.name === agent)
    if (named.length > 1) return {ambiguous: named.map((a) => a.id)}
    found = named[0]
  }
  if (!found) return {notFound: agent}
  const policy = routing.policies.get(found.policyId)
  const byName = new Map(routing.providers.map((p) => [p.name, p]))
  const chosen: ProviderConfig[] = []
  for (const family of FAMILIES)
    for (const target of policy?.routes[family] ?? []) {
      const provider = byName.get(target.provider)
      if (provider && (provider.family === family || target.translate) && !chosen.includes(provider))
        chosen.push(provider)
    }
  return {providers: chosen.map((p) => providerView(routing, p))}
}

export interface RouteView {
  route: string
  policyId: string
  family: Family
  /** Agents on this route. */
  agents: number
  targets: TargetView[]
}

/** Every route with targets or agents: policy x family, with each target's circuit. */
export function routeViews(state: GatewayState, routing: Routing): RouteView[] {
  const views = routedAgentViews(state, routing)
  const routes = new Map<string, RouteView>()
  for (const policy of routing.policies.values())
    for (const family of FAMILIES) {
      const targets = policy.routes[family] ?? []
      if (targets.length === 0) continue
      routes.set(`${policy.id}/${family}`, {
        route: routeLabel(policy.id, {family, targets}, routing.providers),
        policyId: policy.id,
        family,
        agents: 0,
        targets: targetViews(routing, targets),
      })
    }
  for (const v of views) {
    const key = `${v.policyId}/${v.route.family}`
    const entry =
      routes.get(key) ??
      ({
        route: routeLabel(v.policyId, {family: v.route.family, targets: []}),
        policyId: v.policyId,
        family: v.route.family,
        agents: 0,
        targets: [],
      } satisfies RouteView)
    entry.agents++
    routes.set(key, entry)
  }
  return [...routes.values()]
}

/**
 * The log database went bad while the gateway runs (a damaged page that the start's check did not
 * see, or damage done since): 503 with a code the CLI turns into a config error (exit 3) with the
 * fix, and the gateway says it is degraded. Model traffic goes on; a restart moves the file aside.
 */
function damagedLogDb(request: GatewayRequest, context: GatewayContext, error: unknown): void {
  const message = `The request log database is damaged (${(error as Error).message}).`
  // the next start moves it aside
  if (context.routing) markDamaged(context.routing.logs.path, (error as Error).message)
  context.degrade?.(
    'log database',
    `it is damaged (${(error as Error).message}); \`gwctl gateway restart\` moves it aside`,
  )
  sendJson(request.res, 503, {
    error: {
      message: `${message} Run \`gwctl gateway restart\`: it moves the file aside (logs.db.damaged-<time>) and starts a new one.`,
      type: 'api_error',
      param: null,
      code: 'log_db_damaged',
    },
  })
}

function noRouting(request: GatewayRequest): void {
  sendJson(request.res, 503, {
    error: {
      message: 'Routing is not running in this gateway.',
      type: 'api_error',
      param: null,
      code: 'no_routing',
    },
  })
}

/** `GET /api/logs`. */
export function logsHandler(request: GatewayRequest, context: GatewayContext): void {
  if (!context.routing) return noRouting(request)
  let filters: LogFilters
  try {
    filters = parseLogFilters(request.query)
  } catch (error) {
    if (error instanceof ParameterError) return sendParameterError(request, error)
    throw error
  }
  let logs: LogRow[]
  try {
    logs = context.routing.logs.queryLogs(filters)
  } catch (error) {
    if (isDamage(error)) return damagedLogDb(request, context, error)
    throw error
  }
  sendJson(request.res, 200, {logs})
}

/** `GET /api/usage`. */
export function usageHandler(request: GatewayRequest, context: GatewayContext): void {
  if (!context.routing) return noRouting(request)
  let filters: LogFilters
  let pivot: Pivot | undefined
  try {
    filters = parseLogFilters(request.query, false)
    pivot = parsePivot(request.query)
  } catch (error) {
    if (error instanceof ParameterError) return sendParameterError(request, error)
    throw error
  }
  let rows: UsageRow[]
  try {
    rows = context.routing.logs.usage({...filters, pivot})
  } catch (error) {
    if (isDamage(error)) return damagedLogDb(request, context, error)
    throw error
  }
  sendJson(request.res, 200, {pivot: pivot ?? null, rows, totals: usageTotals(rows)})
}

/** `GET /api/providers[?agent=]`. */
export function providersHandler(request: GatewayRequest, context: GatewayContext): void {
  if (!context.routing) return noRouting(request)
  let agent: string | undefined
  try {
    agent = single(request.query, 'agent')
  } catch (error) {
    if (error instanceof ParameterError) return sendParameterError(request, error)
    throw error
  }
  const result = providerViews(context.routing, context.store.data, agent)
  if ('notFound' in result) {
    sendJson(request.res, 404, {
      error: {
        message: `No agent has the id or name "${result.notFound}". See GET /api/agents.`,
        type: 'not_found_error',
        param: 'agent',
        code: 'unknown_agent',
      },
    })
    return
  }
  if ('ambiguous' in result) {
    sendJson(request.res, 400, {
      error: {
        message: `Several agents are named "${agent}" (${result.ambiguous.join(', ')}); give the agent id.`,
        type: 'invalid_request_error',
        param: 'agent',
        code: 'ambiguous_agent',
      },
    })
    return
  }
  sendJson(request.res, 200, result)
}

/** `GET /api/dashboard`. */
export function dashboardHandler(request: GatewayRequest, context: GatewayContext): void {
  if (!context.routing) return noRouting(request)
  const {routing} = context
  sendJson(request.res, 200, {
    routes: routeViews(context.store.data, routing),
    recent_requests: routing.logs.queryLogs({limit: 20}),
    recent_usage: routing.logs.usage({pivot: 'model', since: Math.floor(Date.now() / 1000) - 86_400}),
    budgets: budgetViews(context),
    gateway: {
      pid: process.pid,
      port: context.port,
      uptime_s: Math.floor((Date.now() - context.startedAt) / 1000),
      version: context.version,
    },
  })
}
