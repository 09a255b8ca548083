import {describe, expect, it} from 'vitest'

import {BoundedCarry} from './carry.js'
import {unwrapOpaque, wrapOpaque} from './ir.js'

describe('BoundedCarry', () => {
  it('keeps what was set and forgets the oldest past its bounds', () => {
    const carry = new BoundedCarry(2)
    carry.set('a', [{type: 'text', text: 'A'}])
    carry.set('b', [{type: 'text', text: 'B'}])
    carry.set('c', [{type: 'text', text: 'C'}])
    expect(carry.get('a')).toBeUndefined()
    expect(carry.get('b')).toEqual([{type: 'text', text: 'B'}])
    expect(carry.size).toBe(2)
  })

  it('forgets by size too', () => {
    const carry = new BoundedCarry(100, 200)
    carry.set('a', [{type: 'text', text: 'x'.repeat(100)}])
    carry.set('b', [{type: 'text', text: 'y'.repeat(100)}])
    expect(carry.get('a')).toBeUndefined()
    expect(carry.get('b')).toBeDefined()
  })
})

describe('opaque wrapping', () => {
  it('gives a client its own vendor value as is and wraps a foreign one', () => {
    expect(wrapOpaque('messages', {family: 'messages', value: 'sig'})).toBe('sig')
    const wrapped = wrapOpaque('messages', {family: 'gemini', value: 'abc.def'})
    expect(wrapped).toBe('gwx1.gemini.abc.def')
    expect(unwrapOpaque('messages', wrapped)).toEqual({family: 'gemini', value: 'abc.def', wrapped: true})
    expect(unwrapOpaque('messages', 'sig')).toEqual({family: 'messages', value: 'sig'})
    expect(unwrapOpaque('chat', 'gwx1.nope.x')).toEqual({family: 'chat', value: 'gwx1.nope.x'})
    expect(unwrapOpaque('messages', 'gwx1.chat.')).toEqual({family: 'chat', value: '', wrapped: true})
  })
})

describe("Gemini CLI's router relabels its calls", () => {
  it('finds what was carried for `call_e` on the call it names `update_topic__call_e`', async () => {
    const {decodeClientRequest, encodeUpstreamRequest} = await import('./translate.js')
    const carry = new BoundedCarry()
    carry.set('call_e', [
      {type: 'reasoning', text: 'I should name the topic.', signature: {family: 'chat', value: ''}},
    ])
    const history = (id: string) => ({
      contents: [
        {role: 'user', parts: [{text: 'Fix the build.'}]},
        {role: 'model', parts: [{functionCall: {id, name: 'update_topic', args: {topic: 'build'}}}]},
        {role: 'user', parts: [{functionResponse: {id, name: 'update_topic', response: {output: 'ok'}}}]},
        {role: 'user', parts: [{text: 'go on'}]},
      ],
    })
    const assistant = (id: string) =>
      JSON.parse(
        encodeUpstreamRequest(
          decodeClientRequest('gemini', history(id), {carry}),
          'chat',
          'deepseek-v4-flash',
        ).body.toString(),
      ).messages.find((m: {role: string}) => m.role === 'assistant')
    // the main call's id, and the router's relabelled one: the reasoning goes back on both
    for (const id of ['call_e', 'update_topic__call_e']) {
      const turn = assistant(id)
      expect(turn.reasoning_content, id).toBe('I should name the topic.')
      expect(turn.tool_calls[0].id).toBe(id)
    }
    // another tool's prefix, or none carried: nothing found
    expect(assistant('other_tool__call_e').reasoning_content).toBeUndefined()
  })
})
