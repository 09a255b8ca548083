/**
 * A Responses client's `item_reference` to an item of an answer gwctl translated for it (the AI
 * SDK's default `store: true`): the parts it stood for, in its place; an id not held refused.
 */
import {describe, expect, it} from 'vitest'

import {BoundedCarry, BoundedItems} from './carry.js'
import {decodeClientRequest, encodeUpstreamRequest, translateResponse} from './translate.js'

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
    expect(refer('msg_x')).toThrow("send the conversation's items in full: `store: false`")
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
})
