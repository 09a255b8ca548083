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
import {closeSync, mkdirSync, openSync, readdirSync, rmSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'

import type BetterSqlite3 from 'better-sqlite3'

import {processAlive} from '../core/process.js'

import type {AgentTool} from '../scanners/agent-homes.js'
import type {HistoryRecord} from '../scanners/history/types.js'
import {privateFiles} from './log-store.js'

/** The `history` table's columns (also the full rescan's staging and rebuilt tables). */
const HISTORY_COLUMNS = `
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
  message_id TEXT`

/** Column names in table order, for positional inserts and `INSERT ... SELECT`. */
const COLUMN_NAMES = `key, tool, path, ts, model, session, project, request_id, input_tokens, output_tokens,
  cache_read_tokens, cache_creation_tokens, cache_5m_tokens, cache_1h_tokens, reasoning_tokens,
  total_tokens, sidechain, message_id`

const HISTORY_INDEXES = `
CREATE INDEX IF NOT EXISTS history_ts ON history (ts);
CREATE INDEX IF NOT EXISTS history_path ON history (path);
-- No query looks a history row up by request id (reconcile matches in memory, usage --source all
-- looks the gateway's ids up): the index only cost every insert and every full rescan.
DROP INDEX IF EXISTS history_request;
DROP INDEX IF EXISTS history_message;
CREATE INDEX IF NOT EXISTS history_side_message ON history (message_id) WHERE sidechain = 1;
`

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
CREATE TABLE IF NOT EXISTS history (${HISTORY_COLUMNS}
) WITHOUT ROWID;
${HISTORY_INDEXES}`

/** An upsert's SET list: every column from `excluded`. */
const SET_ALL = `tool = excluded.tool, path = excluded.path, ts = excluded.ts, model = excluded.model,
  session = excluded.session, project = excluded.project, request_id = excluded.request_id,
  input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
  cache_read_tokens = excluded.cache_read_tokens, cache_creation_tokens = excluded.cache_creation_tokens,
  cache_5m_tokens = excluded.cache_5m_tokens, cache_1h_tokens = excluded.cache_1h_tokens,
  reasoning_tokens = excluded.reasoning_tokens, total_tokens = excluded.total_tokens,
  sidechain = excluded.sidechain, message_id = excluded.message_id`

/** Claude's rule between two copies of a key: the non-sidechain copy, then the larger one. */
const CLAUDE_BETTER = (table: string) => `(excluded.sidechain < ${table}.sidechain
  OR (excluded.sidechain = ${table}.sidechain AND excluded.total_tokens > ${table}.total_tokens))`

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

/**
 * A cursor read from the table for the unchanged-file check: its tool and parser state are read
 * (and the state parsed) only when a changed file needs them.
 */
class StoredCursor implements FileCursor {
  private loaded: {tool: AgentTool; state: unknown} | undefined
  constructor(
    readonly path: string,
    readonly inode: number,
    readonly size: number,
    readonly mtimeMs: number,
    readonly offset: number,
    private readonly load: BetterSqlite3.Statement,
  ) {}

  private get rest(): {tool: AgentTool; state: unknown} {
    if (!this.loaded) {
      const row = this.load.get(this.path) as {tool: AgentTool; state: string | null}
      this.loaded = {tool: row.tool, state: row.state === null ? null : (JSON.parse(row.state) as unknown)}
    }
    return this.loaded
  }

  get tool(): AgentTool {
    return this.rest.tool
  }

  get state(): unknown {
    return this.rest.state
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
    const cols = `(${COLUMN_NAMES}) VALUES (${Array(18).fill('?').join(', ')})`
    // Claude: keep the non-sidechain copy, then the larger one (ccusage's preference).
    this.upsertClaude = db.prepare(`INSERT INTO history ${cols} ON CONFLICT(key) DO UPDATE SET ${SET_ALL}
      WHERE ${CLAUDE_BETTER('history')}`)
    // Codex and Gemini: the last copy of a key wins.
    this.upsertOther = db.prepare(`INSERT INTO history ${cols} ON CONFLICT(key) DO UPDATE SET ${SET_ALL}`)
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
    // CREATE INDEX and large sorts may use a helper thread (a full rescan builds four indexes).
    db.pragma('threads = 2')
    migrateWithoutRowid(db)
    db.exec(SCHEMA)
    privateFiles(path)
    return new HistoryStore(db)
  }

  /**
   * Every file's cursor, by path: the four numbers the unchanged-file check needs, as raw rows
   * (a no-change scan of 10 000 files reads 10 000 of them and nothing else).
   */
  cursors(): Map<string, FileCursor> {
    const rows = this.db
      .prepare('SELECT path, inode, size, mtime_ms, offset FROM history_files')
      .raw()
      .all() as Array<[string, number, number, number, number]>
    const load = this.db.prepare('SELECT tool, state FROM history_files WHERE path = ?')
    const map = new Map<string, FileCursor>()
    for (const [path, inode, size, mtimeMs, offset] of rows)
      map.set(path, new StoredCursor(path, inode, size, mtimeMs, offset, load))
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
      const values = rowValues(r, cursor.path)
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
    this.putCursor.run({...cursor, state: stateJson(cursor), scannedAt: Date.now()})
    return result
  }

  /** Where a rescan's `n`th scratch database goes: beside the log database, named for this process. */
  scratchPath(n: number): string {
    return `${this.db.name}.rescan-${process.pid}-${n}`
  }

  /** Removes the scratch files an interrupted rescan (its process gone) left. */
  removeStaleScratch(): void {
    const dir = dirname(this.db.name)
    const prefix = `${basename(this.db.name)}.rescan-`
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      return
    }
    for (const name of names) {
      if (!name.startsWith(prefix)) continue
      const pid = Number(name.slice(prefix.length).split('-')[0])
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) continue
      rmSync(join(dir, name), {force: true})
    }
  }

  /**
   * Replaces the rows of every file in the scratch databases (see `Scratch`) with theirs, keeps
   * the rows of files not read (another tool, a deleted session, an unreadable file), applies
   * the `/btw` replay rule and writes the cursors, in one IMMEDIATE transaction. Scratch files
   * come in scan order: on a key held by two, the later one wins (Claude: by its rule).
   */
  mergeScratch(paths: readonly string[]): ApplyResult {
    const db = this.db
    const result: ApplyResult = {rows: 0, duplicates: 0, replays: 0}
    const names = paths.map((_, i) => `scratch${i}`)
    paths.forEach((path, i) => db.prepare(`ATTACH DATABASE ? AS ${names[i]}`).run(path))
    this.sidechains = undefined
    try {
      db.transaction(() => {
        let read = 0
        let written = 0
        db.exec(`DROP TABLE IF EXISTS history_next;
          CREATE TABLE history_next (${HISTORY_COLUMNS}) WITHOUT ROWID;`)
        for (const [i, name] of names.entries()) {
          read += (db.prepare(`SELECT COUNT(*) AS n FROM ${name}.scan_rows`).get() as {n: number}).n
          // Into the empty table, a plain copy of the same layout: SQLite copies the b-tree's
          // records without decoding them (the "transfer optimization").
          if (i === 0) {
            written += db.prepare(`INSERT INTO history_next SELECT * FROM ${name}.staged`).run().changes
            continue
          }
          // `WHERE true`: an upsert after a SELECT needs a WHERE to parse.
          written += db
            .prepare(
              `INSERT INTO history_next (${COLUMN_NAMES}) SELECT ${COLUMN_NAMES} FROM ${name}.staged
                WHERE true ORDER BY key
                ON CONFLICT(key) DO UPDATE SET ${SET_ALL}
                WHERE excluded.tool <> 'claude-code' OR ${CLAUDE_BETTER('history_next')}`,
            )
            .run().changes
        }
        // Every row was written with its file's cursor: the files not read are found by cursor
        // and their rows by the path index. A copy just read of the same key stays, unless
        // Claude's rule prefers the kept one.
        const read_ = names.map((n) => `SELECT path FROM ${n}.scan_files`).join(' UNION ALL ')
        db.prepare(
          `INSERT INTO history_next (${COLUMN_NAMES}) SELECT ${COLUMN_NAMES} FROM history
            WHERE path IN (SELECT path FROM history_files WHERE path NOT IN (${read_}))
            ORDER BY key
            ON CONFLICT(key) DO UPDATE SET ${SET_ALL}
            WHERE excluded.tool = 'claude-code' AND ${CLAUDE_BETTER('history_next')}`,
        ).run()
        db.exec(`DROP TABLE history; ALTER TABLE history_next RENAME TO history; ${HISTORY_INDEXES}`)
        // `/btw`: a sidechain row repeating a main-chain row's message.id under another requestId.
        result.replays = db
          .prepare(
            `DELETE FROM history WHERE sidechain = 1 AND message_id IS NOT NULL AND EXISTS (
              SELECT 1 FROM history m WHERE m.key >= 'c:' || history.message_id || ':'
                AND m.key < 'c:' || history.message_id || ';' AND m.message_id = history.message_id
                AND m.sidechain = 0 AND m.key <> history.key)`,
          )
          .run().changes
        for (const name of names)
          db.exec(`INSERT INTO history_files (path, tool, inode, size, mtime_ms, offset, state, scanned_at)
            SELECT path, tool, inode, size, mtime_ms, offset, state, scanned_at FROM ${name}.scan_files WHERE true
            ON CONFLICT(path) DO UPDATE SET tool = excluded.tool, inode = excluded.inode, size = excluded.size,
              mtime_ms = excluded.mtime_ms, offset = excluded.offset, state = excluded.state,
              scanned_at = excluded.scanned_at`)
        result.rows = written - result.replays
        result.duplicates = read - written
      }).immediate()
    } finally {
      for (const name of names) db.exec(`DETACH DATABASE ${name}`)
    }
    return result
  }

  close(): void {
    if (this.db.open) this.db.close()
  }
}

/** Positional values (no per-row object is built for the statement), in COLUMN_NAMES order. */
function rowValues(r: HistoryRecord, path: string | number | bigint): unknown[] {
  return [
    r.key,
    r.tool,
    path,
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
}

const stateJson = (cursor: FileCursor): string | null =>
  cursor.state === null || cursor.state === undefined ? null : JSON.stringify(cursor.state)

/**
 * A full rescan (or a first scan) does not upsert row by row: inserting random keys one at a time
 * into a b-tree larger than the page cache was most of a 1 GB rescan. Files are read into scratch
 * databases instead (`Scratch`, one per worker thread: unjournaled files beside the log database,
 * private to this rescan), each deduplicated there in key order; `HistoryStore.mergeScratch` then
 * builds the new `history` table from them in key order, keeps the rows of files not read, builds
 * the indexes by sorting, and swaps it in with the cursors in one transaction. A kill before that
 * transaction commits leaves the database exactly as it was: an interrupted full rescan changes
 * nothing (its scratch files are removed by the next one).
 */
export class Scratch {
  private readonly insertRow: BetterSqlite3.Statement
  private readonly insertFile: BetterSqlite3.Statement

  private constructor(private readonly db: Db) {
    // Rows name their file by number (a path bound once per file, not once per row).
    const columns = HISTORY_COLUMNS.replace('key TEXT PRIMARY KEY', 'key TEXT NOT NULL').replace(
      'path TEXT NOT NULL',
      'file INTEGER NOT NULL',
    )
    db.exec(`CREATE TABLE scan_rows (${columns});
      CREATE TABLE scan_files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, tool TEXT NOT NULL,
        inode INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ms REAL NOT NULL, offset INTEGER NOT NULL,
        state TEXT, scanned_at INTEGER NOT NULL);`)
    this.insertRow = db.prepare(
      `INSERT INTO scan_rows (${COLUMN_NAMES.replace('path', 'file')}) VALUES (${Array(18).fill('?').join(', ')})`,
    )
    this.insertFile = db.prepare(`INSERT INTO scan_files
      (path, tool, inode, size, mtime_ms, offset, state, scanned_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
  }

  /** Creates the scratch database at `path` (replacing any file there), mode 0600. */
  static async create(path: string): Promise<Scratch> {
    const {default: Database} = await import('better-sqlite3')
    rmSync(path, {force: true})
    closeSync(openSync(path, 'wx', 0o600))
    const db = new Database(path)
    // Scratch: nothing to recover after a crash, so no journal and no fsync.
    db.pragma('journal_mode = OFF')
    db.pragma('synchronous = OFF')
    // 16 MB of pages and sorter memory per reader thread (two run at once, beside the merge's 64 MB).
    db.pragma('cache_size = -16384')
    db.pragma('threads = 2')
    return new Scratch(db)
  }

  /** Adds files read whole: their rows (in file order) and cursors. */
  add(batch: ReadonlyArray<{cursor: FileCursor; records: readonly HistoryRecord[]}>): void {
    const now = Date.now()
    this.db.transaction(() => {
      for (const {cursor, records} of batch) {
        const c = cursor
        const file = this.insertFile.run(
          c.path,
          c.tool,
          c.inode,
          c.size,
          c.mtimeMs,
          c.offset,
          stateJson(c),
          now,
        )
        for (const r of records) this.insertRow.run(rowValues(r, file.lastInsertRowid))
      }
    })()
  }

  /**
   * Builds `staged`, keyed like `history`, from the rows in key order, applying the dedup rules:
   * Claude keeps the non-sidechain copy, then the larger (the first on a tie); Codex and Gemini
   * the last copy.
   */
  finish(): void {
    this.db.exec(`CREATE TABLE staged (${HISTORY_COLUMNS}) WITHOUT ROWID;
      INSERT INTO staged (${COLUMN_NAMES})
        SELECT ${COLUMN_NAMES.split(',')
          .map((c) => (c.trim() === 'path' ? 'f.path' : `r.${c.trim()}`))
          .join(', ')}
        FROM scan_rows r JOIN scan_files f ON f.id = r.file WHERE true ORDER BY r.key, r.rowid
        ON CONFLICT(key) DO UPDATE SET ${SET_ALL}
        WHERE excluded.tool <> 'claude-code' OR ${CLAUDE_BETTER('staged')};`)
  }

  close(): void {
    if (this.db.open) this.db.close()
  }
}
