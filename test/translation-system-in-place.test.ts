/**
 * Claude Code 2.1.332's mid-conversation system message (`# Environment`, from its 2nd request on,
 * right after the first tool result) through a Responses upstream: it goes as a developer message
 * where it stood, the instructions stay request 1's, and the upstream's prompt cache reads the
 * whole of request 1's prompt on request 2. Before, it joined the instructions, and request 2 read
 * nothing from the cache (audit56 #3). The real daemon, the simulator's Responses upstream with its
 * prefix cache (`prefix-cache`), the official SDK; the log row's cache read.
 */
import Anthropic from '@anthropic-ai/sdk'
import {describe, expect, it} from 'vitest'

import {ENVIRONMENT_MESSAGE as ENV, midConversationSystem as request} from './helpers/claude-code.js'
import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {responses: ['sim-responses', 'sim-mini+prefix-cache']},
  {prefix: 'sp', families: ['messages']},
)

describe("Claude Code's mid-conversation system message to a Responses upstream", {timeout: 60_000}, () => {
  it("goes where it stood: request 2 reads the whole of request 1's prompt from the cache", async () => {
    await takeSimCalls(gw.simOrigin, /\/responses$/)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('responses')!, maxRetries: 0})
    await client.messages.create(request(false))
    await client.messages.create(request(true))
    const [one, two] = await takeSimCalls(gw.simOrigin, /\/responses$/)
    expect(two.instructions).toBe(one.instructions)
    expect(two.input.at(-1)).toEqual({
      type: 'message',
      role: 'developer',
      content: [{type: 'input_text', text: ENV}],
    })
    const rows = await projectLogRows(gw.base, 'sp-responses', 2)
    expect(rows.map((r) => r.status)).toEqual([200, 200])
    // (the simulator's prompt of request 1, the same bytes at the head of request 2)
    expect(rows[1].cacheReadTokens).toBe(rows[0].inputTokens)
    expect(rows[1].cacheReadTokens).toBeGreaterThan(0)
  })

  it('is folded for the simulator standing for DeepSeek (`adjacent-outputs`), as for real DeepSeek', async () => {
    await takeSimCalls(gw.simOrigin, /\/responses$/)
    const client = new Anthropic({
      baseURL: gw.base,
      apiKey: gw.keys.get('responses')!,
      maxRetries: 0,
      defaultHeaders: {'x-sim-quirk': 'adjacent-outputs'},
    })
    await client.messages.create(request(false))
    await client.messages.create(request(true))
    const [one, two] = await takeSimCalls(gw.simOrigin, /\/responses$/)
    // (DeepSeek's Responses API refuses an item between a call and its output: every system text
    // in the instructions, the date's and the environment's)
    expect(one.instructions).toContain("Today's date is 2026-07-01.")
    expect(two.instructions).toContain(ENV)
    expect(JSON.stringify(two.input)).not.toContain('"developer"')
  })
})
