/**
 * Faults of the real daemon (issue 14), the fast deterministic versions: `gateway run` on a fresh
 * home, routing one family keeping the others' defaults, and `gateway start` right after `kill -9`
 * while key issues were in flight.
 */
import {execFileSync} from 'node:child_process'
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {freePort, json, runCli, spawnCli, tempHome} from './helpers/cli.js'
import {daemonPid, keyIssueArgs, killDaemon} from './helpers/gateway.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

async function isolatedHome() {
  const t = tempHome()
  const port = await freePort()
  const env = {GWCTL_GATEWAY_PORT: String(port)}
  const cli = (args: string[]) => runCli(args, {home: t.home, env})
  cleanups.push(t.cleanup, () => killDaemon(t.home))
  return {home: t.home, port, env, cli, base: `http://127.0.0.1:${port}`}
}

async function waitForHealth(base: string): Promise<Response> {
  for (let i = 0; i < 200; i++) {
    try {
      return await fetch(`${base}/health`)
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  throw new Error('the gateway never answered /health')
}

describe('gateway faults end to end', () => {
  it('`gateway run` starts on a GWCTL_HOME that does not exist yet and stops cleanly on SIGTERM', async () => {
    const {home, port, base} = await isolatedHome()
    rmSync(home, {recursive: true, force: true})
    const run = spawnCli(['gateway', 'run', '--port', String(port)], {home})
    const health = await waitForHealth(base)
    expect(health.status).toBe(200)
    expect(existsSync(join(home, 'gateway.pid'))).toBe(true)
    run.kill('SIGTERM')
    const done = await run
    expect(done.exitCode).toBe(0)
    expect(String(done.stderr)).not.toMatch(/This is a bug/)
  })

  it('routing one family keeps the defaults of the others; `policies show` says which', async () => {
    const {cli, base} = await isolatedHome()
    const route = await cli(['policies', 'route', 'default', '--family', 'chat', '--target', 'sim-chat'])
    expect(route.exitCode).toBe(0)
    expect(route.stdout.endsWith('\n')).toBe(true)
    // no gateway runs yet: it loads the change when it starts (a restart hint would be wrong)
    expect(route.stderr).toMatch(
      /(^|\n)The gateway is not running: it loads this when it starts \(`gwctl gateway start`\)\.\n$/,
    )
    // the hint after a table starts on a line of its own and ends its line (a report had them run together)
    const added = await cli([
      'providers',
      'add',
      'my-openai',
      '--family',
      'chat',
      '--base-url',
      'http://127.0.0.1:9/v1',
      '--api-key-env',
      'OPENAI_API_KEY',
    ])
    expect(added.exitCode).toBe(0)
    expect(added.stdout.endsWith('\n')).toBe(true)
    expect(added.stderr).toMatch(
      /(^|\n)The gateway is not running: it loads this when it starts \(`gwctl gateway start`\)\.\n$/,
    )
    const show = await cli(['policies', 'show', 'default'])
    expect(show.stdout).toContain('chat -> sim-chat')
    expect(show.stdout).toContain('responses, messages, gemini: on defaults')
    expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
    const issued = json(await cli([...keyIssueArgs('codex-a', 'codex'), '--json']))
    const res = await fetch(`${base}/v1/responses`, {
      method: 'POST',
      headers: {authorization: `Bearer ${issued.keyValue}`, 'content-type': 'application/json'},
      body: JSON.stringify({model: 'sim-mini', input: 'hi'}),
    })
    expect(res.status).toBe(200)
    const chat = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: {authorization: `Bearer ${issued.keyValue}`, 'content-type': 'application/json'},
      body: JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content: 'hi'}]}),
    })
    expect(chat.status).toBe(200)

    // with the gateway running the change waits for a restart, and the hint says so; --json names
    // the command that applies it in each state
    const live = await cli(['policies', 'route', 'default', '--family', 'gemini', '--target', 'sim-gemini'])
    expect(live.exitCode, live.stderr).toBe(0)
    expect(live.stderr).toBe('Run `gwctl gateway restart` to apply it.\n')
    const liveJson = await cli([
      'policies',
      'route',
      'team-b',
      '--family',
      'chat',
      '--target',
      'sim-chat',
      '--json',
    ])
    expect(json(liveJson).appliesOn).toBe('gwctl gateway restart')
    expect(liveJson.stderr).toBe('')
    // a key for the policy just written: the daemon has not loaded it, and says so instead of
    // "Unknown policyId" beside a `policies list` that shows it (the README's route, enable order)
    const early = await cli([...keyIssueArgs('codex-b', 'codex'), '--policy-id', 'team-b'])
    expect(early.exitCode).toBe(2)
    expect(early.stderr).toBe(
      'Error: The running gateway has not loaded policy "team-b" yet: it reads policies when it starts, and this one was written since.\n' +
        'Run `gwctl gateway restart`, then this command again.\n',
    )
    const unknown = await cli([...keyIssueArgs('codex-b', 'codex'), '--policy-id', 'team-c', '--json'])
    expect(json(unknown).error.code).toBe('unknown_policy')
    const listHint =
      'See `gwctl policies list`; `gwctl policies route ID --family FAMILY --target PROVIDER` creates one.'
    expect(json(unknown).error.hint).toBe(listHint)
    expect((await cli(['gateway', 'stop'])).exitCode).toBe(0)
    // the same words when the state file answers (gateway stopped)
    const unknownStopped = await cli([...keyIssueArgs('codex-b', 'codex'), '--policy-id', 'team-c', '--json'])
    expect(unknownStopped.exitCode).toBe(2)
    expect(json(unknownStopped).error).toMatchObject({code: 'unknown_policy', hint: listHint})
    const stoppedJson = await cli(['policies', 'remove', 'team-b', '--json'])
    expect(json(stoppedJson).appliesOn).toBe('gwctl gateway start')
  })

  it('`gateway start` runs the daemon from its own entry point, without oclif; a bad argument there exits 2', async () => {
    const {home, cli, port} = await isolatedHome()
    const start = await cli(['gateway', 'start'])
    expect(start.exitCode, start.stderr).toBe(0)
    const pid = daemonPid(home)!
    if (existsSync(`/proc/${pid}/cmdline`)) {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')
      expect(argv[1]).toMatch(/dist\/daemon\/main\.js$/)
      expect(argv.slice(2, 4)).toEqual(['--port', String(port)])
    }
    expect((await cli(['status', '--quiet'])).exitCode).toBe(0)
    expect((await cli(['gateway', 'stop'])).exitCode).toBe(0)
    const entry = join(import.meta.dirname, '../dist/daemon/main.js')
    let failure: {status?: number; stderr?: Buffer} = {}
    try {
      execFileSync(process.execPath, [entry, '--port', '0'], {
        env: {...process.env, GWCTL_HOME: home},
        stdio: 'pipe',
      })
    } catch (error) {
      failure = error as typeof failure
    }
    expect(failure.status).toBe(2)
    expect(String(failure.stderr)).toContain('usage: main.js --port <1-65535>')
  })

  it('after kill -9 during key issues, `gateway start` succeeds at once and every key answered 200 still works', async () => {
    const {home, env, cli, base} = await isolatedHome()
    const keys: string[] = []
    for (let loop = 0; loop < 3; loop++) {
      const start = await cli(['gateway', 'start', '--sim'])
      expect(start.exitCode, start.stderr).toBe(0)
      // key issues in flight when the daemon dies
      const inflight = [0, 1, 2].map((i) =>
        fetch(`${base}/api/keys/issue`, {
          method: 'POST',
          headers: {'content-type': 'application/json'},
          body: JSON.stringify({
            employeeName: 'A',
            employeeContact: 'a@b.c',
            agentName: `agent-${loop}-${i}`,
            agentType: 'generic_agent',
          }),
        })
          .then(async (r) =>
            r.status === 200 ? ((await r.json()) as {keyValue: string}).keyValue : undefined,
          )
          .catch(() => undefined),
      )
      await new Promise((resolve) => setTimeout(resolve, 5))
      await killDaemon(home)
      for (const key of await Promise.all(inflight)) if (key) keys.push(key)
      expect(daemonPid(home)).toBeDefined() // the dead daemon's pid file is left behind
    }
    const start = await runCli(['gateway', 'start', '--sim'], {home, env})
    expect(start.exitCode, start.stderr).toBe(0)
    for (const key of keys) {
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
        body: JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content: 'hi'}]}),
      })
      expect(res.status).toBe(200)
    }
  })

  it('with the gateway stopped, every line of `providers add/list` and `policies route` ends in a newline', async () => {
    const {cli} = await isolatedHome()
    // The issue saw "…(gateway stopped)Run `gwctl gateway restart` to apply it.": a table or a hint
    // that does not end its line glues the next output to it. Each stream must end with "\n".
    const add = await cli([
      'providers',
      'add',
      'p1',
      '--family',
      'chat',
      '--base-url',
      'http://127.0.0.1:9/v1',
    ])
    expect(add.exitCode).toBe(0)
    expect(add.stdout).toBe('Added provider p1 (chat, http://127.0.0.1:9/v1, credential: none).\n')
    expect(add.stderr).toMatch(
      /\nThe gateway is not running: it loads this when it starts \(`gwctl gateway start`\)\.\n$/,
    )
    const list = await cli(['providers', 'list'])
    expect(list.exitCode).toBe(0)
    expect(list.stdout).toMatch(/^NAME +FAMILY .*\n(.*\n)*p1 +chat .* unknown \(gateway stopped\)\n$/)
    expect(list.stderr).toMatch(/^The gateway is stopped: .*\n$/)
    const route = await cli(['policies', 'route', 'default', '--family', 'chat', '--target', 'p1'])
    expect(route.exitCode).toBe(0)
    expect(route.stdout).toBe('Updated policy default: chat -> p1\n')
    expect(route.stderr).toBe(
      'The gateway is not running: it loads this when it starts (`gwctl gateway start`).\n',
    )
    // what a terminal shows when both streams go to it, in order
    expect(list.stdout + route.stdout + route.stderr).toContain(
      'unknown (gateway stopped)\nUpdated policy default: chat -> p1\nThe gateway is not running: it loads this when it starts (`gwctl gateway start`).\n',
    )
  })
})

/** A small tmpfs of our own, when this machine lets us mount one (root in a VM or container). */
function smallTmpfs(megabytes: number): {dir: string; unmount: () => void} | undefined {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return undefined
  const dir = mkdtempSync(join(tmpdir(), 'gwctl-tmpfs-'))
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${megabytes}m,mode=0700`, 'tmpfs', dir], {
      stdio: 'ignore',
    })
  } catch {
    rmSync(dir, {recursive: true, force: true})
    return undefined
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', ['-l', dir], {stdio: 'ignore'})
      rmSync(dir, {recursive: true, force: true})
    },
  }
}

/** Writes zeros into `path` until the file system says it is full. */
function fillDisk(path: string): void {
  const fd = openSync(path, 'w')
  const chunk = Buffer.alloc(64 * 1024)
  try {
    for (;;) writeSync(fd, chunk)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error
  } finally {
    closeSync(fd)
  }
}

const tmpfs = smallTmpfs(8) // unmounted by its test's cleanup

describe.skipIf(!tmpfs)('a GWCTL_HOME whose disk fills up (a real 8 MB tmpfs)', () => {
  it('keeps model traffic flowing, says `degraded` on /health and in `gwctl status`, loses nothing stored, and recovers', async () => {
    const home = join(tmpfs!.dir, 'home')
    mkdirSync(home, {mode: 0o700})
    const port = await freePort()
    const env = {GWCTL_GATEWAY_PORT: String(port)}
    const cli = (args: string[]) => runCli(args, {home, env})
    const base = `http://127.0.0.1:${port}`
    cleanups.push(tmpfs!.unmount, () => killDaemon(home))
    expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
    const issued = json(await cli([...keyIssueArgs('codex-a', 'codex'), '--json']))
    const chat = (content: string) =>
      fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: {authorization: `Bearer ${issued.keyValue}`, 'content-type': 'application/json'},
        body: JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content}]}),
      })
    for (let i = 0; i < 3; i++) expect((await chat(`before ${i}`)).status).toBe(200)
    await new Promise((resolve) => setTimeout(resolve, 200))
    const before = json(await cli(['logs', '--json', '--limit', '100']))
    expect(before.logs ?? before).toHaveLength(3)

    const filler = join(tmpfs!.dir, 'filler')
    fillDisk(filler)
    for (let i = 0; i < 10; i++) {
      const res = await chat(`during ${i} ${'x'.repeat(2000)}`)
      expect(res.status).toBe(200)
      expect(((await res.json()) as {choices: unknown[]}).choices).toHaveLength(1)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
    const health = await fetch(`${base}/health`)
    expect(health.status).toBe(200)
    const body = (await health.json()) as {status: string; timestamp: number; degraded?: string}
    expect(body.status).toBe('ok')
    expect(body.degraded).toMatch(/^log store: could not write a batch: database or disk is full/)
    // re-issuing (a rotation) cannot be saved: refused, and the key in use keeps working
    const rotate = await cli([...keyIssueArgs('codex-a', 'codex'), '--json'])
    expect(rotate.exitCode).not.toBe(0)
    expect(rotate.stdout + rotate.stderr).toMatch(
      /The key was not issued: the gateway could not save .*state\.json: ENOSPC/,
    )
    expect((await chat('still mine')).status).toBe(200)
    const status = await cli(['status'])
    expect(status.exitCode).toBe(0)
    expect(status.stdout).toMatch(/gateway:\s+Running \(degraded\)/)
    expect(status.stderr).toContain('The gateway is degraded: log store: could not write a batch')
    expect(status.stderr).toContain('state: could not save')
    expect(json(await cli(['status', '--json'])).degraded).toMatch(/database or disk is full/)

    rmSync(filler)
    expect((await chat('after')).status).toBe(200)
    expect((await cli([...keyIssueArgs('codex-a', 'codex'), '--json'])).exitCode).toBe(0)
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(((await (await fetch(`${base}/health`)).json()) as {degraded?: string}).degraded).toBeUndefined()
    const after = json(await cli(['logs', '--json', '--limit', '100']))
    const rows = (after.logs ?? after) as Array<{requestId: string}>
    // the three stored before the disk filled up are all there; the requests in between are lost
    for (const row of before.logs ?? before) expect(rows.map((r) => r.requestId)).toContain(row.requestId)
    const daemonLog = readFileSync(join(home, 'gateway.log'), 'utf8')
    expect(daemonLog).toContain('log store: writing again')
    expect((await cli(['gateway', 'stop'])).exitCode).toBe(0)
  }, 90_000)
})
