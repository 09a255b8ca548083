/**
 * The client of the local gateway's management API (`/api/...` on 127.0.0.1), one HTTP/1.1
 * exchange per request on its own connection (core/http1.ts).
 *
 * The platform client (`http.ts`) runs on undici, whose loading costs 140-230 ms of start-up on
 * Node 20 (no compile cache), and node:http's first request costs 10-14 ms: too much for
 * `status`, `logs`, `usage` and `key issue`, which only ask the daemon on this machine. This
 * client keeps the platform client's `request` contract (JSON in, JSON out, typed errors worded
 * by `http-errors.ts`, code `network` when nothing answers) with one attempt and no retries: the
 * daemon is local, and its callers decide what a failure means (stopped, starting, hung).
 */
import {InterruptedError} from '../core/errors.js'
import {exchange} from '../core/http1.js'
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
    let answer: Awaited<ReturnType<typeof exchange>>
    try {
      answer = await exchange(this.port, {
        method,
        target,
        headers: {
          accept: 'application/json',
          'user-agent': 'gwctl',
          ...(payload ? {'content-type': 'application/json'} : {}),
        },
        payload,
        signal: options.signal,
        timeouts: {...this.timeouts, headers: options.headersTimeoutMs ?? this.timeouts.headers},
      })
    } catch (error) {
      if (options.signal?.aborted) throw new InterruptedError('Request aborted.')
      throw networkError(error, this.baseUrl)
    }
    const body = parseBody(answer.body.toString('utf8'))
    const {status, headers} = answer
    if (status < 400) return {status, headers, body: body as T}
    throw errorFromResponse(status, body, headers, {
      answeredBy: 'gateway',
      method,
      path,
      baseUrl: this.baseUrl,
    })
  }
}
