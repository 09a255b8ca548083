/**
 * Subscribing to the running gateway's event stream (`GET /api/events`, Server-Sent Events):
 * `gwctl logs --follow` and the terminal app use it instead of polling. The subscription
 * reconnects by itself when the gateway restarts and says when it is up or down.
 */
import {request} from 'node:http'
import {setTimeout as sleep} from 'node:timers/promises'

import {createParser} from 'eventsource-parser'

import type {GatewayEvent} from '../gateway/events.js'

export interface EventHandlers {
  onEvent(event: GatewayEvent): void
  /** The stream is open (`hello` received): the gateway is up. */
  onUp?(info: {pid: number; port: number; version: string}): void
  /** The stream ended or could not open: the gateway is down (or restarting). */
  onDown?(reason: string): void
}

/**
 * One connection to `GET /api/events` on `port`; resolves when it ends (the gateway stopped, the
 * signal aborted), rejects when it cannot open. Raw node:http: no fetch/undici start-up cost.
 */
export function streamEvents(port: number, handlers: EventHandlers, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return resolve()
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/api/events',
        headers: {accept: 'text/event-stream', host: `127.0.0.1:${port}`},
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume()
          reject(new Error(`GET /api/events answered ${res.statusCode}`))
          return
        }
        const parser = createParser({
          onEvent(message) {
            let data: unknown
            try {
              data = JSON.parse(message.data)
            } catch {
              return
            }
            if (message.event === 'hello')
              handlers.onUp?.(data as {pid: number; port: number; version: string})
            else if (data && typeof data === 'object' && 'type' in data)
              handlers.onEvent(data as GatewayEvent)
          },
        })
        res.setEncoding('utf8')
        res.on('data', (chunk: string) => parser.feed(chunk))
        res.on('close', () => resolve())
        res.on('error', () => resolve())
      },
    )
    const onAbort = () => req.destroy()
    signal?.addEventListener('abort', onAbort, {once: true})
    req.on('error', (error) => (signal?.aborted ? resolve() : reject(error)))
    req.on('close', () => signal?.removeEventListener('abort', onAbort))
    req.end()
  })
}

/**
 * Follows the event stream until the signal aborts, reconnecting every `retryMs` while the
 * gateway is down. `port` is asked again before each attempt (a restart may change it).
 */
export async function followEvents(
  port: () => Promise<number | undefined>,
  handlers: EventHandlers,
  options: {signal?: AbortSignal; retryMs?: number} = {},
): Promise<void> {
  const {signal} = options
  let up = false
  while (!signal?.aborted) {
    let reason = 'The gateway is not running.'
    try {
      const p = await port()
      if (p !== undefined) {
        await streamEvents(
          p,
          {
            ...handlers,
            onUp(info) {
              up = true
              handlers.onUp?.(info)
            },
          },
          signal,
        )
        reason = 'The gateway stopped.'
      }
    } catch (error) {
      if (signal?.aborted) return
      reason = (error as Error).message || reason
    }
    if (signal?.aborted) return
    if (up || reason) handlers.onDown?.(reason)
    up = false
    try {
      await sleep(options.retryMs ?? 500, undefined, {signal})
    } catch {
      return
    }
  }
}
