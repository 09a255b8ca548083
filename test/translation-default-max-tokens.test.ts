/**
 * Codex and Gemini CLI send no output limit. Translated, a chat server would cut every answer at
 * its own default (4 096 on GLM at Z.AI and Ark) and a Messages upstream got 8 192: both get
 * Claude Code's 32 000 instead, a server whose cap is lower costs one failed try and is learned,
 * and a local server (whose default is the rest of its window) gets none. A client's own limit
 * goes as it came. The real daemon, the official OpenAI and Google SDKs.
 */
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../src/sim/server.js'
import {startSim} from '../src/sim/server.js'
import {
  issueKeyOverApi,
  projectLogRows,
  simPolicy,
  startSimGatewayWithPolicies,
  takeSimCalls,
} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
/** A simulator of the test's own, on 127.0.0.1: the local server. */
let ownSim: Simulator
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

/** Each test its own model: what is learned is kept per provider and model. */
const ROUTES: Record<string, {provider: string; model: string}> = {
  glm: {provider: 'sim-chat', model: 'glm-5.2'},
  capped: {provider: 'sim-chat', model: 'deepseek-chat+max-tokens-8192'},
  local: {provider: 'local-vllm', model: 'Qwen/Qwen3.6-35B-A3B'},
  minimax: {provider: 'sim-messages', model: 'MiniMax-M3'},
}

beforeAll(async () => {
  ownSim = await startSim({timeScale: 100})
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies(
    Object.entries(ROUTES).map(([id, {provider, model}]) =>
      simPolicy(
        `maxdef-${id}`,
        Object.fromEntries(
          ['messages', 'responses', 'gemini'].map((f) => [f, [{provider, model, translate: true}]]),
        ),
      ),
    ),
    [{name: 'local-vllm', family: 'chat', baseUrl: `${ownSim.origin}/v1`, credential: {secret: 'sim-key'}}],
  ))
  for (const id of Object.keys(ROUTES))
    keys.set(id, await issueKeyOverApi(base, `maxdef-${id}`, 'generic_agent', `maxdef-${id}`))
}, 120_000)

afterAll(async () => {
  await stop()
  await ownSim?.close()
})

const CHAT = /\/chat\/completions$/
const codex = (id: string) => new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get(id)!, maxRetries: 0})
const ask = {model: 'gpt-5.5', input: 'Write the file.', reasoning: {effort: 'high' as const}}

describe('a client that sets no output limit', {timeout: 60_000}, () => {
  it('Codex to GLM on a chat server: max_tokens 32 000, not the server default; its own limit as it came', async () => {
    await takeSimCalls(simOrigin, /./)
    await codex('glm').responses.create(ask)
    await codex('glm').responses.create({...ask, max_output_tokens: 5000})
    expect((await takeSimCalls(simOrigin, CHAT)).map((b) => b.max_tokens)).toEqual([32000, 5000])
  })

  it("Gemini CLI to GLM: the same (Gemini CLI's main request has no maxOutputTokens)", async () => {
    const genai = new GoogleGenAI({apiKey: keys.get('glm')!, httpOptions: {baseUrl: base}})
    await takeSimCalls(simOrigin, /./)
    await genai.models.generateContent({model: 'gemini-2.5-pro', contents: 'Write the file.'})
    expect((await takeSimCalls(simOrigin, CHAT)).map((b) => b.max_tokens)).toEqual([32000])
  })

  it('a server whose cap is lower: one failed try, learned, the next request in one try', async () => {
    await takeSimCalls(simOrigin, /./)
    await codex('capped').responses.create(ask)
    expect((await takeSimCalls(simOrigin, CHAT)).map((b) => b.max_tokens)).toEqual([32000, 8192])
    await codex('capped').responses.create(ask)
    expect((await takeSimCalls(simOrigin, CHAT)).map((b) => b.max_tokens)).toEqual([8192])
    expect((await projectLogRows(base, 'maxdef-capped', 2)).map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-chat refused max_tokens 32000: sent again with 8192, its limit'],
      [200, null],
    ])
  })

  it('a local server gets none: its default is the rest of its window', async () => {
    await takeSimCalls(ownSim.origin, /./)
    await codex('local').responses.create(ask)
    const [sent] = await takeSimCalls(ownSim.origin, CHAT)
    expect(sent).not.toHaveProperty('max_tokens')
  })

  it('Codex on a Messages upstream with effort low: 32 000 (8 192 before, half of it the budget)', async () => {
    await takeSimCalls(simOrigin, /./)
    await codex('minimax').responses.create({...ask, reasoning: {effort: 'low'}})
    const [sent] = await takeSimCalls(simOrigin, /\/messages$/)
    expect([sent.max_tokens, sent.thinking]).toEqual([32000, {type: 'enabled', budget_tokens: 4096}])
  })
})
