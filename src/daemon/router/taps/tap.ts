/**
 * Usage taps: read token usage from an upstream answer on the side, chunk by chunk, without
 * holding a byte back from the client. One tap per protocol family; SSE answers go through an
 * `eventsource-parser` instance, JSON answers are collected (up to a cap) and parsed at the end.
 *
 * Normalised counts (the same meaning for every protocol, so usage pivots can add them up):
 * - `inputTokens`  every prompt token, including cache reads and cache writes
 * - `cacheReadTokens`, `cacheCreationTokens`  the parts of `inputTokens` read from / written to a cache
 * - `cache1hTokens` the part of `cacheCreationTokens` written to the 1-hour cache (Messages'
 *   `cache_creation.ephemeral_1h_input_tokens`; billed at 2x input, the rest at 1.25x)
 * - `outputTokens` every generated token, including reasoning/thinking
 * - `reasoningTokens` the part of `outputTokens` spent reasoning (when the protocol reports it)
 */
import type {EventSourceMessage} from 'eventsource-parser'
import {createParser} from 'eventsource-parser'

import type {StringTemplate} from '../../../protocols/sse-template.js'
import {ChunkText, learnTemplate, templateString} from '../../../protocols/sse-template.js'
import {headString, tailObject} from './json-tail.js'

export interface Usage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  /** The part of `cacheCreationTokens` kept one hour (Messages, DashScope's chat breakdown; absent elsewhere). */
  cache1hTokens?: number
  reasoningTokens: number
  /**
   * The id the answer body gives the response, when the agent records that instead of the
   * request-id header (Responses: `resp_…`, Codex's `response_id`); the log row keys on it.
   */
  responseId?: string
  /**
   * Responses streams: the names of the plain `function_call` items the answer made (no
   * `namespace`), at most 16: a server that took Codex's custom tools and answered one as a
   * function is found by them (../plain-tools.ts `calledAsFunction`).
   */
  functionCalls?: string[]
}

/**
 * What a chat stream lacked of OpenAI's format (../tool-index.ts): a delta without its
 * `index`, which clients reassemble calls by (`unindexed`); a call opened without a string `id`
 * (`idless: 'id'`, a number id too), or else a delta's `role` that is not `"assistant"`
 * (`idless: 'role'`), which AI SDK clients refuse; a finish AI SDK clients read as `unknown` and
 * loop on (`finish`): null when the stream reached `[DONE]` without any (`""` is none), else the
 * vendor's value outside OpenAI's (Z.ai's `sensitive`, vLLM's `abort`).
 */
export interface ToolCallFaults {
  unindexed?: true
  idless?: 'id' | 'role'
  finish?: string | null
}

export interface UsageTap {
  /** Feeds one chunk of the answer body, as sent to the client. */
  feed(chunk: Uint8Array): void
  /** Call once the body ended (or failed). */
  end(): void
  /** The usage read so far, or undefined when the answer carried none. */
  usage(): Usage | undefined
  /** Responses streams: the `sequence_number` an event appended now should carry. */
  nextSequence(): number
  /** After `end()`: what was malformed about the answer (not JSON, broken event data), if anything. */
  malformed(): string | undefined
  /**
   * SSE only, after `end()`: how the stream ended. `complete`: its protocol's terminal event came
   * (`[DONE]`, `message_stop`, `response.completed`/`.incomplete`/`.failed`, a chunk with
   * `finishReason`) or, for chat and Messages, the answer's stop (`Reader.stopped`), or the
   * reader found the answer whole without it (`Reader.missingTerminal`, `append`); `error`: the
   * upstream sent an error event (the client saw it); `truncated`: it ended cleanly without
   * either.
   */
  outcome(): StreamOutcome
  /**
   * Chat streams, after `end()`: what their tool calls (or their finish) lacked of OpenAI's
   * format; undefined when nothing. Apart from the usage: a client that refuses such a delta
   * closes the stream there, before the usage comes.
   */
  toolCallFaults(): ToolCallFaults | undefined
}

/**
 * `append`: a complete stream's terminal event its upstream left out (Reader.missingTerminal),
 * for the relay to send the client.
 */
export type StreamOutcome =
  | {kind: 'complete'; append?: string}
  | {kind: 'error'; message: string}
  | {kind: 'truncated'; expected: string}

export type Json = Record<string, unknown>

export const num = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : 0
export const obj = (value: unknown): Json | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : undefined

/** Largest JSON answer the tap collects to read usage from (bigger answers are passed on untapped). */
export const MAX_TAPPED_JSON_BYTES = 16 * 1024 * 1024

/** Protocol-specific part of a tap: what to do with each JSON payload (SSE event data or whole body). */
export interface Reader {
  onPayload(payload: Json, event: string | undefined): void
  usage(): Usage | undefined
  lastSequence?: number
  /** Set by the reader when its protocol's terminal event was seen. */
  terminal?: boolean
  /**
   * Chat and Messages: set by the reader when the answer's stop came (a `finish_reason` that is
   * not `""`, a `stop_reason` in `message_delta`): a stream that ends cleanly after it is whole without its
   * terminal event (servers that leave `[DONE]` out, a relay that drops `message_stop`), as the
   * official SDKs read it.
   */
  stopped?: boolean
  /**
   * SSE, optional: the terminal event a stream that ended cleanly without one lacked, when its
   * answer is nonetheless whole (Gemini's thought-only answer, which ends without
   * `finishReason`); the stream is then complete and the event is appended for the client.
   */
  missingTerminal?(): string | undefined
  /** Set by the reader to the message of an error event the upstream sent in the stream. */
  streamError?: string
  /** Chat: what the reader read as `UsageTap.toolCallFaults` tells it (after the stream's end). */
  readonly toolCallFaults?: ToolCallFaults
  /** The terminal event's name, for the log row of a stream that ended without it. */
  readonly terminalName: string
  /**
   * SSE, optional: the key of the one string a payload just read meant to the reader (a text
   * delta), when nothing else in it did. The tap then reads the events after it that differ from
   * it only in that string without a parse (protocols/sse-template.ts) and hands each string to
   * `onTemplate`.
   */
  templateKey?(payload: Json): string | undefined
  /**
   * SSE, optional: a top-level string member that differs on every event and means nothing to the
   * reader (OpenAI's `obfuscation` padding), ignored when an event is matched to the template.
   */
  readonly templateIgnore?: string
  onTemplate?(text: string): void
  /**
   * JSON answers, optional: the top-level member that holds the usage (its key as JSON bytes,
   * quotes included), read from the answer's tail alone (json-tail.ts) and handed to
   * `onJsonUsage`, with the top-level string member `headKey` when the reader names one (read
   * from the answer's first members). Whatever the tail or head cannot tell, the whole answer is
   * parsed and goes to `onPayload`, as without these.
   */
  readonly usageKey?: Buffer
  readonly headKey?: string
  onJsonUsage?(usage: Json, head: string | undefined): void
}

/**
 * The message of an error payload (`{error:{message}}`, `{type:"error",message}`), else a
 * placeholder, led by its code when it has one (`provider_stream_error: …`): the log row keeps
 * what the client was told, code included.
 */
export function errorMessage(payload: Json): string {
  const error = obj(payload.error)
  const message = error?.message ?? payload.message
  const text = typeof message === 'string' && message !== '' ? message : 'an error event without a message'
  const code = [error?.code, payload.code, error?.status, error?.type].find(
    (c): c is string => typeof c === 'string' && c !== '' && c !== 'error',
  )
  return code ? `${code}: ${text}` : text
}

/**
 * The usage of a stream that broke with an error event before its usage came: the output tokens
 * that did stream, counted one per content delta (how these protocols stream text), the input
 * unknown (0). Undefined when nothing streamed.
 */
export function streamedUsage(deltas: number): Usage | undefined {
  if (deltas === 0) return undefined
  return {
    inputTokens: 0,
    outputTokens: deltas,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    reasoningTokens: 0,
  }
}

/**
 * `usage` with the counts of `billed` added: an answer the client never saw but the upstream
 * billed (Gemini's empty answer, sent again or fallen back from) counts on the request's row.
 * `usage`'s response id and function calls stay (the row keys on the answer the client saw).
 */
export function addBilled(usage: Usage | null, billed: Usage): Usage {
  if (!usage) {
    const {responseId: _, functionCalls: __, ...counts} = billed
    return counts
  }
  const sum: Usage = {
    ...usage,
    inputTokens: usage.inputTokens + billed.inputTokens,
    outputTokens: usage.outputTokens + billed.outputTokens,
    cacheReadTokens: usage.cacheReadTokens + billed.cacheReadTokens,
    cacheCreationTokens: usage.cacheCreationTokens + billed.cacheCreationTokens,
    reasoningTokens: usage.reasoningTokens + billed.reasoningTokens,
  }
  if (usage.cache1hTokens !== undefined || billed.cache1hTokens !== undefined)
    sum.cache1hTokens = (usage.cache1hTokens ?? 0) + (billed.cache1hTokens ?? 0)
  return sum
}

export class Tap implements UsageTap {
  private readonly parser
  /** SSE only: a JSON answer is collected as bytes and decoded once. */
  private readonly text: ChunkText | undefined
  private readonly chunks: Uint8Array[] = []
  private size = 0
  private badEvents = 0
  private badBody: string | undefined
  /** SSE: the last event the reader's `templateKey` named a string of (see Reader). */
  private template: StringTemplate | undefined

  constructor(
    private readonly reader: Reader,
    private readonly sse: boolean,
  ) {
    this.parser = sse
      ? createParser({
          onEvent: (message: EventSourceMessage) => {
            const reader = this.reader
            if (this.template) {
              const text = templateString(this.template, message.data)
              if (text !== undefined) {
                reader.onTemplate!(text)
                return
              }
            }
            if (!message.data || message.data[0] !== '{') {
              // chat's terminal event is not JSON
              if (message.data === '[DONE]') this.reader.terminal = true
              return
            }
            let payload: unknown
            try {
              payload = JSON.parse(message.data)
            } catch {
              this.badEvents++
              return
            }
            const p = obj(payload)
            if (!p) return
            reader.onPayload(p, message.event)
            if (reader.templateKey) {
              const key = reader.templateKey(p)
              this.template =
                key === undefined ? undefined : learnTemplate(message.data, key, reader.templateIgnore)
            }
          },
        })
      : undefined
    this.text = sse ? new ChunkText() : undefined
  }

  feed(chunk: Uint8Array): void {
    if (this.parser) {
      this.parser.feed(this.text!.push(chunk))
      return
    }
    this.size += chunk.length
    if (this.size <= MAX_TAPPED_JSON_BYTES) this.chunks.push(chunk)
  }

  end(): void {
    if (this.parser) {
      this.parser.feed(this.text!.end())
      // a last event without its blank line still counts (the stream ended anyway)
      this.parser.feed('\n\n')
      return
    }
    if (this.size === 0) {
      this.badBody = 'an empty body instead of JSON'
      return
    }
    if (this.size > MAX_TAPPED_JSON_BYTES) return
    // one chunk (the usual small answer): no copy
    const only = this.chunks.length === 1 ? this.chunks[0] : undefined
    const body = only
      ? Buffer.from(only.buffer, only.byteOffset, only.byteLength)
      : Buffer.concat(this.chunks)
    this.chunks.length = 0
    const reader = this.reader
    if (reader.usageKey) {
      // the usage from the answer's tail, without decoding and parsing the whole answer
      const head = reader.headKey === undefined ? undefined : headString(body, reader.headKey)
      const usage =
        reader.headKey === undefined || head !== undefined ? tailObject(body, reader.usageKey) : undefined
      if (usage) {
        reader.onJsonUsage!(usage, head)
        return
      }
    }
    try {
      const p = obj(JSON.parse(body.toString('utf8')))
      if (p) this.reader.onPayload(p, undefined)
    } catch (error) {
      // not JSON: no usage, and the log row says so
      this.badBody = `malformed JSON (${(error as Error).message})`
    }
  }

  malformed(): string | undefined {
    if (this.badBody) return this.badBody
    return this.badEvents > 0
      ? `${this.badEvents} stream event${this.badEvents === 1 ? '' : 's'} of malformed JSON`
      : undefined
  }

  usage(): Usage | undefined {
    return this.reader.usage()
  }

  outcome(): StreamOutcome {
    const reader = this.reader
    if (reader.streamError !== undefined) return {kind: 'error', message: reader.streamError}
    if (reader.terminal || reader.stopped) return {kind: 'complete'}
    const append = reader.missingTerminal?.()
    if (append !== undefined) return {kind: 'complete', append}
    return {kind: 'truncated', expected: reader.terminalName}
  }

  toolCallFaults(): ToolCallFaults | undefined {
    return this.reader.toolCallFaults
  }

  nextSequence(): number {
    return this.reader.lastSequence === undefined ? 0 : this.reader.lastSequence + 1
  }
}
