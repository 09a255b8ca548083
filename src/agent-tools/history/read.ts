/**
 * Reading one history file from its cursor (or whole) with its tool's parser: shared by the
 * incremental scan (scan.ts) and the staged full rescan (stage.ts, also in worker threads).
 */
import type {Stats} from 'node:fs'
import {readFile} from 'node:fs/promises'

import type {FileCursor} from '../../store/history-insert.js'
import {claudeParser} from './claude.js'
import {codexParser} from './codex.js'
import {geminiParser, parseGeminiJson} from './gemini.js'
import {readLines} from './lines.js'
import {opencodeStat, parseOpencodeMessageFile, readOpencodeDb} from './opencode.js'
import {qwenParser} from './qwen.js'
import type {HistoryFile, ScanStats} from './scan.js'
import type {HistoryRecord} from '../../store/history-rows.js'
import type {LineParser, SkipReason} from './types.js'
import {bump} from './types.js'

function parserFor(file: HistoryFile, state: unknown): LineParser {
  switch (file.tool) {
    case 'claude-code':
      return claudeParser(file.context)
    case 'codex':
      return codexParser(file.context, state)
    case 'gemini-cli':
      return geminiParser(file.context, state)
    case 'qwen-code':
      return qwenParser(file.context, state)
    case 'opencode':
      // read whole (readWhole), never line by line
      throw new Error('an OpenCode file has no line parser')
  }
}

/** A file read from its cursor (or whole): its new rows and its next cursor. */
export interface FileRead {
  cursor: FileCursor
  records: HistoryRecord[]
  /** The file's rows are replaced (read whole), not added to. */
  reset: boolean
}

/**
 * Reads one file from its cursor, or whole when `full`, new, replaced, shrunk or a whole-file
 * format; counts lines and skips into `stats`. Undefined (and the error recorded) when unreadable.
 */
export async function readHistoryFile(
  file: HistoryFile,
  st: Stats,
  old: FileCursor | undefined,
  full: boolean,
  stats: Pick<ScanStats, 'lines' | 'skipped' | 'errors'>,
): Promise<FileRead | undefined> {
  if (file.tool === 'opencode') return readWhole(file, opencodeStat(file.path, st), old, stats)
  const reset = full || !old || old.inode !== st.ino || st.size < old.offset || file.whole
  const from = reset ? 0 : old.offset
  const parser = parserFor(file, reset ? null : old?.state)
  const records: HistoryRecord[] = []
  let offset = from
  try {
    if (file.whole) {
      const text = await readFile(file.path, 'utf8')
      const parsed = parseGeminiJson(text, file.context)
      records.push(...parsed.records)
      for (const [k, n] of Object.entries(parsed.skipped)) bump(stats, k as SkipReason, n)
      stats.lines += 1
      offset = Buffer.byteLength(text)
    } else {
      let other = 0
      offset = await readLines(
        file.path,
        from,
        st.size,
        ({text, offset: at}) => {
          stats.lines++
          const r = parser.line(text, at)
          if (typeof r === 'string') bump(stats, r)
          else records.push(r)
        },
        parser.holds,
        () => other++,
      )
      stats.lines += other
      bump(stats, 'no-usage', other)
    }
  } catch (error) {
    stats.errors.push({path: file.path, error: String((error as NodeJS.ErrnoException).code ?? error)})
    return undefined
  }
  const cursor: FileCursor = {
    id: old?.id,
    path: file.path,
    tool: file.tool,
    inode: st.ino,
    // A truncated last line stays unread (offset before it) until the file grows.
    size: st.size,
    mtimeMs: st.mtimeMs,
    offset,
    state: parser.state(),
  }
  return {cursor, records, reset}
}

/**
 * A file read whole into rows that replace its old ones (OpenCode's database, or one of its
 * legacy message files): one line counted per file.
 */
async function readWhole(
  file: HistoryFile,
  st: Stats,
  old: FileCursor | undefined,
  stats: Pick<ScanStats, 'lines' | 'skipped' | 'errors'>,
): Promise<FileRead | undefined> {
  let parsed
  try {
    parsed = file.path.endsWith('.db')
      ? await readOpencodeDb(file.path)
      : parseOpencodeMessageFile(await readFile(file.path, 'utf8'), file.context)
  } catch (error) {
    const e = error as NodeJS.ErrnoException
    stats.errors.push({path: file.path, error: String(e.code ?? e.message ?? error)})
    return undefined
  }
  stats.lines += 1
  for (const [k, n] of Object.entries(parsed.skipped)) bump(stats, k as SkipReason, n)
  const cursor: FileCursor = {
    id: old?.id,
    path: file.path,
    tool: file.tool,
    inode: st.ino,
    size: st.size,
    mtimeMs: st.mtimeMs,
    offset: st.size,
    state: null,
  }
  return {cursor, records: parsed.records, reset: true}
}
