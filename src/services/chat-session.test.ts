import {describe, expect, it} from 'vitest'

import type {ChatCompletionChunk} from '../api/chat.js'
import {ChatSession, parseReplLine} from './chat-session.js'
import {ChunkAccumulator} from './chat-stream.js'

describe('parseReplLine', () => {
  it.each([
    ['hello there', {kind: 'message', text: 'hello there'}],
    ['', {kind: 'empty'}],
    ['/model sim-pro', {kind: 'model', name: 'sim-pro'}],
    ['/model', {kind: 'model', name: undefined}],
    ['/system Be brief.', {kind: 'system', text: 'Be brief.'}],
    ['/system', {kind: 'system', text: undefined}],
    ['/clear', {kind: 'clear'}],
    ['/save out.json', {kind: 'save', file: 'out.json'}],
    ['/exit', {kind: 'exit'}],
    ['/quit', {kind: 'exit'}],
    ['/help', {kind: 'help'}],
    ['/nope x', {kind: 'unknown', name: 'nope'}],
    ['//etc/hosts is a path', {kind: 'message', text: '/etc/hosts is a path'}],
  ])('%j', (line, expected) => {
    expect(parseReplLine(line)).toEqual(expected)
  })
})

const chunk = (
  delta: Record<string, unknown>,
  extra: Partial<ChatCompletionChunk> = {},
): ChatCompletionChunk => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  provider: 'p1',
  choices: [{index: 0, delta, finish_reason: null}],
  ...extra,
})

describe('ChunkAccumulator', () => {
  it('assembles text, reasoning, tool calls, finish reason and usage', () => {
    const acc = new ChunkAccumulator()
    acc.add(chunk({role: 'assistant', content: ''}))
    expect(acc.add(chunk({reasoning_content: 'think '}))).toEqual({content: undefined, reasoning: 'think '})
    acc.add(chunk({content: 'Hel'}))
    acc.add(chunk({content: 'lo'}))
    acc.add(
      chunk({tool_calls: [{index: 0, id: 'call_1', type: 'function', function: {name: 'f', arguments: ''}}]}),
    )
    acc.add(chunk({tool_calls: [{index: 0, function: {arguments: '{"a":'}}]}))
    acc.add(chunk({tool_calls: [{index: 0, function: {arguments: '1}'}}]}))
    acc.add({...chunk({}), choices: [{index: 0, delta: {}, finish_reason: 'tool_calls'}]})
    const usage = {prompt_tokens: 3, completion_tokens: 4, total_tokens: 7}
    acc.add({...chunk({}), choices: [], usage})
    expect(acc.completion()).toEqual({
      id: 'c1',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      provider: 'p1',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Hello',
            reasoning_content: 'think ',
            tool_calls: [{id: 'call_1', type: 'function', function: {name: 'f', arguments: '{"a":1}'}}],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage,
    })
  })
})

describe('ChatSession', () => {
  it('keeps history, sums usage, and drops turns that produced nothing', () => {
    const session = new ChatSession({model: 'a', system: 'sys'})
    const user = {role: 'user' as const, content: 'one'}
    expect(session.request(user).messages).toEqual([{role: 'system', content: 'sys'}, user])
    const usage = {
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
      prompt_tokens_details: {cached_tokens: 4},
      completion_tokens_details: {reasoning_tokens: 2},
    }
    const result = {
      completion: {id: '', object: 'chat.completion' as const, created: 0, model: 'a', choices: []},
      text: 'reply',
      reasoning: '',
      usage,
      timing: {total_ms: 1},
    }
    session.record(user, result)
    session.record({role: 'user', content: 'failed'}, undefined)
    session.model = 'b'
    const next = session.request({role: 'user', content: 'two'})
    expect(next.model).toBe('b')
    expect(next.messages.map((m) => m.content)).toEqual(['sys', 'one', 'reply', 'two'])
    expect(session.totals).toEqual({
      turns: 1,
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
      cached_tokens: 4,
      reasoning_tokens: 2,
    })
    session.clear()
    expect(session.request({role: 'user', content: 'x'}).messages).toHaveLength(2)
  })
})
