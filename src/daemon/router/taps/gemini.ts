import {answerPart, thoughtOnlyUsage, thoughtPart} from '../../../protocols/gemini-thoughts.js'
import type {Json, Reader, Usage} from './tap.js'
import {errorMessage, num, obj, streamedUsage} from './tap.js'

const USAGE_KEY = Buffer.from('"usageMetadata"')

/** Gemini: the last `usageMetadata` wins. `promptTokenCount` includes cached tokens; thoughts are separate from candidates. */
export class GeminiReader implements Reader {
  private last?: Json
  /** Chunks that streamed text (the usage of a stream that broke before any usageMetadata). */
  private deltas = 0
  /** A part that answers (text, a call) came: the stream is no thought-only answer. */
  private answered = false
  /**
   * The chunk of the last usage had a thought part: Gemini 2.5 counts thoughts on each thought
   * chunk, so a thought-only usage there is no ending (see thoughtOnlyUsage). Tracked only while
   * nothing answered (an answer rules the thought-only ending out anyway).
   */
  private usageOnThought = false
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
    let thought = false
    if (Array.isArray(candidates))
      for (const candidate of candidates) {
        if (typeof obj(candidate)?.finishReason === 'string') this.terminal = true
        const parts = obj(obj(candidate)?.content)?.parts
        if (Array.isArray(parts) && parts.length > 0) {
          this.deltas++
          if (!this.answered)
            for (const part of parts)
              if (answerPart(part)) this.answered = true
              else if (thoughtPart(part)) thought = true
        }
      }
    const usage = obj(payload.usageMetadata)
    if (usage) {
      this.last = usage
      this.usageOnThought = thought
    }
  }
  /**
   * Google's thought-only answer ends without `finishReason` (protocols/gemini-parts.ts
   * `thoughtOnlyUsage`: the last usage one of thoughts only, on a chunk without a thought or an
   * answer part): whole, the chunk Gemini would have ended it with, STOP and the last usage.
   * Gemini CLI reads it as its thought-only answer and retries with its nudge
   * (THINKING_ONLY_RESPONSE) instead of a blind retry (NO_FINISH_REASON); see docs/TRANSLATION.md.
   */
  missingTerminal(): string | undefined {
    if (
      this.answered ||
      this.usageOnThought ||
      this.streamError !== undefined ||
      !thoughtOnlyUsage(this.last)
    )
      return undefined
    return `data: ${JSON.stringify({
      candidates: [{content: {role: 'model', parts: []}, finishReason: 'STOP', index: 0}],
      usageMetadata: this.last,
    })}\n\n`
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
