/**
 * "Thinking off" to a chat upstream whose model thinks unless told not to (DeepSeek V4, the
 * simulator's `deepseek-v4*` names): Claude Code's `thinking: disabled`, Codex's effort `none` and
 * Gemini CLI's `thinkingBudget: 0` reach it as `thinking: {type: "disabled"}`, and the answer has
 * no reasoning; a request that did not ask for it goes as before and thinks. A strict server
 * that refuses the field costs one failed try: the request goes again without it. The real
 * daemon, the official Anthropic, OpenAI and Google Gen AI SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {v4: 'deepseek-v4-flash', strict: 'glm-4.7+strict-fields', gpt54: 'gpt-5.4'},
  {prefix: 'thinking-off', provider: 'sim-chat', families: ['messages', 'responses', 'gemini']},
)

describe('thinking off to a chat model that thinks by default', {timeout: 60_000}, () => {
  it("Claude Code's thinking disabled reaches DeepSeek V4 as its switch: no reasoning back", async () => {
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('v4')!, maxRetries: 0})
    const params = {
      model: 'claude-haiku-4-5',
      max_tokens: 512,
      messages: [{role: 'user' as const, content: 'Write a title for this chat'}],
    }
    await takeSimCalls(gw.simOrigin, /./)
    const off = await client.messages.create({...params, thinking: {type: 'disabled'}})
    expect(off.content.map((b) => b.type)).toEqual(['text'])
    const [sent] = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(sent.thinking).toEqual({type: 'disabled'})

    // not asked: nothing sent, and the model thinks as it does by default
    const on = await client.messages.create(params)
    expect(on.content.map((b) => b.type)).toEqual(['thinking', 'text'])
    const [plain] = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(plain.thinking).toBeUndefined()
  })

  it("Codex's effort none and Gemini CLI's thinkingBudget 0 too", async () => {
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('v4')!, maxRetries: 0})
    await takeSimCalls(gw.simOrigin, /./)
    const answer = await openai.responses.create({
      model: 'gpt-5.5',
      input: 'Write a title for this chat',
      reasoning: {effort: 'none'},
    })
    expect(answer.output.map((o) => o.type)).toEqual(['message'])
    const ai = new GoogleGenAI({apiKey: gw.keys.get('v4')!, httpOptions: {baseUrl: gw.base}})
    const gemini = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: [{role: 'user', parts: [{text: 'Write a title for this chat'}]}],
      config: {thinkingConfig: {thinkingBudget: 0}},
    })
    expect(gemini.candidates?.[0]?.content?.parts?.some((p) => p.thought)).toBeFalsy()
    const sent = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(sent.map((b) => b.thinking)).toEqual([{type: 'disabled'}, {type: 'disabled'}])
  })

  it("gpt-5.4's refusal of reasoning_effort none beside tools: the request goes again without it", async () => {
    // (the quirk by header: gpt-5.4's switch goes by its exact name)
    const client = new Anthropic({
      baseURL: gw.base,
      apiKey: gw.keys.get('gpt54')!,
      maxRetries: 0,
      defaultHeaders: {'x-sim-quirk': 'tools-no-effort'},
    })
    const params = {
      model: 'claude-haiku-4-5',
      max_tokens: 512,
      thinking: {type: 'disabled' as const},
      tools: [
        {name: 'Bash', input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}}},
      ],
      messages: [{role: 'user' as const, content: 'Write a title for this chat'}],
    }
    await takeSimCalls(gw.simOrigin, /./)
    const answer = await client.messages.create(params)
    expect(answer.type).toBe('message')
    const tries = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(tries.map((b) => b.reasoning_effort)).toEqual(['none', undefined])
    expect((await projectLogRows(gw.base, 'thinking-off-gpt54', 1))[0]).toMatchObject({
      status: 200,
      error:
        'sim-chat refused reasoning_effort none beside function tools: sent again without it (requests with tools from now on)',
    })
  })

  it('a server that refuses the switch: one failed try, then the request goes without it', async () => {
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('strict')!, maxRetries: 0})
    const params = {
      model: 'claude-haiku-4-5',
      max_tokens: 512,
      thinking: {type: 'disabled' as const},
      messages: [{role: 'user' as const, content: 'Write a title for this chat'}],
    }
    await takeSimCalls(gw.simOrigin, /./)
    const first = await client.messages.create(params)
    expect(first.content.map((b) => b.type)).toEqual(['text'])
    const tries = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(tries.map((b) => b.thinking)).toEqual([{type: 'disabled'}, undefined])
    // learned: the next request goes without it from the start
    await client.messages.create(params)
    const [next] = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(next.thinking).toBeUndefined()
    expect((await projectLogRows(gw.base, 'thinking-off-strict', 2)).map((r) => [r.status, r.error])).toEqual(
      [
        [200, 'sim-chat refused thinking: sent again without it'],
        [200, null],
      ],
    )
  })
})
