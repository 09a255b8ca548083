import {describe, expect, it} from 'vitest'

import {chatCodec} from './chat.js'
import type {StreamEvent} from './ir.js'
import {emptyUsage} from './ir.js'
import {messagesCodec} from './messages.js'
import {responsesCodec} from './responses.js'

const run = (events: Array<Record<string, unknown>>, end = true): StreamEvent[] => {
  const dec = responsesCodec.streamDecoder({newId: (p) => `${p}_x`})
  const out = events.flatMap((e) => dec.event(e.type as string, JSON.stringify(e)))
  return end ? [...out, ...dec.end()] : out
}

describe('responses decodeRequest', () => {
  it("reads a configuration_update item's effort (it holds until the next one), the request's summary kept", () => {
    const update = (effort: string) => ({type: 'configuration_update', reasoning: {effort}})
    const input = [
      {type: 'message', role: 'user', content: 'Plan it.'},
      {type: 'message', role: 'assistant', content: 'A plan.'},
      update('high'),
      {type: 'message', role: 'user', content: 'Now the hard part.'},
      {type: 'message', role: 'assistant', content: 'Done.'},
      update('low'),
      {type: 'message', role: 'user', content: 'Rename a file.'},
    ]
    const r = responsesCodec.decodeRequest(
      {model: 'gpt-6-astra', input, reasoning: {effort: 'medium', summary: 'auto'}},
      {},
    )
    expect(r.reasoning).toEqual({include: true, effort: 'low'})
    // the item is no message: the conversation reads as it would without it
    expect(r.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
    // an update to none turns thinking off; one with no request-level reasoning still counts
    expect(responsesCodec.decodeRequest({model: 'm', input: [update('none')]}, {}).reasoning).toEqual({
      disabled: true,
    })
    expect(responsesCodec.decodeRequest({model: 'm', input: [update('high')]}, {}).reasoning).toEqual({
      include: false,
      effort: 'high',
    })
  })

  it.each(['xhigh', 'max', 'ultra'])(
    "Codex's effort %s (above high: GPT-5.x's, GPT-6's) is the IR's high, not none",
    (effort) => {
      const r = responsesCodec.decodeRequest(
        {model: 'gpt-6.2-sol', input: 'hi', reasoning: {effort, summary: 'auto'}},
        {},
      )
      expect(r.reasoning).toEqual({
        include: true,
        effort: 'high',
        beyond: effort === 'xhigh' ? 'xhigh' : 'max',
      })
    },
  )

  it('reads Codex items: developer to system, custom tools, reasoning both own and wrapped', () => {
    const r = responsesCodec.decodeRequest(
      {
        model: 'gpt-5',
        instructions: 'I',
        input: [
          {type: 'message', role: 'developer', content: [{type: 'input_text', text: 'D'}]},
          {
            type: 'message',
            role: 'user',
            content: [{type: 'input_image', image_url: 'data:image/png;base64,AAA'}],
          },
          {
            type: 'reasoning',
            id: 'rs_1',
            summary: [{type: 'summary_text', text: 'a'}],
            encrypted_content: 'OWN',
          },
          {type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'gwx1.messages.SIG'},
          {type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: 'P'},
          {type: 'custom_tool_call_output', call_id: 'c1', output: 'done'},
        ],
        tools: [{type: 'custom', name: 'apply_patch', format: {type: 'grammar'}}, {type: 'local_shell'}],
        tool_choice: {type: 'function', name: 'apply_patch'},
        max_output_tokens: 100,
        reasoning: {effort: 'high', summary: 'auto'},
        text: {format: {type: 'json_schema', name: 'x', schema: {type: 'object'}, strict: true}},
        prompt_cache_key: 'k',
        previous_response_id: 'resp_0',
        stream: true,
      },
      {},
    )
    expect(r.system).toEqual([
      {type: 'text', text: 'I'},
      {type: 'text', text: 'D'},
    ])
    expect(r.messages[0].parts).toEqual([{type: 'image', mediaType: 'image/png', data: 'AAA'}])
    expect(r.messages[1].parts).toEqual([
      {
        type: 'reasoning',
        text: 'a',
        encrypted: {family: 'responses', value: '{"id":"rs_1","encrypted_content":"OWN"}'},
      },
      {type: 'reasoning', text: '', signature: {family: 'messages', value: 'SIG', wrapped: true}},
      {type: 'tool_call', id: 'c1', name: 'apply_patch', arguments: '{"input":"P"}'},
    ])
    expect(r.messages[2].parts).toEqual([
      {type: 'tool_result', callId: 'c1', name: 'apply_patch', content: [{type: 'text', text: 'done'}]},
    ])
    expect(r.tools[0]).toMatchObject({name: 'apply_patch', custom: {format: {type: 'grammar'}}})
    expect(r.builtinTools).toEqual([{family: 'responses', raw: {type: 'local_shell'}}])
    expect(r).toMatchObject({
      toolChoice: {type: 'tool', name: 'apply_patch'},
      maxTokens: 100,
      reasoning: {effort: 'high', include: true},
      responseFormat: {type: 'json_schema', name: 'x', schema: {type: 'object'}, strict: true},
      cacheKey: 'k',
      previousResponseId: 'resp_0',
      stream: true,
    })
  })

  it('round trips to a Responses upstream: own reasoning restored, foreign dropped, custom calls restored', () => {
    const body = {
      model: 'm',
      input: [
        {type: 'message', role: 'user', content: [{type: 'input_text', text: 'hi'}]},
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [{type: 'summary_text', text: 'a'}],
          encrypted_content: 'OWN',
        },
        {type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: 'gwx1.gemini.G'},
        {type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: 'P'},
        {type: 'custom_tool_call_output', call_id: 'c1', output: 'done'},
      ],
      tools: [{type: 'custom', name: 'apply_patch', format: {type: 'grammar'}}],
      reasoning: {effort: 'low'},
      // (Codex's: nothing kept server-side, so neither upstream)
      store: false,
      stream: false,
    }
    const up = responsesCodec.encodeRequest(responsesCodec.decodeRequest(body, {}), 'm2')
    expect(up.input).toEqual([
      {type: 'message', role: 'user', content: [{type: 'input_text', text: 'hi'}]},
      {type: 'reasoning', id: 'rs_1', summary: [{type: 'summary_text', text: 'a'}], encrypted_content: 'OWN'},
      {type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: 'P'},
      {type: 'custom_tool_call_output', call_id: 'c1', output: 'done'},
    ])
    expect(up).toMatchObject({
      model: 'm2',
      tools: [{type: 'custom', name: 'apply_patch', format: {type: 'grammar'}}],
      reasoning: {effort: 'low'},
      store: false,
      include: ['reasoning.encrypted_content'],
      stream: false,
    })
  })
})

describe("responses: a namespace's tools (Codex 0.171's multi_agent_v1)", () => {
  // Codex 0.171.0's namespace, as it sends it (two of its five tools), and its history of a call
  // of one of them: the call carries `namespace`, which Codex needs to run it
  const params = (prop: string) => ({
    type: 'object',
    properties: {[prop]: {type: 'string'}},
    required: [prop],
    additionalProperties: false,
  })
  const body = {
    model: 'gpt-x',
    input: [
      {type: 'message', role: 'user', content: [{type: 'input_text', text: 'close agent a1'}]},
      {
        type: 'function_call',
        id: 'fc_1',
        name: 'close_agent',
        namespace: 'multi_agent_v1',
        arguments: '{"target":"a1"}',
        call_id: 'call_1',
        status: 'completed',
      },
      {type: 'function_call_output', call_id: 'call_1', output: 'closed'},
    ],
    tools: [
      {type: 'function', name: 'exec_command', parameters: params('cmd'), strict: false},
      {
        type: 'namespace',
        name: 'multi_agent_v1',
        description: 'Tools for spawning and managing sub-agents.',
        tools: [
          {
            type: 'function',
            name: 'close_agent',
            description: 'Close an agent.',
            strict: false,
            parameters: params('target'),
          },
          {
            type: 'function',
            name: 'spawn_agent',
            description: 'Spawn an agent.',
            parameters: params('message'),
          },
          {type: 'custom', name: 'note', description: 'A free-form note.'},
        ],
      },
      {type: 'web_search', external_web_access: false},
    ],
  }

  it('reads each tool of the namespace as a function of its own, and the history calls by the same names', () => {
    const r = responsesCodec.decodeRequest(body, {})
    expect(r.tools.map((t) => [t.name, t.namespace])).toEqual([
      ['exec_command', undefined],
      ['multi_agent_v1__close_agent', {name: 'multi_agent_v1', tool: 'close_agent'}],
      ['multi_agent_v1__spawn_agent', {name: 'multi_agent_v1', tool: 'spawn_agent'}],
      ['multi_agent_v1__note', {name: 'multi_agent_v1', tool: 'note'}],
    ])
    expect(r.tools[1]).toMatchObject({description: 'Close an agent.', parameters: params('target')})
    expect(r.tools[3].custom).toEqual({format: undefined})
    expect(r.builtinTools).toEqual([
      {family: 'responses', raw: {type: 'web_search', external_web_access: false}},
    ])
    expect(r.messages[1].parts[0]).toMatchObject({
      type: 'tool_call',
      id: 'call_1',
      name: 'multi_agent_v1__close_agent',
    })
    expect(r.messages[2].parts[0]).toMatchObject({
      type: 'tool_result',
      callId: 'call_1',
      name: 'multi_agent_v1__close_agent',
    })
    // to a chat upstream: functions the model can call, and the history's call by that name
    const chat = chatCodec.encodeRequest(r, 'up', {}) as {
      tools: Array<{function: {name: string}}>
      messages: Array<{tool_calls?: Array<{function: {name: string}}>}>
    }
    expect(chat.tools.map((t) => t.function.name)).toEqual([
      'exec_command',
      'multi_agent_v1__close_agent',
      'multi_agent_v1__spawn_agent',
      'multi_agent_v1__note',
    ])
    expect(chat.messages.find((m) => m.tool_calls)?.tool_calls?.[0].function.name).toBe(
      'multi_agent_v1__close_agent',
    )
  })

  it('forces a tool of a namespace by the name it has elsewhere', () => {
    const r = responsesCodec.decodeRequest(
      {...body, tool_choice: {type: 'function', name: 'close_agent', namespace: 'multi_agent_v1'}},
      {},
    )
    expect(r.toolChoice).toEqual({type: 'tool', name: 'multi_agent_v1__close_agent'})
    const chat = chatCodec.encodeRequest(r, 'up', {}) as {tool_choice: unknown}
    expect(chat.tool_choice).toEqual({type: 'function', function: {name: 'multi_agent_v1__close_agent'}})
  })

  it("answers a call of one under the tool's own name with its namespace, as Codex records it", () => {
    const request = responsesCodec.decodeRequest(body, {})
    const answer = responsesCodec.encodeResponse(
      {
        id: 'r1',
        model: 'up',
        parts: [
          {
            type: 'tool_call',
            id: 'call_2',
            name: 'multi_agent_v1__spawn_agent',
            arguments: '{"message":"go"}',
          },
          {type: 'tool_call', id: 'call_3', name: 'multi_agent_v1__note', arguments: '{"input":"n"}'},
          {type: 'tool_call', id: 'call_4', name: 'exec_command', arguments: '{"cmd":"ls"}'},
        ],
        stop: 'tool_use',
        usage: emptyUsage(),
      },
      {request, newId: (p) => `${p}_1`},
    ) as {output: Array<Record<string, unknown>>}
    expect(answer.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        call_id: 'call_2',
        name: 'spawn_agent',
        namespace: 'multi_agent_v1',
        arguments: '{"message":"go"}',
      }),
      expect.objectContaining({
        type: 'custom_tool_call',
        call_id: 'call_3',
        name: 'note',
        namespace: 'multi_agent_v1',
        input: 'n',
      }),
      expect.objectContaining({type: 'function_call', call_id: 'call_4', name: 'exec_command'}),
    ])
    expect(answer.output[2].namespace).toBeUndefined()
    // streamed: the added and the done item alike
    const enc = responsesCodec.streamEncoder({request, newId: (p) => `${p}_1`})
    const text = [
      {type: 'start', id: 'x', model: 'up'},
      {
        type: 'block_start',
        index: 0,
        block: {type: 'tool_call', id: 'call_2', name: 'multi_agent_v1__spawn_agent'},
      },
      {type: 'tool_args_delta', index: 0, json: '{"message":"go"}'},
      {type: 'block_stop', index: 0},
      {type: 'stop', reason: 'tool_use'},
      {type: 'end'},
    ]
      .map((e) => enc.event(e as StreamEvent))
      .join('')
    const items = text
      .split('\n\n')
      .filter(Boolean)
      .map((block) => JSON.parse(block.split('\n')[1].slice('data: '.length)))
      .filter((e) => e.type === 'response.output_item.added' || e.type === 'response.output_item.done')
      .map((e) => e.item)
    expect(items).toEqual([
      expect.objectContaining({name: 'spawn_agent', namespace: 'multi_agent_v1', arguments: ''}),
      expect.objectContaining({
        name: 'spawn_agent',
        namespace: 'multi_agent_v1',
        arguments: '{"message":"go"}',
      }),
    ])
  })
})

describe('responses decodeResponse', () => {
  it('reads items, usage and an incomplete status', () => {
    const r = responsesCodec.decodeResponse({
      id: 'resp_1',
      model: 'm',
      status: 'incomplete',
      incomplete_details: {reason: 'max_output_tokens'},
      output: [
        {type: 'reasoning', id: 'rs_1', summary: [{type: 'summary_text', text: 's'}], encrypted_content: 'E'},
        {type: 'message', content: [{type: 'output_text', text: 'Hi'}]},
      ],
      usage: {
        input_tokens: 10,
        input_tokens_details: {cached_tokens: 4},
        output_tokens: 5,
        output_tokens_details: {reasoning_tokens: 2},
      },
    })
    expect(r.stop).toBe('max_tokens')
    expect(r.parts[0]).toEqual({
      type: 'reasoning',
      text: 's',
      encrypted: {family: 'responses', value: '{"id":"rs_1","encrypted_content":"E"}'},
    })
    expect(r.usage).toEqual({
      inputTokens: 10,
      outputTokens: 5,
      cacheReadTokens: 4,
      cacheCreationTokens: 0,
      reasoningTokens: 2,
    })
  })
})

describe('responses stream decoder', () => {
  const created = {type: 'response.created', response: {id: 'resp_1', model: 'm'}}
  const completed = {
    type: 'response.completed',
    response: {status: 'completed', usage: {input_tokens: 3, output_tokens: 1}},
  }

  it('uses done arguments when no delta came, and empty arguments stay empty until the IR default', () => {
    const events = run([
      created,
      {
        type: 'response.output_item.added',
        output_index: 0,
        item: {type: 'function_call', call_id: 'c1', name: 'f'},
      },
      {type: 'response.function_call_arguments.done', output_index: 0, arguments: '{"a":1}'},
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: {type: 'function_call', call_id: 'c1', name: 'f', arguments: '{"a":1}'},
      },
      completed,
    ])
    expect(events.filter((e) => e.type === 'tool_args_delta')).toEqual([
      {type: 'tool_args_delta', index: 0, json: '{"a":1}'},
    ])
    expect(events.slice(-3)).toEqual([
      {type: 'stop', reason: 'tool_use'},
      {type: 'usage', usage: {inputTokens: 3, outputTokens: 1, cacheReadTokens: 0, reasoningTokens: 0}},
      {type: 'end'},
    ])
  })

  it('streams a custom tool call input as the {"input": …} arguments', () => {
    const events = run([
      created,
      {
        type: 'response.output_item.added',
        output_index: 0,
        item: {type: 'custom_tool_call', call_id: 'c', name: 'apply_patch'},
      },
      {type: 'response.custom_tool_call_input.delta', output_index: 0, delta: 'a"b\n'},
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: {type: 'custom_tool_call', call_id: 'c', name: 'apply_patch', input: 'a"b\n'},
      },
      completed,
    ])
    const json = events.flatMap((e) => (e.type === 'tool_args_delta' ? [e.json] : [])).join('')
    expect(JSON.parse(json)).toEqual({input: 'a"b\n'})
  })

  it('text, reasoning with encrypted content, in order', () => {
    const events = run([
      created,
      {type: 'response.output_item.added', output_index: 0, item: {type: 'reasoning', id: 'rs_1'}},
      {type: 'response.reasoning_summary_text.delta', output_index: 0, summary_index: 0, delta: 'x'},
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: {type: 'reasoning', id: 'rs_1', encrypted_content: 'E'},
      },
      {type: 'response.output_item.added', output_index: 1, item: {type: 'message'}},
      {type: 'response.content_part.added', output_index: 1, content_index: 0, part: {type: 'output_text'}},
      {type: 'response.output_text.delta', output_index: 1, content_index: 0, delta: 'Hi'},
      {type: 'response.content_part.done', output_index: 1, content_index: 0},
      {
        type: 'response.output_item.done',
        output_index: 1,
        item: {type: 'message', content: [{type: 'output_text', text: 'Hi'}]},
      },
      completed,
    ])
    expect(events.slice(1, 8)).toEqual([
      {type: 'block_start', index: 0, block: {type: 'reasoning'}},
      {type: 'reasoning_delta', index: 0, text: 'x'},
      {
        type: 'reasoning_opaque',
        index: 0,
        encrypted: {family: 'responses', value: '{"id":"rs_1","encrypted_content":"E"}'},
      },
      {type: 'block_stop', index: 0},
      {type: 'block_start', index: 1, block: {type: 'text'}},
      {type: 'text_delta', index: 1, text: 'Hi'},
      {type: 'block_stop', index: 1},
    ])
  })

  it('a stream without response.completed is an error, and so are response.failed and error', () => {
    expect(run([created]).at(-1)).toEqual({
      type: 'error',
      status: 502,
      message: 'upstream stream ended before response.completed',
    })
    expect(
      run([
        created,
        {type: 'response.failed', response: {error: {code: 'rate_limit_exceeded', message: 'slow'}}},
      ]).at(-1),
    ).toEqual({type: 'error', status: 429, message: 'slow', code: 'rate_limit_exceeded'})
    expect(
      run([created, {type: 'error', code: 'server_error', message: 'boom'}], false).at(-1),
    ).toMatchObject({
      type: 'error',
      message: 'boom',
    })
  })
})

describe("responses encodeRequest: an end user's id", () => {
  // Claude Code 2.1.x's metadata.user_id: a JSON object of its ids, about 150 characters
  const claudeCode = JSON.stringify({
    device_id: 'd'.repeat(64),
    account_uuid: '',
    session_id: '0c4b1f7e-2a8d-4f51-9a53-7d0e6f3b9c21',
  })
  const upstream = (user: string) => {
    const r = messagesCodec.decodeRequest(
      {
        model: 'claude-sonnet-4-5',
        max_tokens: 9,
        messages: [{role: 'user', content: 'hi'}],
        metadata: {user_id: user},
      },
      {},
    )
    return {responses: responsesCodec.encodeRequest(r, 'gpt-5'), chat: chatCodec.encodeRequest(r, 'gpt-5')}
  }

  it('leaves out one over 64 characters, which OpenAI refuses ("Invalid \'user\': string too long"), as to chat', () => {
    expect(claudeCode.length).toBeGreaterThan(64)
    const {responses, chat} = upstream(claudeCode)
    expect(responses).not.toHaveProperty('user')
    expect(chat).not.toHaveProperty('user')
  })

  it('keeps one of 64 characters or fewer', () => {
    const {responses, chat} = upstream('u'.repeat(64))
    expect(responses.user).toBe('u'.repeat(64))
    expect(chat.user).toBe('u'.repeat(64))
  })
})
