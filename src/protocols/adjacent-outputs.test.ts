/**
 * A Responses history for a server that pairs calls and outputs by position (DeepSeek's
 * `/v1/responses`): each batch of calls followed directly by its outputs, what stood between
 * them after those, everything else in its order.
 */
import {describe, expect, it} from 'vitest'

import {adjacentOutputs} from './adjacent-outputs.js'

const user = (text: string) => ({type: 'message', role: 'user', content: [{type: 'input_text', text}]})
const developer = (text: string) => ({
  type: 'message',
  role: 'developer',
  content: [{type: 'input_text', text}],
})
const call = (id: string) => ({type: 'function_call', call_id: id, name: 'exec', arguments: '{}'})
const custom = (id: string) => ({type: 'custom_tool_call', call_id: id, name: 'apply_patch', input: 'x'})
const output = (id: string) => ({type: 'function_call_output', call_id: id, output: 'ok'})
const customOutput = (id: string) => ({type: 'custom_tool_call_output', call_id: id, output: 'done'})
const reasoning = (id: string) => ({type: 'reasoning', id, summary: []})

describe('adjacentOutputs', () => {
  it("a hook's developer message between a call and its output goes after the output", () => {
    const hook = developer('PostToolUse: the build is green.')
    expect(adjacentOutputs([user('go'), call('c1'), hook, output('c1'), user('next')])).toEqual([
      user('go'),
      call('c1'),
      output('c1'),
      hook,
      user('next'),
    ])
  })

  it('a batch of parallel calls stays a batch; a reasoning item and messages between move after its outputs', () => {
    const input = [
      reasoning('rs_1'),
      call('a'),
      custom('b'),
      developer('hook a'),
      reasoning('rs_2'),
      output('a'),
      user('interjection'),
      customOutput('b'),
      reasoning('rs_3'),
    ]
    expect(adjacentOutputs(input)).toEqual([
      reasoning('rs_1'),
      call('a'),
      custom('b'),
      output('a'),
      customOutput('b'),
      developer('hook a'),
      reasoning('rs_2'),
      user('interjection'),
      reasoning('rs_3'),
    ])
  })

  it('a call among what stood between starts a batch of its own, its outputs after it', () => {
    expect(adjacentOutputs([call('a'), developer('h'), call('b'), output('a'), output('b')])).toEqual([
      call('a'),
      output('a'),
      developer('h'),
      call('b'),
      output('b'),
    ])
  })

  it('a history already adjacent, or a call without an output, comes back as the same array', () => {
    const adjacent = [user('go'), call('a'), call('b'), output('b'), output('a'), user('more')]
    expect(adjacentOutputs(adjacent)).toBe(adjacent)
    const unanswered = [user('go'), call('a'), user('stop'), call('b'), output('b')]
    expect(adjacentOutputs(unanswered)).toBe(unanswered)
  })

  it("the same bytes each turn: a turn's rewrite starts with the one before (the prompt cache)", () => {
    const turn1 = [user('go'), call('a'), developer('hook'), output('a')]
    const turn2 = [...turn1, reasoning('rs'), call('b'), developer('hook b'), output('b'), user('thanks')]
    const first = JSON.stringify(adjacentOutputs(turn1))
    const second = JSON.stringify(adjacentOutputs(turn2))
    expect(second.startsWith(first.slice(0, -1))).toBe(true)
    expect(adjacentOutputs(turn2)).toEqual([
      user('go'),
      call('a'),
      output('a'),
      developer('hook'),
      reasoning('rs'),
      call('b'),
      output('b'),
      developer('hook b'),
      user('thanks'),
    ])
  })
})
