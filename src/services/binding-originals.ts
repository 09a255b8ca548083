/**
 * The bytes of an agent's config file before `gwctl agents enable` first touched it, kept for the
 * exact undo of `agents disable`.
 *
 * Why a backup file and not the bytes in `state.json` (issue 29, item 6): those files hold vendor
 * keys (`ANTHROPIC_API_KEY`, `GEMINI_API_KEY`, MCP tokens), and `state.json` is the file every
 * command reads and users paste into bug reports. A copy of the whole file is what the exact undo
 * needs (a reverse diff would still hold any vendor key gwctl replaces, and the surgical undo of a
 * file the user edited reads values from the whole original), so the copy lives in its own 0600
 * file, `<GWCTL_HOME>/bindings/<sha256>.orig`, named by the SHA-256 of its bytes; `state.json`
 * keeps only that hash (`originalHash`). It is written atomically and fsynced before the state
 * records the intent that refers to it, and removed once no binding refers to it (after disable,
 * or when a rebind takes a new baseline). A missing file's original is the hash `absent`, with no
 * backup.
 */
import {readdir, rm} from 'node:fs/promises'
import {join} from 'node:path'

import {ConfigError} from '../core/errors.js'
import {hashBytes, readBytes} from '../agent-tools/config/file-io.js'
import type {BindingFileRecord, GatewayState} from '../store/state-schema.js'
import {
  BINDING_BACKUP_SUFFIX as SUFFIX,
  bindingBackupPath as backupPath,
  bindingBackupsDir as backupsDir,
  removeStaleBackupTemps,
  writeBindingBackup,
} from '../store/binding-backups.js'
import {homeDir} from '../store/paths.js'

export {backupPath, backupsDir}

/**
 * Keeps `bytes` as an original (0600, fsynced; nothing for a missing file) and returns its hash,
 * to be recorded in the state only after this returns.
 */
export async function saveOriginal(bytes: Buffer | string | null): Promise<string> {
  return writeBindingBackup(bytes)
}

/**
 * The original bytes of a bound file: from its backup (checked against its hash), or from the
 * base64 `original` of a state written before backups (which the first load under the lock moves
 * into a backup, store/binding-backups.ts; one that could not, a read-only home, is read here).
 */
export async function originalOf(file: BindingFileRecord): Promise<Buffer | null> {
  if (file.originalHash === undefined) {
    const legacy = file.original ?? null
    return legacy === null ? null : Buffer.from(legacy, 'base64')
  }
  if (file.originalHash === 'absent') return null
  const path = backupPath(file.originalHash)
  const bytes = await readBytes(path)
  if (bytes === null || hashBytes(bytes) !== file.originalHash) {
    throw new ConfigError(
      `The copy gwctl kept of ${file.path} before binding it (${path}) is ${bytes === null ? 'missing' : 'damaged'}; nothing was changed.`,
      {
        code: 'binding_backup_missing',
        hint: `Put ${file.path} back by hand, then remove its binding from ${join(homeDir(), 'state.json')}.`,
      },
    )
  }
  return bytes
}

/**
 * Moves the base64 original of a state written before backups into a backup file (in place;
 * call under the state lock, and only then save the state).
 */
export async function upgradeOriginal(file: BindingFileRecord): Promise<void> {
  if (file.originalHash !== undefined) return
  file.originalHash = await saveOriginal(await originalOf(file))
  delete file.original
}

/** Removes the backups no binding of `state` refers to (call under the state lock). */
export async function pruneOriginals(state: GatewayState): Promise<void> {
  await removeStaleBackupTemps() // a backup write killed mid-way
  let names: string[]
  try {
    names = await readdir(backupsDir())
  } catch {
    return
  }
  const used = new Set(
    (state.bindings ?? []).flatMap((b) => b.files.map((f) => `${f.originalHash}${SUFFIX}`)),
  )
  for (const name of names) {
    if (name.endsWith(SUFFIX) && !used.has(name)) await rm(join(backupsDir(), name), {force: true})
  }
}
