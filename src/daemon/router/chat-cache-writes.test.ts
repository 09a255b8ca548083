/**
 * DashScope's explicit-cache writes (`prompt_tokens_details.cache_creation_input_tokens`, Qwen with
 * `cache_control` marks) count as cache writes: in a translated client's usage (Claude Code's
 * `cache_creation_input_tokens`, its `input_tokens` without them) and in the log row's cache write
 * column, translated or passed through. The proxy in this process, a scripted DashScope-like
 * upstream on 127.0.0.1.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {chatTarget, ProxyGateway, startJudgedUpstream} from './proxy-fixture.js'

// DashScope's usage of a request whose marked prefix was written to its explicit cache
const USAGE = {
  prompt_tokens: 3019,
  completion_tokens: 104,
  total_tokens: 3123,
  prompt_tokens_details: {cached_tokens: 0, cache_creation_input_tokens: 2048, cache_type: 'ephemeral'},
}

const ANSWER = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'qwen3-coder-plus',
  choices: [{index: 0, message: {role: 'assistant', content: 'done'}, finish_reason: 'stop'}],
  usage: USAGE,
})

const STREAM =
  [
    {choices: [{index: 0, delta: {role: 'assistant', content: 'done'}, finish_reason: null}]},
    {choices: [{index: 0, delta: {}, finish_reason: 'stop'}]},
    {choices: [], usage: USAGE},
  ]
    .map((c) => `data: ${JSON.stringify({id: 'c', object: 'chat.completion.chunk', model: 'm', ...c})}\n\n`)
    .join('') + 'data: [DONE]\n\n'

// the same with DashScope's breakdown of the writes: 2000 of them kept one hour
const BROKEN_DOWN = {
  ...USAGE,
  prompt_tokens_details: {
    ...USAGE.prompt_tokens_details,
    cache_creation: {ephemeral_5m_input_tokens: 48, ephemeral_1h_input_tokens: 2000},
  },
}
const answerOf = (usage: unknown) => JSON.stringify({...JSON.parse(ANSWER), usage})
const streamOf = (usage: unknown) => STREAM.replace(JSON.stringify(USAGE), JSON.stringify(usage))

const received: Buffer[] = []
let targets: ProxyTarget[] = []
let upstream: Upstream
let hourly: Upstream
let gateway: ProxyGateway

beforeAll(async () => {
  upstream = await startJudgedUpstream(received, () => undefined, {stream: STREAM, json: ANSWER})
  hourly = await startJudgedUpstream(received, () => undefined, {
    stream: streamOf(BROKEN_DOWN),
    json: answerOf(BROKEN_DOWN),
  })
  gateway = new ProxyGateway({route: () => ({targets})})
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
  hourly.close()
})

const post = (path: string, body: unknown) =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer client-key'},
    body: JSON.stringify(body),
  })

const WRITES = {inputTokens: 3019, outputTokens: 104, cacheReadTokens: 0, cacheCreationTokens: 2048}

describe("DashScope's explicit-cache writes", () => {
  it('Claude Code translated to it: its usage says the writes, and so does the log row', async () => {
    gateway.results.length = 0
    targets = [{...chatTarget('dashscope', 'qwen3-coder-plus', upstream.origin), translate: true}]
    const res = await post('/v1/messages', {
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      messages: [{role: 'user', content: 'hi'}],
    })
    expect(res.status).toBe(200)
    const {usage} = (await res.json()) as {usage: Record<string, number>}
    // Anthropic's input_tokens leave the cache's tokens out
    expect(usage).toMatchObject({
      input_tokens: 3019 - 2048,
      cache_creation_input_tokens: 2048,
      cache_read_input_tokens: 0,
      output_tokens: 104,
    })
    const [result] = await gateway.settled(1)
    expect(result.usage).toMatchObject(WRITES)
  })

  it('a chat client passed through (qwen-code): the row says the writes, stream or not', async () => {
    targets = [chatTarget('dashscope', 'qwen3-coder-plus', upstream.origin)]
    for (const stream of [false, true]) {
      gateway.results.length = 0
      const res = await post('/v1/chat/completions', {
        model: 'qwen3-coder-plus',
        messages: [{role: 'user', content: 'hi'}],
        stream,
        ...(stream ? {stream_options: {include_usage: true}} : {}),
      })
      expect(res.status).toBe(200)
      await res.text()
      const [result] = await gateway.settled(1)
      expect([stream, result.usage]).toEqual([stream, expect.objectContaining(WRITES)])
    }
  })
})

describe("DashScope's writes broken down (cache_creation): the 1-hour part", () => {
  it('Claude Code translated to it: its usage breaks the writes down as Anthropic does; the row has the part', async () => {
    gateway.results.length = 0
    targets = [{...chatTarget('dashscope', 'qwen3-coder-plus', hourly.origin), translate: true}]
    const res = await post('/v1/messages', {
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      messages: [{role: 'user', content: 'hi'}],
    })
    expect(res.status).toBe(200)
    const {usage} = (await res.json()) as {usage: Record<string, unknown>}
    expect(usage).toMatchObject({
      input_tokens: 3019 - 2048,
      cache_creation_input_tokens: 2048,
      cache_creation: {ephemeral_5m_input_tokens: 48, ephemeral_1h_input_tokens: 2000},
    })
    const [result] = await gateway.settled(1)
    expect(result.usage).toMatchObject({...WRITES, cache1hTokens: 2000})
  })

  it('a chat client passed through: the row has the part, stream or not', async () => {
    targets = [chatTarget('dashscope', 'qwen3-coder-plus', hourly.origin)]
    for (const stream of [false, true]) {
      gateway.results.length = 0
      const res = await post('/v1/chat/completions', {
        model: 'qwen3-coder-plus',
        messages: [{role: 'user', content: 'hi'}],
        stream,
        ...(stream ? {stream_options: {include_usage: true}} : {}),
      })
      expect(res.status).toBe(200)
      await res.text()
      const [result] = await gateway.settled(1)
      expect([stream, result.usage]).toEqual([
        stream,
        expect.objectContaining({...WRITES, cache1hTokens: 2000}),
      ])
    }
  })
})
