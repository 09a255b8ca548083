/**
 * `gwctl run AGENT -- ARGS` end to end, with stand-in agents: small Node programs named `claude`,
 * `codex` and `gemini` on PATH that record what they were started with and send one real request
 * to the gateway the way each real agent does (the real CLIs run in `npm run test:agents -- --run`).
 * Checked: the request reaches the gateway under the agent's name, no file of the user's changes
 * (also when the run is killed), the key is reused and never in argv, the exit status and signals
 * pass through, and the refusals.
 */
import {createHash} from 'node:crypto'
import {chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {execa} from 'execa'
import {afterEach, describe, expect, it} from 'vitest'

import {BIN, ROOT, cliEnv, freePort, json, runCli, tempHome} from './helpers/cli.js'
import {killDaemon} from './helpers/gateway.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** The stand-in agent: records its start, asks the gateway once, prints the status, exits. */
const FAKE_AGENT = `
import {writeFileSync, appendFileSync, readFileSync} from 'node:fs'
const tool = process.env.FAKE_TOOL
const args = process.argv.slice(2)
const env = process.env
const record = {tool, args, cwd: process.cwd(), env: {}}
for (const k of ['ANTHROPIC_BASE_URL', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_API_KEY', 'GWCTL_GATEWAY_KEY', 'GOOGLE_GEMINI_BASE_URL', 'GEMINI_API_KEY', 'CLAUDE_CODE_AUTO_COMPACT_WINDOW', 'CLAUDE_CODE_AUTO_MODE_SERVER', 'GEMINI_CLI_SYSTEM_DEFAULTS_PATH'])
  if (env[k] !== undefined) record.env[k] = env[k]
// the system defaults Gemini CLI would read, as it runs
try { record.systemDefaults = readFileSync(env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH, 'utf8') } catch {}
let url, headers = {'content-type': 'application/json'}, body
if (tool === 'claude') {
  url = env.ANTHROPIC_BASE_URL + '/v1/messages'
  headers.authorization = 'Bearer ' + env.ANTHROPIC_AUTH_TOKEN
  headers['anthropic-version'] = '2023-06-01'
  body = {model: 'claude-sonnet-4-5', max_tokens: 16, stream: true, messages: [{role: 'user', content: 'hi'}]}
} else if (tool === 'codex') {
  // what Codex makes of its -c overrides: model_provider names a table with base_url and env_key
  const c = {}
  for (let i = 0; i < args.length - 1; i++) if (args[i] === '-c') { const [k, v] = args[i + 1].split(/=(.*)/s); c[k] = JSON.parse(v) }
  const p = 'model_providers.' + c.model_provider
  url = c[p + '.base_url'] + '/responses'
  headers.authorization = 'Bearer ' + env[c[p + '.env_key']]
  record.wire = c[p + '.wire_api']
  body = {model: 'gpt-5', input: 'hi', stream: true}
} else {
  url = env.GOOGLE_GEMINI_BASE_URL + '/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse'
  headers['x-goog-api-key'] = env.GEMINI_API_KEY
  body = {contents: [{role: 'user', parts: [{text: 'hi'}]}]}
}
record.tty = {stdin: Boolean(process.stdin.isTTY), stdout: Boolean(process.stdout.isTTY)}
const res = await fetch(url, {method: 'POST', headers, body: JSON.stringify(body)})
const text = await res.text()
record.status = res.status
writeFileSync(env.FAKE_OUT, JSON.stringify(record))
process.stdout.write('agent says ' + res.status + (res.status === 200 ? '' : ' ' + text.slice(0, 300)) + '\\n')
if (env.FAKE_WAIT) {
  process.on('SIGTERM', () => { appendFileSync(env.FAKE_OUT + '.signals', 'SIGTERM\\n'); process.exit(143) })
  process.on('SIGINT', () => { appendFileSync(env.FAKE_OUT + '.signals', 'SIGINT\\n'); process.exit(130) })
  writeFileSync(env.FAKE_OUT + '.ready', '')
  process.stdout.write('agent ready\\n')
  setInterval(() => {}, 1000)
} else process.exit(Number(env.FAKE_EXIT ?? 0))
`

async function setup() {
  const t = tempHome()
  cleanups.push(t.cleanup)
  const user = join(t.home, 'user-home')
  const bin = join(t.home, 'bin')
  mkdirSync(bin, {recursive: true})
  writeFileSync(join(bin, 'fake-agent.mjs'), FAKE_AGENT)
  for (const name of ['claude', 'codex', 'gemini']) {
    writeFileSync(
      join(bin, name),
      `#!/bin/sh\nFAKE_TOOL=${name} exec node "${join(bin, 'fake-agent.mjs')}" "$@"\n`,
    )
    chmodSync(join(bin, name), 0o755)
  }
  // each agent installed, with settings of its own (gemini selecting API-key auth, as runs need)
  const files: Record<string, string> = {
    '.claude/settings.json': '{\n  // mine\n  "model": "opus"\n}\n',
    '.codex/config.toml': 'model = "gpt-5"\nmodel_provider = "openai"\n',
    '.gemini/settings.json': '{"security":{"auth":{"selectedType":"gemini-api-key"}}}\n',
    '.gemini/.env': 'GEMINI_API_KEY=users-own-key\n',
  }
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(user, rel, '..'), {recursive: true})
    writeFileSync(join(user, rel), text, {mode: 0o644})
  }
  const port = await freePort()
  const work = join(t.home, 'work')
  mkdirSync(work)
  const out = join(t.home, 'agent.json')
  const env = {
    GWCTL_GATEWAY_PORT: String(port),
    PATH: `${bin}:${process.env.PATH}`,
    FAKE_OUT: out,
    // a vendor key in the caller's environment must not reach the gateway
    ANTHROPIC_API_KEY: 'sk-ant-vendor-secret',
  }
  const cli = (args: string[], extra: Record<string, string> = {}) =>
    runCli(args, {home: t.home, env: {...env, ...extra}})
  cleanups.push(() => killDaemon(t.home))
  const hashes = () =>
    Object.fromEntries(
      Object.keys(files).map((rel) => [
        rel,
        createHash('sha256')
          .update(readFileSync(join(user, rel)))
          .digest('hex') + statSync(join(user, rel)).mode.toString(8),
      ]),
    )
  const agentRecord = () => JSON.parse(readFileSync(out, 'utf8'))
  return {home: t.home, user, work, port, env, cli, out, hashes, agentRecord}
}

async function started(s: Awaited<ReturnType<typeof setup>>) {
  const r = await s.cli(['gateway', 'start', '--sim'])
  expect(r.exitCode, r.stderr).toBe(0)
}

describe('gwctl run', () => {
  it('refuses with exit 6 while the gateway is stopped, and starts nothing', async () => {
    const s = await setup()
    const r = await s.cli(['run', 'claude-code', '--', '-p', 'hi'])
    expect(r.exitCode).toBe(6)
    expect(r.stderr).toContain('The gateway is not running')
    expect(r.stderr).toContain('--start')
    expect(existsSync(s.out)).toBe(false)
  })

  it.each([
    ['claude-code', 'claude', 'messages'],
    ['codex', 'codex', 'responses'],
    ['gemini-cli', 'gemini', 'gemini'],
  ])(
    '%s: the agent reaches the gateway under its own name, its files untouched',
    async (tool, exe, entrance) => {
      const s = await setup()
      await started(s)
      const before = s.hashes()
      const r = await s.cli(['run', tool, '--', 'first', '--flag', 'two words'])
      expect(r.exitCode, r.stderr).toBe(0)
      // the agent's stdout is gwctl's stdout, untouched; gwctl's one line is on stderr
      expect(r.stdout).toBe('agent says 200\n')
      expect(r.stderr).toMatch(
        new RegExp(
          `gwctl: ${tool} through the gateway at http://127\\.0\\.0\\.1:${s.port}: agent ${tool}, a key issued now gw`,
        ),
      )
      const rec = s.agentRecord()
      expect(rec.status).toBe(200)
      // the user's arguments come last, in order
      expect(rec.args.slice(-3)).toEqual(['first', '--flag', 'two words'])
      // the key never in argv (which `ps` shows every local user)
      expect(JSON.stringify(rec.args)).not.toMatch(/gw[-_][A-Za-z0-9]{20}/)
      if (exe === 'claude') {
        expect(rec.env.ANTHROPIC_BASE_URL).toBe(`http://127.0.0.1:${s.port}`)
        expect(rec.env.ANTHROPIC_API_KEY).toBeUndefined()
      }
      if (exe === 'codex') expect(rec.wire).toBe('responses')
      if (exe === 'gemini') expect(rec.env.GEMINI_API_KEY).not.toBe('users-own-key')
      const agents = json(await s.cli(['agents', 'list', '--json'])).agents as Array<{
        agentId: string
        name: string
      }>
      const agentId = agents.find((a) => a.name === tool)?.agentId
      const rows = json(await s.cli(['logs', '--json', '--limit', '5'])).logs as Array<{
        agentId: string
        entrance: string
        status: number
      }>
      const row = rows.find((x) => x.agentId === agentId)
      expect(row, JSON.stringify(rows)).toBeDefined()
      expect(row!.entrance).toBe(entrance)
      expect(row!.status).toBe(200)
      expect(s.hashes()).toEqual(before)
    },
  )

  it("reuses the agent name's key, keeps it 0600, and issues a new one for another policy", async () => {
    const s = await setup()
    await started(s)
    const first = await s.cli(['run', 'codex', '--', 'a'])
    expect(first.exitCode, first.stderr).toBe(0)
    const key1 = s.agentRecord().env.GWCTL_GATEWAY_KEY
    const second = await s.cli(['run', 'codex', '--', 'b'])
    expect(second.exitCode, second.stderr).toBe(0)
    expect(second.stderr).toContain('its run key')
    expect(s.agentRecord().env.GWCTL_GATEWAY_KEY).toBe(key1)
    const file = join(s.home, 'run-keys.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    // a named agent of its own, under another policy
    const other = await s.cli([
      'run',
      'codex',
      '--agent-name',
      'review-bot',
      '--policy',
      'default',
      '--',
      'c',
    ])
    expect(other.exitCode, other.stderr).toBe(0)
    expect(other.stderr).toContain('agent review-bot')
    expect(s.agentRecord().env.GWCTL_GATEWAY_KEY).not.toBe(key1)
    const agents = json(await s.cli(['agents', 'list', '--json'])).agents as Array<{name: string}>
    const names = agents.map((a) => a.name)
    expect(names).toEqual(expect.arrayContaining(['codex', 'review-bot']))
    // a policy that does not exist: refused before anything starts
    const none = await s.cli(['run', 'codex', '--policy', 'nope', '--', 'd'])
    expect(none.exitCode).toBe(7)
    expect(none.stderr).toContain('No policy "nope"')
  })

  it('tells the agent the context window its upstream stated, so that it compacts in time', async () => {
    const s = await setup()
    // a translated route for each, to chat models whose windows the simulator holds small
    for (const [family, model] of [
      ['messages', 'sim-reasoner+context-128k'],
      ['responses', 'sim-reasoner+context-4k'],
    ]) {
      const route = await s.cli([
        'policies',
        'route',
        'small',
        '--family',
        family,
        '--target',
        `sim-chat:${model}`,
        '--translate',
      ])
      expect(route.exitCode, route.stderr).toBe(0)
    }
    await started(s)
    const ask = async (path: string, key: string, body: Record<string, unknown>) => {
      const res = await fetch(`http://127.0.0.1:${s.port}${path}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
        },
        body: JSON.stringify(body),
      })
      await res.text()
    }

    // Claude Code: nothing known on its first run; the upstream refuses a completion past its
    // window of 131 072 tokens; the next run is told it (Claude Code 2.1.3xx assumes up to 1 000 000)
    const first = await s.cli(['run', 'claude-code', '--policy', 'small', '--', 'a'])
    expect(first.exitCode, first.stderr).toBe(0)
    expect(first.stderr).not.toContain('compacts in time')
    expect(s.agentRecord().env.CLAUDE_CODE_AUTO_COMPACT_WINDOW).toBeUndefined()
    // a route that is not Anthropic's API: Claude Code's auto mode told not to ask it for its
    // classifier's verdicts (no other server answers them); the user's own setting stands
    expect(s.agentRecord().env.CLAUDE_CODE_AUTO_MODE_SERVER).toBe('0')
    await s.cli(['run', 'claude-code', '--policy', 'small', '--', 'a'], {CLAUDE_CODE_AUTO_MODE_SERVER: '1'})
    expect(s.agentRecord().env.CLAUDE_CODE_AUTO_MODE_SERVER).toBe('1')
    const claudeKey = s.agentRecord().env.ANTHROPIC_AUTH_TOKEN
    await ask('/v1/messages', claudeKey, {
      model: 'claude-x',
      max_tokens: 200_000,
      messages: [{role: 'user', content: 'hi'}],
    })
    const told = await s.cli(['run', 'claude-code', '--policy', 'small', '--', 'b'])
    expect(told.exitCode, told.stderr).toBe(0)
    expect(told.stderr).toContain(
      'sim-chat sim-reasoner+context-128k holds 131,072 tokens (its refusal said so): CLAUDE_CODE_AUTO_COMPACT_WINDOW set',
    )
    expect(s.agentRecord().env.CLAUDE_CODE_AUTO_COMPACT_WINDOW).toBe('131072')
    // the user's own setting stands
    const own = await s.cli(['run', 'claude-code', '--policy', 'small', '--', 'c'], {
      CLAUDE_CODE_AUTO_COMPACT_WINDOW: '150000',
    })
    expect(own.stderr).not.toContain('compacts in time')
    expect(s.agentRecord().env.CLAUDE_CODE_AUTO_COMPACT_WINDOW).toBe('150000')
    // and so does a window chosen in Claude Code's settings (`/autocompact` writes autoCompactWindow)
    const settings = join(s.user, '.claude/settings.json')
    const before = readFileSync(settings, 'utf8')
    writeFileSync(settings, '{"autoCompactWindow": 150000}\n')
    const chosen = await s.cli(['run', 'claude-code', '--policy', 'small', '--', 'd'])
    expect(chosen.exitCode, chosen.stderr).toBe(0)
    expect(chosen.stderr).not.toContain('compacts in time')
    expect(s.agentRecord().env.CLAUDE_CODE_AUTO_COMPACT_WINDOW).toBeUndefined()
    writeFileSync(settings, before)

    // Codex: its window and the usage it compacts at (90 %), as -c overrides after the provider's
    await s.cli(['run', 'codex', '--policy', 'small', '--', 'a'])
    expect(s.agentRecord().args).not.toContain('model_context_window=4096')
    await ask('/v1/responses', s.agentRecord().env.GWCTL_GATEWAY_KEY, {
      model: 'gpt-5',
      input: 'hi',
      max_output_tokens: 10_000,
    })
    const codex = await s.cli(['run', 'codex', '--policy', 'small', '--', 'exec', 'b'])
    expect(codex.exitCode, codex.stderr).toBe(0)
    expect(codex.stderr).toContain('holds 4,096 tokens')
    const args: string[] = s.agentRecord().args
    // the user's own arguments come after them (a -c of theirs wins)
    expect(args.slice(-6)).toEqual([
      '-c',
      'model_context_window=4096',
      '-c',
      'model_auto_compact_token_limit=3686',
      'exec',
      'b',
    ])
    // a window of the user's own in config.toml stands
    writeFileSync(join(s.user, '.codex/config.toml'), 'model = "gpt-5"\nmodel_context_window = 3000\n')
    const theirs = await s.cli(['run', 'codex', '--policy', 'small', '--', 'c'])
    expect(theirs.stderr).not.toContain('compacts in time')
    expect(s.agentRecord().args).not.toContain('model_context_window=4096')
  })

  it("tells Gemini CLI the window through system defaults of the run's own, removed after; its own settings stand", async () => {
    const s = await setup()
    const route = await s.cli([
      'policies',
      'route',
      'small',
      '--family',
      'gemini',
      '--target',
      'sim-chat:sim-reasoner+context-128k',
      '--translate',
    ])
    expect(route.exitCode, route.stderr).toBe(0)
    await started(s)
    // no system settings of this machine's: the test's own paths
    const system = {
      GEMINI_CLI_SYSTEM_SETTINGS_PATH: join(s.home, 'etc', 'settings.json'),
      GEMINI_CLI_SYSTEM_DEFAULTS_PATH: join(s.home, 'etc', 'system-defaults.json'),
    }
    const before = s.hashes()
    const first = await s.cli(['run', 'gemini-cli', '--policy', 'small', '--', 'a'], system)
    expect(first.exitCode, first.stderr).toBe(0)
    expect(first.stderr).not.toContain('compresses in time')
    expect(s.agentRecord().env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH).toBe(system.GEMINI_CLI_SYSTEM_DEFAULTS_PATH)
    // the upstream refuses a completion past its window of 131 072 tokens, which the gateway keeps
    const res = await fetch(`http://127.0.0.1:${s.port}/v1beta/models/gemini-2.5-pro:generateContent`, {
      method: 'POST',
      headers: {'x-goog-api-key': s.agentRecord().env.GEMINI_API_KEY, 'content-type': 'application/json'},
      body: JSON.stringify({
        contents: [{role: 'user', parts: [{text: 'hi'}]}],
        generationConfig: {maxOutputTokens: 200_000},
      }),
    })
    await res.text()

    // told: 80 % of 131 072 is 0.1 of the 1 048 576 it assumes, in a file of the run's own
    const told = await s.cli(['run', 'gemini-cli', '--policy', 'small', '--', 'b'], system)
    expect(told.exitCode, told.stderr).toBe(0)
    expect(told.stderr).toContain(
      'sim-chat sim-reasoner+context-128k holds 131,072 tokens (its refusal said so): model.compressionThreshold 0.1 set, so it compacts in time',
    )
    const record = s.agentRecord()
    const file: string = record.env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH
    expect(file).not.toBe(system.GEMINI_CLI_SYSTEM_DEFAULTS_PATH)
    expect(JSON.parse(record.systemDefaults)).toEqual({model: {compressionThreshold: 0.1}})
    expect(existsSync(dirname(file))).toBe(false)

    // run with a Gemma 4 model (its -m, or GEMINI_MODEL), for which it assumes 256 000: the part
    // of that (0.8 x 131 072 / 256 000 = 0.409)
    for (const [args, env] of [
      [['-m', 'gemma-4-31b-it', 'b'], {}],
      [['b'], {GEMINI_MODEL: 'gemma-4-26b-a4b-it'}],
    ] as const) {
      const gemma = await s.cli(['run', 'gemini-cli', '--policy', 'small', '--', ...args], {
        ...system,
        ...env,
      })
      expect(gemma.exitCode, gemma.stderr).toBe(0)
      expect(gemma.stderr).toContain('model.compressionThreshold 0.409 set')
      expect(JSON.parse(s.agentRecord().systemDefaults)).toEqual({model: {compressionThreshold: 0.409}})
    }

    // the user's own system defaults: kept in it, the key added
    mkdirSync(join(s.home, 'etc'))
    writeFileSync(
      system.GEMINI_CLI_SYSTEM_DEFAULTS_PATH,
      '{\n  // ours\n  "ui": {"theme": "Dracula"}, "model": {"name": "x"}\n}\n',
    )
    await s.cli(['run', 'gemini-cli', '--policy', 'small', '--', 'c'], system)
    expect(JSON.parse(s.agentRecord().systemDefaults)).toEqual({
      ui: {theme: 'Dracula'},
      model: {name: 'x', compressionThreshold: 0.1},
    })
    expect(readFileSync(system.GEMINI_CLI_SYSTEM_DEFAULTS_PATH, 'utf8')).toContain('// ours')

    // a threshold chosen in any of its settings files (here the system's) stands: nothing told
    writeFileSync(system.GEMINI_CLI_SYSTEM_SETTINGS_PATH, '{"model": {"compressionThreshold": 0.3}}\n')
    const own = await s.cli(['run', 'gemini-cli', '--policy', 'small', '--', 'd'], system)
    expect(own.exitCode, own.stderr).toBe(0)
    expect(own.stderr).not.toContain('compacts in time')
    expect(s.agentRecord().env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH).toBe(system.GEMINI_CLI_SYSTEM_DEFAULTS_PATH)
    expect(s.hashes()).toEqual(before)
  })

  it("returns the agent's exit code unchanged", async () => {
    const s = await setup()
    await started(s)
    const r = await s.cli(['run', 'claude', '--quiet', '--', 'x'], {FAKE_EXIT: '42'})
    expect(r.exitCode).toBe(42)
    expect(r.stderr).toBe('')
  })

  it('forwards SIGTERM to the agent, ends as it ended, and leaves every file as it was (also after kill -9)', async () => {
    const s = await setup()
    await started(s)
    const before = s.hashes()
    const child = execa('node', [BIN, 'run', 'gemini-cli', '--', 'long'], {
      env: cliEnv(s.home, {...s.env, FAKE_WAIT: '1'}),
      extendEnv: true,
      reject: false,
      stdin: 'ignore',
    })
    for (let i = 0; i < 200 && !existsSync(`${s.out}.ready`); i++) await new Promise((r) => setTimeout(r, 50))
    expect(existsSync(`${s.out}.ready`)).toBe(true)
    child.kill('SIGTERM')
    const r = await child
    expect(readFileSync(`${s.out}.signals`, 'utf8')).toBe('SIGTERM\n')
    expect(r.exitCode).toBe(143)
    expect(s.hashes()).toEqual(before)

    // kill -9 of gwctl itself: nothing of the user's was ever written, so nothing is half-written
    const again = execa('node', [BIN, 'run', 'claude-code', '--', 'long'], {
      env: cliEnv(s.home, {...s.env, FAKE_WAIT: '1', FAKE_OUT: `${s.out}2`}),
      extendEnv: true,
      reject: false,
      stdin: 'ignore',
    })
    for (let i = 0; i < 200 && !existsSync(`${s.out}2.ready`); i++)
      await new Promise((r) => setTimeout(r, 50))
    again.kill('SIGKILL')
    for (let i = 0; i < 100 && again.exitCode === undefined && again.signalCode === undefined; i++)
      await new Promise((r) => setTimeout(r, 20))
    expect(s.hashes()).toEqual(before)
    // the orphaned stand-in still waits (holding the pipes the result waits for): end it
    const pids = readdirSync('/proc').filter((p) => /^\d+$/.test(p))
    for (const pid of pids) {
      try {
        if (readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`FAKE_OUT=${s.out}2\0`))
          process.kill(Number(pid), 'SIGKILL')
      } catch {
        // gone, or not ours
      }
    }
    const killed = await again
    expect(killed.signal).toBe('SIGKILL')
  }, 60_000)

  it('gives the agent the terminal, and a Ctrl-C typed there reaches it once', async () => {
    const s = await setup()
    await started(s)
    const r = await execa(
      'python3',
      [
        join(ROOT, 'test/helpers/run-in-pty.py'),
        'agent ready',
        '\x03',
        'node',
        BIN,
        'run',
        'claude-code',
        '--',
        'x',
      ],
      {env: cliEnv(s.home, {...s.env, FAKE_WAIT: '1'}), extendEnv: true, reject: false},
    )
    const result = JSON.parse(r.stdout) as {exit: number; output: string}
    expect(result.output).toContain('agent ready')
    expect(s.agentRecord().tty).toEqual({stdin: true, stdout: true})
    // the terminal sent SIGINT to the whole foreground group: gwctl does not send a second one
    expect(readFileSync(`${s.out}.signals`, 'utf8')).toBe('SIGINT\n')
    expect(result.exit).toBe(130)
  })

  it("uses a bound agent's own key, and refuses what the binding makes impossible", async () => {
    const s = await setup()
    await started(s)
    const bound = await s.cli(['agents', 'enable', 'claude-code'])
    expect(bound.exitCode, bound.stderr).toBe(0)
    const settings = JSON.parse(
      readFileSync(join(s.user, '.claude/settings.json'), 'utf8').replace(/\/\/.*\n/, ''),
    )
    const before = s.hashes()
    const r = await s.cli(['run', 'claude-code', '--', 'x'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).toContain("its bound config's key")
    expect(s.agentRecord().env.ANTHROPIC_AUTH_TOKEN).toBe(settings.env.ANTHROPIC_AUTH_TOKEN)
    expect(s.hashes()).toEqual(before)
    const named = await s.cli(['run', 'claude-code', '--agent-name', 'other', '--', 'x'])
    expect(named.exitCode).toBe(2)
    expect(named.stderr).toContain('applies it over the environment')
    const policy = await s.cli(['run', 'claude-code', '--policy', 'default', '--', 'x'])
    expect(policy.exitCode).toBe(2)
    expect(policy.stderr).toContain('agents enable claude-code --policy default')
    // the binding still works: no key was issued behind its back
    const status = await s.cli(['status'])
    expect(status.stdout).not.toContain('stale')
  })

  it('refuses an agent whose own settings would send the run elsewhere (exit 3, nothing sent)', async () => {
    const s = await setup()
    await started(s)
    writeFileSync(
      join(s.user, '.claude/settings.json'),
      '{"env": {"ANTHROPIC_BASE_URL": "https://proxy.example"}}\n',
    )
    const claude = await s.cli(['run', 'claude-code', '--', 'x'])
    expect(claude.exitCode).toBe(3)
    expect(claude.stderr).toContain('sets env.ANTHROPIC_BASE_URL')
    writeFileSync(
      join(s.user, '.gemini/settings.json'),
      '{"security":{"auth":{"selectedType":"oauth-personal"}}}\n',
    )
    const gemini = await s.cli(['run', 'gemini', '--', 'x'])
    expect(gemini.exitCode).toBe(3)
    expect(gemini.stderr).toContain('selects "oauth-personal"')
    expect(gemini.stderr).toContain('gwctl agents enable gemini-cli')
    expect(existsSync(s.out)).toBe(false)
  })

  it('starts the gateway as it last ran with --start; usage errors exit 2 or 7', async () => {
    const s = await setup()
    // stopped after a `--sim` start: --start starts it as it last ran (the app's S), and says how
    await started(s)
    expect((await s.cli(['gateway', 'stop'])).exitCode).toBe(0)
    const r = await s.cli(['run', 'codex', '--start', '--', 'x'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stderr).toContain('(started now: gwctl gateway start --sim)')
    expect(s.agentRecord().wire).toBe('responses')
    expect(s.agentRecord().status).toBe(200)
    const noDash = await s.cli(['run', 'codex', 'exec'])
    expect(noDash.exitCode).toBe(2)
    expect(noDash.stderr).toContain('go after --')
    const unknown = await s.cli(['run', 'cursor', '--', 'x'])
    expect(unknown.exitCode).toBe(7)
    const missing = await s.cli(['run', 'codex', '--', 'x'], {PATH: dirname(process.execPath)})
    expect(missing.exitCode).toBe(7)
    expect(missing.stderr).toContain('codex (codex) is not on PATH')
  })
})
