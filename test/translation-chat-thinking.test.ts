/**
 * A chat client's thinking setting in the fields other than `reasoning_effort` that chat clients
 * write (OpenRouter's `reasoning`, DeepSeek's, Kimi's and GLM's `thinking`, DashScope's
 * `enable_thinking`: qwen-code, opencode) keeps its meaning translated to a Messages or Gemini
 * upstream: its budget, or thinking off. The real daemon, the simulator, the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {startTranslatedRoutes, takeSimCalls} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
let keys = new Map<string, string>()

beforeAll(async () => {
  ;({base, simOrigin, stop, keys} = await startTranslatedRoutes(
    {claude: ['sim-messages', 'claude-sonnet-4-5'], gemini: ['sim-gemini', 'gemini-2.5-flash']},
    {prefix: 'chthink', families: ['chat']},
  ))
}, 120_000)

afterAll(() => stop())

const client = (id: string) => new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get(id)!, maxRetries: 0})

/** A chat request with `fields` beside its messages (fields the SDK's types do not name). */
const ask = (id: string, fields: Record<string, unknown>) =>
  client(id).chat.completions.create({
    model: 'qwen3-coder-plus',
    max_tokens: 8192,
    messages: [{role: 'user', content: 'Say hello.'}],
    ...fields,
  } as OpenAI.ChatCompletionCreateParamsNonStreaming)

describe("a chat client's thinking fields, translated", {timeout: 60_000}, () => {
  it("to a Messages upstream: the budget of OpenRouter's reasoning and of DeepSeek's thinking", async () => {
    await takeSimCalls(simOrigin, /\/v1\/messages$/)
    for (const fields of [
      {reasoning: {max_tokens: 4096}},
      {thinking: {type: 'enabled', budget_tokens: 4096}},
      {enable_thinking: true, thinking_budget: 4096},
    ]) {
      const answer = await ask('claude', fields)
      expect(answer.choices[0].message.content).toBeTruthy()
    }
    const sent = await takeSimCalls(simOrigin, /\/v1\/messages$/)
    expect(sent.map((c) => c.thinking)).toEqual([
      {type: 'enabled', budget_tokens: 4096},
      {type: 'enabled', budget_tokens: 4096},
      {type: 'enabled', budget_tokens: 4096},
    ])
  })

  it('to a Gemini upstream: thinking off from each off switch, a budget kept', async () => {
    await takeSimCalls(simOrigin, /generateContent$/)
    for (const fields of [
      {reasoning: {enabled: false}},
      {thinking: {type: 'disabled'}},
      {enable_thinking: false},
      {chat_template_kwargs: {enable_thinking: false}},
      {reasoning: {effort: 'high', max_tokens: 2048}},
    ])
      await ask('gemini', fields)
    const sent = await takeSimCalls(simOrigin, /generateContent$/)
    expect(sent.map((c) => c.generationConfig?.thinkingConfig)).toEqual([
      {thinkingBudget: 0},
      {thinkingBudget: 0},
      {thinkingBudget: 0},
      {thinkingBudget: 0},
      {thinkingBudget: 2048},
    ])
  })
})
