/**
 * The Responses sim's calls of tools other than top-level functions: a function of a `namespace`
 * tool, a `custom` tool (top level or in a namespace), the tools of Codex's `additional_tools` input
 * item, and the second turn after a `custom_tool_call_output`.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../server.js'
import {startSim} from '../server.js'
import {responsesAnswer} from './responses.js'
import {selectQuirks} from './quirks.js'

let sim: Simulator

beforeAll(async () => {
  sim = await startSim()
})
afterAll(async () => {
  await sim.close()
})

type Json = Record<string, any>

async function post(body: Json, headers: Record<string, string> = {}) {
  const response = await fetch(sim.origin + '/v1/responses', {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer sk-test', ...headers},
    body: JSON.stringify(body),
  })
  const text = await response.text()
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
    return {status: response.status, json: JSON.parse(text) as Json, events: [] as Json[]}
  const events = text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? '{}') as Json)
  return {status: response.status, json: events.at(-1)?.response as Json, events}
}

const user = (text: string) => ({type: 'message', role: 'user', content: [{type: 'input_text', text}]})
const fn = (name: string) => ({type: 'function', name, parameters: {type: 'object', properties: {}}})
const custom = (name: string) => ({type: 'custom', name, description: 'runs it', format: {type: 'text'}})
const namespace = (name: string, tools: Json[]) => ({type: 'namespace', name, description: '', tools})

/** Codex 0.17x's Lite request: no `tools`, its tools in an `additional_tools` input item. */
const liteBody = (text: string): Json => ({
  model: 'gpt-6.2-sol',
  tool_choice: 'auto',
  input: [
    {
      type: 'additional_tools',
      tools: [
        namespace('functions', [custom('exec'), fn('wait')]),
        namespace('collaboration', [fn('spawn_agent')]),
      ],
    },
    user(text),
  ],
})
const LITE = {'x-openai-internal-codex-responses-lite': 'true'}

describe('responses sim: namespaced and custom tools', () => {
  it("calls the custom tool in the Lite request's additional_tools, its input the user's words (JSON)", async () => {
    const {status, json} = await post({...liteBody('use a tool'), stream: false}, LITE)
    expect(status).toBe(200)
    expect(json.output).toEqual([
      {
        type: 'custom_tool_call',
        id: expect.stringMatching(/^ctc_/),
        call_id: expect.stringMatching(/^call_/),
        name: 'exec',
        namespace: 'functions',
        input: 'use a tool',
        status: 'completed',
      },
    ])
  })

  it('streams a custom tool call: added with no input, its input deltas and done, then done', async () => {
    const {status, events, json} = await post({...liteBody('use a tool, please'), stream: true}, LITE)
    expect(status).toBe(200)
    const item = json.output[0]
    const own = events.filter((e) => e.output_index === 0)
    expect(own.map((e) => e.type)).toEqual([
      'response.output_item.added',
      ...own.filter((e) => e.type === 'response.custom_tool_call_input.delta').map(() => expect.anything()),
      'response.custom_tool_call_input.done',
      'response.output_item.done',
    ])
    expect(own[0].item).toEqual({...item, input: '', status: 'in_progress'})
    const deltas = own.filter((e) => e.type === 'response.custom_tool_call_input.delta')
    expect(deltas.length).toBeGreaterThan(0)
    expect(deltas.every((e) => e.item_id === item.id)).toBe(true)
    expect(deltas.map((e) => e.delta).join('')).toBe('use a tool, please')
    expect(own.at(-2)).toMatchObject({item_id: item.id, input: 'use a tool, please'})
    expect(own.at(-1)!.item).toEqual(item)
    expect(item).toMatchObject({type: 'custom_tool_call', name: 'exec', namespace: 'functions'})
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
  })

  it('answers the second turn after a custom_tool_call_output', async () => {
    const body = liteBody('use a tool')
    const call = {
      type: 'custom_tool_call',
      call_id: 'call_1',
      name: 'exec',
      namespace: 'functions',
      input: 'use a tool',
    }
    const output = {type: 'custom_tool_call_output', call_id: 'call_1', output: 'Script ran: 42'}
    const {status, events, json} = await post(
      {...body, input: [...body.input, call, output], stream: true},
      LITE,
    )
    expect(status).toBe(200)
    expect(json.output).toHaveLength(1)
    expect(json.output[0]).toMatchObject({
      type: 'message',
      content: [{type: 'output_text', text: 'The tool answered: Script ran: 42'}],
    })
    expect(events.some((e) => String(e.type).includes('custom_tool_call'))).toBe(false)
  })

  it("calls a namespace's function as a function_call with its namespace", async () => {
    const {json} = await post({
      model: 'gpt-5',
      input: [user('use a tool')],
      tools: [namespace('multi_agent_v1', [fn('spawn_agent'), fn('close_agent')])],
      stream: false,
    })
    expect(json.output).toEqual([
      {
        type: 'function_call',
        id: expect.stringMatching(/^fc_/),
        call_id: expect.stringMatching(/^call_/),
        name: 'spawn_agent',
        namespace: 'multi_agent_v1',
        arguments: '{"query":"use a tool"}',
        status: 'completed',
      },
    ])
  })

  it('streams a namespaced function call with its namespace in the added and done items', async () => {
    const {events} = await post({
      model: 'gpt-5',
      input: [user('use a tool')],
      tools: [namespace('multi_agent_v1', [fn('spawn_agent')])],
      stream: true,
    })
    const added = events.find((e) => e.type === 'response.output_item.added')
    const done = events.find((e) => e.type === 'response.output_item.done')
    expect(added?.item).toMatchObject({
      type: 'function_call',
      name: 'spawn_agent',
      namespace: 'multi_agent_v1',
    })
    expect(done?.item).toMatchObject({namespace: 'multi_agent_v1', arguments: '{"query":"use a tool"}'})
    expect(events.map((e) => e.type)).toContain('response.function_call_arguments.done')
  })

  it('calls a top-level custom tool with no namespace field', async () => {
    const {json} = await post({
      model: 'gpt-5',
      input: [user('use a tool')],
      tools: [custom('apply_patch')],
      stream: false,
    })
    expect(json.output[0]).toMatchObject({type: 'custom_tool_call', name: 'apply_patch', input: 'use a tool'})
    expect(json.output[0]).not.toHaveProperty('namespace')
  })
})

describe('responses sim: which tool it calls', () => {
  const call = (tools: Json[], text = 'use a tool', extra: Json = {}, quirk = '') =>
    responsesAnswer(
      {model: 'gpt-5', input: [user(text)], tools, ...extra},
      selectQuirks({}, `gpt-5${quirk}`).quirks,
    ).tool?.name

  it('keeps calling the first top-level function when functions come after custom tools and namespaces', () => {
    const tools = [
      custom('apply_patch'),
      namespace('multi_agent_v1', [fn('spawn_agent')]),
      fn('shell'),
      fn('read'),
    ]
    expect(call(tools)).toBe('shell')
    expect(call([fn('shell'), fn('read')])).toBe('shell')
  })

  it('calls the first custom or namespaced tool, in order, when no top-level function is offered', () => {
    expect(call([namespace('multi_agent_v1', [fn('spawn_agent')]), custom('apply_patch')])).toBe(
      'multi_agent_v1__spawn_agent',
    )
    expect(call([custom('apply_patch'), namespace('multi_agent_v1', [fn('spawn_agent')])])).toBe(
      'apply_patch',
    )
  })

  it("calls the namespaced tool the user's words name (named-tool), by its own name or namespace__name", () => {
    const tools = [fn('shell'), namespace('multi_agent_v1', [fn('spawn_agent'), fn('close_agent')])]
    expect(call(tools, 'use tool:multi_agent_v1__close_agent', {}, '+named-tool')).toBe(
      'multi_agent_v1__close_agent',
    )
    expect(call(tools, 'use tool:close_agent', {}, '+named-tool')).toBe('multi_agent_v1__close_agent')
  })

  it('calls the tool a tool_choice forces by name, a namespaced function or a custom tool', () => {
    const tools = [fn('shell'), custom('apply_patch'), namespace('multi_agent_v1', [fn('close_agent')])]
    expect(call(tools, 'hello', {tool_choice: {type: 'custom', name: 'apply_patch'}})).toBe('apply_patch')
    expect(
      call(tools, 'hello', {
        tool_choice: {type: 'function', name: 'close_agent', namespace: 'multi_agent_v1'},
      }),
    ).toBe('multi_agent_v1__close_agent')
  })
})
