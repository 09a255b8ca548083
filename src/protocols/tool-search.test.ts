import {describe, expect, it} from 'vitest'

import {chatCodec} from './chat.js'
import type {StreamEvent} from './ir.js'
import {emptyUsage} from './ir.js'
import {responsesCodec} from './responses.js'

// Codex 0.171's client-side tool search with its MCP tools deferred, as it sends it: the search
// tool, and the history of one search (call and output) that loaded a namespace's tool and a
// plain function
const searchTool = {
  type: 'tool_search',
  execution: 'client',
  description: 'Search the deferred MCP tools and load the matching ones.',
  parameters: {
    type: 'object',
    properties: {query: {type: 'string'}, limit: {type: 'number'}},
    required: ['query'],
    additionalProperties: false,
  },
}
const issueTool = {
  type: 'function',
  name: 'search_issues',
  description: 'Search GitHub issues',
  parameters: {type: 'object', properties: {q: {type: 'string'}}},
}
const body = {
  model: 'm',
  tools: [{type: 'function', name: 'exec_command', parameters: {type: 'object', properties: {}}}, searchTool],
  input: [
    {type: 'message', role: 'user', content: 'find the flaky test issue'},
    {
      type: 'tool_search_call',
      call_id: 'tsc_1',
      execution: 'client',
      status: 'completed',
      arguments: {query: 'github issues', limit: 3},
    },
    {
      type: 'tool_search_output',
      call_id: 'tsc_1',
      execution: 'client',
      status: 'completed',
      tools: [
        {type: 'namespace', name: 'mcp__github', description: 'GitHub', tools: [issueTool]},
        {type: 'function', name: 'lookup', parameters: {type: 'object', properties: {}}},
      ],
    },
    {
      type: 'function_call',
      call_id: 'call_2',
      namespace: 'mcp__github',
      name: 'search_issues',
      arguments: '{"q":"flaky"}',
    },
    {type: 'function_call_output', call_id: 'call_2', output: '#12 flaky test'},
  ],
}

describe("responses: Codex's client-side tool_search", () => {
  it('reads the search as a function, its items as a call and a result, and the tools it loaded after the others', () => {
    const r = responsesCodec.decodeRequest(body, {})
    expect(r.builtinTools).toBeUndefined()
    expect(r.tools.map((t) => t.name)).toEqual([
      'exec_command',
      'tool_search',
      'mcp__github__search_issues',
      'lookup',
    ])
    expect(r.tools[1]).toEqual({
      name: 'tool_search',
      description: searchTool.description,
      parameters: searchTool.parameters,
      toolSearch: true,
    })
    expect(r.tools[2].namespace).toEqual({name: 'mcp__github', tool: 'search_issues'})
    expect(r.messages.slice(1, 3)).toEqual([
      {
        role: 'assistant',
        parts: [
          {
            type: 'tool_call',
            id: 'tsc_1',
            name: 'tool_search',
            arguments: '{"query":"github issues","limit":3}',
          },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            type: 'tool_result',
            callId: 'tsc_1',
            name: 'tool_search',
            content: [{type: 'text', text: 'Tools loaded, now callable: mcp__github__search_issues, lookup'}],
          },
        ],
      },
    ])
  })

  it('sends a chat upstream the search and the loaded tools as functions, the history as calls and results', () => {
    const up = chatCodec.encodeRequest(responsesCodec.decodeRequest(body, {}), 'up', {}) as {
      tools: Array<{function: {name: string}}>
      messages: Array<Record<string, unknown>>
    }
    expect(up.tools.map((t) => t.function.name)).toEqual([
      'exec_command',
      'tool_search',
      'mcp__github__search_issues',
      'lookup',
    ])
    expect(up.messages[1]).toMatchObject({
      role: 'assistant',
      tool_calls: [
        {id: 'tsc_1', function: {name: 'tool_search', arguments: '{"query":"github issues","limit":3}'}},
      ],
    })
    expect(up.messages[2]).toMatchObject({role: 'tool', tool_call_id: 'tsc_1'})
  })

  it('keeps the first-load order and sends a tool loaded twice once', () => {
    const again = {
      type: 'tool_search_output',
      call_id: 'tsc_2',
      execution: 'client',
      status: 'completed',
      tools: [
        {type: 'function', name: 'lookup', parameters: {type: 'object', properties: {}}},
        {
          type: 'namespace',
          name: 'mcp__github',
          tools: [issueTool, {...issueTool, name: 'create_issue'}],
        },
      ],
    }
    const r = responsesCodec.decodeRequest(
      {
        ...body,
        input: [
          ...body.input,
          {type: 'tool_search_call', call_id: 'tsc_2', execution: 'client', arguments: {query: 'create'}},
          again,
        ],
      },
      {},
    )
    expect(r.tools.map((t) => t.name)).toEqual([
      'exec_command',
      'tool_search',
      'mcp__github__search_issues',
      'lookup',
      'mcp__github__create_issue',
    ])
  })

  it('leaves a server-run search to OpenAI (a built-in tool, its items not read)', () => {
    const r = responsesCodec.decodeRequest(
      {
        model: 'm',
        tools: [{type: 'tool_search', execution: 'server'}],
        input: [
          {type: 'tool_search_call', call_id: 's', execution: 'server', arguments: {paths: ['x']}},
          {type: 'tool_search_output', call_id: 's', execution: 'server', tools: [issueTool]},
        ],
      },
      {},
    )
    expect(r.tools).toEqual([])
    expect(r.messages).toEqual([])
    expect(r.builtinTools).toHaveLength(1)
  })

  it("answers the upstream's call of it as the tool_search_call Codex runs, JSON and streamed", () => {
    const request = responsesCodec.decodeRequest(body, {})
    const answer = responsesCodec.encodeResponse(
      {
        id: 'r1',
        model: 'up',
        parts: [{type: 'tool_call', id: 'call_9', name: 'tool_search', arguments: '{"query":"calendar"}'}],
        stop: 'tool_use',
        usage: emptyUsage(),
      },
      {request, newId: (p) => `${p}_1`},
    ) as {output: Array<Record<string, unknown>>}
    expect(answer.output).toEqual([
      {
        type: 'tool_search_call',
        id: 'fc_1',
        call_id: 'call_9',
        status: 'completed',
        execution: 'client',
        arguments: {query: 'calendar'},
      },
    ])

    const enc = responsesCodec.streamEncoder({request, newId: (p) => `${p}_1`})
    const text = [
      {type: 'start', id: 'x', model: 'up'},
      {type: 'block_start', index: 0, block: {type: 'tool_call', id: 'call_9', name: 'tool_search'}},
      {type: 'tool_args_delta', index: 0, json: '{"query":'},
      {type: 'tool_args_delta', index: 0, json: '"calendar"}'},
      {type: 'block_stop', index: 0},
      {type: 'stop', reason: 'tool_use'},
      {type: 'end'},
    ]
      .map((e) => enc.event(e as StreamEvent))
      .join('')
    const events = text
      .split('\n\n')
      .filter(Boolean)
      .map((block) => JSON.parse(block.split('\n')[1].slice('data: '.length)))
    // no argument events: Codex reads the item only
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.output_item.done',
      'response.completed',
    ])
    expect(events[2].item).toEqual({
      type: 'tool_search_call',
      id: 'tsc_1',
      call_id: 'call_9',
      status: 'in_progress',
      execution: 'client',
      arguments: {},
    })
    expect(events[3].item).toEqual({...events[2].item, status: 'completed', arguments: {query: 'calendar'}})
    expect(events[4].response.output).toEqual([events[3].item])
  })

  it('sends a function of that name of a request without the search as a function_call', () => {
    const request = responsesCodec.decodeRequest(
      {model: 'm', tools: [{type: 'function', name: 'tool_search', parameters: {}}], input: 'x'},
      {},
    )
    const answer = responsesCodec.encodeResponse(
      {
        id: 'r1',
        model: 'up',
        parts: [{type: 'tool_call', id: 'c', name: 'tool_search', arguments: '{}'}],
        stop: 'tool_use',
        usage: emptyUsage(),
      },
      {request, newId: (p) => `${p}_1`},
    ) as {output: Array<Record<string, unknown>>}
    expect(answer.output[0].type).toBe('function_call')
  })
})
