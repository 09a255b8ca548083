/**
 * Codex on a Responses server that is not OpenAI's (./plain-tools.ts): its namespaces, custom
 * tools and `additional_tools` item go as plain functions to a server on this machine or the local
 * network, and to any server once it refused them; the calls come back to Codex in their namespace
 * or as custom tool calls, JSON and streamed. Any other request passes through as it came.
 */
import type {IncomingHttpHeaders} from 'node:http'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {
  simStandsForOtherServer,
  calledAsFunction,
  holdsAgentMessage,
  holdsOpenAiToolShapes,
  isAmazonBedrock,
  isLocalServer,
  isOpenAiApi,
  isAzureHost,
  isOpenAiResponsesHost,
  refusesOpenAiToolShapes,
  refusesEmptyDescription,
  refusesStoreFalse,
  withNamespaceDescriptions,
  withoutLiteItem,
  withStoreTrue,
} from './plain-tools.js'
import {learnedAdaptations, type ProxyTarget} from './proxy.js'
import type {GatewayRoute, Refusal, Upstream} from './proxy-fixture.js'
import {ProxyGateway, startJudgedUpstream} from './proxy-fixture.js'

const params = (prop: string) => ({type: 'object', properties: {[prop]: {type: 'string'}}, required: [prop]})

/** Codex 0.171's request, cut down: a namespace, a custom tool, its web search, a Lite item, a turn with a custom call. */
const codexBody = (stream: boolean, model = 'gpt-6.2-sol') => ({
  model,
  instructions: 'You are Codex.',
  input: [
    {
      type: 'additional_tools',
      role: 'developer',
      tools: [
        {
          type: 'namespace',
          name: 'clock',
          description: 'Time.',
          tools: [{type: 'function', name: 'sleep', description: 'Pause.', parameters: params('ms')}],
        },
      ],
    },
    {type: 'message', role: 'user', content: [{type: 'input_text', text: 'List the files.'}]},
    {type: 'custom_tool_call', call_id: 'call_1', name: 'exec', namespace: 'functions', input: 'ls'},
    {type: 'custom_tool_call_output', call_id: 'call_1', output: 'a.ts b.ts'},
  ],
  tools: [
    {
      type: 'namespace',
      name: 'functions',
      description: '',
      tools: [
        {
          type: 'custom',
          name: 'exec',
          description: 'Run code.',
          format: {type: 'grammar', syntax: 'lark', definition: 'start: /[\\s\\S]+/'},
        },
      ],
    },
    {
      type: 'namespace',
      name: 'multi_agent_v1',
      description: 'Sub-agents.',
      tools: [{type: 'function', name: 'spawn_agent', description: 'Spawn.', parameters: params('task')}],
    },
    {type: 'web_search', external_web_access: false},
  ],
  tool_choice: 'auto',
  parallel_tool_calls: true,
  reasoning: {effort: 'medium', summary: 'auto'},
  store: false,
  stream,
  include: ['reasoning.encrypted_content'],
  prompt_cache_key: 'session-1',
})

const ANSWER = JSON.stringify({
  id: 'resp_u1',
  object: 'response',
  created_at: 1,
  status: 'completed',
  model: 'qwen3-coder',
  output: [
    {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_2',
      name: 'functions__exec',
      arguments: '{"input":"cat a.ts"}',
    },
  ],
  usage: {input_tokens: 40, output_tokens: 6, total_tokens: 46},
})

const sse = (events: Array<Record<string, unknown>>) =>
  events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join('')
const call = {type: 'function_call', id: 'fc_2', call_id: 'call_3', name: 'multi_agent_v1__spawn_agent'}
const STREAM = sse([
  {type: 'response.created', response: {id: 'resp_u2', status: 'in_progress', output: []}},
  {type: 'response.output_item.added', output_index: 0, item: {...call, arguments: ''}},
  {type: 'response.function_call_arguments.delta', output_index: 0, item_id: 'fc_2', delta: '{"task":'},
  {type: 'response.function_call_arguments.delta', output_index: 0, item_id: 'fc_2', delta: '"tests"}'},
  {type: 'response.output_item.done', output_index: 0, item: {...call, arguments: '{"task":"tests"}'}},
  {
    type: 'response.completed',
    response: {
      id: 'resp_u2',
      status: 'completed',
      usage: {input_tokens: 40, output_tokens: 5, total_tokens: 45},
    },
  },
])

/** vLLM's refusal of a namespace tool on a gpt-oss model. */
const VLLM_REFUSAL: Refusal = {
  status: 400,
  body: {
    error: {message: 'tool type namespace not supported', type: 'BadRequestError', param: null, code: 400},
  },
}
/** Ollama's 500 for a namespace tool. */
const OLLAMA_REFUSAL: Refusal = {
  status: 500,
  body: {error: {code: 500, message: 'Failed to parse tools: Unsupported tool type: {"type":"namespace"}'}},
}

const received: Buffer[] = []
/** The headers of each request `received` holds. */
const receivedHeaders: IncomingHttpHeaders[] = []
let refusal: Refusal | undefined
/** Refuses every request with Codex's Lite header while set (Azure OpenAI, a model that is not Lite). */
let liteRefusal: Refusal | undefined
/** Refuses every request with an `agent_message` item while set (Ollama, xAI, a relay). */
let agentRefusal: Refusal | undefined
/** Refuses every request while set (a missing key). */
let refuseAll: Refusal | undefined
let upstream: Upstream
let route: GatewayRoute
let gateway: ProxyGateway

beforeAll(async () => {
  // refuses Codex's shapes while `refusal` is set, as vLLM, llama.cpp and Ollama do
  upstream = await startJudgedUpstream(
    received,
    (body, headers) => {
      receivedHeaders[received.length - 1] = headers
      if (liteRefusal && headers['x-openai-internal-codex-responses-lite'] === 'true') return liteRefusal
      if (agentRefusal && JSON.stringify(body).includes('"agent_message"')) return agentRefusal
      return refuseAll ?? (refusal && JSON.stringify(body).includes('"namespace"') ? refusal : undefined)
    },
    {stream: STREAM, json: ANSWER},
  )
  gateway = new ProxyGateway({route: () => route})
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

/** A Responses provider at the scripted upstream; `origin: 'sim'` stands for a server that is not local. */
const target = (name: string, origin?: 'sim', plainTools?: 'always' | 'never'): ProxyTarget => ({
  provider: {
    name,
    family: 'responses',
    baseUrl: `${upstream.origin}/v1`,
    credential: {secret: 'k'},
    ...(origin ? {origin} : {}),
    ...(plainTools ? {plainTools} : {}),
  },
  model: 'qwen3-coder',
})

const post = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer client', ...headers},
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })

/** Codex 0.171's headers on a Lite model (its turn metadata cut). */
const CODEX_LITE_HEADERS = {
  'x-openai-internal-codex-responses-lite': 'true',
  'x-codex-turn-metadata': '{"turn_id":"t1"}',
  originator: 'codex_exec',
}

/** Azure OpenAI's 400 for a namespace in Codex's Lite item. */
const AZURE_LITE_REFUSAL: Refusal = {
  status: 400,
  body: {
    error: {
      message:
        'X-OpenAI-Internal-Codex-Responses-Lite only supports function tools, custom tools, and client-executed tool search.',
      type: 'invalid_request_error',
      param: 'tools',
      code: 'unsupported_value',
    },
  },
}
/** OpenAI's 400 for a Lite request whose model (as the route rewrote it) is not a Lite one. */
const NOT_LITE_REFUSAL: Refusal = {
  status: 400,
  body: {
    error: {
      message: 'This model is not supported when using X-OpenAI-Internal-Codex-Responses-Lite.',
      type: 'invalid_request_error',
      param: 'model',
      code: 'unsupported_value',
    },
  },
}
/**
 * OpenRouter's 400 for a tool that is neither a function nor one of its own: zod's issues, pretty
 * printed, as a JSON string in `metadata.raw` (openai/codex #18307, cut to two variants).
 */
const openRouterUnion = (path: unknown[], expected = 'openrouter:datetime') =>
  JSON.stringify({
    error: {code: 'invalid_prompt', message: 'Invalid Responses API request'},
    metadata: {
      raw: JSON.stringify(
        [
          {
            code: 'invalid_union',
            errors: [
              [
                {
                  code: 'invalid_union',
                  errors: [],
                  note: 'No matching discriminator',
                  discriminator: 'type',
                  path: ['type'],
                  message: 'Invalid input',
                },
              ],
              [
                {
                  code: 'invalid_value',
                  values: [expected],
                  path: ['type'],
                  message: `Invalid input: expected "${expected}"`,
                },
              ],
            ],
            path,
            message: 'Invalid input',
          },
        ],
        null,
        2,
      ),
    },
  })

const sent = (i: number) => JSON.parse(String(received[i])) as Record<string, unknown>

/** The `data:` objects of an event stream. */
const events = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>)

describe('Codex to a Responses server on this machine', () => {
  it('sends every tool as a plain function and the history as function calls; the call goes back as Codex declared it', async () => {
    received.length = 0
    gateway.results.length = 0
    route = {targets: [target('vllm')]}
    const res = await post(codexBody(false))
    expect(res.status).toBe(200)
    const body = sent(0)
    expect(body.tools).toEqual([
      {
        type: 'function',
        name: 'functions__exec',
        description: 'Run code.',
        parameters: expect.any(Object),
        strict: false,
      },
      {
        type: 'function',
        name: 'multi_agent_v1__spawn_agent',
        description: 'Spawn.',
        parameters: params('task'),
        strict: false,
      },
      {
        type: 'function',
        name: 'clock__sleep',
        description: 'Pause.',
        parameters: params('ms'),
        strict: false,
      },
    ])
    expect((body.tools as Array<{parameters: unknown}>)[0].parameters).toMatchObject({
      properties: {input: {type: 'string'}},
    })
    expect(body.input).toEqual([
      {type: 'message', role: 'user', content: [{type: 'input_text', text: 'List the files.'}]},
      {type: 'function_call', call_id: 'call_1', name: 'functions__exec', arguments: '{"input":"ls"}'},
      {type: 'function_call_output', call_id: 'call_1', output: 'a.ts b.ts'},
    ])
    // what such a server reads is kept: the model, instructions, effort, the cache key
    expect(body).toMatchObject({
      model: 'qwen3-coder',
      instructions: 'You are Codex.',
      reasoning: {effort: 'medium'},
      prompt_cache_key: 'session-1',
      store: false,
    })
    expect(String(received[0])).not.toMatch(/"namespace"|"custom"|additional_tools|web_search/)

    const answer = (await res.json()) as {output: unknown[]; usage: {input_tokens: number}}
    expect(answer.output).toEqual([
      expect.objectContaining({
        type: 'custom_tool_call',
        call_id: 'call_2',
        name: 'exec',
        namespace: 'functions',
        input: 'cat a.ts',
      }),
    ])
    expect(answer.usage.input_tokens).toBe(40)
    const [result] = await gateway.settled(1)
    // (the same family: its row names no other)
    expect([
      result.status,
      result.provider,
      result.error,
      result.usage?.inputTokens,
      result.upstreamFamily,
    ]).toEqual([200, 'vllm', null, 40, undefined])
  })

  it('streams the upstream call back under its namespace, its arguments as they came', async () => {
    received.length = 0
    route = {targets: [target('vllm-stream')]}
    const res = await post(codexBody(true))
    expect(res.status).toBe(200)
    const out = events(await res.text())
    const done = out.find((e) => e.type === 'response.output_item.done')?.item
    expect(done).toMatchObject({
      type: 'function_call',
      call_id: 'call_3',
      name: 'spawn_agent',
      namespace: 'multi_agent_v1',
      arguments: '{"task":"tests"}',
    })
    expect(
      out
        .filter((e) => e.type === 'response.function_call_arguments.delta')
        .map((e) => e.delta)
        .join(''),
    ).toBe('{"task":"tests"}')
    expect(out.at(-1)).toMatchObject({type: 'response.completed'})
    expect(sent(0).stream).toBe(true)
  })

  it('passes a request without those shapes through as it came', async () => {
    received.length = 0
    route = {targets: [target('vllm-plain')]}
    const body = JSON.stringify({
      model: 'qwen3-coder',
      input: 'Say hi.',
      tools: [{type: 'function', name: 'read_file', parameters: params('path')}],
      stream: false,
    })
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(String(received[0])).toBe(body)
  })

  it("says an upstream's error by the provider's name alone: nothing went to another family", async () => {
    refuseAll = {status: 401, body: {error: {message: 'Missing bearer authentication in header'}}}
    try {
      gateway.results.length = 0
      route = {targets: [target('vllm-keyed')]}
      const res = await post(codexBody(false))
      expect(res.status).toBe(401)
      expect(((await res.json()) as {error: {message: string}}).error.message).toBe(
        'vllm-keyed: upstream answered 401: Missing bearer authentication in header',
      )
    } finally {
      refuseAll = undefined
    }
  })

  it('keeps previous_response_id: the server holds that conversation', async () => {
    received.length = 0
    route = {targets: [target('vllm-stored')]}
    const res = await post({...codexBody(false), previous_response_id: 'resp_0', store: true})
    expect(res.status).toBe(200)
    expect(sent(0)).toMatchObject({previous_response_id: 'resp_0'})
    expect((sent(0).tools as Array<{type: string}>).map((t) => t.type)).toEqual([
      'function',
      'function',
      'function',
    ])
  })

  it("sends the server's own reasoning back as its text, as vLLM reads it; OpenAI's encrypted reasoning as it came", async () => {
    received.length = 0
    route = {targets: [target('vllm-reasoning')]}
    const body = codexBody(false)
    const input = body.input as unknown[]
    input.splice(
      2,
      0,
      // what Codex keeps of vLLM's answer on a pass-through: gpt-oss's reasoning as content
      {
        type: 'reasoning',
        id: 'rs_direct',
        summary: [],
        content: [{type: 'reasoning_text', text: 'The user wants the files.'}],
        encrypted_content: null,
      },
    )
    input.push(
      // what Codex kept of the gateway's answer: the same text as its summary
      {type: 'reasoning', id: 'rs_gw', summary: [{type: 'summary_text', text: 'Read a.ts next.'}]},
      // nothing to send back
      {type: 'reasoning', id: 'rs_empty', summary: [], encrypted_content: null},
      // without an id (a client that keeps none): one by its place, the same on every turn
      {type: 'reasoning', summary: [{type: 'summary_text', text: 'Then b.ts.'}]},
      // OpenAI's, from before a switch of provider
      {type: 'reasoning', id: 'rs_oa', summary: [], encrypted_content: 'gAAAA-opaque'},
    )
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(sent(0).input).toEqual([
      {type: 'message', role: 'user', content: [{type: 'input_text', text: 'List the files.'}]},
      {
        type: 'reasoning',
        id: 'rs_direct',
        summary: [],
        content: [{type: 'reasoning_text', text: 'The user wants the files.'}],
      },
      {type: 'function_call', call_id: 'call_1', name: 'functions__exec', arguments: '{"input":"ls"}'},
      {type: 'function_call_output', call_id: 'call_1', output: 'a.ts b.ts'},
      {
        type: 'reasoning',
        id: 'rs_gw',
        summary: [],
        content: [{type: 'reasoning_text', text: 'Read a.ts next.'}],
      },
      {type: 'reasoning', id: 'rs_5', summary: [], content: [{type: 'reasoning_text', text: 'Then b.ts.'}]},
      {type: 'reasoning', id: 'rs_oa', summary: [], encrypted_content: 'gAAAA-opaque'},
    ])
  })
})

describe('a Responses server elsewhere that refuses them', () => {
  it("learns from vLLM's 400: the request goes again as plain functions, and so do later ones at once", async () => {
    received.length = 0
    gateway.results.length = 0
    refusal = VLLM_REFUSAL
    route = {targets: [target('relay', 'sim')]}
    try {
      const first = await post(codexBody(false))
      expect(first.status).toBe(200)
      expect(received).toHaveLength(2)
      // as Codex sent it, then plain
      expect(String(received[0])).toContain('"additional_tools"')
      expect(String(received[1])).not.toMatch(/"namespace"|"custom"|additional_tools/)
      expect(((await first.json()) as {output: Array<{namespace?: string}>}).output[0].namespace).toBe(
        'functions',
      )
      const [result] = await gateway.settled(1)
      expect(result.status).toBe(200)
      expect(result.error).toMatch(
        /^relay refused Codex's tool shapes: sent again with every tool a plain function/,
      )

      const second = await post(codexBody(true))
      expect(second.status).toBe(200)
      expect(received).toHaveLength(3)
      expect(String(received[2])).not.toContain('"namespace"')
      expect(learnedAdaptations().find((a) => a.provider === 'relay')?.rules).toContain(
        "Codex's namespaces and custom tools sent as plain functions, its agent_message items as user messages (refused, or answered as plain calls)",
      )
    } finally {
      refusal = undefined
    }
  })

  it("learns from Ollama's 500 as well", async () => {
    received.length = 0
    refusal = OLLAMA_REFUSAL
    route = {targets: [target('ollama-remote', 'sim')]}
    try {
      const res = await post(codexBody(false))
      expect(res.status).toBe(200)
      expect(received).toHaveLength(2)
    } finally {
      refusal = undefined
    }
  })

  it('passes the request as it came to a server that takes it, and any other refusal as it came', async () => {
    received.length = 0
    route = {targets: [target('openai-like', 'sim')]}
    const res = await post(codexBody(false))
    expect(res.status).toBe(200)
    expect(received).toHaveLength(1)
    expect(sent(0).tools).toEqual(codexBody(false).tools)

    refusal = {status: 400, body: {error: {message: 'Invalid model', type: 'invalid_request_error'}}}
    try {
      received.length = 0
      const refused = await post(codexBody(false))
      expect(refused.status).toBe(400)
      expect(((await refused.json()) as {error: {message: string}}).error.message).toBe('Invalid model')
      expect(received).toHaveLength(1)
    } finally {
      refusal = undefined
    }
  })
})

/**
 * A Codex sub-agent's first request (multi-agent v2), cut down: its task in an `agent_message` item
 * from its parent, which was not on OpenAI's API (the task as it came, in `encrypted_content`), and
 * a function tool only, so nothing but the item makes the request plain.
 */
const childBody = () => ({
  model: 'gpt-5.6-sol',
  instructions: 'You are Codex.',
  input: [
    {
      type: 'agent_message',
      author: '/root',
      recipient: '/root/worker',
      content: [
        {type: 'input_text', text: 'Task from your parent. Payload:\n'},
        {type: 'encrypted_content', encrypted_content: 'Count the files in src.'},
      ],
    },
  ],
  tools: [{type: 'function', name: 'exec', description: 'Run.', parameters: params('cmd'), strict: false}],
  store: false,
  stream: false,
})
/** The task as the plain request carries it. */
const CHILD_TASK = {
  type: 'message',
  role: 'user',
  content: [
    {
      type: 'input_text',
      text: 'Message from /root:\nTask from your parent. Payload:\nCount the files in src.',
    },
  ],
}

describe("Codex's agent_message items (a sub-agent's task) on a Responses server that is not OpenAI's", () => {
  it('on this machine: a user message from the first request, the rest as it came', async () => {
    received.length = 0
    agentRefusal = {status: 400, body: {error: {message: 'unknown input item type: "agent_message"'}}}
    route = {targets: [target('ollama')]}
    try {
      const res = await post(childBody())
      expect(res.status).toBe(200)
      expect(received).toHaveLength(1)
      expect(sent(0).input).toEqual([CHILD_TASK])
      expect(sent(0).tools).toEqual(childBody().tools)
    } finally {
      agentRefusal = undefined
    }
  })

  for (const [server, refused] of [
    ['ollama', {status: 400, body: {error: {message: 'unknown input item type: "agent_message"'}}}],
    [
      'xai',
      {
        status: 422,
        body: 'Failed to deserialize the JSON body into the target type: input: data did not match any variant of untagged enum ModelInput at line 1 column 912',
      },
    ],
    ['relay', {status: 400, body: {error: {message: "Invalid input type 'agent_message' at index 17"}}}],
  ] as Array<[string, Refusal]>)
    it(`elsewhere: learned from ${server}'s refusal, sent again with the task as a user message, later ones at once`, async () => {
      received.length = 0
      gateway.results.length = 0
      agentRefusal = refused
      route = {targets: [target(`${server}-agents`, 'sim')]}
      try {
        const res = await post(childBody())
        expect(res.status).toBe(200)
        expect(received).toHaveLength(2)
        expect(String(received[0])).toContain('"agent_message"')
        expect(sent(1).input).toEqual([CHILD_TASK])
        const [result] = await gateway.settled(1)
        expect(result.error).toBe(
          server === 'xai'
            ? `${server}-agents refused Codex's tool shapes: sent again with every tool a plain function`
            : `${server}-agents refused Codex's agent_message item: sent again with it as a user message, every tool a plain function`,
        )
        const later = await post(childBody())
        expect(later.status).toBe(200)
        expect(received).toHaveLength(3)
        expect(sent(2).input).toEqual([CHILD_TASK])
      } finally {
        agentRefusal = undefined
      }
    })

  it("passes it as it came to a server taken for OpenAI's (which reads it), and never for a provider set so", async () => {
    for (const t of [target('openai-agents', 'sim'), target('relay-never', undefined, 'never')]) {
      received.length = 0
      route = {targets: [t]}
      const res = await post(childBody())
      expect(res.status).toBe(200)
      expect(received).toHaveLength(1)
      expect(sent(0).input).toEqual(childBody().input)
    }
  })

  it("passes OpenAI's ciphertext through as it came to a server on this machine: the codecs cannot read it", async () => {
    received.length = 0
    route = {targets: [target('ollama-cipher')]}
    const body = childBody()
    body.input[0].content[1] = {type: 'encrypted_content', encrypted_content: 'gAAAAABpZ-opaque'}
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(sent(0).input).toEqual(body.input)
  })
})

describe("a hosted server that refuses Codex's Responses Lite request", () => {
  const NOTE =
    "refused Codex's Responses Lite request: sent again as for a model that is not Lite (its tools in `tools`, without the Lite header)"
  /** Codex's tools as it sends them for a model that is not Lite: the item's after its own. */
  const standardTools = () => {
    const body = codexBody(false)
    return [...body.tools, ...(body.input[0] as {tools: unknown[]}).tools]
  }

  for (const [name, refused] of [
    ['azure', AZURE_LITE_REFUSAL],
    ['rewritten', NOT_LITE_REFUSAL],
  ] as const)
    it(`${name}: learned; the request goes again with the item's tools in tools and without Codex's internal headers, as later ones do`, async () => {
      received.length = 0
      receivedHeaders.length = 0
      gateway.results.length = 0
      liteRefusal = refused
      route = {targets: [target(name, 'sim')]}
      try {
        const first = await post(codexBody(false), CODEX_LITE_HEADERS)
        expect(first.status).toBe(200)
        expect(received).toHaveLength(2)
        // as Codex sent it, its Lite header with it; then as Codex sends it for a model that is
        // not Lite: the item's tools in `tools`, the shapes as they came, no Lite header
        expect(String(received[0])).toContain('"additional_tools"')
        expect(receivedHeaders[0]['x-openai-internal-codex-responses-lite']).toBe('true')
        const {input, ...rest} = codexBody(false)
        expect(sent(1)).toEqual({
          ...rest,
          model: 'qwen3-coder',
          input: input.slice(1),
          tools: standardTools(),
        })
        expect(
          Object.keys(receivedHeaders[1]).filter((h) => h.startsWith('x-openai-internal-codex-')),
        ).toEqual([])
        expect([receivedHeaders[1]['x-codex-turn-metadata'], receivedHeaders[1].originator]).toEqual([
          '{"turn_id":"t1"}',
          'codex_exec',
        ])
        // the upstream's answer as it came (a pass-through)
        expect(((await first.json()) as {output: Array<{name: string}>}).output[0].name).toBe(
          'functions__exec',
        )
        const [result] = await gateway.settled(1)
        expect([result.status, result.error]).toEqual([200, `${name} ${NOTE}`])

        // a later request of the model: so at once, without the header
        const second = await post(codexBody(true), CODEX_LITE_HEADERS)
        expect(second.status).toBe(200)
        expect(received).toHaveLength(3)
        expect(sent(2).tools).toEqual(standardTools())
        expect(String(received[2])).not.toContain('"additional_tools"')
        expect(receivedHeaders[2]['x-openai-internal-codex-responses-lite']).toBeUndefined()
        // (and its streamed answer, a call of `multi_agent_v1__spawn_agent` without its namespace,
        // shows a server that took the shapes but does not implement them: plain tools from now on)
        expect(learnedAdaptations().find((a) => a.provider === name)?.rules).toEqual([
          "Codex's namespaces and custom tools sent as plain functions, its agent_message items as user messages (refused, or answered as plain calls)",
        ])
        const [, later] = await gateway.settled(2)
        expect(later.error).toBe(
          `${name} answered Codex's tool multi_agent_v1__spawn_agent as a plain function call (its tool shapes taken but not implemented): later requests go with every tool a plain function, the calls given back to Codex in its shapes`,
        )
      } finally {
        liteRefusal = undefined
      }
    })

  it('never: the refusal reaches Codex as it came, nothing learned, the header kept', async () => {
    received.length = 0
    receivedHeaders.length = 0
    liteRefusal = AZURE_LITE_REFUSAL
    route = {targets: [target('azure-never', 'sim', 'never')]}
    try {
      const res = await post(codexBody(false), CODEX_LITE_HEADERS)
      expect(res.status).toBe(400)
      expect(received).toHaveLength(1)
      expect(receivedHeaders[0]['x-openai-internal-codex-responses-lite']).toBe('true')
      expect(learnedAdaptations().find((a) => a.provider === 'azure-never')).toBeUndefined()
    } finally {
      liteRefusal = undefined
    }
  })

  it('a server that then refuses the shapes: learned too, and the request goes plain (two tries)', async () => {
    received.length = 0
    receivedHeaders.length = 0
    gateway.results.length = 0
    liteRefusal = AZURE_LITE_REFUSAL
    refusal = VLLM_REFUSAL
    route = {targets: [target('azure-strict', 'sim')]}
    try {
      const res = await post(codexBody(false), CODEX_LITE_HEADERS)
      expect(res.status).toBe(200)
      expect(received).toHaveLength(3)
      expect(String(received[2])).not.toMatch(/"namespace"|"custom"|additional_tools/)
      expect(receivedHeaders[2]['x-openai-internal-codex-responses-lite']).toBeUndefined()
      const [result] = await gateway.settled(1)
      expect(result.error).toBe(
        `azure-strict ${NOTE}; azure-strict refused Codex's tool shapes: sent again with every tool a plain function`,
      )
      expect(learnedAdaptations().find((a) => a.provider === 'azure-strict')?.rules).toEqual([
        "Codex's namespaces and custom tools sent as plain functions, its agent_message items as user messages (refused, or answered as plain calls)",
      ])
    } finally {
      liteRefusal = undefined
      refusal = undefined
    }
  })

  it("learns OpenRouter's invalid_union for a tool, sent again plain", async () => {
    received.length = 0
    gateway.results.length = 0
    refusal = {status: 400, body: JSON.parse(openRouterUnion(['tools', 2]))}
    route = {targets: [target('openrouter', 'sim')]}
    try {
      const res = await post(codexBody(false), CODEX_LITE_HEADERS)
      expect(res.status).toBe(200)
      expect(received).toHaveLength(2)
      expect(String(received[1])).not.toMatch(/"namespace"|"custom"|additional_tools/)
      const [result] = await gateway.settled(1)
      expect(result.error).toBe(
        "openrouter refused Codex's tool shapes: sent again with every tool a plain function",
      )
    } finally {
      refusal = undefined
    }
  })

  it('passes the Lite header on to a server that takes the request as it came', async () => {
    received.length = 0
    receivedHeaders.length = 0
    route = {targets: [target('openai', 'sim')]}
    const res = await post(codexBody(false), CODEX_LITE_HEADERS)
    expect(res.status).toBe(200)
    expect(received).toHaveLength(1)
    expect(receivedHeaders[0]['x-openai-internal-codex-responses-lite']).toBe('true')
    expect(sent(0).input).toEqual(codexBody(false).input)
  })
})

describe("the provider's plainTools setting", () => {
  it('never: to a server on this machine as Codex sent it, and its refusal reaches Codex, nothing learned', async () => {
    received.length = 0
    gateway.results.length = 0
    route = {targets: [target('litellm', undefined, 'never')]}
    const res = await post(codexBody(false))
    expect(res.status).toBe(200)
    expect(received).toHaveLength(1)
    expect(sent(0).tools).toEqual(codexBody(false).tools)
    expect(sent(0).input).toEqual(codexBody(false).input)

    refusal = VLLM_REFUSAL
    try {
      received.length = 0
      const refused = await post(codexBody(false))
      expect(refused.status).toBe(400)
      expect(((await refused.json()) as {error: {message: string}}).error.message).toBe(
        'tool type namespace not supported',
      )
      expect(received).toHaveLength(1)
      expect(learnedAdaptations().find((a) => a.provider === 'litellm')).toBeUndefined()
      const again = await post(codexBody(false))
      expect(again.status).toBe(400)
      expect(received).toHaveLength(2)
      expect(String(received[1])).toContain('"additional_tools"')
    } finally {
      refusal = undefined
    }
  })

  it('always: to a server elsewhere as plain functions from the first request', async () => {
    received.length = 0
    gateway.results.length = 0
    refusal = VLLM_REFUSAL
    route = {targets: [target('omlx-remote', 'sim', 'always')]}
    try {
      const res = await post(codexBody(false))
      expect(res.status).toBe(200)
      expect(received).toHaveLength(1)
      expect(String(received[0])).not.toMatch(/"namespace"|"custom"|additional_tools|web_search/)
      const [result] = await gateway.settled(1)
      expect([result.status, result.error]).toEqual([200, null])
      // nothing refused, nothing learned: the setting says it
      expect(learnedAdaptations().find((a) => a.provider === 'omlx-remote')).toBeUndefined()
    } finally {
      refusal = undefined
    }
  })

  it('always: a request without the shapes passes through as it came', async () => {
    received.length = 0
    route = {targets: [target('omlx-plain', 'sim', 'always')]}
    const body = JSON.stringify({
      model: 'qwen3-coder',
      input: 'Say hi.',
      tools: [{type: 'function', name: 'read_file', parameters: params('path')}],
      stream: false,
    })
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(String(received[0])).toBe(body)
  })
})

describe('plain-tools helpers', () => {
  it('knows a server on this machine or the local network', () => {
    for (const url of [
      'http://127.0.0.1:8000/v1',
      'http://localhost:11434',
      'http://[::1]:8080',
      'http://192.168.1.20:1234/v1',
      'http://10.0.0.5',
      'http://172.20.1.1',
      'http://100.101.102.103:8000',
      'http://vllm:8000/v1',
      'http://gpu-box.local:8000',
      'http://studio.lan',
      'http://[fd12::1]:8000',
      // IPv4-mapped (the URL parser writes them in hex)
      'http://[::ffff:127.0.0.1]:1234/v1',
      'http://[::ffff:192.168.1.20]:8000',
    ])
      expect([url, isLocalServer(url)]).toEqual([url, true])
    for (const url of [
      'https://api.openai.com/v1',
      'https://openrouter.ai/api/v1',
      'http://172.32.0.1',
      'http://8.8.8.8',
      'http://[::ffff:8.8.8.8]',
      'https://relay.example.com',
      'not a url',
    ])
      expect([url, isLocalServer(url)]).toEqual([url, false])
  })

  it("knows Amazon Bedrock's runtime and Mantle endpoints by their host, whatever its case (a stream read on after its client left)", () => {
    for (const url of [
      'https://bedrock-runtime.us-east-1.amazonaws.com/openai/v1',
      'https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com',
      'https://bedrock-runtime.cn-north-1.amazonaws.com.cn/openai/v1',
      'https://bedrock-mantle.us-east-1.api.aws/v1',
      'https://BEDROCK-RUNTIME.US-EAST-1.AMAZONAWS.COM/openai/v1',
      'https://Bedrock-Mantle.eu-west-1.api.aws:443/v1',
      // an interface VPC endpoint's own names (AWS PrivateLink), regional and zonal
      'https://vpce-0abc-xyz.bedrock-runtime.us-east-1.vpce.amazonaws.com/openai/v1',
      'https://vpce-0a1b2c3d-k3h2-us-east-1a.bedrock-runtime.us-east-1.vpce.amazonaws.com',
      'https://vpce-0abc-xyz.bedrock-mantle.us-west-2.vpce.amazonaws.com/v1',
    ])
      expect([url, isAmazonBedrock(url)]).toEqual([url, true])
    for (const url of [
      'https://bedrock.us-east-1.amazonaws.com',
      'https://bedrock-agent-runtime.us-east-1.amazonaws.com',
      'https://bedrock-runtime.us-east-1.amazonaws.com.example.com/v1',
      'https://relay.example.com/bedrock-runtime.us-east-1.amazonaws.com/v1',
      'https://bedrock-mantle.us-east-1.api.aws.example.com',
      'https://litellm.internal/bedrock-',
      'not a url',
    ])
      expect([url, isAmazonBedrock(url)]).toEqual([url, false])
  })

  it("knows OpenAI's own API by its host", () => {
    for (const url of [
      'https://api.openai.com/v1',
      'https://api.openai.com',
      'https://API.openai.com:443/v1',
    ])
      expect([url, isOpenAiApi(url)]).toEqual([url, true])
    for (const url of [
      'http://api.openai.com/v1',
      'https://api.openai.com.evil.test/v1',
      'https://eu.api.openai.com.example/v1',
      'https://my.openai.azure.com/openai/v1',
      'https://openrouter.ai/api/v1',
      'http://127.0.0.1:8000/v1',
    ])
      expect([url, isOpenAiApi(url)]).toEqual([url, false])
  })

  it("moves a Lite item's tools into tools; leaves a body without the item alone", () => {
    const lite =
      '{"model":"m","input":[{"type":"additional_tools","tools":[{"type":"namespace","name":"ns"}]},"hi"]}'
    expect(JSON.parse(String(withoutLiteItem(Buffer.from(lite))))).toEqual({
      model: 'm',
      input: ['hi'],
      tools: [{type: 'namespace', name: 'ns'}],
    })
    for (const body of [
      '{"input":"hi","tools":[]}',
      '{"input": "additional_tools"',
      '{"input":"additional_tools"}',
    ])
      expect(withoutLiteItem(Buffer.from(body))).toBeUndefined()
  })

  it("knows the hosts of OpenAI's own Responses API, and finds an agent_message item by its bytes", () => {
    for (const url of [
      'https://api.openai.com/v1',
      'https://chatgpt.com/backend-api/codex',
      'https://my-res.openai.azure.com/openai/v1',
      'https://my-res.cognitiveservices.azure.com/openai/v1',
      'https://proj.services.ai.azure.com/api/projects/p/openai/v1',
    ])
      expect([url, isOpenAiResponsesHost(url)]).toEqual([url, true])
    for (const url of [
      'https://api.deepseek.com/v1',
      'https://api.x.ai/v1',
      'https://openrouter.ai/api/v1',
      'https://chatgpt.com.evil.test/v1',
      'http://api.openai.com/v1',
      'http://127.0.0.1:11434/v1',
    ])
      expect([url, isOpenAiResponsesHost(url)]).toEqual([url, false])
    expect(holdsAgentMessage(Buffer.from('{"input":[{"type":"agent_message"}]}'))).toBe(true)
    expect(holdsAgentMessage(Buffer.from('{"input":[{"type":"message","content":"agent message"}]}'))).toBe(
      false,
    )
  })

  it("knows Azure's hosts; turns a body's store false into true, ids kept; knows Azure's refusal of an unkept item", () => {
    for (const url of [
      'https://my-res.openai.azure.com/openai/v1',
      'https://MY-RES.OPENAI.AZURE.COM',
      'https://my-res.cognitiveservices.azure.com/openai/v1',
      'https://proj.services.ai.azure.com/api/projects/p/openai/v1',
    ])
      expect([url, isAzureHost(url)]).toEqual([url, true])
    for (const url of [
      'https://api.openai.com/v1',
      'https://chatgpt.com/backend-api/codex',
      'http://my-res.openai.azure.com/openai/v1',
      'https://openai.azure.com.evil.test/v1',
      'https://llm.example.com/azure/openai/v1',
    ])
      expect([url, isAzureHost(url)]).toEqual([url, false])
    const body =
      '{"model":"m","input":[{"type":"reasoning","id":"rs_1","summary":[]}],"store":false,"stream":true}'
    expect(String(withStoreTrue(Buffer.from(body)))).toBe(body.replace('"store":false', '"store":true'))
    for (const other of ['{"input":"hi","store":true}', '{"input":"hi"}', '{"input":"\\"store\\":false"}'])
      expect(withStoreTrue(Buffer.from(other))).toBeUndefined()
    expect(
      refusesStoreFalse(
        JSON.stringify({
          error: {
            message:
              "Item with id 'rs_68a' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.",
          },
        }),
      ),
    ).toBe(true)
    expect(refusesStoreFalse("Item with id 'rs_68a' not found.")).toBe(false)
  })

  it("describes a namespace Codex sent with an empty description, every other byte as it came; reads Azure's refusal of it", () => {
    const body =
      '{"input":[{"type":"additional_tools","tools":[{"type":"namespace","name":"functions","description":"","tools":[]},' +
      '{"type":"namespace","name":"clock","description":"Tools in the clock namespace.","tools":[]},' +
      '{"type": "namespace", "name": "mcp__a\\"b", "description": "", "tools": []}]}],"text":"\\"description\\":\\"\\""}'
    expect(String(withNamespaceDescriptions(Buffer.from(body)))).toBe(
      body
        .replace('"description":"","tools"', '"description":"Tools in the functions namespace.","tools"')
        .replace('"description": ""', '"description": "Tools in the mcp__a\\"b namespace."'),
    )
    for (const other of [
      '{"tools":[{"type":"namespace","name":"f","description":"F.","tools":[]}]}',
      '{"tools":[{"type":"function","name":"f","description":""}]}',
      '{"input":"\\"namespace\\" \\"description\\":\\"\\""}',
    ])
      expect(withNamespaceDescriptions(Buffer.from(other))).toBeUndefined()
    const azure = {
      error: {
        message:
          "Invalid 'input[0].tools[0].description': empty string. Expected a string with minimum length 1, but got an empty string instead.",
        type: 'invalid_request_error',
        param: 'input[0].tools[0].description',
        code: 'empty_string',
      },
    }
    expect(refusesEmptyDescription(JSON.stringify(azure))).toBe(true)
    expect(refusesEmptyDescription(JSON.stringify({error: {...azure.error, message: 'Bad.'}}))).toBe(true)
    expect(
      refusesEmptyDescription(JSON.stringify({error: {...azure.error, param: 'input', message: 'Bad.'}})),
    ).toBe(false)
    expect(refusesEmptyDescription("Invalid 'instructions': empty string.")).toBe(false)
  })

  it('finds the shapes by their bytes, and the refusals by their words', () => {
    expect(holdsOpenAiToolShapes(Buffer.from('{"tools":[{"type":"namespace"}]}'))).toBe(true)
    expect(holdsOpenAiToolShapes(Buffer.from('{"input":[{"type":"additional_tools"}]}'))).toBe(true)
    expect(holdsOpenAiToolShapes(Buffer.from('{"tools":[{"type":"function","name":"f"}]}'))).toBe(false)
    for (const words of [
      "Unsupported Responses API input item type: 'additional_tools' None",
      "'type' of tool must be 'function'",
      'tool type namespace not supported',
      "{'type': 'literal_error', 'loc': ('body', 'tools', 11, 'CodeInterpreter', 'type'), 'input': 'namespace'}",
      'Failed to parse tools: Unsupported tool type',
      'Failed to deserialize the JSON body into the target type: input: data did not match any variant of untagged enum ModelInput',
      'unknown input item type: "agent_message"',
      "Invalid input type 'agent_message' at index 17",
      JSON.stringify(AZURE_LITE_REFUSAL.body),
      JSON.stringify(NOT_LITE_REFUSAL.body),
      openRouterUnion(['tools', 12]),
      // a relay that unwrapped OpenRouter's issues: no escapes
      JSON.parse(openRouterUnion(['tools', 3], 'openrouter:web_search')).metadata.raw as string,
    ])
      expect([words, refusesOpenAiToolShapes(words)]).toEqual([words, true])
    for (const words of [
      'Invalid model',
      // OpenRouter's invalid_union for an input item, and one for a tool with no variant of its own
      openRouterUnion(['input', 3, 'content', 0]),
      openRouterUnion(['tools', 1], 'function'),
      // other refusals of Azure and OpenAI, and a text that merely names the header
      "Unsupported parameter: 'reasoning.summary' is not supported with this model.",
      'The model `gpt-6.2-sol` does not exist or you do not have access to it.',
      'Unknown header X-OpenAI-Internal-Codex-Responses-Lite',
    ])
      expect([words, refusesOpenAiToolShapes(words)]).toEqual([words, false])
  })
})

describe("DeepSeek's refusal of a call and its output apart, passed through", () => {
  const DEEPSEEK: Refusal = {
    status: 400,
    body: {
      error: {
        message: 'No tool output found for tool call call_00_a',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_request_error',
      },
    },
  }
  const turn = (between: unknown[]) => ({
    model: 'deepseek-v4-flash',
    input: [
      {type: 'message', role: 'user', content: [{type: 'input_text', text: 'List the files.'}]},
      {type: 'function_call', call_id: 'call_00_a', name: 'exec', arguments: '{}'},
      ...between,
      {type: 'function_call_output', call_id: 'call_00_a', output: 'a b'},
    ],
    tools: [{type: 'function', name: 'exec', parameters: params('cmd')}],
    store: false,
  })

  it("a history whose outputs follow their calls already: the refusal is the client's, nothing learned, one try", async () => {
    received.length = 0
    refuseAll = DEEPSEEK
    route = {targets: [target('ds-adjacent', 'sim')]}
    try {
      const res = await post(turn([]))
      expect(res.status).toBe(400)
      expect(received).toHaveLength(1)
      expect(learnedAdaptations().find((a) => a.provider === 'ds-adjacent')).toBeUndefined()
      // the same words for a history with a message between them: learned, sent again rewritten
      const hook = {type: 'message', role: 'developer', content: [{type: 'input_text', text: 'hook'}]}
      await post(turn([hook]))
      expect(received).toHaveLength(3)
      const again = JSON.parse(String(received[2])) as {input: Array<{type: string}>}
      expect(again.input.map((i) => i.type)).toEqual([
        'message',
        'function_call',
        'function_call_output',
        'message',
      ])
      expect(learnedAdaptations().find((a) => a.provider === 'ds-adjacent')).toBeDefined()
    } finally {
      refuseAll = undefined
    }
  })
})

describe('calledAsFunction: a Codex tool shape answered as a plain function call', () => {
  const body = Buffer.from(
    JSON.stringify({
      input: [
        {type: 'additional_tools', tools: [{type: 'custom', name: 'exec'}]},
        {type: 'message', role: 'user', content: 'hi'},
      ],
      tools: [
        {type: 'function', name: 'exec_command', parameters: {}},
        {type: 'custom', name: 'apply_patch', format: {type: 'grammar'}},
        {type: 'namespace', name: 'mcp__fs', tools: [{type: 'function', name: 'read'}]},
      ],
    }),
  )
  it.each([
    [['apply_patch'], 'apply_patch'],
    [['exec'], 'exec'],
    [['read'], 'read'],
    [['mcp__fs__read'], 'mcp__fs__read'],
    [['mcp__fs.read'], 'mcp__fs.read'],
    [['exec_command', 'apply_patch'], 'apply_patch'],
    [['exec_command'], undefined],
    [[], undefined],
  ])('%j -> %s', (called, found) => {
    expect(calledAsFunction(body, called)).toBe(found)
  })
  it("reads the request's own tools: a namespace first, the words in a message's text", () => {
    const nested = Buffer.from(
      JSON.stringify({
        input: [{type: 'message', role: 'user', content: 'write {"tools":[{"type":"custom","name":"x"}]}'}],
        tools: [
          {type: 'namespace', name: 'ns', tools: [{type: 'function', name: 'inner'}]},
          {type: 'custom', name: 'apply_patch'},
        ],
        tool_choice: 'auto',
      }),
    )
    expect(calledAsFunction(nested, ['apply_patch'])).toBe('apply_patch')
    expect(calledAsFunction(nested, ['ns__inner'])).toBe('ns__inner')
    expect(calledAsFunction(nested, ['x'])).toBeUndefined()
    // a tool search's output in the history holds `tools` of its own, before the request's
    const searched = Buffer.from(
      JSON.stringify({
        input: [{type: 'tool_search_output', call_id: 'c', tools: [{type: 'function', name: 'found'}]}],
        tools: [{type: 'custom', name: 'apply_patch'}],
      }),
    )
    expect(calledAsFunction(searched, ['apply_patch'])).toBe('apply_patch')
  })
  it('a body without the shapes is not parsed, nor one that is no JSON', () => {
    expect(
      calledAsFunction(Buffer.from('{"tools":[{"type":"function","name":"apply_patch"}]}'), ['apply_patch']),
    ).toBeUndefined()
    expect(calledAsFunction(Buffer.from('{"custom" broken'), ['apply_patch'])).toBeUndefined()
  })
})

describe("the simulator's Responses provider: which server a request stands for", () => {
  it('a quirk of any server that is not OpenAI stands for that server (its system messages folded), none for OpenAI', () => {
    for (const quirk of [
      'adjacent-outputs',
      'reasoning-text',
      'plain-tools',
      'custom-as-function',
      'xai-params',
      'ollama-effort',
      'text-tool-results',
    ]) {
      expect(simStandsForOtherServer(`sim-mini+${quirk}`, undefined), quirk).toBe(true)
      expect(simStandsForOtherServer('sim-mini', `prefix-cache,${quirk}`), quirk).toBe(true)
    }
    expect(simStandsForOtherServer('gpt-5.5', undefined)).toBe(false)
    expect(simStandsForOtherServer('gpt-5.5+prefix-cache', 'no-reasoning')).toBe(false)
  })
})
