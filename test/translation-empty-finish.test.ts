/**
 * A chat upstream that writes `"finish_reason": ""` on every chunk before the real one (SenseNova,
 * Perplexity, Together, OpenCode Zen's hy3; the simulator's `empty-finish` quirk; research55 F1):
 * read as the stop, the first chunk would end the client's answer (and the gateway's grace timer
 * would cut the stream 2 s later), the tool call after it told as `end_turn`. Claude Code and Codex
 * get the whole answer, its call and the real stop. The real daemon, the official Anthropic and
 * OpenAI SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {issueKeyOverApi, simPolicy, startSimGatewayWithPolicies, takeSimCalls} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
let key = ''

beforeAll(async () => {
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies([
    simPolicy(
      'empty-finish',
      Object.fromEntries(
        ['messages', 'responses'].map((f) => [
          f,
          [{provider: 'sim-chat', model: 'sim-reasoner+empty-finish', translate: true}],
        ]),
      ),
    ),
  ]))
  key = await issueKeyOverApi(base, 'empty-finish', 'generic_agent', 'empty-finish')
}, 120_000)

afterAll(() => stop())

const BASH = {
  name: 'Bash',
  description: 'Run a command',
  input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}},
}

describe('"finish_reason": "" on every chunk of a chat upstream', {timeout: 60_000}, () => {
  it("is no stop: Claude Code's stream gets the reasoning, the call and stop_reason tool_use (its JSON answer the same)", async () => {
    const client = new Anthropic({baseURL: base, apiKey: key, maxRetries: 0})
    const params = {
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [{role: 'user' as const, content: 'List the files.'}],
      tools: [BASH],
    }
    for (const answer of [
      await client.messages.stream(params).finalMessage(),
      await client.messages.create(params),
    ]) {
      expect(answer.content.map((b) => b.type)).toEqual(['thinking', 'tool_use'])
      expect(answer.stop_reason).toBe('tool_use')
      expect((answer.content[1] as Anthropic.ToolUseBlock).name).toBe('Bash')
    }
    const sent = await takeSimCalls(simOrigin, /\/chat\/completions$/)
    // (the JSON answer has one finish, the real one: the stream is what the quirk changes)
    expect(sent.map((b) => b.stream)).toEqual([true, undefined])
    // the upstream's stream did carry the empty finishes (the quirk is on)
    const raw = await fetch(`${simOrigin}/v1/chat/completions`, {
      method: 'POST',
      headers: {'content-type': 'application/json', authorization: 'Bearer x'},
      body: JSON.stringify({...sent[0], stream: true}),
    })
    const events = (await raw.text()).split('\n\n').filter((e) => e.startsWith('data: {'))
    expect(events.filter((e) => e.includes('"finish_reason":""')).length).toBe(events.length - 1 - 1)
    expect(events.at(-2)).toContain('"finish_reason":"tool_calls"')
  })

  it('a text answer comes whole, ended once, as end_turn', async () => {
    const client = new Anthropic({baseURL: base, apiKey: key, maxRetries: 0})
    const answer = await client.messages
      .stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 1024,
        messages: [{role: 'user', content: 'Say hello.'}],
      })
      .finalMessage()
    expect(answer.stop_reason).toBe('end_turn')
    const text = answer.content.find((b) => b.type === 'text') as Anthropic.TextBlock
    expect(text.text).toMatch(/^Hello from .*\.$/)
  })

  it("Codex's stream gets its function call and response.completed", async () => {
    const client = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0})
    const stream = client.responses.stream({
      model: 'gpt-5',
      input: 'List the files.',
      tools: [
        {
          type: 'function',
          name: 'shell',
          parameters: {type: 'object', properties: {command: {type: 'string'}}},
          strict: false,
        },
      ],
    })
    const done = await stream.finalResponse()
    expect(done.status).toBe('completed')
    expect(done.output.map((o) => o.type)).toContain('function_call')
  })
})
