/**
 * The requests with usage, one row each in time order, over the same sources as `gwctl usage`
 * (usage-query.ts: `all` counts a request the gateway logged once): what the 5-hour windows of
 * `gwctl usage blocks` and the statusline are cut from (gateway/usage-windows.ts).
 */
import type BetterSqlite3 from 'better-sqlite3'

import type {AgentTool} from './history-rows.js'
import type {UsageSource} from './usage-query.js'
import {sourceSql} from './usage-query.js'

export interface EntryFilters {
  source: UsageSource
  /** Unix ms. */
  sinceMs?: number
  untilMs?: number
  tool?: AgentTool
  agentId?: string
  /** Only the history rows of this agent session (Claude Code's `session_id`). */
  session?: string
  /** The tool of each agent id (gateway rows are a tool's by their agent, else by entrance). */
  agentTools?: Record<string, AgentTool>
}

/** One request with usage (a gateway log row or an agent history row). */
export interface UsageEntry {
  /** Unix ms. */
  ts: number
  model: string | null
  provider: string | null
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  /** The part of `cacheCreationTokens` written to the 1-hour cache. */
  cache1hTokens: number
}

export interface SessionEntry extends UsageEntry {
  session: string | null
}

/** Requests with any token, oldest first. */
export function usageEntries(
  db: BetterSqlite3.Database,
  f: EntryFilters,
  timeMatched: readonly string[] = [],
): SessionEntry[] {
  const from = sourceSql(
    db,
    {source: f.source, ...(f.sinceMs === undefined ? {} : {since: f.sinceMs / 1000})},
    false,
  )
  if (from === '') return []
  const where = ['input_tokens + output_tokens + cache_read_tokens + cache_creation_tokens > 0']
  const params: Record<string, unknown> = {}
  if (from.includes('@timeMatched')) params.timeMatched = JSON.stringify(timeMatched)
  if (from.includes('@agentTools')) params.agentTools = JSON.stringify(f.agentTools ?? {})
  if (f.sinceMs !== undefined) {
    where.push('ts >= @sinceMs')
    params.sinceMs = Math.floor(f.sinceMs)
  }
  if (f.untilMs !== undefined) {
    where.push('ts < @untilMs')
    params.untilMs = Math.floor(f.untilMs)
  }
  if (f.tool !== undefined) {
    where.push('tool = @tool')
    params.tool = f.tool
  }
  if (f.agentId !== undefined) {
    where.push('agent_id = @agentId')
    params.agentId = f.agentId
  }
  if (f.session !== undefined) {
    where.push('session = @session')
    params.session = f.session
  }
  const rows = db
    .prepare(
      `SELECT ts, model, provider, session, input_tokens, output_tokens, cache_read_tokens,
        cache_creation_tokens, cache_1h_tokens FROM (${from}) WHERE ${where.join(' AND ')} ORDER BY ts`,
    )
    .raw()
    .all(params) as Array<
    [number, string | null, string | null, string | null, number, number, number, number, number]
  >
  return rows.map(([ts, model, provider, session, input, output, read, write, write1h]) => ({
    ts: Number(ts),
    model,
    provider,
    session,
    inputTokens: Number(input),
    outputTokens: Number(output),
    cacheReadTokens: Number(read),
    cacheCreationTokens: Number(write),
    cache1hTokens: Number(write1h),
  }))
}
