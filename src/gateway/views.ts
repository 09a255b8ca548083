/**
 * What `GET /api/agents`, `GET /api/keys` and the status snapshot return, built from the state.
 * Shared by the daemon and by the CLI when the daemon is stopped. Never a key or a hash.
 */
import type {GatewayState} from '../store/state-schema.js'
import {agentKind, fixedFamily} from './agent-kinds.js'
import type {Family, PolicyTarget, ProviderConfig} from '../store/schema.js'

export interface AgentView {
  agentId: string
  name: string
  type: string
  employee: {id: string; name: string; contact: string; team?: string; role?: string} | null
  parentAgentId: string | null
  parentAgentName: string | null
  /** Ids of the agents whose parent this one is. */
  childAgentIds: string[]
  policyId: string
  /** The entrance family the agent speaks and the policy's targets for it. */
  route: {family: Family; targets: PolicyTarget[]}
  /** Route bound: the policy has at least one target for the agent's family. */
  enabled: boolean
  keyId: string | null
  keyPrefix: string | null
  sourceTool: string | null
  configPath: string | null
  createdAt: number
  /** Unix seconds of the latest authenticated request, or null. */
  lastSeenAt: number | null
}

export interface KeyView {
  keyId: string
  keyPrefix: string
  agentId: string
  agentName: string | null
  agentType: string | null
  employeeId: string | null
  status: 'active' | 'revoked'
  createdAt: number
  revokedAt: number | null
  lastUsedAt: number | null
}

/** Every agent with its relations, policy, route and active key prefix. */
export function agentViews(state: GatewayState): AgentView[] {
  const employees = new Map(state.employees.map((e) => [e.id, e]))
  const activeKey = new Map(state.keys.filter((k) => k.revokedAt === undefined).map((k) => [k.agentId, k]))
  const policies = new Map(state.policies.map((p) => [p.id, p]))
  const children = new Map<string, string[]>()
  for (const a of state.agents) {
    if (a.parentAgentId) children.set(a.parentAgentId, [...(children.get(a.parentAgentId) ?? []), a.id])
  }
  return state.agents.map((a) => {
    const e = employees.get(a.employeeId)
    // A known coding agent speaks its own protocol; a generic agent is routed by what it last used.
    const kind = agentKind(a.type)
    const family = fixedFamily(kind) ?? a.lastEntrance ?? kind?.family ?? 'chat'
    const targets = policies.get(a.policyId)?.routes[family] ?? []
    const key = activeKey.get(a.id)
    return {
      agentId: a.id,
      name: a.name,
      type: a.type,
      employee: e ? {id: e.id, name: e.name, contact: e.contact, team: e.team, role: e.role} : null,
      parentAgentId: a.parentAgentId ?? null,
      parentAgentName: a.parentAgentName ?? null,
      childAgentIds: children.get(a.id) ?? [],
      policyId: a.policyId,
      route: {family, targets},
      enabled: targets.length > 0,
      keyId: key?.id ?? null,
      keyPrefix: key?.prefix ?? null,
      sourceTool: a.sourceTool ?? null,
      configPath: a.configPath ?? null,
      createdAt: a.createdAt,
      lastSeenAt: a.lastSeenAt ?? null,
    }
  })
}

/** Every key (active and revoked), newest first: prefix and metadata only. */
export function keyViews(state: GatewayState): KeyView[] {
  const agents = new Map(state.agents.map((a) => [a.id, a]))
  return [...state.keys]
    .sort((a, b) => b.createdAt - a.createdAt)
    .map((k) => {
      const a = agents.get(k.agentId)
      return {
        keyId: k.id,
        keyPrefix: k.prefix,
        agentId: k.agentId,
        agentName: a?.name ?? null,
        agentType: a?.type ?? null,
        employeeId: a?.employeeId ?? null,
        status: k.revokedAt === undefined ? 'active' : 'revoked',
        createdAt: k.createdAt,
        revokedAt: k.revokedAt ?? null,
        lastUsedAt: k.lastUsedAt ?? null,
      }
    })
}

/**
 * A target's label: `corp:glm-4.6`, with ` (chat, translated)` when it is translated from
 * `family` (the provider's family named when `providers` know it).
 */
export function targetLabel(
  target: PolicyTarget,
  family: Family,
  providers: readonly Pick<ProviderConfig, 'name' | 'family'>[] = [],
): string {
  const name = target.model ? `${target.provider}:${target.model}` : target.provider
  if (!target.translate) return name
  const speaks = providers.find((p) => p.name === target.provider)?.family
  if (speaks === family) return name
  return `${name} (${speaks ? `${speaks}, ` : ''}translated)`
}

/** A route label: `messages -> anthropic, corp (chat, translated)` or `messages -> (no provider)`. */
export function routeLabel(
  policyId: string,
  route: AgentView['route'],
  providers: readonly Pick<ProviderConfig, 'name' | 'family'>[] = [],
): string {
  const targets = route.targets.map((t) => targetLabel(t, route.family, providers))
  return `${policyId}/${route.family} -> ${targets.length > 0 ? targets.join(', ') : '(no provider)'}`
}

export interface RouteCount {
  route: string
  policyId: string
  family: Family
  agents: number
}

/** Agents per route (policy + family), for the status snapshot. */
export function agentsPerRoute(
  views: readonly AgentView[],
  providers: readonly Pick<ProviderConfig, 'name' | 'family'>[] = [],
): RouteCount[] {
  const counts = new Map<string, RouteCount>()
  for (const v of views) {
    const label = routeLabel(v.policyId, v.route, providers)
    const entry = counts.get(label) ?? {route: label, policyId: v.policyId, family: v.route.family, agents: 0}
    entry.agents++
    counts.set(label, entry)
  }
  // code-unit order, not localeCompare: route labels are ids, and collation would page ICU's
  // tables (about 3 MB) into the daemon the first time `status` asks
  return [...counts.values()].sort(
    (a, b) => b.agents - a.agents || (a.route < b.route ? -1 : a.route > b.route ? 1 : 0),
  )
}

/** Unix seconds of the latest request any agent made, or null. */
export function latestRequestAt(state: GatewayState): number | null {
  let latest: number | null = null
  for (const a of state.agents)
    if (a.lastSeenAt !== undefined && (latest === null || a.lastSeenAt > latest)) latest = a.lastSeenAt
  return latest
}
