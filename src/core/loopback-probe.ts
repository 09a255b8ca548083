/**
 * A light `GET /health` on the local gateway through node:http, for the CLI's "is the daemon
 * there?" checks (`logs`, `usage`, `status`, `gateway start`). Loading undici (the management
 * API client) costs tens of milliseconds of start-up; a command that then reads the files
 * itself (the daemon is stopped) never needs it.
 */
import {request} from 'node:http'

/** True when 127.0.0.1:port answers `/health` with 200 and `{"status":"ok"}`. Never throws. */
export function probeHealth(
  port: number,
  options: {signal?: AbortSignal; timeoutMs?: number} = {},
): Promise<boolean> {
  const {signal, timeoutMs = 2_000} = options
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
