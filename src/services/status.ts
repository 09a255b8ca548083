/** The one-time snapshot of `gwctl status` (spec 10). */
import {readFileSync} from 'node:fs'

import type {BudgetView} from '../gateway/budgets.js'
import type {RouteCount} from '../gateway/views.js'
import {discoverAgents} from '../agent-tools/discovery.js'
import type {BindingProblem} from './agent-binding.js'
import {agentViews, agentsPerRoute, latestRequestAt} from '../gateway/views.js'
import {homeFile} from '../store/paths.js'
import type {GatewayState} from '../store/state-schema.js'
import type {GatewayInfo} from './gateway.js'
import {HUNG_HINT, PROBE_TIMEOUT_MS, getGatewayInfo} from './gateway.js'

export interface StatusSnapshot {
  healthy: boolean
  gateway: Pick<GatewayInfo, 'state' | 'url' | 'port' | 'pid' | 'version' | 'uptimeSeconds'>
  /** Agents known to the gateway (discovery of local agents adds to this later). */
  agents: {discovered: number; enabled: number}
  /** Coding agents found on this machine and how many are bound to the gateway. */
  localAgents: {discovered: number; bound: number; stale: Array<{tool: string; problems: BindingProblem[]}>}
  agentsPerRoute: RouteCount[]
  /** Unix seconds of the latest model request, or null. */
  latestRequestAt: number | null
  /** Budgets with spent / limit and reset time (live while the gateway runs, else from logs.db). */
  budgets: BudgetView[]
  /** The gateway answers, but works in a degraded way (e.g. its log store cannot write). */
  degraded?: string
  /** Why the snapshot is not healthy, when it is not. */
  problem?: string
  /** The command that fixes it, when it is not healthy. */
  fix?: string
}

/** The snapshot: from the running daemon, or from the state file when it is stopped. */
export async function getStatus(options: {signal?: AbortSignal} = {}): Promise<StatusSnapshot> {
  const gw = await getGatewayInfo(options)
  const gateway = {
    state: gw.state,
    url: gw.url,
    port: gw.port,
    pid: gw.pid,
    version: gw.version,
    uptimeSeconds: gw.uptimeSeconds,
  }
  // The state file, read once: a running daemon answers for everything but the bindings, so
  // then the store (lowdb, the schema) is opened only when the file holds bindings.
  let state: GatewayState | undefined
  let stateProblem = ''
  if (!gw.daemon || mayHoldBindings(homeFile('state'))) {
    try {
      const {StateStore} = await import('../store/state.js')
      state = (await StateStore.open(homeFile('state'))).data
    } catch (error) {
      stateProblem = (error as Error).message
    }
  }
  const localAgents = await localAgentCounts(state, gw.port, Boolean(gw.daemon))
  if (gw.daemon) {
    return {
      healthy: true,
      gateway,
      localAgents,
      agents: {discovered: gw.daemon.agents, enabled: gw.daemon.enabledAgents},
      agentsPerRoute: gw.daemon.agentsPerRoute as RouteCount[],
      latestRequestAt: gw.daemon.latestRequestAt,
      budgets: gw.daemon.budgets ?? [],
      ...(gw.daemon.degraded ? {degraded: gw.daemon.degraded} : {}),
    }
  }
  let views: ReturnType<typeof agentViews> = []
  let perRoute: RouteCount[] = []
  let latest: number | null = null
  const hung = gw.state === 'Unhealthy'
  let problem = hung
    ? `The gateway process (pid ${gw.pid}) is alive but did not answer within ${PROBE_TIMEOUT_MS / 1000} s.`
    : 'The gateway is not running.'
  const fix = hung ? HUNG_HINT : 'Start it with `gwctl gateway start`.'
  if (state) {
    views = agentViews(state)
    latest = latestRequestAt(state)
    // A policy without any target gets default routes when the gateway starts (README "Routing"):
    // with the gateway stopped it is not "no provider" yet.
    const empty = new Set(
      state.policies.filter((p) => Object.values(p.routes).every((t) => !t?.length)).map((p) => p.id),
    )
    perRoute = agentsPerRoute(views, state.providers).map((r) =>
      empty.has(r.policyId) && r.route.endsWith('(no provider)')
        ? {...r, route: r.route.replace('(no provider)', '(default routes at start)')}
        : r,
    )
  } else problem += ` ${stateProblem}`
  return {
    healthy: false,
    gateway,
    localAgents,
    agents: {discovered: views.length, enabled: views.filter((v) => v.enabled).length},
    agentsPerRoute: perRoute,
    latestRequestAt: latest,
    budgets: state?.budgets?.length
      ? await import('./budgets.js').then((m) => m.budgetsFromDatabase(state)).catch(() => [])
      : [],
    problem,
    fix,
  }
}

/** False only when the state file reads as JSON with an empty (or no) binding list. */
function mayHoldBindings(path: string): boolean {
  try {
    const {bindings} = JSON.parse(readFileSync(path, 'utf8')) as {bindings?: unknown}
    if (bindings === undefined) return false
    return !Array.isArray(bindings) || bindings.length > 0
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ENOENT'
  }
}

/** Discovered coding agents, bound ones, and each stale binding with its fix. */
async function localAgentCounts(
  state: GatewayState | undefined,
  port: number,
  gatewayRunning: boolean,
): Promise<StatusSnapshot['localAgents']> {
  const discovered = discoverAgents().filter((d) => d.installed && !d.parentName).length
  if (!state?.bindings?.length) return {discovered, bound: 0, stale: []}
  try {
    // Loaded only when an agent is bound: the binding checks read the agents' config files.
    const {bindingStatuses} = await import('./agent-binding.js')
    const statuses = [...(await bindingStatuses(state, {port, gatewayRunning}))]
    return {
      discovered,
      bound: statuses.filter(([, s]) => s.state !== 'unbound').length,
      stale: statuses
        .filter(([, s]) => s.state === 'stale')
        .map(([tool, s]) => ({tool, problems: s.problems ?? []})),
    }
  } catch {
    return {discovered, bound: 0, stale: []}
  }
}
