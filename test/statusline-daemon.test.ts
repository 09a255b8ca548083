/**
 * `gwctl statusline` (bin/gwctl.cjs's own path) against a daemon that answers the line's figures, one
 * too old to send them, one that never answers, and a pid file that names no daemon: the bytes it
 * asks, the line it prints, and that a prompt is never held longer than the daemon's time limit
 * plus a read of logs.db.
 */
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {execa} from 'execa'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {DAEMON_TIMEOUT_MS, PUBLISHED_FRESH_MS, pidFilePath} from '../src/services/usage-statusline.js'
import {homeFile} from '../src/store/paths.js'
import {BIN, cliEnv, json, runCli, tempHome} from './helpers/cli.js'
import type {FakeDaemon} from './helpers/statusline-daemon.js'
import {fakeStatuslineDaemon} from './helpers/statusline-daemon.js'

const INPUT = JSON.stringify({
  session_id: 'abc d',
  model: {id: 'claude-opus-4-1', display_name: 'Opus'},
  cost: {total_cost_usd: 0.12},
})

describe('statusline and the daemon', () => {
  let home: {home: string; cleanup: () => void}
  let daemon: FakeDaemon | undefined
  beforeEach(() => {
    home = tempHome()
  })
  afterEach(() => {
    daemon?.stop()
    daemon = undefined
    home.cleanup()
  })
  const statusline = async () => {
    const t0 = performance.now()
    const r = await execa('node', [BIN, 'statusline'], {
      env: cliEnv(home.home),
      extendEnv: true,
      input: INPUT,
      reject: false,
    })
    return {stdout: String(r.stdout), exitCode: r.exitCode, ms: performance.now() - t0}
  }
  const midnightUtc = () => Math.floor(Date.now() / 86_400_000) * 86_400_000

  it('prints the figures the daemon answers to one GET, and Claude Code’s session cost when gwctl has no record of the session', async () => {
    const figures = {
      today: {usd: 1.234, unpriced: false},
      session: {usd: 0.5, unpriced: true, requests: 3},
      window: {usd: 2, unpriced: false, end: Date.now() + 65 * 60_000 + 20_000, perHour: 0.75},
    }
    daemon = await fakeStatuslineDaemon(home.home, 'figures', figures)
    const r = await statusline()
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toBe('Opus · session $0.50+ · today $1.23 · 5h $2.00 (1h05m left) · $0.75/h')
    // TZ=UTC: today starts at the UTC midnight; the session id is escaped
    expect(daemon.requests()).toEqual([
      `GET /api/usage/statusline?today=${midnightUtc()}&session=abc%20d HTTP/1.1`,
    ])
    daemon.stop()

    daemon = await fakeStatuslineDaemon(home.home, 'figures', {
      today: {usd: 0, unpriced: true},
      session: {usd: 0, unpriced: false, requests: 0},
      window: null,
    })
    expect((await statusline()).stdout).toBe('Opus · session $0.12 · today unpriced · no active 5h window')
  })

  it('figures the running daemon published for this midnight and session are read from its file, with no request', async () => {
    daemon = await fakeStatuslineDaemon(home.home, 'figures', {
      today: {usd: 9, unpriced: false},
      session: null,
      window: null,
    })
    const publish = (pid: number, key: string, written = Date.now()) =>
      writeFileSync(
        join(home.home, 'statusline.json'),
        JSON.stringify({
          v: 1,
          pid,
          written,
          lines: {
            [key]: {
              today: {usd: 1.5, unpriced: false},
              session: {usd: 0.25, unpriced: false, requests: 2},
              window: {usd: 1, unpriced: false, end: Date.now() + 30 * 60_000 + 20_000, perHour: 2},
            },
          },
        }),
      )
    publish(daemon.pid, `${midnightUtc()} abc d`)
    expect((await statusline()).stdout).toBe(
      'Opus · session $0.25 · today $1.50 · 5h $1.00 (30m left) · $2.00/h',
    )
    expect(daemon.requests()).toEqual([])
    // another session's, another daemon's (a pid reused), or one written too long ago: asked over loopback
    for (const [pid, key, written] of [
      [daemon.pid, `${midnightUtc()} other`, Date.now()],
      [daemon.pid + 1, `${midnightUtc()} abc d`, Date.now()],
      [daemon.pid, `${midnightUtc()} abc d`, Date.now() - PUBLISHED_FRESH_MS - 1000],
    ] as const) {
      publish(pid, key, written)
      expect((await statusline()).stdout).toBe('Opus · session $0.12 · today $9.00 · no active 5h window')
    }
    expect(daemon.requests()).toHaveLength(3)
  })

  it('stdin is read to its end: JSON written in parts with a pause, /dev/null, a file, one over 1 MiB', async () => {
    daemon = await fakeStatuslineDaemon(home.home, 'figures', {
      today: {usd: 2, unpriced: false},
      session: null,
      window: null,
    })
    const child = execa('node', [BIN, 'statusline'], {env: cliEnv(home.home), extendEnv: true, reject: false})
    child.stdin!.write(INPUT.slice(0, 20))
    await new Promise((resolve) => setTimeout(resolve, 300))
    child.stdin!.end(INPUT.slice(20))
    expect(String((await child).stdout)).toBe('Opus · session $0.12 · today $2.00 · no active 5h window')
    const nothing = await execa('sh', ['-c', `node '${BIN}' statusline < /dev/null`], {
      env: cliEnv(home.home),
      extendEnv: true,
    })
    expect(nothing.stdout).toBe('today $2.00 · no active 5h window')
    const file = join(home.home, 'input.json')
    writeFileSync(file, INPUT)
    const fromFile = await execa('sh', ['-c', `node '${BIN}' statusline < '${file}'`], {
      env: cliEnv(home.home),
      extendEnv: true,
    })
    expect(fromFile.stdout).toBe('Opus · session $0.12 · today $2.00 · no active 5h window')
    // more than 1 MiB is not Claude Code's input: not read to its end, and the line has no model
    writeFileSync(file, INPUT.replace('"Opus"', `"Opus${' '.repeat(1 << 21)}"`))
    const huge = await execa('sh', ['-c', `node '${BIN}' statusline < '${file}'`], {
      env: cliEnv(home.home),
      extendEnv: true,
    })
    expect(huge.stdout).toBe('today $2.00 · no active 5h window')
  })

  it('a daemon that never answers: the line comes from logs.db once the time limit passes', async () => {
    daemon = await fakeStatuslineDaemon(home.home, 'silent')
    const r = await statusline()
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toBe('Opus · session $0.12 · today $0.00 · no active 5h window')
    expect(daemon.requests()).toHaveLength(1)
    expect(r.ms).toBeGreaterThanOrEqual(DAEMON_TIMEOUT_MS)
    // a Node start, the limit and a read of logs.db, with room for a busy test machine
    expect(r.ms).toBeLessThan(DAEMON_TIMEOUT_MS + 4000)
  })

  it('a daemon too old to send figures: the line is priced from logs.db (`--json` says so)', async () => {
    daemon = await fakeStatuslineDaemon(home.home, 'old')
    expect((await statusline()).stdout).toBe('Opus · session $0.12 · today $0.00 · no active 5h window')
    const viaOclif = json(await runCli(['statusline', '--json'], {home: home.home, input: INPUT}))
    expect(viaOclif).toEqual({
      line: 'Opus · session $0.12 · today $0.00 · no active 5h window',
      source: 'database',
    })
    expect(daemon.requests()).toHaveLength(2)
  })

  it('a pid file whose process is no gwctl daemon, or is gone: nothing is asked', async () => {
    daemon = await fakeStatuslineDaemon(home.home, 'figures', {
      today: {usd: 9, unpriced: false},
      session: null,
      window: null,
    })
    // this test's own process (vitest) at the fake's port, then a pid that has exited
    writeFileSync(join(home.home, 'gateway.pid'), `${process.pid}\n${daemon.port}\n`)
    expect((await statusline()).stdout).toBe('Opus · session $0.12 · today $0.00 · no active 5h window')
    const gone = await execa('node', ['-e', 'process.stdout.write(String(process.pid))'])
    writeFileSync(join(home.home, 'gateway.pid'), `${gone.stdout}\n${daemon.port}\n`)
    expect((await statusline()).stdout).toBe('Opus · session $0.12 · today $0.00 · no active 5h window')
    expect(daemon.requests()).toEqual([])
  })

  it('finds the pid file where the rest of gwctl does', () => {
    for (const env of [{GWCTL_HOME: '/x/home'}, {XDG_CONFIG_HOME: '/x/config'}, {HOME: '/x/user'}, {}])
      expect(pidFilePath(env)).toBe(homeFile('pid', env))
  })
})
