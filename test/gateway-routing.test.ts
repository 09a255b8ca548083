/**
 * The routing gateway end to end: the real daemon (`gwctl gateway start --sim`) with the official
 * SDKs as unmodified clients, the log store's rows checked against what the simulator reported,
 * fallbacks, breakers, cross-family policies, the management endpoints and doctor.
 */
import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterEach, describe, expect, it} from 'vitest'

import type {PolicyConfig, ProviderConfig} from '../src/store/schema.js'
import {withState} from '../src/store/state.js'
import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {killDaemon} from './helpers/gateway.js'

const started: string[] = []
const cleanups: Array<() => void> = []

afterEach(async () => {
  for (const home of started.splice(0)) {
    await runCli(['gateway', 'stop', '--drain', '1'], {home})
    await killDaemon(home)
  }
  for (const c of cleanups.splice(0)) c()
})

async function setup(options: {policies?: PolicyConfig[]; providers?: ProviderConfig[]} = {}) {
  const t = tempHome()
  cleanups.push(t.cleanup)
  const port = await freePort()
  const home = t.home
  const cli = (args: string[]) => runCli(args, {home, env: {GWCTL_GATEWAY_PORT: String(port)}})
  if (options.policies || options.providers) {
    const previous = process.env.GWCTL_HOME
    process.env.GWCTL_HOME = home
    try {
      await withState(
        (store) => {
          store.data.providers.push(...(options.providers ?? []))
          store.data.policies.push(...(options.policies ?? []))
        },
        join(home, 'state.json'),
      )
    } finally {
      if (previous === undefined) delete process.env.GWCTL_HOME
      else process.env.GWCTL_HOME = previous
    }
  }
  started.push(home)
  const start = await cli(['gateway', 'start', '--sim', '--port', String(port)])
  expect(start.exitCode, start.stderr).toBe(0)
  const base = `http://127.0.0.1:${port}`
  return {home, port, base, cli}
}

async function issue(base: string, agentName: string, agentType: string, policyId?: string) {
  const res = await fetch(`${base}/api/keys/issue`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify({
      employeeName: 'Ada',
      employeeContact: 'ada@example.com',
      agentName,
      agentType,
      ...(policyId ? {policyId} : {}),
    }),
  })
  const body = (await res.json()) as any
  expect(res.status, JSON.stringify(body)).toBe(200)
  return {key: body.keyValue as string, agentId: body.agentId as string}
}

async function get(base: string, path: string): Promise<{status: number; body: any}> {
  const res = await fetch(base + path)
  return {status: res.status, body: await res.json()}
}

/** The log rows, oldest first, once `count` are there (a row is written just after its answer). */
async function logRows(base: string, count: number, query = ''): Promise<any[]> {
  for (let i = 0; ; i++) {
    const {body} = await get(base, `/api/logs?limit=1000${query}`)
    if (body.logs.length >= count || i > 50) return [...body.logs].reverse()
    await new Promise((r) => setTimeout(r, 100))
  }
}

interface Tokens {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  reasoningTokens: number
}

const chatTokens = (u: any): Tokens => ({
  inputTokens: u.prompt_tokens,
  outputTokens: u.completion_tokens,
  cacheReadTokens: u.prompt_tokens_details?.cached_tokens ?? 0,
  cacheCreationTokens: 0,
  reasoningTokens: u.completion_tokens_details?.reasoning_tokens ?? 0,
})
const responsesTokens = (u: any): Tokens => ({
  inputTokens: u.input_tokens,
  outputTokens: u.output_tokens,
  cacheReadTokens: u.input_tokens_details?.cached_tokens ?? 0,
  cacheCreationTokens: 0,
  reasoningTokens: u.output_tokens_details?.reasoning_tokens ?? 0,
})
const messagesTokens = (u: any): Tokens => ({
  inputTokens: u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
  outputTokens: u.output_tokens,
  cacheReadTokens: u.cache_read_input_tokens ?? 0,
  cacheCreationTokens: u.cache_creation_input_tokens ?? 0,
  reasoningTokens: 0,
})
const geminiTokens = (m: any): Tokens => ({
  inputTokens: m.promptTokenCount + (m.toolUsePromptTokenCount ?? 0),
  outputTokens: (m.candidatesTokenCount ?? 0) + (m.thoughtsTokenCount ?? 0),
  cacheReadTokens: m.cachedContentTokenCount ?? 0,
  cacheCreationTokens: 0,
  reasoningTokens: m.thoughtsTokenCount ?? 0,
})
const ZERO: Tokens = {
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  reasoningTokens: 0,
}

function tokensOf(row: any): Tokens {
  const {inputTokens, outputTokens, cacheReadTokens, cacheCreationTokens, reasoningTokens} = row
  return {inputTokens, outputTokens, cacheReadTokens, cacheCreationTokens, reasoningTokens}
}

describe('gateway routing end to end', {timeout: 120_000}, () => {
  it('serves the official SDKs through the gateway to the simulator, and logs each call with the simulator usage to the token', async () => {
    const {base} = await setup()
    const codex = await issue(base, 'codex-laptop', 'codex')
    const claude = await issue(base, 'claude-laptop', 'claude_code')
    const gem = await issue(base, 'gemini-laptop', 'gemini_cli')
    const calls: Array<{
      agentId: string
      entrance: string
      provider: string
      tokens: Tokens
      project: string
    }> = []

    // openai: chat (stream and not) and responses (stream and not)
    const openai = new OpenAI({
      apiKey: codex.key,
      baseURL: `${base}/v1`,
      maxRetries: 0,
      defaultHeaders: {'x-gw-project': 'alpha'},
    })
    const chat = await openai.chat.completions.create({
      model: 'sim-reasoner',
      messages: [{role: 'user', content: 'Say hi'}],
    })
    expect(chat.choices[0].message.content).toContain('You said')
    const chatOut = chatTokens(chat.usage)
    expect(chatOut.reasoningTokens).toBeGreaterThan(0)
    calls.push({
      agentId: codex.agentId,
      entrance: 'chat',
      provider: 'sim-chat',
      tokens: chatOut,
      project: 'alpha',
    })

    const chatStream = await openai.chat.completions.create({
      model: 'sim-mini',
      messages: [
        {role: 'user', content: 'Say hi'},
        {role: 'assistant', content: chat.choices[0].message.content ?? ''},
        {role: 'user', content: 'Again'},
      ],
      stream: true,
      stream_options: {include_usage: true},
    })
    let streamed = ''
    let chatStreamUsage: any
    for await (const chunk of chatStream) {
      streamed += chunk.choices[0]?.delta?.content ?? ''
      if (chunk.usage) chatStreamUsage = chunk.usage
    }
    expect(streamed).toContain('You said')
    const chatStreamOut = chatTokens(chatStreamUsage)
    expect(chatStreamOut.cacheReadTokens).toBeGreaterThan(0)
    calls.push({
      agentId: codex.agentId,
      entrance: 'chat',
      provider: 'sim-chat',
      tokens: chatStreamOut,
      project: 'alpha',
    })

    const resp = await openai.responses.create({
      model: 'sim-mini',
      input: 'Think about it',
      reasoning: {effort: 'low'},
    })
    expect(resp.output_text).toContain('PONG')
    const respOut = responsesTokens(resp.usage)
    expect(respOut.reasoningTokens).toBeGreaterThan(0)
    calls.push({
      agentId: codex.agentId,
      entrance: 'responses',
      provider: 'sim-responses',
      tokens: respOut,
      project: 'alpha',
    })

    const respStream = await openai.responses.create({model: 'sim-mini', input: 'Stream it', stream: true})
    let completed: any
    for await (const event of respStream) if (event.type === 'response.completed') completed = event.response
    calls.push({
      agentId: codex.agentId,
      entrance: 'responses',
      provider: 'sim-responses',
      tokens: responsesTokens(completed.usage),
      project: 'alpha',
    })

    // anthropic: messages (not stream, stream) and count_tokens
    const anthropic = new Anthropic({apiKey: claude.key, baseURL: base, maxRetries: 0})
    const msg = await anthropic.messages.create({
      model: 'claude-sim',
      max_tokens: 2048,
      thinking: {type: 'enabled', budget_tokens: 1024},
      messages: [{role: 'user', content: 'Hello there'}],
    })
    expect(msg.content.some((b) => b.type === 'text' && b.text.includes('PONG'))).toBe(true)
    const msgOut = messagesTokens(msg.usage)
    expect(msgOut.cacheCreationTokens).toBeGreaterThan(0)
    calls.push({
      agentId: claude.agentId,
      entrance: 'messages',
      provider: 'sim-messages',
      tokens: msgOut,
      project: 'claude-laptop',
    })

    const msgStream = anthropic.messages.stream({
      model: 'claude-sim',
      max_tokens: 256,
      messages: [{role: 'user', content: 'Stream please'}],
    })
    const final = await msgStream.finalMessage()
    calls.push({
      agentId: claude.agentId,
      entrance: 'messages',
      provider: 'sim-messages',
      tokens: messagesTokens(final.usage),
      project: 'claude-laptop',
    })

    const counted = await anthropic.messages.countTokens({
      model: 'claude-sim',
      messages: [{role: 'user', content: 'How many tokens is this?'}],
    })
    expect(counted.input_tokens).toBeGreaterThan(0)
    // counting generates nothing: the row is logged without usage
    calls.push({
      agentId: claude.agentId,
      entrance: 'messages',
      provider: 'sim-messages',
      tokens: ZERO,
      project: 'claude-laptop',
    })

    // @google/genai: generateContent and its stream
    const genai = new GoogleGenAI({apiKey: gem.key, httpOptions: {baseUrl: base}})
    const g = await genai.models.generateContent({
      model: 'gemini-sim',
      contents: 'Hi Gemini',
      config: {thinkingConfig: {thinkingBudget: 512}},
    })
    expect(g.text).toContain('PONG')
    const gOut = geminiTokens(g.usageMetadata)
    expect(gOut.reasoningTokens).toBeGreaterThan(0)
    calls.push({
      agentId: gem.agentId,
      entrance: 'gemini',
      provider: 'sim-gemini',
      tokens: gOut,
      project: 'gemini-laptop',
    })

    let gText = ''
    let gUsage: any
    for await (const chunk of await genai.models.generateContentStream({
      model: 'gemini-sim',
      contents: 'Stream, Gemini',
    })) {
      gText += chunk.text ?? ''
      if (chunk.usageMetadata) gUsage = chunk.usageMetadata
    }
    expect(gText).toContain('PONG')
    calls.push({
      agentId: gem.agentId,
      entrance: 'gemini',
      provider: 'sim-gemini',
      tokens: geminiTokens(gUsage),
      project: 'gemini-laptop',
    })

    // every call is one row, in order, with the simulator's usage to the token
    const rows = await logRows(base, calls.length)
    expect(rows).toHaveLength(calls.length)
    rows.forEach((row, i) => {
      const call = calls[i]
      expect(row, `call ${i}`).toMatchObject({
        agentId: call.agentId,
        entrance: call.entrance,
        provider: call.provider,
        status: 200,
        fallback: false,
        project: call.project,
        error: null,
      })
      expect(tokensOf(row), `usage of call ${i}`).toEqual(call.tokens)
      expect(row.inputTokens + (call.tokens === ZERO ? 1 : 0)).toBeGreaterThan(0)
    })

    // /api/logs filters
    const byAgent = await get(base, `/api/logs?agent_id=${claude.agentId}&limit=2`)
    expect(byAgent.body.logs.map((r: any) => r.id)).toEqual([rows[6].id, rows[5].id])
    expect((await get(base, '/api/logs?status=5xx')).body.logs).toEqual([])
    expect((await get(base, '/api/logs?status=2xx')).body.logs).toHaveLength(calls.length)
    expect((await get(base, '/api/logs?policy_id=claude_code_default')).body.logs).toHaveLength(3)
    const future = Math.floor(Date.now() / 1000) + 3600
    expect((await get(base, `/api/logs?since=${future}`)).body.logs).toEqual([])
    for (const [param, value] of [
      ['status', '3xx'],
      ['since', 'yesterday'],
      ['limit', '0'],
      ['pivot', 'colour'],
    ]) {
      const bad = await get(base, `/api/${param === 'pivot' ? 'usage' : 'logs'}?${param}=${value}`)
      expect(bad.status, param).toBe(400)
      expect(bad.body.error).toMatchObject({param, code: 'invalid_parameter'})
      expect(bad.body.error.message).toContain(`"${param}"`)
    }

    // /api/usage pivots and filters: sums of the rows
    const sum = (rs: any[]) =>
      rs.reduce(
        (t: Tokens, r) => ({
          inputTokens: t.inputTokens + r.inputTokens,
          outputTokens: t.outputTokens + r.outputTokens,
          cacheReadTokens: t.cacheReadTokens + r.cacheReadTokens,
          cacheCreationTokens: t.cacheCreationTokens + r.cacheCreationTokens,
          reasoningTokens: t.reasoningTokens + r.reasoningTokens,
        }),
        ZERO,
      )
    const perAgent = await get(base, '/api/usage?pivot=agent')
    expect(perAgent.body.pivot).toBe('agent')
    for (const a of [codex, claude, gem]) {
      const row = perAgent.body.rows.find((r: any) => r.key === a.agentId)
      const mine = rows.filter((r) => r.agentId === a.agentId)
      expect(row).toMatchObject({requests: mine.length, errors: 0, fallbacks: 0, ...sum(mine)})
    }
    expect(perAgent.body.totals).toMatchObject({requests: calls.length, ...sum(rows)})
    const perProject = await get(base, '/api/usage?pivot=project')
    expect(perProject.body.rows.map((r: any) => r.key).sort()).toEqual([
      'alpha',
      'claude-laptop',
      'gemini-laptop',
    ])
    const perProvider = await get(base, `/api/usage?pivot=provider&agent_id=${gem.agentId}`)
    expect(perProvider.body.rows).toEqual([
      expect.objectContaining({key: 'sim-gemini', requests: 2, ...sum(rows.slice(7))}),
    ])
    const none = await get(base, '/api/usage?status=fallback')
    expect(none.body).toMatchObject({pivot: null, rows: [], totals: {requests: 0, inputTokens: 0}})

    // dashboard: routes with circuits, recent requests and usage, gateway facts
    const dash = (await get(base, '/api/dashboard')).body
    expect(dash.recent_requests.map((r: any) => r.id)).toEqual([...rows].reverse().map((r) => r.id))
    expect(dash.recent_usage.reduce((n: number, r: any) => n + r.requests, 0)).toBe(calls.length)
    expect(dash.gateway).toMatchObject({pid: expect.any(Number), version: expect.any(String)})
    expect(dash.routes).toContainEqual(
      expect.objectContaining({
        policyId: 'claude_code_default',
        family: 'messages',
        agents: 1,
        targets: [
          expect.objectContaining({
            provider: 'sim-messages',
            circuit: expect.objectContaining({state: 'closed'}),
          }),
        ],
      }),
    )

    const help = await (await fetch(`${base}/help`)).text()
    for (const path of ['/api/logs', '/api/usage', '/api/providers', '/api/dashboard'])
      expect(help).toContain(path)

    // /v1/models: what each agent may use on its own protocol
    const models = await openai.models.list()
    expect(models.data.map((m) => m.id)).toEqual(['sim-mini', 'sim-pro', 'sim-reasoner'])
    expect(models.data[0]).toMatchObject({object: 'model', owned_by: 'sim-responses'})
    const claudeModels = await fetch(`${base}/v1/models`, {
      headers: {'x-api-key': claude.key, 'anthropic-version': '2023-06-01'},
    })
    expect(((await claudeModels.json()) as any).data.map((m: any) => m.id)).toEqual(['claude-sim'])
  })

  it('falls back to the next provider, opens a breaker and answers 503 in the entrance shape, refuses a cross-family target with 400, and lists providers per agent', async () => {
    const dead = await freePort()
    const deadOrigin = `http://127.0.0.1:${dead}`
    const settings = {
      breaker: {failureThreshold: 2, cooldownMs: 600_000},
      timeouts: {connectMs: 2000, firstByteMs: 10_000, idleMs: 10_000},
    }
    const {base} = await setup({
      providers: [
        {name: 'dead-chat', family: 'chat', baseUrl: deadOrigin, credential: {secret: 'x'}},
        {name: 'dead-messages', family: 'messages', baseUrl: deadOrigin, credential: {secret: 'x'}},
      ],
      policies: [
        {
          id: 'fb',
          routes: {chat: [{provider: 'dead-chat'}, {provider: 'sim-chat', model: 'sim-pro'}]},
          fallbacks: true,
          ...settings,
        },
        {id: 'brk', routes: {messages: [{provider: 'dead-messages'}]}, fallbacks: true, ...settings},
        {id: 'cross', routes: {chat: [{provider: 'sim-messages'}]}, fallbacks: true, ...settings},
      ],
    })
    const fb = await issue(base, 'fallback-agent', 'generic_agent', 'fb')
    const brk = await issue(base, 'breaker-agent', 'claude_code', 'brk')
    const cross = await issue(base, 'cross-agent', 'generic_agent', 'cross')

    // fallback: dead-chat refuses the connection, sim-chat answers (with the target's model rewrite)
    const openai = new OpenAI({apiKey: fb.key, baseURL: `${base}/v1`, maxRetries: 0})
    const answer = await openai.chat.completions.create({
      model: 'anything',
      messages: [{role: 'user', content: 'hi'}],
    })
    expect(answer.model).toBe('sim-pro')
    const [row] = await logRows(base, 1, `&agent_id=${fb.agentId}`)
    expect(row).toMatchObject({
      status: 200,
      fallback: true,
      provider: 'sim-chat',
      model: 'sim-pro',
      requestedModel: 'anything',
    })
    expect(row.error).toContain('dead-chat')
    expect(tokensOf(row)).toEqual(chatTokens(answer.usage))
    expect((await get(base, '/api/logs?status=fallback')).body.logs.map((r: any) => r.id)).toEqual([row.id])
    expect((await openai.models.list()).data.map((m) => m.id)).toEqual(['sim-pro'])

    // breaker: two connect failures (502) open it; the third request is 503 in the messages shape
    const send = () =>
      fetch(`${base}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': brk.key,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          model: 'claude-sim',
          max_tokens: 16,
          messages: [{role: 'user', content: 'hi'}],
        }),
      })
    for (let i = 0; i < 2; i++) {
      const res = await send()
      expect(res.status).toBe(502)
      expect(((await res.json()) as any).type).toBe('error')
    }
    const open = await send()
    expect(open.status).toBe(503)
    expect(Number(open.headers.get('retry-after'))).toBeGreaterThan(0)
    const openBody = (await open.json()) as any
    expect(openBody).toMatchObject({
      type: 'error',
      error: {type: expect.any(String), message: expect.any(String)},
    })
    const agents = (await get(base, '/api/agents')).body.agents
    const brkAgent = agents.find((a: any) => a.agentId === brk.agentId)
    expect(brkAgent.route.targets).toEqual([
      expect.objectContaining({provider: 'dead-messages', circuit: expect.objectContaining({state: 'open'})}),
    ])
    expect(
      (await get(base, `/api/logs?agent_id=${brk.agentId}&status=5xx`)).body.logs.map((r: any) => r.status),
    ).toEqual([503, 502, 502])

    // providers: all, and per agent (by name) in route order, with circuits and no secret
    const all = await get(base, '/api/providers')
    expect(all.body.providers.map((p: any) => p.name)).toEqual([
      'dead-chat',
      'dead-messages',
      'sim-chat',
      'sim-responses',
      'sim-messages',
      'sim-gemini',
    ])
    expect(JSON.stringify(all.body)).not.toContain('"x"')
    expect(all.body.providers.find((p: any) => p.name === 'sim-chat')).toMatchObject({
      families: ['chat'],
      // brk routes only messages: its chat family stays on the default route (issue 14, item 3)
      policies: ['default', 'claude_code_default', 'fb', 'brk'],
      circuit: {state: 'closed'},
    })
    const forFb = await get(base, '/api/providers?agent=fallback-agent')
    // fb routes chat itself; its other families stay on the default routes (the simulator's)
    expect(forFb.body.providers.map((p: any) => [p.name, p.circuit.state])).toEqual([
      ['dead-chat', 'closed'],
      ['sim-chat', 'closed'],
      ['sim-responses', 'closed'],
      ['sim-messages', 'closed'],
      ['sim-gemini', 'closed'],
    ])
    const forBrk = await get(base, `/api/providers?agent=${brk.agentId}`)
    expect(forBrk.body.providers.map((p: any) => [p.name, p.circuit.state])).toEqual([
      ['sim-chat', 'closed'],
      ['sim-responses', 'closed'],
      ['dead-messages', 'open'],
      ['sim-gemini', 'closed'],
    ])
    expect((await get(base, '/api/providers?agent=nobody')).status).toBe(404)

    // cross-family target: 400 in the chat shape
    const crossRes = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: {authorization: `Bearer ${cross.key}`, 'content-type': 'application/json'},
      body: JSON.stringify({model: 'm', messages: [{role: 'user', content: 'hi'}]}),
    })
    expect(crossRes.status).toBe(400)
    const crossBody = (await crossRes.json()) as any
    expect(crossBody.error.message).toContain('sim-messages')
    expect(crossBody.error.type).toBe('invalid_request_error')
  })

  it('doctor fails on a damaged log database and on a policy whose targets cross families or name unknown providers', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const env = {GWCTL_HOME: t.home}
    const cli = (args: string[]) => runCli(args, {home: t.home})
    writeFileSync(join(t.home, 'settings.json'), '{}')
    const healthy = await cli(['doctor', '--json'])
    // the verdict under both names: `ok`, and `healthy` as `status --json` names its own
    expect([json(healthy).healthy, json(healthy).ok]).toEqual([
      healthy.exitCode === 0,
      healthy.exitCode === 0,
    ])
    expect(json(healthy).checks.filter((c: any) => ['log-db', 'policies'].includes(c.id))).toEqual([
      expect.objectContaining({id: 'log-db', ok: true}),
      expect.objectContaining({id: 'policies', ok: true}),
    ])

    const previous = process.env.GWCTL_HOME
    Object.assign(process.env, env)
    try {
      await withState(
        (store) => {
          store.data.policies.push({
            id: 'mixed',
            routes: {gemini: [{provider: 'sim-chat'}], chat: [{provider: 'nowhere'}]},
            fallbacks: true,
            breaker: {failureThreshold: 5, cooldownMs: 30_000},
            timeouts: {connectMs: 5000, firstByteMs: 120_000, idleMs: 300_000},
          })
        },
        join(t.home, 'state.json'),
      )
    } finally {
      if (previous === undefined) delete process.env.GWCTL_HOME
      else process.env.GWCTL_HOME = previous
    }
    writeFileSync(join(t.home, 'logs.db'), 'SQLite format 3\0' + 'garbage'.repeat(1000))

    const result = await cli(['doctor', '--json'])
    expect(result.exitCode).toBe(3)
    expect(json(result)).toMatchObject({ok: false, healthy: false})
    const checks = json(result).checks
    const logDb = checks.find((c: any) => c.id === 'log-db')
    expect(logDb.ok).toBe(false)
    expect(logDb.hint).toContain('logs.db')
    const policies = checks.find((c: any) => c.id === 'policies')
    expect(policies.ok).toBe(false)
    expect(policies.detail).toContain('gemini target "sim-chat" speaks chat')
    expect(policies.detail).toContain('"nowhere" is not a known provider')
    const human = await cli(['doctor'])
    expect(human.stdout).toMatch(/FAIL\s+Request log database/)
  })
})
