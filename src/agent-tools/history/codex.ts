/**
 * Codex CLI rollouts (`sessions/YYYY/MM/DD/rollout-*.jsonl`, `archived_sessions/`), by ccusage's
 * rules (../shared/PROTOCOLS.md A6): each `event_msg/token_count` is one response, counted from
 * `last_token_usage`, else the growth of `total_token_usage` (clamped at zero); a token_count that
 * repeats the previous cumulative total is the same response reported again; cached input is part
 * of input and reasoning part of output (clamped). The `token_usage_record` line just before holds
 * the same numbers plus the Responses `response_id`: it lends its id and is not counted itself.
 * A sub-agent rollout (`session_meta.source.subagent.thread_spawn`) starts with its parent's
 * history replayed: token_counts within its first second are the parent's, already counted there.
 */
import type {FileContext, LineParser, SkipReason} from './types.js'
import type {HistoryRecord} from '../../store/history-rows.js'
import {holdsOneOf, num, obj, parseTime, str} from './types.js'

/** Model ccusage assumes when a rollout names none. */
export const CODEX_FALLBACK_MODEL = 'gpt-5'

interface Totals {
  input: number
  cached: number
  output: number
  reasoning: number
  total: number
}

export interface CodexState {
  model: string | null
  session: string | null
  cwd: string | null
  prevTotal: Totals | null
  responseId: string | null
  /** A `thread_spawn` sub-agent rollout: when its session began (Unix ms). */
  spawnedAt?: number | null
}

/** Token counts this soon after a sub-agent's start are its parent's, replayed. */
const REPLAY_WINDOW_MS = 1000

function totals(v: unknown): Totals | null {
  const o = obj(v)
  if (!o) return null
  return {
    input: num(o.input_tokens),
    cached: num(o.cached_input_tokens ?? o.cache_read_input_tokens),
    output: num(o.output_tokens),
    reasoning: num(o.reasoning_output_tokens),
    total: num(o.total_tokens),
  }
}

const same = (a: Totals, b: Totals) =>
  a.input === b.input && a.cached === b.cached && a.output === b.output && a.total === b.total

/** A line holding none of these is not counted (searched from the start: they are the line's `type`). */
const HOLDS = holdsOneOf(['"token_count"', '"turn_context"', '"session_meta"', '"token_usage_record"'])

export function codexParser(file: FileContext, saved?: unknown): LineParser {
  const s: CodexState = {model: null, session: null, cwd: null, prevTotal: null, responseId: null}
  Object.assign(s, obj(saved) ?? {})
  return {
    holds: HOLDS,
    state: () => s,
    line(text: string, offset: number): HistoryRecord | SkipReason {
      let line: Record<string, unknown>
      try {
        line = JSON.parse(text) as Record<string, unknown>
      } catch {
        return 'invalid-json'
      }
      const payload = obj(line.payload)
      if (!payload) return 'no-usage'
      if (line.type === 'session_meta') {
        s.session = str(payload.id) ?? s.session
        s.cwd = str(payload.cwd) ?? s.cwd
        const source = obj(payload.source)
        const spawn = obj(obj(source?.subagent)?.thread_spawn)
        if (spawn) {
          const at = Date.parse(String(payload.timestamp ?? line.timestamp))
          s.spawnedAt = Number.isFinite(at) ? at : null
        }
        return 'no-usage'
      }
      if (line.type === 'turn_context') {
        s.model = str(payload.model) ?? s.model
        s.cwd = str(payload.cwd) ?? s.cwd
        return 'no-usage'
      }
      if (line.type === 'token_usage_record') {
        s.responseId = str(payload.response_id)
        return 'no-usage'
      }
      if (line.type !== 'event_msg' || payload.type !== 'token_count') return 'no-usage'
      const info = obj(payload.info)
      if (!info) return 'no-usage'
      const time = typeof line.timestamp === 'string' ? parseTime(line.timestamp) : Number.NaN
      if (!Number.isFinite(time)) return 'invalid-field'
      if (typeof s.spawnedAt === 'number' && time - s.spawnedAt < REPLAY_WINDOW_MS) {
        s.responseId = null
        return 'replay'
      }
      const total = totals(info.total_token_usage)
      if (total && s.prevTotal && same(total, s.prevTotal)) return 'duplicate'
      let used = totals(info.last_token_usage)
      if (!used && total) {
        const p = s.prevTotal ?? {input: 0, cached: 0, output: 0, reasoning: 0, total: 0}
        used = {
          input: Math.max(0, total.input - p.input),
          cached: Math.max(0, total.cached - p.cached),
          output: Math.max(0, total.output - p.output),
          reasoning: Math.max(0, total.reasoning - p.reasoning),
          total: Math.max(0, total.total - p.total),
        }
      }
      if (total) s.prevTotal = total
      const requestId = s.responseId
      s.responseId = null
      if (!used) return 'no-usage'
      if (used.input === 0 && used.cached === 0 && used.output === 0 && used.reasoning === 0)
        return 'zero-usage'
      const cacheRead = Math.min(used.cached, used.input)
      const output = used.output
      const model = str(info.model) ?? str(payload.model) ?? s.model ?? CODEX_FALLBACK_MODEL
      return {
        key: `x:${file.keyPath}:${offset}`,
        tool: 'codex',
        time,
        model,
        session: s.session,
        project: s.cwd,
        requestId,
        inputTokens: used.input - cacheRead,
        outputTokens: output,
        cacheReadTokens: cacheRead,
        cacheCreationTokens: 0,
        cache5mTokens: 0,
        cache1hTokens: 0,
        reasoningTokens: Math.min(used.reasoning, output),
        totalTokens: used.input + output,
        sidechain: false,
        messageId: null,
      }
    },
  }
}
