/**
 * `gwctl statusline`: the one line Claude Code's `statusLine` command shows under its prompt
 * (docs/USAGE-WINDOWS.md). bin/run.js answers it without oclif by loading this file alone, so a
 * call with the gateway running costs about one bare Node start: this module imports node:
 * built-ins only (no other gwctl module: the bundle keeps it one small file), reads the JSON
 * Claude Code pipes on stdin (session id, model), asks the running daemon once over loopback for
 * the line's figures (`GET /api/usage/statusline`: dollars of today, of this session and of the
 * active 5-hour window, kept ready in the daemon's memory and priced there), and prints
 * `model · session $ · today $ · window $ (time left) · $/h`.
 *
 * With no daemon, a daemon that does not answer within {@link DAEMON_TIMEOUT_MS}, or one too old
 * to send the figures, the figures come from logs.db read-only (usage-statusline-db.ts, loaded
 * only then: SQLite and the price memo). Nothing here parses agent history: without a daemon the
 * line shows what the log database holds since the last scan.
 */
import type * as Fs from 'node:fs'
import {createRequire} from 'node:module'
import type * as Net from 'node:net'
import type * as Os from 'node:os'
import type * as Path from 'node:path'

// The built-ins through `require`: an ES `import` of node:fs builds its module namespace, which
// reads every export, the lazy `ReadStream` getter too, and so loads fs's streams, which nothing
// here needs (a CPU profile of a call showed them); node:os only without GWCTL_HOME. bin/run.js
// has loaded node:module already.
const require = createRequire(import.meta.url)
const {readFileSync} = require('node:fs') as typeof Fs
const {connect} = require('node:net') as typeof Net
const {join} = require('node:path') as typeof Path

/** What Claude Code pipes to a statusLine command (the fields used). */
export interface StatuslineInput {
  session_id?: string
  model?: {id?: string; display_name?: string}
  cost?: {total_cost_usd?: number}
}

/** Dollars of some usage; `unpriced` when a model in it has no price (then `usd` is a floor). */
export interface Dollars {
  usd: number
  unpriced: boolean
}

/** What the line shows, priced (by the daemon, or by usage-statusline-db.ts from logs.db). */
export interface StatuslineFigures {
  today: Dollars
  /** Null when no session was asked for; `requests` 0 when gwctl has no record of it. */
  session: (Dollars & {requests: number}) | null
  /** The active 5-hour window; `end` in Unix ms; `perHour` null when unpriced or a single instant. */
  window: (Dollars & {end: number; perHour: number | null}) | null
}

/** How long the daemon may take, connect to answer, before the line comes from logs.db. */
export const DAEMON_TIMEOUT_MS = 750

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

/**
 * The daemon's pid file, as store/paths.ts and gateway/pidfile.ts find and read it (copied here so
 * this file loads nothing else; test/usage-statusline-fast.test.ts pins them equal).
 */
export function pidFilePath(env: NodeJS.ProcessEnv = process.env): string {
  const home =
    env.GWCTL_HOME ||
    join(env.XDG_CONFIG_HOME || join((require('node:os') as typeof Os).homedir(), '.config'), 'gwctl')
  return join(home, 'gateway.pid')
}

/** The port of the daemon the pid file names when that process is alive and a gwctl daemon. */
export function daemonPort(path: string = pidFilePath()): number | undefined {
  let pid: number
  let port: number
  try {
    ;[pid, port] = readFileSync(path, 'utf8').trim().split(/\s+/).map(Number)
  } catch {
    return undefined
  }
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return undefined
  try {
    process.kill(pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return undefined
  }
  try {
    // on Linux: a gwctl daemon (and not a zombie, nor a pid reused by another program)
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.charAt(stat.lastIndexOf(')') + 2)
    if (state === 'Z' || state === 'X') return undefined
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')
    if (!/gateway run|daemon\/main\.js/.test(cmdline)) return undefined
  } catch {
    // no /proc (macOS): the signal check is all there is
  }
  return port
}

/**
 * One `GET` to 127.0.0.1:port, `Connection: close`: the body of a 200 answer (read to the end of
 * the connection, at most 1 MiB), or undefined on any error, another status, or `timeoutMs`
 * passing from connect to the end of the answer.
 */
export function loopbackGet(port: number, target: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = []
    let size = 0
    const socket = connect(port, '127.0.0.1')
    const finish = (body: string | undefined) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(body)
    }
    const timer = setTimeout(() => finish(undefined), timeoutMs)
    socket.once('connect', () =>
      socket.end(`GET ${target} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nconnection: close\r\n\r\n`),
    )
    socket.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > 1 << 20) finish(undefined)
      else chunks.push(chunk)
    })
    socket.once('error', () => finish(undefined))
    socket.once('end', () => {
      const text = Buffer.concat(chunks).toString('utf8')
      const head = text.indexOf('\r\n\r\n')
      // the daemon's JSON answers carry a content-length (never chunked)
      if (head < 0 || !/^HTTP\/1\.[01] 200 /.test(text)) return finish(undefined)
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, head))
      const body = text.slice(head + 4)
      finish(length && Buffer.byteLength(body) !== Number(length[1]) ? undefined : body)
    })
  })
}

/** Local midnight of `now`, Unix ms: where "today" starts. */
export function todayStart(now: number): number {
  const midnight = new Date(now)
  midnight.setHours(0, 0, 0, 0)
  return midnight.getTime()
}

/** The session id Claude Code sent, when it sent one. */
export const sessionOf = (input: StatuslineInput): string | undefined =>
  typeof input.session_id === 'string' && input.session_id ? input.session_id : undefined

/** The figures from the running daemon (one loopback request), or undefined when none answers them. */
export async function figuresFromDaemon(
  input: StatuslineInput,
  options: {now: number; port?: number; timeoutMs?: number},
): Promise<StatuslineFigures | undefined> {
  const port = options.port ?? daemonPort()
  if (port === undefined) return undefined
  const session = sessionOf(input)
  const query = `today=${todayStart(options.now)}${session ? `&session=${encodeURIComponent(session)}` : ''}`
  const body = await loopbackGet(
    port,
    `/api/usage/statusline?${query}`,
    options.timeoutMs ?? DAEMON_TIMEOUT_MS,
  )
  if (body === undefined) return undefined
  try {
    const figures = (JSON.parse(body) as {figures?: StatuslineFigures}).figures
    // a daemon older than the figures answers token sums only: priced from logs.db instead
    return figures && typeof figures.today?.usd === 'number' ? figures : undefined
  } catch {
    return undefined
  }
}

const money = (d: Dollars) =>
  d.unpriced && d.usd === 0 ? 'unpriced' : `$${d.usd.toFixed(2)}${d.unpriced ? '+' : ''}`

const left = (ms: number) => {
  const m = Math.max(0, Math.round(ms / 60_000))
  return m >= 60 ? `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m` : `${m}m`
}

/** The line: `model · session $ · today $ · 5h $ (time left) · $/h`. */
export function formatLine(input: StatuslineInput, figures: StatuslineFigures, now: number): string {
  const parts: string[] = []
  const model = input.model?.display_name ?? input.model?.id
  if (model) parts.push(model)
  if (sessionOf(input)) {
    const own = figures.session ?? {usd: 0, unpriced: false, requests: 0}
    // a session gwctl has no record of yet (no daemon scanning): Claude Code's own figure
    const claude = input.cost?.total_cost_usd
    parts.push(
      `session ${own.requests === 0 && typeof claude === 'number' ? `$${claude.toFixed(2)}` : money(own)}`,
    )
  }
  parts.push(`today ${money(figures.today)}`)
  const w = figures.window
  if (w) {
    parts.push(`5h ${money(w)} (${left(w.end - now)} left)`)
    if (w.perHour !== null) parts.push(`$${w.perHour.toFixed(2)}/h`)
  } else parts.push('no active 5h window')
  return parts.join(' · ')
}

/** The line for `input`, and where its figures came from. */
export async function statusline(
  input: StatuslineInput,
  options: {now?: number; timeoutMs?: number} = {},
): Promise<{line: string; source: 'daemon' | 'database'}> {
  const now = options.now ?? Date.now()
  const live = await figuresFromDaemon(input, {now, timeoutMs: options.timeoutMs})
  if (live) return {line: formatLine(input, live, now), source: 'daemon'}
  const {figuresFromDatabase} = await import('./usage-statusline-db.js')
  const figures = await figuresFromDatabase({now, todayStartMs: todayStart(now), session: sessionOf(input)})
  return {line: formatLine(input, figures, now), source: 'database'}
}

/** bin/run.js: reads stdin, prints the line; never fails the caller's prompt (a line always). */
export async function main(): Promise<string> {
  try {
    return (await statusline(await readStatuslineInput())).line
  } catch (error) {
    return `gwctl: ${(error as Error).message}`.slice(0, 200)
  }
}
