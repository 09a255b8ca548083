/**
 * Claude Code session logs (`projects/<encoded-cwd>/<session>.jsonl`, sub-agents under
 * `<session>/subagents/`), read by ccusage's rules (../shared/PROTOCOLS.md A6) with two fixes:
 * lines sharing a `message.id` without a `requestId` are content blocks of one response and count
 * once, and cache writes come from `cache_creation_input_tokens` (the billed total), not from the
 * TTL breakdown, which Claude Code writes as zeros when the server sends none.
 */
import type {FileContext, HistoryRecord, LineParser, SkipReason} from './types.js'
import {markerBytes, num, obj, str} from './types.js'

const SEMVER = /^\d+\.\d+\.\d+/
/** Fields that, when present as `null`, make ccusage drop the line. */
const NOT_NULL = ['requestId', 'sessionId', 'version', 'costUSD', 'cwd', 'isApiErrorMessage'] as const
const NOT_EMPTY = ['sessionId', 'requestId'] as const

/**
 * The line reader decodes only lines holding this (on the raw bytes; `line` checks the exact
 * markers): one search covers both spellings below.
 */
const MARKERS = markerBytes('"usage":')

export function claudeParser(file: FileContext): LineParser {
  return {
    markers: MARKERS,
    state: () => null,
    line(text: string, offset: number): HistoryRecord | SkipReason {
      if (!text.includes('"usage":{') && !text.includes('"usage": {')) return 'no-usage'
      let line: Record<string, unknown>
      try {
        line = JSON.parse(text) as Record<string, unknown>
      } catch {
        return 'invalid-json'
      }
      const message = obj(line.message)
      const usage = obj(message?.usage)
      if (!message || !usage) return 'no-usage'
      for (const k of NOT_NULL) if (line[k] === null) return 'invalid-field'
      for (const k of NOT_EMPTY) if (line[k] === '') return 'invalid-field'
      if (message.id === null || message.id === '' || message.model === null || message.model === '')
        return 'invalid-field'
      if (
        usage.speed === null ||
        usage.cache_creation_input_tokens === null ||
        usage.cache_read_input_tokens === null
      )
        return 'invalid-field'
      if (line.version !== undefined && !(typeof line.version === 'string' && SEMVER.test(line.version)))
        return 'invalid-field'
      if (typeof usage.input_tokens !== 'number' || typeof usage.output_tokens !== 'number')
        return 'invalid-field'
      const time = typeof line.timestamp === 'string' ? Date.parse(line.timestamp) : Number.NaN
      if (!Number.isFinite(time)) return 'invalid-field'

      const breakdown = obj(usage.cache_creation)
      const cache5m = num(breakdown?.ephemeral_5m_input_tokens)
      const cache1h = num(breakdown?.ephemeral_1h_input_tokens)
      const inputTokens = num(usage.input_tokens)
      const outputTokens = num(usage.output_tokens)
      const cacheReadTokens = num(usage.cache_read_input_tokens)
      const cacheCreationTokens =
        typeof usage.cache_creation_input_tokens === 'number'
          ? num(usage.cache_creation_input_tokens)
          : cache5m + cache1h
      let model = str(message.model)
      if (model === '<synthetic>') model = null
      else if (model && usage.speed === 'fast') model += '-fast'
      const messageId = str(message.id)
      const requestId = str(line.requestId)
      return {
        key: messageId ? `c:${messageId}:${requestId ?? ''}` : `c:${file.keyPath}:${offset}`,
        tool: 'claude-code',
        time,
        model,
        session: str(line.sessionId),
        project: str(line.cwd),
        requestId,
        inputTokens,
        outputTokens,
        cacheReadTokens,
        cacheCreationTokens,
        cache5mTokens: cache5m,
        cache1hTokens: cache1h,
        reasoningTokens: 0,
        totalTokens: inputTokens + outputTokens + cacheReadTokens + cacheCreationTokens,
        sidechain: line.isSidechain === true,
        messageId,
      }
    },
  }
}
