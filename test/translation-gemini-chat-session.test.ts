/**
 * `@google/genai`'s chat session (`ai.chats.create(...).sendMessageStream`) keeps one model
 * `Content` per streamed chunk in its history, and sends that history back as it is: a thought
 * of Claude's comes back as contents of its pieces, its signature a content of its own after them.
 * Turn 2 of a Claude tool loop through translation sends Anthropic each thinking block with its
 * text and its signature together. Before, the Gemini decoder started a thought for each content:
 * the text went without a signature (left out) and the signature with no text, a `thinking`
 * block Anthropic refuses (`` Invalid `signature` in `thinking` block ``, a 400 on turn 2). The
 * real daemon, the simulator, the official SDK; a signed thinking block alone, and two around a
 * redacted one (the simulator's `redacted-thinking` quirk).
 */
import {GoogleGenAI} from '@google/genai'
import type {Content} from '@google/genai'
import {describe, expect, it} from 'vitest'

import {READ_FILE_TOOL} from './helpers/codex.js'
import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {sonnet: 'claude-sonnet-4-6', redacted: 'claude-sonnet-4-6+redacted-thinking'},
  {prefix: 'chatsession', provider: 'sim-messages', families: ['gemini']},
)

const ASK = 'Use the tool to read /tmp/notes.txt.'
const WRAP = 'gwx1.messages.'
const messagesCalls = (): Promise<Array<Record<string, any>>> => takeSimCalls(gw.simOrigin, /\/v1\/messages$/)

/** The thinking blocks a client saw in its history, each its text and the signature it was given. */
function thoughtsOf(history: Content[]): Array<{thinking: string; signature: string}> {
  const blocks: Array<{thinking: string; signature: string}> = []
  let text = ''
  for (const content of history)
    for (const p of content.parts ?? []) {
      if (!p.thought) continue
      text += p.text ?? ''
      if (p.thoughtSignature?.startsWith(WRAP)) {
        blocks.push({thinking: text, signature: p.thoughtSignature.slice(WRAP.length)})
        text = ''
      } else if (p.thoughtSignature) text = ''
    }
  return blocks
}

describe(
  "a Gemini client's chat session on Claude: turn 2 sends each thinking block whole",
  {timeout: 60_000},
  () => {
    for (const [alias, types] of [
      ['sonnet', ['thinking', 'tool_use']],
      ['redacted', ['thinking', 'redacted_thinking', 'thinking', 'tool_use']],
    ] as const)
      it(`${alias}: ${types.join(', ')}`, async () => {
        await messagesCalls()
        const project = `chatsession-${alias}`
        const rows = (await projectLogRows(gw.base, project, 0)).length
        const genai = new GoogleGenAI({apiKey: gw.keys.get(alias)!, httpOptions: {baseUrl: gw.base}})
        const chat = genai.chats.create({
          model: 'gemini-2.5-pro',
          config: {
            thinkingConfig: {includeThoughts: true, thinkingBudget: 8192},
            tools: [
              {functionDeclarations: [{name: 'read_file', parametersJsonSchema: READ_FILE_TOOL.parameters}]},
            ],
          },
        })
        let name = ''
        for await (const chunk of await chat.sendMessageStream({message: ASK}))
          for (const p of chunk.candidates?.[0]?.content?.parts ?? [])
            if (p.functionCall) name = p.functionCall.name!
        const history = chat.getHistory()
        // what the session keeps: the model's answer in contents of one piece each
        const model = history.filter((c) => c.role === 'model')
        expect(model.length).toBeGreaterThan(3)
        const shown = thoughtsOf(history)
        expect(shown).toHaveLength(types.filter((t) => t === 'thinking').length)

        let parts = 0
        for await (const chunk of await chat.sendMessageStream({
          message: [{functionResponse: {name, response: {output: 'notes'}}}],
        }))
          parts += chunk.candidates?.[0]?.content?.parts?.length ?? 0
        expect(parts).toBeGreaterThan(0)

        const calls = await messagesCalls()
        expect(calls).toHaveLength(2)
        const logged = await projectLogRows(gw.base, project, rows + 2)
        expect(logged.slice(rows).map((r) => r.status)).toEqual([200, 200])
        const blocks: Array<Record<string, any>> = calls[1].messages.find(
          (m: any) => m.role === 'assistant',
        ).content
        expect(blocks.map((b) => b.type)).toEqual(types)
        // each thinking block as Anthropic gave it: the text the client was shown, its signature
        const thinking = blocks.filter((b) => b.type === 'thinking')
        expect(thinking.map((b) => ({thinking: b.thinking, signature: b.signature}))).toEqual(shown)
        for (const b of thinking) expect(b.thinking).not.toBe('')
      })
  },
)
