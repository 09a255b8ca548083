/**
 * Claude Code with thinking off (its sub-agents, titles) translated to xAI's Responses API: Grok 4
 * reasons anyway, so its encrypted reasoning is asked for all the same (`include`, `store: false`)
 * and the next turn gives it back before the call it led to, whether Claude Code kept its thinking
 * block or dropped it. A scripted xAI upstream: the bytes it gets, the client's answer.
 */
import {afterAll, beforeAll, beforeEach, describe, expect, it} from 'vitest'

import {BoundedCarry} from '../../protocols/carry.js'
import {reasonsRegardless} from '../../protocols/thinking-off.js'
import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {ProxyGateway, startUpstream} from './proxy-fixture.js'

const GROK_ANSWER = JSON.stringify({
  id: 'resp_x1',
  object: 'response',
  created_at: 1,
  status: 'completed',
  model: 'grok-4.7',
  output: [
    {type: 'reasoning', id: 'rs_x1', summary: [], encrypted_content: 'xai-encrypted-1', status: 'completed'},
    {
      type: 'function_call',
      id: 'fc_x1',
      call_id: 'call_x1',
      name: 'Read',
      arguments: '{"path":"a.txt"}',
      status: 'completed',
    },
  ],
  usage: {
    input_tokens: 40,
    output_tokens: 12,
    total_tokens: 52,
    output_tokens_details: {reasoning_tokens: 9},
  },
})

const sent: Array<Record<string, unknown>> = []
let xai: Upstream
let model = 'grok-4.7'
/** The target takes Codex's tools as plain functions, the client's request passed through (its `previous_response_id` too). */
let plain = false
let gateway: ProxyGateway

beforeAll(async () => {
  xai = await startUpstream((_req, res, body) => {
    const request = JSON.parse(body.toString()) as {include?: string[]}
    sent.push(request)
    // as xAI: the reasoning's encrypted content only when asked for
    const answer = request.include?.includes('reasoning.encrypted_content')
      ? GROK_ANSWER
      : GROK_ANSWER.replace(',"encrypted_content":"xai-encrypted-1"', '')
    res.writeHead(200, {'content-type': 'application/json'}).end(answer)
  })
  const target = (): ProxyTarget => ({
    provider: {
      name: 'xai',
      family: 'responses',
      baseUrl: `${xai.origin}/v1`,
      credential: {secret: 'k'},
      ...(plain ? {plainTools: 'always' as const} : {}),
    },
    model,
    ...(plain ? {} : {translate: true as const}),
  })
  gateway = new ProxyGateway({route: () => ({targets: [target()]}), carry: new BoundedCarry()})
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  xai.close()
})

beforeEach(() => {
  sent.length = 0
  model = 'grok-4.7'
  plain = false
})

const TOOLS = [
  {
    name: 'Read',
    description: 'Read a file.',
    input_schema: {type: 'object', properties: {path: {type: 'string'}}},
  },
]
const ASK = {role: 'user', content: 'Read a.txt.'}

/** Claude Code's request with thinking off (a sub-agent's). */
const claudeCode = (messages: unknown[]) =>
  fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: {'content-type': 'application/json', 'x-api-key': 'gw-key', 'anthropic-version': '2023-06-01'},
    body: JSON.stringify({
      model: 'claude-sonnet-5',
      max_tokens: 4096,
      thinking: {type: 'disabled'},
      tools: TOOLS,
      messages,
    }),
  })

const RESULT = {role: 'user', content: [{type: 'tool_result', tool_use_id: 'call_x1', content: 'hello'}]}

describe('Grok with thinking off', () => {
  it('is asked for its encrypted reasoning, statelessly; the client gets it as a thinking block', async () => {
    const res = await claudeCode([ASK])
    expect(res.status).toBe(200)
    expect(sent[0]).toMatchObject({store: false, include: ['reasoning.encrypted_content']})
    expect(sent[0].reasoning).toBeUndefined()
    const {content} = (await res.json()) as {content: Array<Record<string, unknown>>}
    expect(content.map((b) => b.type)).toEqual(['thinking', 'tool_use'])
    expect(content[0]).toMatchObject({thinking: ''})
    expect(content[0].signature).toMatch(/^gwx1\./)
  })

  it("its reasoning goes back before its call on the next turn: Claude Code's thinking block, or gwctl's memory where it dropped it", async () => {
    const first = (await (await claudeCode([ASK])).json()) as {content: Array<Record<string, unknown>>}
    const reasoning = {type: 'reasoning', id: 'rs_x1', summary: [], encrypted_content: 'xai-encrypted-1'}
    const call = {type: 'function_call', call_id: 'call_x1', name: 'Read', arguments: '{"path":"a.txt"}'}
    for (const kept of [first.content, first.content.filter((b) => b.type !== 'thinking')]) {
      sent.length = 0
      const res = await claudeCode([ASK, {role: 'assistant', content: kept}, RESULT])
      expect(res.status).toBe(200)
      const input = sent[0].input as Array<Record<string, unknown>>
      expect(input.slice(1, 3)).toEqual([reasoning, call])
    }
  })

  it('a Grok that does not reason (`-non-reasoning`) is asked for nothing more, as before', async () => {
    model = 'grok-4-fast-non-reasoning'
    expect((await claudeCode([ASK])).status).toBe(200)
    expect(sent[0].include).toBeUndefined()
    expect(sent[0].store).toBeUndefined()
  })
})

describe('Grok continuing a stored conversation', () => {
  /** A Responses client's turn (Codex's `apply_patch`, a custom tool, made a plain function for xAI). */
  const responsesTurn = (fields: Record<string, unknown>) =>
    fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: {'content-type': 'application/json', authorization: 'Bearer gw-key'},
      body: JSON.stringify({
        model: 'grok-4',
        tools: [{type: 'custom', name: 'apply_patch'}],
        input: [{role: 'user', content: [{type: 'input_text', text: 'Go on.'}]}],
        ...fields,
      }),
    })

  it('a `previous_response_id` or a client that keeps its items (`store` on) gets no `store: false`, which xAI refuses with it', async () => {
    plain = true
    for (const fields of [
      {store: true, previous_response_id: 'resp_prev'},
      {previous_response_id: 'resp_prev'},
      {},
    ]) {
      sent.length = 0
      expect((await responsesTurn(fields)).status).toBe(200)
      expect(sent[0].store).toBeUndefined()
      expect(sent[0].include).toEqual(['reasoning.encrypted_content'])
      expect(sent[0].previous_response_id).toBe(fields.previous_response_id)
    }
  })

  it('a client that keeps nothing (Codex, `store: false`) still has xAI keep nothing', async () => {
    plain = true
    expect((await responsesTurn({store: false})).status).toBe(200)
    expect(sent[0]).toMatchObject({store: false, include: ['reasoning.encrypted_content']})
  })
})

describe('reasonsRegardless: the Grok models that reason unless they cannot', () => {
  it.each([
    ['grok-4', true],
    ['grok-4-0709', true],
    ['grok-4-1-fast-reasoning', true],
    ['grok-4.20-0309-reasoning', true],
    ['grok-4.3', true],
    ['x-ai/grok-4.6-20260810', true],
    ['grok-code-fast-1', true],
    ['grok-4-fast-non-reasoning', false],
    ['grok-4.20-0309-non-reasoning', false],
    ['grok-3', false],
    ['grok-3-mini', true],
    ['xai/grok-3-mini-fast', true],
    ['gpt-5.5', false],
  ])('%s: %s', (name, reasons) => expect(reasonsRegardless(name)).toBe(reasons))
})
