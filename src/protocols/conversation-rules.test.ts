import {describe, expect, it} from 'vitest'

import {
  bridgeToolTurns,
  dummySignatures,
  NO_RESULT,
  pairToolResults,
  repairedArguments,
  repairToolArguments,
  reshapeReasoningHistory,
  shapeToolId,
  shapeToolIds,
  TOOL_TURN_BRIDGE,
} from './conversation-rules.js'
import type {Message, Part} from './ir.js'

describe('tool-call ids in the shape an upstream takes', () => {
  it("Mistral's 9 letters and digits: another vendor's id rewritten, the same one every time; its own kept", () => {
    const rule = {alnum: 9}
    const toolu = shapeToolId('toolu_01A09q90qw90lq917835lq9', rule)
    expect(toolu).toMatch(/^[a-zA-Z0-9]{9}$/)
    expect(shapeToolId('toolu_01A09q90qw90lq917835lq9', rule)).toBe(toolu)
    // Kimi's, OpenAI's, and ids that differ in one character all come apart
    const ids = ['functions.Bash:0', 'functions.Bash:1', 'call_abc', 'call_abd', 'x', '']
    const shaped = ids.map((id) => shapeToolId(id, rule))
    for (const id of shaped) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/)
    expect(new Set(shaped).size).toBe(ids.length)
    expect(shapeToolId('D681PevKs', rule)).toBe('D681PevKs')
    // 9 characters, one of them not a letter or digit
    expect(shapeToolId('D681Pev_s', rule)).not.toBe('D681Pev_s')
  })

  it("OpenAI's 40 characters at most: a longer id keeps its start, short ones stay", () => {
    const long = 'fc_0f0e50a1476a6c35006912c58dc9f8819192c25864eb16f07f'
    const shaped = shapeToolId(long, {max: 40})
    expect(shaped).toHaveLength(40)
    expect(shaped.slice(0, 28)).toBe(long.slice(0, 28))
    // two ids that share their first 40 characters stay apart
    expect(shapeToolId(`${long}a`, {max: 40})).not.toBe(shapeToolId(`${long}b`, {max: 40}))
    expect(shapeToolId('call_abc', {max: 40})).toBe('call_abc')
    expect(shapeToolId('x'.repeat(40), {max: 40})).toBe('x'.repeat(40))
    // both learned: Mistral's shape fits the limit too
    expect(shapeToolId(long, {alnum: 9, max: 40})).toMatch(/^[a-zA-Z0-9]{9}$/)
  })

  it('a chat body: each call and its result get the same id; everything else stays', () => {
    const body: Record<string, unknown> = {
      model: 'devstral',
      messages: [
        {role: 'user', content: 'hi'},
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {id: 'toolu_1', type: 'function', function: {name: 'a', arguments: '{}'}},
            {id: 'toolu_2', type: 'function', function: {name: 'b', arguments: '{}'}},
          ],
        },
        {role: 'tool', tool_call_id: 'toolu_1', content: 'one'},
        {role: 'tool', tool_call_id: 'toolu_2', content: 'two'},
      ],
    }
    shapeToolIds(body, {alnum: 9})
    const [user, assistant, one, two] = body.messages as any[]
    expect(user).toEqual({role: 'user', content: 'hi'})
    const [a, b] = assistant.tool_calls.map((c: any) => c.id)
    expect([one.tool_call_id, two.tool_call_id]).toEqual([a, b])
    expect(a).not.toBe(b)
    expect(assistant.tool_calls[0].function).toEqual({name: 'a', arguments: '{}'})
    expect(one.content).toBe('one')
  })

  it("a Responses body: a function call's call_id and its output's", () => {
    const long = `call_${'z'.repeat(60)}`
    const body: Record<string, unknown> = {
      input: [
        {type: 'message', role: 'user', content: 'hi'},
        {type: 'function_call', call_id: long, name: 'shell', arguments: '{}'},
        {type: 'function_call_output', call_id: long, output: 'ok'},
      ],
    }
    shapeToolIds(body, {max: 40})
    const [, call, output] = body.input as any[]
    expect(call.call_id).toHaveLength(40)
    expect(output.call_id).toBe(call.call_id)
  })
})

describe('tool results followed by a user message (Mistral)', () => {
  it('an assistant message goes between, and nowhere else', () => {
    const messages = [
      {role: 'system', content: 's'},
      {role: 'user', content: 'go'},
      {role: 'assistant', content: null, tool_calls: [{id: 'a'}, {id: 'b'}]},
      {role: 'tool', tool_call_id: 'a', content: '1'},
      {role: 'tool', tool_call_id: 'b', content: '2'},
      {role: 'user', content: '<system-reminder>x</system-reminder>'},
      {role: 'assistant', content: null, tool_calls: [{id: 'c'}]},
      {role: 'tool', tool_call_id: 'c', content: '3'},
      {role: 'assistant', content: 'done'},
      {role: 'user', content: 'thanks'},
    ]
    const body: Record<string, unknown> = {messages: [...messages]}
    bridgeToolTurns(body)
    expect((body.messages as any[]).map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ])
    expect((body.messages as any[])[5]).toEqual({role: 'assistant', content: TOOL_TURN_BRIDGE})
    // a history without the pattern is the same array
    const plain: Record<string, unknown> = {messages: messages.slice(0, 4)}
    const before = plain.messages
    bridgeToolTurns(plain)
    expect(plain.messages).toBe(before)
  })
})

describe('the reasoning of the history in the field a server takes', () => {
  const history = () => ({
    messages: [
      {role: 'user', content: 'go'},
      {role: 'assistant', content: null, reasoning: 'r', tool_calls: [{id: 'a'}]},
      {role: 'tool', tool_call_id: 'a', content: '1'},
      {role: 'assistant', content: null, tool_calls: [{id: 'b'}]},
      {role: 'tool', tool_call_id: 'b', content: '2'},
      {role: 'assistant', content: null, reasoning_content: 'k', tool_calls: [{id: 'c'}]},
      {role: 'tool', tool_call_id: 'c', content: '3'},
      {role: 'assistant', content: 'done', tool_calls: []},
      {role: 'assistant', content: 'done'},
    ],
  })

  it('reasoning_content: renamed from reasoning, and an empty one on every assistant message with none', () => {
    const body: Record<string, unknown> = history()
    reshapeReasoningHistory(body, 'reasoning_content')
    const messages = body.messages as any[]
    expect(messages.map((m) => [m.reasoning_content, m.reasoning])).toEqual([
      [undefined, undefined],
      ['r', undefined],
      [undefined, undefined],
      ['', undefined],
      [undefined, undefined],
      ['k', undefined],
      [undefined, undefined],
      // the text that ends the tool loop, and a turn without thinking (DeepSeek V4 wants them too)
      ['', undefined],
      ['', undefined],
    ])
    expect(JSON.stringify(messages[3])).toBe(
      '{"role":"assistant","content":null,"tool_calls":[{"id":"b"}],"reasoning_content":""}',
    )
  })

  it.each([
    ['a string content, no field', {role: 'assistant', content: 'done'}, ''],
    [
      'a null one (a client that says none)',
      {role: 'assistant', content: 'done', reasoning_content: null},
      '',
    ],
    [
      'an interrupted turn (content parts, no reasoning)',
      {role: 'assistant', content: [{type: 'text', text: 'par'}]},
      '',
    ],
    ['its own kept', {role: 'assistant', content: 'done', reasoning_content: 'why'}, 'why'],
    // OpenRouter writes `reasoning: null`, and a chat client echoes it back
    ['an OpenRouter null `reasoning`', {role: 'assistant', content: 'done', reasoning: null}, ''],
    ['both null', {role: 'assistant', content: 'done', reasoning: null, reasoning_content: null}, ''],
  ])('reasoning_content on an assistant turn without tool calls: %s', (_, message, want) => {
    const body: Record<string, unknown> = {messages: [{role: 'user', content: 'hi'}, message]}
    reshapeReasoningHistory(body, 'reasoning_content')
    const messages = body.messages as any[]
    const {reasoning: _r, ...rest} = message as Record<string, unknown>
    expect(messages[1]).toEqual({...rest, reasoning_content: want})
    expect(messages[0]).toEqual({role: 'user', content: 'hi'})
  })

  it('reasoning or drop: no empty one added', () => {
    for (const to of ['reasoning', 'drop'] as const) {
      const body: Record<string, unknown> = history()
      reshapeReasoningHistory(body, to)
      expect((body.messages as any[])[3]).toEqual({role: 'assistant', content: null, tool_calls: [{id: 'b'}]})
    }
  })
})

describe('tool calls and results paired up', () => {
  const call = (id: string, name = 'f') => ({type: 'tool_call' as const, id, name, arguments: '{}'})
  const result = (callId: string, text = 'ok') => ({
    type: 'tool_result' as const,
    callId,
    content: [{type: 'text' as const, text}],
  })
  const user = (...parts: Part[]): Message => ({role: 'user', parts})
  const assistant = (...parts: Part[]): Message => ({role: 'assistant', parts})
  const say = (text: string) => ({type: 'text' as const, text})

  it('a history that pairs comes back as it came', () => {
    const history = [
      user(say('go')),
      assistant(call('a'), call('b')),
      user(result('b'), result('a'), say('and?')),
    ]
    expect(pairToolResults(history)).toBe(history)
  })

  it("an interrupted call gets an error result in the next turn, before the user's words", () => {
    const history = [user(say('go')), assistant(call('a'), call('b')), user(result('a'), say('stop, do X'))]
    const paired = pairToolResults(history)
    expect(paired[2].parts).toEqual([
      {
        type: 'tool_result',
        callId: 'b',
        name: 'f',
        content: [{type: 'text', text: NO_RESULT}],
        isError: true,
      },
      result('a'),
      say('stop, do X'),
    ])
    expect(history[2].parts).toHaveLength(2)
  })

  it('two assistant turns in a row: the results of the first go between them', () => {
    const history = [user(say('go')), assistant(call('a')), assistant(say('done'))]
    expect(pairToolResults(history).map((m) => [m.role, m.parts.map((p) => p.type)])).toEqual([
      ['user', ['text']],
      ['assistant', ['tool_call']],
      ['user', ['tool_result']],
      ['assistant', ['text']],
    ])
  })

  it("a result whose call was trimmed away, or a second result of one call, becomes its turn's text", () => {
    const image = {type: 'image' as const, mediaType: 'image/png', data: 'AAAA'}
    const orphan = {
      ...result('gone', 'the file'),
      name: 'Read',
      content: [{type: 'text' as const, text: 'the file'}, image],
    }
    const history = [
      user(orphan, say('summarize')),
      assistant(call('a')),
      user(result('a'), result('a', 'again')),
    ]
    const paired = pairToolResults(history)
    expect(paired[0].parts).toEqual([
      say('Result of an earlier tool call (Read):\nthe file'),
      image,
      say('summarize'),
    ])
    expect(paired[2].parts).toEqual([result('a'), say('Result of an earlier tool call (a):\nagain')])
  })

  it('the last turn an assistant with calls stays as it is', () => {
    const history = [user(say('go')), assistant(call('a'))]
    expect(pairToolResults(history)).toBe(history)
  })
})

describe('tool pairing over turns of one role in a row (as Anthropic reads them)', () => {
  const call = (id: string) => ({type: 'tool_call' as const, id, name: 'Read', arguments: '{}'})
  const result = (callId: string, text = 'ok') => ({
    type: 'tool_result' as const,
    callId,
    content: [{type: 'text' as const, text}],
  })
  const say = (text: string) => ({type: 'text' as const, text})

  it('results split over two user turns answer the calls of the turn before', () => {
    const history: Message[] = [
      {role: 'user', parts: [say('go')]},
      {role: 'assistant', parts: [call('a'), call('b')]},
      {role: 'user', parts: [result('a')]},
      {role: 'user', parts: [result('b')]},
    ]
    const paired = pairToolResults(history)
    expect(paired).toHaveLength(3)
    expect(paired[2].parts).toEqual([result('a'), result('b')])
  })

  it('calls split over two assistant turns, answered after the second, are one turn', () => {
    const history: Message[] = [
      {role: 'user', parts: [say('go')]},
      {role: 'assistant', parts: [say('checking'), call('a')]},
      {role: 'assistant', parts: [call('b')]},
      {role: 'user', parts: [result('a'), result('b')]},
    ]
    const paired = pairToolResults(history)
    expect(paired.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
    expect(paired[1].parts).toEqual([say('checking'), call('a'), call('b')])
    expect(paired[2].parts).toEqual([result('a'), result('b')])
  })

  it("a repaired turn puts every result before the turn's text", () => {
    const history: Message[] = [
      {role: 'assistant', parts: [call('a')]},
      {role: 'user', parts: [say('first'), result('gone', 'x'), result('a')]},
    ]
    expect(pairToolResults(history)[1].parts).toEqual([
      result('a'),
      say('first'),
      say('Result of an earlier tool call (gone):\nx'),
    ])
  })
})

describe('a thought signature lost from a tool call turn (Gemini 3 behind a chat server)', () => {
  const call = (id: string, extra?: unknown) => ({
    id,
    type: 'function',
    function: {name: 'ls', arguments: '{}'},
    ...(extra ? {extra_content: extra} : {}),
  })
  const SKIP = 'skip_thought_signature_validator'

  it("gets Google's dummy on its first call; a turn with its own signature keeps it; the same bytes each time", () => {
    const details = [{type: 'reasoning.encrypted', data: 'REAL', id: 'c', index: 0}]
    const body = () => ({
      messages: [
        {role: 'user', content: 'go'},
        {role: 'assistant', content: null, tool_calls: [call('a'), call('b')]},
        {role: 'tool', tool_call_id: 'a', content: 'x'},
        {role: 'assistant', content: null, tool_calls: [call('c', {google: {thought_signature: 'REAL'}})]},
        {role: 'assistant', content: 'text only'},
        {role: 'assistant', content: null, reasoning_details: details, tool_calls: [call('c')]},
      ],
    })
    const google = body()
    dummySignatures(google, 'google')
    expect(google.messages[1]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [call('a', {google: {thought_signature: SKIP}}), call('b')],
    })
    expect(google.messages.slice(2, 5)).toEqual(body().messages.slice(2, 5))
    const again = body()
    dummySignatures(again, 'google')
    expect(JSON.stringify(again)).toBe(JSON.stringify(google))

    const openRouter = body()
    dummySignatures(openRouter, 'reasoning_details')
    expect(openRouter.messages[1]).toMatchObject({
      reasoning_details: [
        {type: 'reasoning.encrypted', data: SKIP, id: 'a', format: 'google-gemini-v1', index: 0},
      ],
    })
    // (its own encrypted item: kept as it was)
    expect(openRouter.messages[5]).toEqual(body().messages[5])
  })
})

describe("history tool-call arguments that are not JSON, repaired (DashScope's refusal)", () => {
  const cases: Array<[string, string]> = [
    // a stream cut at its token limit: the string, the array and the object closed
    ['{"command": ["bash","-lc","ls', '{"command": ["bash","-lc","ls"]}'],
    ['{"path": "/tmp/a', '{"path": "/tmp/a"}'],
    ['{"a": {"b": [1, 2', '{"a": {"b": [1, 2]}}'],
    // cut after an escape: the lone backslash left out
    ['{"text": "say \\', '{"text": "say "}'],
    // a key without its value: up to the comma before it; a colon: null
    ['{"a": 1, "b', '{"a": 1}'],
    ['{"a": 1, "b":', '{"a": 1, "b":null}'],
    ['{"a": 1,', '{"a": 1}'],
    // Qwen3-Coder's extra brace, text after the object, text before it
    ['{"a": 1}}', '{"a": 1}'],
    ['{"a": 1} and more', '{"a": 1}'],
    ['<tool_call>{"a": "x"', '{"a": "x"}'],
    // nothing that makes an object
    ['ls -la', '{}'],
    ['', '{}'],
    ['{"a": tru', '{}'],
    ['{"a": [1}', '{}'],
  ]
  for (const [broken, repaired] of cases)
    it(`${JSON.stringify(broken)} → ${repaired}`, () => {
      expect(repairedArguments(broken)).toBe(repaired)
      expect(() => JSON.parse(repairedArguments(broken))).not.toThrow()
    })

  it('only the calls that do not parse change; the body keeps every other message, and the input is not changed', () => {
    const ok = {
      role: 'assistant',
      content: null,
      tool_calls: [{id: 'a', function: {name: 'f', arguments: '{"x":1}'}}],
    }
    const broken = {
      role: 'assistant',
      content: 'calling',
      tool_calls: [
        {id: 'b', type: 'function', function: {name: 'f', arguments: '{"x":2'}},
        {id: 'c', type: 'function', function: {name: 'g', arguments: '[1]'}},
      ],
    }
    const messages = [
      {role: 'user', content: 'hi'},
      ok,
      {role: 'tool', tool_call_id: 'a', content: 'r'},
      broken,
    ]
    const before = JSON.stringify(messages)
    const body: Record<string, unknown> = {messages}
    repairToolArguments(body)
    expect(JSON.stringify(messages)).toBe(before)
    const out = body.messages as typeof messages
    expect(out[1]).toBe(ok)
    expect(out[3]).toEqual({
      ...broken,
      tool_calls: [
        {id: 'b', type: 'function', function: {name: 'f', arguments: '{"x":2}'}},
        // (it parses: as it came)
        broken.tool_calls[1],
      ],
    })
    // a history that parses: the same array
    const clean: Record<string, unknown> = {messages: [ok]}
    const same = clean.messages
    repairToolArguments(clean)
    expect(clean.messages).toBe(same)
  })
})
