import {appendFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import {writeFixtureHistory} from '../../test/helpers/history.js'
import {HistoryStore} from '../store/history-store.js'
import type {GatewayEvent} from '../gateway/events.js'
import {onGatewayEvent} from './events.js'
import {scanPeriodMs, startHistoryScanner} from './history-scanner.js'
import {beginQuietStart, endQuietStart, isQuietStart} from './quiet-start.js'

describe('daemon history scanner', () => {
  let home: {home: string; cleanup: () => void}
  beforeEach(() => {
    home = tempHome()
  })
  afterEach(() => home.cleanup())

  it('scans on start, then again each period, reading only what was added', async () => {
    const env = {HOME: join(home.home, 'user-home')}
    const paths = writeFixtureHistory(env.HOME)
    const lines: string[] = []
    const events: GatewayEvent[] = []
    const off = onGatewayEvent((event) => events.push(event))
    const dbPath = join(home.home, 'logs.db')
    const scanner = (await startHistoryScanner({dbPath, log: (l) => lines.push(l), periodMs: 50, env}))!
    await scanner.idle
    const reader = await HistoryStore.open(dbPath)
    const count = (tool: string) =>
      (reader.db.prepare('SELECT COUNT(*) AS n FROM history WHERE tool = ?').get(tool) as {n: number}).n
    expect(count('codex')).toBe(3)
    expect(lines.some((l) => l.includes('history scan: 5/5 files read, 10 rows'))).toBe(true)
    // the event stream says usage rows were added (the app's usage view applies it)
    expect(events).toContainEqual({type: 'usage', rows: 10})

    appendFileSync(
      paths.codex,
      JSON.stringify({
        timestamp: '2025-08-21T11:00:00Z',
        type: 'event_msg',
        payload: {type: 'token_count', info: {last_token_usage: {input_tokens: 5, output_tokens: 1}}},
      }) + '\n',
    )
    await expect.poll(() => count('codex'), {timeout: 5000}).toBe(4)
    expect(lines.some((l) => l.includes('history scan: 1/5 files read, 1 rows'))).toBe(true)
    await expect.poll(() => events).toContainEqual({type: 'usage', rows: 1})
    off()
    await scanner.stop()
    reader.close()
  })

  it("ends the daemon's quiet start before it reads a history file, not before that", async () => {
    const env = {HOME: join(home.home, 'user-home')}
    const dbPath = join(home.home, 'logs.db')
    expect(beginQuietStart([], '')).toBe(true)
    try {
      // no history: a scan that reads nothing leaves TurboFan off
      const empty = (await startHistoryScanner({dbPath, log: () => {}, env}))!
      await empty.idle
      await empty.stop()
      expect(isQuietStart()).toBe(true)
      writeFixtureHistory(env.HOME)
      const scanner = (await startHistoryScanner({dbPath, log: () => {}, env}))!
      await scanner.idle
      await scanner.stop()
      expect(isQuietStart()).toBe(false)
    } finally {
      endQuietStart()
    }
  })

  it('takes its period from GWCTL_HISTORY_SCAN_MS; 0 turns it off', async () => {
    expect(scanPeriodMs({})).toBe(60_000)
    expect(scanPeriodMs({GWCTL_HISTORY_SCAN_MS: '250'})).toBe(250)
    expect(scanPeriodMs({GWCTL_HISTORY_SCAN_MS: 'x'})).toBe(60_000)
    expect(
      await startHistoryScanner({dbPath: join(home.home, 'logs.db'), log: () => {}, periodMs: 0}),
    ).toBeUndefined()
  })
})
