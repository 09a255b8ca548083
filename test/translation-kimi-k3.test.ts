/**
 * Kimi K3 always reasons (Moonshot's reasoning-effort guide: a top-level `reasoning_effort` `low`,
 * `high` or `max`, `max` by default; `thinking: disabled` and the efforts none/off refused), and
 * refuses a forced tool_choice while it does: by its name, each client's "no thinking" (Claude
 * Code's helper call `thinking: disabled`, Gemini CLI's `thinkingBudget: 0`, Codex's effort `none`)
 * reaches it as `reasoning_effort: "low"`, its efforts as it takes them (`medium` as `high`,
 * `xhigh` as `max`), and a forced call as `auto` with the call asked for in words, each in one try.
 * The real daemon, the simulator's chat upstream (which refuses as K3 by the model's name), the
 * official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {k3: ['sim-chat', 'kimi-k3'], pro: ['sim-chat', 'kimi-k3.1-pro-highspeed']},
  {prefix: 'kimik3', families: ['messages', 'responses', 'gemini']},
)

const CHAT = /\/chat\/completions$/
const {calls, rows} = gw

/** Claude Code 2.1.332's helper call (a title), thinking off. */
const helperCall = (): Anthropic.MessageCreateParamsNonStreaming => ({
  model: 'claude-haiku-4-5',
  max_tokens: 512,
  thinking: {type: 'disabled'},
  messages: [{role: 'user', content: 'Write a title for this chat'}],
})

/** Claude Code's main request at an effort (adaptive thinking). */
const mainCall = (effort: string): any => ({
  model: 'claude-opus-5-5',
  max_tokens: 32000,
  thinking: {type: 'adaptive', display: 'omitted'},
  output_config: {effort},
  messages: [{role: 'user', content: 'Say hello.'}],
})

describe('Kimi K3, which always reasons', {timeout: 60_000}, () => {
  it("Claude Code's helper call, Gemini CLI's thinkingBudget 0 and Codex's effort none: effort low, one try each, no note", async () => {
    await calls(CHAT)
    const anthropic = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('k3')!, maxRetries: 0})
    const title = await anthropic.messages.create(helperCall())
    expect(title.content.some((b) => b.type === 'text')).toBe(true)
    const ai = new GoogleGenAI({apiKey: gw.keys.get('k3')!, httpOptions: {baseUrl: gw.base}})
    const gemini = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: [{role: 'user', parts: [{text: 'Write a title for this chat'}]}],
      config: {thinkingConfig: {thinkingBudget: 0}},
    })
    expect(gemini.candidates?.[0]?.content?.parts?.some((p) => p.text)).toBe(true)
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('k3')!, maxRetries: 0})
    const codex = await openai.responses.create({
      model: 'gpt-5.5',
      input: 'Write a title for this chat',
      reasoning: {effort: 'none'},
    })
    expect(codex.status).toBe('completed')
    const sent = await calls(CHAT)
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
    await calls(CHAT)
    const anthropic = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('pro')!, maxRetries: 0})
    for (const effort of ['medium', 'xhigh', 'max']) {
      const main = await anthropic.messages.stream(mainCall(effort)).finalMessage()
      expect(
        main.content.some((b) => b.type === 'text'),
        effort,
      ).toBe(true)
    }
    await anthropic.messages.create(helperCall())
    const sent = await calls(CHAT)
    expect(sent.map((b) => [b.thinking, b.reasoning_effort])).toEqual([
      [undefined, 'high'],
      [undefined, 'max'],
      [undefined, 'max'],
      [undefined, 'low'],
    ])
    expect((await rows('pro', 4)).map((r) => [r.status, r.error])).toEqual([
      [200, null],
      [200, null],
      [200, null],
      [200, null],
    ])
  })

  it("a forced tool_choice (Claude Code's StructuredOutput): auto and the call asked for in words, one try", async () => {
    await calls(CHAT)
    const anthropic = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('k3')!, maxRetries: 0})
    const answer = await anthropic.messages.create({
      model: 'claude-sonnet-4-5',
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
      messages: [{role: 'user', content: 'Summarise what you found.'}],
    })
    expect(answer.content.find((b) => b.type === 'tool_use')).toMatchObject({name: 'StructuredOutput'})
    const sent = await calls(CHAT)
    expect(sent).toHaveLength(1)
    expect(sent[0].tool_choice).toBe('auto')
    expect(sent[0]).not.toHaveProperty('thinking')
    expect(sent[0].messages.at(-1).content).toMatch(/StructuredOutput/)
    // (the row after the first test's three)
    expect((await rows('k3', 4)).slice(3).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'tool_choice sent as auto, the call asked for at the end of the prompt (the model refuses a forced one and cannot stop thinking)',
      ],
    ])
  })
})
