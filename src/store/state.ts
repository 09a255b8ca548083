/**
 * The gateway state: employees, agents, keys (hashed), policies, providers and the per-install
 * secret, in one JSON file `<home>/state.json` kept with lowdb.
 *
 * Durability: lowdb's own `JSONFile` writes through steno, which writes a temp file and renames
 * it (atomic against a crash of the process) but never calls fsync and creates the temp file with
 * the umask's mode (0644 here). So the store gives lowdb its own adapter, {@link AtomicJsonFile}:
 * the same temp-and-rename, plus mode 0600 from the first byte, fsync of the file before the
 * rename and of the folder after it. A `kill -9` (or power loss) at any moment leaves either the
 * old or the new file, never a torn one. Concurrent writes are coalesced (group commit): a caller
 * whose change was made while a write ran waits for the next write, which includes it.
 *
 * Locking: one writer at a time across processes, with proper-lockfile (`state.json.lock`). The
 * daemon takes it for each write and owns employees, agents and keys while it runs (the CLI asks
 * it over HTTP); policies and providers on disk may be changed by other processes at run time
 * (under the lock) and are loaded by the daemon at its next start. The CLI takes the lock for one
 * whole change (read, change, write).
 */
import type {BigIntStats} from 'node:fs'
import {
  chmodSync,
  existsSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import {open, readFile} from 'node:fs/promises'
import {basename, dirname, join} from 'node:path'
import type {Adapter} from 'lowdb'
import {Low} from 'lowdb'

import {writeFileAtomic} from '../core/atomic-file.js'
import {ConfigError} from '../core/errors.js'
import {ensureHome, homeFile} from './paths.js'
import type {GatewayState} from './state-schema.js'
import {initialState, STATE_SCHEMA, upgradeState, validateState} from './state-schema.js'
import type {StateLockOptions} from './state-lock.js'

/** The state file is unreadable or breaks the schema. */
export class StateCorruptError extends ConfigError {
  constructor(path: string, problem: string) {
    super(`The gateway state file ${path} is not valid: ${problem}`, {
      code: 'state_invalid',
      hint: `Restore it from a backup, or move it away to start afresh (every key is then lost): mv ${path} ${path}.bad`,
    })
  }
}

/**
 * A lowdb adapter that writes atomically and durably with mode 0600 (see the module comment).
 * Writes are serialised and coalesced: `write()` resolves once a write that started after the
 * call (and so holds the caller's change) is on disk.
 */
export class AtomicJsonFile<T> implements Adapter<T> {
  private running: Promise<void> | null = null
  private queued: Promise<void> | null = null
  private latest: T | null = null

  constructor(
    readonly path: string,
    private readonly options: {
      /** Takes the cross-process lock around each write (the daemon; the CLI locks a whole change). */
      lock?: boolean
      /** Last look at the data before it is written (under the lock). */
      beforeWrite?: (data: T) => Promise<T>
    } = {},
  ) {}

  /** Which version of the file the last `read()` read (see {@link fileStamp}). */
  lastReadStamp: string | undefined

  async read(): Promise<T | null> {
    let text: string
    try {
      const file = await open(this.path, 'r')
      try {
        this.lastReadStamp = fileStamp(await file.stat({bigint: true}))
        text = await file.readFile('utf8')
      } finally {
        await file.close()
      }
    } catch (error) {
      this.lastReadStamp = undefined
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
      throw error
    }
    try {
      return JSON.parse(text) as T
    } catch (error) {
      throw new StateCorruptError(this.path, `not JSON (${(error as Error).message})`)
    }
  }

  write(data: T): Promise<void> {
    this.latest = data
    if (!this.running) {
      this.running = this.flush().finally(() => (this.running = null))
      return this.running
    }
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = null
        return this.write(this.latest as T)
      })
    return this.queued
  }

  private async flush(): Promise<void> {
    const release = this.options.lock
      ? await (await import('./state-lock.js')).lockState(this.path)
      : undefined
    try {
      const data = this.options.beforeWrite ? await this.options.beforeWrite(this.latest as T) : this.latest
      await this.writeDurably(JSON.stringify(data, null, 2) + '\n')
    } finally {
      await release?.().catch(() => undefined)
    }
  }

  private async writeDurably(text: string): Promise<void> {
    await writeFileAtomic(this.path, text, 0o600)
  }
}

/**
 * Moves the base64 originals of `data` (just read from `path`) into their backup files and saves
 * the state. Under the lock: in place when this process holds it (the daemon's start, `withState`),
 * else by taking it (1.5 s at most: longer than a killed holder's ownerless lock is waited for,
 * so a lock left by a process killed before it wrote its owner file is taken over) and loading again, which returns the migrated store. Never
 * fails a load: a read-only or full home, or a lock held elsewhere, leaves the state as it is (its
 * base64 originals still undo exactly) for a later load. Returns the store to use, if not `data`'s.
 */
async function migrateLegacyOriginals(
  path: string,
  data: GatewayState,
  options: {mode?: 'daemon' | 'locked'},
): Promise<StateStore | undefined> {
  const [{OWNERLESS_LOCK_GRACE_MS, holdsStateLock, lockState}, {moveLegacyOriginals}] = await Promise.all([
    import('./state-lock.js'),
    import('./binding-backups.js'),
  ])
  if (!holdsStateLock(path)) {
    let release: (() => Promise<void>) | undefined
    try {
      release = await lockState(path, {waitMs: OWNERLESS_LOCK_GRACE_MS + 500})
      return await StateStore.open(path, options)
    } catch {
      return undefined
    } finally {
      await release?.().catch(() => undefined)
    }
  }
  try {
    // each record changes only after its backup is fsynced; the state is replaced atomically
    if ((await moveLegacyOriginals(data)) > 0)
      await writeFileAtomic(path, JSON.stringify(data, null, 2) + '\n')
  } catch {
    // the records already moved point at backups that exist: a later save may keep them
  }
  return undefined
}

/** Removes temp files left by a writer killed mid-write. */
export function removeStaleTempFiles(path: string): void {
  const dir = dirname(path)
  const prefix = `.${basename(path)}.`
  if (!existsSync(dir)) return
  for (const name of readdirSync(dir)) {
    if (name.startsWith(prefix) && name.endsWith('.tmp')) rmSync(join(dir, name), {force: true})
  }
}

/** The open state: `data` is the live object; change it, then `await save()`. */
export class StateStore {
  private constructor(
    readonly path: string,
    private readonly db: Low<GatewayState>,
    /** True when the file did not exist and `data` is a fresh seed (not yet written). */
    readonly created: boolean,
  ) {}

  get data(): GatewayState {
    return this.db.data
  }

  /**
   * Reads and validates the state file; a missing file gives a fresh seeded state.
   *
   * `mode: 'daemon'`: the daemon keeps the file open for its whole life without holding the lock;
   * each write takes the lock, and keeps the policies and providers that are on disk (other
   * processes may save those at run time; the daemon loads them at its next start), and the
   * bindings and budgets on disk (the CLI's), writing only its own employees, agents and keys.
   */
  static async open(
    path: string = homeFile('state'),
    options: {mode?: 'daemon' | 'locked'} = {},
  ): Promise<StateStore> {
    ensureHome()
    const adapter =
      options.mode === 'daemon'
        ? new AtomicJsonFile<GatewayState>(path, {
            lock: true,
            beforeWrite: (data) => keepDiskConfig(path, data),
          })
        : new AtomicJsonFile<GatewayState>(path)
    // A fresh state draws a new secret (node:crypto, 4-6 ms to load): made only when there is no
    // file to read. lowdb takes any default but undefined: null stands for "none yet".
    const db = new Low<GatewayState>(adapter, null as unknown as GatewayState)
    const existed = existsSync(path)
    await db.read()
    if (db.data === null) db.data = initialState()
    if (existed) {
      upgradeState(db.data)
      const stamp = adapter.lastReadStamp
      if (stamp === undefined || !checkedBefore(path, stamp)) {
        const problems = validateState(db.data)
        if (problems.length > 0) throw new StateCorruptError(path, problems.slice(0, 3).join('; '))
        if (stamp !== undefined) rememberChecked(path, stamp)
      }
      fixMode(path)
      // A state written before the backups of bindings' originals keeps them in base64 here
      // (vendor keys included): they move out on the first load that sees one (binding-backups.ts).
      if (db.data.bindings?.some((b) => b.files.some((f) => f.originalHash === undefined))) {
        const migrated = await migrateLegacyOriginals(path, db.data, options)
        if (migrated) return migrated
      }
    }
    return new StateStore(path, db, !existed)
  }

  /** Writes the current data durably (group commit with concurrent callers). */
  async save(): Promise<void> {
    await this.db.write()
  }
}

/**
 * One version of a file: inode, size, change and modification times in nanoseconds. Every gwctl
 * write replaces the file (a new inode); any other change moves its change time, which no one can
 * set back. So two equal stamps are the same bytes.
 */
function fileStamp(st: BigIntStats): string {
  return `${st.ino}:${st.size}:${st.ctimeNs}:${st.mtimeNs}`
}

let schemaPrint: string | undefined

/** What a stamp of a checked file is kept with: the schema it passed (another gwctl checks again). */
function checkedLine(stamp: string): string {
  schemaPrint ??= String(fnv1a(JSON.stringify(STATE_SCHEMA)))
  return `${stamp} ${schemaPrint}\n`
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  return h
}

/**
 * True when this very version of the state file passed the schema before (`state.json.checked`).
 * Reading commands (`status`, `logs`) then skip validating it: loading and running the validator
 * costs more than the rest of reading the state.
 */
function checkedBefore(path: string, stamp: string): boolean {
  try {
    return readFileSync(`${path}.checked`, 'utf8') === checkedLine(stamp)
  } catch {
    return false
  }
}

function rememberChecked(path: string, stamp: string): void {
  // named like the state's own temp files, so removeStaleTempFiles clears one a kill left
  const temp = join(dirname(path), `.${basename(path)}.checked.${process.pid}.tmp`)
  try {
    writeFileSync(temp, checkedLine(stamp), {mode: 0o600})
    renameSync(temp, `${path}.checked`)
  } catch {
    rmSync(temp, {force: true}) // a read-only home: the next read validates again, that is all
  }
}

/** `data` with the policies and providers currently on disk (when the file is readable). */
async function keepDiskConfig(path: string, data: GatewayState): Promise<GatewayState> {
  let disk: Partial<GatewayState> | undefined
  try {
    disk = JSON.parse(await readFile(path, 'utf8')) as Partial<GatewayState>
  } catch {
    return data
  }
  if (!Array.isArray(disk.policies) || !Array.isArray(disk.providers) || disk.secret !== data.secret)
    return data
  // Bindings and budgets are written by the CLI under the lock at run time: the disk copy is the
  // live one.
  return {
    ...data,
    policies: disk.policies,
    providers: disk.providers,
    ...(Array.isArray(disk.bindings) ? {bindings: disk.bindings} : {}),
    budgets: Array.isArray(disk.budgets) ? disk.budgets : undefined,
  }
}

function fixMode(path: string): void {
  try {
    if ((statSync(path).mode & 0o777) !== 0o600) chmodSync(path, 0o600)
  } catch {
    // not ours: doctor reports it
  }
}

/** What doctor needs to know about the state file, without changing it. */
export interface StateFileCheck {
  path: string
  exists: boolean
  mode?: number
  problems: string[]
}

/** Checks the state file: parses, schema-valid, mode. Never throws, never writes. */
export function inspectStateFile(path: string = homeFile('state')): StateFileCheck {
  if (!existsSync(path)) return {path, exists: false, problems: []}
  const mode = statSync(path).mode & 0o777
  let data: unknown
  try {
    data = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    return {path, exists: true, mode, problems: [`not JSON (${(error as Error).message})`]}
  }
  return {path, exists: true, mode, problems: validateState(upgradeState(data))}
}

/**
 * Runs `change` on the state under the cross-process lock, then saves. For the CLI when the
 * daemon is stopped.
 */
export async function withState<T>(
  change: (store: StateStore) => T | Promise<T>,
  path: string = homeFile('state'),
  options: StateLockOptions = {},
): Promise<T> {
  const {lockState} = await import('./state-lock.js')
  const release = await lockState(path, options)
  try {
    const store = await StateStore.open(path)
    const result = await change(store)
    await store.save()
    return result
  } finally {
    await release().catch(() => undefined)
  }
}
