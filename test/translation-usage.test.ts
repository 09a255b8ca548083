/**
 * A translated chat upstream that reports no usage: an OpenAI-compatible server that ignores
 * `stream_options.include_usage` (the simulator's `no-usage` quirk). An agent decides when to
 * compact its conversation from the input tokens it is told (Claude Code's auto-compact, Codex's,
 * Gemini CLI's compression); told 0 on every turn it never does, and the conversation grows until
 * the upstream refuses it. The gateway tells it an estimate (characters / 4) instead, the log row
 * holds the same counts and says they are an estimate. The real daemon, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {issueKeyOverApi, projectLogRows, simPolicy, startSimGatewayWithPolicies} from './helpers/gateway.js'

let base = ''
let stop: () => Promise<void> = async () => {}
const keys = new Map<string, string>()

beforeAll(async () => {
  const policy = (id: string, model: string) =>
    simPolicy(
      id,
      Object.fromEntries(
        ['messages', 'responses', 'gemini'].map((f) => [f, [{provider: 'sim-chat', model, translate: true}]]),
      ),
    )
  ;({base, stop} = await startSimGatewayWithPolicies([
    policy('usage-none', 'sim-mini+no-usage'),
    policy('usage-reported', 'sim-mini'),
    policy('usage-moonshot', 'sim-mini+usage-in-choice'),
  ]))
  for (const id of ['usage-none', 'usage-reported', 'usage-moonshot'])
    for (const agent of ['claude', 'codex', 'gemini'])
      keys.set(`${id}-${agent}`, await issueKeyOverApi(base, `${id}-${agent}`, 'generic_agent', id))
}, 120_000)

afterAll(() => stop())

interface Row {
  status: number
  error: string | null
  inputTokens: number
  outputTokens: number
  project: string
  id: number
}

/** The log rows of the agent `name`, oldest first, once there are `count`. */
async function logRows(name: string, count: number): Promise<Row[]> {
  const rows = (await projectLogRows(base, name, count)) as unknown as Row[]
  expect(rows).toHaveLength(count)
  return rows
}

/** 2 000 characters: 500 tokens by the estimate. */
const PROMPT = 'word '.repeat(400)
const estimateOf = (text: string): number => Math.ceil(text.length / 4)
const NOTE = 'usage estimated (chars/4): sim-chat reported no input and output tokens'

describe('a translated chat upstream that reports no usage', {timeout: 60_000}, () => {
  it('Claude Code is told an estimate, stream and not, and the row holds it with a note', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('usage-none-claude')!, maxRetries: 0})
    const params = {
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      messages: [{role: 'user' as const, content: PROMPT}],
    }
    const streamed = await client.messages.stream(params).finalMessage()
    const said = streamed.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
    expect(said.length).toBeGreaterThan(0)
    expect(streamed.usage).toMatchObject({input_tokens: 500, output_tokens: estimateOf(said)})
    const whole = await client.messages.create(params)
    expect(whole.usage).toMatchObject({input_tokens: 500, output_tokens: streamed.usage.output_tokens})
    const rows = await logRows('usage-none-claude', 2)
    expect(rows.map((r) => [r.status, r.inputTokens, r.outputTokens, r.error])).toEqual([
      [200, 500, estimateOf(said), NOTE],
      [200, 500, estimateOf(said), NOTE],
    ])
  })

  it('Codex and Gemini CLI are told the estimate in their own usage', async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('usage-none-codex')!, maxRetries: 0})
    const response = await openai.responses
      .stream({model: 'gpt-5-codex', input: PROMPT, store: false})
      .finalResponse()
    expect(response.usage).toMatchObject({
      input_tokens: 500,
      output_tokens: estimateOf(response.output_text),
      total_tokens: 500 + estimateOf(response.output_text),
    })
    const ai = new GoogleGenAI({apiKey: keys.get('usage-none-gemini')!, httpOptions: {baseUrl: base}})
    let text = ''
    let meta: Record<string, unknown> | undefined
    for await (const chunk of await ai.models.generateContentStream({
      model: 'gemini-2.5-flash',
      contents: [{role: 'user', parts: [{text: PROMPT}]}],
    })) {
      text += chunk.text ?? ''
      if (chunk.usageMetadata) meta = chunk.usageMetadata as Record<string, unknown>
    }
    expect(meta).toMatchObject({promptTokenCount: 500, candidatesTokenCount: estimateOf(text)})
    expect((await logRows('usage-none-codex', 1))[0]).toMatchObject({inputTokens: 500, error: NOTE})
    expect((await logRows('usage-none-gemini', 1))[0]).toMatchObject({inputTokens: 500, error: NOTE})
  })

  it('usage the upstream reports is told as it came, with no note', async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('usage-reported-claude')!, maxRetries: 0})
    const answer = await client.messages
      .stream({model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{role: 'user', content: PROMPT}]})
      .finalMessage()
    const [row] = await logRows('usage-reported-claude', 1)
    expect(row.error).toBeNull()
    // the simulator's own count (its tokenizer, not the estimate), told and logged alike
    const u = answer.usage
    const input = u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0)
    expect(input).toBe(row.inputTokens)
    expect(input).not.toBe(500)
    expect(answer.usage.output_tokens).toBe(row.outputTokens)
  })

  it("Moonshot's usage (Kimi): in the stream's finish choice, its cache hits beside the counts, told and logged", async () => {
    const client = new Anthropic({baseURL: base, apiKey: keys.get('usage-moonshot-claude')!, maxRetries: 0})
    const ask = {role: 'user' as const, content: PROMPT}
    const first = await client.messages.create({model: 'kimi-k2.5', max_tokens: 256, messages: [ask]})
    const said = first.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
    // turn 2, a stream: its prefix is in the simulator's prompt cache
    const answer = await client.messages
      .stream({
        model: 'kimi-k2.5',
        max_tokens: 256,
        messages: [ask, {role: 'assistant', content: said}, {role: 'user', content: 'And again.'}],
      })
      .finalMessage()
    const rows = await logRows('usage-moonshot-claude', 2)
    expect(rows.map((r) => r.error)).toEqual([null, null])
    const u = answer.usage
    expect(u.cache_read_input_tokens).toBeGreaterThan(0)
    expect(u.input_tokens + (u.cache_read_input_tokens ?? 0)).toBe(rows[1].inputTokens)
    expect(rows[1].inputTokens).toBeGreaterThan(500)
    expect(u.output_tokens).toBe(rows[1].outputTokens)
    expect(first.usage.input_tokens).toBe(rows[0].inputTokens)
  })
})
