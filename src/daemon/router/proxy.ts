/**
 * The proxy: sends one entrance request to the policy's targets in order and streams the answer
 * back, byte for byte as it arrives.
 *
 * - Targets whose breaker is open are skipped. A connect error, a timeout, a 5xx or a 429 moves on
 *   to the next target while nothing has been sent to the client (when the policy allows
 *   fallbacks). After the first byte, a failure ends an SSE answer with an error event in the
 *   entrance's protocol.
 * - No target answered: 502 (the reason included); every target's breaker open: 503. Both in
 *   the entrance's error shape. An upstream 5xx/429 with nothing left to try is passed through.
 * - The gateway key never leaves: every credential header and `?key=` are dropped and the
 *   provider's credential is set in its protocol's form. Only protocol headers are forwarded.
 * - A client disconnect aborts the upstream request at once.
 */
import {randomBytes} from 'node:crypto'
import {EventEmitter} from 'node:events'
import type {IncomingHttpHeaders, ServerResponse} from 'node:http'
import {performance} from 'node:perf_hooks'
import {Pool} from 'undici'

import {errorBody, streamErrorEvent} from '../protocol-errors.js'
import type {Family, ProviderConfig, TimeoutSettings} from '../types.js'
import type {CircuitBreaker} from './breaker.js'
import {resolveCredential, upstreamModel} from './policy.js'
import type {Usage} from './taps/index.js'
import {createUsageTap} from './taps/index.js'

export interface ProxyTarget {
  provider: ProviderConfig
  /** Model rewrite of the policy target. */
  model?: string
  /** The provider's breaker; without one the target is always tried. */
  breaker?: CircuitBreaker
}

export interface ProxyRequest {
  /** Entrance family (decides the error shapes, the usage tap and the credential form). */
  family: Family
  method: string
  /** Path and query as received, e.g. `/v1/messages?beta=true`. */
  url: string
  headers: IncomingHttpHeaders
  /** The raw request body (empty for none). */
  body: Buffer
}

export interface ProxyOptions {
  targets: readonly ProxyTarget[]
  timeouts: TimeoutSettings
  /** Try the next target after a failure before the first byte (policy `fallbacks`). */
  fallbacks: boolean
  /** Where `{env}` credentials are read, at request time (default `process.env`). */
  env?: NodeJS.ProcessEnv
  /** Connection pools (default: one shared set per process). */
  pools?: UpstreamPools
  /** Aborts the upstream request (in addition to the client closing `res`). */
  signal?: AbortSignal
}

export interface ProxyAttempt {
  provider: string
  /** Upstream HTTP status, when one came back. */
  status?: number
  error?: string
  skipped?: 'circuit-open' | 'no-credential'
}

export interface ProxyResult {
  /** HTTP status sent to the client (499 when the client left before an answer). */
  status: number
  /** Provider and upstream model that answered (or were tried last), null when none was tried. */
  provider: string | null
  model: string | null
  /** Model the client asked for (body `model`, or the Gemini path). */
  requestedModel: string | null
  /** True when the answer came from (or the last try was) a target other than the policy's first. */
  fallback: boolean
  stream: boolean
  usage: Usage | null
  /** Milliseconds from the call to the end of the answer. */
  latencyMs: number
  /** Milliseconds until the first body byte was written to the client, null when none was. */
  ttfbMs: number | null
  /** Why the request failed (or how a stream broke after it started), null on success. */
  error: string | null
  /** The request id the client saw (upstream's, or minted here). */
  requestId: string
  clientAborted: boolean
  attempts: ProxyAttempt[]
}

/** The result of a request the gateway answered itself, before any upstream was tried. */
export function gatewayAnswered(
  status: number,
  error: string,
  startedAt: number,
  requestId = '',
): ProxyResult {
  return {
    status,
    provider: null,
    model: null,
    requestedModel: null,
    fallback: false,
    stream: false,
    usage: null,
    latencyMs: Date.now() - startedAt,
    ttfbMs: null,
    error,
    requestId,
    clientAborted: false,
    attempts: [],
  }
}

/** One keep-alive undici Pool per upstream origin (and timeout set). */
export class UpstreamPools {
  private readonly pools = new Map<string, Pool>()

  get(origin: string, timeouts: TimeoutSettings): Pool {
    const key = `${origin}|${timeouts.connectMs}|${timeouts.firstByteMs}|${timeouts.idleMs}`
    let pool = this.pools.get(key)
    if (!pool) {
      pool = new Pool(origin, {
        connect: {timeout: timeouts.connectMs},
        headersTimeout: timeouts.firstByteMs,
        bodyTimeout: timeouts.idleMs,
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 600_000,
      })
      this.pools.set(key, pool)
    }
    return pool
  }

  async close(): Promise<void> {
    const pools = [...this.pools.values()]
    this.pools.clear()
    await Promise.all(pools.map((p) => p.close().catch(() => p.destroy())))
  }
}

let sharedPools: UpstreamPools | undefined
/** The process-wide pools used when {@link ProxyOptions.pools} is not given. */
export function defaultPools(): UpstreamPools {
  sharedPools ??= new UpstreamPools()
  return sharedPools
}

/** Request headers forwarded upstream: protocol headers only, never credentials or cookies. */
const FORWARD_HEADERS = new Set([
  'content-type',
  'accept',
  'user-agent',
  'openai-beta',
  'x-goog-api-client',
  'x-app',
  'originator',
  'session-id',
  'thread-id',
  'x-client-request-id',
  'idempotency-key',
])
const FORWARD_PREFIXES = ['anthropic-', 'x-stainless-', 'x-codex-', 'x-claude-code-']

// Header filters run for every header of every request and answer: plain loops, no closures.
function hasPrefix(name: string, prefixes: readonly string[]): boolean {
  for (const prefix of prefixes) if (name.startsWith(prefix)) return true
  return false
}

/** Response headers passed back to the client. */
const RETURN_HEADERS = new Set([
  'content-type',
  'content-encoding',
  'cache-control',
  'request-id',
  'x-request-id',
  'retry-after',
  'retry-after-ms',
  'x-should-retry',
  'openai-processing-ms',
  'openai-version',
])
const RETURN_PREFIXES = ['x-ratelimit-', 'anthropic-ratelimit-', 'ratelimit-', 'x-goog-']

/** The id header clients of each family read. */
const requestIdHeader = (family: Family): string => (family === 'messages' ? 'request-id' : 'x-request-id')

const mintRequestId = (): string => `req_${randomBytes(12).toString('hex')}`

const parsedBases = new Map<string, {origin: string; path: string}>()

/** Joins a provider base URL and an entrance path (`.../v1` + `/v1/x` -> `.../v1/x`). */
export function upstreamPath(baseUrl: string, path: string): {origin: string; path: string} {
  let base = parsedBases.get(baseUrl)
  if (!base) {
    const url = new URL(baseUrl)
    base = {origin: url.origin, path: url.pathname.replace(/\/+$/, '')}
    if (parsedBases.size > 1000) parsedBases.clear()
    parsedBases.set(baseUrl, base)
  }
  const basePath = base.path
  let rest = path
  for (const version of ['/v1', '/v1beta']) {
    if (basePath.endsWith(version) && (rest.startsWith(version + '/') || rest.startsWith(version + '?'))) {
      rest = rest.slice(version.length)
      break
    }
  }
  return {origin: base.origin, path: basePath + rest}
}

const GEMINI_PATH = /^(\/v1beta\/models\/)([^/:]+)(:[A-Za-z]+)$/

interface Prepared {
  requestedModel: string | null
  stream: boolean
  /** Body to send for an upstream model (cached per model). */
  bodyFor(model: string | null): Buffer
  /** Path (without query) for an upstream model. */
  pathFor(model: string | null): string
  query: string
  /** The proxy asked upstream for stream usage the client did not ask for (chat). */
  addedUsage: boolean
}

function prepare(request: ProxyRequest): Prepared {
  const q = request.url.indexOf('?')
  const path = q === -1 ? request.url : request.url.slice(0, q)
  let query = ''
  if (q !== -1) {
    const params = new URLSearchParams(request.url.slice(q + 1))
    params.delete('key')
    query = params.toString()
  }
  if (request.family === 'gemini') {
    const m = GEMINI_PATH.exec(path)
    const requested = m ? decodeURIComponent(m[2]) : null
    return {
      requestedModel: requested,
      stream: m?.[3] === ':streamGenerateContent',
      bodyFor: () => request.body,
      pathFor: (model) => (m && model ? m[1] + encodeURIComponent(model) + m[3] : path),
      query,
      addedUsage: false,
    }
  }
  let json: Record<string, unknown> | undefined
  let parsedOnce = false
  const parse = (): Record<string, unknown> | undefined => {
    if (parsedOnce) return json
    parsedOnce = true
    if (request.body.length === 0) return undefined
    try {
      const parsed: unknown = JSON.parse(request.body.toString('utf8'))
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        json = parsed as Record<string, unknown>
    } catch {
      // passed on as is: the upstream answers its own 400
    }
    return json
  }
  let requested: string | null
  let stream: boolean
  let addedUsage = false
  let streamOptions: Record<string, unknown> | undefined
  // Chat streams need `stream_options` (to ask upstream for usage): only they are parsed. A
  // non-stream chat body is scanned for model/stream like the other families, saving a
  // JSON.parse of every chat request.
  const chatFields = request.family === 'chat' ? topLevelFields(request.body) : undefined
  if (request.family === 'chat' && !(chatFields && chatFields.stream !== true)) {
    const body = parse()
    requested = typeof body?.model === 'string' ? body.model : null
    stream = body?.stream === true
    streamOptions = body?.stream_options as Record<string, unknown> | undefined
    addedUsage = stream && !!body && streamOptions?.include_usage !== true
  } else if (chatFields) {
    requested = chatFields.model ?? null
    stream = false
  } else {
    // agents send large bodies (Claude Code ~76 KB): read model/stream without parsing them
    const fields = topLevelFields(request.body, false)
    if (fields) {
      requested = typeof fields.model === 'string' ? fields.model : null
      stream = fields.stream === true
    } else {
      const body = parse()
      requested = typeof body?.model === 'string' ? body.model : null
      stream = body?.stream === true
    }
  }
  const bodies = new Map<string | null, Buffer>()
  return {
    requestedModel: requested,
    stream,
    bodyFor: (model) => {
      if (model === requested && !addedUsage) return request.body
      const body = parse()
      if (!body) return request.body
      let out = bodies.get(model)
      if (!out) {
        const copy: Record<string, unknown> = {...body}
        if (model !== null) copy.model = model
        if (addedUsage) copy.stream_options = {...streamOptions, include_usage: true}
        out = Buffer.from(JSON.stringify(copy))
        bodies.set(model, out)
      }
      return out
    },
    pathFor: () => path,
    query,
    addedUsage,
  }
}

/**
 * The top-level `model` (string) and, when asked, `stream` (boolean) of a JSON object body, read
 * with a scan that stops as soon as they are found (no full parse; agents put `model` first).
 * Undefined when the body does not look like a JSON object or a value is not a plain
 * string/boolean (the caller then parses).
 */
export function topLevelFields(
  body: Buffer,
  wantStream = true,
): {model?: string; stream?: boolean} | undefined {
  // most bodies name the model in their first bytes: scan a prefix first
  if (body.length > 8192) {
    const found = scanFields(body.toString('latin1', 0, 8192), wantStream, true)
    if (found) return found
  }
  return scanFields(body.toString('latin1'), wantStream, false)
}

function scanFields(
  text: string,
  wantStream: boolean,
  partial: boolean,
): {model?: string; stream?: boolean} | undefined {
  let i = 0
  const n = text.length
  const ws = (): void => {
    while (i < n && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++
  }
  const skipString = (): number => {
    // i at the opening quote; returns the index after the closing quote
    let j = i + 1
    for (;;) {
      const q = text.indexOf('"', j)
      if (q === -1) return -1
      let backslashes = 0
      while (text.charCodeAt(q - 1 - backslashes) === 92) backslashes++
      if (backslashes % 2 === 0) return q + 1
      j = q + 1
    }
  }
  const structural = /["{}[\],]/g
  ws()
  if (text[i] !== '{') return undefined
  i++
  const out: {model?: string; stream?: boolean} = {}
  let depth = 1
  let expectKey = true
  for (;;) {
    structural.lastIndex = i
    const next = structural.exec(text)
    if (!next) return undefined
    i = next.index
    const c = text[i]
    if (c === '"') {
      const end = skipString()
      if (end === -1) return undefined
      if (depth === 1 && expectKey) {
        const key = text.slice(i + 1, end - 1)
        i = end
        ws()
        if (text[i] !== ':') return undefined
        i++
        ws()
        if (key === 'model') {
          if (text[i] !== '"') return undefined
          const valueEnd = skipString()
          if (valueEnd === -1) return undefined
          const raw = text.slice(i + 1, valueEnd - 1)
          if (raw.includes('\\') || /[\x80-\xff]/.test(raw)) return undefined
          out.model = raw
          i = valueEnd
        } else if (key === 'stream') {
          if (text.startsWith('true', i)) out.stream = true
          else if (text.startsWith('false', i)) out.stream = false
          else return undefined
          i += out.stream ? 4 : 5
        }
        expectKey = false
        if (out.model !== undefined && (!wantStream || out.stream !== undefined)) return out
        continue
      }
      i = end
      continue
    }
    if (c === '{' || c === '[') depth++
    else if (c === '}' || c === ']') {
      depth--
      if (depth === 0) return partial ? undefined : out
    } else if (c === ',' && depth === 1) expectKey = true
    i++
  }
}

function forwardHeaders(
  incoming: IncomingHttpHeaders,
  provider: ProviderConfig,
  credential: string | undefined,
  length: number,
): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const name in incoming) {
    const value = incoming[name]
    if (value === undefined) continue
    if (FORWARD_HEADERS.has(name) || hasPrefix(name, FORWARD_PREFIXES))
      headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  // fault injection of the simulator reaches only simulator providers
  if (provider.origin === 'sim' && typeof incoming['x-sim-fault'] === 'string')
    headers['x-sim-fault'] = incoming['x-sim-fault']
  headers['content-type'] ??= 'application/json'
  if (length > 0) headers['content-length'] = String(length)
  if (provider.family === 'messages') headers['anthropic-version'] ??= '2023-06-01'
  if (credential) {
    if (provider.family === 'messages') headers['x-api-key'] = credential
    else if (provider.family === 'gemini') headers['x-goog-api-key'] = credential
    else headers.authorization = `Bearer ${credential}`
  }
  return headers
}

function returnHeaders(
  upstream: Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {}
  for (const name in upstream) {
    const value = upstream[name]
    if (value === undefined) continue
    if (RETURN_HEADERS.has(name) || hasPrefix(name, RETURN_PREFIXES)) headers[name] = value
  }
  return headers
}

function describeError(error: unknown, timeouts: TimeoutSettings): string {
  const e = error as {code?: string; message?: string; cause?: {code?: string; message?: string}}
  const code = e?.code ?? e?.cause?.code
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `connect timeout after ${timeouts.connectMs} ms`
    case 'UND_ERR_HEADERS_TIMEOUT':
      return `no answer within ${timeouts.firstByteMs} ms (first-byte timeout)`
    case 'UND_ERR_BODY_TIMEOUT':
      return `upstream silent for ${timeouts.idleMs} ms (idle timeout)`
    case 'ECONNREFUSED':
      return 'connection refused'
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection reset by upstream'
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'upstream host not found'
    default:
      return (e?.message ?? String(error)) + (code ? ` (${code})` : '')
  }
}

/**
 * Drops the usage-only chunk (`"choices":[]` with `usage`) of a chat stream whose client did not
 * ask for usage. Complete events pass on at once; only an incomplete trailing event waits for
 * its end (a client could not use half an event anyway).
 */
class ChatUsageChunkFilter {
  private pending = ''
  private readonly decoder = new TextDecoder()

  push(chunk: Uint8Array): string {
    const text = this.pending + this.decoder.decode(chunk, {stream: true})
    const boundary = /\r\n\r\n|\n\n|\r\r/g
    let out = ''
    let start = 0
    for (let m = boundary.exec(text); m; m = boundary.exec(text)) {
      const end = m.index + m[0].length
      const event = text.slice(start, end)
      if (!this.isUsageOnly(event)) out += event
      start = end
    }
    this.pending = text.slice(start)
    return out
  }

  flush(): string {
    const rest = this.pending + this.decoder.decode()
    this.pending = ''
    return this.isUsageOnly(rest) ? '' : rest
  }

  private isUsageOnly(event: string): boolean {
    if (!event.includes('"usage"') || !/"choices"\s*:\s*\[\s*\]/.test(event)) return false
    const data = event
      .split(/\r\n|\n|\r/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n')
    try {
      const payload = JSON.parse(data) as {choices?: unknown[]; usage?: unknown}
      return Array.isArray(payload.choices) && payload.choices.length === 0 && !!payload.usage
    } catch {
      return false
    }
  }
}

/**
 * Answers an error made by the gateway itself (400 cross-family policy, 502, 503, ...) in the
 * entrance family's error shape, with a request id in the header its clients read.
 */
export function sendFamilyError(
  res: ServerResponse,
  family: Family,
  status: number,
  message: string,
  options: {requestId?: string; headers?: Record<string, string>} = {},
): string {
  const requestId = options.requestId ?? mintRequestId()
  if (res.headersSent || res.destroyed) return requestId
  const text = JSON.stringify(errorBody(family, status, message, {requestId}))
  res.writeHead(status, {
    ...options.headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    [requestIdHeader(family)]: requestId,
  })
  res.end(text)
  return requestId
}

/**
 * Aborts the upstream request when the client leaves. undici takes an EventEmitter as `signal`;
 * an AbortController (an EventTarget) costs noticeably more per request to create and to
 * subscribe to, and this one is created for every proxied request.
 */
class ClientGone extends EventEmitter {
  aborted = false
  reason: unknown = undefined

  abort(reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    this.emit('abort')
  }
}

/** Sends one request through the targets; never throws for upstream trouble (see the result). */
export async function proxyRequest(
  request: ProxyRequest,
  res: ServerResponse,
  options: ProxyOptions,
): Promise<ProxyResult> {
  const started = performance.now()
  const {family} = request
  const env = options.env ?? process.env
  const pools = options.pools ?? defaultPools()
  const prepared = prepare(request)
  const attempts: ProxyAttempt[] = []
  const result: ProxyResult = {
    status: 0,
    provider: null,
    model: null,
    requestedModel: prepared.requestedModel,
    fallback: false,
    stream: prepared.stream,
    usage: null,
    latencyMs: 0,
    ttfbMs: null,
    error: null,
    requestId: '',
    clientAborted: false,
    attempts,
  }
  const finish = (): ProxyResult => {
    result.latencyMs = performance.now() - started
    return result
  }

  // Client disconnect (or the caller's signal) aborts whatever upstream request is running.
  const clientGone = new ClientGone()
  const onClose = (): void => {
    if (!res.writableFinished) {
      result.clientAborted = true
      clientGone.abort(new Error('client closed the connection'))
    }
  }
  res.once('close', onClose)
  const onSignal = (): void => clientGone.abort(options.signal?.reason)
  options.signal?.addEventListener('abort', onSignal, {once: true})
  const cleanup = (): void => {
    res.off('close', onClose)
    options.signal?.removeEventListener('abort', onSignal)
  }

  const sendGatewayError = (status: number, message: string, headers: Record<string, string> = {}): void => {
    result.status = status
    result.error = message
    result.requestId ||= mintRequestId()
    sendFamilyError(res, family, status, message, {requestId: result.requestId, headers})
  }

  const targets = options.targets
  const canTryAfter = (i: number): boolean =>
    targets.slice(i + 1).some((t) => !t.breaker || t.breaker.canTry())
  let tried = 0

  try {
    for (let i = 0; i < targets.length; i++) {
      if (clientGone.aborted) break
      const target = targets[i]
      const provider = target.provider
      if (target.breaker && !target.breaker.tryAcquire()) {
        attempts.push({provider: provider.name, skipped: 'circuit-open'})
        continue
      }
      const credential = resolveCredential(provider.credential, env)
      if (provider.credential && !credential) {
        target.breaker?.release()
        const reason =
          'env' in provider.credential
            ? `provider ${provider.name}: environment variable ${provider.credential.env} is not set`
            : `provider ${provider.name}: no credential`
        attempts.push({provider: provider.name, skipped: 'no-credential', error: reason})
        result.error = reason
        continue
      }
      tried++
      const model = upstreamModel(target, prepared.requestedModel ?? undefined) ?? null
      result.provider = provider.name
      result.model = model
      result.fallback = i > 0
      const body = prepared.bodyFor(model)
      const {origin, path} = upstreamPath(provider.baseUrl, prepared.pathFor(model))
      const fullPath = prepared.query ? `${path}?${prepared.query}` : path

      let upstream
      try {
        upstream = await pools.get(origin, options.timeouts).request({
          method: request.method as 'POST',
          path: fullPath,
          headers: forwardHeaders(request.headers, provider, credential, body.length),
          body: body.length > 0 ? body : undefined,
          signal: clientGone,
        })
      } catch (error) {
        if (clientGone.aborted) {
          target.breaker?.release()
          break
        }
        const message = `${provider.name}: ${describeError(error, options.timeouts)}`
        target.breaker?.recordFailure(message)
        attempts.push({provider: provider.name, error: message})
        result.error = message
        if (options.fallbacks && canTryAfter(i)) continue
        break
      }

      const status = upstream.statusCode
      if (status >= 500 || status === 429) {
        const message = `${provider.name}: upstream answered ${status}`
        target.breaker?.recordFailure(message)
        attempts.push({provider: provider.name, status, error: message})
        if (options.fallbacks && canTryAfter(i)) {
          await upstream.body.dump().catch(() => undefined)
          continue
        }
        result.error = message
      } else {
        attempts.push({provider: provider.name, status})
        // an answer after earlier failures keeps why it fell back; a clean answer has no error
        const failed = attempts.length > 1 ? attempts.filter((a) => a.error).map((a) => a.error) : []
        result.error = failed.length > 0 ? `fell back after: ${failed.join('; ')}` : null
      }

      await relay(upstream, status, target, credential)
      return finish()
    }

    if (result.clientAborted || clientGone.aborted) {
      result.clientAborted = true
      result.status = 499
      result.error = 'client closed the connection'
      return finish()
    }
    if (tried === 0 && attempts.some((a) => a.skipped === 'circuit-open')) {
      const open = attempts.filter((a) => a.skipped === 'circuit-open').map((a) => a.provider)
      const retryIn = Math.min(
        ...targets.map((t) => t.breaker?.snapshot().retryInMs ?? Number.POSITIVE_INFINITY),
      )
      const seconds = Number.isFinite(retryIn) ? Math.max(1, Math.ceil(retryIn / 1000)) : undefined
      result.provider = open[0] ?? null
      sendGatewayError(
        503,
        `every compatible provider is circuit-broken (open): ${open.join(', ')}${seconds ? `; retry in ${seconds} s` : ''}`,
        seconds ? {'retry-after': String(seconds)} : {},
      )
      return finish()
    }
    sendGatewayError(
      502,
      result.error
        ? `upstream request failed and no fallback is left: ${result.error}`
        : `no provider is configured for ${family} requests`,
    )
    return finish()
  } finally {
    cleanup()
  }

  async function relay(
    upstream: Awaited<ReturnType<Pool['request']>>,
    status: number,
    target: ProxyTarget,
    credential: string | undefined,
  ): Promise<void> {
    const headers = returnHeaders(upstream.headers)
    const idName = requestIdHeader(family)
    const upstreamId = headers[idName] ?? headers['request-id'] ?? headers['x-request-id']
    result.requestId = (Array.isArray(upstreamId) ? upstreamId[0] : upstreamId) ?? mintRequestId()
    headers[idName] ??= result.requestId
    const contentType = String(headers['content-type'] ?? '')
    const sse = /text\/event-stream/i.test(contentType)
    result.stream = sse
    if (status >= 400 && !sse && credential && !headers['content-encoding']) {
      // Some vendors quote the key back in an error ("Incorrect API key provided: sk-…"): an
      // agent must never see the provider's credential. Error answers are small: buffer, redact.
      const text = (await upstream.body.text()).split(credential).join('[redacted]')
      headers['content-length'] = String(Buffer.byteLength(text))
      result.status = status
      result.ttfbMs = performance.now() - started
      res.writeHead(status, headers)
      res.end(text)
      if (status < 500 && status !== 429) target.breaker?.recordSuccess()
      return
    }
    if (!sse && upstream.headers['content-length'] !== undefined)
      headers['content-length'] = String(upstream.headers['content-length'])
    result.status = status
    res.writeHead(status, headers)
    // A stream's headers go out with its first chunk when that chunk is already here (one packet,
    // one wake-up of the client, like a bare pass-through); otherwise at the end of this event
    // loop turn, so a client still sees them as soon as upstream sent them.
    if (sse)
      setImmediate(() => {
        if (result.ttfbMs === null && !res.destroyed) res.flushHeaders()
      })

    const tap = status < 300 ? createUsageTap(family, sse) : undefined
    const filter = sse && prepared.addedUsage && status < 300 ? new ChatUsageChunkFilter() : undefined
    // the last bytes sent, to start an error event on a line of its own if a stream breaks mid-event
    let last = '' as Uint8Array | string
    const body = upstream.body
    // An SSE tap parses every event (a JSON.parse each): it is fed on the next tick, after the
    // socket write of the chunk (node:http flushes a response's writes on the next tick, queued
    // before this one), so parsing never delays a byte. A JSON tap only collects: fed at once.
    let tapQueue: Buffer[] | undefined
    const feedTap = (): void => {
      const queue = tapQueue
      tapQueue = undefined
      if (queue) for (const chunk of queue) tap!.feed(chunk)
    }
    const tapLater = (chunk: Buffer): void => {
      if (tapQueue) tapQueue.push(chunk)
      else {
        tapQueue = [chunk]
        process.nextTick(feedTap)
      }
    }
    // 'data' events rather than `for await`: no Promise per chunk, and each chunk is written to
    // the client in the tick it arrives, before the usage tap reads it (the tap is off the
    // critical path). Backpressure: pause the upstream until the client drains.
    const broken = await new Promise<{error: unknown} | undefined>((resolve) => {
      const resume = (): void => {
        body.resume()
      }
      const send = (data: Uint8Array | string): void => {
        if (data.length === 0) return
        if (result.ttfbMs === null) result.ttfbMs = performance.now() - started
        last = data
        if (!res.write(data)) {
          body.pause()
          res.once('drain', resume)
        }
      }
      body.on('data', (chunk: Buffer) => {
        if (res.destroyed) {
          resolve({error: new Error('client closed the connection')})
          return
        }
        send(filter ? filter.push(chunk) : chunk)
        if (tap) {
          if (sse) tapLater(chunk)
          else tap.feed(chunk)
        }
      })
      body.on('end', () => {
        if (filter && !res.destroyed) send(filter.flush())
        if (!res.destroyed) res.end()
        resolve(undefined)
      })
      body.on('error', (error) => resolve({error}))
    })
    // Past this point the answer has been handed to the socket (a success) or has failed: the
    // usage parse below no longer delays a byte to the client.
    if (tap) {
      feedTap()
      tap.end()
    }
    result.usage = tap?.usage() ?? null
    if (!broken) {
      if (status < 500 && status !== 429) target.breaker?.recordSuccess()
      return
    }
    if (clientGone.aborted || result.clientAborted || res.destroyed) {
      result.clientAborted = true
      result.error = 'client closed the connection'
      target.breaker?.release()
      body.destroy()
      return
    }
    const message = `${target.provider.name}: stream broke after the first byte: ${describeError(broken.error, options.timeouts)}`
    result.error = message
    target.breaker?.recordFailure(message)
    if (sse && !res.destroyed) {
      const tail =
        typeof last === 'string'
          ? last.slice(-2)
          : Buffer.from(last.buffer, last.byteOffset, last.byteLength).toString(
              'latin1',
              Math.max(0, last.byteLength - 2),
            )
      const separator = tail === '' || tail.endsWith('\n\n') || tail === '\r\r' ? '' : '\n\n'
      res.end(separator + streamErrorEvent(family, 502, message, tap?.nextSequence() ?? 0))
    } else res.destroy()
  }
}
