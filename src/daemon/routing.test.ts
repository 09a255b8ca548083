import {describe, expect, it} from 'vitest'

import {modelsFamily, modelsFor} from './forward.js'
import {usageTotals} from '../store/log-query.js'
import {ParameterError, parseLogFilters, parsePivot} from './routing-api.js'
import {effectivePolicies, effectiveProviders, familiesOnDefaults} from '../gateway/effective-providers.js'
import type {PolicyConfig, ProviderConfig} from '../store/schema.js'
import {DEFAULT_BREAKER, DEFAULT_TIMEOUTS} from '../store/schema.js'

const policy = (id: string, routes: PolicyConfig['routes']): PolicyConfig => ({
  id,
  routes,
  fallbacks: true,
  breaker: DEFAULT_BREAKER,
  timeouts: DEFAULT_TIMEOUTS,
})

describe('effective providers and policies', () => {
  it('puts user providers first, drops defaults whose name is taken, and gives the simulator model lists', () => {
    const user: ProviderConfig = {name: 'sim-chat', family: 'chat', baseUrl: 'http://127.0.0.1:9'}
    const providers = effectiveProviders(
      {providers: [user]},
      {env: {ANTHROPIC_API_KEY: 'k'}, simOrigin: 'http://127.0.0.1:1'},
    )
    expect(providers.map((p) => [p.name, p.origin])).toEqual([
      ['sim-chat', 'user'],
      ['sim-responses', 'sim'],
      ['sim-messages', 'sim'],
      ['sim-gemini', 'sim'],
      ['anthropic', 'env'],
    ])
    expect(providers[0].baseUrl).toBe('http://127.0.0.1:9')
    expect(providers[2].models).toEqual({'claude-sim': 'claude-sim'})
  })

  it('fills each family without targets with the default routes (the simulator alone when it runs), keeping written ones', () => {
    const providers = effectiveProviders(
      {providers: []},
      {env: {OPENAI_API_KEY: 'k'}, simOrigin: 'http://127.0.0.1:1'},
    )
    const written = policy('team', {messages: [{provider: 'anthropic'}]})
    const [seeded, team] = effectivePolicies([policy('default', {chat: []}), written], providers)
    expect(seeded.routes).toEqual({
      chat: [{provider: 'sim-chat'}],
      responses: [{provider: 'sim-responses'}],
      messages: [{provider: 'sim-messages'}],
      gemini: [{provider: 'sim-gemini'}],
    })
    // routing one family keeps the others on their defaults (issue 14, item 3)
    expect(team.routes).toEqual({
      chat: [{provider: 'sim-chat'}],
      responses: [{provider: 'sim-responses'}],
      messages: [{provider: 'anthropic'}],
      gemini: [{provider: 'sim-gemini'}],
    })
    expect(familiesOnDefaults(written)).toEqual(['chat', 'responses', 'gemini'])
    expect(written.routes).toEqual({messages: [{provider: 'anthropic'}]})
    const withoutSim = effectivePolicies(
      [policy('default', {})],
      effectiveProviders({providers: []}, {env: {OPENAI_API_KEY: 'k'}}),
    )
    expect(withoutSim[0].routes).toEqual({
      chat: [{provider: 'openai'}],
      responses: [{provider: 'openai-responses'}],
    })
  })
})

describe('GET /v1/models', () => {
  const providers: ProviderConfig[] = [
    {name: 'a', family: 'chat', baseUrl: 'http://x', models: {small: 'up-small', big: 'up-big'}},
    {name: 'b', family: 'chat', baseUrl: 'http://x', models: {small: 'other'}},
    {name: 'm', family: 'messages', baseUrl: 'http://x', models: {claude: 'c'}},
  ]

  it('lists target rewrites and provider model names in route order, once each, skipping other families', () => {
    const p = policy('p', {
      chat: [{provider: 'b', model: 'fixed'}, {provider: 'a'}, {provider: 'b'}, {provider: 'm'}],
    })
    expect(modelsFor(p, 'chat', providers)).toEqual([
      {id: 'fixed', provider: 'b'},
      {id: 'small', provider: 'a'},
      {id: 'big', provider: 'a'},
    ])
    expect(modelsFor(undefined, 'chat', providers)).toEqual([])
  })

  it("answers for the agent's protocol: messages with anthropic-version, else the agent kind's", () => {
    expect(modelsFamily({'anthropic-version': '2023-06-01'}, {agentType: 'codex'})).toBe('messages')
    expect(modelsFamily({}, {agentType: 'codex'})).toBe('responses')
    expect(modelsFamily({}, {agentType: 'gemini_cli'})).toBe('gemini')
    expect(modelsFamily({}, {agentType: 'generic_agent'})).toBe('chat')
  })
})

describe('management query parameters', () => {
  const q = (s: string) => new URLSearchParams(s)

  it('parses the log filters and the pivot', () => {
    expect(parseLogFilters(q('agent_id=a&policy_id=p&status=fallback&since=1700000000&limit=5'))).toEqual({
      agentId: 'a',
      policyId: 'p',
      status: 'fallback',
      since: 1700000000,
      limit: 5,
    })
    expect(parseLogFilters(q('limit=5'), false)).toEqual({})
    expect(parsePivot(q('pivot=project'))).toBe('project')
    expect(parsePivot(q(''))).toBeUndefined()
  })

  it.each([
    ['status=3xx', 'status'],
    ['since=-1', 'since'],
    ['limit=0', 'limit'],
    ['limit=1.5', 'limit'],
    ['agent_id=', 'agent_id'],
    ['status=2xx&status=5xx', 'status'],
  ])('refuses %s naming the parameter', (query, param) => {
    let error: unknown
    try {
      parseLogFilters(q(query))
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(ParameterError)
    expect((error as ParameterError).param).toBe(param)
  })

  it('sums usage rows into totals with the same field names', () => {
    const row = {
      key: 'x',
      requests: 2,
      errors: 1,
      fallbacks: 0,
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 3,
      cacheCreationTokens: 1,
      reasoningTokens: 2,
    }
    expect(usageTotals([row, {...row, key: 'y'}])).toEqual({
      requests: 4,
      errors: 2,
      fallbacks: 0,
      inputTokens: 20,
      outputTokens: 10,
      cacheReadTokens: 6,
      cacheCreationTokens: 2,
      reasoningTokens: 4,
    })
  })
})
