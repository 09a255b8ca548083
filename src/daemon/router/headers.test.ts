import {describe, expect, it} from 'vitest'

import {forwardHeaders, mintRequestId} from './headers.js'

describe('minted request ids', () => {
  it('are req_ and 12 random bytes in hex, never the same twice (past the bytes drawn at once)', () => {
    const ids = Array.from({length: 2000}, () => mintRequestId())
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/)
    expect(new Set(ids).size).toBe(ids.length)
  })
})

describe('headers forwarded upstream', () => {
  const codex = {
    authorization: 'Bearer gw-key',
    cookie: 'c=1',
    'content-type': 'application/json',
    session_id: 'ignored-underscore-form',
    'session-id': 's-1',
    'x-codex-turn-metadata': '{}',
    'x-openai-internal-codex-responses-lite': 'true',
    'x-unknown': 'x',
  }
  const provider = {name: 'openai', family: 'responses' as const, baseUrl: 'https://api.openai.com/v1'}

  it("passed through: Codex's own headers (its Lite header too), never the client's key or cookies", () => {
    expect(forwardHeaders(codex, provider, 'sk-up', 10)).toEqual({
      'content-type': 'application/json',
      'session-id': 's-1',
      'x-codex-turn-metadata': '{}',
      'x-openai-internal-codex-responses-lite': 'true',
      'content-length': '10',
      authorization: 'Bearer sk-up',
    })
  })

  it("noLite (Codex's request made plain, or its Lite request sent as for a model that is not Lite): all but Codex's internal headers", () => {
    expect(forwardHeaders(codex, provider, 'sk-up', 10, 'noLite')).toEqual({
      'content-type': 'application/json',
      'session-id': 's-1',
      'x-codex-turn-metadata': '{}',
      'content-length': '10',
      authorization: 'Bearer sk-up',
    })
  })

  it('translated: none of a protocol of its own', () => {
    const sent = forwardHeaders(codex, {...provider, family: 'chat'}, 'sk-up', 10, true)
    expect(Object.keys(sent).filter((k) => k.startsWith('x-'))).toEqual([])
    expect(sent.authorization).toBe('Bearer sk-up')
  })
})
