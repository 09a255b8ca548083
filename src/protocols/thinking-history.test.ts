import {describe, expect, it} from 'vitest'

import {thinkingOffForToolTurns, toolTurnWithoutThinking, withEmptyThinking} from './thinking-history.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'

const call = {type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {}}
const result = {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok'}]}
const EMPTY = {type: 'thinking', thinking: '', signature: ''}

describe('an assistant tool-call turn without thinking', () => {
  it('gets an empty block at its head; a turn with its own, or without a call, as it came', () => {
    const own = {role: 'assistant', content: [{type: 'thinking', thinking: 'x', signature: 's'}, call]}
    const text = {role: 'assistant', content: [{type: 'text', text: 'hi'}]}
    const bare = {role: 'assistant', content: [{type: 'text', text: 'I will.'}, call]}
    const messages = [own, result, text, bare, result]
    expect(toolTurnWithoutThinking(messages)).toBe(true)
    const out = withEmptyThinking(messages)!
    expect(out[0]).toBe(own)
    expect(out[2]).toBe(text)
    expect(out[3]).toEqual({role: 'assistant', content: [EMPTY, {type: 'text', text: 'I will.'}, call]})
    expect(bare.content).toHaveLength(2)
    expect(withEmptyThinking([own, result])).toBeUndefined()
  })

  it("Kimi's rule: thinking off, without its effort and the clear_thinking edit", () => {
    const body: Record<string, unknown> = {
      thinking: {type: 'adaptive'},
      output_config: {effort: 'high', format: {type: 'json_schema'}},
      context_management: {edits: [{type: 'clear_thinking_20251015'}, {type: 'clear_tool_uses_20250919'}]},
      messages: [{role: 'assistant', content: [call]}, result],
    }
    expect(thinkingOffForToolTurns(body)).toBe(true)
    expect(body).toMatchObject({
      thinking: {type: 'disabled'},
      output_config: {format: {type: 'json_schema'}},
      context_management: {edits: [{type: 'clear_tool_uses_20250919'}]},
    })
    expect(thinkingOffForToolTurns(body)).toBe(false)
  })

  it('translated to DeepSeek: the empty block also where the client turned reasoning off (nothing turns DeepSeek off)', () => {
    const client = decodeClientRequest(
      'chat',
      {
        model: 'm',
        reasoning_effort: 'none',
        messages: [
          {role: 'user', content: 'ls'},
          {
            role: 'assistant',
            content: null,
            tool_calls: [{id: 'c1', type: 'function', function: {name: 'Bash', arguments: '{}'}}],
          },
          {role: 'tool', tool_call_id: 'c1', content: 'ok'},
        ],
        tools: [{type: 'function', function: {name: 'Bash', parameters: {type: 'object'}}}],
      },
      {},
    )
    const sent = (model: string) =>
      JSON.parse(
        String(encodeUpstreamRequest(client, 'messages', model, {claude: {emptyThinking: true}}).body),
      )
    const deepseek = sent('deepseek-v4-pro')
    expect(deepseek.messages[1].content[0]).toEqual(EMPTY)
    // a Claude that is told `disabled`: no block (Anthropic would verify its signature)
    const claude = sent('claude-sonnet-5')
    expect(claude.thinking).toEqual({type: 'disabled'})
    expect(claude.messages[1].content[0].type).toBe('tool_use')
  })
})
