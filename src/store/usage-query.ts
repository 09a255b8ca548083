/**
 * Usage across sources: the gateway's request log (`logs`) and the agents' own history
 * (`history`), in the same SQLite file. `all` never counts a request twice: a history row whose
 * request id the gateway logged is the same request, and the gateway's row stands for it; so does
 * a Gemini CLI row (no request id) that reconcile matches to a gateway row by time.
 *
 * Rows come back grouped by pivot value and model (and provider), so the caller can price each
 * model; the `day` pivot is grouped in 15-minute buckets and folded into days of any time zone.
 */
import type BetterSqlite3 from 'better-sqlite3'

import type {ContextBands} from './context-bands.js'
import {FIRST_EDGE, addToBand, bandSql} from './context-bands.js'
import type {AgentTool} from './history-rows.js'
import type {StatusFilter, UsageRow} from './log-query.js'
import {
  brokenExpr,
  cache1hExpr,
  COUNT_FIELDS,
  errorCase,
  logRowConditions,
  TOKEN_SUMS,
  usageCounts,
  zeroTotals,
} from './usage-sql.js'

export type UsageSource = 'gateway' | 'history' | 'all'
export const USAGE_SOURCES: readonly UsageSource[] = ['gateway', 'history', 'all']
export type UsagePivotAll =
  'agent' | 'key' | 'provider' | 'model' | 'project' | 'policy' | 'day' | 'month' | 'tool' | 'session'

export interface UsageQueryFilters {
  source: UsageSource
  pivot?: UsagePivotAll
  tool?: AgentTool
  agentId?: string
  policyId?: string
  status?: StatusFilter
  /** Unix seconds. */
  since?: number
  /** Unix seconds: only requests before it. */
  until?: number
  /** IANA zone for the `day` pivot (default UTC). */
  timezone?: string
}

/** One group: pivot value x provider x model, with the gateway's usage counts. */
export interface UsageGroup extends UsageRow {
  provider: string | null
  model: string | null
  /**
   * The part of `cacheCreationTokens` written to the 1-hour cache, priced apart: the agents'
   * history records it (Claude Code), and so does the gateway's log (Messages upstreams' usage).
   */
  cache1hTokens?: number
  /**
   * The part of these sums made of requests past the first long-context threshold, by band
   * (context-bands.ts): their tier is their own, so they are priced apart from the rest.
   */
  bands?: ContextBands
  /**
   * Every prompt token, cache reads and writes included (the gateway's `inputTokens`, which
   * `gwctl usage` prints for the gateway's rows): only when asked for (`promptTokens`).
   */
  promptTokens?: number
}

const BUCKET_MS = 900_000

/**
 * The agent tool a gateway row came from: its agent's (`@agentTools`, a JSON object of agent id ->
 * tool, from the state: OpenCode and Qwen Code come in through the entrances of the others), else
 * by its entrance (`chat` is any client).
 */
export const GATEWAY_TOOL = `COALESCE((SELECT value FROM json_each(@agentTools) WHERE key = agent_id),
  CASE entrance WHEN 'messages' THEN 'claude-code' WHEN 'responses' THEN 'codex'
  WHEN 'gemini' THEN 'gemini-cli' ELSE NULL END)`

/** The gateway logs every prompt token as input; here input is what was not read from or written to cache. */
export const GATEWAY_INPUT = 'MAX(input_tokens - cache_read_tokens - cache_creation_tokens, 0)'

const PIVOT_EXPR: Record<UsagePivotAll, string> = {
  agent: 'agent_id',
  key: 'key_prefix',
  provider: 'provider',
  model: 'model',
  project: 'project',
  policy: 'policy_id',
  tool: 'tool',
  session: 'session',
  day: `ts / ${BUCKET_MS}`,
  month: `ts / ${BUCKET_MS}`,
}

/** Whether the pivot folds 15-minute buckets into calendar periods of a time zone. */
const calendar = (pivot: UsagePivotAll | undefined): pivot is 'day' | 'month' =>
  pivot === 'day' || pivot === 'month'

function hasTable(db: BetterSqlite3.Database, name: string): boolean {
  return (
    db.prepare(`SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ?`).get(name) !==
    undefined
  )
}

/**
 * The condition that keeps the history rows of the files that may hold one at or after
 * `@sinceMs` (a file's `history_files.max_ts` is the latest time of any row read from it), when
 * they are few: the rows have no index on `ts`, and their file's rows are found by `history_file`.
 * Otherwise (most files are that recent, or a layout without `max_ts`) none: a scan of every row
 * is the faster way then (815 000 rows, every file recent: 124 ms scanned, 655 ms through the
 * files' index, 158 ms with an index on `ts`).
 */
export function historySince(db: BetterSqlite3.Database, sinceMs: number): string {
  if (!db.prepare(`SELECT 1 FROM pragma_table_info('history_files') WHERE name = 'max_ts'`).get()) return ''
  const {recent, files} = db
    .prepare(`SELECT count(*) FILTER (WHERE max_ts >= ?) AS recent, count(*) AS files FROM history_files`)
    .get(sinceMs) as {recent: number; files: number}
  return recent * 8 <= files ? 'file IN (SELECT id FROM history_files WHERE max_ts >= @sinceMs)' : ''
}

const HOUR_MS = 3_600_000

/**
 * Whether the gateway's rows can come from its hourly roll-up (`usage_hourly`, one row per hour,
 * agent, key, policy, provider, model, project, status class and fallback) instead of one row per
 * request: the roll-up has no entrance (so no tool), and hours fold into days only in zones whose
 * offset is whole hours. Reading it is what keeps `gwctl usage` fast on a big log (a million
 * requests: a few thousand roll-up rows instead of a million).
 */
function hourlyServes(f: UsageQueryFilters): boolean {
  if (f.tool !== undefined || f.pivot === 'tool' || f.pivot === 'session') return false
  if (calendar(f.pivot) && f.timezone !== undefined && !wholeHourZone(f.timezone)) return false
  // an hour of the roll-up counts whole: an end inside an hour needs the requests themselves
  if (f.until !== undefined) return false
  return true
}

/** True when `zone` is a whole number of hours from UTC, now and half a year from now. */
function wholeHourZone(zone: string): boolean {
  const minutes = (at: Date) => {
    const parts = new Intl.DateTimeFormat('en-US', {timeZone: zone, minute: 'numeric'}).formatToParts(at)
    return Number(parts.find((p) => p.type === 'minute')?.value ?? 'NaN') - at.getUTCMinutes()
  }
  const now = new Date()
  return minutes(now) === 0 && minutes(new Date(now.getTime() + 182 * 86_400_000)) === 0
}

/**
 * The input context of a gateway log row: the log counts every prompt token as input (cache reads
 * and writes included), so its input (never less than its cache).
 */
const GATEWAY_CONTEXT = 'MAX(input_tokens, cache_read_tokens + cache_creation_tokens)'

/**
 * The union's `prompt_tokens` column (every prompt token: what the gateway logs as input; the
 * history's input plus its cache reads and writes), when asked for (`promptTokens`); '' otherwise.
 */
const promptColumn = (prompt: boolean, expr: string) => (prompt ? `${expr} AS prompt_tokens, ` : '')

/**
 * The gateway's log rows (`where`: a condition on `logs`), one per request, in the union's columns.
 * (A billed try's own row, log-store.ts LogEntry `billedTry`, is one request as any: an upstream
 * request that billed; the long-context pricing averages tokens over these rows.)
 */
function gatewayRowsSql(where: string, broken: string, oneHour: string, prompt = false): string {
  return `SELECT ${promptColumn(prompt, 'input_tokens')}ts, agent_id, key_prefix, policy_id, provider, model, project,
      NULL AS session, ${GATEWAY_TOOL} AS tool, CASE WHEN ${broken} = 1 THEN 500 ELSE status END AS status, 1 AS requests,
      ${errorCase(broken)} AS errors,
      fallback, fallback AS fallbacks, ${GATEWAY_INPUT} AS input_tokens, output_tokens, cache_read_tokens,
      cache_creation_tokens, ${oneHour} AS cache_1h_tokens, reasoning_tokens, ${bandSql(GATEWAY_CONTEXT, 'model')} AS band
      FROM logs ${where}`
}

/**
 * The gateway's rows: one per request, or the hourly roll-up plus the requests before its first
 * hour. A row whose answer broke after its status (`broken`) is a 5xx here, as in the roll-up.
 */
function gatewaySql(
  f: UsageQueryFilters,
  hourly: boolean,
  broken: string,
  oneHour: {logs: string; hourly: string},
  prompt = false,
): string {
  const perRequest = (where: string) => gatewayRowsSql(where, broken, oneHour.logs, prompt)
  if (!hourly) return perRequest('')
  // An hour counts whole from its start: `ts >= since` keeps the hours from the first full one;
  // the requests between `since` and that hour come from the log itself.
  const rolled = `SELECT ${promptColumn(prompt, 'input_tokens')}hour * ${HOUR_MS} AS ts, NULLIF(agent_id, '') AS agent_id, NULLIF(key_prefix, '') AS key_prefix,
      NULLIF(policy_id, '') AS policy_id, NULLIF(provider, '') AS provider, NULLIF(model, '') AS model,
      NULLIF(project, '') AS project, NULL AS session, NULL AS tool,
      CASE status_class WHEN '5xx' THEN 500 WHEN '4xx' THEN 400 ELSE 200 END AS status, requests, errors,
      fallback, fallback * requests AS fallbacks, MAX(input_tokens - cache_read_tokens - cache_creation_tokens, 0) AS input_tokens,
      output_tokens, cache_read_tokens, cache_creation_tokens, ${oneHour.hourly} AS cache_1h_tokens, reasoning_tokens,
      0 AS band FROM usage_hourly`
  if (f.since === undefined) return rolled
  const firstHourMs = Math.ceil(Math.round(f.since * 1000) / HOUR_MS) * HOUR_MS
  return `${rolled} UNION ALL ${perRequest(`WHERE ts < ${firstHourMs}`)}`
}

/**
 * The gateway's requests past the first long-context threshold that the hourly roll-up sums in
 * `sourceSql(db, f, rollUp)` (so without their band), one row each in the union's columns; '' when
 * the roll-up does not serve. Read through the partial index `logs_long` (log-store.ts), which
 * holds those requests only.
 */
export function rolledLongSql(
  db: BetterSqlite3.Database,
  f: UsageQueryFilters,
  rollUp: boolean,
  prompt = false,
): string {
  if (f.source === 'history' || !rollUp || !hourlyServes(f)) return ''
  if (!hasTable(db, 'logs') || !hasTable(db, 'usage_hourly')) return ''
  const where = [`input_tokens > ${FIRST_EDGE}`]
  if (f.since !== undefined) where.push(`ts >= ${Math.ceil(Math.round(f.since * 1000) / HOUR_MS) * HOUR_MS}`)
  return gatewayRowsSql(`WHERE ${where.join(' AND ')}`, brokenExpr(db), cache1hExpr(db, 'logs'), prompt)
}

/**
 * The union of the selected sources as one row set with common columns. `all` leaves out the
 * history rows the gateway logged: by request id, and the keys in `@timeMatched` (a JSON array of
 * the Gemini CLI rows `timeMatchedHistoryKeys` in reconcile-query.ts matched by time).
 */
export function sourceSql(
  db: BetterSqlite3.Database,
  f: UsageQueryFilters,
  rollUp: boolean,
  prompt = false,
): string {
  const source = f.source
  const logs = hasTable(db, 'logs')
  const parts: string[] = []
  if (source !== 'history' && logs) {
    const hourly = rollUp && hourlyServes(f) && hasTable(db, 'usage_hourly')
    parts.push(
      gatewaySql(
        f,
        hourly,
        brokenExpr(db),
        {
          logs: cache1hExpr(db, 'logs'),
          hourly: hourly ? cache1hExpr(db, 'usage_hourly') : '0',
        },
        prompt,
      ),
    )
  }
  if (source !== 'gateway' && hasTable(db, 'history')) {
    const where: string[] = []
    if (source === 'all' && logs)
      where.push(`(request_id IS NULL OR request_id NOT IN (SELECT request_id FROM logs WHERE request_id IS NOT NULL))
            AND key NOT IN (SELECT value FROM json_each(@timeMatched))`)
    // `since`: only the files with a row that late (the rows have no time index; the outer
    // `ts >= @sinceMs` still applies)
    const since = f.since === undefined ? '' : historySince(db, Math.round(f.since * 1000))
    if (since) where.push(since)
    parts.push(`SELECT ${promptColumn(prompt, 'input_tokens + cache_read_tokens + cache_creation_tokens')}ts, NULL AS agent_id, NULL AS key_prefix, NULL AS policy_id, NULL AS provider, model,
      project, session, tool, 200 AS status, 1 AS requests, 0 AS errors, 0 AS fallback, 0 AS fallbacks, input_tokens,
      output_tokens, cache_read_tokens, cache_creation_tokens, cache_1h_tokens, reasoning_tokens,
      ${bandSql('input_tokens + cache_read_tokens + cache_creation_tokens', 'model')} AS band FROM history
      ${where.length ? 'WHERE ' + where.join(' AND ') : ''}`)
  }
  return parts.length > 0 ? parts.join(' UNION ALL ') : ''
}

/** `YYYY-MM-DD` of `ms` in `timeZone`. */
export function dayIn(ms: number, format: Intl.DateTimeFormat): string {
  return format.format(new Date(ms))
}

/** A formatter for days in `timeZone`; throws RangeError for an unknown zone. */
export function dayFormat(timeZone = 'UTC'): Intl.DateTimeFormat {
  return new Intl.DateTimeFormat('en-CA', {timeZone, year: 'numeric', month: '2-digit', day: '2-digit'})
}

/**
 * Usage grouped by pivot value, provider and model. With `source: 'all'`, `timeMatched` holds the
 * keys of history rows matched to gateway rows by time (counted once, as the gateway's).
 * `rollUp: false` reads the gateway's rows one per request even where the hourly roll-up would
 * serve (the tests compare both). `promptTokens` adds each group's {@link UsageGroup.promptTokens}.
 */
export function usageGroups(
  db: BetterSqlite3.Database,
  f: UsageQueryFilters,
  timeMatched: readonly string[] = [],
  options: {rollUp?: boolean; agentTools?: Record<string, AgentTool>; promptTokens?: boolean} = {},
): UsageGroup[] {
  const prompt = options.promptTokens ?? false
  const from = sourceSql(db, f, options.rollUp ?? true, prompt)
  if (from === '') return []
  const where: string[] = []
  const params: Record<string, unknown> = {}
  if (from.includes('@timeMatched')) params.timeMatched = JSON.stringify(timeMatched)
  if (from.includes('@agentTools')) params.agentTools = JSON.stringify(options.agentTools ?? {})
  if (f.tool) {
    where.push('tool = @tool')
    params.tool = f.tool
  }
  // the union has no `broken` column: a broken gateway row is a 500 in it already
  where.push(...logRowConditions(f, params, '0'))
  if (f.until !== undefined) {
    where.push('ts < @untilMs')
    params.untilMs = Math.round(f.until * 1000)
  }
  const keyExpr = f.pivot ? PIVOT_EXPR[f.pivot] : `'all'`
  const grouped = (rows: string) => `SELECT ${keyExpr} AS k, provider, model, band, SUM(requests) AS requests,
      SUM(errors) AS errors, SUM(fallbacks) AS fallbacks, ${TOKEN_SUMS}, SUM(cache_1h_tokens) AS cache_1h_tokens
      ${prompt ? ', SUM(prompt_tokens) AS prompt_tokens' : ''}
    FROM (${rows}) ${where.length ? 'WHERE ' + where.join(' AND ') : ''}
    GROUP BY k, provider, model, band`
  type Row = Record<string, number | string | null>
  const format = calendar(f.pivot) ? dayFormat(f.timezone) : undefined
  const length = f.pivot === 'month' ? 7 : 10
  const keyOf = (r: Row) =>
    format
      ? dayIn(Number(r.k) * BUCKET_MS, format).slice(0, length)
      : r.k === null || r.k === ''
        ? null
        : String(r.k)
  // one group per key, provider and model: its bands (requests past a long-context threshold) inside
  const groups = new Map<string, UsageGroup>()
  const groupOf = (r: Row): UsageGroup => {
    const key = keyOf(r)
    const id = `${key ?? '\u0001'}\u0000${r.provider ?? '\u0001'}\u0000${r.model ?? '\u0001'}`
    let g = groups.get(id)
    if (!g) {
      g = {
        key,
        provider: r.provider === null ? null : String(r.provider),
        model: r.model === null ? null : String(r.model),
        ...zeroTotals(),
        cache1hTokens: 0,
        ...(prompt ? {promptTokens: 0} : {}),
      }
      groups.set(id, g)
    }
    return g
  }
  const bandOf = (r: Row) => ({
    requests: Number(r.requests),
    inputTokens: Number(r.input_tokens),
    outputTokens: Number(r.output_tokens),
    cacheReadTokens: Number(r.cache_read_tokens),
    cacheCreationTokens: Number(r.cache_creation_tokens),
    cache1hTokens: Number(r.cache_1h_tokens ?? 0),
  })
  for (const r of db.prepare(grouped(from)).all(params) as Row[]) {
    const g = groupOf(r)
    const counts = usageCounts(r)
    for (const k of COUNT_FIELDS) g[k] += counts[k]
    g.cache1hTokens = (g.cache1hTokens ?? 0) + Number(r.cache_1h_tokens ?? 0)
    if (prompt) g.promptTokens! += Number(r.prompt_tokens)
    addToBand(g, Number(r.band), bandOf(r))
  }
  // the roll-up's hours sum their requests without a band: those past a threshold are read apart
  // (they are in the group's totals already)
  const long = rolledLongSql(db, f, options.rollUp ?? true, prompt)
  if (long) {
    params.agentTools ??= JSON.stringify(options.agentTools ?? {})
    for (const r of db.prepare(grouped(long)).all(params) as Row[])
      addToBand(groupOf(r), Number(r.band), bandOf(r))
  }
  return [...groups.values()]
}
