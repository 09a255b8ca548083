/**
 * The gateway's request log: one row per request in SQLite (better-sqlite3, WAL), written in
 * batches off the response path, with an hourly roll-up kept in the same transaction so usage
 * pivots stay fast over millions of rows.
 *
 * `better-sqlite3` is a native module: it is imported only when a store is opened.
 */
import {existsSync, mkdirSync, renameSync} from 'node:fs'
import {dirname} from 'node:path'

import type BetterSqlite3 from 'better-sqlite3'

import {HOUR_MS, selectLogs, selectUsage} from './log-query.js'
import {openSqlite, privateFiles, walMode} from './sqlite.js'
import {
  START_CHECK_MAX_BYTES,
  clearDamageMark,
  damageMark,
  databaseBytes,
  markDamaged,
} from './log-db-check.js'
import type {LogFilters, LogRow, Pivot, UsageRow} from './log-query.js'
import type {EntryFilters, SessionEntry} from './usage-entries.js'
import {usageEntries} from './usage-entries.js'

/** One request, as the gateway logs it. Times are Unix milliseconds. */
export interface LogEntry {
  time: number
  agentId: string | null
  keyPrefix: string | null
  policyId: string | null
  /** Entrance family: chat, responses, messages, gemini. */
  entrance: string
  /** What the client asked for (the requested model). */
  requestedModel: string | null
  /** Provider and upstream model that answered (or were tried last). */
  provider: string | null
  model: string | null
  status: number
  fallback: boolean
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  /**
   * The part of `cacheCreationTokens` written to the 1-hour cache (Anthropic's
   * `ephemeral_1h_input_tokens`: billed at 2x input, a 5-minute write at 1.25x); 0 when unknown.
   */
  cache1hTokens?: number
  reasoningTokens: number
  latencyMs: number
  ttfbMs: number | null
  error: string | null
  /** `x-gw-project` header, else the agent's project. */
  project: string | null
  requestId?: string | null
  /** The family the upstream spoke when the request was translated (null: the entrance's own). */
  upstreamFamily?: string | null
  /**
   * The answer broke after its status went out (a stream cut off or ended without its terminal
   * event): the row keeps the status the client got, and counts as an error of class `5xx`.
   */
  broken?: boolean
}

export interface LogStoreOptions {
  /** Delete rows older than this many days (on open and every hour); none when undefined. */
  retentionDays?: number
  /**
   * Longest time a logged request waits in memory before its batch is written (default 10 ms):
   * the most a `kill -9` or a power cut can lose. SIGTERM/SIGINT write the queue before exit.
   */
  flushMs?: number
  /** A batch is written as soon as it holds this many rows (default 500). */
  batchSize?: number
  /** Clock for tests (Unix ms). */
  now?: () => number
  /**
   * Told when writing starts failing (a full or read-only disk: the message) and when it works
   * again (undefined), once per change: the batches in between are lost, model traffic is not.
   */
  onWriteProblem?: (problem: string | undefined) => void
}

/** How soon a batch that found the database locked is tried again (ms). */
const BUSY_RETRY_MS = 250
/** A lock held this long is reported (degraded) (ms). */
const BUSY_REPORT_MS = 30_000
/** Rows kept while the database stays locked; beyond, the oldest are dropped and reported. */
const MAX_QUEUED_ROWS = 200_000
const DAY_MS = 86_400_000

const SCHEMA = `
CREATE TABLE IF NOT EXISTS logs (
  id INTEGER PRIMARY KEY,
  ts INTEGER NOT NULL,
  agent_id TEXT,
  key_prefix TEXT,
  policy_id TEXT,
  entrance TEXT NOT NULL,
  requested_model TEXT,
  provider TEXT,
  model TEXT,
  status INTEGER NOT NULL,
  fallback INTEGER NOT NULL DEFAULT 0,
  input_tokens INTEGER NOT NULL DEFAULT 0,
  output_tokens INTEGER NOT NULL DEFAULT 0,
  cache_read_tokens INTEGER NOT NULL DEFAULT 0,
  cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
  reasoning_tokens INTEGER NOT NULL DEFAULT 0,
  latency_ms REAL NOT NULL DEFAULT 0,
  ttfb_ms REAL,
  error TEXT,
  project TEXT,
  request_id TEXT,
  upstream_family TEXT,
  broken INTEGER NOT NULL DEFAULT 0,
  cache_1h_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS logs_ts ON logs (ts);
CREATE INDEX IF NOT EXISTS logs_agent_ts ON logs (agent_id, ts);
CREATE INDEX IF NOT EXISTS logs_policy_ts ON logs (policy_id, ts);
CREATE TABLE IF NOT EXISTS usage_hourly (
  hour INTEGER NOT NULL,
  agent_id TEXT NOT NULL DEFAULT '',
  key_prefix TEXT NOT NULL DEFAULT '',
  policy_id TEXT NOT NULL DEFAULT '',
  provider TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '',
  project TEXT NOT NULL DEFAULT '',
  status_class TEXT NOT NULL,
  fallback INTEGER NOT NULL,
  requests INTEGER NOT NULL,
  errors INTEGER NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  cache_read_tokens INTEGER NOT NULL,
  cache_creation_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  cache_1h_tokens INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (hour, agent_id, key_prefix, policy_id, provider, model, project, status_class, fallback)
) WITHOUT ROWID;
`

/** Columns added after the first release: a database made before gets them on its first open to write. */
function addColumns(db: BetterSqlite3.Database): void {
  const columns = new Set(
    (db.prepare('PRAGMA table_info(logs)').all() as Array<{name: string}>).map((c) => c.name),
  )
  if (!columns.has('upstream_family')) db.exec('ALTER TABLE logs ADD COLUMN upstream_family TEXT')
  if (!columns.has('broken')) db.exec('ALTER TABLE logs ADD COLUMN broken INTEGER NOT NULL DEFAULT 0')
  if (!columns.has('cache_1h_tokens'))
    db.exec('ALTER TABLE logs ADD COLUMN cache_1h_tokens INTEGER NOT NULL DEFAULT 0')
  const hourly = db.prepare('PRAGMA table_info(usage_hourly)').all() as Array<{name: string}>
  if (!hourly.some((c) => c.name === 'cache_1h_tokens'))
    db.exec('ALTER TABLE usage_hourly ADD COLUMN cache_1h_tokens INTEGER NOT NULL DEFAULT 0')
}

/**
 * `2xx`/`4xx`/`5xx` (1xx and 3xx count with 2xx; the 499 of a client that left counts as 4xx; an
 * answer that broke after its status went out counts as 5xx, an upstream failure).
 */
export function statusClass(status: number, broken: boolean | undefined): string {
  if (status >= 500 || broken) return '5xx'
  if (status >= 400) return '4xx'
  return '2xx'
}

type Db = BetterSqlite3.Database
type Statement = BetterSqlite3.Statement

/** One usage_hourly bucket of a batch (the named parameters of the upsert). */
interface HourSum {
  hour: number
  agentId: string
  keyPrefix: string
  policyId: string
  provider: string
  model: string
  project: string
  statusClass: string
  fallback: number
  requests: number
  isError: number
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  cache1hTokens: number
  reasoningTokens: number
}

const INSERT_LOGS = `INSERT INTO logs (ts, agent_id, key_prefix, policy_id, entrance, requested_model,
  provider, model, status, fallback, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens,
  reasoning_tokens, latency_ms, ttfb_ms, error, project, request_id, upstream_family, broken,
  cache_1h_tokens) VALUES`
const ROW_COLUMNS = 23
const ROW_VALUES = `(${Array(ROW_COLUMNS).fill('?').join(', ')})`
/** Rows per INSERT statement, largest first (64 rows bind 1 472 values; SQLite allows 32 766). */
const INSERT_CHUNKS = [64, 16, 4, 1]

/**
 * The roll-up bucket of a row, as a Map key: its fields joined by NUL (null and '' are one bucket,
 * as in the table). A field holding a NUL itself (a client's model name can) would make two
 * buckets' keys collide: such a row's key is the JSON of its fields instead.
 */
function bucketKey(hour: number, e: LogEntry, klass: string, fallback: number): string {
  const key = `${hour}\u0000${e.agentId ?? ''}\u0000${e.keyPrefix ?? ''}\u0000${e.policyId ?? ''}\u0000${e.provider ?? ''}\u0000${e.model ?? ''}\u0000${e.project ?? ''}\u0000${klass}\u0000${fallback}`
  // 8 separators: more means a field held a NUL
  let separators = 0
  for (let i = key.indexOf('\u0000'); i !== -1; i = key.indexOf('\u0000', i + 1)) separators++
  if (separators === 8) return key
  return `json:${JSON.stringify([hour, e.agentId, e.keyPrefix, e.policyId, e.provider, e.model, e.project, klass, fallback])}`
}

/**
 * Batch window: a row is committed (WAL, one transaction per batch) at most this long after the
 * answer ended. At 10 ms a batch holds ~50 rows at 5 000 req/s: one transaction per batch keeps the
 * write cost per row low, while a crash loses only the last few milliseconds of rows.
 */
export const DEFAULT_FLUSH_MS = 10

export class LogStore {
  private queue: LogEntry[] = []
  private timer: NodeJS.Timeout | undefined
  private pruneTimer: NodeJS.Timeout | undefined
  /** Multi-row INSERTs of the logs table, by rows per statement (see INSERT_CHUNKS). */
  private readonly inserts = new Map<number, Statement>()
  private readonly upsertHour: Statement
  /** One transaction around a batch (made once: better-sqlite3 builds its wrappers per call). */
  private readonly writeInTransaction: (rows: LogEntry[], hours: Iterable<HourSum>) => void
  private readonly flushMs: number
  private readonly batchSize: number
  private readonly now: () => number
  private closed = false
  /** Why the last write failed, until one works again. */
  private writeProblem: string | undefined
  /** Since when writes have found the database locked by another process (ms). */
  private busySince: number | undefined

  private constructor(
    private readonly db: Db,
    private readonly options: LogStoreOptions,
  ) {
    this.flushMs = options.flushMs ?? DEFAULT_FLUSH_MS
    this.batchSize = options.batchSize ?? 500
    this.now = options.now ?? Date.now
    this.upsertHour =
      db.prepare(`INSERT INTO usage_hourly (hour, agent_id, key_prefix, policy_id, provider, model,
      project, status_class, fallback, requests, errors, input_tokens, output_tokens, cache_read_tokens,
      cache_creation_tokens, reasoning_tokens, cache_1h_tokens)
      VALUES (@hour, @agentId, @keyPrefix, @policyId, @provider, @model, @project, @statusClass, @fallback,
      @requests, @isError, @inputTokens, @outputTokens, @cacheReadTokens, @cacheCreationTokens, @reasoningTokens,
      @cache1hTokens)
      ON CONFLICT DO UPDATE SET requests = requests + excluded.requests, errors = errors + excluded.errors,
      input_tokens = input_tokens + excluded.input_tokens, output_tokens = output_tokens + excluded.output_tokens,
      cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
      cache_creation_tokens = cache_creation_tokens + excluded.cache_creation_tokens,
      reasoning_tokens = reasoning_tokens + excluded.reasoning_tokens,
      cache_1h_tokens = cache_1h_tokens + excluded.cache_1h_tokens`)
    this.writeInTransaction = db.transaction((rows: LogEntry[], hours: Iterable<HourSum>) => {
      this.insertRows(rows)
      for (const sum of hours) this.upsertHour.run(sum)
    })
  }

  /** The INSERT of `rows` log rows in one statement (prepared on first use). */
  private insertOf(rows: number): Statement {
    let statement = this.inserts.get(rows)
    if (!statement) {
      statement = this.db.prepare(`${INSERT_LOGS} ${Array(rows).fill(ROW_VALUES).join(', ')}`)
      this.inserts.set(rows, statement)
    }
    return statement
  }

  /**
   * Inserts a batch's rows with as few statements as the chunk sizes allow (a batch of 15 rows is
   * three statements, not 15): fewer calls into SQLite, each binding a flat array of values.
   */
  private insertRows(rows: LogEntry[]): void {
    let i = 0
    for (const size of INSERT_CHUNKS) {
      if (rows.length - i < size) continue
      const statement = this.insertOf(size)
      const values: unknown[] = new Array(size * ROW_COLUMNS)
      while (rows.length - i >= size) {
        let v = 0
        for (let k = 0; k < size; k++) {
          const e = rows[i + k]
          // in the column order of INSERT_LOGS
          values[v++] = Math.round(e.time)
          values[v++] = e.agentId
          values[v++] = e.keyPrefix
          values[v++] = e.policyId
          values[v++] = e.entrance
          values[v++] = e.requestedModel
          values[v++] = e.provider
          values[v++] = e.model
          values[v++] = e.status
          values[v++] = e.fallback ? 1 : 0
          values[v++] = e.inputTokens
          values[v++] = e.outputTokens
          values[v++] = e.cacheReadTokens
          values[v++] = e.cacheCreationTokens
          values[v++] = e.reasoningTokens
          values[v++] = e.latencyMs
          values[v++] = e.ttfbMs
          values[v++] = e.error
          values[v++] = e.project
          values[v++] = e.requestId ?? null
          values[v++] = e.upstreamFamily ?? null
          values[v++] = e.broken ? 1 : 0
          values[v++] = e.cache1hTokens ?? 0
        }
        statement.run(values)
        i += size
      }
    }
  }

  /** Opens (creating when missing) the log database at `path`. */
  static async open(path: string, options: LogStoreOptions = {}): Promise<LogStore> {
    mkdirSync(dirname(path), {recursive: true, mode: 0o700})
    privateFiles(path)
    const db = openSqlite(path)
    await walMode(db)
    db.pragma('synchronous = NORMAL')
    // short: a write is synchronous, and the gateway's event loop must not wait on another
    // process's lock (a busy batch is queued again instead, see flushQuietly)
    db.pragma('busy_timeout = 100')
    db.exec(SCHEMA)
    addColumns(db)
    const store = new LogStore(db, options)
    if (options.retentionDays !== undefined) {
      const prune = (): void => {
        try {
          store.prune(options.retentionDays!)
        } catch (error) {
          // a full disk can refuse even a DELETE's journal: pruning waits for the next hour
          store.reportProblem(`could not prune old rows: ${(error as Error).message}`)
        }
      }
      prune()
      store.pruneTimer = setInterval(prune, HOUR_MS)
      store.pruneTimer.unref()
    }
    return store
  }

  /**
   * Moves a damaged log database aside before the gateway opens it: `<path>.damaged-<time>`
   * (with its `-wal` and `-shm` files), so the gateway starts on a new, empty one instead of
   * refusing to start (model traffic does not need the log). Damaged means SQLite itself says
   * so: the open or `PRAGMA quick_check` fails with SQLITE_NOTADB or SQLITE_CORRUPT, or the check
   * lists a problem, or a check or query of the running gateway found damage in this very file
   * (its mark, log-db-check.ts). Any other failure (read-only, locked, missing permissions) is
   * thrown: it is not the file's fault. Returns where it went and why, or undefined when the file
   * is sound as far as it was checked: a file over `fullCheckMaxBytes` (default
   * {@link START_CHECK_MAX_BYTES}) gets only a quick look here (header, schema, the last row of
   * each table), and `deferred` says its full check is left to {@link checkInWorker}.
   *
   * Must run before any connection of this process opens the file: it is checked through SQLite
   * only (never read with plain fs calls, see `privateFiles`), and renamed with no connection open.
   */
  static moveAsideIfDamaged(
    path: string,
    now: Date = new Date(),
    options: {fullCheckMaxBytes?: number; deferred?: (bytes: number) => void} = {},
  ): {movedTo: string; reason: string} | undefined {
    if (!existsSync(path)) {
      clearDamageMark(path)
      return undefined
    }
    let reason: string | undefined = damageMark(path)
    if (reason === undefined) {
      const bytes = databaseBytes(path)
      const full = bytes <= (options.fullCheckMaxBytes ?? START_CHECK_MAX_BYTES)
      let db: Db | undefined
      try {
        db = openSqlite(path, {fileMustExist: true})
        const problems = full ? quickCheck(db) : quickLook(db)
        if (problems.length > 0) reason = problems.slice(0, 3).join('; ')
      } catch (error) {
        if (!isDamage(error)) throw error
        reason = (error as Error).message
      } finally {
        try {
          db?.close()
        } catch {
          // a damaged file may refuse even the checkpoint of close; the rename below still works
        }
      }
      if (reason === undefined && !full) options.deferred?.(bytes)
    }
    if (reason === undefined) return undefined
    const movedTo = `${path}.damaged-${now.toISOString().replace(/[:.]/g, '-')}`
    renameSync(path, movedTo)
    for (const suffix of ['-wal', '-shm']) {
      if (existsSync(path + suffix)) renameSync(path + suffix, movedTo + suffix)
    }
    clearDamageMark(path)
    return {movedTo, reason}
  }

  /**
   * Checks the database file at `path` (for `doctor`): `PRAGMA integrity_check`. A missing file
   * is fine (nothing logged yet).
   */
  static async check(path: string): Promise<{ok: boolean; problems: string[]}> {
    const {existsSync} = await import('node:fs')
    if (!existsSync(path)) return {ok: true, problems: []}
    let db: Db | undefined
    try {
      db = openSqlite(path, {readonly: true, fileMustExist: true})
      return integrity(db)
    } catch (error) {
      return {ok: false, problems: [(error as Error).message]}
    } finally {
      db?.close()
    }
  }

  /** Queues one request's row; it is written within `flushMs`, in a batch. Never throws. */
  append(entry: LogEntry): void {
    if (this.closed) return
    this.queue.push(entry)
    // while another process holds the lock, only the retry timer tries again
    if (this.queue.length >= this.batchSize && this.busySince === undefined) {
      if (this.timer) clearTimeout(this.timer)
      this.timer = undefined
      setImmediate(() => this.flushQuietly())
    } else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined
        this.flushQuietly()
      }, this.flushMs)
      this.timer.unref()
    }
  }

  /** Writes every queued row now, in one transaction. */
  flush(): void {
    if (this.queue.length === 0) return
    const batch = this.queue
    this.queue = []
    this.writeBatch(batch)
  }

  /** The database file. */
  get path(): string {
    return this.db.name
  }

  /** Rows waiting to be written. */
  get pending(): number {
    return this.queue.length
  }

  /** Rows lost since the store opened (a batch the disk refused, or past the locked-queue bound). */
  dropped = 0

  private flushQuietly(): void {
    if (this.queue.length === 0) return
    const batch = this.queue
    this.queue = []
    try {
      this.writeBatch(batch)
      this.busySince = undefined
      // only a batch actually written says the disk works again (a query's flush of an empty
      // queue does not)
      if (this.writeProblem !== undefined) {
        this.writeProblem = undefined
        this.options.onWriteProblem?.(undefined)
      }
    } catch (error) {
      if ((error as {code?: string}).code === 'SQLITE_BUSY' && !this.closed) {
        // Another process holds the write lock (`gwctl usage rescan` swapping its history table
        // in takes seconds on a big history): nothing of the batch was written, so it goes back
        // to the head of the queue and is tried again shortly, in order, without blocking the
        // event loop for more than the short busy timeout. Only a lock held for long, or a queue
        // grown past its bound, is a problem worth reporting.
        this.queue = batch.concat(this.queue)
        this.busySince ??= Date.now()
        if (Date.now() - this.busySince > BUSY_REPORT_MS)
          this.reportProblem(
            `the log database has been locked by another process for ${Math.round((Date.now() - this.busySince) / 1000)} s`,
          )
        if (this.queue.length > MAX_QUEUED_ROWS) {
          const lost = this.queue.length - MAX_QUEUED_ROWS
          this.queue = this.queue.slice(lost)
          this.dropped += lost
          this.reportProblem(`the log database stayed locked: ${lost} rows were dropped to bound memory`)
        }
        if (!this.timer) {
          this.timer = setTimeout(() => {
            this.timer = undefined
            this.flushQuietly()
          }, BUSY_RETRY_MS)
          this.timer.unref()
        }
        return
      }
      // A full disk must not take the gateway down; the rows of this batch are lost.
      this.dropped += batch.length
      if (isDamage(error)) {
        // the next start moves this file aside (log-db-check.ts)
        markDamaged(this.path, (error as Error).message)
        this.reportProblem(
          `could not write a batch: the database is damaged (${(error as Error).message}); \`gwctl gateway restart\` moves it aside`,
        )
      } else this.reportProblem(`could not write a batch: ${(error as Error).message}`)
    }
  }

  private reportProblem(problem: string): void {
    if (this.writeProblem !== undefined) return
    this.writeProblem = problem
    if (this.options.onWriteProblem) this.options.onWriteProblem(problem)
    else process.emitWarning(`gwctl log store: ${problem}`)
  }

  private readonly writeBatch = (batch: LogEntry[]): void => {
    // The hourly rows of a batch are summed in memory first: at a steady request rate most rows of
    // a batch share one (hour, agent, provider, model, ...) bucket, so this is one upsert per
    // bucket instead of one per request.
    const hours = new Map<string, HourSum>()
    for (const e of batch) {
      const hour = Math.floor(Math.round(e.time) / HOUR_MS)
      const fallback = e.fallback ? 1 : 0
      const klass = statusClass(e.status, e.broken)
      const isError = e.status >= 400 || e.broken ? 1 : 0
      const key = bucketKey(hour, e, klass, fallback)
      const sum = hours.get(key)
      if (sum) {
        sum.requests++
        sum.isError += isError
        sum.inputTokens += e.inputTokens
        sum.outputTokens += e.outputTokens
        sum.cacheReadTokens += e.cacheReadTokens
        sum.cacheCreationTokens += e.cacheCreationTokens
        sum.cache1hTokens += e.cache1hTokens ?? 0
        sum.reasoningTokens += e.reasoningTokens
      } else
        hours.set(key, {
          hour,
          agentId: e.agentId ?? '',
          keyPrefix: e.keyPrefix ?? '',
          policyId: e.policyId ?? '',
          provider: e.provider ?? '',
          model: e.model ?? '',
          project: e.project ?? '',
          statusClass: klass,
          fallback,
          requests: 1,
          isError,
          inputTokens: e.inputTokens,
          outputTokens: e.outputTokens,
          cacheReadTokens: e.cacheReadTokens,
          cacheCreationTokens: e.cacheCreationTokens,
          cache1hTokens: e.cache1hTokens ?? 0,
          reasoningTokens: e.reasoningTokens,
        })
    }
    this.writeInTransaction(batch, hours.values())
  }

  /** Recent requests, newest first (queued rows are written first so they show up). */
  queryLogs(filters: LogFilters = {}): LogRow[] {
    this.flushQuietly()
    return selectLogs(this.db, filters)
  }

  /**
   * Usage summed per pivot value (one row `all` without a pivot), largest token total first.
   * Reads the hourly roll-up, plus the raw rows of the partial hour after `since`.
   */
  usage(filters: Omit<LogFilters, 'limit'> & {pivot?: Pivot} = {}): UsageRow[] {
    this.flushQuietly()
    return selectUsage(this.db, filters)
  }

  /**
   * The requests with usage over the gateway's log and the agents' history (usage-entries.ts),
   * oldest first: what the daemon's statusline memory loads once (`daemon/usage-memory.ts`).
   */
  usageEntries(filters: EntryFilters): SessionEntry[] {
    this.flushQuietly()
    return usageEntries(this.db, filters)
  }

  /** Runs a read on the database, the queued rows written first (budgets re-read their spend). */
  read<T>(query: (db: Db) => T): T {
    this.flushQuietly()
    return query(this.db)
  }

  /** Deletes rows (and whole roll-up hours) older than `days` days; returns the log rows deleted. */
  prune(days: number): number {
    this.flushQuietly()
    const cutoff = this.now() - days * DAY_MS
    return this.db.transaction(() => {
      const deleted = this.db.prepare('DELETE FROM logs WHERE ts < ?').run(cutoff).changes
      this.db.prepare('DELETE FROM usage_hourly WHERE hour < ?').run(Math.floor(cutoff / HOUR_MS))
      return deleted
    })()
  }

  /** `PRAGMA integrity_check` of the open database. */
  integrityCheck(): {ok: boolean; problems: string[]} {
    return integrity(this.db)
  }

  /** Writes what is queued and closes the database. */
  close(): void {
    if (this.closed) return
    if (this.timer) clearTimeout(this.timer)
    if (this.pruneTimer) clearInterval(this.pruneTimer)
    this.flushQuietly()
    this.closed = true
    this.db.close()
  }
}

/** `PRAGMA quick_check`: every page (problems listed; empty when sound). */
function quickCheck(db: Db): string[] {
  const rows = db.pragma('quick_check') as Array<{quick_check: string}>
  return rows.map((r) => r.quick_check).filter((m) => m !== 'ok')
}

/**
 * A look at a few pages, for a database too large to check in full at start: the header and the
 * schema, and the last row of each table (the pages the next writes go to). Damage shows as a
 * thrown SQLITE_NOTADB/SQLITE_CORRUPT; other errors of one table (a table without rowid) are
 * not the file's fault and are skipped.
 */
function quickLook(db: Db): string[] {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .pluck()
    .all() as string[]
  for (const table of tables) {
    try {
      db.prepare(`SELECT * FROM "${table.replace(/"/g, '""')}" ORDER BY rowid DESC LIMIT 1`).get()
    } catch (error) {
      if (isDamage(error)) throw error
    }
  }
  return []
}

function integrity(db: Db): {ok: boolean; problems: string[]} {
  const rows = db.pragma('integrity_check') as Array<{integrity_check: string}>
  const problems = rows.map((r) => r.integrity_check).filter((m) => m !== 'ok')
  return {ok: problems.length === 0, problems}
}

/** Whether `error` is SQLite saying the file is not a database or is corrupt. */
export function isDamage(error: unknown): boolean {
  const code = String((error as {code?: unknown} | undefined)?.code)
  return code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT')
}
