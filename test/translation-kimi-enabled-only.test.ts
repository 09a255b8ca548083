/**
 * Kimi's Anthropic endpoints (Kimi Code's `api.kimi.com/coding/v1/messages`, Moonshot's
 * `/anthropic`) for K2.7 Code and `kimi-for-coding`, which take thinking only on: "invalid
 * thinking: only type=enabled is allowed for this model" to Claude Code's helper calls
 * (`thinking: disabled`, a small `max_tokens`), and "tool_choice 'required' is incompatible with
 * thinking enabled" to a forced call. Learned from the first refusal per provider and model: thinking
 * off goes as `enabled` with the least budget (1024), `max_tokens` kept above it, a forced call as
 * `auto` with the call asked for in words. The real daemon, the simulator (quirk
 * `kimi-enabled-only`), the official SDKs; what the upstream got and the log rows.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {translatedRoutes} from './helpers/gateway.js'

// (each policy's messages route passes through to the Messages model; its chat route translates)
const gw = translatedRoutes(
  {
    helper: ['sim-messages', 'kimi-k2.7-code+kimi-enabled-only'],
    forced: ['sim-messages', 'kimi-for-coding+kimi-enabled-only'],
  },
  {prefix: 'kimimsg', families: ['messages', 'chat']},
)

const MESSAGES = /\/v1\/messages$/
const {calls, rows} = gw
const anthropic = (id: string) => new Anthropic({baseURL: gw.base, apiKey: gw.keys.get(id)!, maxRetries: 0})
const openai = (id: string) => new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get(id)!, maxRetries: 0})

const LEAST = {type: 'enabled', budget_tokens: 1024}
const LEARNED =
  'sim-messages refused thinking.type disabled (only enabled is allowed): sent again with thinking.type enabled and the least budget, 1024 tokens (a request without thinking on, from now on)'

/** Claude Code 2.1.332's helper call (a session title): thinking off, a small limit. */
const helperCall = (): any => ({
  model: 'claude-haiku-4-5',
  max_tokens: 512,
  thinking: {type: 'disabled'},
  system: [{type: 'text', text: 'Write a 3-7 word title for this conversation.'}],
  messages: [{role: 'user', content: 'Fix the failing test in src/app.ts.'}],
})

const STRUCTURED = {
  name: 'StructuredOutput',
  description: 'Answer in this shape',
  input_schema: {type: 'object' as const, properties: {title: {type: 'string'}}, required: ['title']},
}

describe("Kimi's Anthropic endpoint, which takes thinking only on", {timeout: 60_000}, () => {
  it("Claude Code's helper call passed through: refused once, sent again with the least budget; later ones in one try", async () => {
    await calls(MESSAGES)
    const client = anthropic('helper')
    const first = await client.messages.create(helperCall())
    expect(first.content.some((b) => b.type === 'text')).toBe(true)
    const sent = await calls(MESSAGES)
    expect(sent.map((b) => [b.thinking, b.max_tokens])).toEqual([
      [{type: 'disabled'}, 512],
      [LEAST, 1536],
    ])
    // (every other field as it came, in its place)
    expect({...sent[1], thinking: sent[0].thinking, max_tokens: 512}).toEqual(sent[0])
    expect(Object.keys(sent[1])).toEqual(Object.keys(sent[0]))
    expect((await rows('helper')).map((r) => [r.status, r.error])).toEqual([[200, LEARNED]])
    const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {adaptations: any[]}
    expect(adaptations.find((a) => a.model === 'kimi-k2.7-code+kimi-enabled-only')?.rules).toEqual([
      'thinking turned down to thinking.type enabled with the least budget, 1024 tokens, a forced tool_choice as auto (only enabled is allowed)',
    ])

    // the next turn: one try, with the least budget; a helper call without thinking gets it too;
    // the main agent's own thinking goes as it came
    await client.messages.create(helperCall())
    const {thinking: _, ...noThinking} = helperCall()
    await client.messages.create(noThinking)
    // (a limit under twice the budget raised by it; the sampling settings cut out)
    await client.messages.create({...helperCall(), max_tokens: 1100, temperature: 0, top_k: 40})
    const main = {...helperCall(), max_tokens: 8000, thinking: {type: 'enabled', budget_tokens: 4000}}
    await client.messages.create(main)
    const later = await calls(MESSAGES)
    // (a body without thinking: the member added last)
    expect(Object.keys(later[1]).at(-1)).toBe('thinking')
    expect(later.map((b) => [b.thinking, b.max_tokens])).toEqual([
      [LEAST, 1536],
      [LEAST, 1536],
      [LEAST, 2124],
      [{type: 'enabled', budget_tokens: 4000}, 8000],
    ])
    expect([later[2].temperature, later[2].top_k]).toEqual([undefined, undefined])
    expect((await rows('helper', 5)).slice(1).map((r) => [r.status, r.error])).toEqual([
      [200, null],
      [200, null],
      [200, null],
      [200, null],
    ])
  })

  it("a chat client's reasoning_effort none, translated to the model learned so: the least budget, its max_tokens above it, one try", async () => {
    await calls(MESSAGES)
    const answer = await openai('helper').chat.completions.create({
      model: 'kimi',
      messages: [{role: 'user', content: 'Name this branch.'}],
      reasoning_effort: 'none' as never,
      max_tokens: 200,
      temperature: 0.2,
    })
    expect(answer.choices[0].message.content).toBeTruthy()
    const sent = await calls(MESSAGES)
    expect(sent.map((b) => [b.thinking, b.max_tokens, b.temperature])).toEqual([[LEAST, 1224, undefined]])
    expect((await rows('helper', 6)).at(-1)?.error).toBeNull()
  })

  it('a forced call: a chat client learns it in three tries (the forced choice, then thinking off refused), Claude Code then in one', async () => {
    // (the chat client asks nothing of thinking: the last try goes with the least budget, as the
    // note says, in case the host refuses a body without thinking too)
    await calls(MESSAGES)
    const answer = await openai('forced').chat.completions.create({
      model: 'kimi',
      messages: [{role: 'user', content: 'Title this conversation.'}],
      tools: [
        {
          type: 'function',
          function: {
            name: STRUCTURED.name,
            description: STRUCTURED.description,
            parameters: STRUCTURED.input_schema,
          },
        },
      ],
      tool_choice: 'required',
    })
    expect(answer.choices[0].message.tool_calls?.[0]).toMatchObject({function: {name: 'StructuredOutput'}})
    const sent = await calls(MESSAGES)
    expect(sent.map((b) => [b.tool_choice.type, b.thinking])).toEqual([
      ['any', undefined],
      ['any', {type: 'disabled'}],
      ['auto', LEAST],
    ])
    expect(JSON.stringify(sent[2].messages.at(-1).content)).toMatch(/call one of the tools/)
    expect((await rows('forced')).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-messages refused a forced tool_choice in thinking mode: sent again with thinking.type disabled (and no output_config.effort), the forced choice kept; sim-messages refused thinking.type disabled (only enabled is allowed): sent again with thinking.type enabled and the least budget, 1024 tokens, the forced tool_choice as auto with the call asked for at the end of the prompt (a request without thinking on, from now on)',
      ],
    ])

    // Claude Code's forced StructuredOutput with thinking off, passed through: one try, as auto
    const forced = await anthropic('forced').messages.create({
      ...helperCall(),
      tools: [STRUCTURED],
      tool_choice: {type: 'tool', name: 'StructuredOutput'},
    })
    expect(forced.content.find((b) => b.type === 'tool_use')).toMatchObject({name: 'StructuredOutput'})
    const passed = await calls(MESSAGES)
    expect(passed.map((b) => [b.tool_choice, b.thinking, b.max_tokens])).toEqual([
      [{type: 'auto'}, LEAST, 1536],
    ])
    expect(JSON.stringify(passed[0].messages.at(-1).content)).toMatch(/call the tool StructuredOutput/)
    expect((await rows('forced', 2))[1].error).toBeNull()
  })
})
