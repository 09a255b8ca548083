/**
 * Two refusals of Google's that the gateway learned wrong or not at all (research56 F2, F3):
 * Gemma 4 on the Gemini API refuses any thinking budget ("Thinking budget is not supported for
 * this model."), which every translated request of Claude Code and Codex carries; and Gemini's
 * `Schema` proto behind a chat server or a relay refuses a JSON Schema type list ("Unknown name
 * \"type\" at '…': Proto field is not repeating, cannot start list."), an MCP tool's
 * `["integer", "null"]`, which was learned as "the keyword `type` is refused" and stripped every
 * type from every tool. Now: one refusal, the request sent again at once and answered, the log
 * row saying what was learned, and the next request right the first time; a `gemma-` name goes
 * without a budget from the first request. The real daemon, the simulator's `no-thinking-budget`
 * and `gemini-schema` quirks, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {GeminiRoutes} from './helpers/gateway.js'
import {projectLogRows, startGeminiRoutes} from './helpers/gateway.js'

let base = ''
let keys = new Map<string, string>()
let routes: GeminiRoutes | undefined

/** Each test its own model: what is learned is kept per provider and model. */
const ROUTES: Record<string, {provider: string; model: string}> = {
  // Gemma 4 behind a name the rule does not know (a relay's alias): learned from its refusal
  'gemma-alias': {provider: 'sim-gemini', model: 'gemma4-31b+no-thinking-budget'},
  // Gemma 4 by its own name: no budget from the first request
  'gemma-named': {provider: 'sim-gemini', model: 'gemma-4-31b-it+no-thinking-budget'},
  // Gemma 4 refusing the level sent (the simulator's Gemini 2.5 quirk): learned
  'gemma4-level': {provider: 'sim-gemini', model: 'gemma-4-26b-a4b-it+no-thinking-level'},
  // Gemma 3 by its name (the simulator refuses any thinking config for it): none from the first request
  'gemma3-named': {provider: 'sim-gemini', model: 'gemma-3-27b-it'},
  // Gemma 3 behind an alias: learned from its refusal
  'gemma3-alias': {provider: 'sim-gemini', model: 'gemma3-27b+no-thinking'},
  // Gemma 3 behind an alias that refuses a system instruction: learned from its refusal
  'gemma3-sys-alias': {provider: 'sim-gemini', model: 'gemma3-it+no-system-instruction'},
  'types-chat': {provider: 'sim-chat', model: 'gemini-2.0-flash+gemini-schema'},
  'types-relay': {provider: 'sim-gemini', model: 'gemini-2.5-pro+gemini-schema'},
}

/** A chat client on a chat upstream: passed through, not translated (opencode, qwen-code). */
const PASSED = {provider: 'sim-chat', model: 'gemini-2.5-flash-lite+gemini-schema'}

beforeAll(async () => {
  routes = await startGeminiRoutes('glearn', ROUTES, PASSED)
  ;({base, keys} = routes)
}, 120_000)

afterAll(() => routes?.stop())

const chatCalls = () => routes!.chatCalls()
const geminiCalls = () => routes!.geminiCalls()

const budgetOf = (call: Record<string, any>): unknown => call.generationConfig?.thinkingConfig?.thinkingBudget

describe("Gemma 4's refusal of any thinking budget", {timeout: 60_000}, () => {
  const params = {
    model: 'claude-sonnet-4-5',
    max_tokens: 8192,
    thinking: {type: 'enabled' as const, budget_tokens: 4096},
  }

  it('Claude Code on an alias: one refusal, sent again without the budget and answered; the next request right at once', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('gemma-alias')!, maxRetries: 0})
    await geminiCalls()
    const first = await client.messages
      .stream({...params, messages: [{role: 'user', content: 'Say hi.'}]})
      .finalMessage()
    expect(first.content.some((b) => b.type === 'text')).toBe(true)
    const calls = await geminiCalls()
    expect(calls).toHaveLength(2)
    expect(budgetOf(calls[0])).toBe(4096)
    expect(calls[1].generationConfig.thinkingConfig).toEqual({includeThoughts: true})
    const [row] = await projectLogRows(base, 'glearn-gemma-alias', 1)
    expect(row).toMatchObject({status: 200})
    expect(row.error).toMatch(/refused thinkingBudget 4096: sent again without it \(the model takes none\)/)

    const second = await client.messages.create({...params, messages: [{role: 'user', content: 'Again.'}]})
    expect(second.content.some((b) => b.type === 'text')).toBe(true)
    const later = await geminiCalls()
    expect(later).toHaveLength(1)
    expect(budgetOf(later[0])).toBeUndefined()
    expect((await projectLogRows(base, 'glearn-gemma-alias', 2))[1]).toMatchObject({status: 200, error: null})

    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {adaptations: any[]}
    expect(adaptations.find((a) => a.model === ROUTES['gemma-alias'].model)).toMatchObject({
      provider: 'sim-gemini',
      rules: ['thinkingBudget left out (the model takes none)'],
    })
  })

  it('Codex on a gemma- name: no budget from the first request, answered at once', async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('gemma-named')!, maxRetries: 0})
    await geminiCalls()
    const answer = await openai.responses.create({
      model: 'gpt-5-codex',
      store: false,
      reasoning: {effort: 'high'},
      input: 'Say hi.',
    })
    expect(answer.status).toBe('completed')
    const calls = await geminiCalls()
    expect(calls).toHaveLength(1)
    expect(budgetOf(calls[0])).toBeUndefined()
    // (its effort as Gemma 4's level: MINIMAL or HIGH, the two it takes)
    expect(calls[0].generationConfig.thinkingConfig.thinkingLevel).toBe('HIGH')
    expect((await projectLogRows(base, 'glearn-gemma-named', 1))[0]).toMatchObject({status: 200, error: null})
  })

  it('Claude Code on Gemma 4 that refuses the level sent: learned, sent again without it', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('gemma4-level')!, maxRetries: 0})
    await geminiCalls()
    const first = await client.messages.create({...params, messages: [{role: 'user', content: 'Say hi.'}]})
    expect(first.content.some((b) => b.type === 'text')).toBe(true)
    const calls = await geminiCalls()
    expect(calls).toHaveLength(2)
    expect(calls[0].generationConfig.thinkingConfig).toEqual({thinkingLevel: 'HIGH', includeThoughts: true})
    expect(calls[1].generationConfig.thinkingConfig).toEqual({includeThoughts: true})
    const [row] = await projectLogRows(base, 'glearn-gemma4-level', 1)
    expect(row).toMatchObject({status: 200})
    expect(row.error).toMatch(/refused thinkingLevel HIGH: sent again without it, the model decides/)
  })
})

describe("Gemma 3's refusal of any thinking config", {timeout: 60_000}, () => {
  const params = {
    model: 'claude-sonnet-4-5',
    max_tokens: 8192,
    thinking: {type: 'enabled' as const, budget_tokens: 4096},
  }

  it('Claude Code on a gemma-3 name: no thinking config from the first request, answered at once', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('gemma3-named')!, maxRetries: 0})
    await geminiCalls()
    const answer = await client.messages.create({...params, messages: [{role: 'user', content: 'Say hi.'}]})
    expect(answer.content.some((b) => b.type === 'text')).toBe(true)
    const calls = await geminiCalls()
    expect(calls).toHaveLength(1)
    expect(calls[0].generationConfig).not.toHaveProperty('thinkingConfig')
    expect((await projectLogRows(base, 'glearn-gemma3-named', 1))[0]).toMatchObject({
      status: 200,
      error: null,
    })
  })

  it("Codex on an alias: Google's refusal learned, sent again without the config; the next request right at once", async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('gemma3-alias')!, maxRetries: 0})
    await geminiCalls()
    const ask = () =>
      openai.responses.create({
        model: 'gpt-5-codex',
        store: false,
        reasoning: {effort: 'low'},
        input: 'Say hi.',
      })
    expect((await ask()).status).toBe('completed')
    const calls = await geminiCalls()
    expect(calls).toHaveLength(2)
    expect(calls[0].generationConfig.thinkingConfig).toBeDefined()
    expect(calls[1].generationConfig ?? {}).not.toHaveProperty('thinkingConfig')
    const [row] = await projectLogRows(base, 'glearn-gemma3-alias', 1)
    expect(row).toMatchObject({status: 200})
    expect(row.error).toMatch(/refused thinkingConfig: sent again without it \(the model does not think\)/)
    expect((await ask()).status).toBe('completed')
    expect(await geminiCalls()).toHaveLength(1)
  })
})

describe("Gemma 3's refusal of a system instruction", {timeout: 60_000}, () => {
  const SYSTEM = 'You are Claude Code, an agent.'
  const params = {model: 'claude-sonnet-4-5', max_tokens: 1024, system: SYSTEM}

  it('Claude Code on a gemma-3 name: the system prompt in the first user turn from the first request', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('gemma3-named')!, maxRetries: 0})
    await geminiCalls()
    const answer = await client.messages.create({...params, messages: [{role: 'user', content: 'Say hi.'}]})
    expect(answer.content.some((b) => b.type === 'text')).toBe(true)
    const calls = await geminiCalls()
    expect(calls).toHaveLength(1)
    expect(calls[0]).not.toHaveProperty('systemInstruction')
    expect(calls[0].contents[0]).toEqual({role: 'user', parts: [{text: `${SYSTEM}\n\n`}, {text: 'Say hi.'}]})
  })

  it("Claude Code on an alias: Google's refusal learned, sent again with the system prompt in the first user turn; the next request right at once", async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('gemma3-sys-alias')!, maxRetries: 0})
    await geminiCalls()
    const ask = () => client.messages.create({...params, messages: [{role: 'user', content: 'Say hi.'}]})
    expect((await ask()).content.some((b) => b.type === 'text')).toBe(true)
    const calls = await geminiCalls()
    expect(calls).toHaveLength(2)
    expect(calls[0].systemInstruction).toEqual({parts: [{text: SYSTEM}]})
    expect(calls[1]).not.toHaveProperty('systemInstruction')
    expect(calls[1].contents[0].parts[0]).toEqual({text: `${SYSTEM}\n\n`})
    const [row] = await projectLogRows(base, 'glearn-gemma3-sys-alias', 1)
    expect(row).toMatchObject({status: 200})
    expect(row.error).toMatch(
      /refused systemInstruction: sent again with the system text in the first user turn/,
    )
    await ask()
    expect(await geminiCalls()).toHaveLength(1)
  })
})

/** An MCP tool's schema as zod-to-json-schema writes an optional field: a type list. */
const READ_SCHEMA = {
  type: 'object',
  properties: {
    file_path: {type: 'string', description: 'The file to read'},
    limit: {type: ['integer', 'null'], description: 'Lines to read'},
  },
  required: ['file_path'],
}
const ONE_TYPE = {
  type: 'object',
  properties: {
    file_path: {type: 'string', description: 'The file to read'},
    limit: {type: 'integer', nullable: true, description: 'Lines to read'},
  },
  required: ['file_path'],
}
const LEARNED_NOTE =
  'refused a list of types in a tool schema: sent again with one type each (nullable, or anyOf)'

describe("Gemini's refusal of a type list behind a chat server or a relay", {timeout: 60_000}, () => {
  it('Claude Code through a chat upstream: sent again with one type each, the root type object kept; then at once', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('types-chat')!, maxRetries: 0})
    const params = {
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      tools: [{name: 'Read', input_schema: READ_SCHEMA as Anthropic.Tool.InputSchema}],
    }
    await chatCalls()
    const first = await client.messages.create({
      ...params,
      messages: [{role: 'user', content: 'Read a.txt.'}],
    })
    expect(first.content.length).toBeGreaterThan(0)
    const calls = await chatCalls()
    expect(calls).toHaveLength(2)
    expect(calls[0].tools[0].function.parameters.properties.limit.type).toEqual(['integer', 'null'])
    expect(calls[1].tools[0].function.parameters).toEqual(ONE_TYPE)
    const [row] = await projectLogRows(base, 'glearn-types-chat', 1)
    expect(row).toMatchObject({status: 200})
    expect(row.error).toContain(LEARNED_NOTE)

    await client.messages.create({...params, messages: [{role: 'user', content: 'Read b.txt.'}]})
    const later = await chatCalls()
    expect(later).toHaveLength(1)
    // the same bytes as the retry (the upstream's prompt cache)
    expect(JSON.stringify(later[0].tools)).toBe(JSON.stringify(calls[1].tools))
    expect((await projectLogRows(base, 'glearn-types-chat', 2))[1]).toMatchObject({status: 200, error: null})
    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {adaptations: any[]}
    expect(adaptations.find((a) => a.model === ROUTES['types-chat'].model)?.rules).toEqual([
      "tool schemas' type lists sent as one type each (nullable, or anyOf: Gemini's schema subset)",
    ])
  })

  it('a relay that converts parametersJsonSchema to parameters: learned alike', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('types-relay')!, maxRetries: 0})
    const params = {
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      tools: [{name: 'Read', input_schema: READ_SCHEMA as Anthropic.Tool.InputSchema}],
    }
    await geminiCalls()
    await client.messages.create({...params, messages: [{role: 'user', content: 'Read a.txt.'}]})
    const calls = await geminiCalls()
    expect(calls).toHaveLength(2)
    expect(calls[1].tools[0].functionDeclarations[0].parametersJsonSchema).toEqual(ONE_TYPE)
    expect((await projectLogRows(base, 'glearn-types-relay', 1))[0].error).toContain(LEARNED_NOTE)
    await client.messages.create({...params, messages: [{role: 'user', content: 'Read b.txt.'}]})
    expect(await geminiCalls()).toHaveLength(1)
  })

  it('a chat client passed through (opencode): learned for its body, then at once', async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('passed')!, maxRetries: 0})
    const tools = [{type: 'function' as const, function: {name: 'read', parameters: READ_SCHEMA}}]
    await chatCalls()
    const first = await openai.chat.completions
      .stream({model: 'gemini', messages: [{role: 'user', content: 'Read a.txt.'}], tools})
      .finalChatCompletion()
    expect(first.choices).toHaveLength(1)
    const calls = await chatCalls()
    expect(calls).toHaveLength(2)
    expect(calls[0].tools).toEqual(tools)
    expect(calls[1].tools[0].function.parameters).toEqual(ONE_TYPE)
    const [row] = await projectLogRows(base, 'glearn-passed', 1)
    expect(row).toMatchObject({status: 200})
    expect(row.error).toBe(`sim-chat ${LEARNED_NOTE}`)
    await openai.chat.completions.create({
      model: 'gemini',
      messages: [{role: 'user', content: 'Read b.txt.'}],
      tools,
    })
    const later = await chatCalls()
    expect(later).toHaveLength(1)
    expect(later[0].tools[0].function.parameters).toEqual(ONE_TYPE)
  })
})
