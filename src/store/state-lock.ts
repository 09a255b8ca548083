/**
 * The cross-process lock of the state file (proper-lockfile, `state.json.lock`), with the
 * holder's pid beside it (`state.json.lock.owner`) so a lock left by a killed process is broken
 * at once. Loaded only by what writes the state (`withState`, the daemon).
 */
import {chmodSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {resolve} from 'node:path'

import {GwError} from '../core/errors.js'
import {processAlive} from '../core/process.js'
import {ensureHome, homeFile} from './paths.js'

/** Options of the state lock. */
export interface StateLockOptions {
  /** How long to keep trying when another process holds the lock (ms, default 3000). */
  waitMs?: number
  /** Called when the held lock was lost (its mtime could not be refreshed in time). */
  onCompromised?: (error: Error) => void
  /** The error thrown when a live holder keeps the lock past `waitMs` (default {@link StateLockedError}). */
  lockedError?: (path: string) => Error
}

/**
 * How long a lock without an owner file counts as held (ms): a holder writes the file right after
 * taking the lock, so an older ownerless lock was left by a process killed in between.
 */
export const OWNERLESS_LOCK_GRACE_MS = 1000

/** A lock untouched this long is stale whatever its owner file says (a reused pid). */
const LOCK_STALE_MS = 60_000

/** The state files whose lock this process holds (resolved paths). */
const held = new Set<string>()

/** True while this process holds the lock of the state file at `path`. */
export function holdsStateLock(path: string = homeFile('state')): boolean {
  return held.has(resolve(path))
}

/** The lock is held by another process (the daemon, or another gwctl writing). */
export class StateLockedError extends GwError {
  constructor(path: string) {
    super('state_locked', `The gateway state ${path} is locked by another process${holder(path)}.`, 1, {
      hint: 'The gateway is probably starting or running: try again, or check `gwctl gateway`.',
    })
  }
}

/** Who holds the lock, as its owner file says (for the message: which process to look at). */
function holder(path: string): string {
  try {
    const pid = Number(readFileSync(ownerFile(path), 'utf8').trim())
    return Number.isInteger(pid) && pid > 0 ? ` (pid ${pid}, ${processAlive(pid) ? 'alive' : 'gone'})` : ''
  } catch {
    return ''
  }
}

function ownerFile(path: string): string {
  return `${path}.lock.owner`
}

/**
 * True while the lock may have a live holder. Its holder is dead when the owner file names a
 * process that is gone or a zombie, or when there is no owner file although the lock has not been
 * touched for a second (a holder writes the file right after taking the lock, and refreshes the
 * lock every 2 s: no owner file and an old lock means the holder died in between).
 *
 * "Touched" is the lock folder's change time, not its modification time: proper-lockfile's first
 * lock in a process sets the modification time to the next whole second (+5 ms, its precision
 * probe), up to a second ahead of the clock, which would double the grace. Every touch (the
 * folder made, that probe, each refresh) sets the change time to the real time.
 */
function ownerAlive(path: string): boolean {
  let pid = Number.NaN
  try {
    pid = Number(readFileSync(ownerFile(path), 'utf8').trim())
  } catch {
    // no owner file: judged by the lock's age below
  }
  // A pid, or no usable one: no file, or one a holder killed while writing it left empty or cut
  // short (judged like no file: without this, such a lock counted as live until proper-lockfile's
  // staleness, past every load's wait).
  if (Number.isInteger(pid) && pid > 0) return processAlive(pid)
  try {
    return Date.now() - statSync(`${path}.lock`).ctimeMs < OWNERLESS_LOCK_GRACE_MS
  } catch {
    return true // the lock is gone too: the next attempt takes it
  }
}

/**
 * Takes the cross-process lock of the state file; resolves to its release function. The holder's
 * pid is kept beside the lock, so a lock left by a killed process is broken at once instead of
 * after the staleness period (60 s: a live holder keeps its lock however long it is busy).
 */
export async function lockState(
  path: string = homeFile('state'),
  options: StateLockOptions = {},
): Promise<() => Promise<void>> {
  return lockFile(path, options)
}

/**
 * The same lock on another file of the home folder (`<path>.lock`, `<path>.lock.owner`): the log
 * store's side file, which the daemon's start and a command that applies it take
 * (services/log-pending.ts).
 */
export async function lockFile(path: string, options: StateLockOptions = {}): Promise<() => Promise<void>> {
  ensureHome()
  const waitMs = options.waitMs ?? 3000
  const {default: lockfile} = await import('proper-lockfile')
  const attempt = (retries: number) =>
    lockfile.lock(path, {
      realpath: false,
      // A holder is judged by its pid first (`ownerAlive`, below); the lock's age is the last word
      // only for a pid that lies (reused). A holder whose event loop a long synchronous write
      // blocks (logs.pending's apply of 200 000 rows on a loaded machine, 10 s and more) cannot
      // touch the lock meanwhile: at a 10 s staleness a waiter took the lock of that live holder,
      // whose release then removed the waiter's lock under it (ENOENT), two holders at once.
      stale: LOCK_STALE_MS,
      update: 2_000,
      retries: {retries, minTimeout: 100, maxTimeout: 100, factor: 1},
      onCompromised: options.onCompromised ?? (() => undefined),
    })
  let release: () => Promise<void>
  try {
    // Every retry looks at the holder again: one that dies (or turns zombie) while we wait is
    // taken over at once; a live holder is waited for up to `waitMs`.
    const deadline = Date.now() + waitMs
    let takeovers = 0
    for (;;) {
      try {
        release = await attempt(0)
        break
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error
        if (takeovers < 3 && !ownerAlive(path)) {
          takeovers++
          breakStateLock(path)
          continue
        }
        if (Date.now() >= deadline) throw error
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED')
      throw options.lockedError?.(path) ?? new StateLockedError(path)
    throw error
  }
  try {
    chmodSync(`${path}.lock`, 0o700) // proper-lockfile makes the lock folder with the umask's mode
  } catch {
    // a lock of another user: nothing to keep private here
  }
  try {
    writeFileSync(ownerFile(path), `${process.pid}\n`, {mode: 0o600})
  } catch (error) {
    // a full disk: give the lock back, or it would outlive this write and refuse every later one
    await release().catch(() => undefined)
    throw error
  }
  held.add(resolve(path))
  return async () => {
    held.delete(resolve(path))
    // The owner file first, while the lock is still ours: removed after the release, it could be
    // the next holder's, written in between, and that holder's live lock would look ownerless.
    // A crash in between leaves an ownerless lock, taken over after its grace.
    rmSync(ownerFile(path), {force: true})
    await release()
  }
}

/** Removes a lock left by a process that no longer exists (the caller knows it is dead). */
export function breakStateLock(path: string = homeFile('state')): void {
  rmSync(ownerFile(path), {force: true})
  rmSync(`${path}.lock`, {recursive: true, force: true})
}
