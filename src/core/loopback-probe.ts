/**
 * A light `GET /health` on the local gateway, for the CLI's "is the daemon there?" checks
 * (`logs`, `usage`, `status`, `gateway start`). One TCP connection, one HTTP/1.1 request written
 * on it and the answer read back, without node:http: when the daemon is stopped the connect is
 * refused in about a millisecond, and when it runs the whole check takes 3-4 ms where node:http's
 * first request in a process took 10-14 ms (`gwctl status --quiet`, the command scripts call in
 * loops, is this check and nothing else). The answer is read as HTTP/1.1 with a `content-length`
 * or a chunked body, or to the end of the connection (the request says `Connection: close`).
 */
import {connect} from 'node:net'

const MAX_ANSWER = 64 * 1024

/** True when 127.0.0.1:port answers `/health` with 200 and `{"status":"ok"}`. Never throws. */
export async function probeHealth(
  port: number,
  options: {signal?: AbortSignal; timeoutMs?: number} = {},
): Promise<boolean> {
  const {signal, timeoutMs = 2_000} = options
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false)
    const socket = connect({host: '127.0.0.1', port})
    let received = Buffer.alloc(0)
    let done = false
    const finish = (ok: boolean) => {
      if (done) return
      done = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      socket.destroy()
      resolve(ok)
    }
    const onAbort = () => finish(false)
    const judge = (ended: boolean) => {
      const answer = readAnswer(received, ended)
      if (answer === undefined) {
        if (ended) finish(false)
        return
      }
      try {
        finish(answer.status === 200 && (JSON.parse(answer.body) as {status?: unknown})?.status === 'ok')
      } catch {
        finish(false)
      }
    }
    const timer = setTimeout(() => finish(false), timeoutMs)
    timer.unref?.()
    signal?.addEventListener('abort', onAbort, {once: true})
    socket.once('connect', () => {
      socket.write(
        `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: application/json\r\nConnection: close\r\n\r\n`,
      )
    })
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      if (received.length > MAX_ANSWER) return finish(false)
      judge(false)
    })
    socket.once('end', () => judge(true))
    socket.once('error', () => finish(false))
  })
}

/**
 * The status and body of an HTTP/1.x answer in `bytes`; undefined while it is incomplete (or,
 * once the connection `ended`, when it never became complete). A malformed answer has status 0.
 */
export function readAnswer(bytes: Buffer, ended: boolean): {status: number; body: string} | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n')
  if (headEnd < 0) return undefined
  const [statusLine, ...fields] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n')
  const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine)
  if (!status) return {status: 0, body: ''}
  const header = (name: string): string | undefined =>
    fields
      .find((f) => f.slice(0, f.indexOf(':')).trim().toLowerCase() === name)
      ?.split(':')
      .slice(1)
      .join(':')
      .trim()
  const rest = bytes.subarray(headEnd + 4)
  if (/\bchunked\b/i.test(header('transfer-encoding') ?? '')) {
    const parts: Buffer[] = []
    let at = 0
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', at)
      if (lineEnd < 0) return undefined
      const size = Number.parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16)
      if (!Number.isFinite(size)) return {status: 0, body: ''}
      if (size === 0) break
      const start = lineEnd + 2
      if (rest.length < start + size + 2) return undefined
      parts.push(rest.subarray(start, start + size))
      at = start + size + 2
    }
    return {status: Number(status[1]), body: Buffer.concat(parts).toString('utf8')}
  }
  const length = header('content-length')
  if (length !== undefined) {
    const n = Number(length)
    if (!Number.isInteger(n) || n < 0) return {status: 0, body: ''}
    if (rest.length < n) return undefined
    return {status: Number(status[1]), body: rest.subarray(0, n).toString('utf8')}
  }
  return ended ? {status: Number(status[1]), body: rest.toString('utf8')} : undefined
}
