/**
 * The client of the local gateway's management API (`/api/...` on 127.0.0.1), on node:http.
 *
 * The platform client (`http.ts`) runs on undici, whose loading costs 140-230 ms of start-up on
 * Node 20 (no compile cache): too much for `status`, `logs`, `usage` and `key issue`, which only
 * ask the daemon on this machine. This client keeps the platform client's `request` contract
 * (JSON in, JSON out, typed errors worded by `http-errors.ts`, code `network` when nothing
 * answers) with one attempt and no retries: the daemon is local, and its callers decide what a
 * failure means (stopped, starting, hung).
 */
import {request as httpRequest} from 'node:http'
import type {IncomingMessage} from 'node:http'

import {InterruptedError} from '../core/errors.js'
import {errorFromResponse, networkError, parseBody} from './http-errors.js'

export interface LoopbackRequestOptions {
  query?: Record<string, string | number | boolean | undefined>
  body?: unknown
  signal?: AbortSignal
  /** How long to wait for the answer's headers (ms). */
  headersTimeoutMs?: number
}

export interface LoopbackResponse<T> {
  status: number
  headers: Record<string, string | string[] | undefined>
  body: T
}

export interface LoopbackTimeouts {
  /** ms to connect */
  connect: number
  /** ms from the request to the answer's headers */
  headers: number
  /** ms of silence allowed while the body arrives */
  body: number
}

const DEFAULT_LOOPBACK_TIMEOUTS: LoopbackTimeouts = {connect: 2_000, headers: 10_000, body: 10_000}

/** A failure before an answer, with the code `networkError` words. */
function netFailure(code: string, message: string): Error {
  return Object.assign(new Error(message), {code})
}

export class LoopbackClient {
  readonly baseUrl: string
  private readonly timeouts: LoopbackTimeouts

  constructor(
    readonly port: number,
    timeouts: Partial<LoopbackTimeouts> = {},
  ) {
    this.baseUrl = `http://127.0.0.1:${port}`
    this.timeouts = {...DEFAULT_LOOPBACK_TIMEOUTS, ...timeouts}
  }

  /** Sends one request; a 4xx/5xx answer throws the typed error the platform client would. */
  async request<T>(
    method: 'GET' | 'POST' | 'DELETE',
    path: string,
    options: LoopbackRequestOptions = {},
  ): Promise<LoopbackResponse<T>> {
    const search = new URLSearchParams()
    for (const [key, value] of Object.entries(options.query ?? {}))
      if (value !== undefined) search.set(key, String(value))
    const target = search.size > 0 ? `${path}?${search}` : path
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body))
    let answer: {res: IncomingMessage; text: string}
    try {
      answer = await this.send(method, target, payload, options)
    } catch (error) {
      if (options.signal?.aborted) throw new InterruptedError('Request aborted.')
      throw networkError(error, this.baseUrl)
    }
    const {res, text} = answer
    const body = parseBody(text)
    const status = res.statusCode ?? 0
    if (status < 400) return {status, headers: res.headers, body: body as T}
    throw errorFromResponse(status, body, res.headers, {
      answeredBy: 'gateway',
      method,
      path,
      baseUrl: this.baseUrl,
    })
  }

  private send(
    method: string,
    target: string,
    payload: Buffer | undefined,
    options: LoopbackRequestOptions,
  ): Promise<{res: IncomingMessage; text: string}> {
    return new Promise((resolve, reject) => {
      const {signal} = options
      if (signal?.aborted) return reject(signal.reason)
      let timer: NodeJS.Timeout | undefined
      const arm = (ms: number, code: string, what: string) => {
        clearTimeout(timer)
        timer = setTimeout(() => fail(netFailure(code, what)), ms)
      }
      let settled = false
      const fail = (error: unknown) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        req.destroy()
        reject(error)
      }
      const onAbort = () => fail(signal?.reason)
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: this.port,
          path: target,
          method,
          agent: false,
          headers: {
            accept: 'application/json',
            'user-agent': 'gwctl',
            ...(payload ? {'content-type': 'application/json', 'content-length': payload.length} : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = []
          arm(this.timeouts.body, 'BODY_TIMEOUT', 'the answer stopped')
          res.on('data', (chunk: Buffer) => {
            chunks.push(chunk)
            arm(this.timeouts.body, 'BODY_TIMEOUT', 'the answer stopped')
          })
          res.on('error', fail)
          res.on('end', () => {
            if (settled) return
            settled = true
            clearTimeout(timer)
            signal?.removeEventListener('abort', onAbort)
            resolve({res, text: Buffer.concat(chunks).toString('utf8')})
          })
        },
      )
      signal?.addEventListener('abort', onAbort, {once: true})
      req.on('error', fail)
      arm(this.timeouts.connect, 'CONNECT_TIMEOUT', 'connecting timed out')
      req.on('socket', (socket) => {
        const armHeaders = () =>
          arm(options.headersTimeoutMs ?? this.timeouts.headers, 'HEADERS_TIMEOUT', 'no answer')
        if (socket.connecting) socket.once('connect', armHeaders)
        else armHeaders()
      })
      req.end(payload)
    })
  }
}
