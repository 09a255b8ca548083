/**
 * Refusals of how a translated request asked the model to think, each of which failed every
 * request of an agent: an Ollama model without thinking ("\"llama3.1:8b\" does not support
 * thinking", and Ollama's older "think value \"high\" is not supported for this model"); gpt-5.6
 * beside function tools on chat completions, which takes them only with `reasoning_effort:
 * "none"` (gpt-5.4 without the field); xAI's camelCase refusal of `reasoningEffort`, its error a
 * string; DashScope's refusal of a non-stream request while Qwen3 thinks. Each is learned from
 * the 400 and the request goes again at once; later ones go adapted from the start. And Claude
 * Code's quota probe (`max_tokens: 1`) to a Responses upstream, sent with OpenAI's minimum of 16.
 * The real daemon, the simulator's quirks in the servers' words, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {codexRequest} from './helpers/codex.js'
import {translatedRoutes} from './helpers/gateway.js'

/** Policy id -> the provider and model all its routes translate to. */
const ROUTES: Record<string, [provider: string, model: string]> = {
  ollama: ['sim-chat', 'llama3.1:8b+ollama-no-think'],
  ollamaold: ['sim-chat', 'qwen3:8b+ollama-think-value'],
  gpt56: ['sim-chat', 'gpt-5.6-terra+tools-effort-none'],
  gpt56luna: ['sim-chat', 'gpt-5.6-luna+tools-effort-none'],
  gpt54: ['sim-chat', 'gpt-5.4+tools-no-effort'],
  xai: ['sim-chat', 'grok-4-latest+xai-params'],
  xaistop: ['sim-chat', 'grok-4-fast+xai-params'],
  xairesp: ['sim-responses', 'grok-4+xai-params'],
  dashscope: ['sim-chat', 'qwen3-32b+dashscope-thinking'],
  openai: ['sim-responses', 'gpt-5.4'],
}

const gw = translatedRoutes(ROUTES, {prefix: 'learned2'})

const {calls} = gw
const CHAT = /\/chat\/completions$/
const RESPONSES = /\/responses$/
const {rows} = gw
const anthropic = (id: string) => new Anthropic({baseURL: gw.base, apiKey: gw.keys.get(id)!, maxRetries: 0})
const openai = (id: string) => new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(id)!, maxRetries: 0})
const learned = async (model: string): Promise<string[]> => {
  const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {
    adaptations: Array<{model: string; rules: string[]}>
  }
  return adaptations.find((a) => a.model === model)?.rules ?? []
}

const BASH_TOOL = {
  name: 'Bash',
  description: 'Run a command',
  input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}, required: ['command']},
}

/** Claude Code's default request: adaptive thinking, effort high (output_config). */
const claudeCode = (extra: Record<string, unknown> = {}): any => ({
  model: 'claude-opus-4-8',
  max_tokens: 1024,
  thinking: {type: 'adaptive'},
  output_config: {effort: 'high'},
  messages: [{role: 'user', content: 'Say hello.'}],
  ...extra,
})

describe('an Ollama model without thinking', {timeout: 60_000}, () => {
  it("Claude Code's thinking: reasoning_effort learned away at once, left out from then on", async () => {
    await calls(CHAT)
    const client = anthropic('ollama')
    const first = await client.messages.create(claudeCode())
    expect(first.content.some((b) => b.type === 'text')).toBe(true)
    const sent = await calls(CHAT)
    expect(sent.map((c) => c.reasoning_effort)).toEqual(['high', undefined])
    const {reasoning_effort: _, ...rest} = sent[0]
    expect(sent[1]).toEqual(rest)
    expect((await rows('ollama')).map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-chat refused thinking (a model without it): sent again without reasoning_effort'],
    ])
    await client.messages.stream(claudeCode()).finalMessage()
    const later = await calls(CHAT)
    expect(later).toHaveLength(1)
    expect(later[0]).not.toHaveProperty('reasoning_effort')
    expect(await learned('llama3.1:8b+ollama-no-think')).toEqual(['sent without reasoning_effort'])
  })

  it("Codex's effort to an older Ollama, in its older words: learned the same", async () => {
    await calls(CHAT)
    const answer = await openai('ollamaold').responses.create(codexRequest('Say hello.'))
    expect(answer.status).toBe('completed')
    expect((await calls(CHAT)).map((c) => c.reasoning_effort)).toEqual(['high', undefined])
  })
})

describe('gpt-5.6 beside function tools on chat completions', {timeout: 60_000}, () => {
  it("Codex's tools and effort: none with tools from the first refusal, the effort kept without tools", async () => {
    await calls(CHAT)
    const client = openai('gpt56')
    const answer = await client.responses.create(codexRequest('Say hello.'))
    expect(answer.status).toBe('completed')
    const sent = await calls(CHAT)
    expect(sent.map((c) => [c.tools?.length, c.reasoning_effort])).toEqual([
      [1, 'high'],
      [1, 'none'],
    ])
    expect((await rows('gpt56')).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-chat refused reasoning_effort beside function tools: sent again with reasoning_effort none (requests with tools from now on)',
      ],
    ])
    // without tools: the effort as asked; with them: none from the start
    const {tools: _, ...noTools} = codexRequest('Say hello.')
    await client.responses.create(noTools)
    await client.responses.stream(codexRequest('Say hello.', true)).finalResponse()
    expect((await calls(CHAT)).map((c) => c.reasoning_effort)).toEqual(['high', 'none'])
    expect(await learned('gpt-5.6-terra+tools-effort-none')).toEqual([
      'reasoning_effort sent as none with function tools, so no reasoning there (refused beside tools on chat completions; a provider added with --family responses keeps it)',
    ])
  })

  it('a request with tools and no effort (thinking off) is refused too: none learned from it', async () => {
    await calls(CHAT)
    const answer = await anthropic('gpt56luna').messages.create(
      claudeCode({thinking: undefined, output_config: undefined, tools: [BASH_TOOL]}),
    )
    expect(answer.stop_reason).toMatch(/^(?:end_turn|tool_use)$/)
    expect((await calls(CHAT)).map((c) => c.reasoning_effort)).toEqual([undefined, 'none'])
  })

  it("gpt-5.4's words: the effort left out beside tools, kept without them", async () => {
    await calls(CHAT)
    const client = anthropic('gpt54')
    await client.messages.create(claudeCode({tools: [BASH_TOOL]}))
    await client.messages.create(claudeCode())
    expect((await calls(CHAT)).map((c) => c.reasoning_effort)).toEqual(['high', undefined, 'high'])
    expect((await rows('gpt54'))[0].error).toBe(
      'sim-chat refused reasoning_effort beside function tools: sent again without it (requests with tools from now on)',
    )
  })
})

describe("xAI's refusal of reasoningEffort, its error a string", {timeout: 60_000}, () => {
  it('chat: reasoning_effort learned away; a refused stop reaches the client in xAI words', async () => {
    await calls(CHAT)
    await anthropic('xai').messages.create(claudeCode())
    expect((await calls(CHAT)).map((c) => c.reasoning_effort)).toEqual(['high', undefined])
    expect((await rows('xai'))[0].error).toBe('sim-chat refused reasoning_effort: sent again without it')
    // a field a request may not go without: the client's 400, with xAI's message
    const error = await anthropic('xaistop')
      .messages.create(claudeCode({thinking: undefined, output_config: undefined, stop_sequences: ['END']}))
      .then(
        () => undefined,
        (e: unknown) => e as {status: number; message: string},
      )
    expect(error?.status).toBe(400)
    expect(error?.message).toContain(
      'sim-chat (chat, translated): upstream answered 400: Model grok-4-fast does not support parameter stop.',
    )
  })

  it('Responses: only reasoning.effort goes, the summary and the encrypted reasoning stay', async () => {
    await calls(RESPONSES)
    const answer = await anthropic('xairesp').messages.create(
      claudeCode({thinking: {type: 'adaptive', display: 'summarized'}}),
    )
    expect(answer.content.some((b) => b.type === 'text')).toBe(true)
    const sent = await calls(RESPONSES)
    expect(sent.map((c) => c.reasoning)).toEqual([{effort: 'high', summary: 'auto'}, {summary: 'auto'}])
    expect(sent[1].include).toEqual(['reasoning.encrypted_content'])
    expect((await rows('xairesp'))[0].error).toBe(
      'sim-responses refused reasoning.effort: sent again without it',
    )
  })
})

describe("DashScope's refusal of a non-stream request while Qwen3 thinks", {timeout: 60_000}, () => {
  it("Gemini CLI's non-stream call: enable_thinking false, learned; its streams go as they were", async () => {
    await calls(CHAT)
    const ai = new GoogleGenAI({apiKey: gw.keys.get('dashscope')!, httpOptions: {baseUrl: gw.base}})
    const request = {model: 'gemini-2.5-pro', contents: [{role: 'user', parts: [{text: 'Say hello.'}]}]}
    expect((await ai.models.generateContent(request)).text).toContain('Hello from')
    expect((await calls(CHAT)).map((c) => [c.stream, c.enable_thinking])).toEqual([
      [undefined, undefined],
      [undefined, false],
    ])
    expect((await rows('dashscope'))[0].error).toBe(
      'sim-chat refused a non-stream request while thinking: sent again with enable_thinking false (no reasoning in its answer)',
    )
    let streamed = ''
    for await (const chunk of await ai.models.generateContentStream(request)) streamed += chunk.text ?? ''
    expect(streamed).toContain('Hello from')
    await ai.models.generateContent(request)
    expect((await calls(CHAT)).map((c) => [c.stream, c.enable_thinking])).toEqual([
      [true, undefined],
      [undefined, false],
    ])
  })
})

describe("Claude Code's quota probe to a Responses upstream", {timeout: 60_000}, () => {
  it('max_tokens 1 goes as max_output_tokens 16, in one try; the answer as the upstream gave it', async () => {
    await calls(RESPONSES)
    const answer = await anthropic('openai').messages.create({
      model: 'claude-haiku-4-5',
      max_tokens: 1,
      messages: [{role: 'user', content: 'quota'}],
    })
    expect(answer.type).toBe('message')
    const sent = await calls(RESPONSES)
    expect(sent.map((c) => c.max_output_tokens)).toEqual([16])
    const [row] = await rows('openai')
    expect([row.status, row.error]).toEqual([200, null])
  })
})
