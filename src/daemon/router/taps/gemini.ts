import type {Json, Reader, Usage} from './tap.js'
import {errorMessage, num, obj, streamedUsage} from './tap.js'

const USAGE_KEY = Buffer.from('"usageMetadata"')

/** Gemini: the last `usageMetadata` wins. `promptTokenCount` includes cached tokens; thoughts are separate from candidates. */
export class GeminiReader implements Reader {
  private last?: Json
  /** Chunks that streamed text (the usage of a stream that broke before any usageMetadata). */
  private deltas = 0
  terminal?: boolean
  streamError?: string
  readonly terminalName = 'a chunk with finishReason'
  readonly usageKey = USAGE_KEY
  onJsonUsage(usage: Json): void {
    this.last = usage
  }
  onPayload(payload: Json): void {
    if (payload.error !== undefined && payload.error !== null) this.streamError ??= errorMessage(payload)
    const candidates = payload.candidates
    if (Array.isArray(candidates))
      for (const candidate of candidates) {
        if (typeof obj(candidate)?.finishReason === 'string') this.terminal = true
        const parts = obj(obj(candidate)?.content)?.parts
        if (Array.isArray(parts) && parts.length > 0) this.deltas++
      }
    const usage = obj(payload.usageMetadata)
    if (usage) this.last = usage
  }
  usage(): Usage | undefined {
    const u = this.last
    if (!u) return this.streamError === undefined ? undefined : streamedUsage(this.deltas)
    const thoughts = num(u.thoughtsTokenCount)
    return {
      inputTokens: num(u.promptTokenCount) + num(u.toolUsePromptTokenCount),
      outputTokens: num(u.candidatesTokenCount) + thoughts,
      cacheReadTokens: num(u.cachedContentTokenCount),
      cacheCreationTokens: 0,
      reasoningTokens: thoughts,
    }
  }
}
