/**
 * Gemini CLI chat recordings (`tmp/<project>/chats/session-*.jsonl`, sub-agent chats in
 * `chats/<parent>/`, legacy whole-file `.json`), by ccusage's rules (../shared/PROTOCOLS.md A6):
 * a repeated message `id` is the same message rewritten, the last one wins (same key); `input`
 * includes `cached` when `total` says so; `tool` (tool-use prompt) counts as input; `thoughts`
 * count as output and are also kept apart as reasoning (as the gateway's Gemini tap does).
 */
import type {FileContext, LineParser, SkipReason} from './types.js'
import type {HistoryRecord} from '../../store/history-rows.js'
import {holdsOneOf, num, obj, parseTime, str} from './types.js'

export interface GeminiState {
  session: string | null
}

function geminiRecord(
  m: Record<string, unknown>,
  s: GeminiState,
  file: FileContext,
): HistoryRecord | SkipReason {
  const tokens = obj(m.tokens)
  if (m.type !== 'gemini' || !tokens) return 'no-usage'
  const id = str(m.id)
  const time = typeof m.timestamp === 'string' ? parseTime(m.timestamp) : Number.NaN
  if (!id || !Number.isFinite(time)) return 'invalid-field'
  const input = num(tokens.input)
  const output = num(tokens.output)
  const cached = num(tokens.cached)
  const thoughts = num(tokens.thoughts)
  const tool = num(tokens.tool)
  const includesCached = num(tokens.total) === input + output + thoughts + tool
  const cacheRead = includesCached ? Math.min(input, cached) : cached
  const inputTokens = (includesCached ? input - cacheRead : input) + tool
  if (inputTokens + cacheRead + output + thoughts === 0) return 'zero-usage'
  return {
    key: `g:${s.session ?? file.keyPath}:${id}`,
    tool: 'gemini-cli',
    time,
    model: str(m.model),
    session: s.session,
    project: file.project,
    requestId: null,
    inputTokens,
    outputTokens: output + thoughts,
    cacheReadTokens: cacheRead,
    cacheCreationTokens: 0,
    cache5mTokens: 0,
    cache1hTokens: 0,
    reasoningTokens: thoughts,
    totalTokens: inputTokens + cacheRead + output + thoughts,
    sidechain: false,
    messageId: null,
  }
}

/** A `.jsonl` recording, line by line: a line holding neither is not counted. */
const HOLDS = holdsOneOf(['"tokens"', '"sessionId"'])

export function geminiParser(file: FileContext, saved?: unknown): LineParser {
  const s: GeminiState = {session: null}
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
      if (m.type === undefined && typeof m.sessionId === 'string') {
        s.session = m.sessionId
        return 'no-usage'
      }
      return geminiRecord(m, s, file)
    },
  }
}

/** A legacy `.json` recording: one document holding `sessionId` and `messages`. */
export function parseGeminiJson(
  text: string,
  file: FileContext,
): {records: HistoryRecord[]; skipped: Partial<Record<SkipReason, number>>} {
  const skipped: Partial<Record<SkipReason, number>> = {}
  let doc: Record<string, unknown> | undefined
  try {
    doc = obj(JSON.parse(text))
  } catch {
    doc = undefined
  }
  if (!doc) return {records: [], skipped: {'invalid-json': 1}}
  const s: GeminiState = {session: str(doc.sessionId)}
  const records: HistoryRecord[] = []
  for (const raw of Array.isArray(doc.messages) ? doc.messages : []) {
    const m = obj(raw)
    const r = m ? geminiRecord(m, s, file) : 'invalid-field'
    if (typeof r === 'string') skipped[r] = (skipped[r] ?? 0) + 1
    else records.push(r)
  }
  return {records, skipped}
}
