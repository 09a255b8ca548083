import type {Json, Reader, Usage} from './tap.js'
import {num, obj} from './tap.js'

/** Gemini: the last `usageMetadata` wins. `promptTokenCount` includes cached tokens; thoughts are separate from candidates. */
export class GeminiReader implements Reader {
  private last?: Json
  onPayload(payload: Json): void {
    const usage = obj(payload.usageMetadata)
    if (usage) this.last = usage
  }
  usage(): Usage | undefined {
    const u = this.last
    if (!u) return undefined
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
