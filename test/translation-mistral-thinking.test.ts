/**
 * Mistral's reasoning answers (Magistral; mistral-small and mistral-medium with reasoning on; the
 * simulator's `mistral-thinking` quirk): `content` an array of `thinking` and `text` chunks, and a
 * stream whose first text piece comes as a text chunk and the rest as plain strings. Claude Code
 * gets the whole text and the reasoning as its thinking, Codex a reasoning summary, Gemini CLI a
 * thought part; on the next turn only the text goes back. The real daemon, the official
 * Anthropic, OpenAI and Google Gen AI SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {expectReasoningThenText} from './helpers/codex.js'
import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const REASONING =
  'Let me think about "What is 17 * 23?". The user wants a short answer, so I will keep it brief.'
const ask = 'What is 17 * 23?'

const gw = translatedRoutes(
  {magistral: 'magistral-medium-latest+mistral-thinking'},
  {prefix: 'mistral-thinking', provider: 'sim-chat', families: ['messages', 'responses', 'gemini']},
)
/** The key of the one policy. */
const key = () => gw.keys.get('magistral')!

describe("Mistral's thinking chunks from a chat upstream", {timeout: 60_000}, () => {
  it('reach Claude Code as thinking and the whole text, stream and not; only the text goes back', async () => {
    const client = new Anthropic({baseURL: gw.base, apiKey: key(), maxRetries: 0})
    const first = {role: 'user' as const, content: ask}
    const params = {model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [first]}
    const whole = await client.messages.create(params)
    const streamed = await client.messages.stream(params).finalMessage()
    for (const answer of [whole, streamed]) {
      expect(answer.content.map((b) => b.type)).toEqual(['thinking', 'text'])
      const [thinking, text] = answer.content as [Anthropic.ThinkingBlock, Anthropic.TextBlock]
      expect(thinking.thinking).toBe(REASONING)
      expect(thinking.signature).toBe('gwx1.chat.mistral')
      expect(text.text).toMatch(/^Hello from /)
    }
    // the stream's first piece came as a text chunk: nothing of it lost
    expect((streamed.content[1] as Anthropic.TextBlock).text).toBe(
      (whole.content[1] as Anthropic.TextBlock).text,
    )
    expect(
      (await projectLogRows(gw.base, 'mistral-thinking-magistral', 2)).map((r) => [r.status, r.error]),
    ).toEqual([
      [200, null],
      [200, null],
    ])

    await takeSimCalls(gw.simOrigin, /./)
    const next = await client.messages.create({
      ...params,
      messages: [
        first,
        {role: 'assistant', content: streamed.content},
        {role: 'user', content: 'And 18 * 23?'},
      ],
    })
    expect(next.content.map((b) => b.type)).toEqual(['thinking', 'text'])
    const [sent] = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(sent.messages[1]).toEqual({
      role: 'assistant',
      content: (streamed.content[1] as Anthropic.TextBlock).text,
    })
  })

  it('reach Codex as a reasoning summary and Gemini CLI as a thought part', async () => {
    const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: key(), maxRetries: 0})
    await expectReasoningThenText(openai, ask, REASONING, /^Hello from /)

    const ai = new GoogleGenAI({apiKey: key(), httpOptions: {baseUrl: gw.base}})
    const parts = []
    for await (const chunk of await ai.models.generateContentStream({
      model: 'gemini-2.5-pro',
      contents: [{role: 'user', parts: [{text: ask}]}],
    }))
      parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []))
    expect(
      parts
        .filter((p) => p.thought)
        .map((p) => p.text)
        .join(''),
    ).toBe(REASONING)
    expect(
      parts
        .filter((p) => !p.thought)
        .map((p) => p.text)
        .join(''),
    ).toMatch(/^Hello from /)
  })
})
