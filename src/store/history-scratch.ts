/**
 * The staged rescan's scratch database (see `Scratch`).
 */
import {closeSync, openSync, rmSync} from 'node:fs'
import type BetterSqlite3 from 'better-sqlite3'
import type {HistoryRecord} from './history-rows.js'
import {openSqlite} from './sqlite.js'
import type {Db} from './history-schema.js'
import {
  FILE_INDEX,
  HISTORY_COLUMNS,
  KEYED_COLUMNS,
  KEY_INDEX,
  SET_ALL,
  SIDE_INDEX,
  setAll,
  SCAN_ORDER_RULE,
} from './history-schema.js'
import type {FileCursor} from './history-insert.js'
import {CURSOR_COLUMNS, MERGE_CACHE_KB, maxTime, Inserter, stateJson} from './history-insert.js'

/**
 * A full rescan (or a first scan) is not written into `history` row by row: each of its rows
 * would be an upsert into a b-tree as large as the history, in the log database, with its
 * indexes. Files are read into a scratch database instead (`Scratch`: an unjournaled file beside
 * the log database, private to this rescan), keyed like `history`: each file's rows go in as soon
 * as it is read (no record outlives its file for long: at 1 GB, holding 40 000 rows to sort them
 * cost 0.65 s more garbage collection than it saved), upserted by the scan-order rule, so that the
 * copies of a key are decided as they come. Two readers (of a rescan's pool: the main thread
 * and worker threads, see stage.ts) write into one scratch, each through its own connection,
 * taking turns under a lock they share (`lock`): a reader that finds the lock taken keeps its rows
 * and reads on, and writes them with its next file (it waits only with `waitRows()` rows held).
 * Each turn is one transaction (after the other's, a connection reads the pages it changed again:
 * about 0.4 us a row more than one connection's). More readers write more scratches (all 16
 * readers of a 16-core machine taking turns at one scratch were bound by its turns: 2.35 s of
 * reading at 1 GB against 0.86 s with eight). `HistoryStore.mergeScratch` builds the new
 * `history` table from them, keeps the rows of files not read, and swaps it in with the cursors in
 * one transaction: alone on the log database, it merges several scratches straight into the new
 * table in key order and builds its file index there (each row written once more, not twice);
 * beside another connection (whose writes wait for the lock), `finish` first merges them into
 * one and builds its file index outside the lock, and the transaction copies that page by page.
 * (Before, the worker wrote chunks the main thread merged: every one of its rows was written
 * twice, 1.2 s of the main thread's time at 1 GB.) A kill before that transaction commits leaves the database exactly
 * as it was: an interrupted full rescan changes nothing (its scratch files are removed by the
 * next one).
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
    lock?: ScratchLock,
  ) {
    this.lock = lock && new Int32Array(lock.shared, 4 * lock.slot, 1)
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
   * `lock`: where the write lock is, when other readers write it too (see `open`).
   */
  static create(path: string, lock?: ScratchLock, cacheKb = SCRATCH_CACHE_KB, merged = false): Scratch {
    return new Scratch(Scratch.make(path, cacheKb, merged), path, lock)
  }

  /** Another reader's connection to a scratch database `create` made. */
  static open(path: string, lock?: ScratchLock, cacheKb = SCRATCH_CACHE_KB): Scratch {
    return new Scratch(Scratch.connect(path, cacheKb, true), path, lock)
  }

  /**
   * A new scratch database with its tables (the file index comes with `finish`). `merged`: one of
   * several scratches, merged by one statement that reads each in key order: keyed by `key`
   * (WITHOUT ROWID), read along its primary key. Else (the only scratch, or `finish`'s) the log
   * database's layout, a rowid table with a unique key index, which the swap copies page by page
   * (SQLite's transfer needs the same layout and indexes).
   */
  private static make(path: string, cacheKb: number, merged: boolean): Db {
    rmSync(path, {force: true})
    closeSync(openSync(path, 'wx', 0o600))
    const db = Scratch.connect(path, cacheKb)
    db.exec(`CREATE TABLE scan_files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,
        tool TEXT NOT NULL, inode INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ms REAL NOT NULL,
        offset INTEGER NOT NULL, state TEXT, scanned_at INTEGER NOT NULL, max_ts INTEGER,
        ord INTEGER NOT NULL);
      ${merged ? `CREATE TABLE staged (${KEYED_COLUMNS}) WITHOUT ROWID;` : `CREATE TABLE staged (${HISTORY_COLUMNS});`}
      ${merged ? '' : KEY_INDEX('staged_key', 'staged')}
      ${SIDE_INDEX('staged_side_message', 'staged')}`)
    return db
  }

  /**
   * Makes the one scratch database the log database's merge copies (`HistoryStore.mergeScratch`)
   * from the scratch databases of a rescan's readers, all written and closed, and returns its
   * path: the only one as it is, else `into`, which gets every row of them (see
   * {@link ScratchMerger}). Either way the scratch then gets the index on `file` that the rows
   * table has, built by sorting: the merge copies it page by page with the rows, and the log
   * database's write lock is not held while it is built (a running gateway's log writes wait for
   * that lock).
   */
  static finish(paths: readonly string[], into: string, mark?: (phase: string) => void): string {
    if (paths.length === 1) {
      const db = Scratch.connect(paths[0], MERGE_CACHE_KB, true)
      try {
        mark?.('merge')
        db.exec(FILE_INDEX('staged_file', 'staged'))
        mark?.('index')
      } finally {
        db.close()
      }
      return paths[0]
    }
    const merger = new ScratchMerger(into)
    try {
      merger.add(paths, false)
      mark?.('merge')
      merger.index()
      mark?.('index')
    } finally {
      merger.close()
    }
    return into
  }

  /** @internal A new scratch database (see `make`), for {@link ScratchMerger}. */
  static makeMerged(path: string, cacheKb = MERGE_CACHE_KB): Db {
    return Scratch.make(path, cacheKb, false)
  }

  private static connect(path: string, cacheKb: number, mustExist = false): Db {
    const db = openSqlite(path, {fileMustExist: mustExist})
    // Scratch: nothing to recover after a crash, so no journal and no fsync. better-sqlite3
    // opens in defensive mode, which refuses `journal_mode = OFF` (the scratch then kept a
    // rollback journal: 28 MB written at 1 GB); unsafe mode lifts that for this one pragma.
    db.unsafeMode(true)
    const mode = db.pragma('journal_mode = OFF', {simple: true})
    db.unsafeMode(false)
    if (mode !== 'off') throw new Error(`a scratch database kept journal mode ${String(mode)}`)
    db.pragma('synchronous = OFF')
    db.pragma(`cache_size = ${cacheKb}`)
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
export const waitRows = (): number => Number(process.env.GWCTL_HISTORY_WAIT_ROWS) || 20_000

/** How long a reader waits for the write lock before it gives up (the other reader is stuck). */
export const LOCK_TIMEOUT_MS = 60_000

/** A file's place in the scan, in a scratch database (its `scan_files` holds every file it has rows of). */
export const SCRATCH_ORD = (file: string) => `(SELECT ord FROM scan_files WHERE id = ${file})`

/** A scratch connection's page cache (KiB, negative): 64 MB, shared out when there are many readers. */
export const SCRATCH_CACHE_KB = -65536

/** Where a scratch's write lock is: `Int32Array(shared)[slot]` (1: taken). */
export interface ScratchLock {
  shared: SharedArrayBuffer
  slot: number
}

/**
 * The page cache of the scratch that a rescan's generations are merged into while the readers
 * read (KiB, negative): 16 MB, not the 256 MB of a merge after them (`MERGE_CACHE_KB`, set again
 * by `ScratchMerger.widen` when they are done), whose readers' caches are gone by then. At 1 GB of
 * history (8 readers, 8 generations, 2 cores) the merges beside the reading took 1.48 CPU-s with
 * 16 MB, 1.47 with 32, 1.57-1.96 with 64; the peak RSS (a trace) 420, 446 and 473 MB, against 410
 * with the merge after the reading.
 */
export const MERGER_CACHE_KB = -16384

/** Scratch databases `finish` merges at most (SQLite attaches at most 10 databases). */
export const MAX_MERGED = 8

/**
 * The one scratch database that the scratches of a rescan's readers are merged into (outside the
 * log database's write lock), in the log database's layout, which the swap then copies page by
 * page (`HistoryStore.mergeScratch`). `add` merges scratches (written and closed) in one statement
 * that reads each in key order (SQLite merges sorted inputs without a sort) and writes the rows
 * by the scan-order rule, each key once: every copy of a key from one file is in one scratch,
 * decided already, and the rule does not depend on the order in which copies meet (Codex and
 * Gemini: the later file; Claude: the better copy, then the earlier file), so that the scratches
 * of a rescan's generations (stage.ts) are merged one generation at a time, while the readers
 * read the next, into the same rows as in one merge. A new key is appended (the next rowid): the
 * rows kept are numbered 1 to n, `rows` reads n without counting them.
 */
export class ScratchMerger {
  private readonly db: Db

  constructor(readonly path: string) {
    this.db = Scratch.makeMerged(path, MERGER_CACHE_KB)
  }

  /** Merges the scratch databases at `paths` into this one (`remove`: and deletes their files). */
  add(paths: readonly string[], remove = true): void {
    if (paths.length > MAX_MERGED) throw new Error(`at most ${MAX_MERGED} scratch databases merge at once`)
    const db = this.db
    paths.forEach((p, i) => db.prepare(`ATTACH DATABASE ? AS s${i}`).run(p))
    try {
      const arms = paths.map((_, i) => `SELECT * FROM s${i}.staged`).join(' UNION ALL ')
      db.transaction(() => {
        db.exec(paths.map((_, i) => `INSERT INTO scan_files SELECT * FROM s${i}.scan_files;`).join('\n'))
        // ORDER BY 1: each arm is read along its primary key (no sorter), merged; a WHERE after
        // the compound's ORDER BY is not needed for the upsert's ON (no join to confuse it with)
        db.exec(`INSERT INTO staged ${arms} ORDER BY 1
          ON CONFLICT(key) DO UPDATE SET ${SET_ALL} WHERE ${SCAN_ORDER_RULE('staged', SCRATCH_ORD)}`)
      })()
    } finally {
      paths.forEach((_, i) => db.exec(`DETACH DATABASE s${i}`))
    }
    if (remove) for (const p of paths) rmSync(p, {force: true})
  }

  /**
   * The readers are done: the page cache of a merge after them (`MERGE_CACHE_KB`) for the last
   * merge and the file index (whose sort spills past the cache: with 16 MB it took 356 CPU ms at
   * 1 GB against 265-280).
   */
  widen(): void {
    this.db.pragma(`cache_size = ${MERGE_CACHE_KB}`)
  }

  /** Builds the index on `file` (by sorting: kept up row by row, it costs more). */
  index(): void {
    this.db.exec(FILE_INDEX('staged_file', 'staged'))
  }

  close(): void {
    if (this.db.open) this.db.close()
  }
}
