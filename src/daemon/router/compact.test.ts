/**
 * OpenAI's remote compaction through the gateway: Codex's `POST /v1/responses/compact` passed
 * through to a Responses upstream as it came; on a route that translates to another family, a 400
 * in the Responses error shape that says why and how Codex compacts locally (a later Responses
 * target takes it); a `compaction` item (encrypted history only OpenAI reads) refused by name.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyTarget} from './proxy.js'
import type {GatewayRoute, Upstream} from './proxy-fixture.js'
import {CHAT_ANSWER, chatTarget, ProxyGateway, responsesTarget, startUpstream} from './proxy-fixture.js'

const COMPACTED = JSON.stringify({
  id: 'resp_c1',
  object: 'response.compaction',
  created_at: 1,
  output: [
    {type: 'message', role: 'user', content: [{type: 'input_text', text: 'Fix the test.'}]},
    {type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAAB-opaque'},
  ],
  usage: {input_tokens: 1200, output_tokens: 80, total_tokens: 1280},
})

const seen: Array<{server: string; path: string; body: string}> = []
let responses: Upstream
let chat: Upstream
let route: GatewayRoute
let gateway: ProxyGateway

beforeAll(async () => {
  responses = await startUpstream((req, res, body) => {
    seen.push({server: 'responses', path: req.url ?? '', body: body.toString()})
    res.writeHead(200, {'content-type': 'application/json'}).end(COMPACTED)
  })
  chat = await startUpstream((req, res, body) => {
    seen.push({server: 'chat', path: req.url ?? '', body: body.toString()})
    res.writeHead(200, {'content-type': 'application/json'}).end(CHAT_ANSWER)
  })
  gateway = new ProxyGateway({route: () => route})
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  responses.close()
  chat.close()
})

const openai = (): ProxyTarget => responsesTarget('openai', 'gpt-5.5', responses.origin)
const translatedChat = (): ProxyTarget => ({
  ...chatTarget('deepseek', 'deepseek-chat', chat.origin),
  translate: true,
})

/** Codex's compact request: its history, instructions and tools, no stream. */
const COMPACT_BODY = JSON.stringify({
  model: 'gpt-5.5',
  instructions: 'You are Codex.',
  input: [
    {type: 'message', role: 'user', content: [{type: 'input_text', text: 'Fix the test.'}]},
    {type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'Fixed.'}]},
  ],
  tools: [],
  parallel_tool_calls: false,
})

const post = (path: string, body: string) =>
  fetch(gateway.url + path, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer client'},
    body,
  })

describe('POST /v1/responses/compact', () => {
  it('goes to a Responses upstream as it came, and its answer back as it came', async () => {
    seen.length = 0
    gateway.results.length = 0
    route = {targets: [openai()]}
    const res = await post('/v1/responses/compact', COMPACT_BODY)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe(COMPACTED)
    expect(seen).toEqual([{server: 'responses', path: '/v1/responses/compact', body: COMPACT_BODY}])
    const [result] = await gateway.settled(1)
    expect([result.status, result.provider, result.error]).toEqual([200, 'openai', null])
    // (its usage counted: OpenAI bills the summary it made)
    expect([result.usage?.inputTokens, result.usage?.outputTokens, result.usage?.responseId]).toEqual([
      1200,
      80,
      'resp_c1',
    ])
  })

  it('on a translated route: a 400 in the Responses shape that says how Codex compacts locally; nothing sent', async () => {
    seen.length = 0
    gateway.results.length = 0
    route = {targets: [translatedChat()]}
    const res = await post('/v1/responses/compact', COMPACT_BODY)
    expect(res.status).toBe(400)
    const {error} = (await res.json()) as {error: {message: string; type: string}}
    expect(error.type).toBe('invalid_request_error')
    expect(error.message).toMatch(
      /^the request cannot be translated from responses to chat: remote compaction \(POST \/v1\/responses\/compact, or a compaction_trigger item\) needs a Responses upstream/,
    )
    expect(error.message).toContain('remote_compaction_v2 off')
    expect(seen).toEqual([])
    const [result] = await gateway.settled(1)
    expect([result.status, result.provider]).toEqual([400, 'deepseek'])
  })

  it('a translated target first, a Responses one after it: the Responses one takes it', async () => {
    seen.length = 0
    gateway.results.length = 0
    route = {targets: [translatedChat(), openai()]}
    const res = await post('/v1/responses/compact', COMPACT_BODY)
    expect(res.status).toBe(200)
    expect(seen.map((s) => [s.server, s.path])).toEqual([['responses', '/v1/responses/compact']])
  })
})

describe('compaction items on a translated route', () => {
  const turn = (item: Record<string, unknown>) =>
    JSON.stringify({
      model: 'gpt-5.5',
      input: [item, {type: 'message', role: 'user', content: [{type: 'input_text', text: 'Go on.'}]}],
    })

  it('a compaction item (encrypted history) is refused by name, not dropped; nothing sent', async () => {
    seen.length = 0
    route = {targets: [translatedChat()]}
    const res = await post('/v1/responses', turn({type: 'compaction', encrypted_content: 'gAAAAB-opaque'}))
    expect(res.status).toBe(400)
    const {error} = (await res.json()) as {error: {message: string}}
    expect(error.message).toContain('a compaction item (the history OpenAI')
    expect(seen).toEqual([])
  })

  it("a compaction_trigger item (Codex's remote_compaction_v2) gets the remote compaction refusal", async () => {
    seen.length = 0
    route = {targets: [translatedChat()]}
    const res = await post('/v1/responses', turn({type: 'compaction_trigger'}))
    expect(res.status).toBe(400)
    const {error} = (await res.json()) as {error: {message: string}}
    expect(error.message).toContain(
      'remote compaction (POST /v1/responses/compact, or a compaction_trigger item)',
    )
    expect(seen).toEqual([])
  })

  it('passed through to a Responses upstream, a compaction item goes as it came', async () => {
    seen.length = 0
    route = {targets: [openai()]}
    const body = turn({type: 'compaction', encrypted_content: 'gAAAAB-opaque'})
    expect((await post('/v1/responses', body)).status).toBe(200)
    expect(seen).toEqual([{server: 'responses', path: '/v1/responses', body}])
  })
})
