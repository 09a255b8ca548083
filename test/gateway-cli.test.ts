/**
 * End-to-end tests of the gateway management commands (providers, policies, logs, usage,
 * dashboard): against the state file and the log database with the gateway stopped, and against
 * a fake management server that serves the `/api/*` shapes of the running gateway.
 */
import {readFileSync, statSync, writeFileSync} from 'node:fs'
import type {IncomingMessage, Server, ServerResponse} from 'node:http'
import {createServer} from 'node:http'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import type {LogEntry, LogRow, UsageRow} from '../src/store/log-store.js'
import {LogStore} from '../src/store/log-store.js'
import {freePort, json, runCli, spawnCli, tempHome} from './helpers/cli.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A temp home and a gateway port where nothing listens (the gateway is stopped). */
async function stopped() {
  const t = tempHome()
  cleanups.push(t.cleanup)
  const port = await freePort()
  const cli = (args: string[], input?: string) =>
    runCli(args, {home: t.home, env: {GWCTL_GATEWAY_PORT: String(port)}, input})
  return {home: t.home, cli}
}

const SECRET = 'sk-live-Zq8wT3e9-never-print-me'

describe('providers (gateway stopped: the state file)', () => {
  it('adds, lists and removes; a stdin secret is stored 0600 and never printed', async () => {
    const {home, cli} = await stopped()
    const add = await cli(
      [
        'providers',
        'add',
        'corp',
        '--family',
        'messages',
        '--base-url',
        'https://llm.example.com/',
        '--api-key-stdin',
      ],
      SECRET + '\n',
    )
    expect(add.exitCode).toBe(0)
    expect(add.stdout).toBe(
      'Added provider corp (messages, https://llm.example.com, credential: secret (stored)).\n',
    )
    expect(add.stderr).toContain('gwctl gateway restart')
    const env = await cli([
      'providers',
      'add',
      'oa',
      '--family',
      'chat',
      '--base-url',
      'https://api.openai.com',
      '--api-key-env',
      'OPENAI_API_KEY',
      '--model',
      'gpt-5=gpt-5-mini',
      '--json',
    ])
    expect(env.exitCode).toBe(0)
    expect(json(env).provider).toMatchObject({
      name: 'oa',
      credential: {env: 'OPENAI_API_KEY'},
      models: {'gpt-5': 'gpt-5-mini'},
    })

    const state = join(home, 'state.json')
    expect(statSync(state).mode & 0o777).toBe(0o600)
    const stored = JSON.parse(readFileSync(state, 'utf8'))
    expect(stored.providers.find((p: {name: string}) => p.name === 'corp').credential).toEqual({
      secret: SECRET,
    })

    const list = await cli(['providers', 'list'])
    expect(list.exitCode).toBe(0)
    const lines = list.stdout.trimEnd().split('\n')
    expect(lines[0].split(/\s{2,}/)).toEqual([
      'NAME',
      'FAMILY',
      'BASE URL',
      'CREDENTIAL',
      'MODELS',
      'ORIGIN',
      'POLICIES',
      'CIRCUIT',
    ])
    expect(lines[1].split(/\s{2,}/)).toEqual([
      'corp',
      'messages',
      'https://llm.example.com',
      'secret (stored)',
      '-',
      'user',
      '-',
      'unknown (gateway stopped)',
    ])
    expect(lines[2]).toMatch(
      /^oa\s+chat\s+https:\/\/api\.openai\.com\s+env OPENAI_API_KEY\s+gpt-5=gpt-5-mini/,
    )
    const listJson = await cli(['providers', 'list', '--json'])
    expect(json(listJson).providers[0].credential).toEqual({secret: '[redacted]'})
    for (const r of [add, env, list, listJson]) expect(r.stdout + r.stderr).not.toContain(SECRET)

    const dup = await cli([
      'providers',
      'add',
      'corp',
      '--family',
      'chat',
      '--base-url',
      'http://x.test',
      '--api-key-env',
      'K',
    ])
    expect(dup.exitCode).toBe(2)
    expect(dup.stderr).toContain('A provider named "corp" already exists.')

    const removed = await cli(['providers', 'remove', 'corp'])
    expect(removed.exitCode).toBe(0)
    expect(removed.stdout).toBe('Removed provider corp.\n')
    expect(removed.stdout + removed.stderr).not.toContain(SECRET)
    expect(readFileSync(state, 'utf8')).not.toContain(SECRET)
    expect((await cli(['providers', 'remove', 'corp'])).exitCode).toBe(7)
  })

  it('refuses invalid providers with exit 2 and writes nothing', async () => {
    const {home, cli} = await stopped()
    const bad = await cli([
      'providers',
      'add',
      'x',
      '--family',
      'chat',
      '--base-url',
      'not-a-url',
      '--api-key-env',
      'K',
    ])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toMatch(/baseUrl/)
    const family = await cli(['providers', 'add', 'x', '--family', 'grpc', '--base-url', 'http://x.test'])
    expect(family.exitCode).toBe(2)
    const empty = await cli(
      ['providers', 'add', 'x', '--family', 'chat', '--base-url', 'http://x.test', '--api-key-stdin'],
      '',
    )
    expect(empty.exitCode).toBe(2)
    expect(empty.stderr).toContain('No API key arrived on stdin.')
    const list = await cli(['providers', 'list', '--json'])
    expect(json(list).providers).toEqual([])
    expect(home).toBeTruthy()
  })

  it('lists the providers compatible with an agent, and refuses a provider still routed', async () => {
    const {cli} = await stopped()
    await cli([
      'providers',
      'add',
      'msg-a',
      '--family',
      'messages',
      '--base-url',
      'http://a.test',
      '--api-key-env',
      'A',
    ])
    await cli([
      'providers',
      'add',
      'msg-b',
      '--family',
      'messages',
      '--base-url',
      'http://b.test',
      '--api-key-env',
      'B',
    ])
    await cli([
      'providers',
      'add',
      'chat-c',
      '--family',
      'chat',
      '--base-url',
      'http://c.test',
      '--api-key-env',
      'C',
    ])
    const route = await cli([
      'policies',
      'route',
      'claude_code_default',
      '--family',
      'messages',
      '--target',
      'msg-b',
      '--target',
      'msg-a:claude-x',
    ])
    expect(route.exitCode).toBe(0)
    expect(route.stdout).toBe('Updated policy claude_code_default: messages -> msg-b, msg-a:claude-x\n')
    const issued = await cli([
      'key',
      'issue',
      '--agent-name',
      'laptop',
      '--agent-type',
      'claude_code',
      '--employee-name',
      'Ada',
      '--employee-contact',
      'ada@example.com',
      '--json',
    ])
    expect(issued.exitCode).toBe(0)
    const {agentId} = json(issued)
    for (const who of [agentId, 'laptop']) {
      const list = await cli(['providers', 'list', who, '--json'])
      expect(list.exitCode).toBe(0)
      expect(json(list).providers.map((p: {name: string}) => p.name)).toEqual(['msg-b', 'msg-a'])
      expect(json(list).agent).toMatchObject({agentId, policyId: 'claude_code_default', family: 'messages'})
    }
    const table = await cli(['providers', 'list', 'laptop'])
    expect(table.stdout).toMatch(
      /^msg-b\s+messages\s+http:\/\/b\.test\s+env B\s+-\s+user\s+claude_code_default\s+unknown \(gateway stopped\)$/m,
    )
    expect(table.stdout).not.toContain('chat-c')
    expect((await cli(['providers', 'list', 'nobody'])).exitCode).toBe(7)

    const inUse = await cli(['providers', 'remove', 'msg-a'])
    expect(inUse.exitCode).toBe(2)
    expect(inUse.stderr).toContain('Policy claude_code_default still routes to provider "msg-a".')
  })
})

describe('policies (gateway stopped: the state file)', () => {
  it('sets, routes, shows, lists and removes; cross-family and unknown targets exit 2 naming the problem', async () => {
    const {home, cli} = await stopped()
    await cli([
      'providers',
      'add',
      'corp',
      '--family',
      'chat',
      '--base-url',
      'http://c.test',
      '--api-key-env',
      'C',
    ])
    const file = join(home, 'team.json')
    writeFileSync(
      file,
      JSON.stringify({
        routes: {chat: [{provider: 'corp'}], messages: [{provider: 'sim-messages', model: 'claude-sim'}]},
      }),
    )
    const set = await cli(['policies', 'set', 'team-a', '--file', file])
    expect(set.exitCode).toBe(0)
    expect(set.stdout).toBe('Created policy team-a.\n')
    expect(set.stderr).toContain('Run `gwctl gateway restart` to apply it.')

    const before = readFileSync(join(home, 'state.json'), 'utf8')
    const cross = await cli(
      ['policies', 'set', 'team-a', '--file', '-'],
      '{"routes":{"messages":[{"provider":"corp"}]}}',
    )
    expect(cross.exitCode).toBe(2)
    expect(cross.stderr).toContain('policy team-a: messages target "corp" speaks chat, not messages')
    const crossRoute = await cli(['policies', 'route', 'team-a', '--family', 'gemini', '--target', 'corp'])
    expect(crossRoute.exitCode).toBe(2)
    expect(crossRoute.stderr).toContain('gemini target "corp" speaks chat, not gemini')
    const unknown = await cli(['policies', 'route', 'team-a', '--family', 'chat', '--target', 'ghost'])
    expect(unknown.exitCode).toBe(2)
    expect(unknown.stderr).toContain('chat target "ghost" is not a known provider')
    const schema = await cli(
      ['policies', 'set', 'team-a', '--file', '-'],
      '{"routes":{},"breaker":{"failureThreshold":0,"cooldownMs":1}}',
    )
    expect(schema.exitCode).toBe(2)
    expect(schema.stderr).toMatch(/failureThreshold/)
    const notJson = await cli(['policies', 'set', 'team-a', '--file', '-'], '{routes')
    expect(notJson.exitCode).toBe(2)
    expect(readFileSync(join(home, 'state.json'), 'utf8')).toBe(before)

    const show = await cli(['policies', 'show', 'team-a'])
    expect(show.exitCode).toBe(0)
    expect(show.stdout).toContain('routes:\n  chat -> corp\n  messages -> sim-messages:claude-sim\n')
    const showJson = json(await cli(['policies', 'show', 'team-a', '--json']))
    expect(showJson).toEqual({
      id: 'team-a',
      routes: {chat: [{provider: 'corp'}], messages: [{provider: 'sim-messages', model: 'claude-sim'}]},
      fallbacks: true,
      breaker: {failureThreshold: 5, cooldownMs: 30000},
      timeouts: {connectMs: 5000, firstByteMs: 120000, idleMs: 300000},
    })
    const list = await cli(['policies', 'list'])
    expect(list.stdout).toMatch(
      /^team-a\s+chat -> corp; messages -> sim-messages:claude-sim\s+on\s+5 fails \/ 30s$/m,
    )
    expect(list.stdout).toMatch(/^default\s+\(none\)/m)

    expect((await cli(['policies', 'remove', 'default'])).exitCode).toBe(2)
    const removed = await cli(['policies', 'remove', 'team-a'])
    expect(removed.exitCode).toBe(0)
    expect((await cli(['policies', 'show', 'team-a'])).exitCode).toBe(7)
    expect((await cli(['policies', 'remove', 'team-a'])).exitCode).toBe(7)
  })
})
