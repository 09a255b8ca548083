/**
 * Opening SQLite files, for every store (log, history, scratch). better-sqlite3 is a CommonJS
 * package with a native addon: it is loaded with `require`, on the first open, and its addon is
 * named by path. An ESM `import` of it parses each of its files for their exports, and the
 * `bindings` package it uses by default searches a dozen paths for the addon; together about
 * 6 ms of every command that opens a database (`gwctl logs`, `gwctl usage`).
 */
import {chmodSync, closeSync, existsSync, openSync} from 'node:fs'
import {createRequire} from 'node:module'

import type BetterSqlite3 from 'better-sqlite3'

const require = createRequire(import.meta.url)
let Database: typeof BetterSqlite3 | undefined
/** The addon's path; null when it is not where npm builds it (then `bindings` finds it). */
let addon: string | null | undefined

/** The addon's path, looked up once (null: not where npm builds it, `bindings` finds it). */
function addonPath(): string | null {
  if (addon === undefined) {
    try {
      addon = require.resolve('better-sqlite3/build/Release/better_sqlite3.node')
    } catch {
      addon = null
    }
  }
  return addon
}

/** Where better-sqlite3 and its addon are (for a worker thread that opens a database itself). */
export function sqliteModule(): {module: string; addon: string | null} {
  return {module: require.resolve('better-sqlite3'), addon: addonPath()}
}

/**
 * Opens (or creates, unless `fileMustExist`/`readonly`) the database at `path`. A read-only open
 * of a database with a rollback journal beside it (a history rescan's merge was killed, see
 * `HistoryStore.mergeScratch`) first opens it to write, which rolls the journal back: a read-only
 * connection cannot, and would fail with SQLITE_READONLY_ROLLBACK until some writer opened it.
 */
export function openSqlite(path: string, options: BetterSqlite3.Options = {}): BetterSqlite3.Database {
  Database ??= require('better-sqlite3') as typeof BetterSqlite3
  addonPath()
  const open = (o: BetterSqlite3.Options): BetterSqlite3.Database => {
    try {
      return new Database!(path, addon ? {nativeBinding: addon, ...o} : o)
    } catch (error) {
      // SQLite's errors do not name the file: the error mapping (core/errors.ts) shows it
      if (error && typeof error === 'object' && !('path' in error)) (error as {path?: string}).path = path
      throw error
    }
  }
  if (options.readonly && existsSync(`${path}-journal`)) {
    // a journal of a transaction still running is not hot: this read just waits or reads past it
    const writer = open({fileMustExist: true})
    try {
      writer.pragma('schema_version')
    } finally {
      writer.close()
    }
  }
  return open(options)
}

/**
 * Makes the database and its WAL and shared-memory files mode 0600. SQLite creates a new database
 * with mode 0644 (less the umask) and gives the `-wal` and `-shm` files the mode of the database,
 * so a missing database is created here, empty, with 0600 first; an existing one is only chmod-ed.
 *
 * Never open an existing database file outside SQLite: on Linux, closing any descriptor of a file
 * drops every POSIX lock this process holds on it, SQLite's included ("How To Corrupt An SQLite
 * Database File", 2.2). With its locks gone, another connection's process (an outside `sqlite3`
 * reader) believes it is the last one, checkpoints and deletes the `-wal` and `-shm` files under
 * this process's connection, and later commits are lost or corrupt the database. `chmod` and
 * `stat` take no descriptor; an exclusive create (`wx`) only opens a file nobody has open.
 */
export function privateFiles(path: string): void {
  if (!existsSync(path)) {
    try {
      closeSync(openSync(path, 'wx', 0o600))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(file, 0o600)
    } catch {
      // missing, or a file of another user: SQLite reports what it cannot open
    }
  }
}

/**
 * Sets WAL mode, as every read-write open of `logs.db` does. A connection in rollback-journal
 * mode holding a write transaction (a history rescan's merge, alone on the database, see
 * `HistoryStore.mergeScratch`) makes the change fail at once with SQLITE_BUSY, without waiting
 * for the busy timeout: it is tried again every 20 ms for up to `waitMs`.
 */
export async function walMode(db: BetterSqlite3.Database, waitMs = 10_000): Promise<void> {
  const until = Date.now() + waitMs
  for (;;) {
    try {
      db.pragma('journal_mode = WAL')
      return
    } catch (error) {
      if (!isBusy(error) || Date.now() > until) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/** Whether `error` is SQLite's "database is locked" (SQLITE_BUSY or one of its extended codes). */
export const isBusy = (error: unknown): boolean =>
  String((error as {code?: unknown} | undefined)?.code).startsWith('SQLITE_BUSY')
