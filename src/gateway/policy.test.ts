import {describe, expect, it} from 'vitest'

import type {PolicyConfig, ProviderConfig} from '../store/schema.js'
import {DEFAULT_BREAKER, DEFAULT_TIMEOUTS} from '../store/schema.js'
import {
  defaultPolicy,
  defaultProviders,
  describeCredential,
  policyProblems,
  redactProvider,
  resolveCredential,
  resolveTargets,
  RouteError,
  schemaProblems,
  upstreamModel,
} from './policy.js'

const providers: ProviderConfig[] = [
  {name: 'a', family: 'messages', baseUrl: 'http://127.0.0.1:1', models: {'claude-x': 'claude-y'}},
  {name: 'b', family: 'messages', baseUrl: 'http://127.0.0.1:2'},
  {name: 'c', family: 'chat', baseUrl: 'http://127.0.0.1:3'},
]
const policy = (routes: PolicyConfig['routes']): PolicyConfig => ({
  id: 'p1',
  routes,
  fallbacks: true,
  breaker: DEFAULT_BREAKER,
  timeouts: DEFAULT_TIMEOUTS,
})

describe('resolveTargets', () => {
  it('returns the targets in policy order with their providers and rewrites', () => {
    const targets = resolveTargets(
      policy({messages: [{provider: 'b', model: 'm2'}, {provider: 'a'}]}),
      'messages',
      providers,
    )
    expect(targets.map((t) => [t.provider.name, t.model])).toEqual([
      ['b', 'm2'],
      ['a', undefined],
    ])
    expect(upstreamModel(targets[0], 'claude-x')).toBe('m2')
    expect(upstreamModel(targets[1], 'claude-x')).toBe('claude-y')
    expect(upstreamModel(targets[1], 'other')).toBe('other')
  })

  it('maps only the names the provider lists: `constructor` and `__proto__` pass through as asked', () => {
    const [target] = resolveTargets(policy({messages: [{provider: 'a'}]}), 'messages', providers)
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty'])
      expect(upstreamModel(target, name)).toBe(name)
  })

  it('rejects a cross-family target with a 400', () => {
    const error = (() => {
      try {
        resolveTargets(policy({messages: [{provider: 'c'}]}), 'messages', providers)
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(RouteError)
    expect((error as RouteError).status).toBe(400)
    expect((error as RouteError).message).toContain('speaks chat')
  })

  it('answers 502 when a family has no usable target', () => {
    expect(() => resolveTargets(policy({}), 'gemini', providers)).toThrow(
      expect.objectContaining({status: 502}),
    )
  })

  it('policyProblems names unknown and cross-family targets', () => {
    expect(policyProblems(policy({chat: [{provider: 'a'}, {provider: 'zz'}]}), providers)).toEqual([
      'policy p1: chat target "a" speaks messages, not chat',
      'policy p1: chat target "zz" is not a known provider (known: a, b, c)',
    ])
    // a typo of a provider's name names the one meant
    expect(policyProblems(policy({messages: [{provider: 'aa'}]}), providers)).toEqual([
      'policy p1: messages target "aa" is not a known provider (did you mean "a"?)',
    ])
  })
})

describe('schemas', () => {
  it('accepts a full policy and provider', async () => {
    expect(await schemaProblems('policy', policy({chat: [{provider: 'c', model: 'gpt'}]}))).toEqual([])
    expect(
      await schemaProblems('provider', {
        name: 'x',
        family: 'gemini',
        baseUrl: 'https://example.test/api',
        credential: {env: 'X_KEY'},
        prices: {input: 1},
      }),
    ).toEqual([])
  })

  it('reports bad fields readably', async () => {
    const problems = await schemaProblems('provider', {
      name: 'x',
      family: 'grpc',
      baseUrl: 'ftp://x',
      extra: 1,
    })
    expect(problems).toEqual(
      expect.arrayContaining([
        'The provider has a field gwctl does not know: "extra"; remove it (check its spelling).',
        'provider field "family" (--family) must be one of chat, responses, messages, gemini.',
        'provider field "baseUrl" (--base-url) must be an http(s) URL without spaces, query or fragment, e.g. https://api.openai.com/v1.',
      ]),
    )
    // no raw schema text reaches a user
    expect(problems.join(' ')).not.toMatch(/must match pattern|\^https|NOT have/)
    expect(
      await schemaProblems('policy', {...policy({}), breaker: {failureThreshold: 0, cooldownMs: 1}}),
    ).toEqual(['policy field "breaker.failureThreshold" must be 1 or more, e.g. 5.'])
    expect(
      await schemaProblems('provider', {name: 'x', family: 'chat', baseUrl: 'https://x', credential: {e: 1}}),
    ).toEqual([
      'provider field "credential" must be either {"env": "VAR_NAME"} or {"secret": "..."}, e.g. --api-key-env OPENAI_API_KEY.',
    ])
  })
})

describe('default providers', () => {
  it('derives vendors from env vars, the platform and the simulator', () => {
    const list = defaultProviders({
      env: {OPENAI_API_KEY: 'sk-1', ANTHROPIC_API_KEY: 'a', GOOGLE_API_KEY: 'g'},
      platform: {baseUrl: 'https://platform.test/api/v1', apiKey: 'secret-key'},
      simOrigin: 'http://127.0.0.1:9',
    })
    expect(list.map((p) => `${p.name}:${p.family}:${p.baseUrl}`)).toEqual([
      'sim-chat:chat:http://127.0.0.1:9',
      'sim-responses:responses:http://127.0.0.1:9',
      'sim-messages:messages:http://127.0.0.1:9',
      'sim-gemini:gemini:http://127.0.0.1:9',
      'openai:chat:https://api.openai.com',
      'openai-responses:responses:https://api.openai.com',
      'anthropic:messages:https://api.anthropic.com',
      'gemini:gemini:https://generativelanguage.googleapis.com',
      'platform:chat:https://platform.test/api/v1',
    ])
    expect(list.find((p) => p.name === 'gemini')?.credential).toEqual({env: 'GOOGLE_API_KEY'})
    // with the simulator, the default policy never leaves the machine
    expect(defaultPolicy(list).routes.chat).toEqual([{provider: 'sim-chat'}])
    const real = defaultPolicy(list.filter((p) => p.origin !== 'sim'))
    expect(real.routes.chat).toEqual([{provider: 'openai'}, {provider: 'platform'}])
  })

  it('reads env credentials at request time and never shows secrets', () => {
    const env: NodeJS.ProcessEnv = {}
    expect(resolveCredential({env: 'K'}, env)).toBeUndefined()
    env.K = 'now-set'
    expect(resolveCredential({env: 'K'}, env)).toBe('now-set')
    expect(describeCredential({secret: 'hunter2'})).toBe('secret (stored)')
    const shown = JSON.stringify(
      redactProvider({name: 'x', family: 'chat', baseUrl: 'http://x', credential: {secret: 'hunter2'}}),
    )
    expect(shown).not.toContain('hunter2')
  })
})
