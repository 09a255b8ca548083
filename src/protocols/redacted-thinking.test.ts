/**
 * Anthropic's redacted thinking carried by a client of another family: its wrap says it is
 * redacted data (`gwx1.messages+redacted.`), every wrap written before reads as before, and each
 * decoder reads it back as redacted, so that turn 2 sends Anthropic the `redacted_thinking` block
 * it gave, where it was.
 */
import {describe, expect, it, vi} from 'vitest'

import {BoundedCarry} from './carry.js'
import type {Family, Opaque, ReasoningPart, StreamEvent} from './ir.js'
import {unwrapOpaque, unwrapReasoning, withoutWrappedThinking, wrapReasoning} from './ir.js'
import {stripWrapped} from './strip.js'
import {CODECS, decodeClientRequest, encodeUpstreamRequest, refusedTurnOpaques} from './translate.js'

const m = (value: string): Opaque => ({family: 'messages', value})
/** The same, read back from a gwctl wrap. */
const w = (value: string): Opaque => ({...m(value), wrapped: true})

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
    ['responses', 'gwx1.messages+redacted.RD', {redacted: w('RD')}],
    ['gemini', 'gwx1.messages+redacted.a.b', {redacted: w('a.b')}],
    // every wrap written before: a signature, as before
    ['responses', 'gwx1.messages.RD', {signature: w('RD')}],
    ['gemini', 'gwx1.chat.', {signature: {family: 'chat', value: '', wrapped: true}}],
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
    expect(unwrapOpaque('responses', 'gwx1.messages+redacted.RD')).toEqual(w('RD'))
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

describe("a chat client's reasoning_content of the three blocks", () => {
  /** The answer as Anthropic streams it, read: each thinking block's text in pieces, then its opaque. */
  const events: StreamEvent[] = [
    {type: 'start', id: 'msg_1', model: 'claude-sonnet-4-6'},
    {type: 'block_start', index: 0, block: {type: 'reasoning'}},
    {type: 'reasoning_delta', index: 0, text: 'fir'},
    {type: 'reasoning_delta', index: 0, text: 'st'},
    {type: 'reasoning_opaque', index: 0, signature: m('SIG-A')},
    {type: 'block_stop', index: 0},
    {type: 'block_start', index: 1, block: {type: 'reasoning'}},
    {type: 'reasoning_opaque', index: 1, redacted: m('REDACTED-DATA')},
    {type: 'block_stop', index: 1},
    {type: 'block_start', index: 2, block: {type: 'reasoning'}},
    {type: 'reasoning_delta', index: 2, text: 'th'},
    {type: 'reasoning_delta', index: 2, text: 'en'},
    {type: 'reasoning_opaque', index: 2, signature: m('SIG-B')},
    {type: 'block_stop', index: 2},
    {type: 'block_start', index: 3, block: {type: 'tool_call', id: 'toolu_1', name: 'read_file'}},
    {type: 'tool_args_delta', index: 3, json: '{"path":"a"}'},
    {type: 'block_stop', index: 3},
    {type: 'stop', reason: 'tool_use'},
    {type: 'usage', usage: {inputTokens: 10, outputTokens: 5}},
    {type: 'end'},
  ]

  /** The reasoning_content a chat client shows for the answer, stream or not, and the carry it left. */
  function shown(stream: boolean): {reasoning: string; carry: BoundedCarry} {
    const carry = new BoundedCarry()
    if (!stream) {
      const body = CODECS.chat.encodeResponse(response(), {carry}) as {
        choices: Array<{message: {reasoning_content?: string}}>
      }
      // (the bytes an answer is written as say the same)
      const text = JSON.parse(CODECS.chat.encodeResponseText!(response(), {carry: new BoundedCarry()}))
      expect(text.choices[0].message.reasoning_content).toBe(body.choices[0].message.reasoning_content)
      return {reasoning: body.choices[0].message.reasoning_content ?? '', carry}
    }
    const encoder = CODECS.chat.streamEncoder({carry})
    const sse = events.map((e) => encoder.event(e)).join('')
    let reasoning = ''
    for (const line of sse.split('\n'))
      if (line.startsWith('data: {'))
        reasoning += JSON.parse(line.slice(6)).choices?.[0]?.delta?.reasoning_content ?? ''
    return {reasoning, carry}
  }

  const history = (reasoning: string) => ({
    model: 'gpt-5',
    messages: [
      {role: 'user', content: 'read a'},
      {
        role: 'assistant',
        content: null,
        reasoning_content: reasoning,
        tool_calls: [
          {id: 'toolu_1', type: 'function', function: {name: 'read_file', arguments: '{"path":"a"}'}},
        ],
      },
      {role: 'tool', tool_call_id: 'toolu_1', content: 'A'},
    ],
    tools: [{type: 'function', function: tool}],
  })

  for (const stream of [false, true])
    it(`${stream ? 'streamed' : 'not streamed'}: each block's text a paragraph; sent back, the blocks as they came`, () => {
      const {reasoning, carry} = shown(stream)
      expect(reasoning).toBe('first\n\nthen')
      expect(sentBack('chat', history(reasoning), {carry})).toEqual(EXPECTED)
    })

  it('the carry lost (a restart), the text sent back goes to no upstream, with or without the paragraphs', () => {
    for (const upstream of ['messages', 'responses', 'gemini'] as const) {
      const sent = (reasoning: string) =>
        encodeUpstreamRequest(
          decodeClientRequest('chat', history(reasoning), {carry: new BoundedCarry()}),
          upstream,
          upstream === 'messages' ? 'claude-sonnet-4-6' : 'gpt-5',
        ).body.toString()
      expect(sent('first\n\nthen')).toBe(sent('firstthen'))
      expect(sent('first\n\nthen')).not.toContain('first')
    }
  })
})

describe('a conversation sent again without the thinking of gwctl wraps (a signature refused)', () => {
  // a Responses client's history (probe A of rv-redact): an old wrap (redacted data as a
  // signature) in the first tool loop, a text answer, then the running tool loop with the wraps of
  // now
  const request = decodeClientRequest(
    'responses',
    {
      model: 'm',
      input: [
        {role: 'user', content: 'go'},
        {
          type: 'reasoning',
          summary: [{type: 'summary_text', text: 't0'}],
          encrypted_content: 'gwx1.messages.U0lH',
        },
        {type: 'reasoning', summary: [], encrypted_content: 'gwx1.messages.UkQ='},
        {type: 'function_call', call_id: 'c1', name: 'read_file', arguments: '{}'},
        {type: 'function_call_output', call_id: 'c1', output: ''},
        {role: 'assistant', content: [{type: 'output_text', text: 'done'}]},
        {role: 'user', content: 'more'},
        {
          type: 'reasoning',
          summary: [{type: 'summary_text', text: 't1'}],
          encrypted_content: 'gwx1.messages.U0lI',
        },
        {type: 'reasoning', summary: [], encrypted_content: 'gwx1.messages+redacted.UkQy'},
        {
          type: 'reasoning',
          summary: [{type: 'summary_text', text: 't2'}],
          encrypted_content: 'gwx1.messages.U0lJ',
        },
        {type: 'function_call', call_id: 'c2', name: 'read_file', arguments: '{}'},
        {type: 'function_call_output', call_id: 'c2', output: ''},
      ],
    },
    {},
  ).request
  const shapes = (r: typeof request) => r.messages.map((msg) => msg.parts.map((p) => p.type).join(','))
  const loop = 'reasoning,reasoning,reasoning,tool_call'

  it("leaves out the wrapped thinking of the turn Anthropic named only, the running tool loop's kept", () => {
    expect(shapes(request)).toEqual([
      'text',
      'reasoning,reasoning,tool_call',
      'tool_result',
      'text',
      'text',
      loop,
      'tool_result',
    ])
    // (the turn as sent: its signatures, the old wrap's redacted data among them)
    const again = withoutWrappedThinking(request, new Set(['U0lH', 'UkQ=']))!
    expect(shapes(again)).toEqual(['text', 'tool_call', 'tool_result', 'text', 'text', loop, 'tool_result'])
    // (the client's request as it was)
    expect(shapes(request)[1]).toBe('reasoning,reasoning,tool_call')
    // the running loop's turn named: its thinking goes, whole
    expect(shapes(withoutWrappedThinking(request, new Set(['U0lI', 'UkQy', 'U0lJ']))!)[5]).toBe('tool_call')
    // a value of the named turn that stands in another too (a thinking of the same text, signed
    // alike by a server that binds nothing): that other turn keeps its thinking
    const shared = withoutWrappedThinking(request, new Set(['U0lH', 'UkQ=', 'U0lJ']))!
    expect(shapes(shared)[1]).toBe('tool_call')
    expect(shapes(shared)[5]).toBe(loop)
  })

  it("a turn named that holds no wrap (the gateway's carry): nothing to leave out", () => {
    expect(withoutWrappedThinking(request, new Set(['CARRIED']))).toBeUndefined()
    const carried = {...request, messages: request.messages.map((msg) => ({...msg}))}
    carried.messages[1] = {
      role: 'assistant',
      parts: [
        {type: 'reasoning', text: 't', signature: m('U0lH')},
        {type: 'tool_call', id: 'c1', name: 'read_file', arguments: '{}'},
      ],
    }
    expect(withoutWrappedThinking(carried, new Set(['U0lH']))).toBeUndefined()
  })

  it('words that name no turn: every turn with a wrapped signature but the last assistant turn', () => {
    expect(shapes(withoutWrappedThinking(request)!)).toEqual([
      'text',
      'tool_call',
      'tool_result',
      'text',
      'text',
      loop,
      'tool_result',
    ])
    // the old wrap in the last assistant turn alone: nothing left out (its 400 goes to the client)
    const alone = {...request, messages: request.messages.slice(0, 3)}
    expect(withoutWrappedThinking(alone)).toBeUndefined()
  })

  it('a second refusal reaches every turn but the last assistant turn, a third that one too', () => {
    // (named: a value no turn holds, as once the named turn is already without its wraps)
    expect(shapes(withoutWrappedThinking(request, new Set(['GONE']), 'earlier')!)).toEqual(
      shapes(withoutWrappedThinking(request)!),
    )
    expect(shapes(withoutWrappedThinking(request, new Set(['GONE']), 'all')!)).toEqual([
      'text',
      'tool_call',
      'tool_result',
      'text',
      'text',
      'tool_call',
      'tool_result',
    ])
    const alone = {...request, messages: request.messages.slice(0, 3)}
    expect(shapes(withoutWrappedThinking(alone, undefined, 'all')!)).toEqual([
      'text',
      'tool_call',
      'tool_result',
    ])
  })

  it("reads the named turn's signatures and redacted data from the body as sent", () => {
    const body = Buffer.from(
      JSON.stringify({
        messages: [
          {role: 'user', content: 'go'},
          {
            role: 'assistant',
            content: [
              {type: 'thinking', thinking: '', signature: 'U0lH'},
              {type: 'redacted_thinking', data: 'UkQy'},
              {type: 'tool_use', id: 'c1', name: 'read_file', input: {}},
            ],
          },
        ],
      }),
    )
    const words = 'messages.1.content.0: Invalid `signature` in `thinking` block'
    expect(refusedTurnOpaques(body, words)).toEqual(new Set(['U0lH', 'UkQy']))
    expect(refusedTurnOpaques(body, 'Invalid `signature` in `thinking` block')).toBeUndefined()
    expect(refusedTurnOpaques(body, words.replace('messages.1', 'messages.0'))).toBeUndefined()
    expect(refusedTurnOpaques(Buffer.from('{'), words)).toBeUndefined()
  })
})

describe("a chat client's answer of text alone: its thinking carried under its conversation and its text", () => {
  // Anthropic's answer of the three blocks and a text, no call
  const answer = () => {
    const r = response()
    return {
      ...r,
      parts: [...r.parts.filter((p) => p.type === 'reasoning'), {type: 'text' as const, text: 'Fine.'}],
    }
  }
  const ASKED = 'how are the notes?'
  const history = (text: string, echo?: string, asked = ASKED) => ({
    model: 'gpt-5',
    messages: [
      {role: 'user', content: asked},
      {role: 'assistant', content: text, ...(echo === undefined ? {} : {reasoning_content: echo})},
      {role: 'user', content: 'and then?'},
    ],
  })
  const types = (blocks: unknown[]) => blocks.map((b) => (b as {type: string}).type)
  const scope = 'agent-a\0project-a\0policy-a'
  /** The answer given to `asked` in `scope`, kept in `carry`: its text and reasoning_content. */
  const answered = (carry: BoundedCarry, asked = ASKED, carryScope = scope) => {
    const request = decodeClientRequest(
      'chat',
      {model: 'gpt-5', messages: [{role: 'user', content: asked}]},
      {carry, carryScope},
    ).request
    const shown = CODECS.chat.encodeResponse(answer(), {carry, request}) as {
      choices: Array<{message: {content: string; reasoning_content: string}}>
    }
    return shown.choices[0].message
  }

  it('goes back as it came for the same text, echoed or not; not for another text or another echo', () => {
    const carry = new BoundedCarry()
    const {content, reasoning_content: echo} = answered(carry)
    const three = ['thinking', 'redacted_thinking', 'thinking', 'text']
    expect(types(sentBack('chat', history(content), {carry, carryScope: scope}))).toEqual(three)
    expect(types(sentBack('chat', history(content, echo), {carry, carryScope: scope}))).toEqual(three)
    expect(types(sentBack('chat', history('Fine!'), {carry, carryScope: scope}))).toEqual(['text'])
    // (an echo that is not this thinking's: another answer of the same text)
    expect(types(sentBack('chat', history(content, 'other thoughts'), {carry, carryScope: scope}))).toEqual([
      'text',
    ])
    // a daemon that never kept such thinking hashes nothing, and sends none
    expect(types(sentBack('chat', history(content), {carry: new BoundedCarry(), carryScope: scope}))).toEqual(
      ['text'],
    )
  })

  it("keeps a hash of the user's words, not the words: a pasted file is not held in the carry (rv-mends #3)", () => {
    const carry = new BoundedCarry()
    const set = vi.spyOn(carry, 'set')
    const pasted = `Review this file:\n${'const line = 1\n'.repeat(4096)}`
    const {content} = answered(carry, pasted)
    const kept = JSON.stringify(set.mock.calls.map(([, parts]) => parts))
    expect(kept).not.toContain('const line = 1')
    expect(kept.length).toBeLessThan(4096)
    // the same words still find it, other words do not
    expect(types(sentBack('chat', history(content, undefined, pasted), {carry, carryScope: scope}))).toEqual([
      'thinking',
      'redacted_thinking',
      'thinking',
      'text',
    ])
    expect(
      types(sentBack('chat', history(content, undefined, `${pasted}!`), {carry, carryScope: scope})),
    ).toEqual(['text'])
  })

  it("never goes into another project's conversation, nor after other words of the user", () => {
    const carry = new BoundedCarry()
    const {content} = answered(carry)
    // the same answer in another project (another key, another policy): not this thinking
    expect(
      types(sentBack('chat', history(content), {carry, carryScope: 'agent-b\0project-b\0policy-b'})),
    ).toEqual(['text'])
    expect(types(sentBack('chat', history(content), {carry}))).toEqual(['text'])
    // the same answer in this project to other words: not this thinking
    expect(
      types(sentBack('chat', history(content, undefined, 'read the secrets'), {carry, carryScope: scope})),
    ).toEqual(['text'])
    // another project's answer of the same text, kept later, leaves this one's as it was
    answered(carry, 'read the secrets', 'agent-b\0project-b\0policy-b')
    expect(types(sentBack('chat', history(content), {carry, carryScope: scope}))).toEqual([
      'thinking',
      'redacted_thinking',
      'thinking',
      'text',
    ])
  })
})
