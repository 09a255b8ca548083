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
import type {randomBytes as RandomBytes} from 'node:crypto'
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
import {createRequire} from 'node:module'
import {basename, dirname, join} from 'node:path'
import type {Ajv as AjvClass, ErrorObject} from 'ajv'
import type {Adapter} from 'lowdb'
import {Low} from 'lowdb'

import {writeFileAtomic} from '../core/atomic-file.js'
import {ConfigError, GwError} from '../core/errors.js'
import {processAlive} from '../core/process.js'
import {describeSchemaErrors} from '../core/schema-errors.js'
import type {Family, PolicyConfig, ProviderConfig} from './schema.js'
import {DEFAULT_BREAKER, DEFAULT_TIMEOUTS, FAMILIES, POLICY_SCHEMA, PROVIDER_SCHEMA} from './schema.js'
import {ensureHome, homeFile} from './paths.js'

/** The human owner of agents. */
export interface EmployeeRecord {
  id: string
  name: string
  /** Contact, e-mail recommended; the natural key of an employee (compared case-insensitively). */
  contact: string
  team?: string
  role?: string
  createdAt: number
  updatedAt: number
}

/** An agent known to the gateway. Times are Unix seconds unless the name says otherwise. */
export interface AgentRecord {
  id: string
  name: string
  type: string
  employeeId: string
  parentAgentId?: string
  parentAgentName?: string
  sourceTool?: string
  configPath?: string
  policyId: string
  createdAt: number
  updatedAt: number
  /** Unix milliseconds of the last key issue (the 5 s issue limit). */
  lastIssuedAtMs?: number
  lastSeenAt?: number
  /** Entrance family of the agent's latest authenticated request. */
  lastEntrance?: Family
}

/** A key: never the key itself, only its HMAC under the install secret and a display prefix. */
export interface KeyRecord {
  id: string
  agentId: string
  /** HMAC-SHA256(secret, key), hex: the lookup index. */
  hash: string
  /** First characters of the key followed by an ellipsis. */
  prefix: string
  createdAt: number
  revokedAt?: number
  lastUsedAt?: number
}

/**
 * One config file that `gwctl agents enable` changed. `original` is the file's bytes before gwctl
 * first touched it (base64; null: the file did not exist). Hashes are SHA-256 hex of whole files;
 * the key gwctl wrote is never stored, only the hash of the file that holds it.
 */
export interface BindingFileRecord {
  path: string
  original: string | null
  /** Hash of the bytes gwctl wrote last; null while the first write is under way. */
  writtenHash: string | null
  /** A write in progress: the hash of the bytes about to be written ('absent': a delete). */
  pendingHash?: string
}

/** A route binding: an agent's own config points at this gateway with this agent's key. */
export interface BindingRecord {
  /** The discovered tool: claude-code, codex or gemini-cli. */
  tool: string
  agentId: string
  keyId: string
  port: number
  /** bound, or a change under way (a crash left it: the next enable/disable reconciles). */
  phase: 'binding' | 'bound' | 'unbinding'
  files: BindingFileRecord[]
  createdAt: number
  updatedAt: number
}

export interface GatewayState {
  version: 1
  /** Per-install HMAC secret (hex); the file is 0600. */
  secret: string
  employees: EmployeeRecord[]
  agents: AgentRecord[]
  keys: KeyRecord[]
  policies: PolicyConfig[]
  providers: ProviderConfig[]
  /** Route bindings of `gwctl agents enable` (absent in files written before them). */
  bindings?: BindingRecord[]
}

/** The main coding-agent kind whose agents default to `<kind>_default` (see agent-kinds). */
export const SEEDED_POLICY_IDS = ['default', 'claude_code_default'] as const

function seedPolicy(id: string, description: string): PolicyConfig {
  return {
    id,
    description,
    routes: {},
    fallbacks: true,
    breaker: {...DEFAULT_BREAKER},
    timeouts: {...DEFAULT_TIMEOUTS},
  }
}

/** A fresh state: a new secret, the seeded policies with empty routes, nothing else. */
export function initialState(): GatewayState {
  return {
    version: 1,
    // node:crypto loaded only to seed a new state: commands that read one never need it
    secret: (createRequire(import.meta.url)('node:crypto') as {randomBytes: typeof RandomBytes})
      .randomBytes(32)
      .toString('hex'),
    employees: [],
    agents: [],
    keys: [],
    policies: [
      seedPolicy('default', 'Default policy of every agent kind without its own.'),
      seedPolicy('claude_code_default', 'Default policy of claude_code agents.'),
    ],
    providers: [],
  }
}

const optionalString = {type: 'string'}
const unixSeconds = {type: 'integer', minimum: 0}

function withoutId<T extends {$id: string}>(schema: T): Omit<T, '$id'> {
  const {$id: _id, ...rest} = schema
  return rest
}

/**
 * JSON Schema of the state file. Policies and providers use the router's schemas
 * (`POLICY_SCHEMA`, `PROVIDER_SCHEMA`: one definition for the state, the CLI and the daemon).
 */
export const STATE_SCHEMA = {
  type: 'object',
  required: ['version', 'secret', 'employees', 'agents', 'keys', 'policies', 'providers'],
  properties: {
    version: {const: 1},
    secret: {type: 'string', pattern: '^[0-9a-f]{64}$'},
    employees: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'name', 'contact', 'createdAt', 'updatedAt'],
        properties: {
          id: {type: 'string', minLength: 1},
          name: {type: 'string', minLength: 1},
          contact: {type: 'string', minLength: 1},
          team: optionalString,
          role: optionalString,
          createdAt: unixSeconds,
          updatedAt: unixSeconds,
        },
      },
    },
    agents: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'name', 'type', 'employeeId', 'policyId', 'createdAt', 'updatedAt'],
        properties: {
          id: {type: 'string', minLength: 1},
          name: {type: 'string', minLength: 1},
          type: {type: 'string', minLength: 1},
          employeeId: {type: 'string', minLength: 1},
          parentAgentId: optionalString,
          parentAgentName: optionalString,
          sourceTool: optionalString,
          configPath: optionalString,
          policyId: {type: 'string', minLength: 1},
          createdAt: unixSeconds,
          updatedAt: unixSeconds,
          lastIssuedAtMs: {type: 'integer', minimum: 0},
          lastSeenAt: unixSeconds,
          lastEntrance: {enum: [...FAMILIES]},
        },
      },
    },
    keys: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'agentId', 'hash', 'prefix', 'createdAt'],
        properties: {
          id: {type: 'string', minLength: 1},
          agentId: {type: 'string', minLength: 1},
          hash: {type: 'string', pattern: '^[0-9a-f]{64}$'},
          prefix: {type: 'string', minLength: 1},
          createdAt: unixSeconds,
          revokedAt: unixSeconds,
          lastUsedAt: unixSeconds,
        },
      },
    },
    policies: {type: 'array', items: withoutId(POLICY_SCHEMA)},
    providers: {type: 'array', items: withoutId(PROVIDER_SCHEMA)},
    bindings: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['tool', 'agentId', 'keyId', 'port', 'phase', 'files', 'createdAt', 'updatedAt'],
        properties: {
          tool: {type: 'string', minLength: 1},
          agentId: {type: 'string', minLength: 1},
          keyId: {type: 'string', minLength: 1},
          port: {type: 'integer', minimum: 1, maximum: 65535},
          phase: {enum: ['binding', 'bound', 'unbinding']},
          files: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['path', 'original', 'writtenHash'],
              properties: {
                path: {type: 'string', minLength: 1},
                original: {type: ['string', 'null']},
                writtenHash: {type: ['string', 'null']},
                pendingHash: {type: 'string'},
              },
            },
          },
          createdAt: unixSeconds,
          updatedAt: unixSeconds,
        },
      },
    },
  },
} as const

/** A compiled validator: true when valid, else its `errors` say why. */
interface StateValidator {
  (data: unknown): boolean
  errors?: ErrorObject[] | null
}

let validator: StateValidator | undefined

/**
 * The state validator. `npm run build` writes it as ajv standalone code
 * (`dist/store/state-validator.cjs`, by `scripts/gen-validators.js`), so a command that reads the
 * state neither loads ajv's compiler nor compiles the schema (about 40 ms of every `status` and
 * `logs`). Run from the sources (tests), where there is no generated file, it is compiled here.
 */
function stateValidator(): StateValidator {
  const require = createRequire(import.meta.url)
  try {
    return require('./state-validator.cjs') as StateValidator
  } catch (error) {
    const missing =
      (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' &&
      String((error as Error).message).includes('state-validator.cjs')
    if (!missing) throw error
  }
  const {Ajv} = require('ajv') as {Ajv: typeof AjvClass}
  return new Ajv(STATE_VALIDATOR_OPTIONS).compile(STATE_SCHEMA)
}

/** The ajv options of the state validator (the build's generator uses the same). */
export const STATE_VALIDATOR_OPTIONS = {allErrors: true, strict: false} as const

/**
 * Fills what older state files may lack, in place: policies without `fallbacks`, `breaker` or
 * `timeouts` get the defaults. Returns `data`.
 */
export function upgradeState(data: unknown): unknown {
  const policies = (data as {policies?: unknown} | null)?.policies
  if (!Array.isArray(policies)) return data
  for (const p of policies as Array<Record<string, unknown>>) {
    if (!p || typeof p !== 'object') continue
    p.fallbacks ??= true
    p.breaker ??= {...DEFAULT_BREAKER}
    p.timeouts ??= {...DEFAULT_TIMEOUTS}
  }
  return data
}

/** Validates a parsed state; returns a list of problems (empty when valid). */
export function validateState(data: unknown): string[] {
  validator ??= stateValidator()
  if (validator(data)) return []
  return describeSchemaErrors('state', validator.errors ?? [])
}

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
    const release = this.options.lock ? await lockState(this.path) : undefined
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
   * bindings on disk (the CLI's), writing only its own employees, agents and keys.
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
    const db = new Low<GatewayState>(adapter, initialState())
    const existed = existsSync(path)
    await db.read()
    if (existed) {
      upgradeState(db.data)
      const stamp = adapter.lastReadStamp
      if (stamp === undefined || !checkedBefore(path, stamp)) {
        const problems = validateState(db.data)
        if (problems.length > 0) throw new StateCorruptError(path, problems.slice(0, 3).join('; '))
        if (stamp !== undefined) rememberChecked(path, stamp)
      }
      fixMode(path)
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
  // Bindings are written by the CLI under the lock at run time: the disk copy is the live one.
  return {
    ...data,
    policies: disk.policies,
    providers: disk.providers,
    ...(Array.isArray(disk.bindings) ? {bindings: disk.bindings} : {}),
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

/** Options of the state lock. */
export interface StateLockOptions {
  /** How long to keep trying when another process holds the lock (ms, default 3000). */
  waitMs?: number
  /** Called when the held lock was lost (its mtime could not be refreshed in time). */
  onCompromised?: (error: Error) => void
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
 */
function ownerAlive(path: string): boolean {
  let pid: number
  try {
    pid = Number(readFileSync(ownerFile(path), 'utf8').trim())
  } catch {
    try {
      return Date.now() - statSync(`${path}.lock`).mtimeMs < 1000
    } catch {
      return true // the lock is gone too: the next attempt takes it
    }
  }
  if (!Number.isInteger(pid) || pid <= 0) return true
  return processAlive(pid)
}

/**
 * Takes the cross-process lock of the state file; resolves to its release function. The holder's
 * pid is kept beside the lock, so a lock left by a killed process is broken at once instead of
 * after the 10 s staleness period.
 */
export async function lockState(
  path: string = homeFile('state'),
  options: StateLockOptions = {},
): Promise<() => Promise<void>> {
  ensureHome()
  const waitMs = options.waitMs ?? 3000
  const {default: lockfile} = await import('proper-lockfile')
  const attempt = (retries: number) =>
    lockfile.lock(path, {
      realpath: false,
      stale: 10_000,
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
    if ((error as NodeJS.ErrnoException).code === 'ELOCKED') throw new StateLockedError(path)
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
  return async () => {
    // The lock first: a crash in between leaves only an owner file, which the next holder replaces.
    await release()
    rmSync(ownerFile(path), {force: true})
  }
}

/** Removes a lock left by a process that no longer exists (the caller knows it is dead). */
export function breakStateLock(path: string = homeFile('state')): void {
  rmSync(ownerFile(path), {force: true})
  rmSync(`${path}.lock`, {recursive: true, force: true})
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
