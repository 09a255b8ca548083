import {describe, expect, it} from 'vitest'

import {
  CLASSIFIER_PROMPT,
  classifierThinkingOff,
  holdsClassifierPrompt,
  startsWithClassifier,
} from './classifier.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'

const BILLING = {type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.290.0a1; cc_entrypoint=cli;'}
const PROMPT = `${CLASSIFIER_PROMPT}. Your job is to decide whether the agent's latest action should be blocked.`

/** Claude Code's auto-mode classifier call, as some versions send it: no thinking, no tools, not streamed. */
const classifier = (extra: Record<string, unknown> = {}) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 64,
  temperature: 0,
  system: [BILLING, {type: 'text', text: PROMPT}],
  messages: [{role: 'user', content: '<transcript>User: run the tests\nBash: npm test</transcript>'}],
  stop_sequences: ['</block>'],
  ...extra,
})

describe("Claude Code's auto-mode classifier call", () => {
  it('is known by its system prompt, after the attribution block or alone, not by the words in a transcript', () => {
    expect(startsWithClassifier(classifier().system)).toBe(true)
    expect(startsWithClassifier(PROMPT)).toBe(true)
    expect(startsWithClassifier([{type: 'text', text: 'You are Claude Code.'}])).toBe(false)
    expect(startsWithClassifier(`Quoted: ${PROMPT}`)).toBe(false)
    expect(holdsClassifierPrompt(Buffer.from(JSON.stringify(classifier())))).toBe(true)
    expect(holdsClassifierPrompt(Buffer.from('{"system":"You are Claude Code."}'))).toBe(false)
  })

  it('passed through: thinking disabled, its effort out; one that says how to think, or streams, as it came', () => {
    expect(classifierThinkingOff(classifier({output_config: {effort: 'high'}}))).toEqual({
      ...classifier(),
      thinking: {type: 'disabled'},
    })
    expect(
      classifierThinkingOff(classifier({thinking: {type: 'enabled', budget_tokens: 1024}})),
    ).toBeUndefined()
    expect(classifierThinkingOff(classifier({stream: true}))).toBeUndefined()
    expect(classifierThinkingOff({...classifier(), system: 'You are Claude Code.'})).toBeUndefined()
  })

  it('translated: reasoning off, so a chat model that thinks by default gets its own switch', () => {
    const client = decodeClientRequest('messages', classifier({output_config: {effort: 'high'}}), {})
    expect(client.request.reasoning).toEqual({disabled: true})
    const deepseek = JSON.parse(String(encodeUpstreamRequest(client, 'chat', 'deepseek-v4-pro').body))
    expect(deepseek.thinking).toEqual({type: 'disabled'})
    expect(deepseek.reasoning_effort).toBeUndefined()
    // Claude Code's main request keeps what it asked
    const main = decodeClientRequest(
      'messages',
      {...classifier({output_config: {effort: 'high'}}), system: 'You are Claude Code.'},
      {},
    )
    expect(main.request.reasoning).toEqual({effort: 'high'})
  })
})
