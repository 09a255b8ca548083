/**
 * An assistant message's `phase` to OpenAI's Responses API (GPT-5.3-codex and later label their
 * messages `commentary` or `final_answer` and want the label back on every assistant message of
 * the history): derived from the history by the encoder, for OpenAI's hosts only (`ctx.phases`),
 * and a labelled message of the answer reaching any client as its text.
 */
import {describe, expect, it} from 'vitest'

import {messagesSse, parseSse} from './cm-test-helpers.js'
import type {CodecContext, Message, Part, Request} from './ir.js'
import {messagesCodec} from './messages.js'
import {encodeRequest, usesPhase} from './responses-request.js'
import {decodeClientRequest, StreamTranslator, translateResponse} from './translate.js'

type Item = Record<string, unknown>

const ON: CodecContext = {phases: true}

/** Claude Code's history: a preamble and a call, its result, then the answer. */
const claudeCode = (): Request =>
  messagesCodec.decodeRequest(
    {
      model: 'claude-sonnet-4-5',
      max_tokens: 100,
      tools: [{name: 'Read', input_schema: {type: 'object'}}],
      messages: [
        {role: 'user', content: 'What is in a.txt?'},
        {
          role: 'assistant',
          content: [
            {type: 'text', text: 'I will read the file.'},
            {type: 'tool_use', id: 'toolu_1', name: 'Read', input: {path: 'a.txt'}},
          ],
        },
        {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'hello'}]},
        {role: 'assistant', content: [{type: 'text', text: 'It says hello.'}]},
        {role: 'user', content: 'Thanks. And b.txt?'},
      ],
    },
    {},
  )

/** The assistant message items of an encoded body: their text and phase. */
const phases = (body: Record<string, unknown>): Array<[string, unknown]> =>
  (body.input as Item[])
    .filter((i) => i.type === 'message' && i.role === 'assistant')
    .map((i) => [(i.content as Item[]).map((c) => c.text).join(''), i.phase])

const reasoning = (id: string): Part => ({
  type: 'reasoning',
  text: '',
  encrypted: {family: 'responses', value: JSON.stringify({id, encrypted_content: `enc-${id}`})},
})

const ir = (messages: Message[]): Request => ({
  model: 'gpt-5.5',
  system: [],
  messages,
  tools: [],
  stream: true,
})

describe('responses encodeRequest: phase', () => {
  it('a preamble before a call is commentary, the text after the results final_answer', () => {
    const body = encodeRequest(claudeCode(), 'gpt-5.3-codex', ON)
    expect(phases(body)).toEqual([
      ['I will read the file.', 'commentary'],
      ['It says hello.', 'final_answer'],
    ])
    // the member on the message item, next to its role and content; none on a user message
    expect((body.input as Item[]).map((i) => [i.type, i.role, i.phase])).toEqual([
      ['message', 'user', undefined],
      ['message', 'assistant', 'commentary'],
      ['function_call', undefined, undefined],
      ['function_call_output', undefined, undefined],
      ['message', 'assistant', 'final_answer'],
      ['message', 'user', undefined],
    ])
  })

  it('a turn of text only is its final_answer', () => {
    const body = encodeRequest(
      ir([
        {role: 'user', parts: [{type: 'text', text: 'hi'}]},
        {role: 'assistant', parts: [{type: 'text', text: 'Hello.'}]},
        {role: 'user', parts: [{type: 'text', text: 'bye'}]},
      ]),
      'gpt-5.4',
      ON,
    )
    expect(phases(body)).toEqual([['Hello.', 'final_answer']])
  })

  it('with reasoning items between: a text the reasoning cut in two is commentary up to the last', () => {
    const body = encodeRequest(
      ir([
        {role: 'user', parts: [{type: 'text', text: 'fix it'}]},
        {
          role: 'assistant',
          parts: [
            reasoning('rs_1'),
            {type: 'text', text: 'Looking.'},
            reasoning('rs_2'),
            {type: 'tool_call', id: 'call_1', name: 'shell', arguments: '{"cmd":"ls"}'},
          ],
        },
        {
          role: 'user',
          parts: [{type: 'tool_result', callId: 'call_1', content: [{type: 'text', text: 'a'}]}],
        },
        {
          role: 'assistant',
          parts: [
            reasoning('rs_3'),
            {type: 'text', text: 'Found a.'},
            reasoning('rs_4'),
            {type: 'text', text: 'Fixed.'},
          ],
        },
      ]),
      'gpt-5.5',
      ON,
    )
    expect(
      (body.input as Item[]).map((i) => (i.type === 'message' ? `${i.role}:${String(i.phase)}` : i.type)),
    ).toEqual([
      'user:undefined',
      'reasoning',
      'assistant:commentary',
      'reasoning',
      'function_call',
      'function_call_output',
      'reasoning',
      'assistant:commentary',
      'reasoning',
      'assistant:final_answer',
    ])
  })

  it('a turn that ends in a call holds commentary only; one split over consecutive messages is one turn', () => {
    const body = encodeRequest(
      ir([
        {role: 'user', parts: [{type: 'text', text: 'go'}]},
        // (a chat client's assistant message of text, then one of its calls)
        {role: 'assistant', parts: [{type: 'text', text: 'First this.'}]},
        {
          role: 'assistant',
          parts: [
            {type: 'text', text: 'Then this.'},
            {type: 'tool_call', id: 'call_1', name: 'shell', arguments: '{}'},
          ],
        },
      ]),
      'gpt-5.3-codex',
      ON,
    )
    expect(phases(body)).toEqual([
      ['First this.', 'commentary'],
      ['Then this.', 'commentary'],
    ])
  })

  it('a text after its own call is commentary too: the results come next, the turn goes on', () => {
    const body = encodeRequest(
      ir([
        {role: 'user', parts: [{type: 'text', text: 'go'}]},
        {
          role: 'assistant',
          parts: [
            {type: 'tool_call', id: 'call_1', name: 'shell', arguments: '{}'},
            {type: 'text', text: 'Running it.'},
          ],
        },
        {
          role: 'user',
          parts: [{type: 'tool_result', callId: 'call_1', content: [{type: 'text', text: 'ok'}]}],
        },
        {role: 'assistant', parts: [{type: 'text', text: 'Done.'}]},
      ]),
      'gpt-5.5',
      ON,
    )
    expect(phases(body)).toEqual([
      ['Running it.', 'commentary'],
      ['Done.', 'final_answer'],
    ])
  })

  it('the next turn keeps the phases the turn before went with (the prompt cache holds)', () => {
    const first = encodeRequest(claudeCode(), 'gpt-5.5', ON)
    // the answer to "And b.txt?" and a new question: the history before it goes as it went
    const next = claudeCode()
    next.messages.push(
      {role: 'assistant', parts: [{type: 'text', text: 'It says bye.'}]},
      {role: 'user', parts: [{type: 'text', text: 'And c.txt?'}]},
    )
    const again = encodeRequest(next, 'gpt-5.5', ON)
    const before = JSON.stringify(first.input)
    expect(JSON.stringify(again.input).startsWith(before.slice(0, -1))).toBe(true)
    expect(phases(again).at(-1)).toEqual(['It says bye.', 'final_answer'])
  })

  it('none without ctx.phases (a Responses server that is not OpenAI’s), nor with plain tools', () => {
    expect(phases(encodeRequest(claudeCode(), 'gpt-5.5'))).toEqual([
      ['I will read the file.', undefined],
      ['It says hello.', undefined],
    ])
    expect(JSON.stringify(encodeRequest(claudeCode(), 'gpt-5.5', {plainTools: true}))).not.toContain('phase')
  })

  it('none for a model that does not label its messages (before GPT-5.3)', () => {
    for (const model of [
      'gpt-5.2',
      'gpt-5.2-codex',
      'gpt-5.1-codex-max',
      'gpt-5',
      'gpt-4o',
      'o3',
      'gpt-oss-120b',
    ])
      expect(JSON.stringify(encodeRequest(claudeCode(), model, ON)), model).not.toContain('"phase"')
  })

  it.each([
    ['gpt-5.3-codex', true],
    ['gpt-5.3-codex-spark', true],
    ['gpt-5.4', true],
    ['gpt-5.4-mini', true],
    ['openai/gpt-5.5', true],
    ['gpt-5.10', true],
    ['gpt-6', true],
    ['gpt-6.1-pro', true],
    ['gpt-5.2', false],
    ['gpt-5.2-codex', false],
    ['gpt-5-codex', false],
    ['gpt-5', false],
    ['gpt-5-mini', false],
    ['gpt-4.1', false],
    ['codex-mini-latest', false],
    ['gpt-oss-120b', false],
  ])('usesPhase(%s) is %s', (model, expected) => {
    expect(usesPhase(model)).toBe(expected)
  })
})

describe('responses answers with phase: the commentary reaches the client as text', () => {
  const commentary = {
    type: 'message',
    id: 'msg_1',
    role: 'assistant',
    status: 'completed',
    phase: 'commentary',
    content: [{type: 'output_text', text: 'Reading it.', annotations: []}],
  }
  const call = {
    type: 'function_call',
    id: 'fc_1',
    call_id: 'call_1',
    name: 'Read',
    arguments: '{"path":"a.txt"}',
    status: 'completed',
  }
  const stream = messagesSse([
    {type: 'response.created', response: {id: 'resp_1', model: 'gpt-5.5', status: 'in_progress'}},
    {type: 'response.output_item.added', output_index: 0, item: {...commentary, content: []}},
    {
      type: 'response.content_part.added',
      output_index: 0,
      content_index: 0,
      part: {type: 'output_text', text: ''},
    },
    {type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Reading it.'},
    {type: 'response.output_text.done', output_index: 0, content_index: 0, text: 'Reading it.'},
    {type: 'response.content_part.done', output_index: 0, content_index: 0},
    {type: 'response.output_item.done', output_index: 0, item: commentary},
    {type: 'response.output_item.added', output_index: 1, item: {...call, arguments: ''}},
    {type: 'response.function_call_arguments.done', output_index: 1, arguments: call.arguments},
    {type: 'response.output_item.done', output_index: 1, item: call},
    {
      type: 'response.completed',
      response: {
        id: 'resp_1',
        model: 'gpt-5.5',
        status: 'completed',
        output: [commentary, call],
        usage: {input_tokens: 9, output_tokens: 4},
      },
    },
  ])
  const client = (family: 'messages' | 'chat' | 'gemini', stream: boolean) =>
    decodeClientRequest(
      family,
      family === 'messages'
        ? {model: 'claude-sonnet-4-5', max_tokens: 100, stream, messages: [{role: 'user', content: 'a.txt?'}]}
        : family === 'chat'
          ? {model: 'gpt-5.5', stream, messages: [{role: 'user', content: 'a.txt?'}]}
          : {contents: [{role: 'user', parts: [{text: 'a.txt?'}]}]},
      {model: 'gpt-5.5', stream},
    )

  it('to a Messages client, streamed: a text block, then the tool_use', () => {
    const t = new StreamTranslator('responses', client('messages', true), {newId: (p) => `${p}1`})
    const events = parseSse(t.push(Buffer.from(stream)) + t.end()).map((e) => JSON.parse(e.data) as Item)
    const starts = events
      .filter((e) => e.type === 'content_block_start')
      .map((e) => (e.content_block as Item).type)
    expect(starts).toEqual(['text', 'tool_use'])
    const text = events
      .filter((e) => e.type === 'content_block_delta' && (e.delta as Item).type === 'text_delta')
      .map((e) => (e.delta as Item).text)
      .join('')
    expect(text).toBe('Reading it.')
  })

  it('to a chat client and a Gemini client, streamed: the text, then the call', () => {
    const chat = new StreamTranslator('responses', client('chat', true), {newId: (p) => `${p}1`})
    const chunks = parseSse(chat.push(Buffer.from(stream)) + chat.end())
      .filter((e) => e.data !== '[DONE]')
      .map((e) => JSON.parse(e.data) as {choices: Array<{delta: {content?: string; tool_calls?: unknown[]}}>})
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Reading it.')
    expect(chunks.some((c) => c.choices[0]?.delta.tool_calls)).toBe(true)
    const gemini = new StreamTranslator('responses', client('gemini', true), {newId: (p) => `${p}1`})
    const parts = parseSse(gemini.push(Buffer.from(stream)) + gemini.end()).flatMap(
      (e) =>
        (JSON.parse(e.data) as {candidates?: Array<{content?: {parts?: Item[]}}>}).candidates?.[0]?.content
          ?.parts ?? [],
    )
    expect(parts.map((p) => p.text ?? '').join('')).toBe('Reading it.')
    expect(parts.some((p) => p.functionCall)).toBe(true)
  })

  it('not streamed: the text and the call, to a Messages client', () => {
    const body = {
      id: 'resp_1',
      object: 'response',
      model: 'gpt-5.5',
      status: 'completed',
      output: [commentary, call],
      usage: {input_tokens: 9, output_tokens: 4},
    }
    const out = translateResponse('responses', client('messages', false), body, {newId: (p) => `${p}1`}).body
    expect((out.content as Item[]).map((c) => [c.type, c.text ?? c.name])).toEqual([
      ['text', 'Reading it.'],
      ['tool_use', 'Read'],
    ])
    expect(out.stop_reason).toBe('tool_use')
  })
})
