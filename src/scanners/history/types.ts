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
  /** Parses one complete line that starts at byte `offset`. */
  line(text: string, offset: number): HistoryRecord | SkipReason
  /** State to persist with the file's cursor. */
  state(): unknown
  /**
   * A line holding none of these bytes is `no-usage` (the line reader skips it undecoded): every
   * line `line` counts holds one (`line` checks its exact markers itself).
   */
  markers: readonly Buffer[]
}

/** The UTF-8 bytes of each marker. */
export const markerBytes = (...markers: string[]): readonly Buffer[] => markers.map((m) => Buffer.from(m))

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
