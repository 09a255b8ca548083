import {describe, expect, it} from 'vitest'

import {messagesCodec} from './messages.js'
import {continuationBody, joinAnswers, pausedAnswer, sumCounts} from './pause.js'
import {decodeClientRequest, StreamTranslator, translateResponse} from './translate.js'

/** A Messages stream's SSE text, from its events (each with its `type` as the event name). */
const messagesSse = (events: Array<Record<string, unknown>>): string =>
  events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join('')

/** Client SSE text as its `data:` payloads (JSON where it is JSON). */
const payloads = (text: string): any[] =>
  text
    .split('\n\n')
    .filter(Boolean)
    .map((block) => {
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n')
      try {
        return JSON.parse(data)
      } catch {
        return data
      }
    })

const search = (id: string, query: string) => [
  {type: 'server_tool_use', id, name: 'web_search', input: {query}},
  {
    type: 'web_search_tool_result',
    tool_use_id: id,
    content: [
      {
        type: 'web_search_result',
        url: `https://example.com/${id}`,
        title: `${query} (result 1)`,
        encrypted_content: `enc-${id}`,
        page_age: null,
      },
    ],
  },
]

/** A Messages upstream's stream of `blocks`, stopped with `stop`, its usage `usage`. */
function upstreamStream(
  id: string,
  blocks: Array<Record<string, unknown>>,
  stop: string,
  usage: {input_tokens: number; output_tokens: number; cache_read_input_tokens?: number},
): string {
  const events: Array<Record<string, unknown>> = [
    {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: 'claude-x',
        content: [],
        stop_reason: null,
        usage: {...usage, output_tokens: 1},
      },
    },
  ]
  blocks.forEach((block, index) => {
    if (block.type === 'server_tool_use') {
      events.push({type: 'content_block_start', index, content_block: {...block, input: {}}})
      const json = JSON.stringify(block.input)
      // the query's JSON in two pieces
      for (const partial_json of [json.slice(0, 5), json.slice(5)])
        events.push({type: 'content_block_delta', index, delta: {type: 'input_json_delta', partial_json}})
    } else if (block.type === 'text') {
      events.push({type: 'content_block_start', index, content_block: {type: 'text', text: ''}})
      events.push({type: 'content_block_delta', index, delta: {type: 'text_delta', text: block.text}})
    } else if (block.type === 'thinking') {
      events.push({
        type: 'content_block_start',
        index,
        content_block: {type: 'thinking', thinking: '', signature: ''},
      })
      events.push({
        type: 'content_block_delta',
        index,
        delta: {type: 'thinking_delta', thinking: block.thinking},
      })
      events.push({
        type: 'content_block_delta',
        index,
        delta: {type: 'signature_delta', signature: block.signature},
      })
    } else events.push({type: 'content_block_start', index, content_block: block})
    events.push({type: 'content_block_stop', index})
  })
  events.push({type: 'message_delta', delta: {stop_reason: stop, stop_sequence: null}, usage})
  events.push({type: 'message_stop'})
  return messagesSse(events)
}

// Codex offering its live search alone (a Messages upstream gets `web_search_20250305`)
const codexSearch = {
  model: 'gpt-5.5',
  input: 'search the web for gwctl',
  tools: [{type: 'web_search'}],
  stream: true,
}

const thinking = {type: 'thinking', thinking: 'Searching first.', signature: 'sig-1'}
const paused = [thinking, {type: 'text', text: 'Let me look.'}, ...search('srvtoolu_1', 'gwctl')]
const rest = [...search('srvtoolu_2', 'gwctl news'), {type: 'text', text: 'gwctl 2 is out.'}]

describe('a paused turn continued (pause_turn)', () => {
  it('continuationBody: the request sent with the turn so far as its last assistant message', () => {
    const sent = Buffer.from(
      JSON.stringify({
        model: 'claude-x',
        max_tokens: 100,
        messages: [{role: 'user', content: 'hi'}],
        tools: [{type: 'web_search_20250305', name: 'web_search'}],
      }),
    )
    const body = JSON.parse(continuationBody(sent, paused).toString())
    expect(body).toEqual({
      model: 'claude-x',
      max_tokens: 100,
      messages: [
        {role: 'user', content: 'hi'},
        {role: 'assistant', content: paused},
      ],
      tools: [{type: 'web_search_20250305', name: 'web_search'}],
    })
    // a request that ended with an assistant prefill: the content joins it, one assistant turn
    const prefilled = Buffer.from(
      JSON.stringify({
        messages: [
          {role: 'user', content: 'hi'},
          {role: 'assistant', content: 'Sure:'},
        ],
      }),
    )
    expect(JSON.parse(continuationBody(prefilled, rest).toString()).messages).toEqual([
      {role: 'user', content: 'hi'},
      {role: 'assistant', content: [{type: 'text', text: 'Sure:'}, ...rest]},
    ])
    // a forced search was used by the paused content: the continuation does not force it again
    const forced = (choice: unknown) =>
      JSON.parse(
        continuationBody(
          Buffer.from(
            JSON.stringify({model: 'm', messages: [{role: 'user', content: 'q'}], tool_choice: choice}),
          ),
          paused,
        ).toString(),
      ).tool_choice
    expect(forced({type: 'tool', name: 'web_search'})).toEqual({type: 'auto'})
    expect(forced({type: 'any', disable_parallel_tool_use: true})).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    })
    expect(forced({type: 'auto'})).toEqual({type: 'auto'})
    expect(forced(undefined)).toBeUndefined()
  })

  it('joinAnswers: the content of both in order, the later stop, the later prompt and both outputs (the billed sum apart)', () => {
    expect(pausedAnswer({stop_reason: 'pause_turn'})).toBe(true)
    expect(pausedAnswer({stop_reason: 'end_turn'})).toBe(false)
    expect(pausedAnswer(null)).toBe(false)
    const first = {
      id: 'msg_1',
      type: 'message',
      model: 'claude-x',
      content: paused,
      stop_reason: 'pause_turn',
      usage: {
        input_tokens: 10,
        cache_read_input_tokens: 4,
        cache_creation_input_tokens: 0,
        output_tokens: 7,
        server_tool_use: {web_search_requests: 1},
        service_tier: 'standard',
      },
    }
    const next = {
      id: 'msg_2',
      type: 'message',
      model: 'claude-x',
      content: rest,
      stop_reason: 'end_turn',
      usage: {
        input_tokens: 30,
        cache_read_input_tokens: 4,
        cache_creation_input_tokens: 2,
        output_tokens: 9,
        server_tool_use: {web_search_requests: 1},
        service_tier: 'standard',
      },
    }
    const joined = joinAnswers(first, next)
    expect(joined).toMatchObject({
      id: 'msg_1',
      content: [...paused, ...rest],
      stop_reason: 'end_turn',
      // the client is told the context the conversation holds: the later call's prompt
      usage: {
        input_tokens: 30,
        cache_read_input_tokens: 4,
        cache_creation_input_tokens: 2,
        output_tokens: 16,
        server_tool_use: {web_search_requests: 2},
        service_tier: 'standard',
      },
    })
    // what both calls were billed: every count summed (the log row's)
    expect(sumCounts(first.usage, next.usage)).toMatchObject({
      input_tokens: 40,
      cache_read_input_tokens: 8,
      cache_creation_input_tokens: 2,
      output_tokens: 16,
    })
    expect(sumCounts({a: 1, b: {c: 2}}, {b: {c: 3, d: 1}, e: 'x'})).toEqual({a: 1, b: {c: 5, d: 1}, e: 'x'})
    // the joined answer, translated: both searches and the text, usage summed
    const client = decodeClientRequest('responses', {...codexSearch, stream: false}, {})
    const out = translateResponse('messages', client, joined)
    expect((out.body.output as Array<{type: string}>).map((o) => o.type)).toEqual([
      'reasoning',
      'message',
      'web_search_call',
      'web_search_call',
      'message',
    ])
    // the client's usage: the later call's prompt (30 + 4 + 2), both outputs
    expect(out.usage).toMatchObject({inputTokens: 30 + 4 + 2, outputTokens: 16})
  })

  it('a stream: the pause held back, the paused content kept as it came, the continuation in the same stream', () => {
    const client = decodeClientRequest('responses', codexSearch, {})
    const t = new StreamTranslator('messages', client, {newId: (p) => `${p}1`})
    expect(t.continuable).toBe(true)
    t.holdPause = true
    let out = t.push(
      Buffer.from(
        upstreamStream('msg_1', paused, 'pause_turn', {
          input_tokens: 10,
          output_tokens: 7,
          cache_read_input_tokens: 4,
        }),
      ),
    )
    out += t.end()
    expect(t.paused).toBe(true)
    expect(t.done).toBe(false)
    expect(t.error).toBeUndefined()
    // the blocks exactly as the upstream sent them (the call's input from its deltas)
    expect(t.pausedContent()).toEqual(paused)
    const first = payloads(out)
    expect(first.map((e) => e.type)).not.toContain('response.completed')
    expect(first.filter((e) => e.type === 'response.created')).toHaveLength(1)

    t.resume()
    t.holdPause = true
    out = t.push(
      Buffer.from(
        upstreamStream('msg_2', rest, 'end_turn', {
          input_tokens: 30,
          output_tokens: 9,
          cache_read_input_tokens: 4,
        }),
      ),
    )
    out += t.end()
    expect(t.done).toBe(true)
    expect(t.paused).toBe(false)
    const second = payloads(out)
    const types = second.map((e) => e.type)
    expect(types).not.toContain('response.created')
    expect(types.at(-1)).toBe('response.completed')
    const items = [...first, ...second].filter((e) => e.type === 'response.output_item.added')
    expect(items.map((e) => [e.output_index, e.item.type])).toEqual([
      [0, 'reasoning'],
      [1, 'message'],
      [2, 'web_search_call'],
      [3, 'web_search_call'],
      [4, 'message'],
    ])
    const completed = second.at(-1)
    expect(completed.response.status).toBe('completed')
    // the client is told the later call's prompt (30 + 4) and both outputs (7 and 9); the row
    // adds the earlier call's prompt (10 + 4)
    expect(completed.response.usage).toMatchObject({input_tokens: 34, output_tokens: 16})
    expect(t.usage.get()).toMatchObject({inputTokens: 34, outputTokens: 16})
    expect(t.billedUsage()).toMatchObject({inputTokens: 48, outputTokens: 16})
  })

  it('a stream with the continuations spent (holdPause off): the pause ends the turn as before', () => {
    const client = decodeClientRequest(
      'chat',
      {...codexSearch, input: undefined, messages: [{role: 'user', content: 'search the web'}]},
      {},
    )
    const t = new StreamTranslator('messages', client)
    const out = payloads(
      t.push(
        Buffer.from(upstreamStream('msg_1', paused, 'pause_turn', {input_tokens: 1, output_tokens: 1})),
      ) + t.end(),
    )
    expect(t.paused).toBe(false)
    expect(t.endedPaused).toBe(true)
    expect(t.done).toBe(true)
    expect(out.at(-1)).toBe('[DONE]')
    expect(out.some((e) => e.choices?.[0]?.finish_reason === 'stop')).toBe(true)
  })

  it('a stream of a request that offered no search keeps nothing of its answer', () => {
    const client = decodeClientRequest('responses', {...codexSearch, tools: []}, {})
    const t = new StreamTranslator('messages', client)
    t.push(
      Buffer.from(
        upstreamStream('msg_1', [{type: 'text', text: 'hi'}], 'end_turn', {
          input_tokens: 1,
          output_tokens: 1,
        }),
      ),
    )
    expect(t.continuable).toBe(false)
    expect(t.pausedContent()).toEqual([])
  })

  it('a continuation that breaks ends the client stream with its error event, once', () => {
    const client = decodeClientRequest('responses', codexSearch, {})
    const t = new StreamTranslator('messages', client)
    t.holdPause = true
    t.push(Buffer.from(upstreamStream('msg_1', paused, 'pause_turn', {input_tokens: 1, output_tokens: 1})))
    t.end()
    t.resume()
    // the continuation ends before message_stop
    const cut = upstreamStream('msg_2', rest, 'end_turn', {input_tokens: 1, output_tokens: 1}).split(
      'event: message_delta',
    )[0]
    const out = payloads(t.push(Buffer.from(cut)) + t.end())
    expect(t.error?.truncated).toBe(true)
    const types = out.map((e) => e.type)
    expect(types.filter((type) => type === 'response.failed')).toHaveLength(1)
    expect(types.at(-1)).toBe('response.failed')
    expect(types).not.toContain('response.created')
  })

  it("keeps a paused stream's blocks by the upstream's index, in order, a broken index costing nothing", () => {
    const decoder = messagesCodec.streamDecoder({keepContent: true})
    const send = (payload: Record<string, unknown>) =>
      decoder.event(String(payload.type), JSON.stringify(payload))
    send({type: 'message_start', message: {id: 'm', model: 'x', usage: {input_tokens: 1, output_tokens: 1}}})
    send({type: 'content_block_start', index: 0, content_block: {type: 'text', text: ''}})
    send({type: 'content_block_delta', index: 0, delta: {type: 'text_delta', text: 'a'}})
    send({type: 'content_block_stop', index: 0})
    // a broken upstream's index: a map entry, not a billion holes to walk (which took the test's
    // whole time before)
    send({type: 'content_block_start', index: 1e9, content_block: {type: 'text', text: ''}})
    send({type: 'content_block_delta', index: 1e9, delta: {type: 'text_delta', text: 'b'}})
    expect(decoder.keptContent?.()).toEqual([
      {type: 'text', text: 'a'},
      {type: 'text', text: 'b'},
    ])
  })
})
