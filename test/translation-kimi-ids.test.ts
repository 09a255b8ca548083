/**
 * Kimi K3 behind a chat completions server (NVIDIA NIM, Fireworks, vLLM's `kimi_k3` parser; the
 * simulator's `kimi-ids` quirk) names each tool call `{name}:{position}`, from 0 on every answer:
 * `Bash:0` again on the next turn. Claude Code, through translation, gets ids of the gateway's
 * own instead, unique over the conversation and in Anthropic's id alphabet, stream and not, and
 * the conversation goes on on Anthropic's API (which refuses a repeated id). The real daemon, the
 * official Anthropic SDK.
 */
import Anthropic from '@anthropic-ai/sdk'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {issueKeyOverApi, simPolicy, startSimGatewayWithPolicies} from './helpers/gateway.js'

let base = ''
let stop: () => Promise<void> = async () => {}
let key = ''
let claudeKey = ''

beforeAll(async () => {
  ;({base, stop} = await startSimGatewayWithPolicies([
    simPolicy('kimi-ids', {
      messages: [{provider: 'sim-chat', model: 'kimi-k3+kimi-ids+parallel-tools', translate: true}],
    }),
    simPolicy('claude', {messages: [{provider: 'sim-messages', model: 'claude-sonnet-4-5'}]}),
  ]))
  key = await issueKeyOverApi(base, 'kimi-ids', 'generic_agent', 'kimi-ids')
  claudeKey = await issueKeyOverApi(base, 'claude', 'generic_agent', 'claude')
}, 120_000)

afterAll(() => stop())

describe("Kimi K3's tool-call ids (Bash:0 on every turn)", {timeout: 60_000}, () => {
  it("Claude Code's second turn gets calls of ids it has not seen, stream and not", async () => {
    const client = new Anthropic({baseURL: base, apiKey: key, maxRetries: 0})
    const tools = [
      {
        name: 'Bash',
        description: 'Run a command',
        input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}},
      },
      {
        name: 'Read',
        description: 'Read a file',
        input_schema: {type: 'object' as const, properties: {path: {type: 'string'}}},
      },
    ]
    for (const stream of [false, true]) {
      const ask = (messages: Anthropic.MessageParam[]) => {
        const params = {model: 'claude-sonnet-4-5', max_tokens: 1024, tools, messages}
        return stream ? client.messages.stream(params).finalMessage() : client.messages.create(params)
      }
      const messages: Anthropic.MessageParam[] = [{role: 'user', content: 'List the files.'}]
      const seen: string[] = []
      for (const turn of [1, 2]) {
        const answer = await ask(messages)
        expect(answer.stop_reason).toBe('tool_use')
        const calls = answer.content.filter((b) => b.type === 'tool_use')
        // (Kimi's two calls of one answer: Bash, then Read)
        expect(calls.map((c) => c.name)).toEqual(['Bash', 'Read'])
        for (const call of calls) {
          // (one of the gateway's own in the characters Anthropic's API takes, which the
          // conversation goes on to below)
          expect(call.id).toMatch(/^call_[0-9a-f]{24}$/)
          expect(seen).not.toContain(call.id)
          seen.push(call.id)
        }
        messages.push({role: 'assistant', content: answer.content})
        messages.push({
          role: 'user',
          content: [
            ...calls.map((c) => ({type: 'tool_result' as const, tool_use_id: c.id, content: `done ${turn}`})),
            {type: 'text' as const, text: 'Again.'},
          ],
        })
      }
      expect(seen).toHaveLength(4)
      // the conversation goes on on Anthropic's API (the simulator refuses a repeated id as it does)
      const claude = new Anthropic({baseURL: base, apiKey: claudeKey, maxRetries: 0})
      const after = await claude.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        tools,
        messages,
      })
      expect(after.content.length).toBeGreaterThan(0)
    }
  })
})
