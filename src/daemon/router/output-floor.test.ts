/**
 * OpenAI's chat refusal of a maximum a reasoning model cannot finish within, which states no floor
 * (Claude Code's `max_tokens: 1` probe: BerriAI/litellm #35061): read as the floor of 16 below it.
 */
import {describe, expect, it} from 'vitest'

import {outputFloor} from './adaptations.js'

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
