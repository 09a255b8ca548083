/**
 * A reasoning effort the server refuses, learned (F2): Codex's `model_reasoning_effort = "xhigh"`
 * passed through to Ollama's `/v1/responses` ("invalid reasoning value: \"xhigh\" (must be ...)",
 * ollama/ollama #17252), Codex's `reasoning.effort: "none"` passed through to OpenAI's gpt-4o-mini
 * ("Unsupported parameter: 'reasoning.effort' is not supported with this model.", openai/codex
 * #36735), a chat client's `xhigh` passed through to Ollama and to SGLang (pydantic's
 * literal_error, CLIProxyAPI #1572), and a chat client's `minimal` translated to Ollama's Responses
 * API. Each: refused once, sent again at once with the nearest effort the server lists (or without
 * the effort), the client gets its answer, the log row says so with the answer's usage; the next
 * request goes in one try; `/api/adaptations` lists the rule. The real daemon, the simulator's
 * `ollama-effort`, `no-effort-model` and `pydantic-effort` quirks, the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {runCli} from './helpers/cli.js'
import {projectLogRows, startKeyedPolicies, takeSimCalls} from './helpers/gateway.js'

const OLLAMA = 'glm-5.2:cloud+ollama-effort'
const MINI = 'gpt-4o-mini+no-effort-model'
const SGLANG = 'glm-5+pydantic-effort'
const RESPONSES = /\/v1\/responses$/
const CHAT = /\/v1\/chat\/completions$/

let base = ''
let home = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
let keys = new Map<string, string>()

beforeAll(async () => {
  ;({base, home, simOrigin, stop, keys} = await startKeyedPolicies(
    {
      'codex-ollama': {responses: [{provider: 'sim-responses', model: OLLAMA}]},
      'codex-mini': {responses: [{provider: 'sim-responses', model: MINI}]},
      'chat-ollama': {chat: [{provider: 'sim-chat', model: OLLAMA}]},
      'chat-sglang': {chat: [{provider: 'sim-chat', model: SGLANG}]},
      translated: {chat: [{provider: 'sim-responses', model: 'qwen3.6:35b+ollama-effort', translate: true}]},
    },
    {prefix: 'effort', agentType: (id) => (id.startsWith('codex') ? 'codex' : 'generic_agent')},
  ))
}, 120_000)

afterAll(() => stop())

const client = (id: string) => new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get(id)!, maxRetries: 0})

/** Codex's request, cut down, in its key order. */
const codex = (effort: string, text: string, stream = false) =>
  ({
    model: 'gpt-5.5',
    instructions: 'You are Codex.',
    input: [{type: 'message', role: 'user', content: [{type: 'input_text', text}]}],
    tools: [
      {type: 'function', name: 'exec_command', parameters: {type: 'object', properties: {}}, strict: false},
    ],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    reasoning: {effort, summary: 'auto'},
    store: false,
    stream,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'session-1',
  }) as Record<string, any>

const rules = async (model: string): Promise<string[] | undefined> => {
  const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {
    adaptations: Array<{provider: string; model: string; rules: string[]}>
  }
  return adaptations.find((a) => a.model === model)?.rules
}

/** A log row's tokens. */
const tokens = (row: Record<string, any>) => [row.inputTokens, row.outputTokens]

/**
 * Codex's first request through policy `effort-ID`: its answer (completed), the two tries the
 * simulator got (the refused one, the one sent again; no third) and its log row.
 */
async function firstTurn(id: string, body: Record<string, any>) {
  await takeSimCalls(simOrigin, /./)
  const answer = await client(id).responses.create(body as never)
  expect(answer.status).toBe('completed')
  const [refused, again, ...more] = await takeSimCalls(simOrigin, RESPONSES)
  expect(more).toEqual([])
  const [row] = await projectLogRows(base, `effort-${id}`, 1)
  return {answer, refused, again, row}
}

describe("Codex's effort passed through to a Responses server that refuses it", {timeout: 60_000}, () => {
  it("Ollama's refusal of xhigh: sent again at once with max (the nearest it lists), the rest as Codex sent it", async () => {
    const openai = client('codex-ollama')
    const body = codex('xhigh', 'List the files.')
    const {answer, refused, again, row} = await firstTurn('codex-ollama', body)
    expect(JSON.stringify(refused)).toBe(JSON.stringify({...body, model: OLLAMA}))
    expect(JSON.stringify(again)).toBe(
      JSON.stringify({...body, model: OLLAMA, reasoning: {effort: 'max', summary: 'auto'}}),
    )
    expect([row.status, row.error]).toEqual([
      200,
      'sim-responses refused reasoning.effort xhigh (it takes high, medium, low, max, none): sent again with max',
    ])
    expect(tokens(row)).toEqual([answer.usage!.input_tokens, answer.usage!.output_tokens])
    expect(await rules(OLLAMA)).toEqual(['effort minimal sent as low', 'effort xhigh sent as max'])

    // the next turn, a stream: one try, max from the start; Codex's minimal low the same way
    const stream = await openai.responses.create(codex('xhigh', 'Read a.ts.', true) as never)
    let usage: any
    for await (const event of stream as unknown as AsyncIterable<any>)
      if (event.type === 'response.completed') usage = event.response.usage
    const minimal = await openai.responses.create(codex('minimal', 'Quick.') as never)
    expect(minimal.status).toBe('completed')
    const later = await takeSimCalls(simOrigin, RESPONSES)
    expect(later.map((c) => c.reasoning)).toEqual([
      {effort: 'max', summary: 'auto'},
      {effort: 'low', summary: 'auto'},
    ])
    const [, next, third] = await projectLogRows(base, 'effort-codex-ollama', 3)
    expect([next.status, next.error, third.status, third.error]).toEqual([200, null, 200, null])
    expect(tokens(next)).toEqual([usage.input_tokens, usage.output_tokens])
    const doctor = await runCli(['doctor', '--json'], {home})
    const check = JSON.parse(doctor.stdout).checks.find((c: {id: string}) => c.id === 'translation')
    expect(check.detail).toContain('effort xhigh sent as max')
  })

  it("gpt-4o-mini's refusal of reasoning.effort: sent again without it, the summary kept; later in one try", async () => {
    const body = codex('none', 'hi')
    const {answer, refused, again, row} = await firstTurn('codex-mini', body)
    expect(refused.reasoning).toEqual({effort: 'none', summary: 'auto'})
    expect(JSON.stringify(again)).toBe(JSON.stringify({...body, model: MINI, reasoning: {summary: 'auto'}}))
    expect([row.status, row.error]).toEqual([
      200,
      'sim-responses refused reasoning.effort: sent again without it',
    ])
    expect(tokens(row)).toEqual([answer.usage!.input_tokens, answer.usage!.output_tokens])
    expect(await rules(MINI)).toEqual(['sent without reasoning.effort'])
    await client('codex-mini').responses.create(codex('high', 'again') as never)
    expect((await takeSimCalls(simOrigin, RESPONSES)).map((c) => c.reasoning)).toEqual([{summary: 'auto'}])
  })
})

describe("a chat client's effort refused in the server's own words", {timeout: 60_000}, () => {
  for (const [id, model, instead, words] of [
    ['chat-ollama', OLLAMA, 'max', 'it takes high, medium, low, max, none'],
    ['chat-sglang', SGLANG, 'high', 'it takes low, medium, high'],
  ] as const)
    it(`${id}: passed through, xhigh sent again at once as ${instead}, later in one try`, async () => {
      await takeSimCalls(simOrigin, /./)
      const openai = client(id)
      const answer = await openai.chat.completions.create({
        model: 'm',
        messages: [{role: 'user', content: 'hi'}],
        reasoning_effort: 'xhigh' as never,
      })
      expect(answer.choices[0].message.content).toBeTruthy()
      expect((await takeSimCalls(simOrigin, CHAT)).map((c) => c.reasoning_effort)).toEqual(['xhigh', instead])
      const [row] = await projectLogRows(base, `effort-${id}`, 1)
      expect([row.status, row.error]).toEqual([
        200,
        `sim-chat refused reasoning_effort xhigh (${words}): sent again with ${instead}`,
      ])
      expect(tokens(row)).toEqual([answer.usage!.prompt_tokens, answer.usage!.completion_tokens])
      await openai.chat.completions.create({
        model: 'm',
        messages: [{role: 'user', content: 'again'}],
        reasoning_effort: 'xhigh' as never,
      })
      expect((await takeSimCalls(simOrigin, CHAT)).map((c) => c.reasoning_effort)).toEqual([instead])
      expect((await rules(model))?.some((r) => r === `effort xhigh sent as ${instead}`)).toBe(true)
    })

  it("translated to Ollama's Responses API: minimal sent again as low", async () => {
    await takeSimCalls(simOrigin, /./)
    const openai = client('translated')
    const answer = await openai.chat.completions.create({
      model: 'm',
      messages: [{role: 'user', content: 'hi'}],
      reasoning_effort: 'minimal',
    })
    expect(answer.choices[0].message.content).toBeTruthy()
    expect((await takeSimCalls(simOrigin, RESPONSES)).map((c) => c.reasoning?.effort)).toEqual([
      'minimal',
      'low',
    ])
    const [row] = await projectLogRows(base, 'effort-translated', 1)
    expect([row.status, row.error]).toEqual([
      200,
      'sim-responses refused reasoning.effort minimal (it takes high, medium, low, max, none): sent again with low',
    ])
  })
})
