/**
 * Anthropic's redacted thinking carried by a client of another family: its wrap says it is
 * redacted data (`gwx1.messages+redacted.`), every wrap written before reads as before, and each
 * decoder reads it back as redacted, so that turn 2 sends Anthropic the `redacted_thinking` block
 * it gave, where it was.
 */
import {describe, expect, it} from 'vitest'

import type {Family, Opaque, ReasoningPart} from './ir.js'
import {unwrapOpaque, unwrapReasoning, wrapReasoning} from './ir.js'
import {stripWrapped} from './strip.js'
import {CODECS, decodeClientRequest, encodeUpstreamRequest} from './translate.js'

const m = (value: string): Opaque => ({family: 'messages', value})

describe('the wrap of redacted thinking', () => {
  it.each<[Family, Pick<ReasoningPart, 'signature' | 'redacted' | 'encrypted'>, string | undefined]>([
    ['responses', {redacted: m('RD')}, 'gwx1.messages+redacted.RD'],
    ['gemini', {redacted: m('RD')}, 'gwx1.messages+redacted.RD'],
    ['responses', {signature: m('SIG')}, 'gwx1.messages.SIG'],
    ['gemini', {signature: {family: 'chat', value: 'rd1:[]'}}, 'gwx1.chat.rd1:[]'],
    // a client of the family that made it gets the value as it came
    ['messages', {redacted: m('RD')}, 'RD'],
    ['gemini', {}, undefined],
  ])('for a %s client: %j is %j', (client, part, wrapped) => {
    expect(wrapReasoning(client, part)).toBe(wrapped)
  })

  it.each<[Family, string, {signature?: Opaque; redacted?: Opaque}]>([
    ['responses', 'gwx1.messages+redacted.RD', {redacted: m('RD')}],
    ['gemini', 'gwx1.messages+redacted.a.b', {redacted: m('a.b')}],
    // every wrap written before: a signature, as before
    ['responses', 'gwx1.messages.RD', {signature: m('RD')}],
    ['gemini', 'gwx1.chat.', {signature: {family: 'chat', value: ''}}],
    // not a wrap of gwctl's: the client's own value
    ['gemini', 'gwx1.nope+redacted.x', {signature: {family: 'gemini', value: 'gwx1.nope+redacted.x'}}],
    ['gemini', 'gwx1.+redacted.x', {signature: {family: 'gemini', value: 'gwx1.+redacted.x'}}],
    [
      'responses',
      'gwx1.messages+redacted',
      {signature: {family: 'responses', value: 'gwx1.messages+redacted'}},
    ],
    ['responses', 'abc', {signature: {family: 'responses', value: 'abc'}}],
  ])('from a %s client, %j reads as %j', (client, value, read) => {
    expect(unwrapReasoning(client, value)).toEqual(read)
  })

  it('reads as the opaque it holds where only the value counts, and is taken out as any wrap is', () => {
    expect(unwrapOpaque('responses', 'gwx1.messages+redacted.RD')).toEqual(m('RD'))
    // the history gone to a Responses upstream untranslated (a route changed): OpenAI would refuse it
    const item = {type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gwx1.messages+redacted.RD'}
    const body = {input: [{role: 'user', content: 'hi'}, item]}
    expect(stripWrapped('responses', body)).toBe(true)
    expect(body.input).toEqual([{role: 'user', content: 'hi'}])
  })
})

/** Anthropic's answer: signed thinking, redacted thinking, signed thinking, a call. */
const ANSWER = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-6',
  content: [
    {type: 'thinking', thinking: 'first', signature: 'SIG-A'},
    {type: 'redacted_thinking', data: 'REDACTED-DATA'},
    {type: 'thinking', thinking: 'then', signature: 'SIG-B'},
    {type: 'tool_use', id: 'toolu_1', name: 'read_file', input: {path: 'a'}},
  ],
  stop_reason: 'tool_use',
  usage: {input_tokens: 10, output_tokens: 5},
}

const EXPECTED = [
  {type: 'thinking', thinking: 'first', signature: 'SIG-A'},
  {type: 'redacted_thinking', data: 'REDACTED-DATA'},
  {type: 'thinking', thinking: 'then', signature: 'SIG-B'},
  {type: 'tool_use', id: 'toolu_1', name: 'read_file', input: {path: 'a'}},
]

/** The assistant turn a Messages upstream is sent for a client's history. */
function sentBack(client: Family, body: Record<string, unknown>, ctx = {}): unknown[] {
  const sent = JSON.parse(
    encodeUpstreamRequest(
      decodeClientRequest(client, body, ctx),
      'messages',
      'claude-sonnet-4-6',
    ).body.toString(),
  ) as {messages: Array<{role: string; content: unknown[]}>}
  return sent.messages.find((x) => x.role === 'assistant')!.content
}

const tool = {type: 'function', name: 'read_file', parameters: {type: 'object', properties: {}}}
const declarations = [{functionDeclarations: [{name: 'read_file', parameters: {type: 'object'}}]}]
const response = () => CODECS.messages.decodeResponse(ANSWER)

describe('turn 2 sends Anthropic its redacted_thinking block, between the signed ones', () => {
  it('a Responses client: three reasoning items, the second marked redacted', () => {
    const output = CODECS.responses.encodeResponse(response()).output as Array<Record<string, unknown>>
    expect(output.filter((o) => o.type === 'reasoning').map((o) => o.encrypted_content)).toEqual([
      'gwx1.messages.SIG-A',
      'gwx1.messages+redacted.REDACTED-DATA',
      'gwx1.messages.SIG-B',
    ])
    const input = [
      {role: 'user', content: 'read a'},
      ...output,
      {type: 'function_call_output', call_id: 'toolu_1', output: 'A'},
    ]
    expect(sentBack('responses', {model: 'gpt-5', input, tools: [tool]})).toEqual(EXPECTED)
    // an item written before stop 60 (the redacted data wrapped as a signature) reads as before
    const old = input.map((i) =>
      (i as {encrypted_content?: string}).encrypted_content === 'gwx1.messages+redacted.REDACTED-DATA'
        ? {...i, encrypted_content: 'gwx1.messages.REDACTED-DATA'}
        : i,
    )
    expect(sentBack('responses', {model: 'gpt-5', input: old, tools: [tool]})[1]).toEqual({
      type: 'thinking',
      thinking: '',
      signature: 'REDACTED-DATA',
    })
  })

  it('a Gemini client: a thought part each, the redacted one joined to neither thought around it', () => {
    const content = (
      CODECS.gemini.encodeResponse(response()).candidates as Array<{content: {parts: unknown[]}}>
    )[0].content
    const gemini = (parts: unknown[]) =>
      sentBack(
        'gemini',
        {
          contents: [
            {role: 'user', parts: [{text: 'read a'}]},
            {role: 'model', parts},
            {
              role: 'user',
              parts: [{functionResponse: {id: 'toolu_1', name: 'read_file', response: {output: 'A'}}}],
            },
          ],
          tools: declarations,
        },
        {model: 'gemini-2.5-pro', stream: false},
      )
    expect(gemini(content.parts)).toEqual(EXPECTED)
    // as a stream gives them: each thought's text in pieces, its signature on an empty piece after
    const sig = (s: string) => ({text: '', thought: true, thoughtSignature: s})
    const streamed = [
      {text: 'fir', thought: true},
      {text: 'st', thought: true},
      sig('gwx1.messages.SIG-A'),
      sig('gwx1.messages+redacted.REDACTED-DATA'),
      {text: 'th', thought: true},
      {text: 'en', thought: true},
      sig('gwx1.messages.SIG-B'),
      {functionCall: {id: 'toolu_1', name: 'read_file', args: {path: 'a'}}},
    ]
    expect(gemini(streamed)).toEqual(EXPECTED)
  })
})
