import {describe, expect, it, test} from 'vitest'

import {ArgsGuard} from './args-guard.js'
import {chatChunk, chatSse, chatToolChunk, parseSse} from './cm-test-helpers.js'
import {syntaxRepairedArguments} from './conversation-rules.js'
import {upstreamToolNames} from './tool-names.js'
import {decodeClientRequest, StreamTranslator, translateResponseText} from './translate.js'

/** What a client gets for `pieces`: the deltas sent as they came, then the call's end. */
function stream(pieces: string[]): {deltas: string[]; text: string; repaired: boolean} {
  const guard = new ArgsGuard()
  const deltas = pieces.map((p) => guard.feed(p))
  const end = guard.finish(pieces.join(''))
  deltas.push(end.json)
  return {deltas, text: deltas.join(''), repaired: end.repaired}
}

/** `text` cut into pieces of `size` characters. */
const cut = (text: string, size: number): string[] =>
  Array.from({length: Math.ceil(text.length / size)}, (_, i) => text.slice(i * size, (i + 1) * size))

describe('syntaxRepairedArguments', () => {
  test.each([
    [`{'command': 'ls -la', 'n': [1, 2,]}`, {command: 'ls -la', n: [1, 2]}],
    [`{"a": "x, }", "b": 1,}`, {a: 'x, }', b: 1}],
    ['```json\n{"path": "/a"}\n```', {path: '/a'}],
    [JSON.stringify(JSON.stringify({path: '/a'})), {path: '/a'}],
    [JSON.stringify(`{'path': '/a',}`), {path: '/a'}],
    [`{"path": "/a"}{"path": "/b"}`, {path: '/a'}],
    [`{"path": "/a"}\nDone.`, {path: '/a'}],
    [`{'say': "it's \\"x\\"", 'q': 'he said "y"'}`, {say: `it's "x"`, q: 'he said "y"'}],
    // Python's literals, as values only: in a string (single-quoted or double) they stay words
    [`{'path': 'a', 'recursive': True, 'limit': None}`, {path: 'a', recursive: true, limit: null}],
    [`{"flags": [True, False,None], "n": {"x":None}}`, {flags: [true, false, null], n: {x: null}}],
    [`{'say': 'True, None: False', "q": "x: True}"}`, {say: 'True, None: False', q: 'x: True}'}],
    [`{"a": True,}`, {a: true}],
  ])('%s', (text, meant) => {
    const fixed = syntaxRepairedArguments(text)
    expect(fixed && JSON.parse(fixed)).toEqual(meant)
  })

  test.each([
    // LM Studio 0.3.29's stream of Qwen3-Coder (opencode #1585), on one line
    ['<parameter=pattern>**</parameter>', {pattern: '**'}],
    // the model's own layout: a newline around each value, trimmed once; JSON values read as JSON
    [
      '<parameter=path>\nsrc/a.ts\n</parameter>\n<parameter=limit>\n20\n</parameter>\n<parameter=opts>\n{"deep": true}\n</parameter>\n',
      {path: 'src/a.ts', limit: 20, opts: {deep: true}},
    ],
    // inside its function and tool_call tags; a value of several lines keeps its inner newlines
    [
      '<tool_call>\n<function=Write>\n<parameter=content>\n\nline 1\nline 2 {x}\n\n</parameter>\n</function>\n</tool_call>',
      {content: '\nline 1\nline 2 {x}\n'},
    ],
  ])("Qwen3-Coder's <parameter=…> form: %j", (text, meant) => {
    const fixed = syntaxRepairedArguments(text)
    expect(fixed && JSON.parse(fixed)).toEqual(meant)
  })

  test("<parameter=…> typed by the tool's schema: a string parameter keeps its text, JSON and all", () => {
    const schema = {
      type: 'object',
      properties: {
        file_path: {type: 'string'},
        content: {type: 'string'},
        note: {type: ['string', 'null']},
        limit: {type: 'integer'},
        opts: {type: 'object'},
      },
    }
    const text =
      '<parameter=file_path>\npackage.json\n</parameter>\n<parameter=content>\n{"name": "x"}\n</parameter>\n' +
      '<parameter=note>\n42\n</parameter>\n<parameter=limit>\n20\n</parameter>\n<parameter=opts>\n{"deep": true}\n</parameter>\n'
    const typed = syntaxRepairedArguments(text, () => schema)
    expect(typed && JSON.parse(typed)).toEqual({
      file_path: 'package.json',
      content: '{"name": "x"}',
      note: '42',
      limit: 20,
      opts: {deep: true},
    })
    // no schema known (a tool renamed for the upstream): each value as JSON where it parses
    const untyped = syntaxRepairedArguments(text)
    expect(untyped && JSON.parse(untyped)).toMatchObject({content: {name: 'x'}, note: 42})
  })

  test.each([
    ['<tool_call>{"a": 1,}</tool_call>', {a: 1}],
    ['<|python_tag|>{"a": 1}', {a: 1}],
    ["<think>x</think>{'a': 1}", {a: 1}],
  ])('a tag before the object, with no <parameter=…>: the object taken out (%s)', (text, meant) => {
    const fixed = syntaxRepairedArguments(text)
    expect(fixed && JSON.parse(fixed)).toEqual(meant)
  })

  test('<parameter=…> left open, or with other text, is not guessed at', () => {
    for (const text of [
      '<parameter=command>\nrm -rf /tmp/x',
      '<parameter=a>1</parameter> and then <parameter=b>2',
      '<parameter=a>1</parameter>\nDone.',
      '<function=ls>\n</function>',
    ])
      expect(syntaxRepairedArguments(text)).toBeUndefined()
  })

  test('never closes arguments cut open: a cut command must not run as a whole one', () => {
    for (const text of [
      `{"command": "rm -rf /tmp/x`,
      `{'command': 'rm -rf /tmp/x`,
      `{"a": 1,`,
      `{"a": [1`,
      'nope',
    ])
      expect(syntaxRepairedArguments(text)).toBeUndefined()
  })
})

describe('ArgsGuard', () => {
  const valid = JSON.stringify({
    file_path: '/tmp/a.ts',
    content: 'const a = {"x": [1, 2,], \'y\': `z`}\n// }{ \\" \\\\',
    list: [1, {b: [true, null]}, 'c'],
  })

  test('a valid call goes out byte for byte, whatever its pieces', () => {
    for (const size of [1, 2, 3, 7, 64, valid.length]) {
      const {text, repaired} = stream(cut(valid, size))
      expect(text).toBe(valid)
      expect(repaired).toBe(false)
    }
    // an array, as llama.cpp may send: as it came
    expect(stream(['["x", {"y": 1}]']).text).toBe('["x", {"y": 1}]')
  })

  test.each([
    [`{'command': 'ls -la', 'timeout': 5}`, {command: 'ls -la', timeout: 5}],
    [`{"command": "ls", "timeout": 5, }`, {command: 'ls', timeout: 5}],
    ['```json\n{"command": "ls"}\n```', {command: 'ls'}],
    [JSON.stringify(JSON.stringify({command: 'ls'})), {command: 'ls'}],
    [`{"command": "ls"}{"command": "pwd"}`, {command: 'ls'}],
    [`{"command": "ls"} </tool_call>`, {command: 'ls'}],
    [`{"command": "ls", "args": ["-l", "-a",], }`, {command: 'ls', args: ['-l', '-a']}],
    [`{"path": "src", "recursive": True, "limit": None}`, {path: 'src', recursive: true, limit: null}],
    [`{'path': 'src', 'recursive': False}`, {path: 'src', recursive: false}],
    ['<parameter=path>\nsrc/a.ts\n</parameter>\n<parameter=n>\n2\n</parameter>\n', {path: 'src/a.ts', n: 2}],
    ['<tool_call>{"command": "ls",}</tool_call>', {command: 'ls'}],
  ])('%s: the deltas add up to JSON that parses, in any pieces', (text, meant) => {
    for (const size of [1, 2, 5, text.length]) {
      const {text: sent, repaired} = stream(cut(text, size))
      expect(JSON.parse(sent)).toEqual(meant)
      expect(repaired).toBe(true)
    }
  })

  test("Python's literals: held from the first byte of one, a word in a string passes", () => {
    const guard = new ArgsGuard()
    expect(guard.feed('{"say": "True or None", "recursive": ')).toBe('{"say": "True or None", "recursive": ')
    expect(guard.feed('Tr')).toBe('')
    expect(guard.feed('ue, "n": 1}')).toBe('')
    const all = '{"say": "True or None", "recursive": True, "n": 1}'
    // (the space after the colon went out already; the repair's remainder starts before it)
    expect(guard.finish(all)).toEqual({json: ' true, "n": 1}', repaired: true})
  })

  test('a comma goes out once the next token shows it is not a trailing one', () => {
    const guard = new ArgsGuard()
    expect(guard.feed('{"a": 1,')).toBe('{"a": 1')
    expect(guard.feed(' "b": 2}')).toBe(', "b": 2}')
  })

  test('a call cut open by the token limit is not closed: it goes on as it came', () => {
    for (const text of [
      `{"command": "rm -rf /tmp/x`,
      `{'command': 'rm -rf /tmp/x`,
      `{"command": "rm", "args": ["-rf",`,
    ]) {
      const {text: sent, repaired} = stream(cut(text, 3))
      expect(sent).toBe(text)
      expect(repaired).toBe(false)
    }
  })
})

describe("<parameter=…> arguments of a chat upstream's answer, typed by the client's tool (CodecContext `tools`)", () => {
  const WRITE = {
    name: 'Write',
    parameters: {type: 'object', properties: {file_path: {type: 'string'}, content: {type: 'string'}}},
  }
  const client = decodeClientRequest(
    'messages',
    {
      model: 'x',
      max_tokens: 100,
      stream: true,
      tools: [{name: 'Write', input_schema: WRITE.parameters}],
      messages: [{role: 'user', content: 'write package.json'}],
    },
    {},
  )
  const ARGS =
    '<parameter=file_path>\npackage.json\n</parameter>\n<parameter=content>\n{"name": "x"}\n</parameter>\n'
  const MEANT = {file_path: 'package.json', content: '{"name": "x"}'}

  it('a stream: the input_json_deltas add up to the file as text', () => {
    const t = new StreamTranslator('chat', client, {newId: (p) => `${p}1`, tools: client.request.tools})
    const sse = chatSse([
      chatChunk({role: 'assistant', content: ''}),
      chatToolChunk(0, {name: 'Write', arguments: ''}, 'call_1'),
      chatToolChunk(0, {arguments: ARGS.slice(0, 30)}),
      chatToolChunk(0, {arguments: ARGS.slice(30)}),
      chatChunk({}, 'tool_calls'),
      '[DONE]',
    ])
    const out = t.push(Buffer.from(sse)) + t.end()
    const json = parseSse(out)
      .map((e) => JSON.parse(e.data) as {type: string; delta?: {partial_json?: string}})
      .filter((d) => d.type === 'content_block_delta')
      .map((d) => d.delta?.partial_json ?? '')
      .join('')
    expect(JSON.parse(json)).toEqual(MEANT)
  })

  it('a JSON answer: the same', () => {
    const answer = {
      id: 'c1',
      object: 'chat.completion',
      model: 'x',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{id: 'call_1', type: 'function', function: {name: 'Write', arguments: ARGS}}],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: {prompt_tokens: 9, completion_tokens: 9, total_tokens: 18},
    }
    const {text} = translateResponseText(
      'chat',
      {...client, request: {...client.request, stream: false}},
      answer,
      {
        tools: client.request.tools,
      },
    )
    const message = JSON.parse(text) as {content: Array<{type: string; input?: unknown}>}
    expect(message.content.find((b) => b.type === 'tool_use')?.input).toEqual(MEANT)
  })

  // a tool whose name the upstream refuses (an MCP tool's dot) goes renamed, and the upstream calls
  // it by that name: its arguments are typed by the client's tool all the same
  const renamedClient = decodeClientRequest(
    'messages',
    {
      model: 'x',
      max_tokens: 100,
      stream: true,
      tools: [{name: 'mcp__fs__write.file', input_schema: WRITE.parameters}],
      messages: [{role: 'user', content: 'write package.json'}],
    },
    {},
  )
  const upstreamName = upstreamToolNames(renamedClient.request, 'chat')!.get('mcp__fs__write.file')!

  it('a tool renamed for the upstream: typed by the client tool it stands for, in a stream', () => {
    expect(upstreamName).not.toBe('mcp__fs__write.file')
    const t = new StreamTranslator('chat', renamedClient, {
      newId: (p) => `${p}1`,
      tools: renamedClient.request.tools,
    })
    const sse = chatSse([
      chatChunk({role: 'assistant', content: ''}),
      chatToolChunk(0, {name: upstreamName, arguments: ''}, 'call_1'),
      chatToolChunk(0, {arguments: ARGS}),
      chatChunk({}, 'tool_calls'),
      '[DONE]',
    ])
    const events = parseSse(t.push(Buffer.from(sse)) + t.end()).map(
      (e) =>
        JSON.parse(e.data) as {
          type: string
          content_block?: {name?: string}
          delta?: {partial_json?: string}
        },
    )
    expect(events.find((d) => d.type === 'content_block_start')?.content_block?.name).toBe(
      'mcp__fs__write.file',
    )
    const json = events
      .filter((d) => d.type === 'content_block_delta')
      .map((d) => d.delta?.partial_json ?? '')
      .join('')
    expect(JSON.parse(json)).toEqual(MEANT)
  })

  it('a tool renamed for the upstream: the same in a JSON answer', () => {
    const answer = {
      id: 'c1',
      object: 'chat.completion',
      model: 'x',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [{id: 'call_1', type: 'function', function: {name: upstreamName, arguments: ARGS}}],
          },
          finish_reason: 'tool_calls',
        },
      ],
    }
    const {text} = translateResponseText(
      'chat',
      {...renamedClient, request: {...renamedClient.request, stream: false}},
      answer,
      {tools: renamedClient.request.tools},
    )
    const message = JSON.parse(text) as {content: Array<{type: string; name?: string; input?: unknown}>}
    const call = message.content.find((b) => b.type === 'tool_use')
    expect([call?.name, call?.input]).toEqual(['mcp__fs__write.file', MEANT])
  })
})
