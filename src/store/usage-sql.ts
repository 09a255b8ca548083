/**
 * SQL shared by the gateway's own usage and log queries (log-store.ts) and the cross-source usage
 * (usage-query.ts): the status filter on raw log rows, the token sums and the row they map to.
 */
import type {LogFilters, StatusFilter, UsageTotals} from './log-query.js'

/** The condition a `--status` filter puts on raw rows (`status`, `fallback` columns). */
export function statusCondition(status: StatusFilter): string {
  switch (status) {
    case '2xx':
      return 'status < 400'
    case '4xx':
      return 'status >= 400 AND status < 500'
    case '5xx':
      return 'status >= 500'
    case 'fallback':
      return 'fallback = 1'
  }
}

/**
 * The conditions the gateway filters (agent, policy, `since` in Unix seconds, status) put on raw
 * log rows (`agent_id`, `policy_id`, `ts` in ms, `status`, `fallback`); their values go into
 * `params`. Shared by `gwctl logs` and both usage queries.
 */
export function logRowConditions(f: Omit<LogFilters, 'limit'>, params: Record<string, unknown>): string[] {
  const where: string[] = []
  if (f.agentId !== undefined) {
    where.push('agent_id = @agentId')
    params.agentId = f.agentId
  }
  if (f.policyId !== undefined) {
    where.push('policy_id = @policyId')
    params.policyId = f.policyId
  }
  if (f.since !== undefined) {
    where.push('ts >= @sinceMs')
    params.sinceMs = Math.round(f.since * 1000)
  }
  if (f.status) where.push(statusCondition(f.status))
  return where
}

/** The token sums of a usage query, as the columns {@link usageCounts} reads. */
export const TOKEN_SUMS = `SUM(input_tokens) AS input_tokens, SUM(output_tokens) AS output_tokens,
  SUM(cache_read_tokens) AS cache_read_tokens, SUM(cache_creation_tokens) AS cache_creation_tokens,
  SUM(reasoning_tokens) AS reasoning_tokens`

/** The counts of a query row holding `requests`, `errors`, `fallbacks` and {@link TOKEN_SUMS}. */
export function usageCounts(r: Record<string, unknown>): UsageTotals {
  return {
    requests: Number(r.requests),
    errors: Number(r.errors),
    fallbacks: Number(r.fallbacks),
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    cacheReadTokens: Number(r.cache_read_tokens),
    cacheCreationTokens: Number(r.cache_creation_tokens),
    reasoningTokens: Number(r.reasoning_tokens),
  }
}

/** The fields of usage counts, in display order. */
export const COUNT_FIELDS = [
  'requests',
  'errors',
  'fallbacks',
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheCreationTokens',
  'reasoningTokens',
] as const satisfies ReadonlyArray<keyof UsageTotals>

/** Usage counts of nothing. */
export function zeroTotals(): UsageTotals {
  return {
    requests: 0,
    errors: 0,
    fallbacks: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    reasoningTokens: 0,
  }
}
