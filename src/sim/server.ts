/**
 * The offline simulator of the remote platform (and, as modules are added, of the upstream model
 * protocols). A real HTTP server on loopback; each API lives in its own module that registers
 * routes on a shared router.
 *
 * Control endpoints (for tests and scripts), not part of any real API:
 * - `GET /__sim/requests`          every request received (credentials redacted)
 * - `DELETE /__sim/requests`       forget them
 * - `POST /__sim/faults`           `{"fault":"status=503,times=2,path=/videos"}` queues a fault
 * - `DELETE /__sim/faults`         clears queued faults
 * - `POST /__sim/clock`            `{"advanceSeconds":90000}` moves the simulated clock forward
 */
import {once} from 'node:events'
import type {IncomingMessage, ServerResponse} from 'node:http'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {setTimeout as sleep} from 'node:timers/promises'

import {nestsDeeperThan} from '../core/json-depth.js'
import type {Fault} from './faults.js'
import {faultMessage, FaultQueue, parseFault, quotaDetails} from './faults.js'
import type {ErrorFormatter, SimContext, SimModule, SimOptions} from './context.js'
import {SIM_API_PREFIX, SimClock} from './context.js'
import {gammaModule} from './gamma.js'
import type {SimRequest} from './router.js'
import {SimRouter, sendJson} from './router.js'
import {sendSse} from './sse.js'
import type {SseEvent} from './sse.js'
import {chatModule} from './chat.js'
import {upstreamModule} from './upstream/index.js'
import {videosModule} from './videos.js'

export interface RecordedRequest {
  method: string
  path: string
  query: Record<string, string | string[]>
  headers: Record<string, string | string[] | undefined>
  body: unknown
  at: number
}

const MODULES: SimModule[] = [videosModule, gammaModule, chatModule, upstreamModule]

export interface Simulator {
  /** e.g. `http://127.0.0.1:4010` */
  origin: string
  /** The platform base URL to configure: origin + `/api/v1`. */
  baseUrl: string
  port: number
  clock: SimClock
  faults: FaultQueue
  requests: RecordedRequest[]
  close(): Promise<void>
}

const MAX_RECORDED = 2000
/** Deeper JSON than this is refused with a 400: the handlers walk bodies recursively. */
const MAX_BODY_DEPTH = 512

/** Starts the simulator and resolves once it listens. */
export async function startSim(input: SimOptions = {}): Promise<Simulator> {
  const options = {taskSeconds: 20, timeScale: 1, maxBodyBytes: 10 * 1024 * 1024, ...input}
  const clock = new SimClock(options.timeScale)
  const faults = new FaultQueue()
  for (const spec of options.faults ?? []) faults.add(parseFault(spec))
  const requests: RecordedRequest[] = []
  const router = new SimRouter()
  const formatters: Array<[string, ErrorFormatter, ((body: unknown) => Record<string, string>)?]> = []
  let origin = ''
  const faultsByRequest = new WeakMap<SimRequest, Fault | undefined>()

  const defaultFormat: ErrorFormatter = (status, message, type) => ({error: {message, type, code: status}})
  const formatterFor = (path: string) =>
    formatters.filter(([prefix]) => path.startsWith(prefix)).sort((a, b) => b[0].length - a[0].length)[0]

  /** An error's body in the shape registered for `path`, and that shape's headers. */
  const errorOf = (
    path: string,
    status: number,
    message: string,
    type: string,
    details?: unknown[],
    code?: string,
  ): [unknown, ((body: unknown) => Record<string, string>) | undefined] => {
    const [, format = defaultFormat, headersOf] = formatterFor(path) ?? []
    const body = format(status, message, type)
    // (Google's details, in any family's `error` object: a relay in front of Gemini keeps them)
    const error = (body as {error?: unknown} | null)?.error
    if (details && error && typeof error === 'object') (error as Record<string, unknown>).details = details
    if (code && error && typeof error === 'object') Object.assign(error, {type: code, code})
    return [body, headersOf]
  }

  const context: SimContext = {
    options,
    clock,
    origin: () => origin,
    errorFormat: (prefix, format, headers) => formatters.push([prefix, format, headers]),
    sendError: (request, status, message, type = defaultErrorType(status), headers = {}, details, code) => {
      const [body, headersOf] = errorOf(request.path, status, message, type, details, code)
      sendJson(request.res, status, body, {...headersOf?.(body), ...headers})
    },
    fault: (request) => faultsByRequest.get(request),
  }
  for (const module of MODULES) module.register(router, context)

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent)
        sendJson(res, 500, {
          error: {message: `simulator bug: ${(error as Error).message}`, type: 'internal_error'},
        })
      else res.destroy()
    })
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sim.local')
    const path = url.pathname
    const method = req.method ?? 'GET'
    // DNS rebinding: a web page whose own name now points at 127.0.0.1 must not read what the
    // simulator recorded (prompts of agents behind `gateway --sim`) or queue faults.
    if (!loopbackHost(req.headers.host, options.host)) {
      req.resume()
      sendJson(res, 403, {
        error: {
          message: `Host "${req.headers.host}" is not a loopback name of this simulator.`,
          type: 'permission_error',
        },
      })
      return
    }
    // The gateway's Origin rule for what controls the simulator: a page of another origin (or an
    // opaque `null` one) must not queue faults or read recorded prompts.
    const origin = req.headers.origin
    if (path.startsWith('/__sim/') && origin !== undefined && !sameHostOrigin(origin, req.headers.host)) {
      req.resume()
      sendJson(res, 403, {
        error: {message: `Cross-origin requests are refused (Origin "${origin}").`, type: 'permission_error'},
      })
      return
    }
    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of req) {
      size += (chunk as Buffer).length
      if (size > options.maxBodyBytes) {
        sendJson(res, 413, {error: {message: 'request body too large', type: 'invalid_request_error'}})
        return
      }
      chunks.push(chunk as Buffer)
    }
    const rawBody = Buffer.concat(chunks)
    let body: unknown
    let badJson = false
    if (rawBody.length > 0) {
      try {
        body = JSON.parse(rawBody.toString('utf8'))
      } catch {
        badJson = true
      }
    }

    // checked once here: the record is serialised by /__sim/requests, which must not overflow either
    const tooDeep = rawBody.length > 2 * MAX_BODY_DEPTH && nestsDeeperThan(rawBody, MAX_BODY_DEPTH)
    if (tooDeep) body = `[a body nested deeper than ${MAX_BODY_DEPTH} levels, ${rawBody.length} bytes]`

    if (path.startsWith('/__sim/')) {
      control(method, path, body, res)
      return
    }

    record(method, url, req, body)
    const request: SimRequest = {
      method,
      path,
      query: url.searchParams,
      headers: req.headers,
      body,
      rawBody,
      params: {},
      req,
      res,
    }

    const headerFault = req.headers['x-sim-fault']
    let fault: Fault | undefined
    try {
      fault = typeof headerFault === 'string' ? parseFault(headerFault) : faults.take(method, path)
    } catch (error) {
      context.sendError(
        request,
        400,
        `bad x-sim-fault header: ${(error as Error).message}`,
        'invalid_request_error',
      )
      return
    }
    faultsByRequest.set(request, fault)
    if (fault?.malformed) cutJsonAnswer(res)
    if (fault?.stall) stallAnswer(res)
    if (fault?.delayMs) await sleep(fault.delayMs)
    if (fault?.reset && !fault.chunkDelayMs && fault.status === undefined) {
      req.socket.destroy()
      return
    }
    if (fault?.status !== undefined && fault.inStream && streams(path, body)) {
      await sendSse(res, inStreamError(path, fault, errorOf), {fault: {...fault, reset: false}})
      return
    }
    if (fault?.status !== undefined) {
      const headers: Record<string, string> = {}
      if (fault.retryAfter) headers['retry-after'] = fault.retryAfter
      if (fault.retryAfterMs) headers['retry-after-ms'] = fault.retryAfterMs
      context.sendError(
        request,
        fault.status,
        faultMessage(fault, fault.status),
        defaultErrorType(fault.status),
        headers,
        quotaDetails(fault),
        fault.insufficientQuota ? 'insufficient_quota' : undefined,
      )
      return
    }

    const match = router.match(method, path)
    if (match === undefined) {
      context.sendError(request, 404, `no such endpoint: ${method} ${path}`, 'not_found_error')
      return
    }
    if (match === 'method') {
      context.sendError(request, 405, `method ${method} not allowed on ${path}`, 'invalid_request_error')
      return
    }
    if (badJson) {
      context.sendError(request, 400, 'request body is not valid JSON', 'invalid_request_error')
      return
    }
    if (tooDeep) {
      context.sendError(
        request,
        400,
        `request body nests JSON deeper than ${MAX_BODY_DEPTH} levels`,
        'invalid_request_error',
      )
      return
    }
    if (path.startsWith(SIM_API_PREFIX + '/')) {
      const auth = req.headers.authorization ?? ''
      const key = /^Bearer\s+(.+)$/i.exec(auth)?.[1]?.trim()
      if (!key || (options.apiKey !== undefined && key !== options.apiKey)) {
        context.sendError(
          request,
          401,
          key ? 'invalid API key' : 'missing Authorization: Bearer <API_KEY>',
          'authentication_error',
        )
        return
      }
    }
    request.params = match.params
    await match.handler(request)
  }

  function record(method: string, url: URL, req: IncomingMessage, body: unknown): void {
    const query: Record<string, string | string[]> = {}
    for (const key of new Set(url.searchParams.keys())) {
      const all = url.searchParams.getAll(key)
      query[key] = all.length === 1 ? all[0] : all
    }
    const headers = {...req.headers}
    for (const secret of ['authorization', 'x-api-key', 'x-goog-api-key', 'x-vendor-api-key']) {
      if (headers[secret]) headers[secret] = '[redacted]'
    }
    if (query.key !== undefined) query.key = '[redacted]' // the Gemini `?key=` credential
    requests.push({method, path: url.pathname, query, headers, body, at: Date.now()})
    if (requests.length > MAX_RECORDED) requests.splice(0, requests.length - MAX_RECORDED)
  }

  function control(method: string, path: string, body: unknown, res: ServerResponse): void {
    const b = (body ?? {}) as Record<string, unknown>
    if (path === '/__sim/requests' && method === 'GET') return sendJson(res, 200, {requests})
    if (path === '/__sim/requests' && method === 'DELETE') {
      requests.length = 0
      return sendJson(res, 200, {ok: true})
    }
    if (path === '/__sim/faults' && method === 'POST') {
      try {
        faults.add(parseFault(String(b.fault ?? '')))
      } catch (error) {
        return sendJson(res, 400, {error: {message: (error as Error).message}})
      }
      return sendJson(res, 200, {ok: true})
    }
    if (path === '/__sim/faults' && method === 'DELETE') {
      faults.clear()
      return sendJson(res, 200, {ok: true})
    }
    if (path === '/__sim/clock' && method === 'POST') {
      clock.advance(Number(b.advanceSeconds ?? 0))
      return sendJson(res, 200, {now: new Date(clock.now()).toISOString()})
    }
    sendJson(res, 404, {error: {message: `no such control endpoint: ${method} ${path}`}})
  }

  server.keepAliveTimeout = 30_000
  server.listen(options.port ?? 0, options.host ?? '127.0.0.1')
  await once(server, 'listening')
  const port = (server.address() as AddressInfo).port
  origin = `http://${options.host ?? '127.0.0.1'}:${port}`
  return {
    origin,
    baseUrl: origin + SIM_API_PREFIX,
    port,
    clock,
    faults,
    requests,
    close: async () => {
      server.closeAllConnections()
      server.close()
      await once(server, 'close').catch(() => undefined)
    },
  }
}

/** True for a `Host` naming the loopback interface (or the host the simulator was bound to); any port. */
/** True when `origin` is `http://` + the Host the request was sent to (a loopback name). */
function sameHostOrigin(origin: string, host: string | undefined): boolean {
  return host !== undefined && origin.toLowerCase() === `http://${host.toLowerCase()}`
}

function loopbackHost(host: string | undefined, boundHost: string | undefined): boolean {
  if (host === undefined) return true // HTTP/1.0 clients; browsers always send it
  let name: string
  try {
    name = new URL(`http://${host}`).hostname
  } catch {
    return false
  }
  return ['127.0.0.1', 'localhost', '[::1]'].includes(name) || name === boundHost
}

function defaultErrorType(status: number): string {
  if (status === 400) return 'invalid_request_error'
  if (status === 401) return 'authentication_error'
  if (status === 403) return 'permission_error'
  if (status === 404) return 'not_found_error'
  if (status === 429) return 'rate_limit_error'
  if (status >= 500) return 'api_error'
  return 'error'
}

/**
 * The `malformed` fault for JSON answers: the body this response ends with is cut in half (sent
 * without its `content-length`), as an upstream that breaks its JSON would send it. Streams cut an
 * event instead (sse.ts).
 */
/**
 * The `stall` fault: the answer's status and headers go out (without a `content-length`, as a
 * stream's would), and not one byte of its body; the connection stays open until the client
 * closes it.
 */
function stallAnswer(res: ServerResponse): void {
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: unknown) => ServerResponse
  res.writeHead = ((status: number, headers?: unknown) => {
    const copy =
      headers && typeof headers === 'object' && !Array.isArray(headers)
        ? {...(headers as Record<string, unknown>)}
        : {}
    delete copy['content-length']
    res.removeHeader('content-length')
    writeHead(status, copy)
    res.flushHeaders()
    return res
  }) as ServerResponse['writeHead']
  res.write = (() => true) as ServerResponse['write']
  res.end = (() => {
    if (!res.headersSent) res.writeHead(res.statusCode)
    return res
  }) as ServerResponse['end']
}

function cutJsonAnswer(res: ServerResponse): void {
  let json = false
  const writeHead = res.writeHead.bind(res) as (status: number, headers?: unknown) => ServerResponse
  res.writeHead = ((status: number, headers?: unknown) => {
    if (headers && typeof headers === 'object' && !Array.isArray(headers)) {
      const copy = {...(headers as Record<string, unknown>)}
      json = /json/.test(String(copy['content-type'] ?? res.getHeader('content-type') ?? ''))
      delete copy['content-length']
      return writeHead(status, copy)
    }
    return writeHead(status, headers)
  }) as ServerResponse['writeHead']
  const end = res.end.bind(res) as (chunk?: unknown) => ServerResponse
  res.end = ((chunk?: unknown) => {
    if (typeof chunk !== 'string' || !json) return end(chunk)
    return end(chunk.slice(0, Math.ceil(chunk.length / 2)))
  }) as ServerResponse['end']
}

/** Whether a request asks for a stream: `stream: true` in its body, or Gemini's `:streamGenerateContent`. */
function streams(path: string, body: unknown): boolean {
  return path.includes(':streamGenerateContent') || (body as {stream?: unknown} | null)?.stream === true
}

/**
 * A fault's error said inside a 200 stream before any output (`in-stream`), as upstreams do once
 * their headers went: a Responses stream's `response.created` and `response.in_progress`, then
 * `response.failed` with the error's `code` and words (OpenAI's `insufficient_quota` so); a chat
 * stream's `data:` line holding `{"error": …}` (OpenAI-compatible servers: vLLM, one-api relays),
 * then `[DONE]`; a Messages stream's `event: error`; a Gemini stream's chunk holding `{"error": …}`.
 */
function inStreamError(
  path: string,
  fault: Fault,
  errorOf: (
    path: string,
    status: number,
    message: string,
    type: string,
    details?: unknown[],
    code?: string,
  ) => [unknown, unknown],
): SseEvent[] {
  const status = fault.status ?? 500
  const message = faultMessage(fault, status)
  const code = fault.insufficientQuota ? 'insufficient_quota' : undefined
  const [body] = errorOf(path, status, message, defaultErrorType(status), quotaDetails(fault), code)
  if (path.endsWith('/responses')) {
    const response = {id: 'resp_fault', object: 'response', model: 'sim', status: 'in_progress', output: []}
    const failed = {
      ...response,
      status: 'failed',
      error: {
        code: code ?? (status === 429 ? 'rate_limit_exceeded' : 'server_error'),
        message,
      },
    }
    return [
      {event: 'response.created', data: {type: 'response.created', sequence_number: 0, response}},
      {event: 'response.in_progress', data: {type: 'response.in_progress', sequence_number: 1, response}},
      {event: 'response.failed', data: {type: 'response.failed', sequence_number: 2, response: failed}},
    ]
  }
  if (path.endsWith('/messages')) return [{event: 'error', data: body}]
  if (path.endsWith('/chat/completions')) return [{data: body}, {data: '[DONE]'}]
  return [{data: body}]
}
