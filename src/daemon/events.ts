/**
 * The daemon's event stream: one in-process bus that the places where things happen call with one
 * line (`emitGatewayEvent(...)`), and `GET /api/events`, which sends each event to subscribers as
 * Server-Sent Events. A management route: the server's loopback Host and Origin checks apply.
 *
 * Events carry what a viewer needs to redraw (the log row of a finished request, the new breaker
 * state), never a key or a credential.
 */
import type {ServerResponse} from 'node:http'

import type {GatewayEvent} from '../gateway/events.js'
import type {GatewayRequest} from './server.js'

type Listener = (event: GatewayEvent) => void

const listeners = new Set<Listener>()
const streams = new Set<ServerResponse>()
let nextId = 1

/** Tells every subscriber; never throws into the caller (the request path). */
export function emitGatewayEvent(event: GatewayEvent): void {
  if (listeners.size === 0) return
  for (const listener of listeners) {
    try {
      listener(event)
    } catch {
      // a broken subscriber must not break the request that emitted
    }
  }
}

/** Subscribes in-process; returns the unsubscribe function. */
export function onGatewayEvent(listener: Listener): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

/** One SSE frame. `data` is JSON on one line, so no field can inject another. */
export function sseFrame(id: number, event: string, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}

/** Comment frames keep idle connections (and proxies) from timing out. */
export const HEARTBEAT_MS = 15_000

/** `GET /api/events`: `hello` first (pid, port, version), then one frame per event. */
export function eventsHandler(
  request: GatewayRequest,
  context: {port: number; version: string},
): Promise<void> {
  const res = request.res
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  })
  res.write(sseFrame(0, 'hello', {pid: process.pid, port: context.port, version: context.version}))
  streams.add(res)
  const unsubscribe = onGatewayEvent((event) => {
    res.write(sseFrame(nextId++, event.type, event))
  })
  const heartbeat = setInterval(() => res.write(': ping\n\n'), HEARTBEAT_MS)
  heartbeat.unref()
  return new Promise((resolve) => {
    const done = () => {
      clearInterval(heartbeat)
      unsubscribe()
      streams.delete(res)
      resolve()
    }
    // 'close' on the response: the client went away or the stream was ended
    res.once('close', done)
  })
}

/** Ends every open stream (the gateway is stopping: they would hold its drain for nothing). */
export function closeEventStreams(): void {
  for (const res of streams) res.end()
  streams.clear()
}
