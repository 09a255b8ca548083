/**
 * `gwctl statusline`: the one line Claude Code's `statusLine` command shows under its prompt
 * (docs/USAGE-WINDOWS.md). Answered by bin/run.js without oclif, so a call costs about one bare
 * Node start: it reads the JSON Claude Code pipes on stdin (session id, model), asks the running
 * daemon once over loopback for the per-model sums of today, of this session and of the active
 * 5-hour window (`GET /api/usage/statusline`, from the daemon's memory), or, with no daemon,
 * reads them from logs.db read-only; then prices them from the price memo and prints
 * `model · session $ · today $ · window $ (time left) · $/h`. Nothing here parses agent history:
 * without a daemon the line shows what the log database holds since the last scan.
 */
import {existsSync} from 'node:fs'

import {exchange} from '../core/http1.js'
import {runningDaemon} from '../gateway/pidfile.js'
import type {ModelSums, StatuslineSums} from '../gateway/usage-windows.js'
import {STATUSLINE_LOOKBACK_MS, burnRate, statuslineSums} from '../gateway/usage-windows.js'
import {homeFile} from '../store/paths.js'
import type {Pricer} from './usage-cost.js'

/** What Claude Code pipes to a statusLine command (the fields used). */
export interface StatuslineInput {
  session_id?: string
  model?: {id?: string; display_name?: string}
  cost?: {total_cost_usd?: number}
}

/** The input read from stdin: `{}` on a terminal, when empty, or when not JSON. */
export async function readStatuslineInput(
  stdin: NodeJS.ReadStream = process.stdin,
  timeoutMs = 1000,
): Promise<StatuslineInput> {
  if (stdin.isTTY) return {}
  const text = await new Promise<string>((resolve) => {
    let data = ''
    const done = () => {
      clearTimeout(timer)
      stdin.pause()
      resolve(data)
    }
    const timer = setTimeout(done, timeoutMs)
    stdin.setEncoding('utf8')
    stdin.on('data', (chunk: string) => (data += chunk.length + data.length > 1 << 20 ? '' : chunk))
    stdin.once('end', done)
    stdin.once('error', done)
  })
  try {
    const parsed = JSON.parse(text) as unknown
    return parsed && typeof parsed === 'object' ? (parsed as StatuslineInput) : {}
  } catch {
    return {}
  }
}

/** The sums from the running daemon (one loopback request), or undefined when none answers. */
async function fromDaemon(query: string): Promise<StatuslineSums | undefined> {
  const daemon = runningDaemon()
  if (!daemon) return undefined
  try {
    const answer = await exchange(daemon.port, {
      target: `/api/usage/statusline?${query}`,
      headers: {host: `127.0.0.1:${daemon.port}`},
      timeouts: {connect: 500, headers: 2000, body: 2000},
      maxBytes: 4 * 1024 * 1024,
    })
    if (answer.status !== 200) return undefined
    return JSON.parse(answer.body.toString('utf8')) as StatuslineSums
  } catch {
    return undefined
  }
}

/** The sums from logs.db, read-only (nothing when there is none yet). */
async function fromDatabase(options: {
  now: number
  todayStartMs: number
  session?: string
}): Promise<StatuslineSums> {
  const path = homeFile('logDb')
  if (!existsSync(path)) return {today: [], session: options.session === undefined ? null : [], window: null}
  const [{openSqlite}, {usageEntries}] = await Promise.all([
    import('../store/sqlite.js'),
    import('../store/usage-entries.js'),
  ])
  const db = openSqlite(path, {readonly: true, fileMustExist: true})
  try {
    const sinceMs = Math.min(options.todayStartMs, options.now - STATUSLINE_LOOKBACK_MS)
    return statuslineSums(usageEntries(db, {source: 'all', sinceMs}), options)
  } finally {
    db.close()
  }
}

function dollars(models: readonly ModelSums[] | null, pricer: Pricer): {cost: number; unpriced: boolean} {
  let cost = 0
  let unpriced = false
  for (const m of models ?? []) {
    const c = pricer.cost(m.model, m, m.provider)
    if (c === null) unpriced = true
    else cost += c
  }
  return {cost, unpriced}
}

const money = (d: {cost: number; unpriced: boolean}) =>
  d.unpriced && d.cost === 0 ? 'unpriced' : `$${d.cost.toFixed(2)}${d.unpriced ? '+' : ''}`

const left = (ms: number) => {
  const m = Math.max(0, Math.round(ms / 60_000))
  return m >= 60 ? `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m` : `${m}m`
}

/** The line for `input`, and where its figures came from. */
export async function statusline(
  input: StatuslineInput,
  options: {now?: number} = {},
): Promise<{line: string; source: 'daemon' | 'database'}> {
  const now = options.now ?? Date.now()
  const midnight = new Date(now)
  midnight.setHours(0, 0, 0, 0)
  const todayStartMs = midnight.getTime()
  const session = typeof input.session_id === 'string' && input.session_id ? input.session_id : undefined
  const query = `today=${todayStartMs}${session ? `&session=${encodeURIComponent(session)}` : ''}`
  const live = await fromDaemon(query)
  const sums = live ?? (await fromDatabase({now, todayStartMs, session}))
  // the pricer (state.json's provider prices, the price memo) only when there is usage to price
  const anything = [...sums.today, ...(sums.session ?? []), ...(sums.window?.models ?? [])].length > 0
  const pricer: Pricer = anything ? await (await import('./usage-cost.js')).createPricer() : {cost: () => 0}
  const parts: string[] = []
  const model = input.model?.display_name ?? input.model?.id
  if (model) parts.push(model)
  if (session) {
    const own = dollars(sums.session, pricer)
    // a session gwctl has no record of yet (no daemon scanning): Claude Code's own figure
    const claude = input.cost?.total_cost_usd
    parts.push(
      `session ${(sums.session ?? []).length === 0 && typeof claude === 'number' ? `$${claude.toFixed(2)}` : money(own)}`,
    )
  }
  parts.push(`today ${money(dollars(sums.today, pricer))}`)
  const w = sums.window
  if (w) {
    const cost = dollars(w.models, pricer)
    parts.push(`5h ${money(cost)} (${left(w.end - now)} left)`)
    const rate = burnRate({...w, models: []}, cost.unpriced ? null : cost.cost)
    if (rate && rate.costPerHour !== null) parts.push(`$${rate.costPerHour.toFixed(2)}/h`)
  } else parts.push('no active 5h window')
  return {line: parts.join(' · '), source: live ? 'daemon' : 'database'}
}

/** bin/run.js: reads stdin, prints the line; never fails the caller's prompt (a line always). */
export async function main(): Promise<string> {
  try {
    return (await statusline(await readStatuslineInput())).line
  } catch (error) {
    return `gwctl: ${(error as Error).message}`.slice(0, 200)
  }
}
