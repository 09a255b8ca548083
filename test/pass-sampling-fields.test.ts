/**
 * A chat client's sampling fields refused by a strict server (research55 F5): Kilo sends
 * `presence_penalty` and `frequency_penalty` to every OpenAI-compatible provider, and NVIDIA NIM
 * answers each request 422 in pydantic v1's text (`body -> presence_penalty\n  Extra inputs are not
 * permitted (type=extra_forbidden)`, Kilo-Org/kilocode #9652). Passed through: refused once, both
 * learned away at once, the request sent again at once without them, the client gets its answer
 * and the next request goes in one try. The real daemon, the simulator's `nim-extra` quirk, the
 * official OpenAI SDK.
 */
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {projectLogRows, startKeyedPolicies, takeSimCalls} from './helpers/gateway.js'

const NIM = 'z-ai/glm-5.1+nim-extra'
const CHAT = /\/v1\/chat\/completions$/

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
let key = ''

beforeAll(async () => {
  let keys: Map<string, string>
  ;({base, simOrigin, stop, keys} = await startKeyedPolicies({
    'kilo-nim': {chat: [{provider: 'sim-chat', model: NIM}]},
  }))
  key = keys.get('kilo-nim')!
}, 120_000)

afterAll(() => stop())

/** Kilo's request, cut down: its penalties at 0. */
const kilo = (text: string) => ({
  model: 'glm-5.1',
  messages: [{role: 'user' as const, content: text}],
  temperature: 0,
  presence_penalty: 0,
  frequency_penalty: 0,
})

describe("Kilo's penalties passed through to NVIDIA NIM, which refuses them", {timeout: 60_000}, () => {
  it('refused once, sent again at once without both, then in one try', async () => {
    const openai = new OpenAI({baseURL: `${base}/v1`, apiKey: key, maxRetries: 0})
    await takeSimCalls(simOrigin, /./)
    const answer = await openai.chat.completions.create(kilo('hi'))
    expect(answer.choices[0].message.content).toMatch(/^Hello from /)
    const [refused, again, ...more] = await takeSimCalls(simOrigin, CHAT)
    expect(more).toEqual([])
    expect(refused).toMatchObject({presence_penalty: 0, frequency_penalty: 0})
    const {presence_penalty: _p, frequency_penalty: _f, ...rest} = {...kilo('hi'), model: NIM}
    expect(JSON.stringify(again)).toBe(JSON.stringify(rest))
    const [row] = await projectLogRows(base, 'kilo-nim', 1)
    expect([row.status, row.error]).toEqual([
      200,
      'sim-chat refused presence_penalty, frequency_penalty: sent again without them',
    ])
    expect([row.inputTokens, row.outputTokens]).toEqual([
      answer.usage!.prompt_tokens,
      answer.usage!.completion_tokens,
    ])

    const stream = await openai.chat.completions.create({...kilo('Read a.ts.'), stream: true})
    let text = ''
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? ''
    expect(text).toMatch(/^Hello from /)
    const [next, ...none] = await takeSimCalls(simOrigin, CHAT)
    expect(none).toEqual([])
    expect(Object.keys(next)).not.toContain('presence_penalty')
    expect(Object.keys(next)).not.toContain('frequency_penalty')
    const [, second] = await projectLogRows(base, 'kilo-nim', 2)
    expect([second.status, second.error]).toEqual([200, null])
  })
})
