import Anthropic from '@anthropic-ai/sdk'
import {describe, expect, it} from 'vitest'

import {BoundedCarry} from './carry.js'
import {decodeAll, encodeAll, messagesSse, parseSse, serveOnce} from './cm-test-helpers.js'
import type {StreamEvent} from './ir.js'
import {messagesCodec} from './messages.js'

const decode = (payloads: Array<Record<string, unknown>>): StreamEvent[] =>
  decodeAll(messagesCodec.streamDecoder({}), messagesSse(payloads))

const start = {
  type: 'message_start',
  message: {
    id: 'msg_1',
    model: 'claude-x',
    usage: {input_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 0, output_tokens: 1},
  },
}

describe('messages stream decoder', () => {
  it('reads every block kind, cumulative usage and the end', () => {
    const events = decode([
      start,
      {type: 'content_block_start', index: 0, content_block: {type: 'thinking', thinking: '', signature: ''}},
      {type: 'ping'},
      {type: 'content_block_delta', index: 0, delta: {type: 'thinking_delta', thinking: 'T'}},
      {type: 'content_block_delta', index: 0, delta: {type: 'signature_delta', signature: 'SIG'}},
      {type: 'content_block_stop', index: 0},
      {type: 'content_block_start', index: 1, content_block: {type: 'redacted_thinking', data: 'RED'}},
      {type: 'content_block_stop', index: 1},
      {
        type: 'content_block_start',
        index: 2,
        content_block: {type: 'server_tool_use', id: 'srv', name: 'web_search'},
      },
      {type: 'content_block_stop', index: 2},
      {type: 'content_block_start', index: 3, content_block: {type: 'text', text: ''}},
      {type: 'content_block_delta', index: 3, delta: {type: 'text_delta', text: 'Hi'}},
      {type: 'content_block_stop', index: 3},
      {
        type: 'content_block_start',
        index: 4,
        content_block: {type: 'tool_use', id: 'toolu_1', name: 'f', input: {}},
      },
      {type: 'content_block_delta', index: 4, delta: {type: 'input_json_delta', partial_json: '{"a"'}},
      {type: 'content_block_delta', index: 4, delta: {type: 'input_json_delta', partial_json: ':1}'}},
      {type: 'content_block_stop', index: 4},
      {
        type: 'content_block_start',
        index: 5,
        content_block: {type: 'tool_use', id: 'toolu_2', name: 'g', input: {}},
      },
      {type: 'content_block_stop', index: 5},
      {
        type: 'message_delta',
        delta: {stop_reason: 'tool_use', stop_sequence: null},
        usage: {
          output_tokens: 30,
          cache_creation_input_tokens: 8,
          cache_creation: {ephemeral_1h_input_tokens: 8},
        },
      },
      {type: 'message_stop'},
    ])
    expect(events).toEqual([
      {
        type: 'start',
        id: 'msg_1',
        model: 'claude-x',
        usage: {
          inputTokens: 105,
          outputTokens: 1,
          cacheReadTokens: 100,
          cacheCreationTokens: 0,
          reasoningTokens: 0,
        },
      },
      {type: 'block_start', index: 0, block: {type: 'reasoning'}},
      {type: 'reasoning_delta', index: 0, text: 'T'},
      {type: 'reasoning_opaque', index: 0, signature: {family: 'messages', value: 'SIG'}},
      {type: 'block_stop', index: 0},
      {type: 'block_start', index: 1, block: {type: 'reasoning'}},
      {type: 'reasoning_opaque', index: 1, redacted: {family: 'messages', value: 'RED'}},
      {type: 'block_stop', index: 1},
      {type: 'block_start', index: 2, block: {type: 'text'}},
      {type: 'text_delta', index: 2, text: 'Hi'},
      {type: 'block_stop', index: 2},
      {type: 'block_start', index: 3, block: {type: 'tool_call', id: 'toolu_1', name: 'f'}},
      {type: 'tool_args_delta', index: 3, json: '{"a"'},
      {type: 'tool_args_delta', index: 3, json: ':1}'},
      {type: 'block_stop', index: 3},
      {type: 'block_start', index: 4, block: {type: 'tool_call', id: 'toolu_2', name: 'g'}},
      {type: 'tool_args_delta', index: 4, json: '{}'},
      {type: 'block_stop', index: 4},
      {type: 'stop', reason: 'tool_use'},
      {
        type: 'usage',
        usage: {
          inputTokens: 113,
          outputTokens: 30,
          cacheReadTokens: 100,
          cacheCreationTokens: 8,
          cache1hTokens: 8,
          reasoningTokens: 0,
        },
      },
      {type: 'end'},
    ])
  })

  it('turns an error event and a stream cut before its stop reason into errors; one without message_stop after it is whole', () => {
    expect(
      decode([start, {type: 'error', error: {type: 'overloaded_error', message: 'Overloaded'}}]).at(-1),
    ).toEqual({
      type: 'error',
      status: 529,
      message: 'Overloaded',
      code: 'overloaded_error',
    })
    expect(decode([start]).at(-1)).toEqual({
      type: 'error',
      status: 502,
      message: 'upstream stream ended before message_stop',
    })
    // its stop reason and usage came in message_delta, then the stream closed: whole
    expect(
      decode([
        start,
        {type: 'message_delta', delta: {stop_reason: 'end_turn'}, usage: {output_tokens: 1}},
      ]).slice(-3),
    ).toEqual([{type: 'stop', reason: 'end'}, expect.objectContaining({type: 'usage'}), {type: 'end'}])
  })
})

const sdkStream = async (sse: string) => {
  const server = await serveOnce(sse, true)
  const client = new Anthropic({baseURL: server.url, apiKey: 'k', maxRetries: 0})
  try {
    return await client.messages
      .stream({model: 'x', max_tokens: 10, messages: [{role: 'user', content: 'x'}]})
      .finalMessage()
  } finally {
    await server.close()
  }
}

describe('end_turn after a tool call (vLLM on a named tool_choice, LiteLLM ollama_chat; research55 F2)', () => {
  const call = [
    {
      type: 'content_block_start',
      index: 0,
      content_block: {type: 'tool_use', id: 'toolu_1', name: 'Read', input: {}},
    },
    {
      type: 'content_block_delta',
      index: 0,
      delta: {type: 'input_json_delta', partial_json: '{"file_path":"/a"}'},
    },
    {type: 'content_block_stop', index: 0},
  ]
  it('is tool_use: a chat client told stop would not run the call', () => {
    const events = decode([
      start,
      ...call,
      {type: 'message_delta', delta: {stop_reason: 'end_turn'}, usage: {output_tokens: 7}},
      {type: 'message_stop'},
    ])
    expect(events.filter((e) => e.type === 'stop')).toEqual([{type: 'stop', reason: 'tool_use'}])
    const answer = messagesCodec.decodeResponse({
      id: 'msg_1',
      model: 'claude-x',
      content: [{type: 'tool_use', id: 'toolu_1', name: 'Read', input: {file_path: '/a'}}],
      stop_reason: 'end_turn',
      usage: {input_tokens: 5, output_tokens: 7},
    })
    expect(answer.stop).toBe('tool_use')
  })
  it('text alone stays the end, and max_tokens after a call stays max_tokens', () => {
    const text = [
      {type: 'content_block_start', index: 0, content_block: {type: 'text', text: ''}},
      {type: 'content_block_delta', index: 0, delta: {type: 'text_delta', text: 'Done.'}},
      {type: 'content_block_stop', index: 0},
    ]
    const stops = (blocks: Array<Record<string, unknown>>, reason: string) =>
      decode([
        start,
        ...blocks,
        {type: 'message_delta', delta: {stop_reason: reason}, usage: {output_tokens: 2}},
        {type: 'message_stop'},
      ]).filter((e) => e.type === 'stop')
    expect(stops(text, 'end_turn')).toEqual([{type: 'stop', reason: 'end'}])
    expect(stops(call, 'max_tokens')).toEqual([{type: 'stop', reason: 'max_tokens'}])
  })
})

describe('messages stream encoder', () => {
  it('writes thinking with a wrapped signature and tool use the Anthropic SDK reads, with usage in message_delta', async () => {
    const carry = new BoundedCarry()
    const events: StreamEvent[] = [
      {type: 'start', id: 'resp_1', model: 'gpt-5', usage: {}},
      {type: 'block_start', index: 0, block: {type: 'reasoning'}},
      {type: 'reasoning_delta', index: 0, text: 'Thinking'},
      {
        type: 'reasoning_opaque',
        index: 0,
        encrypted: {family: 'responses', value: '{"id":"rs_1","encrypted_content":"E"}'},
      },
      {type: 'block_stop', index: 0},
      {type: 'block_start', index: 1, block: {type: 'tool_call', id: 'call_1', name: 'Read'}},
      {type: 'tool_args_delta', index: 1, json: '{"file_'},
      {type: 'tool_args_delta', index: 1, json: 'path":"a.ts"}'},
      {type: 'block_stop', index: 1},
      {type: 'stop', reason: 'tool_use'},
      {
        type: 'usage',
        usage: {inputTokens: 1000, cacheReadTokens: 800, outputTokens: 50, reasoningTokens: 20},
      },
      {type: 'end'},
    ]
    const sse = encodeAll(messagesCodec.streamEncoder({carry}), events)
    const wire = parseSse(sse)
    expect(wire.every((e) => e.event !== undefined)).toBe(true)
    expect(wire[0].event).toBe('message_start')
    expect(JSON.parse(wire.at(-2)?.data ?? '')).toEqual({
      type: 'message_delta',
      delta: {stop_reason: 'tool_use', stop_sequence: null},
      usage: {
        input_tokens: 200,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 800,
        output_tokens: 50,
        // the reasoning where Anthropic reports it
        output_tokens_details: {thinking_tokens: 20},
      },
    })
    const m = await sdkStream(sse)
    expect(m.content).toEqual([
      {
        type: 'thinking',
        thinking: 'Thinking',
        signature: 'gwx1.responses.{"id":"rs_1","encrypted_content":"E"}',
      },
      {type: 'tool_use', id: 'call_1', name: 'Read', input: {file_path: 'a.ts'}},
    ])
    expect(m.stop_reason).toBe('tool_use')
    expect(m.usage).toMatchObject({input_tokens: 200, cache_read_input_tokens: 800, output_tokens: 50})
    expect(carry.get('call_1')).toEqual([
      {
        type: 'reasoning',
        text: 'Thinking',
        encrypted: {family: 'responses', value: '{"id":"rs_1","encrypted_content":"E"}'},
      },
    ])
  })

  it('gives reasoning without an opaque no signature_delta, leaves empty thinking out, and writes redacted thinking as its own block', async () => {
    const events: StreamEvent[] = [
      {type: 'start', id: 'x', model: 'm'},
      {type: 'block_start', index: 0, block: {type: 'reasoning'}},
      {type: 'block_stop', index: 0},
      {type: 'block_start', index: 1, block: {type: 'reasoning'}},
      {type: 'reasoning_opaque', index: 1, redacted: {family: 'messages', value: 'RED'}},
      {type: 'block_stop', index: 1},
      {type: 'block_start', index: 2, block: {type: 'reasoning'}},
      {type: 'reasoning_delta', index: 2, text: 'plain'},
      {type: 'block_stop', index: 2},
      {type: 'block_start', index: 3, block: {type: 'text'}},
      {type: 'text_delta', index: 3, text: 'Done.'},
      {type: 'block_stop', index: 3},
      {type: 'stop', reason: 'end'},
      {type: 'end'},
    ]
    const sse = encodeAll(messagesCodec.streamEncoder({}), events)
    expect(sse).not.toContain('signature_delta')
    const m = await sdkStream(sse)
    expect(m.content).toEqual([
      {type: 'redacted_thinking', data: 'RED'},
      {type: 'thinking', thinking: 'plain', signature: ''},
      {type: 'text', text: 'Done.'},
    ])
    expect(m.stop_reason).toBe('end_turn')
  })

  it('writes tool calls streamed interleaved one block after the other', async () => {
    const events: StreamEvent[] = [
      {type: 'start', id: 'x', model: 'm'},
      {type: 'block_start', index: 0, block: {type: 'tool_call', id: 'a', name: 'fa'}},
      {type: 'block_start', index: 1, block: {type: 'tool_call', id: 'b', name: 'fb'}},
      {type: 'tool_args_delta', index: 1, json: '{"y":'},
      {type: 'tool_args_delta', index: 0, json: '{"x":1}'},
      {type: 'tool_args_delta', index: 1, json: '2}'},
      {type: 'block_stop', index: 1},
      {type: 'block_stop', index: 0},
      {type: 'stop', reason: 'tool_use'},
      {type: 'end'},
    ]
    const sse = encodeAll(messagesCodec.streamEncoder({}), events)
    const order = parseSse(sse).map((e) => {
      const p = JSON.parse(e.data) as {type: string; index?: number}
      return p.index === undefined ? p.type : `${p.type}:${p.index}`
    })
    expect(order).toEqual([
      'message_start',
      'content_block_start:0',
      'content_block_delta:0',
      'content_block_stop:0',
      'content_block_start:1',
      'content_block_delta:1',
      'content_block_delta:1',
      'content_block_stop:1',
      'message_delta',
      'message_stop',
    ])
    const m = await sdkStream(sse)
    expect(m.content).toEqual([
      {type: 'tool_use', id: 'a', name: 'fa', input: {x: 1}},
      {type: 'tool_use', id: 'b', name: 'fb', input: {y: 2}},
    ])
  })

  it('writes an error event that makes the SDK throw', async () => {
    const sse = encodeAll(messagesCodec.streamEncoder({}), [
      {type: 'start', id: 'x', model: 'm'},
      {type: 'block_start', index: 0, block: {type: 'text'}},
      {type: 'text_delta', index: 0, text: 'par'},
      {type: 'error', status: 502, message: 'upstream stream ended before [DONE]'},
    ])
    expect(sse).toContain('event: error\ndata: {"type":"error","error":{"type":"api_error"')
    await expect(sdkStream(sse)).rejects.toThrow(/ended before/)
  })
})

describe('messages stream decoder: deltas read without a parse', () => {
  // A content_block_delta that differs from the one before it only in its string is read without
  // a parse. Each stream is decoded as it is and with that path off; both must agree.
  const delta = (index: number, d: string): string =>
    `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":${d}}\n\n`
  const text = (s: string, index = 0): string => delta(index, `{"type":"text_delta","text":"${s}"}`)
  const args = (s: string, index = 1): string =>
    delta(index, `{"type":"input_json_delta","partial_json":"${s}"}`)
  const sse = (...parts: string[]): string => messagesSse([start]) + parts.join('')

  const decodeBoth = (text: string): StreamEvent[] => {
    const run = (templates: boolean): StreamEvent[] => {
      const decoder = messagesCodec.streamDecoder({}) as ReturnType<typeof messagesCodec.streamDecoder> & {
        template?: unknown
      }
      const events: StreamEvent[] = []
      for (const e of parseSse(text)) {
        if (!templates) decoder.template = undefined
        events.push(...decoder.event(e.event, e.data))
      }
      return [...events, ...decoder.end()]
    }
    const fast = run(true)
    expect(fast).toEqual(run(false))
    return fast
  }

  it('reads text, escapes, tool arguments and a change of block as a parse would', () => {
    const events = decodeBoth(
      sse(
        messagesSse([{type: 'content_block_start', index: 0, content_block: {type: 'text', text: ''}}]),
        text('Hel'),
        text('lo \\"x\\" \\u00e9'),
        text(''),
        messagesSse([
          {type: 'content_block_stop', index: 0},
          {
            type: 'content_block_start',
            index: 1,
            content_block: {type: 'tool_use', id: 't1', name: 'f', input: {}},
          },
        ]),
        args('{\\"a\\"'),
        args(':1}'),
        messagesSse([{type: 'content_block_stop', index: 1}, {type: 'message_stop'}]),
      ),
    )
    expect(events.filter((e) => e.type === 'text_delta').map((e) => (e as {text: string}).text)).toEqual([
      'Hel',
      'lo "x" é',
    ])
    expect(events.filter((e) => e.type === 'tool_args_delta').map((e) => (e as {json: string}).json)).toEqual(
      ['{"a"', ':1}'],
    )
  })

  it('parses a delta whose string would change its structure, and refuses one that is not JSON', () => {
    decodeBoth(
      sse(
        messagesSse([{type: 'content_block_start', index: 0, content_block: {type: 'text', text: ''}}]),
        text('a'),
        text('b"},"index":5,"x":{"y":"z'),
        messagesSse([{type: 'message_stop'}]),
      ),
    )
    const decoder = messagesCodec.streamDecoder({})
    for (const e of parseSse(
      sse(
        messagesSse([{type: 'content_block_start', index: 0, content_block: {type: 'text', text: ''}}]),
        text('a'),
      ),
    ))
      decoder.event(e.event, e.data)
    expect(() => decoder.event('content_block_delta', parseSse(text('b\tc'))[0].data)).toThrow(/not JSON/)
  })
})

describe('messages stream encoder: deltas written as text', () => {
  it('writes text, thinking and tool-argument deltas as JSON.stringify would write their events', () => {
    const encoder = messagesCodec.streamEncoder({})
    const odd = 'say "hi"\n\u00e9\u2028 😀 \\'
    const out = encodeAll(encoder, [
      {type: 'start', id: 'm1', model: 'x'},
      {type: 'block_start', index: 0, block: {type: 'reasoning'}},
      {type: 'reasoning_delta', index: 0, text: odd},
      {type: 'block_stop', index: 0},
      {type: 'block_start', index: 1, block: {type: 'text'}},
      {type: 'text_delta', index: 1, text: odd},
      {type: 'block_stop', index: 1},
      {type: 'block_start', index: 2, block: {type: 'tool_call', id: 't1', name: 'f'}},
      {type: 'tool_args_delta', index: 2, json: '{"a":"' + odd.replace(/["\\\n]/g, '') + '"}'},
      {type: 'block_stop', index: 2},
    ])
    const deltas = parseSse(out).filter((e) => e.event === 'content_block_delta')
    expect(deltas).toHaveLength(3)
    // the bytes JSON.stringify writes for each event object, key order included
    expect(deltas.map((d) => d.data)).toEqual(
      [
        {type: 'content_block_delta', index: 0, delta: {type: 'thinking_delta', thinking: odd}},
        {type: 'content_block_delta', index: 1, delta: {type: 'text_delta', text: odd}},
        {
          type: 'content_block_delta',
          index: 2,
          delta: {type: 'input_json_delta', partial_json: '{"a":"' + odd.replace(/["\\\n]/g, '') + '"}'},
        },
      ].map((e) => JSON.stringify(e)),
    )
  })

  it('writes the events of every stream (start, block starts and stops, delta, stop) as JSON.stringify would', () => {
    const encoder = messagesCodec.streamEncoder({newId: (p) => `${p}made`, model: 'asked'})
    const out = encodeAll(encoder, [
      {type: 'start', id: '', model: '', usage: {inputTokens: 9, cacheReadTokens: 4}},
      {type: 'block_start', index: 0, block: {type: 'reasoning'}},
      {type: 'reasoning_delta', index: 0, text: 'T'},
      {type: 'reasoning_opaque', index: 0, signature: {family: 'gemini', value: 'g"sig'}},
      {type: 'block_stop', index: 0},
      {type: 'block_start', index: 1, block: {type: 'reasoning'}},
      {type: 'reasoning_opaque', index: 1, redacted: {family: 'messages', value: 'RED'}},
      {type: 'block_stop', index: 1},
      {type: 'block_start', index: 2, block: {type: 'text'}},
      {type: 'text_delta', index: 2, text: 'hi'},
      {type: 'block_stop', index: 2},
      {type: 'block_start', index: 3, block: {type: 'tool_call', id: 'toolu_"1', name: 'f\u2028'}},
      {type: 'block_stop', index: 3},
      {type: 'stop', reason: 'stop_sequence', stopSequence: 'E"ND'},
      {type: 'usage', usage: {outputTokens: 5, cacheCreationTokens: 2, cache1hTokens: 1}},
      {type: 'end'},
    ])
    const usage = {
      input_tokens: 5,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 4,
      output_tokens: 0,
    }
    const expected = [
      {
        type: 'message_start',
        message: {
          id: 'msg_made',
          type: 'message',
          role: 'assistant',
          model: 'asked',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
        },
      },
      {type: 'content_block_start', index: 0, content_block: {type: 'thinking', thinking: '', signature: ''}},
      {type: 'content_block_delta', index: 0, delta: {type: 'thinking_delta', thinking: 'T'}},
      {
        type: 'content_block_delta',
        index: 0,
        delta: {type: 'signature_delta', signature: 'gwx1.gemini.g"sig'},
      },
      {type: 'content_block_stop', index: 0},
      {type: 'content_block_start', index: 1, content_block: {type: 'redacted_thinking', data: 'RED'}},
      {type: 'content_block_stop', index: 1},
      {type: 'content_block_start', index: 2, content_block: {type: 'text', text: ''}},
      {type: 'content_block_delta', index: 2, delta: {type: 'text_delta', text: 'hi'}},
      {type: 'content_block_stop', index: 2},
      {
        type: 'content_block_start',
        index: 3,
        content_block: {type: 'tool_use', id: 'toolu_"1', name: 'f\u2028', input: {}},
      },
      {type: 'content_block_stop', index: 3},
      {
        type: 'message_delta',
        delta: {stop_reason: 'stop_sequence', stop_sequence: 'E"ND'},
        usage: {
          input_tokens: 3,
          cache_creation_input_tokens: 2,
          cache_read_input_tokens: 4,
          cache_creation: {ephemeral_5m_input_tokens: 1, ephemeral_1h_input_tokens: 1},
          output_tokens: 5,
        },
      },
      {type: 'message_stop'},
    ]
    // the bytes, event names and key order included
    expect(out).toBe(expected.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(''))
  })
})
