/**
 * Thinking settings refused by servers that are not the vendor's own words for them:
 * - GLM-5.3 has no off switch (Z.AI's 1210, the simulator's `zai-always-thinks`): by its name,
 *   Claude Code's helper calls (`thinking: disabled`), Gemini CLI's `thinkingBudget: 0` and
 *   Codex's effort `none` reach it as `reasoning_effort: "low"`, and Claude Code's effort `medium`
 *   as `high`, each on the first try; a model whose name does not say so (a later GLM) refuses the
 *   gateway's `thinking: disabled` once, and that one refusal teaches every effort it lists;
 * - MiniMax-M3's Anthropic endpoint refuses `thinking.type: enabled` (`minimax-thinking`): Codex
 *   translated onto it goes again as adaptive, and so does Claude Code's `enabled` with a budget
 *   passed through;
 * - a relay's zod schema refuses Claude Code's adaptive thinking (`enum-thinking`), or a pydantic
 *   one without an `adaptive` member (`pydantic-thinking`): passed through, it goes again as
 *   `enabled` with a budget;
 * - Claude Code's efforts above high (`/effort max`, `xhigh`): GLM-5.3 gets its `max`, GPT-5.5 its
 *   `xhigh` (refused by a model that has none: `high` from the one refusal); a Messages server that
 *   takes low, medium and high only (`effort-levels`) refuses `max` once, and gets `high`;
 * - Kimi K3 always reasons (low, high, max) and refuses a forced tool_choice (the simulator by the
 *   name `kimi-k3…`): each client's "no thinking" reaches it as effort low, its efforts as it takes
 *   them, a forced call as `auto` with the call asked for in words, each in one try; Kimi Code's
 *   `kimi-for-coding` the same (liliMozi/openhanako #2092: `medium` refused).
 * The real daemon, the simulator's chat and Messages upstreams, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {codexRequest} from './helpers/codex.js'
import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

// (each policy's messages route passes to a Messages model, translates to a chat one; its
// responses and gemini routes translate)
const gw = translatedRoutes(
  {
    glm: ['sim-chat', 'glm-5.3+zai-always-thinks'],
    later: ['sim-chat', 'glm-5.4+zai-always-thinks'],
    minimax: ['sim-messages', 'MiniMax-M3+minimax-thinking'],
    minimaxPassed: ['sim-messages', 'minimax-m3+minimax-thinking'],
    relay: ['sim-messages', 'qwen3.7-plus+enum-thinking'],
    pyrelay: ['sim-messages', 'qwen3.7-plus+pydantic-thinking'],
    levels: ['sim-messages', 'qwen3.7-plus+effort-levels'],
    gpt: ['sim-chat', 'gpt-5.5+no-minimal-effort'],
    // (the simulator refuses as Kimi K3 by the name)
    k3: ['sim-chat', 'kimi-k3'],
    k3pro: ['sim-chat', 'kimi-k3.1-pro-highspeed'],
    // (Kimi Code, low, high and max only: the simulator's quirk by its name)
    kfc: ['sim-chat', 'kimi-for-coding+kimi-always-thinks'],
  },
  {prefix: 'thinkrules', families: ['messages', 'responses', 'gemini']},
)

const CHAT = /\/chat\/completions$/
const MESSAGES = /\/v1\/messages$/
const rows = (id: string, count = 1) => projectLogRows(gw.base, `thinkrules-${id}`, count)
const learned = async (model: string): Promise<string[]> => {
  const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {
    adaptations: Array<{model: string; rules: string[]}>
  }
  return adaptations.find((a) => a.model === model)?.rules ?? []
}

/** Claude Code 2.1.332's helper call (a title), thinking off. */
const helperCall = (): any => ({
  model: 'claude-haiku-4-5',
  max_tokens: 512,
  thinking: {type: 'disabled'},
  messages: [{role: 'user', content: 'Write a title for this chat'}],
})

/** Claude Code 2.1.332's main request, for a model that takes adaptive thinking (effort medium). */
const mainCall = (model = 'claude-opus-5-5', effort = 'medium'): any => ({
  model,
  max_tokens: 32000,
  thinking: {type: 'adaptive', display: 'omitted'},
  output_config: {effort},
  messages: [{role: 'user', content: 'Say hello.'}],
})

/** Claude Code's main request at each of `efforts` on the route `id`, each answered with text. */
async function mainCalls(id: string, efforts: string[]): Promise<void> {
  const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get(id)!, maxRetries: 0})
  for (const effort of efforts) {
    const main = await client.messages.stream(mainCall('claude-opus-5-5', effort)).finalMessage()
    expect(
      main.content.some((b) => b.type === 'text'),
      effort,
    ).toBe(true)
  }
}

/** Gemini CLI's `thinkingBudget: 0` and Codex's effort `none` on the route `id`, each answered. */
async function geminiAndCodexOff(id: string): Promise<void> {
  const ai = new GoogleGenAI({apiKey: gw.keys.get(id)!, httpOptions: {baseUrl: gw.base}})
  const gemini = await ai.models.generateContent({
    model: 'gemini-2.5-flash',
    contents: [{role: 'user', parts: [{text: 'Write a title for this chat'}]}],
    config: {thinkingConfig: {thinkingBudget: 0}},
  })
  expect(gemini.candidates?.[0]?.content?.parts?.some((p) => p.text)).toBe(true)
  const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(id)!, maxRetries: 0})
  const codex = await openai.responses.create({
    model: 'gpt-5.5',
    input: 'Write a title for this chat',
    reasoning: {effort: 'none'},
  })
  expect(codex.status).toBe('completed')
}

describe('GLM-5.3, which always thinks', {timeout: 60_000}, () => {
  it("by its name: Claude Code's helper call goes with effort low, its medium as high, each on the first try", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('glm')!, maxRetries: 0})
    const title = await client.messages.create(helperCall())
    expect(title.content.some((b) => b.type === 'text')).toBe(true)
    const main = await client.messages.stream(mainCall()).finalMessage()
    expect(main.content.map((b) => b.type)).toEqual(['thinking', 'text'])
    const sent = await takeSimCalls(gw.simOrigin, CHAT)
    expect(sent.map((b) => [b.thinking, b.reasoning_effort])).toEqual([
      [undefined, 'low'],
      [undefined, 'high'],
    ])
    expect((await rows('glm', 2)).map((r) => [r.status, r.error])).toEqual([
      [200, null],
      [200, null],
    ])
  })

  it("Claude Code's /effort max and xhigh: max, its most, on the first try", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('glm')!, maxRetries: 0})
    for (const effort of ['max', 'xhigh']) {
      const main = await client.messages.stream(mainCall('claude-opus-5-5', effort)).finalMessage()
      expect(
        main.content.map((b) => b.type),
        effort,
      ).toEqual(['thinking', 'text'])
    }
    const sent = await takeSimCalls(gw.simOrigin, CHAT)
    expect(sent.map((b) => b.reasoning_effort)).toEqual(['max', 'max'])
    // (the two rows after the test before's two)
    expect((await rows('glm', 4)).slice(2).map((r) => [r.status, r.error])).toEqual([
      [200, null],
      [200, null],
    ])
  })

  it("Gemini CLI's thinkingBudget 0 and Codex's effort none: low too", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    await geminiAndCodexOff('glm')
    const sent = await takeSimCalls(gw.simOrigin, CHAT)
    expect(sent.map((b) => [b.thinking, b.reasoning_effort])).toEqual([
      [undefined, 'low'],
      [undefined, 'low'],
    ])
  })

  it('a name that does not say it: one refusal of the switch teaches every effort it lists', async () => {
    await takeSimCalls(gw.simOrigin, /./)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('later')!, maxRetries: 0})
    const title = await client.messages.create(helperCall())
    expect(title.content.some((b) => b.type === 'text')).toBe(true)
    const tries = await takeSimCalls(gw.simOrigin, CHAT)
    expect(tries.map((b) => [b.thinking, b.reasoning_effort])).toEqual([
      [{type: 'disabled'}, undefined],
      [undefined, 'low'],
    ])
    // the main agent's medium: one try, as the model takes it
    const main = await client.messages.stream(mainCall()).finalMessage()
    expect(main.content.map((b) => b.type)).toEqual(['thinking', 'text'])
    const [next] = await takeSimCalls(gw.simOrigin, CHAT)
    expect(next.reasoning_effort).toBe('high')
    // and the next helper call goes with low from the start
    await client.messages.create(helperCall())
    const again = await takeSimCalls(gw.simOrigin, CHAT)
    expect(again.map((b) => [b.thinking, b.reasoning_effort])).toEqual([[undefined, 'low']])
    expect((await rows('later', 3)).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-chat refused thinking off (it always thinks, at low, high, max): sent again with reasoning_effort low',
      ],
      [200, null],
      [200, null],
    ])
    expect(await learned('glm-5.4+zai-always-thinks')).toEqual([
      'thinking off (effort none) sent as effort low',
      'effort minimal sent as low',
      'effort medium sent as high',
      'effort xhigh sent as max',
    ])
  })
})

describe('a thinking form an Anthropic-compatible server refuses', {timeout: 60_000}, () => {
  it("MiniMax-M3 refuses thinking.type enabled: Codex's effort goes again as adaptive, and so from then on", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('minimax')!, maxRetries: 0})
    const first = await openai.responses.create(codexRequest('Say hello.'))
    expect(first.status).toBe('completed')
    const tries = await takeSimCalls(gw.simOrigin, MESSAGES)
    expect(tries.map((b) => b.thinking?.type)).toEqual(['enabled', 'adaptive'])
    expect(tries[1].output_config).toEqual({effort: 'high'})
    await openai.responses.create(codexRequest('Say hello again.'))
    const next = await takeSimCalls(gw.simOrigin, MESSAGES)
    expect(next.map((b) => b.thinking?.type)).toEqual(['adaptive'])
    expect((await rows('minimax', 2)).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-messages refused thinking.type enabled: sent again as adaptive thinking with output_config.effort',
      ],
      [200, null],
    ])
  })

  it("MiniMax-M3 refuses Claude Code's thinking enabled with a budget, passed through: adaptive, and so from then on", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('minimaxPassed')!, maxRetries: 0})
    const enabled = (): any => ({
      model: 'minimax-m3',
      max_tokens: 32000,
      thinking: {type: 'enabled', budget_tokens: 31999},
      messages: [{role: 'user', content: 'Say hello.'}],
    })
    const first = await client.messages.stream(enabled()).finalMessage()
    expect(first.content.map((b) => b.type)).toEqual(['thinking', 'text'])
    await client.messages.stream(enabled()).finalMessage()
    const tries = await takeSimCalls(gw.simOrigin, MESSAGES)
    expect(tries.map((b) => [b.thinking, b.output_config])).toEqual([
      [{type: 'enabled', budget_tokens: 31999}, undefined],
      [{type: 'adaptive'}, {effort: 'high'}],
      [{type: 'adaptive'}, {effort: 'high'}],
    ])
    expect((await rows('minimaxPassed', 2)).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-messages refused thinking.type enabled: sent again as adaptive thinking with output_config.effort',
      ],
      [200, null],
    ])
  })

  it("a relay's zod schema refuses Claude Code's adaptive thinking, passed through: enabled with a budget", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('relay')!, maxRetries: 0})
    const first = await client.messages.stream(mainCall('qwen3.7-plus')).finalMessage()
    expect(first.content.some((b) => b.type === 'text')).toBe(true)
    const tries = await takeSimCalls(gw.simOrigin, MESSAGES)
    expect(tries.map((b) => b.thinking?.type)).toEqual(['adaptive', 'enabled'])
    expect(tries[1].thinking.budget_tokens).toBeGreaterThanOrEqual(1024)
    expect(tries[1].thinking.budget_tokens).toBeLessThan(32000)
    await client.messages.stream(mainCall('qwen3.7-plus')).finalMessage()
    const next = await takeSimCalls(gw.simOrigin, MESSAGES)
    expect(next.map((b) => b.thinking?.type)).toEqual(['enabled'])
    expect((await rows('relay', 2)).map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-messages refused adaptive thinking: sent again with thinking.type enabled and a budget'],
      [200, null],
    ])
  })
})

describe('a pydantic schema without adaptive thinking', {timeout: 60_000}, () => {
  it("refuses Claude Code's adaptive thinking (thinking.adaptive: Extra inputs), passed through: enabled with a budget", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('pyrelay')!, maxRetries: 0})
    const first = await client.messages.stream(mainCall('qwen3.7-plus')).finalMessage()
    expect(first.content.some((b) => b.type === 'text')).toBe(true)
    const tries = await takeSimCalls(gw.simOrigin, MESSAGES)
    expect(tries.map((b) => b.thinking?.type)).toEqual(['adaptive', 'enabled'])
    await client.messages.stream(mainCall('qwen3.7-plus')).finalMessage()
    expect((await takeSimCalls(gw.simOrigin, MESSAGES)).map((b) => b.thinking?.type)).toEqual(['enabled'])
    expect((await rows('pyrelay', 2)).map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-messages refused adaptive thinking: sent again with thinking.type enabled and a budget'],
      [200, null],
    ])
  })
})

describe("Claude Code's efforts above high, refused", {timeout: 60_000}, () => {
  it('a Messages server that takes low, medium and high: max refused once, high from then on (xhigh too)', async () => {
    await takeSimCalls(gw.simOrigin, /./)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('levels')!, maxRetries: 0})
    const first = await client.messages.stream(mainCall('qwen3.7-plus', 'max')).finalMessage()
    expect(first.content.some((b) => b.type === 'text')).toBe(true)
    const tries = await takeSimCalls(gw.simOrigin, MESSAGES)
    expect(tries.map((b) => b.output_config)).toEqual([{effort: 'max'}, {effort: 'high'}])
    await client.messages.stream(mainCall('qwen3.7-plus', 'xhigh')).finalMessage()
    await client.messages.stream(mainCall('qwen3.7-plus', 'medium')).finalMessage()
    const next = await takeSimCalls(gw.simOrigin, MESSAGES)
    expect(next.map((b) => b.output_config)).toEqual([{effort: 'high'}, {effort: 'medium'}])
    expect((await rows('levels', 3)).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-messages refused output_config.effort max (it takes low, medium, high): sent again with high',
      ],
      [200, null],
      [200, null],
    ])
    expect(await learned('qwen3.7-plus+effort-levels')).toEqual([
      'effort xhigh sent as high',
      'effort max sent as high',
    ])
  })

  it("Claude Code's /effort max stated mid-conversation: the retry, and the next request, at high", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    // (Claude Code's user agent: its mid-conversation system messages are hoisted into the system
    // prompt, the last statement's effort the request's, before what was learned is applied)
    const client = new Anthropic({
      baseURL: gw.base,
      apiKey: gw.keys.get('levels')!,
      maxRetries: 0,
      defaultHeaders: {'user-agent': 'claude-cli/2.1.332 (external, sdk-cli)'},
    })
    const stated = (): any => ({
      ...mainCall('qwen3.7-plus', 'max'),
      messages: [
        {role: 'user', content: 'Say hello.'},
        {role: 'assistant', content: 'Hello.'},
        {role: 'user', content: 'Again.'},
        {role: 'system', content: [], output_config: {effort: 'max'}},
      ],
    })
    const first = await client.messages.stream(stated()).finalMessage()
    expect(first.content.some((b) => b.type === 'text')).toBe(true)
    await client.messages.stream(stated()).finalMessage()
    const tries = await takeSimCalls(gw.simOrigin, MESSAGES)
    // (learned by the test before: high from the first try)
    expect(tries.map((b) => b.output_config)).toEqual([{effort: 'high'}, {effort: 'high'}])
    expect(tries.every((b) => b.messages.every((m: {role: string}) => m.role !== 'system'))).toBe(true)
  })

  it('GPT-5.5 by its name gets xhigh; a model that refuses it teaches high from the one refusal', async () => {
    await takeSimCalls(gw.simOrigin, /./)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('gpt')!, maxRetries: 0})
    const first = await client.messages.stream(mainCall('claude-opus-5-5', 'max')).finalMessage()
    expect(first.content.some((b) => b.type === 'text')).toBe(true)
    const tries = await takeSimCalls(gw.simOrigin, CHAT)
    expect(tries.map((b) => b.reasoning_effort)).toEqual(['xhigh', 'high'])
    await client.messages.stream(mainCall('claude-opus-5-5', 'xhigh')).finalMessage()
    expect((await takeSimCalls(gw.simOrigin, CHAT)).map((b) => b.reasoning_effort)).toEqual(['high'])
    expect((await rows('gpt', 2)).map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-chat refused reasoning_effort xhigh: sent again with high'],
      [200, null],
    ])
  })
})

describe('Kimi K3, which always reasons and refuses a forced tool_choice', {timeout: 60_000}, () => {
  it("by its name: Claude Code's helper call, Gemini CLI's thinkingBudget 0 and Codex's effort none go with effort low, one try each, no note", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('k3')!, maxRetries: 0})
    const title = await client.messages.create(helperCall())
    expect(title.content.some((b) => b.type === 'text')).toBe(true)
    await geminiAndCodexOff('k3')
    const sent = await takeSimCalls(gw.simOrigin, CHAT)
    expect(sent.map((b) => [b.thinking, b.reasoning_effort])).toEqual([
      [undefined, 'low'],
      [undefined, 'low'],
      [undefined, 'low'],
    ])
    expect((await rows('k3', 3)).map((r) => [r.status, r.error])).toEqual([
      [200, null],
      [200, null],
      [200, null],
    ])
  })

  it("K3.1 Pro: Claude Code's medium as high, xhigh and max as max, on the first try", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    await mainCalls('k3pro', ['medium', 'xhigh', 'max'])
    const sent = await takeSimCalls(gw.simOrigin, CHAT)
    expect(sent.map((b) => [b.thinking, b.reasoning_effort])).toEqual([
      [undefined, 'high'],
      [undefined, 'max'],
      [undefined, 'max'],
    ])
    expect((await rows('k3pro', 3)).map((r) => r.error)).toEqual([null, null, null])
  })

  it("Kimi Code's kimi-for-coding: Claude Code's medium as high, max as max, its helper call as low, one try each", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    await mainCalls('kfc', ['medium', 'max'])
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('kfc')!, maxRetries: 0})
    const title = await client.messages.create(helperCall())
    expect(title.content.some((b) => b.type === 'text')).toBe(true)
    const sent = await takeSimCalls(gw.simOrigin, CHAT)
    expect(sent.map((b) => [b.thinking, b.reasoning_effort])).toEqual([
      [undefined, 'high'],
      [undefined, 'max'],
      [undefined, 'low'],
    ])
    expect((await rows('kfc', 3)).map((r) => r.error)).toEqual([null, null, null])
    expect(await learned('kimi-for-coding+kimi-always-thinks')).toEqual([])
  })

  it("a forced tool_choice (Claude Code's StructuredOutput): auto and the call asked for in words, one try", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('k3')!, maxRetries: 0})
    const answer = await client.messages.create({
      ...helperCall(),
      max_tokens: 16000,
      thinking: {type: 'enabled', budget_tokens: 8000},
      tools: [
        {
          name: 'StructuredOutput',
          description: 'Give the answer',
          input_schema: {type: 'object', properties: {summary: {type: 'string'}}, required: ['summary']},
        },
      ],
      tool_choice: {type: 'tool', name: 'StructuredOutput'},
    })
    expect(answer.content.find((b) => b.type === 'tool_use')).toMatchObject({name: 'StructuredOutput'})
    const sent = await takeSimCalls(gw.simOrigin, CHAT)
    expect(sent.map((b) => [b.tool_choice, b.thinking])).toEqual([['auto', undefined]])
    expect(sent[0].messages.at(-1).content).toMatch(/call the tool StructuredOutput/)
    // (the row after the first test's three)
    expect((await rows('k3', 4)).slice(3).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'tool_choice sent as auto, the call asked for at the end of the prompt (the model refuses a forced one and cannot stop thinking)',
      ],
    ])
  })
})
