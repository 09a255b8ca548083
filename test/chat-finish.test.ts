/**
 * A chat client's stream passed through from an upstream that ends an answer without a
 * `finish_reason` (GLM on DashScope or NVIDIA NIM, Qwen previews, Groq's Kimi), or with a vendor's
 * outside OpenAI's five (Z.ai's `sensitive`, `network_error`): the AI SDK's OpenAI-compatible
 * provider reads it as `unknown`, and opencode's step loop goes on after such a finish without a
 * tool call, a request storm (anomalyco/opencode #49414). The chat tap sees it; the provider and
 * model learn it, and their later streams get OpenAI's finish (the first went as it came). The
 * real daemon, the simulator's `no-finish-reason`, `vendor-finish` and `broken-finish` quirks, and
 * the AI SDK's `streamText` (`@ai-sdk/openai-compatible` 1.0.56, as opencode and Kilo ship it) as
 * the client.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {aiSdkTurn as turnOf, streamedChunks as chunksOf} from './helpers/ai-sdk.js'
import {runCli} from './helpers/cli.js'
import {projectLogRows, startKeyedPolicies} from './helpers/gateway.js'

let base = ''
let home = ''
let stop: () => Promise<void> = async () => {}
let keys = new Map<string, string>()

const chat = (model: string) => ({chat: [{provider: 'sim-chat', model}]})

beforeAll(async () => {
  ;({base, home, stop, keys} = await startKeyedPolicies({
    nofinish: chat('sim-pro+no-finish-reason'),
    sensitive: chat('sim-pro+vendor-finish'),
    brokenfinish: chat('sim-pro+broken-finish'),
  }))
}, 120_000)

afterAll(() => stop())

/** One turn of the AI SDK's `streamText` as `project`'s agent (see helpers/ai-sdk.ts). */
const aiSdkTurn = (project: string, withTool = false) => turnOf(base, keys.get(project)!, withTool)
const streamedChunks = (project: string) => chunksOf(base, keys.get(project)!)

const note = (said: string) =>
  `sim-chat streamed ${said}, which AI SDK clients (opencode, Kilo) read as unknown and loop on: the gateway writes OpenAI's in this provider's streams from now on`

/** The first turn of `project`: the AI SDK's finish is `unknown`, and the row says what was learned. */
async function unknownOnce(project: string, said: string): Promise<void> {
  const first = await aiSdkTurn(project)
  expect(first.errors).toEqual([])
  expect(first.text).not.toBe('')
  expect(first.finishReason).toBe('unknown')
  const [row] = await projectLogRows(base, project, 1)
  expect([row.status, row.error]).toEqual([200, note(said)])
}

const RULE =
  "streamed finish reasons written as OpenAI's (a missing one as stop or tool_calls, sensitive as content_filter, a broken one as an error; learned from an answer)"

describe('a chat stream whose finish the AI SDK reads as unknown', {timeout: 60_000}, () => {
  it('no finish_reason: unknown once, learned; then stop, or tool-calls with a call; the usage row exact; doctor says so', async () => {
    await unknownOnce('nofinish', 'no finish_reason')

    // the bytes: a finish chunk of the stream's own id, created and model, before the usage chunk
    const chunks = await streamedChunks('nofinish')
    const at = chunks.findIndex((c) => c.choices[0]?.finish_reason)
    expect(chunks[at]).toEqual({
      id: chunks[0].id,
      object: 'chat.completion.chunk',
      created: chunks[0].created,
      model: chunks[0].model,
      choices: [{index: 0, delta: {}, finish_reason: 'stop'}],
    })
    expect(chunks.slice(at + 1).map((c) => c.choices)).toEqual([[]])
    const usage = chunks.at(-1)!.usage
    const rows = await projectLogRows(base, 'nofinish', 2)
    expect(rows[1]).toMatchObject({
      status: 200,
      error: null,
      inputTokens: usage.prompt_tokens,
      outputTokens: usage.completion_tokens,
    })

    const again = await aiSdkTurn('nofinish')
    expect([again.finishReason, again.errors]).toEqual(['stop', []])
    const called = await aiSdkTurn('nofinish', true)
    expect([called.finishReason, called.calls.length, called.errors]).toEqual(['tool-calls', 1, []])

    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {
      adaptations: Array<{provider: string; model: string; rules: string[]}>
    }
    expect(adaptations.find((a) => a.model === 'sim-pro+no-finish-reason')?.rules).toEqual([RULE])
    const doctor = await runCli(['doctor', '--json'], {home})
    const check = JSON.parse(doctor.stdout).checks.find((c: {id: string}) => c.id === 'translation')
    expect(check.detail).toContain(`sim-chat sim-pro+no-finish-reason (`)
    expect(check.detail).toContain(`): ${RULE}`)
  })

  it("Z.ai's sensitive: unknown once, then content-filter", async () => {
    await unknownOnce('sensitive', 'finish_reason sensitive')
    const again = await aiSdkTurn('sensitive')
    expect([again.finishReason, again.errors]).toEqual(['content-filter', []])
    const [, row] = await projectLogRows(base, 'sensitive', 2)
    expect([row.status, row.error]).toEqual([200, null])
  })

  it("Z.ai's network_error: unknown once, then an error the client shows; the row says it", async () => {
    await unknownOnce('brokenfinish', 'finish_reason network_error')
    const again = await aiSdkTurn('brokenfinish')
    expect(again.finishReason).toBe('error')
    expect(again.errors).toEqual(['upstream stopped the answer: finish_reason network_error'])
    // (the text that came before it stays the client's)
    expect(again.text).not.toBe('')
    const [, row] = await projectLogRows(base, 'brokenfinish', 2)
    expect([row.status, row.error]).toEqual([
      200,
      'sim-chat: upstream stream reported an error: upstream stopped the answer: finish_reason network_error',
    ])
  })
})
