/**
 * Codex on a Responses server that is not OpenAI's: its namespaces, custom tools and "Responses
 * Lite" item reach a server on this machine (a vLLM-like upstream that refuses them) as plain
 * functions from the first request, and a server elsewhere (the simulator's `+plain-tools` model,
 * which is OpenAI's API to the gateway) once it refused them; each call comes back to Codex as it
 * declared the tool. A provider's `plainTools` setting overrides that: `never` to a server on this
 * machine (a relay in front of OpenAI) sends the shapes as they came, `always` to one elsewhere
 * (a server that mangles them without a word) plain from the first request. The real daemon, the
 * official OpenAI SDK.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'

import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../src/sim/server.js'
import {startSim} from '../src/sim/server.js'
import {codexLiteTools, liteParams} from './helpers/codex.js'
import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  simResponsesRefusal,
  startSimGatewayWithPolicies,
  takeSimCalls,
  takeSimRequests,
} from './helpers/gateway.js'

/** What the vLLM-like upstream got, in order. */
const received: Array<Record<string, any>> = []

/** A Responses server that takes function tools only, as vLLM on gpt-oss: its call is the first tool's. */
const vllm = createServer((req: IncomingMessage, res: ServerResponse) => {
  let data = ''
  req.on('data', (c: Buffer) => (data += c))
  req.on('end', () => {
    const body = JSON.parse(data) as Record<string, any>
    received.push(body)
    const other = (body.tools ?? []).find((t: {type: string}) => t.type !== 'function')
    const item = (body.input ?? []).find((i: {type: string}) => i.type === 'additional_tools')
    if (other || item) {
      res.writeHead(400, {'content-type': 'application/json'})
      res.end(
        JSON.stringify({error: {message: `tool type ${other?.type ?? 'additional_tools'} not supported`}}),
      )
      return
    }
    const call = {type: 'function_call', id: 'fc_v', call_id: 'call_v', name: body.tools[0].name}
    const args = '{"input":"console.log(1)"}'
    const usage = {input_tokens: 30, output_tokens: 7, total_tokens: 37}
    // asked to reason, gpt-oss's reasoning comes first, as text (`reasoning_text`), not encrypted
    const thought = 'Run it to see.'
    const rs = {type: 'reasoning', id: 'rs_v', summary: []}
    const reasoning = body.reasoning
      ? [
          {type: 'response.output_item.added', output_index: 0, item: {...rs, content: []}},
          {
            type: 'response.reasoning_text.delta',
            output_index: 0,
            item_id: 'rs_v',
            content_index: 0,
            delta: thought,
          },
          {
            type: 'response.output_item.done',
            output_index: 0,
            item: {...rs, content: [{type: 'reasoning_text', text: thought}]},
          },
        ]
      : []
    const at = reasoning.length ? 1 : 0
    const events = [
      {type: 'response.created', response: {id: 'resp_v', status: 'in_progress', output: []}},
      ...reasoning,
      {type: 'response.output_item.added', output_index: at, item: {...call, arguments: ''}},
      {type: 'response.function_call_arguments.delta', output_index: at, item_id: 'fc_v', delta: args},
      {type: 'response.output_item.done', output_index: at, item: {...call, arguments: args}},
      {type: 'response.completed', response: {id: 'resp_v', status: 'completed', usage}},
    ]
    res.writeHead(200, {'content-type': 'text/event-stream'})
    res.end(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(''))
  })
})

let base = ''
let simOrigin = ''
/** A simulator of the test's own, for the providers with a `plainTools` setting (the daemon's starts on a port of its own). */
let ownSim: Simulator
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

const policy = (id: string, provider: string, model: string) =>
  simPolicy(id, {responses: [{provider, model}]})

beforeAll(async () => {
  await new Promise<void>((resolve) => vllm.listen(0, '127.0.0.1', resolve))
  const port = (vllm.address() as AddressInfo).port
  ownSim = await startSim({timeScale: 100})
  const credential = {secret: 'sim-key'}
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies(
    [
      policy('plain-local', 'local-vllm', 'gpt-oss-120b'),
      policy('plain-learned', 'sim-responses', 'gpt-oss-120b+plain-tools'),
      policy('plain-never', 'litellm', 'gpt-6.2-sol'),
      policy('plain-never-refused', 'litellm', 'gpt-oss-120b+plain-tools'),
      policy('plain-always', 'ollama-remote', 'gpt-oss-120b+plain-tools'),
      policy('lite-azure', 'sim-responses', 'gpt-6.2-sol+lite-azure'),
      policy('not-lite', 'sim-responses', 'gpt-5.5+not-lite'),
      policy('plain-answered', 'sim-responses', 'minimax-m3+custom-as-function'),
    ],
    [
      {name: 'local-vllm', family: 'responses', baseUrl: `http://127.0.0.1:${port}/v1`},
      // a relay in front of OpenAI on this machine (127.0.0.1: local to the gateway)
      {name: 'litellm', family: 'responses', baseUrl: ownSim.origin, credential, plainTools: 'never'},
      // a server elsewhere (`origin: 'sim'`: the gateway takes it for OpenAI's API, whatever its host)
      {
        name: 'ollama-remote',
        family: 'responses',
        baseUrl: ownSim.origin,
        credential,
        origin: 'sim',
        plainTools: 'always',
      },
    ],
  ))
  for (const id of [
    'plain-local',
    'plain-learned',
    'plain-never',
    'plain-never-refused',
    'plain-always',
    'lite-azure',
    'not-lite',
    'plain-answered',
  ])
    keys.set(id, await issueKeyOverApi(base, id, 'codex', id))
}, 120_000)

afterAll(async () => {
  await stop()
  vllm.close()
  await ownSim?.close()
})

/** Codex 0.171's request on a Lite model, cut down: the Lite item, a namespace of its own, a custom tool. */
const codexRequest = () => ({
  model: 'gpt-6.2-sol',
  instructions: 'You are Codex.',
  input: [
    codexLiteTools(),
    {
      type: 'message' as const,
      role: 'user' as const,
      content: [{type: 'input_text' as const, text: 'use a tool'}],
    },
  ],
  tools: [
    {
      type: 'namespace',
      name: 'multi_agent_v1',
      description: 'Sub-agents.',
      tools: [{type: 'function', name: 'spawn_agent', parameters: liteParams('task'), strict: false}],
    },
    {type: 'web_search'},
  ],
  tool_choice: 'auto' as const,
  parallel_tool_calls: false,
  store: false,
})

const client = (policyId: string) =>
  new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get(policyId)!, maxRetries: 0})

describe('Codex on a Responses server that is not OpenAI', {timeout: 60_000}, () => {
  it('on this machine: plain functions from the first request; the call of exec comes back in its namespace', async () => {
    const answer = await client('plain-local')
      .responses.stream(codexRequest() as unknown as OpenAI.Responses.ResponseCreateParamsStreaming)
      .finalResponse()
    expect(received).toHaveLength(1)
    const sent = received[0]
    expect(sent.tools.map((t: {type: string; name: string}) => `${t.type} ${t.name}`)).toEqual([
      'function multi_agent_v1__spawn_agent',
      'function functions__exec',
      'function functions__wait',
      'function clock__sleep',
    ])
    expect(JSON.stringify(sent.input)).not.toContain('additional_tools')
    expect(sent.model).toBe('gpt-oss-120b')
    // vLLM's call of the first tool it was offered: Codex's sub-agent tool, in its namespace
    expect(answer.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        name: 'spawn_agent',
        namespace: 'multi_agent_v1',
        arguments: '{"input":"console.log(1)"}',
      }),
    ])
    const [row] = await projectLogRows(base, 'plain-local', 1)
    expect([row.status, row.error, row.upstreamFamily, row.usage?.inputTokens ?? row.inputTokens]).toEqual([
      200,
      null,
      null,
      30,
    ])
  })

  it("gpt-oss's reasoning goes back to it on the next turn, as the text it came as", async () => {
    received.length = 0
    const request = {...codexRequest(), reasoning: {effort: 'high' as const, summary: 'auto' as const}}
    const first = await client('plain-local')
      .responses.stream(request as unknown as OpenAI.Responses.ResponseCreateParamsStreaming)
      .finalResponse()
    // Codex sees the reasoning (as a summary, which it shows), then the call
    expect(first.output.map((o) => o.type)).toEqual(['reasoning', 'function_call'])
    expect(first.output[0]).toMatchObject({summary: [{type: 'summary_text', text: 'Run it to see.'}]})
    const call = first.output[1] as OpenAI.Responses.ResponseFunctionToolCall
    // Codex's next turn: its history with what it got back, and the call's output
    await client('plain-local')
      .responses.stream({
        ...request,
        input: [
          ...request.input,
          ...first.output,
          {type: 'function_call_output', call_id: call.call_id, output: '1'},
        ],
      } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming)
      .finalResponse()
    expect(received).toHaveLength(2)
    const history = received[1].input.filter((i: {type: string}) => i.type !== 'message')
    expect(history).toEqual([
      {
        type: 'reasoning',
        id: first.output[0].id,
        summary: [],
        content: [{type: 'reasoning_text', text: 'Run it to see.'}],
      },
      {
        type: 'function_call',
        call_id: 'call_v',
        name: 'multi_agent_v1__spawn_agent',
        arguments: expect.any(String),
      },
      {type: 'function_call_output', call_id: 'call_v', output: '1'},
    ])
  })

  it('elsewhere: learned from its refusal, the request goes again plain, and later ones at once', async () => {
    const MODEL_CALL = /\/v1\/responses$/
    await takeSimCalls(simOrigin, MODEL_CALL)
    const first = await client('plain-learned')
      .responses.stream(codexRequest() as unknown as OpenAI.Responses.ResponseCreateParamsStreaming)
      .finalResponse()
    const [refused, again] = await takeSimCalls(simOrigin, MODEL_CALL)
    expect(JSON.stringify(refused.input)).toContain('"additional_tools"')
    expect(again.tools.every((t: {type: string}) => t.type === 'function')).toBe(true)
    // the simulator's call of the first tool it was offered: Codex's sub-agent tool, in its namespace
    expect(first.output.find((o) => o.type === 'function_call')).toMatchObject({
      name: 'spawn_agent',
      namespace: 'multi_agent_v1',
    })
    const [row] = await projectLogRows(base, 'plain-learned', 1)
    expect(row.status).toBe(200)
    expect(row.error).toBe(
      "sim-responses refused Codex's tool shapes: sent again with every tool a plain function",
    )

    await client('plain-learned')
      .responses.stream(codexRequest() as unknown as OpenAI.Responses.ResponseCreateParamsStreaming)
      .finalResponse()
    const later = await takeSimCalls(simOrigin, MODEL_CALL)
    expect(later).toHaveLength(1)
    const learned = (await (await fetch(`${base}/api/adaptations`)).json()) as {
      adaptations: Array<{provider: string; rules: string[]}>
    }
    expect(learned.adaptations.find((a) => a.provider === 'sim-responses')?.rules).toContain(
      "Codex's namespaces and custom tools sent as plain functions, its agent_message items as user messages (refused, or answered as plain calls)",
    )
  })
})

describe(
  'a Responses server that takes Codex custom tools without a word and answers one as a function',
  {timeout: 60_000},
  () => {
    /** Codex's apply_patch, its free-form grammar tool, alone (the tool the simulator calls). */
    const patchRequest = () => ({
      model: 'gpt-5.5-codex',
      instructions: 'You are Codex.',
      input: [
        {type: 'message', role: 'user', content: [{type: 'input_text', text: 'use a tool to fix the typo'}]},
      ],
      tools: [
        {
          type: 'custom',
          name: 'apply_patch',
          description: 'Edit files with a patch.',
          format: {type: 'grammar', syntax: 'lark', definition: 'start: /(.|\\n)+/'},
        },
      ],
      tool_choice: 'auto',
      store: false,
      stream: true,
    })

    it('MiniMax M3: its function call of apply_patch learned from the answer; later requests go plain and Codex gets its custom call', async () => {
      const MODEL_CALL = /\/v1\/responses$/
      await takeSimCalls(simOrigin, MODEL_CALL)
      const stream = (): Promise<OpenAI.Responses.Response> =>
        client('plain-answered')
          .responses.stream(patchRequest() as unknown as OpenAI.Responses.ResponseCreateParamsStreaming)
          .finalResponse()
      // the first answer as it came: the call Codex refuses ("incompatible payload")
      const first = await stream()
      expect(first.output.find((o) => o.type === 'function_call')).toMatchObject({name: 'apply_patch'})
      const [sent] = await takeSimCalls(simOrigin, MODEL_CALL)
      expect(sent.tools.map((t: {type: string}) => t.type)).toEqual(['custom'])
      const [row] = await projectLogRows(base, 'plain-answered', 1)
      expect([row.status, row.error]).toEqual([
        200,
        "sim-responses answered Codex's tool apply_patch as a plain function call (its tool shapes taken but not implemented): later requests go with every tool a plain function, the calls given back to Codex in its shapes",
      ])
      // the next turn: plain functions upstream, and Codex's custom call back, its input unwrapped
      const second = await stream()
      const [plain] = await takeSimCalls(simOrigin, MODEL_CALL)
      expect(plain.tools.map((t: {type: string; name: string}) => [t.type, t.name])).toEqual([
        ['function', 'apply_patch'],
      ])
      const call = second.output.find((o) => o.type === 'custom_tool_call') as {name: string; input: unknown}
      expect(call.name).toBe('apply_patch')
      expect(typeof call.input).toBe('string')
      expect(second.output.some((o) => o.type === 'function_call')).toBe(false)
    })
  },
)

/** The Responses requests the daemon's simulator got since the last call, headers and bodies (the record cleared). */
const takeResponsesRequests = () => takeSimRequests(simOrigin, /\/v1\/responses$/)

describe("Codex's Responses Lite request refused by a hosted server", {timeout: 60_000}, () => {
  /** Codex 0.171's header on a Lite model, and one of its others (which goes on). */
  const LITE_HEADERS = {
    'x-openai-internal-codex-responses-lite': 'true',
    'x-codex-turn-metadata': '{"turn_id":"t1"}',
  }
  const NOTE =
    "sim-responses refused Codex's Responses Lite request: sent again as for a model that is not Lite (its tools in `tools`, without the Lite header)"

  for (const [id, model, words] of [
    [
      'lite-azure',
      'gpt-6.2-sol',
      'X-OpenAI-Internal-Codex-Responses-Lite only supports function tools, custom tools, and client-executed tool search.',
    ],
    ['not-lite', 'gpt-5.5', 'This model is not supported when using X-OpenAI-Internal-Codex-Responses-Lite.'],
  ] as const)
    it(`${id}: learned from its words; sent again as for a model that is not Lite, without the Lite header, and so are later turns`, async () => {
      await takeResponsesRequests()
      const first = await client(id)
        .responses.stream(codexRequest() as unknown as OpenAI.Responses.ResponseCreateParamsStreaming, {
          headers: LITE_HEADERS,
        })
        .finalResponse()
      const [refused, again, ...more] = await takeResponsesRequests()
      expect(more).toEqual([])
      // as Codex sent it, refused under its Lite header; then plain, without it, Codex's other header kept
      expect(refused.headers['x-openai-internal-codex-responses-lite']).toBe('true')
      expect(refused.body.input[0].type).toBe('additional_tools')
      expect(again.headers['x-openai-internal-codex-responses-lite']).toBeUndefined()
      expect(again.headers['x-codex-turn-metadata']).toBe('{"turn_id":"t1"}')
      // Codex's tools as it sends them for a model that is not Lite: its own, then the item's, as they came
      const lite = codexRequest()
      expect(again.body.tools).toEqual([...lite.tools, ...codexLiteTools().tools])
      expect(again.body.input).toEqual(lite.input.slice(1))
      expect(again.body.model).toBe(`${model}+${id}`)
      // the simulator's answer, as it came (a pass-through): its call of the first function it
      // found, the multi_agent_v1 namespace's, with the namespace Codex needs to run it
      expect(first.status).toBe('completed')
      expect(first.output).toMatchObject([
        {
          type: 'function_call',
          name: 'spawn_agent',
          namespace: 'multi_agent_v1',
          arguments: '{"query":"use a tool"}',
        },
      ])
      const [row] = await projectLogRows(base, id, 1)
      expect([row.status, row.error]).toEqual([200, NOTE])
      // what the simulator answered the first try: the refusal in the server's words
      expect(
        await simResponsesRefusal(simOrigin, refused.body, {
          'x-openai-internal-codex-responses-lite': 'true',
        }),
      ).toEqual([400, words])

      // Codex's next turn: plain at once, one request, no refusal
      const second = await client(id)
        .responses.stream(codexRequest() as unknown as OpenAI.Responses.ResponseCreateParamsStreaming, {
          headers: LITE_HEADERS,
        })
        .finalResponse()
      expect(second.status).toBe('completed')
      const later = await takeResponsesRequests()
      expect(later).toHaveLength(1)
      expect(later[0].headers['x-openai-internal-codex-responses-lite']).toBeUndefined()
      const [, next] = await projectLogRows(base, id, 2)
      expect([next.status, next.error]).toEqual([200, null])
      const learned = (await (await fetch(`${base}/api/adaptations`)).json()) as {
        adaptations: Array<{provider: string; model: string; rules: string[]}>
      }
      expect(
        learned.adaptations.find((a) => a.provider === 'sim-responses' && a.model === `${model}+${id}`)
          ?.rules,
      ).toEqual([
        "Codex's Responses Lite requests sent as for a model that is not Lite: its tools in `tools`, without the Lite header (refused)",
      ])
    })
})

describe("a provider's plainTools setting", {timeout: 60_000}, () => {
  const MODEL_CALL = /\/v1\/responses$/

  it('is loaded from the state file and listed by the running gateway', async () => {
    const {providers} = (await (await fetch(`${base}/api/providers`)).json()) as {
      providers: Array<{name: string; plainTools?: string}>
    }
    expect(
      providers
        .filter((p) => ['litellm', 'ollama-remote', 'local-vllm'].includes(p.name))
        .map((p) => [p.name, p.plainTools]),
    ).toEqual([
      ['local-vllm', undefined],
      ['litellm', 'never'],
      ['ollama-remote', 'always'],
    ])
  })

  it('never: a relay on this machine gets the shapes as Codex sent them, its refusal reaches Codex', async () => {
    await takeSimCalls(ownSim.origin, MODEL_CALL)
    const answer = await client('plain-never')
      .responses.stream(codexRequest() as unknown as OpenAI.Responses.ResponseCreateParamsStreaming)
      .finalResponse()
    const [sent, ...more] = await takeSimCalls(ownSim.origin, MODEL_CALL)
    expect(more).toEqual([])
    expect(sent.tools.map((t: {type: string}) => t.type)).toEqual(['namespace', 'web_search'])
    expect(sent.input[0].type).toBe('additional_tools')
    expect(answer.status).toBe('completed')
    const [row] = await projectLogRows(base, 'plain-never', 1)
    expect([row.status, row.error, row.provider]).toEqual([200, null, 'litellm'])

    // a server there that does refuse them: Codex sees its 400, and nothing is learned
    const refused = await client('plain-never-refused')
      .responses.create(codexRequest() as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming)
      .then(
        () => undefined,
        (error: unknown) => error as {status: number; message: string},
      )
    expect(refused?.status).toBe(400)
    expect(refused?.message).toContain('additional_tools')
    const calls = await takeSimCalls(ownSim.origin, MODEL_CALL)
    expect(calls).toHaveLength(1)
    const learned = (await (await fetch(`${base}/api/adaptations`)).json()) as {
      adaptations: Array<{provider: string}>
    }
    expect(learned.adaptations.filter((a) => a.provider === 'litellm')).toEqual([])
  })

  it('always: a server elsewhere gets plain functions from the first request', async () => {
    await takeSimCalls(ownSim.origin, MODEL_CALL)
    const answer = await client('plain-always')
      .responses.stream(codexRequest() as unknown as OpenAI.Responses.ResponseCreateParamsStreaming)
      .finalResponse()
    const calls = await takeSimCalls(ownSim.origin, MODEL_CALL)
    expect(calls).toHaveLength(1)
    expect(calls[0].tools.every((t: {type: string}) => t.type === 'function')).toBe(true)
    expect(JSON.stringify(calls[0].input)).not.toContain('additional_tools')
    expect(answer.output.find((o) => o.type === 'function_call')).toMatchObject({
      name: 'spawn_agent',
      namespace: 'multi_agent_v1',
    })
    const [row] = await projectLogRows(base, 'plain-always', 1)
    expect([row.status, row.error, row.provider]).toEqual([200, null, 'ollama-remote'])
  })

  // review73: the refusal used to make the request go as it came, so the server got the raw body
  // and Codex its refusal of the namespace, which the log row blamed on the provider
  it("on this machine: an item_reference the gateway does not hold gets the gateway's 400 that names it, nothing sent", async () => {
    received.length = 0
    const logged = (await projectLogRows(base, 'plain-local', 0)).length
    const res = await fetch(`${base}/v1/responses`, {
      method: 'POST',
      headers: {'content-type': 'application/json', authorization: `Bearer ${keys.get('plain-local')}`},
      body: JSON.stringify({
        ...codexRequest(),
        // the AI SDK's default `store` (true): an earlier answer's message by reference
        input: [
          ...codexRequest().input,
          {type: 'item_reference', id: 'msg_from_before_a_restart'},
          {role: 'user', content: [{type: 'input_text', text: 'go on'}]},
        ],
        store: true,
        stream: true,
      }),
    })
    const text = await res.text()
    expect(res.status).toBe(400)
    expect(text).toContain(
      'an item_reference names item \\"msg_from_before_a_restart\\", which this gateway does not hold',
    )
    expect(received).toHaveLength(0)
    const row = (await projectLogRows(base, 'plain-local', logged + 1)).at(-1)!
    expect([row.status, row.provider]).toEqual([400, 'local-vllm'])
    expect(row.error).toContain('does not hold')
  })
})
