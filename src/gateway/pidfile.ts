/**
 * The daemon's pid file `<home>/gateway.pid`: the single-instance lock. Two lines, the pid and
 * the port. Created with O_EXCL by the daemon itself; a pid file whose process is gone (after a
 * `kill -9`) is stale and is replaced.
 */
import {existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {dirname} from 'node:path'

import {processAlive} from '../core/process.js'
import {homeFile} from '../store/paths.js'

/** The default gateway port (spec 8). */
export const DEFAULT_PORT = 4317
/** How long a stop waits for in-flight requests by default. */
export const DEFAULT_DRAIN_MS = 10_000

export interface PidInfo {
  pid: number
  port: number
}

/** The pid file's content, or undefined when missing or unreadable. */
export function readPidFile(path: string = homeFile('pid')): PidInfo | undefined {
  if (!existsSync(path)) return undefined
  try {
    const [pid, port] = readFileSync(path, 'utf8').trim().split(/\s+/).map(Number)
    if (!Number.isInteger(pid) || pid <= 0) return undefined
    return {pid, port: Number.isInteger(port) ? port : 0}
  } catch {
    return undefined
  }
}

/** True when a process with this pid exists and has not exited (a zombie is dead). */
export function isAlive(pid: number): boolean {
  return processAlive(pid)
}

/** True when `pid` looks like a gwctl daemon (on Linux, from its command line). */
export function looksLikeDaemon(pid: number): boolean {
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')
    // `gwctl gateway run` in the foreground, or the detached daemon's own entry point
    return /gateway run|daemon\/main\.js/.test(cmdline)
  } catch {
    return isAlive(pid) // no /proc (macOS): trust the pid
  }
}

/** The daemon named by the pid file, when it is alive. */
export function runningDaemon(path: string = homeFile('pid')): PidInfo | undefined {
  const info = readPidFile(path)
  if (info && isAlive(info.pid) && looksLikeDaemon(info.pid)) return info
  return undefined
}

/**
 * Claims the pid file for this process. Returns false when a live daemon holds it; replaces a
 * stale one.
 */
export function claimPidFile(
  port: number,
  path: string = homeFile('pid'),
): {ok: true} | {ok: false; holder: PidInfo} {
  // `gateway run` may be the first thing run on a fresh GWCTL_HOME: the folder may not exist yet
  mkdirSync(dirname(path), {recursive: true, mode: 0o700})
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(path, `${process.pid}\n${port}\n`, {flag: 'wx', mode: 0o600})
      return {ok: true}
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = readPidFile(path)
      if (holder && holder.pid !== process.pid && isAlive(holder.pid) && looksLikeDaemon(holder.pid)) {
        return {ok: false, holder}
      }
      rmSync(path, {force: true}) // stale: its process is gone
    }
  }
  throw new Error(`cannot claim the pid file ${path}`)
}

/** Removes the pid file if it still names this process. */
export function releasePidFile(path: string = homeFile('pid')): boolean {
  if (readPidFile(path)?.pid !== process.pid) return true
  try {
    rmSync(path, {force: true})
    return true
  } catch {
    // A read-only or full home: the file stays, naming a process about to be gone, which every
    // command treats as stale (and `gateway start` replaces). Never worth a crash on the way out.
    return false
  }
}
