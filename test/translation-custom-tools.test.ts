/**
 * Codex's free-form (custom) tools through a chat upstream whose model writes the input raw as the
 * call's arguments (the simulator's `raw-input-args`; research49 #1): Codex gets the input whole
 * as `custom_tool_call.input`, streamed and not. Before, the syntax repair of arguments that are
 * no JSON took the first `{…}` in it, so an input holding `cfg = {}` reached Codex as `{}`. The
 * real daemon, the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {issueKeyOverApi, simPolicy, startSimGatewayWithPolicies} from './helpers/gateway.js'

let base = ''
let key = ''
let stop: () => Promise<void> = async () => {}

beforeAll(async () => {
  ;({base, stop} = await startSimGatewayWithPolicies([
    simPolicy('custom-raw', {
      responses: [{provider: 'sim-chat', model: 'sim-mini+raw-input-args', translate: true}],
    }),
  ]))
  key = await issueKeyOverApi(base, 'custom-raw', 'generic_agent', 'custom-raw')
}, 120_000)

afterAll(() => stop())

/** (the sim's model writes the first 20 characters of the user's words as the input) */
const WORDS = 'x = {}; use a tool'

const request = {
  model: 'gpt-5.5',
  input: [
    {type: 'message' as const, role: 'user' as const, content: [{type: 'input_text' as const, text: WORDS}]},
  ],
  tools: [
    {
      type: 'custom' as const,
      name: 'apply_patch',
      description:
        'The `apply_patch` tool can be used to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.',
      format: {type: 'grammar' as const, syntax: 'lark' as const, definition: 'start: /(.|\\n)+/'},
    },
  ],
  store: false,
}

describe("a chat model's raw input of a custom tool, to Codex", {timeout: 60_000}, () => {
  it.each([false, true])('reaches Codex whole (stream: %s)', async (stream) => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0})
    const answer = stream
      ? await openai.responses.stream(request).finalResponse()
      : await openai.responses.create(request)
    const call = answer.output.find((o) => o.type === 'custom_tool_call')
    expect(call).toMatchObject({type: 'custom_tool_call', name: 'apply_patch'})
    const input = (call as {input: string}).input
    // the user's words as the sim's model wrote them, the braces inside kept (before: `{}`)
    expect(input).toBe(WORDS)
  })
})
