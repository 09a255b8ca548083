/** Whether a process is alive, for lock and pid-file takeover. */
import {readFileSync} from 'node:fs'

/**
 * True when a process with this pid exists and has not exited. A zombie (exited, not yet reaped
 * by its parent: `/proc/PID/stat` state `Z` or `X`) is dead: it holds nothing and never will.
 * A process of another user (EPERM) counts as alive.
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    return true // no /proc (macOS): the signal check is all there is
  }
  // "PID (comm) STATE ...": comm may contain spaces and parentheses, the state follows the last ")"
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  return state !== 'Z' && state !== 'X'
}
