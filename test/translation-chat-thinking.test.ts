/**
 * A chat client's thinking setting in the fields other than `reasoning_effort` that chat clients
 * write (OpenRouter's `reasoning`, DeepSeek's, Kimi's and GLM's `thinking`, DashScope's
 * `enable_thinking`: qwen-code, opencode) keeps its meaning translated to a Messages or Gemini
 * upstream: its budget, or thinking off. The real daemon, the simulator, the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {claude: ['sim-messages', 'claude-sonnet-4-5'], gemini: ['sim-gemini', 'gemini-2.5-flash']},
  {prefix: 'chthink', families: ['chat']},
)

const client = (id: string) => new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(id)!, maxRetries: 0})

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
    await takeSimCalls(gw.simOrigin, /\/v1\/messages$/)
    for (const fields of [
      {reasoning: {max_tokens: 4096}},
      {thinking: {type: 'enabled', budget_tokens: 4096}},
      {enable_thinking: true, thinking_budget: 4096},
    ]) {
      const answer = await ask('claude', fields)
      expect(answer.choices[0].message.content).toBeTruthy()
    }
    const sent = await takeSimCalls(gw.simOrigin, /\/v1\/messages$/)
    expect(sent.map((c) => c.thinking)).toEqual([
      {type: 'enabled', budget_tokens: 4096},
      {type: 'enabled', budget_tokens: 4096},
      {type: 'enabled', budget_tokens: 4096},
    ])
  })

  it('to a Gemini upstream: thinking off from each off switch, a budget kept', async () => {
    await takeSimCalls(gw.simOrigin, /generateContent$/)
    for (const fields of [
      {reasoning: {enabled: false}},
      {thinking: {type: 'disabled'}},
      {enable_thinking: false},
      {chat_template_kwargs: {enable_thinking: false}},
      {reasoning: {effort: 'high', max_tokens: 2048}},
    ])
      await ask('gemini', fields)
    const sent = await takeSimCalls(gw.simOrigin, /generateContent$/)
    expect(sent.map((c) => c.generationConfig?.thinkingConfig)).toEqual([
      {thinkingBudget: 0},
      {thinkingBudget: 0},
      {thinkingBudget: 0},
      {thinkingBudget: 0},
      {thinkingBudget: 2048},
    ])
  })
})
