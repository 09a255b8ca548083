/**
 * Error shaping: what an upstream failure is called in results and logs, and the gateway's own
 * error answers (502 nothing answered, 503 every breaker open, ...) in the entrance family's shape.
 */
import type {ServerResponse} from 'node:http'

import {errorBody} from '../../protocols/errors.js'
import type {Family, TimeoutSettings} from '../../store/schema.js'
import {mintRequestId, requestIdHeader} from './headers.js'
import {answerWaitMs} from './pools.js'
import {msWaitHeaders} from './rate-limit.js'
import type {ProxyResult, ProxyTarget} from './proxy-types.js'

/**
 * A short, human reason for an upstream request error (timeouts named with their setting).
 * `stream` is whether the request was streamed: one that was not waits for its answer's headers
 * up to the idle timeout when that is longer (pools.ts `answerWaitMs`), and its timeout says so.
 *
 * A reset and a silence are said in words OpenCode's retry reads as a network failure: an error
 * inside a stream is retried only when its message matches one of its patterns (OpenCode 1.18.33,
 * its binary's retry list, strings `Rd=[...]`: `/terminated|fetch failed|...|connection lost|...|
 * socket hang up|reset before headers|...|econnreset|etimedout/i` and
 * `/^timeout$|\b(?:request|response|connection|network|stream|read) (?:timeout|timed out|time out)\b/i`),
 * as the same fault met directly is (undici's "terminated", its own "SSE read timed out").
 * "connection reset by upstream" and "upstream silent for N ms" alone matched none: OpenCode ended
 * the session (audit58). Claude Code, Codex, Gemini CLI and Qwen Code retry the event whatever its
 * words (they read its type, status or code).
 */
export function describeError(error: unknown, timeouts: TimeoutSettings, stream = true): string {
  const e = error as {code?: string; message?: string; cause?: {code?: string; message?: string}}
  const code = e?.code ?? e?.cause?.code
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `connect timeout after ${timeouts.connectMs} ms`
    case 'UND_ERR_HEADERS_TIMEOUT': {
      const waited = answerWaitMs(timeouts, stream)
      return waited === undefined
        ? `no answer within ${timeouts.firstByteMs} ms (first-byte timeout)`
        : `no answer within ${waited} ms (idle timeout: the wait of a request not streamed)`
    }
    case 'UND_ERR_BODY_TIMEOUT':
      return `read timed out: upstream silent for ${timeouts.idleMs} ms (idle timeout)`
    case 'ECONNREFUSED':
      return 'connection refused'
    case 'ECONNRESET':
      return 'connection reset by upstream (ECONNRESET)'
    // undici's "other side closed": the upstream ended the connection (a FIN, not a reset)
    case 'UND_ERR_SOCKET':
      return 'connection lost: closed by upstream'
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'upstream host not found'
    default:
      return (e?.message ?? String(error)) + (code ? ` (${code})` : '')
  }
}

/** True for an upstream that went silent (the first-byte or idle timeout ran out), not one that failed otherwise. */
export function isSilence(error: unknown): boolean {
  const e = error as {code?: string; cause?: {code?: string}}
  const code = e?.code ?? e?.cause?.code
  return code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT'
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
  options: {requestId?: string; headers?: Record<string, string>; code?: string; quotaSpent?: boolean} = {},
): string {
  const requestId = options.requestId ?? mintRequestId()
  if (res.headersSent || res.destroyed) return requestId
  // (a wait in `retry-after-ms` only: in whole seconds, rounded up, as Google writes none shorter)
  const retryAfter =
    family === 'gemini'
      ? (options.headers?.['retry-after'] ??
        (options.headers ? msWaitHeaders(options.headers, {family})['retry-after'] : undefined))
      : undefined
  const text = JSON.stringify(
    errorBody(family, status, message, {
      requestId,
      code: options.code,
      retryAfter,
      quotaSpent: options.quotaSpent,
    }),
  )
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
 * Answers a request the gateway could not send anywhere: 503 when every target tried was
 * circuit-broken, else 504 when the last target tried went silent (`silent`), else 502.
 */
export function answerNoTarget(
  res: ServerResponse,
  family: Family,
  result: ProxyResult,
  targets: readonly ProxyTarget[],
  tried: number,
  silent = false,
): void {
  const attempts = result.attempts
  let status: number
  let message: string
  let headers: Record<string, string> = {}
  if (tried === 0 && attempts.some((a) => a.skipped === 'circuit-open')) {
    const open = attempts.filter((a) => a.skipped === 'circuit-open').map((a) => a.provider)
    // an open breaker says when its cooldown ends; a half-open one whose trial is in flight is
    // settled by that trial (soon): a client may ask again in a second
    const retryIn = Math.min(
      ...targets.map((t) => {
        const snapshot = t.breaker?.snapshot()
        if (!snapshot) return Number.POSITIVE_INFINITY
        return snapshot.state === 'half-open' ? 0 : (snapshot.retryInMs ?? Number.POSITIVE_INFINITY)
      }),
    )
    const seconds = Number.isFinite(retryIn) ? Math.max(1, Math.ceil(retryIn / 1000)) : undefined
    result.provider = open[0] ?? null
    status = 503
    message = `every compatible provider is circuit-broken (open): ${open.join(', ')}${seconds ? `; retry in ${seconds} s` : ''}`
    if (seconds) headers = {'retry-after': String(seconds)}
  } else {
    status = silent && result.error ? 504 : 502
    message = result.error
      ? `upstream request failed and no fallback is left: ${result.error}`
      : `no provider is configured for ${family} requests`
  }
  result.status = status
  result.error = message
  result.requestId ||= mintRequestId()
  sendFamilyError(res, family, status, message, {requestId: result.requestId, headers})
}
