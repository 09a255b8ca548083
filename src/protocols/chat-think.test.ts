/**
 * Reasoning that a chat upstream writes into `content` inside `<think>...</think>` (MiniMax M2's
 * OpenAI endpoint, reasoning models under llama.cpp, vLLM or Ollama without a reasoning parser,
 * DeepSeek-R1 distills): read as reasoning, stream and not, and sent back to a chat upstream the
 * same way.
 */
import {describe, expect, it} from 'vitest'

import {BoundedCarry} from './carry.js'
import {chatCodec} from './chat.js'
import {splitThink, tagStartAtEnd} from './cm-common.js'
import {chatChunk, chatSse, chatToolChunk, decodeAll, encodeAll, parseSse} from './cm-test-helpers.js'
import type {Message, Part, Request, StreamEvent} from './ir.js'
import {messagesCodec} from './messages.js'
import {responsesCodec} from './responses.js'

const chunk = chatChunk
const tc = chatToolChunk

/**
 * The events of a stream whose content comes in `pieces`: `templated`, after the role chunk most
 * servers send first (the decoder then reads the content chunks without a parse); else each
 * content chunk of a shape that is parsed.
 */
function stream(pieces: string[], templated: boolean, more: unknown[] = []): StreamEvent[] {
  const chunks = [
    ...(templated ? [chunk({role: 'assistant', content: ''})] : []),
    ...pieces.map((content) => chunk(templated ? {content} : {content, role: 'assistant'})),
    ...more,
    chunk({}, more.length ? 'tool_calls' : 'stop'),
    '[DONE]',
  ]
  return decodeAll(chatCodec.streamDecoder({}), chatSse(chunks))
}

/** A stream's blocks in order, each with its text and (reasoning) its signature value. */
function blocks(events: StreamEvent[]): Array<{kind: string; text: string; sig?: string}> {
  const out = new Map<number, {kind: string; text: string; sig?: string}>()
  for (const e of events) {
    if (e.type === 'block_start') out.set(e.index, {kind: e.block.type, text: ''})
    else if (e.type === 'text_delta' || e.type === 'reasoning_delta' || e.type === 'tool_args_delta')
      out.get(e.index)!.text += 'text' in e ? e.text : e.json
    else if (e.type === 'reasoning_opaque') out.get(e.index)!.sig = e.signature?.value
  }
  return [...out.values()]
}

const think = (text: string) => ({kind: 'reasoning', text, sig: 'think'})
const text = (t: string) => ({kind: 'text', text: t})

describe('<think> tags in a chat stream', () => {
  const cases: Array<[string, string[], ReturnType<typeof blocks>]> = [
    [
      "MiniMax M2's shape",
      ['<think>\nplan', ' more\n</think>\n\nAnswer'],
      [think('\nplan more\n'), text('Answer')],
    ],
    ['the open tag cut', ['<thi', 'nk>plan</think>Hi'], [think('plan'), text('Hi')]],
    [
      'the open tag cut a character at a time',
      ['<', 't', 'h', 'i', 'n', 'k', '>p</think>Hi'],
      [think('p'), text('Hi')],
    ],
    ['the close tag cut', ['<think>plan</th', 'ink>\n\nHi'], [think('plan'), text('Hi')]],
    ['the close tag cut after its <', ['<think>plan<', '/think>Hi'], [think('plan'), text('Hi')]],
    [
      'a < in the reasoning that is no tag',
      ['<think>a <', 'b </t', 'x</think>Hi'],
      [think('a <b </tx'), text('Hi')],
    ],
    ['white space before the tag', ['\n', '  <think>x</think>y'], [think('x'), text('y')]],
    [
      'line breaks after the close tag in chunks of their own',
      ['<think>x</think>', '\n', '\n', 'y'],
      [think('x'), text('y')],
    ],
    ['a close tag in the text after', ['<think>a</think>b</think>c'], [think('a'), text('b</think>c')]],
    ['empty reasoning', ['<think></think>\n\nHi'], [text('Hi')]],
    ['an answer cut inside the reasoning', ['<think>plan', ' </thi'], [think('plan </thi')]],
    ['text that holds the tag later', ['Use ', '<think> tags'], [text('Use <think> tags')]],
    ['text that starts with another tag', ['<b>bold</b>'], [text('<b>bold</b>')]],
    ['text that starts like the tag', ['<thi', 'ng>'], [text('<thing>')]],
    ['white space, then text', ['\n\n', 'Hello'], [text('\n\nHello')]],
    ['the start of the tag, then the end', ['<thi'], [text('<thi')]],
    [
      'a close tag without an open one (its template opened it: the tag left out, chat-prompt-think.test.ts)',
      ['plan</think>\n\nHi'],
      [text('planHi')],
    ],
  ]
  for (const templated of [true, false])
    it.each(cases)(`%s (${templated ? 'read without a parse' : 'parsed'})`, (_name, pieces, expected) => {
      expect(blocks(stream(pieces, templated))).toEqual(expected)
    })

  it('gives the same events whatever the chunks, cut at any point', () => {
    const whole = '  \n<think>\nplan a < b </t\n</think>\n\nThe answer.'
    const expected = [think('\nplan a < b </t\n'), text('The answer.')]
    for (let i = 1; i < whole.length; i++)
      expect(blocks(stream([whole.slice(0, i), whole.slice(i)], true))).toEqual(expected)
    expect(blocks(stream([...whole], true))).toEqual(expected)
    expect(blocks(stream([...whole], false))).toEqual(expected)
  })

  it('closes the reasoning before a tool call, with no text block for the line breaks', () => {
    const events = stream(['<think>plan', '</think>\n\n'], true, [
      tc(0, {name: 'f', arguments: '{}'}, 'call_1'),
    ])
    expect(blocks(events)).toEqual([think('plan'), {kind: 'tool_call', text: '{}'}])
    expect(events.at(-2)).toEqual({type: 'stop', reason: 'tool_use'})
  })

  it('hands a held tag start on as reasoning when a tool call comes before the rest', () => {
    const events = stream(['<think>plan</th'], true, [tc(0, {name: 'f', arguments: '{}'}, 'call_1')])
    expect(blocks(events)).toEqual([think('plan</th'), {kind: 'tool_call', text: '{}'}])
  })

  it('leaves reasoning_content as it was, and content after it as text', () => {
    const events = decodeAll(
      chatCodec.streamDecoder({}),
      chatSse([chunk({reasoning_content: 'r'}), chunk({content: '<b>x'}), chunk({}, 'stop'), '[DONE]']),
    )
    expect(blocks(events)).toEqual([{kind: 'reasoning', text: 'r', sig: ''}, text('<b>x')])
  })
})

describe('<think> tags in a JSON answer', () => {
  const answer = (content: unknown): Part[] =>
    chatCodec.decodeResponse({
      id: 'x',
      model: 'm',
      choices: [{index: 0, message: {role: 'assistant', content}, finish_reason: 'stop'}],
    }).parts
  const reasoning = (t: string): Part => ({
    type: 'reasoning',
    text: t,
    signature: {family: 'chat', value: 'think'},
  })
  const plain = (t: string): Part => ({type: 'text', text: t})
  it.each([
    ['<think>\nplan\n</think>\n\nAnswer', [reasoning('\nplan\n'), plain('Answer')]],
    ['\n <think>plan</think>Answer', [reasoning('plan'), plain('Answer')]],
    ['<think>cut off', [reasoning('cut off')]],
    ['<think></think>Answer', [plain('Answer')]],
    ['<think>a</think>b</think>', [reasoning('a'), plain('b</think>')]],
    ['Use <think> tags', [plain('Use <think> tags')]],
    // (the prompt opened the tag: chat-prompt-think.test.ts)
    ['plan</think>Answer', [reasoning('plan'), plain('Answer')]],
    [
      [
        {type: 'text', text: '<think>p</think>'},
        {type: 'text', text: 'A'},
      ],
      [reasoning('p'), plain('A')],
    ],
  ] as Array<[unknown, Part[]]>)('%j', (content, parts) => {
    expect(answer(content)).toEqual(parts)
  })

  it('splits as the stream does', () => {
    expect(splitThink('<think>x</think>\n\ny')).toEqual({reasoning: 'x', text: 'y'})
    expect(splitThink('x<think>')).toBeUndefined()
    expect([
      tagStartAtEnd('ab</th', '</think>'),
      tagStartAtEnd('ab<', '</think>'),
      tagStartAtEnd('ab', '</think>'),
    ]).toEqual([4, 1, 0])
  })
})

const request = (assistant: Part[]): Request => ({
  model: 'm',
  system: [],
  tools: [],
  stream: false,
  messages: [
    {role: 'user', parts: [{type: 'text', text: 'hi'}]},
    {role: 'assistant', parts: assistant},
    {role: 'user', parts: [{type: 'text', text: 'more'}]},
  ],
})
const sentAssistant = (assistant: Part[]): Record<string, unknown> =>
  (chatCodec.encodeRequest(request(assistant), 'up').messages as Array<Record<string, unknown>>)[1]

describe('<think> reasoning sent back to a chat upstream', () => {
  const thought = (t: string): Part => ({
    type: 'reasoning',
    text: t,
    signature: {family: 'chat', value: 'think'},
  })
  const call: Part = {type: 'tool_call', id: 'call_1', name: 'f', arguments: '{"a":1}'}
  it.each([
    [
      'before the text',
      [thought('\nplan\n'), {type: 'text', text: 'Answer'}],
      {content: '<think>\nplan\n</think>\n\nAnswer'},
    ],
    [
      'with a tool call and no text',
      [thought('plan'), call],
      {
        content: '<think>plan</think>\n\n',
        tool_calls: [{id: 'call_1', type: 'function', function: {name: 'f', arguments: '{"a":1}'}}],
      },
    ],
    [
      'as reasoning_content when it came so',
      [
        {type: 'reasoning', text: 'r', signature: {family: 'chat', value: ''}},
        {type: 'text', text: 'A'},
      ],
      {content: 'A', reasoning_content: 'r'},
    ],
    [
      "never another family's reasoning",
      [
        {type: 'reasoning', text: 'claude', signature: {family: 'messages', value: 'SIG'}},
        {type: 'reasoning', text: 'gemini', signature: {family: 'gemini', value: 'think'}},
        {type: 'reasoning', text: 'unsigned'},
        {type: 'text', text: 'A'},
      ],
      {content: 'A'},
    ],
  ] as Array<[string, Part[], Record<string, unknown>]>)('%s', (_name, parts, expected) => {
    expect(sentAssistant(parts)).toEqual({role: 'assistant', ...expected})
  })

  it('gives back the content the upstream wrote (the same bytes on every request)', () => {
    for (const content of ['<think>\nplan\n</think>\n\nAnswer', '<think>plan</think>\n\nA </think>'])
      expect(sentAssistant(chatCodec.decodeResponse({choices: [{message: {content}}]}).parts).content).toBe(
        content,
      )
  })
})

describe('<think> reasoning through clients of other families', () => {
  const upstream = chatSse([
    chunk({role: 'assistant', content: ''}),
    chunk({content: '<thi'}),
    chunk({content: 'nk>\nplan\n</th'}),
    chunk({content: 'ink>\n\n'}),
    tc(0, {name: 'f', arguments: '{}'}, 'call_1'),
    chunk({}, 'tool_calls'),
    '[DONE]',
  ])
  const events = (): StreamEvent[] => decodeAll(chatCodec.streamDecoder({}), upstream)
  const result: Message = {
    role: 'user',
    parts: [{type: 'tool_result', callId: 'call_1', content: [{type: 'text', text: 'ok'}]}],
  }
  const toUpstream = (messages: Message[]) =>
    (
      chatCodec.encodeRequest({model: 'm', system: [], tools: [], stream: false, messages}, 'up')
        .messages as Array<Record<string, unknown>>
    )[0]

  it('a Messages client gets a thinking block it sends back, which goes as <think> again', () => {
    const sse = encodeAll(messagesCodec.streamEncoder({}), events())
    const thinking = parseSse(sse)
      .map((e) => JSON.parse(e.data) as Record<string, any>)
      .filter((p) => p.type === 'content_block_delta' && p.index === 0)
    expect(thinking.map((p) => p.delta)).toEqual([
      {type: 'thinking_delta', thinking: '\nplan\n'},
      {type: 'signature_delta', signature: 'gwx1.chat.think'},
    ])
    const turn = messagesCodec.decodeRequest(
      {
        model: 'claude',
        max_tokens: 10,
        messages: [
          {
            role: 'assistant',
            content: [
              {type: 'thinking', thinking: '\nplan\n', signature: 'gwx1.chat.think'},
              {type: 'tool_use', id: 'call_1', name: 'f', input: {}},
            ],
          },
          {role: 'user', content: [{type: 'tool_result', tool_use_id: 'call_1', content: 'ok'}]},
        ],
      },
      {},
    )
    expect(toUpstream(turn.messages).content).toBe('<think>\nplan\n</think>\n\n')
  })

  it('a Responses client gets a reasoning summary whose encrypted_content brings it back as <think>', () => {
    const sse = encodeAll(responsesCodec.streamEncoder({}), events())
    const done = parseSse(sse)
      .map((e) => JSON.parse(e.data) as Record<string, any>)
      .find((p) => p.type === 'response.output_item.done' && p.item.type === 'reasoning')!
    expect(done.item).toMatchObject({
      summary: [{type: 'summary_text', text: '\nplan\n'}],
      encrypted_content: 'gwx1.chat.think',
    })
    const turn = responsesCodec.decodeRequest(
      {
        model: 'gpt',
        input: [
          done.item,
          {type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}'},
          {type: 'function_call_output', call_id: 'call_1', output: 'ok'},
        ],
      },
      {},
    )
    expect(toUpstream(turn.messages).content).toBe('<think>\nplan\n</think>\n\n')
  })

  it('a chat client gets reasoning_content, and the reasoning kept by its call goes back as <think>', () => {
    const carry = new BoundedCarry()
    const sse = encodeAll(chatCodec.streamEncoder({carry}), events())
    expect(sse).toContain('"reasoning_content":"\\nplan\\n"')
    expect(sse).not.toContain('<think>')
    const turn = chatCodec.decodeRequest(
      {
        model: 'm',
        messages: [
          {
            role: 'assistant',
            content: null,
            reasoning_content: '\nplan\n',
            tool_calls: [{id: 'call_1', type: 'function', function: {name: 'f', arguments: '{}'}}],
          },
          {role: 'tool', tool_call_id: 'call_1', content: 'ok'},
        ],
      },
      {carry},
    )
    expect(toUpstream([...turn.messages.slice(0, 1), result]).content).toBe('<think>\nplan\n</think>\n\n')
  })

  it('a Messages upstream is never sent the <think> reasoning', () => {
    const body = messagesCodec.encodeRequest(
      {
        model: 'm',
        system: [],
        tools: [],
        stream: false,
        messages: [
          {role: 'user', parts: [{type: 'text', text: 'hi'}]},
          {
            role: 'assistant',
            parts: [
              {type: 'reasoning', text: 'plan', signature: {family: 'chat', value: 'think'}},
              {type: 'text', text: 'A'},
            ],
          },
          {role: 'user', parts: [{type: 'text', text: 'more'}]},
        ],
      },
      'claude-sonnet-4-5',
    )
    expect(JSON.stringify(body)).not.toContain('plan')
  })
})
