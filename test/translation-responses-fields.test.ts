/**
 * Codex 0.155, signed in with ChatGPT, sends a top-level `access_programs: {"cyber": "standard"}`
 * in every Responses request, which a strict third-party Responses server refuses on every turn
 * (OpenCode Go: 400 "unknown parameter `access_programs`", lidge-jun/opencodex #4853, #4907). The
 * gateway learns the field from that refusal, once per provider and model: the request goes again
 * at once without it, so Codex sees no failure, and every later request goes without it from the
 * first try, the body otherwise as Codex sent it. The real daemon, the simulator's
 * `strict-responses-fields` quirk (OpenCode Go's words), the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {runCli} from './helpers/cli.js'
import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  simResponsesRefusal,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

const MODEL = 'muse-spark-1.3+strict-responses-fields'
const MODEL_CALL = /\/v1\/responses$/

let base = ''
let home = ''
let simOrigin = ''
let key = ''
let stop: () => Promise<void> = async () => {}

beforeAll(async () => {
  ;({base, home, simOrigin, stop} = await startSimGatewayWithPolicies([
    simPolicy('strict', {responses: [{provider: 'sim-responses', model: MODEL}]}),
  ]))
  key = await issueKeyOverApi(base, 'strict', 'codex', 'strict')
}, 120_000)

afterAll(async () => {
  await stop()
})

const user = (text: string) => ({
  type: 'message' as const,
  role: 'user' as const,
  content: [{type: 'input_text' as const, text}],
})

/** Codex 0.155's request signed in with ChatGPT, cut down, in its key order. */
const codexRequest = (input: unknown[], stream: boolean) =>
  ({
    model: 'gpt-6.2-sol',
    instructions: 'You are Codex.',
    input,
    tools: [
      {
        type: 'function',
        name: 'exec_command',
        parameters: {type: 'object', properties: {cmd: {type: 'string'}}, required: ['cmd']},
        strict: false,
      },
    ],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    reasoning: {effort: 'medium', summary: 'auto'},
    store: false,
    stream,
    include: ['reasoning.encrypted_content'],
    prompt_cache_key: 'session-1',
    access_programs: {cyber: 'standard'},
  }) as Record<string, unknown>

/** `body` without `access_programs`, every other field in its order. */
const withoutAccess = (body: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'access_programs'))

const NOTE = 'sim-responses refused access_programs (a field it does not know): sent again without it'

describe('Codex 0.155 passed through to a strict Responses server', {timeout: 60_000}, () => {
  it('access_programs refused: learned, sent again at once without it, Codex gets its answer', async () => {
    await takeSimCalls(simOrigin, MODEL_CALL)
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0})
    const body = codexRequest([user('List the files.')], false)
    const answer = await openai.responses.create(
      body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming,
    )
    expect(answer.status).toBe('completed')

    const [refused, again, ...more] = await takeSimCalls(simOrigin, MODEL_CALL)
    expect(more).toEqual([])
    // as Codex sent it, then the same without the field: every other field, in its order
    expect(JSON.stringify(refused)).toBe(JSON.stringify({...body, model: MODEL}))
    expect('access_programs' in again).toBe(false)
    expect(JSON.stringify(again)).toBe(JSON.stringify(withoutAccess({...body, model: MODEL})))
    const [row] = await projectLogRows(base, 'strict', 1)
    expect([row.status, row.error, row.provider]).toEqual([200, NOTE, 'sim-responses'])

    // what the simulator answered the first try: OpenCode Go's words
    expect(await simResponsesRefusal(simOrigin, refused)).toEqual([
      400,
      'unknown parameter `access_programs`',
    ])
  })

  it("the model's later requests (a stream) go without it from the first try; /api/adaptations and doctor say so", async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0})
    const body = codexRequest([user('List the files.'), user('Now read a.ts.')], true)
    const stream = await openai.responses.create(
      body as unknown as OpenAI.Responses.ResponseCreateParamsStreaming,
    )
    const types: string[] = []
    for await (const event of stream) types.push(event.type)
    expect(types.at(-1)).toBe('response.completed')
    const [sent, ...more] = await takeSimCalls(simOrigin, MODEL_CALL)
    expect(more).toEqual([])
    expect(JSON.stringify(sent)).toBe(JSON.stringify(withoutAccess({...body, model: MODEL})))
    const [, row] = await projectLogRows(base, 'strict', 2)
    expect([row.status, row.error]).toEqual([200, null])

    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {
      adaptations: Array<{provider: string; model: string; rules: string[]}>
    }
    expect(adaptations.find((a) => a.provider === 'sim-responses' && a.model === MODEL)?.rules).toEqual([
      'sent without access_programs',
    ])
    const doctor = await runCli(['doctor', '--json'], {home})
    const check = JSON.parse(doctor.stdout).checks.find((c: {id: string}) => c.id === 'translation')
    expect(check.detail).toMatch(
      /sim-responses muse-spark-1\.3\+strict-responses-fields \(\d+ s ago\): sent without access_programs/,
    )
  })
})
