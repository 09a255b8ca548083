/**
 * Test helpers of the chat and messages codec tests: SSE text split into events, a decoder and
 * an encoder run over a whole stream, and a one-answer HTTP server on 127.0.0.1 for the SDKs.
 */
import type {Server} from 'node:http'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'

import type {StreamDecoder, StreamEncoder, StreamEvent} from './ir.js'

/** SSE text -> events (`event:` name and joined `data:` lines). */
export function parseSse(text: string): Array<{event?: string; data: string}> {
  const out: Array<{event?: string; data: string}> = []
  for (const raw of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined
    const data: string[] = []
    for (const line of raw.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim()
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
    }
    if (data.length) out.push({...(event ? {event} : {}), data: data.join('\n')})
  }
  return out
}

/** Chat-style `data:` lines from payloads (strings are sent as they are, e.g. `[DONE]`). */
export const chatSse = (chunks: unknown[]): string =>
  chunks.map((c) => `data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`).join('')

/** One `chat.completion.chunk` of one choice (`delta`, its finish reason), from `model` as `id`. */
export const chatChunk = (
  delta: Record<string, unknown>,
  finish: string | null = null,
  {id = 'c1', model = 'up'}: {id?: string; model?: string} = {},
): Record<string, unknown> => ({
  id,
  object: 'chat.completion.chunk',
  created: 1,
  model,
  choices: [{index: 0, delta, finish_reason: finish}],
})

/** A chunk of one tool call's delta at `index` (its `id` on the call's first chunk). */
export const chatToolChunk = (
  index: number,
  fn: Record<string, unknown>,
  id?: string,
): Record<string, unknown> =>
  chatChunk({tool_calls: [{index, ...(id ? {id, type: 'function'} : {}), function: fn}]})

/** Messages-style events from payloads (`event:` = the payload's type). */
export const messagesSse = (payloads: Array<Record<string, unknown>>): string =>
  payloads.map((p) => `event: ${String(p.type)}\ndata: ${JSON.stringify(p)}\n\n`).join('')

/** All IR events of an upstream stream, `end()` included. */
export function decodeAll(decoder: StreamDecoder, sse: string): StreamEvent[] {
  const events: StreamEvent[] = []
  for (const e of parseSse(sse)) events.push(...decoder.event(e.event, e.data))
  events.push(...decoder.end())
  return events
}

export const encodeAll = (encoder: StreamEncoder, events: StreamEvent[]): string =>
  events.map((e) => encoder.event(e)).join('')

/**
 * Serves `body` to every request (an SSE stream when `sse`), records the request bodies; the
 * caller closes it.
 */
export async function serveOnce(
  body: string,
  sse: boolean,
  status = 200,
): Promise<{url: string; bodies: unknown[]; close: () => Promise<void>}> {
  const bodies: unknown[] = []
  const server: Server = createServer((req, res) => {
    let text = ''
    req.on('data', (c: Buffer) => (text += c.toString()))
    req.on('end', () => {
      bodies.push(text ? JSON.parse(text) : undefined)
      res.writeHead(status, {'content-type': sse ? 'text/event-stream' : 'application/json'})
      // Streams are written in pieces, as a real upstream would.
      if (sse) for (let i = 0; i < body.length; i += 97) res.write(body.slice(i, i + 97))
      else res.write(body)
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}
