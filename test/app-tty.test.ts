/**
 * The terminal app for real: `gwctl open` in a pseudo-terminal (80x24) against a gateway started
 * with `--sim`. A request made with the official `openai` SDK shows in the Requests view within
 * a second (the event stream, not polling); Enter opens it; the app rotates a key that then
 * works; it binds the discovered Claude Code (`agents list --json` says bound); it says "gateway stopped" when the gateway goes away and reconnects when it is back.
 */
import {spawn} from 'node:child_process'
import {mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {spawnSync} from 'node:child_process'
import {createInterface} from 'node:readline'
import {join} from 'node:path'
import OpenAI from 'openai'
import {afterEach, describe, expect, it} from 'vitest'

import {BIN, ROOT, cliEnv, freePort, json, runCli, tempHome} from './helpers/cli.js'
import {keyIssueArgs, killDaemon} from './helpers/gateway.js'

const hasPython = spawnSync('python3', ['--version']).status === 0
const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** The app in a pseudo-terminal, driven one command at a time. */
function terminal(home: string, args: string[], env: Record<string, string> = {}) {
  const full = {...process.env, ...cliEnv(home, env)} as Record<string, string | undefined>
  for (const [k, v] of Object.entries(full)) if (v === undefined) delete full[k]
  const child = spawn('python3', [join(ROOT, 'test/helpers/pty-driver.py'), 'node', BIN, ...args], {
    env: {...(full as Record<string, string>), PTY_SIZE: '80x24'},
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  cleanups.push(() => void child.kill('SIGKILL'))
  const lines = createInterface({input: child.stdout!})[Symbol.asyncIterator]()
  const ask = async (cmd: object): Promise<any> => {
    child.stdin!.write(JSON.stringify(cmd) + '\n')
    const {value} = await lines.next()
    const answer = JSON.parse(value as string)
    // a failed expect names what it waited for
    return 'expect' in cmd && !answer.ok ? {...answer, expected: (cmd as {expect: string}).expect} : answer
  }
  return {
    send: async (text: string) => {
      const answer = await ask({send: text})
      await new Promise((resolve) => setTimeout(resolve, 100)) // one key per read, as typed
      return answer
    },
    mark: () => ask({mark: true}),
    expect: (text: string, timeout = 10) => ask({expect: text, timeout}),
    wait: (seconds = 10) => ask({wait: seconds}),
    output: async () => (await ask({output: true})).output as string,
  }
}

describe.skipIf(!hasPython)('gwctl open in a terminal', () => {
  it('streams requests live, opens one, rotates a key, enables an agent, follows the gateway through a restart', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const home = t.home
    const port = await freePort()
    const env = {GWCTL_GATEWAY_PORT: String(port)}
    const cli = (args: string[]) => runCli(args, {home, env})
    cleanups.push(() => killDaemon(home))
    expect((await cli(['gateway', 'start', '--sim', '--port', String(port)])).exitCode).toBe(0)
    const issued = json(await cli([...keyIssueArgs('build-bot', 'codex'), '--json']))
    const issuedAt = Date.now()
    // an installed Claude Code for the Agents view to bind (its settings file in the test's HOME)
    mkdirSync(join(home, 'user-home', '.claude'), {recursive: true})
    writeFileSync(join(home, 'user-home', '.claude', 'settings.json'), '{"model": "opus"}\n')

    const app = terminal(home, ['open'], env)
    expect(await app.expect(`running 127.0.0.1:${port}`)).toMatchObject({ok: true})
    expect(await app.expect('build-bot')).toMatchObject({ok: true})

    await app.send('3')
    expect(await app.expect('No requests yet.')).toMatchObject({ok: true})
    await app.mark()
    const openai = new OpenAI({apiKey: issued.keyValue, baseURL: `http://127.0.0.1:${port}/v1`})
    const answer = await openai.responses.create({model: 'gpt-5-sim', input: 'hello'})
    expect(answer.output_text.length).toBeGreaterThan(0)
    const seen = await app.expect('sim-responses/gpt-5-sim', 1)
    expect(seen.ok).toBe(true) // on screen within a second of the answer
    expect(await app.output()).toMatch(/build-bot\s+sim-responses\/gpt-5-sim\s+200/)

    await app.mark()
    await app.send('\r')
    const detail = await app.expect(`Agent       build-bot`)
    if (!detail.ok) console.log((await app.output()).slice(-3000))
    expect(await app.expect(`Agent       build-bot (${issued.agentId})`)).toMatchObject({ok: true})
    await app.send('\r') // closes it (Esc then a key at once would read as Meta-key)

    // rotate the key from the Agents view: the old key stops working, the new one works (after
    // the gateway's 5 s between two issues for one agent, which the app would show as an error)
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, issuedAt + 5_500 - Date.now())))
    await app.send('1')
    await app.mark()
    await app.send('r')
    expect(await app.expect('Rotate the key of build-bot?')).toMatchObject({ok: true})
    await app.send('y')
    const shown = await app.expect('copy it now')
    if (!shown.ok) console.log((await app.output()).slice(-3000))
    expect(shown).toMatchObject({ok: true})
    const screen = await app.output()
    const key = /gw-[A-Za-z0-9_-]{20,}/.exec(screen.slice(screen.lastIndexOf('copy it now')))?.[0]
    expect(key).toBeDefined()
    await expect(openai.responses.create({model: 'gpt-5-sim', input: 'x'})).rejects.toThrow(/401/)
    const fresh = new OpenAI({apiKey: key!, baseURL: `http://127.0.0.1:${port}/v1`})
    expect(
      (await fresh.responses.create({model: 'gpt-5-sim', input: 'x'})).output_text.length,
    ).toBeGreaterThan(0)
    await app.send('\r')

    // enable the discovered Claude Code from the Agents view, after confirmation
    const rows = json(await cli(['agents', 'list', '--all', '--json'])).agents as Array<{
      name: string
      tool: string | null
    }>
    const at = rows.findIndex((r) => r.tool === 'claude-code')
    expect(at).toBeGreaterThanOrEqual(0)
    for (let i = 0; i < at; i++) await app.send('\u001b[B')
    await app.mark()
    await app.send('e')
    expect(await app.expect('Bind claude-code to the gateway')).toMatchObject({ok: true})
    await app.send('y')
    expect(await app.expect(`claude-code bound to http://127.0.0.1:${port}`)).toMatchObject({ok: true})
    const listed = json(await cli(['agents', 'list', '--json'])).agents as Array<{
      tool: string | null
      binding: {state: string}
    }>
    expect(listed.find((r) => r.tool === 'claude-code')?.binding.state).toBe('bound')

    // the gateway goes away and comes back: the app says so, then reconnects by itself
    await app.mark()
    expect((await cli(['gateway', 'stop', '--drain', '1'])).exitCode).toBe(0)
    expect(await app.expect('gateway stopped · S starts it')).toMatchObject({ok: true})
    await app.mark()
    expect((await cli(['gateway', 'start', '--sim', '--port', String(port)])).exitCode).toBe(0)
    expect(await app.expect(`running 127.0.0.1:${port}`)).toMatchObject({ok: true})

    await app.send('q')
    expect(await app.wait()).toMatchObject({exit: 0})
  }, 90_000)

  it("rotates a bound agent's key from the app: its config gets the new key and works; S starts the gateway as it last ran", async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const home = t.home
    const port = await freePort()
    const env = {GWCTL_GATEWAY_PORT: String(port)}
    const cli = (args: string[]) => runCli(args, {home, env})
    cleanups.push(() => killDaemon(home))
    const settingsPath = join(home, 'user-home', '.claude', 'settings.json')
    mkdirSync(join(home, 'user-home', '.claude'), {recursive: true})
    writeFileSync(settingsPath, '{"model": "opus"}\n')
    expect((await cli(['gateway', 'start', '--sim', '--port', String(port)])).exitCode).toBe(0)
    const enabled = await cli(['agents', 'enable', 'claude-code'])
    expect(enabled.exitCode, enabled.stderr).toBe(0)
    const config = () => JSON.parse(readFileSync(settingsPath, 'utf8')).env as Record<string, string>
    // a request made the way Claude Code makes it, from its own config
    const send = () =>
      fetch(`${config().ANTHROPIC_BASE_URL}/v1/messages`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${config().ANTHROPIC_AUTH_TOKEN}`,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          model: 'claude-sim',
          max_tokens: 16,
          messages: [{role: 'user', content: 'hi'}],
        }),
      })
    const before = config().ANTHROPIC_AUTH_TOKEN
    expect((await send()).status).toBe(200)

    const app = terminal(home, ['open'], env)
    expect(await app.expect(`running 127.0.0.1:${port}`)).toMatchObject({ok: true})
    const rows = json(await cli(['agents', 'list', '--all', '--json'])).agents as Array<{tool: string | null}>
    const at = rows.findIndex((r) => r.tool === 'claude-code')
    expect(at).toBeGreaterThanOrEqual(0)
    for (let i = 0; i < at; i++) await app.send('\u001b[B')
    expect(await app.expect('d unbind · r rotate key')).toMatchObject({ok: true})
    await app.mark()
    await app.send('r')
    // the confirmation says which file gets the new key
    expect(await app.expect('gwctl agents enable claude-code --rotate')).toMatchObject({ok: true})
    expect(await app.expect('~/.claude/settings.json')).toMatchObject({ok: true})
    await app.send('y')
    const done = await app.expect('the old key no longer works', 20)
    if (!done.ok) console.log((await app.output()).slice(-3000))
    expect(done).toMatchObject({ok: true})
    const after = config().ANTHROPIC_AUTH_TOKEN
    expect(after).toMatch(/^gw-/)
    expect(after).not.toBe(before)
    // the agent's config works with its new key; the old key is refused
    const answer = await send()
    expect(answer.status, await answer.clone().text()).toBe(200)
    expect(((await answer.json()) as {content: unknown[]}).content.length).toBeGreaterThan(0)
    const old = await fetch(`http://127.0.0.1:${port}/v1/messages`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${before}`,
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
      },
      body: JSON.stringify({model: 'claude-sim', max_tokens: 16, messages: [{role: 'user', content: 'hi'}]}),
    })
    expect(old.status).toBe(401)
    const listed = json(await cli(['agents', 'list', '--json'])).agents as Array<{
      tool: string | null
      binding: {state: string}
    }>
    expect(listed.find((r) => r.tool === 'claude-code')?.binding.state).toBe('bound')
    await app.send('\r')

    // stopped, S starts it again the way it last ran (with the simulator), and says so first
    await app.mark()
    expect((await cli(['gateway', 'stop', '--drain', '1'])).exitCode).toBe(0)
    expect(await app.expect('gateway stopped · S starts it')).toMatchObject({ok: true})
    await app.send('S')
    expect(await app.expect('as it last ran: gwctl gateway start --sim')).toMatchObject({ok: true})
    await app.mark()
    await app.send('y')
    expect(await app.expect(`running 127.0.0.1:${port}`, 20)).toMatchObject({ok: true})
    const gateway = json(await cli(['gateway', '--json']))
    expect(gateway.daemon?.simOrigin ?? gateway.simulator ?? null).not.toBeNull()
    expect((await send()).status).toBe(200)

    await app.send('q')
    expect(await app.wait()).toMatchObject({exit: 0})
  }, 120_000)

  it('bare gwctl opens the app on a terminal even with the gateway stopped; NO_COLOR has no colours', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const app = terminal(t.home, [], {GWCTL_GATEWAY_PORT: String(await freePort()), NO_COLOR: '1'})
    expect(await app.expect('gateway stopped · S starts it')).toMatchObject({ok: true})
    expect(await app.expect('No agents yet.')).toMatchObject({ok: true})
    await app.send('q')
    expect(await app.wait()).toMatchObject({exit: 0})
  })

  it('gwctl open --view windows opens on the Windows tab (the 5th view)', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const app = terminal(t.home, ['open', '--view', 'windows'], {
      GWCTL_GATEWAY_PORT: String(await freePort()),
      NO_COLOR: '1',
    })
    expect(await app.expect('5-hour windows, burn rate, weeks')).toMatchObject({ok: true})
    await app.send('q')
    expect(await app.wait()).toMatchObject({exit: 0})
  })

  it('not on a terminal, bare gwctl prints the top-level help and gwctl open says it needs one', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const bare = await runCli([], {home: t.home})
    expect(bare.exitCode).toBe(0)
    expect(bare.stdout).toContain('USAGE')
    const open = await runCli(['open'], {home: t.home})
    expect(open.exitCode).toBe(2)
    expect(open.stderr).toContain('`gwctl open` needs a terminal.')
  })
})
