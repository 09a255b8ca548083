import {describe, expect, it} from 'vitest'

import {ChatUsageChunkFilter} from './relay.js'
import {omitsToolCallIndex, ToolCallIndexer} from './tool-index.js'

const event = (delta: Record<string, unknown>, choice = 0) =>
  `data: ${JSON.stringify({id: 'c', choices: [{index: choice, delta}]})}\n\n`
const call = (id: string | undefined, args: string, name?: string) => ({
  ...(id ? {id, type: 'function'} : {}),
  function: {...(name ? {name} : {}), arguments: args},
})
const indexes = (text: string): unknown[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .flatMap((l) =>
      (
        JSON.parse(l.slice(6)) as {choices: Array<{delta: {tool_calls?: Array<{index?: unknown}>}}>}
      ).choices.flatMap((c) => (c.delta.tool_calls ?? []).map((t) => t.index)),
    )

describe('ToolCallIndexer', () => {
  it('numbers each new call id, a delta without an id continues the call before it, the index first', () => {
    const indexer = new ToolCallIndexer()
    const one = indexer.event(event({tool_calls: [call('call_a', '{"pa', 'read')]}))
    expect(one).toBe(
      `data: ${JSON.stringify({id: 'c', choices: [{index: 0, delta: {tool_calls: [{index: 0, id: 'call_a', type: 'function', function: {name: 'read', arguments: '{"pa'}}]}}]})}\n\n`,
    )
    expect(indexes(indexer.event(event({tool_calls: [call(undefined, 'th":1}')]})))).toEqual([0])
    expect(
      indexes(indexer.event(event({tool_calls: [call('call_b', '{}', 'ls'), call('call_c', '{}', 'ls')]}))),
    ).toEqual([1, 2])
    // the same id again (a server that repeats it on each delta) keeps its index
    expect(indexes(indexer.event(event({tool_calls: [call('call_a', '')]})))).toEqual([0])
    // another choice numbers its own calls
    expect(indexes(indexer.event(event({tool_calls: [call('call_d', '{}', 'ls')]}, 1)))).toEqual([0])
  })

  it('tells apart calls without ids: entries of one delta, and a named call after a whole one; a null index replaced', () => {
    const indexer = new ToolCallIndexer()
    // two calls of one delta, each with `"id": ""` (AstrBot #6661's relays)
    expect(
      indexes(indexer.event(event({tool_calls: [call('', '{"x":1}', 'a'), call('', '{"y":', 'b')]}))),
    ).toEqual([0, 1])
    // the second goes on (no name), then a named call after its whole arguments is the next
    expect(indexes(indexer.event(event({tool_calls: [call(undefined, '1}')]})))).toEqual([1])
    expect(indexes(indexer.event(event({tool_calls: [call(undefined, '{}', 'c')]})))).toEqual([2])
    // a name repeated on every delta of one call, a last one without arguments too: the same call
    const again = new ToolCallIndexer()
    expect(indexes(again.event(event({tool_calls: [call(undefined, '{"p', 'read')]})))).toEqual([0])
    expect(indexes(again.event(event({tool_calls: [call(undefined, 'ath":1}', 'read')]})))).toEqual([0])
    expect(indexes(again.event(event({tool_calls: [call(undefined, '', 'read')]})))).toEqual([0])
    // OpenAI's shape with the id blanked: each call opens named with no arguments, goes on unnamed
    const blanked = new ToolCallIndexer()
    const steps = [
      call(undefined, '', 'read'),
      call(undefined, '{"p":1}\n'),
      call(undefined, '', 'read'),
      call(undefined, '{"p":2}'),
    ]
    expect(steps.flatMap((c) => indexes(blanked.event(event({tool_calls: [c]}))))).toEqual([0, 0, 1, 1])
    const nulled = new ToolCallIndexer().event(
      event({tool_calls: [{index: null, ...call('call_a', '{}', 'ls')}]}),
    )
    expect(indexes(nulled)).toEqual([0])
  })

  it('leaves an event with indexes, or no JSON, as the same string', () => {
    const indexer = new ToolCallIndexer()
    const indexed = event({tool_calls: [{index: 3, ...call('call_a', '{}', 'ls')}]})
    expect(indexer.event(indexed)).toBe(indexed)
    // after it, a call without one gets the next free index
    expect(indexes(indexer.event(event({tool_calls: [call('call_b', '{}', 'ls')]})))).toEqual([4])
    for (const other of ['data: [DONE]\n\n', ': keep-alive\n\n', 'data: {broken\n\n', event({content: 'hi'})])
      expect(indexer.event(other)).toBe(other)
  })
})

describe('ChatUsageChunkFilter with an indexer', () => {
  const stream = [
    event({content: 'Reading.'}),
    event({tool_calls: [call('call_a', '{"path":"a"}', 'read')]}),
    event({tool_calls: [call('call_b', '{"path":"b"}', 'read')]}),
    `data: ${JSON.stringify({id: 'c', choices: [], usage: {prompt_tokens: 1}})}\n\n`,
    'data: [DONE]\n\n',
  ].join('')

  const through = (filter: ChatUsageChunkFilter, chunks: string[]): string => {
    let out = ''
    for (const c of chunks) {
      const sent = filter.push(Buffer.from(c))
      out += typeof sent === 'string' ? sent : Buffer.from(sent).toString('utf8')
    }
    return out + filter.flush()
  }

  it('numbers the calls whole, split mid-event, or with CRs; keeps the usage chunk unless it drops it', () => {
    const whole = through(new ChatUsageChunkFilter(false, new ToolCallIndexer()), [stream])
    expect(indexes(whole)).toEqual([0, 1])
    expect(whole).toContain('"usage"')
    expect(whole.startsWith(event({content: 'Reading.'}))).toBe(true)
    const cut = Math.floor(stream.length / 2)
    expect(
      indexes(
        through(new ChatUsageChunkFilter(false, new ToolCallIndexer()), [
          stream.slice(0, cut),
          stream.slice(cut),
        ]),
      ),
    ).toEqual([0, 1])
    const crlf = through(new ChatUsageChunkFilter(false, new ToolCallIndexer()), [
      stream.replaceAll('\n', '\r\n'),
    ])
    expect(indexes(crlf)).toEqual([0, 1])
    const dropped = through(new ChatUsageChunkFilter(true, new ToolCallIndexer()), [stream])
    expect(indexes(dropped)).toEqual([0, 1])
    expect(dropped).not.toContain('"usage"')
    // without an indexer, the stream's bytes as they came (the usage chunk only dropped)
    expect(through(new ChatUsageChunkFilter(false), [stream])).toBe(stream)
  })
})

describe('omitsToolCallIndex', () => {
  it.each([
    ['https://generativelanguage.googleapis.com/v1beta/openai', true],
    ['https://generativelanguage.googleapis.com/v1beta/openai/', true],
    ['https://generativelanguage.googleapis.com', false],
    ['https://api.openai.com/v1', false],
    ['http://127.0.0.1:8080/openai', false],
  ])('%s: %s', (url, omits) => {
    expect(omitsToolCallIndex(url)).toBe(omits)
  })
})
