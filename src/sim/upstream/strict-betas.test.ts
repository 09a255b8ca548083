/**
 * `strict-betas` and `bedrock-betas`: a host fronting Claude that validates `anthropic-beta`,
 * refusing values it does not know in Anthropic's words (each named) or Bedrock's (none named).
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../server.js'
import {startSim} from '../server.js'

let sim: Simulator

beforeAll(async () => {
  sim = await startSim({timeScale: 1000})
})
afterAll(async () => {
  await sim.close()
})

const messages = async (model: string, beta: string | undefined, body: Record<string, unknown> = {}) => {
  const response = await fetch(`${sim.origin}/v1/messages`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-api-key': 'sk-ant-test',
      'anthropic-version': '2023-06-01',
      ...(beta === undefined ? {} : {'anthropic-beta': beta}),
    },
    body: JSON.stringify({model, max_tokens: 100, messages: [{role: 'user', content: 'hi'}], ...body}),
  })
  return {status: response.status, json: (await response.json()) as any}
}

const CLAUDE_CODE = 'claude-code-20250219,advisor-tool-2026-03-01,interleaved-thinking-2025-05-14'
const CONTEXT = {context_management: {edits: [{type: 'clear_thinking_20251015', keep: 'all'}]}}

describe('a host that validates anthropic-beta', () => {
  it("strict-betas: values it does not know named in Anthropic's words; known ones taken", async () => {
    const refused = await messages('claude-sonnet-4-5+strict-betas', CLAUDE_CODE)
    expect(refused.status).toBe(400)
    expect(refused.json).toMatchObject({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          'Unexpected value(s) `advisor-tool-2026-03-01` for the `anthropic-beta` header. Please consult our documentation at docs.anthropic.com or try again without the header.',
      },
    })
    const two = await messages(
      'claude-sonnet-4-5+strict-betas',
      'a-2026-01-01, claude-code-20250219,b-2026-01-01',
    )
    expect(two.json.error.message).toMatch(/^Unexpected value\(s\) `a-2026-01-01`, `b-2026-01-01` for the/)
    expect(
      (
        await messages(
          'claude-sonnet-4-5+strict-betas',
          'claude-code-20250219,interleaved-thinking-2025-05-14',
        )
      ).status,
    ).toBe(200)
    expect((await messages('claude-sonnet-4-5+strict-betas', undefined)).status).toBe(200)
    // without the quirk: any value taken
    expect((await messages('claude-sonnet-4-5', CLAUDE_CODE)).status).toBe(200)
  })

  it("bedrock-betas: Bedrock's invalid beta flag, none named; context_management wants its beta", async () => {
    const refused = await messages('claude-sonnet-4-5+bedrock-betas', CLAUDE_CODE)
    expect(refused.status).toBe(400)
    expect(refused.json.error.message).toBe('invalid beta flag')
    expect(
      (await messages('claude-sonnet-4-5+bedrock-betas', 'interleaved-thinking-2025-05-14')).status,
    ).toBe(200)
    const noBeta = await messages('claude-sonnet-4-5+bedrock-betas', undefined, CONTEXT)
    expect(noBeta.status).toBe(400)
    expect(noBeta.json.error.message).toBe('context_management: Extra inputs are not permitted')
    expect(
      (await messages('claude-sonnet-4-5+bedrock-betas', 'context-management-2025-06-27', CONTEXT)).status,
    ).toBe(200)
  })
})

describe("a strict host's schema of a Messages body (strict-messages-fields)", () => {
  it("Claude Code's newer fields and its tools' eager_input_streaming refused, the first named; a beta's field wants its beta", async () => {
    const model = 'claude-sonnet-4-6+strict-messages-fields'
    const tool = {name: 'Bash', input_schema: {type: 'object'}}
    expect((await messages(model, undefined, {tools: [tool]})).status).toBe(200)
    const field = await messages(model, undefined, {diagnostics: {cache: true}, speed: 'fast'})
    expect(field.status).toBe(400)
    expect(field.json.error.message).toBe('diagnostics: Extra inputs are not permitted')
    const eager = await messages(model, undefined, {
      tools: [
        {type: 'web_search_20250305', name: 'web_search', max_uses: 5},
        {...tool, eager_input_streaming: true},
      ],
    })
    expect(eager.json.error.message).toBe(
      'tools.1.custom.eager_input_streaming: Extra inputs are not permitted',
    )
    // without the quirk: taken
    expect((await messages('claude-sonnet-4-6', undefined, {diagnostics: {cache: true}})).status).toBe(200)
    // strict-betas: fast mode's speed without its beta
    const speed = await messages('claude-sonnet-4-6+strict-betas', undefined, {speed: 'fast'})
    expect(speed.json.error.message).toBe('speed: Extra inputs are not permitted')
  })

  it("strict-input-items: an input item's status refused by its place, as ChatGPT's Codex backend does; a web search's required", async () => {
    const responses = async (input: unknown[]) => {
      const response = await fetch(`${sim.origin}/v1/responses`, {
        method: 'POST',
        headers: {'content-type': 'application/json', authorization: 'Bearer sk-test'},
        body: JSON.stringify({model: 'gpt-5.5+strict-input-items', input}),
      })
      return {status: response.status, error: ((await response.json()) as any).error}
    }
    const search = {type: 'web_search_call', id: 'ws_1', action: {type: 'search', query: 'q'}}
    const call = {type: 'function_call', call_id: 'c1', name: 'exec', arguments: '{}'}
    const output = {type: 'function_call_output', call_id: 'c1', output: 'ok'}
    const user = {role: 'user', content: 'hi'}
    expect(
      await responses([user, {...search, status: 'completed'}, {...call, status: 'completed'}, output]),
    ).toEqual({
      status: 400,
      error: {
        message: "Unknown parameter: 'input[2].status'.",
        type: 'invalid_request_error',
        param: 'input[2].status',
        code: 'unknown_parameter',
      },
    })
    expect(await responses([user, search, call, output])).toEqual({
      status: 400,
      error: {
        message: "Missing required parameter: 'input[1].status'.",
        type: 'invalid_request_error',
        param: 'input[1].status',
        code: 'missing_required_parameter',
      },
    })
    expect((await responses([user, {...search, status: 'completed'}, call, output])).status).toBe(200)
  })
})
