/** A tiny method + path router for the simulator (kept dependency-free and fast). */
import type {IncomingMessage, ServerResponse} from 'node:http'

export interface SimRequest {
  method: string
  path: string
  query: URLSearchParams
  headers: IncomingMessage['headers']
  /** Parsed JSON body, or undefined when there was none. */
  body: unknown
  rawBody: Buffer
  params: Record<string, string>
  req: IncomingMessage
  res: ServerResponse
}

export type SimHandler = (request: SimRequest) => void | Promise<void>

interface Route {
  method: string
  pattern: RegExp
  keys: string[]
  handler: SimHandler
}

export class SimRouter {
  private readonly routes: Route[] = []

  /** Adds a route; `path` may hold `:name` segments, or be a RegExp with named groups. */
  add(method: string, path: string | RegExp, handler: SimHandler): void {
    if (path instanceof RegExp) {
      this.routes.push({method, pattern: path, keys: [], handler})
      return
    }
    const keys: string[] = []
    const source = path
      .split('/')
      .map((segment) => {
        if (segment.startsWith(':')) {
          keys.push(segment.slice(1))
          return '([^/]+)'
        }
        return segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
      })
      .join('/')
    this.routes.push({method, pattern: new RegExp(`^${source}/?$`), keys, handler})
  }

  /** The handler and path parameters for a request, or undefined (404/405 decided by the caller). */
  match(
    method: string,
    path: string,
  ): {handler: SimHandler; params: Record<string, string>} | 'method' | undefined {
    let pathMatched = false
    for (const route of this.routes) {
      const m = route.pattern.exec(path)
      if (!m) continue
      pathMatched = true
      if (route.method !== method) continue
      const params: Record<string, string> = {...(m.groups ?? {})}
      route.keys.forEach((key, i) => (params[key] = decodeURIComponent(m[i + 1])))
      return {handler: route.handler, params}
    }
    return pathMatched ? 'method' : undefined
  }
}

/** Sends a JSON answer. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  })
  res.end(text)
}
