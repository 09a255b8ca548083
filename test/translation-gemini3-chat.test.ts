/**
 * Gemini 3 reached through a chat completions server, for a Claude Code, Codex and Gemini CLI
 * client: OpenRouter's `reasoning_details` (the simulator's `reasoning-details` quirk) and Google's
 * OpenAI-compatible `extra_content` (`extra-content`) come back to the upstream on turn 2, so the
 * tool loop goes on instead of Gemini's 400 ("Function call is missing a thought_signature"); a
 * history that lost them (a restart, another vendor's calls) goes again with Google's documented
 * `skip_thought_signature_validator`. The real daemon, the official Anthropic, OpenAI and Google
 * Gen AI SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import type {Part} from '@google/genai'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const MODELS = {
  openrouter: 'google/gemini-3-pro-preview+reasoning-details',
  google: 'gemini-3-flash-preview+extra-content',
} as const
type Shape = keyof typeof MODELS

const gw = translatedRoutes(MODELS, {
  prefix: 'g3chat',
  provider: 'sim-chat',
  families: ['messages', 'responses', 'gemini'],
})

/** The chat requests the simulator got since the last call. */
const sentChat = () => takeSimCalls(gw.simOrigin, /\/chat\/completions$/)

/** The assistant message of the last chat request the simulator got. */
async function lastAssistant(): Promise<Record<string, any>> {
  const calls = await sentChat()
  return (calls.at(-1)!.messages as Array<Record<string, any>>).find((m) => m.role === 'assistant')!
}

/** What the upstream must have got back on turn 2: the answer's signature, as it gave it. */
function expectSigned(assistant: Record<string, any>, shape: Shape): void {
  const call = assistant.tool_calls[0]
  if (shape === 'openrouter') {
    expect(assistant.reasoning_details).toEqual([
      {
        type: 'reasoning.text',
        text: expect.stringMatching(/^Let me think/),
        format: 'google-gemini-v1',
        index: 0,
      },
      {
        type: 'reasoning.encrypted',
        data: expect.any(String),
        id: call.id,
        format: 'google-gemini-v1',
        index: 1,
      },
    ])
    expect(assistant.reasoning_details[1].data).not.toBe('skip_thought_signature_validator')
  } else
    expect(call.extra_content).toEqual({
      google: {thought_signature: expect.not.stringMatching(/^skip_/)},
    })
}

const SHAPES: Shape[] = ['openrouter', 'google']

describe('Gemini 3 through a chat server: turn 2 after a tool call', {timeout: 60_000}, () => {
  it.each(SHAPES)('Claude Code (%s): the signature goes back, turn 2 answers', async (shape) => {
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get(shape)!, maxRetries: 0})
    const tools = [
      {
        name: 'Bash',
        description: 'Run a command',
        input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}},
      },
    ]
    const ask = {role: 'user' as const, content: 'List the files.'}
    const params = {model: 'claude-sonnet-4-5', max_tokens: 1024, tools}
    for (const stream of [true, false]) {
      const first = stream
        ? await client.messages.stream({...params, messages: [ask]}).finalMessage()
        : await client.messages.create({...params, messages: [ask]})
      expect(first.stop_reason).toBe('tool_use')
      if (shape === 'openrouter') {
        // the text reaches the client as thinking, the details in its signature (wrapped for gwctl)
        const thinking = first.content[0] as Anthropic.ThinkingBlock
        expect(thinking.thinking).toMatch(/^Let me think/)
        expect(thinking.signature).toMatch(/^gwx1\.chat\.rd1:\[/)
      }
      const call = first.content.find((b) => b.type === 'tool_use')!
      await sentChat()
      const second = await client.messages.create({
        ...params,
        messages: [
          ask,
          {role: 'assistant', content: first.content},
          {role: 'user', content: [{type: 'tool_result', tool_use_id: call.id, content: 'a.txt'}]},
        ],
      })
      expect(second.content.find((b) => b.type === 'text')).toMatchObject({text: 'The tool answered: a.txt'})
      expectSigned(await lastAssistant(), shape)
    }
  })

  it.each(SHAPES)(
    'Codex (%s): the signature goes back in a reasoning item, turn 2 answers',
    async (shape) => {
      const openai = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(shape)!, maxRetries: 0})
      const input = [{role: 'user' as const, content: 'List the files.'}]
      const params = {
        model: 'gpt-5-codex',
        store: false,
        include: ['reasoning.encrypted_content' as const],
        tools: [
          {
            type: 'function' as const,
            name: 'shell',
            parameters: {type: 'object', properties: {command: {type: 'string'}}},
            strict: false,
          },
        ],
      }
      const first = await openai.responses.stream({...params, input}).finalResponse()
      expect(first.output.map((o) => o.type)).toEqual(['reasoning', 'function_call'])
      const call = first.output[1] as OpenAI.Responses.ResponseFunctionToolCall
      await sentChat()
      const second = await openai.responses.create({
        ...params,
        input: [
          ...input,
          ...(first.output as OpenAI.Responses.ResponseInputItem[]),
          {type: 'function_call_output', call_id: call.call_id, output: 'a.txt'},
        ],
      })
      expect(second.output_text).toBe('The tool answered: a.txt')
      const assistant = await lastAssistant()
      expectSigned(assistant, shape)
      // (a call signature's reasoning item is no reasoning of its own)
      if (shape === 'google') expect(assistant).not.toHaveProperty('reasoning_content')
    },
  )

  it.each(SHAPES)(
    'Gemini CLI (%s): its history without thought parts, the gateway keeps the signature',
    async (shape) => {
      const ai = new GoogleGenAI({apiKey: gw.keys.get(shape)!, httpOptions: {baseUrl: gw.base}})
      const ask = {role: 'user', parts: [{text: 'List the files.'}]}
      const config = {
        tools: [
          {
            functionDeclarations: [
              {
                name: 'run_shell',
                parametersJsonSchema: {type: 'object', properties: {command: {type: 'string'}}},
              },
            ],
          },
        ],
      }
      const parts: Part[] = []
      for await (const chunk of await ai.models.generateContentStream({
        model: 'gemini-3-pro-preview',
        contents: [ask],
        config,
      }))
        parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []))
      // Gemini CLI drops thought parts from the history it sends back
      const kept = parts.filter((p) => !p.thought)
      const call = kept.find((p) => p.functionCall)!.functionCall!
      await sentChat()
      const second = await ai.models.generateContent({
        model: 'gemini-3-pro-preview',
        config,
        contents: [
          ask,
          {role: 'model', parts: kept},
          {
            role: 'user',
            parts: [{functionResponse: {id: call.id, name: call.name, response: {output: 'a.txt'}}}],
          },
        ],
      })
      expect(second.text).toBe('The tool answered: a.txt')
      expectSigned(await lastAssistant(), shape)
    },
  )

  it.each(SHAPES)(
    "a history that lost the signature (%s): refused once, then sent with Google's dummy, and learned",
    async (shape) => {
      const ai = new GoogleGenAI({apiKey: gw.keys.get(shape)!, httpOptions: {baseUrl: gw.base}})
      const turn = (id: string) => ({
        model: 'gemini-3-pro-preview',
        config: {
          tools: [{functionDeclarations: [{name: 'run_shell', parametersJsonSchema: {type: 'object'}}]}],
        },
        contents: [
          {role: 'user', parts: [{text: 'List the files.'}]},
          // a call the gateway keeps nothing of (made before a restart, or by another vendor)
          {role: 'model', parts: [{functionCall: {id, name: 'run_shell', args: {command: 'ls'}}}]},
          {role: 'user', parts: [{functionResponse: {id, name: 'run_shell', response: {output: 'a.txt'}}}]},
        ],
      })
      await sentChat()
      expect((await ai.models.generateContent(turn(`lost-${shape}-1`))).text).toBe('The tool answered: a.txt')
      const calls = await sentChat()
      expect(calls).toHaveLength(2)
      const dummy = (calls[1].messages as Array<Record<string, any>>).find((m) => m.role === 'assistant')!
      if (shape === 'openrouter')
        expect(dummy.reasoning_details).toEqual([
          {
            type: 'reasoning.encrypted',
            data: 'skip_thought_signature_validator',
            id: `lost-${shape}-1`,
            format: 'google-gemini-v1',
            index: 0,
          },
        ])
      else
        expect(dummy.tool_calls[0].extra_content).toEqual({
          google: {thought_signature: 'skip_thought_signature_validator'},
        })
      const rows = await projectLogRows(gw.base, `g3chat-${shape}`, 1)
      expect(rows.at(-1)!.error).toMatch(
        /refused a tool call turn without its thought signature: sent again with/,
      )
      // learned: the next such request goes with the dummy at once
      expect((await ai.models.generateContent(turn(`lost-${shape}-2`))).text).toBe('The tool answered: a.txt')
      expect(await sentChat()).toHaveLength(1)
    },
  )
})
