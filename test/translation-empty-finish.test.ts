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
  it('is no stop: Claude Code gets the reasoning, the call and stop_reason tool_use, stream and not', async () => {
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
    // the upstream did send the empty finishes (the quirk is on)
    expect((await takeSimCalls(simOrigin, /\/chat\/completions$/)).length).toBe(2)
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
