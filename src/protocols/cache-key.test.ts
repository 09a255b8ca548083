import {describe, expect, it} from 'vitest'

import {geminiCodec} from './gemini.js'
import type {Request} from './ir.js'
import {decodeClientRequest, encodeUpstreamRequest} from './translate.js'

const upstream = (
  family: 'chat' | 'messages',
  body: unknown,
  to: 'responses' | 'chat' | 'messages' = 'responses',
) =>
  JSON.parse(
    encodeUpstreamRequest(
      decodeClientRequest(family, body, {model: 'm', stream: false}),
      to,
      'm',
    ).body.toString(),
  ) as Record<string, unknown>

// Claude Code 2.1's metadata.user_id: a JSON object of ids, about 150 characters
const claudeUser = (session: string) =>
  JSON.stringify({
    device_id: 'a'.repeat(64),
    account_uuid: '0e1f2a3b-0000-4000-8000-000000000000',
    session_id: session,
  })

describe('prompt_cache_key to a Responses upstream', () => {
  it("carries opencode's prompt_cache_key from a chat request", () => {
    const body = upstream('chat', {
      model: 'm',
      prompt_cache_key: 'ses_1',
      messages: [{role: 'user', content: 'hi'}],
    })
    expect(body.prompt_cache_key).toBe('ses_1')
  })

  it("makes Claude Code's session id the key, the same on every turn of the session, and leaves out the long user id", () => {
    const turn = (messages: unknown[]) =>
      upstream('messages', {
        model: 'm',
        max_tokens: 100,
        metadata: {user_id: claudeUser('6d0f3c2e-9b1a-4c5d-8e7f-0a1b2c3d4e5f')},
        messages,
      })
    const first = turn([{role: 'user', content: 'hi'}])
    const second = turn([
      {role: 'user', content: 'hi'},
      {role: 'assistant', content: 'hello'},
      {role: 'user', content: 'more'},
    ])
    expect(first.prompt_cache_key).toBe('6d0f3c2e-9b1a-4c5d-8e7f-0a1b2c3d4e5f')
    expect(second.prompt_cache_key).toBe(first.prompt_cache_key)
    expect(first).not.toHaveProperty('user')
  })

  it('makes no key of a user id without a session, an unreadable one, or a session id over 64 characters', () => {
    for (const user_id of [
      'user_abc_account__session_6d0f3c2e',
      '{"session_id": broken',
      claudeUser('s'.repeat(65)),
      JSON.stringify({session_id: 7}),
    ]) {
      const body = upstream('messages', {
        model: 'm',
        max_tokens: 100,
        metadata: {user_id},
        messages: [{role: 'user', content: 'hi'}],
      })
      expect(body).not.toHaveProperty('prompt_cache_key')
    }
  })

  it('writes it to no other upstream (servers of other models refuse it)', () => {
    const chat = {model: 'm', prompt_cache_key: 'ses_1', messages: [{role: 'user', content: 'hi'}]}
    expect(upstream('chat', chat, 'chat')).not.toHaveProperty('prompt_cache_key')
    expect(upstream('chat', chat, 'messages')).not.toHaveProperty('prompt_cache_key')
  })
})

describe('gemini encodeRequest: empty text parts', () => {
  const base: Request = {model: 'g', system: [], messages: [], tools: [], stream: false}

  it('leaves out an empty text part of a user or model turn, and a turn left with none', () => {
    const body = geminiCodec.encodeRequest(
      {
        ...base,
        messages: [
          {
            role: 'user',
            parts: [
              {type: 'text', text: 'next'},
              {type: 'text', text: ''},
            ],
          },
          {role: 'assistant', parts: [{type: 'text', text: ''}]},
          {role: 'user', parts: [{type: 'text', text: 'go on'}]},
        ],
      },
      'gemini-2.5-flash',
    )
    expect(body.contents).toEqual([{role: 'user', parts: [{text: 'next'}, {text: 'go on'}]}])
  })

  it("keeps Gemini's own empty text that carries a signature", () => {
    const body = geminiCodec.encodeRequest(
      {
        ...base,
        messages: [
          {role: 'user', parts: [{type: 'text', text: 'hi'}]},
          {
            role: 'assistant',
            parts: [
              {type: 'reasoning', text: '', signature: {family: 'gemini', value: 'SIG'}},
              {type: 'text', text: ''},
            ],
          },
          {role: 'user', parts: [{type: 'text', text: 'more'}]},
        ],
      },
      'gemini-2.5-flash',
    )
    expect((body.contents as {parts: unknown[]}[])[1]).toEqual({
      role: 'model',
      parts: [{text: '', thoughtSignature: 'SIG'}],
    })
  })
})
