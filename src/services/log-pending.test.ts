/**
 * A command applies logs.pending only while it owns it: holding its lock and finding no live
 * daemon in the pid file. Otherwise the rows stay for their owner, and a notice says so.
 */
import {spawn} from 'node:child_process'
import {readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import Database from 'better-sqlite3'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {tempHome} from '../../test/helpers/cli.js'
import {takeNotices} from '../core/notices.js'
import type {LogEntry} from '../store/log-store.js'
import {LogWriter, rowValues} from '../store/log-store.js'
import {lockFile} from '../store/state-lock.js'
import {applyPendingLogs} from './log-pending.js'
import {logEntry} from '../../test/helpers/log-entry.js'

const T0 = Date.UTC(2026, 10, 20, 10, 30)

const entry = (i: number): LogEntry => logEntry({time: T0 + i, requestId: `r${i}`})

let home: {home: string; cleanup: () => void}
let db: string
let pending: string
const savedHome = process.env.GWCTL_HOME
const cleanups: Array<() => unknown> = []

beforeEach(async () => {
  home = tempHome()
  process.env.GWCTL_HOME = home.home
  db = join(home.home, 'logs.db')
  pending = join(home.home, 'logs.pending')
  // a gateway stopped while another process held logs.db: 4 rows wait
  const w = await LogWriter.open(db, {onWriteProblem: () => undefined})
  const other = new Database(db)
  other.exec('BEGIN IMMEDIATE')
  w.write(rowValues([0, 1, 2, 3].map(entry)))
  w.close()
  other.exec('ROLLBACK')
  other.close()
  takeNotices()
})
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
  process.env.GWCTL_HOME = savedHome
  home.cleanup()
})

const rows = (): number => {
  const d = new Database(db, {readonly: true})
  try {
    return d.prepare('SELECT count(*) FROM logs').pluck().get() as number
  } finally {
    d.close()
  }
}

describe('applyPendingLogs', () => {
  it('with no gateway running: applies the rows once and empties the file', async () => {
    expect(statSync(pending).size).toBeGreaterThan(0)
    expect(await applyPendingLogs()).toEqual({state: 'applied', applied: 4, skipped: 0, torn: 0})
    expect(rows()).toBe(4)
    expect(statSync(pending).size).toBe(0)
    expect(takeNotices()).toEqual([])
  })

  it('with a live daemon in the pid file: leaves the file to it, untouched', async () => {
    // a process whose command line is a daemon's, as runningDaemon() recognizes one
    const daemon = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'daemon/main.js'], {
      stdio: 'ignore',
    })
    cleanups.push(() => daemon.kill('SIGKILL'))
    await new Promise((resolve) => daemon.once('spawn', resolve))
    writeFileSync(join(home.home, 'gateway.pid'), `${daemon.pid}\n4399\n`, {mode: 0o600})
    const before = readFileSync(pending)
    expect(await applyPendingLogs()).toEqual({state: 'daemon'})
    expect(readFileSync(pending)).toEqual(before)
    expect(takeNotices()).toEqual([
      '4 gateway log rows wait in logs.pending and are not in this output: the running gateway keeps them until logs.db is free. It applies them within 50 ms of that; `gwctl doctor` shows the wait.',
    ])
    expect(rows()).toBe(0)
    // the daemon gone (kill -9 leaves its pid file): the next command applies them
    daemon.kill('SIGKILL')
    await new Promise((resolve) => daemon.once('exit', resolve))
    expect(await applyPendingLogs()).toMatchObject({state: 'applied', applied: 4})
    expect(rows()).toBe(4)
  })

  it('while another process holds the side file’s lock (a daemon starting, another command): waits, then leaves the rows and a notice', async () => {
    const release = await lockFile(pending, {waitMs: 1000})
    cleanups.push(() => release().catch(() => undefined))
    const outcome = await applyPendingLogs({lockWaitMs: 300})
    expect(outcome).toMatchObject({state: 'left', rows: 4})
    expect(rows()).toBe(0)
    const [notice] = takeNotices()
    expect(notice).toMatch(
      /^4 gateway log rows wait in logs\.pending and are not in this output: another gwctl process/,
    )
    await release()
    expect(await applyPendingLogs()).toMatchObject({state: 'applied', applied: 4})
  })

  it('while logs.db stays locked by another process: waits busyMs, leaves the rows, the notice names the cause and the fix', async () => {
    const other = new Database(db)
    other.exec('BEGIN IMMEDIATE')
    cleanups.push(() => other.close())
    const outcome = await applyPendingLogs({busyMs: 200})
    expect(outcome).toMatchObject({state: 'left', rows: 4})
    expect(takeNotices()).toEqual([
      `4 gateway log rows wait in logs.pending and are not in this output: ${db} is locked by another process (a sqlite3 shell or another tool in a write transaction). The next \`gwctl logs\` or \`gwctl usage\` applies them once that is fixed (so does \`gwctl gateway start\`); \`gwctl doctor\` shows the wait.`,
    ])
    other.exec('ROLLBACK')
    expect(await applyPendingLogs()).toMatchObject({state: 'applied', applied: 4})
    expect(rows()).toBe(4)
  })

  it('an empty or missing file: nothing to do', async () => {
    expect(await applyPendingLogs()).toMatchObject({state: 'applied', applied: 4})
    expect(await applyPendingLogs()).toBeUndefined()
    writeFileSync(pending, '')
    expect(await applyPendingLogs()).toBeUndefined()
  })
})
