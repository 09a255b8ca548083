/**
 * Google's thought-only answer (router-for-me/CLIProxyAPI #5226): a thinking model's turn that is
 * only thinking ends with a 200, a usage of thoughts and no candidate token, and no
 * `finishReason` on its last chunk. The real daemon, the simulator's `+thoughts-no-finish` model:
 * - a Gemini client passed through gets the chunk Gemini would have ended with (STOP, the last
 *   usage) and no error event; the row is an answer and the breaker counts no failure;
 * - a Messages client translated to it (`@anthropic-ai/sdk`) gets its thinking, then, since the
 *   turn has no text nor call (research56 F4), an `overloaded_error` event Claude Code retries,
 *   not an `end_turn` it cannot go on from; the row counts the thoughts, the breaker no failure.
 * A stream cut without its finish (`no-terminal`) stays an error and a breaker failure, a cut
 * mid-thinking too (the last chunk a thought with its running usage of thoughts, as Gemini 2.5
 * streams it: `+thoughts-no-finish+no-terminal`).
 */
import Anthropic from '@anthropic-ai/sdk'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {issueKeyOverApi, projectLogRows, simPolicy, startSimGatewayWithPolicies} from './helpers/gateway.js'

let base = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

const MODEL = 'gemini-3-pro+thoughts-no-finish'

beforeAll(async () => {
  ;({base, stop} = await startSimGatewayWithPolicies([
    simPolicy('gtnf-pass', {gemini: [{provider: 'sim-gemini'}]}),
    simPolicy('gtnf-msg', {messages: [{provider: 'sim-gemini', model: MODEL, translate: true}]}),
  ]))
  for (const id of ['pass', 'msg'])
    keys.set(id, await issueKeyOverApi(base, `gtnf-${id}`, 'generic_agent', `gtnf-${id}`))
}, 120_000)

afterAll(() => stop())

async function circuit(): Promise<{state: string; consecutiveFailures: number}> {
  const {providers} = (await (await fetch(`${base}/api/providers`)).json()) as {
    providers: Array<{name: string; circuit: {state: string; consecutiveFailures: number} | null}>
  }
  return providers.find((p) => p.name === 'sim-gemini')!.circuit ?? {state: 'closed', consecutiveFailures: 0}
}

/** Gemini CLI's streamed request, thoughts shown, passed through to `model`. */
async function geminiStream(model: string): Promise<string> {
  const res = await fetch(`${base}/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
    method: 'POST',
    headers: {'content-type': 'application/json', 'x-goog-api-key': keys.get('pass')!},
    body: JSON.stringify({
      contents: [{role: 'user', parts: [{text: 'Think about it.'}]}],
      generationConfig: {thinkingConfig: {includeThoughts: true, thinkingLevel: 'HIGH'}},
    }),
  })
  expect(res.status).toBe(200)
  return res.text()
}

const chunks = (text: string): Array<Record<string, any>> =>
  text
    .split(/\r?\n\r?\n/)
    .map((block) => /^data: (.*)$/m.exec(block)?.[1])
    .filter((data): data is string => data !== undefined)
    .map((data) => JSON.parse(data) as Record<string, any>)

describe("Google's thought-only answer without finishReason", {timeout: 60_000}, () => {
  it('passed through: ends with the STOP chunk and the last usage; no error, no breaker failure', async () => {
    const text = await geminiStream(MODEL)
    const events = chunks(text)
    expect(text).not.toMatch(/"error":\{/)
    expect(text.endsWith('\n\n')).toBe(true)
    const [upstreamLast, appended] = events.slice(-2)
    expect(events.slice(0, -1).every((e) => e.candidates[0].finishReason === undefined)).toBe(true)
    expect(appended).toEqual({
      candidates: [{content: {role: 'model', parts: []}, finishReason: 'STOP', index: 0}],
      usageMetadata: upstreamLast!.usageMetadata,
    })
    const usage = upstreamLast!.usageMetadata
    expect(usage.thoughtsTokenCount).toBeGreaterThan(0)
    expect(usage.candidatesTokenCount).toBeUndefined()
    const [row] = await projectLogRows(base, 'gtnf-pass')
    expect(row).toMatchObject({status: 200, error: null})
    expect(row!.broken ?? false).toBe(false)
    expect(row).toMatchObject({
      inputTokens: usage.promptTokenCount,
      outputTokens: usage.thoughtsTokenCount,
      reasoningTokens: usage.thoughtsTokenCount,
    })
    expect(await circuit()).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })

  it('translated to Messages (@anthropic-ai/sdk): the thinking, then an overloaded_error event (no text, no call)', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('msg')!, maxRetries: 0})
    const stream = client.messages.stream({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      thinking: {type: 'enabled', budget_tokens: 2048},
      messages: [{role: 'user', content: 'Think about it.'}],
    })
    const error = await stream.finalMessage().then(
      () => undefined,
      (e: unknown) => e as Error,
    )
    expect(error?.message).toMatch(/"type":"overloaded_error"/)
    expect(error?.message).toContain('the upstream answered nothing')
    expect(stream.currentMessage?.content.map((b) => b.type)).toEqual(['thinking'])
    const [row] = await projectLogRows(base, 'gtnf-msg')
    expect(row).toMatchObject({status: 200, broken: true})
    expect(row!.error).toMatch(/after its thoughts streamed: the client got an error event$/)
    // the thoughts the upstream counted are on the row
    expect(row!.reasoningTokens).toBeGreaterThan(0)
    expect(row!.outputTokens).toBe(row!.reasoningTokens)
    expect(await circuit()).toMatchObject({state: 'closed', consecutiveFailures: 0})
  })

  it('a stream cut without its finish (no-terminal) stays an error event and a breaker failure', async () => {
    const before = (await circuit()).consecutiveFailures
    const text = await geminiStream('gemini-3-pro+no-terminal')
    expect(text).toMatch(
      /"error":\{"code":502,"message":"sim-gemini: stream ended without its terminal event/,
    )
    expect((await circuit()).consecutiveFailures).toBe(before + 1)
  })

  it('cut after a thought chunk with its usage of thoughts (Gemini 2.5) stays an error and a breaker failure', async () => {
    const before = (await circuit()).consecutiveFailures
    const text = await geminiStream(`${MODEL}+no-terminal`)
    const events = chunks(text)
    // the upstream's last chunk: a thought with a usage of thoughts only, no finishReason
    const upstreamLast = events.at(-2)!
    expect(upstreamLast.candidates[0].content.parts[0].thought).toBe(true)
    expect(upstreamLast.usageMetadata.thoughtsTokenCount).toBeGreaterThan(0)
    expect(upstreamLast.usageMetadata.candidatesTokenCount).toBeUndefined()
    expect(text).not.toContain('"finishReason"')
    expect(events.at(-1)).toMatchObject({
      error: {
        code: 502,
        message: expect.stringMatching(/^sim-gemini: stream ended without its terminal event/),
      },
    })
    expect((await circuit()).consecutiveFailures).toBe(before + 1)
  })
})
