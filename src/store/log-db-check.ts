/**
 * How the gateway's start checks `logs.db` for damage without being slowed by a large one.
 *
 * `PRAGMA quick_check` reads every page: about 0.6 s for a database of 1 M rows (218 MB) with
 * its pages in the OS cache, more from a cold disk, and linear beyond (docs/RELIABILITY.md,
 * "Start-up check"). So a database up to {@link START_CHECK_MAX_BYTES} is checked in full before
 * the gateway opens it (as before); a larger one gets a quick look on the start path (the header
 * and schema, the last row of each table: the pages the next writes touch) and its full check
 * runs after the gateway listens, in a worker thread with a read-only connection of its own, off
 * the event loop. Damage found then (or by a query while the gateway runs) is written down in a
 * mark beside the file (`logs.db.damage-seen`, naming the file's inode); the next start moves
 * that same file aside without checking it again, and /health says so meanwhile.
 */
import {readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'

import {sqliteModule} from './sqlite.js'

/** Databases up to this size (with their WAL) are checked in full before the gateway opens them. */
export const START_CHECK_MAX_BYTES = 64 * 1024 * 1024

/** The start check's size limit: `GWCTL_LOGDB_START_CHECK_MB` (for tests), else the default. */
export function startCheckMaxBytes(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.GWCTL_LOGDB_START_CHECK_MB
  const mb = raw === undefined || raw.trim() === '' ? NaN : Number(raw)
  return Number.isFinite(mb) && mb >= 0 ? mb * 1024 * 1024 : START_CHECK_MAX_BYTES
}

/** Bytes of the database file and its WAL (0 when missing). */
export function databaseBytes(path: string): number {
  let bytes = 0
  for (const file of [path, `${path}-wal`]) {
    try {
      bytes += statSync(file).size
    } catch {
      // missing
    }
  }
  return bytes
}

function markPath(path: string): string {
  return `${path}.damage-seen`
}

/**
 * Writes down that the database at `path` is damaged (why), for the next start to move it aside
 * without checking it again. Never throws (a read-only home: the next start checks in full or
 * meets the damage again).
 */
export function markDamaged(path: string, reason: string): void {
  try {
    const ino = statSync(path).ino
    writeFileSync(markPath(path), JSON.stringify({ino, reason, at: new Date().toISOString()}) + '\n', {
      mode: 0o600,
    })
  } catch {
    // see above
  }
}

/**
 * The reason recorded by {@link markDamaged} for this very file (same inode), or undefined. A mark
 * of another file (the database was moved or replaced since) is removed.
 */
export function damageMark(path: string): string | undefined {
  let mark: {ino?: unknown; reason?: unknown}
  try {
    mark = JSON.parse(readFileSync(markPath(path), 'utf8')) as typeof mark
  } catch {
    return undefined
  }
  let ino: number | undefined
  try {
    ino = statSync(path).ino
  } catch {
    ino = undefined
  }
  if (ino !== undefined && mark.ino === ino && typeof mark.reason === 'string') return mark.reason
  clearDamageMark(path)
  return undefined
}

export function clearDamageMark(path: string): void {
  try {
    rmSync(markPath(path), {force: true})
  } catch {
    // a read-only home: the mark names an inode that is gone, and is ignored
  }
}

/** What a check found: `ok`, or the first problems SQLite listed; and how long it took. */
export interface CheckResult {
  ok: boolean
  problems: string[]
  ms: number
}

// The worker is CommonJS source (no file of its own to bundle): it opens the database read-only
// with the same better-sqlite3 the gateway loaded, runs the check and answers once.
const WORKER_SOURCE = `
const {parentPort, workerData} = require('node:worker_threads')
const t0 = performance.now()
let result
try {
  const Database = require(workerData.module)
  const db = new Database(workerData.path, {
    readonly: true,
    fileMustExist: true,
    ...(workerData.addon ? {nativeBinding: workerData.addon} : {}),
  })
  try {
    const rows = db.pragma('quick_check')
    const problems = rows.map((r) => r.quick_check).filter((m) => m !== 'ok')
    result = {ok: problems.length === 0, problems: problems.slice(0, 3), damage: problems.length > 0}
  } finally {
    db.close()
  }
} catch (error) {
  const code = String(error && error.code)
  const damage = code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')
  result = {ok: !damage, problems: [String(error && error.message)], damage, failed: !damage}
}
parentPort.postMessage({...result, ms: Math.round(performance.now() - t0)})
`

/**
 * `PRAGMA quick_check` of the database at `path` in a worker thread (its own read-only
 * connection: the caller's connections stay open and keep writing). Resolves `ok: false` only for
 * damage; a check that could not run (the file gone, unreadable) resolves `ok: true` with the
 * reason in `problems` and `checked: false`. The worker never keeps the process alive.
 */
export async function checkInWorker(path: string): Promise<CheckResult & {checked: boolean}> {
  const {Worker} = await import('node:worker_threads')
  const {module, addon} = sqliteModule()
  return new Promise((resolve) => {
    const worker = new Worker(WORKER_SOURCE, {eval: true, workerData: {path, module, addon}})
    worker.unref()
    let done = false
    worker.once('message', (m: {ok: boolean; problems: string[]; failed?: boolean; ms: number}) => {
      done = true
      resolve({ok: m.ok, problems: m.problems, ms: m.ms, checked: !m.failed})
    })
    worker.once('error', (error) => {
      if (!done) resolve({ok: true, problems: [error.message], ms: 0, checked: false})
      done = true
    })
    worker.once('exit', () => {
      if (!done) resolve({ok: true, problems: ['the check ended without an answer'], ms: 0, checked: false})
      done = true
    })
  })
}
