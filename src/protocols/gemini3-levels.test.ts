/**
 * Gemini 3 and later think at a `thinkingLevel`: a budget they take for backwards compatibility
 * only and do not follow (CLIProxyAPI #353), and a level beside a budget they refuse. A translated
 * request to a gemini-3… name gets the level of the client's effort or budget, held to the levels
 * the model takes (Google's thinking-levels table), thinking off as the least of them; Gemini 2.5
 * keeps its budgets, byte for byte. A refused level is learned as the next one up
 * (daemon/router/adaptations.ts), for a translated request and a Gemini CLI body passed through.
 */
import {describe, expect, it} from 'vitest'

import {describeAdaptation, UpstreamAdaptations} from '../daemon/router/adaptations.js'
import {refusedThinkingBudget} from '../sim/upstream/quirks.js'
import type {ReasoningSettings, Request} from './ir.js'
import {
  adaptPassedGemini,
  decodeClientRequest,
  encodeUpstreamRequest,
  geminiThinkingSent,
} from './translate.js'

const request = (reasoning: ReasoningSettings, maxTokens?: number): Request => ({
  model: 'c',
  system: [],
  messages: [{role: 'user', parts: [{type: 'text', text: 'hi'}]}],
  tools: [],
  stream: false,
  reasoning,
  ...(maxTokens !== undefined && {maxTokens}),
})

/** The generationConfig bytes a Gemini upstream gets for `reasoning` on `model`. */
const configBytes = (model: string, reasoning: ReasoningSettings, maxTokens?: number): string => {
  const body = JSON.parse(
    encodeUpstreamRequest(
      {family: 'gemini', request: request(reasoning, maxTokens)} as never,
      'gemini',
      model,
    ).body.toString(),
  ) as {generationConfig?: unknown}
  return JSON.stringify(body.generationConfig ?? null)
}

const level = (l: string, extra = '') => `{"thinkingConfig":{"thinkingLevel":"${l}"${extra}}}`

describe('Gemini 3 and later: a thinking level, never a budget', () => {
  // model, the client's reasoning, the generationConfig bytes sent
  const rows: Array<[string, ReasoningSettings, string]> = [
    // Gemini 3 Flash takes all four levels; off is MINIMAL (it cannot stop thinking)
    ['gemini-3-flash-preview', {disabled: true}, level('MINIMAL')],
    ['gemini-3-flash-preview', {effort: 'minimal'}, level('MINIMAL')],
    ['gemini-3-flash-preview', {effort: 'low'}, level('LOW')],
    ['gemini-3-flash-preview', {effort: 'medium', include: true}, level('MEDIUM', ',"includeThoughts":true')],
    ['gemini-3-flash-preview', {effort: 'high', beyond: 'max'}, level('HIGH')],
    // a budget as the level of the nearest size (Gemini's 512, 1 024, 8 192, 24 576)
    ['gemini-3-flash-preview', {budgetTokens: 600}, level('MINIMAL')],
    ['gemini-3-flash-preview', {budgetTokens: 2048}, level('LOW')],
    ['gemini-3-flash-preview', {budgetTokens: 10_000}, level('MEDIUM')],
    [
      'gemini-3-flash-preview',
      {budgetTokens: 31_999, include: true},
      level('HIGH', ',"includeThoughts":true'),
    ],
    // Gemini's dynamic -1, or a lone includeThoughts: no level, the model decides
    ['gemini-3-flash-preview', {budgetTokens: -1}, 'null'],
    ['gemini-3-flash-preview', {include: true}, '{"thinkingConfig":{"includeThoughts":true}}'],
    // Flash-Lite takes MINIMAL; Flash from 3.7 on does not (WritingTools #282, pi #9455): LOW
    ['gemini-3.1-flash-lite-preview', {disabled: true}, level('MINIMAL')],
    ['gemini-3.8-flash', {disabled: true}, level('LOW')],
    ['models/gemini-3.7-flash', {effort: 'minimal'}, level('LOW')],
    ['gemini-3.8-flash', {effort: 'medium'}, level('MEDIUM')],
    // Pro cannot stop thinking: off is LOW; Gemini 3 Pro takes no MEDIUM (HIGH), 3.1 Pro does
    ['gemini-3-pro-preview', {disabled: true}, level('LOW')],
    ['gemini-3-pro-preview', {effort: 'medium'}, level('HIGH')],
    ['gemini-3.1-pro-preview', {disabled: true}, level('LOW')],
    ['gemini-3.1-pro-preview', {effort: 'medium'}, level('MEDIUM')],
    // a vendor's prefix, any case (an OpenRouter-style name): the same levels, never a budget of 0
    ['google/gemini-3-pro-preview', {disabled: true}, level('LOW')],
    ['Gemini-3-Flash-Preview', {disabled: true}, level('MINIMAL')],
    ['vertex/Gemini-3.8-Flash', {effort: 'minimal'}, level('LOW')],
    ['google/gemini-3-pro-preview', {effort: 'medium'}, level('HIGH')],
    // Gemini 2.5 (and a name that does not say Gemini 3): budgets as before, byte for byte
    ['gemini-2.5-flash', {disabled: true}, '{"thinkingConfig":{"thinkingBudget":0}}'],
    [
      'gemini-2.5-flash',
      {effort: 'medium', include: true},
      '{"thinkingConfig":{"thinkingBudget":8192,"includeThoughts":true}}',
    ],
    ['gemini-2.5-pro', {budgetTokens: 31_999}, '{"thinkingConfig":{"thinkingBudget":31999}}'],
    // gemini-pro-latest names Gemini 3.1 Pro since March 2026 (Google's notice, gemini-cli #20588)
    ['gemini-pro-latest', {disabled: true}, level('LOW')],
    ['models/gemini-pro-latest', {effort: 'medium'}, level('MEDIUM')],
    // gemini-flash-latest names no Gemini 2.5 in late 2026 (2.5 Flash shut down, Gemini 3.8 Flash
    // the latest): levels, no MINIMAL; the Flash-Lite alias takes it
    ['gemini-flash-latest', {effort: 'low'}, level('LOW')],
    ['gemini-flash-latest', {disabled: true}, level('LOW')],
    ['models/gemini-flash-lite-latest', {disabled: true}, level('MINIMAL')],
    // a relay's name that fixes the level (CLIProxyAPI, Antigravity): that level, whatever was asked
    ['gemini-3-pro-high', {disabled: true}, level('HIGH')],
    ['gemini-3.5-flash-low', {effort: 'high'}, level('LOW')],
    ['gemini-3-flash(medium)', {budgetTokens: 31_999}, level('MEDIUM')],
    // (a Gemini 2.5 name so ending is no such relay's: its budget)
    ['gemini-2.5-flash-high', {effort: 'low'}, '{"thinkingConfig":{"thinkingBudget":1024}}'],
  ]
  it.each(rows)('%s, %j', (model, reasoning, bytes) => {
    expect(configBytes(model, reasoning)).toBe(bytes)
  })

  it("Gemini 2.5's budget within the client's max tokens as before; a level has nothing to cut", () => {
    expect(configBytes('gemini-2.5-flash', {effort: 'high'}, 8192)).toBe(
      '{"maxOutputTokens":8192,"thinkingConfig":{"thinkingBudget":4096}}',
    )
    expect(configBytes('gemini-3-flash-preview', {effort: 'high'}, 8192)).toBe(
      '{"maxOutputTokens":8192,"thinkingConfig":{"thinkingLevel":"HIGH"}}',
    )
  })

  it("Claude Code's and Codex's requests: the level of their budget or effort; the simulator takes each", () => {
    const claude = decodeClientRequest(
      'messages',
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 32_000,
        thinking: {type: 'enabled', budget_tokens: 31_999},
        messages: [{role: 'user', content: 'hi'}],
      },
      {},
    )
    const codex = decodeClientRequest(
      'responses',
      {model: 'gpt-5-codex', reasoning: {effort: 'low', summary: 'auto'}, input: 'hi'},
      {},
    )
    const off = decodeClientRequest(
      'messages',
      {model: 'c', max_tokens: 1000, thinking: {type: 'disabled'}, messages: [{role: 'user', content: 'hi'}]},
      {},
    )
    const sent = (client: typeof claude, model: string) => {
      const out = encodeUpstreamRequest(client, 'gemini', model)
      const body = JSON.parse(out.body.toString()) as Record<string, unknown>
      expect(refusedThinkingBudget(body, new Set(), model)).toBeUndefined()
      return [(body.generationConfig as Record<string, unknown>).thinkingConfig, out.sent.thinkingLevel]
    }
    expect(sent(claude, 'gemini-3.1-pro-preview')).toEqual([
      {thinkingLevel: 'HIGH', includeThoughts: true},
      'HIGH',
    ])
    expect(sent(codex, 'gemini-3-flash-preview')).toEqual([
      {thinkingLevel: 'LOW', includeThoughts: true},
      'LOW',
    ])
    expect(sent(off, 'gemini-3-pro-preview')).toEqual([{thinkingLevel: 'LOW'}, 'LOW'])
    expect(sent(off, 'gemini-3.8-flash')).toEqual([{thinkingLevel: 'LOW'}, 'LOW'])
    expect(sent(off, 'gemini-3-flash-preview')).toEqual([{thinkingLevel: 'MINIMAL'}, 'MINIMAL'])
  })
})

describe('a refused thinking level learned as the next one up', () => {
  const google = (message: string) =>
    JSON.stringify({error: {code: 400, message, status: 'INVALID_ARGUMENT'}})
  const off = decodeClientRequest(
    'messages',
    {model: 'c', max_tokens: 1000, thinking: {type: 'disabled'}, messages: [{role: 'user', content: 'hi'}]},
    {},
  )
  const thinkingOf = (sent: {body: Buffer}) =>
    (JSON.parse(sent.body.toString()) as {generationConfig: {thinkingConfig?: unknown}}).generationConfig
      .thinkingConfig

  it("MINIMAL refused in the simulator's (Google's) words: LOW from then on, the rule listed", () => {
    const a = new UpstreamAdaptations()
    // a Flash by a name the rule takes for one with MINIMAL (an alias of 3.8 Flash, a new release)
    const model = 'gemini-3-flash-preview'
    const first = encodeUpstreamRequest(off, 'gemini', model)
    expect(thinkingOf(first)).toEqual({thinkingLevel: 'MINIMAL'})
    const refused = refusedThinkingBudget(
      JSON.parse(first.body.toString()) as Record<string, unknown>,
      new Set(['no-minimal-level']),
      model,
    )
    expect(refused).toBe(
      'Thinking level MINIMAL is not supported for this model. Please retry with other thinking level.',
    )
    expect(a.learn('google', model, google(refused!), first.sent)).toBe(
      'refused thinkingLevel MINIMAL: sent again with LOW, the next level up',
    )
    const learned = a.get('google', model)!
    expect(learned).toEqual({thinkingLevels: {MINIMAL: 'LOW'}})
    expect(describeAdaptation(learned)).toContain('thinkingLevel MINIMAL sent as LOW')
    expect(thinkingOf(encodeUpstreamRequest(off, 'gemini', model, {}, learned))).toEqual({
      thinkingLevel: 'LOW',
    })
    // what the client asked above it goes as it was
    const high = decodeClientRequest(
      'responses',
      {model: 'gpt-5-codex', reasoning: {effort: 'high'}, input: 'hi'},
      {},
    )
    expect(thinkingOf(encodeUpstreamRequest(high, 'gemini', model, {}, learned))).toEqual({
      thinkingLevel: 'HIGH',
      includeThoughts: false,
    })
  })

  it("Vertex's words for MEDIUM: HIGH; a refusal of HIGH, or of a level not named, leaves the level out", () => {
    const a = new UpstreamAdaptations()
    const medium = encodeUpstreamRequest(
      decodeClientRequest('responses', {model: 'x', reasoning: {effort: 'medium'}, input: 'hi'}, {}),
      'gemini',
      'gemini-3-large',
    )
    expect(
      a.learn(
        'vertex',
        'gemini-3-large',
        google(
          'Unable to submit request because thinking_level MEDIUM is not supported by this model. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini',
        ),
        medium.sent,
      ),
    ).toBe('refused thinkingLevel MEDIUM: sent again with HIGH, the next level up')
    expect(a.get('vertex', 'gemini-3-large')).toEqual({thinkingLevels: {MEDIUM: 'HIGH'}})
    // a level the message does not name (another one refused): not learned as this one's
    const b = new UpstreamAdaptations()
    expect(
      b.learn('google', 'm', google('Thinking level LOW is not supported for this model.'), medium.sent),
    ).toBe('refused thinkingLevel MEDIUM: sent again without it, the model decides')
    const high = encodeUpstreamRequest(
      decodeClientRequest('responses', {model: 'x', reasoning: {effort: 'high'}, input: 'hi'}, {}),
      'gemini',
      'gemini-3-pro-preview',
    )
    expect(
      new UpstreamAdaptations().learn(
        'google',
        'm',
        google('Thinking level HIGH is not supported for this model.'),
        high.sent,
      ),
    ).toBe('refused thinkingLevel HIGH: sent again without it, the model decides')
  })

  it("Vertex's words for a Gemini 2.5 model (it takes no level): the level left out at once, no climb", () => {
    const body = {
      contents: [{role: 'user', parts: [{text: 'hi'}]}],
      generationConfig: {thinkingConfig: {thinkingLevel: 'LOW'}},
    }
    const vertex = google(
      'Unable to submit request because thinking_level LOW is not supported by this model. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini',
    )
    const a = new UpstreamAdaptations()
    expect(
      a.learnPassedGeminiThinking('vertex', 'gemini-2.5-flash', vertex, geminiThinkingSent(body), undefined),
    ).toBe('refused thinkingLevel LOW: sent again without it, the model decides')
    expect(a.get('vertex', 'gemini-2.5-flash')).toEqual({noThinkingLevel: true})
    // translated too
    const low = encodeUpstreamRequest(
      decodeClientRequest('responses', {model: 'x', reasoning: {effort: 'low'}, input: 'hi'}, {}),
      'gemini',
      'gemini-3-flash-preview',
    )
    const b = new UpstreamAdaptations()
    expect(b.learn('vertex', 'gemini-2.5-pro', vertex, low.sent)).toBe(
      'refused thinkingLevel LOW: sent again without it, the model decides',
    )
    // Google asking for another level climbs whatever the name (an alias of a Gemini 3 model)
    const c = new UpstreamAdaptations()
    expect(
      c.learn(
        'google',
        'gemini-flash-latest',
        google('Thinking level LOW is not supported for this model. Please retry with other thinking level.'),
        low.sent,
      ),
    ).toBe('refused thinkingLevel LOW: sent again with MEDIUM, the next level up')
  })

  it('a relay name that fixes the level (gemini-3-pro-high): that level from the first request; another refused goes as it at once', () => {
    const model = 'gemini-3-pro-high'
    const refusal = (l: string) =>
      google(`Unable to submit request because thinking_level ${l} is not supported by this model.`)
    // translated: HIGH at once (before, LOW refused, MEDIUM refused, then HIGH: three tries)
    expect(thinkingOf(encodeUpstreamRequest(off, 'gemini', model))).toEqual({thinkingLevel: 'HIGH'})
    // Gemini CLI's own level passed through, refused: the name's level in its place, one retry
    const body = {
      contents: [{role: 'user', parts: [{text: 'hi'}]}],
      generationConfig: {thinkingConfig: {thinkingLevel: 'low'}},
    }
    const a = new UpstreamAdaptations()
    expect(
      a.learnPassedGeminiThinking('relay', model, refusal('LOW'), geminiThinkingSent(body), undefined),
    ).toBe('refused thinkingLevel low: sent again with HIGH, the level its name says')
    expect(a.get('relay', model)).toEqual({thinkingLevels: {LOW: 'HIGH'}})
    // (a name that fixes none climbs one level, as before)
    const b = new UpstreamAdaptations()
    expect(
      b.learnPassedGeminiThinking(
        'relay',
        'gemini-3-pro',
        refusal('LOW'),
        geminiThinkingSent(body),
        undefined,
      ),
    ).toBe('refused thinkingLevel low: sent again with MEDIUM, the next level up')
  })

  it('Gemini CLI passed through: its body as it came until a level is refused, then that level raised in its own case', () => {
    const body = {
      contents: [{role: 'user', parts: [{text: 'hi'}]}],
      generationConfig: {temperature: 1, thinkingConfig: {includeThoughts: true, thinkingLevel: 'minimal'}},
    }
    const a = new UpstreamAdaptations()
    expect(
      a.learnPassedGeminiThinking(
        'google',
        'gemini-3.8-flash',
        google(
          'Thinking level MINIMAL is not supported for this model. Please retry with other thinking level.',
        ),
        geminiThinkingSent(body),
        undefined,
      ),
    ).toBe('refused thinkingLevel minimal: sent again with LOW, the next level up')
    const learned = a.get('google', 'gemini-3.8-flash')!
    expect(JSON.parse(adaptPassedGemini(body, learned).toString())).toEqual({
      ...body,
      generationConfig: {temperature: 1, thinkingConfig: {includeThoughts: true, thinkingLevel: 'low'}},
    })
    // a level not refused, and a body without one: as they came
    const high = {...body, generationConfig: {thinkingConfig: {thinkingLevel: 'HIGH'}}}
    expect(adaptPassedGemini(high, learned).toString()).toBe(JSON.stringify(high))
  })
})

describe("the simulator's Gemini 3 refusals of a level, as Google's table has them", () => {
  const refused = (model: string, thinkingConfig: object, quirks: string[] = []) =>
    refusedThinkingBudget({generationConfig: {thinkingConfig}}, new Set(quirks) as never, model)
  const named = (l: string) =>
    `Thinking level ${l} is not supported for this model. Please retry with other thinking level.`
  it.each([
    ['gemini-3.1-pro-preview', {thinkingLevel: 'MINIMAL'}, named('MINIMAL')],
    ['gemini-3-pro-preview', {thinkingLevel: 'medium'}, named('MEDIUM')],
    ['gemini-3.1-pro-preview', {thinkingLevel: 'MEDIUM'}, undefined],
    ['gemini-3.8-flash', {thinkingLevel: 'MINIMAL'}, named('MINIMAL')],
    ['gemini-3.8-flash-lite', {thinkingLevel: 'MINIMAL'}, undefined],
    ['gemini-3-flash-preview', {thinkingLevel: 'MINIMAL'}, undefined],
    [
      'gemini-3-flash-preview',
      {thinkingLevel: 'LOW', thinkingBudget: 1024},
      'You can only set only one of thinking budget and thinking level.',
    ],
    ['gemini-2.5-flash', {thinkingBudget: 1024}, undefined],
  ])('%s, %j', (model, config, message) => {
    expect(refused(model, config)).toBe(message)
  })
  it('`no-minimal-level` for any name', () => {
    expect(refused('my-flash', {thinkingLevel: 'MINIMAL'}, ['no-minimal-level'])).toBe(named('MINIMAL'))
    expect(refused('my-flash', {thinkingLevel: 'LOW'}, ['no-minimal-level'])).toBeUndefined()
  })
})
