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
  ConfigError,
  GwError,
  InterruptedError,
  NotFoundError,
  UpstreamError,
  UsageError,
  isAbortError,
} from '../core/errors.js'
import {errorFromResponse, headerValue, networkError, parseBody, parseRetryAfter} from './http-errors.js'
import type {ErrorContext} from './http-errors.js'
import {homeFile} from '../store/paths.js'
import {getCheckedSetting, getSetting, settingSource} from '../store/settings.js'

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
  /** The environment variable the base URL came from, for the hints of network errors. */
  baseUrlEnv?: string
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

export {
  describeProblem,
  errorFromResponse,
  headerValue,
  networkError,
  parseRetryAfter,
} from './http-errors.js'
export type {ErrorContext, UpstreamProblem} from './http-errors.js'

/** Full-jitter exponential backoff: a random wait in [0, base * 2^attempt], capped at 8 s. */
export function backoffDelay(attempt: number, baseMs: number, random = Math.random): number {
  return Math.round(random() * Math.min(8000, baseMs * 2 ** attempt))
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
  private readonly baseUrlEnv?: string

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.apiKey = options.apiKey
    this.attempts = options.attempts ?? 4
    this.backoffMs = options.backoffMs ?? 400
    this.timeouts = {...DEFAULT_TIMEOUTS, ...options.timeouts}
    this.dispatcher = options.dispatcher ?? defaultAgent()
    this.answerer = options.answeredBy
    this.baseUrlEnv = options.baseUrlEnv
  }

  /** Wraps a failed connection in the error model, with the hint that fits this client. */
  private netError(error: unknown, origin: string): GwError {
    return networkError(error, origin, {answeredBy: this.answeredBy, baseUrlEnv: this.baseUrlEnv})
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
        if (last || !isRetryableNetError(error, idempotent)) throw this.netError(error, url.origin)
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
      throw this.netError(error, url.origin)
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
      throw this.netError(error, url.origin)
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
      throw this.netError(error, url.origin)
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

/**
 * A client for the configured platform (flag > environment > settings). Throws a config error
 * naming the missing setting.
 */
export function platformClient(
  overrides: {baseUrl?: string; apiKey?: string} & Omit<ClientOptions, 'baseUrl' | 'apiKey'> = {},
): PlatformClient {
  const baseUrl = overrides.baseUrl ?? getCheckedSetting('base-url')
  const baseUrlEnv =
    overrides.baseUrl === undefined && settingSource('base-url') === 'env' ? 'GWCTL_BASE_URL' : undefined
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
  return new PlatformClient({baseUrlEnv, ...overrides, baseUrl, apiKey})
}
