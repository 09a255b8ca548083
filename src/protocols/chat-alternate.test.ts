/**
 * The chat encoder's messages alternate: successive user messages (two user turns of Claude Code,
 * two user turns left together once a thinking-only turn of another vendor is dropped) go as one,
 * successive assistant messages too, and an assistant message of whitespace only is left out;
 * DeepSeek and the strict chat templates (Gemma, Mistral) refuse the history otherwise. A history
 * that alternates goes as it did.
 */
import {describe, expect, it} from 'vitest'

import {alternatingMessages, chatCodec, roleRuns, systemFirstMessages} from './chat.js'
import type {Message, Request} from './ir.js'
import {messagesCodec} from './messages.js'

const PNG = 'iVBORw0KGgo='

/** The chat messages a Messages client's conversation becomes for `model`. */
const fromMessages = (messages: unknown[], model = 'deepseek-reasoner'): Array<Record<string, unknown>> =>
  chatCodec.encodeRequest(
    messagesCodec.decodeRequest({model: 'claude-opus-4-8', max_tokens: 100, messages}, {}),
    model,
  ).messages as Array<Record<string, unknown>>

const request = (messages: Message[]): Request => ({
  model: null,
  system: [],
  messages,
  tools: [],
  stream: false,
})
const encode = (messages: Message[]) =>
  chatCodec.encodeRequest(request(messages), 'deepseek-chat').messages as Array<Record<string, unknown>>

describe('successive user messages', () => {
  it('two user turns in a row go as one message, their texts a blank line apart', () => {
    expect(
      fromMessages([
        {role: 'user', content: 'Fix the test.'},
        {role: 'user', content: [{type: 'text', text: 'Run it first.'}]},
        {role: 'assistant', content: 'Done.'},
        {role: 'user', content: 'Thanks.'},
      ]),
    ).toEqual([
      {role: 'user', content: 'Fix the test.\n\nRun it first.'},
      {role: 'assistant', content: 'Done.'},
      {role: 'user', content: 'Thanks.'},
    ])
  })

  it('a thinking-only turn of another vendor is dropped and the user turns around it merge', () => {
    expect(
      fromMessages([
        {role: 'user', content: 'hi'},
        {role: 'assistant', content: [{type: 'thinking', thinking: 'The user greets.', signature: 'sig-a'}]},
        {role: 'user', content: 'again'},
      ]),
    ).toEqual([{role: 'user', content: 'hi\n\nagain'}])
  })

  it('an assistant turn of whitespace only is left out, and the user turns around it merge', () => {
    expect(
      fromMessages([
        {role: 'user', content: 'one'},
        {role: 'assistant', content: [{type: 'text', text: ' \n\n '}]},
        {role: 'user', content: 'two'},
      ]),
    ).toEqual([{role: 'user', content: 'one\n\ntwo'}])
  })

  it('an image stays, between the texts, in order', () => {
    expect(
      fromMessages([
        {
          role: 'user',
          content: [
            {type: 'text', text: 'Look:'},
            {type: 'image', source: {type: 'base64', media_type: 'image/png', data: PNG}},
          ],
        },
        {role: 'user', content: 'What is it?'},
      ]),
    ).toEqual([
      {
        role: 'user',
        content: [
          {type: 'text', text: 'Look:'},
          {type: 'image_url', image_url: {url: `data:image/png;base64,${PNG}`}},
          {type: 'text', text: 'What is it?'},
        ],
      },
    ])
  })

  it('tool messages are never merged; text after the results stays a user message of its own', () => {
    const out = fromMessages([
      {role: 'user', content: 'List both.'},
      {
        role: 'assistant',
        content: [
          {type: 'tool_use', id: 'toolu_1', name: 'ls', input: {}},
          {type: 'tool_use', id: 'toolu_2', name: 'ls', input: {path: 'src'}},
        ],
      },
      {
        role: 'user',
        content: [
          {type: 'tool_result', tool_use_id: 'toolu_1', content: 'a'},
          {type: 'tool_result', tool_use_id: 'toolu_2', content: 'b'},
          {type: 'text', text: 'Also this.'},
        ],
      },
      {role: 'user', content: 'And this.'},
    ])
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user'])
    expect(out.at(-1)).toEqual({role: 'user', content: 'Also this.\n\nAnd this.'})
  })

  it('a merge gives the same bytes on the next turn (the prefix cache holds)', () => {
    const turn1 = [
      {role: 'user', content: 'hi'},
      {role: 'assistant', content: [{type: 'thinking', thinking: 'greeting', signature: 's'}]},
      {role: 'user', content: 'again'},
      {role: 'assistant', content: 'Hello.'},
      {role: 'user', content: 'next'},
    ]
    const turn2 = [...turn1, {role: 'assistant', content: 'Sure.'}, {role: 'user', content: 'more'}]
    const a = JSON.stringify(fromMessages(turn1))
    const b = JSON.stringify(fromMessages(turn2))
    expect(b.startsWith(a.slice(0, -1))).toBe(true)
  })

  it("Claude's cache marks (a chat relay of Claude) stay on the merged message's parts", () => {
    const out = fromMessages(
      [
        {role: 'user', content: [{type: 'text', text: 'a', cache_control: {type: 'ephemeral'}}]},
        {role: 'user', content: [{type: 'text', text: 'b', cache_control: {type: 'ephemeral'}}]},
      ],
      'anthropic/claude-sonnet-4.5',
    )
    expect(out).toEqual([
      {
        role: 'user',
        content: [
          {type: 'text', text: 'a', cache_control: {type: 'ephemeral'}},
          {type: 'text', text: 'b', cache_control: {type: 'ephemeral'}},
        ],
      },
    ])
  })
})

describe('successive assistant messages', () => {
  it('texts a blank line apart, tool calls one list, reasoning joined', () => {
    const out = encode([
      {role: 'user', parts: [{type: 'text', text: 'go'}]},
      {
        role: 'assistant',
        parts: [
          {type: 'reasoning', text: 'first', signature: {family: 'chat', value: ''}},
          {type: 'text', text: 'Looking.'},
        ],
      },
      {
        role: 'assistant',
        parts: [
          {type: 'reasoning', text: 'second', signature: {family: 'chat', value: ''}},
          {type: 'text', text: 'Reading.'},
          {type: 'tool_call', id: 'call_1', name: 'read', arguments: '{"p":"a"}'},
        ],
      },
      {role: 'user', parts: [{type: 'tool_result', callId: 'call_1', content: [{type: 'text', text: 'x'}]}]},
    ])
    expect(out).toEqual([
      {role: 'user', content: 'go'},
      {
        role: 'assistant',
        content: 'Looking.\n\nReading.',
        reasoning_content: 'first\n\nsecond',
        tool_calls: [{id: 'call_1', type: 'function', function: {name: 'read', arguments: '{"p":"a"}'}}],
      },
      {role: 'tool', tool_call_id: 'call_1', content: 'x'},
    ])
  })

  it('a turn of calls only after a turn of text: the text and the calls in one message', () => {
    const out = encode([
      {role: 'user', parts: [{type: 'text', text: 'go'}]},
      {role: 'assistant', parts: [{type: 'text', text: 'On it.'}]},
      {role: 'assistant', parts: [{type: 'tool_call', id: 'c1', name: 'ls', arguments: '{}'}]},
      {role: 'user', parts: [{type: 'tool_result', callId: 'c1', content: [{type: 'text', text: 'ok'}]}]},
    ])
    expect(out[1]).toEqual({
      role: 'assistant',
      content: 'On it.',
      tool_calls: [{id: 'c1', type: 'function', function: {name: 'ls', arguments: '{}'}}],
    })
  })

  it('whitespace with reasoning of its own stays (its reasoning goes back)', () => {
    const out = encode([
      {role: 'user', parts: [{type: 'text', text: 'go'}]},
      {
        role: 'assistant',
        parts: [
          {type: 'reasoning', text: 'hm', signature: {family: 'chat', value: ''}},
          {type: 'text', text: '\n\n'},
        ],
      },
      {role: 'user', parts: [{type: 'text', text: 'well?'}]},
    ])
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
  })
})

describe('a conversation that alternates', () => {
  it('goes as before: each message as its turn made it', () => {
    const messages = [
      {role: 'user', content: 'a'},
      {role: 'assistant', content: 'b'},
      {role: 'user', content: [{type: 'text', text: 'c'}]},
    ]
    expect(fromMessages(messages)).toEqual([
      {role: 'user', content: 'a'},
      {role: 'assistant', content: 'b'},
      {role: 'user', content: 'c'},
    ])
  })
})

describe("a chat client's own messages passed through, for an upstream that refused runs", () => {
  it('merges each run of user or assistant messages, never tool messages; the same array when they alternate', () => {
    const alternate = [
      {role: 'user', content: 'a'},
      {role: 'assistant', content: 'b'},
    ]
    expect(alternatingMessages(alternate)).toBe(alternate)
    const messages = [
      {role: 'user', content: 'a'},
      {role: 'user', content: 'b'},
      {role: 'assistant', content: [{type: 'text', text: 'c'}]},
      {role: 'assistant', content: null, tool_calls: [{id: 't1'}]},
      {role: 'tool', tool_call_id: 't1', content: 'x'},
      {role: 'tool', tool_call_id: 't2', content: 'y'},
    ]
    const copy = structuredClone(messages)
    expect(alternatingMessages(messages)).toEqual([
      {role: 'user', content: 'a\n\nb'},
      {role: 'assistant', content: [{type: 'text', text: 'c'}], tool_calls: [{id: 't1'}]},
      {role: 'tool', tool_call_id: 't1', content: 'x'},
      {role: 'tool', tool_call_id: 't2', content: 'y'},
    ])
    // (the client's objects are left as they were)
    expect(messages).toEqual(copy)
  })

  it("merges a run of system messages (opencode's plugins): strings a blank line apart, else the parts in order", () => {
    const messages = [
      {role: 'system', content: 'You are opencode.'},
      {role: 'system', content: '<EXTREMELY_IMPORTANT>You have superpowers.</EXTREMELY_IMPORTANT>'},
      {role: 'system', content: [{type: 'text', text: 'Env: linux', cache_control: {type: 'ephemeral'}}]},
      {role: 'user', content: 'hi'},
      {role: 'assistant', content: 'Hello.'},
      {role: 'system', content: 'a reminder'},
      {role: 'user', content: 'go on'},
    ]
    const copy = structuredClone(messages)
    expect(alternatingMessages(messages)).toEqual([
      {
        role: 'system',
        content: [
          {
            type: 'text',
            text: 'You are opencode.\n\n<EXTREMELY_IMPORTANT>You have superpowers.</EXTREMELY_IMPORTANT>',
          },
          {type: 'text', text: 'Env: linux', cache_control: {type: 'ephemeral'}},
        ],
      },
      {role: 'user', content: 'hi'},
      {role: 'assistant', content: 'Hello.'},
      // (one on its own between turns is no run: left where it is)
      {role: 'system', content: 'a reminder'},
      {role: 'user', content: 'go on'},
    ])
    expect(messages).toEqual(copy)
    // one system message: the same array
    const one = [messages[0], messages[3]]
    expect(alternatingMessages(one)).toBe(one)
  })

  it('tells runs of turns and runs of system messages apart (a refusal is judged by the one it names)', () => {
    const s = {role: 'system', content: 's'}
    const u = {role: 'user', content: 'u'}
    const a = {role: 'assistant', content: 'a'}
    const t = {role: 'tool', tool_call_id: 't', content: 't'}
    expect(roleRuns([s, u, a, u])).toEqual({turns: false, system: false, late: false})
    expect(roleRuns([s, s, u])).toEqual({turns: false, system: true, late: false})
    expect(roleRuns([s, u, u])).toEqual({turns: true, system: false, late: false})
    expect(roleRuns([s, s, u, a, a])).toEqual({turns: true, system: true, late: false})
    expect(roleRuns([u, a, t, t, u])).toEqual({turns: false, system: false, late: false})
    // a system message after a turn, alone or not
    expect(roleRuns([s, u, a, s, u])).toEqual({turns: false, system: false, late: true})
    expect(roleRuns([u, s])).toEqual({turns: false, system: false, late: true})
    expect(roleRuns([s, s, u, s, s])).toEqual({turns: false, system: true, late: true})
  })
})

describe("a chat client's system messages after the first turn, for an upstream that refused them", () => {
  it('folds every system message after the first into the first, at the front; the same array without a late one', () => {
    const messages = [
      {role: 'system', content: 'You are terse.', name: 'op'},
      {role: 'user', content: 'Hi'},
      {role: 'assistant', content: 'Hello.'},
      {role: 'system', content: 'From now on answer in French.'},
      {role: 'user', content: 'Sky?'},
      {role: 'system', content: [{type: 'text', text: 'Env: linux'}]},
    ]
    const copy = structuredClone(messages)
    expect(systemFirstMessages(messages)).toEqual([
      {
        role: 'system',
        name: 'op',
        content: [
          {type: 'text', text: 'You are terse.\n\nFrom now on answer in French.'},
          {type: 'text', text: 'Env: linux'},
        ],
      },
      {role: 'user', content: 'Hi'},
      {role: 'assistant', content: 'Hello.'},
      {role: 'user', content: 'Sky?'},
    ])
    expect(messages).toEqual(copy)
    // a system message only after the first turn: it goes first
    expect(
      systemFirstMessages([
        {role: 'user', content: 'Hi'},
        {role: 'system', content: 'be brief'},
        {role: 'user', content: 'again'},
      ]),
    ).toEqual([
      {role: 'system', content: 'be brief'},
      {role: 'user', content: 'Hi'},
      {role: 'user', content: 'again'},
    ])
    const leading = [
      {role: 'system', content: 'a'},
      {role: 'system', content: 'b'},
      {role: 'user', content: 'c'},
    ]
    expect(systemFirstMessages(leading)).toBe(leading)
  })
})
