/**
 * Issue 29, items 4, 5 and 7 (part): a damaged `logs.db`, a read-only or full `GWCTL_HOME`, and
 * commands that must not create `settings.json`. The read-only and full homes are real: a
 * read-only bind mount and a small tmpfs, where this machine lets root mount them (skipped
 * otherwise; the error mapping itself is unit-tested in `src/core/errors.test.ts`).
 */
import {execFileSync} from 'node:child_process'
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs'
import {randomBytes} from 'node:crypto'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {LogStore} from '../src/store/log-store.js'
import type {LogEntry} from '../src/store/log-store.js'
import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {alive, daemonPid, keyIssueArgs, killDaemon} from './helpers/gateway.js'
import {canMount, readOnly, tryMount} from './helpers/mount.js'
import {logEntry} from './helpers/log-entry.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function isolatedHome(home?: string) {
  const t = home ? {home, cleanup: () => undefined} : tempHome()
  const port = await freePort()
  const env = {GWCTL_GATEWAY_PORT: String(port)}
  const cli = (args: string[]) => runCli(args, {home: t.home, env})
  cleanups.push(t.cleanup, () => killDaemon(t.home))
  return {home: t.home, port, env, cli, base: `http://127.0.0.1:${port}`}
}

function entry(i: number): LogEntry {
  return logEntry({
    time: Date.now() - 3_600_000 + i,
    agentId: `agt_${i % 7}`,
    keyPrefix: 'gw-abc…',
    outputTokens: 20,
    latencyMs: 5,
    ttfbMs: 2,
    project: `project ${i} ${'x'.repeat(200)}`,
    requestId: `req_${i}`,
  })
}

/** A log database of `rows` rows, closed (checkpointed) so the whole of it is in the main file. */
async function logDbWithRows(path: string, rows: number): Promise<void> {
  const store = await LogStore.open(path)
  for (let i = 0; i < rows; i++) store.append(entry(i))
  store.flush()
  store.close()
}

function overwrite(path: string, offset: number, bytes: Buffer): void {
  const fd = openSync(path, 'r+')
  try {
    writeSync(fd, bytes, 0, bytes.length, offset)
  } finally {
    closeSync(fd)
  }
}

const chat = (base: string, key: string) =>
  fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
    body: JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content: 'hi'}]}),
  })

describe('a damaged logs.db (issue 29, item 4)', () => {
  it('100 random bytes over its header: logs/usage exit 3 with the fix; the gateway moves it aside, starts, serves, and says so', async () => {
    const {home, cli, base} = await isolatedHome()
    mkdirSync(home, {recursive: true})
    await logDbWithRows(join(home, 'logs.db'), 50)
    overwrite(join(home, 'logs.db'), 0, randomBytes(100))

    for (const args of [['logs'], ['usage']]) {
      const r = await cli(args)
      expect(r.exitCode, args.join(' ')).toBe(3)
      expect(r.stderr).not.toMatch(/This is a bug/)
      expect(r.stderr).toMatch(/damaged/)
      expect(r.stderr).toMatch(/gwctl gateway start/)
    }
    const asJson = json(await cli(['usage', '--json']))
    expect(asJson.error.code).toBe('database_damaged')

    const start = await cli(['gateway', 'start', '--sim'])
    expect(start.exitCode).toBe(0)
    const aside = readdirSync(home).filter((n) => /^logs\.db\.damaged-/.test(n))
    expect(aside).toHaveLength(1)
    const health = (await (await fetch(`${base}/health`)).json()) as {status: string; degraded?: string}
    expect(health.status).toBe('ok')
    expect(health.degraded).toMatch(/log database: it was damaged .* moved aside to .*logs\.db\.damaged-/)
    const status = await cli(['status'])
    expect(status.stdout).toMatch(/Running \(degraded\)/)
    expect(status.stdout + status.stderr).toMatch(/moved aside/)
    const doctor = await cli(['doctor'])
    expect(doctor.stdout).toMatch(/damaged database moved aside by the gateway: .*logs\.db\.damaged-/)

    const issued = json(await cli([...keyIssueArgs('codex-a', 'codex'), '--json']))
    expect((await chat(base, issued.keyValue)).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 100))
    const logs = await cli(['logs', '--json'])
    expect(logs.exitCode).toBe(0)
    expect(json(logs).logs).toHaveLength(1)
    expect((await cli(['usage'])).exitCode).toBe(0)
    expect((await cli(['gateway', 'stop'])).exitCode).toBe(0)
  }, 60_000)

  it('one damaged page in the middle: the gateway moves it aside at start, and usage answers (no 500)', async () => {
    const {home, cli, base} = await isolatedHome()
    mkdirSync(home, {recursive: true})
    const path = join(home, 'logs.db')
    await logDbWithRows(path, 3000)
    const pages = statSync(path).size / 4096
    expect(pages).toBeGreaterThan(20)
    overwrite(path, Math.floor(pages / 2) * 4096, randomBytes(4096))

    expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
    expect(readdirSync(home).filter((n) => /^logs\.db\.damaged-/.test(n))).toHaveLength(1)
    const health = (await (await fetch(`${base}/health`)).json()) as {degraded?: string}
    expect(health.degraded).toMatch(/log database: it was damaged/)
    const usage = await cli(['usage', '--json'])
    expect(usage.exitCode).toBe(0)
    expect((await cli(['logs'])).exitCode).toBe(0)
    expect((await cli(['gateway', 'stop'])).exitCode).toBe(0)
  }, 60_000)
})

describe('a damaged logs.db too large to check before the gateway listens (issue 29, start-up check)', () => {
  it('the gateway starts on it at once; its full check in a worker finds the damage, /health says so, and `gateway restart` moves it aside', async () => {
    const {home, base, port} = await isolatedHome()
    // every database counts as large: the start path only takes a quick look
    const env = {GWCTL_GATEWAY_PORT: String(port), GWCTL_LOGDB_START_CHECK_MB: '0'}
    const cli = (args: string[]) => runCli(args, {home, env})
    mkdirSync(home, {recursive: true})
    const path = join(home, 'logs.db')
    await logDbWithRows(path, 3000)
    const pages = statSync(path).size / 4096
    overwrite(path, Math.floor(pages / 2) * 4096, randomBytes(4096))

    expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
    // not moved at start: the damaged page is not one the quick look reads
    expect(readdirSync(home).filter((n) => /^logs\.db\.damaged-/.test(n))).toHaveLength(0)
    let degraded: string | undefined
    for (let i = 0; i < 100 && !degraded; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      degraded = ((await (await fetch(`${base}/health`)).json()) as {degraded?: string}).degraded
    }
    expect(degraded).toMatch(/log database: it is damaged .*`gwctl gateway restart` moves it aside/)
    expect(existsSync(`${path}.damage-seen`)).toBe(true)
    // traffic flows meanwhile
    const issued = json(await cli([...keyIssueArgs('codex-a', 'codex'), '--json']))
    expect((await chat(base, issued.keyValue)).status).toBe(200)

    const restart = await cli(['gateway', 'restart'])
    expect(restart.exitCode, restart.stderr).toBe(0)
    expect(readdirSync(home).filter((n) => /^logs\.db\.damaged-[\dTZ-]+Z$/.test(n))).toHaveLength(1)
    expect(existsSync(`${path}.damage-seen`)).toBe(false)
    const health = (await (await fetch(`${base}/health`)).json()) as {degraded?: string}
    expect(health.degraded).toMatch(/log database: it was damaged .* moved aside to /)
    expect((await cli(['usage'])).exitCode).toBe(0)
    expect((await cli(['gateway', 'stop'])).exitCode).toBe(0)
  }, 60_000)
})

describe('settings.json is written only by `config set` (issue 29, item 7)', () => {
  it('status, doctor, config list, gateway and logs leave no settings.json; an empty one still passes doctor', async () => {
    const {home, cli} = await isolatedHome()
    for (const args of [['status'], ['doctor'], ['config', 'list'], ['gateway'], ['logs']]) {
      await cli(args)
      expect(existsSync(join(home, 'settings.json')), args.join(' ')).toBe(false)
    }
    writeFileSync(join(home, 'settings.json'), '', {mode: 0o600})
    const doctor = await cli(['doctor', '--json'])
    const settings = (json(doctor).checks ?? json(doctor)).find?.((c: {id: string}) => c.id === 'settings')
    expect(settings?.ok ?? !doctor.stdout.includes('does not parse')).toBe(true)
    expect(doctor.stdout).not.toMatch(/does not parse/)
  }, 60_000)
})

const mounts = canMount()

describe.skipIf(!mounts)(
  'a read-only or full GWCTL_HOME (issue 29, item 5; a real bind mount and tmpfs)',
  () => {
    it('every command that must write exits 3 with the fix, never 1', async () => {
      const {home, cli, port} = await isolatedHome()
      mkdirSync(home, {recursive: true})
      expect((await cli([...keyIssueArgs('codex-a', 'codex')])).exitCode).toBe(0)
      expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
      expect((await cli(['gateway', 'stop'])).exitCode).toBe(0)
      const undo = readOnly(home)
      cleanups.push(undo)
      for (const args of [
        ['gateway', 'start'],
        ['gateway', 'run', '--port', String(port)],
        ['logs'],
        ['usage'],
        ['usage', 'rescan'],
        keyIssueArgs('codex-b', 'codex'),
        ['providers', 'add', 'p1', '--family', 'chat', '--base-url', 'http://127.0.0.1:9/v1'],
        ['config', 'set', 'chat.model', 'x'],
      ]) {
        const r = await cli(args)
        expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(3)
        expect(r.stderr).not.toMatch(/This is a bug/)
        expect(r.stderr).toMatch(/read-only|EROFS|cannot be opened/)
      }
    }, 120_000)

    it('a home that turns read-only under a running daemon: traffic flows, `gateway stop` exits 0 and the daemon ends cleanly', async () => {
      const {home, cli, base} = await isolatedHome()
      mkdirSync(home, {recursive: true})
      expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
      const issued = json(await cli([...keyIssueArgs('codex-a', 'codex'), '--json']))
      const pid = daemonPid(home)!
      const undo = readOnly(home)
      cleanups.push(undo)
      expect((await chat(base, issued.keyValue)).status).toBe(200)
      const stop = await cli(['gateway', 'stop'])
      expect(stop.stderr).not.toMatch(/This is a bug|EROFS/)
      expect(stop.exitCode).toBe(0)
      expect(alive(pid)).toBe(false)
      expect((await cli(['status', '--json'])).exitCode).toBe(6)
    }, 60_000)

    it('a full disk: `providers add` and `config set` exit 3 (ENOSPC), never 1', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gwctl-full-'))
      expect(tryMount(['-t', 'tmpfs', '-o', 'size=2m,mode=0700', 'tmpfs', dir])).toBe(true)
      cleanups.push(() => {
        execFileSync('umount', ['-l', dir], {stdio: 'ignore'})
        rmSync(dir, {recursive: true, force: true})
      })
      const home = join(dir, 'home')
      mkdirSync(home)
      const {cli} = await isolatedHome(home)
      expect((await cli(['providers', 'list'])).exitCode).toBe(0)
      const fd = openSync(join(dir, 'filler'), 'w')
      try {
        for (;;) writeSync(fd, Buffer.alloc(64 * 1024))
      } catch {
        // ENOSPC
      } finally {
        closeSync(fd)
      }
      for (const args of [
        ['providers', 'add', 'p1', '--family', 'chat', '--base-url', 'http://127.0.0.1:9/v1'],
        ['config', 'set', 'chat.model', `x${'y'.repeat(8000)}`],
      ]) {
        const r = await cli(args)
        expect(r.exitCode, `${args.join(' ')}: ${r.stderr}`).toBe(3)
        expect(r.stderr).not.toMatch(/This is a bug/)
        expect(r.stderr).toMatch(/ENOSPC|no space/i)
      }
    }, 60_000)
  },
)
