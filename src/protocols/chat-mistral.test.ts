/**
 * Mistral's reasoning answers (Magistral; mistral-small and mistral-medium with reasoning on):
 * `content` an array of `thinking` and `text` chunks, in a JSON answer and in a stream's deltas
 * (beside plain string deltas in the same stream). The text is the answer's, the thinking its
 * reasoning; the reasoning does not go back to a chat upstream.
 */
import {describe, expect, it} from 'vitest'

import {chatCodec} from './chat.js'
import {chatChunk, chatSse, decodeAll} from './cm-test-helpers.js'
import type {Part, Request, StreamEvent} from './ir.js'

const chunk = chatChunk
const thinking = (text: string) => ({type: 'thinking', thinking: [{type: 'text', text}]})

function blocks(events: StreamEvent[]): Array<{kind: string; text: string; sig?: string}> {
  const out = new Map<number, {kind: string; text: string; sig?: string}>()
  for (const e of events) {
    if (e.type === 'block_start') out.set(e.index, {kind: e.block.type, text: ''})
    else if (e.type === 'text_delta' || e.type === 'reasoning_delta') out.get(e.index)!.text += e.text
    else if (e.type === 'reasoning_opaque') out.get(e.index)!.sig = e.signature?.value
  }
  return [...out.values()]
}

const reasoning = (text: string) => ({kind: 'reasoning', text, sig: 'mistral'})
const text = (t: string) => ({kind: 'text', text: t})

describe("Mistral's content chunks in a stream", () => {
  it('reads thinking chunks as reasoning and text chunks and strings as text (vercel/ai #13703)', () => {
    const events = decodeAll(
      chatCodec.streamDecoder({}),
      chatSse([
        chunk({role: 'assistant', content: ''}),
        chunk({content: [thinking('Let me')]}),
        chunk({content: [thinking(' add 17 and 23')]}),
        chunk({content: [{type: 'text', text: '3'}]}),
        chunk({content: '91'}),
        chunk({content: '.'}),
        chunk({}, 'stop'),
        '[DONE]',
      ]),
    )
    expect(blocks(events)).toEqual([reasoning('Let me add 17 and 23'), text('391.')])
    expect(events.at(-2)).toEqual({type: 'stop', reason: 'end'})
  })

  it('reads a thinking and a text chunk in one delta, a string thinking and other chunk types', () => {
    const events = decodeAll(
      chatCodec.streamDecoder({}),
      chatSse([
        chunk({
          role: 'assistant',
          content: [
            {type: 'thinking', thinking: 'plan', closed: true},
            {type: 'reference', reference_ids: [1]},
            {type: 'text', text: 'A'},
          ],
        }),
        chunk({content: 'B'}),
        chunk({}, 'stop'),
        '[DONE]',
      ]),
    )
    expect(blocks(events)).toEqual([reasoning('plan'), text('AB')])
  })

  it('reads a long stream that mixes both forms the same as one parsed chunk by chunk', () => {
    const words = Array.from({length: 300}, (_, i) => `w${i} `)
    const chunks: unknown[] = [chunk({role: 'assistant', content: ''})]
    for (const [i, w] of words.entries())
      chunks.push(chunk(i % 7 === 3 ? {content: [{type: 'text', text: w}]} : {content: w}))
    // thinking chunks after a run of templated strings, then strings again
    chunks.splice(50, 0, chunk({content: [thinking('mid')]}))
    chunks.push(chunk({}, 'stop'), '[DONE]')
    const events = decodeAll(chatCodec.streamDecoder({}), chatSse(chunks))
    const before = words.slice(0, 49).join('')
    expect(blocks(events)).toEqual([text(before), reasoning('mid'), text(words.slice(49).join(''))])
  })
})

describe("Mistral's content chunks in a JSON answer", () => {
  const answer = (content: unknown): Part[] =>
    chatCodec.decodeResponse({
      id: 'x',
      model: 'magistral-medium-latest',
      choices: [{index: 0, message: {role: 'assistant', content}, finish_reason: 'stop'}],
    }).parts

  it('reads the thinking as reasoning and the text as the answer, no 502', () => {
    expect(
      answer([
        {type: 'thinking', thinking: [{type: 'text', text: 'So 17 * 23 = 391.'}], closed: true},
        {type: 'text', text: '391'},
      ]),
    ).toEqual([
      {type: 'reasoning', text: 'So 17 * 23 = 391.', signature: {family: 'chat', value: 'mistral'}},
      {type: 'text', text: '391'},
    ])
  })

  it('leaves other chunk types out', () => {
    expect(
      answer([
        {type: 'reference', reference_ids: [0]},
        {type: 'image_url', image_url: 'https://x/y.png'},
        {type: 'text', text: 'A'},
        {type: 'text', text: 'B'},
      ]),
    ).toEqual([{type: 'text', text: 'AB'}])
  })
})

describe("Mistral's reasoning on the next turn", () => {
  it('sends the text back as content, without the reasoning', () => {
    const parts: Part[] = [
      {type: 'reasoning', text: 'So 391.', signature: {family: 'chat', value: 'mistral'}},
      {type: 'text', text: '391'},
    ]
    const request: Request = {
      model: 'magistral-medium-latest',
      system: [],
      tools: [],
      stream: false,
      messages: [
        {role: 'user', parts: [{type: 'text', text: '17*23?'}]},
        {role: 'assistant', parts},
        {role: 'user', parts: [{type: 'text', text: 'And 18*23?'}]},
      ],
    }
    const body = chatCodec.encodeRequest(request, 'magistral-medium-latest', {})
    expect((body.messages as unknown[])[1]).toEqual({role: 'assistant', content: '391'})
  })

  it("takes a chat client's history of a Mistral answer: its text, without the thinking", () => {
    const request = chatCodec.decodeRequest(
      {
        model: 'm',
        messages: [
          {role: 'user', content: '17*23?'},
          {
            role: 'assistant',
            content: [
              {type: 'thinking', thinking: [{type: 'text', text: 'So 391.'}], closed: true},
              {type: 'text', text: '391'},
            ],
          },
          {role: 'user', content: 'And 18*23?'},
        ],
      },
      {},
    )
    expect(request.messages[1]).toEqual({role: 'assistant', parts: [{type: 'text', text: '391'}]})
  })
})
