/**
 * OpenAI's remote compaction (`POST /v1/responses/compact`), which Codex calls when its provider
 * is OpenAI's: before, the gateway had no such route and Codex stopped with "Error running remote
 * compact task: unexpected status 404". Passed through to a Responses upstream (its usage on the
 * log row); on a route that translates to another family, a 400 that says how Codex compacts
 * locally; a later turn's `compaction` item refused by name there, not dropped. The real daemon,
 * the simulator's Responses and chat upstreams, the official OpenAI SDK.
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {PolicyTarget} from '../src/store/schema.js'
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

beforeAll(async () => {
  const policy = (id: string, target: PolicyTarget) => simPolicy(`compact-${id}`, {responses: [target]})
  ;({base, simOrigin, stop} = await startSimGatewayWithPolicies([
    policy('openai', {provider: 'sim-responses', model: 'gpt-5.5'}),
    policy('chat', {provider: 'sim-chat', model: 'deepseek-chat', translate: true}),
  ]))
  for (const id of ['openai', 'chat'])
    keys.set(id, await issueKeyOverApi(base, `compact-${id}`, 'codex', `compact-${id}`))
}, 120_000)

afterAll(() => stop())

const HISTORY: OpenAI.Responses.ResponseInput = [
  {type: 'message', role: 'user', content: [{type: 'input_text', text: 'Fix the failing test.'}]},
  {role: 'assistant', content: 'Fixed it.'},
]

describe('remote compaction through the gateway', {timeout: 60_000}, () => {
  it('a Responses route: passed through, the compaction item back, the usage on the log row', async () => {
    const client = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('openai')!, maxRetries: 0})
    const compacted = await client.responses.compact({
      model: 'gpt-5.5',
      input: HISTORY,
      instructions: 'Be brief.',
    })
    expect(compacted.object).toBe('response.compaction')
    expect(compacted.output.map((item) => item.type)).toEqual(['message', 'compaction'])
    const rows = await projectLogRows(base, 'compact-openai', 1)
    expect(rows.map((r) => [r.status, r.provider])).toEqual([[200, 'sim-responses']])
    expect(rows[0].inputTokens).toBeGreaterThan(0)

    // the next turn carries the item, passed through as it came
    await takeSimCalls(simOrigin, /\/v1\/responses$/)
    const item = compacted.output[1] as OpenAI.Responses.ResponseCompactionItem
    const next = await client.responses.create({
      model: 'gpt-5.5',
      input: [
        {type: 'compaction', encrypted_content: item.encrypted_content},
        {role: 'user', content: 'Go on.'},
      ],
    })
    expect(next.status).toBe('completed')
  })

  it('a translated route: a 400 that says remote compaction needs a Responses upstream and how Codex compacts locally', async () => {
    const client = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('chat')!, maxRetries: 0})
    const refused = await client.responses
      .compact({model: 'gpt-5.5', input: HISTORY})
      .catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError)
    const message = (refused as InstanceType<typeof OpenAI.BadRequestError>).message
    expect(message).toContain(
      'remote compaction (POST /v1/responses/compact, or a compaction_trigger item) needs a Responses upstream',
    )
    expect(message).toContain('remote_compaction_v2 off')

    const compaction = await client.responses
      .create({
        model: 'gpt-5.5',
        input: [
          {type: 'compaction', encrypted_content: 'gAAAA-opaque'},
          {role: 'user', content: 'Go on.'},
        ],
      })
      .catch((e: unknown) => e)
    expect(compaction).toBeInstanceOf(OpenAI.BadRequestError)
    expect((compaction as Error).message).toContain('a compaction item (the history OpenAI')
    const rows = await projectLogRows(base, 'compact-chat', 2)
    expect(rows.map((r) => r.status)).toEqual([400, 400])
    // nothing reached the chat upstream
    expect(await takeSimCalls(simOrigin, /\/chat\/completions$/)).toEqual([])
  })
})
