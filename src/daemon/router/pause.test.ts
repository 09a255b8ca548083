/**
 * A Messages upstream's paused turn (`pause_turn`) continued for a translated client (a Responses
 * client here, in this process), where it goes wrong: a continuation refused or failed after the
 * client's stream began ends it with the protocol's error event; one before any byte is a failed
 * try that falls back; the client leaving during a continuation aborts it and releases the
 * breaker; a native Messages route passes the pause through untouched. A scripted upstream: its
 * first answer pauses, its continuations do what the client's words say.
 */
import type {ServerResponse} from 'node:http'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Family, ProviderConfig} from '../../store/schema.js'
import {BreakerRegistry} from './breaker.js'
import type {ProxyResult, ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {ProxyGateway, startUpstream} from './proxy-fixture.js'

type Body = Record<string, any>

let upstream: Upstream
let messagesProvider: ProviderConfig
let responsesProvider: ProviderConfig
/** The requests the Messages upstream got, oldest first. */
let calls: Body[] = []
/** Closed when the upstream's socket of a held continuation closes (the gateway aborted it). */
let heldClosed: Promise<void> = Promise.resolve()
let route: {family: Family; targets: ProxyTarget[]; fallbacks: boolean}
let breakers: BreakerRegistry
const gateway = new ProxyGateway({
  family: () => route.family,
  route: () => ({
    targets: route.targets,
    fallbacks: route.fallbacks,
    timeouts: {connectMs: 2_000, firstByteMs: 2_000, idleMs: 2_000},
  }),
})
const {results} = gateway

const SEARCH = [
  {type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {query: 'gwctl'}},
  {
    type: 'web_search_tool_result',
    tool_use_id: 'srvtoolu_1',
    content: [
      {type: 'web_search_result', url: 'https://example.com/1', title: 'gwctl', encrypted_content: 'e1'},
    ],
  },
]
const USAGE = {input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 0, cache_creation_input_tokens: 0}

function answer(stop: string, content: Body[]): Body {
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-x',
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage: USAGE,
  }
}

function sse(message: Body): string {
  const events: Body[] = [{type: 'message_start', message: {...message, content: [], stop_reason: null}}]
  ;(message.content as Body[]).forEach((block, index) => {
    if (block.type === 'text') {
      events.push({type: 'content_block_start', index, content_block: {type: 'text', text: ''}})
      events.push({type: 'content_block_delta', index, delta: {type: 'text_delta', text: block.text}})
    } else if (block.type === 'server_tool_use') {
      events.push({type: 'content_block_start', index, content_block: {...block, input: {}}})
      events.push({
        type: 'content_block_delta',
        index,
        delta: {type: 'input_json_delta', partial_json: JSON.stringify(block.input)},
      })
    } else events.push({type: 'content_block_start', index, content_block: block})
    events.push({type: 'content_block_stop', index})
  })
  events.push({type: 'message_delta', delta: {stop_reason: message.stop_reason}, usage: message.usage})
  events.push({type: 'message_stop'})
  return events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('')
}

function reply(res: ServerResponse, body: Body, message: Body): void {
  if (body.stream) {
    res.writeHead(200, {'content-type': 'text/event-stream'})
    res.end(sse(message))
  } else {
    res.writeHead(200, {'content-type': 'application/json'})
    res.end(JSON.stringify(message))
  }
}

beforeAll(async () => {
  upstream = await startUpstream((req, res, raw) => {
    const body = JSON.parse(raw.toString()) as Body
    if (req.url?.startsWith('/v1/responses')) {
      // the fallback target: a Responses upstream's plain answer
      res.writeHead(200, {'content-type': 'application/json'})
      res.end(
        JSON.stringify({
          id: 'resp_1',
          object: 'response',
          status: 'completed',
          model: 'gpt-x',
          output: [
            {
              type: 'message',
              id: 'msg_r',
              role: 'assistant',
              status: 'completed',
              content: [{type: 'output_text', text: 'from the fallback', annotations: []}],
            },
          ],
          usage: {input_tokens: 3, output_tokens: 2, total_tokens: 5},
        }),
      )
      return
    }
    calls.push(body)
    const words = JSON.stringify(body.messages[0])
    const continuation = body.messages.at(-1).role === 'assistant'
    if (!continuation) return reply(res, body, answer('pause_turn', SEARCH))
    if (words.includes('fail-529')) {
      res.writeHead(529, {'content-type': 'application/json'})
      res.end(JSON.stringify({type: 'error', error: {type: 'overloaded_error', message: 'Overloaded'}}))
    } else if (words.includes('fail-429ms')) {
      res.writeHead(429, {'content-type': 'application/json', 'retry-after-ms': '1500'})
      res.end(JSON.stringify({type: 'error', error: {type: 'rate_limit_error', message: 'Slow down'}}))
    } else if (words.includes('fail-429')) {
      res.writeHead(429, {'content-type': 'application/json', 'retry-after': '20'})
      res.end(JSON.stringify({type: 'error', error: {type: 'rate_limit_error', message: 'Rate limited'}}))
    } else if (words.includes('fail-400')) {
      res.writeHead(400, {'content-type': 'application/json'})
      res.end(
        JSON.stringify({type: 'error', error: {type: 'invalid_request_error', message: 'bad continuation'}}),
      )
    } else if (words.includes('reset')) req.socket.destroy()
    else if (words.includes('hold')) {
      // never answered: the gateway must abort it when its client leaves
      heldClosed = new Promise((resolve) => res.on('close', () => resolve()))
    } else reply(res, body, answer('end_turn', [{type: 'text', text: 'done'}]))
  })
  const baseUrl = upstream.origin
  messagesProvider = {name: 'up', family: 'messages', baseUrl, credential: {secret: 'k'}}
  responsesProvider = {
    name: 'fallback',
    family: 'responses',
    baseUrl: `${baseUrl}/v1`,
    credential: {secret: 'k'},
  }
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

/** A Responses client's request (Codex's live search offered) through the gateway. */
async function ask(
  words: string,
  stream: boolean,
  options: {
    targets?: ProxyTarget[]
    fallbacks?: boolean
    signal?: AbortSignal
    tools?: Body[]
    /** The upstream's breaker half-open: this request takes its one trial. */
    halfOpen?: boolean
  } = {},
): Promise<{status: number; text: string}> {
  calls = []
  results.length = 0
  breakers = new BreakerRegistry()
  // (one failure opens it; with no cooldown it is half-open at once, its trial this request's)
  if (options.halfOpen) breakers.get('up', {failureThreshold: 1, cooldownMs: 0}).recordFailure('down')
  route = {
    family: 'responses',
    targets: options.targets ?? [
      {provider: messagesProvider, model: 'claude-x', translate: true, breaker: breakers.get('up')},
    ],
    fallbacks: options.fallbacks ?? false,
  }
  const res = await fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify({
      model: 'gpt-x',
      input: words,
      tools: options.tools ?? [{type: 'web_search'}],
      stream,
    }),
    signal: options.signal,
  })
  lastHeaders = res.headers
  return {status: res.status, text: await res.text()}
}

/** The headers of the last answer {@link ask} got. */
let lastHeaders: Headers | undefined

/** The result of the last request, once the proxy has returned it. */
async function lastResult(): Promise<ProxyResult> {
  return (await gateway.settled())[0]
}

const eventTypes = (text: string): string[] => [...text.matchAll(/^event: (.+)$/gm)].map((m) => m[1])

describe('a paused turn continued, where it goes wrong', () => {
  it('the usual continuation: one answer, the second call carrying the paused blocks back', async () => {
    const {status, text} = await ask('search ok', false)
    expect(status).toBe(200)
    const body = JSON.parse(text) as Body
    expect(body.output.map((o: Body) => o.type)).toEqual(['web_search_call', 'message'])
    // the client is told the later call's prompt (the context), both outputs; the row, both prompts
    expect(body.usage).toMatchObject({input_tokens: 10, output_tokens: 10})
    expect(calls).toHaveLength(2)
    expect(calls[1].messages.at(-1)).toEqual({role: 'assistant', content: SEARCH})
    const result = await lastResult()
    expect(result.usage).toMatchObject({inputTokens: 20, outputTokens: 10})
    expect(result.error).toBe('up paused the turn (pause_turn): continued 1 time')
    expect(breakers.snapshotOf('up').consecutiveFailures).toBe(0)
  })

  it('a stream whose continuation is refused (529): the turn ends as it is, the row says why, the breaker told', async () => {
    const {status, text} = await ask('search fail-529', true)
    expect(status).toBe(200)
    const types = eventTypes(text)
    expect(types.filter((t) => t === 'response.created')).toHaveLength(1)
    expect(types).toContain('response.output_item.added')
    // no error event (Codex would send the whole turn again, its searches with it): the search so
    // far is the answer
    expect(types.at(-1)).toBe('response.completed')
    expect(types).not.toContain('response.failed')
    const result = await lastResult()
    expect(result.broken).toBeUndefined()
    expect(result.status).toBe(200)
    expect(result.error).toContain('up: the continuation of a paused turn: upstream answered 529: Overloaded')
    expect(result.error).toContain('the client got the turn as it was')
    // the paused answer's tokens stay counted
    expect(result.usage).toMatchObject({inputTokens: 10, outputTokens: 5})
    expect(breakers.snapshotOf('up').consecutiveFailures).toBe(1)
  })

  it("a stream whose continuation is rate limited (429): the turn ends as it is, no breaker failure (the request's last answer)", async () => {
    const {status, text} = await ask('search fail-429', true)
    expect(status).toBe(200)
    expect(eventTypes(text).at(-1)).toBe('response.completed')
    const result = await lastResult()
    expect(result.error).toContain(
      'up: the continuation of a paused turn: upstream answered 429: Rate limited',
    )
    expect(breakers.snapshotOf('up')).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })

  it('a stream whose continuation cannot be sent (the connection reset): the turn ends as it is', async () => {
    const {text} = await ask('search reset', true)
    expect(eventTypes(text).at(-1)).toBe('response.completed')
    const result = await lastResult()
    expect(result.broken).toBeUndefined()
    expect(result.error).toContain('up: the continuation of a paused turn failed:')
    expect(breakers.snapshotOf('up').consecutiveFailures).toBe(1)
  })

  it('a JSON answer whose continuation is refused (400): that error in the client shape, the usage kept', async () => {
    const {status, text} = await ask('search fail-400', false)
    expect(status).toBe(400)
    expect(JSON.parse(text).error.message).toContain('bad continuation')
    const result = await lastResult()
    expect(result.error).toContain(
      'the continuation of a paused turn: upstream answered 400: bad continuation',
    )
    expect(result.usage).toMatchObject({inputTokens: 10, outputTokens: 5})
    expect(breakers.snapshotOf('up').consecutiveFailures).toBe(0)
  })

  it('a JSON answer whose continuation fails (529) before any byte: the next target answers', async () => {
    const targets: ProxyTarget[] = [
      {
        provider: messagesProvider,
        model: 'claude-x',
        translate: true,
        breaker: new BreakerRegistry().get('up'),
      },
      {provider: responsesProvider, model: 'gpt-x'},
    ]
    const {status, text} = await ask('search fail-529', false, {targets, fallbacks: true})
    expect(status).toBe(200)
    expect(JSON.parse(text).output[0].content[0].text).toBe('from the fallback')
    const result = await lastResult()
    expect(result.fallback).toBe(true)
    expect(result.error).toContain(
      'fell back after: up: the continuation of a paused turn: upstream answered 529',
    )
    // without a fallback: the failure, as for any try that failed before a byte
    const alone = await ask('search fail-529', false)
    expect(alone.status).toBe(502)
    expect(breakers.snapshotOf('up').consecutiveFailures).toBe(1)
    // the row keeps the usage of the call that paused (the upstream bills it), as a stream's does
    const row = await lastResult()
    expect(row.status).toBe(502)
    expect(row.usage).toMatchObject({inputTokens: 10, outputTokens: 5})
  })

  it("a JSON answer whose continuation cannot be sent (the connection reset), no other target: a 502 row with the paused call's usage", async () => {
    const {status} = await ask('search reset', false)
    expect(status).toBe(502)
    const result = await lastResult()
    expect(result.error).toContain('up: the continuation of a paused turn failed:')
    expect(result.usage).toMatchObject({inputTokens: 10, outputTokens: 5})
  })

  it("a JSON answer whose continuation is rate limited (429), no other target: that 429 in the client's shape, its wait, no breaker failure", async () => {
    const {status, text} = await ask('search fail-429', false)
    expect(status).toBe(429)
    expect(JSON.parse(text).error.message).toContain('Rate limited')
    expect(lastHeaders?.get('retry-after')).toBe('20')
    const result = await lastResult()
    expect(result.status).toBe(429)
    // (the row names the continuation, as the stream's does)
    expect(result.error).toContain(
      'up (messages, translated): the continuation of a paused turn: upstream answered 429: Rate limited',
    )
    // the paused answer's tokens stay counted
    expect(result.usage).toMatchObject({inputTokens: 10, outputTokens: 5})
    expect(breakers.snapshotOf('up')).toMatchObject({state: 'closed', consecutiveFailures: 0})
    // a wait said in `retry-after-ms` only: as `retry-after` too (whole seconds), as a first answer's
    const ms = await ask('search fail-429ms', false)
    expect(ms.status).toBe(429)
    expect(lastHeaders?.get('retry-after')).toBe('2')
    expect(lastHeaders?.get('retry-after-ms')).toBe('1500')
    // with another target left, the 429 falls back (and counts), as before
    const targets: ProxyTarget[] = [
      {
        provider: messagesProvider,
        model: 'claude-x',
        translate: true,
        breaker: new BreakerRegistry().get('up'),
      },
      {provider: responsesProvider, model: 'gpt-x'},
    ]
    const fell = await ask('search fail-429', false, {targets, fallbacks: true})
    expect(fell.status).toBe(200)
    expect((await lastResult()).error).toContain(
      'fell back after: up: the continuation of a paused turn: upstream answered 429',
    )
  })

  // (the row's status: a stream's 200 went out before the pause; a JSON answer's had not)
  it.each([
    ['a stream', true, 200],
    ['a JSON answer', false, 499],
  ])(
    "the client leaving during %s's continuation aborts it and releases the breaker; its row keeps the paused call's usage",
    async (_, stream, status) => {
      const controller = new AbortController()
      // (the breaker half-open: the request holds its one trial, which the leaving must give back)
      const asked = ask('search hold', stream, {signal: controller.signal, halfOpen: true}).catch(
        (e: unknown) => e,
      )
      for (let i = 0; i < 200 && calls.length < 2; i++) await new Promise((r) => setTimeout(r, 10))
      expect(calls).toHaveLength(2)
      controller.abort()
      await asked
      await heldClosed
      const result = await lastResult()
      expect(result).toMatchObject({status, clientAborted: true})
      expect(result.broken).toBeUndefined()
      expect(result.usage).toMatchObject({inputTokens: 10, outputTokens: 5})
      // the trial given back, no failure counted: the next request is let through (a trial kept
      // would leave the provider circuit-broken until the gateway restarts)
      expect(breakers.snapshotOf('up')).toMatchObject({state: 'half-open', consecutiveFailures: 1})
      expect(breakers.get('up').canTry()).toBe(true)
    },
  )

  it('a stream of a request that offered no search is not continued (its blocks were not kept)', async () => {
    const {text} = await ask('search ok', true, {tools: []})
    expect(eventTypes(text).at(-1)).toBe('response.completed')
    expect(calls).toHaveLength(1)
    expect((await lastResult()).error).toBeNull()
    // nor a JSON answer: a request without the search has no server tool to pause for (the same
    // rule both ways)
    await ask('search ok', false, {tools: []})
    expect(calls).toHaveLength(1)
  })

  it('a native Messages route passes pause_turn through untouched (the client continues itself)', async () => {
    calls = []
    results.length = 0
    route = {family: 'messages', targets: [{provider: messagesProvider, model: 'claude-x'}], fallbacks: false}
    const res = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: {'content-type': 'application/json', 'anthropic-version': '2023-06-01'},
      body: JSON.stringify({
        model: 'claude-x',
        max_tokens: 64,
        messages: [{role: 'user', content: 'search ok'}],
        tools: [{type: 'web_search_20250305', name: 'web_search'}],
      }),
    })
    const body = (await res.json()) as Body
    expect(body.stop_reason).toBe('pause_turn')
    expect(body.content).toEqual(SEARCH)
    expect(calls).toHaveLength(1)
  })
})
