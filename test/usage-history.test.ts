import {join} from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {json, runCli, tempHome} from './helpers/cli.js'
import {EXPECTED, writeFixtureHistory} from './helpers/history.js'

describe('gwctl usage from agent history', () => {
  let home: {home: string; cleanup: () => void}
  beforeEach(() => {
    home = tempHome()
    writeFixtureHistory(join(home.home, 'user-home'))
  })
  afterEach(() => home.cleanup())
  const cli = (args: string[]) => runCli(args, {home: home.home})

  it('rescan --json reports what it read; usage --source history --pivot day matches the expected totals per tool', async () => {
    const rescan = await cli(['usage', 'rescan', '--json'])
    expect(rescan.exitCode).toBe(0)
    expect(json(rescan)).toMatchObject({files: 5, filesRead: 5, rows: 10, errors: []})
    expect(json(rescan).skipped).toMatchObject({
      'invalid-json': 1,
      'invalid-field': 1,
      replay: 1,
      duplicate: 2,
    })

    for (const [tool, days] of Object.entries(EXPECTED)) {
      const r = await cli(['usage', '--source', 'history', '--tool', tool, '--pivot', 'day', '--json'])
      expect(r.exitCode).toBe(0)
      const rows = json(r).rows as Array<Record<string, unknown>>
      expect(rows.map((x) => x.key)).toEqual(Object.keys(days))
      for (const row of rows) {
        expect(row).toMatchObject({...days[row.key as string], errors: 0, fallbacks: 0})
        // Every fixture model is in the price table.
        expect(row.costUSD).toBeGreaterThan(0)
        expect(row.unpricedModels).toEqual([])
      }
    }
  })

  it('folds days in --timezone, pivots by session and tool, and rejects an unknown zone', async () => {
    const ny = await cli([
      'usage',
      '--source',
      'history',
      '--tool',
      'claude-code',
      '--pivot',
      'day',
      '--timezone',
      'America/New_York',
      '--json',
    ])
    expect(json(ny).rows).toMatchObject([{key: '2025-08-20', requests: 2, totalTokens: 190}])

    const sessions = json(await cli(['usage', '--pivot', 'session', '--json']))
    expect(sessions.rows.map((r: {key: string}) => r.key).sort()).toEqual(
      ['sess-claude-1', 'sess-codex-1', 'sess-gemini-1', 'sess-gemini-old', null].sort(),
    )
    const tools = json(await cli(['usage', '--pivot', 'tool', '--json']))
    expect(
      Object.fromEntries(tools.rows.map((r: {key: string; requests: number}) => [r.key, r.requests])),
    ).toEqual({
      'claude-code': 2,
      codex: 3,
      'gemini-cli': 3,
    })
    expect(tools.totals.requests).toBe(8)

    const table = await cli(['usage', '--pivot', 'tool'])
    expect(table.stdout.split('\n')[0].split(/\s{2,}/)).toEqual([
      'TOOL',
      'REQUESTS',
      'ERRORS',
      'INPUT',
      'OUTPUT',
      'CACHE READ',
      'CACHE WRITE',
      'REASONING',
      'TOTAL',
      'COST',
    ])

    const bad = await cli(['usage', '--pivot', 'day', '--timezone', 'Mars/Olympus'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('not a time zone')
  })
})
