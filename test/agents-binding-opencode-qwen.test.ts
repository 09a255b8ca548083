/**
 * `gwctl agents enable/disable opencode|qwen-code` end to end, in a temp HOME: what each binding
 * writes into the agent's own config (comments, unknown keys and other providers kept), the
 * exact undo, a user's edit kept, the family OpenCode is bound through, and a request with the
 * written key through a running gateway.
 */
import {chmodSync, mkdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {parse as parseJsonc} from 'jsonc-parser'
import {afterEach, describe, expect, it} from 'vitest'

import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {killDaemon} from './helpers/gateway.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const OPENCODE =
  '{\r\n  // my OpenCode\r\n  "$schema": "https://opencode.ai/config.json",\r\n  "model": "anthropic/claude-sonnet-4-5",\r\n' +
  '  "theme": "tokyonight", /* keep */\r\n  "provider": {\r\n    "openrouter": {"options": {"apiKey": "sk-or-user"}},\r\n' +
  '    "anthropic": {"models": {"claude-sonnet-4-5": {"name": "Sonnet"}}}\r\n  },\r\n  "x-unknown": [1, 2]\r\n}\r\n'
const QWEN =
  '{\n  // my Qwen Code\n  "security": {"auth": {"selectedType": "qwen-oauth"}},\n  "env": {"FOO": "1"},\n  "ui": {"theme": "Default"}\n}\n'

async function setup() {
  const t = tempHome()
  cleanups.push(t.cleanup)
  const user = join(t.home, 'user-home')
  const port = await freePort()
  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli(args, {home: t.home, env: {GWCTL_GATEWAY_PORT: String(port), ...env}})
  const paths = {
    opencode: join(user, '.config', 'opencode', 'opencode.json'),
    qwen: join(user, '.qwen', 'settings.json'),
  }
  mkdirSync(join(user, '.config', 'opencode'), {recursive: true})
  writeFileSync(paths.opencode, OPENCODE)
  chmodSync(paths.opencode, 0o644)
  mkdirSync(join(user, '.qwen'), {recursive: true})
  writeFileSync(paths.qwen, QWEN)
  chmodSync(paths.qwen, 0o640)
  const state = () => JSON.parse(readFileSync(join(t.home, 'state.json'), 'utf8'))
  return {home: t.home, user, port, cli, paths, state}
}

const parse = (text: string) => parseJsonc(text) as any

describe('agents enable/disable opencode and qwen-code', () => {
  it('writes what each reads, keeps the rest, and disable puts both files back byte for byte', async () => {
    const {cli, paths, port, state, home} = await setup()
    const base = `http://127.0.0.1:${port}`
    for (const agent of ['opencode', 'qwen-code']) {
      const r = await cli(['agents', 'enable', agent, '--json'])
      expect(r.exitCode, r.stderr).toBe(0)
      expect(json(r)).toMatchObject({tool: agent, outcome: 'bound', port, keyIssued: true})
    }
    const opencode = readFileSync(paths.opencode, 'utf8')
    // only the span of the anthropic provider changed: comments, CRLF, other keys as they were
    expect(opencode.startsWith('{\r\n  // my OpenCode\r\n')).toBe(true)
    expect(opencode).toContain('"theme": "tokyonight", /* keep */\r\n')
    const oc = parse(opencode)
    expect(oc.provider.anthropic).toEqual({
      models: {'claude-sonnet-4-5': {name: 'Sonnet'}},
      options: {baseURL: `${base}/v1`, apiKey: expect.stringMatching(/^gw-/)},
    })
    expect(oc.provider.openrouter).toEqual({options: {apiKey: 'sk-or-user'}})
    expect(oc['x-unknown']).toEqual([1, 2])
    expect(oc.model).toBe('anthropic/claude-sonnet-4-5')
    const qwen = parse(readFileSync(paths.qwen, 'utf8'))
    expect(qwen).toEqual({
      security: {auth: {selectedType: 'openai'}},
      env: {FOO: '1', OPENAI_BASE_URL: `${base}/v1`, OPENAI_API_KEY: expect.stringMatching(/^gw-/)},
      ui: {theme: 'Default'},
    })
    expect(readFileSync(paths.qwen, 'utf8').startsWith('{\n  // my Qwen Code\n')).toBe(true)
    // both hold a key: this user's only while bound
    expect(statSync(paths.opencode).mode & 0o777).toBe(0o600)
    expect(statSync(paths.qwen).mode & 0o777).toBe(0o600)
    expect(readFileSync(join(home, 'state.json'), 'utf8')).not.toContain(qwen.env.OPENAI_API_KEY)

    const list = json(await cli(['agents', 'list', '--all', '--json'])).agents
    const byName = Object.fromEntries(list.map((a: any) => [a.name, a]))
    expect(Object.keys(byName)).toEqual(expect.arrayContaining(['opencode', 'qwen-code']))
    expect(byName.opencode).toMatchObject({
      type: 'opencode',
      discovered: true,
      configPath: paths.opencode,
      binding: {state: 'stale', port, family: 'messages'},
    })
    expect(byName['qwen-code']).toMatchObject({
      type: 'qwen_code',
      binding: {state: 'stale'},
      route: {family: 'chat'},
    })
    expect(byName['qwen-code'].binding.problems).toEqual([
      {problem: 'the gateway is not running (the agent gets connection refused)', fix: 'gwctl gateway start'},
    ])

    const off = await cli(['agents', 'disable', '--all'])
    expect(off.exitCode, off.stderr).toBe(0)
    expect(off.stdout).toContain(
      'opencode unbound: its config is byte-identical to before gwctl (key revoked).',
    )
    expect(readFileSync(paths.opencode, 'utf8')).toBe(OPENCODE)
    expect(statSync(paths.opencode).mode & 0o777).toBe(0o644)
    expect(readFileSync(paths.qwen, 'utf8')).toBe(QWEN)
    expect(statSync(paths.qwen).mode & 0o777).toBe(0o640)
    expect(state().bindings).toEqual([])
  }, 90_000)

  it("binds OpenCode through its chosen model's provider; a user edit while bound is kept", async () => {
    const {cli, paths, port} = await setup()
    const base = `http://127.0.0.1:${port}`
    writeFileSync(paths.opencode, '{\n  "model": "google/gemini-2.5-pro"\n}\n')
    expect((await cli(['agents', 'enable', 'opencode'])).exitCode).toBe(0)
    expect(parse(readFileSync(paths.opencode, 'utf8')).provider.google.options.baseURL).toBe(`${base}/v1beta`)
    const listed = json(await cli(['agents', 'list', '--all', '--json'])).agents.find(
      (a: any) => a.name === 'opencode',
    )
    expect(listed.binding.family).toBe('gemini')
    const table = await cli(['agents', 'list', '--all'])
    expect(table.stdout).toMatch(/opencode .*stale \(gemini\): the gateway is not running/)
    // the user adds a setting while bound: disable removes only gwctl's entries (and the objects it made)
    writeFileSync(paths.opencode, readFileSync(paths.opencode, 'utf8').replace('{\n', '{\n  "theme": "x",\n'))
    const r = await cli(['agents', 'disable', 'opencode'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toContain("only gwctl's entries were removed")
    expect(readFileSync(paths.opencode, 'utf8')).toBe(
      '{\n  "theme": "x",\n  "model": "google/gemini-2.5-pro"\n}\n',
    )

    // Qwen Code: the auth type it replaced comes back after a user edit
    expect((await cli(['agents', 'enable', 'qwen-code'])).exitCode).toBe(0)
    writeFileSync(paths.qwen, readFileSync(paths.qwen, 'utf8').replace('"FOO": "1"', '"FOO": "2"'))
    const q = await cli(['agents', 'disable', 'qwen-code'])
    expect(q.exitCode, q.stderr).toBe(0)
    // (a surgical restore: the values are the user's, the env object is laid out by the editor)
    const after = readFileSync(paths.qwen, 'utf8')
    expect(
      after.startsWith('{\n  // my Qwen Code\n  "security": {"auth": {"selectedType": "qwen-oauth"}},\n'),
    ).toBe(true)
    expect(parse(after)).toEqual({...parse(QWEN), env: {FOO: '2'}})
  }, 90_000)

  it('a bound Qwen Code key and URL reach the gateway and are logged for its agent', async () => {
    const {cli, paths, port, home} = await setup()
    cleanups.push(() => killDaemon(home))
    expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
    const enabled = json(await cli(['agents', 'enable', 'qwen-code', '--json']))
    const {env} = parse(readFileSync(paths.qwen, 'utf8'))
    // what Qwen Code sends with these settings (OpenAI SDK: POST <OPENAI_BASE_URL>/chat/completions)
    const res = await fetch(`${env.OPENAI_BASE_URL}/chat/completions`, {
      method: 'POST',
      headers: {authorization: `Bearer ${env.OPENAI_API_KEY}`, 'content-type': 'application/json'},
      body: JSON.stringify({model: 'gw-model', messages: [{role: 'user', content: 'hi'}]}),
    })
    expect(res.status, await res.clone().text()).toBe(200)
    await res.arrayBuffer()
    const agents = json(await cli(['agents', 'list', '--json'])).agents
    expect(agents.find((a: any) => a.agentId === enabled.agentId)).toMatchObject({
      name: 'qwen-code',
      binding: {state: 'bound', port},
      lastSeenAt: expect.any(Number),
    })
    expect((await cli(['agents', 'disable', 'qwen-code'])).exitCode).toBe(0)
  }, 90_000)
})
