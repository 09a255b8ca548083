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
import {mkdirSync, readdirSync, rmSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'
import type BetterSqlite3 from 'better-sqlite3'
import {processAlive} from '../core/process.js'
import type {HistoryRecord} from './history-rows.js'
import {isBusy, openSqlite, privateFiles, walMode} from './sqlite.js'
import type {Db} from './history-schema.js'
import {
  HISTORY_COLUMNS,
  COLUMN_NAMES,
  KEY_INDEX,
  SIDE_INDEX,
  FILE_INDEX,
  HISTORY_VIEW,
  SNAPSHOT_FORMAT,
  SCHEMA,
  SET_ALL,
  setAll,
  CLAUDE_BETTER,
  SCAN_ORDER_RULE,
  schemaCurrent,
  addMaxTs,
  convertToRowid,
  migrate,
  SYNTHETIC_MARK,
  DELETE_SYNTHETIC,
} from './history-schema.js'
import type {FileCursor, ApplyResult} from './history-insert.js'
import {
  Cursors,
  CURSOR_COLUMNS,
  CURSOR_UPDATE_BASE,
  CURSOR_UPDATE,
  maxTime,
  Inserter,
  CACHE_KB,
  MERGE_CACHE_KB,
  NEW_ID_GAP,
  stateJson,
} from './history-insert.js'

/** Scratch databases a rescan's merge attaches at most (SQLite attaches at most 10). */
const MAX_ATTACHED = 8

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
        // a view of an earlier tool list (without OpenCode and Qwen Code), or of a database that
        // may hold `<synthetic>` rows (deleted now), is made again
        if (
          db
            .prepare(
              `SELECT 1 FROM sqlite_master WHERE name = 'history' AND type = 'view'
                AND (sql NOT LIKE '%qwen-code%' OR sql NOT LIKE '%${SYNTHETIC_MARK}%')`,
            )
            .get()
        ) {
          db.exec('DROP VIEW history')
          db.exec(DELETE_SYNTHETIC)
        }
        convertToRowid(db)
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
   * Replaces the rows of every file in the scratch databases (see `Scratch`: those of the readers,
   * all written and closed) with theirs, keeps the rows of files not read (another tool, a deleted
   * session, an unreadable file), applies the `/btw` replay rule and writes the cursors, in one
   * IMMEDIATE transaction. `read`: the rows the readers were given (before their duplicates were
   * dropped). `finish` makes one scratch of them with its file index (`Scratch.finish`), outside
   * the write lock; `mark` records the phases (see `phaseMarks` in scan.ts).
   *
   * Alone on the database (rollback-journal mode, see `enterRollbackJournal`), several scratches
   * are merged straight into the new table, its file index built after, in that one transaction:
   * every row is written once into the log database instead of twice (into a merged scratch, then
   * copied). With another connection open (a daemon, whose log writes wait for the write lock),
   * `finish` merges them first, outside the lock, and the transaction copies the result.
   */
  mergeScratch(
    paths: readonly string[],
    read: number,
    finish: (paths: readonly string[]) => string,
    mark?: (phase: string) => void,
  ): ApplyResult {
    const db = this.db
    const result: ApplyResult = {rows: 0, duplicates: 0, replays: 0}
    const rollback = this.enterRollbackJournal()
    const direct = rollback && paths.length > 1
    const attached: string[] = []
    try {
      if (direct) {
        if (paths.length > MAX_ATTACHED)
          throw new Error(`at most ${MAX_ATTACHED} scratch databases merge at once`)
        paths.forEach((p, i) => {
          db.prepare(`ATTACH DATABASE ? AS s${i}`).run(p)
          attached.push(`s${i}`)
        })
      } else {
        db.prepare('ATTACH DATABASE ? AS scratch').run(finish(paths))
        attached.push('scratch')
      }
      this.sidechains = undefined
      // The new table and its indexes are written in one transaction: with the 64 MB cache they
      // spilled to the WAL and were read back (1 GB of history: a 90 MB table, 60 MB of indexes;
      // the merge took 3.1-3.8 s with 64 MB, 2.6-2.9 s with 256 MB). Pages are allocated as used:
      // a small history costs no more.
      db.pragma(`cache_size = ${MERGE_CACHE_KB}`)
      // Rows the readers kept (`changes` would count a copy replacing another as one more); a
      // scratch is this rescan's alone: counted before the write lock is taken.
      let written = direct
        ? 0
        : (db.prepare('SELECT COUNT(*) AS n FROM scratch.staged').get() as {n: number}).n
      db.transaction(() => {
        // The files read, with their places in the scan (`temp.scan_files`: the scan-order rule's).
        const files = direct ? 'temp.scan_files' : 'scratch.scan_files'
        if (direct)
          db.exec(`DROP TABLE IF EXISTS temp.scan_files;
            CREATE TEMP TABLE scan_files (id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE,
              tool TEXT NOT NULL, inode INTEGER NOT NULL, size INTEGER NOT NULL, mtime_ms REAL NOT NULL,
              offset INTEGER NOT NULL, state TEXT, scanned_at INTEGER NOT NULL, max_ts INTEGER,
              ord INTEGER NOT NULL);
            ${attached.map((s) => `INSERT INTO temp.scan_files SELECT * FROM ${s}.scan_files;`).join('\n')}`)
        // A file numbered before the rescan began keeps its number; a new one got a number far
        // above any held, unless (never seen) another file took it since: then nothing is swapped.
        const clash = db
          .prepare(
            `SELECT s.path FROM ${files} s JOIN history_files h ON h.id = s.id AND h.path <> s.path LIMIT 1`,
          )
          .get() as {path: string} | undefined
        if (clash) throw new Error(`the history changed during the rescan (${clash.path}): run it again`)
        // An index name is the database's: the old table's indexes go first.
        db.exec(`DROP TABLE IF EXISTS history_next;
          DROP INDEX IF EXISTS history_key;
          DROP INDEX IF EXISTS history_side_message;
          DROP INDEX IF EXISTS history_file;
          CREATE TABLE history_next (${HISTORY_COLUMNS});
          ${KEY_INDEX('history_key', 'history_next')}
          ${SIDE_INDEX('history_side_message', 'history_next')}`)
        // The rows read. Several scratches: one statement reads each in key order (SQLite merges
        // the sorted arms without a sorter) and writes the rows in key order, each key once, by
        // the scan-order rule (every copy of a key from one file is in one scratch, decided
        // already); the file index is built after, by sorting (kept up row by row it costs more).
        // One scratch (the readers' only one, or `finish`'s): into the empty table with the same
        // indexes, a plain copy of the same layout: SQLite copies the b-trees' records, the
        // table's and each index's, without decoding them (the "transfer optimization"), the
        // file index built in the scratch before the write lock was taken.
        if (direct) {
          const arms = attached.map((s) => `SELECT * FROM ${s}.staged`).join(' UNION ALL ')
          db.exec(`INSERT INTO history_next ${arms} ORDER BY 1
            ON CONFLICT(key) DO UPDATE SET ${SET_ALL}
            WHERE ${SCAN_ORDER_RULE('history_next', (f) => `(SELECT ord FROM temp.scan_files WHERE id = ${f})`)}`)
          written = (db.prepare('SELECT COUNT(*) AS n FROM history_next').get() as {n: number}).n
          mark?.('merge')
        } else {
          db.exec(`${FILE_INDEX('history_file', 'history_next')}
            INSERT INTO history_next SELECT * FROM scratch.staged;`)
          mark?.('copy')
        }
        // The files not read keep their rows (found by file number). A copy just read of the same
        // key stays, unless Claude's rule prefers the kept one.
        db.prepare(
          `INSERT INTO history_next (${COLUMN_NAMES}) SELECT ${COLUMN_NAMES} FROM history_rows
            WHERE file IN (SELECT id FROM history_files WHERE path NOT IN (SELECT path FROM ${files}))
            ORDER BY key
            ON CONFLICT(key) DO UPDATE SET ${SET_ALL}
            WHERE substr(excluded.key, 1, 1) = 'c' AND ${CLAUDE_BETTER('history_next')}`,
        ).run()
        if (direct) {
          db.exec(FILE_INDEX('history_file', 'history_next'))
          mark?.('index')
        }
        db.exec(`DROP VIEW history; DROP TABLE history_rows; ALTER TABLE history_next RENAME TO history_rows;
          ${HISTORY_VIEW}`)
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
          SELECT id, ${CURSOR_COLUMNS} FROM ${files} WHERE true
          ON CONFLICT(path) DO UPDATE SET id = excluded.id, ${CURSOR_UPDATE}`)
        if (direct) db.exec('DROP TABLE temp.scan_files')
        result.rows = written - result.replays
        result.duplicates = read - written
      }).immediate()
    } finally {
      db.pragma(`cache_size = ${CACHE_KB}`)
      for (const s of attached) db.exec(`DETACH DATABASE ${s}`)
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
