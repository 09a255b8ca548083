/**
 * How each family of the sim chooses between a tool call and text, seen through the official SDKs:
 * an agent's compaction prompt (its tools still offered) and a tool choice of none are answered in
 * text, as a real model answers them; the `named-tool` chain goes on after a result with an image.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from './server.js'
import {startSim} from './server.js'

let sim: Simulator
beforeAll(async () => {
  sim = await startSim({timeScale: 1000})
})
afterAll(async () => {
  await sim.close()
})

const openai = (): OpenAI => new OpenAI({apiKey: 'sk-test', baseURL: sim.origin + '/v1', maxRetries: 0})
const anthropic = (): Anthropic => new Anthropic({apiKey: 'sk-ant-test', baseURL: sim.origin, maxRetries: 0})
const genai = (): GoogleGenAI =>
  new GoogleGenAI({apiKey: 'g-test', httpOptions: {baseUrl: sim.origin, retryOptions: {attempts: 1}}})

// Claude Code 2.1.332's `/compact` (its first and last lines), as it reached a chat upstream
// through the gateway in audit 56, its tools still offered
const CLAUDE_COMPACT =
  'CRITICAL: Respond with TEXT ONLY. Do NOT call any tools.\n\n' +
  'Your task is to create a detailed summary of the conversation so far.\n\n' +
  'REMINDER: Do NOT call any tools. Respond with plain text only — an <analysis> block followed by a <summary> block.'
// Qwen Code 0.24.4's compression sharing the session's cache (its tools still offered): "call
// tools" is what the sim took for a request to use one
const QWEN_COMPRESS =
  'Do not call tools; tool execution is disabled for this request. First, reason in your <analysis> block. Then, produce the <state_snapshot> XML.'
// Codex 0.171, Gemini CLI 0.61.0 and OpenCode 1.18.33's compaction prompts
const CODEX_COMPACT =
  'You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary for another LLM that will resume the task. Use the tools you had.'
const GEMINI_COMPRESS =
  'Generate a new <state_snapshot> based on the provided history.\n\nFirst, reason in your scratchpad. Then, generate the updated <state_snapshot>. tool:Read'
const OPENCODE_COMPACT =
  'Create a new anchored summary from the conversation history in the <conversation> tags above so another coding agent can continue the work. Call the tool Read.'

const chatTool = (name: string) => ({
  type: 'function' as const,
  function: {name, parameters: {type: 'object', properties: {path: {type: 'string'}}}},
})

describe('chat: text when asked for text', () => {
  it.each([
    ['Claude Code', CLAUDE_COMPACT],
    ['Qwen Code', QWEN_COMPRESS],
    ['Codex', CODEX_COMPACT],
    ['Gemini CLI', GEMINI_COMPRESS],
    ['OpenCode', OPENCODE_COMPACT],
  ])("answers %s's compaction prompt in text, its tools offered", async (_agent, prompt) => {
    const completion = await openai().chat.completions.create({
      model: 'sim-mini+named-tool',
      messages: [
        {role: 'user', content: 'Look at /tmp/a.png tool:Read'},
        {role: 'assistant', content: 'I looked.'},
        {role: 'user', content: prompt},
      ],
      tools: [chatTool('Read'), chatTool('Bash')],
    })
    const choice = completion.choices[0]
    expect(choice.finish_reason).toBe('stop')
    expect(choice.message.tool_calls).toBeUndefined()
    expect(choice.message.content).toContain('You said:')
  })

  it('answers in text under tool_choice none, and calls the tool a forcing choice names', async () => {
    const ask = (tool_choice: OpenAI.Chat.Completions.ChatCompletionToolChoiceOption) =>
      openai().chat.completions.create({
        model: 'sim-mini',
        messages: [{role: 'user', content: CLAUDE_COMPACT + ' please use a tool'}],
        tools: [chatTool('Read')],
        tool_choice,
      })
    expect((await ask('none')).choices[0].message.tool_calls).toBeUndefined()
    const forced = await ask({type: 'function', function: {name: 'Read'}})
    expect(forced.choices[0].finish_reason).toBe('tool_calls')
    const call = forced.choices[0].message.tool_calls?.[0]
    expect(call?.type === 'function' && call.function.name).toBe('Read')
  })

  it("streams Claude Code's /compact answer as text the SDK assembles", async () => {
    const final = await openai()
      .chat.completions.stream({
        model: 'sim-mini',
        messages: [{role: 'user', content: CLAUDE_COMPACT}],
        tools: [chatTool('Read')],
      })
      .finalChatCompletion()
    expect(final.choices[0].finish_reason).toBe('stop')
    expect(final.choices[0].message.content).toMatch(/^Hello from /)
  })
})

describe('after a compaction', () => {
  it("chat: the session goes on calling tools, the summary's words not read as a request for text", async () => {
    const summary = await openai().chat.completions.create({
      model: 'sim-mini',
      messages: [{role: 'user', content: CLAUDE_COMPACT}],
      tools: [chatTool('Read')],
    })
    const text = summary.choices[0].message.content ?? ''
    expect(text).not.toMatch(/TEXT ONLY|call any tools/i)
    // Claude Code's next request: the summary, then the new prompt, one user message on chat
    const next = await openai().chat.completions.create({
      model: 'sim-mini+named-tool',
      messages: [
        {
          role: 'user',
          content: `This session is being continued from a previous conversation. Summary:\n${text}\n\nLook at /tmp/b.png tool:Read`,
        },
      ],
      tools: [chatTool('Read'), chatTool('Bash')],
    })
    expect(next.choices[0].finish_reason).toBe('tool_calls')
  })

  it("gemini: a summary's thinking and text quote none of the words", async () => {
    const answer = await genai().models.generateContent({
      model: 'gemini-2.5-flash',
      contents: [{role: 'user', parts: [{text: CLAUDE_COMPACT}]}],
      config: {tools: [{functionDeclarations: [{name: 'Read', parametersJsonSchema: {type: 'object'}}]}]},
    })
    expect(answer.functionCalls).toBeUndefined()
    expect(answer.text).toContain('PONG from sim')
    expect(answer.text).not.toMatch(/TEXT ONLY|call any tools/i)
  })
})

describe('gemini: mode ANY with allowedFunctionNames', () => {
  it('calls the allowed function, with arguments of its schema, not the first declared', async () => {
    const answer = await genai().models.generateContent({
      model: 'gemini-2.5-flash',
      contents: [{role: 'user', parts: [{text: 'hello'}]}],
      config: {
        tools: [
          {
            functionDeclarations: [
              {name: 'Read', parametersJsonSchema: {type: 'object', properties: {path: {type: 'string'}}}},
              {
                name: 'Bash',
                parametersJsonSchema: {
                  type: 'object',
                  properties: {command: {type: 'string'}, timeout: {type: 'integer'}},
                  required: ['command', 'timeout'],
                },
              },
            ],
          },
        ],
        toolConfig: {functionCallingConfig: {mode: 'ANY' as never, allowedFunctionNames: ['Bash']}},
      },
    })
    const call = answer.functionCalls?.[0]
    expect(call?.name).toBe('Bash')
    expect(Object.keys(call?.args ?? {}).sort()).toEqual(['command', 'timeout'])
    expect(typeof call?.args?.timeout).toBe('number')
  })
})

describe('chat: the named-tool chain after a tool result with an image', () => {
  it('calls the next named tool after a tool message and a user message holding only the image', async () => {
    const png =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFElEQVR4nGP4z8DAAMIM/////w8AH+4F+7C4l8kAAAAASUVORK5CYII='
    // Claude Code's Read of a PNG, translated to chat: the tool message, then the image
    const completion = await openai().chat.completions.create({
      model: 'sim-mini+named-tool',
      messages: [
        {role: 'user', content: '/tmp/w/pic.png tool:Read tool:Glob tool:Bash'},
        {
          role: 'assistant',
          content: null,
          tool_calls: [{id: 'call_1', type: 'function', function: {name: 'Read', arguments: '{}'}}],
        },
        {role: 'tool', tool_call_id: 'call_1', content: 'The image is attached.'},
        {role: 'user', content: [{type: 'image_url', image_url: {url: png}}]},
      ],
      tools: [chatTool('Bash'), chatTool('Glob'), chatTool('Read')],
    })
    const choice = completion.choices[0]
    expect(choice.finish_reason).toBe('tool_calls')
    const call = choice.message.tool_calls?.[0]
    expect(call?.type === 'function' && call.function.name).toBe('Glob')
  })
})

describe('the other families: text when asked for text', () => {
  it("responses: Qwen Code's compression and tool_choice none answered in text", async () => {
    const tools: OpenAI.Responses.Tool[] = [
      {type: 'function', name: 'Read', parameters: {type: 'object'}, strict: false},
    ]
    const compress = await openai().responses.create({model: 'gpt-sim', input: QWEN_COMPRESS, tools})
    expect(compress.output.map((item) => item.type)).toEqual(['message'])
    expect(compress.output_text).toContain('PONG from sim')
    const none = await openai().responses.create({
      model: 'gpt-sim',
      input: 'please use a tool',
      tools,
      tool_choice: 'none',
    })
    expect(none.output.map((item) => item.type)).toEqual(['message'])
  })

  it("messages: Qwen Code's compression and tool_choice none answered in text", async () => {
    const tools: Anthropic.Tool[] = [{name: 'Read', input_schema: {type: 'object'}}]
    const ask = (content: string, tool_choice?: Anthropic.ToolChoice) =>
      anthropic().messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 100,
        messages: [{role: 'user', content}],
        tools,
        ...(tool_choice ? {tool_choice} : {}),
      })
    const compress = await ask(QWEN_COMPRESS)
    expect(compress.stop_reason).toBe('end_turn')
    expect(compress.content.map((block) => block.type)).toEqual(['text'])
    const none = await ask('please use a tool', {type: 'none'})
    expect(none.content.map((block) => block.type)).toEqual(['text'])
  })

  it("gemini: Qwen Code's compression and mode NONE answered in text", async () => {
    const ask = (text: string, mode?: 'NONE') =>
      genai().models.generateContent({
        model: 'gemini-2.5-flash',
        contents: [{role: 'user', parts: [{text}]}],
        config: {
          tools: [{functionDeclarations: [{name: 'Read', parametersJsonSchema: {type: 'object'}}]}],
          ...(mode ? {toolConfig: {functionCallingConfig: {mode: mode as never}}} : {}),
        },
      })
    const compress = await ask(QWEN_COMPRESS)
    expect(compress.functionCalls).toBeUndefined()
    expect(compress.text).toContain('PONG from sim')
    expect((await ask('please use a tool', 'NONE')).functionCalls).toBeUndefined()
  })
})
