/**
 * Error bodies in each entrance's own protocol (../shared/PROTOCOLS.md), so that the official
 * SDKs and agent CLIs parse gateway errors like their vendor's.
 */
import type {Family} from './ir.js'

/** Vendor error `type` for an HTTP status (chat/responses and messages families). */
export function errorType(family: Family, status: number): string {
  if (family === 'messages') {
    const types: Record<number, string> = {
      400: 'invalid_request_error',
      401: 'authentication_error',
      402: 'billing_error',
      403: 'permission_error',
      404: 'not_found_error',
      413: 'request_too_large',
      429: 'rate_limit_error',
      504: 'timeout_error',
      529: 'overloaded_error',
    }
    return types[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
  }
  if (status === 401) return 'authentication_error'
  if (status === 403) return 'permission_error'
  if (status === 404) return 'not_found_error'
  if (status === 429) return 'rate_limit_error'
  if (status >= 500) return 'api_error'
  return 'invalid_request_error'
}

/**
 * The HTTP statuses that error names stand for, whichever the name is in (`error.code` or
 * `error.type`): OpenAI's codes as OpenAI-compatible servers and relays write them (OpenRouter,
 * new-api, one-api, LiteLLM) and Anthropic's type names as relays forward them. A spent quota
 * (`insufficient_quota`) is OpenAI's 429, read as one no wait cures (daemon/router/rate-limit.ts).
 */
const NAMED_STATUS: Readonly<Record<string, number>> = {
  rate_limit_exceeded: 429,
  rate_limit_error: 429,
  insufficient_quota: 429,
  context_length_exceeded: 400,
  invalid_prompt: 400,
  invalid_api_key: 401,
  authentication_error: 401,
  permission_error: 403,
  model_not_found: 404,
  not_found_error: 404,
}

/** The status an error's string code or type names ({@link NAMED_STATUS}); undefined for another. */
export function namedStatus(name: unknown): number | undefined {
  return typeof name === 'string' && Object.hasOwn(NAMED_STATUS, name) ? NAMED_STATUS[name] : undefined
}

/** Google RPC status name for an HTTP status (gemini family). */
export function googleStatus(status: number): string {
  const names: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    409: 'ABORTED',
    429: 'RESOURCE_EXHAUSTED',
    499: 'CANCELLED',
    500: 'INTERNAL',
    501: 'NOT_IMPLEMENTED',
    502: 'UNAVAILABLE',
    503: 'UNAVAILABLE',
    504: 'DEADLINE_EXCEEDED',
  }
  return names[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION')
}

/** The JSON error body of an HTTP error answer in `family`'s shape. */
export function errorBody(
  family: Family,
  status: number,
  message: string,
  options: {code?: string; requestId?: string; retryAfter?: string; quotaSpent?: boolean} = {},
): unknown {
  switch (family) {
    case 'messages':
      return {
        type: 'error',
        error: {type: errorType(family, status), message},
        request_id: options.requestId ?? null,
      }
    case 'gemini': {
      // a wait (the `retry-after` seconds sent with it) as Google states it, in the body: Gemini
      // CLI and Google's SDKs read RetryInfo, not the header
      // (seconds only: an HTTP date or anything else says no duration Google would write)
      const wait =
        options.retryAfter !== undefined && /^\d+(?:\.\d+)?$/.test(options.retryAfter)
          ? Number(options.retryAfter)
          : NaN
      const details: unknown[] = []
      // a quota no wait helps (another family's daily quota, OpenAI's `insufficient_quota`), as
      // Google names a spent daily quota: Gemini CLI (0.61, classifyGoogleError) ends the turn on a
      // QuotaFailure whose quotaId holds "PerDay" ("You have exhausted your daily quota on this
      // model.", TerminalQuotaError) where it would otherwise retry a 429 up to 10 times
      if (options.quotaSpent)
        details.push({
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [{quotaId: 'UpstreamQuotaPerDay', description: message}],
        })
      if (Number.isFinite(wait))
        details.push({'@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${wait}s`})
      // OpenAI's `insufficient_quota` (nothing left to spend: an empty prepaid balance or a
      // project's monthly budget reached, in the same words) said with Google's words for a quota
      // of none, as `(remaining limit: 0)`, true of both. Gemini CLI (0.61, classifyGoogleError)
      // tests the lowercased message before the details, `(status2 === 429 || ...) &&
      // /limit:\s*0(?!\d|\.\d)/.test(lowerMessage)`, and ends the turn with the message itself as
      // its TerminalQuotaError's, where a `PerDay` QuotaFailure alone ends it with its own "You
      // have exhausted your daily quota on this model." and the upstream's words only in the
      // error's cause (measured). The QuotaFailure stays, for clients that read only the details.
      const noCredit =
        options.quotaSpent &&
        (options.code === 'insufficient_quota' || message.includes('insufficient_quota')) &&
        !/limit:\s*0(?!\d|\.\d)/i.test(message)
      return {
        error: {
          code: status,
          message: noCredit ? `${message} (remaining limit: 0)` : message,
          status: googleStatus(status),
          ...(details.length > 0 ? {details} : {}),
        },
      }
    }
    default:
      return {error: {message, type: errorType(family, status), param: null, code: options.code ?? null}}
  }
}

/**
 * The SSE text that ends a stream with an error after the first byte was sent, in `family`'s
 * shape: chat `data: {"error":…}`, responses `event: error`, messages `event: error`, gemini a
 * `data:` chunk with `{"error":{code,…}}`.
 */
export function streamErrorEvent(
  family: Family,
  status: number,
  message: string,
  sequenceNumber = 0,
): string {
  switch (family) {
    case 'messages':
      return `event: error\ndata: ${JSON.stringify({type: 'error', error: {type: errorType(family, status), message}})}\n\n`
    case 'responses':
      return `event: error\ndata: ${JSON.stringify({type: 'error', code: errorType(family, status), message, param: null, sequence_number: sequenceNumber})}\n\n`
    case 'gemini':
      return `data: ${JSON.stringify({error: {code: status, message, status: googleStatus(status)}})}\n\n`
    default:
      return `data: ${JSON.stringify({error: {message, type: errorType(family, status), param: null, code: null}})}\n\n`
  }
}

/** The message of an upstream's error body, whatever its family's shape. */
export function upstreamErrorMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as {error?: unknown; message?: unknown}
    const error = body?.error
    if (typeof error === 'string') return error
    if (error && typeof error === 'object') {
      const message = (error as {message?: unknown}).message
      if (typeof message === 'string') return message
    }
    if (typeof body?.message === 'string') return body.message
  } catch {
    // not JSON: the caller quotes an excerpt
  }
  return undefined
}
