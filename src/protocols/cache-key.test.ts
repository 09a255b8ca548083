import {describe, expect, it} from 'vitest'

import {derivedCacheKey, headerCacheKey} from './cache-key.js'
import {geminiCodec} from './gemini.js'
import type {Message, Request} from './ir.js'
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

const text = (t: string) => ({type: 'text' as const, text: t})
const request = (system: string, messages: Message[]): Request => ({
  model: null,
  system: system ? [text(system)] : [],
  messages,
  tools: [],
  stream: false,
})
const user = (...parts: string[]): Message => ({role: 'user', parts: parts.map(text)})
const DERIVED = /^gw-[\w-]{32}$/

describe('headerCacheKey', () => {
  const h = (value: string) => headerCacheKey({'x-session-id': value})
  it('the first of x-session-affinity, x-session-id, session-id', () => {
    expect(headerCacheKey({'x-session-id': 'b', 'x-session-affinity': 'a', 'session-id': 'c'})).toBe(h('a'))
    expect(headerCacheKey({'x-session-id': 'b', 'session-id': 'c'})).toBe(h('b'))
    expect(headerCacheKey({'session-id': 'c'})).toBe(h('c'))
    expect(headerCacheKey({'x-session-affinity': '', 'session-id': 'c'})).toBe(h('c'))
    expect(headerCacheKey({'user-agent': 'x'})).toBeUndefined()
  })

  it('a hash of the id, never the id itself: the same for the same id, another for another (review58)', () => {
    expect(h('ses_1')).toMatch(DERIVED)
    expect(h('ses_1')).not.toContain('ses_1')
    expect(h('ses_1')).toBe(h('ses_1'))
    expect(h('ses_2')).not.toBe(h('ses_1'))
    expect(h('s'.repeat(65))).toMatch(DERIVED)
    expect(h('s'.repeat(66))).not.toBe(h('s'.repeat(65)))
  })
})

describe('derivedCacheKey', () => {
  const context = '<session_context>/home/u/work</session_context>'
  const first = user(context, 'use a tool')

  it('the same on every turn of a conversation', () => {
    const key = derivedCacheKey(request('You are Gemini CLI.', [first]), 'agent-1')
    expect(key).toMatch(DERIVED)
    const turn2 = request('You are Gemini CLI.', [
      first,
      {role: 'assistant', parts: [text('Which tool?')]},
      user('read notes.txt'),
    ])
    expect(derivedCacheKey(turn2, 'agent-1')).toBe(key)
  })

  it('the same after a resume that rewrites the rest of the first turn (Gemini CLI, Qwen Code: audit56)', () => {
    const key = derivedCacheKey(request('You are Gemini CLI.', [first]), 'agent-1')
    // Gemini CLI's resumed history: the first turn without its prompt
    const resumed = request('You are Gemini CLI.', [
      user(context),
      {role: 'assistant', parts: [text('Done.')]},
      user('go on'),
    ])
    expect(derivedCacheKey(resumed, 'agent-1')).toBe(key)
    // Qwen Code's: the date reminder moved from the first turn to the new prompt
    const qwen = (...rest: string[]) =>
      derivedCacheKey(request('You are Qwen Code.', [user('<env>/home/u/work</env>', 'files', ...rest)]))
    expect(qwen('<system-reminder>The current date is 2026-11-29</system-reminder>')).toBe(qwen())
  })

  it('another context, system prompt or agent: another key', () => {
    const key = derivedCacheKey(request('You are Gemini CLI.', [first]), 'agent-1')
    const others = [
      derivedCacheKey(
        request('You are Gemini CLI.', [user('<session_context>/srv</session_context>', 'use a tool')]),
        'agent-1',
      ),
      derivedCacheKey(request('You are Qwen Code.', [first]), 'agent-1'),
      derivedCacheKey(request('You are Gemini CLI.', [first]), 'agent-2'),
      derivedCacheKey(request('You are Gemini CLI.', [first])),
    ]
    expect(new Set([key, ...others]).size).toBe(5)
  })

  it('a prompt after a long context in one string tells conversations apart (its end is read)', () => {
    const context = 'x'.repeat(10_000)
    const a = derivedCacheKey(request('', [user(`${context}\nfix the build`)]))
    const b = derivedCacheKey(request('', [user(`${context}\nrun the tests`)]))
    expect(a).not.toBe(b)
  })

  it('reads a bounded part only: the middle of a long part, text parts after the first, other turns', () => {
    const mid = (c: string) => `${'a'.repeat(1000)}${c}${'b'.repeat(1000)}`
    expect(derivedCacheKey(request('', [user(mid('1'))]))).toBe(
      derivedCacheKey(request('', [user(mid('2'))])),
    )
    expect(derivedCacheKey(request('', [user('1', 'x')]))).toBe(
      derivedCacheKey(request('', [user('1', 'y')])),
    )
  })

  it('the first user turn, not an assistant turn before it; a turn of no text still gets one', () => {
    const lead: Message = {role: 'assistant', parts: [text('Hello!')]}
    expect(derivedCacheKey(request('s', [lead, first]))).toBe(derivedCacheKey(request('s', [first])))
    expect(
      derivedCacheKey(
        request('s', [{role: 'user', parts: [{type: 'image', mediaType: 'image/png', data: 'AA=='}]}]),
      ),
    ).toMatch(DERIVED)
  })
})
