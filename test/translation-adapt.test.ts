/**
 * A translated chat upstream that refuses an optional field the translation sent: Claude Code's
 * effort as `reasoning_effort` to a model without reasoning (OpenAI's gpt-4.1), `max_tokens` and a
 * `temperature` to a reasoning model (o3). The gateway learns the refusal from the 400, sends the
 * request again without the field (or with `max_completion_tokens`), and sends the next requests
 * that way from the start; a refusal past what one request may learn reaches the client as it came.
 * The real daemon, the simulator's `no-reasoning` and `o-series` quirks, the official Anthropic SDK.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

const MODELS: Record<string, string> = {
  plain: 'sim-mini+no-reasoning',
  o: 'sim-mini+o-series',
  both: 'sim-mini+no-reasoning+o-series',
  deepseek: 'sim-mini+max-tokens-8192',
  dsjson: 'sim-mini+deepseek-json',
  dsjson2: 'sim-reasoner+deepseek-json',
  mistral: 'sim-mini+mistral-extra',
  nojson: 'sim-mini+no-json-mode',
  o3: 'sim-mini+no-minimal-effort',
  mistralchat: 'sim-mini+mistral-ids+mistral-order',
  openai40: 'sim-mini+max-id-40',
  cerebras: 'sim-mini+reasoning-not-back',
  kimi: 'sim-mini+kimi-temperature',
  kimithink: 'sim-mini+reasoning-content-required',
}

/** Policies whose routes translate to the simulator's Responses provider (OpenAI's Responses API). */
const RESPONSES_MODELS: Record<string, string> = {
  'resp-plain': 'gpt-4.1+no-reasoning',
  'resp-o3': 'o3+no-minimal-effort',
}

/** Policies whose routes translate to the simulator's Gemini and Messages providers. */
const OTHER_TARGETS: Record<string, {provider: string; model: string}> = {
  'gemini-pro': {provider: 'sim-gemini', model: 'gemini-2.5-pro+thinking-only'},
  opus: {provider: 'sim-messages', model: 'claude-opus-4+max-output-32000'},
  'gemini-flash': {provider: 'sim-gemini', model: 'gemini-2.0-flash+max-output-8192'},
}

beforeAll(async () => {
  const policy = (id: string, provider: string, model: string, families: string[]) =>
    simPolicy(
      `adapt-${id}`,
      Object.fromEntries(families.map((f) => [f, [{provider, model, translate: true}]])),
    )
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies([
    ...Object.entries(MODELS).map(([id, model]) =>
      policy(id, 'sim-chat', model, ['messages', 'responses', 'gemini']),
    ),
    ...Object.entries(RESPONSES_MODELS).map(([id, model]) =>
      policy(id, 'sim-responses', model, ['messages', 'chat', 'gemini']),
    ),
    policy('gemini-pro', OTHER_TARGETS['gemini-pro'].provider, OTHER_TARGETS['gemini-pro'].model, [
      'messages',
      'chat',
    ]),
    policy('opus', OTHER_TARGETS.opus.provider, OTHER_TARGETS.opus.model, ['chat', 'gemini']),
    policy('gemini-flash', OTHER_TARGETS['gemini-flash'].provider, OTHER_TARGETS['gemini-flash'].model, [
      'messages',
    ]),
  ]))
  for (const id of [...Object.keys(MODELS), ...Object.keys(RESPONSES_MODELS), ...Object.keys(OTHER_TARGETS)])
    keys.set(id, await issueKeyOverApi(base, `adapt-${id}`, 'generic_agent', `adapt-${id}`))
}, 120_000)

afterAll(() => stop())

/** The chat (or Responses) requests the simulator got since the last call, oldest first. */
const upstreamCalls = (path = /\/chat\/completions$/): Promise<Array<Record<string, any>>> =>
  takeSimCalls(simOrigin, path)

/** The log rows of the agent whose project is `name`, oldest first, once there are `count`. */
const logRows = (name: string, count = 1) => projectLogRows(base, name, count)

/** Claude Code's default request: adaptive thinking, effort high (output_config). */
const claudeCode = (extra: Record<string, unknown> = {}): any => ({
  model: 'claude-opus-4-8',
  max_tokens: 1024,
  thinking: {type: 'adaptive'},
  output_config: {effort: 'high'},
  messages: [{role: 'user', content: 'Say hello.'}],
  ...extra,
})

const text = (m: any): string =>
  m.content
    .filter((b: any) => b.type === 'text')
    .map((b: any) => b.text)
    .join('')

describe('a translated chat upstream that refuses a field', {timeout: 60_000}, () => {
  it('a model without reasoning: reasoning_effort learned away at once, and left out from then on', async () => {
    await upstreamCalls()
    const client = new Anthropic({baseURL: base, apiKey: keys.get('plain')!, maxRetries: 0})
    const first = await client.messages.create(claudeCode())
    expect(text(first)).toContain('Hello from')
    const calls = await upstreamCalls()
    expect(calls.map((c) => c.reasoning_effort)).toEqual(['high', undefined])
    // everything else went again as it was
    const {reasoning_effort: _, ...rest} = calls[0]
    expect(calls[1]).toEqual(rest)

    // the log row of the first says what went again, once
    const rows = await logRows('adapt-plain')
    expect(rows.map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-chat refused reasoning_effort: sent again without it'],
    ])

    const second = await client.messages.stream(claudeCode()).finalMessage()
    expect(text(second)).toContain('Hello from')
    const later = await upstreamCalls()
    expect(later).toHaveLength(1)
    expect(later[0]).not.toHaveProperty('reasoning_effort')
    expect(later[0].stream).toBe(true)
  })

  it('a reasoning model: max_tokens as max_completion_tokens, then the temperature left out', async () => {
    await upstreamCalls()
    const client = new Anthropic({baseURL: base, apiKey: keys.get('o')!, maxRetries: 0})
    const answer = await client.messages.create(claudeCode({temperature: 0.2, thinking: undefined}))
    expect(text(answer)).toContain('Hello from')
    const calls = await upstreamCalls()
    expect(calls.map((c) => [c.max_tokens, c.max_completion_tokens, c.temperature])).toEqual([
      [1024, undefined, 0.2],
      [undefined, 1024, 0.2],
      [undefined, 1024, undefined],
    ])
    await client.messages.create(claudeCode({temperature: 0.2, max_tokens: 77, thinking: undefined}))
    const later = await upstreamCalls()
    expect(later.map((c) => [c.max_tokens, c.max_completion_tokens, c.temperature])).toEqual([
      [undefined, 77, undefined],
    ])
  })

  it("DeepSeek's output limit: Claude Code's max_tokens of 64 000 capped at the 8 192 its error states", async () => {
    await upstreamCalls()
    const client = new Anthropic({baseURL: base, apiKey: keys.get('deepseek')!, maxRetries: 0})
    // (the SDK streams a request for that many tokens, as Claude Code does)
    const answer = await client.messages.stream(claudeCode({max_tokens: 64000})).finalMessage()
    expect(text(answer)).toContain('Hello from')
    expect((await upstreamCalls()).map((c) => c.max_tokens)).toEqual([64000, 8192])
    const rows = await logRows('adapt-deepseek')
    expect(rows.map((r) => r.error)).toEqual([
      'sim-chat refused max_tokens 64000: sent again with 8192, its limit',
    ])
    // from then on: capped from the start, and a smaller one left as it is
    await client.messages.stream(claudeCode({max_tokens: 32000})).finalMessage()
    await client.messages.create(claudeCode({max_tokens: 1000}))
    expect((await upstreamCalls()).map((c) => c.max_tokens)).toEqual([8192, 1000])
  })

  it("Mistral's 422 for the fields it does not take: both left out in one go", async () => {
    await upstreamCalls()
    const client = new Anthropic({baseURL: base, apiKey: keys.get('mistral')!, maxRetries: 0})
    const params = claudeCode({metadata: {user_id: 'ada'}})
    const answer = await client.messages.create(params)
    expect(text(answer)).toContain('Hello from')
    const calls = await upstreamCalls()
    expect(calls.map((c) => [c.reasoning_effort, c.user])).toEqual([
      ['high', 'ada'],
      [undefined, undefined],
    ])
    const rows = await logRows('adapt-mistral')
    expect(rows.map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-chat refused reasoning_effort, user: sent again without them'],
    ])
  })

  it('a refusal past three in one request reaches the client as the upstream said it; the next request learns on', async () => {
    await upstreamCalls()
    const client = new Anthropic({baseURL: base, apiKey: keys.get('both')!, maxRetries: 0})
    const params = claudeCode({temperature: 0.5, top_p: 0.5})
    const error = await client.messages.create(params).then(
      () => undefined,
      (e: unknown) => e as {status: number; message: string},
    )
    expect(error?.status).toBe(400)
    expect(error?.message).toMatch(/'top_p' does not support 0.5/)
    expect(await upstreamCalls()).toHaveLength(4)
    // its row says what went again, beside the refusal that reached the client
    const [row] = await logRows('adapt-both')
    expect(row.status).toBe(400)
    expect(row.error).toMatch(/'top_p' does not support 0.5/)
    for (const change of [
      'sim-chat refused reasoning_effort: sent again without it',
      'sim-chat refused max_tokens: sent again as max_completion_tokens',
      'sim-chat refused temperature: sent again without it',
    ])
      expect(row.error).toContain(change)
    // a stream goes again the same way: the refusal comes before its first byte
    const answer = await client.messages.stream(params).finalMessage()
    expect(text(answer)).toContain('Hello from')
    const later = await upstreamCalls()
    expect(later).toHaveLength(2)
    expect(later[1].stream).toBe(true)
    for (const field of ['reasoning_effort', 'max_tokens', 'temperature', 'top_p'])
      expect(later[1]).not.toHaveProperty(field)
    expect(later[1].max_completion_tokens).toBe(1024)
  })

  it('Gemini CLI on Kimi, which fixes the temperature at 1 (no `param`): its temperature 0 learned away', async () => {
    await upstreamCalls()
    const ai = new GoogleGenAI({apiKey: keys.get('kimi')!, httpOptions: {baseUrl: base}})
    const ask = () =>
      ai.models.generateContent({
        model: 'gemini-2.5-pro',
        contents: [{role: 'user', parts: [{text: 'Say hello.'}]}],
        config: {temperature: 0, topP: 1},
      })
    expect((await ask()).text).toContain('Hello from')
    const calls = await upstreamCalls()
    expect(calls.map((c) => [c.temperature, c.top_p])).toEqual([
      [0, 1],
      [undefined, 1],
    ])
    const [row] = await logRows('adapt-kimi')
    expect([row.status, row.error]).toEqual([200, 'sim-chat refused temperature: sent again without it'])
    // the next request goes without it from the start
    expect((await ask()).text).toContain('Hello from')
    const later = await upstreamCalls()
    expect(later).toHaveLength(1)
    expect(later[0]).not.toHaveProperty('temperature')
  })
})

describe('a translated chat upstream that refuses how JSON or an effort was asked', {timeout: 60_000}, () => {
  const schema = {
    type: 'object',
    properties: {city: {type: 'string'}, days: {type: 'integer'}},
    required: ['city', 'days'],
  }
  const instruction = `Respond with one JSON object only, with no other text, that matches this JSON schema:\n${JSON.stringify(schema)}`
  const system = (call: Record<string, any>) =>
    call.messages[0].role === 'system' ? call.messages[0].content : ''

  it('`claude -p --json-schema` on DeepSeek: JSON mode with the schema in the system prompt, learned once', async () => {
    await upstreamCalls()
    const client = new Anthropic({baseURL: base, apiKey: keys.get('dsjson')!, maxRetries: 0})
    const params = claudeCode({
      system: 'Be brief.',
      output_config: {effort: 'high', format: {type: 'json_schema', schema}},
    })
    const answer = await client.messages.create(params)
    expect(answer.stop_reason).toBe('end_turn')
    // the model followed the instruction: the answer's text is JSON of the schema
    expect(JSON.parse(text(answer))).toEqual({city: expect.any(String), days: expect.any(Number)})
    const calls = await upstreamCalls()
    expect(calls.map((c) => c.response_format?.type)).toEqual(['json_schema', 'json_object'])
    expect(calls[0].response_format.json_schema.schema).toEqual(schema)
    expect(system(calls[1])).toBe(`Be brief.\n\n${instruction}`)
    // everything else went again as it was
    const {response_format: _a, messages: _b, ...rest} = calls[0]
    const {response_format: _c, messages: _d, ...again} = calls[1]
    expect(again).toEqual(rest)
    expect(calls[1].messages.slice(1)).toEqual(calls[0].messages.slice(1))
    const rows = await logRows('adapt-dsjson')
    expect(rows.map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-chat refused response_format json_schema: sent again as json_object, the schema in the system prompt',
      ],
    ])
    // from then on JSON mode from the start, streamed too
    await client.messages.stream(params).finalMessage()
    const later = await upstreamCalls()
    expect(later.map((c) => [c.response_format?.type, c.stream])).toEqual([['json_object', true]])
    expect(system(later[0])).toContain(instruction)
  })

  it('sixteen requests refused at once: each goes again in JSON mode, none drops it', async () => {
    await upstreamCalls()
    const client = new Anthropic({baseURL: base, apiKey: keys.get('dsjson2')!, maxRetries: 0})
    const params = claudeCode({output_config: {format: {type: 'json_schema', schema}}, thinking: undefined})
    const answers = await Promise.all(Array.from({length: 16}, () => client.messages.create(params)))
    for (const answer of answers)
      expect(JSON.parse(text(answer))).toEqual({city: expect.any(String), days: expect.any(Number)})
    const calls = await upstreamCalls()
    // every request sent JSON mode in the end, and never went without it
    expect(calls.filter((c) => c.response_format?.type === 'json_object')).toHaveLength(16)
    expect(calls.filter((c) => c.response_format === undefined)).toHaveLength(0)
    const rows = await logRows('adapt-dsjson2', 16)
    expect(rows.map((r) => r.status)).toEqual(Array(16).fill(200))
    expect(rows.filter((r) => r.error?.includes('refused response_format json_schema'))).toHaveLength(1)
    // (a request encoded after the first one learned goes in JSON mode at once, without a note)
    for (const row of rows.filter((r) => r.error !== null))
      expect(row.error).toMatch(
        /^sim-chat refused (response_format json_schema: sent again as json_object|it too: sent again with what another request learned meanwhile)/,
      )
  })

  it("Gemini CLI's JSON call on a model without JSON output: the schema refused, then JSON mode, then the instruction alone", async () => {
    await upstreamCalls()
    const ai = new GoogleGenAI({apiKey: keys.get('nojson')!, httpOptions: {baseUrl: base}})
    const answer = await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: [{role: 'user', parts: [{text: 'Which city, how many days?'}]}],
      config: {responseMimeType: 'application/json', responseJsonSchema: schema},
    })
    expect(answer.candidates?.[0]?.finishReason).toBe('STOP')
    expect(JSON.parse(answer.text!)).toEqual({city: expect.any(String), days: expect.any(Number)})
    const calls = await upstreamCalls()
    expect(calls.map((c) => c.response_format?.type ?? null)).toEqual(['json_schema', 'json_object', null])
    expect(system(calls[2])).toBe(instruction)
    const [row] = await logRows('adapt-nojson')
    expect(row.status).toBe(200)
    expect(row.error).toContain('sim-chat refused response_format json_schema: sent again as json_object')
    expect(row.error).toContain('sim-chat refused response_format: sent again without it')
    // JSON mode without a schema (the next-speaker check's kind) goes the same way at once
    await ai.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: [{role: 'user', parts: [{text: 'Who speaks next?'}]}],
      config: {responseMimeType: 'application/json'},
    })
    const later = await upstreamCalls()
    expect(later).toHaveLength(1)
    expect(later[0]).not.toHaveProperty('response_format')
    expect(system(later[0])).toBe('Respond with one JSON object only, with no other text.')
  })

  it("Codex's minimal effort on a model that takes low, medium and high: sent as low", async () => {
    await upstreamCalls()
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('o3')!, maxRetries: 0})
    const answer = await openai.responses.create({
      model: 'gpt-5-codex',
      input: 'Say hello.',
      reasoning: {effort: 'minimal'},
      store: false,
    })
    expect(answer.output_text).toContain('Hello from')
    expect((await upstreamCalls()).map((c) => c.reasoning_effort)).toEqual(['minimal', 'low'])
    const rows = await logRows('adapt-o3')
    expect(rows.map((r) => r.error)).toEqual([
      'sim-chat refused reasoning_effort minimal: sent again with low',
    ])
    // a medium effort the model takes goes as it is
    await openai.responses.create({
      model: 'gpt-5-codex',
      input: 'Again.',
      reasoning: {effort: 'medium'},
      store: false,
    })
    expect((await upstreamCalls()).map((c) => c.reasoning_effort)).toEqual(['medium'])
  })
})

describe('a translated chat upstream that holds the history to its own rules', {timeout: 60_000}, () => {
  // a conversation begun on Anthropic (its `toolu_` id), whose last user turn carries the tool's
  // result and a system reminder, as Claude Code sends them
  const TOOLU = 'toolu_01A09q90qw90lq917835lq9'
  const conversation = (stream = false): any => ({
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    stream,
    tools: [
      {
        name: 'Bash',
        description: 'Run a command',
        input_schema: {type: 'object', properties: {command: {type: 'string'}}},
      },
    ],
    messages: [
      {role: 'user', content: 'List the files.'},
      {
        role: 'assistant',
        content: [
          {type: 'text', text: 'Listing them.'},
          {type: 'tool_use', id: TOOLU, name: 'Bash', input: {command: 'ls'}},
        ],
      },
      {
        role: 'user',
        content: [
          {type: 'tool_result', tool_use_id: TOOLU, content: 'a.txt'},
          {type: 'text', text: '<system-reminder>The todo list is empty.</system-reminder>'},
        ],
      },
    ],
  })

  it('Claude Code on Mistral after another vendor: its ids and the reminder after the tool result, both learned, then sent that way from the start', async () => {
    await upstreamCalls()
    const client = new Anthropic({baseURL: base, apiKey: keys.get('mistralchat')!, maxRetries: 0})
    const answer = await client.messages.create(conversation())
    // the model calls the tool again (the simulator's answer to a user turn when tools are offered)
    expect(answer.stop_reason).toBe('tool_use')
    const calls = await upstreamCalls()
    expect(calls).toHaveLength(3)
    expect(calls[0].messages[1].tool_calls[0].id).toBe(TOOLU)
    const last = calls[2].messages
    const id = last[1].tool_calls[0].id
    expect(id).toMatch(/^[a-zA-Z0-9]{9}$/)
    expect(last.map((m: any) => [m.role, m.tool_call_id ?? null])).toEqual([
      ['user', null],
      ['assistant', null],
      ['tool', id],
      ['assistant', null],
      ['user', null],
    ])
    expect(last[2].content).toBe('a.txt')
    expect(last[3].content).toBe('Tool results received.')
    expect(last[4].content).toBe('<system-reminder>The todo list is empty.</system-reminder>')
    const rows = await logRows('adapt-mistralchat')
    expect(rows.map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-chat refused a tool call id (it takes 9 letters and digits): sent again with every id in that shape; ' +
          'sim-chat refused a user message right after tool results: sent again with an assistant message between',
      ],
    ])

    // the next request (a stream) goes once, with the same id for the same call
    const again = await client.messages.stream(conversation(true)).finalMessage()
    expect(again.stop_reason).toBe('tool_use')
    const later = await upstreamCalls()
    expect(later).toHaveLength(1)
    expect(later[0].messages[1].tool_calls[0].id).toBe(id)
    expect(later[0].messages[2].tool_call_id).toBe(id)
    expect(later[0].messages[3]).toEqual({role: 'assistant', content: 'Tool results received.'})
  })

  it('Claude Code on Cerebras, which writes `reasoning` and refuses `reasoning_content` back: turn 2 in its own field; a DeepSeek turn renamed once learned', async () => {
    await upstreamCalls()
    const client = new Anthropic({baseURL: base, apiKey: keys.get('cerebras')!, maxRetries: 0})
    const tools = [
      {
        name: 'Bash',
        description: 'Run a command',
        input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}},
      },
    ]
    const ask = {role: 'user' as const, content: 'List the files.'}
    const first = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      tools,
      messages: [ask],
    })
    expect(first.content.map((b) => b.type)).toEqual(['thinking', 'tool_use'])
    const call = first.content.find((b) => b.type === 'tool_use')!
    const turn2 = (assistant: any[]) =>
      client.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 1024,
        tools,
        messages: [
          ask,
          {role: 'assistant', content: assistant},
          {role: 'user', content: [{type: 'tool_result', tool_use_id: call.id, content: 'a.txt'}]},
        ],
      })
    expect(text(await turn2(first.content))).toBe('The tool answered: a.txt')
    const calls = await upstreamCalls()
    expect(calls).toHaveLength(2)
    expect(calls[1].messages[1].reasoning).toBeTypeOf('string')
    expect(calls[1].messages[1]).not.toHaveProperty('reasoning_content')
    expect((await logRows('adapt-cerebras', 2)).map((r) => [r.status, r.error])).toEqual([
      [200, null],
      [200, null],
    ])

    // the same turn as DeepSeek wrote it (its reasoning_content, after a switch of provider):
    // refused once, then sent as `reasoning`
    const deepseek = first.content.map((b: any) =>
      b.type === 'thinking' ? {...b, signature: 'gwx1.chat.'} : b,
    )
    expect(text(await turn2(deepseek))).toBe('The tool answered: a.txt')
    const again = await upstreamCalls()
    expect(again).toHaveLength(2)
    expect(again[0].messages[1].reasoning_content).toBeTypeOf('string')
    expect(again[1].messages[1].reasoning).toBe(again[0].messages[1].reasoning_content)
    expect(again[1].messages[1]).not.toHaveProperty('reasoning_content')
    expect((await logRows('adapt-cerebras', 3))[2].error).toBe(
      'sim-chat refused reasoning_content in its history: sent again as reasoning',
    )
  })

  it('Claude Code on Kimi, whose turn streamed no reasoning before its call: turn 2 learns an empty reasoning_content, turn 3 sends it from the start', async () => {
    await upstreamCalls()
    const client = new Anthropic({baseURL: base, apiKey: keys.get('kimithink')!, maxRetries: 0})
    const tools = [
      {
        name: 'Bash',
        description: 'Run a command',
        input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}},
      },
    ]
    const ask = {role: 'user' as const, content: 'List the files.'}
    const first = await client.messages.create({model: 'kimi-k2.5', max_tokens: 1024, tools, messages: [ask]})
    expect(first.content.map((b) => b.type)).toEqual(['tool_use'])
    const call = first.content.find((b) => b.type === 'tool_use')!
    const history = [
      ask,
      {role: 'assistant' as const, content: first.content},
      {
        role: 'user' as const,
        content: [{type: 'tool_result' as const, tool_use_id: call.id, content: 'a.txt'}],
      },
    ]
    const second = await client.messages.create({
      model: 'kimi-k2.5',
      max_tokens: 1024,
      tools,
      messages: history,
    })
    expect(text(second)).toBe('The tool answered: a.txt')
    const calls = await upstreamCalls()
    expect(calls).toHaveLength(3)
    expect(calls[1].messages[1]).not.toHaveProperty('reasoning_content')
    expect(calls[2].messages[1].reasoning_content).toBe('')
    const rows = await logRows('adapt-kimithink', 2)
    expect(rows.map((r) => [r.status, r.error])).toEqual([
      [200, null],
      [
        200,
        'sim-chat refused an assistant turn without reasoning_content: sent again with it on every assistant turn (the reasoning there, or empty)',
      ],
    ])
    // turn 3 (a stream) goes once, its history's tool call turn with the same empty reasoning
    const third = await client.messages
      .stream({
        model: 'kimi-k2.5',
        max_tokens: 1024,
        tools,
        messages: [
          ...history,
          {role: 'assistant', content: second.content},
          {role: 'user', content: 'Thanks.'},
        ],
      })
      .finalMessage()
    expect(third.stop_reason).not.toBeNull()
    const later = await upstreamCalls()
    expect(later).toHaveLength(1)
    expect(JSON.stringify(later[0].messages[1])).toBe(JSON.stringify(calls[2].messages[1]))
  })

  it("Codex's long call ids on an OpenAI chat model: shortened to its 40 characters, the call and its output alike", async () => {
    await upstreamCalls()
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('openai40')!, maxRetries: 0})
    const long = `fc_${'0f0e50a1476a6c35006912c58dc9f8819192c25864eb16f07f'}`
    const answer = await openai.responses.create({
      model: 'gpt-5-codex',
      store: false,
      input: [
        {role: 'user', content: 'List the files.'},
        {type: 'function_call', call_id: long, name: 'shell', arguments: '{"command":["ls"]}'},
        {type: 'function_call_output', call_id: long, output: 'a.txt'},
      ],
      tools: [{type: 'function', name: 'shell', parameters: {type: 'object', properties: {}}, strict: false}],
    })
    expect(answer.output_text).toBe('The tool answered: a.txt')
    const calls = await upstreamCalls()
    expect(calls).toHaveLength(2)
    const id = calls[1].messages.find((m: any) => m.role === 'tool').tool_call_id
    expect(id).toHaveLength(40)
    // its start kept, readable; the rest derived from the whole id
    expect(id.slice(0, 28)).toBe(long.slice(0, 28))
    expect(calls[1].messages.find((m: any) => m.tool_calls).tool_calls[0].id).toBe(id)
    const rows = await logRows('adapt-openai40')
    expect(rows.map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-chat refused a tool call id over 40 characters: sent again with long ids shortened'],
    ])
  })
})

describe('a translated Responses upstream that refuses a field', {timeout: 60_000}, () => {
  const responsesCalls = () => upstreamCalls(/\/responses$/)

  it("Claude Code on gpt-4.1 through the Responses API: its effort's reasoning learned away", async () => {
    await responsesCalls()
    const client = new Anthropic({baseURL: base, apiKey: keys.get('resp-plain')!, maxRetries: 0})
    const answer = await client.messages.create(claudeCode())
    expect(text(answer)).toContain('PONG from sim')
    const calls = await responsesCalls()
    expect(calls.map((c) => c.reasoning?.effort ?? null)).toEqual(['high', null])
    expect(calls[1]).not.toHaveProperty('reasoning')
    const rows = await logRows('adapt-resp-plain')
    expect(rows.map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-responses refused reasoning: sent again without it'],
    ])
    await client.messages.stream(claudeCode()).finalMessage()
    const later = await responsesCalls()
    expect(later).toHaveLength(1)
    expect(later[0]).not.toHaveProperty('reasoning')
  })

  it("a chat client's minimal effort on o3 through the Responses API: sent as low", async () => {
    await responsesCalls()
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('resp-o3')!, maxRetries: 0})
    const answer = await openai.chat.completions.create({
      model: 'gpt-5',
      messages: [{role: 'user', content: 'Say hello.'}],
      reasoning_effort: 'minimal',
    })
    expect(answer.choices[0].message.content).toContain('PONG from sim')
    expect((await responsesCalls()).map((c) => c.reasoning?.effort)).toEqual(['minimal', 'low'])
    const rows = await logRows('adapt-resp-o3')
    expect(rows.map((r) => r.error)).toEqual([
      'sim-responses refused reasoning.effort minimal: sent again with low',
    ])
  })
})

describe(
  'translated Gemini and Messages upstreams that refuse a thinking budget or an output size',
  {timeout: 60_000},
  () => {
    const geminiCalls = () => upstreamCalls(/:(?:stream)?generateContent$/i)
    const budgets = (calls: Array<Record<string, any>>) =>
      calls.map((c) => c.generationConfig?.thinkingConfig?.thinkingBudget ?? null)

    it('Claude Code with thinking off on Gemini 2.5 Pro, which cannot turn it off: the budget of 0 left out', async () => {
      await geminiCalls()
      const client = new Anthropic({baseURL: base, apiKey: keys.get('gemini-pro')!, maxRetries: 0})
      const params = claudeCode({thinking: {type: 'disabled'}, output_config: undefined})
      const answer = await client.messages.create(params)
      expect(answer.content.length).toBeGreaterThan(0)
      expect(budgets(await geminiCalls())).toEqual([0, null])
      const rows = await logRows('adapt-gemini-pro')
      expect(rows.map((r) => [r.status, r.error])).toEqual([
        [200, 'sim-gemini refused thinkingBudget 0: sent again without it, the model decides'],
      ])
      // a budget outside the model's range, which its error does not state: left out too
      const big = await client.messages
        .stream(
          claudeCode({
            max_tokens: 64000,
            thinking: {type: 'enabled', budget_tokens: 40000},
            output_config: undefined,
          }),
        )
        .finalMessage()
      expect(big.stop_reason).toBeTruthy()
      expect(budgets(await geminiCalls())).toEqual([40000, null])
      // both learned: each goes without from the start, a budget in range as it is
      await client.messages.create(params)
      await client.messages.create(
        claudeCode({
          // (a limit that leaves the answer its 4 096 beside the budget)
          max_tokens: 8000,
          thinking: {type: 'enabled', budget_tokens: 2048},
          output_config: undefined,
        }),
      )
      expect(budgets(await geminiCalls())).toEqual([null, 2048])
    })

    it("Claude Code's 32 000 output tokens on Gemini 2.0 Flash: capped at the 8 192 Google's error states", async () => {
      await geminiCalls()
      const client = new Anthropic({baseURL: base, apiKey: keys.get('gemini-flash')!, maxRetries: 0})
      const params = claudeCode({max_tokens: 32000, thinking: undefined, output_config: undefined})
      const answer = await client.messages.stream(params).finalMessage()
      expect(answer.content.length).toBeGreaterThan(0)
      const maxima = (calls: Array<Record<string, any>>) =>
        calls.map((c) => c.generationConfig?.maxOutputTokens)
      expect(maxima(await geminiCalls())).toEqual([32000, 8192])
      const rows = await logRows('adapt-gemini-flash')
      expect(rows.map((r) => [r.status, r.error])).toEqual([
        [200, 'sim-gemini refused max_tokens 32000: sent again with 8192, its limit'],
      ])
      // learned: the next request goes with the limit from the start
      await client.messages.stream(params).finalMessage()
      expect(maxima(await geminiCalls())).toEqual([8192])
    })

    it("a chat client's max_tokens above Claude Opus 4's output limit: capped at the 32 000 Anthropic's error states", async () => {
      const messagesCalls = () => upstreamCalls(/\/v1\/messages$/)
      await messagesCalls()
      const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('opus')!, maxRetries: 0})
      const answer = await openai.chat.completions.create({
        model: 'gpt-5',
        max_tokens: 64000,
        messages: [{role: 'user', content: 'Say hello.'}],
      })
      expect(answer.choices[0].message.content).toBeTruthy()
      expect((await messagesCalls()).map((c) => c.max_tokens)).toEqual([64000, 32000])
      const rows = await logRows('adapt-opus')
      expect(rows.map((r) => r.error)).toEqual([
        'sim-messages refused max_tokens 64000: sent again with 32000, its limit',
      ])
    })
  },
)

describe('a history whose tool calls and results do not pair up', {timeout: 60_000}, () => {
  it("a chat client's interrupted call on Claude: an error result for it, the user's words after", async () => {
    const messagesCalls = () => upstreamCalls(/\/v1\/messages$/)
    await messagesCalls()
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('opus')!, maxRetries: 0})
    const answer = await openai.chat.completions.create({
      model: 'gpt-5',
      tools: [
        {type: 'function', function: {name: 'read', parameters: {type: 'object', properties: {}}}},
        {type: 'function', function: {name: 'run', parameters: {type: 'object', properties: {}}}},
      ],
      messages: [
        {role: 'user', content: 'Read a.txt, then run the tests.'},
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {id: 'call_read', type: 'function', function: {name: 'read', arguments: '{}'}},
            {id: 'call_run', type: 'function', function: {name: 'run', arguments: '{}'}},
          ],
        },
        {role: 'tool', tool_call_id: 'call_read', content: 'a.txt holds 3 lines'},
        // the user stopped the second call: the client sent no result for it
        {role: 'user', content: 'Stop, no tests.'},
      ],
    })
    expect(answer.choices[0].message).toBeTruthy()
    const [sent] = await messagesCalls()
    expect(
      sent.messages.at(-1).content.map((b: any) => [b.type, b.tool_use_id ?? null, b.is_error ?? null]),
    ).toEqual([
      ['tool_result', 'call_run', true],
      ['tool_result', 'call_read', null],
      ['text', null, null],
    ])
    const rows = await logRows('adapt-opus', 2)
    expect(rows.at(-1)!.status).toBe(200)
  })
})
