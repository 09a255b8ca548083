/**
 * OpenAI's chat refusal of a maximum a reasoning model cannot finish within, which states no floor
 * (Claude Code's `max_tokens: 1` probe: BerriAI/litellm #35061): read as the floor of 16 below it.
 */
import {describe, expect, it} from 'vitest'

import {adaptPassedChat, sentOfPassedChat} from '../../protocols/translate.js'
import {outputFloor, UpstreamAdaptations} from './adaptations.js'

const openAi = JSON.stringify({
  error: {
    message:
      'Could not finish the message because max_tokens or model output limit was reached. Please try again with higher max_tokens.',
    type: 'invalid_request_error',
    param: null,
    code: null,
  },
})

describe("OpenAI's chat words for a maximum too small to finish", () => {
  it('teach the floor of 16 below it, nothing at or above it', () => {
    expect(outputFloor(openAi, 1)).toBe(16)
    expect(outputFloor(openAi, 15)).toBe(16)
    expect(outputFloor(openAi, 16)).toBeUndefined()
    expect(outputFloor(openAi, 4096)).toBeUndefined()
    expect(outputFloor(openAi, undefined)).toBeUndefined()
  })
})

describe("OpenAI's chat words learned from a request", () => {
  const JSON_FORMAT = {type: 'json_schema', json_schema: {name: 'x', schema: {type: 'object'}, strict: true}}
  const chat = (extra: Record<string, unknown>) => ({
    model: 'gpt-4o',
    messages: [{role: 'user', content: 'classify'}],
    ...extra,
  })

  it('at a maximum of 16 or more teach nothing: max_tokens is not learned away (review77 #5)', () => {
    for (const body of [chat({max_tokens: 200, response_format: JSON_FORMAT}), chat({max_tokens: 200})]) {
      const a = new UpstreamAdaptations()
      expect(a.learn('openai', 'gpt-4o', openAi, sentOfPassedChat(body))).toBeUndefined()
      expect(a.get('openai', 'gpt-4o')).toBeUndefined()
    }
  })

  it("of a JSON answer cut short below 16 teach a floor for requests for JSON only: a classifier's later max_tokens 1 goes as it came (review77 #6)", () => {
    const a = new UpstreamAdaptations()
    const json = chat({max_tokens: 10, response_format: JSON_FORMAT})
    expect(a.learn('openai', 'gpt-4o', openAi, sentOfPassedChat(json))).toBe(
      "refused max_tokens 10 for JSON (its answer cut short, or the model's floor): sent again with 16, and each request for JSON so",
    )
    const learned = a.get('openai', 'gpt-4o')!
    expect(learned).toEqual({minJsonOutputTokens: 16})
    const adapted = (body: Record<string, unknown>) =>
      JSON.parse(adaptPassedChat(body, learned).toString()) as Record<string, unknown>
    // (that request again, and each later one for JSON, JSON mode too: 16; a plain one as it came)
    expect(adapted(json).max_tokens).toBe(16)
    expect(
      adapted(chat({max_completion_tokens: 3, response_format: {type: 'json_object'}})).max_completion_tokens,
    ).toBe(16)
    expect(adapted(chat({max_tokens: 1})).max_tokens).toBe(1)
    expect(adapted(chat({max_tokens: 1, response_format: {type: 'text'}})).max_tokens).toBe(1)
    // at 16 the same words teach nothing more: that request reaches the client (one try again)
    expect(a.learn('openai', 'gpt-4o', openAi, sentOfPassedChat(adapted(json), learned))).toBeUndefined()
    // the probe's shape (no JSON), or JSON with reasoning asked: the floor
    const b = new UpstreamAdaptations()
    expect(b.learn('openai', 'gpt-5.5', openAi, sentOfPassedChat(chat({max_tokens: 1})))).toBe(
      'refused max_tokens 1: sent again with 16, its minimum',
    )
    const c = new UpstreamAdaptations()
    const reasoning = chat({max_tokens: 10, response_format: JSON_FORMAT, reasoning_effort: 'low'})
    expect(c.learn('openai', 'gpt-5.5', openAi, sentOfPassedChat(reasoning))).toBe(
      'refused max_tokens 10: sent again with 16, its minimum',
    )
    const sent = JSON.parse(
      adaptPassedChat(chat({max_tokens: 1}), c.get('openai', 'gpt-5.5')!).toString(),
    ) as {
      max_tokens: number
    }
    expect(sent.max_tokens).toBe(16)
  })
})
