/**
 * Gemini's empty STOP after a tool result (research56 F4: AstrBot #6735, google/adk-js #344): the
 * answer ends `finishReason: STOP` with no part, or with a thought only. The real daemon, the
 * simulator's `empty-stop` quirks (the first answer after a function response empty, the same
 * request again whole), the official SDKs, no retries of theirs:
 * - Claude Code (`@anthropic-ai/sdk`), stream and not, Codex (`openai` Responses) and a chat client
 *   get a whole answer: the gateway sent the same request again once, unseen; the row says so;
 * - a thought streamed before the empty STOP (`empty-stop-thought`, thinking on): Claude Code gets
 *   its thinking, then an `overloaded_error` event it retries, and its retry a whole answer;
 * no breaker failure in any.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

const MODEL = 'gemini-2.5-flash+empty-stop'
const THOUGHT_MODEL = 'gemini-2.5-flash+empty-stop-thought'

beforeAll(async () => {
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies([
    simPolicy('ges-msg', {messages: [{provider: 'sim-gemini', model: MODEL, translate: true}]}),
    simPolicy('ges-resp', {responses: [{provider: 'sim-gemini', model: MODEL, translate: true}]}),
    simPolicy('ges-chat', {chat: [{provider: 'sim-gemini', model: MODEL, translate: true}]}),
    simPolicy('ges-thought', {messages: [{provider: 'sim-gemini', model: THOUGHT_MODEL, translate: true}]}),
  ]))
  for (const id of ['msg', 'resp', 'chat', 'thought'])
    keys.set(id, await issueKeyOverApi(base, `ges-${id}`, 'generic_agent', `ges-${id}`))
  await takeSimCalls(simOrigin, /./)
}, 120_000)

afterAll(() => stop())

async function circuit(): Promise<{state: string; consecutiveFailures: number}> {
  const {providers} = (await (await fetch(`${base}/api/providers`)).json()) as {
    providers: Array<{name: string; circuit: {state: string; consecutiveFailures: number} | null}>
  }
  return providers.find((p) => p.name === 'sim-gemini')!.circuit ?? {state: 'closed', consecutiveFailures: 0}
}

const SENT_AGAIN =
  'sim-gemini: the upstream answered nothing (Gemini finishReason STOP with no text or call): the request went again once, unseen by the client'

/** Claude Code's tool loop (its Read of `path`), the tool result last. */
const claudeCodeTurn = (path: string, thinking = false): Anthropic.MessageCreateParamsNonStreaming => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 4096,
  ...(thinking ? {thinking: {type: 'enabled' as const, budget_tokens: 2048}} : {}),
  tools: [
    {
      name: 'Read',
      description: 'Reads a file',
      input_schema: {type: 'object', properties: {file_path: {type: 'string'}}, required: ['file_path']},
    },
  ],
  messages: [
    {role: 'user', content: `Read ${path} and tell me what it says.`},
    {
      role: 'assistant',
      content: [{type: 'tool_use', id: 'toolu_01', name: 'Read', input: {file_path: path}}],
    },
    {
      role: 'user',
      content: [{type: 'tool_result', tool_use_id: 'toolu_01', content: `the contents of ${path}`}],
    },
  ],
})

/** The simulator's Gemini calls since the last look: two, the same request. */
async function sentTwice(): Promise<void> {
  const calls = await takeSimCalls(simOrigin, /^\/v1beta\/models\//)
  expect(calls).toHaveLength(2)
  expect(calls[1]).toEqual(calls[0])
}

describe("Gemini's empty STOP after a tool result, translated", {timeout: 60_000}, () => {
  it('Claude Code streaming: a whole answer after one silent retry; the row says so', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('msg')!, maxRetries: 0})
    const message = await client.messages.stream(claudeCodeTurn('a.txt')).finalMessage()
    expect(message.stop_reason).toBe('end_turn')
    const text = message.content.find((b) => b.type === 'text')
    expect(text?.type === 'text' && text.text.length > 0).toBe(true)
    await sentTwice()
    const [row] = await projectLogRows(base, 'ges-msg')
    expect(row).toMatchObject({status: 200, error: SENT_AGAIN})
    expect(row!.broken ?? false).toBe(false)
    // the row bills both answers' prompts (Google bills the empty one, the same prompt); the client
    // is told its own (Anthropic's input_tokens leave the cache's reads out, the row's hold them)
    const prompt = message.usage.input_tokens + (message.usage.cache_read_input_tokens ?? 0)
    expect(prompt).toBeGreaterThan(0)
    expect(row!.inputTokens).toBe(2 * prompt)
    expect(await circuit()).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })

  it('Claude Code, not streaming: the same', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('msg')!, maxRetries: 0})
    const message = await client.messages.create(claudeCodeTurn('b.txt'))
    expect(message.stop_reason).toBe('end_turn')
    expect(message.content.some((b) => b.type === 'text' && b.text.length > 0)).toBe(true)
    await sentTwice()
    const rows = await projectLogRows(base, 'ges-msg', 2)
    expect(rows[1]).toMatchObject({status: 200, error: SENT_AGAIN})
    expect(await circuit()).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })

  it('Codex (openai Responses, streaming): response.completed with the text', async () => {
    const client = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('resp')!, maxRetries: 0})
    const stream = await client.responses.create({
      model: 'gpt-5',
      stream: true,
      tools: [
        {
          type: 'function',
          name: 'shell',
          parameters: {type: 'object', properties: {command: {type: 'string'}}},
          strict: false,
        },
      ],
      input: [
        {type: 'message', role: 'user', content: 'List the files.'},
        {type: 'function_call', call_id: 'call_1', name: 'shell', arguments: '{"command":"ls"}'},
        {type: 'function_call_output', call_id: 'call_1', output: 'a.txt b.txt'},
      ],
    })
    const types: string[] = []
    let text = ''
    for await (const event of stream) {
      types.push(event.type)
      if (event.type === 'response.output_text.delta') text += event.delta
    }
    expect(types).toContain('response.completed')
    expect(types).not.toContain('response.failed')
    expect(types.filter((t) => t === 'response.created')).toHaveLength(1)
    expect(text.length).toBeGreaterThan(0)
    await sentTwice()
    const [row] = await projectLogRows(base, 'ges-resp')
    expect(row).toMatchObject({status: 200, error: SENT_AGAIN})
  })

  it('a chat client (openai, not streaming): the answer has its content', async () => {
    const client = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('chat')!, maxRetries: 0})
    const completion = await client.chat.completions.create({
      model: 'gpt-4o',
      tools: [{type: 'function', function: {name: 'read', parameters: {type: 'object'}}}],
      messages: [
        {role: 'user', content: 'Read c.txt.'},
        {
          role: 'assistant',
          content: null,
          tool_calls: [{id: 'call_1', type: 'function', function: {name: 'read', arguments: '{}'}}],
        },
        {role: 'tool', tool_call_id: 'call_1', content: 'the contents of c.txt'},
      ],
    })
    expect(completion.choices[0]!.finish_reason).toBe('stop')
    expect(completion.choices[0]!.message.content?.length).toBeGreaterThan(0)
    await sentTwice()
    const [row] = await projectLogRows(base, 'ges-chat')
    expect(row).toMatchObject({status: 200, error: SENT_AGAIN})
  })

  it('a thought streamed before the empty STOP: Claude Code gets overloaded_error, and its retry a whole answer', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('thought')!, maxRetries: 0})
    const turn = claudeCodeTurn('d.txt', true)
    const seen: string[] = []
    const stream = client.messages.stream(turn)
    stream.on('streamEvent', (event) => seen.push(event.type))
    const error = await stream.finalMessage().then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(error?.message).toMatch(/"type":"overloaded_error"/)
    expect(error?.message).toContain('the upstream answered nothing')
    // the thinking went out before it; no end_turn
    expect(seen).toContain('content_block_start')
    expect(seen).not.toContain('message_delta')
    const [row] = await projectLogRows(base, 'ges-thought')
    expect(row).toMatchObject({status: 200, broken: true})
    expect(row!.error).toMatch(/after its thoughts streamed: the client got an error event$/)
    expect(row!.reasoningTokens).toBeGreaterThan(0)
    // Claude Code's retry (the same request): whole
    const message = await client.messages.stream(turn).finalMessage()
    expect(message.stop_reason).toBe('end_turn')
    expect(message.content.some((b) => b.type === 'text' && b.text.length > 0)).toBe(true)
    const rows = await projectLogRows(base, 'ges-thought', 2)
    expect(rows[1]).toMatchObject({status: 200, error: null})
    expect(await circuit()).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })
})
