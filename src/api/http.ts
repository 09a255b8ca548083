/**
 * The one HTTP client of the remote platform, on undici.
 *
 * - Bearer auth on every call; the key never appears in an error, log or output.
 * - One keep-alive `Agent` per process, with connect and header timeouts.
 * - Retries with full-jitter exponential backoff, honouring `Retry-After`:
 *   GET on network errors and 429/502/503/504; POST/DELETE only where the request cannot have
 *   been acted on (connection refused, 429, 503), so a create is never sent twice.
 * - Error answers become typed errors that keep the upstream status, message, `platform_id` and
 *   the trailing numeric code of gamma messages.
 */
import {once} from 'node:events'
import {createWriteStream, readFileSync} from 'node:fs'
import {rename, rm} from 'node:fs/promises'
import {setTimeout as sleep} from 'node:timers/promises'
import type {Dispatcher} from 'undici'
import {Agent, interceptors, request} from 'undici'

import {
  AuthError,
  ConfigError,
  GwError,
  InterruptedError,
  NotFoundError,
  UpstreamError,
  UsageError,
  isAbortError,
} from '../core/errors.js'
import {homeFile} from '../store/paths.js'
import {getCheckedSetting, getSetting} from '../store/settings.js'

/** Timeouts in milliseconds. */
export interface Timeouts {
  connect: number
  headers: number
  /** Longest silence while a body streams in. */
  body: number
}

export const DEFAULT_TIMEOUTS: Timeouts = {connect: 10_000, headers: 60_000, body: 120_000}

export interface ClientOptions {
  baseUrl: string
  apiKey: string
  timeouts?: Partial<Timeouts>
  /** Attempts in all, including the first (default 4). */
  attempts?: number
  /** Base backoff in ms (default 400); tests make it small. */
  backoffMs?: number
  dispatcher?: Dispatcher
  /** Who answers at this base URL, for error messages (default: guessed from the URL). */
  answeredBy?: 'platform' | 'gateway'
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | readonly string[] | undefined>
  body?: unknown
  headers?: Record<string, string>
  signal?: AbortSignal
  /** Overrides the header timeout (e.g. a chat that waits long for its first token). */
  headersTimeoutMs?: number
  /** A deadline the user put in the request body (seconds), so a 504 can be blamed on it. */
  userTimeoutSeconds?: number
}

export interface ApiResponse<T> {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: T
}

const RETRY_STATUS_IDEMPOTENT = new Set([429, 502, 503, 504])
const RETRY_STATUS_UNSAFE = new Set([429, 503])
const RETRY_NET_CODES_UNSAFE = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EAI_AGAIN'])
const MAX_RETRY_AFTER_MS = 60_000

let sharedAgent: Agent | undefined
function defaultAgent(): Agent {
  sharedAgent ??= new Agent({
    keepAliveTimeout: 30_000,
    connect: {timeout: DEFAULT_TIMEOUTS.connect},
    headersTimeout: DEFAULT_TIMEOUTS.headers,
    bodyTimeout: DEFAULT_TIMEOUTS.body,
  })
  return sharedAgent
}

/** Parses `Retry-After` (seconds or an HTTP date) and `retry-after-ms`; undefined when absent. */
export function parseRetryAfter(
  headers: Record<string, string | string[] | undefined>,
  now = Date.now(),
): number | undefined {
  const ms = headerValue(headers, 'retry-after-ms')
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms))
  const value = headerValue(headers, 'retry-after')
  if (!value) return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Full-jitter exponential backoff: a random wait in [0, base * 2^attempt], capped at 8 s. */
export function backoffDelay(attempt: number, baseMs: number, random = Math.random): number {
  return Math.round(random() * Math.min(8000, baseMs * 2 ** attempt))
}

export function headerValue(
  headers: Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  const v = headers[name]
  return Array.isArray(v) ? v[0] : v
}

/** What an error body of the platform says, in any of the shapes it uses. */
export interface UpstreamProblem {
  message: string
  type?: string
  code?: string
  /** Gamma: the internal numeric code at the end of the message, in parentheses. */
  numericCode?: string
  platformId?: string
}

/** Reads the message, type and codes out of an error body of any known shape. */
export function describeProblem(
  status: number,
  body: unknown,
  headers: Record<string, string | string[] | undefined> = {},
): UpstreamProblem {
  let message: string | undefined
  let type: string | undefined
  let code: string | undefined
  let platformId = headerValue(headers, 'platform-id')
  if (body && typeof body === 'object') {
    const b = body as Record<string, any>
    if (typeof b.platform_id === 'string') platformId = b.platform_id
    const e = b.error
    if (e && typeof e === 'object') {
      message = typeof e.message === 'string' ? e.message : undefined
      type = typeof e.type === 'string' ? e.type : undefined
      code =
        e.code === undefined || e.code === null
          ? e.http_code === undefined
            ? undefined
            : String(e.http_code)
          : String(e.code)
    } else if (typeof e === 'string') {
      message = e
    }
    message ??=
      typeof b.message === 'string' ? b.message : typeof b.detail === 'string' ? b.detail : undefined
    code ??= typeof b.code === 'string' || typeof b.code === 'number' ? String(b.code) : undefined
  } else if (typeof body === 'string' && body.trim()) {
    message = body.trim().slice(0, 500)
  }
  message ??= `HTTP ${status}`
  const numeric = /\((\d+)\)\s*\.?\s*$/.exec(message)
  return {message, type, code, numericCode: numeric?.[1], platformId}
}

/** What the client knew when an error answer came back, so the message can say why. */
export interface ErrorContext {
  /** Who answered: the remote platform, or the local gwctl gateway (a base URL on its port). */
  answeredBy?: 'platform' | 'gateway'
  method?: string
  /** The path below the base URL (`/videos`). */
  path?: string
  /** The base URL the request went to. */
  baseUrl?: string
  /** A deadline the user set on the request (chat --timeout -> extra_body.timeout), in seconds. */
  userTimeoutSeconds?: number
}

const WHO = {platform: 'The platform', gateway: 'The local gateway'} as const

/**
 * Maps an error answer to a typed error: the one place that words HTTP errors. It names who
 * answered, reads `Retry-After`, says when a 504 came from the user's own `--timeout`, and hints
 * at the base URL when an endpoint is missing.
 */
export function errorFromResponse(
  status: number,
  body: unknown,
  headers: Record<string, string | string[] | undefined> = {},
  context: ErrorContext = {},
): GwError {
  const problem = describeProblem(status, body, headers)
  const details: Record<string, unknown> = {status}
  if (problem.type) details.type = problem.type
  if (problem.code) details.upstream_code = problem.code
  if (problem.numericCode) details.numeric_code = problem.numericCode
  if (problem.platformId) details.platform_id = problem.platformId
  const by = context.answeredBy ?? 'platform'
  if (context.answeredBy) details.answered_by = by
  const message = `${WHO[by]} answered ${status}: ${problem.message}`
  // A key the gateway cannot parse (forged checksum) is answered 400 `invalid_api_key`: it is
  // still a credentials problem, exit 4 like 401/403.
  const badKey =
    status === 400 && (problem.code === 'invalid_api_key' || problem.type === 'authentication_error')
  if (status === 401 || status === 403 || badKey) {
    return new AuthError(message, {
      code: status === 403 ? 'forbidden' : badKey ? 'invalid_api_key' : 'unauthorized',
      details,
      hint:
        by === 'gateway'
          ? 'The gateway refused the key: use the gw-... key `gwctl key issue` printed (issue a new one with `gwctl key issue`), in GWCTL_API_KEY or `gwctl config set api-key`.'
          : 'Check the API key: `gwctl config set api-key <KEY>` or set GWCTL_API_KEY.',
    })
  }
  if (status === 404) {
    const endpointHint = missingEndpointHint(problem.message, context)
    if (endpointHint)
      return new NotFoundError(message, {code: 'no_such_endpoint', details, hint: endpointHint})
    return new NotFoundError(message, {details})
  }
  const code = status === 429 ? 'rate_limited' : status >= 500 ? 'upstream_unavailable' : 'bad_request'
  if (status === 504 && context.userTimeoutSeconds !== undefined) {
    return new UpstreamError(message, {
      code: 'timeout_reached',
      status,
      details: {...details, timeout_seconds: context.userTimeoutSeconds},
      hint: `Your --timeout ${context.userTimeoutSeconds} (seconds to the first token) ran out first: raise it, e.g. --timeout ${Math.max(60, context.userTimeoutSeconds * 4)}, or leave it out.`,
    })
  }
  // What to do next (gwctl has already retried what was safe to retry).
  const retryAfterMs = parseRetryAfter(headers)
  const waitText =
    retryAfterMs === undefined
      ? 'wait a little'
      : `wait ${Math.max(1, Math.ceil(retryAfterMs / 1000))} s (its Retry-After)`
  if (retryAfterMs !== undefined) details.retry_after_seconds = Math.max(1, Math.ceil(retryAfterMs / 1000))
  const hint =
    status === 429
      ? `${WHO[by]} is limiting requests: ${waitText} and run the command again.`
      : status >= 500
        ? by === 'gateway'
          ? 'The gateway or its upstream failed: `gwctl logs` shows the request and `gwctl status` the providers.'
          : 'The platform failed on its side: try again in a while (--verbose shows the ids to quote to support).'
        : undefined
  return new UpstreamError(message, {code, status, details, hint})
}

/**
 * A 404 for an endpoint (not for a task id) almost always means a base URL without `/api/v1`.
 * Returns the hint, or undefined when the 404 is about a record.
 */
function missingEndpointHint(message: string, context: ErrorContext): string | undefined {
  if (context.answeredBy === 'gateway') return undefined
  const base = context.baseUrl?.replace(/\/+$/, '')
  const saysEndpoint =
    /no such (endpoint|route|path)|cannot (get|post|delete)|unknown (endpoint|route|path)|route not found/i.test(
      message,
    )
  const baseLacksApi = base !== undefined && !/\/api\/v1$/.test(new URL(base).pathname)
  if (!saysEndpoint && !baseLacksApi) return undefined
  return base
    ? `No such endpoint below ${base}: the base URL should end in /api/v1 (e.g. ${new URL(base).origin}/api/v1). Fix it with \`gwctl config set base-url\` or GWCTL_BASE_URL.`
    : 'No such endpoint: the base URL should end in /api/v1.'
}

function networkError(error: unknown, origin: string): GwError {
  if (isAbortError(error)) return new InterruptedError('Request aborted.')
  const code = (error as {code?: string}).code
  const cause = (error as {cause?: {code?: string}}).cause
  const netCode = code ?? cause?.code
  const what =
    netCode === 'ECONNREFUSED'
      ? `nothing is listening at ${origin}`
      : netCode === 'UND_ERR_CONNECT_TIMEOUT'
        ? `connecting to ${origin} timed out`
        : netCode === 'UND_ERR_HEADERS_TIMEOUT'
          ? `${origin} sent no answer in time`
          : netCode === 'UND_ERR_BODY_TIMEOUT'
            ? `${origin} stopped sending mid-answer`
            : netCode === 'ENOTFOUND' || netCode === 'EAI_AGAIN'
              ? `the host of ${origin} cannot be resolved`
              : `${(error as Error).message}`
  return new UpstreamError(`Network error: ${what}.`, {
    code: 'network',
    details: netCode ? {net_code: netCode} : undefined,
    hint: 'Check the base URL (`gwctl config get base-url`) and your connection.',
    cause: error,
  })
}

function isRetryableNetError(error: unknown, idempotent: boolean): boolean {
  if (isAbortError(error)) return false
  if (idempotent) return true
  const code = (error as {code?: string}).code ?? (error as {cause?: {code?: string}}).cause?.code
  return code !== undefined && RETRY_NET_CODES_UNSAFE.has(code)
}

/** A client of the remote platform at one base URL with one API key. */
export class PlatformClient {
  readonly baseUrl: string
  private readonly apiKey: string
  private readonly attempts: number
  private readonly backoffMs: number
  private readonly timeouts: Timeouts
  private readonly dispatcher: Dispatcher
  private readonly answerer?: 'platform' | 'gateway'

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.apiKey = options.apiKey
    this.attempts = options.attempts ?? 4
    this.backoffMs = options.backoffMs ?? 400
    this.timeouts = {...DEFAULT_TIMEOUTS, ...options.timeouts}
    this.dispatcher = options.dispatcher ?? defaultAgent()
    this.answerer = options.answeredBy
  }

  /** Absolute URL of a path below the base URL, with query parameters (arrays repeat the key). */
  url(path: string, query?: RequestOptions['query']): URL {
    // An id `..` (or `.`) would be resolved away by URL: `DELETE /videos/..` reaches `/` instead.
    const dots = path.split(/[/?#]/).find((segment) => /^(\.|%2e){1,2}$/i.test(segment))
    if (dots !== undefined) {
      throw new UsageError(
        `"${decodeURIComponent(dots)}" is not a valid id: it would name another endpoint.`,
        {
          code: 'invalid_id',
        },
      )
    }
    const url = new URL(this.baseUrl + (path.startsWith('/') ? path : `/${path}`))
    for (const [key, value] of Object.entries(query ?? {})) {
      if (value === undefined) continue
      if (Array.isArray(value)) for (const v of value) url.searchParams.append(key, String(v))
      else url.searchParams.set(key, String(value))
    }
    return url
  }

  /** Who answers this client: the local gwctl gateway when the base URL is on its loopback port. */
  get answeredBy(): 'platform' | 'gateway' {
    return this.answerer ?? (isLocalGateway(this.baseUrl) ? 'gateway' : 'platform')
  }

  private context(method: string, path: string, options: RequestOptions): ErrorContext {
    return {
      answeredBy: this.answeredBy,
      method,
      path,
      baseUrl: this.baseUrl,
      userTimeoutSeconds: options.userTimeoutSeconds,
    }
  }

  private headers(extra?: Record<string, string>, json = false): Record<string, string> {
    return {
      authorization: `Bearer ${this.apiKey}`,
      accept: 'application/json',
      'user-agent': 'gwctl',
      ...(json ? {'content-type': 'application/json'} : {}),
      ...extra,
    }
  }

  /** Sends a request and returns the parsed JSON answer; error answers throw typed errors. */
  async request<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    options: RequestOptions = {},
  ): Promise<ApiResponse<T>> {
    const url = this.url(path, options.query)
    const idempotent = method === 'GET'
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body)
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= this.attempts - 1
      let res: Dispatcher.ResponseData
      try {
        res = await request(url, {
          method,
          headers: this.headers(options.headers, payload !== undefined),
          body: payload,
          signal: options.signal,
          dispatcher: this.dispatcher,
          headersTimeout: options.headersTimeoutMs ?? this.timeouts.headers,
          bodyTimeout: this.timeouts.body,
        })
      } catch (error) {
        if (last || !isRetryableNetError(error, idempotent)) throw networkError(error, url.origin)
        await this.pause(backoffDelay(attempt, this.backoffMs), options.signal)
        continue
      }
      const text = await res.body.text()
      const body = parseBody(text)
      if (res.statusCode < 400) return {status: res.statusCode, headers: res.headers, body: body as T}
      const retryable = (idempotent ? RETRY_STATUS_IDEMPOTENT : RETRY_STATUS_UNSAFE).has(res.statusCode)
      const retryAfter = parseRetryAfter(res.headers)
      if (last || !retryable || (retryAfter !== undefined && retryAfter > MAX_RETRY_AFTER_MS)) {
        throw this.redacted(
          errorFromResponse(res.statusCode, body, res.headers, this.context(method, path, options)),
        )
      }
      await this.pause(retryAfter ?? backoffDelay(attempt, this.backoffMs), options.signal)
    }
  }

  /**
   * Sends a POST whose answer is streamed (SSE). Returns the open response on 2xx; the caller
   * reads `body`. Error answers are read and thrown as typed errors.
   */
  async stream(path: string, body: unknown, options: RequestOptions = {}): Promise<Dispatcher.ResponseData> {
    const url = this.url(path, options.query)
    let res: Dispatcher.ResponseData
    try {
      res = await request(url, {
        method: 'POST',
        headers: this.headers({accept: 'text/event-stream', ...options.headers}, true),
        body: JSON.stringify(body),
        signal: options.signal,
        dispatcher: this.dispatcher,
        headersTimeout: options.headersTimeoutMs ?? this.timeouts.headers,
        bodyTimeout: this.timeouts.body,
      })
    } catch (error) {
      throw networkError(error, url.origin)
    }
    if (res.statusCode >= 400) {
      const text = await res.body.text()
      throw this.redacted(
        errorFromResponse(res.statusCode, parseBody(text), res.headers, this.context('POST', path, options)),
      )
    }
    return res
  }

  /**
   * Downloads `fileUrl` to `dest` through `dest + '.part'`, renamed only when complete, so an
   * interrupted download never leaves a truncated file under the real name. The API key is sent
   * only to the platform's own origin, never to a storage host that signs its own URLs.
   */
  async download(
    fileUrl: string,
    dest: string,
    options: {signal?: AbortSignal; onProgress?: (received: number, total?: number) => void} = {},
  ): Promise<{bytes: number}> {
    const url = new URL(fileUrl)
    const sameOrigin = url.origin === new URL(this.baseUrl).origin
    let res: Dispatcher.ResponseData
    try {
      res = await request(url, {
        method: 'GET',
        headers: sameOrigin ? this.headers({accept: '*/*'}) : {accept: '*/*', 'user-agent': 'gwctl'},
        signal: options.signal,
        // Storage links may redirect; undici drops the authorization header on a cross-origin hop.
        dispatcher: this.dispatcher.compose(interceptors.redirect({maxRedirections: 5})),
        headersTimeout: this.timeouts.headers,
        bodyTimeout: this.timeouts.body,
      })
    } catch (error) {
      throw networkError(error, url.origin)
    }
    if (res.statusCode >= 400) {
      const text = await res.body.text()
      const error = this.redacted(errorFromResponse(res.statusCode, parseBody(text), res.headers))
      if (res.statusCode === 403 || res.statusCode === 404 || res.statusCode === 410) {
        throw new NotFoundError(`The video file is no longer available (${res.statusCode}).`, {
          code: 'video_expired',
          hint: 'Video URLs are valid for a limited time: query the task again for a fresh link.',
          cause: error,
        })
      }
      throw error
    }
    const lengthHeader = headerValue(res.headers, 'content-length')
    const total = lengthHeader ? Number(lengthHeader) : undefined
    const part = `${dest}.part`
    const file = createWriteStream(part, {mode: 0o644})
    let received = 0
    try {
      for await (const chunk of res.body) {
        received += (chunk as Buffer).length
        if (!file.write(chunk)) await once(file, 'drain')
        options.onProgress?.(received, total)
      }
      file.end()
      await once(file, 'close')
      if (total !== undefined && received !== total) {
        throw new UpstreamError(`Download incomplete: got ${received} of ${total} bytes.`, {
          code: 'download_incomplete',
        })
      }
      await rename(part, dest)
    } catch (error) {
      file.destroy()
      await rm(part, {force: true})
      if (error instanceof GwError) throw error
      throw networkError(error, url.origin)
    }
    return {bytes: received}
  }

  /**
   * The error with this client's API key cut out of its message and details: some services quote
   * the key they refused ("Incorrect API key provided: sk-..."), or echo the request headers.
   */
  private redacted(error: GwError): GwError {
    const key = this.apiKey
    if (key.length < 8) return error
    const clean = (text: string): string => text.split(key).join('[redacted]')
    error.message = clean(error.message)
    for (const [name, value] of Object.entries(error.details ?? {}))
      if (typeof value === 'string') error.details![name] = clean(value)
    return error
  }

  private async pause(ms: number, signal?: AbortSignal): Promise<void> {
    try {
      await sleep(ms, undefined, {signal})
    } catch (error) {
      if (isAbortError(error)) throw new InterruptedError('Request aborted.')
      throw error
    }
  }
}

/**
 * True when `baseUrl` points at the local gwctl gateway: a loopback host on the port of the
 * running daemon (its pid file) or the configured gateway port (GWCTL_GATEWAY_PORT /
 * gateway.port, else 4317).
 */
export function isLocalGateway(baseUrl: string): boolean {
  let url: URL
  try {
    url = new URL(baseUrl)
  } catch {
    return false
  }
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return false
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80))
  const ports = new Set<number>([4317])
  try {
    const configured = getSetting('gateway.port')
    if (configured) ports.add(Number(configured))
  } catch {
    // an unreadable settings file is reported elsewhere
  }
  try {
    // the pid file holds "PID PORT" (written by the daemon; read here without the daemon's code)
    const daemonPort = Number(readFileSync(homeFile('pid'), 'utf8').trim().split(/\s+/)[1])
    if (Number.isInteger(daemonPort) && daemonPort > 0) ports.add(daemonPort)
  } catch {
    // no daemon
  }
  return ports.has(port)
}

function parseBody(text: string): unknown {
  if (!text) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/**
 * A client for the configured platform (flag > environment > settings). Throws a config error
 * naming the missing setting.
 */
export function platformClient(
  overrides: {baseUrl?: string; apiKey?: string} & Omit<ClientOptions, 'baseUrl' | 'apiKey'> = {},
): PlatformClient {
  const baseUrl = overrides.baseUrl ?? getCheckedSetting('base-url')
  const apiKey = overrides.apiKey ?? getCheckedSetting('api-key')
  if (!baseUrl) {
    throw new ConfigError('No platform base URL is set.', {
      code: 'missing_base_url',
      hint: 'Run `gwctl config set base-url https://<host>/api/v1` or set GWCTL_BASE_URL (try `gwctl sim` for an offline simulator).',
    })
  }
  if (!apiKey) {
    throw new ConfigError('No platform API key is set.', {
      code: 'missing_api_key',
      hint: 'Run `gwctl config set api-key <KEY>` or set GWCTL_API_KEY.',
    })
  }
  return new PlatformClient({...overrides, baseUrl, apiKey})
}
