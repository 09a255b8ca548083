/**
 * Claude Code on an Anthropic-compatible server that is not Claude: Ollama's `/v1/messages` in
 * front of a model without thinking refuses Claude Code's `thinking` ("\"llama3.1:8b\" does not
 * support thinking"), and every turn of the agent failed. The refusal is learned from the 400 of
 * the request passed through untranslated, the request goes again at once without it, and later
 * ones go without it from the start; the same for Codex translated onto that server, and for an
 * older Ollama's refusal of an effort it reads as a thinking level. The real daemon, the
 * simulator's Messages upstream in Ollama's words, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {codexRequest} from './helpers/codex.js'
import {translatedRoutes} from './helpers/gateway.js'

// (each policy's messages route passes to the model, its responses route translates to it)
const gw = translatedRoutes(
  {
    ollama: ['sim-messages', 'llama3.1:8b+ollama-no-think'],
    ollamaold: ['sim-messages', 'qwen3:8b+ollama-think-value'],
  },
  {prefix: 'passmsg', families: ['messages', 'responses']},
)

const MESSAGES = /\/v1\/messages$/
const calls = () => gw.calls(MESSAGES)
const {rows} = gw
const learned = async (model: string): Promise<string[]> => {
  const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {
    adaptations: Array<{model: string; rules: string[]}>
  }
  return adaptations.find((a) => a.model === model)?.rules ?? []
}

/** Claude Code 2.1.332's request for a Claude 4.5 model: thinking enabled with a budget. */
const claudeCode = (): any => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 32000,
  thinking: {budget_tokens: 31999, type: 'enabled', display: 'omitted'},
  context_management: {edits: [{type: 'clear_thinking_20251015', keep: 'all'}]},
  system: [{type: 'text', text: 'You are Claude Code.', cache_control: {type: 'ephemeral'}}],
  messages: [{role: 'user', content: 'Say hello.'}],
})

describe('Ollama in front of a model without thinking, on its Anthropic endpoint', {timeout: 60_000}, () => {
  it("Claude Code's thinking, passed through: learned away at once, left out from then on", async () => {
    await calls()
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('ollama')!, maxRetries: 0})
    // (a stream, as Claude Code asks: the SDK refuses a non-stream request for 32 000 tokens)
    const first = await client.messages.stream(claudeCode()).finalMessage()
    expect(first.content).toEqual([expect.objectContaining({type: 'text'})])
    const sent = await calls()
    expect(sent.map((c) => c.thinking?.type)).toEqual(['enabled', undefined])
    const {thinking: _, ...rest} = sent[0]
    expect(sent[1]).toEqual(rest)
    expect((await rows('ollama')).map((r) => [r.status, r.error])).toEqual([
      [200, 'sim-messages refused thinking (a model without it): sent again without thinking'],
    ])
    expect(await learned('llama3.1:8b+ollama-no-think')).toEqual(['sent without thinking'])

    // the next turn: one try, without thinking
    const streamed = await client.messages.stream(claudeCode()).finalMessage()
    expect(streamed.stop_reason).toBe('end_turn')
    const later = await calls()
    expect(later).toHaveLength(1)
    expect(later[0]).not.toHaveProperty('thinking')
    expect(later[0].context_management).toEqual(claudeCode().context_management)
  })

  it("Codex's effort, translated to that server: the same rule, no second refusal", async () => {
    const answer = await new OpenAI({
      baseURL: `${gw.base}/v1`,
      apiKey: gw.keys.get('ollama')!,
      maxRetries: 0,
    }).responses.create(codexRequest('Say hello.'))
    expect(answer.status).toBe('completed')
    const sent = await calls()
    expect(sent).toHaveLength(1)
    expect(sent[0]).not.toHaveProperty('thinking')
    expect(sent[0]).not.toHaveProperty('output_config')
  })

  it("an older Ollama's refusal of an effort as a thinking level: output_config.effort learned away", async () => {
    await calls()
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('ollamaold')!, maxRetries: 0})
    const answer = await client.messages.create({
      model: 'claude-opus-4-8',
      max_tokens: 4096,
      thinking: {type: 'adaptive'},
      output_config: {effort: 'high'},
      messages: [{role: 'user', content: 'Say hello.'}],
    } as any)
    expect(answer.content.some((b) => b.type === 'text')).toBe(true)
    const sent = await calls()
    expect(sent.map((c) => c.output_config)).toEqual([{effort: 'high'}, undefined])
    expect(sent[1].thinking).toEqual({type: 'adaptive'})
    expect((await rows('ollamaold')).map((r) => r.error)).toEqual([
      'sim-messages refused thinking (a model without it): sent again without output_config.effort',
    ])
  })
})
