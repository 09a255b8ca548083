// A Gemini client passed through to Gemma 3, which refuses a system instruction ("Developer
// instruction is not enabled for models/gemma-3-..."): learned from the 400 and sent again with the
// system text in the first user turn, in either of Google's spellings (its REST examples write
// `system_instruction`, its SDKs `systemInstruction`); a countTokens request that wraps the request it
// counts (`generateContentRequest`) folded the same way.
import {describe, expect, it} from 'vitest'

import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

// a Gemini entrance on the Gemini provider: passed through (translate is moot for one family)
const gw = translatedRoutes(
  {
    snake: ['sim-gemini', 'gemma-3-12b-it'],
    camel: ['sim-gemini', 'gemma-3-27b-it'],
    count: ['sim-gemini', 'gemma-3-4b-it'],
  },
  {prefix: 'g3sys', families: ['gemini']},
)

const GEMINI_PATH = /:(?:stream)?[gG]enerateContent$/
const ask = (id: string, body: unknown) =>
  fetch(`${gw.base}/v1beta/models/gemini-2.5-flash:generateContent`, {
    method: 'POST',
    headers: {'content-type': 'application/json', 'x-goog-api-key': gw.keys.get(id)!},
    body: JSON.stringify(body),
  })

describe('Gemma 3 passed through, its refusal of a system instruction', {timeout: 60_000}, () => {
  for (const [id, key] of [
    ['camel', 'systemInstruction'],
    ['snake', 'system_instruction'],
  ] as const)
    it(`${key}: learned from the first 400, sent again in the first user turn, the next request right at once`, async () => {
      await takeSimCalls(gw.simOrigin, GEMINI_PATH)
      const body = {[key]: {parts: [{text: 'You are a cat.'}]}, contents: [{parts: [{text: 'Hello there'}]}]}
      const first = await ask(id, body)
      const second = await ask(id, body)
      expect([first.status, second.status]).toEqual([200, 200])
      const calls = await takeSimCalls(gw.simOrigin, GEMINI_PATH)
      // the refused one, its resend, then the second request folded from the first try
      expect(calls).toHaveLength(3)
      for (const sent of calls.slice(1)) {
        expect(sent.systemInstruction ?? sent.system_instruction).toBeUndefined()
        expect(sent.contents[0].parts[0].text).toMatch(/^You are a cat\./)
      }
      const [row] = await projectLogRows(gw.base, `g3sys-${id}`, 1)
      expect(row.error ?? '').toMatch(/systemInstruction/)
    })

  it('countTokens wrapping its request: learned from the first 400, that request sent again folded, the next folded at once', async () => {
    await takeSimCalls(gw.simOrigin, /:countTokens$/)
    const count = () =>
      fetch(`${gw.base}/v1beta/models/gemini-2.5-flash:countTokens`, {
        method: 'POST',
        headers: {'content-type': 'application/json', 'x-goog-api-key': gw.keys.get('count')!},
        body: JSON.stringify({
          generateContentRequest: {
            model: 'models/gemini-2.5-flash',
            systemInstruction: {parts: [{text: 'You are a cat.'}]},
            contents: [{role: 'user', parts: [{text: 'Hello there'}]}],
          },
        }),
      })
    const first = await count()
    const second = await count()
    expect([first.status, second.status]).toEqual([200, 200])
    expect(((await second.json()) as {totalTokens: number}).totalTokens).toBeGreaterThan(0)
    const calls = await takeSimCalls(gw.simOrigin, /:countTokens$/)
    expect(calls).toHaveLength(3)
    for (const sent of calls.slice(1)) {
      expect(sent.generateContentRequest.systemInstruction).toBeUndefined()
      expect(sent.generateContentRequest.contents[0].parts[0].text).toMatch(/^You are a cat\./)
    }
  })
})
