/**
 * `gwctl agents enable/disable` end to end, in a temp HOME: what each binding writes, the exact
 * undo, a user's edit kept, the refusals, an interrupted change, and real traffic through the
 * gateway with the key the binding wrote.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {keyIssueArgs, killDaemon} from './helpers/gateway.js'
import {issueKey} from '../src/gateway/key-issue.js'
import {withState} from '../src/store/state.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  // last in, first out: a daemon is killed before its home (holding its pid file) is removed
  for (const c of cleanups.splice(0).reverse()) await c()
})

const CLAUDE = '{\r\n  // mine\r\n  "model":   "opus",\r\n  "env": { "FOO": "1" }\r\n}\r\n'
const CODEX =
  '# codex\nmodel = "gpt-5"  # pinned\nmodel_provider = "openai"\n\n[analytics]\nenabled = false\n'
const GEMINI_ENV = '# gemini\nexport GEMINI_API_KEY=user-key\n'

async function setup(options: {install?: Array<'claude' | 'codex' | 'gemini'>} = {}) {
  const t = tempHome()
  cleanups.push(t.cleanup)
  const user = join(t.home, 'user-home')
  const port = await freePort()
  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli(args, {home: t.home, env: {GWCTL_GATEWAY_PORT: String(port), ...env}})
  const paths = {
    claude: join(user, '.claude', 'settings.json'),
    codex: join(user, '.codex', 'config.toml'),
    geminiEnv: join(user, '.gemini', '.env'),
    geminiSettings: join(user, '.gemini', 'settings.json'),
  }
  const install = options.install ?? ['claude', 'codex', 'gemini']
  if (install.includes('claude')) {
    mkdirSync(join(user, '.claude'), {recursive: true})
    writeFileSync(paths.claude, CLAUDE, {mode: 0o640})
    chmodSync(paths.claude, 0o640)
  }
  if (install.includes('codex')) {
    mkdirSync(join(user, '.codex'), {recursive: true})
    writeFileSync(paths.codex, CODEX)
    chmodSync(paths.codex, 0o644)
  }
  if (install.includes('gemini')) {
    mkdirSync(join(user, '.gemini'), {recursive: true})
    writeFileSync(paths.geminiEnv, GEMINI_ENV)
    chmodSync(paths.geminiEnv, 0o644)
  }
  const state = () => JSON.parse(readFileSync(join(t.home, 'state.json'), 'utf8'))
  return {home: t.home, user, port, cli, paths, state}
}

describe('agents enable/disable', () => {
  it('an enable killed right after its key issue: the retry binds at once (same binding, no 5 s wait, no exit 2)', async () => {
    const {cli, paths, home, state} = await setup({install: ['claude']})
    expect((await cli(['config', 'set', 'employee.name', 'A'])).exitCode).toBe(0)
    expect((await cli(['config', 'set', 'employee.contact', 'a@b.c'])).exitCode).toBe(0)
    // what the killed enable got done: its retry token on disk, then the key issued with it for
    // the agent enable uses (the key went to no one), nothing written
    const token = 'c0ffee'.padEnd(32, '0')
    mkdirSync(join(home, 'bindings'), {recursive: true})
    writeFileSync(join(home, 'bindings', 'claude-code.enable'), token, {mode: 0o600})
    await withState(
      (store) =>
        issueKey(store.data, {
          employeeName: 'A',
          employeeContact: 'a@b.c',
          agentName: 'claude-code',
          agentType: 'claude_code',
          sourceTool: 'claude-code',
          configPath: paths.claude,
          retryToken: token,
        }),
      join(home, 'state.json'),
    )
    const orphan = state().keys[0].id
    // another client is still held to one key per agent per 5 s
    const other = await cli(keyIssueArgs('claude-code', 'claude_code'))
    expect(other.exitCode).toBe(2)
    expect(other.stderr).toContain('less than 5 seconds ago')
    const started = Date.now()
    const r = await cli(['agents', 'enable', 'claude-code', '--json'])
    const took = Date.now() - started
    expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    expect(json(r)).toMatchObject({tool: 'claude-code', outcome: 'bound', keyIssued: true})
    expect(took).toBeLessThan(4000)
    expect(readFileSync(paths.claude, 'utf8')).toContain('"ANTHROPIC_AUTH_TOKEN": "gw-')
    // the key nobody held is revoked; the token is gone with the finished binding
    const keys = state().keys as Array<{id: string; revokedAt?: number}>
    expect(keys.filter((k) => k.revokedAt === undefined).map((k) => k.id)).toEqual([json(r).keyId])
    expect(keys.find((k) => k.id === orphan)?.revokedAt).toBeDefined()
    expect(existsSync(join(home, 'bindings', 'claude-code.enable'))).toBe(false)
  }, 60_000)

  it('a key issued by another client less than 5 s ago: enable waits out the rule (not exempt), no exit 2', async () => {
    const {cli, paths} = await setup({install: ['claude']})
    expect((await cli(['config', 'set', 'employee.name', 'A'])).exitCode).toBe(0)
    expect((await cli(['config', 'set', 'employee.contact', 'a@b.c'])).exitCode).toBe(0)
    expect((await cli(keyIssueArgs('claude-code', 'claude_code'))).exitCode).toBe(0)
    const issuedAt = Date.now()
    const r = await cli(['agents', 'enable', 'claude-code', '--json'])
    expect(r.exitCode, r.stdout + r.stderr).toBe(0)
    expect(Date.now() - issuedAt).toBeGreaterThanOrEqual(5000)
    expect(json(r)).toMatchObject({tool: 'claude-code', outcome: 'bound', keyIssued: true})
    expect(readFileSync(paths.claude, 'utf8')).toContain('"ANTHROPIC_AUTH_TOKEN": "gw-')
  }, 60_000)

  it('a bound file that holds the key is 0600 while bound; its mode comes back on disable', async () => {
    const {cli, paths} = await setup({install: ['claude']})
    chmodSync(paths.claude, 0o644)
    expect((await cli(['agents', 'enable', 'claude-code'])).exitCode).toBe(0)
    expect(statSync(paths.claude).mode & 0o777).toBe(0o600)
    expect((await cli(['agents', 'disable', 'claude-code'])).exitCode).toBe(0)
    expect(statSync(paths.claude).mode & 0o777).toBe(0o644)
    expect(readFileSync(paths.claude, 'utf8')).toBe(CLAUDE)
  }, 60_000)

  it('writes what each agent reads, and disable puts every file back byte for byte', async () => {
    const {cli, paths, port, state, home} = await setup()
    for (const agent of ['claude-code', 'codex', 'gemini-cli']) {
      const r = await cli(['agents', 'enable', agent, '--json'])
      expect(r.exitCode, r.stderr).toBe(0)
      expect(json(r)).toMatchObject({tool: agent, outcome: 'bound', port, keyIssued: true})
    }
    const base = `http://127.0.0.1:${port}`
    const claude = readFileSync(paths.claude, 'utf8')
    const claudeKey = /"ANTHROPIC_AUTH_TOKEN": "(gw-[^"]+)"/.exec(claude)?.[1]
    expect(claude).toContain(`"ANTHROPIC_BASE_URL": "${base}"`)
    expect(claude.startsWith('{\r\n  // mine\r\n  "model":   "opus",\r\n')).toBe(true)
    // it holds the gateway key: this user's only while bound (issue 29, item 6); 0640 again after
    expect(statSync(paths.claude).mode & 0o777).toBe(0o600)
    expect(statSync(paths.geminiEnv).mode & 0o777).toBe(0o600)
    expect(statSync(paths.codex).mode & 0o777).toBe(0o600)
    const codex = readFileSync(paths.codex, 'utf8')
    expect(codex).toContain('model = "gpt-5"  # pinned\nmodel_provider = "gwctl"\n')
    expect(codex).toContain(
      `[model_providers.gwctl]\nname = "gwctl gateway"\nbase_url = "${base}/v1"\nwire_api = "responses"\n`,
    )
    expect(readFileSync(paths.geminiEnv, 'utf8')).toMatch(
      new RegExp(`^# gemini\\nexport GEMINI_API_KEY=gw-\\w+\\nGOOGLE_GEMINI_BASE_URL=${base}\\n$`),
    )
    expect(JSON.parse(readFileSync(paths.geminiSettings, 'utf8'))).toEqual({
      security: {auth: {selectedType: 'gemini-api-key'}},
    })
    expect(statSync(paths.geminiSettings).mode & 0o777).toBe(0o600)
    // gwctl's own state never holds a key: only hashes of the files that do
    expect(readFileSync(join(home, 'state.json'), 'utf8')).not.toContain(claudeKey)
    expect(state().bindings.map((b: any) => [b.tool, b.phase])).toEqual([
      ['claude-code', 'bound'],
      ['codex', 'bound'],
      ['gemini-cli', 'bound'],
    ])

    const list = json(await cli(['agents', 'list', '--json'])).agents
    expect(list.map((a: any) => [a.name, a.discovered, a.binding.state])).toEqual([
      ['claude-code', true, 'stale'],
      ['codex', true, 'stale'],
      ['gemini-cli', true, 'stale'],
    ])
    expect(list[0].binding.problems).toEqual([
      {problem: 'the gateway is not running (the agent gets connection refused)', fix: 'gwctl gateway start'},
    ])
    expect(list[0]).toMatchObject({
      scanned: false,
      configPath: paths.claude,
      keyPrefix: expect.stringMatching(/^gw-/),
    })

    const again = await cli(['agents', 'enable', 'codex'])
    expect(again.exitCode).toBe(0)
    expect(again.stdout).toContain('codex is already bound')

    const off = await cli(['agents', 'disable', '--all'])
    expect(off.exitCode, off.stderr).toBe(0)
    expect(off.stdout).toContain(
      'claude-code unbound: its config is byte-identical to before gwctl (key revoked).',
    )
    expect(readFileSync(paths.claude, 'utf8')).toBe(CLAUDE)
    expect(statSync(paths.claude).mode & 0o777).toBe(0o640)
    expect(readFileSync(paths.codex, 'utf8')).toBe(CODEX)
    expect(statSync(paths.codex).mode & 0o777).toBe(0o644)
    expect(readFileSync(paths.geminiEnv, 'utf8')).toBe(GEMINI_ENV)
    expect(statSync(paths.geminiEnv).mode & 0o777).toBe(0o644)
    expect(() => statSync(paths.geminiSettings)).toThrow() // gwctl created it: gone
    expect(state().bindings).toEqual([])
    expect(state().keys.every((k: any) => typeof k.revokedAt === 'number')).toBe(true)
  }, 90_000)

  it("Claude Code on a route that does not start at Anthropic's API: auto mode classified locally while bound, said, undone exactly", async () => {
    const {cli, paths} = await setup({install: ['claude']})
    const add = await cli(
      ['providers', 'add', 'glm', '--family', 'chat', '--base-url', 'https://open.bigmodel.cn/api/paas/v4'],
      {},
    )
    expect(add.exitCode, add.stderr).toBe(0)
    const route = await cli([
      'policies',
      'route',
      'claude_code_default',
      '--family',
      'messages',
      '--target',
      'glm:glm-5.3',
      '--translate',
    ])
    expect(route.exitCode, route.stderr).toBe(0)
    const on = await cli(['agents', 'enable', 'claude-code'])
    expect(on.exitCode, on.stderr).toBe(0)
    expect(on.stdout).toContain(
      "  auto mode: classified locally (CLAUDE_CODE_AUTO_MODE_SERVER=0: the route does not start at Anthropic's API)",
    )
    const bound = readFileSync(paths.claude, 'utf8')
    expect(bound.startsWith('{\r\n  // mine\r\n  "model":   "opus",\r\n')).toBe(true)
    expect(bound).toMatch(/"FOO": "1",[\s\S]*"CLAUDE_CODE_AUTO_MODE_SERVER": "0"/)

    // the route moves to Anthropic's API: the command says what to run, and that run takes it out
    const back = await cli(
      ['policies', 'route', 'claude_code_default', '--family', 'messages', '--target', 'anthropic'],
      {
        ANTHROPIC_API_KEY: 'sk-ant-test',
      },
    )
    expect(back.exitCode, back.stderr).toBe(0)
    expect(back.stderr).toContain(
      'run `gwctl agents enable claude-code` so that its auto mode asks Anthropic',
    )
    const again = await cli(['agents', 'enable', 'claude-code'])
    expect(again.stdout).toContain('claude-code rebound')
    expect(again.stdout).not.toContain('auto mode')
    expect(readFileSync(paths.claude, 'utf8')).not.toContain('CLAUDE_CODE_AUTO_MODE_SERVER')

    const off = await cli(['agents', 'disable', 'claude-code'])
    expect(off.exitCode, off.stderr).toBe(0)
    expect(readFileSync(paths.claude, 'utf8')).toBe(CLAUDE)
  }, 60_000)

  it('keeps a user edit made while bound and restores the value gwctl replaced', async () => {
    const {cli, paths} = await setup({install: ['codex', 'claude']})
    expect((await cli(['agents', 'enable', 'codex'])).exitCode).toBe(0)
    writeFileSync(paths.codex, readFileSync(paths.codex, 'utf8') + '\n[profiles.fast]\nmodel = "o4"\n')
    expect((await cli(['agents', 'enable', 'claude-code'])).exitCode).toBe(0)
    const claude = readFileSync(paths.claude, 'utf8').replace('"model":   "opus"', '"model":   "sonnet"')
    writeFileSync(paths.claude, claude)

    const r = await cli(['agents', 'disable', 'codex', '--keep-key'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toContain(
      "codex unbound: you changed its config since, so only gwctl's entries were removed (key kept).",
    )
    expect(r.stdout).toContain('model_provider = "openai" restored')
    expect(readFileSync(paths.codex, 'utf8')).toBe(CODEX + '\n[profiles.fast]\nmodel = "o4"\n')

    expect((await cli(['agents', 'disable', 'claude-code'])).exitCode).toBe(0)
    const after = readFileSync(paths.claude, 'utf8')
    expect(after.startsWith('{\r\n  // mine\r\n  "model":   "sonnet",\r\n')).toBe(true)
    expect(JSON.parse(after.replace('// mine', ''))).toEqual({model: 'sonnet', env: {FOO: '1'}})
  }, 90_000)

  it('refuses unknown and missing agents (7) and broken configs (3) without writing anything', async () => {
    const {cli, paths, user, home} = await setup({install: ['claude', 'codex']})
    const unknown = await cli(['agents', 'enable', 'cursor'])
    expect(unknown.exitCode).toBe(7)
    expect(unknown.stderr).toContain(
      'Unknown agent "cursor". Agents gwctl can bind: claude-code, codex, gemini-cli, opencode, qwen-code.',
    )
    const missing = await cli(['agents', 'enable', 'gemini-cli'])
    expect(missing.exitCode).toBe(7)
    expect(missing.stderr).toContain(
      `gemini-cli is not installed for this user: ${join(user, '.gemini')} does not exist`,
    )
    writeFileSync(paths.codex, 'model = "x"\n[broken\n')
    const broken = await cli(['agents', 'enable', 'codex'])
    expect(broken.exitCode).toBe(3)
    expect(broken.stderr).toContain(`${paths.codex} does not parse`)
    expect(readFileSync(paths.codex, 'utf8')).toBe('model = "x"\n[broken\n')
    const notBound = await cli(['agents', 'disable', 'claude-code'])
    expect(notBound.exitCode).toBe(7)
    expect(() => statSync(join(home, 'state.json'))).toThrow() // no key was issued, nothing recorded
  }, 90_000)

  it('keeps vendor keys and MCP tokens of the original files out of state.json (issue 29, item 6)', async () => {
    const {cli, paths, home, state} = await setup({install: ['claude', 'gemini']})
    const SECRET = 'sk-ant-test-secret-123'
    const MCP = 'mcp-token-test-456'
    const GEMINI_SECRET = 'AIza-test-secret-789'
    const claude =
      '{\n  "env": {"ANTHROPIC_API_KEY": "' +
      SECRET +
      '", "FOO": "1"},\n' +
      '  "mcpServers": {"docs": {"url": "https://mcp.example", "headers": {"Authorization": "Bearer ' +
      MCP +
      '"}}}\n}\n'
    const geminiEnv = `export GEMINI_API_KEY=${GEMINI_SECRET}\n`
    writeFileSync(paths.claude, claude)
    writeFileSync(paths.geminiEnv, geminiEnv)
    const stateText = () => readFileSync(join(home, 'state.json'), 'utf8')
    // the secrets, and every string of the state decoded as base64, must not show up
    const assertClean = () => {
      const text = stateText()
      const strings: string[] = []
      const walk = (v: unknown): void => {
        if (typeof v === 'string') strings.push(v)
        else if (v && typeof v === 'object') Object.values(v).forEach(walk)
      }
      walk(JSON.parse(text))
      for (const secret of [SECRET, MCP, GEMINI_SECRET]) {
        expect(text).not.toContain(secret)
        expect(text).not.toContain(Buffer.from(secret).toString('base64').slice(0, 20))
        for (const v of strings) expect(Buffer.from(v, 'base64').toString('latin1')).not.toContain(secret)
      }
      expect(text).not.toContain(Buffer.from(claude).toString('base64').slice(0, 24))
    }
    const backups = () => (existsSync(join(home, 'bindings')) ? readdirSync(join(home, 'bindings')) : [])

    const claudeBound = await cli(['agents', 'enable', 'claude-code'])
    expect(claudeBound.exitCode).toBe(0)
    expect(claudeBound.stderr).not.toContain('folder you trust')
    const geminiBound = await cli(['agents', 'enable', 'gemini-cli'])
    expect(geminiBound.exitCode).toBe(0)
    // Gemini CLI skips ~/.gemini/.env in a folder not trusted: `gemini -p` there reads no key
    expect(geminiBound.stderr).toContain(
      'Gemini CLI reads ~/.gemini/.env only in a folder you trust: trust it when `gemini` asks, or for `gemini -p` in a new folder pass --skip-trust (or set GEMINI_CLI_TRUST_WORKSPACE=true).',
    )
    assertClean()
    expect(readFileSync(paths.claude, 'utf8')).not.toContain(SECRET) // taken out while bound
    // the originals are in 0600 backups beside the state, named by their hash
    expect(backups().sort()).toEqual(
      state()
        .bindings.flatMap((b: any) => b.files.map((f: any) => f.originalHash))
        .filter((h: string) => h !== 'absent')
        .map((h: string) => `${h}.orig`)
        .sort(),
    )
    for (const b of backups()) expect(statSync(join(home, 'bindings', b)).mode & 0o777).toBe(0o600)

    // a kill between "file written" and "state marked bound" still settles to the exact undo
    const s = state()
    s.bindings[0].phase = 'binding'
    s.bindings[0].files[0].pendingHash = s.bindings[0].files[0].writtenHash
    s.bindings[0].files[0].writtenHash = null
    writeFileSync(join(home, 'state.json'), JSON.stringify(s), {mode: 0o600})
    const off = await cli(['agents', 'disable', 'claude-code'])
    expect(off.exitCode, off.stderr).toBe(0)
    expect(readFileSync(paths.claude, 'utf8')).toBe(claude)
    assertClean()
    expect(backups()).toHaveLength(1) // gemini's .env still bound

    // a state written before the backups (base64 originals) still undoes exactly, and the next
    // enable moves the original out of the state
    const legacy = state()
    for (const f of legacy.bindings[0].files) {
      f.original =
        f.originalHash === 'absent'
          ? null
          : readFileSync(join(home, 'bindings', `${f.originalHash}.orig`)).toString('base64')
      delete f.originalHash
    }
    writeFileSync(join(home, 'state.json'), JSON.stringify(legacy), {mode: 0o600})
    rmSync(join(home, 'bindings'), {recursive: true})
    expect(stateText()).toContain(Buffer.from(geminiEnv).toString('base64'))
    await new Promise((r) => setTimeout(r, 5_100)) // one issue per agent per 5 s
    const rotated = await cli(['agents', 'enable', 'gemini-cli', '--rotate'])
    expect(rotated.exitCode, rotated.stderr).toBe(0)
    assertClean()
    expect((await cli(['agents', 'disable', 'gemini-cli'])).exitCode).toBe(0)
    expect(readFileSync(paths.geminiEnv, 'utf8')).toBe(geminiEnv)
    expect(backups()).toEqual([]) // removed once no binding refers to them
    expect(state().bindings).toEqual([])
  }, 90_000)

  it('settles a change interrupted after the file was written (kill -9) from the file hashes', async () => {
    const {cli, paths, home, state} = await setup({install: ['claude']})
    expect((await cli(['agents', 'enable', 'claude-code'])).exitCode).toBe(0)
    // what a kill between "file written" and "state marked bound" leaves behind
    const s = state()
    s.bindings[0].phase = 'binding'
    s.bindings[0].files[0].pendingHash = s.bindings[0].files[0].writtenHash
    s.bindings[0].files[0].writtenHash = null
    writeFileSync(join(home, 'state.json'), JSON.stringify(s), {mode: 0o600})
    const list = json(await cli(['agents', 'list', '--json'])).agents
    expect(list[0].binding).toMatchObject({
      state: 'stale',
      problems: [{problem: 'an enable was interrupted', fix: 'gwctl agents enable claude-code'}],
    })
    const off = await cli(['agents', 'disable', 'claude-code'])
    expect(off.exitCode, off.stderr).toBe(0)
    expect(readFileSync(paths.claude, 'utf8')).toBe(CLAUDE)
  }, 90_000)

  it('enable says when the gateway is stopped, or runs with no provider for the agent (its requests would get 503)', async () => {
    const {cli, home} = await setup({install: ['claude', 'codex']})
    cleanups.push(() => killDaemon(home))
    // no gateway yet: the agent would get "connection refused", and is told so
    const early = await cli(['agents', 'enable', 'codex'])
    expect(early.exitCode).toBe(0)
    expect(early.stderr).toContain(
      'The gateway is not running: start it with `gwctl gateway start` (until then codex gets "connection refused").',
    )
    // the quick start's first try: no --sim, no vendor key, nothing configured
    expect((await cli(['gateway', 'start'])).exitCode).toBe(0)
    const bare = await cli(['agents', 'enable', 'claude-code'])
    expect(bare.exitCode).toBe(0)
    expect(bare.stderr).toContain(
      "warning: policy claude_code_default has no provider for messages requests, so the gateway answers claude-code's requests 503.",
    )
    expect(bare.stderr).toContain('`gwctl gateway restart --sim`')
    expect(json(await cli(['agents', 'enable', 'codex', '--json'])).tool).toBe('codex')
    // with a provider for its route, nothing to say
    expect((await cli(['gateway', 'restart', '--sim'])).exitCode).toBe(0)
    const routed = await cli(['agents', 'enable', 'claude-code'])
    expect(routed.exitCode, routed.stderr).toBe(0)
    expect(routed.stdout).toContain('already bound')
    expect(routed.stderr).not.toContain('warning')
  })

  it('routes the bound agent through a running gateway; rotation and port changes make bindings stale', async () => {
    const {cli, paths, port, home} = await setup({install: ['claude']})
    cleanups.push(() => killDaemon(home))
    expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
    expect((await cli(['agents', 'enable', 'claude-code'])).exitCode).toBe(0)
    const settings = () => JSON.parse(readFileSync(paths.claude, 'utf8').replace(/\/\/ mine/, ''))
    const send = (key: string) =>
      fetch(`http://127.0.0.1:${port}/v1/messages`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          model: 'claude-sim',
          max_tokens: 16,
          messages: [{role: 'user', content: 'hi'}],
        }),
      })
    expect(settings().env.ANTHROPIC_BASE_URL).toBe(`http://127.0.0.1:${port}`)
    const key = settings().env.ANTHROPIC_AUTH_TOKEN as string
    const ok = await send(key)
    expect(ok.status, await ok.clone().text()).toBe(200)
    await ok.arrayBuffer()
    const agents = json(await cli(['agents', 'list', '--json'])).agents
    expect(agents[0]).toMatchObject({
      name: 'claude-code',
      binding: {state: 'bound', port},
      lastSeenAt: expect.any(Number),
    })
    expect((await cli(['doctor', '--json'])).stdout).toContain('bound: claude-code')
    // the running gateway's status counts the binding (read from the state file beside the daemon)
    expect(json(await cli(['status', '--json'])).localAgents).toMatchObject({bound: 1, stale: []})

    // a key issued meanwhile (rotation outside the binding) leaves the config with a dead key
    await new Promise((r) => setTimeout(r, 5_100)) // one issue per agent per 5 s
    const rotated = await cli(['agents', 'enable', 'claude-code', '--rotate', '--json'])
    expect(rotated.exitCode, rotated.stderr).toBe(0)
    expect(json(rotated)).toMatchObject({outcome: 'rebound', keyIssued: true})
    expect((await send(key)).status).toBe(401)
    const newKey = settings().env.ANTHROPIC_AUTH_TOKEN as string
    expect(newKey).not.toBe(key)

    // the gateway moved to another port: status and doctor name the binding and its fix
    expect((await cli(['gateway', 'stop'])).exitCode).toBe(0)
    const moved = {GWCTL_GATEWAY_PORT: String(port + 1)}
    const stale = await cli(['status'], moved)
    expect(stale.stderr).toContain(
      `Stale binding of claude-code: its config points at port ${port}, the gateway uses ${port + 1}. Fix: gwctl agents enable claude-code`,
    )
    expect(stale.stderr).toContain('Fix: gwctl gateway start')
    const doctor = json(await cli(['doctor', '--json'], moved))
    expect(doctor.checks.find((c: any) => c.id === 'bindings')).toMatchObject({ok: false})
    expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)

    expect((await cli(['agents', 'disable', 'claude-code'])).exitCode).toBe(0)
    expect((await send(newKey)).status).toBe(401)
  }, 120_000)
})
