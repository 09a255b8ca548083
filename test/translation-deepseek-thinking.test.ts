/**
 * DeepSeek's thinking mode (and Kimi's), which refused what agents send on every turn:
 * Claude Code's sub-agents on DeepSeek's Anthropic endpoint (`thinking: disabled` beside its
 * `output_config.effort`: "thinking options type cannot be disabled when reasoning_effort is
 * set"), a forced tool choice in thinking mode to a model that cannot stop thinking (Kimi K2
 * Thinking's "tool_choice 'required' is incompatible with thinking enabled"; deepseek-reasoner's
 * case in translation-refused-requests.test.ts; a model that can goes with thinking off,
 * translation-forced-thinking-off.test.ts), and V4's
 * refusal of a tool call turn without its reasoning ("The `reasoning_content` in the thinking
 * mode must be passed back to the API."). Each learned from its 400, the request sent again at
 * once, later ones adapted from the start. The real daemon, the simulator (its quirks
 * `deepseek-effort-off`, `tool-choice-auto-only` and `reasoning-content-required` in DeepSeek's
 * and Kimi's words by the model's name), the official SDKs.
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
    effort: ['sim-messages', 'deepseek-v4-pro+deepseek-effort-off'],
    // (K2 Thinking, which cannot stop thinking: K2.5 on take the forced call with thinking off,
    // translation-forced-thinking-off.test.ts)
    kimi: ['sim-chat', 'kimi-k2-thinking+tool-choice-auto-only'],
    history: ['sim-chat', 'deepseek-v4-flash+reasoning-content-required'],
    loop: ['sim-chat', 'deepseek-v4-pro+reasoning-content-required'],
  },
  {prefix: 'dsthink', families: ['messages', 'responses']},
)

const MESSAGES = /\/v1\/messages$/
const CHAT = /\/chat\/completions$/
const {calls, rows} = gw
const anthropic = (id: string) => new Anthropic({baseURL: gw.base, apiKey: gw.keys.get(id)!, maxRetries: 0})

const BASH_TOOL = {
  name: 'Bash',
  description: 'Run a command',
  input_schema: {type: 'object' as const, properties: {command: {type: 'string'}}, required: ['command']},
}

describe("DeepSeek's thinking mode, learned from its refusals", {timeout: 60_000}, () => {
  it("Claude Code's sub-agent on DeepSeek's Anthropic endpoint: the effort beside thinking disabled learned away, the main agent's kept", async () => {
    await calls(MESSAGES)
    const client = anthropic('effort')
    // Claude Code 2.1.332's sub-agent: thinking off, the session's effort (CLAUDE_CODE_EFFORT_LEVEL=max)
    const subAgent = (): any => ({
      model: 'claude-sonnet-4-5',
      max_tokens: 32000,
      thinking: {type: 'disabled'},
      output_config: {effort: 'max'},
      system: [{type: 'text', text: 'You are a sub-agent.'}],
      messages: [{role: 'user', content: 'Say hello.'}],
    })
    const first = await client.messages.stream(subAgent()).finalMessage()
    expect(first.content).toEqual([expect.objectContaining({type: 'text'})])
    const sent = await calls(MESSAGES)
    expect(sent.map((c) => c.output_config)).toEqual([{effort: 'max'}, undefined])
    const {output_config: _, ...rest} = sent[0]
    expect(sent[1]).toEqual(rest)
    expect((await rows('effort')).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-messages refused output_config.effort beside thinking.type disabled: sent again without the effort (requests that turn thinking off, from now on)',
      ],
    ])

    // the main agent thinks: its effort goes, one try; the next sub-agent goes without it at once
    const main = await client.messages.stream({...subAgent(), thinking: {type: 'adaptive'}}).finalMessage()
    expect(main.stop_reason).toBe('end_turn')
    await client.messages.stream(subAgent()).finalMessage()
    const later = await calls(MESSAGES)
    expect(later.map((c) => [c.thinking.type, c.output_config])).toEqual([
      ['adaptive', {effort: 'max'}],
      ['disabled', undefined],
    ])
  })

  it("Codex's tool_choice required to Kimi K2 Thinking: learned from Kimi's words, the turn answered", async () => {
    await calls(CHAT)
    const answer = await new OpenAI({
      baseURL: `${gw.base}/v1`,
      apiKey: gw.keys.get('kimi')!,
      maxRetries: 0,
    }).responses.create({
      ...codexRequest([{role: 'user', content: 'Read /tmp/notes.txt.'}]),
      tool_choice: 'required',
    })
    expect(answer.status).toBe('completed')
    expect(answer.output.find((o) => o.type === 'function_call')).toMatchObject({name: READ_FILE_TOOL.name})
    const sent = await calls(CHAT)
    expect(sent.map((c) => c.tool_choice)).toEqual(['required', 'auto'])
    expect(sent[1].messages.at(-1).content).toMatch(/\n\nIn this answer, call one of the tools\.$/)
  })

  it("a tool call turn without reasoning to DeepSeek V4: refused in V4's words once, then with an empty reasoning_content", async () => {
    await calls(CHAT)
    const client = anthropic('history')
    // a tool loop whose turn streamed no thinking before its call (or came from another model)
    const answer = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 512,
      tools: [BASH_TOOL],
      messages: [
        {role: 'user', content: 'List the files here.'},
        {
          role: 'assistant',
          content: [{type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {command: 'ls'}}],
        },
        {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt'}]},
      ],
    })
    expect(answer.content.some((b) => b.type === 'text' || b.type === 'tool_use')).toBe(true)
    const sent = await calls(CHAT)
    expect(sent).toHaveLength(2)
    expect(sent[0].messages[1]).not.toHaveProperty('reasoning_content')
    expect(sent[1].messages[1]).toMatchObject({role: 'assistant', reasoning_content: ''})
    expect((await rows('history')).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-chat refused an assistant turn without reasoning_content: sent again with it on every assistant turn (the reasoning there, or empty)',
      ],
    ])
  })

  it('the text that ends a tool loop, without reasoning, to DeepSeek V4: one refusal, then every assistant turn with it', async () => {
    await calls(CHAT)
    const client = anthropic('loop')
    // Claude Code's next question after a tool loop whose turns kept no thinking (another
    // model's, or thinking lost): the call, its result, the answer, the user again
    const history: Anthropic.MessageParam[] = [
      {role: 'user', content: 'List the files here.'},
      {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {command: 'ls'}}]},
      {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt'}]},
      {role: 'assistant', content: [{type: 'text', text: 'There is one file, a.txt.'}]},
      {role: 'user', content: 'What is in it?'},
    ]
    const ask = () =>
      client.messages.create({
        model: 'claude-sonnet-4-5',
        max_tokens: 512,
        tools: [BASH_TOOL],
        messages: history,
      })
    const answer = await ask()
    expect(answer.content.some((b) => b.type === 'text' || b.type === 'tool_use')).toBe(true)
    const sent = await calls(CHAT)
    expect(sent).toHaveLength(2)
    const assistants = (body: any) =>
      body.messages.filter((m: any) => m.role === 'assistant').map((m: any) => m.reasoning_content)
    expect(assistants(sent[0])).toEqual([undefined, undefined])
    expect(assistants(sent[1])).toEqual(['', ''])
    expect((await rows('loop')).map((r) => [r.status, r.error])).toEqual([
      [
        200,
        'sim-chat refused an assistant turn without reasoning_content: sent again with it on every assistant turn (the reasoning there, or empty)',
      ],
    ])
    // the next request goes with it from the start: no refusal
    await ask()
    const later = await calls(CHAT)
    expect(later.map(assistants)).toEqual([['', '']])
  })
})
