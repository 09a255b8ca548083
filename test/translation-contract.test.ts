/**
 * The translation contract: every one of the 12 directions between the four protocol families,
 * through the real daemon (`gwctl gateway start --sim`) to the simulator, with the official SDK of
 * the entrance as the unmodified client. For each direction, stream and non-stream:
 * - text (with an image in the prompt),
 * - a two-turn tool call with reasoning on: turn 2 sends back what the client's own agent would
 *   (the assistant turn verbatim, or without what the client's protocol cannot hold), and the
 *   simulator refuses history whose signatures or reasoning are missing or another vendor's, as
 *   the real vendors do, so a 200 on turn 2 proves the opaque state made the round trip,
 * - an upstream error, which the SDK must raise with the upstream's status and message,
 * and every answered request's log row holds the usage the client was told, to the token.
 */
import {join} from 'node:path'
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import Database from 'better-sqlite3'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Family} from '../src/store/schema.js'
import {issueKeyOverApi, simPolicy, startSimGatewayWithPolicies} from './helpers/gateway.js'

const FAMILIES: Family[] = ['chat', 'responses', 'messages', 'gemini']
/** The model each simulated upstream is asked for (chat: the reasoning model, DeepSeek-like). */
const UPSTREAM_MODEL: Record<Family, string> = {
  chat: 'sim-reasoner',
  responses: 'gpt-5',
  messages: 'claude-sonnet-4-5',
  gemini: 'gemini-2.5-flash',
}
/** A 1x1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='
const WEATHER = {
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: {type: 'object', properties: {city: {type: 'string'}}, required: ['city']},
}

interface Tokens {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  reasoningTokens: number
}

/** What one turn gave the client, read through its SDK. */
interface Turn {
  text: string
  calls: Array<{id: string; name: string; args: Record<string, unknown>}>
  /** Usage as the client was told it, in gwctl's meaning; `null` for a count it cannot say. */
  usage: {[K in keyof Tokens]: number | null}
  /** Sends the tool results back as the client's agent would (the whole history). */
  next: (output: string) => Promise<Turn>
}

interface Scenario {
  stream: boolean
  tools: boolean
  reasoning: boolean
  image: boolean
  prompt: string
}

type Client = (s: Scenario) => Promise<Turn>

let home = ''
let base = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<Family, string>()
let db: Database.Database | undefined
/** The simulator behind the gateway (`--sim`), whose request record shows what each upstream got. */
let simOrigin = ''

beforeAll(async () => {
  // one policy per upstream family: every other entrance translated to its simulator
  ;({home, base, simOrigin, stop} = await startSimGatewayWithPolicies(
    FAMILIES.map((up) =>
      simPolicy(
        `to-${up}`,
        Object.fromEntries(
          FAMILIES.filter((f) => f !== up).map((f) => [
            f,
            [{provider: `sim-${up}`, model: UPSTREAM_MODEL[up], translate: true}],
          ]),
        ),
      ),
    ),
  ))
  for (const up of FAMILIES)
    keys.set(up, await issueKeyOverApi(base, `via-${up}`, 'generic_agent', `to-${up}`))
}, 120_000)

afterAll(async () => {
  db?.close()
  await stop()
})

let projects = 0
/** A project name of its own for one test: its requests' log rows carry it (`x-gw-project`). */
const newProject = (): string => `contract-${++projects}`

/** The log rows of `project`, oldest first, once there are `count` (a row is written just after its answer). */
async function rowsOf(project: string, count: number): Promise<Array<Record<string, any>>> {
  db ??= new Database(join(home, 'logs.db'), {readonly: true})
  let rows: Array<Record<string, any>> = []
  for (let i = 0; i < 100; i++) {
    rows = db.prepare('SELECT * FROM logs WHERE project = ? ORDER BY id').all(project) as Array<
      Record<string, any>
    >
    if (rows.length >= count) break
    await new Promise((r) => setTimeout(r, 20))
  }
  expect(rows, `log rows of ${project}`).toHaveLength(count)
  return rows
}

/** The body of the newest request the simulated upstream of `up` received. */
async function lastUpstreamBody(up: Family): Promise<any> {
  const {requests} = (await (await fetch(`${simOrigin}/__sim/requests`)).json()) as {
    requests: Array<{method: string; path: string; body: unknown}>
  }
  const path = {
    chat: /\/chat\/completions$/,
    responses: /\/responses$/,
    messages: /\/messages$/,
    gemini: /:(stream)?generateContent$/i,
  }[up]
  const last = requests.filter((r) => r.method === 'POST' && path.test(r.path)).at(-1)
  expect(last, `a request to the ${up} simulator`).toBeDefined()
  return typeof last!.body === 'string' ? JSON.parse(last!.body) : last!.body
}

/**
 * Turn 2 reached the upstream with the reasoning state that upstream made on turn 1 (not merely
 * accepted after the gateway dropped it): the thinking block and its signature, the call's
 * thoughtSignature, `reasoning_content`, the reasoning item's `encrypted_content`.
 */
function expectReasoningReturned(up: Family, body: any): void {
  switch (up) {
    case 'messages': {
      expect(body.thinking?.type, 'thinking stays on').toBe('enabled')
      const assistant = body.messages.filter((m: any) => m.role === 'assistant').at(-1)
      const thinking = assistant.content.find((b: any) => b.type === 'thinking')
      expect(thinking?.signature, 'the thinking block goes back with its signature').toBeTruthy()
      break
    }
    case 'gemini': {
      const model = body.contents.filter((c: any) => c.role === 'model').at(-1)
      const call = model.parts.find((p: any) => p.functionCall)
      expect(call.thoughtSignature, 'the call goes back with its own thoughtSignature').toBeTruthy()
      expect(call.thoughtSignature).not.toBe('skip_thought_signature_validator')
      break
    }
    case 'chat': {
      const assistant = body.messages.filter((m: any) => m.role === 'assistant').at(-1)
      expect(assistant.reasoning_content, 'reasoning_content goes back').toBeTruthy()
      break
    }
    case 'responses': {
      const reasoning = body.input.find((i: any) => i.type === 'reasoning')
      expect(reasoning?.encrypted_content, 'the reasoning item goes back').toBeTruthy()
      break
    }
  }
}

function expectUsageLogged(row: Record<string, any>, usage: Turn['usage']): void {
  const logged: Tokens = {
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    cacheReadTokens: row.cache_read_tokens,
    cacheCreationTokens: row.cache_creation_tokens,
    reasoningTokens: row.reasoning_tokens,
  }
  expect(logged.inputTokens).toBeGreaterThan(0)
  expect(logged.outputTokens).toBeGreaterThan(0)
  for (const [k, v] of Object.entries(usage)) if (v !== null) expect(logged[k as keyof Tokens], k).toBe(v)
}

// ---------------------------------------------------------------------------------------------
// One adapter per entrance: the official SDK, used the way that family's agent uses it.

const FAULT = 'x-sim-fault'

function chatClient(key: string, headers: Record<string, string> = {}): Client {
  const client = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0, defaultHeaders: headers})
  return async (s) => {
    const messages: any[] = [
      {role: 'system', content: 'Be brief.'},
      {
        role: 'user',
        content: s.image
          ? [
              {type: 'text', text: s.prompt},
              {type: 'image_url', image_url: {url: `data:image/png;base64,${PNG}`}},
            ]
          : s.prompt,
      },
    ]
    const send = async (): Promise<Turn> => {
      const params: any = {
        model: 'any-model',
        messages,
        ...(s.tools ? {tools: [{type: 'function', function: WEATHER}]} : {}),
        ...(s.reasoning ? {reasoning_effort: 'medium'} : {}),
      }
      const done = s.stream
        ? await client.chat.completions
            .stream({...params, stream: true, stream_options: {include_usage: true}})
            .finalChatCompletion()
        : await client.chat.completions.create(params)
      const message = done.choices[0].message
      const u: any = done.usage
      return {
        text: message.content ?? '',
        calls: (message.tool_calls ?? []).map((c: any) => ({
          id: c.id,
          name: c.function.name,
          args: JSON.parse(c.function.arguments || '{}'),
        })),
        usage: {
          inputTokens: u.prompt_tokens,
          outputTokens: u.completion_tokens,
          cacheReadTokens: u.prompt_tokens_details?.cached_tokens ?? 0,
          cacheCreationTokens: null,
          reasoningTokens: u.completion_tokens_details?.reasoning_tokens ?? 0,
        },
        next: async (output) => {
          // a plain chat client sends back content and tool calls only: whatever else the
          // upstream needs must be kept by the gateway
          messages.push({role: 'assistant', content: message.content ?? null, tool_calls: message.tool_calls})
          for (const c of message.tool_calls ?? [])
            messages.push({role: 'tool', tool_call_id: c.id, content: output})
          return send()
        },
      }
    }
    return send()
  }
}

function responsesClient(key: string, headers: Record<string, string> = {}): Client {
  const client = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0, defaultHeaders: headers})
  return async (s) => {
    const input: any[] = [
      {
        role: 'user',
        content: [
          {type: 'input_text', text: s.prompt},
          ...(s.image
            ? [{type: 'input_image', image_url: `data:image/png;base64,${PNG}`, detail: 'auto'}]
            : []),
        ],
      },
    ]
    const send = async (): Promise<Turn> => {
      const params: any = {
        model: 'any-model',
        instructions: 'Be brief.',
        input,
        store: false,
        ...(s.tools ? {tools: [{type: 'function', ...WEATHER, strict: false}]} : {}),
        ...(s.reasoning
          ? {reasoning: {effort: 'medium', summary: 'auto'}, include: ['reasoning.encrypted_content']}
          : {}),
      }
      const done: any = s.stream
        ? await client.responses.stream(params).finalResponse()
        : await client.responses.create(params)
      const u = done.usage
      return {
        text: done.output_text ?? '',
        calls: done.output
          .filter((i: any) => i.type === 'function_call')
          .map((c: any) => ({id: c.call_id, name: c.name, args: JSON.parse(c.arguments || '{}')})),
        usage: {
          inputTokens: u.input_tokens,
          outputTokens: u.output_tokens,
          cacheReadTokens: u.input_tokens_details?.cached_tokens ?? 0,
          cacheCreationTokens: null,
          reasoningTokens: u.output_tokens_details?.reasoning_tokens ?? 0,
        },
        next: async (output) => {
          // as Codex does: every output item back verbatim (reasoning with encrypted_content)
          input.push(...done.output)
          for (const c of done.output.filter((i: any) => i.type === 'function_call'))
            input.push({type: 'function_call_output', call_id: c.call_id, output})
          return send()
        },
      }
    }
    return send()
  }
}

function messagesClient(key: string, headers: Record<string, string> = {}): Client {
  const client = new Anthropic({baseURL: base, apiKey: key, maxRetries: 0, defaultHeaders: headers})
  return async (s) => {
    const messages: any[] = [
      {
        role: 'user',
        content: [
          {type: 'text', text: s.prompt},
          ...(s.image ? [{type: 'image', source: {type: 'base64', media_type: 'image/png', data: PNG}}] : []),
        ],
      },
    ]
    const send = async (): Promise<Turn> => {
      const params: any = {
        model: 'claude-sonnet-4-5',
        max_tokens: 4096,
        system: [{type: 'text', text: 'Be brief.', cache_control: {type: 'ephemeral'}}],
        messages,
        ...(s.tools
          ? {
              tools: [
                {name: WEATHER.name, description: WEATHER.description, input_schema: WEATHER.parameters},
              ],
            }
          : {}),
        ...(s.reasoning ? {thinking: {type: 'enabled', budget_tokens: 2048}} : {}),
      }
      const done: any = s.stream
        ? await client.messages.stream(params).finalMessage()
        : await client.messages.create(params)
      const u = done.usage
      return {
        text: done.content
          .filter((b: any) => b.type === 'text')
          .map((b: any) => b.text)
          .join(''),
        calls: done.content
          .filter((b: any) => b.type === 'tool_use')
          .map((b: any) => ({id: b.id, name: b.name, args: b.input})),
        usage: {
          inputTokens:
            u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
          outputTokens: u.output_tokens,
          cacheReadTokens: u.cache_read_input_tokens ?? 0,
          cacheCreationTokens: u.cache_creation_input_tokens ?? 0,
          reasoningTokens: null,
        },
        next: async (output) => {
          // as Claude Code does: the assistant content verbatim, thinking blocks and signatures included
          messages.push({role: 'assistant', content: done.content})
          messages.push({
            role: 'user',
            content: done.content
              .filter((b: any) => b.type === 'tool_use')
              .map((b: any) => ({type: 'tool_result', tool_use_id: b.id, content: output})),
          })
          return send()
        },
      }
    }
    return send()
  }
}

function geminiClient(key: string, headers: Record<string, string> = {}): Client {
  const ai = new GoogleGenAI({apiKey: key, httpOptions: {baseUrl: base, headers}})
  return async (s) => {
    const contents: any[] = [
      {
        role: 'user',
        parts: [{text: s.prompt}, ...(s.image ? [{inlineData: {mimeType: 'image/png', data: PNG}}] : [])],
      },
    ]
    const send = async (): Promise<Turn> => {
      const params: any = {
        model: 'gemini-2.5-flash',
        contents,
        config: {
          systemInstruction: 'Be brief.',
          ...(s.tools
            ? {
                tools: [
                  {
                    functionDeclarations: [
                      {
                        name: WEATHER.name,
                        description: WEATHER.description,
                        parametersJsonSchema: WEATHER.parameters,
                      },
                    ],
                  },
                ],
              }
            : {}),
          ...(s.reasoning ? {thinkingConfig: {thinkingBudget: 1024, includeThoughts: true}} : {}),
        },
      }
      const parts: any[] = []
      let meta: any
      if (s.stream) {
        for await (const chunk of await ai.models.generateContentStream(params)) {
          parts.push(...(chunk.candidates?.[0]?.content?.parts ?? []))
          if (chunk.usageMetadata) meta = chunk.usageMetadata
        }
      } else {
        const done = await ai.models.generateContent(params)
        parts.push(...(done.candidates?.[0]?.content?.parts ?? []))
        meta = done.usageMetadata
      }
      const calls = parts.filter((p) => p.functionCall)
      return {
        text: parts
          .filter((p) => typeof p.text === 'string' && !p.thought)
          .map((p) => p.text)
          .join(''),
        calls: calls.map((p, i) => ({
          id: p.functionCall.id ?? `c${i}`,
          name: p.functionCall.name,
          args: p.functionCall.args ?? {},
        })),
        usage: {
          inputTokens: meta.promptTokenCount + (meta.toolUsePromptTokenCount ?? 0),
          outputTokens: (meta.candidatesTokenCount ?? 0) + (meta.thoughtsTokenCount ?? 0),
          cacheReadTokens: meta.cachedContentTokenCount ?? 0,
          cacheCreationTokens: null,
          reasoningTokens: meta.thoughtsTokenCount ?? 0,
        },
        next: async (output) => {
          // as Gemini CLI does: the model's parts without thoughts (signatures stay on their parts)
          contents.push({role: 'model', parts: parts.filter((p) => !p.thought)})
          contents.push({
            role: 'user',
            parts: calls.map((p) => ({
              functionResponse: {name: p.functionCall.name, id: p.functionCall.id, response: {output}},
            })),
          })
          return send()
        },
      }
    }
    return send()
  }
}

const CLIENTS: Record<Family, (key: string, headers?: Record<string, string>) => Client> = {
  chat: chatClient,
  responses: responsesClient,
  messages: messagesClient,
  gemini: geminiClient,
}

// ---------------------------------------------------------------------------------------------

const DIRECTIONS = FAMILIES.flatMap((client) =>
  FAMILIES.filter((up) => up !== client).map((up) => ({client, up})),
)

describe.each(DIRECTIONS)('translation $client -> $up', {timeout: 60_000}, ({client, up}) => {
  for (const stream of [false, true]) {
    const mode = stream ? 'stream' : 'non-stream'

    it(`${mode}: text with an image, usage logged exactly`, async () => {
      const project = newProject()
      const send = CLIENTS[client](keys.get(up)!, {'x-gw-project': project})
      const turn = await send({stream, tools: false, reasoning: false, image: true, prompt: 'Say hello.'})
      // the simulated vendors answer "PONG from sim: ...", the platform's chat "... You said: ..."
      expect(turn.text).toMatch(up === 'chat' ? /You said: "Say hello\."/ : /PONG from sim: Say hello\./)
      expect(turn.calls).toEqual([])
      const [row] = await rowsOf(project, 1)
      expect(row.status).toBe(200)
      expect(row.error).toBeNull()
      expect(row.entrance).toBe(client)
      expect(row.provider).toBe(`sim-${up}`)
      expect(row.upstream_family).toBe(up)
      expectUsageLogged(row, turn.usage)
    })

    it(`${mode}: a tool call with reasoning on, and turn 2 accepted by the upstream`, async () => {
      const project = newProject()
      const send = CLIENTS[client](keys.get(up)!, {'x-gw-project': project})
      const first = await send({
        stream,
        tools: true,
        reasoning: true,
        image: false,
        prompt: 'Please use a tool for Paris.',
      })
      expect(first.calls.length).toBeGreaterThan(0)
      expect(first.calls[0].name).toBe('get_weather')
      expect(typeof first.calls[0].args).toBe('object')
      expectUsageLogged((await rowsOf(project, 1))[0], first.usage)
      const second = await first.next('sunny, 21 C')
      expectReasoningReturned(up, await lastUpstreamBody(up))
      expect(second.calls).toEqual([])
      expect(second.text).toContain('sunny')
      const row = (await rowsOf(project, 2))[1]
      expect(row.status).toBe(200)
      expect(row.error).toBeNull()
      expectUsageLogged(row, second.usage)
    })

    it(`${mode}: an upstream error reaches the SDK with its status and message`, async () => {
      const project = newProject()
      const send = CLIENTS[client](keys.get(up)!, {
        [FAULT]: 'status=400,message=the upstream refused this',
        'x-gw-project': project,
      })
      const error = await send({stream, tools: false, reasoning: false, image: false, prompt: 'Hi'}).then(
        () => undefined,
        (e: unknown) => e as {status?: number; message?: string; code?: number},
      )
      expect(error, 'the SDK must throw').toBeDefined()
      expect(error!.status ?? error!.code).toBe(400)
      expect(String(error!.message)).toContain('the upstream refused this')
      const [row] = await rowsOf(project, 1)
      expect(row.status).toBe(400)
      expect(row.error).toContain('the upstream refused this')
    })
  }
})

describe('around translation', {timeout: 60_000}, () => {
  it('answers count_tokens and :countTokens with an estimate that says so, and lists translated models', async () => {
    const messages = await fetch(`${base}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: {
        'x-api-key': keys.get('chat')!,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        messages: [{role: 'user', content: 'x'.repeat(400)}],
      }),
    })
    expect(messages.status).toBe(200)
    expect(messages.headers.get('x-gw-estimate')).toBe('chars/4')
    expect(await messages.json()).toEqual({input_tokens: 100, estimate: true})

    const gemini = await fetch(`${base}/v1beta/models/gemini-2.5-flash:countTokens`, {
      method: 'POST',
      headers: {'x-goog-api-key': keys.get('chat')!, 'content-type': 'application/json'},
      body: JSON.stringify({contents: [{role: 'user', parts: [{text: 'y'.repeat(40)}]}]}),
    })
    expect(gemini.status).toBe(200)
    expect(await gemini.json()).toEqual({totalTokens: 10, estimate: true})

    const models = await fetch(`${base}/v1/models`, {
      headers: {'x-api-key': keys.get('chat')!, 'anthropic-version': '2023-06-01'},
    })
    const listed = (await models.json()) as {data: Array<{id: string; owned_by: string}>}
    expect(listed.data).toContainEqual(expect.objectContaining({id: 'sim-reasoner', owned_by: 'sim-chat'}))
  })

  it("Claude Code's mid-conversation system message (the Agent tool's agent types) reaches every other family", async () => {
    // the shape of Claude Code 2.1's first request with its default tools: the agent types as a
    // `role: "system"` message after the last user turn (beta mid-conversation-system-2026-04-07),
    // so the cached top-level system prompt stays the same; it was refused with a 400
    const agentTypes = 'Available agent types for the Agent tool:\n- claude: Catch-all.'
    const systemOf: Record<Exclude<Family, 'messages'>, (body: any) => string> = {
      chat: (b) =>
        b.messages
          .filter((m: any) => m.role === 'system')
          .map((m: any) => m.content)
          .join('\n'),
      // (OpenAI's Responses API, which the simulator stands for, takes it where it stood: a
      // developer message after the last user turn, the instructions as on a turn without it)
      responses: (b) => b.instructions ?? '',
      gemini: (b) => (b.systemInstruction?.parts ?? []).map((p: any) => p.text).join('\n'),
    }
    const lastRole: Record<Exclude<Family, 'messages'>, (body: any) => string> = {
      chat: (b) => b.messages.at(-1).role,
      responses: (b) => b.input.at(-2).role,
      gemini: (b) => b.contents.at(-1).role,
    }
    for (const up of ['chat', 'responses', 'gemini'] as const)
      for (const stream of [false, true]) {
        const res = await fetch(`${base}/v1/messages?beta=true`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-api-key': keys.get(up)!,
            'anthropic-version': '2023-06-01',
            'anthropic-beta': 'claude-code-20250219,mid-conversation-system-2026-04-07,effort-2025-11-24',
          },
          body: JSON.stringify({
            model: 'claude-sonnet-4-5',
            max_tokens: 1024,
            stream,
            system: [
              {type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude."},
              {type: 'text', text: 'Be brief.', cache_control: {type: 'ephemeral'}},
            ],
            messages: [
              {
                role: 'user',
                content: [
                  {type: 'text', text: '<system-reminder>\nToday is a day.\n</system-reminder>\n\n'},
                  {type: 'text', text: 'Plan a trip', cache_control: {type: 'ephemeral'}},
                ],
              },
              {role: 'system', content: agentTypes},
            ],
            thinking: {type: 'adaptive'},
            output_config: {effort: 'high'},
            context_management: {edits: [{type: 'clear_thinking_20251015', keep: 'all'}]},
          }),
        })
        const text = await res.text()
        expect(res.status, `${up} ${stream ? 'stream' : 'whole'}: ${text.slice(0, 300)}`).toBe(200)
        expect(text).toContain(stream ? 'message_stop' : '"type":"message"')
        const body = await lastUpstreamBody(up)
        const system = systemOf[up](body)
        expect(system, up).toContain('Be brief.')
        expect(lastRole[up](body), up).toBe('user')
        if (up === 'responses') {
          // where it stood, once, and not in the instructions (which stay those of a turn without it)
          expect(system).not.toContain(agentTypes)
          expect(body.input.filter((i: any) => i.role === 'developer')).toEqual([
            {type: 'message', role: 'developer', content: [{type: 'input_text', text: agentTypes}]},
          ])
          expect(body.input.at(-1).role).toBe('developer')
        } else expect(system.indexOf(agentTypes), up).toBeGreaterThan(system.indexOf('Be brief.'))
      }
  })

  it("Claude Code's output_config: its structured output and effort reach every other family", async () => {
    // what `claude -p --json-schema` and /effort send with models that take them
    const schema = {
      type: 'object',
      properties: {city: {type: 'string'}, days: {type: 'integer'}},
      required: ['city', 'days'],
    }
    const sentEffort: Record<Exclude<Family, 'messages'>, (body: any) => unknown> = {
      chat: (b) => b.reasoning_effort,
      responses: (b) => b.reasoning?.effort,
      gemini: (b) => b.generationConfig?.thinkingConfig?.thinkingBudget,
    }
    const expected = {chat: 'low', responses: 'low', gemini: 1024}
    for (const up of ['chat', 'responses', 'gemini'] as const) {
      for (const stream of [false, true]) {
        const params: any = {
          model: 'claude-sonnet-4-5',
          max_tokens: 2048,
          thinking: {type: 'adaptive'},
          output_config: {effort: 'low', format: {type: 'json_schema', schema}},
          messages: [{role: 'user', content: 'Plan a trip.'}],
        }
        const client = new Anthropic({baseURL: base, apiKey: keys.get(up)!, maxRetries: 0})
        const done: any = stream
          ? await client.messages.stream(params).finalMessage()
          : await client.messages.create(params)
        const text = done.content
          .filter((b: any) => b.type === 'text')
          .map((b: any) => b.text)
          .join('')
        const value = JSON.parse(text)
        expect(typeof value.city, `${up} ${stream ? 'stream' : 'whole'}: ${text}`).toBe('string')
        expect(Number.isInteger(value.days)).toBe(true)
        const body = await lastUpstreamBody(up)
        expect(sentEffort[up](body), `${up}: the effort`).toBe(expected[up])
      }
    }
    // the deprecated beta field says the same
    const res = await fetch(`${base}/v1/messages`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-api-key': keys.get('chat')!,
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'structured-outputs-2025-11-13',
      },
      body: JSON.stringify({
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        output_format: {type: 'json_schema', schema},
        messages: [{role: 'user', content: 'Plan a trip.'}],
      }),
    })
    expect(res.status).toBe(200)
    const answer = (await res.json()) as {content: Array<{type: string; text: string}>}
    // (the chat upstream is a reasoning model: a thinking block comes first)
    const text = answer.content.find((b) => b.type === 'text')?.text ?? ''
    expect(Object.keys(JSON.parse(text)).sort()).toEqual(['city', 'days'])
    expect((await lastUpstreamBody('chat')).response_format).toEqual({
      type: 'json_schema',
      json_schema: {name: 'response', schema},
    })
  })

  it('a history answered through translation is accepted untranslated by the client vendor afterwards', async () => {
    // Claude Code on a chat upstream: its thinking blocks carry gwctl-wrapped signatures ...
    // ... then the same conversation goes to a Messages upstream untranslated (the default policy
    // under --sim): Anthropic would refuse a signature it did not make, so the gateway drops them
    const native = await fetch(`${base}/api/keys/issue`, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: JSON.stringify({
        employeeName: 'Ada',
        employeeContact: 'ada@example.com',
        agentName: 'native-messages',
        agentType: 'generic_agent',
      }),
    })
    const {keyValue} = (await native.json()) as {keyValue: string}
    const client = new Anthropic({baseURL: base, apiKey: keyValue, maxRetries: 0})
    const history: any[] = [{role: 'user', content: [{type: 'text', text: 'Please use a tool for Rome.'}]}]
    // the assistant turn as the translated route gave it (thinking signed gwx1.chat.)
    const turn = (await (
      await fetch(`${base}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': keys.get('chat')!,
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
        },
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 4096,
          thinking: {type: 'enabled', budget_tokens: 2048},
          tools: [{name: WEATHER.name, input_schema: WEATHER.parameters}],
          messages: history,
        }),
      })
    ).json()) as {content: any[]}
    const thinking = turn.content.find((b) => b.type === 'thinking')
    expect(thinking?.signature).toMatch(/^gwx1\.chat\./)
    history.push({role: 'assistant', content: turn.content})
    history.push({
      role: 'user',
      content: turn.content
        .filter((b) => b.type === 'tool_use')
        .map((b) => ({type: 'tool_result', tool_use_id: b.id, content: 'sunny'})),
    })
    const second = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      thinking: {type: 'enabled', budget_tokens: 2048},
      tools: [{name: WEATHER.name, input_schema: WEATHER.parameters as any}],
      messages: history,
    })
    expect(second.content.map((b: any) => b.text ?? '').join('')).toContain('sunny')
    const sent = await lastUpstreamBody('messages')
    expect(JSON.stringify(sent)).not.toContain('gwx1.')
  })
})

describe('prompt cache through translation', {timeout: 60_000}, () => {
  /** Cache reads / prompt tokens over turns 2..n of a text conversation, as the client is told. */
  async function cacheRatio(
    send: (
      history: Array<{role: string; text: string}>,
    ) => Promise<{text: string; input: number; cached: number}>,
  ) {
    const history: Array<{role: string; text: string}> = []
    let input = 0
    let cached = 0
    for (let turn = 1; turn <= 5; turn++) {
      history.push({role: 'user', text: `Turn ${turn}: tell me about the number ${turn * 7}.`})
      const answer = await send(history)
      history.push({role: 'assistant', text: answer.text})
      if (turn > 1) {
        input += answer.input
        cached += answer.cached
      }
    }
    return cached / input
  }

  it('a multi-turn conversation from Claude Code on a chat upstream hits the cache as the same conversation direct', async () => {
    // a key of the default policy: under --sim its chat route is sim-chat itself, untranslated
    const issued = await fetch(`${base}/api/keys/issue`, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: JSON.stringify({
        employeeName: 'Ada',
        employeeContact: 'ada@example.com',
        agentName: 'native-chat',
        agentType: 'generic_agent',
      }),
    })
    const {keyValue} = (await issued.json()) as {keyValue: string}
    const direct = new OpenAI({baseURL: `${base}/v1`, apiKey: keyValue, maxRetries: 0})
    const directRatio = await cacheRatio(async (history) => {
      const done = await direct.chat.completions.create({
        model: 'sim-reasoner',
        messages: [
          {role: 'system', content: 'Be brief.'},
          ...history.map((m) => ({role: m.role as 'user' | 'assistant', content: m.text})),
        ],
      })
      const u: any = done.usage
      return {
        text: done.choices[0].message.content ?? '',
        input: u.prompt_tokens,
        cached: u.prompt_tokens_details?.cached_tokens ?? 0,
      }
    })
    const translated = new Anthropic({baseURL: base, apiKey: keys.get('chat')!, maxRetries: 0})
    const translatedRatio = await cacheRatio(async (history) => {
      const done: any = await translated.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 1024,
        system: 'Be brief.',
        messages: history.map((m) => ({role: m.role as 'user' | 'assistant', content: m.text})),
      })
      const u = done.usage
      return {
        text: done.content.map((b: any) => b.text ?? '').join(''),
        input: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
        cached: u.cache_read_input_tokens,
      }
    })
    console.log(
      `prompt cache hits, turns 2-5: direct ${directRatio.toFixed(3)}, translated ${translatedRatio.toFixed(3)}`,
    )
    expect(directRatio).toBeGreaterThan(0.5)
    expect(translatedRatio).toBeGreaterThanOrEqual(directRatio * 0.95)
  })
})

describe('where peers break: Claude Code on a quirky chat upstream', {timeout: 60_000}, () => {
  const tools = [
    {name: 'get_weather', description: 'Weather.', input_schema: WEATHER.parameters},
    {
      name: 'get_time',
      description: 'Time.',
      input_schema: {type: 'object', properties: {city: {type: 'string'}}},
    },
  ]
  const ask = (quirk: string, project: string) =>
    new Anthropic({
      baseURL: base,
      apiKey: keys.get('chat')!,
      maxRetries: 0,
      defaultHeaders: {'x-sim-quirk': quirk, 'x-gw-project': project},
    }).messages
      .stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 1024,
        thinking: {type: 'enabled', budget_tokens: 2048},
        tools: tools as any,
        messages: [{role: 'user', content: 'Please use a tool for Oslo.'}],
      })
      .finalMessage()

  it('parallel tool calls with arguments cut mid-token, no finish_reason, usage only at the end, a strict server', async () => {
    const project = newProject()
    const done = await ask('parallel-tools,cut-args,no-finish-reason,usage-last,strict-fields', project)
    const calls = done.content.filter((b) => b.type === 'tool_use') as Array<{name: string; input: any}>
    expect(calls.map((c) => c.name)).toEqual(['get_weather', 'get_time'])
    for (const c of calls) expect(typeof c.input).toBe('object')
    // cut-args cuts inside an escaped quote: the reassembled value holds it whole
    expect(calls[0].input.city).toMatch(/^said "Please use a tool/)
    expect(done.stop_reason).toBe('tool_use')
    expect(done.content[0].type).toBe('thinking')
    const [row] = await rowsOf(project, 1)
    expect(row.status).toBe(200)
    expect(row.error).toBeNull()
    expect(row.output_tokens).toBe(done.usage.output_tokens)
  })

  it("DeepSeek V4's call heads at the index before their arguments: each call named, with its own arguments", async () => {
    const project = newProject()
    const done = await ask('parallel-tools,shifted-index', project)
    const calls = done.content.filter((b) => b.type === 'tool_use') as Array<{name: string; input: any}>
    expect(calls.map((c) => c.name)).toEqual(['get_weather', 'get_time'])
    // read as sent, the second call ran with {} and a third, with no name, held its arguments
    expect(calls[0].input).toEqual({city: expect.any(String)})
    expect(calls[1].input).toEqual(calls[0].input)
    const [row] = await rowsOf(project, 1)
    expect(row.status).toBe(200)
  })

  it("OpenAI's padding on every chunk (obfuscation): the client's stream is the one without it, usage exact", async () => {
    const stream = async (quirk: string, project: string): Promise<string> => {
      const res = await fetch(`${base}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': keys.get('chat')!,
          'anthropic-version': '2023-06-01',
          'x-sim-quirk': quirk,
          'x-gw-project': project,
        },
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 1024,
          stream: true,
          thinking: {type: 'enabled', budget_tokens: 2048},
          tools,
          messages: [{role: 'user', content: 'Please use a tool for Oslo.'}],
        }),
      })
      expect(res.status).toBe(200)
      return res.text()
    }
    // ids (and the signature that carries the call's id) differ between two answers
    const same = (text: string): string => text.replace(/"(id|signature)":"[^"]*"/g, '"$1":"x"')
    const [p1, p2] = [newProject(), newProject()]
    const padded = await stream('obfuscation,reasoning-content', p1)
    const plain = await stream('reasoning-content', p2)
    expect(same(padded)).toBe(same(plain))
    expect(padded).not.toContain('obfuscation')
    for (const kind of ['thinking_delta', 'input_json_delta', 'tool_use', 'message_stop'])
      expect(padded).toContain(kind)
    const [[row1], [row2]] = [await rowsOf(p1, 1), await rowsOf(p2, 1)]
    expect(row1.error).toBeNull()
    expect(row1.output_tokens).toBeGreaterThan(0)
    expect([row1.input_tokens, row1.output_tokens]).toEqual([row2.input_tokens, row2.output_tokens])
    const usage = /event: message_delta\ndata: .*"output_tokens":(\d+)/.exec(padded)
    expect(Number(usage?.[1])).toBe(row1.output_tokens)
  })

  it('a tool call with empty arguments arrives as {}', async () => {
    const done = await ask('empty-args', newProject())
    const call = done.content.find((b) => b.type === 'tool_use') as {input: unknown}
    expect(call.input).toEqual({})
  })

  it('a stream cut before its finish_reason is an error for the client and the log; one without [DONE] after it is whole', async () => {
    const project = newProject()
    const error = await ask('no-finish-reason,no-terminal', project).then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(error, 'the SDK must throw').toBeDefined()
    const [row] = await rowsOf(project, 1)
    expect(row.error).toMatch(/ended before|\[DONE\]/)
    // its finish and usage came, then the server closed without [DONE] (bifrost #6784)
    const whole = newProject()
    const done = await ask('no-terminal', whole)
    expect(done.stop_reason).toBe('tool_use')
    const [ok] = await rowsOf(whole, 1)
    expect(ok.error).toBeNull()
    expect(ok.output_tokens).toBe(done.usage.output_tokens)
  })
})
