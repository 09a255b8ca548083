/**
 * The wait an HTTP answer's headers state: one reading for the platform client's retries
 * (api/http.ts) and the gateway's wait for a 429 (daemon/router/rate-limit.ts).
 */

/** Parses `Retry-After` (seconds or an HTTP date) and `retry-after-ms`, in milliseconds; undefined when absent. */
export function parseRetryAfter(
  headers: Record<string, string | string[] | undefined>,
  now = Date.now(),
): number | undefined {
  const ms = headerValue(headers, 'retry-after-ms')?.trim()
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms))
  const value = headerValue(headers, 'retry-after')?.trim()
  if (!value) return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000)
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** A header's value, the first of a repeated one. */
export function headerValue(
  headers: Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  const v = headers[name]
  return Array.isArray(v) ? v[0] : v
}
