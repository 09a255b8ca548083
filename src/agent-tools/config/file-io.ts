/**
 * Reading and writing an agent's own config files for route binding: whole files as bytes,
 * hashed with SHA-256, written through a temp file + fsync + rename that keeps the file's mode
 * (new files get 0600), so a crash at any moment leaves the old file or the new one.
 */
import {createHash} from 'node:crypto'
import {constants, existsSync} from 'node:fs'
import {access, chmod, mkdir, readFile, rm, stat} from 'node:fs/promises'
import {dirname} from 'node:path'

import {syncDir, writeFileAtomic} from '../../core/atomic-file.js'
import {ConfigError} from '../../core/errors.js'

/** SHA-256 hex of a file's bytes; `absent` for a missing file. */
export function hashBytes(bytes: Buffer | string | null): string {
  if (bytes === null) return 'absent'
  return createHash('sha256').update(bytes).digest('hex')
}

/** The file's bytes, or null when it does not exist. */
export async function readBytes(path: string): Promise<Buffer | null> {
  try {
    return await readFile(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw new ConfigError(`Cannot read ${path}: ${(error as Error).message}`, {code: 'config_unreadable'})
  }
}

/** Throws exit 3 when `path` (or, for a new file, its folder) cannot be written. */
export async function assertWritable(path: string): Promise<void> {
  const target = existsSync(path) ? path : nearestExisting(dirname(path))
  try {
    await access(target, constants.W_OK)
    if (target === path) await access(dirname(path), constants.W_OK) // the rename needs the folder
  } catch {
    throw new ConfigError(`${path} is not writable; nothing was changed.`, {
      code: 'config_not_writable',
      hint: `Check its owner and mode (ls -l ${target}), then run the command again.`,
    })
  }
}

function nearestExisting(dir: string): string {
  let d = dir
  while (!existsSync(d) && dirname(d) !== d) d = dirname(d)
  return d
}

/**
 * Replaces `path` with `bytes` atomically, keeping its mode (0600 for a new file); `null`
 * deletes it. The folder is fsynced after the rename.
 */
export async function writeAtomic(
  path: string,
  bytes: Buffer | string | null,
  forceMode?: number,
): Promise<void> {
  const dir = dirname(path)
  if (bytes === null) {
    await rm(path, {force: true})
    await syncDir(dir)
    return
  }
  let mode = 0o600
  try {
    mode = (await stat(path)).mode & 0o7777
  } catch {
    await mkdir(dir, {recursive: true, mode: 0o700})
  }
  await writeFileAtomic(path, bytes, forceMode ?? mode)
}

/** The permission bits of `path`, or undefined when it does not exist. */
export async function modeOf(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mode & 0o7777
  } catch {
    return undefined
  }
}

/** Sets the permission bits of `path` when they differ (a missing file is left alone). */
export async function ensureMode(path: string, mode: number): Promise<void> {
  const current = await modeOf(path)
  if (current !== undefined && current !== mode) await chmod(path, mode)
}

/** The line ending a text uses (CRLF when its first line break is one). */
export function eolOf(text: string): '\n' | '\r\n' {
  const i = text.indexOf('\n')
  return i > 0 && text[i - 1] === '\r' ? '\r\n' : '\n'
}
