/**
 * A history whose roles do not alternate, translated to a chat upstream that wants them to:
 * DeepSeek refuses two user or two assistant messages in a row ("does not support successive user
 * or assistant messages"), as the strict chat templates of Gemma and Mistral do. Claude Code's
 * thinking-only turn (left out for chat) leaves two user turns together, Claude Code sends two user
 * turns in a row, a Responses client's assistant message may be whitespace only. The gateway's chat
 * encoder merges the runs and leaves the empty turn out, on the first try. The real daemon, the
 * simulator's `successive-roles` quirk, the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import {describe, expect, it} from 'vitest'

import {projectLogRows, takeSimCalls, translatedRoutes} from './helpers/gateway.js'

const gw = translatedRoutes(
  {deepseek: 'deepseek-chat+successive-roles'},
  {prefix: 'alt', provider: 'sim-chat'},
)

const roles = (body: Record<string, any>): string[] => body.messages.map((m: any) => m.role)

describe('successive same-role turns to a chat upstream that refuses them', {timeout: 60_000}, () => {
  it('Claude Code: a thinking-only turn and two user turns in a row go as alternating messages, on the first try', async () => {
    await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    const client = new Anthropic({baseURL: gw.base, apiKey: gw.keys.get('deepseek')!, maxRetries: 0})
    const answer = await client.messages.create({
      model: 'claude-opus-4-8',
      max_tokens: 256,
      messages: [
        {role: 'user', content: 'hi'},
        {role: 'assistant', content: [{type: 'thinking', thinking: 'A greeting.', signature: 'sig'}]},
        {role: 'user', content: 'again'},
        {role: 'assistant', content: 'Hello.'},
        {role: 'user', content: [{type: 'text', text: '<system-reminder>a hook ran</system-reminder>'}]},
        {role: 'user', content: 'Say hello.'},
      ],
    })
    expect(answer.content.some((b) => b.type === 'text')).toBe(true)
    const calls = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(calls).toHaveLength(1)
    expect(calls[0].messages).toEqual([
      {role: 'user', content: 'hi\n\nagain'},
      {role: 'assistant', content: 'Hello.'},
      {role: 'user', content: '<system-reminder>a hook ran</system-reminder>\n\nSay hello.'},
    ])
    const rows = await projectLogRows(gw.base, 'alt-deepseek', 1)
    expect(rows.map((r) => [r.status, r.error])).toEqual([[200, null]])
  })

  it('a Responses client: an assistant message of whitespace only is left out and the user turns merge', async () => {
    await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    const client = new OpenAI({baseURL: `${gw.base}/v1`, apiKey: gw.keys.get('deepseek')!, maxRetries: 0})
    const answer = await client.responses.create({
      model: 'gpt-5.5',
      instructions: 'Be brief.',
      input: [
        {role: 'user', content: 'first'},
        {type: 'message', role: 'assistant', content: [{type: 'output_text', text: '  \n', annotations: []}]},
        {role: 'user', content: 'Say hello.'},
      ] as any,
    })
    expect(answer.status).toBe('completed')
    const calls = await takeSimCalls(gw.simOrigin, /\/chat\/completions$/)
    expect(calls.map(roles)).toEqual([['system', 'user']])
    expect(calls[0].messages[1]).toEqual({role: 'user', content: 'first\n\nSay hello.'})
  })
})
