/**
 * kill -9 (or `gateway stop`) while another process holds logs.db's write lock (what `gwctl usage
 * rescan`'s swap does): every answered request still has exactly one row after the next start
 * (issue 29 item 7). The batches that found the lock went to logs.pending; the next start replays
 * them once.
 */
import {existsSync, readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import Database from 'better-sqlite3'
import {afterEach, describe, expect, it} from 'vitest'

import {runCli} from './helpers/cli.js'
import {alive, daemonPid, holdWriteLock, startSimGateway} from './helpers/gateway.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

describe('log rows through kill -9 or a stop while logs.db is locked', {timeout: 120_000}, () => {
  it.each([
    ['kill -9', 'kill'],
    ['`gateway stop`', 'stop'],
  ] as const)('%s: every answered request has exactly one row after the next start', async (_, end) => {
    const {home, port, env, base, keyValue} = await startSimGateway(cleanups, 'spill')
    const chat = async (i: number): Promise<boolean> => {
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: {authorization: `Bearer ${keyValue}`, 'content-type': 'application/json'},
        body: JSON.stringify({
          model: 'sim-mini',
          stream: i % 2 === 0,
          stream_options: i % 2 === 0 ? {include_usage: true} : undefined,
          messages: [{role: 'user', content: `hello ${i}`}],
        }),
      })
      const text = await res.text()
      return res.status === 200 && text.length > 0
    }

    // rows committed before the lock
    const before = await Promise.all(Array.from({length: 10}, (_, i) => chat(i)))
    expect(before.every(Boolean)).toBe(true)
    await new Promise((r) => setTimeout(r, 100))

    const dbPath = join(home, 'logs.db')
    const lock = await holdWriteLock(dbPath)
    cleanups.push(lock.kill)
    const N = 60
    const answered = await Promise.all(Array.from({length: N}, (_, i) => chat(100 + i)))
    expect(answered.every(Boolean)).toBe(true)
    // the batches go to the side file within the 10 ms window plus the 5 ms busy wait (given
    // up to 3 s here: a loaded test machine may run the writer thread late)
    const pending = join(home, 'logs.pending')
    const lines = (): number =>
      existsSync(pending) ? readFileSync(pending, 'utf8').split('\n').length - 1 : 0
    for (let i = 0; i < 150 && lines() < N; i++) await new Promise((r) => setTimeout(r, 20))
    expect(lines()).toBe(N)
    expect(statSync(pending).mode & 0o777).toBe(0o600)

    const pid = daemonPid(home)!
    if (end === 'kill') process.kill(pid, 'SIGKILL')
    else {
      // the stop must not wait for the lock: the last batches go to the side file too
      const stopped = await runCli(['gateway', 'stop'], {home: home, env})
      expect(stopped.exitCode, stopped.stderr).toBe(0)
    }
    for (let i = 0; i < 250 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20))
    expect(alive(pid)).toBe(false)
    await lock.release()

    const again = await runCli(['gateway', 'start', '--sim', '--port', String(port)], {home: home, env})
    expect(again.exitCode, again.stderr).toBe(0)
    const logs = await runCli(['logs', '--json', '--limit', '500'], {home: home, env})
    expect(logs.exitCode, logs.stderr).toBe(0)
    const stop = await runCli(['gateway', 'stop'], {home: home, env})
    expect(stop.exitCode, stop.stderr).toBe(0)

    const db = new Database(dbPath, {readonly: true})
    cleanups.push(() => {
      db.close()
    })
    const rows = db
      .prepare(
        "SELECT COUNT(*) AS n, COUNT(DISTINCT request_id) AS ids FROM logs WHERE entrance = 'chat' AND status = 200",
      )
      .get() as {n: number; ids: number}
    expect(rows).toEqual({n: 10 + N, ids: 10 + N})
    const hourly = db
      .prepare("SELECT SUM(requests) FROM usage_hourly WHERE status_class = '2xx'")
      .pluck()
      .get()
    expect(hourly).toBe(10 + N)
    expect(statSync(pending).size).toBe(0)
  })
})
