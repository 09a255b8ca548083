/**
 * "Thinking off" to a chat upstream whose model thinks unless told not to: each client family's
 * "off" (Claude Code's `thinking: disabled`, Gemini CLI's `thinkingBudget: 0`, Codex's effort
 * `none`, a chat client's `reasoning_effort: "none"`) sends the model's own switch, by its name;
 * nothing for another model, nor for a request that did not ask for thinking off.
 */
import {describe, expect, it} from 'vitest'

import {chatCodec} from './chat.js'
import {geminiCodec} from './gemini.js'
import type {Request} from './ir.js'
import {messagesCodec} from './messages.js'
import {responsesCodec} from './responses.js'
import {thinkingOffForForcedCall} from './thinking-off.js'

const OFF: Record<string, () => Request> = {
  'Claude Code (thinking disabled)': () =>
    messagesCodec.decodeRequest(
      {
        model: 'claude-haiku-4-5',
        max_tokens: 100,
        thinking: {type: 'disabled'},
        messages: [{role: 'user', content: 'Write a title'}],
      },
      {},
    ),
  'Gemini CLI (thinkingBudget 0)': () =>
    geminiCodec.decodeRequest(
      {
        contents: [{role: 'user', parts: [{text: 'Write a title'}]}],
        generationConfig: {thinkingConfig: {thinkingBudget: 0}},
      },
      {model: 'gemini-2.5-flash'},
    ),
  'Codex (effort none)': () =>
    responsesCodec.decodeRequest({model: 'gpt-5.5', input: 'Write a title', reasoning: {effort: 'none'}}, {}),
  'a chat client (reasoning_effort none)': () =>
    chatCodec.decodeRequest(
      {model: 'x', reasoning_effort: 'none', messages: [{role: 'user', content: 'Write a title'}]},
      {},
    ),
}

const SWITCHES: Array<[string, Record<string, unknown>]> = [
  ['deepseek-v4-flash', {thinking: {type: 'disabled'}}],
  ['deepseek-v4-pro', {thinking: {type: 'disabled'}}],
  ['kimi-k2.5', {thinking: {type: 'disabled'}}],
  ['kimi-k2.6', {thinking: {type: 'disabled'}}],
  ['kimi-k2.7', {thinking: {type: 'disabled'}}],
  ['moonshotai/kimi-k2.6', {thinking: {type: 'disabled'}}],
  // Kimi K3 has no off switch ("remove the K2.x thinking configuration"): the least effort it takes
  ['kimi-k3', {reasoning_effort: 'low'}],
  ['kimi-k3.1-pro', {reasoning_effort: 'low'}],
  ['kimi-k3.1-pro-highspeed', {reasoning_effort: 'low'}],
  ['moonshotai/Kimi-K3', {reasoning_effort: 'low'}],
  // Kimi Code's alias neither: "Supported values are: 'low', 'high', and 'max'" (openhanako #2092)
  ['kimi-for-coding', {reasoning_effort: 'low'}],
  ['glm-4.5-air', {thinking: {type: 'disabled'}}],
  ['glm-4.7', {thinking: {type: 'disabled'}}],
  ['glm-5.1', {thinking: {type: 'disabled'}}],
  // GLM-5.3 has no off switch (Z.AI's 1210): the least effort it takes
  ['glm-5.3', {reasoning_effort: 'low'}],
  ['glm-5.3-flash', {reasoning_effort: 'low'}],
  ['z-ai/glm-5.3', {reasoning_effort: 'low'}],
  ['GLM-5.3-FlashX', {reasoning_effort: 'low'}],
  ['qwen3-max', {enable_thinking: false}],
  ['qwen3.5-plus', {enable_thinking: false}],
  // DashScope's Qwen3-based Plus, Flash and Turbo: hybrid thinking, the same switch
  ['qwen-plus', {enable_thinking: false}],
  ['qwen-plus-latest', {enable_thinking: false}],
  ['qwen-plus-2025-07-28', {enable_thinking: false}],
  ['qwen-flash', {enable_thinking: false}],
  ['qwen-flash-2025-07-28', {enable_thinking: false}],
  ['dashscope/qwen-turbo', {enable_thinking: false}],
  ['qwen-turbo-2025-04-28', {enable_thinking: false}],
  ['gpt-5.1', {reasoning_effort: 'none'}],
  ['gpt-5.4-mini', {reasoning_effort: 'none'}],
]

/** The fields of a chat body beyond what every request has. */
function switches(body: Record<string, unknown>): Record<string, unknown> {
  const {model: _m, messages: _ms, max_tokens: _t, ...rest} = body
  return rest
}

describe('chat encoder: thinking off to a model that thinks by default', () => {
  for (const [client, decode] of Object.entries(OFF))
    for (const [model, expected] of SWITCHES)
      it(`${client} → ${model}`, () => {
        expect(decode().reasoning?.disabled).toBe(true)
        expect(switches(chatCodec.encodeRequest(decode(), model))).toEqual(expected)
      })

  it('sends nothing to a model with no known switch, or one that takes no "none"', () => {
    for (const decode of Object.values(OFF))
      for (const model of [
        'deepseek-chat',
        'kimi-k2-0905-preview',
        // K2.7 Code thinks always and takes no switch ("invalid thinking: only type=enabled is
        // allowed for this model"); K3 Fast does not reason
        'kimi-k2.7-code',
        'kimi-k2.7-code-highspeed',
        'kimi-k3-fast',
        'glm-4.1v-thinking',
        'qwen2.5-72b-instruct',
        'qwen-max',
        'qwen-plus-2025-01-25',
        'qwen-turbo-2024-11-01',
        'qwen-plus-character',
        'gpt-5',
        'gpt-5.1-codex',
        'gpt-5.1-chat-latest',
        'gpt-4.1',
        'sim-mini',
      ])
        expect(switches(chatCodec.encodeRequest(decode(), model)), model).toEqual({})
  })

  it('changes nothing for a request that did not ask for thinking off', () => {
    const asked = [
      messagesCodec.decodeRequest(
        {model: 'c', max_tokens: 100, messages: [{role: 'user', content: 'hi'}]},
        {},
      ),
      messagesCodec.decodeRequest(
        {
          model: 'c',
          max_tokens: 2000,
          thinking: {type: 'enabled', budget_tokens: 1024},
          messages: [{role: 'user', content: 'hi'}],
        },
        {},
      ),
      geminiCodec.decodeRequest({contents: [{role: 'user', parts: [{text: 'hi'}]}]}, {model: 'g'}),
      responsesCodec.decodeRequest({model: 'gpt-5.5', input: 'hi', reasoning: {effort: 'low'}}, {}),
    ]
    for (const request of asked)
      for (const [model] of SWITCHES) {
        const rest = switches(chatCodec.encodeRequest(request, model))
        expect(rest.thinking, model).toBeUndefined()
        expect(rest.enable_thinking, model).toBeUndefined()
        expect(rest.reasoning_effort === undefined || rest.reasoning_effort !== 'none', model).toBe(true)
      }
  })
})

/** To a server on this machine or the local network: the vendor's field and the template's. */
const LOCAL_SWITCHES: Array<[string, Record<string, unknown>]> = [
  // vLLM's and SGLang's names (Hugging Face repos)
  ['Qwen/Qwen3.6-35B-A3B', {enable_thinking: false, chat_template_kwargs: {enable_thinking: false}}],
  ['zai-org/GLM-4.7-Flash', {thinking: {type: 'disabled'}, chat_template_kwargs: {enable_thinking: false}}],
  // GLM-5.3's template reads `reasoning_effort` only (anything but low or high is max)
  ['zai-org/GLM-5.3-Flash', {reasoning_effort: 'low', chat_template_kwargs: {reasoning_effort: 'low'}}],
  ['glm-5.3-flash:latest', {reasoning_effort: 'low', chat_template_kwargs: {reasoning_effort: 'low'}}],
  ['moonshotai/Kimi-K2.6', {thinking: {type: 'disabled'}, chat_template_kwargs: {thinking: false}}],
  ['deepseek-ai/DeepSeek-V4-Flash', {thinking: {type: 'disabled'}, chat_template_kwargs: {thinking: false}}],
  // llama-server's alias
  ['qwen3.5-9b', {enable_thinking: false, chat_template_kwargs: {enable_thinking: false}}],
  // Ollama's names (`:tag`): its own switch too
  [
    'qwen3.6:35b',
    {enable_thinking: false, chat_template_kwargs: {enable_thinking: false}, reasoning_effort: 'none'},
  ],
  [
    'glm-4.7-flash:latest',
    {thinking: {type: 'disabled'}, chat_template_kwargs: {enable_thinking: false}, reasoning_effort: 'none'},
  ],
  // a model with no template switch: as to any server
  ['gpt-5.4-mini', {reasoning_effort: 'none'}],
]

describe('chat encoder: thinking off to a local server (vLLM, SGLang, llama.cpp, Ollama)', () => {
  for (const [client, decode] of Object.entries(OFF))
    for (const [model, expected] of LOCAL_SWITCHES)
      it(`${client} → ${model}`, () => {
        expect(switches(chatCodec.encodeRequest(decode(), model, {localServer: true}))).toEqual(expected)
      })

  it('sends no template arguments to a server elsewhere, nor for a request that did not ask', () => {
    for (const [model] of LOCAL_SWITCHES) {
      expect(
        switches(chatCodec.encodeRequest(OFF['Claude Code (thinking disabled)'](), model)),
      ).not.toHaveProperty('chat_template_kwargs')
      const on = messagesCodec.decodeRequest(
        {model: 'c', max_tokens: 100, messages: [{role: 'user', content: 'hi'}]},
        {},
      )
      expect(switches(chatCodec.encodeRequest(on, model, {localServer: true})), model).toEqual({})
    }
    for (const model of ['sim-mini', 'llama3.1:8b', 'deepseek-chat'])
      expect(
        switches(chatCodec.encodeRequest(OFF['Codex (effort none)'](), model, {localServer: true})),
        model,
      ).toEqual({})
  })
})

describe('chat encoder: the efforts of a model that always thinks (GLM-5.3, Kimi K3, Kimi Code: low, high, max)', () => {
  const claudeCode = (effort: string) =>
    messagesCodec.decodeRequest(
      {
        model: 'claude-opus-5-5',
        max_tokens: 32000,
        thinking: {type: 'adaptive'},
        output_config: {effort},
        messages: [{role: 'user', content: 'hi'}],
      },
      {},
    )
  const codex = (effort: string) =>
    responsesCodec.decodeRequest({model: 'gpt-5.5', input: 'hi', reasoning: {effort}}, {})

  it("sends each client's effort as one GLM-5.3 takes: medium as high, minimal as low, xhigh and max as max", () => {
    for (const model of [
      'glm-5.3',
      'glm-5.3-flash',
      'z-ai/glm-5.3',
      'glm-5.3:cloud',
      'kimi-k3',
      // Kimi Code refuses medium: "Supported values are: 'low', 'high', and 'max'." (openhanako #2092)
      'kimi-for-coding',
    ]) {
      const sent = (request: Request) => chatCodec.encodeRequest(request, model).reasoning_effort
      expect(sent(claudeCode('low')), model).toBe('low')
      expect(sent(claudeCode('medium')), model).toBe('high')
      expect(sent(claudeCode('high')), model).toBe('high')
      // Claude Code's two above high (`/effort max`): its most, max
      expect(sent(claudeCode('max')), model).toBe('max')
      expect(sent(claudeCode('xhigh')), model).toBe('max')
      expect(sent(codex('minimal')), model).toBe('low')
      expect(sent(codex('medium')), model).toBe('high')
      expect(sent(codex('xhigh')), model).toBe('max')
    }
  })

  it('leaves the effort of every other model as it was', () => {
    for (const model of ['glm-5.1', 'glm-5.30-x', 'glm-5.2', 'deepseek-v4-pro', 'gpt-5.5', 'sim-mini']) {
      const sent = (request: Request) => chatCodec.encodeRequest(request, model).reasoning_effort
      expect(sent(claudeCode('medium')), model).toBe('medium')
      expect(sent(codex('minimal')), model).toBe('minimal')
    }
  })

  it('sends an effort above high as the most the model is known to take, else high', () => {
    const sent = (request: Request, model: string) => chatCodec.encodeRequest(request, model).reasoning_effort
    const responses = (request: Request, model: string) =>
      (responsesCodec.encodeRequest(request, model).reasoning as {effort?: string}).effort
    // OpenAI's GPT-5.2 on and gpt-5.1-codex-max: xhigh, their most, for Claude Code's xhigh and max
    for (const model of [
      'gpt-5.2',
      'gpt-5.5',
      'openai/gpt-5.4-pro',
      'gpt-5.3-codex',
      'gpt-5.1-codex-max',
      'gpt-5.10',
    ])
      for (const effort of ['xhigh', 'max']) {
        expect(sent(claudeCode(effort), model), `${model} ${effort}`).toBe('xhigh')
        expect(responses(claudeCode(effort), model), `${model} ${effort}`).toBe('xhigh')
        expect(responses(codex(effort), model), `${model} ${effort}`).toBe('xhigh')
      }
    // GPT-6: its max for a max; an xhigh it is not known to take goes as high
    for (const model of ['gpt-6', 'gpt-6.2-sol']) {
      expect(sent(claudeCode('max'), model), model).toBe('max')
      expect(responses(claudeCode('max'), model), model).toBe('max')
      expect(sent(claudeCode('xhigh'), model), model).toBe('high')
    }
    // GLM-5.3 on Responses too (an OpenAI-compatible Responses server in front of it)
    expect(responses(claudeCode('xhigh'), 'glm-5.3')).toBe('max')
    // a model not known to take more: high, as before
    for (const model of [
      'gpt-5.1',
      'gpt-5',
      'gpt-5.5-mini',
      'gpt-5.4-nano-2026-03-01',
      'gpt-5.1-codex-max-mini',
      'o3',
      'gpt-4.1',
      'deepseek-v4-pro',
      'kimi-k2.6',
      'qwen3.6-plus',
      'gpt-60',
    ])
      for (const effort of ['xhigh', 'max']) {
        expect(sent(claudeCode(effort), model), `${model} ${effort}`).toBe('high')
        expect(responses(claudeCode(effort), model), `${model} ${effort}`).toBe('high')
      }
    // a plain high stays high everywhere
    expect(sent(claudeCode('high'), 'gpt-5.5')).toBe('high')
    expect(responses(codex('high'), 'gpt-5.5')).toBe('high')
  })

  it('sends no switch for a forced tool call to it: low is not off', () => {
    const body: Record<string, unknown> = {
      model: 'glm-5.3',
      messages: [{role: 'user', content: 'hi'}],
      tools: [{type: 'function', function: {name: 'f', parameters: {type: 'object'}}}],
      tool_choice: 'required',
      reasoning_effort: 'high',
    }
    expect(thinkingOffForForcedCall(body)).toBe(false)
    expect(body.reasoning_effort).toBe('high')
  })
})
