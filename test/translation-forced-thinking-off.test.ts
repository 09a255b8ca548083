/**
 * A forced tool choice to a server that thinks by default and refuses one while it does: the
 * request goes with thinking off for that one call and the forced choice kept, so the tool asked
 * for is the one called (structured output, a sub-agent's `StructuredOutput`), not asked for in
 * words. DeepSeek V4 and Kimi K2.5 on get it from the first try; DashScope's Qwen3 learns it from
 * its refusal; DeepSeek's Anthropic endpoint, Claude Code passed through to it, learns it too
 * (thinking disabled without the effort it refuses beside that). The real daemon, the simulator
 * (its quirk `tool-choice-auto-only` in each server's words by the model's name, on chat and
 * Messages: the forced choice taken with thinking off; `deepseek-effort-off`), the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {codexRequest, READ_FILE_TOOL} from './helpers/codex.js'
import {translatedRoutes} from './helpers/gateway.js'

// (each policy's messages route passes to a Messages model, or translates to a chat one; its
// responses route translates)
const gw = translatedRoutes(
  {
    deepseek: ['sim-chat', 'deepseek-v4-flash+tool-choice-auto-only'],
    kimi: ['sim-chat', 'kimi-k2.6+tool-choice-auto-only'],
    qwen: ['sim-chat', 'qwen3-max+tool-choice-auto-only'],
    anthropic: ['sim-messages', 'deepseek-v4-pro+tool-choice-auto-only+deepseek-effort-off'],
  },
  {prefix: 'forcedoff', families: ['messages', 'responses']},
)

const CHAT = /\/chat\/completions$/
const MESSAGES = /\/v1\/messages$/
const {calls, rows} = gw
const anthropic = (id: string) => new Anthropic({baseURL: gw.base, apiKey: gw.keys.get(id)!, maxRetries: 0})

/** Claude Code's tools: a sub-agent's structured answer is the second, forced by name. */
const TOOLS = [
  {
    name: 'Bash',
    description: 'Run a command',
    input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}, required: ['command']},
  },
  {
    name: 'StructuredOutput',
    description: 'Give the answer',
    input_schema: {type: 'object' as const, properties: {summary: {type: 'string'}}, required: ['summary']},
  },
]

/** A sub-agent's last turn: thinking on, its answer forced through StructuredOutput. */
const structured = (): Anthropic.MessageCreateParamsNonStreaming => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 16000,
  thinking: {type: 'enabled', budget_tokens: 8000},
  tools: TOOLS,
  tool_choice: {type: 'tool', name: 'StructuredOutput'},
  messages: [{role: 'user', content: 'Summarise what you found.'}],
})

describe('a forced tool_choice to a server that refuses one while thinking', {timeout: 60_000}, () => {
  it("Claude Code's StructuredOutput to DeepSeek V4: thinking off from the first try, the forced tool called", async () => {
    await calls(CHAT)
    const answer = await anthropic('deepseek').messages.create(structured())
    // the tool forced, not the first one (what the model calls when only asked in words); no thinking
    expect(answer.content).toEqual([
      expect.objectContaining({
        type: 'tool_use',
        name: 'StructuredOutput',
        input: {summary: expect.any(String)},
      }),
    ])
    expect(answer.stop_reason).toBe('tool_use')
    const sent = await calls(CHAT)
    expect(sent).toHaveLength(1)
    expect(sent[0]).toMatchObject({
      thinking: {type: 'disabled'},
      tool_choice: {type: 'function', function: {name: 'StructuredOutput'}},
    })
    expect(sent[0]).not.toHaveProperty('reasoning_effort')
    expect(sent[0].messages.at(-1)).toEqual({role: 'user', content: 'Summarise what you found.'})
    expect((await rows('deepseek')).map((r) => [r.status, r.error])).toEqual([
      [200, 'thinking turned off for the forced tool_choice (the model refuses one while thinking)'],
    ])
    // the usage the client sees: no thinking tokens, nothing else changed
    expect(answer.usage.output_tokens).toBeGreaterThan(0)

    // the same turn forcing nothing thinks as it asked
    await anthropic('deepseek').messages.create({...structured(), tool_choice: {type: 'auto'}})
    const [free] = await calls(CHAT)
    expect(free).not.toHaveProperty('thinking')
    expect(free.reasoning_effort).toBeDefined()
  })

  it("Codex's tool_choice required to Kimi: thinking off from the first try, the call made", async () => {
    await calls(CHAT)
    const answer = await new OpenAI({
      baseURL: `${gw.base}/v1`,
      apiKey: gw.keys.get('kimi')!,
      maxRetries: 0,
    }).responses.create({
      ...codexRequest([{role: 'user', content: 'Read /tmp/notes.txt.'}]),
      reasoning: {effort: 'high'},
      tool_choice: 'required',
    })
    expect(answer.status).toBe('completed')
    expect(answer.output.find((o) => o.type === 'function_call')).toMatchObject({name: READ_FILE_TOOL.name})
    expect(answer.output.some((o) => o.type === 'reasoning')).toBe(false)
    const sent = await calls(CHAT)
    expect(sent.map((c) => [c.tool_choice, c.thinking, c.reasoning_effort])).toEqual([
      ['required', {type: 'disabled'}, undefined],
    ])
  })

  it("DashScope's Qwen3: learned from its refusal, sent again with enable_thinking false and the forced choice, later ones at once", async () => {
    await calls(CHAT)
    const client = anthropic('qwen')
    const first = await client.messages.create(structured())
    expect(first.content.find((b) => b.type === 'tool_use')).toMatchObject({name: 'StructuredOutput'})
    const sent = await calls(CHAT)
    expect(sent.map((c) => [c.enable_thinking, c.tool_choice])).toEqual([
      [undefined, {type: 'function', function: {name: 'StructuredOutput'}}],
      [false, {type: 'function', function: {name: 'StructuredOutput'}}],
    ])
    expect(sent[1]).not.toHaveProperty('reasoning_effort')
    expect((await rows('qwen')).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-chat refused a forced tool_choice in thinking mode: sent again with thinking off (enable_thinking false), the forced choice kept',
      ],
    ])
    const {adaptations} = (await (await fetch(`${gw.base}/api/adaptations`)).json()) as {adaptations: any[]}
    expect(adaptations.find((a) => a.model === 'qwen3-max+tool-choice-auto-only')).toMatchObject({
      rules: [
        'a request that forces a tool call sent with thinking turned off, the forced tool_choice kept (refused while thinking)',
      ],
    })
    await client.messages.create(structured())
    expect((await calls(CHAT)).map((c) => c.enable_thinking)).toEqual([false])
  })

  it("Claude Code passed through to DeepSeek's Anthropic endpoint: thinking disabled and no effort for the forced call, learned once", async () => {
    await calls(MESSAGES)
    const client = anthropic('anthropic')
    // Claude Code's WebSearch-like helper call before 2.1.166: thinking on, the session's effort
    const forced = (): any => ({
      model: 'claude-sonnet-4-5',
      max_tokens: 32000,
      thinking: {type: 'adaptive'},
      output_config: {effort: 'max'},
      tools: TOOLS,
      tool_choice: {type: 'tool', name: 'StructuredOutput'},
      messages: [{role: 'user', content: 'Summarise what you found.'}],
    })
    const answer = await client.messages.stream(forced()).finalMessage()
    expect(answer.content).toEqual([expect.objectContaining({type: 'tool_use', name: 'StructuredOutput'})])
    const sent = await calls(MESSAGES)
    expect(sent.map((c) => [c.thinking, c.output_config, c.tool_choice])).toEqual([
      [{type: 'adaptive'}, {effort: 'max'}, {type: 'tool', name: 'StructuredOutput'}],
      [{type: 'disabled'}, undefined, {type: 'tool', name: 'StructuredOutput'}],
    ])
    expect((await rows('anthropic')).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-messages refused a forced tool_choice in thinking mode: sent again with thinking.type disabled (and no output_config.effort), the forced choice kept',
      ],
    ])
    // later: the forced call at once; the main agent's turn, which forces nothing, keeps its thinking
    await client.messages.stream(forced()).finalMessage()
    await client.messages.stream({...forced(), tool_choice: {type: 'auto'}}).finalMessage()
    expect((await calls(MESSAGES)).map((c) => [c.thinking.type, c.output_config])).toEqual([
      ['disabled', undefined],
      ['adaptive', {effort: 'max'}],
    ])
  })
})
