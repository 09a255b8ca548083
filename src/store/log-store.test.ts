import {chmodSync, existsSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import Database from 'better-sqlite3'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import type {LogEntry} from './log-store.js'
import {openLogReader} from './log-query.js'
import {LOG_CACHE_KB, LogStore} from './log-store.js'

const HOUR = 3_600_000
const T0 = Date.UTC(2026, 10, 20, 10, 30) // 10:30 UTC

function entry(extra: Partial<LogEntry> = {}): LogEntry {
  return {
    time: T0,
    agentId: 'agent-a',
    keyPrefix: 'gw-aaaa…',
    policyId: 'default',
    entrance: 'messages',
    requestedModel: 'claude-x',
    provider: 'anthropic',
    model: 'claude-x',
    status: 200,
    fallback: false,
    inputTokens: 10,
    outputTokens: 5,
    cacheReadTokens: 2,
    cacheCreationTokens: 1,
    cache1hTokens: 0,
    reasoningTokens: 0,
    latencyMs: 12.5,
    ttfbMs: 3.25,
    error: null,
    project: 'proj-1',
    requestId: 'req_1',
    ...extra,
  }
}

let home: {home: string; cleanup: () => void}
let path: string
let store: LogStore

beforeEach(async () => {
  home = tempHome()
  path = join(home.home, 'logs.db')
  store = await LogStore.open(path, {flushMs: 20, now: () => T0 + HOUR})
})
afterEach(() => {
  store.close()
  home.cleanup()
})

describe('LogStore', () => {
  it('batches appends off the caller and writes them within flushMs', async () => {
    for (let i = 0; i < 3; i++) store.append(entry({requestId: `req_${i}`}))
    expect(store.pending).toBe(3)
    await sleep(100)
    expect(store.pending).toBe(0)
    const rows = await LogStore.open(path).then((other) => {
      const r = other.queryLogs()
      other.close()
      return r
    })
    expect(rows.map((r) => r.requestId)).toEqual(['req_2', 'req_1', 'req_0'])
    expect(rows[0]).toMatchObject({...entry({requestId: 'req_2'}), id: 3})
  })

  it('keeps every row while another process holds the write lock, and writes them in order after', async () => {
    const problems: Array<string | undefined> = []
    const own = await LogStore.open(join(home.home, 'locked.db'), {
      flushMs: 20,
      onWriteProblem: (p) => problems.push(p),
    })
    // another process (a `usage rescan` swapping its table in) takes the write lock for a while
    const other = new Database(join(home.home, 'locked.db'))
    other.pragma('busy_timeout = 0')
    other.exec('BEGIN IMMEDIATE')
    for (let i = 0; i < 30; i++) own.append(entry({requestId: `req_${i}`}))
    await sleep(600) // several flush attempts find the lock
    expect(own.pending).toBe(30)
    other.exec('COMMIT')
    other.close()
    await sleep(500)
    expect(own.pending).toBe(0)
    expect(own.queryLogs({limit: 100}).map((r) => r.requestId)).toEqual(
      Array.from({length: 30}, (_, i) => `req_${29 - i}`),
    )
    expect(problems).toEqual([]) // a short lock is not a problem worth reporting
    own.close()
  })

  it('writes every queued row on close (the SIGTERM path), with no window left to wait for', async () => {
    const slow = await LogStore.open(join(home.home, 'slow.db'), {flushMs: 60_000})
    for (let i = 0; i < 5; i++) slow.append(entry({requestId: `q_${i}`}))
    expect(slow.pending).toBe(5)
    slow.close()
    const other = await LogStore.open(join(home.home, 'slow.db'))
    expect(other.queryLogs().map((r) => r.requestId)).toEqual(['q_4', 'q_3', 'q_2', 'q_1', 'q_0'])
    other.close()
  })

  it('writes a batch of any size in multi-row statements, every column of every row in order', () => {
    // 64 + 16 + 4 + 1 + 1 + 1 rows: every statement size, and the leftover single rows
    const rows = Array.from({length: 87}, (_, i) =>
      entry({
        time: T0 + i,
        agentId: i % 3 === 0 ? null : `agent-${i % 3}`,
        status: i % 5 === 0 ? 502 : 200,
        fallback: i % 7 === 0,
        inputTokens: i,
        outputTokens: 2 * i,
        cacheCreationTokens: 3,
        cache1hTokens: i % 4,
        latencyMs: i + 0.25,
        ttfbMs: i % 4 === 0 ? null : i / 4,
        error: i % 5 === 0 ? `err ${i}` : null,
        requestId: `req_${i}`,
        broken: i % 11 === 0,
        upstreamFamily: i % 2 === 0 ? null : 'chat',
      }),
    )
    for (const row of rows) store.append(row)
    store.flush()
    const stored = store.queryLogs({limit: 200}).reverse()
    expect(stored).toHaveLength(87)
    stored.forEach((row, i) => expect(row).toEqual({...rows[i], id: i + 1}))
    const byAgent = Object.fromEntries(store.usage({pivot: 'agent'}).map((u) => [u.key, u.requests]))
    expect(byAgent).toEqual({null: 29, 'agent-1': 29, 'agent-2': 29})
  })

  it('keeps roll-up buckets apart when a field holds the separator of their keys', () => {
    store.append(entry({model: 'a\u0000b', project: 'c'}))
    store.append(entry({model: 'a', project: 'b\u0000c'}))
    store.flush()
    const byModel = Object.fromEntries(store.usage({pivot: 'model'}).map((u) => [u.key, u.requests]))
    expect(byModel).toEqual({a: 1, 'a\u0000b': 1})
  })

  it('rolls up a batch of runs (the bucket before kept) as row by row, each field of a bucket apart', () => {
    // runs of three rows, each run after one of the first bucket, which differs from it in that
    // run's field(s) only
    const kinds: Array<Partial<LogEntry>> = [
      {},
      {agentId: 'agent-b'},
      {agentId: null},
      {keyPrefix: 'gw-bbbb…'},
      {policyId: 'strict'},
      {provider: 'other-up'},
      {model: 'claude-y'},
      {project: 'proj-2'},
      {project: null},
      {status: 502},
      {broken: true},
      {fallback: true},
      {time: T0 + HOUR},
      {},
    ]
    const rows = kinds
      .flatMap((kind) => [{}, kind])
      .flatMap((kind, i) =>
        [0, 1, 2].map((n) => entry({inputTokens: 1 + i * 3 + n, ...kind, requestId: `r_${i}_${n}`})),
      )
    for (const row of rows) store.append(row)
    store.flush()
    const keyOf = {
      agent: (r: LogEntry) => r.agentId,
      key: (r: LogEntry) => r.keyPrefix,
      provider: (r: LogEntry) => r.provider,
      model: (r: LogEntry) => r.model,
      project: (r: LogEntry) => r.project,
    }
    for (const [pivot, of] of Object.entries(keyOf)) {
      const expected: Record<string, [number, number, number]> = {}
      for (const r of rows) {
        const sum = (expected[String(of(r))] ??= [0, 0, 0])
        sum[0]++
        sum[1] += r.inputTokens
        sum[2] += r.status >= 400 || r.broken ? 1 : 0
      }
      const got = store.usage({pivot: pivot as keyof typeof keyOf})
      expect(
        Object.fromEntries(got.map((u) => [String(u.key), [u.requests, u.inputTokens, u.errors]])),
      ).toEqual(expected)
    }
    // the policy, the status class, the fallback flag and the hour are a bucket's too
    expect(store.usage({policyId: 'strict'})[0]?.requests).toBe(3)
    expect(store.usage({status: '5xx'})[0]?.requests).toBe(6)
    expect(store.usage({status: 'fallback'})[0]?.requests).toBe(3)
    expect(store.usage({since: (T0 + HOUR - 1) / 1000})[0]?.requests).toBe(3)
    expect(store.usage({since: (T0 + HOUR - HOUR / 2) / 1000})[0]?.requests).toBe(3)
  })

  it('writes a full batch at once', async () => {
    const small = await LogStore.open(join(home.home, 'small.db'), {batchSize: 2, flushMs: 60_000})
    small.append(entry())
    small.append(entry())
    await sleep(20)
    expect(small.pending).toBe(0)
    small.close()
  })

  it('filters logs by agent, policy, status, since, and limits (default 50)', () => {
    for (let i = 0; i < 60; i++) store.append(entry({time: T0 + i * 1000}))
    store.append(entry({agentId: 'agent-b', policyId: 'strict', status: 429, time: T0 + 100_000}))
    store.append(entry({agentId: 'agent-b', status: 502, error: 'upstream failed', time: T0 + 101_000}))
    store.append(entry({agentId: 'agent-c', fallback: true, time: T0 + 102_000}))
    expect(store.queryLogs()).toHaveLength(50)
    expect(store.queryLogs({limit: 1000})).toHaveLength(63)
    expect(store.queryLogs({agentId: 'agent-b'}).map((r) => r.status)).toEqual([502, 429])
    expect(store.queryLogs({policyId: 'strict'}).map((r) => r.status)).toEqual([429])
    expect(store.queryLogs({status: '4xx'}).map((r) => r.status)).toEqual([429])
    expect(store.queryLogs({status: '5xx'})[0]).toMatchObject({status: 502, error: 'upstream failed'})
    expect(store.queryLogs({status: 'fallback'}).map((r) => r.agentId)).toEqual(['agent-c'])
    expect(store.queryLogs({status: '2xx', limit: 1000})).toHaveLength(61)
    expect(store.queryLogs({since: (T0 + 59_000) / 1000}).map((r) => r.time)).toEqual([
      T0 + 102_000,
      T0 + 101_000,
      T0 + 100_000,
      T0 + 59_000,
    ])
  })

  it('pivots usage by agent, key, provider, model and project, with filters', () => {
    store.append(entry())
    store.append(entry({inputTokens: 100, outputTokens: 50, reasoningTokens: 7}))
    store.append(
      entry({agentId: 'agent-b', keyPrefix: 'gw-bbbb…', provider: 'sim', model: 'm2', project: null}),
    )
    store.append(
      entry({
        agentId: 'agent-b',
        status: 503,
        fallback: true,
        provider: 'sim',
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
      }),
    )
    expect(store.usage({pivot: 'agent'})).toEqual([
      {
        key: 'agent-a',
        requests: 2,
        errors: 0,
        fallbacks: 0,
        inputTokens: 110,
        outputTokens: 55,
        cacheReadTokens: 4,
        cacheCreationTokens: 2,
        reasoningTokens: 7,
      },
      {
        key: 'agent-b',
        requests: 2,
        errors: 1,
        fallbacks: 1,
        inputTokens: 10,
        outputTokens: 5,
        cacheReadTokens: 2,
        cacheCreationTokens: 1,
        reasoningTokens: 0,
      },
    ])
    expect(store.usage({pivot: 'key'}).map((r) => [r.key, r.requests])).toEqual([
      ['gw-aaaa…', 3],
      ['gw-bbbb…', 1],
    ])
    expect(store.usage({pivot: 'provider'}).map((r) => [r.key, r.requests])).toEqual([
      ['anthropic', 2],
      ['sim', 2],
    ])
    expect(store.usage({pivot: 'model'}).map((r) => r.key)).toEqual(['claude-x', 'm2'])
    expect(store.usage({pivot: 'project'}).map((r) => [r.key, r.requests])).toEqual([
      ['proj-1', 3],
      [null, 1],
    ])
    expect(store.usage()).toEqual([expect.objectContaining({key: 'all', requests: 4, inputTokens: 120})])
    expect(store.usage({pivot: 'agent', status: '5xx'})).toEqual([
      expect.objectContaining({key: 'agent-b', requests: 1}),
    ])
    expect(store.usage({pivot: 'agent', status: 'fallback'}).map((r) => r.key)).toEqual(['agent-b'])
    expect(store.usage({pivot: 'model', agentId: 'agent-b'}).map((r) => r.key)).toEqual(['m2', 'claude-x'])
  })

  it('a broken answer (200, then the stream broke) is an error of class 5xx in logs, usage and its roll-up', () => {
    store.append(entry({agentId: 'agent-a', time: T0}))
    store.append(
      entry({
        agentId: 'agent-b',
        time: T0 + 1000,
        broken: true,
        error: 'up: stream ended without its terminal event ([DONE])',
      }),
    )
    store.append(entry({agentId: 'agent-c', status: 502, error: 'upstream failed', time: T0 + 2000}))
    store.append(
      entry({agentId: 'agent-d', error: 'fell back after: up: connection refused', time: T0 + 3000}),
    )
    store.flush()
    expect(store.queryLogs({status: '5xx'}).map((r) => [r.agentId, r.status, r.broken])).toEqual([
      ['agent-c', 502, false],
      ['agent-b', 200, true],
    ])
    expect(store.queryLogs({status: '2xx'}).map((r) => r.agentId)).toEqual(['agent-d', 'agent-a'])
    // the hourly roll-up (no since) and the raw rows of a partial hour (since) agree
    const errors = (since?: number) =>
      Object.fromEntries(store.usage({pivot: 'agent', since}).map((u) => [u.key, u.errors]))
    const expected = {'agent-a': 0, 'agent-b': 1, 'agent-c': 1, 'agent-d': 0}
    expect(errors()).toEqual(expected)
    expect(errors((T0 - 1000) / 1000)).toEqual(expected)
    expect(
      store
        .usage({pivot: 'agent', status: '5xx'})
        .map((u) => u.key)
        .sort(),
    ).toEqual(['agent-b', 'agent-c'])
    expect(
      store
        .usage({pivot: 'agent', status: '5xx', since: (T0 - 1000) / 1000})
        .map((u) => u.key)
        .sort(),
    ).toEqual(['agent-b', 'agent-c'])
  })

  it('usage since a time inside an hour is exact (roll-up plus the partial hour)', () => {
    store.append(entry({time: T0 - 10 * 60_000, inputTokens: 1})) // 10:20
    store.append(entry({time: T0 + 10 * 60_000, inputTokens: 10})) // 10:40
    store.append(entry({time: T0 + HOUR, inputTokens: 100})) // 11:30
    store.append(entry({time: T0 + 2 * HOUR, inputTokens: 1000})) // 12:30
    const since = (t: number): number => store.usage({since: t / 1000})[0]?.inputTokens ?? 0
    expect(since(T0)).toBe(1110)
    expect(since(T0 - 20 * 60_000)).toBe(1111)
    expect(since(T0 + 10 * 60_000)).toBe(1110)
    expect(since(T0 + 10 * 60_000 + 1)).toBe(1100)
    expect(since(T0 + 2 * HOUR)).toBe(1000)
    expect(since(T0 + 3 * HOUR)).toBe(0)
  })

  it('retention deletes rows older than N days, from logs and usage', () => {
    const DAY = 24 * HOUR
    store.append(entry({time: T0 - 10 * DAY, requestId: 'old'}))
    store.append(entry({time: T0 - 2 * DAY, requestId: 'recent'}))
    store.append(entry({time: T0, requestId: 'now'}))
    expect(store.prune(7)).toBe(1)
    expect(store.queryLogs().map((r) => r.requestId)).toEqual(['now', 'recent'])
    expect(store.usage()[0].requests).toBe(2)
  })

  it('reads read-only what the writer committed (also while it holds rows), and nothing from an empty or missing file', async () => {
    store.append(entry({requestId: 'req_a'}))
    store.append(entry({requestId: 'req_b', time: T0 + 1000, status: 502}))
    store.flush()
    store.append(entry({requestId: 'req_queued'})) // not flushed yet: not in the file
    const reader = (await openLogReader(path))!
    try {
      expect(reader.queryLogs({}).map((r) => r.requestId)).toEqual(['req_b', 'req_a'])
      expect(reader.queryLogs({status: '5xx'}).map((r) => r.requestId)).toEqual(['req_b'])
      expect(reader.usage({pivot: 'model'})).toMatchObject([{key: 'claude-x', requests: 2, errors: 1}])
      // the writer keeps writing while a reader is open
      store.flush()
      expect(reader.queryLogs({}).map((r) => r.requestId)).toContain('req_queued')
    } finally {
      reader.close()
    }
    expect(await openLogReader(join(home.home, 'none.db'))).toBeUndefined()
    const empty = join(home.home, 'empty.db')
    new Database(empty).close()
    expect(await openLogReader(empty)).toBeUndefined()
    const bad = join(home.home, 'bad.db')
    writeFileSync(bad, 'this is not a database '.repeat(100))
    await expect(openLogReader(bad)).rejects.toThrow(/not a database/)
  })

  it("caps the connection's page cache at 2 MB, not better-sqlite3's 16 MB default (the daemon's RSS under load)", () => {
    // better-sqlite3 builds SQLite with a 16 MB default: a fresh connection shows it
    const plain = new Database(path)
    expect(plain.pragma('cache_size', {simple: true})).toBe(-16_000)
    plain.close()
    // the store's connection (writes, and reads in inline mode): negative means KiB
    const db = (store as unknown as {db: Database.Database}).db
    expect(db.pragma('cache_size', {simple: true})).toBe(-LOG_CACHE_KB)
    expect(LOG_CACHE_KB).toBe(2000)
    // and rows still go in and come out with it
    for (let i = 0; i < 2000; i++) store.append(entry({requestId: `req_${i}`}))
    store.flush()
    expect(store.queryLogs({limit: 3}).map((r) => r.requestId)).toEqual(['req_1999', 'req_1998', 'req_1997'])
    // reads use a connection of their own, opened by the first one, with SQLite's default cache
    const reader = (store as unknown as {reader: Database.Database}).reader
    expect(reader).not.toBe(db)
    expect(reader.pragma('cache_size', {simple: true})).toBe(-16_000)
    // which sees every row the writes commit, the queued ones included
    store.append(entry({requestId: 'req_last'}))
    expect(store.queryLogs({limit: 1}).map((r) => r.requestId)).toEqual(['req_last'])
    expect(store.usage()[0]).toMatchObject({requests: 2001})
  })

  it('integrity check passes on a good file and fails on a corrupted one', async () => {
    store.append(entry())
    store.flush()
    expect(store.integrityCheck()).toEqual({ok: true, problems: []})
    expect(await LogStore.check(join(home.home, 'none.db'))).toEqual({ok: true, problems: []})
    const bad = join(home.home, 'bad.db')
    writeFileSync(bad, 'this is not a database '.repeat(100))
    const result = await LogStore.check(bad)
    expect(result.ok).toBe(false)
    expect(result.problems.join(' ')).toMatch(/not a database/)
    expect(existsSync(path + '-wal')).toBe(true)
  })

  it('keeps the database and its -wal and -shm files private (0600), also an older 0644 file', async () => {
    const mode = (file: string): string => (statSync(file).mode & 0o777).toString(8)
    const old = process.umask(0o022)
    try {
      const fresh = join(home.home, 'fresh.db')
      const other = await LogStore.open(fresh)
      other.append(entry())
      other.flush()
      expect([mode(fresh), mode(fresh + '-wal'), mode(fresh + '-shm')]).toEqual(['600', '600', '600'])
      other.close()
      chmodSync(fresh, 0o644)
      const again = await LogStore.open(fresh)
      again.append(entry())
      again.flush()
      expect([mode(fresh), mode(fresh + '-wal'), mode(fresh + '-shm')]).toEqual(['600', '600', '600'])
      again.close()
    } finally {
      process.umask(old)
    }
  })
})

describe('a disk that fills up', () => {
  it('keeps what is stored, reports the failure once and the recovery once, and never throws', async () => {
    const problems: Array<string | undefined> = []
    const full = await LogStore.open(join(home.home, 'full.db'), {
      flushMs: 5,
      now: () => T0 + HOUR,
      onWriteProblem: (problem) => problems.push(problem),
    })
    full.append(entry({requestId: 'before'}))
    full.flush()
    // SQLite's own limit on the database's pages: every write that needs a new page now fails
    // with SQLITE_FULL, exactly as on a full disk.
    const db = (full as unknown as {db: {pragma(source: string, options?: object): unknown}}).db
    db.pragma(`max_page_count = ${Number(db.pragma('page_count', {simple: true}))}`)
    for (let i = 0; i < 200; i++)
      expect(() => full.append(entry({requestId: `lost-${i}`, error: 'x'.repeat(500)}))).not.toThrow()
    await sleep(50)
    expect(problems).toEqual(['could not write a batch: database or disk is full'])
    // reads still answer, with what was stored before the disk filled up, and do not count as
    // the disk working again
    expect(full.queryLogs().map((r) => r.requestId)).toEqual(['before'])
    expect(full.usage()[0]).toMatchObject({requests: 1})
    expect(problems).toHaveLength(1)
    full.append(entry({requestId: 'still-lost', error: 'x'.repeat(4000)}))
    await sleep(30)
    expect(problems).toHaveLength(1)
    // every lost row is counted (gwctl_log_rows_dropped_total on /metrics)
    expect(full.dropped).toBe(201)

    db.pragma('max_page_count = 1000000')
    full.append(entry({requestId: 'after'}))
    await sleep(50)
    expect(problems).toEqual(['could not write a batch: database or disk is full', undefined])
    expect(full.queryLogs().map((r) => r.requestId)).toEqual(['after', 'before'])
    expect(full.dropped).toBe(201)
    full.close()
  })
})
