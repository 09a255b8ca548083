/**
 * An outside SQLite reader of logs.db (the `sqlite3` shell, Python, Datasette) while the daemon
 * writes, rescans and is killed: no row of an answered request is lost and the database stays
 * whole. The daemon once opened and closed a descriptor of logs.db outside SQLite, which on Linux
 * dropped SQLite's POSIX locks: the outside reader then thought itself the last connection and
 * deleted `-wal` and `-shm` under the daemon, and after a rescan the database was malformed.
 *
 * The reader is Debian's `sqlite3` when it is installed (CI installs it), else a second Node
 * process with better-sqlite3: either is another process with its own locks.
 */
import {execFile, spawnSync} from 'node:child_process'
import {readdirSync, readlinkSync} from 'node:fs'
import {join} from 'node:path'
import Database from 'better-sqlite3'
import {afterEach, describe, expect, it} from 'vitest'

import {runCli} from './helpers/cli.js'
import {alive, daemonPid, startSimGateway} from './helpers/gateway.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const hasSqlite3 = spawnSync('sqlite3', ['-version']).status === 0

/** One outside read of the log table, in its own process, as a user would run it. */
function outsideRead(db: string): Promise<void> {
  const [cmd, args] = hasSqlite3
    ? ['sqlite3', [db, 'select count(*) from logs']]
    : [
        process.execPath,
        [
          '-e',
          `const D=require('better-sqlite3');const d=new D(process.argv[1]);d.prepare('select count(*) from logs').get();d.close()`,
          db,
        ],
      ]
  return new Promise((resolve) => {
    // a busy or locked answer is fine for a reader: only what it does to the daemon matters
    execFile(cmd as string, args as string[], {timeout: 10_000}, () => resolve())
  })
}

/** The daemon's open descriptors of logs.db files that were deleted under it. */
function deletedDbFiles(pid: number): string[] {
  const out: string[] = []
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`)
    } catch {
      continue
    }
    if (target.includes('logs.db') && target.endsWith('(deleted)')) out.push(target)
  }
  return out
}

describe('logs.db with an outside reader', {timeout: 180_000}, () => {
  it('loses no answered row and stays whole through reads, a rescan and kill -9', async () => {
    const {home, port, env, base, keyValue} = await startSimGateway(cleanups, 'reader')
    const dbPath = join(home, 'logs.db')

    let reading = true
    const reader = (async () => {
      while (reading) await outsideRead(dbPath)
    })()
    cleanups.push(async () => {
      reading = false
      await reader
    })

    let answered = 0
    const send = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${base}/v1/chat/completions`, {
          method: 'POST',
          headers: {authorization: `Bearer ${keyValue}`, 'content-type': 'application/json'},
          body: JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content: `hello ${answered}`}]}),
        })
        await res.text()
        if (res.status === 200) answered++
        // let the outside reader open and close between requests
        await outsideRead(dbPath)
      }
    }

    await send(10)
    const rescan = await runCli(['usage', 'rescan', '--json'], {home: home, env})
    expect(rescan.exitCode, rescan.stderr + rescan.stdout).toBe(0)
    await send(10)
    const pid = daemonPid(home)!
    expect(deletedDbFiles(pid)).toEqual([])

    reading = false
    await reader
    // the log queue writes within milliseconds of an answer; then the daemon dies without warning
    await new Promise((r) => setTimeout(r, 300))
    process.kill(pid, 'SIGKILL')
    for (let i = 0; i < 250 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20))
    expect(alive(pid)).toBe(false)

    expect(answered).toBe(20)
    const db = new Database(dbPath)
    try {
      expect(db.pragma('integrity_check', {simple: true})).toBe('ok')
      const {n} = db
        .prepare("SELECT count(*) AS n FROM logs WHERE entrance = 'chat' AND status = 200")
        .get() as {
        n: number
      }
      expect(n).toBe(answered)
    } finally {
      db.close()
    }

    const again = await runCli(['gateway', 'start', '--sim', '--port', String(port)], {home: home, env})
    expect(again.exitCode, again.stderr).toBe(0)
  })
})
