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

const {LogStore} = (await import(
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
