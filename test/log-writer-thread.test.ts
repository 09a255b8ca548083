/**
 * The log store with its writer thread (`writer: 'thread'`, what the daemon runs), from the built
 * package: the thread's file must be in dist/ and found from the bundled module.
 */
import {existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'
import Database from 'better-sqlite3'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type * as LogStoreModule from '../src/store/log-store.js'
import {tempHome} from './helpers/cli.js'
import {logEntry} from './helpers/log-entry.js'

const {LogStore, logWriterMode} = (await import(
  join(import.meta.dirname, '../dist/store/log-store.js')
)) as typeof LogStoreModule
type Store = LogStoreModule.LogStore

const T0 = Date.UTC(2026, 10, 20, 10, 30)
const entry = (requestId: string): LogStoreModule.LogEntry =>
  logEntry({time: T0, requestedModel: 'm', model: 'm', latencyMs: 1.5, ttfbMs: null, requestId})

let home: {home: string; cleanup: () => void}
let path: string
const stores: Store[] = []
beforeEach(() => {
  home = tempHome()
  path = join(home.home, 'logs.db')
})
afterEach(() => {
  for (const s of stores.splice(0)) s.close()
  home.cleanup()
})

async function open(options: LogStoreModule.LogStoreOptions = {}): Promise<Store> {
  const store = await LogStore.open(path, {writer: 'thread', ...options})
  stores.push(store)
  return store
}

/** Waits (on a loaded machine the thread may be late) until `check` holds, at most 5 s. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !check(); i++) await sleep(20)
}

const ids = (): string[] => {
  const db = new Database(path, {readonly: true})
  try {
    return db.prepare('SELECT request_id FROM logs ORDER BY id').pluck().all() as string[]
  } finally {
    db.close()
  }
}

describe('log writer thread', () => {
  it('writes the batches on its thread; a read right after an append sees the row', async () => {
    const store = await open({flushMs: 60_000})
    for (let i = 0; i < 30; i++) store.append(entry(`r${i}`))
    expect(store.pending).toBe(30)
    // the read hands the queue over and waits for the thread's commit
    expect(store.queryLogs({limit: 100})).toHaveLength(30)
    expect(store.pending).toBe(0)
    expect(store.usage()[0]).toMatchObject({requests: 30})
    for (let i = 30; i < 35; i++) store.append(entry(`r${i}`))
    store.close() // SIGTERM path: the queue is written before close returns
    stores.length = 0
    expect(ids()).toEqual(Array.from({length: 35}, (_, i) => `r${i}`))
  })

  it('writes within the batch window without any read', async () => {
    const store = await open({flushMs: 10})
    store.append(entry('w0'))
    await until(() => ids().length > 0)
    expect(ids()).toEqual(['w0'])
  })

  it('keeps batches in logs.pending while another process holds the lock, also at close, and the next open replays them', async () => {
    const store = await open({flushMs: 5})
    const pendingFile = join(home.home, 'logs.pending')
    const other = new Database(path)
    other.pragma('busy_timeout = 0')
    other.exec('BEGIN IMMEDIATE')
    for (let i = 0; i < 20; i++) store.append(entry(`l${i}`))
    const lines = (): number => {
      const text = existsSync(pendingFile) ? readFileSync(pendingFile, 'utf8') : ''
      return text === '' ? 0 : text.trimEnd().split('\n').length
    }
    await until(() => lines() === 20)
    expect(store.pending).toBe(20)
    expect(lines()).toBe(20)
    store.append(entry('l20'))
    store.close() // still locked: the last batch joins the side file
    stores.length = 0
    other.exec('COMMIT')
    other.close()
    expect(ids()).toEqual([])
    const next = await open()
    expect(next.queryLogs({limit: 100}).map((r) => r.requestId)).toEqual(
      Array.from({length: 21}, (_, i) => `l${20 - i}`),
    )
    expect(readFileSync(join(home.home, 'logs.pending'), 'utf8')).toBe('')
  })

  it('passes the thread’s write problems on once, and their end', async () => {
    const problems: Array<string | undefined> = []
    const store = await open({flushMs: 5, onWriteProblem: (p) => problems.push(p)})
    const other = new Database(path)
    other.pragma('busy_timeout = 0')
    other.exec('BEGIN IMMEDIATE')
    // the side file cannot be written (a folder in its place): the locked batch is lost, counted
    mkdirSync(join(home.home, 'logs.pending'))
    store.append(entry('lost'))
    await until(() => problems.length > 0)
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/^could not keep a locked batch in .*logs\.pending: EISDIR/)
    expect(store.dropped).toBe(1)
    rmSync(join(home.home, 'logs.pending'), {recursive: true})
    other.exec('COMMIT')
    other.close()
    store.append(entry('kept'))
    await until(() => problems.length > 1)
    expect(problems).toEqual([problems[0], undefined])
    expect(ids()).toEqual(['kept'])
  })

  it('a writer thread that dies: its unwritten batches are counted, the problem said, and writing goes on', async () => {
    const problems: Array<string | undefined> = []
    const store = await open({flushMs: 5, onWriteProblem: (p) => problems.push(p)})
    store.append(entry('before'))
    store.flush()
    const worker = (store as unknown as {worker: {terminate(): Promise<number>}}).worker
    await worker.terminate()
    await until(() => problems.length > 0)
    expect(problems).toEqual([
      'the log writer thread stopped (it exited with code 1); writing on the request thread until a restart',
    ])
    store.append(entry('after'))
    await until(() => ids().length > 1)
    expect(ids()).toEqual(['before', 'after'])
    expect(store.queryLogs().map((r) => r.requestId)).toEqual(['after', 'before'])
    expect(store.dropped).toBe(0)
  })

  it('an open that fails says why (the daemon turns it into its start error)', async () => {
    writeFileSync(join(home.home, 'file'), '')
    await expect(LogStore.open(join(home.home, 'file', 'logs.db'), {writer: 'thread'})).rejects.toMatchObject(
      {
        code: 'EEXIST',
        message: expect.stringMatching(/^EEXIST: file already exists, mkdir/),
      },
    )
  })
})

describe('log writer auto: inline until the rows come fast, then the thread', () => {
  /** An `auto` store that starts its thread at 50 rows in a second. */
  async function openAuto(options: LogStoreModule.LogStoreOptions = {}): Promise<Store> {
    const store = await LogStore.open(path, {
      writer: 'auto',
      promoteRowsPerSecond: 50,
      flushMs: 5,
      ...options,
    })
    stores.push(store)
    return store
  }
  const appendAll = (store: Store, prefix: string, n: number): void => {
    for (let i = 0; i < n; i++) store.append(entry(`${prefix}${i}`))
  }
  const all = (prefix: string, n: number): string[] => Array.from({length: n}, (_, i) => `${prefix}${i}`)
  const promoting = (store: Store): boolean => (store as unknown as {promoting: boolean}).promoting

  it('which mode the daemon runs: the setting, else auto with 4 cores or more', () => {
    expect(logWriterMode(undefined, 2)).toBe('inline')
    expect(logWriterMode(undefined, 4)).toBe('auto')
    expect(logWriterMode(undefined, 16)).toBe('auto')
    expect(logWriterMode('thread', 2)).toBe('thread')
    expect(logWriterMode('inline', 16)).toBe('inline')
    expect(logWriterMode('auto', 2)).toBe('auto')
    expect(logWriterMode('fast', 16)).toBe('auto')
  })

  it('writes on the calling thread at a trickle; a busy second hands the writes to the thread, every row once and in order', async () => {
    let told = 0
    const store = await openAuto({onWriterThread: () => told++})
    appendAll(store, 'a', 10)
    store.flush()
    expect(store.writerThread).toBe(false)
    expect(ids()).toEqual(all('a', 10))
    // 60 rows within a second: the thread starts; rows keep coming while it starts
    appendAll(store, 'b', 60)
    store.flush()
    expect(promoting(store)).toBe(true)
    appendAll(store, 'c', 5)
    await until(() => store.writerThread)
    expect(store.writerThread).toBe(true)
    expect(told).toBe(1)
    // the connection that wrote reads from here on, with a read connection's cache (the writes' 2 MB no more)
    const db = (store as unknown as {db: {pragma(p: string, o: {simple: true}): unknown}}).db
    expect(db.pragma('cache_size', {simple: true})).toBe(-16000)
    appendAll(store, 'd', 30)
    expect(store.queryLogs({limit: 1000})).toHaveLength(105)
    expect(store.usage()[0]).toMatchObject({requests: 105})
    appendAll(store, 'e', 3)
    store.close()
    stores.length = 0
    expect(ids()).toEqual([...all('a', 10), ...all('b', 60), ...all('c', 5), ...all('d', 30), ...all('e', 3)])
    expect(store.dropped).toBe(0)
  })

  it('no hand-over while rows wait in logs.pending; once they are replayed, the next busy second hands over', async () => {
    const store = await openAuto()
    const other = new Database(path)
    other.pragma('busy_timeout = 0')
    other.exec('BEGIN IMMEDIATE')
    appendAll(store, 'l', 60)
    store.flush()
    await until(() => store.pending === 60)
    expect(store.pending).toBe(60)
    await sleep(200)
    expect(promoting(store)).toBe(false)
    expect(store.writerThread).toBe(false)
    other.exec('COMMIT')
    other.close()
    await until(() => store.pending === 0)
    expect(ids()).toEqual(all('l', 60))
    appendAll(store, 'm', 60)
    store.flush()
    await until(() => store.writerThread)
    expect(store.writerThread).toBe(true)
    appendAll(store, 'n', 2)
    store.close()
    stores.length = 0
    expect(ids()).toEqual([...all('l', 60), ...all('m', 60), ...all('n', 2)])
  })

  it('a lock that comes while the thread starts calls the hand-over off: the thread stops, the side file stays the inline writer’s, no row lost', async () => {
    const store = await openAuto()
    appendAll(store, 'a', 60)
    store.flush()
    expect(promoting(store)).toBe(true)
    // another process takes the lock before the thread is ready: the next batch goes to the side file
    const other = new Database(path)
    other.pragma('busy_timeout = 0')
    other.exec('BEGIN IMMEDIATE')
    appendAll(store, 'b', 5)
    store.flush()
    expect(store.pending).toBe(5)
    await until(() => !promoting(store))
    expect(store.writerThread).toBe(false)
    other.exec('COMMIT')
    other.close()
    await until(() => store.pending === 0)
    expect(ids()).toEqual([...all('a', 60), ...all('b', 5)])
    expect(readFileSync(join(home.home, 'logs.pending'), 'utf8')).toBe('')
    // a later busy second hands over
    appendAll(store, 'c', 60)
    store.flush()
    await until(() => store.writerThread)
    expect(store.writerThread).toBe(true)
    store.close()
    stores.length = 0
    expect(ids()).toEqual([...all('a', 60), ...all('b', 5), ...all('c', 60)])
  })
})
