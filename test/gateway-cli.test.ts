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

import type {LogEntry} from '../src/store/log-store.js'
import type {LogRow, UsageRow} from '../src/store/log-query.js'
import {LogStore} from '../src/store/log-store.js'
import {freePort, json, runCli, spawnCli, tempHome} from './helpers/cli.js'
import {keyIssueArgs} from './helpers/gateway.js'

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
    expect(add.stderr).toContain('it loads this when it starts (`gwctl gateway start`)')
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
    const {cli} = await stopped()
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
  })

  it('--plain-tools: stored when not auto, shown by list and doctor; a bad value or family exits 2', async () => {
    const {home, cli} = await stopped()
    const add = (name: string, family: string, plain?: string) =>
      cli([
        'providers',
        'add',
        name,
        '--family',
        family,
        '--base-url',
        `http://${name}.internal:4000`,
        ...(plain ? ['--plain-tools', plain] : []),
      ])
    const never = await add('litellm', 'responses', 'never')
    expect([never.exitCode, never.stdout]).toEqual([
      0,
      'Added provider litellm (responses, http://litellm.internal:4000, credential: none, plain tools: never).\n',
    ])
    expect((await add('omlx', 'responses', 'always')).exitCode).toBe(0)
    expect((await add('vllm', 'responses', 'auto')).exitCode).toBe(0)
    expect((await add('vllm2', 'responses')).exitCode).toBe(0)

    const bad = await add('x', 'responses', 'sometimes')
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toContain('sometimes')
    expect(bad.stderr).toContain('auto, always, never')
    const chat = await add('y', 'chat', 'always')
    expect(chat.exitCode).toBe(2)
    expect(chat.stderr).toContain(
      '--plain-tools always applies to a responses provider only, not to a chat one.',
    )
    const chatJson = await cli([
      'providers',
      'add',
      'y',
      '--family',
      'chat',
      '--base-url',
      'http://y.test',
      '--plain-tools',
      'never',
      '--json',
    ])
    expect([chatJson.exitCode, json(chatJson).error.code]).toEqual([2, 'invalid_plain_tools'])

    // auto is the default: left out of the file
    const stored = JSON.parse(readFileSync(join(home, 'state.json'), 'utf8')).providers as Array<{
      name: string
      plainTools?: string
    }>
    expect(stored.map((p) => [p.name, p.plainTools])).toEqual([
      ['litellm', 'never'],
      ['omlx', 'always'],
      ['vllm', undefined],
      ['vllm2', undefined],
    ])
    expect(stored.map((p) => 'plainTools' in p)).toEqual([true, true, false, false])

    const list = await cli(['providers', 'list'])
    const rows = list.stdout
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => l.split(/\s{2,}/).slice(0, 2))
    expect(rows).toEqual([
      ['litellm', 'responses (plain tools: never)'],
      ['omlx', 'responses (plain tools: always)'],
      ['vllm', 'responses'],
      ['vllm2', 'responses'],
    ])
    expect(json(await cli(['providers', 'list', '--json'])).providers[0].plainTools).toBe('never')
    const doctor = await cli(['doctor', '--json'])
    const policies = json(doctor).checks.find((c: {id: string}) => c.id === 'policies')
    expect(policies.detail).toContain('; plain tools: litellm never, omlx always')
  })

  it('--replace changes a provider in place: policies keep routing to it, its key is kept; a family change while routed exits 2', async () => {
    const {home, cli} = await stopped()
    const add = (...extra: string[]) =>
      cli(['providers', 'add', 'relay', '--base-url', 'http://relay.internal:4000', ...extra])
    const first = await cli(
      [
        'providers',
        'add',
        'relay',
        '--base-url',
        'http://relay.internal:4000',
        '--family',
        'responses',
        '--api-key-stdin',
      ],
      `${SECRET}\n`,
    )
    expect(first.exitCode).toBe(0)
    const route = await cli([
      'policies',
      'route',
      'codex_default',
      '--family',
      'responses',
      '--target',
      'relay',
    ])
    expect(route.exitCode).toBe(0)

    // without --replace: refused, the hint names it
    const again = await add('--family', 'responses', '--plain-tools', 'never')
    expect(again.exitCode).toBe(2)
    expect(again.stderr).toContain('A provider named "relay" already exists.')
    expect(again.stderr).toContain('--replace')

    const replaced = await add('--family', 'responses', '--plain-tools', 'never', '--replace')
    expect([replaced.exitCode, replaced.stdout]).toEqual([
      0,
      'Replaced provider relay (responses, http://relay.internal:4000, credential: secret (stored), plain tools: never).\n',
    ])
    expect(replaced.stdout + replaced.stderr).not.toContain(SECRET)
    const state = JSON.parse(readFileSync(join(home, 'state.json'), 'utf8')) as {
      providers: Array<{name: string; plainTools?: string; credential?: unknown}>
      policies: Array<{id: string; routes: Record<string, Array<{provider: string}>>}>
    }
    expect(state.providers.filter((p) => p.name === 'relay')).toEqual([
      expect.objectContaining({plainTools: 'never', credential: {secret: SECRET}}),
    ])
    expect(state.policies.find((p) => p.id === 'codex_default')?.routes.responses).toEqual([
      expect.objectContaining({provider: 'relay'}),
    ])

    // another host without the key given again: refused, the key never goes there
    const moved = await cli([
      'providers',
      'add',
      'relay',
      '--base-url',
      'https://relay.example.com',
      '--family',
      'responses',
      '--replace',
      '--json',
    ])
    expect([moved.exitCode, json(moved).error.code]).toEqual([2, 'credential_not_kept'])
    expect(json(moved).error.message).toBe(
      'Provider "relay" moves from http://relay.internal:4000 to https://relay.example.com: its credential is not carried to another host.',
    )
    expect(moved.stdout + moved.stderr).not.toContain(SECRET)
    // another family while a policy routes to it: refused, the file as it was
    const family = await add('--family', 'chat', '--replace', '--json')
    expect([family.exitCode, json(family).error.code]).toEqual([2, 'provider_in_use'])
    expect(json(family).error.message).toBe(
      'Provider "relay" speaks responses, and policy codex_default routes to it: its family cannot change to chat.',
    )
    expect(JSON.parse(readFileSync(join(home, 'state.json'), 'utf8'))).toEqual(state)
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
      ...keyIssueArgs('laptop', 'claude_code', {name: 'Ada', contact: 'ada@example.com'}),
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
    expect(set.stderr).toContain(
      'The gateway is not running: it loads this when it starts (`gwctl gateway start`).',
    )

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
    // a request not streamed waits for its answer up to the idle timeout (daemon/router/pools.ts)
    expect(show.stdout).toMatch(
      /timeouts: +connect 5000 ms, first byte 120000 ms \(a stream's; a request not streamed waits for its answer at its last target up to the idle timeout\), idle 300000 ms/,
    )
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
    expect(list.stdout).toMatch(/^default\s+\(none: default routes\)/m)

    expect((await cli(['policies', 'remove', 'default'])).exitCode).toBe(2)
    const removed = await cli(['policies', 'remove', 'team-a'])
    expect(removed.exitCode).toBe(0)
    expect((await cli(['policies', 'show', 'team-a'])).exitCode).toBe(7)
    expect((await cli(['policies', 'remove', 'team-a'])).exitCode).toBe(7)
  })

  it('a target model close to one the provider lists: saved, with a "did you mean" warning', async () => {
    const {cli} = await stopped()
    const typo = await cli(['policies', 'route', 'team', '--family', 'chat', '--target', 'sim-chat:sim-mni'])
    expect(typo.exitCode).toBe(0)
    expect(typo.stdout).toBe('Created policy team: chat -> sim-chat:sim-mni\n')
    expect(typo.stderr).toContain(
      'warning: sim-chat:sim-mni: sim-chat lists no model "sim-mni"; did you mean "sim-mini"?',
    )
    // a name the list has (with a simulator quirk), or one far from every listed name: no warning
    const fine = await cli([
      'policies',
      'route',
      'team',
      '--family',
      'chat',
      '--target',
      'sim-chat:sim-pro+cut-args',
      '--target',
      'sim-chat:gpt-5.5-mini',
    ])
    expect(fine.exitCode).toBe(0)
    expect(fine.stderr).not.toContain('warning')
    // a preset's documented names, in --json (stdout stays one document) and through `policies set`
    expect((await cli(['providers', 'add', 'deepseek'])).exitCode).toBe(0)
    const set = await cli(
      ['policies', 'set', 'ds', '--file', '-', '--json'],
      '{"routes":{"messages":[{"provider":"deepseek","model":"deepseek-v4-prp","translate":true},{"provider":"deepseek","model":"deepseek-chat","translate":true}]}}',
    )
    expect(set.exitCode).toBe(0)
    expect(json(set).warnings).toEqual([
      'deepseek:deepseek-v4-prp: deepseek lists no model "deepseek-v4-prp"; did you mean "deepseek-v4-pro"? (kept as given: the provider may have added it)',
      'deepseek:deepseek-chat: deepseek retired "deepseek-chat" on 2026-07-24; use "deepseek-v4-flash" (kept as given: requests naming it are refused upstream)',
    ])
    expect(set.stderr).not.toContain('warning')
  })
})

function entry(over: Partial<LogEntry> = {}): LogEntry {
  return {
    time: Date.now() - 60_000,
    agentId: 'agt_a',
    keyPrefix: 'gw-aaaa…',
    policyId: 'default',
    entrance: 'messages',
    requestedModel: 'claude',
    provider: 'anthropic',
    model: 'claude-sonnet',
    status: 200,
    fallback: false,
    inputTokens: 100,
    outputTokens: 10,
    cacheReadTokens: 5,
    cacheCreationTokens: 1,
    reasoningTokens: 0,
    latencyMs: 120,
    ttfbMs: 30,
    error: null,
    project: 'web',
    requestId: null,
    ...over,
  }
}

async function fillLogDb(home: string, entries: LogEntry[]): Promise<void> {
  const store = await LogStore.open(join(home, 'logs.db'))
  for (const e of entries) store.append(e)
  store.close()
}

describe('logs and usage (gateway stopped: the log database)', () => {
  it('reads, filters and totals the rows the gateway logged', async () => {
    const {home, cli} = await stopped()
    const now = Date.now()
    await fillLogDb(home, [
      entry({time: now - 3 * 86_400_000, agentId: 'agt_old', model: 'old-model', inputTokens: 7000}),
      entry({time: now - 120_000}),
      entry({
        time: now - 60_000,
        agentId: 'agt_b',
        entrance: 'chat',
        provider: 'openai',
        model: 'gpt-5',
        status: 502,
        fallback: true,
        inputTokens: 0,
        outputTokens: 0,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
        ttfbMs: null,
        error: 'connect ECONNREFUSED',
        project: null,
      }),
    ])

    const all = await cli(['logs', '--json'])
    expect(all.exitCode).toBe(0)
    const rows = json<{logs: LogRow[]; source: string}>(all)
    expect(rows.source).toBe('database')
    expect(rows.logs.map((r) => r.agentId)).toEqual(['agt_b', 'agt_a', 'agt_old'])

    const table = await cli(['logs', '--since', '1h'])
    const lines = table.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(3)
    // newest at the top, as the dashboard and the app (issue 25)
    expect(lines[1]).toMatch(
      /agt_b\s+chat\s+openai\/gpt-5\s+502\s+yes\s+0\s+0\s+0\s+120ms\s+-\s+connect ECONNREFUSED$/,
    )
    expect(lines[2]).toMatch(
      /agt_a\s+messages\s+anthropic\/claude-sonnet\s+200\s+-\s+100\s+10\s+6\s+120ms\s+30ms$/,
    )
    expect(table.stderr).toContain('read from the log database')

    const failed = json(await cli(['logs', '--status', '5xx', '--json']))
    expect(failed.logs.map((r: LogRow) => r.agentId)).toEqual(['agt_b'])
    const byAgent = json(await cli(['logs', '--agent', 'agt_a', '--json']))
    expect(byAgent.logs).toHaveLength(1)
    const limited = json(await cli(['logs', '--limit', '1', '--json']))
    expect(limited.logs.map((r: LogRow) => r.agentId)).toEqual(['agt_b'])
    const badSince = await cli(['logs', '--since', 'yesterday'])
    expect(badSince.exitCode).toBe(2)
    const badStatus = await cli(['logs', '--status', '3xx'])
    expect(badStatus.exitCode).toBe(2)

    const usage = await cli(['usage', '--pivot', 'model', '--json'])
    const u = json(usage)
    expect(u.pivot).toBe('model')
    expect(u.rows.map((r: UsageRow) => [r.key, r.requests, r.inputTokens])).toEqual([
      ['old-model', 1, 7000],
      ['claude-sonnet', 1, 100],
      ['gpt-5', 1, 0],
    ])
    expect(u.totals).toMatchObject({
      requests: 3,
      errors: 1,
      fallbacks: 1,
      inputTokens: 7100,
      outputTokens: 20,
    })

    const recent = await cli(['usage', '--pivot', 'agent', '--since', '1d'])
    const ul = recent.stdout.trimEnd().split('\n')
    expect(ul[0].split(/\s{2,}/)).toEqual([
      'AGENT',
      'REQUESTS',
      'ERRORS',
      'FALLBACKS',
      'INPUT',
      'OUTPUT',
      'CACHE READ',
      'CACHE WRITE',
      'REASONING',
      'COST',
    ])
    expect(ul.slice(1).map((l) => l.split(/\s{2,}/))).toEqual([
      // cost as in every usage table: a model without a price is "unpriced" (never $0), a
      // total with unpriced parts ends in +
      ['agt_a', '1', '0', '0', '100', '10', '5', '1', '0', 'unpriced'],
      ['agt_b', '1', '1', '1', '0', '0', '0', '0', '0', '$0.0000'],
      ['TOTAL', '2', '1', '1', '100', '10', '5', '1', '0', '$0.0000+'],
    ])
  })

  it('says so when nothing was logged, and dashboard --json exits 6', async () => {
    const {cli} = await stopped()
    const logs = await cli(['logs'])
    expect(logs.exitCode).toBe(0)
    expect(logs.stdout).toBe('No requests logged yet.\n')
    const usage = await cli(['usage', '--json'])
    expect(json(usage).rows).toEqual([])
    const dash = await cli(['dashboard', '--json'])
    expect(dash.exitCode).toBe(6)
    expect(json(dash).error.code).toBe('gateway_not_running')
    const text = await cli(['dashboard'])
    expect(text.exitCode).toBe(6)
    expect(text.stderr).toContain('The gateway is not running.')
  })

  it('bare gwctl prints the help when stdout is not a terminal', async () => {
    const {cli} = await stopped()
    const r = await cli([])
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toContain('USAGE')
    expect(r.stdout).toMatch(/policies\s+Routing policies/)
  })
})

/** A fake running gateway: `/health` plus the `/api/*` management shapes. */
async function fakeGateway(routes: Record<string, (url: URL) => [number, unknown]>) {
  const t = tempHome()
  cleanups.push(t.cleanup)
  const requests: URL[] = []
  const streams: ServerResponse[] = []
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1')
    requests.push(url)
    if (url.pathname === '/api/events') {
      // the event stream: hello now, then whatever the test emits
      res.writeHead(200, {'content-type': 'text/event-stream'})
      res.write('id: 0\nevent: hello\ndata: {"pid":1,"port":1,"version":"0.1.0"}\n\n')
      streams.push(res)
      return
    }
    const handler =
      url.pathname === '/health' ? () => [200, {status: 'ok', timestamp: 1}] : routes[url.pathname]
    const [status, body] = handler ? handler(url) : [404, {error: {message: 'not found'}}]
    res.writeHead(status as number, {'content-type': 'application/json'})
    res.end(JSON.stringify(body))
  })
  const port = await freePort()
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r))
  cleanups.push(
    () =>
      new Promise<void>((r) => {
        for (const s of streams) s.end()
        server.close(() => r())
      }),
  )
  const env = {GWCTL_GATEWAY_PORT: String(port)}
  const cli = (args: string[]) => runCli(args, {home: t.home, env})
  const emit = (event: object) => {
    for (const s of streams) s.write(`event: x\ndata: ${JSON.stringify(event)}\n\n`)
  }
  return {home: t.home, port, env, requests, cli, streams, emit}
}

const liveRow = (id: number, over: Partial<LogRow> = {}): LogRow => ({...entry(over), id, requestId: null})

describe('against a running gateway (fake management API)', () => {
  it('logs and usage pass the filters as query parameters and print the answer', async () => {
    const usageRows: UsageRow[] = [
      {
        key: 'proj-x',
        requests: 4,
        errors: 0,
        fallbacks: 0,
        inputTokens: 4000,
        outputTokens: 40,
        cacheReadTokens: 0,
        cacheCreationTokens: 0,
        reasoningTokens: 3,
      },
    ]
    const gw = await fakeGateway({
      '/api/logs': () => [200, {logs: [liveRow(9, {agentId: 'agt_live', model: 'm-live'})]}],
      '/api/agents': () => [200, {agents: [{agentId: 'agt_live', name: 'live-bot', keyPrefix: 'gw_live'}]}],
      '/api/usage': (url) => [
        200,
        {pivot: url.searchParams.get('pivot'), rows: usageRows, totals: {...usageRows[0], key: undefined}},
      ],
    })
    const logs = await gw.cli([
      'logs',
      '--agent',
      'agt_live',
      '--policy',
      'default',
      '--status',
      'fallback',
      '--limit',
      '5',
    ])
    expect(logs.exitCode).toBe(0)
    // the agent named by the daemon's own list
    expect(logs.stdout).toMatch(/live-bot\s+messages\s+anthropic\/m-live\s+200/)
    expect(logs.stderr).toBe('')
    const q = gw.requests.find((u) => u.pathname === '/api/logs')!
    expect(Object.fromEntries(q.searchParams)).toEqual({
      agent_id: 'agt_live',
      policy_id: 'default',
      status: 'fallback',
      limit: '5',
    })
    const usage = await gw.cli(['usage', '--pivot', 'project', '--since', '1700000000', '--json'])
    expect(json(usage)).toMatchObject({
      pivot: 'project',
      source: 'gateway',
      totals: {requests: 4, inputTokens: 4000},
    })
    const uq = gw.requests.find((u) => u.pathname === '/api/usage')!
    expect(Object.fromEntries(uq.searchParams)).toEqual({pivot: 'project', since: '1700000000'})
  })

  it('providers list shows circuit states, asks for an agent, and never prints a secret', async () => {
    const gw = await fakeGateway({
      '/api/providers': (url) =>
        url.searchParams.get('agent') === 'ghost'
          ? [404, {error: {message: 'unknown agent "ghost"'}}]
          : [
              200,
              {
                providers: [
                  {
                    name: 'anthropic',
                    family: 'messages',
                    baseUrl: 'https://api.anthropic.com',
                    credential: {env: 'ANTHROPIC_API_KEY'},
                    origin: 'env',
                    circuit: {
                      provider: 'anthropic',
                      state: 'open',
                      consecutiveFailures: 5,
                      openedAt: 1,
                      retryAt: 2,
                      retryInMs: 9_500,
                      lastError: '503',
                    },
                    families: ['messages'],
                    policies: ['claude_code_default'],
                  },
                  {
                    name: 'corp',
                    family: 'messages',
                    baseUrl: 'http://corp.test',
                    credential: {secret: SECRET},
                    origin: 'user',
                    circuit: null,
                    families: [],
                    policies: [],
                  },
                ],
              },
            ],
    })
    const list = await gw.cli(['providers', 'list', 'laptop'])
    expect(list.exitCode).toBe(0)
    expect(list.stdout).toMatch(
      /^anthropic\s+messages\s+https:\/\/api\.anthropic\.com\s+env ANTHROPIC_API_KEY\s+-\s+env\s+claude_code_default\s+open \(retry in 10s\)$/m,
    )
    expect(list.stdout).toMatch(
      /^corp\s+messages\s+http:\/\/corp\.test\s+secret \(stored\)\s+-\s+user\s+-\s+closed$/m,
    )
    expect(gw.requests.find((u) => u.pathname === '/api/providers')!.searchParams.get('agent')).toBe('laptop')
    const asJson = await gw.cli(['providers', 'list', '--json'])
    expect(json(asJson).providers[1].credential).toEqual({secret: '[redacted]'})
    for (const r of [list, asJson]) expect(r.stdout + r.stderr).not.toContain(SECRET)
    const ghost = await gw.cli(['providers', 'list', 'ghost'])
    expect(ghost.exitCode).toBe(7)
    expect(ghost.stderr).toContain('No agent has the id or name "ghost"')
    expect(ghost.stderr).toContain('gwctl agents list')
  })

  it('providers list marks a provider whose --plain-tools changed in the file "pending restart"', async () => {
    const gw = await fakeGateway({
      '/api/providers': () => [
        200,
        {
          providers: [
            {
              name: 'litellm',
              family: 'responses',
              baseUrl: 'http://localhost:4000',
              origin: 'user',
              circuit: null,
              families: [],
              policies: [],
            },
          ],
        },
      ],
    })
    const add = await gw.cli([
      'providers',
      'add',
      'litellm',
      '--family',
      'responses',
      '--base-url',
      'http://localhost:4000',
      '--plain-tools',
      'never',
    ])
    expect(add.exitCode).toBe(0)
    const list = await gw.cli(['providers', 'list'])
    // the running gateway's value, and the change it has not loaded yet
    expect(list.stdout).toMatch(
      /^litellm \(pending restart: changed\)\s+responses\s+http:\/\/localhost:4000\s/m,
    )
  })

  it('a gateway error answer exits 5 and says the gateway answered', async () => {
    const gw = await fakeGateway({
      '/api/logs': () => [
        503,
        {error: {message: 'Routing is not running in this gateway.', code: 'no_routing'}},
      ],
    })
    const r = await gw.cli(['logs'])
    expect(r.exitCode).toBe(5)
    expect(r.stderr).toContain('The gateway answered 503: Routing is not running in this gateway.')
  })

  it('dashboard --json prints /api/dashboard; without a terminal a text snapshot', async () => {
    const dashboard = {
      routes: [
        {policyId: 'default', family: 'chat', agents: 1, targets: [{provider: 'openai', circuit: null}]},
      ],
      recent_requests: [liveRow(3, {agentId: 'agt_d', provider: 'openai', model: 'gpt-5', entrance: 'chat'})],
      recent_usage: [{...usageOf('gpt-5')}],
      gateway: {pid: 999, port: 1, uptime_s: 61, version: '0.1.0'},
    }
    const gw = await fakeGateway({'/api/dashboard': () => [200, dashboard]})
    const asJson = await gw.cli(['dashboard', '--json'])
    expect(asJson.exitCode).toBe(0)
    // each request has its agent's name beside the id (null: this agent is unknown)
    expect(json(asJson)).toEqual({
      ...dashboard,
      recent_requests: dashboard.recent_requests.map((r) => ({...r, agentName: null})),
    })
    const text = await gw.cli(['dashboard'])
    expect(text.exitCode).toBe(0)
    expect(text.stdout).toContain('Gateway: running on 127.0.0.1:1 (pid 999, up 1m 01s, v0.1.0)')
    expect(text.stdout).toMatch(/default\/chat\s+1\s+openai \(closed\)/)
    expect(text.stdout).toMatch(/agt_d\s+openai\/gpt-5\s+200/)
  })

  it('logs --follow prints the latest rows, then each request from the event stream, each once, until Ctrl-C', async () => {
    const rows: LogRow[] = [liveRow(1, {agentId: 'agt_first', time: Date.now() - 5000})]
    const gw = await fakeGateway({
      '/api/logs': (url) => {
        const since = Number(url.searchParams.get('since') ?? 0) * 1000
        return [
          200,
          {
            logs: rows
              .filter((r) => r.time >= since)
              .slice()
              .reverse(),
          },
        ]
      },
    })
    const child = spawnCli(['logs', '--follow'], {home: gw.home, env: gw.env})
    let output = ''
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()))
    const waitFor = async (text: string) => {
      for (let i = 0; i < 200 && !output.includes(text); i++) await new Promise((r) => setTimeout(r, 50))
      expect(output).toContain(text)
    }
    await waitFor('agt_first')
    // the next row comes from the event stream, not from polling /api/logs
    const polled = gw.requests.filter((u) => u.pathname === '/api/logs').length
    gw.emit({type: 'request', entry: entry({agentId: 'agt_second', time: Date.now()})})
    await waitFor('agt_second')
    expect(gw.requests.filter((u) => u.pathname === '/api/logs').length).toBe(polled)
    child.kill('SIGINT')
    const result = await child
    expect(result.exitCode).toBe(0)
    const lines = output.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^TIME\s+AGENT\s+ENTRANCE/)
    expect(lines.filter((l) => l.includes('agt_first'))).toHaveLength(1)
    expect(lines.filter((l) => l.includes('agt_second'))).toHaveLength(1)
  })
})

function usageOf(key: string): UsageRow {
  return {
    key,
    requests: 1,
    errors: 0,
    fallbacks: 0,
    inputTokens: 10,
    outputTokens: 2,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    reasoningTokens: 0,
  }
}
