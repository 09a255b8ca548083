/**
 * A Responses client's `item_reference` to an item of an answer gwctl translated for it (the AI
 * SDK's default `store: true`): the parts it stood for, in its place; an id not held refused.
 */
import {describe, expect, it} from 'vitest'

import {BoundedCarry, BoundedItems} from './carry.js'
import {ItemReferenceError} from './responses.js'
import {decodeClientRequest, encodeUpstreamRequest, StreamTranslator, translateResponse} from './translate.js'

/** An answer of Claude's: thinking with its signature, text, a call. */
const CLAUDE_ANSWER = {
  id: 'msg_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    {type: 'thinking', thinking: 'The user wants the files.', signature: 'sig-abc'},
    {type: 'text', text: 'Listing them.'},
    {type: 'tool_use', id: 'toolu_1', name: 'ls', input: {path: '.'}},
  ],
  stop_reason: 'tool_use',
  usage: {input_tokens: 10, output_tokens: 5},
}
const TOOLS = [
  {type: 'function', name: 'ls', parameters: {type: 'object', properties: {path: {type: 'string'}}}},
]
const user = (text: string) => ({role: 'user', content: [{type: 'input_text', text}]})

/** Turn 1 through `carry`: the ids of the items of the answer the client got. */
function firstTurn(carry: BoundedCarry, store?: boolean): string[] {
  const body = {
    model: 'gpt-5.5',
    input: [user('list files')],
    tools: TOOLS,
    ...(store === false ? {store} : {}),
  }
  const client = decodeClientRequest('responses', body, {carry})
  const {body: answer} = translateResponse('messages', client, structuredClone(CLAUDE_ANSWER), {carry})
  return (answer.output as Array<{id: string}>).map((item) => item.id)
}

describe('item_reference', () => {
  it("puts back an answer's items, the thinking's signature with them, so the turn goes back to Claude whole", () => {
    const carry = new BoundedCarry()
    const [rs, msg, fc] = firstTurn(carry)
    expect([rs, msg, fc].map((id) => id.slice(0, 3))).toEqual(['rs_', 'msg', 'fc_'])
    const next = {
      model: 'gpt-5.5',
      tools: TOOLS,
      // (the reference's `type` is optional in OpenAI's API)
      input: [
        user('list files'),
        {type: 'item_reference', id: rs},
        {id: msg},
        {type: 'item_reference', id: fc},
        {type: 'function_call_output', call_id: 'toolu_1', output: 'a.txt'},
      ],
    }
    const client = decodeClientRequest('responses', next, {carry})
    const {body} = encodeUpstreamRequest(client, 'messages', 'claude-sonnet-4-5')
    const sent = JSON.parse(body.toString()) as {messages: Array<{role: string; content: unknown}>}
    expect(sent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(sent.messages[1].content).toEqual([
      {type: 'thinking', thinking: 'The user wants the files.', signature: 'sig-abc'},
      {type: 'text', text: 'Listing them.'},
      {type: 'tool_use', id: 'toolu_1', name: 'ls', input: {path: '.'}},
    ])
    expect(sent.messages[2].content).toMatchObject([{type: 'tool_result', tool_use_id: 'toolu_1'}])
  })

  it('refuses an id it does not hold, and keeps nothing of an answer to a request with `store: false`', () => {
    const carry = new BoundedCarry()
    const [, msg] = firstTurn(carry, false)
    const refer = (id: string) => () =>
      decodeClientRequest(
        'responses',
        {model: 'm', input: [user('a'), {type: 'item_reference', id}, user('b')]},
        {carry},
      )
    expect(refer(msg)).toThrow(`an item_reference names item "${msg}", which this gateway does not hold`)
    // (its own class: proxy.ts answers it on a route that would pass the body through as it came)
    expect(refer(msg)).toThrow(ItemReferenceError)
    expect(refer('msg_x')).toThrow("send the conversation's items in full: `store: false`")
  })

  it('tells a body with `store: false` to send the item itself, not to set what it has', () => {
    const refer = () =>
      decodeClientRequest(
        'responses',
        {model: 'm', store: false, input: [user('a'), {type: 'item_reference', id: 'msg_x'}]},
        {carry: new BoundedCarry()},
      )
    expect(refer).toThrow(
      'an item_reference names item "msg_x", which this gateway does not hold (it keeps the items of its own recent answers in memory: not those from before a restart, long ago or of another server), and this route\'s upstream cannot look it up; send the item itself, not a reference (with `store: false` no server keeps it)',
    )
  })

  it("keeps a conversation's items it reads again over those it does not", () => {
    const items = new BoundedItems(2)
    items.set('msg_a', [{type: 'text', text: 'A'}], 1)
    items.set('msg_b', [{type: 'text', text: 'B'}], 1)
    // (the earliest answer, referenced on every turn)
    items.get('msg_a')
    items.set('msg_c', [{type: 'text', text: 'C'}], 1)
    expect([items.get('msg_a'), items.get('msg_b')]).toEqual([[{type: 'text', text: 'A'}], undefined])
  })

  it('puts back a message referenced once per text part, as the AI SDK sends it, once (review73 P1)', () => {
    const carry = new BoundedCarry()
    const client = decodeClientRequest('responses', {model: 'gpt-5.5', input: [user('hi')]}, {carry})
    const claude = {
      ...CLAUDE_ANSWER,
      content: [
        {type: 'text', text: 'First block.'},
        {type: 'text', text: 'Second block.'},
      ],
      stop_reason: 'end_turn',
    }
    const {body} = translateResponse('messages', client, claude, {carry})
    const [message] = body.output as Array<{id: string; content: unknown[]}>
    expect(message.content).toHaveLength(2)
    // the AI SDK's doGenerate makes a text part of each output_text, each with the message's id,
    // and its convertToOpenAIResponsesInput sends a reference for each
    const refs = message.content.map(() => ({type: 'item_reference', id: message.id}))
    const next = decodeClientRequest(
      'responses',
      {model: 'gpt-5.5', input: [user('hi'), ...refs, user('and?')]},
      {carry},
    )
    const sent = JSON.parse(encodeUpstreamRequest(next, 'messages', 'claude-sonnet-4-5').body.toString()) as {
      messages: Array<{role: string; content: Array<{text?: string}>}>
    }
    expect(sent.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(sent.messages[1].content.map((c) => c.text)).toEqual(['First block.', 'Second block.'])
  })
})

/**
 * A custom tool's call a chat model wrote as raw text (a patch), referenced on the next turn: it
 * goes back as the item sent in full does, `{"input": PATCH}`, not as the raw text (review73 P2).
 */
describe('item_reference to a custom tool call', () => {
  const TOOLS = [{type: 'custom', name: 'apply_patch', description: 'patch'}]
  const PATCH = '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch'
  const OUTPUT = {type: 'custom_tool_call_output', call_id: 'call_1', output: 'Done'}
  const turn1 = (carry: BoundedCarry, stream: boolean) =>
    decodeClientRequest('responses', {model: 'm', input: [user('patch it')], tools: TOOLS, stream}, {carry})
  const turn2 = (carry: BoundedCarry, item: unknown) =>
    decodeClientRequest(
      'responses',
      {model: 'm', input: [user('patch it'), item, OUTPUT], tools: TOOLS},
      {carry},
    )
  /** The call's input in the Messages body of a turn 2. */
  const toClaude = (request: ReturnType<typeof turn2>) =>
    (
      JSON.parse(encodeUpstreamRequest(request, 'messages', 'claude-sonnet-4-5').body.toString()) as {
        messages: Array<{content: Array<{type: string; input?: unknown}>}>
      }
    ).messages[1].content.find((b) => b.type === 'tool_use')!.input
  /** The call's arguments in the chat body of a turn 2. */
  const toChat = (request: ReturnType<typeof turn2>) =>
    (
      JSON.parse(encodeUpstreamRequest(request, 'chat', 'deepseek-chat').body.toString()) as {
        messages: Array<{tool_calls?: Array<{function: {arguments: string}}>}>
      }
    ).messages[1].tool_calls![0].function.arguments

  it('an answer in JSON', () => {
    const carry = new BoundedCarry()
    const chat = {
      id: 'c1',
      object: 'chat.completion',
      model: 'deepseek-chat',
      choices: [
        {
          index: 0,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{id: 'call_1', type: 'function', function: {name: 'apply_patch', arguments: PATCH}}],
          },
        },
      ],
      usage: {prompt_tokens: 5, completion_tokens: 5},
    }
    const {body} = translateResponse('chat', turn1(carry, false), chat, {carry})
    const [call] = body.output as Array<Record<string, string>>
    expect([call.type, call.input]).toEqual(['custom_tool_call', PATCH])
    // the item in full (store: false) and by reference: the same bytes upstream
    expect(toClaude(turn2(carry, {...call}))).toEqual({input: PATCH})
    expect(toClaude(turn2(carry, {type: 'item_reference', id: call.id}))).toEqual({input: PATCH})
    expect(toChat(turn2(carry, {type: 'item_reference', id: call.id}))).toBe(JSON.stringify({input: PATCH}))
  })

  it('an answer streamed', () => {
    const carry = new BoundedCarry()
    const t = new StreamTranslator('chat', turn1(carry, true), {carry})
    const chunk = (delta: unknown, finish: string | null = null) =>
      `data: ${JSON.stringify({id: 'c1', object: 'chat.completion.chunk', model: 'deepseek-chat', choices: [{index: 0, delta, finish_reason: finish}]})}\n\n`
    const sse =
      chunk({role: 'assistant', content: ''}) +
      chunk({
        tool_calls: [
          {index: 0, id: 'call_1', type: 'function', function: {name: 'apply_patch', arguments: PATCH}},
        ],
      }) +
      chunk({}, 'tool_calls') +
      'data: [DONE]\n\n'
    const events = (t.push(Buffer.from(sse)) + t.end())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)) as {type: string; item?: Record<string, string>})
    const call = events.find((e) => e.type === 'response.output_item.done')!.item!
    expect([call.type, call.input]).toEqual(['custom_tool_call', PATCH])
    expect(toClaude(turn2(carry, {type: 'item_reference', id: call.id}))).toEqual({input: PATCH})
  })
})

describe('held reasoning marked with the Responses server that made it (ctx.server)', () => {
  const ITEM = {
    type: 'reasoning',
    summary: [{type: 'summary_text', text: 'thought'}],
    encrypted_content: 'CIPHER',
  }
  const MESSAGE = {
    type: 'message',
    id: 'msg_1',
    role: 'assistant',
    content: [{type: 'output_text', text: 'Hi.', annotations: []}],
  }
  const ANSWER = {id: 'resp_1', object: 'response', status: 'completed', model: 'm', output: [ITEM, MESSAGE]}
  const events = [
    {type: 'response.created', response: {...ANSWER, status: 'in_progress', output: []}},
    {type: 'response.output_item.added', output_index: 0, item: {...ITEM, encrypted_content: undefined}},
    {type: 'response.output_item.done', output_index: 0, item: ITEM},
    {type: 'response.output_item.added', output_index: 1, item: {...MESSAGE, content: []}},
    {type: 'response.output_text.delta', output_index: 1, content_index: 0, delta: 'Hi.'},
    {type: 'response.output_item.done', output_index: 1, item: MESSAGE},
    {type: 'response.completed', response: ANSWER},
  ]
  const sse = events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('')

  it('JSON and stream alike: the held reasoning item names its server; its text does not', () => {
    for (const stream of [false, true]) {
      const carry = new BoundedCarry()
      const body = {model: 'm', input: [user('hi')], stream}
      const client = decodeClientRequest('responses', body, {carry})
      const ctx = {carry, server: 'openai https://api.openai.com/v1'}
      let out: string
      if (stream) {
        const translator = new StreamTranslator('responses', client, ctx)
        out = translator.push(Buffer.from(sse)) + translator.end()
      } else out = JSON.stringify(translateResponse('responses', client, structuredClone(ANSWER), ctx).body)
      const ids = [...out.matchAll(/"id":"((?:rs|msg)_gw[0-9a-f]{32})"/g)].map((m) => m[1])
      const rs = ids.find((id) => id.startsWith('rs_'))!
      const msg = ids.find((id) => id.startsWith('msg_'))!
      expect(carry.items!.get(rs)).toMatchObject([
        {type: 'reasoning', text: 'thought', server: 'openai https://api.openai.com/v1'},
      ])
      expect(carry.items!.get(msg)).toEqual([{type: 'text', text: 'Hi.'}])
    }
  })
})
