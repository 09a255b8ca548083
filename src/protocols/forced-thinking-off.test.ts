/**
 * A forced tool choice to a chat model that refuses one while it thinks, as it does by default
 * (DeepSeek V4, Kimi K2.5 on): the translated request goes with the model's switch of thinking off
 * and the forced choice kept, from the first try, without the effort that would ask for thinking
 * again; a learned rule (`forcedThinkingOff`) does the same for another model with a switch, and
 * for a Messages upstream (DeepSeek's and Kimi's Anthropic endpoints). Each client's forced choice:
 * Claude Code's `tool`, Codex's `required`, Gemini CLI's `ANY` with a name.
 */
import {describe, expect, it} from 'vitest'

import type {Family} from './ir.js'
import type {UpstreamAdaptation} from './translate.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'

const TOOL = {name: 'StructuredOutput', description: 'Answer', input_schema: {type: 'object'}}

/** Each client's request that forces a call while asking for thinking. */
const FORCED: Record<string, [Family, Record<string, unknown>, Record<string, unknown>]> = {
  'Claude Code (tool)': [
    'messages',
    {
      model: 'claude-sonnet-4-5',
      max_tokens: 8000,
      thinking: {type: 'enabled', budget_tokens: 4000},
      tools: [TOOL],
      tool_choice: {type: 'tool', name: 'StructuredOutput'},
      messages: [{role: 'user', content: 'Answer.'}],
    },
    {
      model: 'claude-sonnet-4-5',
      max_tokens: 8000,
      thinking: {type: 'enabled', budget_tokens: 4000},
      tools: [TOOL],
      tool_choice: {type: 'auto'},
      messages: [{role: 'user', content: 'Answer.'}],
    },
  ],
  'Codex (required)': [
    'responses',
    {
      model: 'gpt-5.5',
      input: 'Answer.',
      reasoning: {effort: 'high'},
      tools: [{type: 'function', name: 'StructuredOutput', parameters: {type: 'object'}}],
      tool_choice: 'required',
    },
    {
      model: 'gpt-5.5',
      input: 'Answer.',
      reasoning: {effort: 'high'},
      tools: [{type: 'function', name: 'StructuredOutput', parameters: {type: 'object'}}],
      tool_choice: 'auto',
    },
  ],
  'Gemini CLI (ANY with a name)': [
    'gemini',
    {
      contents: [{role: 'user', parts: [{text: 'Answer.'}]}],
      tools: [{functionDeclarations: [{name: 'StructuredOutput', parameters: {type: 'object'}}]}],
      toolConfig: {functionCallingConfig: {mode: 'ANY', allowedFunctionNames: ['StructuredOutput']}},
      generationConfig: {thinkingConfig: {thinkingBudget: 8000}},
    },
    {
      contents: [{role: 'user', parts: [{text: 'Answer.'}]}],
      tools: [{functionDeclarations: [{name: 'StructuredOutput', parameters: {type: 'object'}}]}],
      toolConfig: {functionCallingConfig: {mode: 'AUTO'}},
      generationConfig: {thinkingConfig: {thinkingBudget: 8000}},
    },
  ],
}

const encode = (
  family: Family,
  body: Record<string, unknown>,
  model: string,
  upstream: Family = 'chat',
  adapt?: UpstreamAdaptation,
) => {
  const client = decodeClientRequest(family, body, {model: 'gemini-2.5-pro'})
  const out = encodeUpstreamRequest(client, upstream, model, {}, adapt)
  return {body: JSON.parse(out.body.toString()) as Record<string, unknown>, sent: out.sent}
}

const NOTE = 'thinking turned off for the forced tool_choice (the model refuses one while thinking)'

describe('a forced tool_choice to a chat model that refuses one while thinking', () => {
  for (const [client, [family, forced, auto]] of Object.entries(FORCED)) {
    it(`${client} → DeepSeek V4 and Kimi: thinking off, the forced choice kept, no effort, from the first try`, () => {
      for (const model of [
        'deepseek-v4-flash',
        'deepseek-v4-pro',
        'kimi-k2.6',
        'kimi-k2.7',
        'moonshotai/kimi-k2.5',
      ]) {
        const {body, sent} = encode(family, forced, model)
        expect(body.thinking, model).toEqual({type: 'disabled'})
        expect(body.tool_choice, model).not.toBe('auto')
        expect(
          body.tool_choice === 'required' || (body.tool_choice as {type?: unknown}).type === 'function',
        ).toBe(true)
        expect(body, model).not.toHaveProperty('reasoning_effort')
        expect(sent).toMatchObject({forcedTool: true, thinkingOff: 'disabled', notes: [NOTE]})
        // the same request forcing nothing thinks as it asked
        const free = encode(family, auto, model).body
        expect(free.reasoning_effort, model).toBeDefined()
        expect(free, model).not.toHaveProperty('thinking')
      }
    })

    it(`${client} → Kimi K3, K2.7 Code, kimi-for-coding (no off switch): auto, the call asked for in words, thinking kept, from the first try`, () => {
      for (const model of ['kimi-k3', 'kimi-k3.1-pro-highspeed', 'kimi-k2.7-code', 'kimi-for-coding']) {
        const {body, sent} = encode(family, forced, model)
        expect(body.tool_choice, model).toBe('auto')
        expect(body, model).not.toHaveProperty('thinking')
        expect(body.reasoning_effort, model).toBeDefined()
        const last = (body.messages as Array<{role: string; content: unknown}>).at(-1)!
        // (Codex's `required` names no tool)
        expect(last.role, model).toBe('user')
        expect(String(last.content), model).toMatch(
          /^Answer\.\n\nIn this answer, call (?:the tool StructuredOutput|one of)/,
        )
        expect(sent.notes, model).toEqual([
          'tool_choice sent as auto, the call asked for at the end of the prompt (the model refuses a forced one and cannot stop thinking)',
        ])
        // the same request forcing nothing: as it asked, no note
        const free = encode(family, auto, model)
        expect(free.body.tool_choice, model).toBe('auto')
        expect(free.body.messages, model).toEqual([{role: 'user', content: 'Answer.'}])
        expect(free.sent.notes, model).toBeUndefined()
      }
      // K3 Fast does not reason: its forced choice goes as it came
      expect(encode(family, forced, 'kimi-k3-fast').body.tool_choice).not.toBe('auto')
    })

    it(`${client} → a model with no such refusal known: as before (learned when refused)`, () => {
      for (const model of [
        'qwen3-max',
        'glm-4.7',
        'deepseek-reasoner',
        'deepseek-chat',
        'kimi-k2-thinking',
        'gpt-5.1',
        'sim-mini',
      ]) {
        const {body, sent} = encode(family, forced, model)
        expect(body, model).not.toHaveProperty('thinking')
        expect(body, model).not.toHaveProperty('enable_thinking')
        expect(body.reasoning_effort, model).toBeDefined()
        expect(sent.thinkingOff, model).toBeUndefined()
        expect(sent.notes, model).toBeUndefined()
      }
    })

    it(`${client} → a model learned so (forcedThinkingOff): its own switch, the forced choice kept`, () => {
      const learned: UpstreamAdaptation = {forcedThinkingOff: true}
      const qwen = encode(family, forced, 'qwen3-max', 'chat', learned)
      expect(qwen.body.enable_thinking).toBe(false)
      expect(qwen.body).not.toHaveProperty('reasoning_effort')
      expect(qwen.body.tool_choice).not.toBe('auto')
      expect(qwen.sent.thinkingOff).toBe('disabled')
      // a request forcing nothing: as it asked
      expect(encode(family, auto, 'qwen3-max', 'chat', learned).body).not.toHaveProperty('enable_thinking')
      // DashScope's hybrid Plus, Flash and Turbo: the same switch
      for (const model of ['qwen-plus', 'qwen-flash', 'qwen-turbo-latest']) {
        const hybrid = encode(family, forced, model, 'chat', learned)
        expect(hybrid.body.enable_thinking, model).toBe(false)
        expect(hybrid.sent.thinkingOff, model).toBe('disabled')
      }
      // a Messages upstream (DeepSeek's Anthropic endpoint): thinking disabled, no effort, the choice kept
      const messages = encode(family, forced, 'deepseek-v4-pro', 'messages', learned)
      expect(messages.body.thinking).toEqual({type: 'disabled'})
      expect(messages.body).not.toHaveProperty('output_config')
      expect((messages.body.tool_choice as {type?: unknown}).type).toMatch(/^(?:any|tool)$/)
      expect(messages.sent.thinkingOff).toBe('disabled')
    })
  }

  it('the forcing learned away (refused with thinking off too), or the switch refused as a field: thinking as asked', () => {
    const [family, forced] = FORCED['Codex (required)']
    const auto = encode(family, forced, 'deepseek-v4-flash', 'chat', {autoToolChoice: true}).body
    expect(auto.tool_choice).toBe('auto')
    expect(auto.reasoning_effort).toBe('high')
    expect(auto).not.toHaveProperty('thinking')
    const dropped = encode(family, forced, 'deepseek-v4-flash', 'chat', {drop: ['thinking']})
    expect(dropped.body.tool_choice).toBe('required')
    expect(dropped.body.reasoning_effort).toBe('high')
    expect(dropped.body).not.toHaveProperty('thinking')
    expect(dropped.sent.thinkingOff).toBeUndefined()
  })

  it('a request that turned thinking off itself goes as before, noted nowhere', () => {
    const [family, forced] = FORCED['Claude Code (tool)']
    const {body, sent} = encode(family, {...forced, thinking: {type: 'disabled'}}, 'deepseek-v4-flash')
    expect(body.thinking).toEqual({type: 'disabled'})
    expect(sent.thinkingOff).toBe('disabled')
    expect(sent.notes).toBeUndefined()
  })
})
