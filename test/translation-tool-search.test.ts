/**
 * Codex's client-side tool search (`tool_search`, its MCP tools deferred) through a chat upstream:
 * before, the gateway kept the tool as a built-in no chat upstream gets and skipped the
 * `tool_search_call` and `tool_search_output` items, so a deferred MCP tool could never be called.
 * Now the model gets `tool_search` as a function, its call comes back to Codex as the
 * `tool_search_call` item Codex runs (JSON and streamed), and the tools Codex's answer loaded are
 * offered on the next turn, where the model calls one. The real daemon, the simulator's chat
 * upstream (`named-tool`: the user's `tool:NAME` picks the tool), the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {issueKeyOverApi, simPolicy, startSimGatewayWithPolicies, takeSimCalls} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
let key = ''

beforeAll(async () => {
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies([
    simPolicy('tsearch', {
      responses: [{provider: 'sim-chat', model: 'sim-mini+named-tool', translate: true}],
    }),
  ]))
  key = await issueKeyOverApi(base, 'tsearch', 'codex', 'tsearch')
}, 120_000)

afterAll(() => stop())

// Codex 0.171's tools with its MCP tools deferred: its own, and the search
const TOOLS = [
  {type: 'function', name: 'exec_command', parameters: {type: 'object', properties: {cmd: {type: 'string'}}}},
  {
    type: 'tool_search',
    execution: 'client',
    description: 'Search the deferred MCP tools and load the matching ones.',
    parameters: {
      type: 'object',
      properties: {query: {type: 'string'}, limit: {type: 'number'}},
      required: ['query'],
    },
  },
] as unknown as OpenAI.Responses.Tool[]

const user = (text: string) => ({type: 'message', role: 'user', content: [{type: 'input_text', text}]})

describe("Codex's tool_search through a chat upstream", {timeout: 60_000}, () => {
  it('the model searches, Codex loads a tool, the next turn calls it', async () => {
    const client = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0})
    const first = {model: 'gpt-5.5', tools: TOOLS, input: [user('find issues tool:tool_search')]}
    const answers = [
      await client.responses.create(first as OpenAI.Responses.ResponseCreateParamsNonStreaming),
      await client.responses.stream(first as OpenAI.Responses.ResponseCreateParamsStreaming).finalResponse(),
    ]
    const upstream = await takeSimCalls(simOrigin, /chat\/completions/)
    expect(upstream[0].tools.map((t: any) => t.function.name)).toEqual(['exec_command', 'tool_search'])
    for (const answer of answers) {
      expect(answer.output).toHaveLength(1)
      const call = answer.output[0] as unknown as Record<string, unknown>
      expect(call).toMatchObject({type: 'tool_search_call', execution: 'client', status: 'completed'})
      // (the simulator's argument: the user's words without the `tool:NAME` that picked the tool)
      expect(call.arguments).toEqual({query: 'find issues'})
      expect(call.call_id).toEqual(expect.any(String))
    }

    // Codex's next request: the search and its output in the history, the loaded namespace's tool
    // called by the user's words
    const call = answers[0].output[0] as unknown as Record<string, unknown>
    const second = {
      model: 'gpt-5.5',
      tools: TOOLS,
      input: [
        user('find issues tool:tool_search'),
        call,
        {
          type: 'tool_search_output',
          call_id: call.call_id,
          execution: 'client',
          status: 'completed',
          tools: [
            {
              type: 'namespace',
              name: 'mcp__github',
              description: 'GitHub',
              tools: [
                {
                  type: 'function',
                  name: 'search_issues',
                  description: 'Search issues',
                  parameters: {type: 'object', properties: {q: {type: 'string'}}, required: ['q']},
                },
              ],
            },
          ],
        },
        user('now tool:mcp__github__search_issues'),
      ],
    }
    const next = await client.responses.create(
      second as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming,
    )
    const [sent] = await takeSimCalls(simOrigin, /chat\/completions/)
    expect(sent.tools.map((t: any) => t.function.name)).toEqual([
      'exec_command',
      'tool_search',
      'mcp__github__search_issues',
    ])
    expect(sent.messages.slice(-3)).toMatchObject([
      {role: 'assistant', tool_calls: [{id: call.call_id, function: {name: 'tool_search'}}]},
      {
        role: 'tool',
        tool_call_id: call.call_id,
        content: expect.stringContaining('mcp__github__search_issues'),
      },
      {role: 'user'},
    ])
    // the loaded tool's call goes back to Codex under its own name with its namespace
    expect(next.output.at(-1)).toMatchObject({
      type: 'function_call',
      name: 'search_issues',
      namespace: 'mcp__github',
    })
  })
})
