/**
 * Ollama cuts a prompt longer than its context (`num_ctx`) to half of it and two, answers 200 and
 * reports only what it kept: Claude Code's model loses its system prompt and tools, and Claude
 * Code never compacts, since the input it is told stays small (ollama/ollama #3839, #17427). The
 * gateway reads the cut from the answer's count and the request's size: the answer goes as it
 * came (a 200), the log row says what happened and what to do, and `gwctl doctor` names the
 * server's setting. Claude Code passed through to Ollama's Anthropic endpoint and translated to
 * its chat API; a server not named Ollama is not read. The real daemon, the simulator's
 * `ollama-truncate` quirk (a context of 4 096) behind providers named `ollama…`, the Anthropic SDK.
 */
import Anthropic from '@anthropic-ai/sdk'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../src/sim/server.js'
import {startSim} from '../src/sim/server.js'
import type {Family} from '../src/store/schema.js'
import {runCli} from './helpers/cli.js'
import {issueKeyOverApi, projectLogRows, simPolicy, startSimGatewayWithPolicies} from './helpers/gateway.js'

let sim: Simulator
let base = ''
let home = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

const MODEL = 'qwen3:8b+ollama-truncate'
const policy = (id: string, provider: string, translate?: true) =>
  simPolicy(id, {messages: [{provider, model: MODEL, ...(translate ? {translate} : {})}]})

beforeAll(async () => {
  // an Ollama of its own (the gateway's simulator is named `sim-…`, which says nothing of Ollama)
  sim = await startSim()
  const ollama = (name: string, family: Family) => ({
    name,
    family,
    baseUrl: sim.origin,
    credential: {secret: 'sim-key'},
  })
  ;({base, home, stop} = await startSimGatewayWithPolicies(
    [
      policy('cut-pass', 'ollama'),
      policy('cut-chat', 'ollama-chat', true),
      policy('cut-other', 'sim-messages'),
    ],
    [ollama('ollama', 'messages'), ollama('ollama-chat', 'chat')],
  ))
  for (const id of ['cut-pass', 'cut-chat', 'cut-other'])
    keys.set(id, await issueKeyOverApi(base, id, 'claude_code', id))
}, 120_000)

afterAll(async () => {
  await stop()
  await sim.close()
})

// about 11 000 of the simulator's tokens: past Ollama's 4 096
const LONG = Array.from({length: 2200}, (_, i) => `line ${i} of a long tool output`).join('\n')

/** Claude Code's long turn through the policy `id`, streamed as Claude Code asks. */
const askLong = (id: string) =>
  new Anthropic({baseURL: base, apiKey: keys.get(id)!, maxRetries: 0}).messages
    .stream({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      system: 'You are Claude Code.',
      messages: [{role: 'user', content: LONG}],
    })
    .finalMessage()

const NOTE =
  /cut the prompt to its context \(num_ctx ≈ 4096\) and dropped its start: it read 2050 tokens of a request of [\d,]+ bytes \(the model lost its system prompt and tools\); raise OLLAMA_CONTEXT_LENGTH \(64000 or more for an agent\)$/

describe("Ollama's silent cut of a prompt past its context", {timeout: 60_000}, () => {
  it('passed through to its Anthropic endpoint: the answer stands, the row says what happened and what to do', async () => {
    // the first turn cut is not said yet (a count of that shape could be chance); the next is
    await askLong('cut-pass')
    const answer = await askLong('cut-pass')
    expect(answer.usage.input_tokens).toBe(2050)
    const [first, second] = await projectLogRows(base, 'cut-pass', 2)
    expect([first.status, first.error]).toEqual([200, null])
    expect(second.status).toBe(200)
    expect(second.error).toMatch(new RegExp(`^ollama ${NOTE.source}`))
  })

  it('translated to its chat API: the same', async () => {
    await askLong('cut-chat')
    const answer = await askLong('cut-chat')
    expect(answer.usage.input_tokens).toBe(2050)
    const row = (await projectLogRows(base, 'cut-chat', 2)).at(-1)!
    expect(row.status).toBe(200)
    expect(row.error).toMatch(new RegExp(`^ollama-chat ${NOTE.source}`))
  })

  it('a server not known to be Ollama: nothing said', async () => {
    await askLong('cut-other')
    expect((await askLong('cut-other')).usage.input_tokens).toBe(2050)
    const row = (await projectLogRows(base, 'cut-other', 2)).at(-1)!
    expect([row.status, row.error]).toEqual([200, null])
  })

  it('the window is kept, and doctor names the setting', async () => {
    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {adaptations: any[]}
    const rule =
      'a context window of 4,096 tokens (its num_ctx, read from a longer prompt it cut without a word, its start dropped)'
    for (const provider of ['ollama', 'ollama-chat'])
      expect(adaptations.find((a) => a.provider === provider)).toMatchObject({
        model: MODEL,
        rules: [rule],
        window: {tokens: 4096, entrance: 'messages', cut: true},
      })
    expect(adaptations.find((a) => a.provider === 'sim-messages')).toBeUndefined()
    const doctor = await runCli(['doctor', '--json'], {home})
    const check = JSON.parse(doctor.stdout).checks.find((c: any) => c.id === 'translation')
    expect(check).toMatchObject({ok: true})
    expect(check.detail).toContain(`ollama ${MODEL} (`)
    expect(check.detail).toContain(
      `${rule} (raise OLLAMA_CONTEXT_LENGTH where Ollama runs (64000 or more for an agent: Claude Code's first request alone is 12,000 to 25,000 tokens) or num_ctx in the model's Modelfile, and restart it)`,
    )
  })
})
