/**
 * A client that leaves a stream before its end: the row keeps the usage the upstream had reported
 * by then (the upstream bills it), on pass-through and translated routes, in every family the
 * taps and decoders read; never counts the upstream did not give (no output made up from the
 * deltas, as a broken stream's is). An upstream that breaks off (a reset, a close before its
 * finish) the same: its row keeps what it reported, a broken stream's output never below the
 * deltas that streamed (review67 #1). In this process, with a scripted upstream that sends its
 * events and then holds the stream open, resets it or ends it.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {Family} from '../../store/schema.js'
import type {ProxyResult, ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {ProxyGateway, startUpstream} from './proxy-fixture.js'

const event = (name: string | undefined, payload: unknown): string =>
  `${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(payload)}\n\n`

/** What the upstream sends before it holds the stream open; `wrote` is called once it has. */
let sent: string[] = []
let wrote: () => void = () => undefined
/** What the upstream does after it wrote (150 ms on): holds the stream open, resets it or ends it. */
let after: 'hold' | 'reset' | 'end' = 'hold'
let upstream: Upstream
let target: ProxyTarget
const gateway = new ProxyGateway({route: () => ({targets: [target]})})

beforeAll(async () => {
  upstream = await startUpstream((_req, res) => {
    res.writeHead(200, {'content-type': 'text/event-stream'})
    res.write(sent.join(''))
    wrote()
    // (held: the client leaves first)
    if (after === 'reset') setTimeout(() => res.socket?.destroy(), 150)
    else if (after === 'end') setTimeout(() => res.end(), 150)
  })
  await gateway.listen()
})

afterEach(() => {
  gateway.results.length = 0
  after = 'hold'
})

afterAll(async () => {
  upstream.close()
  await gateway.close()
})

const PATH: Record<Family, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
  gemini: '/v1beta/models/m:streamGenerateContent?alt=sse',
}

const BODY: Record<Family, unknown> = {
  chat: {
    model: 'm',
    stream: true,
    stream_options: {include_usage: true},
    messages: [{role: 'user', content: 'hi'}],
  },
  responses: {model: 'm', stream: true, input: 'hi'},
  messages: {model: 'm', stream: true, max_tokens: 100, messages: [{role: 'user', content: 'hi'}]},
  gemini: {contents: [{role: 'user', parts: [{text: 'hi'}]}]},
}

/**
 * Streams `events` from a `upstream` server to a `client` (translated when they differ): the
 * client reads until it has `until` (else until the upstream wrote, and 200 ms more), then
 * leaves. The request's result.
 */
async function leave(
  client: Family,
  upFamily: Family,
  events: string[],
  until?: string,
): Promise<ProxyResult> {
  sent = events
  const written = new Promise<void>((resolve) => (wrote = resolve))
  target = {
    provider: {name: 'up', family: upFamily, baseUrl: upstream.origin, credential: {secret: 'upstream-key'}},
    model: 'm',
    ...(client === upFamily ? {} : {translate: true as const}),
  }
  const controller = new AbortController()
  const answer = fetch(gateway.url + PATH[client], {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify(BODY[client]),
    signal: controller.signal,
  })
  if (until === undefined) {
    await written
    await new Promise((resolve) => setTimeout(resolve, 200))
    controller.abort()
    await answer.catch(() => undefined)
  } else {
    const res = await answer
    const reader = res.body!.getReader()
    let text = ''
    while (!text.includes(until)) {
      const {value, done} = await reader.read()
      if (done) throw new Error(`the stream ended without ${until}: ${text}`)
      text += new TextDecoder().decode(value)
    }
    controller.abort()
  }
  const [result] = await gateway.settled(1)
  return result!
}

const MESSAGE_START = event('message_start', {
  type: 'message_start',
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'm',
    content: [],
    stop_reason: null,
    usage: {
      input_tokens: 10,
      cache_read_input_tokens: 500,
      cache_creation_input_tokens: 20,
      output_tokens: 1,
    },
  },
})
const MESSAGES_TEXT = [
  MESSAGE_START,
  event('content_block_start', {
    type: 'content_block_start',
    index: 0,
    content_block: {type: 'text', text: ''},
  }),
  event('content_block_delta', {
    type: 'content_block_delta',
    index: 0,
    delta: {type: 'text_delta', text: 'Hello'},
  }),
]
/** Gemini's usage rides on every chunk (its prompt, cache and output so far). */
const GEMINI_TEXT = [
  event(undefined, {
    candidates: [{content: {role: 'model', parts: [{text: 'Hello'}]}, index: 0}],
    usageMetadata: {promptTokenCount: 900, cachedContentTokenCount: 100, candidatesTokenCount: 3},
  }),
]
const GEMINI_USAGE = {inputTokens: 900, outputTokens: 3, cacheReadTokens: 100, reasoningTokens: 0}
const RESPONSES_TEXT = [
  event('response.created', {
    type: 'response.created',
    sequence_number: 0,
    response: {id: 'resp_1', object: 'response', status: 'in_progress', output: [], usage: null},
  }),
  event('response.output_text.delta', {
    type: 'response.output_text.delta',
    sequence_number: 1,
    item_id: 'msg_1',
    output_index: 0,
    content_index: 0,
    delta: 'Hello',
  }),
]
const chatChunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}): string =>
  event(undefined, {
    id: 'c1',
    object: 'chat.completion.chunk',
    model: 'm',
    choices: [{index: 0, delta, finish_reason: null}],
    ...extra,
  })

describe('a client that leaves a stream: the row keeps what the upstream reported by then', () => {
  it('(warm-up: the translation modules load with the first translated request)', async () => {
    await leave('messages', 'gemini', GEMINI_TEXT, 'Hello')
  })

  it.each(['messages', 'chat', 'responses'] as const)(
    "translated from Gemini to a %s client: the last usageMetadata, held for the finish, is the row's",
    async (client) => {
      const result = await leave(client, 'gemini', GEMINI_TEXT, 'Hello')
      expect(result).toMatchObject({status: 200, clientAborted: true, error: 'client closed the connection'})
      expect(result.usage).toMatchObject({...GEMINI_USAGE, cacheCreationTokens: 0})
    },
  )

  it("translated from Gemini while the answer's start is held (a usage-only chunk): a 499 row with the prompt Google counted", async () => {
    const result = await leave('messages', 'gemini', [
      event(undefined, {usageMetadata: {promptTokenCount: 900}}),
    ])
    expect(result).toMatchObject({status: 499, clientAborted: true, error: 'client closed the connection'})
    expect(result.usage).toMatchObject({inputTokens: 900, outputTokens: 0})
  })

  it('translated from a chat server that sends its usage on every chunk (held for the stop): its last', async () => {
    const result = await leave(
      'messages',
      'chat',
      [chatChunk({role: 'assistant', content: 'Hello'}, {usage: {prompt_tokens: 700, completion_tokens: 2}})],
      'Hello',
    )
    expect(result).toMatchObject({status: 200, clientAborted: true})
    expect(result.usage).toMatchObject({inputTokens: 700, outputTokens: 2})
  })

  // (the three below held before as well: the counts a stream already carried to the client)
  it("translated from Messages: message_start's counts (its input and cache), its output as it said", async () => {
    const result = await leave('chat', 'messages', MESSAGES_TEXT, 'Hello')
    expect(result).toMatchObject({status: 200, clientAborted: true})
    expect(result.usage).toMatchObject({
      inputTokens: 530,
      cacheReadTokens: 500,
      cacheCreationTokens: 20,
      outputTokens: 1,
    })
  })

  it('passed through: Messages (message_start) and Gemini (usageMetadata), as the taps read them', async () => {
    const messages = await leave('messages', 'messages', MESSAGES_TEXT, 'Hello')
    expect(messages).toMatchObject({status: 200, clientAborted: true})
    expect(messages.usage).toMatchObject({inputTokens: 530, cacheReadTokens: 500, outputTokens: 1})
    gateway.results.length = 0
    const gemini = await leave('gemini', 'gemini', GEMINI_TEXT, 'Hello')
    expect(gemini.usage).toMatchObject(GEMINI_USAGE)
  })

  it('nothing reported yet (a Responses stream before response.completed, a chat stream before its usage chunk): no usage, none made up from the deltas', async () => {
    for (const [client, upFamily, events] of [
      ['responses', 'responses', RESPONSES_TEXT],
      ['messages', 'responses', RESPONSES_TEXT],
      ['chat', 'chat', [chatChunk({role: 'assistant', content: 'Hello'})]],
      ['messages', 'chat', [chatChunk({role: 'assistant', content: 'Hello'})]],
    ] as const) {
      gateway.results.length = 0
      const result = await leave(client, upFamily, [...events], 'Hello')
      expect(result, `${client} from ${upFamily}`).toMatchObject({clientAborted: true, usage: null})
    }
  })
})

/**
 * Streams `events` from an `upFamily` upstream to a `client` (translated when they differ), the
 * upstream breaking off `how` after them; the client reads to the end. The request's result.
 */
async function breakOff(
  client: Family,
  upFamily: Family,
  events: string[],
  how: 'reset' | 'end' = 'reset',
): Promise<ProxyResult> {
  sent = events
  after = how
  target = {
    provider: {name: 'up', family: upFamily, baseUrl: upstream.origin, credential: {secret: 'upstream-key'}},
    model: 'm',
    ...(client === upFamily ? {} : {translate: true as const}),
  }
  const res = await fetch(gateway.url + PATH[client], {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify(BODY[client]),
  })
  await res.text().catch(() => undefined)
  const [result] = await gateway.settled(1)
  return result!
}

describe('an upstream that breaks off a stream: the row keeps what it reported by then (review67 #1)', () => {
  it('(contrast, held before) passed through, Gemini reset mid-answer: the last usageMetadata, as the tap reads it', async () => {
    const result = await breakOff('gemini', 'gemini', GEMINI_TEXT)
    expect(result.usage).toMatchObject(GEMINI_USAGE)
  })

  it('translated from Gemini to Messages, reset mid-answer: the prompt and cache Google reported (it used to be 0), the output its count', async () => {
    const result = await breakOff('messages', 'gemini', GEMINI_TEXT)
    expect(result).toMatchObject({status: 200, broken: true})
    expect(result.usage).toMatchObject(GEMINI_USAGE)
  })

  it('translated from Gemini to chat, closed without its finish: the same', async () => {
    const result = await breakOff('chat', 'gemini', GEMINI_TEXT, 'end')
    expect(result).toMatchObject({status: 200, broken: true})
    expect(result.error).toMatch(/ended before a chunk with finishReason/)
    expect(result.usage).toMatchObject(GEMINI_USAGE)
  })

  it("translated from Gemini, more deltas streamed than its last count: the output is the deltas'", async () => {
    const result = await breakOff('messages', 'gemini', [
      ...GEMINI_TEXT,
      ...[' there', ',', ' friend', '!'].map((text) =>
        event(undefined, {candidates: [{content: {role: 'model', parts: [{text}]}, index: 0}]}),
      ),
    ])
    expect(result).toMatchObject({status: 200, broken: true})
    expect(result.usage).toMatchObject({inputTokens: 900, cacheReadTokens: 100, outputTokens: 5})
  })

  it('translated from a chat server that sends its usage on every chunk, reset mid-answer: its last (it used to be 0 in, 1 out)', async () => {
    const result = await breakOff('messages', 'chat', [
      chatChunk({role: 'assistant', content: 'Hello'}, {usage: {prompt_tokens: 700, completion_tokens: 2}}),
    ])
    expect(result).toMatchObject({status: 200, broken: true})
    expect(result.usage).toMatchObject({inputTokens: 700, outputTokens: 2})
  })

  it("translated from Gemini, reset while the answer's start is held (a usage-only chunk): the 502 row keeps the prompt (it kept none)", async () => {
    const result = await breakOff('messages', 'gemini', [
      event(undefined, {usageMetadata: {promptTokenCount: 900}}),
    ])
    expect(result.status).toBe(502)
    expect(result.error).toMatch(/its body failed before the first byte/)
    expect(result.usage).toMatchObject({inputTokens: 900, outputTokens: 0})
  })
})
