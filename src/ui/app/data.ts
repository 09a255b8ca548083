/**
 * What the terminal app reads and does, through the same services as the commands: one snapshot
 * loader, and the actions (rotate a key, change a policy, bind or unbind a route, reorder a
 * route's targets, start the gateway). The app takes them as an object, so tests pass fakes.
 */
import type {PolicyConfig} from '../../store/schema.js'
import {getDashboard} from '../../services/dashboard.js'
import {liveGatewayPort} from '../../services/gateway-api.js'
import type {EventHandlers} from '../../services/gateway-events.js'
import {followEvents} from '../../services/gateway-events.js'
import {listAgents} from '../../services/gateway-keys.js'
import {startPlan} from '../../services/gateway.js'
import {getLogs} from '../../services/logs.js'
import {listPolicies, routePolicy} from '../../services/policies.js'
import type {Pricer} from '../../services/usage-cost.js'
import type {LogEntry} from '../../store/log-store.js'
import type {UsageSource} from '../../store/usage-query.js'
import type {AppAgent, AppData, AppUsageRow} from './model.js'
import {uncachedInput} from './model-usage.js'

export const USAGE_PIVOTS = ['agent', 'model', 'provider', 'tool', 'day', 'project', 'key'] as const
export type UsagePivot = (typeof USAGE_PIVOTS)[number]

/** What an action did: said in a box; a new key that no file holds is shown once in it. */
export interface ActionResult {
  text: string
  key?: string
}

/** How `S` starts a stopped gateway: as it last ran (`gwctl gateway start` with these flags). */
export interface StartPlan {
  command: string
  /** From the last recorded start (else the defaults: configured port, no simulator). */
  last: boolean
  sim: boolean
  port: number
}

export interface AppActions {
  /** Everything: on start and on each (re)connect to the gateway. */
  load(signal: AbortSignal): Promise<AppData>
  /** Only the agents (an `agent` event); without it the app reloads everything. */
  loadAgents?(signal: AbortSignal): Promise<AppAgent[]>
  /**
   * Only the usage groupings of one source (a `usage` event, the user switching source); without
   * it the app reloads everything.
   */
  loadUsage?(signal: AbortSignal, source?: UsageSource): Promise<AppData['usage']>
  /** The cost of one finished request (null: unpriced), once the price table is loaded. */
  cost?(entry: LogEntry): number | null | undefined
  /**
   * A new key for the agent (the old one stops working): a bound agent's config gets it (the
   * binding service, as `agents enable --rotate`), any other agent's key is returned, shown once.
   */
  rotateKey(agent: AppAgent): Promise<ActionResult>
  /** Moves the agent to another policy, which re-issues its key as `rotateKey` does. */
  setPolicy(agent: AppAgent, policyId: string): Promise<ActionResult>
  /** Binds (`agents enable`) or unbinds (`agents disable`) the agent's own config. */
  setBinding(agent: AppAgent, bound: boolean): Promise<string>
  /** The files binding this agent writes and the base URL, for the confirmation. */
  bindingPlan?(agent: AppAgent): Promise<{files: string[]; baseUrl: string}>
  /** Writes a route's targets in this order; returns what to say (the restart it needs). */
  reorder(policyId: string, family: string, targets: string[]): Promise<string>
  /** How `startGateway` will start it, for the confirmation. */
  startPlan?(): StartPlan
  startGateway(): Promise<string>
  subscribe(handlers: EventHandlers, signal: AbortSignal): Promise<void>
}

/**
 * Rotation and policy change: the binding service's `rotateAgentKey`, which goes through the
 * agent's binding when its config is bound (the config gets the new key) and re-issues the key
 * otherwise (shown once).
 */
async function rotate(agent: AppAgent, policyId?: string): Promise<ActionResult> {
  const {rotateAgentKey} = await import('../../services/agent-binding.js')
  const r = await rotateAgentKey({agentId: agent.agentId, ...(policyId ? {policyId} : {})})
  const moved = policyId ? ` now uses policy ${r.policyId} and` : ''
  if (r.via === 'binding') {
    const e = r.enable
    return {
      text: `${r.agentName}${moved} has a new key ${e.keyPrefix}, written into ${e.files.join(', ')} (bound to ${e.baseUrl}); the old key no longer works.`,
    }
  }
  return {
    text: `${r.agentName}${moved} has a new key (shown once; copy it now, no file holds it):`,
    key: r.keyValue,
  }
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

const agentsOrKeys = (signal: AbortSignal) =>
  loadAgents(signal).catch(async () => (await listAgents({signal})) as AppAgent[])

/** The price table of `gwctl usage`, loaded once with the first usage. */
let pricer: Pricer | undefined

/**
 * Usage of the last 28 days per grouping, with cost: the same service and price table as
 * `gwctl usage --source gateway|history|all` (read from the log database, so it shows while the
 * gateway is stopped too). History and all scan the agents' logs first when no daemon runs, so
 * their groupings are asked one after the other.
 */
async function loadUsage(signal: AbortSignal, source: UsageSource = 'gateway'): Promise<AppData['usage']> {
  const since = Math.floor(Date.now() / 1000) - 28 * 86_400
  const [{usageReport}, {createPricer}] = await Promise.all([
    import('../../services/usage.js'),
    import('../../services/usage-cost.js'),
  ])
  pricer ??= await createPricer()
  const one = (pivot: UsagePivot) =>
    usageReport({source, pivot, since, signal}).catch(() => ({rows: [] as AppUsageRow[]}))
  const reports: Array<{rows: AppUsageRow[]}> = []
  if (source === 'gateway') reports.push(...(await Promise.all(USAGE_PIVOTS.map(one))))
  else for (const pivot of USAGE_PIVOTS) reports.push(await one(pivot))
  return Object.fromEntries(USAGE_PIVOTS.map((p, i) => [p, reports[i].rows]))
}

async function loadData(signal: AbortSignal): Promise<AppData> {
  const port = await liveGatewayPort(signal)
  const since = Math.floor(Date.now() / 1000) - 28 * 86_400
  const policies: PolicyConfig[] = await listPolicies().catch(() => [])
  const [agents, usage, requests, history, dashboard] = await Promise.all([
    agentsOrKeys(signal),
    loadUsage(signal).catch(() => ({})),
    getLogs({limit: 200, signal}).catch(() => ({logs: []})),
    getLogs({since, limit: 10_000, signal}).catch(() => ({logs: []})),
    port === undefined ? undefined : getDashboard({port, signal}),
  ])
  return {
    gateway: dashboard?.gateway ?? null,
    agents,
    policies,
    routes: dashboard?.routes ?? [],
    requests: requests.logs,
    history: history.logs,
    usage,
    budgets: dashboard?.budgets ?? [],
    loadedAt: Date.now(),
  }
}

/** The app's actions on this machine's gateway. */
export const liveActions: AppActions = {
  load: loadData,
  loadAgents: agentsOrKeys,
  loadUsage,
  cost: (entry) => pricer?.cost(entry.model, {...entry, inputTokens: uncachedInput(entry)}, entry.provider),
  rotateKey: (agent) => rotate(agent),
  setPolicy: (agent, policyId) => rotate(agent, policyId),
  setBinding: setAgentBinding,
  async bindingPlan(agent) {
    const {bindingPlan} = await import('../../services/agent-binding.js')
    return bindingPlan(agent.tool ?? agent.name)
  },
  async reorder(policyId, family, targets) {
    await routePolicy(policyId, family, targets)
    const {restartGateway} = await import('../../services/gateway.js')
    await restartGateway({})
    return `Route ${policyId}/${family} saved; the gateway restarted to apply it (gateway restart).`
  },
  startPlan: () => startPlan(),
  async startGateway() {
    const {startGatewayAsLastRan} = await import('../../services/gateway.js')
    const info = await startGatewayAsLastRan({})
    return `Gateway started on 127.0.0.1:${info.port}${info.plan.sim ? ' with the simulator' : ''} (${info.plan.command}).`
  },
  subscribe(handlers, signal) {
    return followEvents(() => liveGatewayPort(signal).catch(() => undefined), handlers, {signal})
  },
}
