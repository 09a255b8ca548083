/**
 * The side file of the log writer (logs.pending): batches that find logs.db locked are kept there
 * and replayed exactly once, whatever point a crash hits.
 */
import {appendFileSync, existsSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import Database from 'better-sqlite3'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import {spillPath} from './log-spill.js'
import type {LogEntry} from './log-store.js'
import {LogStore, LogWriter, rowValues} from './log-store.js'
import {logEntry} from '../../test/helpers/log-entry.js'

const T0 = Date.UTC(2026, 10, 20, 10, 30)

const entry = (requestId: string): LogEntry =>
  logEntry({
    time: T0,
    entrance: 'messages',
    requestedModel: 'claude-x',
    provider: 'anthropic',
    model: 'claude-x',
    cacheReadTokens: 2,
    cacheCreationTokens: 4,
    cache1hTokens: 3,
    latencyMs: 12.5,
    ttfbMs: 3.25,
    project: 'proj-1',
    requestId,
  })

const batch = (prefix: string, n: number): unknown[] =>
  rowValues(Array.from({length: n}, (_, i) => entry(`${prefix}${i}`)))

let home: {home: string; cleanup: () => void}
let path: string
let pending: string
const open: Array<{close(): void}> = []

beforeEach(() => {
  home = tempHome()
  path = join(home.home, 'logs.db')
  pending = spillPath(path)
})
afterEach(() => {
  for (const o of open.splice(0)) o.close()
  home.cleanup()
})

/** Another process's write transaction on logs.db (what `usage rescan`'s swap holds). */
function lock(): Database.Database {
  const other = new Database(path)
  other.pragma('busy_timeout = 0')
  other.exec('BEGIN IMMEDIATE')
  return other
}

function counts(): {
  rows: number
  ids: string[]
  hourly: number
  hourly1h: number
  committed: number | undefined
} {
  const db = new Database(path, {readonly: true})
  try {
    const ids = db.prepare('SELECT request_id FROM logs ORDER BY id').pluck().all() as string[]
    const hourly = db.prepare('SELECT COALESCE(SUM(requests), 0) FROM usage_hourly').pluck().get() as number
    const hourly1h = db
      .prepare('SELECT COALESCE(SUM(cache_1h_tokens), 0) FROM usage_hourly')
      .pluck()
      .get() as number
    const committed = db.prepare('SELECT committed_seq FROM log_spill').pluck().get() as number | undefined
    return {rows: ids.length, ids, hourly, hourly1h, committed}
  } finally {
    db.close()
  }
}

/** Waits (timers run late on a loaded machine) until `check` holds, at most 5 s. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !check(); i++) await sleep(20)
}

async function writer(): Promise<LogWriter> {
  const w = await LogWriter.open(path, {onWriteProblem: () => undefined})
  open.push(w)
  return w
}

/** A gateway stopped while logs.db was locked: `n` rows (`prefix`0, ...) wait in the side file. */
async function stoppedUnderLock(prefix: string, n: number): Promise<void> {
  const w = await writer()
  const other = lock()
  w.write(batch(prefix, n))
  w.close()
  open.length = 0
  other.exec('ROLLBACK')
  other.close()
}

/**
 * A side file of `n` whole rows (`prefix`0, ...) that logs.db does not hold, then a torn last line
 * (a write cut by a crash: no newline), with no writer open.
 */
async function tornSpill(prefix: string, n: number): Promise<void> {
  const w = await writer()
  const other = lock()
  w.write(batch(prefix, n))
  other.exec('ROLLBACK')
  other.close()
  const whole = readFileSync(pending)
  w.close()
  open.length = 0
  const db = new Database(path)
  db.exec('DELETE FROM logs; DELETE FROM usage_hourly; DELETE FROM log_spill')
  db.close()
  writeFileSync(pending, whole, {mode: 0o600})
  appendFileSync(pending, `[${n + 1},1763634600000,"agent-a","gw-aa`)
}

describe('log side file', () => {
  it('keeps batches that find the database locked in logs.pending (0600, one line per row), then commits them once, in order', async () => {
    const w = await writer()
    w.write(batch('a', 3))
    const other = lock()
    w.write(batch('b', 4)) // busy: to the side file
    w.write(batch('c', 2)) // the side file holds rows: after them, in order
    expect(w.spilledRows).toBe(6)
    const lines = readFileSync(pending, 'utf8').trimEnd().split('\n')
    expect(lines).toHaveLength(6)
    expect(lines.map((l) => (JSON.parse(l) as unknown[])[0])).toEqual([1, 2, 3, 4, 5, 6])
    expect(statSync(pending).mode & 0o777).toBe(0o600)
    other.exec('COMMIT')
    other.close()
    await until(() => w.spilledRows === 0) // the retry timer replays it (every 50 ms)
    expect(w.spilledRows).toBe(0)
    expect(statSync(pending).size).toBe(0)
    const after = counts()
    expect(after.ids).toEqual(['a0', 'a1', 'a2', 'b0', 'b1', 'b2', 'b3', 'c0', 'c1'])
    expect(after.hourly).toBe(9) // the roll-up counted each replayed row once
    expect(after.hourly1h).toBe(27) // with every column of the row
    expect(after.committed).toBe(6)
    // later spills continue the sequence: never a number the database already counts as committed
    const again = lock()
    w.write(batch('d', 1))
    expect((JSON.parse(readFileSync(pending, 'utf8')) as unknown[])[0]).toBe(7)
    again.exec('COMMIT')
    again.close()
  })

  it('a crash between the commit and the truncation doubles nothing: the committed rows are skipped at the next start', async () => {
    const w = await writer()
    const other = lock()
    w.write(batch('x', 5))
    const kept = readFileSync(pending)
    other.exec('COMMIT')
    other.close()
    expect(w.replay()).toBe(true)
    expect(counts().rows).toBe(5)
    w.close()
    open.length = 0
    // the file as a crash right after the commit leaves it (truncation never happened)
    writeFileSync(pending, kept, {mode: 0o600})
    const next = await writer()
    expect(next.spilledRows).toBe(0)
    expect(statSync(pending).size).toBe(0)
    const after = counts()
    expect(after.rows).toBe(5)
    expect(after.hourly).toBe(5)
    expect(after.committed).toBe(5)
  })

  it('replays at start what a crash left uncommitted, exactly once over two starts', async () => {
    const w = await writer()
    const other = lock()
    w.write(batch('k', 4))
    // kill -9 now: the rows are only in the side file (nothing closes cleanly)
    const kept = readFileSync(pending)
    other.exec('ROLLBACK')
    other.close()
    w.close() // close replays; put the file back as the crash left it, with nothing committed
    open.length = 0
    const db = new Database(path)
    db.exec('DELETE FROM logs; DELETE FROM usage_hourly; DELETE FROM log_spill')
    db.close()
    writeFileSync(pending, kept, {mode: 0o600})

    await writer()
    expect(counts()).toMatchObject({rows: 4, hourly: 4, committed: 4})
    for (const o of open.splice(0)) o.close()
    writeFileSync(pending, kept, {mode: 0o600}) // and once more, as if that start's truncation was lost
    await writer()
    expect(counts()).toMatchObject({rows: 4, hourly: 4, committed: 4})
  })

  it('ignores a torn last line (a write cut by a crash), cuts it off and keeps every whole row', async () => {
    await tornSpill('t', 3)
    const next = await writer()
    expect(counts().ids).toEqual(['t0', 't1', 't2'])
    expect(next.dropped).toBe(1)
    expect(statSync(pending).size).toBe(0)
  })

  it('a torn line left while the database stays locked is cut before the next batch is appended', async () => {
    const first = await writer()
    const other = lock()
    first.write(batch('p', 2))
    first.close() // its replay finds the lock: the rows stay in the side file
    open.length = 0
    appendFileSync(pending, '[3,1763634') // torn
    const next = await writer() // replay at start finds the lock too
    expect(next.spilledRows).toBe(2)
    next.write(batch('q', 1))
    const lines = readFileSync(pending, 'utf8').trimEnd().split('\n')
    expect(lines.map((l) => (JSON.parse(l) as unknown[])[0])).toEqual([1, 2, 3])
    other.exec('COMMIT')
    other.close()
    expect(next.replay()).toBe(true)
    expect(counts().ids).toEqual(['p0', 'p1', 'q0'])
  })

  it('LogStore keeps answering while locked: pending counts the kept rows, reads show them once committed', async () => {
    const store = await LogStore.open(path, {flushMs: 5})
    open.push(store)
    const other = lock()
    for (let i = 0; i < 10; i++) store.append(entry(`s${i}`))
    await until(() => existsSync(pending))
    expect(store.pending).toBe(10)
    expect(existsSync(pending)).toBe(true)
    other.exec('COMMIT')
    other.close()
    await until(() => store.pending === 0)
    expect(store.pending).toBe(0)
    expect(store.queryLogs({limit: 20}).map((r) => r.requestId)).toEqual(
      Array.from({length: 10}, (_, i) => `s${9 - i}`),
    )
  })

  it('replays a side file a gateway of before the `billed_try` column left (a column fewer): every row, not a billed try', async () => {
    // (its lines: the sequence, then the row without its last value)
    const lines = Array.from({length: 3}, (_, i) =>
      JSON.stringify([i + 1, ...batch(`o${i}`, 1).slice(0, -1)]),
    )
    writeFileSync(pending, `${lines.join('\n')}\n`, {mode: 0o600})
    await writer()
    expect(counts()).toMatchObject({rows: 3, hourly: 3, committed: 3})
    const db = new Database(path, {readonly: true})
    expect(db.prepare('SELECT COUNT(*) AS n FROM logs WHERE billed_try = 0').get()).toEqual({n: 3})
    db.close()
  })

  it("a side file line is the sequence, then the row in the insert's column order", async () => {
    const w = await writer()
    const other = lock()
    w.write(batch('f', 1))
    other.exec('ROLLBACK')
    other.close()
    const [row] = readFileSync(pending, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown[])
    expect(row).toEqual([1, ...batch('f', 1)])
  })

  it('applySpill (a command of a stopped gateway) commits the waiting rows once and empties the file; a kill after its commit doubles nothing', async () => {
    const w = await writer()
    w.write(batch('a', 2))
    const other = lock()
    w.write(batch('w', 5))
    other.exec('ROLLBACK')
    other.close()
    // a gateway stopped while the lock was held: its close could not replay either
    const again = lock()
    w.close()
    open.length = 0
    again.exec('ROLLBACK')
    again.close()
    const kept = readFileSync(pending)
    expect(LogWriter.pending(path)).toEqual({rows: 5, oldestMs: T0, torn: 0, committedKnown: true})

    expect(await LogWriter.applySpill(path, {busyMs: 100})).toEqual({applied: 5, skipped: 0, torn: 0})
    expect(statSync(pending).size).toBe(0)
    expect(counts()).toMatchObject({rows: 7, hourly: 7, committed: 5})
    expect(LogWriter.pending(path).rows).toBe(0)

    // killed between the commit and the truncation: the file comes back whole, nothing is applied twice
    writeFileSync(pending, kept, {mode: 0o600})
    expect(LogWriter.pending(path)).toMatchObject({rows: 0, oldestMs: null})
    expect(await LogWriter.applySpill(path, {busyMs: 100})).toEqual({applied: 0, skipped: 5, torn: 0})
    expect(counts()).toMatchObject({rows: 7, hourly: 7, committed: 5})
    // and the daemon's next start continues the sequence after it
    const next = await writer()
    const third = lock()
    next.write(batch('n', 1))
    expect((JSON.parse(readFileSync(pending, 'utf8')) as unknown[])[0]).toBe(6)
    third.exec('ROLLBACK')
    third.close()
  })

  it('applySpill throws busy after waiting busyMs while another process holds the lock, and leaves every row waiting', async () => {
    const w = await writer()
    const other = lock()
    w.write(batch('b', 3))
    w.close() // its replay finds the lock: the rows stay
    open.length = 0
    const before = readFileSync(pending)
    const started = Date.now()
    await expect(LogWriter.applySpill(path, {busyMs: 150})).rejects.toMatchObject({
      code: expect.stringMatching(/^SQLITE_BUSY/),
    })
    expect(Date.now() - started).toBeGreaterThanOrEqual(140)
    expect(readFileSync(pending)).toEqual(before)
    expect(LogWriter.probeWrite(path, 50)).toMatchObject({busy: true})
    other.exec('COMMIT')
    other.close()
    expect(LogWriter.probeWrite(path, 50)).toBeUndefined()
    expect(await LogWriter.applySpill(path, {busyMs: 150})).toEqual({applied: 3, skipped: 0, torn: 0})
    expect(counts().ids).toEqual(['b0', 'b1', 'b2'])
  })

  it('applySpill commits in chunks with a turn of the event loop between them (the lock holder keeps its lock fresh)', async () => {
    await stoppedUnderLock('c', 10)
    // work queued on the loop after a chunk (proper-lockfile's touch of the lock) runs before the next
    const ran: number[] = []
    const seen: Array<[number, number[]]> = []
    const done = await LogWriter.applySpill(path, {
      busyMs: 100,
      chunkRows: 4,
      afterChunk: (applied) => {
        seen.push([applied, [...ran]])
        setImmediate(() => ran.push(applied))
      },
    })
    expect(done).toEqual({applied: 10, skipped: 0, torn: 0})
    expect(seen).toEqual([
      [4, []],
      [8, [4]],
      [10, [4, 8]],
    ])
    expect(counts()).toMatchObject({rows: 10, hourly: 10, committed: 10})
    expect(counts().ids).toEqual(Array.from({length: 10}, (_, i) => `c${i}`))
    expect(statSync(pending).size).toBe(0)
  })

  it('applySpill stopped between two chunks (another process takes the lock) leaves the rest waiting, and the next apply commits only the rest', async () => {
    await stoppedUnderLock('d', 10)
    const kept = readFileSync(pending)
    let taken: Database.Database | undefined
    await expect(
      LogWriter.applySpill(path, {
        busyMs: 50,
        chunkRows: 4,
        afterChunk: () => {
          taken ??= lock()
        },
      }),
    ).rejects.toMatchObject({code: expect.stringMatching(/^SQLITE_BUSY/)})
    taken?.exec('ROLLBACK')
    taken?.close()
    // the first chunk is committed with its sequence; the file is left whole
    expect(readFileSync(pending)).toEqual(kept)
    expect(counts()).toMatchObject({rows: 4, hourly: 4, committed: 4})
    expect(LogWriter.pending(path).rows).toBe(6)
    expect(await LogWriter.applySpill(path, {busyMs: 100, chunkRows: 4})).toEqual({
      applied: 6,
      skipped: 4,
      torn: 0,
    })
    expect(counts().ids).toEqual(Array.from({length: 10}, (_, i) => `d${i}`))
    expect(counts()).toMatchObject({rows: 10, hourly: 10, committed: 10})
  })

  it('applySpill drops a torn last line and keeps every whole row', async () => {
    await tornSpill('t', 2)
    expect(LogWriter.pending(path)).toMatchObject({rows: 2, torn: 1})
    expect(await LogWriter.applySpill(path, {busyMs: 100})).toEqual({applied: 2, skipped: 0, torn: 1})
    expect(counts().ids).toEqual(['t0', 't1'])
    expect(statSync(pending).size).toBe(0)
  })
})
