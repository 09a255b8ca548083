/**
 * Claude Code's advisor (`advisor_20260301`, its `advisorModel` setting) in a conversation that
 * goes on at another vendor (a `/model` switch, a pool's fallback): the advice Anthropic's
 * advisor gave goes as the assistant's text, the call itself and a redacted or failed result are
 * left out, the advisor tool is not offered. The bytes each family's upstream is sent.
 */
import {describe, expect, it} from 'vitest'

import {ADVISOR_TOOL, advisedTurns, BASH_TOOL} from '../../test/helpers/claude-code.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'

/** A Claude Code turn that asked the advisor (`result`: its advice, a redacted result, a failed call). */
const advised = (result?: Record<string, unknown>): Record<string, unknown> => ({
  model: 'claude-sonnet-5-5',
  max_tokens: 32000,
  stream: true,
  tools: [ADVISOR_TOOL, BASH_TOOL],
  messages: advisedTurns(result),
})

/** The body a request goes to `upstream` with, parsed. */
function sent(
  body: Record<string, unknown>,
  upstream: 'chat' | 'responses' | 'gemini',
): Record<string, unknown> {
  const client = decodeClientRequest('messages', body, {})
  return JSON.parse(encodeUpstreamRequest(client, upstream, 'other-model').body.toString()) as Record<
    string,
    unknown
  >
}

describe("Claude Code's advisor in a translated history", () => {
  it('goes to a chat upstream as the assistant text, the advisor tool not offered', () => {
    const out = sent(advised(), 'chat')
    expect(out.messages).toEqual([
      {role: 'user', content: 'Fix the flaky test'},
      {
        role: 'assistant',
        content:
          "Let me ask the advisor.\n\nAdvisor's advice: Check the fake timer first.\n\nI will look at the timer first.",
      },
      {role: 'user', content: 'go on'},
    ])
    expect((out.tools as Array<{function: {name: string}}>).map((t) => t.function.name)).toEqual(['Bash'])
  })

  it('goes to a Responses upstream as an output text of the assistant message', () => {
    const out = sent(advised(), 'responses')
    expect((out.input as unknown[])[1]).toEqual({
      type: 'message',
      role: 'assistant',
      content: [
        {type: 'output_text', text: 'Let me ask the advisor.'},
        {type: 'output_text', text: "\n\nAdvisor's advice: Check the fake timer first.\n\n"},
        {type: 'output_text', text: 'I will look at the timer first.'},
      ],
    })
    expect((out.tools as Array<{name: string}>).map((t) => t.name)).toEqual(['Bash'])
  })

  it("goes to Gemini as a text of the model's turn", () => {
    const out = sent(advised(), 'gemini')
    expect((out.contents as unknown[])[1]).toEqual({
      role: 'model',
      parts: [
        {text: 'Let me ask the advisor.'},
        {text: "\n\nAdvisor's advice: Check the fake timer first.\n\n"},
        {text: 'I will look at the timer first.'},
      ],
    })
  })

  it('leaves out a redacted result and a failed call (nothing another model can read)', () => {
    for (const result of [
      {type: 'advisor_redacted_result', encrypted_content: 'EqQBCkYIARgCKkD'},
      {type: 'advisor_tool_result_error', error_code: 'max_uses_exceeded'},
    ]) {
      const out = sent(advised(result), 'chat')
      expect((out.messages as unknown[])[1]).toEqual({
        role: 'assistant',
        content: 'Let me ask the advisor.I will look at the timer first.',
      })
    }
  })
})
