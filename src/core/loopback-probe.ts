/**
 * A light `GET /health` on the local gateway, for the CLI's "is the daemon there?" checks
 * (`logs`, `usage`, `status`, `gateway start`), on one socket without node:http (core/http1.ts):
 * when the daemon is stopped the connect is refused in about a millisecond, and when it runs the
 * whole check takes 3-4 ms (`gwctl status --quiet`, the command scripts call in loops, is this
 * check and nothing else).
 */
import {exchange} from './http1.js'

/** True when 127.0.0.1:port answers `/health` with 200 and `{"status":"ok"}`. Never throws. */
export async function probeHealth(
  port: number,
  options: {signal?: AbortSignal; timeoutMs?: number} = {},
): Promise<boolean> {
  const {signal, timeoutMs = 2_000} = options
  // one deadline for the whole check, as before: connect, head and body alike
  const deadline = new AbortController()
  const timer = setTimeout(() => deadline.abort(), timeoutMs)
  timer.unref?.()
  const onAbort = () => deadline.abort()
  signal?.addEventListener('abort', onAbort, {once: true})
  if (signal?.aborted) deadline.abort()
  try {
    const answer = await exchange(port, {
      target: '/health',
      headers: {accept: 'application/json'},
      signal: deadline.signal,
      timeouts: {connect: timeoutMs, headers: timeoutMs, body: timeoutMs},
      maxBytes: 64 * 1024,
    })
    const body = JSON.parse(answer.body.toString('utf8')) as {status?: unknown}
    return answer.status === 200 && body?.status === 'ok'
  } catch {
    return false
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
  }
}
