/**
 * What the terminal app reads and does, through the same services as the commands: one snapshot
 * loader, and the actions (rotate a key, change a policy, bind or unbind a route, reorder a
 * route's targets, start the gateway). The app takes them as an object, so tests pass fakes.
 */
import type {PolicyConfig} from '../../daemon/types.js'
import {getDashboard} from '../../services/dashboard.js'
import {liveGatewayPort} from '../../services/gateway-api.js'
import type {EventHandlers} from '../../services/gateway-events.js'
import {followEvents} from '../../services/gateway-events.js'
import {issueGatewayKey, listAgents} from '../../services/gateway-keys.js'
import {getLogs, getUsage} from '../../services/logs.js'
import {listPolicies, routePolicy} from '../../services/policies.js'
import type {AppAgent, AppData, AppUsageRow} from './model.js'

export const USAGE_PIVOTS = ['agent', 'model', 'provider', 'project', 'key'] as const
export type UsagePivot = (typeof USAGE_PIVOTS)[number]

export interface AppActions {
  load(signal: AbortSignal): Promise<AppData>
  /** Issues a new key for the agent (the old one stops working); returns the key, shown once. */
  rotateKey(agent: AppAgent): Promise<string>
  /** Re-issues the agent's key with another policy; returns the new key, shown once. */
  setPolicy(agent: AppAgent, policyId: string): Promise<string>
  setBinding(agent: AppAgent, bound: boolean): Promise<string>
  /** Writes a route's targets in this order; returns what to say (the restart it needs). */
  reorder(policyId: string, family: string, targets: string[]): Promise<string>
  startGateway(): Promise<string>
  subscribe(handlers: EventHandlers, signal: AbortSignal): Promise<void>
}

/** The same request as `gwctl key issue` for this agent again: a new key, same agent. */
function reissue(agent: AppAgent, policyId: string = agent.policyId) {
  return issueGatewayKey({
    agentName: agent.name,
    agentType: agent.type,
    policyId,
    ...(agent.parentAgentId ? {parentAgentId: agent.parentAgentId} : {}),
    ...(agent.sourceTool ? {sourceTool: agent.sourceTool} : {}),
    ...(agent.configPath ? {configPath: agent.configPath} : {}),
    ...(agent.employee ? {employeeName: agent.employee.name, employeeContact: agent.employee.contact} : {}),
  })
}

/**
 * Route binding: `gwctl agents enable|disable` (src/services/agent-binding.ts, the same service
 * as the commands). A discovered agent is named by its tool (`claude-code`), others by name.
 */
export async function setAgentBinding(agent: AppAgent, bound: boolean): Promise<string> {
  const {disableAgents, enableAgent} = await import('../../services/agent-binding.js')
  const target = agent.tool ?? agent.name
  if (bound) {
    const r = await enableAgent({agent: target})
    if (r.outcome === 'already-bound') return `${r.tool} is already bound to ${r.baseUrl}; nothing changed.`
    return `${r.tool} bound to ${r.baseUrl} with key ${r.keyPrefix} (wrote ${r.files.join(', ')}).`
  }
  const [r] = await disableAgents({agent: target})
  if (!r) return `${agent.name} was not bound; nothing changed.`
  return `${r.tool} unbound: ${r.restore === 'exact' ? 'files restored byte for byte' : 'your later edits kept'}${r.keyRevoked ? ', key revoked' : ''}.`
}

/** Agents with keys and agents discovered on this machine (`gwctl agents list --all`). */
async function loadAgents(signal: AbortSignal): Promise<AppAgent[]> {
  const {listAgentRows} = await import('../../services/agent-binding.js')
  const rows = await listAgentRows({all: true, signal})
  return rows.map((r) => ({
    ...r,
    agentId: r.agentId ?? `(not keyed) ${r.tool ?? r.name}`,
    createdAt: r.createdAt ?? 0,
    keyed: r.agentId !== null,
  }))
}

async function loadData(signal: AbortSignal): Promise<AppData> {
  const port = await liveGatewayPort(signal)
  const since = Math.floor(Date.now() / 1000) - 28 * 86_400
  const policies: PolicyConfig[] = await listPolicies().catch(() => [])
  const agents = await loadAgents(signal).catch(async () => (await listAgents({signal})) as AppAgent[])
  if (port === undefined) {
    const [requests, history] = await Promise.all([
      getLogs({limit: 200, signal}).catch(() => ({logs: []})),
      getLogs({since, limit: 10_000, signal}).catch(() => ({logs: []})),
    ])
    return {
      gateway: null,
      agents,
      policies,
      routes: [],
      requests: requests.logs,
      history: history.logs,
      usage: {},
      loadedAt: Date.now(),
    }
  }
  const [dashboard, requests, history, ...usage] = await Promise.all([
    getDashboard({port, signal}),
    getLogs({limit: 200, signal}),
    getLogs({since, limit: 10_000, signal}),
    ...USAGE_PIVOTS.map((pivot) =>
      getUsage({pivot, since, signal}).catch(() => ({rows: [] as AppUsageRow[]})),
    ),
  ])
  return {
    gateway: dashboard.gateway,
    agents,
    policies,
    routes: dashboard.routes,
    requests: requests.logs,
    history: history.logs,
    usage: Object.fromEntries(USAGE_PIVOTS.map((p, i) => [p, usage[i].rows])),
    loadedAt: Date.now(),
  }
}

/** The app's actions on this machine's gateway. */
export const liveActions: AppActions = {
  load: loadData,
  async rotateKey(agent) {
    return (await reissue(agent)).keyValue
  },
  async setPolicy(agent, policyId) {
    return (await reissue(agent, policyId)).keyValue
  },
  setBinding: setAgentBinding,
  async reorder(policyId, family, targets) {
    await routePolicy(policyId, family, targets)
    const {restartGateway} = await import('../../services/gateway.js')
    await restartGateway({})
    return `Route ${policyId}/${family} saved; the gateway restarted to apply it (gateway restart).`
  },
  async startGateway() {
    const {startGateway} = await import('../../services/gateway.js')
    const info = await startGateway({})
    return `Gateway started on 127.0.0.1:${info.port}.`
  },
  subscribe(handlers, signal) {
    return followEvents(() => liveGatewayPort(signal).catch(() => undefined), handlers, {signal})
  },
}
