import {existsSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import {PUBLISHED_FRESH_MS, publishedFigures} from '../services/usage-statusline.js'
import {homeFile} from '../store/paths.js'
import {
  ASKED_MAX,
  ASKED_TTL_MS,
  PUBLISH_EVERY_MS,
  StatuslinePublisher,
  publishedKey,
} from './statusline-file.js'
import type {StatuslineFigures} from './usage-memory.js'

const MIDNIGHT = Date.parse('2026-11-20T00:00:00Z')
const NOW = MIDNIGHT + 12 * 3_600_000

const figuresOf = (usd: number, windowEnd = NOW + 3_600_000): StatuslineFigures => ({
  today: {usd, unpriced: false},
  session: {usd: usd / 2, unpriced: false, requests: 2},
  window: {usd, unpriced: true, end: windowEnd, perHour: 1.5},
})

describe('the statusline’s published figures', () => {
  let home: {home: string; cleanup: () => void}
  let path: string
  let publisher: StatuslinePublisher<StatuslineFigures> | undefined
  beforeEach(() => {
    home = tempHome()
    path = join(home.home, 'statusline.json')
  })
  afterEach(() => {
    publisher?.close()
    publisher = undefined
    vi.useRealTimers()
    home.cleanup()
  })

  it('the file the daemon writes is the one the CLI reads: same key, its own pid, 0600, whole', () => {
    const asked: Array<{todayStartMs: number; session?: string; now: number}> = []
    publisher = new StatuslinePublisher(path, (key, now) => {
      asked.push({...key, now})
      return key.session === 'a b' ? figuresOf(1.25) : figuresOf(0.5, NOW + 60_000)
    })
    publisher.ask({todayStartMs: MIDNIGHT, session: 'a b'})
    publisher.ask({todayStartMs: MIDNIGHT})
    publisher.write(NOW)
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(asked.map((a) => [a.session, a.now])).toEqual([
      ['a b', NOW],
      [undefined, NOW],
    ])
    const read = (key: {todayStartMs: number; session?: string}, now = NOW + 1000, pid = process.pid) =>
      publishedFigures(path, pid, key, now)
    expect(read({todayStartMs: MIDNIGHT, session: 'a b'})).toEqual(figuresOf(1.25))
    expect(read({todayStartMs: MIDNIGHT})).toEqual(figuresOf(0.5, NOW + 60_000))
    // not asked: the CLI asks the daemon
    expect(read({todayStartMs: MIDNIGHT, session: 'other'})).toBeUndefined()
    expect(read({todayStartMs: MIDNIGHT + 86_400_000, session: 'a b'})).toBeUndefined()
    // another daemon's file (a pid file rewritten by a new daemon), or an old one
    expect(read({todayStartMs: MIDNIGHT}, NOW + 1000, process.pid + 1)).toBeUndefined()
    expect(read({todayStartMs: MIDNIGHT}, NOW + PUBLISHED_FRESH_MS + 1)).toBeUndefined()
    // the window ended since the file was written: no active window, the rest as written
    expect(read({todayStartMs: MIDNIGHT}, NOW + 60_000)).toEqual({...figuresOf(0.5), window: null})
    expect(read({todayStartMs: MIDNIGHT, session: 'a b'}, NOW + 60_000)).toEqual(figuresOf(1.25))
    // no temp file left beside it
    expect(existsSync(`${path}.${process.pid}.tmp`)).toBe(false)
  })

  it('a file that is not the daemon’s (torn, another version, not JSON) is not read', () => {
    const key = {todayStartMs: MIDNIGHT}
    for (const text of [
      '',
      '{"v":1,"pid":',
      JSON.stringify({v: 2, pid: process.pid, written: NOW, lines: {[publishedKey(key)]: figuresOf(1)}}),
      JSON.stringify({v: 1, pid: process.pid, written: NOW, lines: {[publishedKey(key)]: {today: null}}}),
    ]) {
      writeFileSync(path, text)
      expect(publishedFigures(path, process.pid, key, NOW)).toBeUndefined()
    }
    writeFileSync(
      path,
      JSON.stringify({v: 1, pid: process.pid, written: NOW, lines: {[publishedKey(key)]: figuresOf(1)}}),
    )
    expect(publishedFigures(path, process.pid, key, NOW)).toEqual(figuresOf(1))
  })

  it('a burst of changes is one write, at most one per interval; nothing is written before a statusline asks', async () => {
    vi.useFakeTimers({now: NOW})
    let usd = 0
    let computed = 0
    publisher = new StatuslinePublisher(path, () => {
      computed++
      return figuresOf(usd)
    })
    publisher.changed()
    await vi.advanceTimersByTimeAsync(1000)
    expect(existsSync(path)).toBe(false)

    publisher.ask({todayStartMs: MIDNIGHT})
    await vi.advanceTimersByTimeAsync(10)
    expect(computed).toBe(1)
    for (let i = 1; i <= 50; i++) {
      usd = i
      publisher.changed()
      await vi.advanceTimersByTimeAsync(2)
    }
    // the first change after a write waits out the interval; the last change is written
    expect(computed).toBeLessThanOrEqual(2)
    await vi.advanceTimersByTimeAsync(PUBLISH_EVERY_MS)
    expect(computed).toBeLessThanOrEqual(3)
    expect(publishedFigures(path, process.pid, {todayStartMs: MIDNIGHT}, Date.now())?.today.usd).toBe(50)
  })

  it('keeps the keys asked lately, at most ASKED_MAX, and stops publishing one not asked for ASKED_TTL_MS', () => {
    publisher = new StatuslinePublisher(path, () => figuresOf(1))
    vi.useFakeTimers({now: NOW})
    publisher.ask({todayStartMs: MIDNIGHT, session: 'old'})
    vi.setSystemTime(NOW + ASKED_TTL_MS / 2)
    for (let i = 0; i < ASKED_MAX - 1; i++) publisher.ask({todayStartMs: MIDNIGHT, session: `s${i}`})
    publisher.write()
    const lines = () => Object.keys(JSON.parse(readFileSync(path, 'utf8')).lines as object)
    expect(lines()).toHaveLength(ASKED_MAX)
    publisher.ask({todayStartMs: MIDNIGHT, session: 'new'})
    publisher.write()
    // the least recently asked went first
    expect(lines()).not.toContain(`${MIDNIGHT} old`)
    expect(lines()).toContain(`${MIDNIGHT} new`)
    vi.setSystemTime(NOW + ASKED_TTL_MS + 1)
    publisher.ask({todayStartMs: MIDNIGHT, session: 'newest'})
    publisher.write()
    expect(lines()).toHaveLength(1 + ASKED_MAX - 1)
    vi.setSystemTime(NOW + ASKED_TTL_MS / 2 + ASKED_TTL_MS + 1)
    publisher.write()
    expect(lines()).toEqual([`${MIDNIGHT} newest`])
  })

  it('figures that cannot be made (logs.db unreadable) remove the file instead of throwing in a timer', () => {
    let fail = false
    publisher = new StatuslinePublisher(path, () => {
      if (fail) throw new Error('SQLITE_CORRUPT')
      return figuresOf(1)
    })
    publisher.ask({todayStartMs: MIDNIGHT})
    publisher.write(NOW)
    expect(existsSync(path)).toBe(true)
    fail = true
    expect(() => publisher!.write(NOW)).not.toThrow()
    expect(existsSync(path)).toBe(false)
  })

  it('sits where the CLI looks for it: beside the pid file', () => {
    for (const env of [{GWCTL_HOME: '/x/home'}, {XDG_CONFIG_HOME: '/x/config'}, {HOME: '/x/user'}])
      expect(join(homeFile('pid', env), '..', 'statusline.json')).toBe(homeFile('statusline', env))
  })
})
