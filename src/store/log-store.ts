/**
 * The gateway's request log: one row per request in SQLite (better-sqlite3, WAL), written in
 * batches off the response path, with an hourly roll-up kept in the same transaction so usage
 * pivots stay fast over millions of rows.
 *
 * `better-sqlite3` is a native module: it is imported only when a store is opened.
 */
import {existsSync, mkdirSync, renameSync} from 'node:fs'
import {dirname} from 'node:path'
import type {Worker} from 'node:worker_threads'

import type BetterSqlite3 from 'better-sqlite3'

import {FIRST_EDGE} from './context-bands.js'
import {HOUR_MS, selectLogs, selectUsage} from './log-query.js'
import {isBusy, openSqlite, privateFiles, walMode} from './sqlite.js'
import {BILLED_TRY_NOTE} from './usage-sql.js'
import {
  SELECT_COMMITTED,
  SPILL_SCHEMA,
  UPSERT_COMMITTED,
  appendSpill,
  readSpill,
  spillPath,
  truncateSpill,
} from './log-spill.js'
import type {SpilledRows} from './log-spill.js'
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
  /**
   * The row is a billed try's of its own (daemon/router/log-entry.ts `billedTryEntries`): tokens an
   * upstream billed for an answer the client never got, whose request has its own row. It counts
   * as any row (a request, its tokens and cost, an error when its status is one: every surface
   * agrees, and the long-context pricing averages tokens over rows); `usage reconcile` matches it
   * to no history row, and `gwctl logs --json` shows `billedTry`.
   */
  billedTry?: boolean
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
  /**
   * Where the writes run: `thread` on a worker thread that owns the write connection from the
   * start, `inline` (default) on the caller's thread, `auto` inline until the rows come faster
   * than `promoteRowsPerSecond`, then on a worker thread (see {@link logWriterMode}).
   */
  writer?: LogWriterMode
  /**
   * `auto`: rows in one second that start the writer thread (default
   * {@link PROMOTE_ROWS_PER_SECOND}).
   */
  promoteRowsPerSecond?: number
  /**
   * `auto`: told when the writer thread took the writes over, or why it could not start (the
   * writes then stay on the caller's thread, which is no problem of the log).
   */
  onWriterThread?: (failed?: string) => void
}

/**
 * How long a write waits for another process's lock before its batch goes to the side file (ms):
 * short, so that the batches behind it do not wait in memory.
 */
const WRITE_BUSY_MS = 5
/** How soon the side file is tried again while the database stays locked (ms). */
const SPILL_RETRY_MS = 50
/** How soon after a failure that is not a lock (a full disk) (ms). */
const SPILL_FAILED_RETRY_MS = 1000
/** How long opening waits for another process's lock (the schema may need it) (ms). */
const OPEN_BUSY_MS = 10_000
/**
 * The write connection's SQLite page cache (`PRAGMA cache_size`, negative: KiB): 2 MB.
 * better-sqlite3 builds SQLite with a 16 MB default (`SQLITE_DEFAULT_CACHE_SIZE=-16000`), and every
 * page a batch writes stays cached until that is full: under load the daemon's RSS grew with the
 * rows written (about 10 MB after 35 000 rows, 16 MB from about 75 000 on) for pages no write reads
 * again. A batch touches the right-hand edges of the table and its indexes and the hourly roll-up.
 * Reads have a connection of their own with SQLite's default, filled only by reads: the writer
 * thread's, or inline one opened at the first read (from this cache, repeated pivots over a large
 * roll-up, 100 000 rows, read 10-15 % slower: bench/README.md, "rss").
 */
export const LOG_CACHE_KB = 2000
/** A read connection's page cache (KiB): better-sqlite3's default, which only reads fill. */
const READ_CACHE_KB = 16_000
/** A lock held this long is reported (degraded) (ms). */
const BUSY_REPORT_MS = 30_000
/** Rows kept in the side file while the database stays locked; beyond, new batches are dropped and reported. */
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
  cache_1h_tokens INTEGER NOT NULL DEFAULT 0,
  billed_try INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS logs_ts ON logs (ts);
CREATE INDEX IF NOT EXISTS logs_agent_ts ON logs (agent_id, ts);
CREATE INDEX IF NOT EXISTS logs_policy_ts ON logs (policy_id, ts);
CREATE INDEX IF NOT EXISTS logs_long ON logs (ts) WHERE input_tokens > ${FIRST_EDGE};
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

/**
 * Columns added after the first release: a database made before gets them on its first open to
 * write. In one transaction: a column added with the rows it marks (`billed_try`), or neither (a
 * kill between an ALTER and its UPDATE, each its own commit, left the column with no row marked,
 * for good: the next open found the column).
 */
function addColumns(db: BetterSqlite3.Database): void {
  db.transaction(addColumnsNow)(db)
}

function addColumnsNow(db: BetterSqlite3.Database): void {
  const columns = new Set(
    (db.prepare('PRAGMA table_info(logs)').all() as Array<{name: string}>).map((c) => c.name),
  )
  if (!columns.has('upstream_family')) db.exec('ALTER TABLE logs ADD COLUMN upstream_family TEXT')
  if (!columns.has('broken')) db.exec('ALTER TABLE logs ADD COLUMN broken INTEGER NOT NULL DEFAULT 0')
  if (!columns.has('cache_1h_tokens'))
    db.exec('ALTER TABLE logs ADD COLUMN cache_1h_tokens INTEGER NOT NULL DEFAULT 0')
  if (!columns.has('billed_try')) {
    db.exec('ALTER TABLE logs ADD COLUMN billed_try INTEGER NOT NULL DEFAULT 0')
    // the billed tries written before the column, known by their note (once, here)
    db.exec(`UPDATE logs SET billed_try = 1 WHERE ${BILLED_TRY_NOTE}`)
  }
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
  cache_1h_tokens, billed_try) VALUES`
const ROW_COLUMNS = 24
const ROW_VALUES = `(${Array(ROW_COLUMNS).fill('?').join(', ')})`
/** Rows per INSERT statement, largest first (64 rows bind 1 472 values; SQLite allows 32 766). */
const INSERT_CHUNKS = [64, 16, 4, 1]
/** Rows per transaction when a command applies the side file (`applySpill`): tens of ms each. */
const APPLY_CHUNK_ROWS = 5000

/** Where each field sits in a row's values (the column order of INSERT_LOGS). */
const F = {
  time: 0,
  agentId: 1,
  keyPrefix: 2,
  policyId: 3,
  provider: 6,
  model: 7,
  status: 8,
  fallback: 9,
  inputTokens: 10,
  outputTokens: 11,
  cacheReadTokens: 12,
  cacheCreationTokens: 13,
  reasoningTokens: 14,
  project: 18,
  broken: 21,
  cache1hTokens: 22,
  billedTry: 23,
} as const

/**
 * A batch's rows as one flat array of values, `ROW_COLUMNS` per row in the column order of
 * INSERT_LOGS: what the inserts bind, what goes to the writer thread (one array per batch, no
 * per-row objects to clone) and what the side file keeps.
 */
export function rowValues(rows: readonly LogEntry[]): unknown[] {
  const values: unknown[] = new Array(rows.length * ROW_COLUMNS)
  let v = 0
  for (const e of rows) {
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
    values[v++] = e.billedTry ? 1 : 0
  }
  return values
}

/** The row values' count of columns (for the writer thread and the side file). */
export const LOG_ROW_COLUMNS = ROW_COLUMNS

const text = (value: unknown): string => (value === null || value === undefined ? '' : String(value))

/**
 * The roll-up bucket of the row at `o` in `v`, as a Map key: its fields joined by NUL (null and ''
 * are one bucket, as in the table). A field holding a NUL itself (a client's model name can) would
 * make two buckets' keys collide: such a row's key is the JSON of its fields instead.
 */
function bucketKey(hour: number, v: ArrayLike<unknown>, o: number, klass: string, fallback: number): string {
  const key = `${hour}\u0000${text(v[o + F.agentId])}\u0000${text(v[o + F.keyPrefix])}\u0000${text(v[o + F.policyId])}\u0000${text(v[o + F.provider])}\u0000${text(v[o + F.model])}\u0000${text(v[o + F.project])}\u0000${klass}\u0000${fallback}`
  // 8 separators: more means a field held a NUL
  let separators = 0
  for (let i = key.indexOf('\u0000'); i !== -1; i = key.indexOf('\u0000', i + 1)) separators++
  if (separators === 8) return key
  return `json:${JSON.stringify([hour, v[o + F.agentId], v[o + F.keyPrefix], v[o + F.policyId], v[o + F.provider], v[o + F.model], v[o + F.project], klass, fallback])}`
}

/**
 * Batch window: a row is committed (WAL, one transaction per batch) at most this long after the
 * answer ended. At 10 ms a batch holds ~50 rows at 5 000 req/s: one transaction per batch keeps the
 * write cost per row low, while a crash loses only the last few milliseconds of rows.
 */
export const DEFAULT_FLUSH_MS = 10

/**
 * How a {@link LogStore} writes: on a thread of its own, on the caller's, or on the caller's
 * until the load makes a thread of its own worth its memory (`auto`).
 */
export type LogWriterMode = 'thread' | 'inline' | 'auto'

/**
 * `auto`'s threshold: a second with this many rows starts the writer thread. Writing a row costs
 * the request thread 8-15 µs (a batch's inserts, roll-up and commit, bench/README.md), so at
 * 1 000 rows a second the log takes about 1 % of it; a developer's agents send a few requests a
 * second and never start the thread (about 10 MB of memory), a load that can fill the request
 * thread does, within its first second.
 */
export const PROMOTE_ROWS_PER_SECOND = 1000

/**
 * The daemon's writer mode: `GWCTL_LOG_WRITER` (`thread`, `inline`, `auto`) when set, else `auto`
 * on a machine with at least 4 cores (the thread runs beside the request thread, on a core of its
 * own) and `inline` on fewer (there it would take the request thread's core: on 2 shared cores it
 * saved the request thread nothing measurable).
 */
export function logWriterMode(setting: string | undefined, cores: number): LogWriterMode {
  if (setting === 'thread' || setting === 'inline' || setting === 'auto') return setting
  return cores >= 4 ? 'auto' : 'inline'
}

/** What a {@link LogWriter} needs to know (the store's options that concern writing). */
export interface LogWriterOptions {
  retentionDays?: number
  now?: () => number
  /** See {@link LogStoreOptions.onWriteProblem}. */
  onWriteProblem?: (problem: string | undefined) => void
  /** Told after a batch or a replay changed `dropped` or `spilledRows` (the writer thread's counters). */
  onCounts?: () => void
  /**
   * The side file is known to be empty (a writer thread taking over from an inline writer that
   * kept nothing there): it is not read at open, and the rows it may keep later are numbered from
   * this sequence on (or above the committed one, whichever is higher).
   */
  emptySideFileFrom?: number
}

/**
 * The connection that writes `logs.db`, and everything done with it: a batch's rows and its
 * roll-up in one transaction, the side file of the batches that found the database locked, and
 * retention. Runs on the daemon's writer thread (log-worker.ts), or on the caller's thread
 * (`writer: 'inline'`: tests, one-off tools). Never throws from {@link write}.
 */
export class LogWriter {
  /** Multi-row INSERTs of the logs table, by rows per statement (see INSERT_CHUNKS). */
  private readonly inserts = new Map<number, Statement>()
  private readonly upsertHour: Statement
  private readonly selectCommitted: Statement
  private readonly upsertCommitted: Statement
  /** One transaction around a batch (made once: better-sqlite3 builds its wrappers per call). */
  private readonly writeInTransaction: (values: ArrayLike<unknown>, hours: Iterable<HourSum>) => void
  /**
   * One transaction around a replay of the side file: the rows above the committed sequence
   * (`applied`: how many of the file's rows that was).
   */
  private readonly replayInTransaction: () => SpilledRows & {applied: number}
  /** One transaction around one chunk of a command's apply (`applySpill`): rows, roll-up, sequence. */
  private readonly applyInTransaction: (values: ArrayLike<unknown>, maxSeq: number) => void
  private readonly now: () => number
  private readonly spillFile: string
  private pruneTimer: NodeJS.Timeout | undefined
  private retryTimer: NodeJS.Timeout | undefined
  private closed = false
  /** Why the last write failed, until one works again. */
  private writeProblem: string | undefined
  /** Since when writes have found the database locked by another process (ms). */
  private busySince: number | undefined
  /** When the side file was last tried (ms, the real clock: `now` is the rows' clock for tests). */
  private lastReplay = 0
  /** The side file's size as this writer wrote it (bytes). */
  private spillSize = 0
  /** The sequence of the next row that goes to the side file. */
  private nextSeq = 1
  /** Rows in the side file not yet committed (while > 0, every batch goes there, in order). */
  spilledRows = 0

  /** The sequence the next row kept in the side file gets (it moves with every batch kept there). */
  get spillSequence(): number {
    return this.nextSeq
  }

  /** Whether the side file is empty as far as this writer knows (nothing kept, nothing left in it). */
  get sideFileEmpty(): boolean {
    return this.spilledRows === 0 && this.spillSize === 0
  }
  /** Rows lost since the writer opened (a batch the disk refused, or past the side file's bound). */
  dropped = 0

  private constructor(
    readonly db: Db,
    private readonly options: LogWriterOptions,
  ) {
    this.now = options.now ?? Date.now
    this.spillFile = spillPath(db.name)
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
    this.selectCommitted = db.prepare(SELECT_COMMITTED).pluck()
    this.upsertCommitted = db.prepare(UPSERT_COMMITTED)
    const write = db.transaction((values: ArrayLike<unknown>, hours: Iterable<HourSum>) => {
      this.insertRows(values)
      for (const sum of hours) this.upsertHour.run(sum)
    })
    // IMMEDIATE: the write lock is taken (or found busy) at BEGIN, before any row is inserted
    this.writeInTransaction = write.immediate.bind(write)
    const replay = db.transaction((): SpilledRows & {applied: number} => {
      // read under the lock: a file of many rows is not read again for every try that finds it
      const spilled = readSpill(this.spillFile, ROW_COLUMNS)
      const committed = (this.selectCommitted.get() as number | undefined) ?? 0
      const values: unknown[] = []
      let rows = 0
      for (let r = 0; r < spilled.seqs.length; r++) {
        if (spilled.seqs[r] <= committed) continue // committed before a crash left the file whole
        for (let c = 0; c < ROW_COLUMNS; c++) values.push(spilled.values[r * ROW_COLUMNS + c])
        rows++
      }
      if (rows > 0) {
        this.insertRows(values)
        for (const sum of rollUp(values)) this.upsertHour.run(sum)
      }
      if (spilled.maxSeq > committed) this.upsertCommitted.run(spilled.maxSeq)
      return {...spilled, applied: rows}
    })
    this.replayInTransaction = replay.immediate.bind(replay)
    const apply = db.transaction((values: ArrayLike<unknown>, maxSeq: number) => {
      this.insertRows(values)
      for (const sum of rollUp(values)) this.upsertHour.run(sum)
      this.upsertCommitted.run(maxSeq)
    })
    this.applyInTransaction = apply.immediate.bind(apply)
  }

  /**
   * Opens (creating when missing) the log database at `path` to write, and replays what its side
   * file holds (a daemon killed while the database was locked).
   */
  static async open(path: string, options: LogWriterOptions = {}): Promise<LogWriter> {
    mkdirSync(dirname(path), {recursive: true, mode: 0o700})
    privateFiles(path)
    const db = openSqlite(path)
    try {
      await walMode(db)
      return LogWriter.prepare(db, options)
    } catch (error) {
      db.close()
      throw error
    }
  }

  /**
   * Applies the side file of the log database at `path` once, for a command run while no gateway
   * owns the file (services/log-pending.ts takes the side file's lock and checks that no daemon
   * runs first): the rows above the committed sequence are committed in sequence order, in
   * transactions of `APPLY_CHUNK_ROWS` rows that each hold their rows, their roll-up and the new
   * committed sequence, then the file is emptied. A kill at any point leaves every row either
   * committed (at or below the committed sequence, skipped by every later replay) or still waiting.
   *
   * Why chunks, and a turn of the event loop between them: the command holds the file's lock
   * (proper-lockfile), which it keeps by touching the lock every few seconds from a timer. One
   * transaction of 200 000 rows blocked the loop past 10 s on a loaded machine, long enough for a
   * starting daemon to judge the lock stale and take it from its live holder (stop 48's CI). A
   * chunk takes tens of milliseconds.
   *
   * Waits up to `busyMs` for another process's write lock at each chunk, then throws SQLite's busy
   * error (as it throws a read-only or damaged database): the rows not yet committed then stay in
   * the file. A missing database is created, as the daemon's start would.
   */
  static async applySpill(
    path: string,
    options: {
      busyMs: number
      /** Rows per transaction (tests: several chunks from a few rows). */
      chunkRows?: number
      /** Called after each chunk's commit with the rows applied so far (tests). */
      afterChunk?: (applied: number) => void
    },
  ): Promise<{applied: number; skipped: number; torn: number}> {
    mkdirSync(dirname(path), {recursive: true, mode: 0o700})
    privateFiles(path)
    const db = openSqlite(path)
    try {
      await walMode(db, options.busyMs)
      db.pragma('synchronous = NORMAL')
      db.pragma(`busy_timeout = ${options.busyMs}`)
      db.exec(SCHEMA)
      db.exec(SPILL_SCHEMA)
      addColumns(db)
      const writer = new LogWriter(db, {})
      const spilled = readSpill(writer.spillFile, ROW_COLUMNS)
      // no other writer of the side table: the caller holds the file's lock and no daemon runs
      const committed = (writer.selectCommitted.get() as number | undefined) ?? 0
      // in sequence order, so that each chunk's committed sequence covers exactly the rows before it
      const order: number[] = []
      for (let r = 0; r < spilled.seqs.length; r++) if (spilled.seqs[r] > committed) order.push(r)
      order.sort((a, b) => spilled.seqs[a] - spilled.seqs[b])
      const chunkRows = Math.max(1, options.chunkRows ?? APPLY_CHUNK_ROWS)
      for (let start = 0; start < order.length; start += chunkRows) {
        if (start > 0) await new Promise(setImmediate)
        const end = Math.min(order.length, start + chunkRows)
        const values: unknown[] = []
        for (let i = start; i < end; i++) {
          const r = order[i]
          for (let c = 0; c < ROW_COLUMNS; c++) values.push(spilled.values[r * ROW_COLUMNS + c])
        }
        writer.applyInTransaction(values, spilled.seqs[order[end - 1]])
        options.afterChunk?.(end)
      }
      // committed: the rows at or below the committed sequence are skipped from here on
      truncateSpill(writer.spillFile, 0)
      return {applied: order.length, skipped: spilled.seqs.length - order.length, torn: spilled.bad}
    } finally {
      db.close()
    }
  }

  /**
   * What waits in the side file of the log database at `path` (`gwctl doctor`): the rows above the
   * committed sequence, the oldest one's time (Unix ms) and the lines that do not parse (a torn
   * last write). Reads the file, and the committed sequence on a read-only connection; a
   * database that cannot be read counts every row of the file as waiting (`committedKnown`).
   */
  static pending(path: string): {
    rows: number
    oldestMs: number | null
    torn: number
    committedKnown: boolean
  } {
    const spilled = readSpill(spillPath(path), ROW_COLUMNS)
    let committed = 0
    let committedKnown = true
    if (spilled.seqs.length > 0 && existsSync(path)) {
      try {
        const db = openSqlite(path, {readonly: true, fileMustExist: true})
        try {
          const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'log_spill'")
          if (table.get()) committed = (db.prepare(SELECT_COMMITTED).pluck().get() as number | undefined) ?? 0
        } finally {
          db.close()
        }
      } catch {
        committedKnown = false
      }
    }
    let rows = 0
    let oldestMs: number | null = null
    for (let r = 0; r < spilled.seqs.length; r++) {
      if (spilled.seqs[r] <= committed) continue
      rows++
      const time = spilled.values[r * ROW_COLUMNS + F.time]
      if (typeof time === 'number' && (oldestMs === null || time < oldestMs)) oldestMs = time
    }
    return {rows, oldestMs, torn: spilled.bad, committedKnown}
  }

  /**
   * Whether the log database at `path` can take a write now (`gwctl doctor`, when rows wait in the
   * side file): `BEGIN IMMEDIATE` within `busyMs`, rolled back at once. Undefined when it can, else
   * why not (`busy`: another process holds the write lock).
   */
  static probeWrite(path: string, busyMs: number): {busy: boolean; message: string} | undefined {
    let db: Db | undefined
    try {
      db = openSqlite(path, {fileMustExist: true})
      db.pragma(`busy_timeout = ${busyMs}`)
      db.exec('BEGIN IMMEDIATE')
      db.exec('ROLLBACK')
      return undefined
    } catch (error) {
      return {busy: isBusy(error), message: (error as Error).message}
    } finally {
      db?.close()
    }
  }

  /** Opens it without waiting for WAL mode (already set: the writer thread's fallback). */
  static openNow(path: string, options: LogWriterOptions = {}): LogWriter {
    const db = openSqlite(path)
    try {
      db.pragma('journal_mode = WAL')
      return LogWriter.prepare(db, options)
    } catch (error) {
      db.close()
      throw error
    }
  }

  private static prepare(db: Db, options: LogWriterOptions): LogWriter {
    db.pragma('synchronous = NORMAL')
    db.pragma(`cache_size = -${LOG_CACHE_KB}`)
    // the schema may need the write lock (a new table or column): at start, worth waiting for
    db.pragma(`busy_timeout = ${OPEN_BUSY_MS}`)
    db.exec(SCHEMA)
    db.exec(SPILL_SCHEMA)
    addColumns(db)
    // then short: a batch that finds another process's lock goes to the side file instead of
    // waiting (the rows of the requests that end meanwhile would wait in memory, lost to a kill -9)
    db.pragma(`busy_timeout = ${WRITE_BUSY_MS}`)
    const writer = new LogWriter(db, options)
    if (options.emptySideFileFrom === undefined) writer.recoverSpill()
    else
      writer.nextSeq = Math.max(
        options.emptySideFileFrom,
        ((writer.selectCommitted.get() as number | undefined) ?? 0) + 1,
      )
    if (options.retentionDays !== undefined) {
      const days = options.retentionDays
      const prune = (): void => {
        try {
          writer.prune(days)
        } catch (error) {
          // a full disk can refuse even a DELETE's journal, a rescan can hold the lock: pruning
          // waits for the next hour
          if (!isBusy(error)) writer.reportProblem(`could not prune old rows: ${(error as Error).message}`)
        }
      }
      prune()
      writer.pruneTimer = setInterval(prune, HOUR_MS)
      writer.pruneTimer.unref()
    }
    return writer
  }

  /** The side file left by the last run: its torn tail cut, its rows replayed (or kept to retry). */
  private recoverSpill(): void {
    const committed = (this.selectCommitted.get() as number | undefined) ?? 0
    const spilled = readSpill(this.spillFile, ROW_COLUMNS)
    this.nextSeq = Math.max(committed, spilled.maxSeq) + 1
    if (spilled.bytes === 0) return
    if (spilled.goodBytes < spilled.bytes) truncateSpill(this.spillFile, spilled.goodBytes)
    this.spillSize = spilled.goodBytes
    this.spilledRows = spilled.seqs.filter((seq) => seq > committed).length
    this.dropped += spilled.bad
    this.replay()
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
  private insertRows(values: ArrayLike<unknown>): void {
    const rows = values.length / ROW_COLUMNS
    let i = 0
    for (const size of INSERT_CHUNKS) {
      if (rows - i < size) continue
      const statement = this.insertOf(size)
      const chunk: unknown[] = new Array(size * ROW_COLUMNS)
      while (rows - i >= size) {
        const from = i * ROW_COLUMNS
        for (let v = 0; v < chunk.length; v++) chunk[v] = values[from + v]
        statement.run(chunk)
        i += size
      }
    }
  }

  /**
   * Writes a batch (its rows' values, see {@link rowValues}) in one transaction with its roll-up.
   * A batch that finds the database locked goes to the side file; one the disk refuses is lost
   * and counted. Never throws.
   */
  write(values: ArrayLike<unknown>): void {
    const rows = values.length / ROW_COLUMNS
    if (rows === 0 || this.closed) return
    if (this.spilledRows > 0) {
      // earlier rows wait in the side file: this batch goes after them, in order
      this.spill(values)
      if (Date.now() - this.lastReplay >= SPILL_RETRY_MS && !this.retryTimer) this.replay()
      return
    }
    try {
      this.writeInTransaction(values, rollUp(values))
      this.busySince = undefined
      this.writeWorks()
    } catch (error) {
      if (isBusy(error) && !this.closed) {
        // Another process holds the write lock (`gwctl usage rescan` swapping its history table
        // in takes about a second on a big history): nothing of the batch was written. It goes to
        // the side file, where a kill -9 cannot lose it, and is replayed in order once the lock
        // is free (retried every SPILL_RETRY_MS).
        this.busySince ??= Date.now()
        this.spill(values)
        this.scheduleReplay()
        return
      }
      this.failed(error, rows)
    }
  }

  /** Appends a batch to the side file (one write); a refusal loses it, counted and reported. */
  private spill(values: ArrayLike<unknown>): void {
    const rows = values.length / ROW_COLUMNS
    if (this.spilledRows + rows > MAX_QUEUED_ROWS) {
      this.dropped += rows
      this.reportProblem(`the log database stayed locked: ${rows} rows were dropped to bound the side file`)
      return
    }
    try {
      this.spillSize = appendSpill(this.spillFile, values, ROW_COLUMNS, this.nextSeq, this.spillSize)
      this.nextSeq += rows
      this.spilledRows += rows
    } catch (error) {
      this.dropped += rows
      this.reportProblem(`could not keep a locked batch in ${this.spillFile}: ${(error as Error).message}`)
    }
  }

  private scheduleReplay(ms = SPILL_RETRY_MS): void {
    if (this.retryTimer || this.closed) return
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined
      if (this.spilledRows > 0) this.replay()
    }, ms)
    this.retryTimer.unref()
  }

  /**
   * Commits the side file's rows above the committed sequence (with the new highest sequence, in
   * one transaction), then empties the file. Returns whether the file is empty now.
   */
  replay(): boolean {
    this.lastReplay = Date.now()
    let spilled: SpilledRows
    try {
      spilled = this.replayInTransaction()
    } catch (error) {
      if (isBusy(error)) {
        this.busySince ??= Date.now()
        const lockedMs = Date.now() - this.busySince
        if (lockedMs > BUSY_REPORT_MS)
          this.reportProblem(
            `the log database has been locked by another process for ${Math.round(lockedMs / 1000)} s (${this.spilledRows} rows kept in ${this.spillFile})`,
          )
        this.scheduleReplay(SPILL_RETRY_MS)
      } else {
        // a full disk, damage: the rows stay in the file; tried again less often
        this.failed(error, 0)
        this.scheduleReplay(SPILL_FAILED_RETRY_MS)
      }
      return false
    }
    // committed: a crash from here on leaves rows at or below the committed sequence, skipped
    try {
      truncateSpill(this.spillFile, 0)
      this.spillSize = 0
    } catch (error) {
      // the rows are committed; the file is emptied at the next replay (its rows are skipped)
      this.spillSize = spilled.goodBytes
      this.reportProblem(`could not empty ${this.spillFile}: ${(error as Error).message}`)
    }
    this.spilledRows = 0
    this.busySince = undefined
    this.writeWorks()
    this.options.onCounts?.()
    return true
  }

  /** A write that was neither committed nor kept: counted, reported, and marked when damage. */
  private failed(error: unknown, rows: number): void {
    // A full disk must not take the gateway down; the rows of this batch are lost.
    this.dropped += rows
    if (isDamage(error)) {
      // the next start moves this file aside (log-db-check.ts)
      markDamaged(this.db.name, (error as Error).message)
      this.reportProblem(
        `could not write a batch: the database is damaged (${(error as Error).message}); \`gwctl gateway restart\` moves it aside`,
      )
    } else this.reportProblem(`could not write a batch: ${(error as Error).message}`)
  }

  private writeWorks(): void {
    // only a batch actually written says the disk works again
    if (this.writeProblem !== undefined) {
      this.writeProblem = undefined
      this.options.onWriteProblem?.(undefined)
    }
  }

  /** Reports a problem once, until a write works again. */
  reportProblem(problem: string): void {
    if (this.writeProblem !== undefined) return
    this.writeProblem = problem
    if (this.options.onWriteProblem) this.options.onWriteProblem(problem)
    else process.emitWarning(`gwctl log store: ${problem}`)
  }

  /** Deletes rows (and whole roll-up hours) older than `days` days; returns the log rows deleted. */
  prune(days: number): number {
    const cutoff = this.now() - days * DAY_MS
    return this.db.transaction(() => {
      const deleted = this.db.prepare('DELETE FROM logs WHERE ts < ?').run(cutoff).changes
      this.db.prepare('DELETE FROM usage_hourly WHERE hour < ?').run(Math.floor(cutoff / HOUR_MS))
      return deleted
    })()
  }

  /**
   * Stops writing, for a writer thread that takes over (`auto`): timers stopped, no write from
   * here on; the connection stays open for the store's reads. Only with nothing in the side file.
   */
  retire(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer)
    if (this.pruneTimer) clearInterval(this.pruneTimer)
    this.closed = true
  }

  /** Tries the side file once more (what is left stays for the next start) and closes. */
  close(): void {
    if (this.closed) return
    if (this.retryTimer) clearTimeout(this.retryTimer)
    if (this.pruneTimer) clearInterval(this.pruneTimer)
    if (this.spilledRows > 0) this.replay()
    if (this.retryTimer) clearTimeout(this.retryTimer)
    this.closed = true
    this.db.close()
  }
}

/**
 * A batch's hourly sums: at a steady request rate most rows of a batch share one (hour, agent,
 * provider, model, ...) bucket, so this is one upsert per bucket instead of one per request.
 */
function rollUp(values: ArrayLike<unknown>): Iterable<HourSum> {
  const hours = new Map<string, HourSum>()
  // the bucket of the row before: the next row of it (most of a batch) adds to it without its key
  // built and looked up
  let last: HourSum | undefined
  for (let o = 0; o < values.length; o += ROW_COLUMNS) {
    const time = values[o + F.time] as number
    const status = values[o + F.status] as number
    const broken = values[o + F.broken] === 1
    const hour = Math.floor(time / HOUR_MS)
    const fallback = values[o + F.fallback] as number
    const klass = statusClass(status, broken)
    let sum = last !== undefined && inBucket(last, hour, values, o, klass, fallback) ? last : undefined
    if (sum === undefined) {
      const key = bucketKey(hour, values, o, klass, fallback)
      sum = hours.get(key)
      if (sum === undefined) {
        sum = {
          hour,
          agentId: text(values[o + F.agentId]),
          keyPrefix: text(values[o + F.keyPrefix]),
          policyId: text(values[o + F.policyId]),
          provider: text(values[o + F.provider]),
          model: text(values[o + F.model]),
          project: text(values[o + F.project]),
          statusClass: klass,
          fallback,
          requests: 0,
          isError: 0,
          inputTokens: 0,
          outputTokens: 0,
          cacheReadTokens: 0,
          cacheCreationTokens: 0,
          cache1hTokens: 0,
          reasoningTokens: 0,
        }
        hours.set(key, sum)
      }
    }
    sum.requests++
    sum.isError += status >= 400 || broken ? 1 : 0
    sum.inputTokens += values[o + F.inputTokens] as number
    sum.outputTokens += values[o + F.outputTokens] as number
    sum.cacheReadTokens += values[o + F.cacheReadTokens] as number
    sum.cacheCreationTokens += values[o + F.cacheCreationTokens] as number
    sum.cache1hTokens += values[o + F.cache1hTokens] as number
    sum.reasoningTokens += values[o + F.reasoningTokens] as number
    last = sum
  }
  return hours.values()
}

/**
 * Whether the row at `o` in `v` goes into bucket `sum`: the fields its key joins, equal. (A field
 * holding a NUL makes a JSON key, which tells null from '': such rows may then share a bucket
 * that their keys would have split, and add up to the same hourly row, which sums them anyway.)
 */
function inBucket(
  sum: HourSum,
  hour: number,
  v: ArrayLike<unknown>,
  o: number,
  klass: string,
  fallback: number,
): boolean {
  return (
    sum.hour === hour &&
    sum.statusClass === klass &&
    sum.fallback === fallback &&
    sum.agentId === text(v[o + F.agentId]) &&
    sum.keyPrefix === text(v[o + F.keyPrefix]) &&
    sum.policyId === text(v[o + F.policyId]) &&
    sum.provider === text(v[o + F.provider]) &&
    sum.model === text(v[o + F.model]) &&
    sum.project === text(v[o + F.project])
  )
}

/** Slots of the counters the writer thread shares with the store (an Int32Array). */
const ACKED = 0 // how many batches the writer thread has written (or kept in the side file)
const DROPPED = 1 // the writer thread's dropped rows
const SPILLED = 2 // rows in the side file not yet committed
const CLOSED = 3 // 1 once the writer thread closed its connection
/** The longest a read waits for the writer thread to write what was queued before it (ms). */
const READ_WAIT_MS = 250
/** The read connection's wait for a lock (a checkpoint) while the writer thread writes (ms). */
const READ_BUSY_MS = 100
/** The longest a close waits for the writer thread to write the queue and close (ms). */
const CLOSE_WAIT_MS = 10_000

/** What the writer thread says to its store. */
export type LogWorkerMessage =
  | {type: 'ready'}
  | {type: 'failed'; message: string; code?: string}
  | {type: 'problem'; problem: string | null}

/** What the writer thread is started with. */
export interface LogWorkerData {
  path: string
  retentionDays?: number
  counters: SharedArrayBuffer
  /** See {@link LogWriterOptions.emptySideFileFrom} (a thread that takes over from an inline writer). */
  emptySideFileFrom?: number
}

/**
 * The writer thread's file: `../store/` names the same file from src/store/, dist/store/ and
 * dist/chunks/ (where the bundle may put this module). Run from the TypeScript sources (the
 * tests), it is not there: the store writes inline.
 */
const WORKER_FILE = new URL('../store/log-worker.js', import.meta.url)

/** A writer thread that said it is ready, with its counters and where its reports go. */
interface StartedThread {
  worker: Worker
  counters: Int32Array
  /** Sets where its problem reports go (the ones said before are passed on at once). */
  onProblem(listener: (problem: string | undefined) => void): void
}

/** Starts the writer thread on the log database at `path` and waits until it is ready. */
async function startWriterThread(
  path: string,
  options: LogStoreOptions,
  emptySideFileFrom?: number,
): Promise<StartedThread> {
  const counters = new Int32Array(new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT))
  const {Worker} = await import('node:worker_threads')
  const data: LogWorkerData = {
    path,
    retentionDays: options.retentionDays,
    counters: counters.buffer as SharedArrayBuffer,
    emptySideFileFrom,
  }
  const worker = new Worker(WORKER_FILE, {workerData: data})
  // a thread started under load (`auto`) never keeps the process alive while it starts
  if (emptySideFileFrom !== undefined) worker.unref()
  // problems said before the store takes the thread (a side file that could not be replayed)
  const early: Array<string | undefined> = []
  let report: (problem: string | undefined) => void = (problem) => early.push(problem)
  worker.on('message', (message: LogWorkerMessage) => {
    if (message.type === 'problem') report(message.problem ?? undefined)
  })
  await new Promise<void>((resolve, reject) => {
    const starting = (message: LogWorkerMessage): void => {
      if (message.type === 'ready') {
        worker.off('message', starting)
        worker.off('error', reject)
        resolve()
      } else if (message.type === 'failed') {
        reject(Object.assign(new Error(message.message), {code: message.code, path}))
        void worker.terminate()
      }
    }
    worker.on('message', starting)
    worker.once('error', reject)
  })
  return {
    worker,
    counters,
    onProblem(listener) {
      report = listener
      for (const problem of early.splice(0)) listener(problem)
    },
  }
}

export class LogStore {
  private queue: LogEntry[] = []
  private timer: NodeJS.Timeout | undefined
  private readonly flushMs: number
  private readonly batchSize: number
  private closed = false
  /** The writer on this thread (inline, or the fallback when the writer thread died). */
  private writer: LogWriter | undefined
  private worker: Worker | undefined
  private counters: Int32Array | undefined
  /** Batches posted to the writer thread (the writer counts those it handled in ACKED). */
  private posted = 0
  /** Rows posted to the writer thread and not acknowledged yet, by batch number. */
  private readonly inFlight = new Map<number, number>()
  /** Rows lost on this thread (the writer thread died with them). */
  private lostHere = 0
  /** Why the writer thread's last write failed (its reports, once per change). */
  private threadProblem: string | undefined
  /** `auto`: whether a writer thread may still be started (never again after one died or failed). */
  private promotable: boolean
  /** `auto`: a writer thread is starting. */
  private promoting = false
  /**
   * Inline: a connection of its own for reads, opened at the first read. The write connection
   * keeps a 2 MB cache (LOG_CACHE_KB), which the pivots over a large roll-up outgrow: repeated,
   * they read 10-15 % slower from it (bench/README.md, "rss"); this one has SQLite's default,
   * filled by reads only.
   */
  private reader: Db | undefined
  /** `auto`: rows handed to the writer in the current one-second window, and when it began. */
  private windowRows = 0
  private windowStart = 0

  private constructor(
    /**
     * The connection reads use: the writer's in inline mode (kept, no longer writing, once `auto`
     * started the writer thread), a read connection of its own in thread mode.
     */
    private readonly db: Db,
    private readonly options: LogStoreOptions,
  ) {
    this.flushMs = options.flushMs ?? DEFAULT_FLUSH_MS
    this.batchSize = options.batchSize ?? 500
    this.promotable = options.writer === 'auto'
  }

  /**
   * The connection reads use: the inline reader (opened now when there is none yet), or `db` when
   * the writes run elsewhere (the writer thread, or a writer of their own after it died), or when a
   * second connection cannot be opened.
   */
  private readDb(): Db {
    if (this.reader) return this.reader
    if (!this.writer || this.writer.db !== this.db) return this.db
    try {
      const reader = openSqlite(this.db.name, {fileMustExist: true})
      reader.pragma(`busy_timeout = ${READ_BUSY_MS}`)
      this.reader = reader
      return reader
    } catch {
      return this.db
    }
  }

  /** Where the writes run now: this thread, or the writer thread. */
  get writerThread(): boolean {
    return this.worker !== undefined
  }

  /**
   * Opens (creating when missing) the log database at `path`. With `writer: 'thread'` (the
   * daemon) the writes run on a worker thread that owns the write connection: the request thread
   * only queues rows and hands each batch over in one message; reads use a connection of their
   * own (WAL: readers never wait on the writer). Default `inline`: writes on this thread.
   */
  static async open(path: string, options: LogStoreOptions = {}): Promise<LogStore> {
    // without the thread's file (run from the TypeScript sources) every mode writes inline
    const threads = options.writer !== undefined && options.writer !== 'inline' && existsSync(WORKER_FILE)
    if (options.writer !== 'thread' || !threads) {
      const writer = await LogWriter.open(path, options)
      const store = new LogStore(writer.db, threads ? options : {...options, writer: 'inline'})
      store.writer = writer
      return store
    }
    const started = await startWriterThread(path, options)
    let db: Db
    try {
      db = openSqlite(path, {fileMustExist: true})
      db.pragma(`busy_timeout = ${READ_BUSY_MS}`)
    } catch (error) {
      await started.worker.terminate()
      throw error
    }
    const store = new LogStore(db, options)
    store.adopt(started)
    return store
  }

  /** Takes a started writer thread as this store's writer. */
  private adopt(started: StartedThread): void {
    const worker = started.worker
    this.worker = worker
    this.counters = started.counters
    this.posted = 0
    started.onProblem((problem) => this.threadReported(problem))
    worker.on('error', (error) => this.threadDied(error.message))
    worker.on('exit', (code) => {
      if (!this.closed && this.worker === worker) this.threadDied(`it exited with code ${code}`)
    })
    worker.unref()
  }

  /**
   * `auto`: counts the rows handed to the writer; a second with `promoteRowsPerSecond` of them
   * starts the writer thread.
   */
  private countRows(rows: number): void {
    const now = Date.now()
    if (now - this.windowStart >= 1000) {
      this.windowStart = now
      this.windowRows = 0
    }
    this.windowRows += rows
    if (this.windowRows >= (this.options.promoteRowsPerSecond ?? PROMOTE_ROWS_PER_SECOND)) this.promote()
  }

  /**
   * Starts the writer thread (`auto`) and hands the writes over to it once it is ready. The inline
   * writer keeps writing meanwhile. The side file must be empty when the thread starts (it is
   * told so, and never reads it then) and still be empty at the hand-over: two writers never share
   * the file or its sequence. Otherwise the thread is stopped, having touched nothing of the file,
   * and a later busy second tries again. What is queued is written here first, so the rows stay in
   * order.
   */
  private promote(): void {
    const writer = this.writer
    if (this.promoting || !this.promotable || this.worker || this.closed || !writer) return
    // rows wait in the side file (replayed here): not now. The thread is told the file is empty and
    // never reads it at its start; the hand-over happens only if it still is (see `unchanged`)
    if (!writer.sideFileEmpty) return
    this.promoting = true
    const sequence = writer.spillSequence
    startWriterThread(this.db.name, this.options, sequence).then(
      (started) => {
        this.windowRows = 0
        const unchanged = (): boolean =>
          !this.closed && this.writer === writer && writer.sideFileEmpty && writer.spillSequence === sequence
        // what is queued is written here first (the rows stay in order); it too may find the lock
        if (unchanged()) this.flushQuietly()
        if (!unchanged()) {
          this.promoting = false
          void started.worker.terminate()
          return
        }
        writer.retire()
        this.lostHere += writer.dropped
        this.writer = undefined
        // a read connection from here on, as in thread mode: the default cache, filled by reads only
        this.db.pragma(`busy_timeout = ${READ_BUSY_MS}`)
        this.db.pragma(`cache_size = -${READ_CACHE_KB}`)
        this.adopt(started)
        this.promoting = false
        this.options.onWriterThread?.()
      },
      (error: Error) => {
        // the inline writer goes on; no second try (a thread that cannot start will not later)
        this.promoting = false
        this.promotable = false
        this.options.onWriterThread?.(error.message)
      },
    )
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
    if (this.queue.length >= this.batchSize) {
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

  /** Writes every queued row now (committed, or kept in the side file while the database is locked). */
  flush(): void {
    this.flushQuietly()
    if (this.worker) this.waitForThread(READ_WAIT_MS)
  }

  /** The database file. */
  get path(): string {
    return this.db.name
  }

  /** Rows not committed yet: queued here, on their way to the writer thread, or in the side file. */
  get pending(): number {
    let inFlight = 0
    if (this.counters) {
      const acked = Atomics.load(this.counters, ACKED)
      for (const [id, rows] of this.inFlight) if (id > acked) inFlight += rows
    }
    const spilled = this.counters ? Atomics.load(this.counters, SPILLED) : (this.writer?.spilledRows ?? 0)
    return this.queue.length + inFlight + spilled
  }

  /** Rows lost since the store opened (a batch the disk refused, or past the side file's bound). */
  get dropped(): number {
    return (
      this.lostHere + (this.counters ? Atomics.load(this.counters, DROPPED) : 0) + (this.writer?.dropped ?? 0)
    )
  }

  /** Hands the queue to the writer: one message to the writer thread, or a write here. */
  private flushQuietly(): void {
    if (this.queue.length === 0) return
    const batch = this.queue
    this.queue = []
    const values = rowValues(batch)
    if (this.writer) {
      this.writer.write(values)
      if (this.promotable) this.countRows(batch.length)
      return
    }
    if (!this.worker || !this.counters) {
      this.lostHere += batch.length
      return
    }
    const id = ++this.posted
    this.inFlight.set(id, batch.length)
    // one string (its JSON.stringify plus the copy measured the same as cloning the array, about
    // 3 µs a row on a loaded 2-core machine, bench/README.md; the thread parses it off this one)
    this.worker.postMessage(JSON.stringify(values))
    // forget what the writer thread has acknowledged (a few entries at most)
    const acked = Atomics.load(this.counters, ACKED)
    for (const done of this.inFlight.keys()) if (done <= acked) this.inFlight.delete(done)
  }

  /**
   * Blocks until the writer thread has handled every batch posted so far, for at most `ms`
   * (a read that must see the rows queued before it; close). Whether it has.
   */
  private waitForThread(ms: number): boolean {
    const counters = this.counters!
    const until = Date.now() + ms
    for (;;) {
      const acked = Atomics.load(counters, ACKED)
      if (acked >= this.posted) return true
      const left = until - Date.now()
      if (left <= 0) return false
      Atomics.wait(counters, ACKED, acked, left)
    }
  }

  /** The writer thread's report of a write problem (once per change), passed on. */
  private threadReported(problem: string | undefined): void {
    if (problem === this.threadProblem) return
    this.threadProblem = problem
    if (this.options.onWriteProblem) this.options.onWriteProblem(problem)
    else if (problem !== undefined) process.emitWarning(`gwctl log store: ${problem}`)
  }

  /**
   * The writer thread died (a bug, or out of memory): the batches it had not acknowledged are
   * lost and counted; writing goes on here, on the request thread, until a restart.
   */
  private threadDied(reason: string): void {
    const worker = this.worker
    if (!worker) return
    this.worker = undefined
    this.promotable = false
    const acked = this.counters ? Atomics.load(this.counters, ACKED) : 0
    for (const [id, rows] of this.inFlight) if (id > acked) this.lostHere += rows
    this.inFlight.clear()
    if (this.counters) this.lostHere += Atomics.load(this.counters, DROPPED)
    this.counters = undefined
    try {
      this.writer = LogWriter.openNow(this.db.name, {
        retentionDays: this.options.retentionDays,
        onWriteProblem: (problem) => this.threadReported(problem),
      })
      this.threadReported(
        `the log writer thread stopped (${reason}); writing on the request thread until a restart`,
      )
    } catch (error) {
      this.threadReported(
        `the log writer thread stopped (${reason}) and the log cannot be written: ${(error as Error).message}`,
      )
    }
  }

  /** Recent requests, newest first (queued rows are written first so they show up). */
  queryLogs(filters: LogFilters = {}): LogRow[] {
    this.flush()
    return selectLogs(this.readDb(), filters)
  }

  /**
   * Usage summed per pivot value (one row `all` without a pivot), largest token total first.
   * Reads the hourly roll-up, plus the raw rows of the partial hour after `since`.
   */
  usage(filters: Omit<LogFilters, 'limit'> & {pivot?: Pivot} = {}): UsageRow[] {
    this.flush()
    return selectUsage(this.readDb(), filters)
  }

  /**
   * The requests with usage over the gateway's log and the agents' history (usage-entries.ts),
   * oldest first: what the daemon's statusline memory loads once (`daemon/usage-memory.ts`).
   */
  usageEntries(filters: EntryFilters): SessionEntry[] {
    this.flush()
    return usageEntries(this.readDb(), filters)
  }

  /** Runs a read on the database, the queued rows written first (budgets re-read their spend). */
  read<T>(query: (db: Db) => T): T {
    this.flush()
    return query(this.readDb())
  }

  /**
   * Deletes rows (and whole roll-up hours) older than `days` days; returns the log rows deleted.
   * Inline only: the writer thread prunes on its own (`retentionDays`, at start and hourly).
   */
  prune(days: number): number {
    this.flush()
    if (!this.writer) throw new Error('prune runs on the writer thread (retentionDays)')
    return this.writer.prune(days)
  }

  /** `PRAGMA integrity_check` of the open database. */
  integrityCheck(): {ok: boolean; problems: string[]} {
    return integrity(this.db)
  }

  /**
   * Writes what is queued and closes the database (SIGTERM, SIGINT, `gateway stop`): the writer
   * thread gets the last batch, commits it (or keeps it in the side file while another process
   * holds the lock) and closes its connection before this returns.
   */
  close(): void {
    if (this.closed) return
    if (this.timer) clearTimeout(this.timer)
    this.flushQuietly()
    this.closed = true
    const worker = this.worker
    const counters = this.counters
    if (worker && counters) {
      worker.postMessage({close: true})
      const until = Date.now() + CLOSE_WAIT_MS
      while (Atomics.load(counters, CLOSED) === 0 && Date.now() < until)
        Atomics.wait(counters, CLOSED, 0, until - Date.now())
      void worker.terminate()
      this.worker = undefined
    }
    this.writer?.close()
    this.reader?.close()
    if (this.db.open) this.db.close()
  }
}

/** The counters' slots, for the writer thread (log-worker.ts). */
export const LOG_WORKER_SLOTS = {ACKED, DROPPED, SPILLED, CLOSED} as const

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
