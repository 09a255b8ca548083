/**
 * A chat upstream that writes its reasoning into `content` inside `<think>...</think>` (MiniMax M2's
 * OpenAI endpoint, reasoning models under llama.cpp, vLLM or Ollama without a reasoning parser; the
 * simulator's `think-tags` quirk, whose streams cut both tags across chunks): Claude Code gets a
 * thinking block, Codex a reasoning summary and Gemini CLI a thought part, not the reasoning as the answer's text, stream and
 * not; the next turn sends the reasoning back to the upstream in `content` as it came. The real
 * daemon, the official Anthropic, OpenAI and Google Gen AI SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {issueKeyOverApi, simPolicy, startSimGatewayWithPolicies, takeSimCalls} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
let key = ''

const THOUGHT =
  /^\nLet me think about "List the files\."\. The user wants a short answer, so I will keep it brief\.\n$/

beforeAll(async () => {
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies([
    simPolicy(
      'think-tags',
      Object.fromEntries(
        ['messages', 'responses', 'gemini'].map((f) => [
          f,
          [{provider: 'sim-chat', model: 'sim-mini+think-tags', translate: true}],
        ]),
      ),
    ),
  ]))
  key = await issueKeyOverApi(base, 'think-tags', 'generic_agent', 'think-tags')
}, 120_000)

afterAll(() => stop())

/** The assistant messages of the chat requests the simulator got since the last call. */
async function sentAssistants(): Promise<Array<Record<string, unknown>>> {
  const calls = await takeSimCalls(simOrigin, /\/chat\/completions$/)
  return calls.flatMap((c) =>
    (c.messages as Array<Record<string, unknown>>).filter((m) => m.role === 'assistant'),
  )
}

describe('reasoning in <think> tags from a chat upstream', {timeout: 60_000}, () => {
  it('reaches Claude Code as thinking, stream and not, and goes back in content on the next turn', async () => {
    const client = new Anthropic({baseURL: base, apiKey: key, maxRetries: 0})
    const tools = [
      {
        name: 'Bash',
        description: 'Run a command',
        input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}},
      },
    ]
    const ask = {role: 'user' as const, content: 'List the files.'}
    const params = {model: 'claude-sonnet-4-5', max_tokens: 1024, messages: [ask]}
    for (const answer of [
      await client.messages.create(params),
      await client.messages.stream(params).finalMessage(),
    ]) {
      expect(answer.content.map((b) => b.type)).toEqual(['thinking', 'text'])
      const [thinking, text] = answer.content as [Anthropic.ThinkingBlock, Anthropic.TextBlock]
      expect(thinking.thinking).toMatch(THOUGHT)
      expect(thinking.signature).toBe('gwx1.chat.think')
      expect(text.text).toMatch(/^Hello from /)
      expect(text.text).not.toContain('think>')
    }

    await takeSimCalls(simOrigin, /./)
    const first = await client.messages.stream({...params, tools}).finalMessage()
    expect(first.content.map((b) => b.type)).toEqual(['thinking', 'tool_use'])
    const call = first.content[1] as Anthropic.ToolUseBlock
    const second = await client.messages.create({
      ...params,
      tools,
      messages: [
        ask,
        {role: 'assistant', content: first.content},
        {role: 'user', content: [{type: 'tool_result', tool_use_id: call.id, content: 'a.txt'}]},
      ],
    })
    expect(second.content.map((b) => b.type)).toEqual(['thinking', 'text'])
    const [sent] = await sentAssistants()
    expect(sent.content).toBe(`<think>${(first.content[0] as Anthropic.ThinkingBlock).thinking}</think>\n\n`)
    expect(sent).not.toHaveProperty('reasoning_content')
    expect(sent.tool_calls).toEqual([
      {id: call.id, type: 'function', function: {name: 'Bash', arguments: JSON.stringify(call.input)}},
    ])
  })

  it('reaches Codex as a reasoning summary, stream and not, and goes back in content on the next turn', async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0})
    const input = [{role: 'user' as const, content: 'List the files.'}]
    const params = {
      model: 'gpt-5-codex',
      input,
      store: false,
      include: ['reasoning.encrypted_content' as const],
    }
    const streamed = await openai.responses.stream(params).finalResponse()
    for (const answer of [await openai.responses.create(params), streamed]) {
      expect(answer.output.map((o) => o.type)).toEqual(['reasoning', 'message'])
      const reasoning = answer.output[0] as OpenAI.Responses.ResponseReasoningItem
      expect(reasoning.summary.map((s) => s.text).join('')).toMatch(THOUGHT)
      expect(reasoning.encrypted_content).toBe('gwx1.chat.think')
      expect(answer.output_text).toMatch(/^Hello from /)
      expect(answer.output_text).not.toContain('think>')
    }

    await takeSimCalls(simOrigin, /./)
    const next = await openai.responses.create({
      ...params,
      input: [
        ...input,
        ...(streamed.output as OpenAI.Responses.ResponseInputItem[]),
        {role: 'user', content: 'And?'},
      ],
    })
    expect(next.output_text).toMatch(/^Hello from /)
    const [sent] = await sentAssistants()
    const thought = (streamed.output[0] as OpenAI.Responses.ResponseReasoningItem).summary
      .map((s) => s.text)
      .join('')
    expect(sent.content).toBe(`<think>${thought}</think>\n\n${streamed.output_text}`)
    expect(sent).not.toHaveProperty('reasoning_content')
  })

  it('reaches Gemini CLI as a thought part, stream and not', async () => {
    const ai = new GoogleGenAI({apiKey: key, httpOptions: {baseUrl: base}})
    const params = {model: 'gemini-2.5-pro', contents: [{role: 'user', parts: [{text: 'List the files.'}]}]}
    const whole = (await ai.models.generateContent(params)).candidates![0].content!.parts!
    const chunks = []
    for await (const chunk of await ai.models.generateContentStream(params))
      chunks.push(...(chunk.candidates?.[0]?.content?.parts ?? []))
    for (const parts of [whole, chunks]) {
      const thought = parts
        .filter((p) => p.thought)
        .map((p) => p.text ?? '')
        .join('')
      const text = parts
        .filter((p) => !p.thought)
        .map((p) => p.text ?? '')
        .join('')
      expect(thought).toMatch(THOUGHT)
      expect(text).toMatch(/^Hello from /)
      expect(text).not.toContain('think>')
    }
  })
})
