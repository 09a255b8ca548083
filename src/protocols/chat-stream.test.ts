import OpenAI from 'openai'
import {afterEach, describe, expect, it, vi} from 'vitest'

import {BoundedCarry} from './carry.js'
import {chatCodec} from './chat.js'
import {chatFinish, decodeChatUsage} from './chat-stream.js'
import {
  chatChunk,
  chatSse,
  chatToolChunk,
  decodeAll,
  encodeAll,
  parseSse,
  serveOnce,
} from './cm-test-helpers.js'
import type {StreamEvent} from './ir.js'

const chunk = chatChunk
const tc = chatToolChunk

const decode = (chunks: unknown[]): StreamEvent[] => decodeAll(chatCodec.streamDecoder({}), chatSse(chunks))

describe('chat stream decoder', () => {
  it('opens and closes blocks as kinds change, and puts usage after the stop', () => {
    const usage = {prompt_tokens: 9, completion_tokens: 4, prompt_tokens_details: {cached_tokens: 2}}
    expect(
      decode([
        chunk({role: 'assistant', content: ''}),
        chunk({reasoning_content: 'th'}),
        chunk({reasoning_content: 'ink', content: null}),
        chunk({content: 'Hel'}),
        chunk({content: 'lo'}),
        chunk({}, 'stop'),
        {...chunk({}), choices: [], usage},
        '[DONE]',
      ]),
    ).toEqual([
      {type: 'start', id: 'c1', model: 'up'},
      {type: 'block_start', index: 0, block: {type: 'reasoning'}},
      {type: 'reasoning_opaque', index: 0, signature: {family: 'chat', value: ''}},
      {type: 'reasoning_delta', index: 0, text: 'th'},
      {type: 'reasoning_delta', index: 0, text: 'ink'},
      {type: 'block_stop', index: 0},
      {type: 'block_start', index: 1, block: {type: 'text'}},
      {type: 'text_delta', index: 1, text: 'Hel'},
      {type: 'text_delta', index: 1, text: 'lo'},
      {type: 'block_stop', index: 1},
      {type: 'stop', reason: 'end'},
      {
        type: 'usage',
        usage: {
          inputTokens: 9,
          outputTokens: 4,
          cacheReadTokens: 2,
          cacheCreationTokens: 0,
          reasoningTokens: 0,
        },
      },
      {type: 'end'},
    ])
  })

  it('reads interleaved tool calls with arguments split anywhere, empty arguments as {}, and a missing finish_reason', () => {
    const events = decode([
      chunk({role: 'assistant'}),
      tc(0, {name: 'a', arguments: ''}, 'call_a'),
      tc(1, {name: 'b', arguments: '{"q'}, 'call_b'),
      tc(0, {arguments: '{"x"'}),
      tc(1, {arguments: '":1}'}),
      tc(0, {arguments: ':"y"}'}),
      tc(2, {name: 'c', arguments: ''}, 'call_c'),
      '[DONE]',
    ])
    const args = new Map<number, string>()
    for (const e of events)
      if (e.type === 'tool_args_delta') args.set(e.index, (args.get(e.index) ?? '') + e.json)
    const starts = events.filter((e) => e.type === 'block_start')
    expect(starts).toEqual([
      {type: 'block_start', index: 0, block: {type: 'tool_call', id: 'call_a', name: 'a'}},
      {type: 'block_start', index: 1, block: {type: 'tool_call', id: 'call_b', name: 'b'}},
      {type: 'block_start', index: 2, block: {type: 'tool_call', id: 'call_c', name: 'c'}},
    ])
    expect([...args.entries()].sort()).toEqual([
      [0, '{"x":"y"}'],
      [1, '{"q":1}'],
      [2, '{}'],
    ])
    expect(events.filter((e) => e.type === 'block_stop')).toHaveLength(3)
    expect(events.slice(-2)).toEqual([{type: 'stop', reason: 'tool_use'}, {type: 'end'}])
  })

  it('closes a finished tool call when the next one starts (streams stay live one call at a time)', () => {
    const events = decode([
      tc(0, {name: 'a', arguments: '{}'}, 'call_a'),
      tc(1, {name: 'b', arguments: '{}'}, 'call_b'),
      chunk({}, 'tool_calls'),
      '[DONE]',
    ])
    expect(events.map((e) => e.type + ('index' in e ? e.index : ''))).toEqual([
      'start',
      'block_start0',
      'tool_args_delta0',
      'block_stop0',
      'block_start1',
      'tool_args_delta1',
      'block_stop1',
      'stop',
      'end',
    ])
  })

  it('reads a server that gives every call index 0 with a new id as separate calls', () => {
    const events = decode([
      tc(0, {name: 'a', arguments: '{"x":1}'}, 'call_a'),
      tc(0, {name: 'b', arguments: '{"z":2}'}, 'call_b'),
      chunk({}, 'stop'),
      '[DONE]',
    ])
    expect(events.filter((e) => e.type === 'block_start' || e.type === 'tool_args_delta')).toEqual([
      {type: 'block_start', index: 0, block: {type: 'tool_call', id: 'call_a', name: 'a'}},
      {type: 'tool_args_delta', index: 0, json: '{"x":1}'},
      {type: 'block_start', index: 1, block: {type: 'tool_call', id: 'call_b', name: 'b'}},
      {type: 'tool_args_delta', index: 1, json: '{"z":2}'},
    ])
    expect(events.find((e) => e.type === 'stop')).toEqual({type: 'stop', reason: 'tool_use'})
  })

  describe('a server that reuses an index for its next call without a new id', () => {
    /** The calls of a stream: each block's name and whole arguments, in order. */
    const calls = (chunks: unknown[]): Array<[string, string]> => {
      const out = new Map<number, [string, string]>()
      for (const e of decode([...chunks, chunk({}, 'tool_calls'), '[DONE]']))
        if (e.type === 'block_start' && e.block.type === 'tool_call') out.set(e.index, [e.block.name, ''])
        else if (e.type === 'tool_args_delta') out.get(e.index)![1] += e.json
      return [...out.values()]
    }
    it.each([
      [
        "Gemini's: each call whole at index 0, the same tool twice",
        [tc(0, {name: 'w', arguments: '{"city":"北京"}'}), tc(0, {name: 'w', arguments: '{"city":"上海"}'})],
        [
          ['w', '{"city":"北京"}'],
          ['w', '{"city":"上海"}'],
        ],
      ],
      [
        'the name first, the arguments after',
        [
          tc(0, {name: 'a', arguments: ''}),
          tc(0, {arguments: '{"x":'}),
          tc(0, {arguments: '1}'}),
          tc(0, {name: 'b', arguments: ''}),
          tc(0, {arguments: '{"y":2}'}),
        ],
        [
          ['a', '{"x":1}'],
          ['b', '{"y":2}'],
        ],
      ],
      [
        'the name repeated on every chunk, a last empty one too (one call)',
        [
          tc(0, {name: 'a', arguments: '{"o":{"p":1}'}),
          tc(0, {name: 'a', arguments: ',"q":2}'}),
          tc(0, {name: 'a', arguments: ''}),
        ],
        [['a', '{"o":{"p":1},"q":2}']],
      ],
      [
        "DeepSeek V4's: a call's head at the index before, its arguments at the next (agno #8879)",
        [
          tc(0, {name: 'Read', arguments: '{"p":'}, 'call_a'),
          tc(0, {arguments: '"x"}'}),
          tc(0, {name: 'Read', arguments: ''}, 'call_b'),
          tc(1, {arguments: '{"p":'}),
          tc(1, {arguments: '"y"}'}),
        ],
        [
          ['Read', '{"p":"x"}'],
          ['Read', '{"p":"y"}'],
        ],
      ],
      [
        "DeepSeek V4's shifted heads, four calls: each call's own arguments",
        [
          tc(0, {name: 'Read', arguments: ''}, 'call_a'),
          tc(0, {arguments: '{"p":"x"}'}),
          tc(0, {name: 'Bash', arguments: ''}, 'call_b'),
          tc(1, {arguments: '{"cmd":"y"}'}),
          tc(1, {name: 'Grep', arguments: ''}, 'call_c'),
          tc(2, {arguments: '{"pattern":"z"}'}),
          tc(2, {name: 'Glob', arguments: ''}, 'call_d'),
          tc(3, {arguments: '{"glob":"*"}'}),
        ],
        [
          ['Read', '{"p":"x"}'],
          ['Bash', '{"cmd":"y"}'],
          ['Grep', '{"pattern":"z"}'],
          ['Glob', '{"glob":"*"}'],
        ],
      ],
      [
        "one call's head at index 0, its arguments at index 1",
        [tc(0, {name: 'Read', arguments: ''}, 'call_a'), tc(1, {arguments: '{"p":"x"}'})],
        [['Read', '{"p":"x"}']],
      ],
      [
        "a call's arguments before its id and name (vercel/ai #5885), after a call with arguments",
        [
          tc(0, {name: 'a', arguments: '{"x":1}'}, 'call_a'),
          tc(1, {arguments: '{"y":2}'}),
          tc(1, {name: 'b'}, 'call_b'),
        ],
        [
          ['a', '{"x":1}'],
          ['b', '{"y":2}'],
        ],
      ],
      [
        "a call's arguments before its id and name, alone (vercel/ai #5885)",
        [tc(0, {arguments: '{"y":2}'}), tc(0, {name: 'b'}, 'call_b')],
        [['b', '{"y":2}']],
      ],
      [
        'a call after text that closed the one before',
        [
          tc(0, {name: 'a', arguments: '{}'}, 'call_a'),
          chunk({content: 'so'}),
          tc(0, {name: 'b', arguments: '{}'}),
        ],
        [
          ['a', '{}'],
          ['b', '{}'],
        ],
      ],
    ] as Array<[string, unknown[], Array<[string, string]>]>)('%s', (_name, chunks, expected) => {
      expect(calls(chunks)).toEqual(expected)
    })

    it("keeps each shifted head's own id", () => {
      const ids = decode([
        tc(0, {name: 'Read', arguments: ''}, 'call_a'),
        tc(0, {arguments: '{}'}),
        tc(0, {name: 'Bash', arguments: ''}, 'call_b'),
        tc(1, {arguments: '{}'}),
        tc(1, {name: 'Grep', arguments: ''}, 'call_c'),
        tc(2, {arguments: '{}'}),
        chunk({}, 'tool_calls'),
        '[DONE]',
      ]).flatMap((e) => (e.type === 'block_start' && e.block.type === 'tool_call' ? [e.block.id] : []))
      expect(ids).toEqual(['call_a', 'call_b', 'call_c'])
    })

    it('leaves out a call that never gets a name, counts it, and ends the turn when no call is left', () => {
      const decoder = chatCodec.streamDecoder({})
      const events = decodeAll(
        decoder,
        chatSse([
          chunk({content: 'Let me look.'}),
          tc(0, {arguments: '{"p":'}, 'call_a'),
          tc(0, {arguments: '"x"}'}),
          chunk({}, 'tool_calls'),
          '[DONE]',
        ]),
      )
      expect(events.filter((e) => e.type === 'block_start')).toEqual([
        {type: 'block_start', index: 0, block: {type: 'text'}},
      ])
      expect(events.filter((e) => e.type === 'tool_args_delta')).toEqual([])
      expect(events).toContainEqual({type: 'stop', reason: 'end'})
      expect(decoder.namelessCalls).toBe(1)
    })

    it('ends an answer of nothing but a nameless call with a 502 (the client retries), finish or not', () => {
      for (const finish of [[chunk({}, 'tool_calls')], []]) {
        const decoder = chatCodec.streamDecoder({})
        const events = decodeAll(decoder, chatSse([tc(0, {arguments: '{}'}, 'call_a'), ...finish, '[DONE]']))
        expect(events.filter((e) => e.type === 'block_start' || e.type === 'stop')).toEqual([])
        expect(events.at(-1)).toEqual({
          type: 'error',
          status: 502,
          message: 'the upstream answered only tool calls with no name (nothing a client can run)',
        })
      }
    })

    it('counts no empty stub (no id, no name, no arguments) before a text answer', () => {
      const decoder = chatCodec.streamDecoder({})
      const events = decodeAll(
        decoder,
        chatSse([tc(0, {}), chunk({content: 'Hi'}), chunk({}, 'stop'), '[DONE]']),
      )
      expect(events).toContainEqual({type: 'stop', reason: 'end'})
      expect(decoder.namelessCalls).toBe(0)
    })

    it('keeps the named call beside a nameless one that has arguments of its own', () => {
      const decoder = chatCodec.streamDecoder({})
      const events = decodeAll(
        decoder,
        chatSse([
          tc(0, {name: 'Read', arguments: '{"p":"x"}'}, 'call_a'),
          tc(1, {arguments: '{"q":1}'}, 'call_b'),
          chunk({}, 'tool_calls'),
          '[DONE]',
        ]),
      )
      expect(
        events.flatMap((e) =>
          e.type === 'block_start' && e.block.type === 'tool_call' ? [e.block.name] : [],
        ),
      ).toEqual(['Read'])
      expect(events).toContainEqual({type: 'stop', reason: 'tool_use'})
      expect(decoder.namelessCalls).toBe(1)
    })
  })

  it('takes usage on the finish chunk and reads DeepSeek cache hits', () => {
    const events = decode([
      {...chunk({}, 'length'), usage: {prompt_tokens: 5, completion_tokens: 1, prompt_cache_hit_tokens: 3}},
      '[DONE]',
    ])
    expect(events.slice(1)).toEqual([
      {type: 'stop', reason: 'max_tokens'},
      {
        type: 'usage',
        usage: {
          inputTokens: 5,
          outputTokens: 1,
          cacheReadTokens: 3,
          cacheCreationTokens: 0,
          reasoningTokens: 0,
        },
      },
      {type: 'end'},
    ])
  })

  it("takes Cerebras's usage on its finish chunk, OpenAI's fields read, its time_info beside them", () => {
    // Cerebras's last chunk: the finish reason, the usage and its timings in one
    const events = decode([
      `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-oss-120b","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":2048,"completion_tokens":120,"total_tokens":2168,"prompt_tokens_details":{"cached_tokens":1536},"completion_tokens_details":{"reasoning_tokens":80}},"time_info":{"queue_time":0.0002,"prompt_time":0.01,"completion_time":0.05,"total_time":0.07,"created":1}}`,
      '[DONE]',
    ])
    expect(events.slice(1)).toEqual([
      {type: 'stop', reason: 'end'},
      {
        type: 'usage',
        usage: {
          inputTokens: 2048,
          outputTokens: 120,
          cacheReadTokens: 1536,
          cacheCreationTokens: 0,
          reasoningTokens: 80,
        },
      },
      {type: 'end'},
    ])
  })

  it("takes Moonshot's usage in the finish chunk's choice, and its cache hits beside the counts", () => {
    const usage = {prompt_tokens: 1000, completion_tokens: 5, total_tokens: 1005, cached_tokens: 900}
    // Kimi's text chunks (a template after the first) and its finish chunk, byte for byte
    const text = (t: string) =>
      `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"kimi-k2.5","choices":[{"index":0,"delta":{"content":${JSON.stringify(t)}},"finish_reason":null}]}`
    const events = decode([
      text('Hel'),
      text('lo'),
      text('!'),
      `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"kimi-k2.5","choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":${JSON.stringify(usage)}}]}`,
      '[DONE]',
    ])
    expect(events.filter((e) => e.type === 'text_delta').map((e) => (e as {text: string}).text)).toEqual([
      'Hel',
      'lo',
      '!',
    ])
    expect(events.slice(-3)).toEqual([
      {type: 'stop', reason: 'end'},
      {
        type: 'usage',
        usage: {
          inputTokens: 1000,
          outputTokens: 5,
          cacheReadTokens: 900,
          cacheCreationTokens: 0,
          reasoningTokens: 0,
        },
      },
      {type: 'end'},
    ])
    // a chunk's own usage wins over its choice's; OpenAI's cache field over the top-level one
    const both = decode([
      {
        ...chunk({}, 'stop'),
        choices: [{index: 0, delta: {}, finish_reason: 'stop', usage: {prompt_tokens: 1}}],
        usage: {prompt_tokens: 7, cached_tokens: 1, prompt_tokens_details: {cached_tokens: 3}},
      },
      '[DONE]',
    ])
    expect(both.find((e) => e.type === 'usage')).toMatchObject({usage: {inputTokens: 7, cacheReadTokens: 3}})
  })

  describe('arguments that are no JSON (Qwen3-Coder and GLM under vLLM, SGLang, llama.cpp)', () => {
    const argsOf = (events: StreamEvent[], index: number) =>
      events
        .filter((e) => e.type === 'tool_args_delta' && e.index === index)
        .map((e) => (e as {json: string}).json)
        .join('')

    it("single quotes, a trailing comma, a second object: the deltas add up to the first object's JSON", () => {
      const decoder = chatCodec.streamDecoder({})
      const events = decodeAll(
        decoder,
        chatSse([
          tc(0, {name: 'Bash', arguments: "{'command': "}, 'call_a'),
          tc(0, {arguments: "'ls -la',"}),
          tc(0, {arguments: " 'timeout': 5}"}),
          tc(1, {name: 'Read', arguments: '{"path": "/a",'}, 'call_b'),
          tc(1, {arguments: ' }{"path": "/b"}'}),
          chunk({}, 'tool_calls'),
          '[DONE]',
        ]),
      )
      expect(JSON.parse(argsOf(events, 0))).toEqual({command: 'ls -la', timeout: 5})
      expect(JSON.parse(argsOf(events, 1))).toEqual({path: '/a'})
      // what went out before the break is never taken back: the repair's remainder follows it
      expect(events.filter((e) => e.type === 'tool_args_delta' && e.index === 1)).toEqual([
        {type: 'tool_args_delta', index: 1, json: '{"path": "/a"'},
        {type: 'tool_args_delta', index: 1, json: ' }'},
      ])
      expect(decoder.repairedArgs).toBe(2)
    })

    it('a call cut open by the token limit is not closed into one that runs: its text goes on as it came', () => {
      const decoder = chatCodec.streamDecoder({})
      const events = decodeAll(
        decoder,
        chatSse([
          tc(0, {name: 'Bash', arguments: "{'command': 'rm -rf /tmp/x"}, 'call_a'),
          chunk({}, 'length'),
          '[DONE]',
        ]),
      )
      expect(argsOf(events, 0)).toBe("{'command': 'rm -rf /tmp/x")
      expect(events.find((e) => e.type === 'stop')).toEqual({type: 'stop', reason: 'max_tokens'})
      expect(decoder.repairedArgs).toBe(0)
    })

    it("a JSON answer's calls: repaired where they can be, a cut one left as it came", () => {
      const response = chatCodec.decodeResponse({
        id: 'c1',
        model: 'up',
        choices: [
          {
            index: 0,
            finish_reason: 'tool_calls',
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: 'a',
                  type: 'function',
                  function: {name: 'Bash', arguments: '```json\n{"command": "ls"}\n```'},
                },
                {
                  id: 'b',
                  type: 'function',
                  function: {name: 'Bash', arguments: JSON.stringify('{"command": "pwd"}')},
                },
                {
                  id: 'c',
                  type: 'function',
                  function: {name: 'Bash', arguments: '{"command": "rm -rf /tmp/x'},
                },
              ],
            },
          },
        ],
      })
      expect(response.parts.map((p) => (p.type === 'tool_call' ? p.arguments : ''))).toEqual([
        '{"command": "ls"}',
        '{"command": "pwd"}',
        '{"command": "rm -rf /tmp/x',
      ])
      expect(response.repairedArgs).toBe(2)
    })
  })

  it("takes arguments sent as a JSON object (llama.cpp's server, TGI) as their JSON text, not {}", () => {
    const events = decode([
      tc(0, {name: 'Read', arguments: {file_path: '/a', limit: 2}}, 'call_a'),
      // the header first, the object in a chunk of its own
      tc(1, {name: 'Grep', arguments: ''}, 'call_b'),
      tc(1, {arguments: ['x', {y: 1}]}),
      chunk({}, 'tool_calls'),
      '[DONE]',
    ])
    const args = (index: number) =>
      events
        .filter((e) => e.type === 'tool_args_delta' && e.index === index)
        .map((e) => (e as {json: string}).json)
        .join('')
    expect(JSON.parse(args(0))).toEqual({file_path: '/a', limit: 2})
    expect(JSON.parse(args(1))).toEqual(['x', {y: 1}])
    expect(events.find((e) => e.type === 'stop')).toEqual({type: 'stop', reason: 'tool_use'})
  })

  it('turns an error payload and a stream cut before its finish reason into errors; one without [DONE] after it is whole', () => {
    expect(
      decode([chunk({content: 'x'}), {error: {message: 'boom', type: 'server_error', code: 'x1'}}]).at(-1),
    ).toEqual({
      type: 'error',
      status: 502,
      message: 'boom',
      code: 'x1',
    })
    expect(decode([chunk({content: 'x'})]).at(-1)).toEqual({
      type: 'error',
      status: 502,
      message: 'upstream stream ended before [DONE]',
    })
    // its finish reason (and usage) came, then the server closed without [DONE]: whole
    expect(
      decode([
        chunk({content: 'x'}),
        chunk({}, 'stop'),
        {choices: [], usage: {prompt_tokens: 3, completion_tokens: 1}},
      ]).slice(-4),
    ).toEqual([
      {type: 'block_stop', index: 0},
      {type: 'stop', reason: 'end'},
      expect.objectContaining({type: 'usage'}),
      {type: 'end'},
    ])
    // a finish reason that says the answer broke off: vLLM's abort, DeepSeek's lack of resources,
    // Z.ai's network error
    for (const reason of ['abort', 'insufficient_system_resource', 'error', 'network_error'])
      expect(decode([chunk({content: 'x'}), chunk({}, reason), '[DONE]'] as unknown[]).slice(-2)).toEqual([
        {type: 'text_delta', index: 0, text: 'x'},
        {type: 'error', status: 502, message: `upstream stopped the answer: finish_reason ${reason}`},
      ])
  })
})

describe('an empty finish_reason on every chunk (SenseNova, Perplexity, Together, OpenCode Zen hy3; research55 F1)', () => {
  const hy3 = [
    chunk({role: 'assistant', reasoning_content: 'Thinking'}, ''),
    chunk({content: 'Let me read it.'}, ''),
    chunk(
      {tool_calls: [{index: 0, id: 'call_1', type: 'function', function: {name: 'Read', arguments: ''}}]},
      '',
    ),
    chunk({tool_calls: [{index: 0, function: {arguments: '{"file_path":"/a"}'}}]}, ''),
    chunk({}, 'tool_calls'),
    {choices: [], usage: {prompt_tokens: 9, completion_tokens: 4}},
    '[DONE]',
  ]

  it('is no stop: the reasoning, the text and the call all come, and the stop is the real one', () => {
    const events = decode(hy3)
    expect(events.filter((e) => e.type === 'stop')).toEqual([{type: 'stop', reason: 'tool_use'}])
    const stopAt = events.findIndex((e) => e.type === 'stop')
    // every block is opened and closed before the stop
    expect(events.slice(stopAt).some((e) => e.type === 'block_start' || e.type === 'text_delta')).toBe(false)
    expect(
      events.filter((e) => e.type === 'block_start').map((e) => (e as {block: {type: string}}).block.type),
    ).toEqual(['reasoning', 'text', 'tool_call'])
    expect(events.at(-1)).toEqual({type: 'end'})
  })

  it('a decoder fed chunk by chunk is not stopped before the real finish', () => {
    const decoder = chatCodec.streamDecoder({})
    const events = parseSse(chatSse(hy3))
    for (const e of events.slice(0, 4)) decoder.event(e.event, e.data)
    expect(decoder.stopped).toBeFalsy()
    decoder.event(undefined, events[4].data)
    expect(decoder.stopped).toBe(true)
  })

  it('is read the same through the text template (the chunks after the first read without a parse)', () => {
    const text = ['Spr', 'ing ', 'is ', 'here', '.']
    const events = decode([
      chunk({role: 'assistant', content: ''}, ''),
      ...text.map((t) => chunk({content: t}, '')),
      chunk({}, 'stop'),
      '[DONE]',
    ])
    expect(
      events
        .filter((e) => e.type === 'text_delta')
        .map((e) => (e as {text: string}).text)
        .join(''),
    ).toBe('Spring is here.')
    expect(events.filter((e) => e.type === 'stop')).toEqual([{type: 'stop', reason: 'end'}])
  })
})

describe('finish_reason tool_calls with no call (LM Studio, relays; research55 F2)', () => {
  it('is an end of the turn, not tool_use: a Messages client is not told to run nothing', () => {
    expect(chatFinish('tool_calls', false)).toBe('end')
    expect(chatFinish('function_call', false)).toBe('end')
    expect(chatFinish('tool_calls', true)).toBe('tool_use')
    const events = decode([
      chunk({content: 'Let me read the file.'}),
      chunk({tool_calls: []}, 'tool_calls'),
      '[DONE]',
    ])
    expect(events.filter((e) => e.type === 'stop')).toEqual([{type: 'stop', reason: 'end'}])
  })

  it('in a JSON answer too', () => {
    const response = chatCodec.decodeResponse(
      {
        id: 'c1',
        model: 'up',
        choices: [
          {
            index: 0,
            message: {role: 'assistant', content: 'Let me read the file.', tool_calls: []},
            finish_reason: 'tool_calls',
          },
        ],
        usage: {prompt_tokens: 3, completion_tokens: 5},
      },
      {},
    )
    expect(response.stop).toBe('end')
  })
})

describe("GLM's streamed tool calls with tool_stream (Z.ai; weave-os/router PR #1099)", () => {
  it('keeps the reasoning of a delta that also opens a call, one block a call whose id every delta repeats, and the last piece on the finish delta', () => {
    const call = (
      index: number,
      id: string,
      fn: Record<string, unknown>,
      extra: Record<string, unknown> = {},
    ) => chunk({...extra, tool_calls: [{index, id, type: 'function', function: fn}]})
    const events = decode([
      chunk({role: 'assistant', reasoning_content: 'I will '}),
      chunk({reasoning_content: 'read '}),
      // the call's head beside the last piece of reasoning
      call(0, 'call_1', {name: 'Read', arguments: ''}, {reasoning_content: 'both files.'}),
      call(0, 'call_1', {arguments: '{"file_path":'}),
      call(0, 'call_1', {arguments: '"/a.txt"}'}),
      call(1, 'call_2', {name: 'Read', arguments: '{"file_'}),
      call(1, 'call_2', {arguments: 'path":'}),
      // the last fragment on the delta that finishes
      chunk(
        {tool_calls: [{index: 1, id: 'call_2', type: 'function', function: {arguments: '"/b.txt"}'}}]},
        'tool_calls',
      ),
      '[DONE]',
    ])
    const reasoning = events.flatMap((e) => (e.type === 'reasoning_delta' ? [e.text] : [])).join('')
    expect(reasoning).toBe('I will read both files.')
    const starts = events.filter((e) => e.type === 'block_start')
    expect(starts.map((e) => e.block)).toEqual([
      {type: 'reasoning'},
      {type: 'tool_call', id: 'call_1', name: 'Read'},
      {type: 'tool_call', id: 'call_2', name: 'Read'},
    ])
    const args = new Map<number, string>()
    for (const e of events)
      if (e.type === 'tool_args_delta') args.set(e.index, (args.get(e.index) ?? '') + e.json)
    expect([...args.values()].map((a) => JSON.parse(a))).toEqual([
      {file_path: '/a.txt'},
      {file_path: '/b.txt'},
    ])
    expect(events.find((e) => e.type === 'stop')).toEqual({type: 'stop', reason: 'tool_use'})
  })
})

describe("Z.ai's finish reasons (GLM)", () => {
  it('sensitive is a filter, model_context_window_exceeded the context window', () => {
    expect(chatFinish('sensitive', false)).toBe('content_filter')
    expect(chatFinish('model_context_window_exceeded', false)).toBe('context_window')
    expect(chatFinish('stop', false)).toBe('end')
  })
})

const answer: StreamEvent[] = [
  {type: 'start', id: 'msg_1', model: 'claude-x', usage: {inputTokens: 40, cacheReadTokens: 30}},
  {type: 'block_start', index: 0, block: {type: 'reasoning'}},
  {type: 'reasoning_delta', index: 0, text: 'Let me look.'},
  {type: 'reasoning_opaque', index: 0, signature: {family: 'messages', value: 'SIG'}},
  {type: 'block_stop', index: 0},
  {type: 'block_start', index: 1, block: {type: 'text'}},
  {type: 'text_delta', index: 1, text: 'Checking '},
  {type: 'text_delta', index: 1, text: 'now.'},
  {type: 'block_stop', index: 1},
  {type: 'block_start', index: 2, block: {type: 'tool_call', id: 'toolu_1', name: 'grep'}},
  {type: 'tool_args_delta', index: 2, json: '{"pat'},
  {type: 'tool_args_delta', index: 2, json: 'tern":"TODO"}'},
  {type: 'block_stop', index: 2},
  {type: 'stop', reason: 'tool_use'},
  {type: 'usage', usage: {outputTokens: 25}},
  {type: 'end'},
]

describe('chat stream encoder', () => {
  it('writes a stream the openai SDK accumulates, with the usage chunk when asked', async () => {
    const carry = new BoundedCarry()
    const sse = encodeAll(chatCodec.streamEncoder({carry, includeUsage: true}), answer)
    const first = JSON.parse(parseSse(sse)[0].data) as {choices: Array<{delta: unknown}>}
    expect(first.choices[0].delta).toEqual({role: 'assistant', content: ''})
    expect(sse.endsWith('data: [DONE]\n\n')).toBe(true)
    const server = await serveOnce(sse, true)
    try {
      const client = new OpenAI({baseURL: server.url + '/v1', apiKey: 'k', maxRetries: 0})
      const c = await client.chat.completions
        .stream({model: 'x', messages: [{role: 'user', content: 'x'}], stream_options: {include_usage: true}})
        .finalChatCompletion()
      expect(c.choices[0].message.content).toBe('Checking now.')
      expect(c.choices[0].finish_reason).toBe('tool_calls')
      expect(c.choices[0].message.tool_calls).toEqual([
        {id: 'toolu_1', type: 'function', function: {name: 'grep', arguments: '{"pattern":"TODO"}'}},
      ])
      expect(c.usage).toMatchObject({
        prompt_tokens: 40,
        completion_tokens: 25,
        prompt_tokens_details: {cached_tokens: 30},
      })
      expect(carry.get('toolu_1')).toEqual([
        {type: 'reasoning', text: 'Let me look.', signature: {family: 'messages', value: 'SIG'}},
      ])
    } finally {
      await server.close()
    }
  })

  it('leaves the usage chunk out unless asked', () => {
    const sse = encodeAll(chatCodec.streamEncoder({}), answer)
    expect(sse).not.toContain('"usage"')
    expect(sse).toContain('"reasoning_content":"Let me look."')
  })

  it('ends with an error payload that makes the SDK throw', async () => {
    const events: StreamEvent[] = [
      answer[0],
      {type: 'block_start', index: 0, block: {type: 'text'}},
      {type: 'text_delta', index: 0, text: 'par'},
      {type: 'error', status: 529, message: 'Overloaded', code: 'overloaded_error'},
    ]
    const sse = encodeAll(chatCodec.streamEncoder({}), events)
    expect(sse).not.toContain('[DONE]')
    const server = await serveOnce(sse, true)
    try {
      const client = new OpenAI({baseURL: server.url + '/v1', apiKey: 'k', maxRetries: 0})
      const stream = client.chat.completions.stream({model: 'x', messages: [{role: 'user', content: 'x'}]})
      await expect(stream.finalChatCompletion()).rejects.toThrow(/Overloaded/)
    } finally {
      await server.close()
    }
  })
})

describe('chat stream decoder: chunks read without a parse', () => {
  // The decoder reads a chunk that differs from the last plain text chunk only in its delta
  // string without parsing it. Each stream below is decoded twice: as a stream, and with every
  // chunk parsed (a fresh decoder's state copied in before each chunk cannot take that path, so
  // the reference decoder is one that never keeps a template). Both must give the same events.
  const prefix =
    '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":{"content":"'
  const suffix = '"},"logprobs":null,"finish_reason":null}],"usage":null}'
  const raw = (inner: string): string => prefix + inner + suffix
  const first =
    '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}'
  const stop =
    '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}'

  const decodeRaw = (datas: string[], parseEvery: boolean): StreamEvent[] => {
    const decoder = chatCodec.streamDecoder({}) as ReturnType<typeof chatCodec.streamDecoder> & {
      template?: unknown
      toLearn?: unknown
    }
    const events: StreamEvent[] = []
    for (const data of datas) {
      if (parseEvery) decoder.template = decoder.toLearn = undefined
      events.push(...decoder.event(undefined, data))
    }
    events.push(...decoder.end())
    return events
  }
  const same = (datas: string[]): StreamEvent[] => {
    const fast = decodeRaw(datas, false)
    expect(fast).toEqual(decodeRaw(datas, true))
    return fast
  }
  const texts = (events: StreamEvent[]): string[] =>
    events.flatMap((e) => (e.type === 'text_delta' ? [e.text] : []))

  it('reads escapes, unicode and empty strings as a parse would', () => {
    const events = same([
      first,
      raw('Hel'),
      raw('lo \\"quoted\\" \\\\ back\\nline'),
      raw(''),
      raw('\\u00e9t\\u00e9 caf\u00e9 \\ud83d\\ude00'),
      raw('a\\",\\"b'),
      stop,
      '[DONE]',
    ])
    expect(texts(events)).toEqual(['Hel', 'lo "quoted" \\ back\nline', 'été café 😀', 'a","b'])
    expect(events).toContainEqual({type: 'stop', reason: 'end'})
  })

  it('parses a chunk whose string would change the structure (a finish reason smuggled in)', () => {
    const smuggled = raw('x"},"finish_reason":"length"}],"extra":[{"delta":{"content":"y')
    const events = same([first, raw('a'), smuggled, '[DONE]'])
    expect(texts(events)).toEqual(['a', 'x'])
    expect(events).toContainEqual({type: 'stop', reason: 'max_tokens'})
  })

  it('parses chunks of another shape: tool calls, reasoning, a second key, a finish reason', () => {
    const events = same([
      first,
      raw('a'),
      '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":{"reasoning_content":"think"},"logprobs":null,"finish_reason":null}],"usage":null}',
      '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":{"reasoning_content":"ing"},"logprobs":null,"finish_reason":null}],"usage":null}',
      raw('b'),
      '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":{"content":"c","tool_calls":[{"index":0,"id":"t1","function":{"name":"f","arguments":"{}"}}]},"logprobs":null,"finish_reason":null}],"usage":null}',
      raw('d'),
      '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":{"content":"e"},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}',
      '[DONE]',
    ])
    expect(events.filter((e) => e.type === 'reasoning_delta').map((e) => (e as {text: string}).text)).toEqual(
      ['think', 'ing'],
    )
    expect(texts(events)).toEqual(['a', 'b', 'c', 'd', 'e'])
    expect(events).toContainEqual({type: 'stop', reason: 'tool_use'})
  })

  it('reads streamed tool arguments (two calls interleaved, escapes, a smuggled id) as a parse would', () => {
    const call = (index: number, fn: string, extra = ''): string =>
      `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":{"tool_calls":[{"index":${index}${extra},"function":${fn}}]},"logprobs":null,"finish_reason":null}],"usage":null}`
    const args = (index: number, inner: string): string => call(index, `{"arguments":"${inner}"}`)
    const events = same([
      first,
      call(0, '{"name":"shell","arguments":""}', ',"id":"t0","type":"function"'),
      args(0, '{\\"cmd\\":'),
      args(0, '\\"ls'),
      call(1, '{"name":"read","arguments":""}', ',"id":"t1","type":"function"'),
      args(1, '{\\"path\\":\\"a\\u00e9\\"}'),
      args(1, ' '),
      args(0, ' -l\\"}'),
      args(0, ''),
      args(1, 'x"}},{"index":2,"id":"t2","function":{"name":"evil","arguments":"'),
      '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}',
      '[DONE]',
    ])
    const argsOf = (index: number): string =>
      events
        .filter((e) => e.type === 'tool_args_delta' && e.index === index)
        .map((e) => (e as {json: string}).json)
        .join('')
    const starts = events.filter((e) => e.type === 'block_start')
    expect(starts.map((e) => (e as {block: {name?: string}}).block.name)).toEqual(['shell', 'read', 'evil'])
    expect(argsOf(starts[0].index)).toBe('{"cmd":"ls -l"}')
    // (the text after the object is no JSON: left out, ./args-guard.ts)
    expect(argsOf(starts[1].index)).toBe('{"path":"a\u00e9"} ')
  })

  it('keeps no template when the delta key occurs twice in the chunk', () => {
    const twice = (inner: string): string =>
      `{"id":"c1","content":"x","choices":[{"index":0,"delta":{"content":"${inner}"},"finish_reason":null}]}`
    expect(texts(same([first, twice('a'), twice('b'), '[DONE]']))).toEqual(['a', 'b'])
  })

  describe('from a first chunk with a role, and the chunk that finishes', () => {
    // the simulator's, vLLM's and DeepSeek's shape: every chunk has logprobs and usage
    const head =
      '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up","choices":[{"index":0,"delta":{'
    const tail = (finish: string): string => `},"logprobs":null,"finish_reason":${finish}}],"usage":null}`
    const roleFirst = (content = ''): string =>
      `${head}"role":"assistant","content":"${content}"${tail('null')}`
    const text = (inner: string): string => `${head}"content":"${inner}"${tail('null')}`
    const thinking = (inner: string): string => `${head}"reasoning_content":"${inner}"${tail('null')}`
    const finish = (reason: string): string => `${head}${tail(reason)}`
    const usage =
      '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}'
    /** The chunks (whole chunk texts, not the strings of a template) parsed while `run` runs. */
    const parsedBy = (run: () => void): string[] => {
      const spy = vi.spyOn(JSON, 'parse')
      run()
      return spy.mock.calls.map((call) => String(call[0])).filter((t) => t.startsWith('{'))
    }
    afterEach(() => {
      vi.restoreAllMocks()
    })

    it('reads the text chunks after the first and the finish chunk without a parse', () => {
      const stream = [roleFirst(), text('a'), text('b \\"c\\"'), text(''), finish('"stop"'), usage, '[DONE]']
      const reference = decodeRaw(stream, true)
      let events: StreamEvent[] = []
      const calls = parsedBy(() => (events = decodeRaw(stream, false)))
      expect(events).toEqual(reference)
      expect(texts(events)).toEqual(['a', 'b "c"'])
      expect(events).toContainEqual({type: 'stop', reason: 'end'})
      expect(events).toContainEqual({
        type: 'usage',
        usage: expect.objectContaining({inputTokens: 3, outputTokens: 2}),
      })
      // the first chunk (its id and model) and the usage chunk only
      expect(calls).toEqual([roleFirst(), usage])
    })

    it('reads the finish reason of that chunk, escapes included, as a parse would', () => {
      expect(same([roleFirst(), text('a'), finish('"length"'), '[DONE]'])).toContainEqual({
        type: 'stop',
        reason: 'max_tokens',
      })
      // (tool_calls with no call: the end of the turn, research55 F2)
      expect(same([roleFirst(), thinking('t'), finish('"tool_calls"'), '[DONE]'])).toContainEqual({
        type: 'stop',
        reason: 'end',
      })
      // an empty finish is no finish yet (research55 F1): the text after it still comes
      const empty = same([roleFirst(), text('a'), finish('""'), text('b'), finish('"stop"'), '[DONE]'])
      expect(texts(empty)).toEqual(['a', 'b'])
      expect(empty.filter((e) => e.type === 'stop')).toEqual([{type: 'stop', reason: 'end'}])
      same([roleFirst(), text('a'), finish('"st\\u006fp \\"x\\""'), '[DONE]'])
      // an answer the server cut off is an error, read from the template as from a parse
      expect(
        same([roleFirst(), text('a'), finish('"insufficient_system_resource"'), '[DONE]']).at(-1),
      ).toEqual({
        type: 'error',
        status: 502,
        message: 'upstream stopped the answer: finish_reason insufficient_system_resource',
      })
    })

    it('parses a finishing chunk of another shape: usage on it, text in it, a smuggled structure, a null', () => {
      const withUsage = `${head}},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":4,"completion_tokens":1}}`
      expect(same([roleFirst(), text('a'), withUsage, '[DONE]'])).toContainEqual({
        type: 'usage',
        usage: expect.objectContaining({inputTokens: 4, outputTokens: 1}),
      })
      expect(
        texts(same([roleFirst(), text('a'), `${head}"content":"z"${tail('"stop"')}`, '[DONE]'])),
      ).toEqual(['a', 'z'])
      const smuggled = finish('"stop"}],"usage":{"prompt_tokens":9},"x":[{"y":"')
      expect(() => decodeRaw([roleFirst(), text('a'), smuggled, '[DONE]'], false)).toThrow(/not JSON/)
      expect(same([roleFirst(), text('a'), finish('null'), text('b'), '[DONE]'])).toContainEqual({
        type: 'stop',
        reason: 'end',
      })
    })

    it('keeps the content of the role chunk, and learns nothing from a role chunk of another shape', () => {
      expect(texts(same([roleFirst('Hi'), text(' there'), finish('"stop"'), '[DONE]']))).toEqual([
        'Hi',
        ' there',
      ])
      // "delta" twice in the chunk: which one is the choice's is not known without the parse
      const twice = `{"id":"c1","x":{"delta":1},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
      const later = `{"id":"c1","x":{"delta":1},"choices":[{"index":0,"delta":{"content":"b"},"finish_reason":null}]}`
      expect(texts(same([twice, later, '[DONE]']))).toEqual(['b'])
      // no finish_reason key on the choice: no finish form (the one in the text is not the choice's)
      const noKey = `{"id":"c1","choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"meta":{"finish_reason":null}}`
      const noKeyText = `{"id":"c1","choices":[{"index":0,"delta":{"content":"b"}}],"meta":{"finish_reason":null}}`
      const metaStop = `{"id":"c1","choices":[{"index":0,"delta":{}}],"meta":{"finish_reason":"length"}}`
      const events = same([noKey, noKeyText, metaStop, '[DONE]'])
      expect(events).toContainEqual({type: 'stop', reason: 'end'})
      expect(events).not.toContainEqual({type: 'stop', reason: 'max_tokens'})
    })
  })

  describe("OpenAI's shape: a refusal in the first chunk, and padding of its own in every chunk", () => {
    // OpenAI's chunks carry `service_tier`, `system_fingerprint` and an `obfuscation` string of a
    // different length on every chunk (padding against length side channels); its first chunk's
    // delta has `"refusal":null`
    const head =
      '{"id":"chatcmpl-o1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","service_tier":"default","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{'
    const tail = (finish: string, pad: string): string =>
      `},"logprobs":null,"finish_reason":${finish}}],"obfuscation":"${pad}"}`
    const first = `${head}"role":"assistant","content":"","refusal":null${tail('null', 'Qx')}`
    const text = (inner: string, pad: string): string => `${head}"content":"${inner}"${tail('null', pad)}`
    const args = (inner: string, pad: string): string =>
      `${head}"tool_calls":[{"index":0,"function":{"arguments":"${inner}"}}]${tail('null', pad)}`
    const call = `${head}"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"shell","arguments":""}}]${tail('null', 'k')}`
    const finish = (reason: string, pad: string): string => `${head}${tail(reason, pad)}`
    const usage =
      '{"id":"chatcmpl-o1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":4},"obfuscation":"Zk3"}'
    const parsedBy = (run: () => void): string[] => {
      const spy = vi.spyOn(JSON, 'parse')
      try {
        run()
        return spy.mock.calls.map((c) => String(c[0])).filter((t) => t.startsWith('{'))
      } finally {
        spy.mockRestore()
      }
    }

    it('reads its text, argument and finish chunks without a parse, whatever their padding', () => {
      const stream = [
        first,
        text('Hel', 'aB3dE'),
        text('lo \\"x\\"', ''),
        text('', 'q'),
        text('!', 'LongerPaddingThan0thers12'),
        finish('"stop"', 'x9'),
        usage,
        '[DONE]',
      ]
      let events: StreamEvent[] = []
      const calls = parsedBy(() => (events = decodeRaw(stream, false)))
      expect(events).toEqual(decodeRaw(stream, true))
      expect(texts(events)).toEqual(['Hel', 'lo "x"', '!'])
      expect(events).toContainEqual({type: 'stop', reason: 'end'})
      expect(events).toContainEqual({
        type: 'usage',
        usage: expect.objectContaining({inputTokens: 7, outputTokens: 4}),
      })
      expect(calls).toEqual([first, usage])

      const pieces = ['{\\"cmd', '\\":\\"ls', ' -l', '\\"}']
      const tools = [
        first,
        call,
        ...pieces.map((p, i) => args(p, 'pad'.slice(0, i))),
        finish('"tool_calls"', 'e'),
        '[DONE]',
      ]
      let toolEvents: StreamEvent[] = []
      const toolCalls = parsedBy(() => (toolEvents = decodeRaw(tools, false)))
      expect(toolEvents).toEqual(decodeRaw(tools, true))
      expect(toolEvents.flatMap((e) => (e.type === 'tool_args_delta' ? [e.json] : [])).join('')).toBe(
        '{"cmd":"ls -l"}',
      )
      // the call's first chunk (its id and name) and its first argument chunk (the template) are
      // parsed, and the finish chunk after arguments; the other argument chunks are not
      expect(toolCalls).toEqual([first, call, tools[2], tools[6]])
    })

    it('parses a chunk whose padding is not a plain string or hides structure, as a parse would read it', () => {
      // an escaped quote in the padding: parsed
      const escaped = text('b', 'a\\"c')
      // the padding's place holding a second member: the usage would be lost by a template read
      const smuggled = text('c', 'x","usage":{"prompt_tokens":9,"completion_tokens":1},"y":"z')
      // the text's place holding a finish reason and a padding of its own
      const inText = text(
        'd"},"logprobs":null,"finish_reason":"length"}],"obfuscation":"p","extra":[{"delta":{"content":"y',
        'q',
      )
      const events = same([first, text('a', 'p'), escaped, smuggled, '[DONE]'])
      expect(texts(events)).toEqual(['a', 'b', 'c'])
      expect(events).toContainEqual({type: 'usage', usage: expect.objectContaining({inputTokens: 9})})
      const stopped = same([first, text('a', 'p'), inText, '[DONE]'])
      expect(texts(stopped)).toEqual(['a', 'd'])
      expect(stopped).toContainEqual({type: 'stop', reason: 'max_tokens'})
      // a padding of another type, or a chunk without one: parsed
      const numeric = `${head}"content":"e"},"logprobs":null,"finish_reason":null}],"obfuscation":5}`
      const none = `${head}"content":"f"},"logprobs":null,"finish_reason":null}]}`
      expect(texts(same([first, text('a', 'p'), numeric, none, text('g', 'pp'), '[DONE]']))).toEqual([
        'a',
        'e',
        'f',
        'g',
      ])
    })
  })

  it('still refuses a chunk that is not JSON though it starts and ends like its template', () => {
    const decoder = chatCodec.streamDecoder({})
    decoder.event(undefined, first)
    decoder.event(undefined, raw('a'))
    // a raw line break inside a JSON string is not JSON
    expect(() => decoder.event(undefined, raw('b\nc'))).toThrow(/not JSON/)
    // an unescaped quote: the text between would be a second string
    expect(() => decoder.event(undefined, raw('b"c'))).toThrow(/not JSON/)
  })
})

describe('chat stream encoder: text chunks', () => {
  it('writes a text chunk as JSON.stringify would write its object, escapes included', () => {
    const encoder = chatCodec.streamEncoder({})
    encoder.event({type: 'start', id: 'c"1', model: 'm\\x'})
    encoder.event({type: 'block_start', index: 0, block: {type: 'text'}})
    const text = 'say "hi"\n\u00e9\u2028 😀'
    const data = parseSse(encoder.event({type: 'text_delta', index: 0, text}))
    expect(data).toHaveLength(1)
    const chunk = JSON.parse(data[0].data)
    expect(chunk).toMatchObject({id: 'c"1', model: 'm\\x', choices: [{delta: {content: text}}]})
    expect(data[0].data).toBe(
      JSON.stringify({
        id: 'c"1',
        object: 'chat.completion.chunk',
        created: chunk.created,
        model: 'm\\x',
        choices: [{index: 0, delta: {content: text}, logprobs: null, finish_reason: null}],
      }),
    )
  })
})

describe("xAI's reasoning, counted beside the completion (research50 #2)", () => {
  it('counts it in the output where the total says it is not in the completion; elsewhere as it is', () => {
    // xAI: total = prompt + completion + reasoning
    expect(
      decodeChatUsage({
        prompt_tokens: 14,
        completion_tokens: 2,
        total_tokens: 333,
        completion_tokens_details: {reasoning_tokens: 317},
      }),
    ).toMatchObject({inputTokens: 14, outputTokens: 319, reasoningTokens: 317})
    // OpenAI and the others: the reasoning is part of the completion already
    expect(
      decodeChatUsage({
        prompt_tokens: 14,
        completion_tokens: 319,
        total_tokens: 333,
        completion_tokens_details: {reasoning_tokens: 317},
      }),
    ).toMatchObject({outputTokens: 319, reasoningTokens: 317})
    // no total: as it came
    expect(
      decodeChatUsage({
        prompt_tokens: 14,
        completion_tokens: 2,
        completion_tokens_details: {reasoning_tokens: 317},
      }),
    ).toMatchObject({outputTokens: 2})
  })
})

describe('the cache writes of Claude behind a chat server', () => {
  it("reads OpenRouter's cache_write_tokens and LiteLLM's cache_creation_input_tokens", () => {
    expect(
      decodeChatUsage({
        prompt_tokens: 194,
        completion_tokens: 2,
        prompt_tokens_details: {cached_tokens: 50, cache_write_tokens: 100},
      }),
    ).toEqual({
      inputTokens: 194,
      outputTokens: 2,
      cacheReadTokens: 50,
      cacheCreationTokens: 100,
      reasoningTokens: 0,
    })
    expect(
      decodeChatUsage({prompt_tokens: 10, completion_tokens: 1, cache_creation_input_tokens: 7}),
    ).toMatchObject({
      cacheCreationTokens: 7,
    })
    expect(decodeChatUsage({prompt_tokens: 10, completion_tokens: 1})).toMatchObject({cacheCreationTokens: 0})
  })

  it("reads DashScope's explicit-cache writes, in its prompt_tokens_details", () => {
    // (the write of a marked prefix, and a later hit of it)
    expect(
      decodeChatUsage({
        prompt_tokens: 3019,
        completion_tokens: 104,
        total_tokens: 3123,
        prompt_tokens_details: {cached_tokens: 0, cache_creation_input_tokens: 2048, cache_type: 'ephemeral'},
      }),
    ).toEqual({
      inputTokens: 3019,
      outputTokens: 104,
      cacheReadTokens: 0,
      cacheCreationTokens: 2048,
      reasoningTokens: 0,
    })
    expect(
      decodeChatUsage({
        prompt_tokens: 3019,
        completion_tokens: 104,
        prompt_tokens_details: {cached_tokens: 2048, cache_creation_input_tokens: 0, cache_type: 'ephemeral'},
      }),
    ).toMatchObject({cacheReadTokens: 2048, cacheCreationTokens: 0})
  })

  it("reads DashScope's breakdown of its writes: the 1-hour part, never more than the writes", () => {
    const usage = (cacheCreation: unknown, writes = 3000) =>
      decodeChatUsage({
        prompt_tokens: 4019,
        completion_tokens: 104,
        prompt_tokens_details: {
          cached_tokens: 0,
          cache_creation_input_tokens: writes,
          cache_creation: cacheCreation,
          cache_type: 'ephemeral',
        },
      })
    expect(usage({ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000})).toEqual({
      inputTokens: 4019,
      outputTokens: 104,
      cacheReadTokens: 0,
      cacheCreationTokens: 3000,
      cache1hTokens: 2000,
      reasoningTokens: 0,
    })
    expect(usage({ephemeral_5m_input_tokens: 3000, ephemeral_1h_input_tokens: 0}).cache1hTokens).toBe(0)
    expect(usage({ephemeral_1h_input_tokens: 9000}).cache1hTokens).toBe(3000)
    // no breakdown (5 minutes only, or none said): no 1-hour part, as before
    expect(usage({ephemeral_5m_input_tokens: 3000})).not.toHaveProperty('cache1hTokens')
    expect(usage(undefined)).not.toHaveProperty('cache1hTokens')
  })
})
