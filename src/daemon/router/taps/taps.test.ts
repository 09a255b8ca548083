import {describe, expect, it} from 'vitest'

import {createUsageTap} from './index.js'

/** Feeds `text` in pieces of `size` bytes (splitting lines, events and multi-byte characters). */
function tapped(family: Parameters<typeof createUsageTap>[0], sse: boolean, text: string, size = 7) {
  const tap = createUsageTap(family, sse)
  const bytes = Buffer.from(text)
  for (let i = 0; i < bytes.length; i += size) tap.feed(bytes.subarray(i, i + size))
  tap.end()
  return tap.usage()
}

const chatStream =
  [
    'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}',
    'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Héllo ✓"},"finish_reason":null}],"usage":null}',
    'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}',
    'data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":1}}}',
    'data: [DONE]',
  ].join('\n\n') + '\n\n'

const responsesStream = `event: response.created
data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_1","status":"in_progress","output":[],"usage":null}}

event: response.output_item.added
data: {"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"message","id":"msg_1","role":"assistant","status":"in_progress","content":[]}}

event: response.output_text.delta
data: {"type":"response.output_text.delta","sequence_number":2,"item_id":"msg_1","output_index":0,"content_index":0,"delta":"Hello","logprobs":[]}

event: response.completed
data: {"type":"response.completed","sequence_number":3,"response":{"id":"resp_1","status":"completed","usage":{"input_tokens":11,"input_tokens_details":{"cached_tokens":3},"output_tokens":7,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":18}}}

`

const messagesStream = `event: message_start
data: {"type":"message_start","message":{"id":"msg_01X","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"usage":{"input_tokens":11,"cache_creation_input_tokens":2,"cache_read_input_tokens":3,"output_tokens":1}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: ping
data: {"type":"ping"}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"PONG"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}

event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":7,"input_tokens":null}}

event: message_stop
data: {"type":"message_stop"}

`

const geminiStream =
  [
    'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"PONG"}]},"index":0}],"usageMetadata":{"promptTokenCount":11,"totalTokenCount":11},"modelVersion":"gemini-2.5-flash","responseId":"abc"}',
    'data: {"candidates":[{"content":{"role":"model","parts":[{"text":" from fake"}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":11,"candidatesTokenCount":7,"totalTokenCount":22,"cachedContentTokenCount":3,"thoughtsTokenCount":4},"modelVersion":"gemini-2.5-flash","responseId":"abc"}',
  ].join('\r\n\r\n') + '\r\n\r\n'

describe('usage taps', () => {
  it('chat: the usage chunk of a stream, whatever the chunking', () => {
    const expected = {
      inputTokens: 12,
      outputTokens: 3,
      cacheReadTokens: 4,
      cacheCreationTokens: 0,
      reasoningTokens: 1,
    }
    for (const size of [1, 3, 64, 100_000]) expect(tapped('chat', true, chatStream, size)).toEqual(expected)
  })

  it('chat: a stream without a usage chunk has no usage', () => {
    expect(
      tapped('chat', true, chatStream.split('\n\n').slice(0, 3).join('\n\n') + '\n\ndata: [DONE]\n\n'),
    ).toBeUndefined()
  })

  it('chat: a JSON body', () => {
    const body = JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{index: 0, message: {role: 'assistant', content: 'Hello!'}, finish_reason: 'stop'}],
      usage: {
        prompt_tokens: 12,
        completion_tokens: 3,
        total_tokens: 15,
        prompt_tokens_details: {cached_tokens: 0},
      },
    })
    expect(tapped('chat', false, body)).toEqual({
      inputTokens: 12,
      outputTokens: 3,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      reasoningTokens: 0,
    })
  })

  it.each([
    // writes (a part of prompt_tokens)
    [
      'DashScope (its explicit cache)',
      {prompt_tokens_details: {cached_tokens: 0, cache_creation_input_tokens: 2048}},
      0,
      2048,
    ],
    ['OpenRouter', {prompt_tokens_details: {cached_tokens: 0, cache_write_tokens: 2048}}, 0, 2048],
    ['LiteLLM', {cache_creation_input_tokens: 2048}, 0, 2048],
    // reads
    ['DeepSeek', {prompt_cache_hit_tokens: 2048, prompt_cache_miss_tokens: 971}, 2048, 0],
    ['Moonshot (Kimi)', {cached_tokens: 2048}, 2048, 0],
    ['OpenAI', {prompt_tokens_details: {cached_tokens: 2048}}, 2048, 0],
  ])('chat: the cache counts %s reports, in the row', (_, fields, reads, writes) => {
    const body = JSON.stringify({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      choices: [{index: 0, message: {role: 'assistant', content: 'Hello!'}, finish_reason: 'stop'}],
      usage: {prompt_tokens: 3019, completion_tokens: 104, total_tokens: 3123, ...fields},
    })
    expect(tapped('chat', false, body)).toEqual({
      inputTokens: 3019,
      outputTokens: 104,
      cacheReadTokens: reads,
      cacheCreationTokens: writes,
      reasoningTokens: 0,
    })
  })

  it("chat: xAI's reasoning beside the completion is counted in the output (its total says so)", () => {
    const xai = JSON.stringify({
      id: 'x',
      choices: [{index: 0, message: {role: 'assistant', content: 'hi'}, finish_reason: 'stop'}],
      usage: {
        prompt_tokens: 14,
        completion_tokens: 2,
        total_tokens: 333,
        completion_tokens_details: {reasoning_tokens: 317},
      },
    })
    expect(tapped('chat', false, xai)).toMatchObject({
      inputTokens: 14,
      outputTokens: 319,
      reasoningTokens: 317,
    })
    // OpenAI's: the reasoning inside the completion already
    expect(tapped('chat', true, chatStream)).toMatchObject({outputTokens: 3, reasoningTokens: 1})
  })

  it("chat: a tool call opened without its id, a number id, a role that is not assistant (no usage needed); none in OpenAI's", () => {
    const events = (...deltas: unknown[]) =>
      [
        ...deltas.map((delta) => `data: ${JSON.stringify({id: 'c', choices: [{index: 0, delta}]})}`),
        'data: [DONE]',
      ].join('\n\n') + '\n\n'
    const opened = {index: 0, id: 'call_a', type: 'function', function: {name: 'ls', arguments: ''}}
    const more = {index: 0, function: {arguments: '{}'}}
    const seen = (text: string) => {
      const tap = createUsageTap('chat', true)
      tap.feed(Buffer.from(text))
      tap.end()
      return tap.toolCallFaults()?.idless
    }
    // OpenAI's: the id on the call's first delta only, the role on the first delta only
    expect(seen(events({role: 'assistant', content: ''}, {tool_calls: [opened]}, {tool_calls: [more]}))).toBe(
      undefined,
    )
    const {id: _, ...withoutId} = opened
    expect(seen(events({tool_calls: [withoutId]}, {tool_calls: [more]}))).toBe('id')
    expect(seen(events({tool_calls: [{...opened, id: ''}]}))).toBe('id')
    expect(seen(events({tool_calls: [opened]}, {tool_calls: [{...more, id: 7}]}))).toBe('id')
    expect(seen(events({role: 'assistant'}, {role: '', tool_calls: [opened]}))).toBe('role')
    // both: the id is what the row names
    expect(seen(events({role: ''}, {tool_calls: [withoutId]}))).toBe('id')
    // a call without its index as well: one that names its function opens it; no usage needed
    const bare = {type: 'function', function: {name: 'ls', arguments: '{}'}}
    const tap = createUsageTap('chat', true)
    tap.feed(Buffer.from(events({tool_calls: [bare]}, {tool_calls: [{function: {arguments: ''}}]})))
    tap.end()
    // (and no finish by [DONE]: that too)
    expect(tap.toolCallFaults()).toEqual({unindexed: true, idless: 'id', finish: null})
    // Gemini's: its calls carry ids, not indexes
    expect(seen(events({tool_calls: [{...bare, id: 'function-call-1'}]}))).toBe(undefined)
  })

  it('chat: a finish the AI SDK reads as unknown (none by [DONE], a vendor\'s); "" is no finish; none in OpenAI\'s', () => {
    const stream = (...finishes: Array<string | null | undefined>) =>
      [
        ...finishes.map(
          (finish_reason, i) =>
            `data: ${JSON.stringify({id: 'c', choices: [{index: 0, delta: {content: `${i}`}, finish_reason}]})}`,
        ),
        'data: [DONE]',
      ].join('\n\n') + '\n\n'
    const read = (text: string) => {
      const tap = createUsageTap('chat', true)
      tap.feed(Buffer.from(text))
      tap.end()
      return {faults: tap.toolCallFaults(), outcome: tap.outcome().kind}
    }
    for (const openai of ['stop', 'length', 'tool_calls', 'content_filter', 'function_call'])
      expect(read(stream(null, openai))).toEqual({faults: undefined, outcome: 'complete'})
    // SenseNova's, Perplexity's: "" until the last chunk
    expect(read(stream('', '', 'stop'))).toEqual({faults: undefined, outcome: 'complete'})
    expect(read(stream(null, null))).toEqual({faults: {finish: null}, outcome: 'complete'})
    expect(read(stream('', ''))).toEqual({faults: {finish: null}, outcome: 'complete'})
    expect(read(stream(null, 'sensitive'))).toEqual({faults: {finish: 'sensitive'}, outcome: 'complete'})
    expect(read(stream('abort')).faults).toEqual({finish: 'abort'})
    // the first vendor's value is the one the row names
    expect(read(stream('network_error', 'stop')).faults).toEqual({finish: 'network_error'})
    // an error event ends it: no finish needed
    expect(
      read(
        `data: ${JSON.stringify({id: 'c', choices: [{index: 0, delta: {content: 'a'}}]})}\n\ndata: {"error":{"message":"x"}}\n\ndata: [DONE]\n\n`,
      ).faults,
    ).toBe(undefined)
    // OpenRouter's error object beside its `finish_reason: "error"`: the AI SDK reads the error,
    // nothing to learn
    expect(
      read(
        `data: ${JSON.stringify({id: 'c', choices: [{index: 0, delta: {}, finish_reason: 'error'}], error: {message: 'x', code: 502}})}\n\ndata: [DONE]\n\n`,
      ).faults,
    ).toBe(undefined)
    // a stream cut after "" chunks (no [DONE]): truncated, not complete, and no finish fault (the
    // relay ends it with an error event)
    const cut = stream('', '').replace('data: [DONE]\n\n', '')
    expect(read(cut)).toEqual({faults: undefined, outcome: 'truncated'})
    // a stream cut after its finish, [DONE] left out: complete, as before
    expect(read(stream(null, 'stop').replace('data: [DONE]\n\n', '')).outcome).toBe('complete')
  })

  it("chat: DashScope's breakdown of its writes, the 1-hour part in the row", () => {
    const body = (cacheCreation: unknown) =>
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        choices: [{index: 0, message: {role: 'assistant', content: 'Hello!'}, finish_reason: 'stop'}],
        usage: {
          prompt_tokens: 3019,
          completion_tokens: 104,
          total_tokens: 3123,
          prompt_tokens_details: {
            cached_tokens: 0,
            cache_creation_input_tokens: 2048,
            cache_creation: cacheCreation,
            cache_type: 'ephemeral',
          },
        },
      })
    expect(
      tapped('chat', false, body({ephemeral_5m_input_tokens: 48, ephemeral_1h_input_tokens: 2000})),
    ).toEqual({
      inputTokens: 3019,
      outputTokens: 104,
      cacheReadTokens: 0,
      cacheCreationTokens: 2048,
      cache1hTokens: 2000,
      reasoningTokens: 0,
    })
    expect(tapped('chat', false, body({ephemeral_5m_input_tokens: 2048}))).not.toHaveProperty('cache1hTokens')
  })

  it('responses: response.completed of a stream, and a JSON body; the response id Codex records', () => {
    const expected = {
      inputTokens: 11,
      outputTokens: 7,
      cacheReadTokens: 3,
      cacheCreationTokens: 0,
      reasoningTokens: 2,
      responseId: 'resp_1',
    }
    expect(tapped('responses', true, responsesStream, 5)).toEqual(expected)
    const body = {
      id: 'resp_1',
      object: 'response',
      status: 'completed',
      output: [],
      usage: {
        input_tokens: 11,
        input_tokens_details: {cached_tokens: 3},
        output_tokens: 7,
        output_tokens_details: {reasoning_tokens: 2},
      },
    }
    expect(tapped('responses', false, JSON.stringify(body))).toEqual(expected)
  })

  it("responses: GPT-5.6's cache writes (input_tokens_details.cache_write_tokens) in the row, stream and JSON", () => {
    const usage = {
      input_tokens: 9080,
      input_tokens_details: {cached_tokens: 0, cache_write_tokens: 9077},
      output_tokens: 7,
      output_tokens_details: {reasoning_tokens: 2},
      total_tokens: 9087,
    }
    const expected = {
      inputTokens: 9080,
      outputTokens: 7,
      cacheReadTokens: 0,
      cacheCreationTokens: 9077,
      reasoningTokens: 2,
      responseId: 'resp_w',
    }
    const completed = {type: 'response.completed', response: {id: 'resp_w', status: 'completed', usage}}
    expect(
      tapped('responses', true, `event: response.completed\ndata: ${JSON.stringify(completed)}\n\n`, 9),
    ).toEqual(expected)
    expect(
      tapped('responses', false, JSON.stringify({id: 'resp_w', object: 'response', output: [], usage})),
    ).toEqual(expected)
  })

  it('messages: message_start then cumulative message_delta usage (overwritten, never added)', () => {
    // input 11 + cache read 3 + cache write 2 = 16 prompt tokens; output 7 (not 1 + 5 + 7)
    expect(tapped('messages', true, messagesStream, 11)).toEqual({
      inputTokens: 16,
      outputTokens: 7,
      cacheReadTokens: 3,
      cacheCreationTokens: 2,
      cache1hTokens: 0,
      reasoningTokens: 0,
    })
  })

  it('messages: the 1-hour part of the cache writes, from message_start (message_delta leaves it out)', () => {
    const start = {
      type: 'message_start',
      message: {
        id: 'msg_1h',
        type: 'message',
        role: 'assistant',
        content: [],
        usage: {
          input_tokens: 10,
          cache_creation_input_tokens: 900,
          cache_read_input_tokens: 40,
          cache_creation: {ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 600},
          output_tokens: 1,
        },
      },
    }
    const delta = {
      type: 'message_delta',
      delta: {stop_reason: 'end_turn'},
      usage: {
        input_tokens: 10,
        cache_creation_input_tokens: 900,
        cache_read_input_tokens: 40,
        output_tokens: 25,
      },
    }
    const stream = [start, delta, {type: 'message_stop'}]
      .map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
      .join('')
    expect(tapped('messages', true, stream, 5)).toEqual({
      inputTokens: 950,
      outputTokens: 25,
      cacheReadTokens: 40,
      cacheCreationTokens: 900,
      cache1hTokens: 600,
      reasoningTokens: 0,
    })
    // a JSON body; a 1-hour figure above the total write is capped to it
    const body = {
      type: 'message',
      usage: {...start.message.usage, cache_creation: {ephemeral_1h_input_tokens: 5000}},
    }
    expect(tapped('messages', false, JSON.stringify(body))).toMatchObject({
      cacheCreationTokens: 900,
      cache1hTokens: 900,
    })
  })

  it("messages: the thinking part of the output (Anthropic's output_tokens_details.thinking_tokens)", () => {
    const usage = {input_tokens: 12, cache_read_input_tokens: 5, output_tokens: 30}
    const body = {type: 'message', usage: {...usage, output_tokens_details: {thinking_tokens: 18}}}
    expect(tapped('messages', false, JSON.stringify(body))).toMatchObject({
      outputTokens: 30,
      reasoningTokens: 18,
    })
    // streamed: the final delta's figure; never more than the output
    const start = {type: 'message_start', message: {type: 'message', usage: {...usage, output_tokens: 1}}}
    const delta = {
      type: 'message_delta',
      delta: {stop_reason: 'end_turn'},
      usage: {output_tokens: 30, output_tokens_details: {thinking_tokens: 45}},
    }
    const stream = [start, delta, {type: 'message_stop'}]
      .map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
      .join('')
    expect(tapped('messages', true, stream, 3)).toMatchObject({outputTokens: 30, reasoningTokens: 30})
  })

  it('messages: a JSON body', () => {
    const body = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [{type: 'text', text: 'Hello!'}],
      usage: {input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 5, output_tokens: 3},
    }
    expect(tapped('messages', false, JSON.stringify(body))).toMatchObject({
      inputTokens: 17,
      cacheReadTokens: 5,
      outputTokens: 3,
    })
  })

  it('gemini: the last usageMetadata wins; prompt includes cached; thoughts count as output', () => {
    expect(tapped('gemini', true, geminiStream, 13)).toEqual({
      inputTokens: 11,
      outputTokens: 11,
      cacheReadTokens: 3,
      cacheCreationTokens: 0,
      reasoningTokens: 4,
    })
  })

  it('ignores bodies that are not JSON and error bodies', () => {
    expect(tapped('messages', false, '<html>bad gateway</html>')).toBeUndefined()
    expect(
      tapped('gemini', false, '{"error":{"code":503,"message":"x","status":"UNAVAILABLE"}}'),
    ).toBeUndefined()
  })
})

describe('a stream that breaks with an error event (issue 25, item 3)', () => {
  function broken(family: Parameters<typeof createUsageTap>[0], text: string) {
    const tap = createUsageTap(family, true)
    tap.feed(Buffer.from(text))
    tap.end()
    return {usage: tap.usage(), outcome: tap.outcome()}
  }
  const chunk = (text: string) =>
    `data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"${text}"}}]}\n\n`

  it('chat: an error, its code, and the tokens that streamed', () => {
    const r = broken(
      'chat',
      chunk('a') +
        chunk('b') +
        chunk('c') +
        'data: {"error":{"message":"provider failed mid-stream","type":"api_error","code":"provider_stream_error"}}\n\n',
    )
    expect(r.outcome).toEqual({kind: 'error', message: 'provider_stream_error: provider failed mid-stream'})
    expect(r.usage).toMatchObject({inputTokens: 0, outputTokens: 3})
  })

  it('responses: the error event with its code; the deltas as output tokens', () => {
    const r = broken(
      'responses',
      'event: response.created\ndata: {"type":"response.created","sequence_number":0,"response":{"id":"resp_9"}}\n\n' +
        'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":1,"delta":"a"}\n\n' +
        'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":2,"delta":"b"}\n\n' +
        'event: error\ndata: {"type":"error","sequence_number":3,"code":"server_error","message":"upstream broke"}\n\n',
    )
    expect(r.outcome).toEqual({kind: 'error', message: 'server_error: upstream broke'})
    expect(r.usage).toMatchObject({outputTokens: 2, responseId: 'resp_9'})
  })

  it('messages: message_start input kept, the streamed deltas as output', () => {
    const r = broken(
      'messages',
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":9,"output_tokens":1}}}\n\n' +
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a"}}\n\n'.repeat(
          4,
        ) +
        'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    )
    expect(r.outcome).toEqual({kind: 'error', message: 'overloaded_error: Overloaded'})
    expect(r.usage).toMatchObject({inputTokens: 9, outputTokens: 4})
  })

  it('gemini: the error with its status; the chunks that streamed', () => {
    const r = broken(
      'gemini',
      'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"a"}]}}]}\n\n'.repeat(2) +
        'data: {"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}\n\n',
    )
    expect(r.outcome).toEqual({kind: 'error', message: 'UNAVAILABLE: The model is overloaded.'})
    expect(r.usage).toMatchObject({outputTokens: 2})
  })

  it('a complete stream without usage still reports none (no guess)', () => {
    expect(broken('chat', chunk('a') + 'data: [DONE]\n\n').usage).toBeUndefined()
  })
})

describe("gemini: Google's thought-only answer without finishReason (CLIProxyAPI #5226)", () => {
  function ended(text: string) {
    const tap = createUsageTap('gemini', true)
    tap.feed(Buffer.from(text))
    tap.end()
    return {usage: tap.usage(), outcome: tap.outcome()}
  }
  const thought =
    'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"hmm","thought":true}]},"index":0}],"usageMetadata":{"promptTokenCount":40,"totalTokenCount":40}}\r\n\r\n'
  const usage = {promptTokenCount: 40, totalTokenCount: 52, thoughtsTokenCount: 12}
  const last = (u: object = usage) =>
    `data: ${JSON.stringify({candidates: [{content: {role: 'model', parts: []}, index: 0}], usageMetadata: u})}\r\n\r\n`

  it('complete, with the chunk Gemini would have ended it with (STOP, the last usage)', () => {
    const r = ended(thought + last())
    expect(r.outcome).toEqual({
      kind: 'complete',
      append: `data: ${JSON.stringify({
        candidates: [{content: {role: 'model', parts: []}, finishReason: 'STOP', index: 0}],
        usageMetadata: usage,
      })}\n\n`,
    })
    expect(r.usage).toEqual({
      inputTokens: 40,
      outputTokens: 12,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      reasoningTokens: 12,
    })
    // candidatesTokenCount 0 is the same
    expect(ended(thought + last({...usage, candidatesTokenCount: 0})).outcome.kind).toBe('complete')
  })

  it('truncated as before: text seen, a call seen, no usage, candidate tokens, no thoughts', () => {
    const truncated = {kind: 'truncated', expected: 'a chunk with finishReason'}
    const text = 'data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}]}\n\n'
    const call = 'data: {"candidates":[{"content":{"parts":[{"functionCall":{"name":"f","args":{}}}]}}]}\n\n'
    expect(ended(thought + text + last()).outcome).toEqual(truncated)
    expect(ended(thought + call + last()).outcome).toEqual(truncated)
    expect(ended(thought).outcome).toEqual(truncated)
    expect(ended(thought + last({...usage, candidatesTokenCount: 3})).outcome).toEqual(truncated)
    expect(ended(thought + last({promptTokenCount: 40, totalTokenCount: 40})).outcome).toEqual(truncated)
    // an error chunk stays the error
    const error = 'data: {"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}\n\n'
    expect(ended(thought + last() + error).outcome.kind).toBe('error')
  })

  it('cut after a thought chunk with usage stays truncated (Gemini 2.5 counts thoughts on each)', () => {
    const truncated = {kind: 'truncated', expected: 'a chunk with finishReason'}
    // raw gemini-2.5-flash shape: every thought chunk carries a usage of thoughts, no candidate token
    const thought25 = (text: string, thoughts: number) =>
      `data: ${JSON.stringify({
        candidates: [{content: {parts: [{text, thought: true}], role: 'model'}, index: 0}],
        usageMetadata: {promptTokenCount: 29, totalTokenCount: 29 + thoughts, thoughtsTokenCount: thoughts},
        modelVersion: 'gemini-2.5-flash',
      })}\r\n\r\n`
    const cut = thought25('**Initiating**', 59) + thought25('**Weighing**', 120)
    expect(ended(cut).outcome).toEqual(truncated)
    expect(ended(thought25('**Initiating**', 59)).outcome).toEqual(truncated)
    // an empty thought with the usage is a thought part all the same
    const emptyThought = last().replace('"parts":[]', '"parts":[{"text":"","thought":true}]')
    expect(ended(thought + emptyThought).outcome).toEqual(truncated)
    // the same chunks, then the ending chunk (no part of its own): whole
    expect(ended(cut + last()).outcome.kind).toBe('complete')
    // ending with no content at all, or a bare signature, is the same
    const noContent = `data: ${JSON.stringify({candidates: [{index: 0}], usageMetadata: usage})}\r\n\r\n`
    expect(ended(cut + noContent).outcome.kind).toBe('complete')
    const signed = last().replace('"parts":[]', '"parts":[{"text":"","thoughtSignature":"S"}]')
    expect(ended(cut + signed).outcome.kind).toBe('complete')
  })
})
