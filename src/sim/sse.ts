/**
 * Server-sent events for the simulator's streaming endpoints, honouring the stream faults
 * (`chunk-delay`, and `reset` mid-stream).
 */
import type {ServerResponse} from 'node:http'
import {setTimeout as sleep} from 'node:timers/promises'

import type {Fault} from './faults.js'

export interface SseEvent {
  /** `event:` line; omitted when undefined (chat-completions and Gemini streams have none). */
  event?: string
  /** Serialised as JSON unless it is a string (e.g. `[DONE]`). */
  data: unknown
}

/**
 * Writes `events` as an SSE stream and ends the response. With a `reset` fault the connection is
 * destroyed after about half of the events, as a dropped upstream would do.
 */
export async function sendSse(
  res: ServerResponse,
  events: readonly SseEvent[],
  options: {fault?: Fault; headers?: Record<string, string>; delayMs?: number} = {},
): Promise<void> {
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...options.headers,
  })
  res.flushHeaders()
  const resetAt = options.fault?.reset ? Math.max(1, Math.floor(events.length / 2)) : -1
  const gap = options.fault?.chunkDelayMs ?? options.delayMs ?? 0
  for (let i = 0; i < events.length; i++) {
    if (i === resetAt) {
      res.destroy()
      return
    }
    if (gap >= 1 && i > 0) await sleep(gap)
    if (res.destroyed) return
    const {event, data} = events[i]
    let payload = typeof data === 'string' ? data : JSON.stringify(data)
    if (options.fault?.malformed && i === Math.floor(events.length / 2) && payload.startsWith('{'))
      payload = payload.slice(0, Math.ceil(payload.length / 2))
    res.write((event ? `event: ${event}\n` : '') + `data: ${payload}\n\n`)
  }
  res.end()
}

/** A deterministic token count for simulated usage: about one token per 4 characters, at least 1. */
export function simTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4))
}
