/**
 * The key lifecycle on the command line (issue 25, item 4): `key list`, `key revoke
 * AGENT|PREFIX`, `agents remove AGENT` (refused while bound unless --disable), through a running
 * gateway (the next request sees it) and with the gateway stopped (the state file), and the
 * "Did you mean" of an unknown command under a topic.
 */
import {chmodSync, mkdirSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {keyIssueArgs, killDaemon} from './helpers/gateway.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

const CLAUDE = '{\n  "model": "opus"\n}\n'

async function setup() {
  const t = tempHome()
  cleanups.push(t.cleanup)
  const port = await freePort()
  const cli = (args: string[]) => runCli(args, {home: t.home, env: {GWCTL_GATEWAY_PORT: String(port)}})
  const claude = join(t.home, 'user-home', '.claude', 'settings.json')
  mkdirSync(join(t.home, 'user-home', '.claude'), {recursive: true})
  writeFileSync(claude, CLAUDE)
  chmodSync(claude, 0o644)
  const send = (key: string) =>
    fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
      body: JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content: 'hi'}]}),
    })
  const keyOf = (r: {stdout: string}) => /keyValue: (gw-\S+)/.exec(r.stdout)![1]
  const state = () => JSON.parse(readFileSync(join(t.home, 'state.json'), 'utf8'))
  return {home: t.home, port, cli, claude, send, keyOf, state}
}

describe('key list / key revoke / agents remove', () => {
  it('with the gateway running: list shows prefix, agent, state; revoke by prefix and by agent takes effect at once', async () => {
    const {cli, home, send, keyOf} = await setup()
    cleanups.push(() => killDaemon(home))
    expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
    const laptop = keyOf(await cli(keyIssueArgs('laptop', 'generic_agent')))
    const ci = keyOf(await cli(keyIssueArgs('ci', 'generic_agent')))
    const used = await send(laptop)
    expect(used.status).toBe(200)
    await used.arrayBuffer()

    const list = await cli(['key', 'list'])
    expect(list.exitCode, list.stderr).toBe(0)
    const lines = list.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^PREFIX\s+AGENT\s+TYPE\s+CREATED\s+LAST USED\s+STATE$/)
    expect(lines).toHaveLength(3)
    expect(list.stdout).toContain(`${laptop.slice(0, 9)}…  laptop`)
    expect(lines.find((l) => l.includes('laptop'))).toMatch(/\d{4}-\d\d-\d\dT\S+Z\s+active$/)
    expect(lines.find((l) => l.includes(' ci '))).toMatch(/never\s+active$/)
    // the key itself is never printed
    expect(list.stdout).not.toContain(laptop)

    const mine = json(await cli(['key', 'list', '--agent', 'ci', '--json'])).keys
    expect(mine).toHaveLength(1)
    expect(mine[0]).toMatchObject({agentName: 'ci', status: 'active', keyPrefix: `${ci.slice(0, 9)}…`})
    const unknown = await cli(['key', 'list', '--agent', 'nobody'])
    expect(unknown.exitCode).toBe(7)
    expect(unknown.stderr).toContain('No agent named "nobody"')

    // by the prefix as listed (with its ellipsis): the next request is refused
    const byPrefix = await cli(['key', 'revoke', `${laptop.slice(0, 9)}…`])
    expect(byPrefix.exitCode, byPrefix.stderr).toBe(0)
    expect(byPrefix.stdout).toBe(`Revoked key ${laptop.slice(0, 9)}… of laptop.\n`)
    expect((await send(laptop)).status).toBe(401)
    // again: nothing changes, still a success (as the API's revoke)
    const again = await cli(['key', 'revoke', laptop.slice(0, 9)])
    expect(again.exitCode).toBe(0)
    expect(again.stdout).toContain('was already revoked: nothing changed')

    // by agent name
    expect((await send(ci)).status).toBe(200)
    const byAgent = await cli(['key', 'revoke', 'ci', '--json'])
    expect(byAgent.exitCode).toBe(0)
    expect(json(byAgent).revoked).toHaveLength(1)
    expect((await send(ci)).status).toBe(401)
    expect(json(await cli(['key', 'list', '--json'])).keys.map((k: any) => k.status)).toEqual([
      'revoked',
      'revoked',
    ])

    // what matches nothing, or too little
    const none = await cli(['key', 'revoke', 'gw-ZZZZZZ'])
    expect(none.exitCode).toBe(7)
    expect(none.stderr).toContain('No key starts with "gw-ZZZZZZ"')
    const short = await cli(['key', 'revoke', 'gw-A'])
    expect(short.exitCode).toBe(2)
    expect(short.stderr).toContain('too short')
    const nobody = await cli(['key', 'revoke', 'nobody'])
    expect(nobody.exitCode).toBe(7)
    expect(nobody.stderr).toContain('No agent or key named "nobody"')

    // remove: the agent is gone from the live gateway, its keys stay listed as revoked
    const removed = await cli(['agents', 'remove', 'laptop'])
    expect(removed.exitCode, removed.stderr).toBe(0)
    expect(removed.stdout).toMatch(/^Removed agent laptop \(agt_[0-9a-f]+\)\.\n$/)
    const agents = json(await cli(['agents', 'list', '--json'])).agents.map((a: any) => a.name)
    expect(agents).not.toContain('laptop')
    expect((await cli(['key', 'list'])).stdout).toMatch(/\(removed\)/)
    const gone = await cli(['agents', 'remove', 'laptop'])
    expect(gone.exitCode).toBe(7)
  }, 90_000)

  it('agents remove revokes the live key, is refused while bound, and --disable unbinds first', async () => {
    const {cli, home, claude, send} = await setup()
    cleanups.push(() => killDaemon(home))
    expect((await cli(['config', 'set', 'employee.name', 'A'])).exitCode).toBe(0)
    expect((await cli(['config', 'set', 'employee.contact', 'a@b.c'])).exitCode).toBe(0)
    expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
    expect((await cli(['agents', 'enable', 'claude-code'])).exitCode).toBe(0)
    const key = JSON.parse(readFileSync(claude, 'utf8')).env.ANTHROPIC_AUTH_TOKEN as string
    expect((await send(key)).status).toBe(200)

    const refused = await cli(['agents', 'remove', 'claude-code'])
    expect(refused.exitCode).toBe(2)
    expect(refused.stderr).toContain('Agent "claude-code" is bound')
    expect(refused.stderr).toContain('Pass --disable')
    expect((await send(key)).status).toBe(200) // nothing changed
    expect(readFileSync(claude, 'utf8')).not.toBe(CLAUDE)

    const r = await cli(['agents', 'remove', 'claude-code', '--disable'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(r.stdout).toContain('claude-code unbound')
    expect(r.stdout).toContain('Removed agent claude-code')
    expect(readFileSync(claude, 'utf8')).toBe(CLAUDE)
    expect((await send(key)).status).toBe(401)
    expect(json(await cli(['agents', 'list', '--json'])).agents.filter((a: any) => a.agentId)).toEqual([])
  }, 90_000)

  it('with the gateway stopped: the same commands change the state file under its lock', async () => {
    const {cli, state} = await setup()
    const issued = await cli(keyIssueArgs('laptop', 'generic_agent'))
    expect(issued.exitCode).toBe(0)
    expect(state().keys[0].revokedAt).toBeUndefined()
    const r = await cli(['key', 'revoke', 'laptop'])
    expect(r.exitCode, r.stderr).toBe(0)
    expect(state().keys[0].revokedAt).toEqual(expect.any(Number))
    const removed = await cli(['agents', 'remove', 'laptop', '--json'])
    expect(removed.exitCode).toBe(0)
    expect(json(removed)).toMatchObject({name: 'laptop', revokedKeyIds: [], unbound: null})
    expect(state().agents).toEqual([])
    expect(state().keys).toHaveLength(1)
  }, 60_000)

  it('two agents of one name: revoke and remove ask for the id (exit 2)', async () => {
    const {cli} = await setup()
    expect((await cli(keyIssueArgs('laptop', 'generic_agent', {name: 'A', contact: 'a@b.c'}))).exitCode).toBe(
      0,
    )
    expect((await cli(keyIssueArgs('laptop', 'generic_agent', {name: 'B', contact: 'b@b.c'}))).exitCode).toBe(
      0,
    )
    for (const args of [
      ['key', 'revoke', 'laptop'],
      ['agents', 'remove', 'laptop'],
    ]) {
      const r = await cli(args)
      expect(r.exitCode).toBe(2)
      expect(r.stderr).toMatch(/Several agents are named "laptop": agt_\w+ \(a@b\.c\), agt_\w+ \(b@b\.c\)/)
    }
  }, 60_000)
})

describe('an unknown command under a topic', () => {
  it('never suggests the topic typed: names the unknown word and the closest command, or the topic’s commands', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const frob = await runCli(['key', 'frobnicate', 'cx'], {home: t.home})
    expect(frob.exitCode).toBe(2)
    expect(frob.stderr).toContain('Unknown command "key frobnicate".')
    expect(frob.stderr).toContain('`gwctl key` has: issue, list, revoke.')
    expect(frob.stderr).not.toContain('Did you mean `gwctl key`?')
    const typo = await runCli(['agents', 'remov', 'x'], {home: t.home})
    expect(typo.exitCode).toBe(2)
    expect(typo.stderr).toContain('Unknown command "agents remov".')
    expect(typo.stderr).toContain('Did you mean `gwctl agents remove`?')
  })
})
