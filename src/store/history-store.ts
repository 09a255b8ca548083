/**
 * Agent history rows and the per-file scan cursors, in the gateway's log database
 * (`<GWCTL_HOME>/logs.db`, own tables), so usage can join them with the gateway's rows.
 *
 * - `history_files`: one cursor per history file (inode, size, mtime, byte offset after the last
 *   complete line read, and the parser's state). The `agents` service reads
 *   `SELECT DISTINCT tool FROM history_files` to tell whether a tool's history was scanned.
 * - `history`: one row per response, keyed so a rescan or a second copy never counts twice.
 *
 * Each file's rows and its cursor are written in one transaction: a kill mid-scan leaves every
 * file either fully applied or untouched. `better-sqlite3` is imported only when opened.
 */
import {mkdirSync} from 'node:fs'
import {dirname} from 'node:path'

import type BetterSqlite3 from 'better-sqlite3'

import type {AgentTool} from '../scanners/agent-homes.js'
import type {HistoryRecord} from '../scanners/history/types.js'
import {privateFiles} from './log-store.js'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS history_files (
  path TEXT PRIMARY KEY,
  tool TEXT NOT NULL,
  inode INTEGER NOT NULL DEFAULT 0,
  size INTEGER NOT NULL DEFAULT 0,
  mtime_ms REAL NOT NULL DEFAULT 0,
  offset INTEGER NOT NULL DEFAULT 0,
  state TEXT,
  scanned_at INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS history (
  key TEXT PRIMARY KEY,
  tool TEXT NOT NULL,
  path TEXT NOT NULL,
  ts INTEGER NOT NULL,
  model TEXT,
  session TEXT,
  project TEXT,
  request_id TEXT,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens INTEGER NOT NULL DEFAULT 0,
  cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
  cache_5m_tokens INTEGER NOT NULL DEFAULT 0,
  cache_1h_tokens INTEGER NOT NULL DEFAULT 0,
  reasoning_tokens INTEGER NOT NULL DEFAULT 0,
  total_tokens INTEGER NOT NULL DEFAULT 0,
  sidechain INTEGER NOT NULL DEFAULT 0,
  message_id TEXT
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS history_ts ON history (ts);
CREATE INDEX IF NOT EXISTS history_path ON history (path);
CREATE INDEX IF NOT EXISTS history_request ON history (request_id) WHERE request_id IS NOT NULL;
DROP INDEX IF EXISTS history_message;
CREATE INDEX IF NOT EXISTS history_side_message ON history (message_id) WHERE sidechain = 1;
`

/**
 * The first `history` table had a rowid beside its text key: every row cost two b-tree inserts.
 * Its rows are copied into the keyed (WITHOUT ROWID) table once, in one transaction; rows whose
 * history files are gone since (Claude Code deletes old sessions) are kept.
 */
function migrateWithoutRowid(db: Db): void {
  const sql = () =>
    (
      db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'history'").get() as
        {sql: string} | undefined
    )?.sql
  const old = (text: string | undefined) => text !== undefined && !/WITHOUT ROWID/i.test(text)
  if (!old(sql())) return
  // IMMEDIATE, and checked again inside: a daemon and a command opening at once migrate once.
  db.transaction(() => {
    if (!old(sql())) return
    db.exec('ALTER TABLE history RENAME TO history_old')
    for (const index of [
      'history_ts',
      'history_path',
      'history_request',
      'history_message',
      'history_side_message',
    ])
      db.exec(`DROP INDEX IF EXISTS ${index}`)
    db.exec(SCHEMA)
    db.exec('INSERT OR REPLACE INTO history SELECT * FROM history_old')
    db.exec('DROP TABLE history_old')
  }).immediate()
}

/** A file's scan position. */
export interface FileCursor {
  path: string
  tool: AgentTool
  inode: number
  size: number
  mtimeMs: number
  offset: number
  state: unknown
}

/** A cursor read from the table; its parser state is parsed on first use. */
class StoredCursor implements FileCursor {
  private parsed: unknown
  constructor(
    readonly path: string,
    readonly tool: AgentTool,
    readonly inode: number,
    readonly size: number,
    readonly mtimeMs: number,
    readonly offset: number,
    private readonly json: string | null,
  ) {}

  get state(): unknown {
    if (this.parsed === undefined)
      this.parsed = this.json === null ? null : (JSON.parse(this.json) as unknown)
    return this.parsed
  }
}

/** What applying one file did. */
export interface ApplyResult {
  /** Rows inserted or replaced. */
  rows: number
  /** Claude keys already held by a better copy. */
  duplicates: number
  /** Claude `/btw` sidechain replays dropped. */
  replays: number
}

type Db = BetterSqlite3.Database

export class HistoryStore {
  private readonly upsertClaude: BetterSqlite3.Statement
  private readonly upsertOther: BetterSqlite3.Statement
  private readonly parentOf: BetterSqlite3.Statement
  private readonly dropReplays: BetterSqlite3.Statement
  private readonly putCursor: BetterSqlite3.Statement
  private readonly deleteFileRows: BetterSqlite3.Statement
  /** Sidechain rows held: while none, a main-chain row has no `/btw` replay to drop. */
  private sidechains: number | undefined

  private constructor(readonly db: Db) {
    const cols = `(key, tool, path, ts, model, session, project, request_id, input_tokens, output_tokens,
      cache_read_tokens, cache_creation_tokens, cache_5m_tokens, cache_1h_tokens, reasoning_tokens,
      total_tokens, sidechain, message_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
    const set = `tool = excluded.tool, path = excluded.path, ts = excluded.ts, model = excluded.model,
      session = excluded.session, project = excluded.project, request_id = excluded.request_id,
      input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
      cache_read_tokens = excluded.cache_read_tokens, cache_creation_tokens = excluded.cache_creation_tokens,
      cache_5m_tokens = excluded.cache_5m_tokens, cache_1h_tokens = excluded.cache_1h_tokens,
      reasoning_tokens = excluded.reasoning_tokens, total_tokens = excluded.total_tokens,
      sidechain = excluded.sidechain, message_id = excluded.message_id`
    // Claude: keep the non-sidechain copy, then the larger one (ccusage's preference).
    this.upsertClaude = db.prepare(`INSERT INTO history ${cols} ON CONFLICT(key) DO UPDATE SET ${set}
      WHERE excluded.sidechain < history.sidechain
        OR (excluded.sidechain = history.sidechain AND excluded.total_tokens > history.total_tokens)`)
    // Codex and Gemini: the last copy of a key wins.
    this.upsertOther = db.prepare(`INSERT INTO history ${cols} ON CONFLICT(key) DO UPDATE SET ${set}`)
    // A Claude key starts `c:<message.id>:`, so the primary key finds a message's main-chain rows
    // (no index on every row's message_id: only sidechain rows are indexed by it).
    this.parentOf = db.prepare(
      `SELECT 1 FROM history WHERE key >= 'c:' || @m || ':' AND key < 'c:' || @m || ';'
        AND message_id = @m AND sidechain = 0 AND key <> @key LIMIT 1`,
    )
    this.dropReplays = db.prepare(`DELETE FROM history WHERE message_id = ? AND sidechain = 1 AND key <> ?`)
    this.putCursor =
      db.prepare(`INSERT INTO history_files (path, tool, inode, size, mtime_ms, offset, state, scanned_at)
      VALUES (@path, @tool, @inode, @size, @mtimeMs, @offset, @state, @scannedAt)
      ON CONFLICT(path) DO UPDATE SET tool = excluded.tool, inode = excluded.inode, size = excluded.size,
        mtime_ms = excluded.mtime_ms, offset = excluded.offset, state = excluded.state, scanned_at = excluded.scanned_at`)
    this.deleteFileRows = db.prepare('DELETE FROM history WHERE path = ?')
  }

  /** Whether any sidechain row is held (counted once, on first need, then kept up to date). */
  private hasSidechains(): boolean {
    this.sidechains ??= (
      this.db.prepare('SELECT EXISTS (SELECT 1 FROM history WHERE sidechain = 1) AS n').get() as {n: number}
    ).n
    return this.sidechains > 0
  }

  /** Opens (creating when missing) the history tables in the database at `path`. */
  static async open(path: string): Promise<HistoryStore> {
    const {default: Database} = await import('better-sqlite3')
    mkdirSync(dirname(path), {recursive: true, mode: 0o700})
    privateFiles(path)
    const db = new Database(path)
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    db.pragma('busy_timeout = 5000')
    // A rescan writes many index pages: a 64 MB page cache keeps them in memory between commits.
    db.pragma('cache_size = -65536')
    migrateWithoutRowid(db)
    db.exec(SCHEMA)
    privateFiles(path)
    return new HistoryStore(db)
  }

  /**
   * Every file's cursor, by path. Read as raw arrays and with each parser state parsed only when
   * asked for (a no-change scan of 10 000 files reads 10 000 cursors and parses none).
   */
  cursors(): Map<string, FileCursor> {
    const rows = this.db
      .prepare('SELECT path, tool, inode, size, mtime_ms, offset, state FROM history_files')
      .raw()
      .all() as Array<[string, AgentTool, number, number, number, number, string | null]>
    const map = new Map<string, FileCursor>()
    for (const [path, tool, inode, size, mtimeMs, offset, state] of rows)
      map.set(
        path,
        new StoredCursor(path, tool, Number(inode), Number(size), Number(mtimeMs), Number(offset), state),
      )
    return map
  }

  /**
   * Writes one file's new rows and its cursor in one transaction. `reset` first removes the rows
   * the file held (a full rescan, or a file that shrank or was replaced).
   */
  applyFile(cursor: FileCursor, records: readonly HistoryRecord[], reset: boolean): ApplyResult {
    return this.applyFiles([{cursor, records, reset}])[0]
  }

  /**
   * Writes several files' rows and cursors in one transaction (a scan batches small files): a
   * kill leaves each file of the batch either fully applied with its cursor, or untouched.
   */
  applyFiles(
    batch: ReadonlyArray<{cursor: FileCursor; records: readonly HistoryRecord[]; reset: boolean}>,
  ): ApplyResult[] {
    const results: ApplyResult[] = []
    this.db.transaction(() => {
      for (const {cursor, records, reset} of batch) results.push(this.applyOne(cursor, records, reset))
    })()
    return results
  }

  private applyOne(cursor: FileCursor, records: readonly HistoryRecord[], reset: boolean): ApplyResult {
    const result: ApplyResult = {rows: 0, duplicates: 0, replays: 0}
    if (reset) this.deleteFileRows.run(cursor.path)
    for (const r of records) {
      // Positional values: no per-row object is built for the statement.
      const values = [
        r.key,
        r.tool,
        cursor.path,
        r.time,
        r.model,
        r.session,
        r.project,
        r.requestId,
        r.inputTokens,
        r.outputTokens,
        r.cacheReadTokens,
        r.cacheCreationTokens,
        r.cache5mTokens,
        r.cache1hTokens,
        r.reasoningTokens,
        r.totalTokens,
        r.sidechain ? 1 : 0,
        r.messageId,
      ]
      if (r.tool === 'claude-code') {
        if (r.messageId) {
          // `/btw`: a sidechain line repeating the parent's message.id under another requestId.
          if (r.sidechain && this.parentOf.get({m: r.messageId, key: r.key})) {
            result.replays++
            continue
          }
          if (!r.sidechain && this.hasSidechains())
            result.replays += this.dropReplays.run(r.messageId, r.key).changes
        }
        const changes = this.upsertClaude.run(values).changes
        if (changes === 0) result.duplicates++
        else {
          result.rows++
          if (r.sidechain) this.sidechains = (this.sidechains ?? 0) + 1
        }
      } else {
        this.upsertOther.run(values)
        result.rows++
      }
    }
    this.putCursor.run({
      path: cursor.path,
      tool: cursor.tool,
      inode: cursor.inode,
      size: cursor.size,
      mtimeMs: cursor.mtimeMs,
      offset: cursor.offset,
      state: cursor.state === null || cursor.state === undefined ? null : JSON.stringify(cursor.state),
      scannedAt: Date.now(),
    })
    return result
  }

  close(): void {
    if (this.db.open) this.db.close()
  }
}
