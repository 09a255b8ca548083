/** The error bodies the gateway answers in each entrance's shape (errors.ts). */
import {describe, expect, it} from 'vitest'

import {errorBody} from './errors.js'

/** Gemini CLI 0.61 classifyGoogleError's test of a 429's message, lowercased: a TerminalQuotaError. */
const geminiCliTerminal = (message: string): boolean => /limit:\s*0(?!\d|\.\d)/.test(message.toLowerCase())

const geminiMessage = (message: string): string =>
  (
    errorBody('gemini', 429, message, {quotaSpent: true, code: 'insufficient_quota'}) as {
      error: {message: string}
    }
  ).error.message

describe("OpenAI's insufficient_quota to a Gemini client", () => {
  it('says a remaining limit of 0, true of an empty balance and of a monthly budget reached, which Gemini CLI ends on', () => {
    // OpenAI answers a spent monthly budget (a limit of $120, say) and an empty prepaid balance
    // with the same words (review68 F3: "(limit: 0)" told the first a limit of 0)
    const message = geminiMessage(
      'up (responses, translated): upstream answered 429: You exceeded your current quota, please check your plan and billing details. (no retry helps: insufficient_quota)',
    )
    expect(message).toMatch(/ \(remaining limit: 0\)$/)
    expect(geminiCliTerminal(message)).toBe(true)
  })

  it('adds nothing to words that say a limit of 0 already, in any case', () => {
    // (Gemini CLI lowercases the message before its test)
    const said = 'up: upstream answered 429: insufficient_quota: Quota exceeded, Limit: 0'
    expect(geminiMessage(said)).toBe(said)
  })
})
