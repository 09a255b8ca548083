import type {Json, Reader, Usage} from './tap.js'
import {errorMessage, obj, streamedUsage} from './tap.js'

const USAGE_KEY = Buffer.from('"usage"')

/**
 * Messages: `message_start.message.usage`, then each `message_delta.usage` overwrites the
 * counters it carries (they are cumulative: never add them up). `input_tokens` excludes cache tokens.
 * `cache_creation.ephemeral_1h_input_tokens` is the part of `cache_creation_input_tokens` written
 * to the 1-hour cache (`message_delta` usually leaves the breakdown out: the start's stands).
 */
export class MessagesReader implements Reader {
  private counters?: {
    input: number
    cacheRead: number
    cacheCreation: number
    cache1h: number
    output: number
    thinking: number
  }
  private apply(usage: Json, reset: boolean): void {
    const c =
      reset || !this.counters
        ? {input: 0, cacheRead: 0, cacheCreation: 0, cache1h: 0, output: 0, thinking: 0}
        : this.counters
    const set = (key: keyof typeof c, value: unknown): void => {
      if (typeof value === 'number') c[key] = value
    }
    set('input', usage.input_tokens)
    set('cacheRead', usage.cache_read_input_tokens)
    set('cacheCreation', usage.cache_creation_input_tokens)
    set('cache1h', obj(usage.cache_creation)?.ephemeral_1h_input_tokens)
    set('output', usage.output_tokens)
    set('thinking', obj(usage.output_tokens_details)?.thinking_tokens)
    this.counters = c
  }
  /** Content deltas streamed (the output of a stream that broke before its final usage). */
  private deltas = 0
  terminal?: boolean
  stopped?: boolean
  streamError?: string
  readonly terminalName = 'message_stop'
  /** A JSON answer's usage counts when the answer is a `message` (its `type`, the second member). */
  readonly usageKey = USAGE_KEY
  readonly headKey = 'type'
  onJsonUsage(usage: Json, type: string | undefined): void {
    if (type === 'message') this.apply(usage, true)
  }
  onPayload(payload: Json): void {
    if (payload.type === 'content_block_delta') this.deltas++
    else if (payload.type === 'message_stop') this.terminal = true
    else if (payload.type === 'error') this.streamError ??= errorMessage(payload)
    else if (payload.type === 'message_start') {
      const usage = obj(obj(payload.message)?.usage)
      if (usage) this.apply(usage, true)
    } else if (payload.type === 'message_delta') {
      const usage = obj(payload.usage)
      if (usage) this.apply(usage, false)
      const stop = obj(payload.delta)?.stop_reason
      if (stop !== undefined && stop !== null) this.stopped = true
    } else if (payload.type === 'message') {
      const usage = obj(payload.usage)
      if (usage) this.apply(usage, true)
    }
  }
  usage(): Usage | undefined {
    const c = this.counters
    if (!c) return this.streamError === undefined ? undefined : streamedUsage(this.deltas)
    return {
      inputTokens: c.input + c.cacheRead + c.cacheCreation,
      // message_start says 1 output token; a stream broken before its message_delta streamed more
      outputTokens: this.streamError === undefined ? c.output : Math.max(c.output, this.deltas),
      cacheReadTokens: c.cacheRead,
      cacheCreationTokens: c.cacheCreation,
      // a part of the writes, never more than them
      cache1hTokens: Math.min(c.cache1h, c.cacheCreation),
      // `output_tokens_details.thinking_tokens`: a part of the output, never more than it
      reasoningTokens: Math.min(c.thinking, c.output),
    }
  }
}
