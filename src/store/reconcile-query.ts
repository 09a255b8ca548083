/**
 * Request-level reconciliation of the gateway's log with the agents' own history, both in the
 * log database: a history row and a gateway row with the same request id are the same request
 * (Claude Code records the `request-id` header, Codex the Responses `id`, which the gateway logs).
 * Gemini CLI, OpenCode and Qwen Code record no id the gateway logs ({@link TIME_MATCHED_TOOLS}):
 * their history rows are matched to the gateway's rows of the same
 * tool and model by time instead (within {@link TIME_MATCH_MS}, equal token counts first, then the
 * nearest), and counted as `matchedByTime`.
 */
import type BetterSqlite3 from 'better-sqlite3'

import type {AgentTool} from './history-rows.js'
import {GATEWAY_INPUT, GATEWAY_TOOL, historySince} from './usage-query.js'
import {billedTryExpr} from './usage-sql.js'

export interface ReconcileTokens {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
}

export interface ReconcileRequest extends ReconcileTokens {
  /** The history row's key (only when asked for). */
  key?: string
  requestId: string | null
  tool: AgentTool
  time: number
  model: string | null
}

export interface ReconcileDay {
  tool: AgentTool
  /** UTC day. */
  day: string
  matched: number
  /** Of `matched`: history rows without a request id (Gemini CLI, OpenCode, Qwen Code) matched by tool, model and time. */
  matchedByTime: number
  onlyHistory: number
  onlyGateway: number
  /** Matched requests whose token counts differ. */
  differing: number
  gatewayTokens: number
  historyTokens: number
}

export interface Reconciliation {
  days: ReconcileDay[]
  onlyHistory: ReconcileRequest[]
  onlyGateway: ReconcileRequest[]
  differences: Array<{
    requestId: string
    tool: AgentTool
    time: number
    gateway: ReconcileTokens
    history: ReconcileTokens
  }>
}

const FIELDS = ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheCreationTokens'] as const
/** The tools whose history rows hold no request id the gateway logs: matched by time and model. */
export const TIME_MATCHED_TOOLS: ReadonlySet<AgentTool> = new Set(['gemini-cli', 'opencode', 'qwen-code'])

/** How far apart a history row without a request id and its gateway row may be (ms). */
export const TIME_MATCH_MS = 5 * 60_000
const sum = (t: ReconcileTokens) => t.inputTokens + t.outputTokens + t.cacheReadTokens + t.cacheCreationTokens
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10)

function hasTable(db: BetterSqlite3.Database, name: string): boolean {
  return (
    db.prepare(`SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?`).get(name) !==
    undefined
  )
}

function rows(db: BetterSqlite3.Database, sql: string, params: Record<string, unknown>): ReconcileRequest[] {
  return (db.prepare(sql).all(params) as Array<Record<string, unknown>>).map((r) => ({
    ...(r.key === undefined ? {} : {key: r.key as string}),
    requestId: (r.request_id as string | null) ?? null,
    tool: r.tool as AgentTool,
    time: Number(r.ts),
    model: (r.model as string | null) ?? null,
    inputTokens: Number(r.i),
    outputTokens: Number(r.o),
    cacheReadTokens: Number(r.cr),
    cacheCreationTokens: Number(r.cc),
  }))
}

/**
 * The gateway's successful agent requests and the history rows since `sinceMs` (of one tool or
 * all). A billed try's row of its own (its `billed_try` flag: log-store.ts LogEntry `billedTry`;
 * a 200 where the upstream answered nothing the client got, Gemini's empty answer) is left out:
 * the agent's history holds the request once, as its answer's row, so it is matched to none (by
 * time it could take the answer's place: review72 #3).
 */
function load(
  db: BetterSqlite3.Database,
  options: {sinceMs: number; tool?: AgentTool; keys?: boolean; agentTools?: Record<string, AgentTool>},
): {gateway: ReconcileRequest[]; history: ReconcileRequest[]} {
  const params = {sinceMs: options.sinceMs, tool: options.tool ?? null}
  const agentTools = JSON.stringify(options.agentTools ?? {})
  const gateway = hasTable(db, 'logs')
    ? rows(
        db,
        `SELECT * FROM (SELECT request_id, ts, model, ${GATEWAY_TOOL} AS tool,
            ${GATEWAY_INPUT} AS i, output_tokens AS o, cache_read_tokens AS cr, cache_creation_tokens AS cc
          FROM logs WHERE ts >= @sinceMs AND status < 400 AND ${billedTryExpr(db)} = 0)
        WHERE tool IS NOT NULL AND (@tool IS NULL OR tool = @tool)`,
        {...params, agentTools},
      )
    : []
  const since = hasTable(db, 'history') && options.sinceMs > 0 ? historySince(db, options.sinceMs) : ''
  const history = hasTable(db, 'history')
    ? rows(
        db,
        `SELECT ${options.keys ? 'key, ' : ''}request_id, ts, model, tool, input_tokens AS i, output_tokens AS o,
          cache_read_tokens AS cr, cache_creation_tokens AS cc
          FROM history WHERE ts >= @sinceMs AND (@tool IS NULL OR tool = @tool) ${since ? `AND ${since}` : ''}`,
        params,
      )
    : []
  return {gateway, history}
}

/**
 * The keys of the history rows `usage reconcile` matches to a gateway row by time ({@link TIME_MATCHED_TOOLS}):
 * `gwctl usage --source all` counts those requests once, as the gateway's rows.
 */
export function timeMatchedHistoryKeys(
  db: BetterSqlite3.Database,
  options: {sinceMs?: number; agentTools?: Record<string, AgentTool>} = {},
): string[] {
  return [...TIME_MATCHED_TOOLS].flatMap((tool) => {
    const {gateway, history} = load(db, {
      sinceMs: options.sinceMs ?? 0,
      tool,
      keys: true,
      ...(options.agentTools ? {agentTools: options.agentTools} : {}),
    })
    return [...matchByTime(history, gateway).keys()].map((h) => h.key!)
  })
}

/** Reconciles requests since `sinceMs` (of one tool, or every agent tool). */
export function reconcile(
  db: BetterSqlite3.Database,
  options: {sinceMs: number; tool?: AgentTool; agentTools?: Record<string, AgentTool>},
): Reconciliation {
  const {gateway, history} = load(db, options)
  const byId = new Map<string, ReconcileRequest>()
  for (const g of gateway) if (g.requestId) byId.set(g.requestId, g)
  const result: Reconciliation = {days: [], onlyHistory: [], onlyGateway: [], differences: []}
  const days = new Map<string, ReconcileDay>()
  const bucket = (tool: AgentTool, time: number) => {
    const k = `${tool} ${day(time)}`
    let d = days.get(k)
    if (!d)
      days.set(
        k,
        (d = {
          tool,
          day: day(time),
          matched: 0,
          matchedByTime: 0,
          onlyHistory: 0,
          onlyGateway: 0,
          differing: 0,
          gatewayTokens: 0,
          historyTokens: 0,
        }),
      )
    return d
  }
  const matched = new Set<ReconcileRequest>()
  const timeMatches = matchByTime(history, gateway)
  for (const h of history) {
    const byIdMatch = h.requestId ? byId.get(h.requestId) : undefined
    // only the time-matched tools record no id; the other tools' rows without one stay unmatched
    const g = byIdMatch ?? timeMatches.get(h)
    const d = bucket(h.tool, g?.time ?? h.time)
    d.historyTokens += sum(h)
    if (!g) {
      d.onlyHistory++
      result.onlyHistory.push(h)
      continue
    }
    matched.add(g)
    d.matched++
    if (!byIdMatch) d.matchedByTime++
    if (FIELDS.some((f) => g[f] !== h[f])) {
      d.differing++
      const pick = (t: ReconcileTokens) =>
        Object.fromEntries(FIELDS.map((f) => [f, t[f]])) as unknown as ReconcileTokens
      result.differences.push({
        requestId: g.requestId ?? '',
        tool: g.tool,
        time: g.time,
        gateway: pick(g),
        history: pick(h),
      })
    }
  }
  for (const g of gateway) {
    const d = bucket(g.tool, g.time)
    d.gatewayTokens += sum(g)
    if (matched.has(g)) continue
    d.onlyGateway++
    result.onlyGateway.push(g)
  }
  result.days = [...days.values()].sort((a, b) => a.day.localeCompare(b.day) || a.tool.localeCompare(b.tool))
  return result
}

/**
 * History rows of the {@link TIME_MATCHED_TOOLS} (no request id) matched to gateway rows of the same tool and model by
 * time: within {@link TIME_MATCH_MS}, equal token counts first, then the nearest; each gateway
 * row at most once, history rows in time order. Gateway rows whose request id some history row
 * holds are that row's, never matched by time. The one rule for `usage reconcile` and for
 * `gwctl usage --source all` (which counts a matched pair once).
 */
export function matchByTime<H extends ReconcileRequest>(
  history: readonly H[],
  gateway: readonly ReconcileRequest[],
): Map<H, ReconcileRequest> {
  const result = new Map<H, ReconcileRequest>()
  const idless = history
    .filter((h) => !h.requestId && TIME_MATCHED_TOOLS.has(h.tool))
    .sort((a, b) => a.time - b.time)
  if (idless.length === 0) return result
  const historyIds = new Set(history.flatMap((h) => (h.requestId ? [h.requestId] : [])))
  // candidates, oldest first: a binary search finds each history row's window
  const candidates = gateway
    .filter((g) => TIME_MATCHED_TOOLS.has(g.tool) && !(g.requestId && historyIds.has(g.requestId)))
    .sort((a, b) => a.time - b.time)
  const taken = new Set<ReconcileRequest>()
  for (const h of idless) {
    let lo = 0
    let hi = candidates.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (candidates[mid].time < h.time - TIME_MATCH_MS) lo = mid + 1
      else hi = mid
    }
    let best: ReconcileRequest | undefined
    let bestScore = Infinity
    for (let i = lo; i < candidates.length && candidates[i].time <= h.time + TIME_MATCH_MS; i++) {
      const g = candidates[i]
      if (taken.has(g) || g.tool !== h.tool) continue
      if (h.model && g.model && h.model !== g.model) continue
      const gap = Math.abs(g.time - h.time)
      // equal tokens first, then the nearest in time
      const score = (FIELDS.every((f) => g[f] === h[f]) ? 0 : TIME_MATCH_MS + 1) + gap
      if (score < bestScore) {
        best = g
        bestScore = score
      }
    }
    if (best) {
      taken.add(best)
      result.set(h, best)
    }
  }
  return result
}
