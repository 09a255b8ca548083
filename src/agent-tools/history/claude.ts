/**
 * Claude Code session logs (`projects/<encoded-cwd>/<session>.jsonl`, sub-agents under
 * `<session>/subagents/`), read by ccusage's rules (../shared/PROTOCOLS.md A6) with two fixes:
 * lines sharing a `message.id` without a `requestId` are content blocks of one response and count
 * once, and cache writes come from `cache_creation_input_tokens` (the billed total), not from the
 * TTL breakdown, which Claude Code writes as zeros when the server sends none.
 */
import type {FileContext, LineParser, SkipReason} from './types.js'
import type {HistoryRecord} from '../../store/history-rows.js'
import {num, obj, parseTime, str} from './types.js'

const SEMVER = /^\d+\.\d+\.\d+/
/**
 * Whether the line holds a usage object (`"usage":{` or `"usage": {`): only such lines are
 * parsed. A regular expression: V8 skips through the line for it, 2-3 times faster than a loop of
 * `indexOf('"usage":')` (and a string's `lastIndexOf` is a plain loop, slower still).
 */
const USAGE = /"usage": ?\{/
const holdsUsage = (line: string): boolean => USAGE.test(line)

export function claudeParser(file: FileContext): LineParser {
  return {
    holds: holdsUsage,
    state: () => null,
    line(text: string, offset: number): HistoryRecord | SkipReason {
      let line: Record<string, unknown>
      try {
        line = JSON.parse(text) as Record<string, unknown>
      } catch {
        return 'invalid-json'
      }
      const message = obj(line.message)
      const usage = obj(message?.usage)
      if (!message || !usage) return 'no-usage'
      // written by Claude Code itself for a local error or an interruption: no API call, no request
      if (message.model === '<synthetic>') return 'synthetic'
      // Fields that, present as `null` (or an empty id), make ccusage drop the line.
      if (
        line.requestId === null ||
        line.sessionId === null ||
        line.version === null ||
        line.costUSD === null ||
        line.cwd === null ||
        line.isApiErrorMessage === null ||
        line.sessionId === '' ||
        line.requestId === ''
      )
        return 'invalid-field'
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
      const time = typeof line.timestamp === 'string' ? parseTime(line.timestamp) : Number.NaN
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
      if (model && usage.speed === 'fast') model += '-fast'
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
        // Anthropic's `output_tokens_details.thinking_tokens` (Claude Code 2.1.3xx keeps it): a
        // part of the output, never more than it
        reasoningTokens: Math.min(num(obj(usage.output_tokens_details)?.thinking_tokens), outputTokens),
        totalTokens: inputTokens + outputTokens + cacheReadTokens + cacheCreationTokens,
        sidechain: line.isSidechain === true,
        messageId,
      }
    },
  }
}
