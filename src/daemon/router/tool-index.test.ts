import {describe, expect, it} from 'vitest'

import {ChatUsageChunkFilter} from './relay.js'
import {omitsToolCallIndex, ToolCallNormaliser} from './tool-index.js'

const event = (delta: Record<string, unknown>, choice = 0) =>
  `data: ${JSON.stringify({id: 'c', choices: [{index: choice, delta}]})}\n\n`
const call = (id: string | undefined, args: string, name?: string) => ({
  ...(id ? {id, type: 'function'} : {}),
  function: {...(name ? {name} : {}), arguments: args},
})
const indexes = (text: string): unknown[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .flatMap((l) =>
      (
        JSON.parse(l.slice(6)) as {choices: Array<{delta: {tool_calls?: Array<{index?: unknown}>}}>}
      ).choices.flatMap((c) => (c.delta.tool_calls ?? []).map((t) => t.index)),
    )

const numbering = () => new ToolCallNormaliser({index: true})

describe('ToolCallNormaliser numbering calls', () => {
  it('numbers each new call id, a delta without an id continues the call before it, the index first', () => {
    const indexer = numbering()
    const one = indexer.event(event({tool_calls: [call('call_a', '{"pa', 'read')]}))
    expect(one).toBe(
      `data: ${JSON.stringify({id: 'c', choices: [{index: 0, delta: {tool_calls: [{index: 0, id: 'call_a', type: 'function', function: {name: 'read', arguments: '{"pa'}}]}}]})}\n\n`,
    )
    expect(indexes(indexer.event(event({tool_calls: [call(undefined, 'th":1}')]})))).toEqual([0])
    expect(
      indexes(indexer.event(event({tool_calls: [call('call_b', '{}', 'ls'), call('call_c', '{}', 'ls')]}))),
    ).toEqual([1, 2])
    // the same id again (a server that repeats it on each delta) keeps its index
    expect(indexes(indexer.event(event({tool_calls: [call('call_a', '')]})))).toEqual([0])
    // another choice numbers its own calls
    expect(indexes(indexer.event(event({tool_calls: [call('call_d', '{}', 'ls')]}, 1)))).toEqual([0])
  })

  it('tells apart calls without ids: entries of one delta, and a named call after a whole one; a null index replaced', () => {
    const indexer = numbering()
    // two calls of one delta, each with `"id": ""` (AstrBot #6661's relays)
    expect(
      indexes(indexer.event(event({tool_calls: [call('', '{"x":1}', 'a'), call('', '{"y":', 'b')]}))),
    ).toEqual([0, 1])
    // the second goes on (no name), then a named call after its whole arguments is the next
    expect(indexes(indexer.event(event({tool_calls: [call(undefined, '1}')]})))).toEqual([1])
    expect(indexes(indexer.event(event({tool_calls: [call(undefined, '{}', 'c')]})))).toEqual([2])
    // a name repeated on every delta of one call, a last one without arguments too: the same call
    const again = numbering()
    expect(indexes(again.event(event({tool_calls: [call(undefined, '{"p', 'read')]})))).toEqual([0])
    expect(indexes(again.event(event({tool_calls: [call(undefined, 'ath":1}', 'read')]})))).toEqual([0])
    expect(indexes(again.event(event({tool_calls: [call(undefined, '', 'read')]})))).toEqual([0])
    // OpenAI's shape with the id blanked: each call opens named with no arguments, goes on unnamed
    const blanked = numbering()
    const steps = [
      call(undefined, '', 'read'),
      call(undefined, '{"p":1}\n'),
      call(undefined, '', 'read'),
      call(undefined, '{"p":2}'),
    ]
    expect(steps.flatMap((c) => indexes(blanked.event(event({tool_calls: [c]}))))).toEqual([0, 0, 1, 1])
    const nulled = numbering().event(event({tool_calls: [{index: null, ...call('call_a', '{}', 'ls')}]}))
    expect(indexes(nulled)).toEqual([0])
  })

  it('leaves an event with indexes, or no JSON, as the same string', () => {
    const indexer = numbering()
    const indexed = event({tool_calls: [{index: 3, ...call('call_a', '{}', 'ls')}]})
    expect(indexer.event(indexed)).toBe(indexed)
    // after it, a call without one gets the next free index
    expect(indexes(indexer.event(event({tool_calls: [call('call_b', '{}', 'ls')]})))).toEqual([4])
    for (const other of ['data: [DONE]\n\n', ': keep-alive\n\n', 'data: {broken\n\n', event({content: 'hi'})])
      expect(indexer.event(other)).toBe(other)
  })
})

describe('ChatUsageChunkFilter with an indexer', () => {
  const stream = [
    event({content: 'Reading.'}),
    event({tool_calls: [call('call_a', '{"path":"a"}', 'read')]}),
    event({tool_calls: [call('call_b', '{"path":"b"}', 'read')]}),
    `data: ${JSON.stringify({id: 'c', choices: [], usage: {prompt_tokens: 1}})}\n\n`,
    'data: [DONE]\n\n',
  ].join('')

  const through = (filter: ChatUsageChunkFilter, chunks: string[]): string => {
    let out = ''
    for (const c of chunks) {
      const sent = filter.push(Buffer.from(c))
      out += typeof sent === 'string' ? sent : Buffer.from(sent).toString('utf8')
    }
    return out + filter.flush()
  }

  it('numbers the calls whole, split mid-event, or with CRs; keeps the usage chunk unless it drops it', () => {
    const whole = through(new ChatUsageChunkFilter(false, numbering()), [stream])
    expect(indexes(whole)).toEqual([0, 1])
    expect(whole).toContain('"usage"')
    expect(whole.startsWith(event({content: 'Reading.'}))).toBe(true)
    const cut = Math.floor(stream.length / 2)
    expect(
      indexes(
        through(new ChatUsageChunkFilter(false, numbering()), [stream.slice(0, cut), stream.slice(cut)]),
      ),
    ).toEqual([0, 1])
    const crlf = through(new ChatUsageChunkFilter(false, numbering()), [stream.replaceAll('\n', '\r\n')])
    expect(indexes(crlf)).toEqual([0, 1])
    const dropped = through(new ChatUsageChunkFilter(true, numbering()), [stream])
    expect(indexes(dropped)).toEqual([0, 1])
    expect(dropped).not.toContain('"usage"')
    // without an indexer, the stream's bytes as they came (the usage chunk only dropped)
    expect(through(new ChatUsageChunkFilter(false), [stream])).toBe(stream)
  })
})

const naming = () => new ToolCallNormaliser({ids: true})
const chunkOf = (choices: unknown[], id: unknown = 'chatcmpl-9') =>
  `data: ${JSON.stringify({id, object: 'chat.completion.chunk', choices})}\n\n`

describe('ToolCallNormaliser naming calls', () => {
  it('names a call opened without a usable id right after its index, a number id as its string, once per call', () => {
    const namer = naming()
    // GLM's: the call opened by its index, type and name, no id
    const opened = chunkOf([
      {
        index: 0,
        delta: {tool_calls: [{index: 0, type: 'function', function: {name: 'read', arguments: ''}}]},
      },
    ])
    expect(namer.event(opened)).toBe(
      'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_chatcmpl-9_0_0","type":"function","function":{"name":"read","arguments":""}}]}}]}\n\n',
    )
    // its later deltas (no id, as OpenAI's) go as they came
    const more = chunkOf([{index: 0, delta: {tool_calls: [{index: 0, function: {arguments: '{"p":1}'}}]}}])
    expect(namer.event(more)).toBe(more)
    // null, "" and a number on a new call; an id it has stays; the index where it came
    const rest = chunkOf(
      [
        {
          index: 0,
          delta: {
            tool_calls: [
              {type: 'function', index: 1, id: null, function: {name: 'ls', arguments: '{}'}},
              {index: 2, id: '', function: {name: 'ls', arguments: '{}'}},
              {index: 3, id: 123, function: {name: 'ls', arguments: '{}'}},
              {index: 4, id: 'call_own', function: {name: 'ls', arguments: '{}'}},
            ],
          },
        },
      ],
      null,
    )
    const calls = (
      JSON.parse(namer.event(rest).slice(6)) as {choices: Array<{delta: {tool_calls: unknown[]}}>}
    ).choices[0].delta.tool_calls
    expect(calls).toEqual([
      {type: 'function', index: 1, id: 'call_x_0_1', function: {name: 'ls', arguments: '{}'}},
      {index: 2, id: 'call_x_0_2', function: {name: 'ls', arguments: '{}'}},
      {index: 3, id: '123', function: {name: 'ls', arguments: '{}'}},
      {index: 4, id: 'call_own', function: {name: 'ls', arguments: '{}'}},
    ])
    expect(Object.keys(calls[0] as object)).toEqual(['type', 'index', 'id', 'function'])
    // a later number id is a string too; a later "" stays (the client takes it)
    const later = namer.event(
      chunkOf([{index: 0, delta: {tool_calls: [{index: 3, id: 123, function: {arguments: ''}}]}}]),
    )
    expect(later).toContain('{"index":3,"id":"123","function"')
    const blank = chunkOf([{index: 0, delta: {tool_calls: [{index: 2, id: '', function: {arguments: ''}}]}}])
    expect(namer.event(blank)).toBe(blank)
    // another choice opens its own calls; a chunk id that is a number is written as one
    expect(
      namer.event(chunkOf([{index: 1, delta: {tool_calls: [{index: 0, function: {name: 'ls'}}]}}], 7)),
    ).toContain('{"index":0,"id":"call_7_1_0","function"')
    // a chunk without an id: the answer's request id in its place, so two answers never repeat one
    const unnamed = chunkOf([{index: 0, delta: {tool_calls: [{index: 0, function: {name: 'ls'}}]}}], null)
    expect(new ToolCallNormaliser({ids: true, stream: 'req_7f'}).event(unnamed)).toContain(
      '{"index":0,"id":"call_req_7f_0_0","function"',
    )
  })

  it("writes a choice's first role that is not assistant as OpenAI's, leaves the later ones out", () => {
    const namer = naming()
    const first = chunkOf([{index: 0, delta: {role: '', content: ''}, finish_reason: null}])
    expect(namer.event(first)).toBe(
      'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n',
    )
    expect(namer.event(chunkOf([{index: 0, delta: {role: '', content: 'Hi'}}]))).toBe(
      'data: {"id":"chatcmpl-9","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\n',
    )
    // after OpenAI's own first delta, an empty role is left out; "assistant" and null stay
    const other = naming()
    const own = chunkOf([{index: 0, delta: {role: 'assistant', content: ''}}])
    expect(other.event(own)).toBe(own)
    expect(other.event(chunkOf([{index: 0, delta: {role: '', content: 'a'}}]))).not.toContain('"role"')
    const nulled = chunkOf([{index: 0, delta: {role: null, content: 'b'}}])
    expect(other.event(nulled)).toBe(nulled)
  })

  it('with the index too: numbers the calls first, then names them', () => {
    const both = new ToolCallNormaliser({index: true, ids: true})
    const out = both.event(
      chunkOf([{index: 0, delta: {tool_calls: [{id: '', function: {name: 'a', arguments: '{}'}}]}}]),
    )
    expect(out).toContain('{"index":0,"id":"call_chatcmpl-9_0_0","function"')
  })
})

describe('ChatUsageChunkFilter with a normaliser that names calls', () => {
  // vLLM's gpt-oss under a Go relay: ids left out, "role":"" on every delta after the first
  const stream = [
    chunkOf([{index: 0, delta: {role: 'assistant', content: ''}}]),
    chunkOf([{index: 0, delta: {role: '', content: 'Reading. "role" \u00e9'}}]),
    chunkOf([
      {
        index: 0,
        delta: {
          role: '',
          tool_calls: [{index: 0, type: 'function', function: {name: 'read', arguments: ''}}],
        },
      },
    ]),
    chunkOf([{index: 0, delta: {role: '', tool_calls: [{index: 0, function: {arguments: '{"path":"a"}'}}]}}]),
    chunkOf([{index: 0, delta: {}, finish_reason: 'tool_calls'}]),
    'data: [DONE]\n\n',
  ].join('')
  const expected = [
    chunkOf([{index: 0, delta: {role: 'assistant', content: ''}}]),
    chunkOf([{index: 0, delta: {content: 'Reading. "role" \u00e9'}}]),
    chunkOf([
      {
        index: 0,
        delta: {
          tool_calls: [
            {index: 0, id: 'call_chatcmpl-9_0_0', type: 'function', function: {name: 'read', arguments: ''}},
          ],
        },
      },
    ]),
    chunkOf([{index: 0, delta: {tool_calls: [{index: 0, function: {arguments: '{"path":"a"}'}}]}}]),
    chunkOf([{index: 0, delta: {}, finish_reason: 'tool_calls'}]),
    'data: [DONE]\n\n',
  ].join('')

  const through = (filter: ChatUsageChunkFilter, chunks: Buffer[]): string => {
    const out: Buffer[] = []
    for (const c of chunks) {
      const sent = filter.push(c)
      out.push(typeof sent === 'string' ? Buffer.from(sent) : Buffer.from(sent))
    }
    out.push(Buffer.from(filter.flush()))
    return Buffer.concat(out).toString('utf8')
  }

  it('writes the stream as OpenAI streams it whole, cut at every byte, or with CRs', () => {
    const bytes = Buffer.from(stream)
    expect(through(new ChatUsageChunkFilter(false, naming()), [bytes])).toBe(expected)
    // (cut inside the é too: its two bytes in two chunks)
    for (let cut = 1; cut < bytes.length; cut++)
      expect(
        through(new ChatUsageChunkFilter(false, naming()), [bytes.subarray(0, cut), bytes.subarray(cut)]),
      ).toBe(expected)
    const crlf = through(new ChatUsageChunkFilter(false, naming()), [
      Buffer.from(stream.replaceAll('\n\n', '\r\n\r\n')),
    ])
    // (an event written anew ends in LFs, as the indexer writes it)
    expect(crlf.replaceAll('\r\n', '\n')).toBe(expected)
  })

  it('passes a stream with ids and no empty role as the same bytes, the same chunk', () => {
    const own = Buffer.from(expected)
    const filter = new ChatUsageChunkFilter(false, naming())
    expect(filter.push(own)).toBe(own)
    expect(filter.flush()).toBe('')
  })
})

describe('omitsToolCallIndex', () => {
  it.each([
    ['https://generativelanguage.googleapis.com/v1beta/openai', true],
    ['https://generativelanguage.googleapis.com/v1beta/openai/', true],
    ['https://generativelanguage.googleapis.com', false],
    ['https://api.openai.com/v1', false],
    ['http://127.0.0.1:8080/openai', false],
  ])('%s: %s', (url, omits) => {
    expect(omitsToolCallIndex(url)).toBe(omits)
  })
})

describe('ToolCallNormaliser writing finishes', () => {
  const head = {id: 'chatcmpl-7', object: 'chat.completion.chunk', created: 1730000000, model: 'glm-5.1'}
  const chunk = (choices: unknown[], more: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({...head, choices, ...more})}\n\n`
  const usage = chunk([], {usage: {prompt_tokens: 9, completion_tokens: 2, total_tokens: 11}})
  const done = 'data: [DONE]\n\n'
  const finishing = () => new ToolCallNormaliser({finish: true})
  const through = (filter: ChatUsageChunkFilter, chunks: Buffer[]): string => {
    const out: Buffer[] = []
    for (const c of chunks) {
      const sent = filter.push(c)
      out.push(Buffer.from(sent))
    }
    out.push(Buffer.from(filter.flush()))
    return Buffer.concat(out).toString('utf8')
  }
  /** `stream` through a filter, whole and cut at every byte: one text. */
  const written = (stream: string, dropUsage = false, normaliser = finishing): string => {
    const bytes = Buffer.from(stream)
    const whole = through(new ChatUsageChunkFilter(dropUsage, normaliser()), [bytes])
    for (let cut = 1; cut < bytes.length; cut++)
      expect(
        through(new ChatUsageChunkFilter(dropUsage, normaliser()), [
          bytes.subarray(0, cut),
          bytes.subarray(cut),
        ]),
      ).toBe(whole)
    return whole
  }
  const text = (content: string, finish_reason: string | null = null) =>
    chunk([{index: 0, delta: {content}, logprobs: null, finish_reason}])
  const opened = chunk([
    {
      index: 0,
      delta: {
        tool_calls: [{index: 0, id: 'call_a', type: 'function', function: {name: 'ls', arguments: '{}'}}],
      },
      finish_reason: null,
    },
  ])
  const finishOf = (finish: string) => chunk([{index: 0, delta: {}, finish_reason: finish}])

  it("passes a stream with OpenAI's finish as the same bytes, the same chunk", () => {
    for (const finish of ['stop', 'length', 'tool_calls', 'content_filter']) {
      const own = Buffer.from(
        chunk([{index: 0, delta: {role: 'assistant', content: ''}, finish_reason: null}]) +
          text('Hé "finish_reason": "x"') +
          finishOf(finish) +
          usage +
          done,
      )
      for (const normaliser of [
        finishing,
        () => new ToolCallNormaliser({ids: true, index: true, finish: true}),
      ]) {
        const filter = new ChatUsageChunkFilter(false, normaliser())
        expect(filter.push(own)).toBe(own)
        expect(filter.flush()).toBe('')
      }
    }
    // SenseNova's "" on every chunk before its finish: unread, as it came
    const empty = Buffer.from(text('a', '') + text('b', '') + finishOf('stop') + done)
    expect(new ChatUsageChunkFilter(false, finishing()).push(empty)).toBe(empty)
  })

  it("writes a missing finish before the usage chunk or [DONE], with the stream's id, created and model", () => {
    const stop = finishOf('stop')
    expect(written(text('Hi') + text('.') + usage + done)).toBe(text('Hi') + text('.') + stop + usage + done)
    // the usage chunk dropped (the client did not ask for it): before [DONE]
    expect(written(text('Hi') + usage + done, true)).toBe(text('Hi') + stop + done)
    // "" until the end (Perplexity's, SenseNova's): the same
    expect(written(text('Hi', '') + text('.', '') + done)).toBe(text('Hi', '') + text('.', '') + stop + done)
    // a call opened: tool_calls
    expect(written(text('Reading.') + opened + usage + done)).toBe(
      text('Reading.') + opened + finishOf('tool_calls') + usage + done,
    )
    // each choice its own (the AI SDK reads the first choice of a chunk)
    const two =
      chunk([{index: 0, delta: {content: 'a'}, finish_reason: null}]) +
      chunk([{index: 1, delta: {content: 'b'}, finish_reason: null}]) +
      chunk([{index: 1, delta: {}, finish_reason: 'stop'}])
    expect(written(two + done)).toBe(two + stop + done)
    // an answer of nothing: choice 0 finished; a stream cut before [DONE]: left to the relay's error event
    expect(written(done)).toBe(
      `data: ${JSON.stringify({choices: [{index: 0, delta: {}, finish_reason: 'stop'}]})}\n\n` + done,
    )
    expect(written(text('Hi'))).toBe(text('Hi'))
  })

  it("writes a vendor's finish as OpenAI's, and one that says the answer broke off as an error event", () => {
    expect(written(text('Hi') + finishOf('sensitive') + usage + done)).toBe(
      text('Hi') + finishOf('content_filter') + usage + done,
    )
    expect(written(text('Hi', 'model_context_window_exceeded') + done)).toBe(text('Hi', 'length') + done)
    // any other: the choice's own end
    expect(written(text('Hi') + finishOf('eos') + done)).toBe(text('Hi') + finishOf('stop') + done)
    expect(written(opened + finishOf('end_turn') + done)).toBe(opened + finishOf('tool_calls') + done)
    const error = (code: string) =>
      `data: ${JSON.stringify({error: {message: `upstream stopped the answer: finish_reason ${code}`, type: 'upstream_error', code}})}\n\n`
    for (const code of ['error', 'abort', 'network_error', 'insufficient_system_resource']) {
      const normaliser = finishing()
      // the chunk that held nothing else: the error event in its place, no stop after it
      expect(
        through(new ChatUsageChunkFilter(false, normaliser), [
          Buffer.from(text('Hi') + finishOf(code) + usage + done),
        ]),
      ).toBe(text('Hi') + error(code) + usage + done)
      expect(normaliser.stoppedWith).toBe(`upstream stopped the answer: finish_reason ${code}`)
    }
    // with text (or usage) in it: the chunk kept without its finish, then the error event
    expect(written(text('Hi', 'abort') + done)).toBe(text('Hi') + error('abort') + done)
    expect(new ToolCallNormaliser({finish: true}).event(text('Hi', 'abort').trimEnd())).toBe(
      text('Hi') + error('abort'),
    )
  })

  it("writes no finish for Azure's first chunk of prompt_filter_results, a heartbeat, or after the upstream's error (review58)", () => {
    // Azure OpenAI's stream opens with `"choices": []` and its prompt filter results, no usage
    const azure = `data: ${JSON.stringify({choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [{prompt_index: 0}]})}\n\n`
    expect(written(azure + text('Hi') + opened + usage + done)).toBe(
      azure + text('Hi') + opened + finishOf('tool_calls') + usage + done,
    )
    // a relay's empty chunk mid-answer: nothing before it
    const empty = chunk([])
    expect(written(text('Hi') + empty + text('.') + usage + done)).toBe(
      text('Hi') + empty + text('.') + finishOf('stop') + usage + done,
    )
    // the upstream's own error event, then [DONE]: the answer ended with it, no stop after it
    const error = `data: ${JSON.stringify({error: {message: 'Provider returned error', code: 502}})}\n\n`
    expect(written(text('Hi') + error + done)).toBe(text('Hi') + error + done)
    // OpenRouter's: the error object beside `finish_reason: "error"`, as it came (the AI SDK reads
    // the error), no second error event of the gateway's
    const openrouter = chunk([{index: 0, delta: {}, finish_reason: 'error'}], {
      error: {message: 'upstream died', code: 502},
    })
    const normaliser = finishing()
    expect(
      through(new ChatUsageChunkFilter(false, normaliser), [Buffer.from(text('Hi') + openrouter + done)]),
    ).toBe(text('Hi') + openrouter + done)
    expect(normaliser.stoppedWith).toBeUndefined()
  })

  it("maps as the translation's chat decoder reads them (protocols/chat-stream.ts)", async () => {
    const {brokenFinish, chatFinish, CHAT_FINISH} = await import('../../protocols/chat-stream.js')
    for (const reason of ['sensitive', 'model_context_window_exceeded', 'eos']) {
      const normaliser = finishing()
      const out = normaliser.event(text('Hi', reason))
      expect(JSON.parse(out.slice(6)).choices[0].finish_reason).toBe(CHAT_FINISH[chatFinish(reason, false)])
    }
    for (const reason of ['error', 'abort', 'network_error', 'insufficient_system_resource']) {
      const normaliser = finishing()
      normaliser.event(finishOf(reason))
      expect(normaliser.stoppedWith).toBe(brokenFinish(reason))
    }
  })
})
