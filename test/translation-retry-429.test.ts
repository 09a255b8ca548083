/**
 * Gemini's free tier answers a 429 with its wait in the body only (RetryInfo). Through the real
 * daemon and its simulator: Codex, which retries no 429, gets its request sent again after that
 * wait and its answer, with one log row that says so; Claude Code gets the 429 with `retry-after`
 * from the body, which its SDK honours.
 */
import Anthropic from '@anthropic-ai/sdk'
import {describe, expect, it} from 'vitest'

import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {flash: 'gemini-2.5-flash'},
  {prefix: 'r429', provider: 'sim-gemini', families: ['responses', 'messages']},
)
/** The key of the one policy. */
const key = () => gw.keys.get('flash')!

const queueFault = async (fault: string) => {
  const res = await fetch(`${gw.simOrigin}/__sim/faults`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify({fault}),
  })
  expect(res.status).toBeLessThan(300)
}

describe('a Gemini upstream rate-limited per minute, through translation', () => {
  it('Codex: waits the RetryInfo delay, then its answer; one row with the note', async () => {
    await takeSimCalls(gw.simOrigin, /./)
    await queueFault('status=429,retry-delay=0.2s,path=/models/')
    const res = await fetch(`${gw.base}/v1/responses`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key()}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
        originator: 'codex_exec',
        'user-agent': 'codex_exec/0.171.0 (Debian 12.0.0; x86_64) xterm (codex_exec; 0.171.0)',
      },
      body: JSON.stringify({model: 'gpt-5.6-sol', input: 'hello', stream: true}),
    })
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('response.completed')
    expect(await takeSimCalls(gw.simOrigin, /\/models\//)).toHaveLength(2)
    const rows = await projectLogRows(gw.base, 'r429-flash')
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({
      status: 200,
      error: 'sim-gemini waited 0.2s for a 429 (Codex does not retry one)',
    })
  })

  it("Claude Code: the 429 at once, with retry-after from Google's RetryInfo", async () => {
    await takeSimCalls(gw.simOrigin, /./)
    await queueFault('status=429,retry-delay=4.2s,path=/models/')
    const error = await new Anthropic({baseURL: gw.base, apiKey: key(), maxRetries: 0}).messages
      .create({model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{role: 'user', content: 'hi'}]})
      .then(
        () => undefined,
        (e: unknown) => e as InstanceType<typeof Anthropic.APIError>,
      )
    expect(error?.status).toBe(429)
    expect(error?.headers?.get('retry-after')).toBe('5')
    expect(await takeSimCalls(gw.simOrigin, /\/models\//)).toHaveLength(1)
  })
})
