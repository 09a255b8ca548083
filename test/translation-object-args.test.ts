/**
 * A chat upstream that sends a tool call's `arguments` as a JSON object instead of its text
 * (llama.cpp's server, TGI; the simulator's `object-args` quirk): the call reaches the agent with
 * its arguments, stream and not, instead of `{}`. The real daemon, the official Anthropic SDK.
 */
import Anthropic from '@anthropic-ai/sdk'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {issueKeyOverApi, simPolicy, startSimGatewayWithPolicies} from './helpers/gateway.js'

let base = ''
let stop: () => Promise<void> = async () => {}
let key = ''

beforeAll(async () => {
  ;({base, stop} = await startSimGatewayWithPolicies([
    simPolicy('object-args', {
      messages: [{provider: 'sim-chat', model: 'sim-mini+object-args', translate: true}],
    }),
  ]))
  key = await issueKeyOverApi(base, 'object-args', 'generic_agent', 'object-args')
}, 120_000)

afterAll(() => stop())

describe('tool call arguments sent as a JSON object', {timeout: 60_000}, () => {
  it("Claude Code gets the call's arguments, stream and not", async () => {
    const client = new Anthropic({baseURL: base, apiKey: key, maxRetries: 0})
    const params = {
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      tools: [
        {
          name: 'Bash',
          description: 'Run a command',
          input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}},
        },
      ],
      messages: [{role: 'user' as const, content: 'List the files.'}],
    }
    for (const answer of [
      await client.messages.create(params),
      await client.messages.stream(params).finalMessage(),
    ]) {
      expect(answer.stop_reason).toBe('tool_use')
      const call = answer.content.find((b) => b.type === 'tool_use')!
      expect(call.input).toEqual({command: 'List the files.'})
    }
  })
})
