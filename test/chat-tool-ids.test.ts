/**
 * A chat client's stream passed through from an upstream that opens its tool calls without their
 * `id` (GLM, Kimi, NVIDIA NIM, vLLM's gpt-oss) or streams `"role": ""`: the AI SDK's
 * OpenAI-compatible provider (opencode, Kilo) ends the turn ("Expected 'id' to be a string.", or
 * its schema's `expected "assistant"`). The chat tap sees it; the provider and model learn it, and
 * their later streams get an id on each call and OpenAI's role (the first went as it came). The
 * real daemon, the simulator's `no-tool-call-id` and `empty-delta-role` quirks, and the AI SDK's
 * `streamText` as the client: `@ai-sdk/openai-compatible` pinned at 1.0.56, the last release that
 * refuses both, as the clients ship it (later ones take a missing id, still not a number one).
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {aiSdkTurn as turnOf, streamedChunks as chunksOf, TOOL_PROMPT} from './helpers/ai-sdk.js'
import {projectLogRows, startKeyedPolicies} from './helpers/gateway.js'

let base = ''
let stop: () => Promise<void> = async () => {}
let keys = new Map<string, string>()

const chat = (model: string) => ({chat: [{provider: 'sim-chat', model}]})

beforeAll(async () => {
  ;({base, stop, keys} = await startKeyedPolicies({
    toolids: chat('sim-pro+no-tool-call-id'),
    toolrole: chat('sim-pro+empty-delta-role'),
  }))
}, 120_000)

afterAll(() => stop())

/** One turn of the AI SDK's `streamText` with a tool, as `project`'s agent (see helpers/ai-sdk.ts). */
const aiSdkTurn = (project: string) => turnOf(base, keys.get(project)!, true)

/** The raw chunks of one streamed answer with the same tool. */
const streamedChunks = (project: string) =>
  chunksOf(base, keys.get(project)!, {
    tools: [
      {
        type: 'function',
        function: {
          name: 'read_file',
          parameters: {type: 'object', properties: {path: {type: 'string'}}, required: ['path']},
        },
      },
    ],
    messages: [{role: 'user', content: TOOL_PROMPT}],
  })

/**
 * The first turn of `project`: the AI SDK refuses it with `refused`, and the row says what was
 * learned (after "client closed the connection; " where the client closed the stream at that delta
 * before the upstream's last byte reached the gateway: a race the machine's load decides).
 */
async function refusedOnce(project: string, refused: string, row: string): Promise<void> {
  const first = await aiSdkTurn(project)
  expect(first.calls).toEqual([])
  expect(first.errors.join('\n')).toContain(refused)
  const [logged] = await projectLogRows(base, project, 1)
  expect(logged.status).toBe(200)
  expect([row, `client closed the connection; ${row}`]).toContain(logged.error)
}

describe('a chat stream whose tool calls open without their id', {timeout: 60_000}, () => {
  it('fails the AI SDK once, is learned, and later streams carry ids; the usage row stays exact', async () => {
    await refusedOnce(
      'toolids',
      "Expected 'id' to be a string.",
      "sim-chat streamed tool calls without their id, which AI SDK clients refuse: the gateway names them in this provider's streams from now on",
    )

    // the bytes: the call's first delta with its id right after its index, the rest as they came
    const chunks = await streamedChunks('toolids')
    const opened = chunks.find((c) => c.choices[0]?.delta?.tool_calls)!
    const [call] = opened.choices[0].delta.tool_calls
    expect(Object.keys(call).slice(0, 2)).toEqual(['index', 'id'])
    expect(call).toMatchObject({
      index: 0,
      id: `call_${opened.id}_0_0`,
      type: 'function',
      function: {name: 'read_file'},
    })
    const later = chunks.filter((c) => c.choices[0]?.delta?.tool_calls).slice(1)
    expect(later.length).toBeGreaterThan(0)
    expect(later.every((c) => c.choices[0].delta.tool_calls[0].id === undefined)).toBe(true)
    // (its usage chunk as the upstream counted it, in the row as it was)
    const usage = chunks.find((c) => c.usage)!.usage
    const rows = await projectLogRows(base, 'toolids', 2)
    expect(rows[1]).toMatchObject({
      status: 200,
      error: null,
      inputTokens: usage.prompt_tokens,
      outputTokens: usage.completion_tokens,
    })

    const again = await aiSdkTurn('toolids')
    expect(again.errors).toEqual([])
    expect(again.calls).toEqual([
      {id: expect.stringMatching(/^call_chatcmpl-/), input: {path: expect.any(String)}},
    ])
    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {
      adaptations: Array<{provider: string; model: string; rules: string[]}>
    }
    expect(adaptations.find((a) => a.model === 'sim-pro+no-tool-call-id')?.rules).toContain(
      'streamed tool calls given ids and the delta role written as assistant (left out or empty; learned from an answer)',
    )
  })

  it('a delta role that is not assistant: the same, the first written as OpenAI writes it', async () => {
    await refusedOnce(
      'toolrole',
      'Invalid input: expected \\"assistant\\"',
      "sim-chat streamed a delta role that is not assistant, which AI SDK clients refuse: the gateway writes OpenAI's in this provider's streams from now on",
    )
    const chunks = await streamedChunks('toolrole')
    const roles = chunks.filter((c) => c.choices.length > 0).map((c) => c.choices[0].delta.role)
    expect(roles[0]).toBe('assistant')
    expect(roles.slice(1).every((role) => role === undefined)).toBe(true)
    const again = await aiSdkTurn('toolrole')
    expect(again.errors).toEqual([])
    expect(again.calls).toHaveLength(1)
  })
})
