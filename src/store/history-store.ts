/**
 * Agent history rows and the per-file scan cursors, in the gateway's log database
 * (`<GWCTL_HOME>/logs.db`, own tables), so usage can join them with the gateway's rows.
 *
 * - `history_files`: one cursor per history file (inode, size, mtime, byte offset after the last
 *   complete line read, and the parser's state). The `agents` service reads
 *   `SELECT DISTINCT tool FROM history_files` to tell whether a tool's history was scanned.
 * - `history`: one row per response, keyed so a rescan or a second copy never counts twice.
 * - `history_cursor_snapshot`: at most one row, the cursors' path, inode, size and mtime as two
 *   JSON texts (a no-change scan of 10 000 files reads it in one row instead of 10 000). Triggers
 *   delete it in the transaction of any change to `history_files`, so it never disagrees with
 *   the table: missing, the table is read, and the scan writes it again (`saveCursorSnapshot`).
 *
 * Each file's rows and its cursor are written in one transaction: a kill mid-scan leaves every
 * file either fully applied or untouched. `better-sqlite3` is imported only when opened.
 */
import {closeSync, mkdirSync, openSync, readdirSync, rmSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'

import type BetterSqlite3 from 'better-sqlite3'

import {processAlive} from '../core/process.js'

import type {AgentTool} from './history-rows.js'
import type {HistoryRecord} from './history-rows.js'
import {isBusy, openSqlite, privateFiles, walMode} from './sqlite.js'

/**
 * The `history` table's stored columns (also the staged rescan's scratch table), in order. Rows
 * name their file by number (`history_files.id`), not by path; `message_id` is kept only on
 * Claude sidechain rows (the `/btw` replay rule): a main-chain row's message id is in its key
 * (`c:<message.id>:<requestId>`). Zeros and NULLs take no bytes in a SQLite record.
 */
const STORED = [
  'key',
  'file',
  'ts',
  'model',
  'session',
  'project',
  'request_id',
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_creation_tokens',
  'cache_5m_tokens',
  'cache_1h_tokens',
  'reasoning_tokens',
  'sidechain',
  'message_id',
] as const

/** Columns after the first BASE_COLUMNS are bound only when not zero/NULL (see `Inserter`). */
const BASE_COLUMNS = 10

/** The rows' table, `history_rows` (also the scratch databases' `staged`). */
const HISTORY_COLUMNS = `
  key TEXT PRIMARY KEY,
  file INTEGER NOT NULL,
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
  sidechain INTEGER NOT NULL DEFAULT 0,
  message_id TEXT`

/** Stored column names in table order, for positional inserts and `INSERT ... SELECT`. */
const COLUMN_NAMES = STORED.join(', ')

/** The sum `total_tokens` holds, for upserts (`excluded.` of a generated column is not relied on). */
const TOTAL = (t: string) =>
  `(${t}.input_tokens + ${t}.output_tokens + ${t}.cache_read_tokens + ${t}.cache_creation_tokens)`

/**
 * The sidechain rows' message ids (the `/btw` rule), as a partial index: the same definition on
 * the scratch table lets a rescan's merge copy it with the rows (see `mergeScratch`).
 */
const SIDE_INDEX = (name: string, table: string) =>
  `CREATE INDEX IF NOT EXISTS ${name} ON ${table} (message_id) WHERE sidechain = 1;`

/**
 * No index on `ts`: a time filter (`--since`) takes the files whose `history_files.max_ts` is in
 * range, then their rows by `history_file` (`historySince` in usage-query.ts). Sorting 815 000
 * rows by time was most of a 1 GB rescan's index builds (0.92 of 1.34 s).
 */
const HISTORY_INDEXES = `
CREATE INDEX IF NOT EXISTS history_file ON history_rows (file);
${SIDE_INDEX('history_side_message', 'history_rows')}
`

/**
 * What queries read: `history`, the rows with `tool` (from the key's prefix) and `total_tokens`
 * computed, not stored (a generated column would stop SQLite copying a table page by page).
 */
const HISTORY_VIEW = `CREATE VIEW IF NOT EXISTS history AS SELECT ${STORED.join(', ')},
  CASE substr(key, 1, 1) WHEN 'c' THEN 'claude-code' WHEN 'x' THEN 'codex' ELSE 'gemini-cli' END AS tool,
  input_tokens + output_tokens + cache_read_tokens + cache_creation_tokens AS total_tokens
  FROM history_rows;`

/** Any change to a cursor drops the snapshot in the same transaction (one trigger each). */
const SNAPSHOT_TRIGGERS = ['insert', 'update', 'delete'] as const

/** The snapshot's layout: a row of another format is not read (the table is). */
const SNAPSHOT_FORMAT = 1

const SCHEMA = `
CREATE TABLE IF NOT EXISTS history_files (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  tool TEXT NOT NULL,
  inode INTEGER NOT NULL DEFAULT 0,
  size INTEGER NOT NULL DEFAULT 0,
  mtime_ms REAL NOT NULL DEFAULT 0,
  offset INTEGER NOT NULL DEFAULT 0,
  state TEXT,
  scanned_at INTEGER NOT NULL DEFAULT 0,
  max_ts INTEGER
);
CREATE TABLE IF NOT EXISTS history_rows (${HISTORY_COLUMNS}
) WITHOUT ROWID;
${HISTORY_INDEXES}
${HISTORY_VIEW}
CREATE TABLE IF NOT EXISTS history_cursor_snapshot (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  format INTEGER NOT NULL,
  paths TEXT NOT NULL,
  stats TEXT NOT NULL
);
${SNAPSHOT_TRIGGERS.map(
  (t) => `CREATE TRIGGER IF NOT EXISTS history_files_${t} AFTER ${t.toUpperCase()} ON history_files
  BEGIN DELETE FROM history_cursor_snapshot; END;`,
).join('\n')}`

/** An upsert's SET list: every stored column from `excluded`. */
const SET_ALL = STORED.filter((c) => c !== 'key')
  .map((c) => `${c} = excluded.${c}`)
  .join(', ')

/** A row replacing another takes every stored column from it: unbound ones are their defaults. */
function setAll(columns: string): string {
  const bound = new Set(columns.split(', '))
  return STORED.filter((c) => c !== 'key')
    .map((c) => `${c} = ${bound.has(c) ? `excluded.${c}` : c === 'message_id' ? 'NULL' : '0'}`)
    .join(', ')
}

/** Claude's rule between two copies of a key: the non-sidechain copy, then the larger one. */
const CLAUDE_BETTER = (table: string) => `(excluded.sidechain < ${table}.sidechain
  OR (excluded.sidechain = ${table}.sidechain AND ${TOTAL('excluded')} > ${TOTAL(table)}))`

/**
 * The rule between two copies of a key read by one rescan, as one reader reading the files in scan
 * order would apply it (`ord(file)`: SQL for the place in the scan of the file numbered `file`):
 * Codex and Gemini keep the later copy, Claude the non-sidechain one, then the larger, then the
 * earlier. An upsert's WHERE: true when `excluded` replaces the row held in `table`. Two copies
 * from one file (one place in the scan) come from one reader, which upserts a file's rows in file
 * order: there `excluded` is the later one.
 */
const SCAN_ORDER_RULE = (table: string, ord: (file: string) => string) => `CASE
  WHEN substr(excluded.key, 1, 1) <> 'c' THEN ${ord('excluded.file')} >= ${ord(`${table}.file`)}
  ELSE ${CLAUDE_BETTER(table)} OR (excluded.sidechain = ${table}.sidechain
    AND ${TOTAL('excluded')} = ${TOTAL(table)} AND ${ord('excluded.file')} < ${ord(`${table}.file`)}) END`

/**
 * True when every table, view, index and trigger of this layout is there (one query): the usual
 * open, which then runs neither the migration checks nor the schema's statements. An earlier
 * layout lacks `history_rows` (and has a `history` table where the view goes), or the snapshot.
 */
function schemaCurrent(db: Db): boolean {
  const {n, maxTs, tsIndex} = db
    .prepare(
      `SELECT (SELECT count(*) FROM sqlite_master WHERE (type = 'table'
          AND name IN ('history_files', 'history_rows', 'history_cursor_snapshot'))
        OR (type = 'view' AND name = 'history')
        OR (type = 'index' AND name IN ('history_file', 'history_side_message'))
        OR (type = 'trigger' AND name IN (${SNAPSHOT_TRIGGERS.map((t) => `'history_files_${t}'`).join(', ')}))) AS n,
        (SELECT count(*) FROM pragma_table_info('history_files') WHERE name = 'max_ts') AS maxTs,
        (SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'history_ts') AS tsIndex`,
    )
    .get() as {n: number; maxTs: number; tsIndex: number}
  return n === 6 + SNAPSHOT_TRIGGERS.length && maxTs === 1 && tsIndex === 0
}

/**
 * The layout before each file's `max_ts` (and with an index on `ts`): the column is added and
 * filled from the rows, the index dropped. In the open's IMMEDIATE transaction.
 */
function addMaxTs(db: Db): void {
  if (db.prepare(`SELECT 1 FROM pragma_table_info('history_files') WHERE name = 'max_ts'`).get()) return
  db.exec(`ALTER TABLE history_files ADD COLUMN max_ts INTEGER;
    UPDATE history_files SET max_ts = (SELECT max(ts) FROM history_rows WHERE file = history_files.id);
    DROP INDEX IF EXISTS history_ts;`)
}

/**
 * The history tables are a cache of the agents' files. Earlier layouts (a `history` table with a
 * path per row, stored `tool`/`total_tokens` and a `message_id` on every row; cursors without a
 * number) are dropped whole, in one transaction: the next scan finds no cursor and reads every
 * file again (staged).
 */
function migrate(db: Db): void {
  const old = () =>
    db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'history'`).get() !== undefined ||
    ((db.prepare(`SELECT name FROM pragma_table_info('history_files')`).all() as Array<{name: string}>)
      .length > 0 &&
      db.prepare(`SELECT 1 FROM pragma_table_info('history_files') WHERE name = 'id'`).get() === undefined)
  if (!old()) return
  // IMMEDIATE, and checked again inside: a daemon and a command opening at once migrate once.
  db.transaction(() => {
    if (!old()) return
    for (const index of [
      'history_ts',
      'history_path',
      'history_file',
      'history_request',
      'history_message',
      'history_side_message',
    ])
      db.exec(`DROP INDEX IF EXISTS ${index}`)
    db.exec('DROP TABLE IF EXISTS history; DROP TABLE IF EXISTS history_files;')
    db.exec('DROP VIEW IF EXISTS history; DROP TABLE IF EXISTS history_rows;')
    db.exec('DROP TABLE IF EXISTS history_cursor_snapshot')
    db.exec(SCHEMA)
  }).immediate()
}

/** A file's scan position. */
export interface FileCursor {
  /** `history_files.id`: the number the file's rows carry (unset: a file not seen before). */
  id?: number
  path: string
  tool: AgentTool
  inode: number
  size: number
  mtimeMs: number
  offset: number
  state: unknown
}

/**
 * The cursors of a scan, by path: only the numbers the unchanged-file check needs (a no-change
 * scan of 10 000 files reads 10 000 of them and nothing else), from the snapshot when there is
 * one; a changed file's number, offset, tool and parser state are read when it is read, the
 * file numbers of all when a rescan stages.
 */
export class Cursors {
  /**
   * Path -> its place in `paths` (`stats` holds inode, size and mtime_ms at 3 * place), built on
   * the first path not found at `next`: the snapshot lists the paths in the order the last scan
   * walked them, so a scan walking the same folders asks for them in that order and a no-change
   * scan builds no map (5 ms and a hash of each path, for 10 000).
   */
  private index: Map<string, number> | undefined
  /** The place after the last path found: where the walk's next path usually is. */
  private next = 0
  private ids: Map<string, number> | undefined
  private load: BetterSqlite3.Statement | undefined
  constructor(
    private readonly paths: readonly string[],
    private readonly stats: readonly number[],
    private readonly db: Db,
    /** Read from the snapshot (false: from the table, and no snapshot was there). */
    readonly fromSnapshot: boolean,
  ) {}

  get size(): number {
    return this.paths.length
  }

  /** The place of `path` in `paths`, if it has a cursor. */
  private place(path: string): number | undefined {
    const at = this.next
    if (at < this.paths.length && this.paths[at] === path) {
      this.next = at + 1
      return at
    }
    if (!this.index) {
      this.index = new Map()
      for (let i = 0; i < this.paths.length; i++) this.index.set(this.paths[i], i)
    }
    const i = this.index.get(path)
    if (i !== undefined) this.next = i + 1
    return i
  }

  /** Whether `path` has a cursor with this inode, size and mtime (the file was not touched since). */
  unchanged(path: string, st: {ino: number; size: number; mtimeMs: number}): boolean {
    const i = this.place(path)
    if (i === undefined) return false
    const at = 3 * i
    return this.stats[at] === st.ino && this.stats[at + 1] === st.size && this.stats[at + 2] === st.mtimeMs
  }

  /** The file number of `path`, if it has a cursor (all read in one query on first use). */
  id(path: string): number | undefined {
    this.ids ??= new Map(
      this.db.prepare('SELECT path, id FROM history_files').raw().all() as Array<[string, number]>,
    )
    return this.ids.get(path)
  }

  get(path: string): FileCursor | undefined {
    const i = this.place(path)
    if (i === undefined) return undefined
    this.load ??= this.db.prepare('SELECT id, offset, tool, state FROM history_files WHERE path = ?')
    const rest = this.load.get(path) as
      {id: number; offset: number; tool: AgentTool; state: string | null} | undefined
    if (!rest) return undefined
    return {
      id: rest.id,
      path,
      tool: rest.tool,
      inode: this.stats[3 * i],
      size: this.stats[3 * i + 1],
      mtimeMs: this.stats[3 * i + 2],
      offset: rest.offset,
      state: rest.state === null ? null : (JSON.parse(rest.state) as unknown),
    }
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

/** The cursor columns written by a scan (`id` aside). */
const CURSOR_COLUMNS = 'path, tool, inode, size, mtime_ms, offset, state, scanned_at, max_ts'
const CURSOR_UPDATE_BASE = `tool = excluded.tool, inode = excluded.inode, size = excluded.size,
  mtime_ms = excluded.mtime_ms, offset = excluded.offset, state = excluded.state, scanned_at = excluded.scanned_at`
/** A cursor replacing another whole (a file read whole: its rows are only the new ones). */
const CURSOR_UPDATE = `${CURSOR_UPDATE_BASE}, max_ts = excluded.max_ts`

/** The latest time of `records` (null for none). */
function maxTime(records: readonly HistoryRecord[]): number | null {
  let max: number | null = null
  for (const r of records) if (max === null || r.time > max) max = r.time
  return max
}

/**
 * Inserts rows binding only what they hold: the first BASE_COLUMNS values always, each later
 * column only when not zero/NULL (its default). Every bound value costs (a Codex or Gemini row
 * has 10, not 16), so there is one prepared statement per shape, made on first use. `add` (rows
 * added a file at a time) writes several rows to a statement, and binds the file, session, project
 * and model they share once, as named parameters every row names: a string costs most to bind (a
 * file's rows nearly always share them; a change ends the statement's rows).
 */
class Inserter {
  private readonly statements = new Map<number, BetterSqlite3.Statement>()
  private readonly values: unknown[] = []
  /** Rows of one shape waiting for `add` to write them several to a statement. */
  private pending = 0
  private pendingShape = -1
  /** The file, session, project and model of the rows waiting. */
  private readonly shared: {
    file: number
    session: string | null
    project: string | null
    model: string | null
  } = {file: 0, session: null, project: null, model: null}

  constructor(
    private readonly db: Db,
    /** The statement for `columns` and `values` (one `(?, ...)` group per row). */
    private readonly sql: (columns: string, values: string) => string,
  ) {}

  /**
   * The shape of `r` (a bit per optional column it binds, and BULK for the statements of `add`);
   * its values (`bulk`: but the shared ones) are pushed onto `v`.
   */
  private push(v: unknown[], r: HistoryRecord, file: number, bulk: boolean): number {
    if (bulk) v.push(r.key, r.time, r.requestId)
    else v.push(r.key, file, r.time, r.model, r.session, r.project, r.requestId)
    v.push(r.inputTokens, r.outputTokens, r.cacheReadTokens)
    // A bit per optional column bound (in STORED order after the base columns).
    const optional = [r.cacheCreationTokens, r.cache5mTokens, r.cache1hTokens, r.reasoningTokens]
    let shape = bulk ? BULK : 0
    for (let i = 0; i < 4; i++)
      if (optional[i] !== 0) {
        shape |= 1 << i
        v.push(optional[i])
      }
    if (r.sidechain) {
      shape |= 16
      v.push(1)
      // Kept on sidechain rows only: a main-chain row's message id is in its key.
      if (r.messageId !== null) {
        shape |= 32
        v.push(r.messageId)
      }
    }
    return shape
  }

  private statement(shape: number, rows: number): BetterSqlite3.Statement {
    let statement = this.statements.get(shape * 1024 + rows)
    if (!statement) {
      let columns: string[] = STORED.filter((_, i) => i < BASE_COLUMNS || shape & (1 << (i - BASE_COLUMNS)))
      let group = `(${columns.map(() => '?').join(', ')})`
      if (shape & BULK) {
        // the shared columns first, named (numbered 1-4 in every row), then the row's own, anonymous
        columns = [...SHARED_COLUMNS, ...columns.filter((c) => !SHARED_COLUMNS.includes(c))]
        group = `(@file, @session, @project, @model${', ?'.repeat(columns.length - SHARED_COLUMNS.length)})`
      }
      statement = this.db.prepare(this.sql(columns.join(', '), Array(rows).fill(group).join(', ')))
      this.statements.set(shape * 1024 + rows, statement)
    }
    return statement
  }

  /** Writes one row now (an upsert's changes count is per row). */
  run(r: HistoryRecord, file: number): BetterSqlite3.RunResult {
    const v = this.values
    v.length = 0
    return this.statement(this.push(v, r, file, false), 1).run(v)
  }

  /**
   * Adds a row to write, MANY_ROWS to a statement while they have the same shape, file, session,
   * project and model (a third less time per row than one statement each); `flush` writes the rest.
   */
  add(r: HistoryRecord, file: number): void {
    const v = this.values
    const shared = this.shared
    if (
      this.pending > 0 &&
      (shared.file !== file ||
        shared.session !== r.session ||
        shared.project !== r.project ||
        shared.model !== r.model)
    )
      this.flush()
    const at = v.length
    const shape = this.push(v, r, file, true)
    if (shape !== this.pendingShape && this.pending > 0) {
      const next = v.splice(at)
      this.flush()
      v.push(...next)
    }
    if (this.pending === 0) {
      shared.file = file
      shared.session = r.session
      shared.project = r.project
      shared.model = r.model
    }
    this.pendingShape = shape
    if (++this.pending === MANY_ROWS) this.flush()
  }

  flush(): void {
    if (this.pending > 0) this.statement(this.pendingShape, this.pending).run(this.values, this.shared)
    this.values.length = 0
    this.pending = 0
  }
}

/** The columns `add` binds once per statement, and the bit of its statements' shapes. */
const SHARED_COLUMNS: readonly string[] = ['file', 'session', 'project', 'model']
const BULK = 64

/** Rows per statement of a bulk insert. */
const MANY_ROWS = 32

export class HistoryStore {
  private readonly upsertClaude: Inserter
  private readonly upsertOther: Inserter
  private readonly parentOf: BetterSqlite3.Statement
  private readonly dropReplays: BetterSqlite3.Statement
  private readonly putCursor: BetterSqlite3.Statement
  private readonly deleteFileRows: BetterSqlite3.Statement
  /** Sidechain rows held: while none, a main-chain row has no `/btw` replay to drop. */
  private sidechains: number | undefined

  private constructor(readonly db: Db) {
    // Claude: keep the non-sidechain copy, then the larger one (ccusage's preference).
    this.upsertClaude = new Inserter(
      db,
      (columns, values) => `INSERT INTO history_rows (${columns}) VALUES ${values}
        ON CONFLICT(key) DO UPDATE SET ${setAll(columns)} WHERE ${CLAUDE_BETTER('history_rows')}`,
    )
    // Codex and Gemini: the last copy of a key wins.
    this.upsertOther = new Inserter(
      db,
      (columns, values) => `INSERT INTO history_rows (${columns}) VALUES ${values}
        ON CONFLICT(key) DO UPDATE SET ${setAll(columns)}`,
    )
    // A main-chain row of message @m has the key `c:<m>:<request id>` (found by the primary key).
    this.parentOf = db.prepare(
      `SELECT 1 FROM history_rows WHERE key >= 'c:' || @m || ':' AND key < 'c:' || @m || ';'
        AND key = 'c:' || @m || ':' || coalesce(request_id, '') AND sidechain = 0 AND key <> @key LIMIT 1`,
    )
    this.dropReplays = db.prepare(
      `DELETE FROM history_rows WHERE message_id = ? AND sidechain = 1 AND key <> ?`,
    )
    // A file read from its cursor keeps its rows: its max_ts is the later of the two.
    this.putCursor = db.prepare(`INSERT INTO history_files (${CURSOR_COLUMNS})
      VALUES (@path, @tool, @inode, @size, @mtimeMs, @offset, @state, @scannedAt, @maxTs)
      ON CONFLICT(path) DO UPDATE SET ${CURSOR_UPDATE_BASE}, max_ts = CASE WHEN @reset THEN excluded.max_ts
        ELSE max(coalesce(history_files.max_ts, excluded.max_ts), coalesce(excluded.max_ts, history_files.max_ts)) END
      RETURNING id`)
    this.deleteFileRows = db.prepare('DELETE FROM history_rows WHERE file = ?')
  }

  /** Whether any sidechain row is held (counted once, on first need, then kept up to date). */
  private hasSidechains(): boolean {
    this.sidechains ??= (
      this.db.prepare('SELECT EXISTS (SELECT 1 FROM history_rows WHERE sidechain = 1) AS n').get() as {
        n: number
      }
    ).n
    return this.sidechains > 0
  }

  /** Opens (creating when missing) the history tables in the database at `path`. */
  static async open(path: string): Promise<HistoryStore> {
    mkdirSync(dirname(path), {recursive: true, mode: 0o700})
    privateFiles(path)
    const db = openSqlite(path)
    await walMode(db)
    db.pragma('synchronous = NORMAL')
    db.pragma('busy_timeout = 5000')
    // A rescan writes many index pages: a 64 MB page cache keeps them in memory between commits
    // (a staged rescan's merge raises it for its transaction, see `mergeScratch`). No helper
    // threads for CREATE INDEX: on two shared cores they made the merge's index builds slower
    // (0.94-1.19 s without, 1.57-1.61 s with at 1 GB; 156-221 ms against 248-288 ms at 200 MB).
    db.pragma(`cache_size = ${CACHE_KB}`)
    if (!schemaCurrent(db)) {
      migrate(db)
      // A snapshot kept while a trigger was missing may not mirror the cursors: dropped with it.
      db.transaction(() => {
        db.exec(SCHEMA)
        addMaxTs(db)
        db.exec('DROP INDEX IF EXISTS history_ts')
        db.exec('DELETE FROM history_cursor_snapshot')
      }).immediate()
    }
    privateFiles(path)
    return new HistoryStore(db)
  }

  /**
   * Every file's cursor, by path: the numbers the unchanged-file check needs. From the snapshot
   * when there is one (one row, two `JSON.parse`s: 8-11 ms for 10 000 files against 20-32 ms for
   * 10 000 rows), else from the table; no cursor object is built until a file changed.
   */
  cursors(): Cursors {
    const snap = this.db
      .prepare('SELECT format, paths, stats FROM history_cursor_snapshot WHERE id = 1')
      .raw()
      .get() as [number, string, string] | undefined
    if (snap && snap[0] === SNAPSHOT_FORMAT) {
      const paths = JSON.parse(snap[1]) as unknown
      const stats = JSON.parse(snap[2]) as unknown
      if (Array.isArray(paths) && Array.isArray(stats) && stats.length === 3 * paths.length)
        return new Cursors(paths as string[], stats as number[], this.db, true)
    }
    const {paths, stats} = this.cursorTable()
    return new Cursors(paths, stats, this.db, false)
  }

  /** Every cursor's path, and inode, size and mtime_ms three numbers a path, from the table. */
  private cursorTable(): {paths: string[]; stats: number[]} {
    const rows = this.db
      .prepare('SELECT path, inode, size, mtime_ms FROM history_files')
      .raw()
      .all() as Array<[string, number, number, number]>
    const paths = new Array<string>(rows.length)
    const stats = new Array<number>(3 * rows.length)
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]
      paths[i] = row[0]
      stats[3 * i] = row[1]
      stats[3 * i + 1] = row[2]
      stats[3 * i + 2] = row[3]
    }
    return {paths, stats}
  }

  /**
   * Writes the cursor snapshot when there is none, from the table read in the same IMMEDIATE
   * transaction: it mirrors the cursors exactly, and the triggers drop it with the next change
   * (JSON numbers round-trip exactly: an mtime of 1732373973123.4567 reads back the same). The
   * paths of `order` (the walk's order) come first, in that order; the other cursors after them.
   */
  saveCursorSnapshot(order: Iterable<string> = []): void {
    this.db
      .transaction(() => {
        if (this.db.prepare('SELECT 1 FROM history_cursor_snapshot').get() !== undefined) return
        const table = this.cursorTable()
        const place = new Map<string, number>()
        for (let i = 0; i < table.paths.length; i++) place.set(table.paths[i], i)
        const paths: string[] = []
        const stats: number[] = []
        const put = (i: number) => {
          paths.push(table.paths[i])
          stats.push(table.stats[3 * i], table.stats[3 * i + 1], table.stats[3 * i + 2])
        }
        for (const path of order) {
          const i = place.get(path)
          if (i === undefined) continue
          put(i)
          place.delete(path)
        }
        for (const i of place.values()) put(i)
        this.db
          .prepare('INSERT INTO history_cursor_snapshot (id, format, paths, stats) VALUES (1, ?, ?, ?)')
          .run(SNAPSHOT_FORMAT, JSON.stringify(paths), JSON.stringify(stats))
      })
      .immediate()
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
    const {id} = this.putCursor.get({
      ...cursor,
      state: stateJson(cursor),
      scannedAt: Date.now(),
      maxTs: maxTime(records),
      reset: reset ? 1 : 0,
    }) as {id: number}
    if (reset) this.deleteFileRows.run(id)
    for (const r of records) {
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
        const changes = this.upsertClaude.run(r, id).changes
        if (changes === 0) result.duplicates++
        else {
          result.rows++
          if (r.sidechain) this.sidechains = (this.sidechains ?? 0) + 1
        }
      } else {
        this.upsertOther.run(r, id)
        result.rows++
      }
    }
    return result
  }

  /**
   * Numbers for files without a cursor, for a staged rescan's rows: far above the highest held,
   * so that a daemon adding files meanwhile (it takes the next numbers) never takes one of them.
   */
  newFileIds(): number {
    const {max} = this.db.prepare('SELECT coalesce(max(id), 0) AS max FROM history_files').get() as {
      max: number
    }
    return max + NEW_ID_GAP
  }

  /** Where a rescan's scratch database goes: beside the log database, named for this process. */
  scratchPath(): string {
    return `${this.db.name}.rescan-${process.pid}`
  }

  /**
   * Removes the scratch files (a rescan's scratch database) of this
   * process and of rescans whose process is gone; those of a rescan still running are kept.
   */
  removeScratchFiles(): void {
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
   * Replaces the rows of every file in the scratch database (see `Scratch`: the one left when the
   * readers are done) with theirs, keeps the rows of files not read (another tool, a deleted
   * session, an unreadable file), applies the `/btw` replay rule and writes the cursors, in one
   * IMMEDIATE transaction. `read`: the rows the readers were given (before their duplicates were
   * dropped).
   */
  mergeScratch(path: string, read: number): ApplyResult {
    const db = this.db
    const result: ApplyResult = {rows: 0, duplicates: 0, replays: 0}
    db.prepare('ATTACH DATABASE ? AS scratch').run(path)
    this.sidechains = undefined
    // The new table and its indexes are written in one transaction: with the 64 MB cache they
    // spilled to the WAL and were read back for the index builds (1 GB of history: a 90 MB table,
    // 60 MB of indexes; the merge took 3.1-3.8 s with 64 MB, 2.6-2.9 s with 256 MB). Pages are
    // allocated as used: a small history costs no more.
    db.pragma(`cache_size = ${MERGE_CACHE_KB}`)
    const rollback = this.enterRollbackJournal()
    try {
      db.transaction(() => {
        // A file numbered before the rescan began keeps its number; a new one got a number far
        // above any held, unless (never seen) another file took it since: then nothing is swapped.
        const clash = db
          .prepare(
            `SELECT s.path FROM scratch.scan_files s JOIN history_files h ON h.id = s.id AND h.path <> s.path LIMIT 1`,
          )
          .get() as {path: string} | undefined
        if (clash) throw new Error(`the history changed during the rescan (${clash.path}): run it again`)
        // Into the empty table, a plain copy of the same layout: SQLite copies the b-tree's
        // records without decoding them (the "transfer optimization"). The sidechain index is
        // made on the empty table (the old table's goes first: an index name is the database's)
        // and copied with the rows, from the scratch's own: building it after would read every
        // row again for the few sidechain ones.
        db.exec(`DROP TABLE IF EXISTS history_next;
          CREATE TABLE history_next (${HISTORY_COLUMNS}) WITHOUT ROWID;
          DROP INDEX IF EXISTS history_side_message;
          ${SIDE_INDEX('history_side_message', 'history_next')}
          INSERT INTO history_next SELECT * FROM scratch.staged;`)
        // Rows kept (`changes` would count a copy replacing another as one more).
        const written = (db.prepare('SELECT COUNT(*) AS n FROM history_next').get() as {n: number}).n
        // The files not read keep their rows (found by file number). A copy just read of the
        // same key stays, unless Claude's rule prefers the kept one.
        db.prepare(
          `INSERT INTO history_next (${COLUMN_NAMES}) SELECT ${COLUMN_NAMES} FROM history_rows
            WHERE file IN (SELECT id FROM history_files WHERE path NOT IN (SELECT path FROM scratch.scan_files))
            ORDER BY key
            ON CONFLICT(key) DO UPDATE SET ${SET_ALL}
            WHERE substr(excluded.key, 1, 1) = 'c' AND ${CLAUDE_BETTER('history_next')}`,
        ).run()
        db.exec(`DROP VIEW history; DROP TABLE history_rows; ALTER TABLE history_next RENAME TO history_rows;
          ${HISTORY_INDEXES} ${HISTORY_VIEW}`)
        // `/btw`: a sidechain row repeating a main-chain row's message.id under another requestId.
        result.replays = db
          .prepare(
            `DELETE FROM history_rows AS s WHERE sidechain = 1 AND message_id IS NOT NULL AND EXISTS (
              SELECT 1 FROM history_rows m WHERE m.key >= 'c:' || s.message_id || ':'
                AND m.key < 'c:' || s.message_id || ';'
                AND m.key = 'c:' || s.message_id || ':' || coalesce(m.request_id, '')
                AND m.sidechain = 0 AND m.key <> s.key)`,
          )
          .run().changes
        // The cursors, with the numbers the rows carry (a file a daemon added meanwhile under
        // another number takes this one: its rows were left out above).
        db.exec(`INSERT INTO history_files (id, ${CURSOR_COLUMNS})
          SELECT id, ${CURSOR_COLUMNS} FROM scratch.scan_files WHERE true
          ON CONFLICT(path) DO UPDATE SET id = excluded.id, ${CURSOR_UPDATE}`)
        result.rows = written - result.replays
        result.duplicates = read - written
      }).immediate()
    } finally {
      db.pragma(`cache_size = ${CACHE_KB}`)
      db.exec('DETACH DATABASE scratch')
      if (rollback) this.leaveRollbackJournal()
    }
    return result
  }

  /**
   * Alone on the database (no daemon, no other connection), a rescan's merge runs in rollback
   * journal mode: the new table's pages are written once, straight into the file (a rollback
   * journal keeps only the pages changed in place), instead of into the WAL and then again by
   * the checkpoint (1 GB of history: 150 MB of table and indexes; the commit took 0.67-0.72 s and
   * 0.07-0.11 s more at close in WAL mode, 0.28-0.31 s this way). FULL sync while it lasts. False
   * when another connection holds the database open (the mode cannot change then): WAL, as
   * always. A kill meanwhile leaves a hot journal, rolled back by the next open, which also sets
   * WAL again (every open does).
   */
  private enterRollbackJournal(): boolean {
    try {
      if (this.db.pragma('main.journal_mode = DELETE', {simple: true}) !== 'delete') return false
    } catch (error) {
      if (isBusy(error)) return false
      throw error
    }
    this.db.pragma('synchronous = FULL')
    return true
  }

  /** Back to WAL after the merge (if another process opened meanwhile, its open set WAL already). */
  private leaveRollbackJournal(): void {
    try {
      this.db.pragma('main.journal_mode = WAL')
    } catch (error) {
      if (!isBusy(error)) throw error
    }
    this.db.pragma('synchronous = NORMAL')
  }

  close(): void {
    if (this.db.open) this.db.close()
  }
}

/** The page cache (negative: KiB) of the history store's connection, and during a rescan's merge. */
const CACHE_KB = -65536
const MERGE_CACHE_KB = -262144

/** How far above the highest file number a staged rescan numbers new files. */
const NEW_ID_GAP = 100_000

const stateJson = (cursor: FileCursor): string | null =>
  cursor.state === null || cursor.state === undefined ? null : JSON.stringify(cursor.state)

/**
 * A full rescan (or a first scan) is not written into `history` row by row: each of its rows
 * would be an upsert into a b-tree as large as the history, in the log database, with its
 * indexes. Files are read into a scratch database instead (`Scratch`: an unjournaled file beside
 * the log database, private to this rescan), keyed like `history`: each file's rows go in as soon
 * as it is read (no record outlives its file for long: at 1 GB, holding 40 000 rows to sort them
 * cost 0.65 s more garbage collection than it saved), upserted by the scan-order rule, so that the
 * copies of a key are decided as they come. With two readers (the main thread and a worker),
 * both write into the one scratch, each through its own connection, taking turns under a lock
 * they share (`shared`): a reader that finds the lock taken keeps its rows and reads on, and
 * writes them with its next file (it waits only with `waitRows()` rows held). Each turn is one
 * transaction (after the other's, a connection reads the pages it changed again: about 0.4 us a
 * row more than one connection's).
 * (Before, the worker wrote chunks the main thread merged: every one of its rows was written
 * twice, 1.2 s of the main thread's time at 1 GB.) `HistoryStore.mergeScratch` then builds the
 * new `history` table from the scratch (a page-by-page copy), keeps the rows of files not read,
 * builds the indexes by sorting, and swaps it in with the cursors in one transaction. A kill
 * before that transaction commits leaves the database exactly as it was: an interrupted full
 * rescan changes nothing (its scratch file is removed by the next one).
 */
export class Scratch {
  private readonly insertFile: BetterSqlite3.Statement
  private readonly upsert: Inserter
  /** The write lock the readers share (`shared[1]`; 1: taken), when there are two. */
  private readonly lock: Int32Array | undefined
  /** Files read and not written yet (the lock was taken), with their rows' count. */
  private pending: Array<{cursor: FileCursor; records: readonly HistoryRecord[]; order: number}> = []
  private pendingRows = 0
  private readonly waitAt = waitRows()
  /** Rows given (before dedup). */
  added = 0

  private constructor(
    private readonly db: Db,
    readonly path: string,
    shared?: SharedArrayBuffer,
  ) {
    this.lock = shared && new Int32Array(shared, 4, 1)
    this.insertFile = db.prepare(
      `INSERT INTO scan_files (id, ${CURSOR_COLUMNS}, ord) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    this.upsert = new Inserter(
      db,
      (columns, values) => `INSERT INTO staged (${columns}) VALUES ${values}
        ON CONFLICT(key) DO UPDATE SET ${setAll(columns)} WHERE ${SCAN_ORDER_RULE('staged', SCRATCH_ORD)}`,
    )
  }

  /**
   * Creates the scratch database at `path` (replacing any file there), mode 0600, with its tables.
   * `shared`: the readers' shared state, when another reader writes it too (see `open`).
   */
  static create(path: string, shared?: SharedArrayBuffer): Scratch {
    rmSync(path, {force: true})
    closeSync(openSync(path, 'wx', 0o600))
    const db = Scratch.connect(path)
    db.exec(`CREATE TABLE scan_files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,
        tool TEXT NOT NULL, inode INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ms REAL NOT NULL,
        offset INTEGER NOT NULL, state TEXT, scanned_at INTEGER NOT NULL, max_ts INTEGER,
        ord INTEGER NOT NULL);
      CREATE TABLE staged (${HISTORY_COLUMNS}) WITHOUT ROWID;
      ${SIDE_INDEX('staged_side_message', 'staged')}`)
    return new Scratch(db, path, shared)
  }

  /** The second reader's connection to a scratch database `create` made. */
  static open(path: string, shared: SharedArrayBuffer): Scratch {
    return new Scratch(Scratch.connect(path, true), path, shared)
  }

  private static connect(path: string, mustExist = false): Db {
    const db = openSqlite(path, {fileMustExist: mustExist})
    // Scratch: nothing to recover after a crash, so no journal and no fsync. better-sqlite3
    // opens in defensive mode, which refuses `journal_mode = OFF` (the scratch then kept a
    // rollback journal: 28 MB written at 1 GB); unsafe mode lifts that for this one pragma.
    db.unsafeMode(true)
    const mode = db.pragma('journal_mode = OFF', {simple: true})
    db.unsafeMode(false)
    if (mode !== 'off') throw new Error(`a scratch database kept journal mode ${String(mode)}`)
    db.pragma('synchronous = OFF')
    db.pragma(`cache_size = ${SCRATCH_CACHE_KB}`)
    return db
  }

  /**
   * Adds a file read whole: its cursor (with its number, `id`), its place in the scan order and
   * its rows, in file order, each upserted by the scan-order rule (a later copy of a key in the
   * same file is later in the scan). Alone, in a transaction `commit` ends (no commit per file,
   * which would write the pages the file touched every time); with another reader, at once if
   * the write lock is free, else with a later file.
   */
  add(cursor: FileCursor, records: readonly HistoryRecord[], order: number): void {
    if (cursor.id === undefined) throw new Error(`no file number for ${cursor.path}`)
    this.added += records.length
    if (!this.lock) {
      if (!this.db.inTransaction) this.db.exec('BEGIN')
      this.write(cursor, records, order)
      return
    }
    this.pending.push({cursor, records, order})
    this.pendingRows += records.length
    this.flush(this.pendingRows >= this.waitAt)
  }

  /** Writes what was added (the reader's last file read). */
  commit(): void {
    if (this.lock) this.flush(true)
    else if (this.db.inTransaction) this.db.exec('COMMIT')
  }

  /** Writes the pending files in one transaction, if the lock is free (`wait`: once it is). */
  private flush(wait: boolean): void {
    const lock = this.lock!
    if (this.pending.length === 0) return
    if (Atomics.compareExchange(lock, 0, 0, 1) !== 0) {
      if (!wait) return
      const deadline = Date.now() + LOCK_TIMEOUT_MS
      while (Atomics.compareExchange(lock, 0, 0, 1) !== 0) {
        if (Date.now() > deadline)
          throw new Error('the other history reader held the scratch database too long')
        Atomics.wait(lock, 0, 1, 20)
      }
    }
    try {
      this.db.transaction(() => {
        for (const {cursor, records, order} of this.pending) this.write(cursor, records, order)
      })()
    } finally {
      Atomics.store(lock, 0, 0)
      Atomics.notify(lock, 0)
    }
    this.pending = []
    this.pendingRows = 0
  }

  private write(cursor: FileCursor, records: readonly HistoryRecord[], order: number): void {
    this.insertFile.run(
      cursor.id,
      cursor.path,
      cursor.tool,
      cursor.inode,
      cursor.size,
      cursor.mtimeMs,
      cursor.offset,
      stateJson(cursor),
      Date.now(),
      maxTime(records),
      order,
    )
    for (const r of records) this.upsert.add(r, cursor.id!)
    this.upsert.flush()
  }

  /** Closes the database; what was not written is dropped (an interrupted rescan). */
  close(): void {
    if (this.db.open) this.db.close()
  }
}

/**
 * Rows a reader holds, the write lock taken, before it waits for it. Tests lower it
 * (`GWCTL_HISTORY_WAIT_ROWS`) to make every file wait its turn.
 */
const waitRows = (): number => Number(process.env.GWCTL_HISTORY_WAIT_ROWS) || 20_000

/** How long a reader waits for the write lock before it gives up (the other reader is stuck). */
const LOCK_TIMEOUT_MS = 60_000

/** A file's place in the scan, in a scratch database (its `scan_files` holds every file it has rows of). */
const SCRATCH_ORD = (file: string) => `(SELECT ord FROM scan_files WHERE id = ${file})`

/** A scratch connection's page cache (KiB, negative): 64 MB. */
const SCRATCH_CACHE_KB = -65536
