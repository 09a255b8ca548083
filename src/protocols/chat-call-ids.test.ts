/**
 * A chat upstream's tool-call ids that cannot be trusted to be unique (Kimi K3's `Bash:0`, counted
 * from 0 on every turn; a repeat within one answer; an id the history already has): the client is
 * given an id of the gateway's own, the same over all of a call's deltas, and what is keyed by call
 * id (the carry) keys on it. Ordinary ids go on as they came. See docs/TRANSLATION.md, "Tool-call
 * ids a chat upstream repeats".
 */
import {describe, expect, it} from 'vitest'

import {BoundedCarry} from './carry.js'
import {chatCodec} from './chat.js'
import {chatChunk, chatSse, chatToolChunk, decodeAll} from './cm-test-helpers.js'
import type {CodecContext, Part, StreamEvent} from './ir.js'
import {decodeClientRequest, StreamTranslator, translateResponseText} from './translate.js'

const chunk = chatChunk
const tc = chatToolChunk
const OURS = /^call_[0-9a-f]{24}$/
const sseBytes = (chunks: unknown[]): Buffer => Buffer.from(chatSse(chunks))

/** The calls of a decoded stream, in order: each one's id, name and whole arguments. */
function streamCalls(
  chunks: unknown[],
  ctx: CodecContext = {},
): Array<{id: string; name: string; args: string}> {
  const events: StreamEvent[] = decodeAll(
    chatCodec.streamDecoder(ctx),
    chatSse([...chunks, chunk({}, 'tool_calls'), '[DONE]']),
  )
  const calls = new Map<number, {id: string; name: string; args: string}>()
  for (const e of events)
    if (e.type === 'block_start' && e.block.type === 'tool_call')
      calls.set(e.index, {id: e.block.id, name: e.block.name, args: ''})
    else if (e.type === 'tool_args_delta') calls.get(e.index)!.args += e.json
  return [...calls.values()]
}

/** Kimi's whole chat answer: `calls` (an id left out where it has none), after `reasoning` if any. */
const kimiAnswer = (calls: Array<{id?: string; name: string; args: string}>, reasoning?: string) => ({
  id: 'c1',
  object: 'chat.completion',
  model: 'kimi-k3',
  choices: [
    {
      index: 0,
      message: {
        role: 'assistant',
        content: null,
        ...(reasoning !== undefined ? {reasoning_content: reasoning} : {}),
        tool_calls: calls.map((c) => ({
          ...(c.id !== undefined ? {id: c.id} : {}),
          type: 'function',
          function: {name: c.name, arguments: c.args},
        })),
      },
      finish_reason: 'tool_calls',
    },
  ],
})

/** The calls of a whole chat answer whose `tool_calls` are `calls`, decoded. */
function wholeCalls(calls: Array<{id?: string; name: string; args: string}>, ctx: CodecContext = {}) {
  const response = chatCodec.decodeResponse(kimiAnswer(calls), ctx)
  return response.parts.flatMap((p) =>
    p.type === 'tool_call' ? [{id: p.id, name: p.name, args: p.arguments}] : [],
  )
}

describe("a chat upstream's tool-call ids", () => {
  describe("positional ids (Kimi K3, a bare counter): the client gets one of ours, Kimi's in its shape", () => {
    it.each(['Bash:0', 'functions.Bash:0', 'mcp__github__create_issue:12', '0', '3'])('%s', (id) => {
      const colon = id.lastIndexOf(':')
      // (`NAME:N` as `NAME:` and a number of the gateway's own: Kimi's template writes ids as they are)
      const OURS =
        colon > 0
          ? new RegExp(`^${id.slice(0, colon).replace(/[.]/g, '\\.')}:\\d{7,}$`)
          : /^call_[0-9a-f]{24}$/
      // (stream: the id on the first delta only; then the same id repeated on every delta)
      for (const again of [false, true]) {
        const [call, ...rest] = streamCalls([
          tc(0, {name: 'Bash', arguments: ''}, id),
          tc(0, {arguments: '{"command":'}, again ? id : undefined),
          tc(0, {arguments: '"ls"}'}, again ? id : undefined),
        ])
        expect(rest).toEqual([])
        expect(call.id).toMatch(OURS)
        expect(call).toMatchObject({name: 'Bash', args: '{"command":"ls"}'})
      }
      const [whole] = wholeCalls([{id, name: 'Bash', args: '{"command":"ls"}'}])
      expect(whole.id).toMatch(OURS)
      expect(whole).toMatchObject({name: 'Bash', args: '{"command":"ls"}'})
    })

    it("Kimi's two calls of one answer (Bash:0, Read:1) get two ids, each the same over its deltas", () => {
      const calls = streamCalls([
        tc(0, {name: 'Bash', arguments: '{"command":'}, 'Bash:0'),
        tc(0, {arguments: '"ls"}'}),
        tc(1, {name: 'Read', arguments: '{"path":'}, 'Read:1'),
        tc(1, {arguments: '"a"}'}),
      ])
      expect(calls.map((c) => c.args)).toEqual(['{"command":"ls"}', '{"path":"a"}'])
      expect(calls[0].id).toMatch(/^Bash:\d{7,}$/)
      expect(calls[1].id).toMatch(/^Read:\d{7,}$/)
      expect(calls[0].id).not.toBe(calls[1].id)
    })

    it('each answer, the same upstream ids: ids the client never saw before', () => {
      const answer = [tc(0, {name: 'Bash', arguments: '{"command":"ls"}'}, 'Bash:0')]
      const ids = new Set([...streamCalls(answer), ...streamCalls(answer)].map((c) => c.id))
      for (const whole of [wholeCalls, wholeCalls])
        ids.add(whole([{id: 'Bash:0', name: 'Bash', args: '{}'}])[0].id)
      expect(ids.size).toBe(4)
    })
  })

  describe('an id that repeats within one answer: the first call keeps it, the next gets one of ours', () => {
    it('a stream', () => {
      const calls = streamCalls([
        tc(0, {name: 'a', arguments: '{"x":1}'}, 'call_same'),
        tc(1, {name: 'b', arguments: '{"y":2}'}, 'call_same'),
      ])
      expect(calls.map((c) => [c.name, c.args])).toEqual([
        ['a', '{"x":1}'],
        ['b', '{"y":2}'],
      ])
      expect(calls[0].id).toBe('call_same')
      expect(calls[1].id).toMatch(OURS)
    })

    it('a whole answer', () => {
      const calls = wholeCalls([
        {id: 'call_same', name: 'a', args: '{"x":1}'},
        {id: 'call_same', name: 'b', args: '{"y":2}'},
      ])
      expect(calls[0].id).toBe('call_same')
      expect(calls[1].id).toMatch(OURS)
    })
  })

  describe("an id the request's history already has: one of ours", () => {
    it('stream and not, the history asked once, and only for an answer with a call', () => {
      let asked = 0
      const ctx: CodecContext = {
        historyCallIds: () => {
          asked++
          return new Set(['call_old'])
        },
      }
      const calls = streamCalls(
        [tc(0, {name: 'a', arguments: '{}'}, 'call_old'), tc(1, {name: 'b', arguments: '{}'}, 'call_new')],
        ctx,
      )
      expect(calls[0].id).toMatch(OURS)
      expect(calls[1].id).toBe('call_new')
      const whole = wholeCalls(
        [
          {id: 'call_old', name: 'a', args: '{}'},
          {id: 'call_new', name: 'b', args: '{}'},
        ],
        ctx,
      )
      expect(whole[0].id).toMatch(OURS)
      expect(whole[1].id).toBe('call_new')
      expect(asked).toBe(4)
      // (a text answer never asks)
      decodeAll(chatCodec.streamDecoder(ctx), chatSse([chunk({content: 'hi'}), chunk({}, 'stop'), '[DONE]']))
      expect(asked).toBe(4)
    })

    it("translate.ts gives the decoder the client's history: its calls' and its results' ids", () => {
      const client = decodeClientRequest(
        'messages',
        {
          model: 'claude-sonnet-4-5',
          max_tokens: 1024,
          stream: true,
          tools: [{name: 'Bash', input_schema: {type: 'object'}}],
          messages: [
            {role: 'user', content: 'List the files.'},
            {role: 'assistant', content: [{type: 'tool_use', id: 'call_abc123', name: 'Bash', input: {}}]},
            {role: 'user', content: [{type: 'tool_result', tool_use_id: 'call_abc123', content: 'a b'}]},
          ],
        },
        {},
      )
      const t = new StreamTranslator('chat', client, {})
      const text =
        t.push(
          sseBytes([
            tc(0, {name: 'Bash', arguments: '{}'}, 'call_abc123'),
            tc(1, {name: 'Bash', arguments: '{}'}, 'call_def456'),
            chunk({}, 'tool_calls'),
            '[DONE]',
          ]),
        ) + t.end()
      const ids = [...text.matchAll(/"type":"tool_use","id":"([^"]+)"/g)].map((m) => m[1])
      expect(ids).toHaveLength(2)
      expect(ids[0]).toMatch(OURS)
      expect(ids[1]).toBe('call_def456')
    })
  })

  it.each([
    'call_abc123',
    'chatcmpl-tool-9f8e7d6c5b4a3f2e1d0c',
    'toolu_01A09q90qw90lq917835lq9',
    'D681PevKs',
    'call:a1',
  ])('an ordinary id goes on as it came: %s', (id) => {
    const [call] = streamCalls([tc(0, {name: 'f', arguments: '{"a":1}'}, id), tc(0, {arguments: ''}, id)])
    expect(call).toEqual({id, name: 'f', args: '{"a":1}'})
    expect(wholeCalls([{id, name: 'f', args: '{"a":1}'}])[0].id).toBe(id)
  })
})

describe("Kimi's ids and the carry of a chat client's reasoning", () => {
  /** A chat client's request: the turns so far, each a call of Bash with its result (no reasoning: it is carried). */
  const request = (ids: string[]) => ({
    model: 'kimi-k3',
    stream: true,
    tools: [{type: 'function', function: {name: 'Bash', parameters: {type: 'object'}}}],
    messages: [
      {role: 'user', content: 'List the files.'},
      ...ids.flatMap((id, i) => [
        {
          role: 'assistant',
          content: null,
          tool_calls: [{id, type: 'function', function: {name: 'Bash', arguments: `{"n":${i}}`}}],
        },
        {role: 'tool', tool_call_id: id, content: 'done'},
      ]),
    ],
  })
  /** A Kimi answer: `reasoning`, then a call of Bash with the id `Bash:0`. */
  const answer = (reasoning: string, n: number) =>
    chatSse([
      chunk({role: 'assistant', reasoning_content: reasoning}),
      tc(0, {name: 'Bash', arguments: `{"n":${n}}`}, 'Bash:0'),
      chunk({}, 'tool_calls'),
      '[DONE]',
    ])
  const reasoningBefore = (parts: Part[]) => parts.flatMap((p) => (p.type === 'reasoning' ? [p.text] : []))

  it("turn 1's reasoning is still found on turn 3, under the id the client got (stream and not)", () => {
    for (const stream of [true, false]) {
      const carry = new BoundedCarry()
      const ids: string[] = []
      for (const [turn, reasoning] of ['turn one', 'turn two'].entries()) {
        const client = decodeClientRequest('chat', {...request(ids), stream}, {carry})
        let text: string
        if (stream) {
          const t = new StreamTranslator('chat', client, {carry})
          text = t.push(Buffer.from(answer(reasoning, turn))) + t.end()
        } else {
          text = translateResponseText(
            'chat',
            client,
            kimiAnswer([{id: 'Bash:0', name: 'Bash', args: `{"n":${turn}}`}], reasoning),
            {carry},
          ).text
        }
        const id = /"id":"(Bash:\d{7,})"/.exec(text)?.[1]
        expect(id, text).toBeDefined()
        ids.push(id!)
      }
      expect(ids[0]).not.toBe(ids[1])
      const turns = decodeClientRequest('chat', request(ids), {carry}).request.messages.filter(
        (m) => m.role === 'assistant',
      )
      expect(turns.map((m) => reasoningBefore(m.parts))).toEqual([['turn one'], ['turn two']])
    }
  })
})
