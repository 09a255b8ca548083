/**
 * Where the originals of agents' config files wait while bound (`<GWCTL_HOME>/bindings/<sha256>.orig`,
 * 0600, in a 0700 folder; services/binding-originals.ts keeps and reads them), and the migration of
 * a state written before those backups existed: its bindings kept each original as base64 in
 * `state.json` (`original`), vendor keys and MCP tokens included (issue 29, item 6).
 *
 * The migration runs on the first state load that sees such a binding (StateStore.open), under the
 * state lock, and is crash-safe by its order: every backup is written and fsynced (atomically,
 * named by its hash) before the state that refers to it replaces the old one, atomically too. A
 * kill in between leaves the old state, still complete (its base64 originals), and a backup that
 * the next load writes again (same name, same bytes); nothing can point at a missing backup.
 */
import {mkdir, readFile, readdir, rm} from 'node:fs/promises'
import {join} from 'node:path'

import {writeFileAtomic} from '../core/atomic-file.js'
import {processAlive} from '../core/process.js'
import {homeDir} from './paths.js'
import type {BindingFileRecord, GatewayState} from './state-schema.js'

const SUFFIX = '.orig'

/** The folder of the backups. */
export function bindingBackupsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(homeDir(env), 'bindings')
}

/** The backup file of the original whose hash is `hash`. */
export function bindingBackupPath(hash: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(bindingBackupsDir(env), `${hash}${SUFFIX}`)
}

/** The file name suffix of a backup. */
export const BINDING_BACKUP_SUFFIX = SUFFIX

/** SHA-256 hex of `bytes` ('absent' for a file that did not exist). */
export async function sha256OrAbsent(bytes: Buffer | string | null): Promise<string> {
  if (bytes === null) return 'absent'
  // node:crypto costs 4-6 ms to load: only a write of a backup pays it
  const {createHash} = await import('node:crypto')
  return createHash('sha256').update(bytes).digest('hex')
}

/**
 * Keeps `bytes` as an original (0600, fsynced, atomic; nothing for a missing file) and returns its
 * hash, to be recorded in the state only after this returns. A backup already there with the
 * same bytes is kept as it is.
 */
export async function writeBindingBackup(bytes: Buffer | string | null): Promise<string> {
  const hash = await sha256OrAbsent(bytes)
  if (bytes === null) return hash
  const path = bindingBackupPath(hash)
  let existing: Buffer | undefined
  try {
    existing = await readFile(path)
  } catch {
    existing = undefined
  }
  if (existing !== undefined && (await sha256OrAbsent(existing)) === hash) return hash
  await mkdir(bindingBackupsDir(), {recursive: true, mode: 0o700})
  await writeFileAtomic(path, bytes, 0o600)
  return hash
}

/**
 * Removes the temp files that a writer of a backup killed mid-write left in the backups folder
 * (`.<hash>.orig.gwctl-<pid>-<uuid>.tmp`, see core/atomic-file.ts), those of dead processes only.
 */
export async function removeStaleBackupTemps(): Promise<void> {
  let names: string[]
  try {
    names = await readdir(bindingBackupsDir())
  } catch {
    return
  }
  for (const name of names) {
    const m = /^\..*\.gwctl-(\d+)-[0-9a-f-]+\.tmp$/.exec(name)
    if (m && !processAlive(Number(m[1]))) await rm(join(bindingBackupsDir(), name), {force: true})
  }
}

/** The binding files of `state` that still keep their original in the state (base64). */
export function legacyOriginals(state: GatewayState): BindingFileRecord[] {
  return (state.bindings ?? []).flatMap((b) => b.files.filter((f) => f.originalHash === undefined))
}

/**
 * Moves every base64 original of `state` into its backup file, in place: a file's record changes
 * (`originalHash` set, `original` gone) only after its backup was written. Throws the first write
 * that fails (a read-only or full home), leaving the records not yet moved as they were. The
 * caller saves the state afterwards. Returns how many were moved.
 */
export async function moveLegacyOriginals(state: GatewayState): Promise<number> {
  await removeStaleBackupTemps() // of an earlier migration killed mid-way
  let moved = 0
  for (const file of legacyOriginals(state)) {
    const legacy = file.original ?? null
    file.originalHash = await writeBindingBackup(legacy === null ? null : Buffer.from(legacy, 'base64'))
    delete file.original
    moved++
  }
  return moved
}
