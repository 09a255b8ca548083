/**
 * A chat client's stream passed through from an upstream whose tool-call deltas carry no `index`
 * (Gemini's OpenAI-compatible endpoint, some relays): opencode and other clients that reassemble
 * calls by it refuse or drop them. The chat tap sees it; the provider and model learn it, and
 * their later streams get each call numbered on the way (the first went as it came). The real
 * daemon, the simulator's `no-tool-index` quirk, the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {projectLogRows, startKeyedPolicies} from './helpers/gateway.js'

let base = ''
let stop: () => Promise<void> = async () => {}
let key = ''

beforeAll(async () => {
  let keys: Map<string, string>
  ;({base, stop, keys} = await startKeyedPolicies({
    toolindex: {chat: [{provider: 'sim-chat', model: 'sim-pro+no-tool-index+parallel-tools'}]},
  }))
  key = keys.get('toolindex')!
}, 120_000)

afterAll(() => stop())

const TOOLS = [
  {
    type: 'function' as const,
    function: {
      name: 'read_file',
      description: 'Read a file',
      parameters: {type: 'object', properties: {path: {type: 'string'}}, required: ['path']},
    },
  },
]

/** The tool-call deltas of one streamed answer, raw (as the client's SSE parser sees them). */
async function streamedCalls(): Promise<Array<Record<string, unknown>>> {
  const response = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: `Bearer ${key}`},
    body: JSON.stringify({
      model: 'sim-pro',
      stream: true,
      stream_options: {include_usage: true},
      tools: TOOLS,
      messages: [{role: 'user', content: 'Use a tool to read /tmp/notes.txt.'}],
    }),
  })
  expect(response.status).toBe(200)
  const calls: Array<Record<string, unknown>> = []
  for (const line of (await response.text()).split('\n'))
    if (line.startsWith('data: {'))
      for (const choice of (JSON.parse(line.slice(6)) as {choices: Array<{delta?: {tool_calls?: any[]}}>})
        .choices)
        calls.push(...(choice.delta?.tool_calls ?? []))
  return calls
}

describe('a chat stream whose tool calls carry no index', {timeout: 60_000}, () => {
  it('goes as it came once, is learned, and later streams get each call numbered', async () => {
    const first = await streamedCalls()
    expect(first.length).toBeGreaterThan(0)
    expect(first.every((c) => c.index === undefined)).toBe(true)
    const [row] = await projectLogRows(base, 'toolindex', 1)
    expect([row.status, row.error]).toEqual([
      200,
      "sim-chat streamed tool calls without their index, which chat clients refuse or drop: the gateway numbers them in this provider's streams from now on",
    ])
    const second = await streamedCalls()
    // (two calls in parallel, each whole in one delta: numbered 0 and 1)
    expect(second.map((c) => c.index)).toEqual([0, 1])
    expect(second[0]).toMatchObject({index: 0, type: 'function', function: {name: 'read_file'}})
    // the official SDK's stream helper assembles the call by its index
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0})
    const done = await openai.chat.completions
      .stream({
        model: 'sim-pro',
        tools: TOOLS,
        messages: [{role: 'user', content: 'Use a tool to read /tmp/notes.txt.'}],
      })
      .finalChatCompletion()
    expect(done.choices[0].message.tool_calls?.[0]).toMatchObject({
      type: 'function',
      function: {name: 'read_file', arguments: expect.stringContaining('path')},
    })
    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {
      adaptations: Array<{provider: string; rules: string[]}>
    }
    expect(adaptations.find((a) => a.provider === 'sim-chat')?.rules).toContain(
      'streamed tool calls numbered (their index left out; learned from an answer)',
    )
  })
})
