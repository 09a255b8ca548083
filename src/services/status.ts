/** The one-time snapshot of `gwctl status` (spec 10). */
import type {RouteCount} from '../daemon/views.js'
import {agentViews, agentsPerRoute, latestRequestAt} from '../daemon/views.js'
import {homeFile} from '../store/paths.js'
import type {GatewayInfo} from './gateway.js'
import {getGatewayInfo} from './gateway.js'

export interface StatusSnapshot {
  healthy: boolean
  gateway: Pick<GatewayInfo, 'state' | 'url' | 'port' | 'pid' | 'version' | 'uptimeSeconds'>
  /** Agents known to the gateway (discovery of local agents adds to this later). */
  agents: {discovered: number; enabled: number}
  agentsPerRoute: RouteCount[]
  /** Unix seconds of the latest model request, or null. */
  latestRequestAt: number | null
  /** Why the snapshot is not healthy, when it is not. */
  problem?: string
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
  if (gw.daemon) {
    return {
      healthy: true,
      gateway,
      agents: {discovered: gw.daemon.agents, enabled: gw.daemon.enabledAgents},
      agentsPerRoute: gw.daemon.agentsPerRoute as RouteCount[],
      latestRequestAt: gw.daemon.latestRequestAt,
    }
  }
  let views: ReturnType<typeof agentViews> = []
  let perRoute: RouteCount[] = []
  let latest: number | null = null
  let problem =
    gw.state === 'Unhealthy'
      ? 'The gateway process is alive but does not answer.'
      : 'The gateway is not running.'
  try {
    // Loaded only here: with the daemon answering, the snapshot comes from it.
    const {StateStore} = await import('../store/state.js')
    const store = await StateStore.open(homeFile('state'))
    views = agentViews(store.data)
    latest = latestRequestAt(store.data)
    // A policy without any target gets default routes when the gateway starts (README "Routing"):
    // with the gateway stopped it is not "no provider" yet.
    const empty = new Set(
      store.data.policies.filter((p) => Object.values(p.routes).every((t) => !t?.length)).map((p) => p.id),
    )
    perRoute = agentsPerRoute(views).map((r) =>
      empty.has(r.policyId) && r.route.endsWith('(no provider)')
        ? {...r, route: r.route.replace('(no provider)', '(default routes at start)')}
        : r,
    )
  } catch (error) {
    problem += ` ${(error as Error).message}`
  }
  return {
    healthy: false,
    gateway,
    agents: {discovered: views.length, enabled: views.filter((v) => v.enabled).length},
    agentsPerRoute: perRoute,
    latestRequestAt: latest,
    problem,
  }
}
