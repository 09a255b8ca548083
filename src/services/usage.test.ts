import {existsSync, mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {createServer, type Server} from 'node:http'
import {dirname, join} from 'node:path'
import Database from 'better-sqlite3'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'

import {freePort, tempHome} from '../../test/helpers/cli.js'
import {historyHasRows, usageReport} from './usage.js'

describe('usage read from the log database beside a running gateway', () => {
  let home: string
  let cleanup: () => void
  let health: Server
  beforeEach(async () => {
    ;({home, cleanup} = tempHome())
    const port = await freePort()
    vi.stubEnv('GWCTL_HOME', home)
    vi.stubEnv('GWCTL_GATEWAY_PORT', String(port))
    // a gateway that answers: no scan before reading, the read-only connection is used
    health = createServer((_req, res) => res.end('{"status":"ok"}'))
    await new Promise<void>((resolve) => health.listen(port, '127.0.0.1', () => resolve()))
  })
  afterEach(async () => {
    await new Promise<void>((resolve) => health.close(() => resolve()))
    vi.unstubAllEnvs()
    cleanup()
  })

  it('reads a database of an earlier history layout through the history store, which migrates it', async () => {
    const path = join(home, 'logs.db')
    const old = new Database(path)
    old.exec(`CREATE TABLE history (key TEXT PRIMARY KEY, tool TEXT NOT NULL, path TEXT NOT NULL, ts INTEGER NOT NULL,
      total_tokens INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
      INSERT INTO history VALUES ('x:old', 'codex', '/gone.jsonl', 1, 5);`)
    old.close()
    // the old table has rows, but not the columns usage reads: the store migrates, then reads
    const report = await usageReport({source: 'history', pivot: 'tool'})
    expect(report).toMatchObject({rows: [], scan: undefined, totals: {requests: 0, totalTokens: 0}})
    const db = new Database(path, {readonly: true})
    expect(db.prepare("SELECT type FROM sqlite_master WHERE name = 'history'").get()).toEqual({type: 'view'})
    db.close()
    expect(await historyHasRows()).toBe(false)
  })

  it('says there is no history in a log database without history tables, and none without a database', async () => {
    expect(await historyHasRows()).toBe(false)
    const db = new Database(join(home, 'logs.db'))
    db.exec('CREATE TABLE logs (id INTEGER PRIMARY KEY)')
    db.close()
    expect(await historyHasRows()).toBe(false)
    expect((await usageReport({source: 'history'})).rows).toEqual([])
  })
})

describe('whether agent history is recorded, scanned first when no daemon runs', () => {
  let home: string
  let cleanup: () => void
  beforeEach(async () => {
    ;({home, cleanup} = tempHome())
    vi.stubEnv('GWCTL_HOME', home)
    vi.stubEnv('GWCTL_GATEWAY_PORT', String(await freePort())) // nothing listens there
    // the agents' homes inside the temp folder, whatever this machine's environment names
    vi.stubEnv('HOME', join(home, 'user-home'))
    vi.stubEnv('XDG_CONFIG_HOME', join(home, 'user-home', '.config'))
    for (const k of ['CLAUDE_CONFIG_DIR', 'CODEX_HOME', 'GEMINI_CLI_HOME', 'GEMINI_DATA_DIR'])
      vi.stubEnv(k, undefined)
  })
  afterEach(() => {
    vi.unstubAllEnvs()
    cleanup()
  })

  it('scans a history folder, keeps counting its rows when the folder is gone, and opens nothing without either', async () => {
    const db = join(home, 'logs.db')
    // no agent history folder and no database: nothing is opened, so no database is created
    expect(await historyHasRows({scanFirst: true})).toBe(false)
    expect(existsSync(db)).toBe(false)

    const session = join(home, 'user-home', '.claude', 'projects', '-w-p', 's1.jsonl')
    mkdirSync(dirname(session), {recursive: true})
    const line = {
      type: 'assistant',
      sessionId: 's1',
      cwd: '/w/p',
      requestId: 'req_1',
      timestamp: '2025-09-01T10:00:00.000Z',
      message: {id: 'msg_1', model: 'claude-sonnet-4-5', usage: {input_tokens: 5, output_tokens: 7}},
    }
    writeFileSync(session, JSON.stringify(line) + '\n')
    expect(await historyHasRows({scanFirst: true})).toBe(true)

    // the rows a scan recorded stay when the agent's folder goes (an incremental scan never drops them)
    rmSync(join(home, 'user-home', '.claude'), {recursive: true})
    expect(await historyHasRows({scanFirst: true})).toBe(true)
    expect((await usageReport({source: 'history'})).totals).toMatchObject({requests: 1, outputTokens: 7})
  })
})
