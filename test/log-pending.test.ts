/**
 * A gateway stopped while another process held logs.db's write lock leaves the rows of its last
 * requests in logs.pending. With the gateway still stopped: `gwctl doctor` reports the wait (FAIL
 * while logs.db stays locked, pass with what applies them once it is free), and every read form
 * (`logs`, `usage` and its reports, the statusline) shows each answered request exactly once:
 * the first of them applies the file under its lock, the rest and the next start find it empty.
 */
import {copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import Database from 'better-sqlite3'
import {afterEach, describe, expect, it} from 'vitest'

import type {LogEntry} from '../src/store/log-store.js'
import {LogWriter, rowValues} from '../src/store/log-store.js'
import type {CliResult} from './helpers/cli.js'
import {freePort, json, runCli, spawnCli, tempHome} from './helpers/cli.js'
import {alive, daemonPid, holdWriteLock, issueKeyOverApi, killDaemon} from './helpers/gateway.js'
import {canMount, readOnly} from './helpers/mount.js'
import {logEntry} from './helpers/log-entry.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const BEFORE = 10
const LOCKED = 60
const ALL = BEFORE + LOCKED

interface DoctorJson {
  ok: boolean
  checks: Array<{id: string; ok: boolean; detail: string; hint?: string}>
}

/** The rows and roll-up of the database at `path`, read by another connection. */
function stored(path: string): {rows: number; ids: number; hourly: number} {
  const db = new Database(path, {readonly: true})
  try {
    const {rows, ids} = db
      .prepare("SELECT COUNT(*) AS rows, COUNT(DISTINCT request_id) AS ids FROM logs WHERE entrance = 'chat'")
      .get() as {rows: number; ids: number}
    const hourly = db.prepare('SELECT COALESCE(SUM(requests), 0) FROM usage_hourly').pluck().get() as number
    return {rows, ids, hourly}
  } finally {
    db.close()
  }
}

/** A copy of the stopped gateway's files in a fresh home (no process has them open). */
function copyHome(from: string): string {
  const t = tempHome()
  cleanups.push(t.cleanup)
  for (const name of ['state.json', 'logs.db', 'logs.db-wal', 'logs.pending']) {
    if (existsSync(join(from, name))) copyFileSync(join(from, name), join(t.home, name))
  }
  mkdirSync(join(t.home, 'user-home'), {recursive: true})
  return t.home
}

/** Each read form, as a user runs it, and how it counts the requests in its output. */
const FORMS: Array<[string, string[], (r: CliResult) => number]> = [
  [
    'logs',
    ['logs', '--json', '--limit', '500'],
    (r) => new Set(json<{logs: Array<{requestId: string}>}>(r).logs.map((l) => l.requestId)).size,
  ],
  ['usage', ['usage', '--json'], (r) => json<{totals: {requests: number}}>(r).totals.requests],
  ['usage daily', ['usage', 'daily', '--json'], (r) => json<{totals: {requests: number}}>(r).totals.requests],
  [
    'usage monthly',
    ['usage', 'monthly', '--json'],
    (r) => json<{totals: {requests: number}}>(r).totals.requests,
  ],
  [
    'usage session',
    ['usage', 'session', '--json'],
    (r) => json<{totals: {requests: number}}>(r).totals.requests,
  ],
  [
    'usage blocks',
    ['usage', 'blocks', '--json'],
    (r) => json<{blocks: Array<{requests: number}>}>(r).blocks.reduce((n, b) => n + b.requests, 0),
  ],
]

describe('rows in logs.pending while the gateway is stopped', {timeout: 180_000}, () => {
  it('doctor reports the wait; every read form shows each request once; so does the next start', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup, () => killDaemon(t.home))
    const home = t.home
    const port = await freePort()
    const env = {GWCTL_GATEWAY_PORT: String(port)}
    const cli = (args: string[], input?: string) => runCli(args, {home, env, input})
    const start = await cli(['gateway', 'start', '--sim', '--port', String(port)])
    expect(start.exitCode, start.stderr).toBe(0)
    const base = `http://127.0.0.1:${port}`
    const keyValue = await issueKeyOverApi(base, 'pending')
    const chat = async (i: number): Promise<boolean> => {
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: {authorization: `Bearer ${keyValue}`, 'content-type': 'application/json'},
        body: JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content: `hello ${i}`}]}),
      })
      return res.status === 200 && (await res.text()).length > 0
    }
    expect((await Promise.all(Array.from({length: BEFORE}, (_, i) => chat(i)))).every(Boolean)).toBe(true)
    await new Promise((r) => setTimeout(r, 100))

    // an outside writer holds logs.db; the gateway answers, keeps the rows in logs.pending, and stops
    const dbPath = join(home, 'logs.db')
    const pending = join(home, 'logs.pending')
    const lock = await holdWriteLock(dbPath)
    cleanups.push(lock.kill)
    expect((await Promise.all(Array.from({length: LOCKED}, (_, i) => chat(100 + i)))).every(Boolean)).toBe(
      true,
    )
    const lines = (): number =>
      existsSync(pending) ? readFileSync(pending, 'utf8').split('\n').length - 1 : 0
    for (let i = 0; i < 150 && lines() < LOCKED; i++) await new Promise((r) => setTimeout(r, 20))
    expect(lines()).toBe(LOCKED)
    const pid = daemonPid(home)!
    const stopped = await cli(['gateway', 'stop'])
    expect(stopped.exitCode, stopped.stderr).toBe(0)
    for (let i = 0; i < 250 && alive(pid); i++) await new Promise((r) => setTimeout(r, 20))
    expect(alive(pid)).toBe(false)
    expect(lines()).toBe(LOCKED)

    // still locked: doctor fails on it (exit 3) and says why and what to do
    const locked = await cli(['doctor'])
    expect(locked.exitCode).toBe(3)
    expect(locked.stdout).toMatch(
      new RegExp(
        `^FAIL  Every request the gateway logged is in logs\\.db \\(none wait in logs\\.pending\\): ${LOCKED} rows of answered requests wait in ${pending.replace(/[.]/g, '\\.')}, the oldest from \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z \\(\\d+ s ago\\): ${dbPath.replace(/[.]/g, '\\.')} is locked by another process`,
        'm',
      ),
    )
    expect(locked.stdout).toMatch(/^ {6}fix: End the process that holds .*logs\.db in a write transaction/m)
    // this check alone failed, whatever the number of checks
    expect(locked.stdout).toMatch(/^1 of \d+ checks failed\.$/m)
    expect(locked.stdout.match(/^FAIL /gm)).toHaveLength(1)
    // a read meanwhile shows what logs.db has, and says on stderr what it cannot show yet
    const partial = await cli(['logs', '--json', '--limit', '500'])
    expect(partial.exitCode, partial.stderr).toBe(0)
    expect(json<{logs: unknown[]}>(partial).logs).toHaveLength(BEFORE)
    expect(partial.stderr).toContain(
      `warning: ${LOCKED} gateway log rows wait in logs.pending and are not in this output: ${dbPath} is locked by another process`,
    )
    expect(lines()).toBe(LOCKED)
    await lock.release()

    // free again, gateway still stopped: doctor passes and says what applies them
    const waiting = await cli(['doctor', '--json'])
    expect(waiting.exitCode, waiting.stdout).toBe(0)
    const check = json<DoctorJson>(waiting).checks.find((c) => c.id === 'log-pending')!
    expect(check.ok).toBe(true)
    expect(check.detail).toMatch(
      new RegExp(
        `^${LOCKED} rows of answered requests wait in .*logs\\.pending, the oldest from .*; the gateway is stopped: the next \`gwctl logs\` or \`gwctl usage\` applies them to logs\\.db \\(so does \`gwctl gateway start\`\\)$`,
      ),
    )
    expect(lines()).toBe(LOCKED) // doctor only looks

    // every read form, each the first command on a copy of this home, shows every request once
    for (const [name, args, count] of FORMS) {
      const copy = copyHome(home)
      const r = await runCli(args, {home: copy, env})
      expect(r.exitCode, `${name}: ${r.stderr}`).toBe(0)
      expect(r.stderr, name).not.toContain('warning')
      expect(count(r), name).toBe(ALL)
      expect(stored(join(copy, 'logs.db')), name).toEqual({rows: ALL, ids: ALL, hourly: ALL})
      expect(statSync(join(copy, 'logs.pending')).size, name).toBe(0)
      // and again: nothing applied twice
      expect(count(await runCli(args, {home: copy, env})), name).toBe(ALL)
      rmSync(copy, {recursive: true, force: true})
    }
    // the statusline's stopped path (a line every few seconds) applies them too
    const copy = copyHome(home)
    const line = await runCli(['statusline'], {
      home: copy,
      env,
      input: JSON.stringify({session_id: 's', model: {id: 'sim-mini', display_name: 'Sim'}}),
    })
    expect(line.exitCode, line.stderr).toBe(0)
    expect(line.stdout).toMatch(/^Sim · /)
    expect(stored(join(copy, 'logs.db'))).toEqual({rows: ALL, ids: ALL, hourly: ALL})

    // here: logs, then usage, then doctor, then the next start
    const logs = await cli(['logs', '--json', '--limit', '500'])
    expect(logs.exitCode, logs.stderr).toBe(0)
    expect(new Set(json<{logs: Array<{requestId: string}>}>(logs).logs.map((l) => l.requestId)).size).toBe(
      ALL,
    )
    expect(json<{logs: unknown[]}>(logs).logs).toHaveLength(ALL)
    expect(json<{totals: {requests: number}}>(await cli(['usage', '--json'])).totals.requests).toBe(ALL)
    const done = await cli(['doctor'])
    expect(done.exitCode).toBe(0)
    expect(done.stdout).toMatch(
      /^pass {2}Every request the gateway logged is in logs\.db \(none wait in logs\.pending\): no rows wait$/m,
    )

    const again = await cli(['gateway', 'start', '--sim', '--port', String(port)])
    expect(again.exitCode, again.stderr).toBe(0)
    const viaGateway = await cli(['logs', '--json', '--limit', '500'])
    expect(json<{logs: unknown[]}>(viaGateway).logs).toHaveLength(ALL)
    expect(json<{totals: {requests: number}}>(await cli(['usage', '--json'])).totals.requests).toBe(ALL)
    const stop = await cli(['gateway', 'stop'])
    expect(stop.exitCode, stop.stderr).toBe(0)
    expect(stored(dbPath)).toEqual({rows: ALL, ids: ALL, hourly: ALL})
    expect(statSync(pending).size).toBe(0)
  })

  it('a gateway starting while a command holds logs.pending.lock waits for it, then starts', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup, () => killDaemon(t.home))
    const port = await freePort()
    const env = {GWCTL_GATEWAY_PORT: String(port)}
    // the lock as a live command holds it (proper-lockfile's folder and the owner's pid: this test)
    mkdirSync(join(t.home, 'logs.pending.lock'), {recursive: true})
    writeFileSync(join(t.home, 'logs.pending.lock.owner'), `${process.pid}\n`)
    const started = Date.now()
    const starting = runCli(['gateway', 'start', '--sim', '--port', String(port)], {home: t.home, env})
    await new Promise((r) => setTimeout(r, 1500))
    // the daemon has claimed its pid file but not opened its log store: logs.db does not exist yet
    expect(existsSync(join(t.home, 'logs.db'))).toBe(false)
    rmSync(join(t.home, 'logs.pending.lock'), {recursive: true, force: true})
    rmSync(join(t.home, 'logs.pending.lock.owner'), {force: true})
    const r = await starting
    expect(r.exitCode, r.stderr).toBe(0)
    expect(Date.now() - started).toBeGreaterThanOrEqual(1500)
    expect(existsSync(join(t.home, 'logs.db'))).toBe(true)
    expect(existsSync(join(t.home, 'logs.pending.lock'))).toBe(false)
    const stop = await runCli(['gateway', 'stop'], {home: t.home, env})
    expect(stop.exitCode, stop.stderr).toBe(0)
  })

  it('kill -9 of a command in the middle of its apply: each row is applied once or still waits, and the next command applies the rest once', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const N = 20_000
    // a side file of N rows, written through the log store while another connection holds the lock
    const source = join(t.home, 'source')
    mkdirSync(source)
    const writer = await LogWriter.open(join(source, 'logs.db'), {onWriteProblem: () => undefined})
    const other = new Database(join(source, 'logs.db'))
    other.exec('BEGIN IMMEDIATE')
    const row = (i: number): LogEntry =>
      logEntry({
        time: Date.now() - 60_000 + (i % 1000),
        agentId: 'agt_x',
        keyPrefix: 'gw-xxxx…',
        provider: 'sim-chat',
        inputTokens: 3,
        outputTokens: 7,
        requestId: `req_${i}`,
      })
    for (let i = 0; i < N; i += 500) writer.write(rowValues(Array.from({length: 500}, (_, j) => row(i + j))))
    writer.close() // its replay finds the lock: every row stays in the side file
    other.exec('ROLLBACK')
    other.close()
    expect(LogWriter.pending(join(source, 'logs.db')).rows).toBe(N)

    const copy = (name: string): string => {
      const home = join(t.home, name)
      mkdirSync(join(home, 'user-home'), {recursive: true})
      for (const file of ['logs.db', 'logs.db-wal', 'logs.pending'])
        if (existsSync(join(source, file))) copyFileSync(join(source, file), join(home, file))
      return home
    }
    // when the apply runs within the command here (this machine's speed varies): the kills are
    // spread from the end of a command with nothing to apply to the end of one that applies N rows
    const time = async (home: string): Promise<number> => {
      const from = Date.now()
      expect((await runCli(['logs', '--json', '--limit', '1'], {home})).exitCode).toBe(0)
      return Date.now() - from
    }
    const bare = copy('bare')
    writeFileSync(pendingOf(bare), '')
    const without = await time(bare)
    const whole = await time(copy('whole'))
    const at = (round: number): number => Math.round(without * 0.8 + ((whole - without * 0.8) * round) / 7)

    const outcomes: string[] = []
    for (let round = 0; round < 8; round++) {
      const home = copy(`round-${round}`)
      const child = spawnCli(['logs', '--json', '--limit', '1'], {home})
      await new Promise((r) => setTimeout(r, at(round)))
      child.kill('SIGKILL')
      await child
      const db = join(home, 'logs.db')
      const s = stored(db)
      const waiting = LogWriter.pending(db).rows
      // applied once or still waiting: never both, never neither
      expect(s.rows + waiting, `round ${round}`).toBe(N)
      expect(s.ids, `round ${round}`).toBe(s.rows)
      expect(s.hourly, `round ${round}`).toBe(s.rows)
      const locked = existsSync(join(home, 'logs.pending.lock'))
      outcomes.push(
        s.rows === 0
          ? locked
            ? 'inside the apply'
            : 'before the apply'
          : statSync(pendingOf(home)).size > 0
            ? 'between commit and truncation'
            : 'done',
      )
      // the next command (its lock left by a killed process is broken at once) applies the rest once
      const next = await runCli(['usage', '--json'], {home})
      expect(next.exitCode, next.stderr).toBe(0)
      expect(json<{totals: {requests: number}}>(next).totals.requests, `round ${round}`).toBe(N)
      expect(stored(db), `round ${round}`).toEqual({rows: N, ids: N, hourly: N})
      expect(statSync(pendingOf(home)).size).toBe(0)
    }
    // where each kill landed (before the apply, inside it with the lock held and nothing committed,
    // or after it) depends on this machine's timing: printed, not asserted. A kill left between the
    // commit and the truncation is pinned by src/store/log-spill.test.ts. A lock a killed command
    // left behind is broken at once by the next one that needs it (its owner's pid is gone).
    console.log(
      `kill -9 during the apply (a command: ${without} ms, applying ${N} rows: ${whole} ms): ${outcomes.join(', ')}`,
    )
  })
})

const pendingOf = (home: string): string => join(home, 'logs.pending')

describe('a gateway that starts while a command applies logs.pending', {timeout: 180_000}, () => {
  it('waits for the apply, then logs its own requests: every waiting row and every answered request once', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup, () => killDaemon(t.home))
    const home = t.home
    const port = await freePort()
    const env = {GWCTL_GATEWAY_PORT: String(port)}
    const cli = (args: string[]) => runCli(args, {home, env})
    // a home with a key, then N rows waiting in logs.pending (a gateway stopped under a lock)
    expect((await cli(['gateway', 'start', '--sim', '--port', String(port)])).exitCode).toBe(0)
    const base = `http://127.0.0.1:${port}`
    const keyValue = await issueKeyOverApi(base, 'race')
    expect((await cli(['gateway', 'stop'])).exitCode).toBe(0)
    const dbPath = join(home, 'logs.db')
    const N = 200_000
    const writer = await LogWriter.open(dbPath, {onWriteProblem: () => undefined})
    const other = new Database(dbPath)
    other.exec('BEGIN IMMEDIATE')
    for (let i = 0; i < N; i += 1000)
      writer.write(rowValues(Array.from({length: 1000}, (_, j) => entryOf(`waiting-${i + j}`))))
    writer.close()
    other.exec('ROLLBACK')
    other.close()
    expect(LogWriter.pending(dbPath).rows).toBe(N)

    // The command and the gateway start together; the gateway is sent requests as soon as it
    // answers. Without the daemon's wait for logs.pending.lock, its start read the 200 000 rows the
    // command was applying as its own waiting rows and, past the side file's bound, dropped the
    // rows of its first requests (19 to 40 of 40 lost, 4 runs of 4 on a 2-core machine).
    const reading = spawnCli(['logs', '--json', '--limit', '1'], {home, env})
    const starting = spawnCli(['gateway', 'start', '--sim', '--port', String(port)], {home, env})
    let answered = 0
    const sent: Array<Promise<void>> = []
    for (let i = 0; i < 600 && sent.length < 40; i++) {
      const up = await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      )
      if (up)
        sent.push(
          fetch(`${base}/v1/chat/completions`, {
            method: 'POST',
            headers: {authorization: `Bearer ${keyValue}`, 'content-type': 'application/json'},
            body: JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content: `race ${i}`}]}),
          }).then(async (r) => {
            if (r.status === 200 && (await r.text()).length > 0) answered++
          }),
        )
      await new Promise((r) => setTimeout(r, 25))
    }
    await Promise.all(sent)
    const [read, start] = await Promise.all([reading, starting])
    expect(read.exitCode, String(read.stderr)).toBe(0)
    expect(start.exitCode, String(start.stderr)).toBe(0)
    expect(answered).toBe(40)
    expect((await cli(['gateway', 'stop'])).exitCode).toBe(0)

    const db = new Database(dbPath, {readonly: true})
    cleanups.push(() => {
      db.close()
    })
    const count = (where: string) =>
      db
        .prepare(`SELECT COUNT(*) AS n, COUNT(DISTINCT request_id) AS ids FROM logs WHERE ${where}`)
        .get() as {n: number; ids: number}
    expect(count("request_id LIKE 'waiting-%'")).toEqual({n: N, ids: N})
    expect(count("entrance = 'chat' AND request_id NOT LIKE 'waiting-%' AND status = 200")).toEqual({
      n: 40,
      ids: 40,
    })
    expect(db.prepare('SELECT SUM(requests) FROM usage_hourly').pluck().get()).toBe(N + 40)
    expect(statSync(pendingOf(home)).size).toBe(0)
  })
})

describe.skipIf(!canMount())('rows in logs.pending in a read-only home (a real bind mount)', () => {
  it('logs exits 3 as any read there does, and says how many rows wait and why; doctor fails; writable again, they show once', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const dbPath = join(t.home, 'logs.db')
    const writer = await LogWriter.open(dbPath, {onWriteProblem: () => undefined})
    writer.write(rowValues([entryOf('committed')]))
    const other = new Database(dbPath)
    other.exec('BEGIN IMMEDIATE')
    writer.write(rowValues([entryOf('waiting-1'), entryOf('waiting-2')]))
    writer.close()
    other.exec('ROLLBACK')
    other.close()
    mkdirSync(join(t.home, 'user-home'))
    const undo = readOnly(t.home)
    cleanups.push(undo)

    const logs = await runCli(['logs', '--json'], {home: t.home})
    expect(logs.exitCode).toBe(3)
    expect(logs.stderr).toContain(
      `warning: 2 gateway log rows wait in logs.pending and are not in this output: ${dbPath} cannot be written (EROFS`,
    )
    const doctor = await runCli(['doctor'], {home: t.home})
    expect(doctor.exitCode).toBe(3)
    expect(doctor.stdout).toMatch(
      /^FAIL {2}Every request the gateway logged is in logs\.db \(none wait in logs\.pending\): 2 rows of answered requests wait in .*: .*logs\.db cannot be written/m,
    )
    expect(doctor.stdout).toMatch(/^ {6}fix: Make .*logs\.db writable again/m)
    expect(statSync(pendingOf(t.home)).size).toBeGreaterThan(0)

    undo()
    cleanups.pop()
    const again = await runCli(['logs', '--json'], {home: t.home})
    expect(again.exitCode, again.stderr).toBe(0)
    expect(again.stderr).toBe('')
    expect(
      json<{logs: Array<{requestId: string}>}>(again)
        .logs.map((l) => l.requestId)
        .sort(),
    ).toEqual(['committed', 'waiting-1', 'waiting-2'])
    expect(statSync(pendingOf(t.home)).size).toBe(0)
  })
})

function entryOf(requestId: string): LogEntry {
  return logEntry({
    time: Date.now(),
    agentId: null,
    keyPrefix: null,
    policyId: null,
    provider: 'sim-chat',
    inputTokens: 1,
    outputTokens: 1,
    requestId,
  })
}
