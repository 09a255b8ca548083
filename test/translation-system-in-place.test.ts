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

import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {responses: ['sim-responses', 'sim-mini+prefix-cache']},
  {prefix: 'sp', families: ['messages']},
)

const ENV =
  '# Environment\nYou have been invoked in the following environment:\n - Primary working directory: /work'

/** Claude Code's request 1 and request 2 (the call of request 1's answer, its result, then `# Environment`). */
function request(second: boolean): Anthropic.MessageCreateParamsNonStreaming {
  const messages: Anthropic.MessageParam[] = [
    {role: 'user', content: [{type: 'text', text: 'List the files.'}]},
    // (Claude Code's date, a system message from request 1 on)
    {role: 'system', content: "Today's date is 2026-07-01."} as unknown as Anthropic.MessageParam,
  ]
  if (second)
    messages.push(
      {
        role: 'assistant',
        content: [{type: 'tool_use', id: 'toolu_01', name: 'Bash', input: {command: 'ls'}}],
      },
      {role: 'user', content: [{type: 'tool_result', tool_use_id: 'toolu_01', content: 'a.txt\nb.txt'}]},
      {role: 'system', content: [{type: 'text', text: ENV}]} as unknown as Anthropic.MessageParam,
    )
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 256,
    system: [{type: 'text', text: `You are Claude Code. ${'Follow the rules. '.repeat(100)}`}],
    messages,
    tools: [{name: 'Bash', description: 'Run a command.', input_schema: {type: 'object', properties: {}}}],
  }
}

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
