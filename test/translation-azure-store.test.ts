/**
 * Codex passed through to Azure OpenAI, which keeps no item of a request sent with `store: false`
 * and refuses the next request that names one by its id ("Item with id 'rs_…' not found. Items
 * are not persisted when `store` is set to false."): Codex sends every item with its id, and
 * `store: true` only to a provider it knows is Azure, which a provider behind gwctl never is. To
 * Azure's own hosts the requests go with `store: true` from the first; to an Azure the host does
 * not tell (a domain of its own, an API gateway) the refusal is learned, the request sent again at
 * once. A client's own `store: true` goes as it came. The simulator's `+azure-store` models refuse
 * as Azure does; the official OpenAI SDK.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyGateway} from '../src/daemon/router/proxy-fixture.js'
import type {Simulator} from '../src/sim/server.js'
import {AZURE, azureSimGateway} from './helpers/azure.js'
import {READ_FILE_TOOL} from './helpers/codex.js'
import {projectLogRows, startKeyedPolicies, takeSimCalls} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
let keys = new Map<string, string>()

const responses = (model: string) => ({responses: [{provider: 'sim-responses', model}]})

beforeAll(async () => {
  ;({base, simOrigin, stop, keys} = await startKeyedPolicies(
    {
      'azure-learned': responses('gpt-5.4+azure-store'),
      'azure-own-store': responses('gpt-5.5+azure-store'),
      'azure-translated': {
        messages: [{provider: 'sim-responses', model: 'gpt-5.6+azure-store', translate: true}],
      },
    },
    {agentType: 'codex'},
  ))
}, 120_000)

afterAll(() => stop())

const RESPONSES = /\/responses$/
/** The headers Codex 0.171 sends (`codex exec`): the rules are Codex's. */
const CODEX = {originator: 'codex_exec', 'user-agent': 'codex_exec/0.171.0 (Debian 12.0.0; x86_64) xterm'}

/** Codex 0.171's request, cut down: an id on every item, `store: false`, its reasoning carried back encrypted. */
const codex = (input: unknown[], store = false): any => ({
  model: 'gpt-5.4',
  instructions: 'You are Codex.',
  input,
  tools: [READ_FILE_TOOL],
  tool_choice: 'auto',
  parallel_tool_calls: false,
  reasoning: {effort: 'medium', summary: 'auto'},
  store,
  stream: false,
  include: ['reasoning.encrypted_content'],
})

const user = (id: string, text: string) => ({
  type: 'message',
  id,
  role: 'user',
  content: [{type: 'input_text', text}],
})

/** The first turn's answer and the second request, which names the first's reasoning item by its id. */
async function twoTurns(client: OpenAI, store = false) {
  const first = await client.responses.create(codex([user('msg_u1', 'Say hello.')], store))
  expect(first.output[0]).toMatchObject({type: 'reasoning', id: expect.stringMatching(/^rs_/)})
  const second = await client.responses.create(
    codex([user('msg_u1', 'Say hello.'), ...first.output, user('msg_u2', 'Again.')], store),
  )
  return {first, second}
}

describe('Codex passed through to an Azure the host does not tell', {timeout: 60_000}, () => {
  it('the id refused once: store true learned, the request sent again at once, later ones with it from the start', async () => {
    await takeSimCalls(simOrigin, RESPONSES)
    const client = new OpenAI({
      baseURL: `${base}/v1`,
      apiKey: keys.get('azure-learned')!,
      maxRetries: 0,
      defaultHeaders: CODEX,
    })
    const {first, second} = await twoTurns(client)
    expect(second.status).toBe('completed')
    const sent = await takeSimCalls(simOrigin, RESPONSES)
    // the first turn (no id of an earlier answer), the second refused, then again with store true
    expect(sent.map((s) => s.store)).toEqual([false, false, true])
    // the same request but for store: the items and their ids as Codex sent them
    expect({...sent[2], store: false}).toEqual(sent[1])
    expect(sent[2].input[1]).toMatchObject({type: 'reasoning', id: first.output[0].id})
    expect((await projectLogRows(base, 'azure-learned', 2)).map((r) => [r.status, r.error])).toEqual([
      [200, null],
      [
        200,
        'sim-responses refused an item named by its id with store false (Azure OpenAI keeps no items then): sent again with store true',
      ],
    ])
    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {
      adaptations: Array<{provider: string; model: string; rules: string[]}>
    }
    expect(adaptations.find((a) => a.model === 'gpt-5.4+azure-store')?.rules).toEqual([
      "Codex's requests and translated ones sent with store true, so the items they name by id are found (refused with store false: Azure OpenAI keeps no items then)",
    ])
    // the next turn: one try, store true from the start
    await client.responses.create(
      codex([user('msg_u1', 'Say hello.'), ...first.output, user('msg_u3', 'Once more.')]),
    )
    expect((await takeSimCalls(simOrigin, RESPONSES)).map((s) => s.store)).toEqual([true])
  })

  it("a client's own store: true goes as it came, in one try each", async () => {
    await takeSimCalls(simOrigin, RESPONSES)
    const client = new OpenAI({
      baseURL: `${base}/v1`,
      apiKey: keys.get('azure-own-store')!,
      maxRetries: 0,
      defaultHeaders: CODEX,
    })
    const {second} = await twoTurns(client, true)
    expect(second.status).toBe('completed')
    expect((await takeSimCalls(simOrigin, RESPONSES)).map((s) => s.store)).toEqual([true, true])
    expect((await projectLogRows(base, 'azure-own-store', 2)).map((r) => [r.status, r.error])).toEqual([
      [200, null],
      [200, null],
    ])
  })
})

/** Claude Code's two turns with thinking, the first's thinking block (its signature the upstream's reasoning item) sent back. */
async function claudeTwoTurns(client: Anthropic) {
  const ask = (messages: Anthropic.MessageParam[]) =>
    client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 4000,
      thinking: {type: 'enabled', budget_tokens: 2000},
      messages,
    })
  const first = await ask([{role: 'user', content: 'Say hello.'}])
  expect(first.content[0]).toMatchObject({type: 'thinking', signature: expect.any(String)})
  const history: Anthropic.MessageParam[] = [
    {role: 'user', content: 'Say hello.'},
    {role: 'assistant', content: first.content as Anthropic.ContentBlockParam[]},
    {role: 'user', content: 'Again.'},
  ]
  return {history, second: await ask(history), ask}
}

describe('Claude Code translated to an Azure the host does not tell', {timeout: 60_000}, () => {
  it("the reasoning item's id refused once: store true learned, sent again at once, later turns with it from the start", async () => {
    await takeSimCalls(simOrigin, RESPONSES)
    const client = new Anthropic({baseURL: base, apiKey: keys.get('azure-translated')!, maxRetries: 0})
    const {history, second, ask} = await claudeTwoTurns(client)
    expect(second.stop_reason).toBe('end_turn')
    const sent = await takeSimCalls(simOrigin, RESPONSES)
    // the second turn names the first's reasoning item by its id: refused with store false
    expect(sent.map((s) => s.store)).toEqual([false, false, true])
    expect(sent[1].input).toContainEqual(
      expect.objectContaining({type: 'reasoning', id: expect.stringMatching(/^rs_/)}),
    )
    expect({...sent[2], store: false}).toEqual(sent[1])
    expect((await projectLogRows(base, 'azure-translated', 2)).map((r) => [r.status, r.error])).toEqual([
      [200, null],
      [
        200,
        'sim-responses refused an item named by its id with store false (Azure OpenAI keeps no items then): sent again with store true',
      ],
    ])
    await ask([
      ...history,
      {role: 'assistant', content: 'Hello again.'},
      {role: 'user', content: 'Once more.'},
    ])
    expect((await takeSimCalls(simOrigin, RESPONSES)).map((s) => s.store)).toEqual([true])
  })
})

describe("Codex passed through to Azure OpenAI's own hosts", {timeout: 60_000}, () => {
  let sim: Simulator
  let gateway: ProxyGateway
  let close: () => Promise<void> = async () => {}
  let baseUrl = AZURE

  beforeAll(async () => {
    ;({sim, gateway, close} = await azureSimGateway((family) => ({
      targets: [
        {
          provider: {name: 'azure', family: 'responses', baseUrl, credential: {secret: 'k'}},
          model: 'gpt-5.4+azure-store',
          // (Claude Code's requests: translated)
          ...(family === 'responses' ? {} : {translate: true as const}),
        },
      ],
    })))
  })

  afterAll(() => close())

  const sentStores = () =>
    sim.requests
      .splice(0)
      .flatMap((r) => (RESPONSES.test(r.path) ? [(r.body as {store?: unknown}).store] : []))

  /** Both turns went with store true, each answered in one try, nothing learned or noted. */
  const storedFromTheFirst = () => {
    expect(sentStores()).toEqual([true, true])
    expect(gateway.results.map((r) => [r.status, r.error])).toEqual([
      [200, null],
      [200, null],
    ])
  }

  it('store true from the first request, by the host: no refusal, nothing learned', async () => {
    const client = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: 'client',
      maxRetries: 0,
      defaultHeaders: CODEX,
    })
    const {second} = await twoTurns(client)
    expect(second.status).toBe('completed')
    storedFromTheFirst()
  })

  it('a translated request (Claude Code with thinking) goes with store true from the first, by the host', async () => {
    gateway.results.length = 0
    const client = new Anthropic({baseURL: gateway.url, apiKey: 'client', maxRetries: 0})
    const {second} = await claudeTwoTurns(client)
    expect(second.stop_reason).toBe('end_turn')
    storedFromTheFirst()
  })

  it("another client's store: false is its own: sent as it came, nothing learned", async () => {
    gateway.results.length = 0
    const client = new OpenAI({baseURL: `${gateway.url}/v1`, apiKey: 'client', maxRetries: 0})
    await expect(twoTurns(client)).rejects.toThrow(/Items are not persisted when `store` is set to false/)
    expect(sentStores()).toEqual([false, false])
  })

  it('the same server at a host that does not tell: refused once, then learned', async () => {
    baseUrl = sim.origin
    gateway.results.length = 0
    const client = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: 'client',
      maxRetries: 0,
      defaultHeaders: CODEX,
    })
    const {second} = await twoTurns(client)
    expect(second.status).toBe('completed')
    expect(sentStores()).toEqual([false, false, true])
  })
})
