/**
 * The gateway's HTTP server: node:http on 127.0.0.1 only, one route table, and the checks every
 * request passes before its handler runs.
 *
 * - `Host` must be a loopback name with this port (a DNS-rebinding page has its own host name).
 * - Management calls with a browser `Origin` that is not this gateway are refused (CSRF).
 * - No CORS headers are ever sent, so a browser page cannot read any answer.
 * - Request bodies are size-limited per route; malformed JSON is a 400.
 * - Unknown paths get a 404 JSON error, a known path with another method a 405.
 * - `stop()` stops accepting, lets in-flight requests finish up to a bound, then cuts the rest.
 */
import type {IncomingHttpHeaders, IncomingMessage, ServerResponse} from 'node:http'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'

import type {StateStore} from '../store/state.js'
import type {KeyIndex} from '../gateway/keys.js'
import {closeEventStreams} from './events.js'
import {errorBody} from '../protocols/errors.js'
import type {Routing} from './routing.js'
import type {Family} from '../store/schema.js'
import type {Telemetry} from './telemetry/telemetry.js'
import {parseJsonBytes} from '../protocols/json-bytes.js'

/** What handlers share: the state, the key index, the port, the log. */
export interface GatewayContext {
  store: StateStore
  index: KeyIndex
  /** The port this gateway listens on (for the Host check). */
  port: number
  version: string
  /** Unix milliseconds. */
  startedAt: number
  /** Unix seconds of the latest authenticated model request. */
  lastRequestAt?: number
  /** Why the gateway works in a degraded way (e.g. the log store cannot write), shown by /health. */
  degraded?: string
  /**
   * Reports (a reason) or clears (undefined) one source of degradation, `log store` or `state`:
   * logged once per change, joined into `degraded`.
   */
  degrade?(source: string, reason: string | undefined): void
  /** One line to the daemon log. Never pass secrets. */
  log(line: string): void
  /** Schedules a lazy save of small changes (last seen times). */
  touch(): void
  /** Router, log store, effective providers and policies (absent: every model call gets 503). */
  routing?: Routing
  /** Prometheus metrics and OTLP export (absent: /metrics answers 503). */
  telemetry?: Telemetry
}

/** A request as handlers see it. */
export interface GatewayRequest {
  method: string
  path: string
  /** The raw query string, without `?` ('' when none). */
  search: string
  query: URLSearchParams
  headers: IncomingHttpHeaders
  rawBody: Buffer
  params: Record<string, string>
  req: IncomingMessage
  res: ServerResponse
  /** The parsed JSON body (undefined when empty); throws {@link BadJsonError}. */
  json(): unknown
  /**
   * Checks the body as {@link json} does (throws {@link BadJsonError}) without decoding it as
   * UTF-8, and keeps nothing: the value of its bytes read as Latin-1. JSON's syntax is ASCII and a
   * UTF-8 decoder never takes an ASCII byte into another character, so the bytes are JSON exactly
   * when their UTF-8 text is, and both values have the same structure, numbers, booleans, keys
   * spelled in ASCII and strings of ASCII characters; a string with a character past U+007F may
   * differ (only {@link json} reads it). A body with one non-ASCII byte is decoded into a two-byte
   * string, which costs about as much as parsing it: this reads it 2-3x cheaper.
   */
  latin1Json(): unknown
  /** Aborted when the client disconnects before the answer is complete. */
  signal: AbortSignal
  /** Set by an entrance after authentication, for the log line. */
  agentId?: string
}

export class BadJsonError extends Error {}

export type Handler = (request: GatewayRequest, context: GatewayContext) => void | Promise<unknown>

export interface Route {
  method: string
  /** A full-path RegExp (named groups become params) or a literal path. */
  path: string | RegExp
  /** Error shape of this route. */
  family: Family
  /** Management route: subject to the Origin check. */
  management: boolean
  /** Largest body accepted (bytes). */
  maxBodyBytes: number
  handler: Handler
}

/** Sends a JSON answer. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  })
  res.end(text)
}

/** Sends an error in `family`'s shape. */
export function sendError(
  res: ServerResponse,
  family: Family,
  status: number,
  message: string,
  options: {code?: string; headers?: Record<string, string>} = {},
): void {
  const retryAfter = family === 'gemini' ? options.headers?.['retry-after'] : undefined
  sendJson(res, status, errorBody(family, status, message, {code: options.code, retryAfter}), options.headers)
}

let isoSecond = -1
let isoPrefix = ''

/**
 * `new Date(ms).toISOString()`, with the part up to the second made once a second: the daemon
 * writes one log line per request.
 */
export function isoTime(ms: number): string {
  const second = Math.floor(ms / 1000)
  if (second !== isoSecond) {
    const iso = new Date(second * 1000).toISOString()
    // a year beyond 9999 (or before 0) has another shape: no shortcut
    if (iso.length !== 24) return new Date(ms).toISOString()
    isoSecond = second
    isoPrefix = iso.slice(0, 20)
  }
  const millis = ms - second * 1000
  return `${isoPrefix}${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}Z`
}

/** The error shape for a path no route claims. */
function familyOfPath(path: string): Family {
  if (path.startsWith('/v1beta/')) return 'gemini'
  if (path.startsWith('/v1/messages')) return 'messages'
  if (path.startsWith('/v1/responses')) return 'responses'
  return 'chat'
}

/** How many `Host` fields a request has (node:http keeps only the first in `headers`). */
function hostCount(raw: readonly string[]): number {
  let n = 0
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]
    if (name.length === 4 && name.toLowerCase() === 'host') n++
  }
  return n
}

/** The path of the request line at the start of `packet` (what a refused request asked for), if any. */
function pathOfPacket(packet: unknown): string | undefined {
  if (!Buffer.isBuffer(packet)) return undefined
  const line = /^[A-Z]+ (\S+) HTTP\/1\.[01]\r?\n/.exec(
    packet.toString('latin1', 0, Math.min(packet.length, 8192)),
  )
  return line ? splitUrl(line[1]).path : undefined
}

/** Loopback names a client may use in `Host` / `Origin`. */
function allowedHosts(port: number): Set<string> {
  return new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`])
}

function matchRoute(
  routes: readonly Route[],
  method: string,
  path: string,
): {route: Route; params: Record<string, string>} | {allow: string[]} | undefined {
  let pathMatched: Route | undefined
  for (const route of routes) {
    let params: Record<string, string> | undefined
    if (typeof route.path === 'string') {
      if (route.path === path) params = {}
    } else {
      const m = route.path.exec(path)
      if (m) params = {...(m.groups ?? {})}
    }
    if (!params) continue
    pathMatched ??= route
    if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return {route, params}
  }
  return pathMatched
    ? {allow: routes.filter((r) => r.path === pathMatched!.path).map((r) => r.method)}
    : undefined
}

/**
 * A request as handlers see it. A class rather than an object literal per request: its getters
 * live on the prototype, and `query`, `signal` and the parsed body are made on first use (model
 * requests, the hot path, rarely need the first two; an AbortController plus a 'close' listener
 * per request is measurable).
 */
class Request implements GatewayRequest {
  readonly headers: IncomingHttpHeaders
  agentId?: string
  private parsed: {value: unknown} | undefined = undefined
  private queryValue: URLSearchParams | undefined = undefined
  private signalValue: AbortSignal | undefined = undefined

  constructor(
    readonly method: string,
    readonly path: string,
    readonly search: string,
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly rawBody: Buffer,
    readonly params: Record<string, string>,
  ) {
    this.headers = req.headers
  }

  get query(): URLSearchParams {
    this.queryValue ??= new URLSearchParams(this.search)
    return this.queryValue
  }

  get signal(): AbortSignal {
    if (!this.signalValue) {
      const controller = new AbortController()
      this.signalValue = controller.signal
      const res = this.res
      if (res.destroyed && !res.writableFinished) controller.abort()
      else
        res.on('close', () => {
          if (!res.writableFinished) controller.abort()
        })
    }
    return this.signalValue
  }

  json(): unknown {
    if (this.parsed) return this.parsed.value
    const rawBody = this.rawBody
    if (rawBody.length === 0) return (this.parsed = {value: undefined}).value
    try {
      return (this.parsed = {value: parseJsonBytes(rawBody)}).value
    } catch (error) {
      throw new BadJsonError(`The request body is not valid JSON: ${(error as Error).message}`)
    }
  }

  latin1Json(): unknown {
    if (this.parsed) return this.parsed.value
    const rawBody = this.rawBody
    if (rawBody.length === 0) return undefined
    try {
      return JSON.parse(rawBody.toString('latin1'))
    } catch {
      // the UTF-8 text's own error message (and, were the two ever to disagree, its verdict)
      return this.json()
    }
  }
}

/**
 * The request handler, usable without a socket (tests call it with in-memory request and
 * response objects) and by the real server.
 */
export function createHandler(
  routes: readonly Route[],
  context: GatewayContext,
  /** Called when a response closed, after its log line (the server's count of requests in flight). */
  closed?: () => void,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const hosts = allowedHosts(context.port)
  const origins = new Set([...hosts].map((h) => `http://${h}`))

  return async (req, res) => {
    const started = Date.now()
    const method = req.method ?? 'GET'
    const {path, search} = splitUrl(req.url ?? '/')
    // The log line is written when the response closes, which may be inside the handler: one
    // listener per request for it and the server's count
    let request: Request | undefined = undefined
    res.on('close', () => {
      // Path only: the query may carry a key (`?key=`), headers carry keys too.
      const status = res.writableFinished ? String(res.statusCode) : `${res.statusCode} aborted`
      const now = Date.now()
      const agentId = request?.agentId
      context.log(
        `${isoTime(now)} ${method} ${path} ${status} ${now - started}ms${agentId ? ` agent=${agentId}` : ''}`,
      )
      if (closed) closed()
    })

    const host = req.headers.host
    if (!host) {
      drain(req)
      sendError(
        res,
        familyOfPath(path),
        400,
        `The request has no Host header; use http://127.0.0.1:${context.port}.`,
        {code: 'missing_host'},
      )
      return
    }
    if (req.rawHeaders !== undefined && hostCount(req.rawHeaders) > 1) {
      // node:http keeps the first of several: a loopback first one must not hide the others
      drain(req)
      sendError(res, familyOfPath(path), 400, 'The request has more than one Host header.', {
        code: 'bad_host',
      })
      return
    }
    if (!hosts.has(host.toLowerCase())) {
      drain(req)
      sendError(
        res,
        familyOfPath(path),
        403,
        `Host "${host ?? ''}" is not a loopback name of this gateway; use http://127.0.0.1:${context.port}.`,
        {code: 'bad_host'},
      )
      return
    }

    const match = matchRoute(routes, method, path)
    if (!match) {
      drain(req)
      sendError(res, familyOfPath(path), 404, `No such endpoint: ${method} ${path}. See GET /help.`, {
        code: 'not_found',
      })
      return
    }
    if ('allow' in match) {
      drain(req)
      sendError(res, familyOfPath(path), 405, `${method} is not allowed on ${path}.`, {
        code: 'method_not_allowed',
        headers: {allow: match.allow.join(', ')},
      })
      return
    }
    const {route, params} = match

    const origin = req.headers.origin
    if (route.management && origin !== undefined && !origins.has(origin.toLowerCase())) {
      drain(req)
      sendError(res, route.family, 403, `Cross-origin requests are refused (Origin "${origin}").`, {
        code: 'bad_origin',
      })
      return
    }

    const declared = Number(req.headers['content-length'] ?? 0)
    if (declared > route.maxBodyBytes) {
      drain(req)
      sendError(res, route.family, 413, `The request body is larger than ${route.maxBodyBytes} bytes.`, {
        code: 'body_too_large',
        headers: {connection: 'close'},
      })
      return
    }
    const rawBody = await readBody(req, route.maxBodyBytes)
    if (!rawBody) {
      sendError(res, route.family, 413, `The request body is larger than ${route.maxBodyBytes} bytes.`, {
        code: 'body_too_large',
        headers: {connection: 'close'},
      })
      req.destroy()
      return
    }

    request = new Request(method, path, search, req, res, rawBody, params)
    try {
      await route.handler(request, context)
    } catch (error) {
      if (res.headersSent) {
        res.destroy()
        return
      }
      if (error instanceof BadJsonError) {
        sendError(res, route.family, 400, error.message, {code: 'invalid_json'})
        return
      }
      context.log(`${new Date().toISOString()} error in ${method} ${path}: ${(error as Error).message}`)
      sendError(res, route.family, 500, 'The gateway failed to handle the request; see the daemon log.', {
        code: 'internal_error',
      })
    }
  }
}

/** Characters that `new URL()` leaves as they are in a path (RFC 3986 pchar without `%`). */
const PLAIN_PATH = /^\/(?!\/)[\w\-.~:@!$&'()*+,;=/]*$/
const DOT_SEGMENT = /\/\.\.?(?:\/|$)/

/**
 * Path and raw query of a request target. A plain path (the norm) is taken as is, which saves a
 * `new URL()` per request; anything `new URL()` would rewrite (dot segments, `%`, backslashes,
 * `//`, characters it percent-encodes) still goes through it, so the result is the same.
 */
export function splitUrl(target: string): {path: string; search: string} {
  const q = target.indexOf('?')
  const rawPath = q === -1 ? target : target.slice(0, q)
  const rawSearch = q === -1 ? '' : target.slice(q + 1)
  if (PLAIN_PATH.test(rawPath) && !DOT_SEGMENT.test(rawPath) && !rawSearch.includes('#'))
    return {path: rawPath, search: rawSearch}
  // `//x` would be read as a host by `new URL(target, base)`: origin + target keeps it a path
  let url: URL
  try {
    url = new URL(
      target.startsWith('/') ? 'http://gateway.invalid' + target : target,
      'http://gateway.invalid',
    )
  } catch {
    return {path: rawPath, search: rawSearch} // no route matches it: a 404 in JSON
  }
  return {path: url.pathname, search: url.search.slice(1)}
}

/**
 * The whole request body, or undefined when it grows past `max` bytes. Collected from 'data'
 * events: an async iterator costs a Promise per chunk and more per request.
 */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size > max) {
        req.off('data', onData)
        req.pause()
        resolve(undefined)
        return
      }
      chunks.push(chunk)
    }
    // `on` rather than `once` (no wrapper each; a request ends, fails or closes once, and a
    // settled promise ignores a second call)
    req.on('data', onData)
    req.on('end', () => resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size)))
    req.on('error', reject)
    // a client that goes away mid-body: the same failure the async iterator reported
    req.on('close', () => {
      if (!req.complete) reject(new Error('the client closed the connection before the body ended'))
    })
  })
}

function drain(req: IncomingMessage): void {
  req.resume()
}

export interface RunningServer {
  port: number
  /** Stops accepting, waits for in-flight requests up to `drainMs`, then closes every connection. */
  stop(drainMs?: number): Promise<void>
}

/** Listens on 127.0.0.1:`port`; rejects with the listen error (EADDRINUSE, EACCES). */
export async function listen(
  routes: readonly Route[],
  context: GatewayContext,
  port: number,
): Promise<RunningServer> {
  let inFlight = 0
  let idle: (() => void) | undefined
  const handler = createHandler(routes, context, () => {
    inFlight--
    if (inFlight === 0) idle?.()
  })
  // The response under way on each socket: a parse error in the body of a request that was
  // already answered (a 405 to a chunked body that turns out malformed) gets no second answer.
  const current = new WeakMap<object, ServerResponse>()
  // requireHostHeader off: a request without Host is answered by the handler (400 in JSON, in the
  // shape of its path) instead of node:http's empty 400
  const server = createServer({requireHostHeader: false}, (req, res) => {
    current.set(req.socket, res)
    // counted down by the handler's 'close' listener (registered before it can return)
    inFlight++
    handler(req, res).catch((error: Error) => {
      context.log(`${new Date().toISOString()} error in ${req.method} request: ${error.message}`)
      if (res.headersSent) res.destroy()
      else
        sendError(res, 'chat', 500, 'The gateway failed to handle the request; see the daemon log.', {
          code: 'internal_error',
        })
    })
  })
  // Requests Node's parser refuses (CR/NUL in a header, duplicate Content-Length, headers over
  // 16 KB) get a JSON error too, where the socket still takes one
  server.on('clientError', (error: NodeJS.ErrnoException, socket) => {
    const answered = current.get(socket)
    if (!socket.writable || error.code === 'ECONNRESET' || (answered && answered.headersSent)) {
      socket.destroy()
      return
    }
    const tooLarge = error.code === 'HPE_HEADER_OVERFLOW'
    const status = tooLarge ? 431 : 400
    // in the shape of the entrance the request line names, when the refused bytes show it
    const path = pathOfPacket((error as {rawPacket?: unknown}).rawPacket)
    const message = tooLarge
      ? 'The request headers are larger than 16 KB.'
      : `The request is not valid HTTP/1.1 (${error.code ?? 'parse error'}).`
    const text = JSON.stringify(
      errorBody(path === undefined ? 'chat' : familyOfPath(path), status, message, {
        code: tooLarge ? 'headers_too_large' : 'bad_request',
      }),
    )
    socket.end(
      `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    )
  })
  server.headersTimeout = 30_000
  server.requestTimeout = 0 // streams may run long; idle upstreams are timed out by routing
  server.keepAliveTimeout = 5_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen({port, host: '127.0.0.1', exclusive: true}, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const actual = (server.address() as AddressInfo).port
  return {
    port: actual,
    async stop(drainMs = 10_000) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()))
      closeEventStreams()
      server.closeIdleConnections()
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, drainMs)
          idle = () => {
            clearTimeout(timer)
            resolve()
          }
        })
      }
      server.closeAllConnections()
      await closed
    },
  }
}
