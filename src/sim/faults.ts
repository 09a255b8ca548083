/**
 * Fault injection for the simulator: per request with the `x-sim-fault` header, or queued with
 * `gwctl sim --fault` / `POST /__sim/faults` for requests the caller cannot add headers to.
 *
 * Syntax: `status=503,delay=200,reset,times=2,path=/videos,method=POST,message=text,retry-after=1`
 * - `status=N`      answer N with an error body in the shape of the matched API
 * - `delay=MS`      wait before the answer's headers
 * - `reset`         destroy the connection (before headers, or mid-stream for streams)
 * - `chunk-delay=MS` slow streams: wait between chunks
 * - `stall`         headers, then silence: the answer's status and headers are sent, its body never
 *                   (the connection stays open until the client gives up)
 * - `malformed`     a 200 whose JSON is cut in half (a JSON answer), or whose middle stream event is
 *                   (`content-length` then matches the cut body)
 * - `retry-after=S`, `retry-after-ms=MS` the error answer's `retry-after` / `retry-after-ms` header
 * - `retry-delay=D` Gemini's quota 429: the error body's `error.details[]` holds a `QuotaFailure`
 *                   of a per-minute quota and Google's `RetryInfo`, whose `retryDelay` is D cut to
 *                   whole seconds (`37.5s`: `37s`), and its words end "Please retry in D." uncut
 * - `per-day`       that `QuotaFailure` names a daily quota instead (Gemini's free tier spent)
 * - `insufficient-quota` OpenAI's billing 429: `type` and `code` `insufficient_quota` and its words
 *                   ("You exceeded your current quota, ..."); the status is 429 unless `status=` says
 * - `in-stream`     a streamed request gets the fault's error inside a 200 stream, before any output
 *                   (Responses `response.failed` after `response.created`, chat a `data: {"error":…}`
 *                   line, Messages `event: error`, Gemini an `{"error":…}` chunk); others its status
 * - `times=N`       a queued fault applies N times (default 1; 0 = forever)
 * - `path=P`, `method=M` a queued fault only matches requests whose path contains P / method M
 */

export interface Fault {
  status?: number
  delayMs?: number
  reset?: boolean
  chunkDelayMs?: number
  malformed?: boolean
  stall?: boolean
  message?: string
  retryAfter?: string
  retryAfterMs?: string
  /** Google's `RetryInfo.retryDelay` in the error body (`37s`). */
  retryDelay?: string
  /** The body's `QuotaFailure` names a daily quota. */
  perDay?: boolean
  /** OpenAI's `insufficient_quota` 429 (billing: no wait helps). */
  insufficientQuota?: boolean
  /** A streamed request gets the error inside a 200 stream (see `inStreamError`, ./server.ts). */
  inStream?: boolean
  times?: number
  path?: string
  method?: string
}

/** Parses the fault syntax above; throws on unknown keys so typos are not silently ignored. */
export function parseFault(spec: string): Fault {
  const fault: Fault = {}
  for (const part of spec
    .split(/[,;]/)
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=')
    const key = (eq === -1 ? part : part.slice(0, eq)).trim().toLowerCase()
    const value = eq === -1 ? '' : part.slice(eq + 1).trim()
    const num = (): number => {
      const n = Number(value)
      if (!Number.isFinite(n) || n < 0) throw new Error(`fault "${key}" needs a number, got "${value}"`)
      return n
    }
    switch (key) {
      case 'status':
        fault.status = num()
        break
      case 'delay':
        fault.delayMs = num()
        break
      case 'chunk-delay':
        fault.chunkDelayMs = num()
        break
      case 'reset':
        fault.reset = true
        break
      case 'malformed':
        fault.malformed = true
        break
      case 'stall':
        fault.stall = true
        break
      case 'times':
        fault.times = num()
        break
      case 'message':
        fault.message = value
        break
      case 'retry-after':
        fault.retryAfter = value
        break
      case 'retry-after-ms':
        fault.retryAfterMs = value
        break
      case 'retry-delay':
        if (!/^\d+(\.\d+)?s$/.test(value))
          throw new Error(`fault "retry-delay" needs a duration such as 37s, got "${value}"`)
        fault.retryDelay = value
        break
      case 'per-day':
        fault.perDay = true
        break
      case 'insufficient-quota':
        fault.insufficientQuota = true
        fault.status ??= 429
        break
      case 'in-stream':
        fault.inStream = true
        break
      case 'path':
        fault.path = value
        break
      case 'method':
        fault.method = value.toUpperCase()
        break
      default:
        throw new Error(
          `unknown fault "${key}" (known: status, delay, chunk-delay, reset, malformed, stall, times, message, retry-after, retry-after-ms, retry-delay, per-day, insufficient-quota, in-stream, path, method)`,
        )
    }
  }
  return fault
}

/** A queue of faults that match requests by method and path. */
export class FaultQueue {
  private readonly faults: Array<Fault & {left: number}> = []

  add(fault: Fault): void {
    this.faults.push({...fault, left: fault.times ?? 1})
  }

  clear(): void {
    this.faults.length = 0
  }

  /** Takes the first fault matching this request (consuming one of its uses). */
  take(method: string, path: string): Fault | undefined {
    const i = this.faults.findIndex(
      (f) => (!f.method || f.method === method) && (!f.path || path.includes(f.path)),
    )
    if (i === -1) return undefined
    const fault = this.faults[i]
    if (fault.left > 0) {
      fault.left--
      if (fault.left === 0) this.faults.splice(i, 1)
    }
    return fault
  }
}

/**
 * Google's `error.details` of a quota's 429 for a fault with `retry-delay` or `per-day`: the quota
 * it ran out of (`QuotaFailure`) and, with a delay, when to try again (`RetryInfo`), as the Gemini
 * API answers them (its free tier: `GenerateRequestsPerMinutePerProjectPerModel-FreeTier`).
 */
export function quotaDetails(fault: Fault): unknown[] | undefined {
  if (fault.retryDelay === undefined && !fault.perDay) return undefined
  const per = fault.perDay ? 'PerDay' : 'PerMinute'
  const details: unknown[] = [
    {
      '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
      violations: [
        {
          quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
          quotaId: `GenerateRequests${per}PerProjectPerModel-FreeTier`,
          quotaDimensions: {location: 'global', model: 'gemini-2.5-flash'},
          quotaValue: fault.perDay ? '250' : '10',
        },
      ],
    },
  ]
  if (fault.retryDelay !== undefined)
    details.push({
      '@type': 'type.googleapis.com/google.rpc.RetryInfo',
      retryDelay: wholeSeconds(fault.retryDelay),
    })
  return details
}

/** A protobuf Duration (`37.5s`) cut to whole seconds (`37s`), as Google's RetryInfo writes it; any other text as it is. */
function wholeSeconds(delay: string): string {
  const m = /^(\d+)(?:\.\d+)?s$/.exec(delay)
  return m ? `${m[1]}s` : delay
}

/**
 * Google's words on a quota's 429 for a fault with `retry-delay` or `per-day` (as the Gemini API
 * answers its free tier spent, continuedev/continue #10066, python-genai #2114): the quota, its
 * limit and model, and, with a delay, "Please retry in D." with the delay uncut, where RetryInfo
 * cuts it to whole seconds ({@link quotaDetails}: "58.934310785s" and "58s"). Undefined for any
 * other fault.
 */
function quotaMessage(fault: Fault): string | undefined {
  if (fault.retryDelay === undefined && !fault.perDay) return undefined
  const limit = fault.perDay ? '250' : '10'
  const retry = fault.retryDelay === undefined ? '' : `\nPlease retry in ${fault.retryDelay}.`
  return (
    'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits. To monitor your current usage, head to: https://ai.dev/rate-limit. ' +
    `\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: ${limit}, model: gemini-2.5-flash${retry}`
  )
}

/** OpenAI's words on its `insufficient_quota` 429 (as its API answers a key whose credit is spent). */
export const INSUFFICIENT_QUOTA_MESSAGE =
  'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.'

/** A fault's error words: its `message=`, OpenAI's billing words, Google's quota words, else the status named. */
export function faultMessage(fault: Fault, status: number): string {
  return (
    fault.message ??
    (fault.insufficientQuota ? INSUFFICIENT_QUOTA_MESSAGE : undefined) ??
    quotaMessage(fault) ??
    `simulated fault: status ${status}`
  )
}
