/**
 * The start-up check of logs.db: a file over the size limit gets a quick look before the gateway
 * opens it and its full `quick_check` in a worker thread afterwards; damage found then is marked,
 * and the next start moves that same file aside without checking it again.
 */
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  renameSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import {randomBytes} from 'node:crypto'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import {checkInWorker, damageMark, markDamaged, startCheckMaxBytes} from './log-db-check.js'
import {LogStore} from './log-store.js'

function entry(i: number) {
  return {
    time: Date.now() - 3_600_000 + i,
    agentId: `agt_${i % 7}`,
    keyPrefix: 'gw-abc…',
    policyId: 'default',
    entrance: 'chat',
    requestedModel: 'sim-mini',
    provider: 'sim',
    model: 'sim-mini',
    status: 200,
    fallback: false,
    inputTokens: 10,
    outputTokens: 20,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    reasoningTokens: 0,
    latencyMs: 5,
    ttfbMs: 2,
    error: null,
    project: `project ${i} ${'x'.repeat(200)}`,
    requestId: `req_${i}`,
  }
}

function overwrite(path: string, offset: number, bytes: Buffer): void {
  const fd = openSync(path, 'r+')
  try {
    writeSync(fd, bytes, 0, bytes.length, offset)
  } finally {
    closeSync(fd)
  }
}

describe('start-up check of logs.db', () => {
  let home: string
  let cleanup: () => void
  let path: string
  beforeEach(async () => {
    ;({home, cleanup} = tempHome())
    path = join(home, 'logs.db')
    const store = await LogStore.open(path)
    for (let i = 0; i < 3000; i++) store.append(entry(i))
    store.flush()
    store.close()
  })
  afterEach(() => cleanup())
  const aside = () => readdirSync(home).filter((n) => /^logs\.db\.damaged-[\dTZ-]+Z$/.test(n))
  const damageMiddle = () =>
    overwrite(path, Math.floor(statSync(path).size / 4096 / 2) * 4096, randomBytes(4096))

  it('a sound file over the limit: a quick look at start, then a full check in a worker says ok', async () => {
    let deferred: number | undefined
    expect(
      LogStore.moveAsideIfDamaged(path, new Date(), {fullCheckMaxBytes: 0, deferred: (b) => (deferred = b)}),
    ).toBe(undefined)
    expect(deferred).toBe(statSync(path).size)
    const result = await checkInWorker(path)
    expect(result).toMatchObject({ok: true, checked: true, problems: []})
    // within the limit nothing is deferred
    deferred = undefined
    LogStore.moveAsideIfDamaged(path, new Date(), {deferred: (b) => (deferred = b)})
    expect(deferred).toBeUndefined()
  })

  it('a damaged middle page over the limit: not seen at start, found by the worker, moved aside by the next start', async () => {
    damageMiddle()
    expect(LogStore.moveAsideIfDamaged(path, new Date(), {fullCheckMaxBytes: 0})).toBeUndefined()
    expect(aside()).toEqual([])
    const result = await checkInWorker(path)
    expect(result.ok).toBe(false)
    expect(result.checked).toBe(true)
    expect(result.problems.length).toBeGreaterThan(0)
    markDamaged(path, result.problems.join('; '))
    expect(statSync(`${path}.damage-seen`).mode & 0o777).toBe(0o600)
    expect(damageMark(path)).toBe(result.problems.join('; '))
    const moved = LogStore.moveAsideIfDamaged(path, new Date(), {fullCheckMaxBytes: 0})
    expect(moved?.reason).toBe(result.problems.join('; '))
    expect(aside()).toHaveLength(1)
    expect(existsSync(path)).toBe(false)
    expect(existsSync(`${path}.damage-seen`)).toBe(false)
  })

  it('the same damage within the limit is found at start (the full check), as before', () => {
    damageMiddle()
    expect(LogStore.moveAsideIfDamaged(path)?.reason).toBeTruthy()
    expect(aside()).toHaveLength(1)
  })

  it('a damaged header over the limit is found by the quick look at start', () => {
    overwrite(path, 0, randomBytes(100))
    expect(LogStore.moveAsideIfDamaged(path, new Date(), {fullCheckMaxBytes: 0})?.reason).toMatch(
      /not a database/,
    )
    expect(aside()).toHaveLength(1)
  })

  it('a mark of another file (the database was replaced since) is ignored and removed', () => {
    markDamaged(path, 'old damage')
    renameSync(path, `${path}.old`)
    renameSync(`${path}.old`, path) // same inode: still marked
    expect(damageMark(path)).toBe('old damage')
    const copy = `${path}.copy`
    // a new file at the path: another inode
    writeFileSync(copy, '')
    renameSync(copy, path)
    expect(damageMark(path)).toBeUndefined()
    expect(existsSync(`${path}.damage-seen`)).toBe(false)
  })

  it('the size limit: 64 MB, or GWCTL_LOGDB_START_CHECK_MB', () => {
    expect(startCheckMaxBytes({})).toBe(64 * 1024 * 1024)
    expect(startCheckMaxBytes({GWCTL_LOGDB_START_CHECK_MB: '0'})).toBe(0)
    expect(startCheckMaxBytes({GWCTL_LOGDB_START_CHECK_MB: 'x'})).toBe(64 * 1024 * 1024)
  })
})
