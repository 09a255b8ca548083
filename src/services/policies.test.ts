import {describe, expect, it} from 'vitest'

import type {ProviderConfig} from '../store/schema.js'
import {
  checkPolicy,
  knownProviders,
  parsePolicyText,
  parseTarget,
  policyHint,
  routeLines,
} from './policies.js'

describe('parseTarget', () => {
  it('reads PROVIDER and PROVIDER:MODEL (models may hold colons)', () => {
    expect(parseTarget('anthropic')).toEqual({provider: 'anthropic'})
    expect(parseTarget('sim-messages:claude-sim')).toEqual({provider: 'sim-messages', model: 'claude-sim'})
    expect(parseTarget('bedrock:anthropic.claude:v2')).toEqual({
      provider: 'bedrock',
      model: 'anthropic.claude:v2',
    })
  })

  it('refuses empty parts with exit 2', () => {
    for (const bad of ['', ':m', 'p:'])
      expect(() => parseTarget(bad)).toThrow(expect.objectContaining({exitCode: 2}))
  })
})

describe('parsePolicyText', () => {
  it('fills the defaults and the id', () => {
    const p = parsePolicyText('team', '{"routes":{"chat":[{"provider":"openai"}]}}')
    expect(p).toMatchObject({
      id: 'team',
      fallbacks: true,
      breaker: {failureThreshold: 5, cooldownMs: 30_000},
      timeouts: {connectMs: 5_000},
    })
  })

  it('refuses bad JSON, non-objects and a different id', () => {
    expect(() => parsePolicyText('a', '{')).toThrow(
      expect.objectContaining({code: 'invalid_json', exitCode: 2}),
    )
    expect(() => parsePolicyText('a', '[]')).toThrow(expect.objectContaining({exitCode: 2}))
    expect(() => parsePolicyText('a', '{"id":"b","routes":{}}')).toThrow(/differs/)
  })
})

describe('checkPolicy', () => {
  const mine: ProviderConfig = {name: 'corp', family: 'chat', baseUrl: 'https://x'}
  const known = knownProviders({providers: [mine]})

  it('knows the default providers by their fixed names and families', () => {
    const names = Object.fromEntries(known.map((p) => [p.name, p.family]))
    expect(names).toMatchObject({
      corp: 'chat',
      'sim-messages': 'messages',
      anthropic: 'messages',
      'openai-responses': 'responses',
      gemini: 'gemini',
      platform: 'chat',
    })
  })

  it('accepts a policy routing each family to its own kind', async () => {
    const policy = parsePolicyText(
      'p',
      '{"routes":{"chat":[{"provider":"corp"}],"messages":[{"provider":"anthropic"}]}}',
    )
    expect(await checkPolicy(policy, known)).toEqual([])
  })

  it('names cross-family targets, unknown providers and schema problems', async () => {
    const cross = parsePolicyText('p', '{"routes":{"messages":[{"provider":"corp"}]}}')
    expect(await checkPolicy(cross, known)).toEqual([
      'policy p: messages target "corp" speaks chat, not messages',
    ])
    const unknown = parsePolicyText('p', '{"routes":{"chat":[{"provider":"nope"}]}}')
    expect((await checkPolicy(unknown, known))[0]).toMatch(/"nope" is not a known provider/)
    const schema = parsePolicyText('p', '{"routes":{"video":[]},"fallbacks":"yes"}')
    const problems = await checkPolicy(schema, known)
    expect(problems.join('\n')).toMatch(/video/)
    expect(problems.join('\n')).toMatch(/fallbacks/)
  })
})

describe('routeLines', () => {
  it('prints routed families in the fixed family order', () => {
    const p = parsePolicyText(
      'p',
      '{"routes":{"messages":[{"provider":"a"},{"provider":"b","model":"m"}],"chat":[{"provider":"c"}],"gemini":[]}}',
    )
    expect(routeLines(p as never)).toEqual(['chat -> c', 'messages -> a, b:m'])
  })
})

describe('routePolicy and translation marks', () => {
  it('keeps each target mark when called without a --translate answer (the app reordering a route)', async () => {
    const {mkdtempSync, rmSync} = await import('node:fs')
    const {tmpdir} = await import('node:os')
    const {join} = await import('node:path')
    const {routePolicy} = await import('./policies.js')
    const home = mkdtempSync(join(tmpdir(), 'gwctl-policies-'))
    const previous = process.env.GWCTL_HOME
    process.env.GWCTL_HOME = home
    try {
      await routePolicy('p', 'messages', ['platform:glm', 'sim-messages'], {translate: true})
      const reordered = await routePolicy('p', 'messages', ['sim-messages', 'platform:glm'])
      expect(reordered.policy.routes.messages).toEqual([
        {provider: 'sim-messages'},
        {provider: 'platform', model: 'glm', translate: true},
      ])
      await expect(routePolicy('p', 'messages', ['platform:glm'], {translate: false})).rejects.toThrow(
        /speaks chat, not messages/,
      )
      expect(routeLines(reordered.policy, reordered.providers)).toEqual([
        'messages -> sim-messages, platform:glm (chat, translated)',
      ])
    } finally {
      if (previous === undefined) delete process.env.GWCTL_HOME
      else process.env.GWCTL_HOME = previous
      rmSync(home, {recursive: true, force: true})
    }
  })
})

describe('the hint of a refused policy (issue 25)', () => {
  it('names the field at fault, not the rule of route targets', async () => {
    const problems = await checkPolicy({id: 'p', routes: {}, fallbacks: 'yes'}, [])
    expect(problems.join('; ')).toContain('"fallbacks"')
    const hint = policyHint(problems)
    expect(hint).toContain('Fix "fallbacks" in the policy JSON')
    expect(hint).not.toContain('target')
  })

  it('keeps the targets hint for a problem with a target', () => {
    expect(policyHint(['policy p: chat target "x" is not a known provider'])).toContain(
      'A target must name a provider of its route family',
    )
    expect(policyHint(['policy field "routes.chat[0]" lacks the required field "provider"'])).toContain(
      'A target must name a provider',
    )
  })
})
