/**
 * OpenCode's history (folders in `opencodeHome`), in its two formats:
 *
 * - **SQLite** (`opencode.db`, 1.x; verified on 1.18.33): table `message` (`id`, `session_id`,
 *   `data` JSON: `role`, `modelID`, `providerID`, `path.cwd`, `time.created/completed`, `tokens`)
 *   and table `part` (`message_id`, `time_created`, `data` JSON); a `step-finish` part is one model
 *   call (`tokens`, `cost`), written when its answer ended. Rows come from the step-finish parts
 *   with their message's model; an assistant message without one (an interrupted call) counts
 *   from its own `tokens`. The database is opened read-only and read whole when it or its `-wal`
 *   changed (OpenCode keeps it in WAL mode, so a write may touch only the `-wal`: see
 *   {@link opencodeStat}).
 * - **JSON files** of the versions before the database (`storage/message/<session>/<msg>.json`,
 *   one message each, as ccusage reads them): an assistant message's `tokens`.
 *
 * `tokens` (OpenCode's `Session.getUsage`): `input` is the prompt minus cache reads and writes,
 * `output` the completion minus `reasoning`, `cache.read`, `cache.write`. Rows: input as is,
 * output + reasoning (the gateway counts reasoning as output), reasoning apart.
 *
 * Keys: `o:<message id>` for a message's one call (the same key in both formats, so a message
 * OpenCode migrated from its JSON files into the database is counted once), `o:<message id>:<n>`
 * for the n-th further call of a message that made several. OpenCode records no response id:
 * `usage reconcile` matches its rows by time and model, as Gemini CLI's.
 */
import type {Stats} from 'node:fs'
import {statSync} from 'node:fs'
import {basename} from 'node:path'

import type {HistoryRecord} from '../../store/history-rows.js'
import type {FileContext, SkipReason} from './types.js'
import {num, obj, str} from './types.js'

/** Whether a walked name is an OpenCode history file (`opencode*.db`, legacy message JSON). */
export function isOpencodeHistory(name: string): boolean {
  return (
    (name.startsWith('opencode') && name.endsWith('.db')) ||
    (name.startsWith('msg_') && name.endsWith('.json'))
  )
}

/** The stats {@link opencodeStat} made (the incremental scan's, given to the reader again). */
const withWal = new WeakSet<Stats>()

/**
 * The stat a scan compares with a database's cursor: its size plus its `-wal`'s, and the later
 * mtime of the two (a write in WAL mode changes only the `-wal` until a checkpoint).
 */
export function opencodeStat(path: string, st: Stats): Stats {
  if (!path.endsWith('.db') || withWal.has(st)) return st
  const wal = statSync(`${path}-wal`, {throwIfNoEntry: false})
  if (!wal) return st
  const both = Object.assign(Object.create(st) as Stats, {
    size: st.size + wal.size,
    mtimeMs: Math.max(st.mtimeMs, wal.mtimeMs),
  })
  withWal.add(both)
  return both
}

type Parsed = {records: HistoryRecord[]; skipped: Partial<Record<SkipReason, number>>}

function parseJson(text: unknown): Record<string, unknown> | undefined {
  if (typeof text !== 'string') return undefined
  try {
    return obj(JSON.parse(text))
  } catch {
    return undefined
  }
}

/** One call's row from a `tokens` object, or why not. */
function row(
  key: string,
  tokens: Record<string, unknown> | undefined,
  time: number,
  message: Record<string, unknown>,
  session: string | null,
  project: string | null,
): HistoryRecord | SkipReason {
  if (!tokens) return 'no-usage'
  if (!Number.isFinite(time) || time <= 0) return 'invalid-field'
  const cache = obj(tokens.cache)
  const input = num(tokens.input)
  const reasoning = num(tokens.reasoning)
  const output = num(tokens.output) + reasoning
  const cacheRead = num(cache?.read)
  const cacheWrite = num(cache?.write)
  if (input + output + cacheRead + cacheWrite === 0) return 'zero-usage'
  return {
    key,
    tool: 'opencode',
    time,
    model: str(message.modelID),
    session,
    project,
    requestId: null,
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: cacheRead,
    cacheCreationTokens: cacheWrite,
    cache5mTokens: 0,
    cache1hTokens: 0,
    reasoningTokens: reasoning,
    totalTokens: input + output + cacheRead + cacheWrite,
    sidechain: false,
    messageId: null,
  }
}

const cwdOf = (m: Record<string, unknown>): string | null => str(obj(m.path)?.cwd)
const completedOf = (m: Record<string, unknown>): number => {
  const t = obj(m.time)
  return num(t?.completed) || num(t?.created)
}

function add(out: Parsed, r: HistoryRecord | SkipReason): void {
  if (typeof r === 'string') out.skipped[r] = (out.skipped[r] ?? 0) + 1
  else out.records.push(r)
}

/** A legacy message file: one message, counted when it is an assistant message with tokens. */
export function parseOpencodeMessageFile(text: string, file: FileContext): Parsed {
  const out: Parsed = {records: [], skipped: {}}
  const m = parseJson(text)
  if (!m) return {records: [], skipped: {'invalid-json': 1}}
  if (m.role !== 'assistant') return {records: [], skipped: {'no-usage': 1}}
  const id = str(m.id) ?? basename(file.path, '.json')
  add(out, row(`o:${id}`, obj(m.tokens), completedOf(m), m, str(m.sessionID), cwdOf(m)))
  return out
}

interface PartRow {
  message_id: string
  time_created: number
  data: string
}
interface MessageRow {
  id: string
  session_id: string
  time_created: number
  data: string
}

/**
 * The calls recorded in an OpenCode database, read-only (`better-sqlite3`, loaded here: only a scan
 * that finds a changed database loads it). A database of another layout (no `message` or `part`
 * table) is reported as one `invalid-field`.
 */
export async function readOpencodeDb(path: string): Promise<Parsed> {
  const {default: Database} = await import('better-sqlite3')
  const db = new Database(path, {readonly: true, fileMustExist: true})
  try {
    db.pragma('busy_timeout = 2000')
    const tables = new Set(
      (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as Array<{name: string}>).map(
        (t) => t.name,
      ),
    )
    if (!tables.has('message') || !tables.has('part')) return {records: [], skipped: {'invalid-field': 1}}
    const out: Parsed = {records: [], skipped: {}}
    // (one read transaction: the parts and the messages they belong to are of one moment)
    db.transaction(() => {
      const messages = new Map<string, MessageRow>()
      for (const m of db
        .prepare(`SELECT id, session_id, time_created, data FROM message WHERE data LIKE '%"assistant"%'`)
        .all() as MessageRow[])
        messages.set(m.id, m)
      const steps = new Map<string, PartRow[]>()
      for (const p of db
        .prepare(
          `SELECT message_id, time_created, data FROM part WHERE data LIKE '%"step-finish"%' ORDER BY message_id, time_created, id`,
        )
        .all() as PartRow[]) {
        const list = steps.get(p.message_id)
        if (list) list.push(p)
        else steps.set(p.message_id, [p])
      }
      for (const [id, row0] of messages) {
        const m = parseJson(row0.data)
        if (!m) {
          add(out, 'invalid-json')
          continue
        }
        if (m.role !== 'assistant') continue
        const session = row0.session_id || str(m.sessionID)
        const parts = steps.get(id) ?? []
        let n = 0
        for (const p of parts) {
          const data = parseJson(p.data)
          if (!data || data.type !== 'step-finish') {
            add(out, 'invalid-json')
            continue
          }
          add(
            out,
            row(n === 0 ? `o:${id}` : `o:${id}:${n}`, obj(data.tokens), p.time_created, m, session, cwdOf(m)),
          )
          n++
        }
        if (n === 0)
          add(out, row(`o:${id}`, obj(m.tokens), completedOf(m) || row0.time_created, m, session, cwdOf(m)))
      }
    })()
    return out
  } finally {
    db.close()
  }
}
