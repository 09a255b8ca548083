/**
 * One HTTP/1.1 exchange on one loopback TCP connection, for the CLI's calls to its own daemon
 * (`/health`, the management API). node:http's first request in a process costs 10-14 ms on
 * this machine (its agent, parser and socket set-up are loaded and warmed on first use); this
 * costs 3-4 ms, and every command that asks the daemon pays it once. The request says
 * `Connection: close`; the answer is read with a `content-length`, as chunks, or to the end of
 * the connection, at most `maxBytes`. Only for 127.0.0.1 and the daemon's plain JSON answers:
 * the platform client (`api/http.ts`) stays on undici.
 */
import {connect} from 'node:net'

export interface Http1Answer {
  status: number
  /** Header names in lower case; a repeated header keeps its values joined by ", ". */
  headers: Record<string, string>
  body: Buffer
}

export interface Http1Options {
  method?: string
  /** Path and query. */
  target: string
  headers?: Record<string, string | number>
  payload?: Buffer
  signal?: AbortSignal
  /** ms to connect, from then to the answer's head, and of silence while its body arrives. */
  timeouts: {connect: number; headers: number; body: number}
  maxBytes?: number
}

/** A failure before a whole answer, with the code `networkError` (api/http-errors.ts) words. */
function failure(code: string, message: string): Error {
  return Object.assign(new Error(message), {code})
}

/**
 * Sends one request to 127.0.0.1:port and reads its answer. Rejects with the socket's error
 * (ECONNREFUSED...), a CONNECT_TIMEOUT / HEADERS_TIMEOUT / BODY_TIMEOUT / ANSWER_TOO_LARGE /
 * BAD_ANSWER error, or the signal's reason.
 */
export function exchange(port: number, options: Http1Options): Promise<Http1Answer> {
  const {signal, timeouts, maxBytes = 64 * 1024 * 1024} = options
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const socket = connect({host: '127.0.0.1', port})
    let received: Buffer = Buffer.alloc(0)
    let settled = false
    let timer: NodeJS.Timeout | undefined
    const arm = (ms: number, code: string, what: string) => {
      clearTimeout(timer)
      timer = setTimeout(() => fail(failure(code, what)), ms)
    }
    const settle = () => {
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      socket.destroy()
    }
    const fail = (error: unknown) => {
      if (settled) return
      settle()
      reject(error)
    }
    const onAbort = () => fail(signal?.reason)
    const judge = (ended: boolean) => {
      let answer: Http1Answer | undefined
      try {
        answer = readAnswer(received, ended)
      } catch (error) {
        return fail(error)
      }
      if (answer) {
        settle()
        return resolve(answer)
      }
      if (ended) return fail(failure('BAD_ANSWER', 'the answer ended early'))
      if (received.includes('\r\n\r\n')) arm(timeouts.body, 'BODY_TIMEOUT', 'the answer stopped')
    }
    signal?.addEventListener('abort', onAbort, {once: true})
    arm(timeouts.connect, 'CONNECT_TIMEOUT', 'connecting timed out')
    socket.once('connect', () => {
      arm(timeouts.headers, 'HEADERS_TIMEOUT', 'no answer')
      const fields = {
        host: `127.0.0.1:${port}`,
        ...options.headers,
        ...(options.payload ? {'content-length': options.payload.length} : {}),
        connection: 'close',
      }
      const head =
        `${options.method ?? 'GET'} ${options.target} HTTP/1.1\r\n` +
        Object.entries(fields)
          .map(([k, v]) => `${k}: ${v}\r\n`)
          .join('') +
        '\r\n'
      socket.write(options.payload ? Buffer.concat([Buffer.from(head, 'latin1'), options.payload]) : head)
    })
    socket.on('data', (chunk: Buffer) => {
      received = received.length === 0 ? chunk : Buffer.concat([received, chunk])
      if (received.length > maxBytes) return fail(failure('ANSWER_TOO_LARGE', 'the answer is too large'))
      judge(false)
    })
    socket.once('end', () => judge(true))
    socket.once('error', fail)
  })
}

/**
 * The answer in `bytes` when it is whole; undefined while it is not (with `ended`, the
 * connection closed: an answer without a length ends there). Throws BAD_ANSWER for bytes that are
 * not HTTP/1.x.
 */
export function readAnswer(bytes: Buffer, ended: boolean): Http1Answer | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n')
  if (headEnd < 0) return undefined
  const [statusLine, ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n')
  const status = /^HTTP\/1\.[01] (\d{3})(?: |$)/.exec(statusLine)
  if (!status) throw failure('BAD_ANSWER', 'the answer is not HTTP/1.1')
  const headers: Record<string, string> = {}
  for (const line of lines) {
    const colon = line.indexOf(':')
    if (colon <= 0) throw failure('BAD_ANSWER', 'a malformed header line')
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value
  }
  const rest = bytes.subarray(headEnd + 4)
  const answer = (body: Buffer): Http1Answer => ({status: Number(status[1]), headers, body})
  if (/\bchunked\b/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = []
    let at = 0
    for (;;) {
      const lineEnd = rest.indexOf('\r\n', at)
      if (lineEnd < 0) return undefined
      const size = Number.parseInt(rest.subarray(at, lineEnd).toString('latin1'), 16)
      if (!Number.isInteger(size) || size < 0) throw failure('BAD_ANSWER', 'a malformed chunk size')
      if (size === 0) return answer(Buffer.concat(parts))
      const start = lineEnd + 2
      if (rest.length < start + size + 2) return undefined
      parts.push(rest.subarray(start, start + size))
      at = start + size + 2
    }
  }
  const length = headers['content-length']
  if (length !== undefined) {
    const n = Number(length)
    if (!Number.isInteger(n) || n < 0) throw failure('BAD_ANSWER', 'a malformed content-length')
    return rest.length < n ? undefined : answer(rest.subarray(0, n))
  }
  return ended ? answer(rest) : undefined
}
