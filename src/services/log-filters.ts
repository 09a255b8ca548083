/** The filter flags shared by `gwctl logs` and `gwctl usage`, turned into store filters. */
import {NotFoundError, UsageError} from '../core/errors.js'
import type {LogFilters, StatusFilter} from '../store/log-query.js'
import {parseLimit, parseSince} from './logs.js'

export interface FilterFlags {
  agent?: string
  policy?: string
  status?: string
  since?: string
  limit?: number
}

export function filtersFromFlags(flags: FilterFlags, nowMs: number = Date.now()): LogFilters {
  const filters: LogFilters = {}
  if (flags.agent !== undefined) filters.agentId = flags.agent
  if (flags.policy !== undefined) filters.policyId = flags.policy
  if (flags.status !== undefined) filters.status = flags.status as StatusFilter
  if (flags.since !== undefined) filters.since = parseSince(flags.since, nowMs)
  const limit = parseLimit(flags.limit)
  if (limit !== undefined) filters.limit = limit
  return filters
}

/** True when any filter narrows the rows (the limit does not). */
export function isFiltered(filters: LogFilters): boolean {
  return [filters.agentId, filters.policyId, filters.status, filters.since].some((v) => v !== undefined)
}

/**
 * `--agent` takes an agent id or name, as `gwctl providers list AGENT` does: a name becomes the id
 * the log rows carry. A name no agent has is refused (exit 7) instead of matching nothing.
 */
export async function resolveAgentFilter(filters: LogFilters, signal?: AbortSignal): Promise<LogFilters> {
  const wanted = filters.agentId
  // An id is used as given: the log keeps rows of agents the state may not know (any more).
  if (wanted === undefined || wanted.startsWith('agt_')) return filters
  // Loaded only for a name: the state store (lowdb, ajv, proper-lockfile) costs start-up.
  const {listAgents} = await import('./gateway-keys.js')
  const agents = await listAgents({signal})
  if (agents.some((a) => a.agentId === wanted)) return filters
  const named = agents.filter((a) => a.name === wanted)
  if (named.length > 1) {
    throw new UsageError(
      `Several agents are named "${wanted}" (${named.map((a) => a.agentId).join(', ')}); give the agent id.`,
      {code: 'ambiguous_agent'},
    )
  }
  if (named.length === 0) {
    throw new NotFoundError(`No agent has the id or name "${wanted}".`, {
      hint: 'See `gwctl agents list` for the ids and names.',
    })
  }
  return {...filters, agentId: named[0].agentId}
}
