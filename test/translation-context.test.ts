/**
 * A prompt past the upstream model's context window, through translation: DeepSeek answers
 * "This model's maximum context length is 8192 tokens. However, you requested N tokens (P in the
 * messages, C in the completion)". Claude Code compacts its conversation and goes on only when
 * told "prompt is too long: P tokens > 8192 maximum" (its reactive compaction reads both numbers),
 * Codex knows `context_length_exceeded`, Gemini CLI Gemini's input token count: each entrance gets
 * the refusal in its own words, the upstream's after them. A request whose prompt fits but whose
 * `max_tokens` does not is no overflow: `max_tokens` is learned away as before. The real daemon,
 * the simulator's `context-8k` quirk, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import {GoogleGenAI} from '@google/genai'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {runCli} from './helpers/cli.js'
import {issueKeyOverApi, simPolicy, startSimGatewayWithPolicies, takeSimCalls} from './helpers/gateway.js'
import {claudeCodeReads} from './helpers/claude-code.js'

let base = ''
let home = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
let key = ''
let sameKey = ''

beforeAll(async () => {
  ;({base, home, simOrigin, stop} = await startSimGatewayWithPolicies([
    // the same family, not translated: an Anthropic-compatible server that says it in the chat
    // API's words (DeepSeek's Anthropic endpoint, a local server)
    simPolicy('ctx-same', {messages: [{provider: 'sim-messages', model: 'claude-sonnet-4-5+context-8k'}]}),
    simPolicy(
      'ctx',
      Object.fromEntries(
        ['messages', 'responses', 'gemini'].map((f) => [
          f,
          [{provider: 'sim-chat', model: 'deepseek-chat+context-8k', translate: true}],
        ]),
      ),
    ),
  ]))
  key = await issueKeyOverApi(base, 'ctx', 'generic_agent', 'ctx')
  sameKey = await issueKeyOverApi(base, 'ctx-same', 'generic_agent', 'ctx-same')
}, 120_000)

afterAll(() => stop())

// about 11 000 of the simulator's tokens: past the window of 8 192 on its own
const LONG = Array.from({length: 2200}, (_, i) => `line ${i} of a long tool output`).join('\n')

/** Claude Code's turn with LONG in it, through the policy of `apiKey` (its refusal, read). */
const askLong = (apiKey: string) =>
  refusal(
    new Anthropic({baseURL: base, apiKey, maxRetries: 0}).messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [{role: 'user', content: LONG}],
    }),
  )

async function refusal<T>(promise: Promise<T>): Promise<{status: number; message: string; error?: any}> {
  return promise.then(
    () => {
      throw new Error('expected a refusal')
    },
    (error: any) => ({status: error.status, message: error.message, error: error.error}),
  )
}

describe('a prompt past the context window, in the words each agent acts on', {timeout: 60_000}, () => {
  it("Claude Code: Anthropic's prompt is too long with both numbers, stream and not", async () => {
    await takeSimCalls(simOrigin, /./)
    const client = new Anthropic({baseURL: base, apiKey: key, maxRetries: 0})
    const ask = {
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [{role: 'user' as const, content: LONG}],
    }
    const plain = await refusal(client.messages.create(ask))
    expect(plain.status).toBe(400)
    expect(plain.error).toMatchObject({type: 'error', error: {type: 'invalid_request_error'}})
    const read = claudeCodeReads(plain.error.error.message)
    expect(read?.limit).toBe(8192)
    expect(read!.actual).toBeGreaterThan(8192)
    // the upstream's own words follow
    expect(plain.error.error.message).toContain(`(${read!.actual} in the messages, 1024 in the completion)`)
    expect(plain.error.error.message).toContain('sim-chat (chat, translated): upstream answered 400')
    const streamed = await refusal(client.messages.stream(ask).finalMessage())
    expect(claudeCodeReads(streamed.error.error.message)).toEqual(read)
    // a refusal, not learned: each request went once
    expect(await takeSimCalls(simOrigin, /\/chat\/completions$/)).toHaveLength(2)

    // the log row keeps the upstream's words
    const logs = (await (await fetch(`${base}/api/logs?limit=5`)).json()) as {
      logs: Array<{status: number; error: string}>
    }
    expect(logs.logs[0]).toMatchObject({status: 400})
    expect(logs.logs[0].error).toContain("This model's maximum context length is 8192 tokens")
  })

  it("Claude Code's max_tokens past the window with a short prompt: no overflow, max_tokens learned away", async () => {
    await takeSimCalls(simOrigin, /./)
    const client = new Anthropic({baseURL: base, apiKey: key, maxRetries: 0})
    const answer = await client.messages
      .stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 32000,
        messages: [{role: 'user', content: 'Say hello.'}],
      })
      .finalMessage()
    expect(answer.content.length).toBeGreaterThan(0)
    const calls = await takeSimCalls(simOrigin, /\/chat\/completions$/)
    expect(calls.map((c) => c.max_tokens)).toEqual([32000, undefined])
  })

  it('Codex: the Responses API code context_length_exceeded', async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0})
    const refused = await refusal(
      openai.responses.create({model: 'gpt-5-codex', store: false, input: [{role: 'user', content: LONG}]}),
    )
    expect(refused.status).toBe(400)
    expect(refused.error).toMatchObject({code: 'context_length_exceeded', type: 'invalid_request_error'})
    expect(refused.error.message).toMatch(
      /^Your input exceeds the context window of this model \(8192 tokens; this request has \d+\)/,
    )
  })

  it("Gemini CLI: Gemini's input token count", async () => {
    const gemini = new GoogleGenAI({apiKey: key, httpOptions: {baseUrl: base}})
    const refused = await refusal(
      gemini.models.generateContent({
        model: 'gemini-2.5-flash',
        contents: [{role: 'user', parts: [{text: LONG}]}],
      }),
    )
    expect(refused.status).toBe(400)
    expect(refused.message).toMatch(
      /The input token count \(\d+\) exceeds the maximum number of tokens allowed \(8192\)/,
    )
    expect(refused.message).toContain('INVALID_ARGUMENT')
  })

  it('Claude Code on an Anthropic-compatible server of other words (not translated): the same words', async () => {
    await takeSimCalls(simOrigin, /./)
    const client = new Anthropic({baseURL: base, apiKey: sameKey, maxRetries: 0})
    const refused = await askLong(sameKey)
    expect(refused.status).toBe(400)
    const read = claudeCodeReads(refused.error.error.message)
    expect(read?.limit).toBe(8192)
    expect(refused.error.error.message).toContain('sim-messages: upstream answered 400: This model')
    expect(await takeSimCalls(simOrigin, /\/v1\/messages$/)).toHaveLength(1)

    // the prompt fits and Claude Code's max_tokens does not: Anthropic's words for that, which
    // Claude Code handles as it handles "prompt is too long"
    const room = await refusal(
      client.messages
        .stream({
          model: 'claude-sonnet-4-5',
          max_tokens: 32000,
          messages: [{role: 'user', content: 'Say hello.'}],
        })
        .finalMessage(),
    )
    expect(room.status).toBe(400)
    expect(room.error.error.message).toMatch(
      /^input length and `max_tokens` exceed context limit: \d+ \+ 32000 > 8192, decrease input length or `max_tokens` and try again \(sim-messages: upstream answered 400: /,
    )
    // any other 400 of that server goes to the client as it came (one that names max_tokens too)
    const other = await refusal(
      client.messages.create({model: 'claude-sonnet-4-5', messages: [{role: 'user', content: 'hi'}]} as any),
    )
    expect(other.status).toBe(400)
    expect(other.error.error.message).toMatch(/max_tokens/)
    expect(other.error.error.message).not.toContain('prompt is too long')
  })

  it('the window each refusal stated is kept, and doctor says how to have the agent compact in time', async () => {
    // the latest refusal of each upstream model came from a Messages client (Claude Code)
    for (const apiKey of [key, sameKey]) expect((await askLong(apiKey)).status).toBe(400)
    const {adaptations} = (await (await fetch(`${base}/api/adaptations`)).json()) as {adaptations: any[]}
    const rule = 'a context window of 8,192 tokens (stated in its refusal of a longer prompt)'
    // translated (sim-chat) and not (sim-messages, an Anthropic-compatible server of other words)
    expect(adaptations.find((a) => a.provider === 'sim-chat')).toMatchObject({
      model: 'deepseek-chat+context-8k',
      window: {tokens: 8192, entrance: 'messages'},
    })
    expect(adaptations.find((a) => a.provider === 'sim-chat').rules).toContain(rule)
    expect(adaptations.find((a) => a.provider === 'sim-messages')).toMatchObject({
      model: 'claude-sonnet-4-5+context-8k',
      rules: [rule],
      window: {tokens: 8192, entrance: 'messages'},
    })
    const doctor = await runCli(['doctor', '--json'], {home})
    const check = JSON.parse(doctor.stdout).checks.find((c: any) => c.id === 'translation')
    expect(check).toMatchObject({ok: true})
    // under Claude Code's least auto-compact window (100 000): its other setting
    expect(check.detail).toContain('sim-messages claude-sonnet-4-5+context-8k (')
    expect(check.detail).toContain(
      `${rule} (Claude Code assumes up to 1,000,000: run it with a model name that does not start with claude- and CLAUDE_CODE_MAX_CONTEXT_TOKENS=8192 so that it compacts in time)`,
    )
  })
})
