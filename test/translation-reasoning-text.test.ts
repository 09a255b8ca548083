/**
 * Codex passed through to DeepSeek's Responses API in thinking mode, which gives its reasoning as
 * `reasoning_text` content and wants it back on a tool call's turn; Codex sends a reasoning item
 * back with its summary and encrypted content only, so the second request of every tool loop was
 * refused ("The `reasoning_text` in the thinking mode must be passed back to the API."; research49
 * #4). The gateway learns it once per provider and model: the request goes again at once through
 * the Responses codecs, the reasoning item whose text Codex did not keep as an empty
 * `reasoning_text`, and later answers' reasoning reaches Codex as the item's summary, which goes
 * back as `reasoning_text`. The real daemon, the simulator's `reasoning-text` quirk (DeepSeek's
 * words), the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

const MODEL = 'deepseek-v4-pro+reasoning-text'
const MODEL_CALL = /\/v1\/responses$/

let base = ''
let simOrigin = ''
let key = ''
let stop: () => Promise<void> = async () => {}

beforeAll(async () => {
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies([
    simPolicy('reasoning-text', {responses: [{provider: 'sim-responses', model: MODEL}]}),
  ]))
  key = await issueKeyOverApi(base, 'reasoning-text', 'codex', 'reasoning-text')
}, 120_000)

afterAll(() => stop())

const PATCH = '*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch'
const user = (text: string) => ({type: 'message', role: 'user', content: [{type: 'input_text', text}]})

/** Codex's request, cut down: its custom apply_patch tool, reasoning on. */
const codexRequest = (input: unknown[]) =>
  ({
    model: 'gpt-5.5',
    instructions: 'You are Codex.',
    input,
    tools: [{type: 'custom', name: 'apply_patch', description: 'Edit files.', format: {type: 'text'}}],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    reasoning: {effort: 'high'},
    include: ['reasoning.encrypted_content'],
    store: false,
  }) as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming

/** The first turn as Codex sends it back: the reasoning item without its text (Codex kept none). */
const TURN_1 = [
  user('Add a.txt.'),
  {type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: null},
  {type: 'custom_tool_call', call_id: 'call_00_a', name: 'apply_patch', input: PATCH},
  {type: 'custom_tool_call_output', call_id: 'call_00_a', output: 'Success.'},
]
const NOTE =
  'sim-responses refused a tool call turn without its reasoning_text: sent again through the codecs, each reasoning item with its text as reasoning_text (empty where Codex kept none)'

describe("Codex passed through to DeepSeek's Responses API in thinking mode", {timeout: 60_000}, () => {
  it('a turn without its reasoning_text: learned, sent again at once through the codecs; the next turns go so from the first try', async () => {
    await takeSimCalls(simOrigin, MODEL_CALL)
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0})
    const answer = await openai.responses.create(codexRequest(TURN_1))
    expect(answer.status).toBe('completed')
    const [refused, again, ...more] = await takeSimCalls(simOrigin, MODEL_CALL)
    expect(more).toEqual([])
    expect(refused.input).toEqual(TURN_1)
    // the reasoning item with an empty reasoning_text, the custom tool and its call as functions
    expect(again.input.slice(1, 3)).toEqual([
      {type: 'reasoning', id: 'rs_1', summary: [], content: [{type: 'reasoning_text', text: ''}]},
      {
        type: 'function_call',
        call_id: 'call_00_a',
        name: 'apply_patch',
        arguments: JSON.stringify({input: PATCH}),
      },
    ])
    expect(again.tools[0]).toMatchObject({type: 'function', name: 'apply_patch'})
    const [row] = await projectLogRows(base, 'reasoning-text', 1)
    expect([row.status, row.error]).toEqual([200, NOTE])
    // the model's reasoning reaches Codex as the item's summary
    const reasoning = answer.output.find((o) => o.type === 'reasoning') as unknown as {
      summary: Array<{text: string}>
    }
    expect(reasoning.summary[0]?.text).toBeTruthy()

    // Codex's next turn, with that item as it got it: one try, the text back as reasoning_text
    const next = await openai.responses.create(
      codexRequest([...TURN_1, ...answer.output, user('Now b.txt.')] as unknown[]),
    )
    expect(next.status).toBe('completed')
    const [sent, ...rest] = await takeSimCalls(simOrigin, MODEL_CALL)
    expect(rest).toEqual([])
    const items = sent.input.filter((i: {type: string}) => i.type === 'reasoning')
    expect(items.at(-1).content).toEqual([{type: 'reasoning_text', text: reasoning.summary[0].text}])
  })
})
