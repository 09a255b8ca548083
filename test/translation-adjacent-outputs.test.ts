/**
 * Codex passed through to DeepSeek's Responses API, which pairs a tool call and its output by
 * position: a PostToolUse hook's `additionalContext` (a developer message between a call and its
 * output) had every later request of the session refused ("No tool output found for tool call
 * call_…"). The gateway learns the rule from that refusal, once per provider and model: the request
 * goes again at once with each output right after its call, so Codex sees no failure, and every
 * later request goes so from the first try, with the same bytes for the same history. Codex's
 * tools made plain for such a server on this machine (through the codecs) learn it too, the
 * request going again plain. The real daemon, the simulator's `adjacent-outputs` quirk (DeepSeek's
 * words), the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../src/sim/server.js'
import {startSim} from '../src/sim/server.js'
import {runCli} from './helpers/cli.js'
import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  simResponsesRefusal,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

const MODEL = 'deepseek-v4-flash+adjacent-outputs'
const MODEL_CALL = /\/v1\/responses$/

let base = ''
let home = ''
let simOrigin = ''
let key = ''
let plainKey = ''
/** A simulator of the test's own on 127.0.0.1, which the gateway takes for a server on this machine (Codex's tools go plain). */
let ownSim: Simulator
let stop: () => Promise<void> = async () => {}
/** The first turn's history as it went again, rewritten. */
let rewritten: unknown[] = []

beforeAll(async () => {
  ownSim = await startSim({timeScale: 100})
  ;({base, home, simOrigin, stop} = await startSimGatewayWithPolicies(
    [
      simPolicy('adjacent', {responses: [{provider: 'sim-responses', model: MODEL}]}),
      simPolicy('adjacent-plain', {responses: [{provider: 'local-deepseek', model: `${MODEL}+plain-tools`}]}),
    ],
    [{name: 'local-deepseek', family: 'responses', baseUrl: ownSim.origin, credential: {secret: 'sim-key'}}],
  ))
  key = await issueKeyOverApi(base, 'adjacent', 'codex', 'adjacent')
  plainKey = await issueKeyOverApi(base, 'adjacent-plain', 'codex', 'adjacent-plain')
}, 120_000)

afterAll(async () => {
  await stop()
  await ownSim?.close()
})

const user = (text: string) => ({
  type: 'message' as const,
  role: 'user' as const,
  content: [{type: 'input_text' as const, text}],
})
const hook = (text: string) => ({
  type: 'message' as const,
  role: 'developer' as const,
  content: [{type: 'input_text' as const, text}],
})
const call = (id: string, cmd: string) => ({
  type: 'function_call' as const,
  call_id: id,
  name: 'exec_command',
  arguments: JSON.stringify({cmd}),
})
const output = (id: string, text: string) => ({
  type: 'function_call_output' as const,
  call_id: id,
  output: text,
})

/** Codex's request, cut down: its history with a hook's context between a call and its output. */
const codexRequest = (input: unknown[]) =>
  ({
    model: 'gpt-5.6-sol',
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
    store: false,
  }) as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming

const HOOK = hook('PostToolUse: ls listed 2 files; the build is green.')
const TURN_1 = [
  user('List the files.'),
  call('call_00_ET_a', 'ls'),
  HOOK,
  output('call_00_ET_a', 'a.ts b.ts'),
]
const NOTE =
  "sim-responses refused a tool call's output not right after the call: sent again with each call's output right after it, what stood between after them"
const RULE =
  "each tool call's output sent right after the call, the items between them after it (it pairs them by position)"

describe("Codex passed through to DeepSeek's Responses API", {timeout: 60_000}, () => {
  it('a hook message between a call and its output: learned from the refusal, sent again at once, Codex gets its answer', async () => {
    await takeSimCalls(simOrigin, MODEL_CALL)
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0})
    const answer = await openai.responses.create(codexRequest(TURN_1))
    expect(answer.status).toBe('completed')

    const [refused, again, ...more] = await takeSimCalls(simOrigin, MODEL_CALL)
    expect(more).toEqual([])
    // as Codex sent it, then with the output right after its call and the hook's message after it
    expect(refused.input).toEqual(TURN_1)
    expect(again.input).toEqual([TURN_1[0], TURN_1[1], TURN_1[3], HOOK])
    rewritten = again.input
    expect({...again, input: undefined}).toEqual({...refused, input: undefined})
    const [row] = await projectLogRows(base, 'adjacent', 1)
    expect([row.status, row.error, row.provider]).toEqual([200, NOTE, 'sim-responses'])

    // what the simulator answered the first try: the refusal in DeepSeek's words
    expect(await simResponsesRefusal(simOrigin, refused)).toEqual([
      400,
      'No tool output found for tool call call_00_ET_a',
    ])
  })

  it('later turns go rewritten from the first try, their prefix the bytes of the turn before', async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0})
    const hookB = hook('PostToolUse: cat printed 1 line.')
    const turn2 = [
      ...TURN_1,
      call('call_00_ET_b', 'cat a.ts'),
      call('call_00_ET_c', 'cat b.ts'),
      hookB,
      output('call_00_ET_b', 'export {}'),
      output('call_00_ET_c', 'export {}'),
      user('Thanks. Now summarise.'),
    ]
    const answer = await openai.responses.create(codexRequest(turn2))
    expect(answer.status).toBe('completed')
    const [sent, ...more] = await takeSimCalls(simOrigin, MODEL_CALL)
    expect(more).toEqual([])
    // the parallel calls stay one batch, their outputs right after it, the hook's message after those
    expect(sent.input).toEqual([
      TURN_1[0],
      TURN_1[1],
      TURN_1[3],
      HOOK,
      turn2[4],
      turn2[5],
      turn2[7],
      turn2[8],
      hookB,
      turn2[9],
    ])
    // (the prompt cache: the turn before, as it went, is where this one starts)
    expect(JSON.stringify(sent.input).startsWith(JSON.stringify(rewritten).slice(0, -1))).toBe(true)
    const [, row] = await projectLogRows(base, 'adjacent', 2)
    expect([row.status, row.error]).toEqual([200, null])

    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {
      adaptations: Array<{provider: string; model: string; rules: string[]}>
    }
    expect(adaptations.find((a) => a.provider === 'sim-responses' && a.model === MODEL)?.rules).toEqual([
      RULE,
    ])
    const doctor = await runCli(['doctor', '--json'], {home})
    const check = JSON.parse(doctor.stdout).checks.find((c: {id: string}) => c.id === 'translation')
    expect(check.detail).toMatch(
      /sim-responses deepseek-v4-flash\+adjacent-outputs \(\d+ s ago\): each tool call's output sent right after the call/,
    )
  })
})

describe(
  "Codex's tools made plain for a server on this machine that pairs calls and outputs by position",
  {timeout: 60_000},
  () => {
    it('learned from the refusal of the plain request, which goes again plain, the output right after its call', async () => {
      await takeSimCalls(ownSim.origin, MODEL_CALL)
      const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: plainKey, maxRetries: 0})
      const said = {
        type: 'message' as const,
        role: 'assistant' as const,
        content: [{type: 'output_text' as const, text: 'Listing them now.'}],
      }
      const request = codexRequest([
        user('List the files.'),
        call('call_1', 'ls'),
        said,
        output('call_1', 'a.ts'),
      ])
      // Codex's apply_patch, a custom tool: the body goes to this server through the codecs, plain
      ;(request.tools as unknown[]).push({type: 'custom', name: 'apply_patch', description: 'Patch files.'})
      const answer = await openai.responses.create(request)
      expect(answer.status).toBe('completed')

      const [refused, again, ...more] = await takeSimCalls(ownSim.origin, MODEL_CALL)
      expect(more).toEqual([])
      const order = (body: Record<string, any>) =>
        body.input.map((i: {type: string; role?: string}) => i.role ?? i.type)
      expect(order(refused)).toEqual(['user', 'function_call', 'assistant', 'function_call_output'])
      expect(order(again)).toEqual(['user', 'function_call', 'function_call_output', 'assistant'])
      // both plain: the custom tool a function each time (this server refuses it otherwise)
      for (const body of [refused, again])
        expect(body.tools.map((t: {type: string}) => t.type)).toEqual(['function', 'function'])
      const [row] = await projectLogRows(base, 'adjacent-plain', 1)
      expect([row.status, row.error]).toEqual([200, NOTE.replace('sim-responses', 'local-deepseek')])
    })
  },
)
