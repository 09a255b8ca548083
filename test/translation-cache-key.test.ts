/**
 * A Responses upstream is given a `prompt_cache_key`, the key OpenAI routes a prompt to the machine
 * that holds its cache by (without it, a translated conversation's cache hits are rare: new-api
 * #6538 measured none): Claude Code's session id, from its `metadata.user_id`, the same on every
 * turn of the session; opencode's own `prompt_cache_key` from a chat request. And an empty text
 * part (Claude Code writes them, with a cache mark) is left out for Gemini, which refuses it. The
 * real daemon, the simulator, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {projectLogRows, startTranslatedRoutes, takeSimCalls} from './helpers/gateway.js'

let base = ''
let simOrigin = ''
let stop: () => Promise<void> = async () => {}
let keys = new Map<string, string>()

beforeAll(async () => {
  ;({base, simOrigin, stop, keys} = await startTranslatedRoutes(
    {responses: ['sim-responses', 'sim-mini'], gemini: ['sim-gemini', 'gemini-2.5-flash']},
    {prefix: 'ck'},
  ))
}, 120_000)

afterAll(() => stop())

const SESSION = '6d0f3c2e-9b1a-4c5d-8e7f-0a1b2c3d4e5f'
// Claude Code 2.1's metadata.user_id: a JSON object of ids
const USER_ID = JSON.stringify({device_id: 'a'.repeat(64), account_uuid: '', session_id: SESSION})

describe('prompt_cache_key to a Responses upstream', {timeout: 60_000}, () => {
  it('Claude Code: its session id is the key, the same on both turns of the session', async () => {
    await takeSimCalls(simOrigin, /\/responses$/)
    const client = new Anthropic({baseURL: base, apiKey: keys.get('responses')!, maxRetries: 0})
    const first = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      metadata: {user_id: USER_ID},
      messages: [{role: 'user', content: 'hi'}],
    })
    const text = first.content.find((b) => b.type === 'text')!.text
    await client.messages
      .stream({
        model: 'claude-sonnet-4-5',
        max_tokens: 256,
        metadata: {user_id: USER_ID},
        messages: [
          {role: 'user', content: 'hi'},
          {role: 'assistant', content: text},
          {role: 'user', content: 'Say hello.'},
        ],
      })
      .finalMessage()
    const calls = await takeSimCalls(simOrigin, /\/responses$/)
    expect(calls.map((c) => c.prompt_cache_key)).toEqual([SESSION, SESSION])
    // (the user id itself, about 150 characters, is more than OpenAI's `user` takes)
    expect(calls.every((c) => c.user === undefined)).toBe(true)
  })

  it("opencode: a chat request's prompt_cache_key reaches the Responses upstream", async () => {
    await takeSimCalls(simOrigin, /\/responses$/)
    const client = new OpenAI({baseURL: `${base}/v1`, apiKey: keys.get('responses')!, maxRetries: 0})
    await client.chat.completions.create({
      model: 'gpt-5.5',
      messages: [{role: 'user', content: 'hi'}],
      prompt_cache_key: 'ses_abc',
    })
    const calls = await takeSimCalls(simOrigin, /\/responses$/)
    expect(calls.map((c) => c.prompt_cache_key)).toEqual(['ses_abc'])
  })
})

describe('an empty text part to Gemini', {timeout: 60_000}, () => {
  it("Claude Code's empty text block with a cache mark is left out: answered on the first try", async () => {
    await takeSimCalls(simOrigin, /generateContent$/)
    const client = new Anthropic({baseURL: base, apiKey: keys.get('gemini')!, maxRetries: 0})
    const answer = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 256,
      messages: [
        {role: 'user', content: 'hi'},
        {role: 'assistant', content: [{type: 'text', text: ''}]},
        {
          role: 'user',
          content: [
            {type: 'text', text: 'next'},
            {type: 'text', text: '', cache_control: {type: 'ephemeral'}},
          ],
        },
      ],
    })
    expect(answer.content.some((b) => b.type === 'text')).toBe(true)
    const calls = await takeSimCalls(simOrigin, /generateContent$/)
    expect(calls).toHaveLength(1)
    expect(calls[0].contents).toEqual([{role: 'user', parts: [{text: 'hi'}, {text: 'next'}]}])
    const rows = await projectLogRows(base, 'ck-gemini', 1)
    expect(rows.map((r) => [r.status, r.error])).toEqual([[200, null]])
  })
})
