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
import type {Picked, Picker} from './pick.js'
import {picker} from './pick.js'
import type {FileContext, HistoryRecord, LineParser, SkipReason} from './types.js'
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

/** The keys of a token usage object, in the order `totals` reads them. */
const TOTALS = [
  'input_tokens',
  'cached_input_tokens',
  'cache_read_input_tokens',
  'output_tokens',
  'reasoning_output_tokens',
  'total_tokens',
] as const

/** Every key `line` reads, in the order it destructures them (see pick.ts). */
const KEYS = [
  'type',
  'timestamp',
  [
    'payload',
    [
      'type',
      'id',
      'cwd',
      'timestamp',
      'model',
      'response_id',
      ['source', [['subagent', [['thread_spawn', []]]]]],
      ['info', ['model', ['total_token_usage', TOTALS], ['last_token_usage', TOTALS]]],
    ],
  ],
] as const
let pick: Picker | undefined

function totals(v: unknown): Totals | null {
  if (!v) return null
  const [input, cached, cacheRead, output, reasoning, total] = v as Picked
  return {
    input: num(input),
    cached: num(cached ?? cacheRead),
    output: num(output),
    reasoning: num(reasoning),
    total: num(total),
  }
}

const same = (a: Totals, b: Totals) =>
  a.input === b.input && a.cached === b.cached && a.output === b.output && a.total === b.total

/** A line holding none of these is not counted (searched from the start: they are the line's `type`). */
const HOLDS = holdsOneOf(['"token_count"', '"turn_context"', '"session_meta"', '"token_usage_record"'])

export function codexParser(file: FileContext, saved?: unknown): LineParser {
  const s: CodexState = {model: null, session: null, cwd: null, prevTotal: null, responseId: null}
  Object.assign(s, obj(saved) ?? {})
  pick ??= picker(KEYS)
  const pickLine = pick
  return {
    holds: HOLDS,
    state: () => s,
    line(text: string, offset: number): HistoryRecord | SkipReason {
      const line = pickLine(text)
      if (line === undefined) return 'invalid-json'
      const [type, timestamp, payload] = line
      if (!payload) return 'no-usage'
      const [payloadType, id, cwd, payloadTimestamp, payloadModel, responseId, source, info] =
        payload as Picked
      if (type === 'session_meta') {
        s.session = str(id) ?? s.session
        s.cwd = str(cwd) ?? s.cwd
        const [subagent] = (source as Picked | undefined) ?? []
        const [spawn] = (subagent as Picked | undefined) ?? []
        if (spawn) {
          const at = Date.parse(String(payloadTimestamp ?? timestamp))
          s.spawnedAt = Number.isFinite(at) ? at : null
        }
        return 'no-usage'
      }
      if (type === 'turn_context') {
        s.model = str(payloadModel) ?? s.model
        s.cwd = str(cwd) ?? s.cwd
        return 'no-usage'
      }
      if (type === 'token_usage_record') {
        s.responseId = str(responseId)
        return 'no-usage'
      }
      if (type !== 'event_msg' || payloadType !== 'token_count') return 'no-usage'
      if (!info) return 'no-usage'
      const [infoModel, totalUsage, lastUsage] = info as Picked
      const time = typeof timestamp === 'string' ? parseTime(timestamp) : Number.NaN
      if (!Number.isFinite(time)) return 'invalid-field'
      if (typeof s.spawnedAt === 'number' && time - s.spawnedAt < REPLAY_WINDOW_MS) {
        s.responseId = null
        return 'replay'
      }
      const total = totals(totalUsage)
      if (total && s.prevTotal && same(total, s.prevTotal)) return 'duplicate'
      let used = totals(lastUsage)
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
      const model = str(infoModel) ?? str(payloadModel) ?? s.model ?? CODEX_FALLBACK_MODEL
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
