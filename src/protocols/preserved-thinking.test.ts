/**
 * Preserved thinking on chat hosts that drop earlier turns' reasoning unless asked: which model on
 * which host is asked (plain-tools.ts `preservedThinkingOf`), the bytes each gets (chat.ts
 * `preservedThinkingFields`), and a refusal learned away (adaptations.ts).
 */
import {describe, expect, it} from 'vitest'

import {UpstreamAdaptations} from '../daemon/router/adaptations.js'
import {preservedThinkingOf} from '../daemon/router/plain-tools.js'
import type {CodecContext, Request} from './ir.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'

const DASHSCOPE = 'https://dashscope.aliyuncs.com/compatible-mode/v1'

describe('which model on which host keeps earlier reasoning only when asked', () => {
  it.each([
    ['qwen3.6-plus', DASHSCOPE, 'dashscope'],
    ['qwen3.7-max', 'https://dashscope-intl.aliyuncs.com/compatible-mode/v1', 'dashscope'],
    ['qwen3.6-plus-2026-04-02', 'https://coding.dashscope.aliyuncs.com/v1', 'dashscope'],
    ['kimi-k2.6', DASHSCOPE, 'dashscope'],
    ['kimi-k2.6', 'https://api.moonshot.cn/v1', 'moonshot'],
    ['glm-5.1', 'https://api.z.ai/api/paas/v4', 'zai'],
    ['glm-4.7', 'https://open.bigmodel.cn/api/paas/v4', 'zai'],
    ['glm-5-turbo', 'https://api.z.ai/api/coding/paas/v4', 'zai'],
    // another model there, or the same model elsewhere: none
    ['qwen3.5-plus', DASHSCOPE, undefined],
    ['qwen3-coder-plus', DASHSCOPE, undefined],
    ['qwen3.6-plus', 'https://openrouter.ai/api/v1', undefined],
    ['glm-4.6', 'https://api.z.ai/api/paas/v4', undefined],
    ['glm-5.1', DASHSCOPE, undefined],
    ['kimi-k2.7-code', 'https://api.moonshot.ai/v1', undefined],
    ['kimi-k2.6', 'http://127.0.0.1:8000/v1', undefined],
  ])('%s at %s: %s', (model, baseUrl, expected) => {
    expect(preservedThinkingOf(model, baseUrl)).toBe(expected)
  })
})

/** A chat upstream's tool-call turn (its reasoning, chat's own) and the tool's result. */
const loop = (reasoning: Request['reasoning'], back = true): Request => ({
  model: 'c',
  system: [],
  messages: [
    {role: 'user', parts: [{type: 'text', text: 'list the files'}]},
    {
      role: 'assistant',
      parts: [
        ...(back
          ? [{type: 'reasoning' as const, text: 'run ls', signature: {family: 'chat' as const, value: ''}}]
          : []),
        {type: 'tool_call', id: 'call_1', name: 'Bash', arguments: '{"command":"ls"}'},
      ],
    },
    {role: 'user', parts: [{type: 'tool_result', callId: 'call_1', content: [{type: 'text', text: 'a.ts'}]}]},
  ],
  tools: [{name: 'Bash', parameters: {type: 'object'}}],
  stream: false,
  ...(reasoning && {reasoning}),
})

/** The top-level fields after `messages`/`tools` of the chat body sent, as bytes. */
const tail = (request: Request, model: string, ctx: CodecContext): string => {
  const body = JSON.parse(
    encodeUpstreamRequest({family: 'messages', request} as never, 'chat', model, ctx).body.toString(),
  ) as Record<string, unknown>
  const {messages: _, tools: __, ...rest} = body
  return JSON.stringify(rest)
}

describe('the bytes each host gets', () => {
  it.each([
    ['dashscope', 'qwen3.6-plus', ',"preserve_thinking":true}'],
    ['zai', 'glm-5.1', ',"thinking":{"type":"enabled","clear_thinking":false}}'],
    ['moonshot', 'kimi-k2.6', ',"thinking":{"type":"enabled","keep":"all"}}'],
  ] as const)('%s (%s), effort high, its reasoning going back', (host, model, end) => {
    expect(tail(loop({effort: 'high'}), model, {preservedThinking: host})).toBe(
      `{"model":"${model}","max_tokens":32000,"reasoning_effort":"high"${end}`,
    )
  })

  it('thinking off (its own switch), no reasoning going back, no reasoning asked: as before', () => {
    const ctx: CodecContext = {preservedThinking: 'zai'}
    expect(tail(loop({disabled: true}), 'glm-5.1', ctx)).toBe(
      '{"model":"glm-5.1","max_tokens":32000,"thinking":{"type":"disabled"}}',
    )
    expect(tail(loop({effort: 'high'}, false), 'glm-5.1', ctx)).toBe(
      '{"model":"glm-5.1","max_tokens":32000,"reasoning_effort":"high"}',
    )
    expect(tail(loop(undefined), 'glm-5.1', ctx)).toBe('{"model":"glm-5.1","max_tokens":32000}')
    // (no flag, the same request: nothing more)
    expect(tail(loop({effort: 'high'}), 'qwen3.6-plus', {})).toBe(
      '{"model":"qwen3.6-plus","max_tokens":32000,"reasoning_effort":"high"}',
    )
  })
})

describe('a server that refuses it', () => {
  it("Z.AI's thinking and DashScope's flag, refused in a strict relay's words: learned away", () => {
    const a = new UpstreamAdaptations()
    const claude = decodeClientRequest(
      'messages',
      {
        model: 'c',
        max_tokens: 1000,
        thinking: {type: 'enabled', budget_tokens: 4096},
        messages: [
          {role: 'user', content: 'list'},
          {
            role: 'assistant',
            content: [
              {type: 'thinking', thinking: 'run ls', signature: 'gwx1.chat.'},
              {type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {}},
            ],
          },
          {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.ts'}]},
        ],
      },
      {},
    )
    const refusal = (field: string) =>
      JSON.stringify({
        error: {message: `Unrecognized request argument supplied: ${field}`, type: 'invalid_request_error'},
      })
    const first = encodeUpstreamRequest(claude, 'chat', 'qwen3.6-plus', {preservedThinking: 'dashscope'})
    expect(a.learn('relay', 'qwen3.6-plus', refusal('preserve_thinking'), first.sent)).toBe(
      'refused preserve_thinking: sent again without it',
    )
    const again = encodeUpstreamRequest(
      claude,
      'chat',
      'qwen3.6-plus',
      {preservedThinking: 'dashscope'},
      a.get('relay', 'qwen3.6-plus'),
    )
    expect(JSON.parse(again.body.toString()).preserve_thinking).toBeUndefined()
    // Z.AI's goes in `thinking`, as its off switch: the preserved thinking alone learned away (the
    // proxy then asks for none, ../daemon/router/preserved-thinking.test.ts), the switch kept
    const glm = encodeUpstreamRequest(claude, 'chat', 'glm-5.1', {preservedThinking: 'zai'})
    expect(a.learn('relay', 'glm-5.1', refusal('thinking'), glm.sent)).toBe(
      'refused preserved thinking (thinking enabled to keep earlier reasoning): sent again without it',
    )
    expect(a.get('relay', 'glm-5.1')).toEqual({noPreservedThinking: true})
  })
})
