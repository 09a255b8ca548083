import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

import OpenAI from 'openai'
import {afterEach, describe, expect, it} from 'vitest'

import type {CodecContext, Request, StreamEvent} from './ir.js'
import {responsesCodec} from './responses.js'

let server: Server | undefined
afterEach(() => server?.close())

/** Serves `body` (SSE or JSON) on 127.0.0.1 and returns an SDK client pointed at it. */
async function serve(body: string, sse: boolean): Promise<OpenAI> {
  server = createServer((_req, res) => {
    res.writeHead(200, {'content-type': sse ? 'text/event-stream' : 'application/json'})
    res.end(body)
  })
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  return new OpenAI({apiKey: 'k', baseURL: `http://127.0.0.1:${port}/v1`, maxRetries: 0})
}

const request: Request = {
  model: 'gpt-x',
  system: [],
  messages: [],
  tools: [
    {name: 'shell', parameters: {type: 'object'}},
    {name: 'apply_patch', parameters: {type: 'object'}, custom: {format: {type: 'text'}}},
  ],
  stream: true,
}

let n = 0
const ctx = (): CodecContext => ({request, newId: (p) => `${p}_${++n}`})

function encode(events: StreamEvent[]): string {
  const enc = responsesCodec.streamEncoder(ctx())
  return events.map((e) => enc.event(e)).join('')
}

const answer: StreamEvent[] = [
  {type: 'start', id: 'x1', model: 'up'},
  {type: 'block_start', index: 0, block: {type: 'reasoning'}},
  {type: 'reasoning_delta', index: 0, text: 'Thinking'},
  {type: 'reasoning_opaque', index: 0, signature: {family: 'messages', value: 'SIG'}},
  {type: 'block_stop', index: 0},
  {type: 'block_start', index: 1, block: {type: 'text'}},
  {type: 'text_delta', index: 1, text: 'Hel'},
  {type: 'text_delta', index: 1, text: 'lo'},
  {type: 'block_stop', index: 1},
  {type: 'block_start', index: 2, block: {type: 'tool_call', id: 'call_1', name: 'shell'}},
  {type: 'tool_args_delta', index: 2, json: '{"cmd":"l'},
  {type: 'tool_args_delta', index: 2, json: 's"}'},
  {type: 'block_stop', index: 2},
  {type: 'block_start', index: 3, block: {type: 'tool_call', id: 'call_2', name: 'apply_patch'}},
  {type: 'tool_args_delta', index: 3, json: '{"input":"*** Begin'},
  {type: 'tool_args_delta', index: 3, json: ' Patch"}'},
  {type: 'block_stop', index: 3},
  {type: 'stop', reason: 'tool_use'},
  {type: 'usage', usage: {inputTokens: 100, outputTokens: 20, cacheReadTokens: 40, reasoningTokens: 5}},
  {type: 'end'},
]

describe('responses stream encoder, read by openai-node', () => {
  it('gives responses.stream() text, a split function call, a custom tool call, reasoning and usage', async () => {
    const client = await serve(encode(answer), true)
    const stream = client.responses.stream({model: 'gpt-x', input: 'hi'})
    const deltas: string[] = []
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta))
    const final = await stream.finalResponse()
    expect(deltas).toEqual(['Hel', 'lo'])
    expect(final.output_text).toBe('Hello')
    expect(final.status).toBe('completed')
    const items = final.output
    expect(items.map((i) => i.type)).toEqual(['reasoning', 'message', 'function_call', 'custom_tool_call'])
    const reasoning = items[0] as {summary: Array<{text: string}>; encrypted_content?: string}
    expect(reasoning.summary[0].text).toBe('Thinking')
    expect(reasoning.encrypted_content).toBe('gwx1.messages.SIG')
    expect(items[2]).toMatchObject({call_id: 'call_1', name: 'shell', arguments: '{"cmd":"ls"}'})
    expect(items[3]).toMatchObject({call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch'})
    expect(final.usage).toMatchObject({
      input_tokens: 100,
      output_tokens: 20,
      input_tokens_details: {cached_tokens: 40},
      output_tokens_details: {reasoning_tokens: 5},
    })
  })

  it('numbers events from 0, starts with response.created and in_progress, and ends with completed', () => {
    const text = encode(answer)
    const events = text
      .trim()
      .split('\n\n')
      .map((block) => {
        const [event, data] = block.split('\n')
        return {event: event.slice('event: '.length), data: JSON.parse(data.slice('data: '.length))}
      })
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i))
    expect(events.every((e) => e.event === e.data.type)).toBe(true)
    expect(events[0].event).toBe('response.created')
    expect(events[1].event).toBe('response.in_progress')
    expect(events[0].data.response).toMatchObject({status: 'in_progress', output: []})
    expect(events[0].data.response.id).toMatch(/^resp_/)
    expect(events.at(-1)!.event).toBe('response.completed')
    expect(events.at(-1)!.data.response.id).toBe(events[0].data.response.id)
  })

  it('makes the SDK throw on an error event', async () => {
    const client = await serve(
      encode([
        {type: 'start', id: 'x', model: 'm'},
        {type: 'block_start', index: 0, block: {type: 'text'}},
        {type: 'text_delta', index: 0, text: 'Hi'},
        {type: 'error', status: 502, message: 'upstream broke'},
      ]),
      true,
    )
    await expect(client.responses.stream({model: 'm', input: 'hi'}).finalResponse()).rejects.toThrow(
      /upstream broke/,
    )
  })

  it('gives responses.create() the non-stream answer', async () => {
    const body = responsesCodec.encodeResponse(
      {
        id: 'r1',
        model: 'up',
        parts: [
          {
            type: 'reasoning',
            text: 'plan',
            encrypted: {family: 'responses', value: '{"id":"rs_9","encrypted_content":"ENC"}'},
          },
          {type: 'text', text: 'Done.'},
          {type: 'tool_call', id: 'call_7', name: 'shell', arguments: '{"cmd":"pwd"}'},
        ],
        stop: 'tool_use',
        usage: {
          inputTokens: 10,
          outputTokens: 3,
          cacheReadTokens: 0,
          cacheCreationTokens: 0,
          reasoningTokens: 1,
        },
      },
      ctx(),
    )
    const client = await serve(JSON.stringify(body), false)
    const res = await client.responses.create({model: 'm', input: 'hi'})
    expect(res.output_text).toBe('Done.')
    expect(res.output[0]).toMatchObject({type: 'reasoning', id: 'rs_9', encrypted_content: 'ENC'})
    expect(res.output[2]).toMatchObject({
      type: 'function_call',
      call_id: 'call_7',
      arguments: '{"cmd":"pwd"}',
    })
    expect(res.usage?.output_tokens_details.reasoning_tokens).toBe(1)
  })
})

describe('responses stream encoder: text deltas', () => {
  it('writes a text delta as JSON.stringify would write its event, in sequence', () => {
    const text = 'say "hi"\n\u00e9\u2028 😀'
    const out = encode([
      {type: 'start', id: 'x1', model: 'up'},
      {type: 'block_start', index: 0, block: {type: 'text'}},
      {type: 'text_delta', index: 0, text},
      {type: 'text_delta', index: 0, text: '!'},
    ])
    const events = out
      .split('\n\n')
      .filter(Boolean)
      .map((block) => ({
        name: block.split('\n')[0].slice('event: '.length),
        data: block.split('\n')[1].slice(6),
      }))
    const deltas = events.filter((e) => e.name === 'response.output_text.delta')
    expect(deltas).toHaveLength(2)
    const [first, second] = deltas.map((d) => JSON.parse(d.data))
    const before = events.indexOf(deltas[0]) - 1
    expect(first.sequence_number).toBe(JSON.parse(events[before].data).sequence_number + 1)
    expect(second.sequence_number).toBe(first.sequence_number + 1)
    expect(deltas[0].data).toBe(
      JSON.stringify({
        type: 'response.output_text.delta',
        sequence_number: first.sequence_number,
        item_id: first.item_id,
        output_index: 0,
        content_index: 0,
        delta: text,
        logprobs: [],
      }),
    )
    expect(second).toMatchObject({delta: '!', item_id: first.item_id})
  })
})

describe('responses stream encoder: events written as text', () => {
  it('writes every event as JSON.stringify writes its object: the snapshots, and reasoning, text and argument deltas', () => {
    const out = encode([
      {type: 'start', id: 'x1', model: 'up'},
      {type: 'block_start', index: 0, block: {type: 'reasoning'}},
      {type: 'reasoning_delta', index: 0, text: 'think "a"\n'},
      {type: 'reasoning_delta', index: 0, text: 'é 😀'},
      {type: 'block_stop', index: 0},
      {type: 'block_start', index: 1, block: {type: 'text'}},
      {type: 'text_delta', index: 1, text: 'hi \u2028'},
      {type: 'block_stop', index: 1},
      {type: 'block_start', index: 2, block: {type: 'tool_call', id: 'call_1', name: 'shell'}},
      {type: 'tool_args_delta', index: 2, json: '{"cmd":'},
      {type: 'tool_args_delta', index: 2, json: '"ls"}'},
      {type: 'block_stop', index: 2},
      {type: 'stop', reason: 'tool_use'},
      {type: 'end'},
    ])
    const events = out
      .split('\n\n')
      .filter(Boolean)
      .map((block) => {
        const [event, data] = block.split('\n')
        return {name: event.slice('event: '.length), data: data.slice('data: '.length)}
      })
    // each event's data is the JSON.stringify of what it parses to (key order, escapes), its
    // type is its event name, and the sequence numbers count from 0
    events.forEach((e, i) => {
      const parsed = JSON.parse(e.data) as {type: string; sequence_number: number}
      expect(e.data).toBe(JSON.stringify(parsed))
      expect(parsed.type).toBe(e.name)
      expect(parsed.sequence_number).toBe(i)
    })
    const data = (name: string): Array<Record<string, unknown>> =>
      events.filter((e) => e.name === name).map((e) => JSON.parse(e.data) as Record<string, unknown>)
    // the field order of each delta event
    const [created] = data('response.created')
    const [progress] = data('response.in_progress')
    expect(Object.keys(created)).toEqual(['type', 'sequence_number', 'response'])
    expect(progress.response).toEqual(created.response)
    const reasoning = data('response.reasoning_summary_text.delta')
    expect(reasoning.map((d) => Object.keys(d))).toEqual(
      Array(2).fill(['type', 'sequence_number', 'item_id', 'output_index', 'summary_index', 'delta']),
    )
    expect(reasoning.map((d) => d.delta).join('')).toBe('think "a"\né 😀')
    const [text] = data('response.output_text.delta')
    expect(Object.keys(text)).toEqual([
      'type',
      'sequence_number',
      'item_id',
      'output_index',
      'content_index',
      'delta',
      'logprobs',
    ])
    expect(text).toMatchObject({output_index: 1, content_index: 0, delta: 'hi \u2028', logprobs: []})
    const args = data('response.function_call_arguments.delta')
    expect(args.map((d) => Object.keys(d))).toEqual(
      Array(2).fill(['type', 'sequence_number', 'item_id', 'output_index', 'delta']),
    )
    expect(args.map((d) => d.delta).join('')).toBe('{"cmd":"ls"}')
    expect(args[0].output_index).toBe(2)
    expect(new Set([...reasoning, text, ...args].map((d) => d.item_id)).size).toBe(3)
  })
})
