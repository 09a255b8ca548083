/**
 * Real read-only and small homes for the fault tests: bind mounts and tmpfs, where this machine
 * lets root mount them (Linux as root); the tests that need them are skipped elsewhere.
 */
import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

/** A mount of our own (root on Linux, where `mount` works here); false otherwise. */
export function tryMount(args: string[]): boolean {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false
  try {
    execFileSync('mount', args, {stdio: 'ignore'})
    return true
  } catch {
    return false
  }
}

/** Whether mounts work here (a 1 MB tmpfs, mounted and unmounted). */
export function canMount(): boolean {
  const dir = mkdtempSync(join(tmpdir(), 'gwctl-mnt-probe-'))
  const ok = tryMount(['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir])
  if (ok) execFileSync('umount', ['-l', dir], {stdio: 'ignore'})
  rmSync(dir, {recursive: true, force: true})
  return ok
}

/** Makes `dir` a read-only bind mount of itself; returns the undo. */
export function readOnly(dir: string): () => void {
  execFileSync('mount', ['--bind', dir, dir])
  execFileSync('mount', ['-o', 'remount,ro,bind', dir])
  return () => execFileSync('umount', ['-l', dir], {stdio: 'ignore'})
}
