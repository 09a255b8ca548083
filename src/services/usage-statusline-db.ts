/**
 * The statusline's figures from logs.db, read-only, for when no daemon answers
 * (usage-statusline.ts loads this file only then). Two statements on the requests of the last
 * day and 5 hours (the same rows as `gwctl usage blocks`, store/usage-query.ts's union of the
 * gateway's log and the agents' history): the times alone, to find the active 5-hour window
 * ({@link activeWindow}, the rules of gateway/usage-windows.ts), then one aggregate that sums per
 * model today's, the session's and the window's tokens in SQLite, so no row becomes a JavaScript
 * object. The sums are priced with the price memo (services/usage-cost.ts), as `gwctl usage` does.
 */
import {existsSync} from 'node:fs'

import type {ModelSums} from '../gateway/usage-windows.js'
import {
  STATUSLINE_LOOKBACK_MS,
  WINDOW_MS,
  addSums,
  burnRate,
  floorToHour,
  modelDollars,
  zeroSums,
} from '../gateway/usage-windows.js'
import {fileHasBytes, homeFile, pendingFileOf} from '../store/paths.js'
import {sourceSql} from '../store/usage-query.js'
import type {StatuslineFigures} from './usage-statusline.js'

/** The active window of entries at times `ts` (ascending), as gateway/usage-windows.ts cuts them. */
export function activeWindow(
  ts: ArrayLike<number>,
  now: number,
): {start: number; end: number; firstAt: number; lastAt: number} | null {
  if (ts.length === 0) return null
  let start = floorToHour(ts[0])
  let firstAt = ts[0]
  for (let i = 1; i < ts.length; i++) {
    if (ts[i] - start > WINDOW_MS || ts[i] - ts[i - 1] > WINDOW_MS) {
      start = floorToHour(ts[i])
      firstAt = ts[i]
    }
  }
  const lastAt = ts[ts.length - 1]
  const end = start + WINDOW_MS
  return now - lastAt < WINDOW_MS && now < end ? {start, end, firstAt, lastAt} : null
}

const TOKENS = 'input_tokens + output_tokens + cache_read_tokens + cache_creation_tokens > 0'

type Part = 0 | 1 | 2 // today, session, window

/** The figures of the line from logs.db (all zero when there is none yet). */
export async function figuresFromDatabase(options: {
  now: number
  todayStartMs: number
  session?: string
  path?: string
}): Promise<StatuslineFigures> {
  const path = options.path ?? homeFile('logDb')
  const session = options.session
  const none: StatuslineFigures = {
    today: {usd: 0, unpriced: false},
    session: session === undefined ? null : {usd: 0, unpriced: false, requests: 0},
    window: null,
  }
  // rows a gateway stopped while logs.db was locked left in logs.pending: applied first, waiting
  // little for the locks (a line is printed every few seconds; what is left shows in a later one)
  if (fileHasBytes(pendingFileOf(path)))
    await (
      await import('./log-pending.js')
    ).applyPendingLogs({dbPath: path, busyMs: 100, lockWaitMs: 100, quiet: true})
  if (!existsSync(path)) return none
  const {openSqlite} = await import('../store/sqlite.js')
  const db = openSqlite(path, {readonly: true, fileMustExist: true})
  const sums: [ModelSums[], ModelSums[], ModelSums[]] = [[], [], []]
  let window: ReturnType<typeof activeWindow> = null
  try {
    const sinceMs = Math.floor(Math.min(options.todayStartMs, options.now - STATUSLINE_LOOKBACK_MS))
    const from = sourceSql(db, {source: 'all', since: sinceMs / 1000}, false)
    if (from === '') return none
    const params: Record<string, unknown> = {sinceMs}
    if (from.includes('@timeMatched')) params.timeMatched = '[]'
    if (from.includes('@agentTools')) params.agentTools = '{}'
    const rows = `SELECT ts, provider, model, session, input_tokens, output_tokens, cache_read_tokens,
      cache_creation_tokens, cache_1h_tokens, band FROM (${from}) WHERE ts >= @sinceMs AND ${TOKENS}`
    const times = db.prepare(`SELECT ts FROM (${rows}) ORDER BY ts`).pluck().all(params) as number[]
    window = activeWindow(times, options.now)
    if (times.length === 0) return none
    // per context band too: a request past a long-context threshold is priced at its own tier
    const sum = (part: Part, where: string) => `SELECT ${part} AS part, provider, model, count(*) AS requests,
      sum(input_tokens), sum(output_tokens), sum(cache_read_tokens), sum(cache_creation_tokens),
      sum(cache_1h_tokens), band FROM e WHERE ${where} GROUP BY provider, model, band`
    const parts = [sum(0, 'ts >= @todayMs')]
    params.todayMs = Math.floor(options.todayStartMs)
    if (session !== undefined) {
      parts.push(sum(1, 'session = @session'))
      params.session = session
    }
    if (window) {
      parts.push(sum(2, 'ts >= @windowMs'))
      params.windowMs = window.start
    }
    const groups = db
      .prepare(`WITH e AS (${rows}) ${parts.join(' UNION ALL ')}`)
      .raw()
      .all(params) as Array<
      [Part, string | null, string | null, number, number, number, number, number, number, number]
    >
    for (const [part, provider, model, requests, input, output, read, write, write1h, band] of groups) {
      let m = sums[part].find((s) => s.model === model && s.provider === provider)
      if (!m) sums[part].push((m = {...zeroSums(), model, provider}))
      const tokens = {
        requests: Number(requests),
        inputTokens: Number(input),
        outputTokens: Number(output),
        cacheReadTokens: Number(read),
        cacheCreationTokens: Number(write),
        cache1hTokens: Number(write1h),
      }
      addSums(m, {...tokens, ...(band > 0 ? {bands: {[band]: tokens}} : {})})
    }
  } finally {
    db.close()
  }
  if (sums.every((s) => s.length === 0)) return none
  const {createPricer} = await import('./usage-cost.js')
  const pricer = await createPricer()
  const inWindow = modelDollars(sums[2], pricer)
  const rate =
    window &&
    burnRate(
      {...window, ...zeroSums(), gap: false, active: true, models: []},
      inWindow.unpriced ? null : inWindow.usd,
    )
  return {
    today: modelDollars(sums[0], pricer),
    session:
      session === undefined
        ? null
        : {...modelDollars(sums[1], pricer), requests: sums[1].reduce((n, m) => n + m.requests, 0)},
    window: window && {...inWindow, end: window.end, perHour: rate?.costPerHour ?? null},
  }
}
