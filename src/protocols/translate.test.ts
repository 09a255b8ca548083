import {describe, expect, it} from 'vitest'

import {BoundedCarry} from './carry.js'
import {chatChunk} from './cm-test-helpers.js'
import {
  decodeClientRequest,
  encodeUpstreamRequest,
  estimateInputTokens,
  parseClientBody,
  StreamTranslator,
  TranslationError,
  translateResponse,
  upstreamErrorMessage,
  wellFormedEscapes,
} from './translate.js'

const sse = (events: unknown[]): string =>
  events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n'
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  chatChunk(delta, finish, {id: 'chatcmpl-1', model: 'deepseek-reasoner'})

function messagesEvents(text: string): Array<{event: string; data: any}> {
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const [ev, data] = block.split('\n')
      return {event: ev.slice('event: '.length), data: JSON.parse(data.slice('data: '.length))}
    })
}

describe('translation through the IR', () => {
  const body = {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    stream: true,
    messages: [{role: 'user', content: 'Hi'}],
  }

  it('encodes a Messages request for a chat upstream', () => {
    const client = decodeClientRequest('messages', body, {})
    const {body: out, path} = encodeUpstreamRequest(client, 'chat', 'deepseek-chat')
    expect(path).toBe('/v1/chat/completions')
    const json = JSON.parse(out.toString())
    expect(json.model).toBe('deepseek-chat')
    expect(json.messages).toEqual([{role: 'user', content: 'Hi'}])
    expect(json.stream).toBe(true)
  })

  it('translates a chat stream into a Messages stream event by event, fed one byte at a time', () => {
    const client = decodeClientRequest('messages', body, {})
    const t = new StreamTranslator('chat', client, {carry: new BoundedCarry()})
    const text = sse([
      chunk({role: 'assistant', content: ''}),
      chunk({content: 'Hel'}),
      chunk({content: 'lo'}),
      chunk({}, 'stop'),
      {
        ...chunk({}),
        choices: [],
        usage: {prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: {cached_tokens: 4}},
      },
    ])
    let out = ''
    for (const byte of Buffer.from(text)) out += t.push(Uint8Array.of(byte))
    out += t.end()
    const events = messagesEvents(out)
    expect(events[0].event).toBe('message_start')
    expect(events.at(-1)!.event).toBe('message_stop')
    const deltas = events.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta.text)
    expect(deltas.join('')).toBe('Hello')
    const final = events.find((e) => e.event === 'message_delta')!.data
    expect(final.delta.stop_reason).toBe('end_turn')
    expect(final.usage).toMatchObject({input_tokens: 6, cache_read_input_tokens: 4, output_tokens: 2})
    expect(t.usage.get()).toMatchObject({inputTokens: 10, cacheReadTokens: 4, outputTokens: 2})
    expect(t.error).toBeUndefined()
  })

  it('decodes ASCII chunks as they are and a character split across chunks once one is not ASCII', () => {
    const client = decodeClientRequest('messages', body, {})
    const text = sse([
      chunk({role: 'assistant', content: ''}),
      chunk({content: 'caf\u00e9 \u{1f600}'}),
      chunk({}, 'stop'),
    ])
    const bytes = Buffer.from(text)
    const at = bytes.indexOf(Buffer.from('\u00e9')) + 1 // between the two bytes of é
    const emoji = bytes.indexOf(Buffer.from('\u{1f600}')) + 2
    const whole = new StreamTranslator('chat', client, {newId: (p) => `${p}1`})
    const expected = whole.push(bytes) + whole.end()
    const t = new StreamTranslator('chat', client, {newId: (p) => `${p}1`})
    const out =
      t.push(bytes.subarray(0, at)) +
      t.push(bytes.subarray(at, emoji)) +
      t.push(bytes.subarray(emoji)) +
      t.end()
    expect(out).toBe(expected)
    const deltas = messagesEvents(out).filter((e) => e.event === 'content_block_delta')
    expect(deltas.map((e) => e.data.delta.text).join('')).toBe('caf\u00e9 \u{1f600}')
  })

  it('hands the first event to onFirstOutput as soon as it is encoded, the rest from push', () => {
    const client = decodeClientRequest('messages', body, {})
    const text = sse([chunk({role: 'assistant', content: ''}), chunk({content: 'Hi'}), chunk({}, 'stop')])
    const plain = new StreamTranslator('chat', client, {newId: (p) => `${p}1`})
    const expected = plain.push(Buffer.from(text)) + plain.end()
    const t = new StreamTranslator('chat', client, {newId: (p) => `${p}1`})
    const firsts: string[] = []
    t.onFirstOutput = (first) => firsts.push(first)
    const rest = t.push(Buffer.from(text)) + t.end()
    expect(firsts).toHaveLength(1)
    expect(messagesEvents(firsts[0]).map((e) => e.event)).toEqual(['message_start'])
    expect(firsts[0] + rest).toBe(expected)
    expect(rest.startsWith('event: content_block_start')).toBe(true)
  })

  it('ends the client stream with an error event when the upstream stream stops before [DONE]', () => {
    const client = decodeClientRequest('messages', body, {})
    const t = new StreamTranslator('chat', client)
    let out = t.push(Buffer.from(`data: ${JSON.stringify(chunk({role: 'assistant', content: 'Hi'}))}\n\n`))
    out += t.end()
    expect(t.error?.status).toBe(502)
    expect(t.error?.truncated).toBe(true)
    expect(messagesEvents(out).at(-1)!.event).toBe('error')
  })

  it("tells the upstream's own error event (an answer) from a truncated stream", () => {
    const client = decodeClientRequest('messages', body, {})
    const t = new StreamTranslator('chat', client)
    const out =
      t.push(Buffer.from(`data: ${JSON.stringify(chunk({role: 'assistant', content: ''}))}\n\n`)) +
      t.push(
        Buffer.from(
          `data: ${JSON.stringify({error: {message: 'context too long', type: 'invalid_request_error'}})}\n\n`,
        ),
      ) +
      t.end()
    expect(t.error).toMatchObject({truncated: false})
    expect(t.error?.message).toContain('context too long')
    expect(messagesEvents(out).at(-1)!.event).toBe('error')
  })

  it('reports a malformed upstream event as an error, not a crash', () => {
    const client = decodeClientRequest('messages', body, {})
    const t = new StreamTranslator('chat', client)
    const out = t.push(Buffer.from('data: {"choices": [\n\n')) + t.end()
    expect(t.error?.message).toMatch(/malformed|JSON/i)
    expect(messagesEvents(out).at(-1)!.event).toBe('error')
  })

  /** A Messages upstream's answer with cache reads and writes. */
  const CLAUDE_ANSWER = {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude',
    content: [{type: 'text', text: 'Hello'}],
    stop_reason: 'end_turn',
    usage: {input_tokens: 3, cache_read_input_tokens: 5, cache_creation_input_tokens: 2, output_tokens: 4},
  }

  it('translates a whole answer with its usage', () => {
    const client = decodeClientRequest('chat', {model: 'x', messages: [{role: 'user', content: 'Hi'}]}, {})
    const out = translateResponse('messages', client, CLAUDE_ANSWER)
    expect((out.body.choices as any)[0].message.content).toBe('Hello')
    expect(out.usage).toMatchObject({
      inputTokens: 10,
      cacheReadTokens: 5,
      cacheCreationTokens: 2,
      outputTokens: 4,
    })
  })

  it("carries GPT-5.6's cache writes (cache_write_tokens) both ways: Claude Code told cache_creation_input_tokens, Codex told cache_write_tokens", () => {
    const claude = decodeClientRequest(
      'messages',
      {model: 'x', max_tokens: 64, messages: [{role: 'user', content: 'Hi'}]},
      {},
    )
    const fromOpenAi = translateResponse('responses', claude, {
      id: 'resp_1',
      object: 'response',
      status: 'completed',
      model: 'gpt-5.6-luna',
      output: [{type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'Hello'}]}],
      usage: {
        input_tokens: 18014,
        input_tokens_details: {cached_tokens: 0, cache_write_tokens: 18011},
        output_tokens: 4,
        output_tokens_details: {reasoning_tokens: 0},
      },
    })
    expect(fromOpenAi.body.usage).toMatchObject({
      input_tokens: 3,
      cache_creation_input_tokens: 18011,
      cache_read_input_tokens: 0,
    })
    expect(fromOpenAi.usage).toMatchObject({inputTokens: 18014, cacheCreationTokens: 18011})
    const codex = decodeClientRequest('responses', {model: 'x', input: 'Hi'}, {})
    const fromAnthropic = translateResponse('messages', codex, CLAUDE_ANSWER)
    expect((fromAnthropic.body.usage as any).input_tokens_details).toEqual({
      cached_tokens: 5,
      cache_write_tokens: 2,
    })
    const chat = decodeClientRequest('chat', {model: 'x', messages: [{role: 'user', content: 'Hi'}]}, {})
    const toChat = translateResponse('messages', chat, CLAUDE_ANSWER)
    expect((toChat.body.usage as any).prompt_tokens_details).toEqual({
      cached_tokens: 5,
      cache_write_tokens: 2,
    })
  })

  describe('usage an upstream did not report', () => {
    const long = 'word '.repeat(400) // 2 000 characters: 500 tokens by the estimate
    const request = {
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      stream: true,
      messages: [{role: 'user', content: long}],
    }
    const streamOf = (chunks: unknown[]): string =>
      chunks.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + 'data: [DONE]\n\n'
    const run = (
      family: 'messages' | 'responses' | 'gemini',
      chunks: unknown[],
      body: Record<string, unknown>,
    ) => {
      const client = decodeClientRequest(family, body, {})
      const t = new StreamTranslator('chat', client, {carry: new BoundedCarry()})
      const out = t.push(Buffer.from(streamOf(chunks))) + t.end()
      return {t, out}
    }

    it('tells a Messages client an estimate when a chat stream has no usage (Claude Code compacts on it)', () => {
      const {t, out} = run(
        'messages',
        [chunk({role: 'assistant', content: ''}), chunk({content: 'x'.repeat(38)}), chunk({}, 'stop')],
        request,
      )
      const final = messagesEvents(out).find((e) => e.event === 'message_delta')!.data
      expect(final.usage).toMatchObject({input_tokens: 500, output_tokens: 10})
      expect(t.usage.get()).toMatchObject({inputTokens: 500, outputTokens: 10})
      expect(t.estimated).toBe('input and output')
      expect(t.error).toBeUndefined()
    })

    it('estimates only the input when the upstream reports output but prompt_tokens 0 (a cached prompt)', () => {
      const {t, out} = run(
        'messages',
        [
          chunk({role: 'assistant', content: ''}),
          chunk({content: 'Hello'}),
          chunk({}, 'stop'),
          {...chunk({}), choices: [], usage: {prompt_tokens: 0, completion_tokens: 7}},
        ],
        request,
      )
      const final = messagesEvents(out).find((e) => e.event === 'message_delta')!.data
      expect(final.usage).toMatchObject({input_tokens: 500, output_tokens: 7})
      expect(t.estimated).toBe('input')
    })

    it('changes nothing when the upstream reports its usage', () => {
      const {t, out} = run(
        'messages',
        [
          chunk({role: 'assistant', content: ''}),
          chunk({content: 'Hello'}),
          chunk({}, 'stop'),
          {...chunk({}), choices: [], usage: {prompt_tokens: 12, completion_tokens: 3}},
        ],
        request,
      )
      expect(messagesEvents(out).find((e) => e.event === 'message_delta')!.data.usage).toMatchObject({
        input_tokens: 12,
        output_tokens: 3,
      })
      expect(t.estimated).toBeUndefined()
    })

    it('counts streamed tool names and arguments as output, and tells Codex and Gemini CLI too', () => {
      const chunks = [
        chunk({role: 'assistant', content: ''}),
        chunk({
          tool_calls: [{index: 0, id: 'call_1', type: 'function', function: {name: 'read', arguments: ''}}],
        }),
        chunk({tool_calls: [{index: 0, function: {arguments: '{"path":"a.txt"}'}}]}),
        chunk({}, 'tool_calls'),
      ]
      const codex = run('responses', chunks, {model: 'gpt-5', stream: true, input: long})
      const completed = codex.out.split('\n\n').find((b) => b.startsWith('event: response.completed'))!
      const usage = JSON.parse(completed.split('\ndata: ')[1]).response.usage
      // "read" and {"path":"a.txt"}: 20 characters, 5 tokens
      expect(usage).toMatchObject({input_tokens: 500, output_tokens: 5, total_tokens: 505})
      const gemini = run('gemini', chunks, {contents: [{role: 'user', parts: [{text: long}]}]})
      const last = gemini.out.trim().split('\n\n').at(-1)!
      expect(JSON.parse(last.slice('data: '.length)).usageMetadata).toMatchObject({
        promptTokenCount: 500,
        candidatesTokenCount: 5,
      })
    })

    it('fills a whole answer without usage too', () => {
      const client = decodeClientRequest('messages', {...request, stream: false}, {})
      const out = translateResponse('chat', client, {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        model: 'local',
        choices: [{index: 0, message: {role: 'assistant', content: 'x'.repeat(40)}, finish_reason: 'stop'}],
      })
      expect(out.body.usage).toMatchObject({input_tokens: 500, output_tokens: 10})
      expect(out.estimated).toBe('input and output')
    })
  })

  it('refuses previous_response_id on a translated route, saying why', () => {
    expect(() =>
      decodeClientRequest('responses', {model: 'x', input: 'hi', previous_response_id: 'resp_1'}, {}),
    ).toThrow(/previous_response_id needs a Responses upstream/)
  })

  it('reads the message of an error body of any family', () => {
    expect(upstreamErrorMessage('{"error":{"message":"bad key","type":"x"}}')).toBe('bad key')
    expect(upstreamErrorMessage('{"type":"error","error":{"type":"x","message":"over"}}')).toBe('over')
    expect(upstreamErrorMessage('{"error":{"code":400,"message":"g","status":"INVALID_ARGUMENT"}}')).toBe('g')
    expect(upstreamErrorMessage('<html>')).toBeUndefined()
  })

  it('estimates input tokens from text, tools and images', () => {
    const client = decodeClientRequest(
      'messages',
      {model: 'x', max_tokens: 1, system: 'abcd', messages: [{role: 'user', content: 'efgh'}]},
      {},
    )
    expect(estimateInputTokens(client.request)).toBe(2)
  })
})

describe('upstream request bytes', () => {
  // each family's request and tool objects are built member by member (no object spreads on the
  // hot path): the bytes keep the order each family's request has always had
  const client = decodeClientRequest(
    'messages',
    {
      model: 'claude-x',
      max_tokens: 100,
      system: 'Be brief.',
      stream: true,
      temperature: 0.5,
      stop_sequences: ['END'],
      metadata: {user_id: 'u1'},
      tools: [
        {name: 'f', description: 'does f', input_schema: {type: 'object', properties: {a: {type: 'string'}}}},
        {name: 'g', input_schema: {type: 'object', properties: {}}},
      ],
      messages: [{role: 'user', content: 'hi'}],
    },
    {stream: true},
  )
  const text = (family: 'chat' | 'messages' | 'responses' | 'gemini'): string =>
    encodeUpstreamRequest(client, family, 'm').body.toString()

  it('writes each tool and the request in its family order', () => {
    const schema = '{"type":"object","properties":{"a":{"type":"string"}}}'
    expect(text('chat')).toContain(
      `"tools":[{"type":"function","function":{"name":"f","description":"does f","parameters":${schema}}},{"type":"function","function":{"name":"g","parameters":{"type":"object","properties":{}}}}]`,
    )
    expect(text('responses')).toContain(
      `"tools":[{"type":"function","name":"f","description":"does f","parameters":${schema},"strict":false},{"type":"function","name":"g","parameters":{"type":"object","properties":{}},"strict":false}]`,
    )
    expect(text('gemini')).toContain(
      `"functionDeclarations":[{"name":"f","description":"does f","parametersJsonSchema":${schema}},{"name":"g","parametersJsonSchema":{"type":"object","properties":{}}}]`,
    )
    const messages = JSON.parse(text('messages')) as Record<string, unknown>
    expect(Object.keys(messages)).toEqual([
      'model',
      'max_tokens',
      'system',
      'messages',
      'tools',
      'temperature',
      'stop_sequences',
      'metadata',
      'stream',
    ])
    expect(text('messages')).toContain(
      `"tools":[{"name":"f","description":"does f","input_schema":${schema}},{"name":"g","input_schema":{"type":"object","properties":{}}}]`,
    )
  })
})

describe('lone surrogates', () => {
  it('a tool output cut in the middle of an emoji goes as U+FFFD, to every family; pairs and escaped text as they were', () => {
    // the body as a JavaScript agent writes it: JSON.stringify of a string cut after a high surrogate
    const cut = 'found \ud83d'
    const body = Buffer.from(
      JSON.stringify({
        model: 'claude-x',
        max_tokens: 100,
        messages: [
          {role: 'user', content: 'list'},
          {role: 'assistant', content: [{type: 'tool_use', id: 't1', name: 'Bash', input: {}}]},
          {
            role: 'user',
            content: [
              {type: 'tool_result', tool_use_id: 't1', content: cut},
              {type: 'text', text: 'ok 😀, a path C:\\ud83d-notes and a low half \udc00 alone'},
            ],
          },
        ],
      }),
    )
    expect(body.toString()).toContain('found \\ud83d')
    const client = decodeClientRequest('messages', parseClientBody(body), {})
    for (const family of ['chat', 'responses', 'messages', 'gemini'] as const) {
      const out = encodeUpstreamRequest(client, family, 'm').body.toString()
      expect(out, family).not.toMatch(/(?<!\\)\\ud[89a-f][0-9a-f]{2}/)
      expect(out, family).toContain('found \\ufffd')
      expect(out, family).toContain('a low half \\ufffd alone')
      // a surrogate pair is the character itself; a backslash before "udata" is text
      expect(out, family).toContain('ok 😀')
      expect(out, family).toContain('C:\\\\ud83d-notes')
      expect(JSON.parse(out), family).toBeTruthy()
    }
    expect(wellFormedEscapes('"a\\\\\\ud83d b"')).toBe('"a\\\\\\ufffd b"')
    expect(wellFormedEscapes('"\\\\ud83d"')).toBe('"\\\\ud83d"')
  })
})

describe('the request thread’s shortcuts keep the bytes', () => {
  it('writes chat turns as before: texts joined, empty ones dropped, tool results one line each', () => {
    const client = decodeClientRequest(
      'messages',
      {
        model: 'c',
        max_tokens: 10,
        system: [
          {type: 'text', text: 'S1'},
          {type: 'text', text: ''},
          {type: 'text', text: 'S2 — “ok”'},
        ],
        messages: [
          {
            role: 'user',
            content: [
              {type: 'text', text: ''},
              {type: 'text', text: 'hi ✓'},
            ],
          },
          {
            role: 'assistant',
            content: [
              {type: 'thinking', thinking: 'hm', signature: 'gwx1.chat.'},
              {type: 'text', text: 'a'},
              {type: 'text', text: 'b'},
              {type: 'tool_use', id: 't1', name: 'f', input: {}},
            ],
          },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't1',
                content: [
                  {type: 'text', text: 'x'},
                  {type: 'text', text: ''},
                  {type: 'image', source: {type: 'base64', media_type: 'image/png', data: 'AA'}},
                  {type: 'text', text: 'y'},
                ],
              },
              {type: 'text', text: 'then'},
            ],
          },
        ],
      },
      {},
    )
    expect(encodeUpstreamRequest(client, 'chat', 'm').body.toString()).toBe(
      '{"model":"m","messages":[{"role":"system","content":"S1\\n\\nS2 — “ok”"},' +
        '{"role":"user","content":"hi ✓"},' +
        '{"role":"assistant","content":"ab","reasoning_content":"hm","tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{}"}}]},' +
        '{"role":"tool","tool_call_id":"t1","content":"x\\n\\ny"},' +
        '{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}},{"type":"text","text":"then"}]}],' +
        '"max_tokens":10}',
    )
  })

  it('writes Messages tool results and ids as before: empty text dropped, a bad id rewritten, results first', () => {
    const client = decodeClientRequest(
      'chat',
      {
        model: 'c',
        messages: [
          {role: 'user', content: 'go'},
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {id: 'functions.f:0', type: 'function', function: {name: 'f', arguments: '{"a":1}'}},
              {id: 'call_ok-1', type: 'function', function: {name: 'f', arguments: '{}'}},
            ],
          },
          {role: 'tool', tool_call_id: 'functions.f:0', content: ''},
          {role: 'tool', tool_call_id: 'call_ok-1', content: 'done ✓'},
          {role: 'user', content: 'and now?'},
        ],
      },
      {},
    )
    const body = JSON.parse(encodeUpstreamRequest(client, 'messages', 'm').body.toString())
    expect(body.messages).toEqual([
      {role: 'user', content: [{type: 'text', text: 'go', cache_control: {type: 'ephemeral'}}]},
      {
        role: 'assistant',
        content: [
          {type: 'tool_use', id: 'functions_f_0', name: 'f', input: {a: 1}},
          {type: 'tool_use', id: 'call_ok-1', name: 'f', input: {}},
        ],
      },
      {
        role: 'user',
        content: [
          {type: 'tool_result', tool_use_id: 'functions_f_0'},
          {type: 'tool_result', tool_use_id: 'call_ok-1', content: [{type: 'text', text: 'done ✓'}]},
          {type: 'text', text: 'and now?', cache_control: {type: 'ephemeral'}},
        ],
      },
    ])
  })

  it('puts a merged user turn’s tool results before its text', () => {
    const client = decodeClientRequest(
      'gemini',
      {
        contents: [
          {role: 'user', parts: [{text: 'go'}]},
          {role: 'model', parts: [{functionCall: {name: 'f', args: {}}}]},
          {role: 'user', parts: [{text: 'also this'}]},
          {role: 'user', parts: [{functionResponse: {name: 'f', response: {output: 'r'}}}]},
        ],
      },
      {model: 'g'},
    )
    const body = JSON.parse(encodeUpstreamRequest(client, 'messages', 'm').body.toString())
    expect(body.messages.at(-1).content.map((b: {type: string}) => b.type)).toEqual(['tool_result', 'text'])
  })

  it('sends a Gemini schema that needs no change as it came, and lowers OpenAPI type names', () => {
    const plain = {type: 'object', properties: {a: {type: 'string', enum: ['X']}}, required: ['a']}
    const openapi = {type: 'OBJECT', properties: {a: {type: ['STRING', 'null']}, b: plain}}
    const client = decodeClientRequest(
      'gemini',
      {
        contents: [{role: 'user', parts: [{text: 'hi'}]}],
        tools: [
          {
            functionDeclarations: [
              {name: 'p', parametersJsonSchema: plain},
              {name: 'o', parameters: openapi},
            ],
          },
        ],
      },
      {model: 'g'},
    )
    expect(client.request.tools[0].parameters).toBe(plain)
    expect(client.request.tools[1].parameters).toEqual({
      type: 'object',
      properties: {a: {type: ['string', 'null']}, b: plain},
    })
    expect((client.request.tools[1].parameters.properties as {b: unknown}).b).toBe(plain)
    expect(openapi.type).toBe('OBJECT')
  })

  it('writes a Responses reasoning item’s JSON text only when read, the same text as before', () => {
    const client = decodeClientRequest(
      'responses',
      {
        model: 'gpt-5',
        input: [
          {type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'gAAA"x'},
          {type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}'},
          {type: 'function_call_output', call_id: 'c1', output: 'ok'},
        ],
      },
      {},
    )
    const part = client.request.messages[0].parts[0]
    expect(part.type === 'reasoning' && part.encrypted?.family).toBe('responses')
    const text = JSON.stringify({id: 'rs_1', encrypted_content: 'gAAA"x'})
    expect(part.type === 'reasoning' && part.encrypted?.value).toBe(text)
    // a copy of the part (the carry's size, a clone) has the value too
    expect(JSON.stringify(part)).toContain(JSON.stringify(text))
    expect(structuredClone(part)).toEqual({
      type: 'reasoning',
      text: '',
      encrypted: {family: 'responses', value: text},
    })
    const chat = encodeUpstreamRequest(client, 'chat', 'm').body.toString()
    expect(chat).not.toContain('gAAA')
    const messages = JSON.parse(encodeUpstreamRequest(client, 'messages', 'm').body.toString())
    expect(JSON.stringify(messages)).not.toContain('gAAA')
  })

  it('parses a client body of any size and says so when it is not JSON', () => {
    const text = JSON.stringify({messages: [{role: 'user', content: 'é — 🙂 '.repeat(2000)}]})
    expect(parseClientBody(Buffer.from(text))).toEqual(JSON.parse(text))
    expect(() => parseClientBody(Buffer.from(text.slice(0, -1)))).toThrow(TranslationError)
    expect(() => parseClientBody(Buffer.from('{"a":'))).toThrow('the request body is not JSON')
  })
})
