/**
 * Codex's `functions` namespace goes with an empty description (Codex 0.147 and later, in the Lite
 * request's `additional_tools` item and in `tools`), which Azure OpenAI refuses on every request
 * ("Invalid 'input[0].tools[0].description': empty string. …", `code: empty_string`; openai/codex
 * #37380, #37432). To Azure's own hosts the namespace goes described from the first request; to an
 * Azure the host does not tell the refusal is learned and the request sent again at once. Only
 * the empty description changes: the rest of Codex's bytes go as they came. The simulator's
 * `+azure-namespace-description` models refuse as Azure does; the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyGateway} from '../src/daemon/router/proxy-fixture.js'
import type {Simulator} from '../src/sim/server.js'
import {AZURE, azureSimGateway} from './helpers/azure.js'
import {projectLogRows, startKeyedPolicies, takeSimCalls} from './helpers/gateway.js'

const RESPONSES = /\/responses$/
const MODEL = 'gpt-6.2-sol+azure-namespace-description'
/** Codex 0.171's headers on a Lite model. */
const CODEX = {
  originator: 'codex_exec',
  'user-agent': 'codex_exec/0.171.0 (Debian 12.0.0; x86_64) xterm',
  'x-openai-internal-codex-responses-lite': 'true',
}

/** Codex 0.171's Lite request, cut down: its tools in the first input item, `functions` without a description. */
const liteRequest = (text: string) => ({
  model: 'gpt-6.2-sol',
  tool_choice: 'auto',
  parallel_tool_calls: false,
  input: [
    {
      type: 'additional_tools',
      id: 'at_1',
      role: 'developer',
      tools: [
        {
          type: 'namespace',
          name: 'functions',
          description: '',
          tools: [
            {
              type: 'function',
              name: 'wait',
              description: 'Waits.',
              parameters: {type: 'object', properties: {}},
            },
          ],
        },
        {
          type: 'namespace',
          name: 'clock',
          description: 'Tools in the clock namespace.',
          tools: [
            {
              type: 'function',
              name: 'sleep',
              description: 'Sleeps.',
              parameters: {type: 'object', properties: {}},
            },
          ],
        },
      ],
    },
    {type: 'message', role: 'user', content: [{type: 'input_text', text}]},
  ],
  store: false,
  stream: false,
})

/** The body Codex sent, with only the `functions` namespace's description filled (the bytes compared as text). */
const described = (text: string) =>
  JSON.stringify(liteRequest(text)).replace(
    '"name":"functions","description":""',
    '"name":"functions","description":"Tools in the functions namespace."',
  )

describe('Codex passed through to an Azure the host does not tell', {timeout: 60_000}, () => {
  let base = ''
  let simOrigin = ''
  let stop: () => Promise<void> = async () => {}
  let key = ''
  beforeAll(async () => {
    let keys: Map<string, string>
    ;({base, simOrigin, stop, keys} = await startKeyedPolicies(
      {'azure-learned': {responses: [{provider: 'sim-responses', model: MODEL}]}},
      {agentType: 'codex'},
    ))
    key = keys.get('azure-learned')!
  }, 120_000)
  afterAll(() => stop())

  it('the empty description refused once: learned, sent again described at once, later requests described from the start', async () => {
    await takeSimCalls(simOrigin, RESPONSES)
    const send = (text: string) =>
      fetch(`${base}/v1/responses`, {
        method: 'POST',
        headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json', ...CODEX},
        body: JSON.stringify(liteRequest(text)),
      })
    const first = await send('Say hello.')
    expect(first.status).toBe(200)
    expect(((await first.json()) as {status: string}).status).toBe('completed')
    const sent = await takeSimCalls(simOrigin, RESPONSES)
    expect(sent.map((s) => s.input[0].tools[0].description)).toEqual([
      '',
      'Tools in the functions namespace.',
    ])
    // Codex's bytes but for the one description (the model name: the policy's)
    expect(JSON.stringify({...sent[1], model: 'gpt-6.2-sol'})).toBe(described('Say hello.'))
    expect((await projectLogRows(base, 'azure-learned', 1)).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        "sim-responses refused a namespace tool's empty description: sent again with Codex's words for it (Tools in the functions namespace.)",
      ],
    ])
    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {
      adaptations: Array<{model: string; rules: string[]}>
    }
    expect(adaptations.find((a) => a.model === MODEL)?.rules).toEqual([
      "Codex's namespaces without a description sent with Codex's words for one (refused empty)",
    ])
    expect((await send('Again.')).status).toBe(200)
    expect((await takeSimCalls(simOrigin, RESPONSES)).map((s) => s.input[0].tools[0].description)).toEqual([
      'Tools in the functions namespace.',
    ])
  })
})

describe("Codex passed through to Azure OpenAI's own hosts", {timeout: 60_000}, () => {
  let sim: Simulator
  let gateway: ProxyGateway
  let close: () => Promise<void> = async () => {}
  beforeAll(async () => {
    ;({sim, gateway, close} = await azureSimGateway(() => ({
      targets: [
        {
          provider: {name: 'azure', family: 'responses', baseUrl: AZURE, credential: {secret: 'k'}},
          model: MODEL,
        },
      ],
    })))
  })
  afterAll(() => close())

  it('the namespace described from the first request: one try, through the official SDK', async () => {
    const client = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: 'k',
      maxRetries: 0,
      defaultHeaders: CODEX,
    })
    const answer = await client.responses.create(liteRequest('Say hello.') as never)
    expect(answer.status).toBe('completed')
    const sent = sim.requests.splice(0).flatMap((r) => (RESPONSES.test(r.path) ? [r.body as object] : []))
    expect(sent).toHaveLength(1)
    expect(gateway.results.map((r) => [r.status, r.error])).toEqual([[200, null]])
    // (with store true, as Codex's requests go to Azure's hosts: translation-azure-store.test.ts)
    expect(JSON.stringify({...sent[0], model: 'gpt-6.2-sol', store: false})).toBe(described('Say hello.'))
    expect(sent[0]).toMatchObject({store: true})
  })
})
