/**
 * What the history readers share: why a line was skipped, the per-tool line parser, and the
 * small field readers. The rows they produce (`HistoryRecord`) are the store's, in
 * `src/store/history-rows.ts`.
 */
import type {HistoryRecord} from '../../store/history-rows.js'

/** Why a line was not counted. */
export type SkipReason =
  | 'no-usage'
  | 'invalid-json'
  | 'invalid-field'
  | 'zero-usage'
  /** Claude Code's `<synthetic>` lines (a local error or interruption): no request to any provider. */
  | 'synthetic'
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

/** The number the two characters of `s` from `at` spell, or -1 if one is not a digit. */
function twoDigits(s: string, at: number): number {
  const a = s.charCodeAt(at) - 48
  const b = s.charCodeAt(at + 1) - 48
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1
}

/** Days from 1970-01-01 to the date (proleptic Gregorian; Howard Hinnant's `days_from_civil`). */
function civilDays(y: number, m: number, d: number): number {
  if (m <= 2) y--
  const era = Math.floor(y / 400)
  const yoe = y - era * 400
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1
  return era * 146_097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719_468
}

/**
 * `Date.parse(s)`, with the form every agent writes (`2025-08-01T12:34:56.789Z`) read by hand, in
 * integer arithmetic: `Date.parse` was a tenth of a history line's cost, and `Date.UTC` still
 * 0.1 us a row more. Only plain values take the short way (year 1000 or later, day 1-31, hour
 * 0-23, minute and second 0-59), where the result is exactly what `Date.parse` gives (which, like
 * this, rolls a day past the month's end over: 2025-02-30 is March 2); any other string or value
 * is left to `Date.parse`.
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
    const century = twoDigits(s, 0)
    const year = twoDigits(s, 2)
    const mo = twoDigits(s, 5)
    const d = twoDigits(s, 8)
    const h = twoDigits(s, 11)
    const mi = twoDigits(s, 14)
    const se = twoDigits(s, 17)
    const cs = twoDigits(s, 20)
    const m3 = s.charCodeAt(22) - 48
    const y = century * 100 + year
    if (
      century >= 10 &&
      year >= 0 &&
      mo >= 1 &&
      mo <= 12 &&
      d >= 1 &&
      h >= 0 &&
      h <= 23 &&
      mi >= 0 &&
      mi <= 59
    )
      if (se >= 0 && se <= 59 && cs >= 0 && m3 >= 0 && m3 <= 9 && d <= 31)
        return civilDays(y, mo, d) * 86_400_000 + h * 3_600_000 + mi * 60_000 + se * 1000 + cs * 10 + m3
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
