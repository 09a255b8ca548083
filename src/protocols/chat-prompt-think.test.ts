/**
 * A chat template that opens `<think>` in the prompt (Qwen3's *-Thinking-2507, DeepSeek-R1-0528
 * under llama.cpp, vLLM or LM Studio without a reasoning parser): the answer's content is
 * `reasoning…</think>\n\nanswer`, with only the closing tag. Unlearned, a stream shows it as text
 * without the tag and says so (`thinkInPrompt: 'closed'`); learned (`thinkOpen`), the content is
 * reasoning up to the tag, stream and not.
 */
import {describe, expect, it} from 'vitest'

import {chatCodec} from './chat.js'
import {splitPromptThink} from './cm-common.js'
import {chatChunk, chatSse, chatToolChunk, decodeAll} from './cm-test-helpers.js'
import type {CodecContext, Part, StreamEvent} from './ir.js'

const chunk = chatChunk

/** Decodes a stream of content `pieces` (`templated`: after the role chunk, read without a parse). */
function stream(pieces: string[], ctx: CodecContext, templated = true, more: unknown[] = []) {
  const decoder = chatCodec.streamDecoder(ctx)
  const events = decodeAll(
    decoder,
    chatSse([
      ...(templated ? [chunk({role: 'assistant', content: ''})] : []),
      ...pieces.map((content) => chunk(templated ? {content} : {content, role: 'assistant'})),
      ...more,
      chunk({}, more.length ? 'tool_calls' : 'stop'),
      '[DONE]',
    ]),
  )
  return {events, seen: decoder.thinkInPrompt}
}

function blocks(events: StreamEvent[]): Array<{kind: string; text: string; sig?: string}> {
  const out = new Map<number, {kind: string; text: string; sig?: string}>()
  for (const e of events) {
    if (e.type === 'block_start') out.set(e.index, {kind: e.block.type, text: ''})
    else if (e.type === 'text_delta' || e.type === 'reasoning_delta') out.get(e.index)!.text += e.text
    else if (e.type === 'tool_args_delta') out.get(e.index)!.text += e.json
    else if (e.type === 'reasoning_opaque') out.get(e.index)!.sig = e.signature?.value
  }
  return [...out.values()]
}

const think = (text: string) => ({kind: 'reasoning', text, sig: 'think'})
const text = (t: string) => ({kind: 'text', text: t})
const learned: CodecContext = {thinkOpen: true}

describe('a lone </think> in a stream, not learned', () => {
  const cases: Array<[string, string[], ReturnType<typeof blocks>, 'closed' | undefined]> = [
    [
      "Qwen3-Thinking's shape",
      ['Let me', ' add.\n', '</think>\n\n', '391'],
      [text('Let me add.\n391')],
      'closed',
    ],
    ['the tag cut across chunks', ['plan', '</th', 'ink>', '\n\nHi'], [text('planHi')], 'closed'],
    ['the tag cut at its <', ['plan<', '/think>\n', '\nHi'], [text('planHi')], 'closed'],
    ['the tag and the text in one chunk', ['plan</think>\n\nHi there'], [text('planHi there')], 'closed'],
    ['a < that is no tag', ['a < b', ' </t', 'x'], [text('a < b </tx')], undefined],
    [
      'the tag in a code fence (words about it)',
      ['Strip it:\n```\n', 'reasoning</think>\n', '```\ndone'],
      [text('Strip it:\n```\nreasoning</think>\n```\ndone')],
      undefined,
    ],
    [
      'the tag in inline code',
      ['Qwen ends its reasoning with `</think>` and ', 'then answers.'],
      [text('Qwen ends its reasoning with `</think>` and then answers.')],
      undefined,
    ],
    ['the tag quoted', ['split on "</think>" first'], [text('split on "</think>" first')], undefined],
    [
      'an open tag before it',
      ['Use <think>', 'x</think> tags'],
      [text('Use <think>x</think> tags')],
      undefined,
    ],
    [
      'a fence closed before the tag',
      ['```\ncode\n```\nso', '</think>\n\nHi'],
      [text('```\ncode\n```\nsoHi')],
      'closed',
    ],
    ['a held tag start at the end', ['plan</thi'], [text('plan</thi')], undefined],
  ]
  for (const templated of [true, false])
    it.each(cases)(`%s (${templated ? 'read without a parse' : 'parsed'})`, (_n, pieces, expected, seen) => {
      const got = stream(pieces, {}, templated)
      expect(blocks(got.events)).toEqual(expected)
      expect(got.seen).toBe(seen)
    })

  it('leaves no piece of the tag in the text, cut at any point', () => {
    const whole = 'I should add 17 and 23.\n</think>\n\nThe answer is 40.'
    for (let i = 1; i < whole.length; i++) {
      const got = stream([whole.slice(0, i), whole.slice(i)], {})
      expect(blocks(got.events)).toEqual([text('I should add 17 and 23.\nThe answer is 40.')])
      expect(got.seen).toBe('closed')
    }
    expect(blocks(stream([...whole], {}, false).events)).toEqual([
      text('I should add 17 and 23.\nThe answer is 40.'),
    ])
  })

  it('streams the text before the tag as it comes (nothing held back)', () => {
    const decoder = chatCodec.streamDecoder({})
    decoder.event(undefined, JSON.stringify(chunk({role: 'assistant', content: ''})))
    const first = decoder.event(undefined, JSON.stringify(chunk({content: 'Thinking a'})))
    expect(first.filter((e) => e.type === 'text_delta')).toEqual([
      {type: 'text_delta', index: 0, text: 'Thinking a'},
    ])
  })
})

describe('a learned template that opens <think> in the prompt', () => {
  for (const templated of [true, false]) {
    const how = templated ? 'read without a parse' : 'parsed'
    it(`reads the content as reasoning up to </think>, then text (${how})`, () => {
      const got = stream(['Let me', ' add.\n', '</th', 'ink>\n\n', '3', '91'], learned, templated)
      expect(blocks(got.events)).toEqual([think('Let me add.\n'), text('391')])
      expect(got.seen).toBeUndefined()
    })

    it(`closes the reasoning and gives its text as the answer too when no </think> comes (${how})`, () => {
      const got = stream(['Just ', 'the answer.'], learned, templated)
      expect(blocks(got.events)).toEqual([think('Just the answer.'), text('Just the answer.')])
      expect(got.seen).toBe('unclosed')
    })

    it(`keeps an answer that opens <think> itself as before (${how})`, () => {
      const got = stream(['<think>plan</think>\n\nHi'], learned, templated)
      expect(blocks(got.events)).toEqual([think('plan'), text('Hi')])
      expect(got.seen).toBeUndefined()
    })
  }

  it('holds a tag start cut at the end of an unclosed answer as its text', () => {
    const got = stream(['answer </th'], learned)
    expect(blocks(got.events)).toEqual([think('answer </th'), text('answer </th')])
  })

  it('gives unclosed reasoning as text before a tool call', () => {
    const got = stream(['I will call f.'], learned, true, [
      chatToolChunk(0, {name: 'f', arguments: '{}'}, 'c'),
    ])
    expect(blocks(got.events)).toEqual([
      think('I will call f.'),
      text('I will call f.'),
      {kind: 'tool_call', text: '{}'},
    ])
  })

  it('closes reasoning, then a tool call, with no text for the line breaks', () => {
    const got = stream(['plan</think>\n\n'], learned, true, [
      chatToolChunk(0, {name: 'f', arguments: '{}'}, 'c'),
    ])
    expect(blocks(got.events)).toEqual([think('plan'), {kind: 'tool_call', text: '{}'}])
  })

  it('reads content after a reasoning field as text (the server parsed the reasoning)', () => {
    const events = decodeAll(
      chatCodec.streamDecoder(learned),
      chatSse([chunk({reasoning_content: 'r'}), chunk({content: 'Hi'}), chunk({}, 'stop'), '[DONE]']),
    )
    expect(blocks(events)).toEqual([{kind: 'reasoning', text: 'r', sig: ''}, text('Hi')])
  })

  it('reads a long stream of templated chunks the same as parsed ones', () => {
    const pieces = [...Array.from({length: 200}, (_, i) => `step ${i}. `), '</think>\n\n', ...'The answer.']
    const expected = [think(Array.from({length: 200}, (_, i) => `step ${i}. `).join('')), text('The answer.')]
    expect(blocks(stream(pieces, learned, true).events)).toEqual(expected)
    expect(blocks(stream(pieces, learned, false).events)).toEqual(expected)
  })
})

describe('a lone </think> in a JSON answer', () => {
  const decode = (content: unknown, ctx: CodecContext = {}) =>
    chatCodec.decodeResponse(
      {
        id: 'x',
        model: 'm',
        choices: [{index: 0, message: {role: 'assistant', content}, finish_reason: 'stop'}],
      },
      ctx,
    )
  const reasoning = (t: string): Part => ({
    type: 'reasoning',
    text: t,
    signature: {family: 'chat', value: 'think'},
  })
  const plain = (t: string): Part => ({type: 'text', text: t})

  it('splits it, and says the model closed a tag it never opened', () => {
    const r = decode('Let me add.\n</think>\n\n391')
    expect(r.parts).toEqual([reasoning('Let me add.\n'), plain('391')])
    expect(r.thinkInPrompt).toBe('closed')
  })

  it.each([
    ['in a code fence', 'Strip it:\n```\nreasoning</think>\n```\ndone'],
    ['in inline code', 'It ends with `</think>` then answers.'],
    ['quoted', "split on '</think>' first"],
    ['after an open tag', 'Use <think> and </think> tags.'],
  ])('leaves the tag %s as text', (_n, content) => {
    const r = decode(content)
    expect(r.parts).toEqual([plain(content)])
    expect(r.thinkInPrompt).toBeUndefined()
  })

  it('reads a learned model’s content as reasoning up to </think>', () => {
    const r = decode('plan</think>\n\nHi', learned)
    expect(r.parts).toEqual([reasoning('plan'), plain('Hi')])
    expect(r.thinkInPrompt).toBeUndefined()
  })

  it('gives a learned model’s content without </think> as reasoning and as text', () => {
    const r = decode('Just the answer.', learned)
    expect(r.parts).toEqual([reasoning('Just the answer.'), plain('Just the answer.')])
    expect(r.thinkInPrompt).toBe('unclosed')
  })

  it('reads a learned model’s content as the answer when the server gave the reasoning apart', () => {
    const r = chatCodec.decodeResponse(
      {
        id: 'x',
        model: 'm',
        choices: [
          {
            index: 0,
            message: {role: 'assistant', reasoning_content: 'plan', content: 'Hi'},
            finish_reason: 'stop',
          },
        ],
      },
      learned,
    )
    expect(r.parts.map((p) => [p.type, (p as {text?: string}).text])).toEqual([
      ['reasoning', 'plan'],
      ['text', 'Hi'],
    ])
    expect(r.thinkInPrompt).toBeUndefined()
  })

  it('keeps a learned model’s answer that opens <think> itself as before', () => {
    expect(decode('<think>p</think>A', learned).parts).toEqual([reasoning('p'), plain('A')])
  })

  it('splits as the stream does', () => {
    expect(splitPromptThink('a</think> b', false)).toEqual({reasoning: 'a', text: 'b', unclosed: false})
    expect(splitPromptThink('`</think>` a</think>b', false)).toEqual({
      reasoning: '`</think>` a',
      text: 'b',
      unclosed: false,
    })
    expect(splitPromptThink('no tag', false)).toBeUndefined()
  })
})
