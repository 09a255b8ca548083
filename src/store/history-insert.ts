/**
 * Writing history rows: the per-file scan cursors and the inserter that binds only what a row
 * holds, shared by the history store and a rescan's scratch database.
 */
import type BetterSqlite3 from 'better-sqlite3'
import type {AgentTool} from './history-rows.js'
import type {HistoryRecord} from './history-rows.js'
import type {Db} from './history-schema.js'
import {STORED, BASE_COLUMNS} from './history-schema.js'

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

/** The cursor columns written by a scan (`id` aside). */
export const CURSOR_COLUMNS = 'path, tool, inode, size, mtime_ms, offset, state, scanned_at, max_ts'
export const CURSOR_UPDATE_BASE = `tool = excluded.tool, inode = excluded.inode, size = excluded.size,
  mtime_ms = excluded.mtime_ms, offset = excluded.offset, state = excluded.state, scanned_at = excluded.scanned_at`
/** A cursor replacing another whole (a file read whole: its rows are only the new ones). */
export const CURSOR_UPDATE = `${CURSOR_UPDATE_BASE}, max_ts = excluded.max_ts`

/** The latest time of `records` (null for none). */
export function maxTime(records: readonly HistoryRecord[]): number | null {
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
export class Inserter {
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
export const SHARED_COLUMNS: readonly string[] = ['file', 'session', 'project', 'model']
export const BULK = 64

/** Rows per statement of a bulk insert. */
export const MANY_ROWS = 32

/** The page cache (negative: KiB) of the history store's connection, and during a rescan's merge. */
export const CACHE_KB = -65536
export const MERGE_CACHE_KB = -262144

/** How far above the highest file number a staged rescan numbers new files. */
export const NEW_ID_GAP = 100_000

export const stateJson = (cursor: FileCursor): string | null =>
  cursor.state === null || cursor.state === undefined ? null : JSON.stringify(cursor.state)
