/**
 * A chat model whose template opens `<think>` in the prompt (Qwen3's *-Thinking-2507,
 * DeepSeek-R1-0528 under llama.cpp, vLLM or LM Studio without a reasoning parser; the simulator's
 * `think-open-in-prompt` quirk, whose streams cut the tag across chunks): its content is
 * `reasoning…</think>\n\nanswer`. The first answer reaches the client without the tag and teaches
 * the gateway (the log row and `/api/adaptations` say so); every later answer reaches Claude Code as
 * thinking, Codex as a reasoning summary and Gemini CLI as a thought part, then the text. The real
 * daemon, the official Anthropic, OpenAI and Google Gen AI SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {expectReasoningThenText} from './helpers/codex.js'
import {projectLogRows, translatedRoutes} from './helpers/gateway.js'

const REASONING =
  'Let me think about "What is 17 * 23?". The user wants a short answer, so I will keep it brief.\n'
const ask = 'What is 17 * 23?'

const gw = translatedRoutes(
  {stream: 'sim-mini+think-open-in-prompt', json: 'sim-pro+think-open-in-prompt'},
  {prefix: 'prompt-think', provider: 'sim-chat', families: ['messages', 'responses', 'gemini']},
)

const claude = (id: string) => new Anthropic({baseURL: gw.base, apiKey: gw.keys.get(id)!, maxRetries: 0})
const params = (content = ask) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  messages: [{role: 'user' as const, content}],
})
const rules = async (model: string): Promise<string[] | undefined> => {
  const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {
    adaptations: Array<{model: string; rules: string[]}>
  }
  return adaptations.find((a) => a.model === model)?.rules
}
const LEARNED = /answers read as reasoning up to <\/think>/

describe('a template that opens <think> in the prompt', {timeout: 60_000}, () => {
  it('first stream: the text without the tag, the model learned; later answers start inside reasoning', async () => {
    const client = claude('stream')
    expect(await rules('sim-mini+think-open-in-prompt')).toBeUndefined()
    const first = await client.messages.stream(params()).finalMessage()
    expect(first.content.map((b) => b.type)).toEqual(['text'])
    const text = (first.content[0] as Anthropic.TextBlock).text
    expect(text).not.toContain('think>')
    expect(text).toMatch(/^Let me think about .*brief\.\nHello from /s)
    const [row] = await projectLogRows(gw.base, 'prompt-think-stream', 1)
    expect(row.status).toBe(200)
    expect(row.error).toContain('closed a </think> it never opened')
    expect(await rules('sim-mini+think-open-in-prompt')).toEqual([expect.stringMatching(LEARNED)])

    for (const answer of [
      await client.messages.stream(params()).finalMessage(),
      await client.messages.create(params()),
    ]) {
      expect(answer.content.map((b) => b.type)).toEqual(['thinking', 'text'])
      const [thinking, said] = answer.content as [Anthropic.ThinkingBlock, Anthropic.TextBlock]
      expect(thinking.thinking).toBe(REASONING)
      expect(thinking.signature).toBe('gwx1.chat.think')
      expect(said.text).toMatch(/^Hello from /)
    }
    const rows = await projectLogRows(gw.base, 'prompt-think-stream', 3)
    expect(rows.slice(1).map((r) => r.error)).toEqual([null, null])
  })

  it('learned: reaches Codex as a reasoning summary, then the text, stream and not', async () => {
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('stream')!, maxRetries: 0})
    await expectReasoningThenText(openai, ask, REASONING, /^Hello from /)
  })

  it('learned: reaches Gemini CLI as thought parts, then the text', async () => {
    const ai = new GoogleGenAI({apiKey: gw.keys.get('stream')!, httpOptions: {baseUrl: gw.base}})
    const parts = []
    for await (const chunk of await ai.models.generateContentStream({
      model: 'gemini-2.5-pro',
      contents: [{role: 'user', parts: [{text: ask}]}],
    }))
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []))
    const thought = parts.filter((p) => p.thought).map((p) => p.text ?? '')
    const text = parts.filter((p) => !p.thought).map((p) => p.text ?? '')
    expect(thought.join('')).toBe(REASONING)
    expect(text.join('')).toMatch(/^Hello from /)
    expect(text.join('')).not.toContain('think>')
  })

  it('learned, an answer without </think>: its text as the reasoning and as the answer, said on the row', async () => {
    const answer = await claude('stream').messages.stream(params('[no-think] Say hi.')).finalMessage()
    expect(answer.content.map((b) => b.type)).toEqual(['thinking', 'text'])
    const [thinking, said] = answer.content as [Anthropic.ThinkingBlock, Anthropic.TextBlock]
    expect(said.text).toMatch(/^Hello from /)
    expect(thinking.thinking).toBe(said.text)
    const rows = await projectLogRows(gw.base, 'prompt-think-stream', 7)
    expect(rows.at(-1)!.error).toContain('had no </think>')
  })

  it('a JSON answer first: split, and learned', async () => {
    const answer = await claude('json').messages.create(params())
    expect(answer.content.map((b) => b.type)).toEqual(['thinking', 'text'])
    const [thinking, said] = answer.content as [Anthropic.ThinkingBlock, Anthropic.TextBlock]
    expect(thinking.thinking).toBe(REASONING)
    expect(said.text).toMatch(/^Hello from /)
    expect(await rules('sim-pro+think-open-in-prompt')).toEqual([expect.stringMatching(LEARNED)])
    const [row] = await projectLogRows(gw.base, 'prompt-think-json', 1)
    expect(row.error).toContain('closed a </think> it never opened')
  })
})
