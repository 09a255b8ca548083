import {chmodSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import type {Server} from 'node:net'
import {createServer} from 'node:net'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {withState} from '../src/store/state.js'
import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {alive, daemonPid, killDaemon, keyIssueArgs} from './helpers/gateway.js'

/** Every daemon a test started, killed in afterEach even when the test failed. */
const started: Array<{home: string}> = []
const cleanups: Array<() => void> = []
const servers: Server[] = []

afterEach(async () => {
  for (const {home} of started.splice(0)) await killDaemon(home)
  for (const s of servers.splice(0)) s.close()
  for (const c of cleanups.splice(0)) c()
})

async function setup() {
  const t = tempHome()
  cleanups.push(t.cleanup)
  started.push({home: t.home})
  const port = await freePort()
  const env = {GWCTL_GATEWAY_PORT: String(port)}
  const cli = (args: string[], extra: Record<string, string> = {}) =>
    runCli(args, {home: t.home, env: {...env, ...extra}})
  const base = `http://127.0.0.1:${port}`
  return {home: t.home, port, base, cli}
}

const person = {employeeName: 'Ada', employeeContact: 'ada@example.com'}

async function issueHttp(base: string, agentName: string, agentType = 'codex') {
  const res = await fetch(`${base}/api/keys/issue`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify({...person, agentName, agentType}),
  })
  return {status: res.status, body: (await res.json()) as any}
}

async function useKey(base: string, key: string): Promise<number> {
  const res = await fetch(`${base}/v1/responses`, {
    method: 'POST',
    headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
    body: JSON.stringify({model: 'm', input: 'hi'}),
  })
  await res.arrayBuffer()
  return res.status
}

async function listenOn(port: number): Promise<Server> {
  const server = createServer()
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
  return server
}

// Each test spawns several CLI processes and daemons: generous bounds on a loaded machine.
describe('gateway lifecycle', {timeout: 120_000}, () => {
  it('starts detached, refuses a second start, reports its state, stops, and restarts with keys intact', async () => {
    const {home, port, base, cli} = await setup()
    const stopped = json(await cli(['gateway', '--json']))
    expect(stopped).toMatchObject({state: 'Stopped', port, pid: null})

    const start = await cli(['gateway', 'start'])
    expect(start.exitCode, start.stderr).toBe(0)
    expect(start.stdout).toContain(`Gateway running at ${base}`)
    const pid = daemonPid(home)!
    expect(alive(pid)).toBe(true)
    expect(await (await fetch(`${base}/health`)).json()).toMatchObject({status: 'ok'})

    const state = json(await cli(['gateway', '--json']))
    expect(state).toMatchObject({state: 'Running', pid, port, version: expect.any(String)})
    expect(state.uptimeSeconds).toBeGreaterThanOrEqual(0)
    const human = await cli(['gateway'])
    expect(human.stdout).toMatch(/state:\s+Running/)

    const twice = await cli(['gateway', 'start'])
    expect(twice.exitCode).toBe(2)
    expect(twice.stderr).toContain(`already running (pid ${pid}`)

    const key = (await issueHttp(base, 'laptop')).body.keyValue as string
    const restart = await cli(['gateway', 'restart'])
    expect(restart.exitCode, restart.stderr).toBe(0)
    const newPid = daemonPid(home)!
    expect(newPid).not.toBe(pid)
    expect(alive(pid)).toBe(false)
    expect(await useKey(base, key)).toBe(503)

    const stop = await cli(['gateway', 'stop'])
    expect(stop.stdout).toContain(`Gateway stopped (pid ${newPid})`)
    expect(alive(newPid)).toBe(false)
    expect(existsSync(join(home, 'gateway.pid'))).toBe(false)
    expect(json(await cli(['gateway', '--json'])).state).toBe('Stopped')
    const log = readFileSync(join(home, 'gateway.log'), 'utf8')
    expect(log).toContain('listening on')
    expect(log).not.toContain(key)
  })

  it('loads policies saved at run time on restart, and its own saves keep them meanwhile', async () => {
    const {home, cli, base} = await setup()
    expect((await cli(['gateway', 'start'])).exitCode).toBe(0)
    const saved = process.env.GWCTL_HOME
    process.env.GWCTL_HOME = home
    try {
      // another process (a policy editor) saves a policy under the lock while the daemon runs
      await withState(
        (store) => {
          store.data.policies.push({...store.data.policies[0], id: 'team'})
        },
        join(home, 'state.json'),
      )
    } finally {
      if (saved === undefined) delete process.env.GWCTL_HOME
      else process.env.GWCTL_HOME = saved
    }
    const issue = (agentName: string) =>
      fetch(`${base}/api/keys/issue`, {
        method: 'POST',
        headers: {'content-type': 'application/json'},
        body: JSON.stringify({...person, agentName, agentType: 'codex', policyId: 'team'}),
      })
    const before = await issue('a')
    expect(before.status).toBe(400) // not loaded yet
    expect(((await before.json()) as any).error.message).toContain('Unknown policyId "team"')
    expect((await issueHttp(base, 'b')).status).toBe(200) // the daemon writes the state meanwhile
    expect(
      JSON.parse(readFileSync(join(home, 'state.json'), 'utf8')).policies.map((p: any) => p.id),
    ).toContain('team')

    expect((await cli(['gateway', 'restart'])).exitCode).toBe(0)
    const after = await issue('a')
    expect(after.status).toBe(200)
    expect(((await after.json()) as any).policyId).toBe('team')
  })

  it('detects a stale pid file after kill -9 and starts again', async () => {
    const {home, cli, base} = await setup()
    expect((await cli(['gateway', 'start'])).exitCode).toBe(0)
    const key = (await issueHttp(base, 'laptop')).body.keyValue as string
    const pid = daemonPid(home)!
    process.kill(pid, 'SIGKILL')
    while (alive(pid)) await new Promise((r) => setTimeout(r, 20))
    const state = json(await cli(['gateway', '--json']))
    expect(state).toMatchObject({state: 'Stopped', stalePidFile: true})
    const again = await cli(['gateway', 'start'])
    expect(again.exitCode, again.stderr).toBe(0)
    expect(daemonPid(home)).not.toBe(pid)
    expect(await useKey(base, key)).toBe(503)
  })

  it('names the process holding a taken port instead of starting', async () => {
    const {port, cli} = await setup()
    await listenOn(port)
    const r = await cli(['gateway', 'start', '--json'])
    expect(r.exitCode).toBe(2)
    const error = json(r).error
    expect(error.code).toBe('port_in_use')
    expect(error.message).toContain(`Port ${port}`)
    expect(error.message).toContain(`pid ${process.pid}`)
  })
})

describe('gwctl key issue', {timeout: 120_000}, () => {
  it('issues through the running daemon (works at once), rotates, and refuses a repeat within 5 s', async () => {
    const {cli, base, home} = await setup()
    expect((await cli(['gateway', 'start'])).exitCode).toBe(0)
    const args = keyIssueArgs('laptop', 'claude_code', {name: 'Ada', contact: 'ada@example.com'})
    const r = await cli(args)
    expect(r.exitCode, r.stderr).toBe(0)
    const m = /^keyValue: (gw-[0-9A-Za-z]{46})\n$/.exec(r.stdout)
    expect(m).not.toBeNull()
    const key = m![1]
    const res = await fetch(`${base}/v1/messages`, {
      method: 'POST',
      headers: {'x-api-key': key, 'content-type': 'application/json'},
      body: '{"model":"m","max_tokens":1,"messages":[]}',
    })
    expect(res.status).toBe(503)
    expect(((await res.json()) as any).error.message).toContain('claude_code_default')

    const repeat = await cli([...args, '--json'])
    expect(repeat.exitCode).toBe(2)
    expect(json(repeat).error.code).toBe('rate_limited')
    expect(readFileSync(join(home, 'state.json'), 'utf8')).not.toContain(key)
  })

  it('writes the state file under the lock when the daemon is stopped; defaults employee fields from settings', async () => {
    const {cli, base, home} = await setup()
    await cli(['config', 'set', 'employee.name', 'Grace'])
    await cli(['config', 'set', 'employee.contact', 'grace@example.com'])
    const r = await cli(['key', 'issue', '--agent-name', 'ci', '--agent-type', 'generic_agent', '--json'])
    expect(r.exitCode, r.stderr).toBe(0)
    const issued = json(r)
    expect(issued).toMatchObject({
      via: 'state-file',
      policyId: 'default',
      keyPrefix: issued.keyValue.slice(0, 9) + '…',
    })
    const text = readFileSync(join(home, 'state.json'), 'utf8')
    expect(text).not.toContain(issued.keyValue)
    expect(JSON.parse(text).employees[0]).toMatchObject({name: 'Grace', contact: 'grace@example.com'})

    const agents = json(await cli(['agents', 'list', '--json']))
    expect(agents.agents[0]).toMatchObject({
      agentId: issued.agentId,
      keyPrefix: issued.keyPrefix,
      enabled: false,
    })
    expect(json(await cli(['agents', 'list', '--enabled', '--json'])).agents).toEqual([])

    expect((await cli(['gateway', 'start'])).exitCode).toBe(0)
    expect(await useKey(base, issued.keyValue)).toBe(503)
  })

  it('defaults the employee to git user.name / user.email when flags and settings are absent', async () => {
    const {cli} = await setup()
    const r = await cli(['key', 'issue', '--agent-name', 'x', '--agent-type', 'gemini_cli', '--json'], {
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'user.name',
      GIT_CONFIG_VALUE_0: 'Git Person',
      GIT_CONFIG_KEY_1: 'user.email',
      GIT_CONFIG_VALUE_1: 'git@example.com',
    })
    expect(r.exitCode, r.stderr).toBe(0)
    const agents = json(await cli(['agents', 'list', '--json']))
    expect(agents.agents[0].employee).toMatchObject({name: 'Git Person', contact: 'git@example.com'})
    expect(agents.agents[0].route.family).toBe('gemini')
  })

  it('refuses a sub-agent kind without a parent before sending anything', async () => {
    const {cli} = await setup()
    const r = await cli(keyIssueArgs('x', 'codex_subagent'))
    expect(r.exitCode).toBe(2)
    expect(r.stderr).toContain('parentAgentId')
  })
})

describe('crash safety', {timeout: 120_000}, () => {
  it('survives kill -9 during 100 concurrent issue calls: the state parses and every key answered 200 authenticates', async () => {
    const {cli, base, home} = await setup()
    expect((await cli(['gateway', 'start'])).exitCode).toBe(0)
    const pid = daemonPid(home)!
    const keys: string[] = []
    let failed = 0
    let killed = false
    await Promise.all(
      Array.from({length: 100}, async (_, i) => {
        try {
          const r = await issueHttp(base, `agent-${i}`)
          if (r.status === 200) {
            keys.push(r.body.keyValue)
            if (keys.length === 30 && !killed) {
              killed = true
              process.kill(pid, 'SIGKILL')
            }
          } else failed++
        } catch {
          failed++ // the connection died with the daemon
        }
      }),
    )
    while (alive(pid)) await new Promise((r) => setTimeout(r, 20))
    expect(keys.length).toBeGreaterThanOrEqual(30)
    expect(keys.length + failed).toBe(100)

    const state = JSON.parse(readFileSync(join(home, 'state.json'), 'utf8'))
    expect(state.version).toBe(1)
    const doctor = await cli(['doctor', '--json'])
    expect(json(doctor).checks.find((c: any) => c.id === 'state').ok).toBe(true)

    const again = await cli(['gateway', 'start'])
    expect(again.exitCode, again.stderr).toBe(0)
    const statuses = await Promise.all(keys.map((k) => useKey(base, k)))
    expect(statuses.filter((s) => s !== 503)).toEqual([])
  })
})

describe('key issue on a policy that routes nowhere for the kind', {timeout: 120_000}, () => {
  it('warns (exit 0, stdout only the key) when the running gateway has no provider for its family', async () => {
    const {cli} = await setup()
    const add = ['providers', 'add', 'corp', '--family', 'messages', '--base-url', 'http://127.0.0.1:9']
    expect((await cli([...add, '--api-key-env', 'CORP_KEY'])).exitCode).toBe(0)
    expect(
      (await cli(['policies', 'route', 'team', '--family', 'messages', '--target', 'corp'])).exitCode,
    ).toBe(0)
    // stopped: the state file is written and not judged (the default routes are made at start)
    const early = await cli([...keyIssueArgs('early', 'gemini_cli'), '--policy-id', 'team'])
    expect([early.exitCode, early.stderr.includes('warning')]).toEqual([0, false])
    expect((await cli(['gateway', 'start'])).exitCode).toBe(0)

    const routed = await cli([...keyIssueArgs('cc', 'claude_code'), '--policy-id', 'team'])
    expect(routed.exitCode).toBe(0)
    expect(routed.stderr).not.toContain('warning')
    const gemini = await cli([...keyIssueArgs('gm', 'gemini_cli'), '--policy-id', 'team'])
    expect(gemini.exitCode).toBe(0)
    expect(gemini.stdout).toMatch(/^keyValue: gw-\S+\n$/)
    expect(gemini.stderr).toContain(
      "warning: policy team has no provider for gemini requests, which a gemini_cli agent sends: the gateway answers each of this key's requests 503.",
    )
    const codex = json(await cli([...keyIssueArgs('cx', 'codex'), '--policy-id', 'team', '--json']))
    expect(codex.warnings).toEqual([
      expect.stringContaining('policy team has no provider for responses requests'),
    ])
  })
})

describe('doctor: a routed provider whose key variable the gateway lacks', {timeout: 120_000}, () => {
  it('fails (exit 3) naming the variable and where to set it, and passes once the gateway has it', async () => {
    const {cli} = await setup()
    const add = ['providers', 'add', 'ds', '--family', 'chat', '--base-url', 'http://127.0.0.1:9']
    expect((await cli([...add, '--api-key-env', 'GWCTL_TEST_DS_KEY'])).exitCode).toBe(0)
    expect((await cli(['policies', 'route', 'team', '--family', 'chat', '--target', 'ds'])).exitCode).toBe(0)
    const check = async (extra: Record<string, string> = {}) => {
      const r = await cli(['doctor', '--json'], extra)
      return {exitCode: r.exitCode, ...json(r).checks.find((c: {id: string}) => c.id === 'credentials')}
    }
    // stopped: the shell `gateway start` would pass on
    expect(await check()).toMatchObject({
      exitCode: 3,
      ok: false,
      detail: expect.stringContaining('not set in this shell'),
      hint: expect.stringContaining('`gwctl gateway start`'),
    })
    expect((await cli(['gateway', 'start'])).exitCode).toBe(0)
    // running: the gateway's own environment, whatever this shell has now (its default routes
    // of chat go to the one chat provider too)
    expect(await check({GWCTL_TEST_DS_KEY: 'k'})).toMatchObject({
      exitCode: 3,
      ok: false,
      detail:
        "not set in the running gateway's environment: ds (GWCTL_TEST_DS_KEY, policies default, claude_code_default, team): each request routed to it fails (502)",
      hint: expect.stringContaining('`export GWCTL_TEST_DS_KEY=...`, then `gwctl gateway restart`'),
    })
    expect((await cli(['gateway', 'restart'], {GWCTL_TEST_DS_KEY: 'k'})).exitCode).toBe(0)
    expect(await check()).toMatchObject({ok: true})
  })
})

describe('status and doctor', {timeout: 120_000}, () => {
  it('status --quiet exits 6 when stopped and 0 when running, printing nothing', async () => {
    const {cli} = await setup()
    const down = await cli(['status', '--quiet'])
    expect(down).toMatchObject({exitCode: 6, stdout: '', stderr: ''})
    const downJson = await cli(['status', '--json'])
    expect(downJson.exitCode).toBe(6)
    expect(json(downJson)).toMatchObject({healthy: false, gateway: {state: 'Stopped'}})

    expect((await cli(['gateway', 'start'])).exitCode).toBe(0)
    await cli(keyIssueArgs('a', 'codex'))
    const up = await cli(['status', '--quiet'])
    expect(up).toMatchObject({exitCode: 0, stdout: '', stderr: ''})
    // --quiet is the cheap liveness check with --json too: its answer, not the whole snapshot
    const upJson = await cli(['status', '--quiet', '--json'])
    expect(upJson.exitCode).toBe(0)
    expect(Object.keys(json(upJson))).toEqual(['healthy', 'gateway'])
    expect(json(upJson).gateway).toMatchObject({
      state: 'Running',
      port: expect.any(Number),
      pid: expect.any(Number),
    })
    const snapshot = json(await cli(['status', '--json']))
    expect(snapshot).toMatchObject({
      healthy: true,
      gateway: {state: 'Running'},
      agents: {discovered: 1, enabled: 0},
      agentsPerRoute: [{route: 'default/responses -> (no provider)', agents: 1}],
    })
    const human = await cli(['status'])
    expect(human.stdout).toMatch(/gateway:\s+Running/)
  })

  it('doctor passes on a healthy home and fails on a corrupted state file and on a taken port', async () => {
    const {cli, home, port} = await setup()
    await cli(['config', 'set', 'employee.name', 'Ada'])
    await cli(['key', 'issue', '--agent-name', 'a', '--agent-type', 'codex', '--employee-contact', 'a@b.c'])
    const ok = await cli(['doctor'])
    expect(ok.exitCode, ok.stdout).toBe(0)
    expect(ok.stdout).toContain('All checks passed.')

    writeFileSync(join(home, 'state.json'), '{"version":1,"secret":', {mode: 0o600})
    const corrupt = await cli(['doctor'])
    expect(corrupt.exitCode).toBe(3)
    expect(corrupt.stdout).toMatch(/FAIL\s+Gateway state file.*not JSON/)
    expect(corrupt.stdout).toContain('fix: ')
    const startCorrupt = await cli(['gateway', 'start'])
    expect(startCorrupt.exitCode).toBe(3)
    expect(startCorrupt.stderr).toContain('not valid')

    await listenOn(port)
    const taken = json(await cli(['doctor', '--json']))
    expect(taken.ok).toBe(false)
    const portCheck = taken.checks.find((c: any) => c.id === 'port')
    expect(portCheck.ok).toBe(false)
    expect(portCheck.detail).toContain(`pid ${process.pid}`)
  })

  it('keeps every file private and writes no secret to its log, log database or any listing', async () => {
    const {home, base, cli} = await setup()
    const secret = 'sk-provider-secret-0001'
    const platformKey = 'sk-platform-secret-0002'
    // a log left 0644 by an older version is made private too
    writeFileSync(join(home, 'gateway.log'), '', {mode: 0o644})
    chmodSync(join(home, 'gateway.log'), 0o644)
    const add = await cli(
      [
        'providers',
        'add',
        'corp',
        '--family',
        'chat',
        '--base-url',
        'http://127.0.0.1:9/v1',
        '--api-key-stdin',
      ],
      {},
    )
    expect(add.exitCode).toBe(2) // no stdin: the key is required
    const added = await runCli(
      [
        'providers',
        'add',
        'corp',
        '--family',
        'chat',
        '--base-url',
        'http://127.0.0.1:9/v1',
        '--api-key-stdin',
        '--json',
      ],
      {home, input: secret},
    )
    expect(added.exitCode, added.stderr).toBe(0)
    await cli(['config', 'set', 'base-url', 'http://127.0.0.1:9/api/v1'])
    await cli(['config', 'set', 'api-key', platformKey])
    expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
    const issued = await cli(keyIssueArgs('a', 'gemini_cli'))
    const key = /keyValue: (\S+)/.exec(issued.stdout)![1]
    const gemini = {contents: [{role: 'user', parts: [{text: 'hi'}]}]}
    for (const [url, headers] of [
      [`${base}/v1beta/models/gemini-sim:generateContent?key=${key}`, {}],
      [`${base}/v1beta/models/gemini-sim:generateContent`, {'x-goog-api-key': key}],
      [`${base}/v1beta/models/gemini-sim:generateContent?key=${key}x`, {}],
      [`${base}/v1/chat/completions`, {authorization: `Bearer ${key}`}],
    ] as const) {
      const res = await fetch(url, {
        method: 'POST',
        headers: {'content-type': 'application/json', ...headers},
        body: JSON.stringify(gemini),
      })
      expect(await res.text()).not.toContain(key)
    }
    const outputs = await Promise.all(
      [
        ['providers', 'list'],
        ['providers', 'list', '--json'],
        ['agents', 'list', '--json'],
        ['logs', '--json'],
        ['usage', '--json'],
        ['dashboard', '--json'],
        ['config', 'list', '--json'],
        ['status', '--json'],
      ].map(async (args) => {
        const r = await cli(args)
        return r.stdout + r.stderr
      }),
    )
    for (const path of ['/api/providers', '/api/dashboard', '/api/agents', '/api/keys', '/api/logs'])
      outputs.push(await (await fetch(base + path)).text())
    expect((await cli(['gateway', 'stop'])).exitCode).toBe(0)

    const files = readdirSync(home)
    expect(files).toEqual(expect.arrayContaining(['gateway.log', 'logs.db', 'settings.json', 'state.json']))
    const modes = Object.fromEntries(
      files.map((f) => [f, (statSync(join(home, f)).mode & 0o777).toString(8)]),
    )
    expect(modes).toEqual(Object.fromEntries(files.map((f) => [f, '600'])))
    expect((statSync(home).mode & 0o777).toString(8)).toBe('700')
    const stored = files.filter((f) => f !== 'state.json' && f !== 'settings.json')
    const written = [...stored.map((f) => readFileSync(join(home, f)).toString('latin1')), ...outputs].join(
      '\n',
    )
    for (const value of [key, secret, platformKey]) expect(written).not.toContain(value)
    expect(readFileSync(join(home, 'state.json'), 'utf8')).not.toContain(key)
  })
})
