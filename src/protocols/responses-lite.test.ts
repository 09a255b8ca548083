import {describe, expect, it} from 'vitest'

import {chatCodec} from './chat.js'
import {geminiCodec} from './gemini.js'
import {emptyUsage} from './ir.js'
import {messagesCodec} from './messages.js'
import {responsesCodec} from './responses.js'
import {codexLiteTools, liteParams} from '../../test/helpers/codex.js'

// Codex 0.171.0 on a model of its catalog marked `use_responses_lite` (gpt-6.2-sol), as captured
// (descriptions and schemas cut): no `tools`, its tools in the first input item
const lite = {
  model: 'gpt-6.2-sol',
  stream: true,
  input: [
    codexLiteTools('at_01a2209d'),
    {type: 'message', role: 'developer', content: [{type: 'input_text', text: 'You are Codex.'}]},
    {type: 'message', role: 'user', content: [{type: 'input_text', text: 'use a tool'}]},
  ],
  tool_choice: 'auto',
  parallel_tool_calls: false,
  reasoning: {effort: 'low', context: 'all_turns'},
  include: ['reasoning.encrypted_content'],
  store: false,
}
const NAMES = ['functions__exec', 'functions__wait', 'clock__sleep']

describe("responses: Codex's Responses Lite tools (an additional_tools input item)", () => {
  it("reads the item's tools as `tools` are read, in their order, and the item is no message", () => {
    const r = responsesCodec.decodeRequest(lite, {})
    expect(r.tools.map((t) => [t.name, t.namespace])).toEqual([
      ['functions__exec', {name: 'functions', tool: 'exec'}],
      ['functions__wait', {name: 'functions', tool: 'wait'}],
      ['clock__sleep', {name: 'clock', tool: 'sleep'}],
    ])
    expect(r.tools[0].custom).toEqual({format: codexLiteTools().tools[0].tools[0].format})
    expect(r.tools[1].parameters).toEqual(liteParams('cell'))
    expect(r.system.map((p) => p.text)).toEqual(['You are Codex.'])
    expect(r.messages).toEqual([{role: 'user', parts: [{type: 'text', text: 'use a tool'}]}])
  })

  it('takes `tools` first and the item after when a body has both', () => {
    const r = responsesCodec.decodeRequest(
      {...lite, tools: [{type: 'function', name: 'exec_command', parameters: liteParams('cmd')}]},
      {},
    )
    expect(r.tools.map((t) => t.name)).toEqual(['exec_command', ...NAMES])
  })

  it('reach a chat, a Messages and a Gemini upstream as their functions', () => {
    const r = responsesCodec.decodeRequest(lite, {})
    const chat = chatCodec.encodeRequest(r, 'up', {}) as {tools: Array<{function: Record<string, unknown>}>}
    expect(chat.tools.map((t) => t.function.name)).toEqual(NAMES)
    expect(chat.tools[0].function.parameters).toMatchObject({properties: {input: {type: 'string'}}})
    const messages = messagesCodec.encodeRequest(r, 'claude', {}) as {tools: Array<{name: string}>}
    expect(messages.tools.map((t) => t.name)).toEqual(NAMES)
    const gemini = geminiCodec.encodeRequest(r, 'gemini', {}) as {
      tools: Array<{functionDeclarations?: Array<{name: string}>}>
    }
    expect(gemini.tools.flatMap((t) => t.functionDeclarations ?? []).map((d) => d.name)).toEqual(NAMES)
  })

  it('answers a call of exec as Codex runs it: a custom_tool_call of the functions namespace', () => {
    const request = responsesCodec.decodeRequest(lite, {})
    const answer = responsesCodec.encodeResponse(
      {
        id: 'r1',
        model: 'up',
        parts: [
          {type: 'tool_call', id: 'call_1', name: 'functions__exec', arguments: '{"input":"text(1)"}'},
          {type: 'tool_call', id: 'call_2', name: 'clock__sleep', arguments: '{"ms":"1"}'},
        ],
        stop: 'tool_use',
        usage: emptyUsage(),
      },
      {request, newId: (p) => `${p}_1`},
    ) as {output: Array<Record<string, unknown>>}
    expect(answer.output).toEqual([
      expect.objectContaining({
        type: 'custom_tool_call',
        call_id: 'call_1',
        name: 'exec',
        namespace: 'functions',
        input: 'text(1)',
      }),
      expect.objectContaining({
        type: 'function_call',
        call_id: 'call_2',
        name: 'sleep',
        namespace: 'clock',
        arguments: '{"ms":"1"}',
      }),
    ])
    // the next turn's history: Codex's call and its output go to chat under the upstream's name
    const turn2 = responsesCodec.decodeRequest(
      {
        ...lite,
        input: [
          ...lite.input,
          {
            type: 'custom_tool_call',
            call_id: 'call_1',
            name: 'exec',
            namespace: 'functions',
            input: 'text(1)',
          },
          {type: 'custom_tool_call_output', call_id: 'call_1', output: '1'},
        ],
      },
      {},
    )
    const chat = chatCodec.encodeRequest(turn2, 'up', {}) as {
      tools: unknown[]
      messages: Array<{role: string; tool_calls?: Array<{function: {name: string; arguments: string}}>}>
    }
    expect(chat.tools).toHaveLength(3)
    expect(chat.messages.find((m) => m.tool_calls)?.tool_calls?.[0].function).toEqual({
      name: 'functions__exec',
      arguments: '{"input":"text(1)"}',
    })
    expect(chat.messages.at(-1)).toMatchObject({role: 'tool', content: '1'})
  })
})
