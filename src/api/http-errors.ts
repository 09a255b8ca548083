/**
 * How gwctl words an HTTP error answer or a network failure: the one place, shared by the
 * platform client (undici, `http.ts`) and the light loopback client of the local gateway's
 * management API (`loopback-client.ts`), so a command that only talks to the daemon never loads
 * undici.
 */
import type {GwError} from '../core/errors.js'
import {AuthError, InterruptedError, NotFoundError, UpstreamError, isAbortError} from '../core/errors.js'
import {headerValue, parseRetryAfter} from '../core/retry-after.js'

export {headerValue, parseRetryAfter}

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
 * A 404 for an endpoint (not for a task id) almost always means a base URL without `/api/v1`
 * (the platform's) or without `/v1` (the local gateway's).
 * Returns the hint, or undefined when the 404 is about a record.
 */
function missingEndpointHint(message: string, context: ErrorContext): string | undefined {
  const base = context.baseUrl?.replace(/\/+$/, '')
  const saysEndpoint =
    /no such (endpoint|route|path)|cannot (get|post|delete)|unknown (endpoint|route|path)|route not found/i.test(
      message,
    )
  if (context.answeredBy === 'gateway') {
    // The gateway's model endpoints are OpenAI's paths below /v1: its bare origin, which
    // `gateway start` prints, is the usual mistake (`GWCTL_BASE_URL=http://127.0.0.1:4317`).
    if (!saysEndpoint || base === undefined || /\/v1$/.test(new URL(base).pathname)) return undefined
    return `No such endpoint below ${base}: the gateway's base URL ends in /v1 (e.g. ${new URL(base).origin}/v1). Fix it with GWCTL_BASE_URL or \`gwctl config set base-url\`.`
  }
  const baseLacksApi = base !== undefined && !/\/api\/v1$/.test(new URL(base).pathname)
  if (!saysEndpoint && !baseLacksApi) return undefined
  return base
    ? `No such endpoint below ${base}: the base URL should end in /api/v1 (e.g. ${new URL(base).origin}/api/v1). Fix it with \`gwctl config set base-url\` or GWCTL_BASE_URL.`
    : 'No such endpoint: the base URL should end in /api/v1.'
}

/** Where a client's base URL and its answers come from, for the hints of network errors. */
export interface NetworkContext {
  answeredBy?: 'platform' | 'gateway'
  /** The environment variable the base URL came from (`GWCTL_BASE_URL`), when it did. */
  baseUrlEnv?: string
}

/**
 * What to do about a network error at `origin`: a refused connection to the local gateway's port
 * means the gateway is stopped (start it); otherwise check the base URL where it was set, naming
 * the environment variable when it came from one, not the setting it overrides.
 */
function networkHint(refused: boolean, context: NetworkContext): string {
  const fromEnv = context.baseUrlEnv
  if (refused && context.answeredBy === 'gateway') {
    return `The gateway is not running: start it with \`gwctl gateway start\` (\`gwctl gateway\` shows its state)${fromEnv ? `, or point ${fromEnv} elsewhere` : ''}.`
  }
  return fromEnv
    ? `Check ${fromEnv} (it sets the base URL, over \`gwctl config get base-url\`) and your connection.`
    : 'Check the base URL (`gwctl config get base-url`) and your connection.'
}

export function networkError(error: unknown, origin: string, context: NetworkContext = {}): GwError {
  if (isAbortError(error)) return new InterruptedError('Request aborted.')
  const code = (error as {code?: string}).code
  const cause = (error as {cause?: {code?: string}}).cause
  // undici's codes, and the same without the prefix from the loopback client
  const netCode = (code ?? cause?.code)?.replace(/^UND_ERR_/, '')
  const what =
    netCode === 'ECONNREFUSED'
      ? `nothing is listening at ${origin}`
      : netCode === 'CONNECT_TIMEOUT'
        ? `connecting to ${origin} timed out`
        : netCode === 'HEADERS_TIMEOUT'
          ? `${origin} sent no answer in time`
          : netCode === 'BODY_TIMEOUT'
            ? `${origin} stopped sending mid-answer`
            : netCode === 'ENOTFOUND' || netCode === 'EAI_AGAIN'
              ? `the host of ${origin} cannot be resolved`
              : `${(error as Error).message}`
  return new UpstreamError(`Network error: ${what}.`, {
    code: 'network',
    details: (code ?? cause?.code) ? {net_code: code ?? cause?.code} : undefined,
    hint: networkHint(netCode === 'ECONNREFUSED', context),
    cause: error,
  })
}

export function parseBody(text: string): unknown {
  if (!text) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}
