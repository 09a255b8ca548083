/**
 * Images and documents inside tool results, moved out of them for a server that refuses them
 * there (Ollama's and LM Studio's `/v1/messages`, Responses servers that are not OpenAI's): to
 * right after the results of the same user turn (Messages) or in a user message right after the
 * run of outputs (Responses), the results keeping their text or a placeholder line.
 */
import {describe, expect, it} from 'vitest'

import {
  mayHoldMediaInResults,
  messagesHoldMediaInResults,
  messagesMediaOutOfResults,
  placeholder,
  responsesMediaOutOfOutputs,
  withMediaOutOfOutputs,
} from './media-out-of-results.js'

const png = (data: string, cache = false) => ({
  type: 'image',
  source: {type: 'base64', media_type: 'image/png', data},
  ...(cache ? {cache_control: {type: 'ephemeral'}} : {}),
})
const pdf = {type: 'document', source: {type: 'base64', media_type: 'application/pdf', data: 'JVBERi0='}}
const text = (t: string, cache = false) => ({
  type: 'text',
  text: t,
  ...(cache ? {cache_control: {type: 'ephemeral'}} : {}),
})
const result = (id: string, content: unknown, extra: Record<string, unknown> = {}) => ({
  type: 'tool_result',
  tool_use_id: id,
  content,
  ...extra,
})
const use = (id: string) => ({type: 'tool_use', id, name: 'Read', input: {file_path: `/tmp/${id}.png`}})

describe('messagesMediaOutOfResults', () => {
  it("Claude Code's Read of a PNG: the image right after the result, which gets the placeholder", () => {
    const messages = [
      {role: 'user', content: 'Look at the screenshot.'},
      {role: 'assistant', content: [use('toolu_1')]},
      {role: 'user', content: [result('toolu_1', [png('AAA')])]},
    ]
    expect(messagesMediaOutOfResults(messages)).toEqual([
      messages[0],
      messages[1],
      {role: 'user', content: [result('toolu_1', '[image attached below]'), png('AAA')]},
    ])
  })

  it("a result's text blocks stay (no placeholder); several results' media after the last result, in order, before the turn's own text", () => {
    const turn = {
      role: 'user',
      content: [
        result('a', [text('Read 1 image'), png('A1'), png('A2')], {is_error: false}),
        result('b', 'plain string result'),
        result('c', [pdf, text('page 1 of 1')]),
        text('Now fix it.'),
      ],
    }
    expect(messagesMediaOutOfResults([turn])).toEqual([
      {
        role: 'user',
        content: [
          result('a', [text('Read 1 image')], {is_error: false}),
          result('b', 'plain string result'),
          result('c', [text('page 1 of 1')]),
          png('A1'),
          png('A2'),
          pdf,
          text('Now fix it.'),
        ],
      },
    ])
  })

  it('cache marks: a moved image keeps its own, every other stays where it was', () => {
    const turn = {
      role: 'user',
      content: [result('a', [text('shot', true), png('X', true)], {cache_control: {type: 'ephemeral'}})],
    }
    expect(messagesMediaOutOfResults([turn])).toEqual([
      {
        role: 'user',
        content: [result('a', [text('shot', true)], {cache_control: {type: 'ephemeral'}}), png('X', true)],
      },
    ])
  })

  it('a document alone, and both kinds: their placeholders', () => {
    expect(placeholder([pdf])).toBe('[document attached below]')
    expect(placeholder([png('A'), pdf])).toBe('[image and document attached below]')
    expect(placeholder([{type: 'input_file'}])).toBe('[file attached below]')
  })

  it('nothing to move: the same array (and images in a user turn of their own stay)', () => {
    const messages = [
      {role: 'user', content: [text('see'), png('A')]},
      {role: 'assistant', content: [use('t')]},
      {role: 'user', content: [result('t', [text('ok')]), result('u', 'ok')]},
      {role: 'user', content: 'plain'},
    ]
    expect(messagesMediaOutOfResults(messages)).toBe(messages)
    expect(messagesHoldMediaInResults({messages})).toBe(false)
    expect(messagesHoldMediaInResults({messages: [{role: 'user', content: [result('t', [png('A')])]}]})).toBe(
      true,
    )
  })

  it('deterministic: the same history gives the same bytes, and the input is not changed', () => {
    const history = () => [
      {role: 'assistant', content: [use('a')]},
      {role: 'user', content: [result('a', [png('A', true), text('x')])]},
    ]
    const input = history()
    const once = JSON.stringify(messagesMediaOutOfResults(input))
    expect(JSON.stringify(messagesMediaOutOfResults(history()))).toBe(once)
    expect(input).toEqual(history())
  })
})

const image = (url: string) => ({type: 'input_image', image_url: url, detail: 'auto'})
const file = {type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0='}
const itext = (t: string) => ({type: 'input_text', text: t})
const call = (id: string) => ({type: 'function_call', call_id: id, name: 'view_image', arguments: '{}'})
const output = (id: string, out: unknown) => ({type: 'function_call_output', call_id: id, output: out})
const user = (t: string) => ({type: 'message', role: 'user', content: [itext(t)]})

describe('responsesMediaOutOfOutputs', () => {
  it("Codex's view_image: the output a placeholder string, a user message with the image right after it", () => {
    const input = [user('look'), call('c1'), output('c1', [image('data:image/png;base64,AAA')]), user('next')]
    expect(responsesMediaOutOfOutputs(input)).toEqual([
      user('look'),
      call('c1'),
      output('c1', '[image attached below]'),
      {type: 'message', role: 'user', content: [image('data:image/png;base64,AAA')]},
      user('next'),
    ])
  })

  it('parallel outputs: their texts as string outputs, their media in one message after the run, in order', () => {
    const input = [
      call('a'),
      call('b'),
      call('c'),
      output('a', [itext('Screenshot of'), itext('the page'), image('u1')]),
      output('b', 'plain'),
      output('c', [file, image('u2')]),
      {type: 'reasoning', id: 'rs_1', summary: []},
      call('d'),
      output('d', [image('u3')]),
    ]
    expect(responsesMediaOutOfOutputs(input)).toEqual([
      call('a'),
      call('b'),
      call('c'),
      output('a', 'Screenshot of\nthe page'),
      output('b', 'plain'),
      output('c', '[image and file attached below]'),
      {type: 'message', role: 'user', content: [image('u1'), file, image('u2')]},
      {type: 'reasoning', id: 'rs_1', summary: []},
      call('d'),
      output('d', '[image attached below]'),
      {type: 'message', role: 'user', content: [image('u3')]},
    ])
  })

  it('a part that is not text keeps the array; a custom tool output is read too', () => {
    const odd = {type: 'output_thing', x: 1}
    const input = [
      output('a', [odd, image('u')]),
      {type: 'custom_tool_call_output', call_id: 'b', output: [image('v')]},
    ]
    expect(responsesMediaOutOfOutputs(input)).toEqual([
      output('a', [odd]),
      {type: 'custom_tool_call_output', call_id: 'b', output: '[image attached below]'},
      {type: 'message', role: 'user', content: [image('u'), image('v')]},
    ])
  })

  it("an empty text left (a translated result's cache mark) is no text: the placeholder", () => {
    expect(responsesMediaOutOfOutputs([output('a', [image('u'), itext('')])])).toEqual([
      output('a', '[image attached below]'),
      {type: 'message', role: 'user', content: [image('u')]},
    ])
  })

  it('nothing to move: the same array', () => {
    const input = [call('a'), output('a', 'ok'), output('b', [itext('t')]), user('hi')]
    expect(responsesMediaOutOfOutputs(input)).toBe(input)
  })

  it('the body passed through: rewritten deterministically, undefined when nothing moves', () => {
    const body = (input: unknown[]) =>
      Buffer.from(JSON.stringify({model: 'm', instructions: 'x', input, tools: [], store: false}))
    const sent = body([call('a'), output('a', [image('data:image/png;base64,AAA')])])
    expect(mayHoldMediaInResults('responses', sent)).toBe(true)
    const again = withMediaOutOfOutputs(sent)!
    expect(JSON.parse(String(again))).toEqual({
      model: 'm',
      instructions: 'x',
      input: [
        call('a'),
        output('a', '[image attached below]'),
        {type: 'message', role: 'user', content: [image('data:image/png;base64,AAA')]},
      ],
      tools: [],
      store: false,
    })
    expect(withMediaOutOfOutputs(Buffer.from(sent))!.equals(again)).toBe(true)
    // an image in a user message, not in an output: as it came
    const own = body([{type: 'message', role: 'user', content: [image('u')]}, call('a'), output('a', 'ok')])
    expect(mayHoldMediaInResults('responses', own)).toBe(true)
    expect(withMediaOutOfOutputs(own)).toBeUndefined()
    expect(withMediaOutOfOutputs(Buffer.from('{not json "input_image" _call_output"'))).toBeUndefined()
    expect(mayHoldMediaInResults('messages', Buffer.from('{"messages":[{"type":"tool_result"}]}'))).toBe(
      false,
    )
    expect(
      mayHoldMediaInResults(
        'messages',
        Buffer.from('{"content":[{"type":"tool_result","content":[{"type":"image"}]}]}'),
      ),
    ).toBe(true)
  })
})
