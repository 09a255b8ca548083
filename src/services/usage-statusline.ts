/**
 * `gwctl statusline`: the one line Claude Code's `statusLine` command shows under its prompt
 * (docs/USAGE-WINDOWS.md). bin/gwctl.cjs answers it without oclif by loading this file alone (its
 * CommonJS copy, dist/services/usage-statusline.cjs), so a call with the gateway running costs
 * about one bare Node start: this module imports node: built-ins only (no other gwctl module: the
 * bundle keeps it one small file), reads the JSON Claude Code pipes on stdin (session id, model)
 * at once, and takes the line's figures (dollars of today, of this session and of the active
 * 5-hour window, kept ready in the daemon's memory and priced there) from the running daemon:
 * from the file it publishes them to (`statusline.json`, daemon/statusline-file.ts) when that
 * holds this midnight's and session's, else by asking it once over loopback
 * (`GET /api/usage/statusline`), which makes it publish them from then on. It prints
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

// types only (erased: the CommonJS copy stays one file of node: built-ins)
import type {Dollars, StatuslineFigures} from '../gateway/usage-windows.js'

// The built-ins through `require`: an ES `import` of node:fs builds its module namespace, which
// reads every export, the lazy `ReadStream` getter too, and so loads fs's streams, which nothing
// here needs (a CPU profile of a call showed them); node:os only without GWCTL_HOME. (In the CommonJS
// copy, scripts/bundle.js makes this CommonJS's own `require`.)
const require = createRequire(import.meta.url)
const {fstatSync, readFileSync, readSync} = require('node:fs') as typeof Fs
const {join} = require('node:path') as typeof Path

/** What Claude Code pipes to a statusLine command (the fields used). */
export interface StatuslineInput {
  session_id?: string
  model?: {id?: string; display_name?: string}
  cost?: {total_cost_usd?: number}
}

export type {Dollars, StatuslineFigures}

/** How long the daemon may take, connect to answer, before the line comes from logs.db. */
export const DAEMON_TIMEOUT_MS = 750

/** The most of stdin read: Claude Code's JSON is a few KB. */
const STDIN_MAX = 1 << 20

const parseInput = (text: string): StatuslineInput => {
  try {
    const parsed = JSON.parse(text) as unknown
    return parsed && typeof parsed === 'object' ? (parsed as StatuslineInput) : {}
  } catch {
    return {}
  }
}

/**
 * The input read from stdin: `{}` on a terminal, when empty, or when not JSON.
 *
 * Read at once, blocking, when stdin is a pipe, a socket or a file: Claude Code writes its JSON
 * and closes stdin, as for every hook (its documented statusline scripts read stdin to the end
 * with `cat` or `jq`, and it aborts a command that runs past its timeout). That costs no stream:
 * `process.stdin` on a pipe loads node:net's stream machinery, 5-8 ms of a 35 ms call. A terminal
 * or another device is not read. Only when stdin is non-blocking (EAGAIN: a parent shared a
 * non-blocking pipe) does the rest come through `process.stdin`, waited for up to `timeoutMs`.
 */
export async function readStatuslineInput(fd = 0, timeoutMs = 1000): Promise<StatuslineInput> {
  let kind
  try {
    kind = fstatSync(fd)
  } catch {
    return {}
  }
  if (!kind.isFIFO() && !kind.isSocket() && !kind.isFile()) return {}
  let buffer = Buffer.allocUnsafe(1 << 16)
  let size = 0
  try {
    for (let n; (n = readSync(fd, buffer, size, buffer.length - size, null)) > 0;) {
      size += n
      if (size < buffer.length) continue
      if (size >= STDIN_MAX) return {} // not Claude Code's few KB: not read further
      const larger = Buffer.allocUnsafe(buffer.length * 2)
      buffer.copy(larger, 0, 0, size)
      buffer = larger
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'EAGAIN' && code !== 'EWOULDBLOCK') return parseInput(buffer.toString('utf8', 0, size))
    return parseInput(
      buffer.toString('utf8', 0, size) + (await readStream(process.stdin, timeoutMs, STDIN_MAX - size)),
    )
  }
  return parseInput(buffer.toString('utf8', 0, size))
}

/** What is left on a stream, up to `max` characters (else ''), until its end or `timeoutMs`. */
export function readStream(stream: NodeJS.ReadableStream, timeoutMs: number, max: number): Promise<string> {
  return new Promise<string>((resolve) => {
    let data = ''
    let over = false
    const done = () => {
      clearTimeout(timer)
      stream.pause()
      resolve(over ? '' : data)
    }
    const timer = setTimeout(done, timeoutMs)
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => {
      if (data.length + chunk.length > max) over = true
      else if (!over) data += chunk
    })
    stream.once('end', done)
    stream.once('error', done)
  })
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
  return daemonProcess(path)?.port
}

/** The pid and port of the daemon the pid file names when that process is alive and a gwctl daemon. */
export function daemonProcess(path: string = pidFilePath()): {pid: number; port: number} | undefined {
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
  return {pid, port}
}

/**
 * How long published figures are taken without asking the daemon. They are rewritten on every
 * change (a request, a history scan); what moves with time alone is a window's end (checked here)
 * and the look-back's edge, so a line goes back to the daemon once in this long.
 */
export const PUBLISHED_FRESH_MS = 10 * 60_000

/**
 * The figures the running daemon `pid` published for this midnight and session
 * (`statusline.json` beside the pid file, written by daemon/statusline-file.ts after a first
 * loopback request asked for them), or undefined: none, another daemon's, older than
 * {@link PUBLISHED_FRESH_MS}, or not this key's.
 */
export function publishedFigures(
  path: string,
  pid: number,
  key: {todayStartMs: number; session?: string},
  now: number,
): StatuslineFigures | undefined {
  let file: {v?: unknown; pid?: unknown; written?: unknown; lines?: Record<string, StatuslineFigures>}
  try {
    file = JSON.parse(readFileSync(path, 'utf8'))
  } catch {
    return undefined
  }
  if (file.v !== 1 || file.pid !== pid || typeof file.written !== 'number') return undefined
  if (now - file.written > PUBLISHED_FRESH_MS || file.written - now > 60_000) return undefined
  const figures = file.lines?.[`${key.todayStartMs} ${key.session ?? ''}`]
  if (!figures || typeof figures.today?.usd !== 'number') return undefined
  // the window ended since: no active one (the next request starts another, and publishes it)
  return figures.window && figures.window.end <= now ? {...figures, window: null} : figures
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
    // node:net only here: a call with no daemon does not load it
    const socket = (require('node:net') as typeof Net).connect(port, '127.0.0.1')
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

/**
 * The figures from the running daemon, or undefined when none answers them: those it published
 * for this midnight and session when fresh, else one loopback request (whose answer makes the
 * daemon publish them from then on).
 */
export async function figuresFromDaemon(
  input: StatuslineInput,
  options: {now: number; port?: number; timeoutMs?: number},
): Promise<StatuslineFigures | undefined> {
  let port = options.port
  const session = sessionOf(input)
  const todayStartMs = todayStart(options.now)
  if (port === undefined) {
    const pidPath = pidFilePath()
    const daemon = daemonProcess(pidPath)
    if (daemon === undefined) return undefined
    const published = publishedFigures(
      join(pidPath, '..', 'statusline.json'),
      daemon.pid,
      {todayStartMs, session},
      options.now,
    )
    if (published) return published
    port = daemon.port
  }
  const query = `today=${todayStartMs}${session ? `&session=${encodeURIComponent(session)}` : ''}`
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

/** bin/gwctl.cjs: reads stdin, prints the line; never fails the caller's prompt (a line always). */
export async function main(): Promise<string> {
  try {
    return (await statusline(await readStatuslineInput())).line
  } catch (error) {
    return `gwctl: ${(error as Error).message}`.slice(0, 200)
  }
}
