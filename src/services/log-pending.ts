/**
 * The rows of the gateway's log that wait in `logs.pending` (store/log-spill.ts: batches that found
 * logs.db locked by another process), applied to logs.db by a command run while no gateway runs,
 * so that `gwctl logs`, `gwctl usage` (every report), `gwctl budgets list` and the statusline of
 * a stopped gateway show every request it answered.
 *
 * Why the reading command applies the file rather than merging its rows into each query: the
 * readers are many (log listing and pivots, the hourly roll-up, the usage reports' union with the
 * agents' history, budgets, the statusline's sums, and any outside `sqlite3` or Datasette user)
 * and would each need the rows, their roll-up and the committed sequence read in one snapshot;
 * applied once, every reader, ours or not, sees one table, and the file is empty again. The apply
 * is the daemon's own replay (`LogWriter.applySpill`: the rows above the committed sequence, their
 * roll-up and the new sequence in one transaction, then the file emptied), so a kill at any point
 * leaves each row applied once or still waiting.
 *
 * Ownership: the daemon owns the file from the start of its log store to its close (it appends to
 * it and empties it). A command applies it only while holding the file's lock
 * (`logs.pending.lock`, store/state-lock.ts) and finding no live daemon in the pid file; the daemon
 * claims the pid file first and then opens its log store under the same lock
 * (daemon/lifecycle.ts). So a daemon that starts meanwhile either is seen (the command leaves the
 * file to it) or waits for the lock until the command is done: never both at once, so neither
 * empties the file under the other's appends.
 *
 * Loaded only when the file holds bytes: callers check with one `stat` (`fileHasBytes`).
 */
import {addNotice} from '../core/notices.js'
import {fileHasBytes, homeFile, pendingFileOf} from '../store/paths.js'

/** How long a command waits for another process's write lock on logs.db (a rescan's swap: ~1 s). */
const BUSY_MS = 2000
/** How long it waits for another command applying the file. */
const LOCK_WAIT_MS = 5000

/** What became of the side file. */
export type PendingOutcome =
  /** Applied: `applied` rows committed; `skipped` were committed before (a kill after the commit). */
  | {state: 'applied'; applied: number; skipped: number; torn: number}
  /** A running gateway owns the file: it applies the rows itself (every 50 ms while they wait). */
  | {state: 'daemon'}
  /** Not applied (logs.db locked by another process, read-only, damaged): `rows` still wait. */
  | {state: 'left'; rows: number; reason: string}

export interface ApplyPendingOptions {
  /** The log database (default `logs.db` of the home folder). */
  dbPath?: string
  /** How long to wait for another process's write lock on logs.db (ms). */
  busyMs?: number
  /** How long to wait for another command applying the file (ms). */
  lockWaitMs?: number
  /** Leave no notice when the rows cannot be applied (the statusline: one line, no stderr). */
  quiet?: boolean
}

/**
 * Applies the side file when it holds rows and no gateway runs. Undefined when it is empty or
 * missing. When the rows cannot be applied, a notice says how many wait, why, and what applies
 * them (printed on stderr by the command, unless `quiet`).
 */
export async function applyPendingLogs(
  options: ApplyPendingOptions = {},
): Promise<PendingOutcome | undefined> {
  const dbPath = options.dbPath ?? homeFile('logDb')
  const side = pendingFileOf(dbPath)
  if (!fileHasBytes(side)) return undefined
  const [{lockFile}, {runningDaemon}, {LogWriter}, {isBusy}] = await Promise.all([
    import('../store/state-lock.js'),
    import('../gateway/pidfile.js'),
    import('../store/log-store.js'),
    import('../store/sqlite.js'),
  ])
  const waiting = (): number => {
    try {
      return LogWriter.pending(dbPath).rows
    } catch {
      return 0
    }
  }
  const left = (reason: string): PendingOutcome => {
    const rows = waiting()
    if (rows === 0) return {state: 'applied', applied: 0, skipped: 0, torn: 0}
    if (!options.quiet) addNotice(pendingNotice(rows, reason))
    return {state: 'left', rows, reason}
  }
  let release: () => Promise<void>
  try {
    release = await lockFile(side, {waitMs: options.lockWaitMs ?? LOCK_WAIT_MS})
  } catch (error) {
    // a live holder past the wait; else the file system refused the lock (a read-only home)
    if ((error as {code?: unknown}).code === 'state_locked')
      return left(`another gwctl process is applying them (${(error as Error).message})`)
    return left(whyNotApplied(error, dbPath, false))
  }
  try {
    // the pid file of a live daemon: it owns the side file until its log store is closed (a read
    // of logs.db meanwhile, `usage` reports with the gateway running, lacks what still waits)
    if (runningDaemon(homeFile('pid'))) {
      const rows = options.quiet ? 0 : waiting()
      if (rows > 0)
        addNotice(pendingNotice(rows, 'the running gateway keeps them until logs.db is free', true))
      return {state: 'daemon'}
    }
    try {
      const done = await LogWriter.applySpill(dbPath, {busyMs: options.busyMs ?? BUSY_MS})
      return {state: 'applied', ...done}
    } catch (error) {
      return left(whyNotApplied(error, dbPath, isBusy(error)))
    }
  } finally {
    await release()
  }
}

/** Why the rows could not be applied, in the user's words. */
function whyNotApplied(error: unknown, dbPath: string, busy: boolean): string {
  const code = String((error as {code?: unknown} | undefined)?.code)
  if (busy)
    return `${dbPath} is locked by another process (a sqlite3 shell or another tool in a write transaction)`
  if (code.startsWith('SQLITE_READONLY') || code === 'EROFS' || code === 'EACCES' || code === 'EPERM')
    return `${dbPath} cannot be written (${(error as Error).message})`
  return `${dbPath} could not be written: ${(error as Error).message}`
}

/** The notice of rows left waiting. */
export function pendingNotice(rows: number, reason: string, daemon = false): string {
  const them = rows === 1 ? 'it' : 'them'
  const next = daemon
    ? `It applies ${them} within 50 ms of that`
    : `The next \`gwctl logs\` or \`gwctl usage\` applies ${them} once that is fixed (so does \`gwctl gateway start\`)`
  return `${rows} gateway log row${rows === 1 ? '' : 's'} wait${rows === 1 ? 's' : ''} in logs.pending and ${rows === 1 ? 'is' : 'are'} not in this output: ${reason}. ${next}; \`gwctl doctor\` shows the wait.`
}
