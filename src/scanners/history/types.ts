/**
 * What the history scanners produce: one row per model response an agent recorded in its own
 * session log, with the same column meanings as the gateway's log (see
 * `src/daemon/router/taps/tap.ts`): `inputTokens` is input not read from cache, `outputTokens`
 * every generated token including reasoning, `reasoningTokens` the part of it spent reasoning.
 */
import type {AgentTool} from '../agent-homes.js'

export interface HistoryRecord {
  /** Dedup key: a rescan or a second copy of the same response maps to the same key. */
  key: string
  tool: AgentTool
  /** UTC, Unix milliseconds. */
  time: number
  model: string | null
  session: string | null
  /** The agent's working folder (Claude Code, Codex) or project folder name (Gemini CLI). */
  project: string | null
  /** The upstream request/response id the file holds (Claude `requestId`, Codex `response_id`). */
  requestId: string | null
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  /** Claude's TTL breakdown of cache writes, kept apart (not used for totals). */
  cache5mTokens: number
  cache1hTokens: number
  reasoningTokens: number
  totalTokens: number
  /** Claude: the line came from a sidechain (sub-agent or `/btw`). */
  sidechain: boolean
  /** Claude `message.id`, for the `/btw` replay rule. */
  messageId: string | null
}

/** Why a line was not counted. */
export type SkipReason =
  | 'no-usage'
  | 'invalid-json'
  | 'invalid-field'
  | 'zero-usage'
  | 'duplicate'
  /** Claude `/btw` sidechain replays; Codex parent token_counts replayed into a spawned sub-agent. */
  | 'replay'

/** A line parser for one file; `state` survives between incremental scans (JSON). */
export interface LineParser {
  /** Parses one complete line that starts at byte `offset` and that `holds` says yes to. */
  line(text: string, offset: number): HistoryRecord | SkipReason
  /** State to persist with the file's cursor. */
  state(): unknown
  /**
   * Whether a line can make a record: a line for which this is false is `no-usage` and never
   * parsed (most lines of a history file carry a message text); `line` is given only lines for
   * which it is true, and checks nothing of it again. The markers are ASCII, and an ASCII byte
   * decodes to itself even beside invalid UTF-8: searching the text is searching the bytes.
   */
  holds(line: string): boolean
}

/**
 * A `holds` for lines that count only when they hold one of `markers`: one regular expression
 * (V8 skips through a line for an alternation of literals, 4-5 times faster than four `includes`
 * on a Codex line that holds none).
 */
export function holdsOneOf(markers: readonly string[]): (line: string) => boolean {
  const any = new RegExp(markers.map((m) => m.replaceAll(/[$()*+.?[\\\]^{|}]/g, '\\$&')).join('|'))
  return (line) => any.test(line)
}

/** What a parser knows about its file. */
export interface FileContext {
  path: string
  /** A key prefix that identifies the file's content wherever it lives (Codex archive copies). */
  keyPath: string
  /** Gemini: the project folder name. */
  project: string | null
}

export const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0)
export const obj = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined
export const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null)

/** The number the `n` characters of `s` from `at` spell, or -1 if one is not a digit. */
function digits(s: string, at: number, n: number): number {
  let v = 0
  for (let i = at; i < at + n; i++) {
    const c = s.charCodeAt(i) - 48
    if (c < 0 || c > 9) return -1
    v = v * 10 + c
  }
  return v
}

/**
 * `Date.parse(s)`, with the form every agent writes (`2025-08-01T12:34:56.789Z`) read by hand:
 * `Date.parse` is a tenth of a history line's cost. Only plain values take the short way (year
 * 1000 or later, day 1-28, hour 0-23, minute and second 0-59), where `Date.UTC` gives exactly
 * what `Date.parse` does; any other string or value is left to `Date.parse`.
 */
export function parseTime(s: string): number {
  if (
    s.length === 24 &&
    s.charCodeAt(4) === 45 &&
    s.charCodeAt(7) === 45 &&
    s.charCodeAt(10) === 84 &&
    s.charCodeAt(13) === 58 &&
    s.charCodeAt(16) === 58 &&
    s.charCodeAt(19) === 46 &&
    s.charCodeAt(23) === 90
  ) {
    const y = digits(s, 0, 4)
    const mo = digits(s, 5, 2)
    const d = digits(s, 8, 2)
    const h = digits(s, 11, 2)
    const mi = digits(s, 14, 2)
    const se = digits(s, 17, 2)
    const ms = digits(s, 20, 3)
    if (y >= 1000 && mo >= 1 && mo <= 12 && d >= 1 && d <= 28 && h >= 0 && h <= 23 && mi >= 0 && mi <= 59)
      if (se >= 0 && se <= 59 && ms >= 0) return Date.UTC(y, mo - 1, d, h, mi, se, ms)
  }
  return Date.parse(s)
}

/** Counts `n` skipped lines (or rows) under `reason`. */
export const bump = (
  stats: {skipped: Partial<Record<SkipReason, number>>},
  reason: SkipReason,
  n = 1,
): void => {
  if (n > 0) stats.skipped[reason] = (stats.skipped[reason] ?? 0) + n
}
