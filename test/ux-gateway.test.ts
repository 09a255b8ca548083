/**
 * Issue 13, the gateway as people run it: exit codes of a broken home, doctor on a fresh install
 * and on a daemon started with --port, a hung daemon, and who answered a refused key.
 */
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {daemonPid, keyIssueArgs, killDaemon} from './helpers/gateway.js'

const homes: string[] = []
const cleanups: Array<() => void> = []
afterEach(async () => {
  for (const home of homes.splice(0)) {
    const pid = daemonPid(home)
    if (pid) {
      try {
        process.kill(pid, 'SIGCONT')
      } catch {
        // gone
      }
    }
    await killDaemon(home)
  }
  for (const cleanup of cleanups.splice(0)) cleanup()
})

function setup() {
  const t = tempHome()
  homes.push(t.home)
  cleanups.push(t.cleanup)
  const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, {home: t.home, env})
  return {home: t.home, cli}
}

describe('exit codes as the README table says', () => {
  it('GWCTL_HOME pointing at a file is a configuration error (exit 3) naming the path', async () => {
    const {home} = setup()
    const file = join(home, 'not-a-folder')
    writeFileSync(file, 'x')
    for (const args of [['config', 'list'], ['status'], ['agents', 'list'], ['video', 'list']]) {
      const r = await runCli(args, {home: file})
      expect(r.exitCode, args.join(' ')).toBe(3)
      expect(r.stderr).toContain(`GWCTL_HOME ${file} is a file`)
      expect(r.stderr).not.toContain('bug in gwctl')
    }
  })

  it('an invalid state.json exits 3 from gateway start as from every other command', async () => {
    const {home, cli} = setup()
    writeFileSync(join(home, 'state.json'), '{"version":1,', {mode: 0o600})
    const port = String(await freePort())
    const start = await cli(['gateway', 'start', '--port', port])
    expect(start.exitCode).toBe(3)
    expect(start.stderr).toContain('state.json is not valid')
    expect((await cli(['agents', 'list'])).exitCode).toBe(3)
    expect(daemonPid(home)).toBeUndefined()
  })
})

describe('doctor', () => {
  it('on a fresh install with environment variables only: settings "not created yet", a pass', async () => {
    const {home, cli} = setup()
    const env = {GWCTL_BASE_URL: 'http://127.0.0.1:9/api/v1', GWCTL_API_KEY: 'k'}
    const r = await cli(['doctor', '--json'], env)
    const settings = json(r).checks.find((c: {id: string}) => c.id === 'settings')
    expect(settings).toMatchObject({ok: true})
    expect(settings.detail).toContain('not created yet (environment variables in use')
    writeFileSync(join(home, 'settings.json'), '{bad', {mode: 0o600})
    const broken = await cli(['doctor', '--json'], env)
    expect(broken.exitCode).not.toBe(0)
    expect(json(broken).checks.find((c: {id: string}) => c.id === 'settings').ok).toBe(false)
  })
})

describe('a gateway started with --port, then hung', {timeout: 120_000}, () => {
  it('doctor checks its port; status, doctor and restart deal with the hang', async () => {
    const {home, cli} = setup()
    const port = await freePort()
    const start = await cli(['gateway', 'start', '--port', String(port)])
    expect(start.exitCode, start.stderr).toBe(0)

    const doctor = json(await cli(['doctor', '--json']))
    const portCheck = doctor.checks.find((c: {id: string}) => c.id === 'port')
    expect(portCheck).toMatchObject({ok: true})
    expect(portCheck.detail).toContain(`port ${port} is the gateway's`)
    expect(doctor.checks.find((c: {id: string}) => c.id === 'gateway')).toMatchObject({ok: true})

    const pid = daemonPid(home)!
    process.kill(pid, 'SIGSTOP')
    const status = await cli(['status'])
    expect(status.exitCode).toBe(6)
    // scripts' check: a live pid that does not answer /health is down too, and prints nothing
    const quiet = await cli(['status', '--quiet'])
    expect([quiet.exitCode, quiet.stdout, quiet.stderr]).toEqual([6, '', ''])
    expect(status.stderr).toContain(`pid ${pid}) is alive but did not answer`)
    expect(status.stderr).toContain('gwctl gateway restart')
    expect(status.stderr).not.toContain('gateway start')
    const shown = await cli(['gateway'])
    expect(shown.stdout).toMatch(/^state: +Unhealthy$/m)
    expect(shown.stdout).toContain('did not answer within 2 s. Recover with `gwctl gateway restart`')

    const hung = json(await cli(['doctor', '--json']))
    const gatewayCheck = hung.checks.find((c: {id: string}) => c.id === 'gateway')
    expect(gatewayCheck).toMatchObject({ok: false})
    expect(gatewayCheck.detail).toContain('(hung)')

    const restart = await cli(['gateway', 'restart', '--drain', '0'])
    expect(restart.exitCode, restart.stderr).toBe(0)
    expect(daemonPid(home)).not.toBe(pid)
    const after = json(await cli(['status', '--json']))
    expect(after).toMatchObject({healthy: true, gateway: {state: 'Running', port}})
  })
})

describe('who answered', {timeout: 120_000}, () => {
  it('a malformed gateway key answered 400 by the gateway is an auth error (exit 4) naming the gateway', async () => {
    const {cli} = setup()
    const port = await freePort()
    expect((await cli(['gateway', 'start', '--port', String(port)])).exitCode).toBe(0)
    const r = await cli(['chat', '-m', 'm', 'hi', '--json'], {
      GWCTL_BASE_URL: `http://127.0.0.1:${port}/v1`,
      GWCTL_API_KEY: 'gw-notavalidkey0000',
    })
    expect(r.exitCode).toBe(4)
    expect(json(r).error.message).toMatch(/^The local gateway answered 400: The gateway key is malformed/)
    expect(json(r).error.hint).toContain('gwctl key issue')
  })

  it('requests refused for their key are logged (no key material) and counted in usage --status 4xx', async () => {
    const {cli} = setup()
    const port = await freePort()
    expect((await cli(['gateway', 'start', '--port', String(port)])).exitCode).toBe(0)
    const issued = json(await cli([...keyIssueArgs('laptop', 'codex'), '--json']))
    const base = `http://127.0.0.1:${port}`
    const post = (headers: Record<string, string>) =>
      fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: {'content-type': 'application/json', ...headers},
        body: JSON.stringify({model: 'm', messages: [{role: 'user', content: 'hi'}]}),
      }).then((res) => res.status)
    const forged = 'gw-forgedkeymaterial0000'
    expect(await post({})).toBe(401)
    expect(await post({authorization: `Bearer ${forged}`})).toBe(400)
    // a well-formed key that is no longer live: issuing again (after the 5 s window) revokes it
    await new Promise((r) => setTimeout(r, 5_100))
    expect((await cli(keyIssueArgs('laptop', 'codex'))).exitCode).toBe(0)
    expect(await post({authorization: `Bearer ${issued.keyValue}`})).toBe(401)

    const logs = await cli(['logs', '--status', '4xx', '--json'])
    expect(logs.exitCode).toBe(0)
    const rows = json(logs).logs as Array<{status: number; error: string; keyPrefix: string | null}>
    expect(rows.map((r) => [r.status, r.error]).sort()).toEqual([
      [400, 'refused: malformed gateway key'],
      [401, 'refused: no gateway key'],
      [401, 'refused: revoked key'],
    ])
    expect(rows.find((r) => r.error === 'refused: revoked key')!.keyPrefix).toBe(issued.keyPrefix)
    expect(rows.find((r) => r.status === 400)!.keyPrefix).toBeNull()
    expect(logs.stdout).not.toContain(forged)
    expect(logs.stdout).not.toContain(issued.keyValue)
    const usage = json(await cli(['usage', '--status', '4xx', '--json']))
    expect(usage.totals).toMatchObject({requests: 3, errors: 3})
  })
})

describe('providers list', {timeout: 120_000}, () => {
  it('lists only the providers of the agent family, and marks providers added while running "pending restart"', async () => {
    const {cli} = setup()
    const add = (name: string, family: string) =>
      cli([
        'providers',
        'add',
        name,
        '--family',
        family,
        '--base-url',
        `http://${name}.test`,
        '--api-key-env',
        'K',
      ])
    expect((await add('msg-b', 'messages')).exitCode).toBe(0)
    expect((await add('chat-c', 'chat')).exitCode).toBe(0)
    for (const [family, target] of [
      ['messages', 'msg-b'],
      ['chat', 'chat-c'],
    ])
      expect(
        (await cli(['policies', 'route', 'claude_code_default', '--family', family, '--target', target]))
          .exitCode,
      ).toBe(0)
    expect((await cli(keyIssueArgs('laptop', 'claude_code'))).exitCode).toBe(0)
    const stopped = json(await cli(['providers', 'list', 'laptop', '--json']))
    expect(stopped.providers.map((p: {name: string}) => p.name)).toEqual(['msg-b'])

    const port = await freePort()
    expect((await cli(['gateway', 'start', '--port', String(port)])).exitCode).toBe(0)
    const live = json(await cli(['providers', 'list', 'laptop', '--json']))
    expect(live.providers.map((p: {name: string}) => p.name)).toEqual(['msg-b'])

    expect((await add('late', 'chat')).exitCode).toBe(0)
    const table = await cli(['providers', 'list'])
    expect(table.stdout).toMatch(/^late\s+chat\s+http:\/\/late\.test\s.*pending restart \(added\)$/m)
    expect(table.stderr).toContain('gwctl gateway restart')
    expect((await cli(['gateway', 'restart', '--drain', '0'])).exitCode).toBe(0)
    const after = await cli(['providers', 'list'])
    expect(after.stdout).toMatch(/^late\s+chat\s/m)
    expect(after.stdout).not.toContain('pending restart')
  })
})

describe('what identifies an agent (name + employee)', {timeout: 120_000}, () => {
  it('re-issuing for an existing name without --employee-* rotates that agent; another kind is refused', async () => {
    const {cli} = setup()
    const first = json(
      await cli([
        ...keyIssueArgs('laptop', 'claude_code', {name: 'Ada', contact: 'ada@example.com'}),
        '--json',
      ]),
    )
    // the default employee (settings) is someone else: still the same agent
    await cli(['config', 'set', 'employee.name', 'Bob'])
    await cli(['config', 'set', 'employee.contact', 'bob@example.com'])
    await new Promise((r) => setTimeout(r, 5_100)) // one issue per agent per 5 s
    const again = await cli([
      'key',
      'issue',
      '--agent-name',
      'laptop',
      '--agent-type',
      'claude_code',
      '--json',
    ])
    expect(again.exitCode, again.stderr).toBe(0)
    expect(json(again)).toMatchObject({agentId: first.agentId, rotated: true})
    const agents = json(await cli(['agents', 'list', '--json']))
    expect(agents.agents ?? agents).toHaveLength(1)
    expect((await cli(['providers', 'list', 'laptop'])).exitCode).toBe(0)

    const other = await cli(['key', 'issue', '--agent-name', 'laptop', '--agent-type', 'codex'])
    expect(other.exitCode).toBe(2)
    expect(other.stderr).toContain('already exists as claude_code')
    expect(other.stderr).toContain('--agent-type claude_code')
  })
})
