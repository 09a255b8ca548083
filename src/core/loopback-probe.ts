/**
 * A light `GET /health` on the local gateway, for the CLI's "is the daemon there?" checks
 * (`logs`, `usage`, `status`, `gateway start`). When the daemon is stopped, the common case for a
 * command that then reads the files itself, a plain TCP connect is refused in about a millisecond,
 * and node:http (15-20 ms to load and make its first request) is never loaded.
 */
import {connect} from 'node:net'

/** True when 127.0.0.1:port answers `/health` with 200 and `{"status":"ok"}`. Never throws. */
export async function probeHealth(
  port: number,
  options: {signal?: AbortSignal; timeoutMs?: number} = {},
): Promise<boolean> {
  const {signal, timeoutMs = 2_000} = options
  if (!(await listening(port, timeoutMs, signal))) return false
  const {request} = await import('node:http')
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false)
    let done = false
    const finish = (ok: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      req.destroy()
      resolve(ok)
    }
    const onAbort = () => finish(false)
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/health',
        method: 'GET',
        agent: false,
        headers: {accept: 'application/json'},
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume()
          return finish(false)
        }
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > 64 * 1024) return finish(false)
          chunks.push(chunk)
        })
        res.on('end', () => {
          try {
            const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {status?: unknown}
            finish(body?.status === 'ok')
          } catch {
            finish(false)
          }
        })
        res.on('error', () => finish(false))
      },
    )
    const timer = setTimeout(() => finish(false), timeoutMs)
    timer.unref?.()
    signal?.addEventListener('abort', onAbort, {once: true})
    req.on('error', () => finish(false))
    req.end()
  })
}

/** True when something accepts a TCP connection on 127.0.0.1:port (false when refused). */
function listening(port: number, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false)
    const socket = connect({host: '127.0.0.1', port})
    const finish = (ok: boolean) => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      socket.destroy()
      resolve(ok)
    }
    const onAbort = () => finish(false)
    const timer = setTimeout(() => finish(false), timeoutMs)
    timer.unref?.()
    signal?.addEventListener('abort', onAbort, {once: true})
    socket.once('connect', () => finish(true))
    socket.once('error', () => finish(false))
  })
}
