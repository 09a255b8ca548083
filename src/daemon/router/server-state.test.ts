/**
 * A Responses request that names state only the Responses server that made it holds (an
 * `item_reference` to an item OpenAI minted on an answer passed through, a `previous_response_id`)
 * on a route whose first target translates: the translated targets are skipped for a Responses
 * target passed through as it came, and the row says so; the 400 only where the route has none.
 * The same route's pass-through target gets the items gwctl minted put back in place of their
 * references, which it never saw. Scripted upstreams: the bytes each gets, the client's status, the
 * row.
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, beforeEach, describe, expect, it, vi} from 'vitest'

import {BoundedCarry} from '../../protocols/carry.js'
import {CircuitBreaker} from './breaker.js'
import {logEntryFor} from './log-entry.js'
import type {ProxyTarget} from './proxy.js'
import type {GatewayRoute, Upstream} from './proxy-fixture.js'
import {
  CHAT_ANSWER,
  chatTarget,
  messagesTarget,
  ProxyGateway,
  responsesAnswer,
  responsesTarget,
  startUpstream,
} from './proxy-fixture.js'

const OPENAI_ANSWER = responsesAnswer('resp_oa2', 'msg_oa2', 'From OpenAI.', 10)

/**
 * OpenAI's refusal of the first item it never made (one of gwctl's ids), as its API words it: a
 * reference's 404 (a `type` or `role` of null is none, as the SDK's ItemReference allows), and
 * under `store: false` a full reasoning item's 400; undefined for a body without one.
 */
function unknownItem(body: Buffer): {status: number; body: string} | undefined {
  const {input, store} = JSON.parse(body.toString()) as {input?: unknown; store?: boolean}
  for (const item of Array.isArray(input) ? (input as Array<Record<string, unknown>>) : []) {
    if (typeof item.id !== 'string' || !item.id.includes('_gw')) continue
    const reference = item.type === 'item_reference' || (item.type == null && item.role == null)
    const unkept = store === false && item.type === 'reasoning'
    if (!reference && !unkept) continue
    const message = `Item with id '${item.id}' not found.${reference ? '' : ' Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.'}`
    return {
      status: reference ? 404 : 400,
      body: JSON.stringify({error: {message, type: 'invalid_request_error', param: 'input', code: null}}),
    }
  }
  return undefined
}

const seen: Array<{server: string; body: string}> = []
/** The chat upstream's status for its next requests (200: CHAT_ANSWER). */
let chatStatus = 200
let responsesStatus = 200
/** The Responses upstream's next answer (default OPENAI_ANSWER). */
let responsesBody: string | undefined
/** A model the Responses upstream answers 503 for (another server behind the same port). */
let failingModel: string | undefined
let responses: Upstream
let chat: Upstream
let messages: Upstream
let route: GatewayRoute
let gateway: ProxyGateway
/** The daemon's memory of the items it minted. */
let carry: BoundedCarry

beforeAll(async () => {
  responses = await startUpstream((_req, res, body) => {
    seen.push({server: 'responses', body: body.toString()})
    const unknown = unknownItem(body)
    if (unknown)
      return void res.writeHead(unknown.status, {'content-type': 'application/json'}).end(unknown.body)
    if (responsesStatus !== 200 || JSON.parse(body.toString()).model === failingModel)
      return void res
        .writeHead(responsesStatus === 200 ? 503 : responsesStatus, {'content-type': 'application/json'})
        .end(JSON.stringify({error: {message: 'overloaded', type: 'server_error'}}))
    res.writeHead(200, {'content-type': 'application/json'}).end(responsesBody ?? OPENAI_ANSWER)
  })
  chat = await startUpstream((_req, res, body) => {
    seen.push({server: 'chat', body: body.toString()})
    if (chatStatus !== 200)
      return void res
        .writeHead(chatStatus, {'content-type': 'application/json'})
        .end(JSON.stringify({error: {message: 'busy'}}))
    res.writeHead(200, {'content-type': 'application/json'}).end(CHAT_ANSWER)
  })
  messages = await startUpstream((_req, res, body) => {
    seen.push({server: 'messages', body: body.toString()})
    res.writeHead(500).end()
  })
  carry = new BoundedCarry()
  gateway = new ProxyGateway({route: () => route, carry})
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  responses.close()
  chat.close()
  messages.close()
})

beforeEach(() => {
  seen.length = 0
  gateway.results.length = 0
  chatStatus = 200
  responsesStatus = 200
  responsesBody = undefined
  failingModel = undefined
})

const openai = (): ProxyTarget => responsesTarget('openai', 'gpt-5.5', responses.origin)
const deepseek = (): ProxyTarget => ({
  ...chatTarget('deepseek', 'deepseek-chat', chat.origin),
  translate: true,
})
const claude = (): ProxyTarget => ({
  ...messagesTarget('anthropic', 'claude-sonnet-5', messages.origin),
  translate: true,
})

const user = (text: string) => ({role: 'user' as const, content: [{type: 'input_text' as const, text}]})
const reference = (id: string) => ({type: 'item_reference', id})

/** A Responses request of these bytes. */
const postRaw = (body: string) =>
  fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer client'},
    body,
  })
const post = (body: Record<string, unknown>) => postRaw(JSON.stringify(body))

/** The row the daemon writes for the result of the request `at` (0: the first since beforeEach). */
const row = async (at = 0) => {
  const result = (await gateway.settled(at + 1))[at]
  const entry = logEntryFor(
    'responses',
    {agentId: null, keyPrefix: null, policyId: null, project: null},
    result,
  )
  return {status: entry.status, provider: entry.provider, fallback: entry.fallback, error: entry.error}
}

/** The official SDK, as the AI SDK's and Codex's requests come (retries off: each request is one). */
const sdk = () => new OpenAI({baseURL: `${gateway.url}/v1`, apiKey: 'client', maxRetries: 0})

describe("an item_reference to OpenAI's own item, the first target translated", () => {
  it('goes to the Responses target passed through, as it came; the row says why the translated one was skipped, and counts no fallback', async () => {
    const target = deepseek()
    target.breaker = new CircuitBreaker('deepseek', {failureThreshold: 1, cooldownMs: 60_000})
    route = {targets: [target, openai()]}
    const body = {model: 'gpt-5.5', input: [user('Hi.'), reference('msg_oa1'), user('And?')]}
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(JSON.parse(await res.text()).output[0].id).toBe('msg_oa2')
    expect(seen).toEqual([{server: 'responses', body: JSON.stringify(body)}])
    // (the translated target was never tried: no fallback in stats and usage, nothing against its breaker)
    expect(await row()).toEqual({
      status: 200,
      provider: 'openai',
      fallback: false,
      error:
        'skipped deepseek: item_reference "msg_oa1" is held by the Responses server that made it, not by gwctl',
    })
    expect(target.breaker.snapshot()).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })

  it("an item of an `id` alone (the SDK's ItemReference without its type) is one too: skipped for OpenAI, as it came", async () => {
    route = {targets: [deepseek(), openai()]}
    const answer = await sdk().responses.create({
      model: 'gpt-5.5',
      input: [user('Hi.'), {id: 'msg_oa1'}, user('And?')] as OpenAI.Responses.ResponseInput,
    })
    expect(answer.output[0].id).toBe('msg_oa2')
    expect(JSON.parse(seen[0].body).input[1]).toEqual({id: 'msg_oa1'})
    expect(seen.map((s) => s.server)).toEqual(['responses'])
    expect((await row()).error).toBe(
      'skipped deepseek: item_reference "msg_oa1" is held by the Responses server that made it, not by gwctl',
    )
  })

  it('no Responses target passed through: the 400 that names the id, at once, nothing sent to any target', async () => {
    route = {targets: [deepseek(), claude()]}
    const res = await post({model: 'gpt-5.5', input: [user('Hi.'), reference('msg_oa1'), user('And?')]})
    expect(res.status).toBe(400)
    const {error} = (await res.json()) as {error: {message: string}}
    expect(error.message).toContain(
      'an item_reference names item "msg_oa1", which this gateway does not hold',
    )
    expect(seen).toEqual([])
    expect(await row()).toMatchObject({status: 400, provider: 'deepseek', fallback: false})
  })

  it("a conversation answered by both: gwctl's items go to OpenAI in full, OpenAI's own by reference", async () => {
    route = {targets: [deepseek(), openai()]}
    // turn 1: the translated target answers; gwctl mints the message's id (the AI SDK's `store` on)
    const first = await post({model: 'gpt-5.5', input: [user('Say hello.')]})
    const minted = JSON.parse(await first.text()).output.find((i: {type: string}) => i.type === 'message')
    expect(minted.id).toMatch(/^msg_gw[0-9a-f]{32}$/)
    const text = minted.content[0].text
    // turn 2: the translated target is busy; OpenAI answers
    chatStatus = 503
    seen.length = 0
    // (the AI SDK names a message once per text part: put back once)
    const second = await post({
      model: 'gpt-5.5',
      input: [user('Say hello.'), reference(minted.id), reference(minted.id), user('Again.')],
    })
    expect(second.status).toBe(200)
    expect(seen.map((s) => s.server)).toEqual(['chat', 'responses'])
    // (a target that failed: a fallback, as ever)
    expect(await row(1)).toMatchObject({provider: 'openai', fallback: true})
    expect(JSON.parse(seen[1].body).input).toEqual([
      user('Say hello.'),
      {type: 'message', role: 'assistant', content: [{type: 'output_text', text}]},
      user('Again.'),
    ])
    // turn 3: both kinds of reference; the translated target cannot hold OpenAI's
    chatStatus = 200
    seen.length = 0
    const input = [
      user('Say hello.'),
      reference(minted.id),
      user('Again.'),
      reference('msg_oa2'),
      user('Once more.'),
    ]
    const third = await post({model: 'gpt-5.5', input})
    expect(third.status).toBe(200)
    expect(seen.map((s) => s.server)).toEqual(['responses'])
    expect(JSON.parse(seen[0].body).input).toEqual([
      user('Say hello.'),
      {type: 'message', role: 'assistant', content: [{type: 'output_text', text}]},
      user('Again.'),
      reference('msg_oa2'),
      user('Once more.'),
    ])
  })
})

describe('previous_response_id, the same way', () => {
  it('skipped after a target that failed: a fallback, the row says so and names the skip', async () => {
    failingModel = 'grok-4'
    route = {targets: [responsesTarget('xai', 'grok-4', responses.origin), deepseek(), openai()]}
    const res = await post({model: 'gpt-5.5', previous_response_id: 'resp_oa1', input: [user('And?')]})
    expect(res.status).toBe(200)
    expect(await row()).toEqual({
      status: 200,
      provider: 'openai',
      fallback: true,
      error:
        'fell back after: xai: upstream answered 503; skipped deepseek: previous_response_id "resp_oa1" is held by the Responses server that made it, not by gwctl',
    })
  })

  it('goes to the Responses target passed through; the row names it', async () => {
    route = {targets: [deepseek(), openai()]}
    const body = {model: 'gpt-5.5', previous_response_id: 'resp_oa1', input: [user('And?')]}
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(seen).toEqual([{server: 'responses', body: JSON.stringify(body)}])
    expect((await row()).error).toBe(
      'skipped deepseek: previous_response_id "resp_oa1" is held by the Responses server that made it, not by gwctl',
    )
  })

  it("the Responses target first failed, a translated one after it: the client gets that failure, not the translated one's refusal", async () => {
    responsesStatus = 503
    route = {targets: [openai(), deepseek()]}
    const res = await post({model: 'gpt-5.5', previous_response_id: 'resp_oa1', input: [user('And?')]})
    expect(res.status).toBe(502)
    const {error} = (await res.json()) as {error: {message: string}}
    expect(error.message).toBe(
      'upstream request failed and no fallback is left: openai: upstream answered 503',
    )
    expect(seen.map((s) => s.server)).toEqual(['responses'])
    expect(await row()).toMatchObject({status: 502, provider: 'openai'})
  })
})

describe('items gwctl minted, on a body passed through to a Responses server', () => {
  /** An id as gwctl mints one (responses-items.ts `newItemId`). */
  const gwId = (prefix: string, n: number) => `${prefix}_gw${String(n).padStart(32, '0')}`

  it('one it minted and no longer holds (a restart): its 400 at once, sent to no server, whatever the route', async () => {
    const lost = gwId('msg', 1)
    for (const targets of [[deepseek(), openai()], [openai()]]) {
      seen.length = 0
      gateway.results.length = 0
      route = {targets}
      const res = await post({model: 'gpt-5.5', input: [user('Hi.'), reference(lost), user('And?')]})
      expect(res.status).toBe(400)
      const {error} = (await res.json()) as {error: {message: string}}
      expect(error.message).toContain(
        `an item_reference names item "${lost}", which this gateway does not hold`,
      )
      expect(seen).toEqual([])
      expect(await row()).toMatchObject({status: 400, fallback: false})
    }
  })

  it("only the held references' bytes change: a 64-bit integer, an escape and a reference to OpenAI's item go as they came", async () => {
    const held = gwId('msg', 2)
    carry.items!.set(held, [{type: 'text', text: 'Held.'}], 8)
    route = {targets: [openai()]}
    const head =
      '{"model":"gpt-5.5","tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{"n":{"type":"integer","maximum":9223372036854775807}}}}],' +
      '"input":[{"role":"user","content":"caf\\u00e9"}, '
    const tail = ' ,{"type":"item_reference","id":"msg_oa1"},{"role":"user","content":"x"}]}'
    const ref = `{"type":"item_reference","id":"${held}"}`
    const res = await postRaw(head + ref + ',' + ref + tail)
    expect(res.status).toBe(200)
    // (the repeat taken out with the separator after it, as the decoder reads it once)
    expect(seen[0].body).toBe(
      head +
        '{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Held."}]},' +
        tail.slice(2),
    )
  })

  it("a reference of an `id` alone (the SDK's ItemReference without its type): held, the item goes to OpenAI; lost, the 400 at once", async () => {
    const held = gwId('msg', 6)
    carry.items!.set(held, [{type: 'text', text: 'Held.'}], 8)
    route = {targets: [openai()]}
    const input = (id: string) => [user('a'), {id}, user('b')] as OpenAI.Responses.ResponseInput
    const answer = await sdk().responses.create({model: 'gpt-5.5', input: input(held)})
    expect(answer.output[0].id).toBe('msg_oa2')
    expect(JSON.parse(seen[0].body).input).toEqual([
      user('a'),
      {type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'Held.'}]},
      user('b'),
    ])
    seen.length = 0
    const lost = gwId('msg', 7)
    const refused = await sdk()
      .responses.create({model: 'gpt-5.5', input: input(lost)})
      .catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    expect((refused as Error).message).toContain(
      `an item_reference names item "${lost}", which this gateway does not hold`,
    )
    expect(seen).toEqual([])
  })

  it("`store: false` (Codex) is not searched before it goes: OpenAI's 404 that names an id gwctl lost is answered with gwctl's 400, and the row says so", async () => {
    // such a client keeps no items and names none (gwctl holds items only of `store` on): the
    // search for `_gw` before it goes is for the AI SDK's `store` on; the refusal is read instead
    const lost = gwId('msg', 4)
    route = {targets: [openai()]}
    const input = [user('Hi.'), reference(lost)] as OpenAI.Responses.ResponseInput
    const refused = await sdk()
      .responses.create({model: 'gpt-5.5', store: false, input})
      .catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    const {message} = refused as Error
    expect(message).toContain(`an item_reference names item "${lost}", which this gateway does not hold`)
    // (the body has `store: false` already: not told to send it, as a `store` on body is)
    expect(message).toContain('send the item itself, not a reference')
    expect(message).not.toContain('as Codex does')
    // (sent once, as it came)
    expect(seen.map((s) => JSON.parse(s.body).input)).toEqual([input])
    expect(await row()).toEqual({
      status: 400,
      provider: 'openai',
      fallback: false,
      error: `openai answered 404 for item "${lost}", which gwctl minted and no longer holds: answered 400, send the item itself, not a reference`,
    })
  })

  it("`store: false`, OpenAI's 404 names a reference gwctl holds and the body names one it lost: the 400 and the row name the lost one", async () => {
    const held = gwId('msg', 9)
    const lost = gwId('msg', 10)
    carry.items!.set(held, [{type: 'text', text: 'Held.'}], 8)
    route = {targets: [openai()]}
    const res = await post({
      model: 'gpt-5.5',
      store: false,
      input: [user('a'), reference(held), reference(lost)],
    })
    expect(res.status).toBe(400)
    const {error} = (await res.json()) as {error: {message: string}}
    expect(error.message).toContain(`an item_reference names item "${lost}"`)
    expect(seen).toHaveLength(1)
    expect((await row()).error).toBe(
      `openai answered 404 for item "${held}", which gwctl held, and the body names "${lost}", which gwctl minted and no longer holds: answered 400, send the item itself, not a reference`,
    )
  })

  it("`store: false`, the server's 400 names gwctl's id of a full item, not a reference: its refusal reaches the client as it came, once, whatever the references", async () => {
    // (a reasoning item sent back in full with gwctl's id: OpenAI keeps none under `store: false`)
    const reasoning = {type: 'reasoning', id: gwId('rs', 6), summary: [], encrypted_content: 'x'}
    const held = gwId('msg', 21)
    carry.items!.set(held, [{type: 'text', text: 'Held.'}], 8)
    route = {targets: [openai()]}
    for (const id of [held, gwId('msg', 22)]) {
      seen.length = 0
      gateway.results.length = 0
      const res = await post({model: 'gpt-5.5', store: false, input: [user('a'), reasoning, reference(id)]})
      expect(res.status).toBe(400)
      const {error} = (await res.json()) as {error: {message: string}}
      expect(error.message).toMatch(/^Item with id 'rs_gw0{31}6' not found\. Items are not persisted/)
      // (not sent again with the held item in place; not answered as the lost reference's)
      expect(seen).toHaveLength(1)
      // (the row blames no item of gwctl's: a refusal relayed, as any)
      expect(await row()).toMatchObject({status: 400, error: null})
    }
  })

  it("a reference of a null `type` (the SDK's ItemReference allows it) or a null `role`, as one of neither: held, put back; lost, gwctl's 400, with `store` on or off", async () => {
    const held = gwId('msg', 11)
    carry.items!.set(held, [{type: 'text', text: 'Held.'}], 8)
    route = {targets: [openai()]}
    const message = {type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'Held.'}]}
    for (const store of [undefined, false]) {
      for (const shape of [{type: null}, {role: null}]) {
        seen.length = 0
        const input = (id: string) => [user('a'), {...shape, id}, user('b')] as OpenAI.Responses.ResponseInput
        const answer = await sdk().responses.create({model: 'gpt-5.5', store, input: input(held)})
        expect(answer.output[0].id).toBe('msg_oa2')
        // (`store` on: put back before it goes; off: after OpenAI's 404)
        expect(JSON.parse(seen.at(-1)!.body).input).toEqual([user('a'), message, user('b')])
        expect(seen).toHaveLength(store === false ? 2 : 1)
        const lost = gwId('msg', 12)
        const refused = await sdk()
          .responses.create({model: 'gpt-5.5', store, input: input(lost)})
          .catch((e: unknown) => e)
        expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
        expect((refused as Error).message).toContain(`an item_reference names item "${lost}"`)
      }
    }
  })

  it('`store: false` naming an item gwctl holds: after the 404 it goes again at once with the item in place', async () => {
    const held = gwId('msg', 8)
    carry.items!.set(held, [{type: 'text', text: 'Held.'}], 8)
    route = {targets: [openai()]}
    const answer = await sdk().responses.create({
      model: 'gpt-5.5',
      store: false,
      input: [user('Hi.'), reference(held), user('And?')] as OpenAI.Responses.ResponseInput,
    })
    expect(answer.output[0].id).toBe('msg_oa2')
    expect(seen).toHaveLength(2)
    expect(JSON.parse(seen[1].body).input).toEqual([
      user('Hi.'),
      {type: 'message', role: 'assistant', content: [{type: 'output_text', text: 'Held.'}]},
      user('And?'),
    ])
    expect(await row()).toMatchObject({
      status: 200,
      error: `openai answered 404 for item "${held}", which gwctl held: sent again with its items in place of the references`,
    })
  })

  it('a body that names none gwctl holds goes as it came, nothing parsed or copied for it', async () => {
    carry.items!.set(gwId('msg', 3), [{type: 'text', text: 'Held.'}], 8)
    route = {targets: [openai()]}
    const clone = vi.spyOn(globalThis, 'structuredClone')
    const raw = JSON.stringify({
      model: 'gpt-5.5',
      input: [user('a'), reference('msg_oa1'), user('item_reference')],
    })
    const res = await postRaw(raw)
    expect(res.status).toBe(200)
    expect(seen[0].body).toBe(raw)
    expect(clone).not.toHaveBeenCalled()
    clone.mockRestore()
  })

  it('a held call of a custom tool (Codex-style `apply_patch`) goes back as a `custom_tool_call` of its input', async () => {
    const call = gwId('ctc', 4)
    carry.items!.set(
      call,
      [
        {
          type: 'tool_call',
          id: 'call_9',
          name: 'apply_patch',
          arguments: JSON.stringify({input: '*** Begin Patch'}),
        },
      ],
      40,
    )
    // (OpenAI's own host in use: its custom tools go as they came, not as plain functions)
    const target = openai()
    target.provider.plainTools = 'never'
    route = {targets: [target]}
    const output = {type: 'custom_tool_call_output', call_id: 'call_9', output: 'ok'}
    const res = await post({
      model: 'gpt-5.5',
      tools: [{type: 'custom', name: 'apply_patch'}],
      input: [user('Patch it.'), reference(call), output],
    })
    expect(res.status).toBe(200)
    expect(JSON.parse(seen[0].body).input).toEqual([
      user('Patch it.'),
      {type: 'custom_tool_call', call_id: 'call_9', name: 'apply_patch', input: '*** Begin Patch'},
      output,
    ])
  })

  it("another server's reasoning gwctl held (xAI's ciphertext) is left out, not sent to OpenAI", async () => {
    const reasoning = gwId('rs', 5)
    const encrypted = {
      family: 'responses' as const,
      value: JSON.stringify({id: 'rs_xai1', encrypted_content: 'XAI-CIPHER'}),
    }
    carry.items!.set(reasoning, [{type: 'reasoning', text: 'thought', encrypted}], 40)
    route = {targets: [openai()]}
    const res = await post({model: 'gpt-5.5', input: [user('a'), reference(reasoning), user('b')]})
    expect(res.status).toBe(200)
    expect(JSON.parse(seen[0].body).input).toEqual([user('a'), user('b')])
  })

  it('reasoning gwctl held from a Responses server goes back to that server passed through, never to another', async () => {
    // turn 1: OpenAI's answer read through the codecs (as for a server whose tools gwctl makes
    // plain), to the AI SDK with `store` on: gwctl holds its items, a reasoning item without an id
    // under one it mints, one with an id under OpenAI's own (the client got it as it came)
    const cipher = (value: string, id?: string) => ({
      type: 'reasoning',
      ...(id ? {id} : {}),
      summary: [{type: 'summary_text', text: 'thought'}],
      encrypted_content: value,
    })
    const text = JSON.parse(OPENAI_ANSWER).output[0]
    responsesBody = JSON.stringify({
      ...JSON.parse(OPENAI_ANSWER),
      output: [cipher('CIPHER-1'), cipher('CIPHER-2', 'rs_oa9'), text],
    })
    route = {targets: [{...openai(), translate: true}]}
    const first = await sdk().responses.create({model: 'gpt-5.5', input: [user('Hi.')]})
    const ids = first.output.map((i) => i.id!)
    expect(ids[0]).toMatch(/^rs_gw[0-9a-f]{32}$/)
    expect(ids[1]).toBe('rs_oa9')
    const back = [user('Hi.'), ...ids.map(reference), user('And?')]
    const message = {
      type: 'message',
      role: 'assistant',
      content: [{type: 'output_text', text: 'From OpenAI.'}],
    }
    // turn 2: another Responses server first (it fails), then the one that made the reasoning
    responsesBody = undefined
    seen.length = 0
    failingModel = 'grok-4'
    route = {targets: [responsesTarget('xai', 'grok-4', responses.origin), openai()]}
    await sdk().responses.create({model: 'gpt-5.5', input: back as OpenAI.Responses.ResponseInput})
    expect(seen.map((s) => JSON.parse(s.body).input)).toEqual([
      // (xAI: no reasoning of OpenAI's, neither held under gwctl's id nor named by OpenAI's)
      [user('Hi.'), message, user('And?')],
      // (OpenAI: its ciphertext put back, its own item named as it came)
      [user('Hi.'), cipher('CIPHER-1'), reference('rs_oa9'), message, user('And?')],
    ])
  })
})
