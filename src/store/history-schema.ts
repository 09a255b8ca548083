/**
 * The history tables in the log database: the stored columns, the schema with its indexes,
 * view and snapshot triggers, the upsert rules, and the migration of older layouts. Split out of
 * history-store.ts (see there for the tables' purpose).
 */
import type BetterSqlite3 from 'better-sqlite3'

/**
 * The `history` table's stored columns (also the staged rescan's scratch table), in order. Rows
 * name their file by number (`history_files.id`), not by path; `message_id` is kept only on
 * Claude sidechain rows (the `/btw` replay rule): a main-chain row's message id is in its key
 * (`c:<message.id>:<requestId>`). Zeros and NULLs take no bytes in a SQLite record.
 */
export const STORED = [
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
export const BASE_COLUMNS = 10

/**
 * The rows' table, `history_rows` (also the scratch databases' `staged`): a rowid table, its key
 * unique by {@link KEY_INDEX}. (It was a WITHOUT ROWID table keyed by `key` until 26 November
 * 2026: every other index then held the key, 60 bytes in a real Claude Code log, where it now
 * holds an 8-byte rowid; a rescan's file index took 0.99 us a row to build on real-length rows,
 * now 0.55, its merge 2.14 us, now 1.93. See `convertToRowid`.)
 */
export const HISTORY_COLUMNS = `
  key TEXT NOT NULL,
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

/**
 * The same columns keyed by `key` (WITHOUT ROWID): the table of a scratch that is merged with
 * others (`Scratch`), which the merge reads in key order along its primary key (a rowid table
 * would be read through its key index, a lookup a row).
 */
export const KEYED_COLUMNS = HISTORY_COLUMNS.replace('key TEXT NOT NULL,', 'key TEXT PRIMARY KEY,')

/** Stored column names in table order, for positional inserts and `INSERT ... SELECT`. */
export const COLUMN_NAMES = STORED.join(', ')

/** The sum `total_tokens` holds, for upserts (`excluded.` of a generated column is not relied on). */
export const TOTAL = (t: string) =>
  `(${t}.input_tokens + ${t}.output_tokens + ${t}.cache_read_tokens + ${t}.cache_creation_tokens)`

/** The rows' key, unique: the upserts' conflict target, and the `/btw` rule's lookups by key range. */
export const KEY_INDEX = (name: string, table: string) =>
  `CREATE UNIQUE INDEX IF NOT EXISTS ${name} ON ${table} (key);`

/**
 * The sidechain rows' message ids (the `/btw` rule), as a partial index: the same definition on
 * the scratch table lets a rescan's merge copy it with the rows (see `mergeScratch`).
 */
export const SIDE_INDEX = (name: string, table: string) =>
  `CREATE INDEX IF NOT EXISTS ${name} ON ${table} (message_id) WHERE sidechain = 1;`

/** The rows of each file (a rescan's scratch builds the same index, copied with its rows). */
export const FILE_INDEX = (name: string, table: string) =>
  `CREATE INDEX IF NOT EXISTS ${name} ON ${table} (file);`

/**
 * No index on `ts`: a time filter (`--since`) takes the files whose `history_files.max_ts` is in
 * range, then their rows by `history_file` (`historySince` in usage-query.ts). Sorting 815 000
 * rows by time was most of a 1 GB rescan's index builds (0.92 of 1.34 s).
 */
export const HISTORY_INDEXES = `
${KEY_INDEX('history_key', 'history_rows')}
${FILE_INDEX('history_file', 'history_rows')}
${SIDE_INDEX('history_side_message', 'history_rows')}
`

/** What the view's text holds once the `<synthetic>` rows of earlier scans are gone. */
export const SYNTHETIC_MARK = 'no <synthetic> rows'

/**
 * What queries read: `history`, the rows with `tool` (from the key's prefix) and `total_tokens`
 * computed, not stored (a generated column would stop SQLite copying a table page by page). Its
 * comment marks a database whose Claude rows hold no `<synthetic>` line (the parser skips them;
 * {@link SYNTHETIC_MARK}: an earlier database's are deleted once, when the view is made again).
 */
export const HISTORY_VIEW = `CREATE VIEW IF NOT EXISTS history AS SELECT /* ${SYNTHETIC_MARK} */ ${STORED.join(', ')},
  CASE substr(key, 1, 1) WHEN 'c' THEN 'claude-code' WHEN 'x' THEN 'codex' WHEN 'o' THEN 'opencode'
    WHEN 'q' THEN 'qwen-code' ELSE 'gemini-cli' END AS tool,
  input_tokens + output_tokens + cache_read_tokens + cache_creation_tokens AS total_tokens
  FROM history_rows;`

/** Any change to a cursor drops the snapshot in the same transaction (one trigger each). */
export const SNAPSHOT_TRIGGERS = ['insert', 'update', 'delete'] as const

/** The snapshot's layout: a row of another format is not read (the table is). */
export const SNAPSHOT_FORMAT = 1

export const SCHEMA = `
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
);
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
export const SET_ALL = STORED.filter((c) => c !== 'key')
  .map((c) => `${c} = excluded.${c}`)
  .join(', ')

/** A row replacing another takes every stored column from it: unbound ones are their defaults. */
export function setAll(columns: string): string {
  const bound = new Set(columns.split(', '))
  return STORED.filter((c) => c !== 'key')
    .map((c) => `${c} = ${bound.has(c) ? `excluded.${c}` : c === 'message_id' ? 'NULL' : '0'}`)
    .join(', ')
}

/** Claude's rule between two copies of a key: the non-sidechain copy, then the larger one. */
export const CLAUDE_BETTER = (table: string) => `(excluded.sidechain < ${table}.sidechain
  OR (excluded.sidechain = ${table}.sidechain AND ${TOTAL('excluded')} > ${TOTAL(table)}))`

/**
 * The rule between two copies of a key read by one rescan, as one reader reading the files in scan
 * order would apply it (`ord(file)`: SQL for the place in the scan of the file numbered `file`):
 * Codex and Gemini keep the later copy, Claude the non-sidechain one, then the larger, then the
 * earlier. An upsert's WHERE: true when `excluded` replaces the row held in `table`. Two copies
 * from one file (one place in the scan) come from one reader, which upserts a file's rows in file
 * order: there `excluded` is the later one.
 */
export const SCAN_ORDER_RULE = (table: string, ord: (file: string) => string) => `CASE
  WHEN substr(excluded.key, 1, 1) <> 'c' THEN ${ord('excluded.file')} >= ${ord(`${table}.file`)}
  ELSE ${CLAUDE_BETTER(table)} OR (excluded.sidechain = ${table}.sidechain
    AND ${TOTAL('excluded')} = ${TOTAL(table)} AND ${ord('excluded.file')} < ${ord(`${table}.file`)}) END`

/**
 * True when every table, view, index and trigger of this layout is there (one query): the usual
 * open, which then runs neither the migration checks nor the schema's statements. An earlier
 * layout lacks `history_rows` (and has a `history` table where the view goes), or the snapshot.
 */
/**
 * Claude Code's `<synthetic>` lines (written for a local error or an interruption: no API call)
 * that earlier scans kept as rows of model null and no tokens: no request, so deleted (a range of
 * the key, the Claude rows only). In the open's IMMEDIATE transaction, with the view made again.
 */
export const DELETE_SYNTHETIC = `DELETE FROM history_rows WHERE key >= 'c:' AND key < 'c;' AND model IS NULL`

export function schemaCurrent(db: Db): boolean {
  const {n, maxTs, tsIndex} = db
    .prepare(
      `SELECT (SELECT count(*) FROM sqlite_master WHERE (type = 'table'
          AND name IN ('history_files', 'history_rows', 'history_cursor_snapshot'))
        OR (type = 'view' AND name = 'history' AND sql LIKE '%qwen-code%' AND sql LIKE '%${SYNTHETIC_MARK}%')
        OR (type = 'index' AND name IN ('history_key', 'history_file', 'history_side_message'))
        OR (type = 'trigger' AND name IN (${SNAPSHOT_TRIGGERS.map((t) => `'history_files_${t}'`).join(', ')}))) AS n,
        (SELECT count(*) FROM pragma_table_info('history_files') WHERE name = 'max_ts') AS maxTs,
        (SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'history_ts') AS tsIndex`,
    )
    .get() as {n: number; maxTs: number; tsIndex: number}
  return n === 7 + SNAPSHOT_TRIGGERS.length && maxTs === 1 && tsIndex === 0
}

/**
 * The rows of the layout before (a WITHOUT ROWID table keyed by `key`) copied into today's (a
 * rowid table with a unique index on the key), in key order, cursors kept: no file is read again.
 * In the open's IMMEDIATE transaction (a kill leaves the old table, converted by the next open);
 * the view, dropped with the table, and the indexes are made again by the schema's statements
 * that follow. 815 200 rows (1 GB of generated history): 2.2 CPU-s, once (8.7 s wall on two shared
 * cores at load 15; the old table's pages go to the free list, reused by the next rescan).
 */
export function convertToRowid(db: Db): void {
  const old = db
    .prepare(
      `SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'history_rows' AND sql LIKE '%WITHOUT ROWID%'`,
    )
    .get()
  if (!old) return
  db.exec(`DROP VIEW IF EXISTS history;
    DROP TABLE IF EXISTS history_next;
    CREATE TABLE history_next (${HISTORY_COLUMNS});
    INSERT INTO history_next (${COLUMN_NAMES}) SELECT ${COLUMN_NAMES} FROM history_rows ORDER BY key;
    DROP TABLE history_rows;
    ALTER TABLE history_next RENAME TO history_rows;`)
}

/**
 * The layout before each file's `max_ts` (and with an index on `ts`): the column is added and
 * filled from the rows, the index dropped. In the open's IMMEDIATE transaction.
 */
export function addMaxTs(db: Db): void {
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
export function migrate(db: Db): void {
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

export type Db = BetterSqlite3.Database
