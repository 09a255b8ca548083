/**
 * Gemini's empty STOP through the translated relay (research56 F4; in this process, a scripted
 * Gemini upstream): an answer with no text nor call of which the client saw nothing goes again
 * once, the same bytes; a second empty answer is a 502 the client's SDK retries; one whose thoughts
 * streamed ends with a retryable error event. None is a breaker failure; the row says each.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {EMPTY_ANSWER} from '../../protocols/gemini-parts.js'
import type {Family, ProviderConfig, TimeoutSettings} from '../../store/schema.js'
import {BreakerRegistry} from './breaker.js'
import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {ProxyGateway, startUpstream} from './proxy-fixture.js'

const TIMEOUTS: TimeoutSettings = {connectMs: 1_000, firstByteMs: 1_000, idleMs: 1_000}

const data = (payload: unknown): string => `data: ${JSON.stringify(payload)}\r\n\r\n`

const usage = {promptTokenCount: 900, totalTokenCount: 900}
const EMPTY = {candidates: [{content: {role: 'model'}, finishReason: 'STOP', index: 0}], usageMetadata: usage}
const WHOLE = {
  candidates: [
    {content: {role: 'model', parts: [{text: 'Done: a holds file body.'}]}, finishReason: 'STOP', index: 0},
  ],
  usageMetadata: {promptTokenCount: 900, candidatesTokenCount: 8, totalTokenCount: 908},
}
const THOUGHT = {
  candidates: [{content: {role: 'model', parts: [{text: 'Let me think', thought: true}]}, index: 0}],
  usageMetadata: {promptTokenCount: 900, thoughtsTokenCount: 40},
}
const SIGNED_STOP = {
  candidates: [
    {content: {role: 'model', parts: [{text: '', thoughtSignature: 'c2ln'}]}, finishReason: 'STOP', index: 0},
  ],
  usageMetadata: {promptTokenCount: 900, thoughtsTokenCount: 40, totalTokenCount: 940},
}

/** What the upstream answers, one entry a request, in order (the last one again after). */
let answers: Array<{stream: unknown[]} | {json: unknown} | {status: number; json: unknown}> = []
const received: Buffer[] = []
let upstream: Upstream
let targets: () => ProxyTarget[] = () => []
const gateway = new ProxyGateway({route: () => ({targets: targets(), timeouts: TIMEOUTS})})
const {results} = gateway

beforeAll(async () => {
  upstream = await startUpstream((_req, res, body) => {
    const answer = answers[Math.min(received.length, answers.length - 1)]!
    received.push(body)
    if ('stream' in answer) {
      res.writeHead(200, {'content-type': 'text/event-stream'})
      res.end(answer.stream.map(data).join(''))
      return
    }
    res.writeHead('status' in answer ? answer.status : 200, {'content-type': 'application/json'})
    res.end(JSON.stringify(answer.json))
  })
  await gateway.listen()
})

afterEach(() => {
  results.length = 0
  received.length = 0
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

const provider: ProviderConfig = {
  name: 'up-gemini',
  family: 'gemini',
  baseUrl: '',
  credential: {secret: 'upstream-key'},
}

const PATH: Record<Exclude<Family, 'gemini'>, string> = {
  chat: '/v1/chat/completions',
  responses: '/v1/responses',
  messages: '/v1/messages',
}

/** Each client's tool loop, the tool result last. */
const BODY: Record<Exclude<Family, 'gemini'>, Record<string, unknown>> = {
  messages: {
    model: 'up',
    max_tokens: 1000,
    tools: [
      {name: 'Read', description: 'r', input_schema: {type: 'object', properties: {p: {type: 'string'}}}},
    ],
    messages: [
      {role: 'user', content: 'read a'},
      {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_1', name: 'Read', input: {p: 'a'}}]},
      {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'file body'}]},
    ],
  },
  responses: {
    model: 'up',
    input: [
      {type: 'message', role: 'user', content: 'read a'},
      {type: 'function_call', call_id: 'call_1', name: 'read', arguments: '{"p":"a"}'},
      {type: 'function_call_output', call_id: 'call_1', output: 'file body'},
    ],
    tools: [
      {type: 'function', name: 'read', parameters: {type: 'object', properties: {p: {type: 'string'}}}},
    ],
  },
  chat: {
    model: 'up',
    messages: [
      {role: 'user', content: 'read a'},
      {
        role: 'assistant',
        content: null,
        tool_calls: [{id: 'call_1', type: 'function', function: {name: 'read', arguments: '{"p":"a"}'}}],
      },
      {role: 'tool', tool_call_id: 'call_1', content: 'file body'},
    ],
    tools: [
      {
        type: 'function',
        function: {name: 'read', parameters: {type: 'object', properties: {p: {type: 'string'}}}},
      },
    ],
  },
}

async function run(client: Exclude<Family, 'gemini'>, stream: boolean) {
  const breakers = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 60_000}))
  targets = () => [
    {provider: {...provider, baseUrl: upstream.origin}, translate: true, breaker: breakers.get('up')},
  ]
  const res = await fetch(gateway.url + PATH[client], {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify({...BODY[client], stream}),
  })
  const text = await res.text()
  const [result] = await gateway.settled()
  return {res, text, result: result!, breaker: breakers.snapshotOf('up').state}
}

const SENT_AGAIN = `up-gemini: ${EMPTY_ANSWER}: the request went again once, unseen by the client`

describe("Gemini's empty STOP, translated: sent again once", () => {
  it('(warm-up: the translation modules load with the first translated request)', async () => {
    answers = [{stream: [WHOLE]}]
    await run('messages', true)
  })

  it('a Messages stream: the second answer whole, the same bytes sent twice, the row says so', async () => {
    answers = [{stream: [EMPTY]}, {stream: [WHOLE]}]
    const {res, text, result, breaker} = await run('messages', true)
    expect(res.status).toBe(200)
    // one message_start: the empty answer's never went out
    expect(text.match(/event: message_start/g)).toHaveLength(1)
    expect(text).toContain('Done: a holds file body.')
    expect(text).toContain('"stop_reason":"end_turn"')
    expect(received).toHaveLength(2)
    expect(received[1]!.equals(received[0]!)).toBe(true)
    expect(result).toMatchObject({status: 200, error: SENT_AGAIN})
    expect(result.broken ?? false).toBe(false)
    expect(breaker).toBe('closed')
  })

  it('a Messages JSON answer: the same', async () => {
    answers = [{json: EMPTY}, {json: WHOLE}]
    const {res, text, result, breaker} = await run('messages', false)
    expect(res.status).toBe(200)
    const message = JSON.parse(text) as {content: Array<{type: string; text?: string}>; stop_reason: string}
    expect(message.content).toEqual([{type: 'text', text: 'Done: a holds file body.'}])
    expect(message.stop_reason).toBe('end_turn')
    expect(received).toHaveLength(2)
    expect(received[1]!.equals(received[0]!)).toBe(true)
    expect(result).toMatchObject({status: 200, error: SENT_AGAIN})
    expect(breaker).toBe('closed')
  })

  it('a whole answer goes once; its start waits for no part (a chunk without one first)', async () => {
    answers = [{stream: [{usageMetadata: usage}, WHOLE]}]
    const {text, result} = await run('messages', true)
    expect(received).toHaveLength(1)
    expect(text.match(/event: message_start/g)).toHaveLength(1)
    expect(text).toContain('Done: a holds file body.')
    expect(result).toMatchObject({status: 200, error: null})
  })

  it('the answer sent again answers 503: the client gets it, the breaker counts it', async () => {
    answers = [
      {stream: [EMPTY]},
      {status: 503, json: {error: {code: 503, message: 'The model is overloaded.'}}},
    ]
    const {res, result, breaker} = await run('messages', true)
    expect(res.status).toBe(503)
    expect(received).toHaveLength(2)
    expect(result.error).toMatch(/The model is overloaded/)
    expect(breaker).toBe('open')
  })
})

describe("Gemini's empty STOP, translated: twice, or after thoughts", () => {
  it.each([
    [
      'messages',
      true,
      /"type":"error","error":\{"type":"api_error","message":"up-gemini \(gemini, translated\): the upstream answered nothing/,
    ],
    ['messages', false, /"type":"api_error"/],
    ['responses', true, /"type":"api_error"/],
    ['chat', false, /"type":"api_error"/],
  ] as const)(
    'twice empty, to a %s client (stream %s): a 502 in its shape, no breaker failure',
    async (client, stream, said) => {
      answers = stream ? [{stream: [EMPTY]}] : [{json: EMPTY}]
      const {res, text, result, breaker} = await run(client, stream)
      expect(res.status).toBe(502)
      expect(text).toMatch(said)
      expect(text).toContain(EMPTY_ANSWER)
      expect(received).toHaveLength(2)
      expect(result.status).toBe(502)
      expect(result.error).toMatch(
        /the upstream answered nothing .*, twice \(sent again once\): the client got a 502 to retry/,
      )
      expect(breaker).toBe('closed')
    },
  )

  it('thoughts streamed, then STOP with no answer part, to a Messages client: overloaded_error after the thinking', async () => {
    answers = [{stream: [THOUGHT, SIGNED_STOP]}]
    const {res, text, result, breaker} = await run('messages', true)
    expect(res.status).toBe(200)
    expect(text).toContain('"thinking":"Let me think"')
    expect(text).not.toContain('end_turn')
    expect(text).toContain(
      `event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"${EMPTY_ANSWER}"}}`,
    )
    expect(received).toHaveLength(1)
    expect(result).toMatchObject({status: 200, broken: true})
    expect(result.error).toMatch(
      /answered nothing .* after its thoughts streamed: the client got a retryable error event/,
    )
    expect(result.usage).toMatchObject({inputTokens: 900, outputTokens: 40})
    expect(breaker).toBe('closed')
  })

  it('the same to a Responses client: response.failed with server_error', async () => {
    answers = [{stream: [THOUGHT, SIGNED_STOP]}]
    const {text, breaker} = await run('responses', true)
    expect(text).toMatch(
      /event: response\.failed\ndata: .*"error":\{"code":"server_error","message":"the upstream answered nothing/,
    )
    expect(text).not.toContain('response.completed')
    expect(breaker).toBe('closed')
  })
})
