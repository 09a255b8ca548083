/**
 * `gwctl dashboard`: what `GET /api/dashboard` returns, and its one-shot text form. The live
 * Ink view is in src/ui/dashboard (loaded only when drawn).
 */
import {GatewayDownError} from '../core/errors.js'
import type {BudgetView} from '../gateway/budgets.js'
import type {BreakerSnapshot} from '../gateway/events.js'
import type {LogRow, UsageRow} from '../store/log-query.js'
import {gatewayGet, liveGatewayPort} from './gateway-api.js'
import {agentNames, withAgentNames} from './logs.js'

/** One target of a route, as the dashboard shows it. */
export interface DashboardTarget {
  provider: string
  model?: string
  circuit?: BreakerSnapshot | null
  /** Accepted too: a breaker snapshot under `breaker`, or its state alone. */
  breaker?: Pick<BreakerSnapshot, 'state'> | null
  state?: string
}

/** One route (policy + entrance family); fields beyond these are passed through. */
export interface DashboardRoute {
  route?: string
  policyId?: string
  family?: string
  agents?: number
  targets?: DashboardTarget[]
  [field: string]: unknown
}

export interface DashboardData {
  routes: DashboardRoute[]
  /** Newest first, with each agent's name beside its id. */
  recent_requests: Array<LogRow & {agentName?: string | null}>
  recent_usage: UsageRow[]
  gateway: {pid: number; port: number; uptime_s: number; version: string}
  /** Budgets with what they spent in their period (the gateway's live counters). */
  budgets?: BudgetView[]
}

/** The dashboard from the running gateway; exit 6 when it is stopped. */
export async function getDashboard(
  options: {signal?: AbortSignal; port?: number} = {},
): Promise<DashboardData> {
  const port = options.port ?? (await liveGatewayPort(options.signal))
  if (port === undefined) {
    throw new GatewayDownError('The gateway is not running.', {hint: 'Start it with `gwctl gateway start`.'})
  }
  const [data, names] = await Promise.all([
    gatewayGet<Partial<DashboardData>>(port, '/api/dashboard', {}, options.signal),
    agentNames(options.signal),
  ])
  return {
    routes: data.routes ?? [],
    recent_requests: withAgentNames(data.recent_requests ?? [], names),
    recent_usage: data.recent_usage ?? [],
    gateway: data.gateway ?? {pid: 0, port, uptime_s: 0, version: ''},
    // as the gateway sends it (every gateway with budgets sends the list, empty or not)
    ...(data.budgets ? {budgets: data.budgets} : {}),
  }
}
