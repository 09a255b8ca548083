/** The filter flags shared by `gwctl logs` and `gwctl usage`, turned into store filters. */
import type {LogFilters, StatusFilter} from '../store/log-store.js'
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
