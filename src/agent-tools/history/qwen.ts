/**
 * Qwen Code chat recordings (`<runtime dir>/projects/<sanitized cwd>/chats/<sessionId>.jsonl`, see
 * `qwenHome`), written by its `ChatRecordingService`: one JSON record a line, each with `uuid`,
 * `sessionId`, `timestamp`, `type` and `cwd`.
 *
 * Two records carry the usage of a model call (verified on 0.24.4, docs/AGENT-CLIS.md):
 * - `type:"system"`, `subtype:"ui_telemetry"` with `systemPayload.uiEvent["event.name"] =
 *   "qwen-code.api_response"`: one per API call, with `response_id` (the chat completion's
 *   `id`), `model`, `input_token_count` (every prompt token, cached ones included),
 *   `cached_content_token_count`, `output_token_count`, `thoughts_token_count`. Written just
 *   before the assistant record of the same call.
 * - `type:"assistant"` with Gemini-style `usageMetadata` (`promptTokenCount` includes
 *   `cachedContentTokenCount`).
 * Output and reasoning: its OpenAI and Anthropic converters put the whole completion (reasoning
 * included) in `candidatesTokenCount` and the reasoning part, reported or estimated from the
 * text, in `thoughtsTokenCount`; its Gemini one keeps Gemini's split (candidates exclude
 * thoughts). The total tells them apart: when it is prompt + candidates + thoughts, thoughts
 * come on top of the candidates; otherwise they are a part of them.
 * A file that holds telemetry records is read from those (each is one request, with its id);
 * the assistant records of such a file are the same calls again and are not counted. A file of a
 * version that wrote no telemetry is read from its assistant records, keyed by their `uuid`.
 * Whether the file has telemetry is kept in the parser state, so an incremental scan decides as a
 * whole read does (the first telemetry record comes before the first assistant record).
 *
 * Rows carry no request id: the gateway logs the `x-request-id` of a chat answer, not its body
 * `id`, so `usage reconcile` matches Qwen Code rows by time and model, as Gemini CLI's.
 */
import type {FileContext, LineParser, SkipReason} from './types.js'
import type {HistoryRecord} from '../../store/history-rows.js'
import {holdsOneOf, num, obj, parseTime, str} from './types.js'

export interface QwenState {
  /** The file has `qwen-code.api_response` telemetry: assistant records are not counted. */
  telemetry: boolean
}

const HOLDS = holdsOneOf(['qwen-code.api_response', '"usageMetadata"'])

function record(
  file: FileContext,
  key: string,
  m: Record<string, unknown>,
  model: string | null,
  prompt: number,
  cached: number,
  candidates: number,
  thoughts: number,
  total: number,
): HistoryRecord | SkipReason {
  const time = typeof m.timestamp === 'string' ? parseTime(m.timestamp) : Number.NaN
  if (!Number.isFinite(time)) return 'invalid-field'
  const cacheRead = Math.min(prompt, cached)
  const inputTokens = prompt - cacheRead
  const apart = thoughts > 0 && total === prompt + candidates + thoughts
  const output = apart ? candidates + thoughts : candidates
  const reasoning = apart ? thoughts : Math.min(thoughts, candidates)
  if (inputTokens + cacheRead + output === 0) return 'zero-usage'
  return {
    key,
    tool: 'qwen-code',
    time,
    model,
    session: str(m.sessionId),
    project: str(m.cwd) ?? file.project,
    requestId: null,
    inputTokens,
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheCreationTokens: 0,
    cache5mTokens: 0,
    cache1hTokens: 0,
    reasoningTokens: reasoning,
    totalTokens: inputTokens + cacheRead + output,
    sidechain: false,
    messageId: null,
  }
}

export function qwenParser(file: FileContext, saved?: unknown): LineParser {
  const s: QwenState = {telemetry: false}
  Object.assign(s, obj(saved) ?? {})
  return {
    holds: HOLDS,
    state: () => s,
    line(text: string): HistoryRecord | SkipReason {
      let m: Record<string, unknown>
      try {
        m = JSON.parse(text) as Record<string, unknown>
      } catch {
        return 'invalid-json'
      }
      if (m.type === 'system') {
        const e = obj(obj(m.systemPayload)?.uiEvent)
        if (!e || e['event.name'] !== 'qwen-code.api_response') return 'no-usage'
        s.telemetry = true
        const id = str(e.response_id) ?? str(m.uuid)
        if (!id) return 'invalid-field'
        return record(
          file,
          `q:${str(m.sessionId) ?? file.keyPath}:${id}`,
          m,
          str(e.model),
          num(e.input_token_count),
          num(e.cached_content_token_count),
          num(e.output_token_count),
          num(e.thoughts_token_count),
          num(e.total_token_count),
        )
      }
      const u = obj(m.usageMetadata)
      if (m.type !== 'assistant' || !u) return 'no-usage'
      if (s.telemetry) return 'duplicate'
      const id = str(m.uuid)
      if (!id) return 'invalid-field'
      return record(
        file,
        `q:${str(m.sessionId) ?? file.keyPath}:${id}`,
        m,
        str(m.model),
        num(u.promptTokenCount),
        num(u.cachedContentTokenCount),
        num(u.candidatesTokenCount),
        num(u.thoughtsTokenCount),
        num(u.totalTokenCount),
      )
    },
  }
}
