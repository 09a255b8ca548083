import {describe, expect, it} from 'vitest'

import {buildProvider, circuitLabel, credentialLabel, parseModelMappings, withPreset} from './providers.js'
import type {ProviderView} from './providers.js'

const base = {name: 'corp', family: 'chat', baseUrl: 'https://llm.example.com/v1/'}

describe('buildProvider', () => {
  it('builds a valid provider from the flags', async () => {
    const p = await buildProvider({
      ...base,
      apiKeyEnv: 'CORP_KEY',
      models: ['gpt-5=gpt-5-mini'],
      inputPrice: 0.25,
      outputPrice: 2,
    })
    expect(p).toEqual({
      name: 'corp',
      family: 'chat',
      baseUrl: 'https://llm.example.com/v1',
      origin: 'user',
      credential: {env: 'CORP_KEY'},
      models: {'gpt-5': 'gpt-5-mini'},
      prices: {input: 0.25, output: 2},
    })
  })

  it('stores a stdin key as a secret, trimmed', async () => {
    const p = await buildProvider({...base, apiKeySecret: 'sk-123\n'})
    expect(p.credential).toEqual({secret: 'sk-123'})
  })

  it.each([
    [{...base, family: 'grpc'}, /family/],
    [{...base, baseUrl: 'ftp://x'}, /baseUrl/],
    [{...base, name: 'has space'}, /name/],
    [{...base, apiKeyEnv: '1BAD'}, /credential/],
    [{...base, baseUrl: 'https://user:sk-in-url@llm.example.com/v1'}, /must not carry credentials/],
    [{...base, baseUrl: 'https://sk-in-url@llm.example.com'}, /must not carry credentials/],
  ])('refuses %o with exit 2', async (input, problem) => {
    await expect(buildProvider(input)).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(problem),
    })
  })

  it("stores a responses provider's --plain-tools other than auto, and refuses the rest with exit 2", async () => {
    const responses = {...base, family: 'responses'}
    expect((await buildProvider({...responses, plainTools: 'never'})).plainTools).toBe('never')
    expect((await buildProvider({...responses, plainTools: 'always'})).plainTools).toBe('always')
    expect('plainTools' in (await buildProvider({...responses, plainTools: 'auto'}))).toBe(false)
    expect('plainTools' in (await buildProvider(responses))).toBe(false)
    // auto is the default everywhere: nothing to refuse
    expect('plainTools' in (await buildProvider({...base, plainTools: 'auto'}))).toBe(false)
    await expect(buildProvider({...responses, plainTools: 'sometimes'})).rejects.toMatchObject({
      exitCode: 2,
      code: 'invalid_plain_tools',
      message: '--plain-tools must be one of auto, always, never, not "sometimes".',
    })
    await expect(buildProvider({...base, plainTools: 'never'})).rejects.toMatchObject({
      exitCode: 2,
      code: 'invalid_plain_tools',
      message: '--plain-tools never applies to a responses provider only, not to a chat one.',
    })
  })

  it.each([
    ['https://api.deepseek.com/v1/chat/completions', 'chat/completions', 'https://api.deepseek.com/v1'],
    ['https://api.z.ai/api/paas/v4/chat/completions/', 'chat/completions', 'https://api.z.ai/api/paas/v4'],
    ['https://api.openai.com/v1/responses', 'responses', 'https://api.openai.com/v1'],
    ['https://api.anthropic.com/v1/messages', 'messages', 'https://api.anthropic.com/v1'],
    [
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-3-pro:streamGenerateContent',
      'models/gemini-3-pro:streamGenerateContent',
      'https://generativelanguage.googleapis.com/v1beta',
    ],
  ])(
    'refuses an endpoint given as the base URL (%s), its base in the hint, exit 2',
    async (baseUrl, named, hint) => {
      await expect(buildProvider({...base, baseUrl})).rejects.toMatchObject({
        exitCode: 2,
        code: 'invalid_provider',
        message: `The base URL names an endpoint (${named}), not a base: gwctl adds each request's path to it.`,
        hint: `Give its base: --base-url ${hint}`,
      })
    },
  )

  it('refuses both credential kinds, and an empty stdin key', async () => {
    await expect(buildProvider({...base, apiKeyEnv: 'A', apiKeySecret: 'b'})).rejects.toMatchObject({
      exitCode: 2,
    })
    await expect(buildProvider({...base, apiKeySecret: ' \n'})).rejects.toMatchObject({
      exitCode: 2,
      code: 'missing_api_key',
    })
  })
})

describe('parseModelMappings', () => {
  it('reads FROM=TO and refuses the rest', () => {
    expect(parseModelMappings([])).toBeUndefined()
    expect(parseModelMappings(['a=b', 'c=d=e'])).toEqual({a: 'b', c: 'd=e'})
    for (const bad of ['a', '=b', 'a=']) expect(() => parseModelMappings([bad])).toThrow(/FROM=TO/)
  })

  it('keeps `__proto__` and `constructor` as ordinary model names', () => {
    const models = parseModelMappings(['__proto__=x', 'constructor=y'])!
    expect(Object.keys(models)).toEqual(['__proto__', 'constructor'])
    expect(Object.getPrototypeOf(models)).toBe(Object.prototype)
    expect(JSON.parse(JSON.stringify(models))).toEqual(JSON.parse('{"__proto__":"x","constructor":"y"}'))
  })
})

describe('labels', () => {
  const view = (circuit: ProviderView['circuit']): ProviderView => ({
    name: 'p',
    family: 'chat',
    baseUrl: 'http://x',
    circuit,
    families: [],
    policies: [],
  })
  const snap = {provider: 'p', openedAt: null, retryAt: null, retryInMs: null, lastError: null}

  it('shows the circuit, or why it is unknown', () => {
    expect(circuitLabel(view(null), 'state-file')).toBe('unknown (gateway stopped)')
    expect(circuitLabel(view(null), 'gateway')).toBe('closed')
    expect(
      circuitLabel(view({...snap, state: 'open', consecutiveFailures: 5, retryInMs: 11_200}), 'gateway'),
    ).toBe('open (retry in 12s)')
    expect(circuitLabel(view({...snap, state: 'half-open', consecutiveFailures: 5}), 'gateway')).toBe(
      'half-open',
    )
    expect(circuitLabel(view({...snap, state: 'closed', consecutiveFailures: 2}), 'gateway')).toBe(
      'closed (2 failed)',
    )
  })

  it('never shows a secret value', () => {
    expect(credentialLabel({...view(null), credential: {secret: 'sk-live-xyz'}})).toBe('secret (stored)')
    expect(credentialLabel({...view(null), credential: {env: 'OPENAI_API_KEY'}})).toBe('env OPENAI_API_KEY')
    expect(credentialLabel(view(null))).toBe('none')
    expect(credentialLabel({...view(null), credential: {secret: '[redacted]'}, origin: 'platform'})).toBe(
      'setting api-key',
    )
    expect(credentialLabel({...view(null), credential: {secret: '[redacted]'}, origin: 'sim'})).toBe(
      'simulator',
    )
  })
})

describe('withPreset', () => {
  it("fills in a preset's family, base URL and key variable: by --preset, or by the name when neither is given", () => {
    expect(withPreset({name: 'deepseek'})).toMatchObject({
      family: 'chat',
      baseUrl: 'https://api.deepseek.com',
      apiKeyEnv: 'DEEPSEEK_API_KEY',
      preset: 'deepseek',
    })
    expect(withPreset({name: 'glm', preset: 'zai'})).toMatchObject({
      name: 'glm',
      family: 'chat',
      baseUrl: 'https://api.z.ai/api/paas/v4',
      apiKeyEnv: 'ZAI_API_KEY',
    })
    // a name that is a preset, given its family and base URL: no preset
    expect(withPreset({name: 'deepseek', family: 'chat', baseUrl: 'https://proxy.example/v1'})).toMatchObject(
      {
        baseUrl: 'https://proxy.example/v1',
        apiKeyEnv: undefined,
        preset: undefined,
      },
    )
  })

  it("flags win; the vendor's key variable only for a new provider at the vendor's own base URL with no credential given", () => {
    expect(withPreset({name: 'ds', preset: 'deepseek', apiKeyEnv: 'MINE'}).apiKeyEnv).toBe('MINE')
    expect(withPreset({name: 'ds', preset: 'deepseek', apiKeySecret: 'k'}).apiKeyEnv).toBeUndefined()
    // marked as the preset's: a provider replaced keeps its own credential (addProvider)
    expect(withPreset({name: 'ds', preset: 'deepseek', replace: true})).toMatchObject({
      apiKeyEnv: 'DEEPSEEK_API_KEY',
      presetKey: true,
    })
    expect(withPreset({name: 'ds', preset: 'deepseek', apiKeyEnv: 'MINE'}).presetKey).toBe(false)
    expect(withPreset({name: 'ds', preset: 'deepseek', baseUrl: 'https://relay.example/v1'})).toMatchObject({
      family: 'chat',
      baseUrl: 'https://relay.example/v1',
      apiKeyEnv: undefined,
    })
    // a local server: no key
    expect(withPreset({name: 'ollama'})).toMatchObject({
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKeyEnv: undefined,
    })
  })

  it("exit 2 for a family the preset's base URL does not speak, naming the preset that does", () => {
    expect(() => withPreset({name: 'glm', preset: 'zai', family: 'messages'})).toThrow(
      expect.objectContaining({
        exitCode: 2,
        message: 'Preset "zai" is a chat provider: its base URL takes no messages requests.',
        hint: 'For messages: --preset zai-anthropic',
      }),
    )
    expect(() => withPreset({name: 'x', preset: 'groq', family: 'messages'})).toThrow(
      expect.objectContaining({hint: "Give the messages endpoint's --base-url too, or leave --family out."}),
    )
    // with its own base URL, the family is the user's
    expect(
      withPreset({name: 'x', preset: 'zai', family: 'messages', baseUrl: 'https://relay.example'}).family,
    ).toBe('messages')
    expect(withPreset({name: 'x', preset: 'zai', family: 'chat'}).family).toBe('chat')
  })

  it('exit 2 for an unknown preset, and for neither a preset nor both flags', () => {
    expect(() => withPreset({name: 'x', preset: 'nope'})).toThrow(
      expect.objectContaining({exitCode: 2, code: 'unknown_preset'}),
    )
    expect(() => withPreset({name: 'corp'})).toThrow(
      expect.objectContaining({
        exitCode: 2,
        code: 'missing_flags',
        message: 'Missing --family and --base-url for provider "corp".',
      }),
    )
    expect(() => withPreset({name: 'corp', family: 'chat'})).toThrow(
      expect.objectContaining({message: 'Missing --base-url for provider "corp".'}),
    )
  })
})
