/**
 * A Responses history for a server that pairs calls and outputs by position (DeepSeek's
 * `/v1/responses`): each batch of calls followed directly by its outputs, what stood between
 * them after those, everything else in its order. And Codex's history with a message between a
 * call and its output translated to each family: the results right after the calls (chat refuses
 * "An assistant message with 'tool_calls' must be followed by tool messages", Anthropic a
 * tool_result not first in the next user turn).
 */
import {describe, expect, it} from 'vitest'

import {adjacentOutputs} from './adjacent-outputs.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'

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

describe("translated: Codex's history with a message between a call and its output", () => {
  const codex = (between: unknown) => ({
    model: 'gpt-5.6-sol',
    instructions: 'You are Codex.',
    input: [user('List the files.'), call('c1'), call('c2'), between, output('c1'), output('c2')],
    tools: [{type: 'function', name: 'exec', parameters: {type: 'object', properties: {}}}],
  })
  const encode = (between: unknown, upstream: 'chat' | 'messages' | 'gemini' | 'responses') => {
    const client = decodeClientRequest('responses', codex(between), {toResponses: true})
    return JSON.parse(
      encodeUpstreamRequest(
        client,
        upstream,
        'm',
        upstream === 'responses' ? {plainTools: true} : {},
      ).body.toString(),
    ) as Record<string, any>
  }
  const HOOK = developer('PostToolUse: 2 files.')
  const SAID = user('Also check the tests.')

  it("chat: the tool messages right after the assistant's calls, the user's words after them", () => {
    for (const between of [HOOK, SAID]) {
      const roles = encode(between, 'chat').messages.map((m: {role: string}) => m.role)
      expect(roles).toEqual(
        between === HOOK
          ? ['system', 'user', 'assistant', 'tool', 'tool']
          : ['system', 'user', 'assistant', 'tool', 'tool', 'user'],
      )
    }
    // the hook's words reach the model, in the system prompt (where Codex's developer messages go)
    expect(encode(HOOK, 'chat').messages[0].content).toContain('PostToolUse: 2 files.')
  })

  it('Messages: the tool results first in the next user turn, the text after them', () => {
    const messages = encode(SAID, 'messages').messages
    expect(messages.map((m: {role: string}) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(messages[2].content.map((b: {type: string}) => b.type)).toEqual([
      'tool_result',
      'tool_result',
      'text',
    ])
    expect(encode(HOOK, 'messages').messages[2].content.map((b: {type: string}) => b.type)).toEqual([
      'tool_result',
      'tool_result',
    ])
  })

  it('Gemini: the function responses first in the turn after the calls, the text after them', () => {
    const contents = encode(SAID, 'gemini').contents
    expect(contents.map((c: {role: string}) => c.role)).toEqual(['user', 'model', 'user'])
    expect(contents[2].parts.map((p: Record<string, unknown>) => Object.keys(p)[0])).toEqual([
      'functionResponse',
      'functionResponse',
      'text',
    ])
  })

  it("Responses (Codex's tools made plain for a server that is not OpenAI's): the outputs right after the calls", () => {
    const types = encode(SAID, 'responses').input.map((i: {type: string; role?: string}) => i.role ?? i.type)
    expect(types).toEqual([
      'user',
      'function_call',
      'function_call',
      'function_call_output',
      'function_call_output',
      'user',
    ])
  })
})
