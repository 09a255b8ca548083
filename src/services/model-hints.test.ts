import {describe, expect, it} from 'vitest'

import type {PolicyConfig, ProviderConfig} from '../store/schema.js'
import {didYouMean, knownModels, targetModelWarnings} from './model-hints.js'

describe('didYouMean', () => {
  const known = ['sim-mini', 'sim-pro', 'sim-reasoner', 'gpt-5.5-mini', 'deepseek-chat']

  it.each([
    ['sim-mni', 'sim-mini'], // a letter left out
    ['sim-mnii', 'sim-mini'], // two letters swapped
    ['gpt-5.5-mni', 'gpt-5.5-mini'],
    ['GPT-5.5-Mini', 'gpt-5.5-mini'], // case alone
    ['deepseek-caht', 'deepseek-chat'],
  ])('%s -> %s', (name, guess) => {
    expect(didYouMean(name, known)).toBe(guess)
  })

  it.each(['sim-mini', 'gpt-6', 'deepseek-v4-pro', 'claude-opus-5-5', 'x'])('%s: no guess', (name) => {
    expect(didYouMean(name, known)).toBeUndefined()
  })

  // another version of a listed model is no typo: a model newer than the list (review50b B1)
  it.each([
    ['glm-4.7', 'glm-4.6'],
    ['claude-opus-4-6', 'claude-opus-4-5'],
    ['deepseek-v3.2', 'deepseek-v3.1'],
    ['gpt-5.6-mini', 'gpt-5.5-mini'],
    ['o4-mini', 'o3-mini'],
  ])('%s beside %s: no guess', (name, listed) => {
    expect(didYouMean(name, [...known, listed])).toBeUndefined()
  })
})

describe('knownModels and targetModelWarnings', () => {
  const sim: ProviderConfig = {name: 'sim-chat', family: 'chat', baseUrl: 'http://sim.invalid', origin: 'sim'}
  const deepseek: ProviderConfig = {name: 'ds', family: 'chat', baseUrl: 'https://api.deepseek.com/'}
  const mapped: ProviderConfig = {
    name: 'corp',
    family: 'chat',
    baseUrl: 'https://x',
    models: {fast: 'qwen3-32b'},
  }
  const plain: ProviderConfig = {name: 'other', family: 'chat', baseUrl: 'https://y'}

  it('reads the simulator, a preset by its base URL and the provider model map', () => {
    expect(knownModels(sim)).toEqual(['sim-mini', 'sim-pro', 'sim-reasoner'])
    expect(knownModels(deepseek)).toEqual(['deepseek-v4-flash', 'deepseek-v4-pro'])
    expect(knownModels(mapped)).toEqual(['fast', 'qwen3-32b'])
    expect(knownModels(plain)).toEqual([])
  })

  it('warns per target of the families asked, a simulator quirk suffix aside', () => {
    const policy: PolicyConfig = {
      id: 'p',
      routes: {
        chat: [
          {provider: 'sim-chat', model: 'sim-mni+cut-args'},
          {provider: 'corp', model: 'qwen3-23b'},
          {provider: 'other', model: 'sim-mni'},
          {provider: 'sim-chat'},
        ],
        messages: [{provider: 'ds', model: 'deepseek-v4-pro'}],
      },
      fallbacks: true,
      breaker: {failureThreshold: 5, cooldownMs: 1},
      timeouts: {connectMs: 1, firstByteMs: 1, idleMs: 1},
    }
    const providers = [sim, deepseek, mapped, plain]
    expect(targetModelWarnings(policy, providers)).toEqual([
      'sim-chat:sim-mni+cut-args: sim-chat lists no model "sim-mni"; did you mean "sim-mini"? (kept as given: the provider may have added it)',
      'corp:qwen3-23b: corp lists no model "qwen3-23b"; did you mean "qwen3-32b"? (kept as given: the provider may have added it)',
    ])
    expect(targetModelWarnings(policy, providers, ['messages'])).toEqual([])
  })

  it("names a model its preset's vendor retired, and the one to use (DeepSeek's V3 names)", () => {
    const policy: PolicyConfig = {
      id: 'p',
      routes: {
        chat: [{provider: 'ds', model: 'deepseek-chat'}],
        messages: [{provider: 'ds', model: 'deepseek-v4-flash'}],
      },
      fallbacks: true,
      breaker: {failureThreshold: 5, cooldownMs: 1},
      timeouts: {connectMs: 1, firstByteMs: 1, idleMs: 1},
    }
    expect(targetModelWarnings(policy, [deepseek])).toEqual([
      'ds:deepseek-chat: ds retired "deepseek-chat" on 2026-07-24; use "deepseek-v4-flash" (kept as given: requests naming it are refused upstream)',
    ])
    // (another provider's model of that name is its own)
    expect(targetModelWarnings(policy, [{...deepseek, baseUrl: 'https://relay.example'}])).toEqual([])
  })
})
