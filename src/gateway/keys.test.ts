import {describe, expect, it} from 'vitest'

import {initialState} from '../store/state-schema.js'
import {IssueError, issueKey, removeAgentInState, validateIssueRequest} from './key-issue.js'
import {KeyIndex, displayPrefix, generateKey, hashKey, parseKey} from './keys.js'

const base = {
  employeeName: 'Ada Lovelace',
  employeeContact: 'ada@example.com',
  agentName: 'laptop',
  agentType: 'claude_code',
}

function flip(key: string, at: number): string {
  const c = key[at]
  return key.slice(0, at) + (c === 'A' ? 'B' : 'A') + key.slice(at + 1)
}

describe('key format', () => {
  it('is gw- + 40 base62 characters + a 6-character checksum, and random', () => {
    const key = generateKey()
    expect(key).toMatch(/^gw-[0-9A-Za-z]{46}$/)
    expect(generateKey()).not.toBe(key)
    expect(parseKey(key)).toEqual({kind: 'valid', key})
  })

  it('tells forged keys (prefix, bad checksum or shape) from foreign ones', () => {
    const key = generateKey()
    expect(parseKey(flip(key, 10))).toEqual({kind: 'forged'})
    expect(parseKey(flip(key, key.length - 1))).toEqual({kind: 'forged'})
    expect(parseKey(key.slice(0, -1))).toEqual({kind: 'forged'})
    expect(parseKey('gw-short')).toEqual({kind: 'forged'})
    expect(parseKey('sk-' + key.slice(3))).toEqual({kind: 'foreign'})
  })

  it('accepts the gw_ spelling of the prefix as the same key', () => {
    const key = generateKey()
    expect(parseKey('gw_' + key.slice(3))).toEqual({kind: 'valid', key})
  })

  it('shows a prefix with an ellipsis and hashes with the install secret', () => {
    const key = generateKey()
    expect(displayPrefix(key)).toBe(key.slice(0, 9) + '…')
    const s1 = initialState().secret
    const s2 = initialState().secret
    expect(hashKey(s1, key)).toMatch(/^[0-9a-f]{64}$/)
    expect(hashKey(s1, key)).not.toBe(hashKey(s2, key))
  })
})

describe('validateIssueRequest', () => {
  it('names every missing required field', () => {
    expect(() => validateIssueRequest({agentType: 'codex'})).toThrow(
      'Missing required fields: employeeName, employeeContact, agentName.',
    )
    expect(() => validateIssueRequest('x')).toThrow(IssueError)
  })

  it('names each field of the wrong type with its type, even when every field is present', () => {
    expect(() =>
      validateIssueRequest({employeeName: 1, employeeContact: true, agentName: ['a'], agentType: {}}),
    ).toThrow(
      'Fields must be strings: employeeName is a number, employeeContact is a boolean, agentName is an array, agentType is an object.',
    )
  })

  it('refuses control characters (terminal escape sequences, line breaks) and names the fields', () => {
    expect(() => validateIssueRequest({...base, agentName: 'x\u001b]52;c;cHdu\u0007'})).toThrow(
      'Fields must not contain control characters (line breaks, escape sequences, bidirectional overrides): agentName.',
    )
    // a right-to-left override makes a name read backwards in a terminal
    expect(() => validateIssueRequest({...base, agentName: 'evil\u202Etxt.exe'})).toThrow(/: agentName\.$/)
    expect(() => validateIssueRequest({...base, employeeName: 'a\u2066b'})).toThrow(/: employeeName\.$/)
    expect(() => validateIssueRequest({...base, employeeName: 'A\nB', configPath: 'a\u0000'})).toThrow(
      /: employeeName, configPath\.$/,
    )
    expect(validateIssueRequest({...base, agentName: 'Ada’s laptop ✓'}).agentName).toBe('Ada’s laptop ✓')
  })

  it('requires parentAgentId for sub-agent kinds and refuses unknown kinds', () => {
    expect(() => validateIssueRequest({...base, agentType: 'claude_code_subagent'})).toThrow(/parentAgentId/)
    expect(() => validateIssueRequest({...base, agentType: 'robot'})).toThrow(/Known kinds: generic_agent/)
  })
})

describe('issueKey', () => {
  it('creates employee, agent and key; stores only the hash; defaults the policy by kind', () => {
    const state = initialState()
    const r = issueKey(state, validateIssueRequest(base), 1_000_000)
    expect(r.response).toMatchObject({policyId: 'claude_code_default', createdAt: 1000})
    expect(r.response.keyPrefix).toBe(r.response.keyValue.slice(0, 9) + '…')
    expect(JSON.stringify(state)).not.toContain(r.response.keyValue)
    expect(state.keys[0].hash).toBe(hashKey(state.secret, r.response.keyValue))
    const generic = issueKey(state, validateIssueRequest({...base, agentType: 'generic_agent'}), 1_000_000)
    expect(generic.response.policyId).toBe('default')
    expect(state.employees).toHaveLength(1)
    expect(state.agents).toHaveLength(2)
  })

  it('rotates: the old key is revoked at once; a second issue within 5 s is 429 with the wait', () => {
    const state = initialState()
    const index = new KeyIndex(state)
    const first = issueKey(state, validateIssueRequest(base), 1_000_000)
    index.add(first.key, first.agent)
    expect(index.verify(first.response.keyValue).ok).toBe(true)

    let limited: IssueError | undefined
    try {
      issueKey(state, validateIssueRequest(base), 1_003_500)
    } catch (error) {
      limited = error as IssueError
    }
    expect(limited).toMatchObject({status: 429, code: 'rate_limited', retryAfterSeconds: 2})

    const second = issueKey(state, validateIssueRequest(base), 1_005_000)
    index.add(second.key, second.agent)
    expect(second.response.agentId).toBe(first.response.agentId)
    expect(index.verify(first.response.keyValue)).toMatchObject({
      ok: false,
      status: 401,
      reason: 'revoked',
      message: 'The gateway key was revoked (a newer key was issued for this agent).',
    })
    expect(index.verify(second.response.keyValue).ok).toBe(true)
  })

  it('tells a rotation from a revoke without reading every key: a refused request costs O(1)', () => {
    const state = initialState()
    const index = new KeyIndex(state)
    const first = issueKey(state, validateIssueRequest(base), 1_000_000)
    index.add(first.key, first.agent)
    const second = issueKey(state, validateIssueRequest(base), 1_005_000)
    index.add(second.key, second.agent)
    const other = issueKey(state, validateIssueRequest({...base, agentName: 'ci'}), 1_006_000)
    index.add(other.key, other.agent)
    other.key.revokedAt = 1_007_000
    // a refused request may no longer walk the state's keys (a gateway of thousands of agents)
    Object.defineProperty(state, 'keys', {
      get() {
        throw new Error('state.keys read on a refused request')
      },
    })
    expect(index.verify(first.response.keyValue)).toMatchObject({
      reason: 'revoked',
      message: 'The gateway key was revoked (a newer key was issued for this agent).',
    })
    expect(index.verify(other.response.keyValue)).toMatchObject({
      reason: 'revoked',
      message: 'The gateway key was revoked (`gwctl key revoke`); the agent has no newer key.',
    })
  })

  it('a rotation whose new key was revoked since: the old key is not sent to a key that no longer works (review50 F2)', () => {
    const state = initialState()
    const live = new KeyIndex(state)
    const first = issueKey(state, validateIssueRequest(base), 1_000_000)
    live.add(first.key, first.agent)
    const second = issueKey(state, validateIssueRequest(base), 1_005_000)
    live.add(second.key, second.agent)
    first.key.revokedAt = 1_005_000
    second.key.revokedAt = 1_006_000
    // the live index and one built afresh (a daemon restart) say the same
    for (const index of [live, new KeyIndex(state)]) {
      const verdict = index.verify(first.response.keyValue)
      expect(verdict).toMatchObject({
        reason: 'revoked',
        message: 'The gateway key was revoked (`gwctl key revoke`); the agent has no newer key.',
      })
      expect(verdict).not.toHaveProperty('rotated')
    }
  })

  it('a retry that sends the retry token of the last issue is not held to the 5 s limit; any other issue is', () => {
    const state = initialState()
    const token = {...base, retryToken: 'a'.repeat(32)}
    const first = issueKey(state, validateIssueRequest(token), 1_000_000)
    expect(first.agent.lastIssueToken).toMatch(/^[0-9a-f]{64}$/)
    expect(first.agent.lastIssueToken).not.toContain('a'.repeat(32))
    const code = (request: object, at: number) => {
      try {
        issueKey(state, validateIssueRequest(request), at)
        return 'issued'
      } catch (error) {
        return (error as IssueError).code
      }
    }
    expect(code(base, 1_001_000)).toBe('rate_limited')
    expect(code({...base, retryToken: 'b'.repeat(32)}, 1_001_000)).toBe('rate_limited')
    expect(code(token, 1_001_000)).toBe('issued')
    // an issue without the token ends it: the next retry with it is held to the limit again
    expect(code(base, 1_007_000)).toBe('issued')
    expect(code(token, 1_008_000)).toBe('rate_limited')
  })

  it('links a sub-agent to an existing parent and refuses an unknown parent or policy', () => {
    const state = initialState()
    const parent = issueKey(state, validateIssueRequest(base), 0)
    const child = issueKey(
      state,
      validateIssueRequest({
        ...base,
        agentName: 'reviewer',
        agentType: 'claude_code_subagent',
        parentAgentId: parent.agent.id,
      }),
      0,
    )
    expect(child.agent).toMatchObject({
      parentAgentId: parent.agent.id,
      parentAgentName: 'laptop',
      policyId: 'default',
    })
    expect(() =>
      issueKey(
        state,
        validateIssueRequest({...base, agentType: 'codex_subagent', parentAgentId: 'agt_nope'}),
        0,
      ),
    ).toThrow(/not a known agent/)
    expect(() => issueKey(state, validateIssueRequest({...base, policyId: 'nope'}), 0)).toThrow(
      /Unknown policyId/,
    )
  })
})

describe('KeyIndex.verify', () => {
  it('answers 401 for missing and unknown keys and 400 for forged ones', () => {
    const index = new KeyIndex(initialState())
    expect(index.verify(undefined)).toMatchObject({ok: false, status: 401, reason: 'missing'})
    expect(index.verify(generateKey())).toMatchObject({ok: false, status: 401, reason: 'unknown'})
    expect(index.verify('sk-anything')).toMatchObject({ok: false, status: 401})
    expect(index.verify(flip(generateKey(), 12))).toMatchObject({ok: false, status: 400, reason: 'forged'})
  })

  it('remembers a verified key without trusting it past a revocation or a reload that drops it', () => {
    const state = initialState()
    const index = new KeyIndex(state)
    const issued = issueKey(state, validateIssueRequest(base), 1_000_000)
    index.add(issued.key, issued.agent)
    const key = issued.response.keyValue
    expect(index.verify(key).ok).toBe(true)
    expect(index.verify(key).ok).toBe(true) // the remembered path
    // the gw_ spelling of the same key is the same key
    expect(index.verify(key.replace('gw-', 'gw_')).ok).toBe(true)
    // a key one character off never matches the remembered one
    expect(index.verify(flip(key, 12)).ok).toBe(false)

    issued.key.revokedAt = 1_000_500
    // revoked with no newer key (`gwctl key revoke`): not told that a newer one was issued
    expect(index.verify(key)).toMatchObject({
      ok: false,
      status: 401,
      reason: 'revoked',
      message: 'The gateway key was revoked (`gwctl key revoke`); the agent has no newer key.',
    })
    delete issued.key.revokedAt
    expect(index.verify(key).ok).toBe(true)

    state.keys = []
    index.rebuild()
    expect(index.verify(key)).toMatchObject({ok: false, status: 401, reason: 'unknown'})
  })
})

describe('removeAgentInState (agents remove)', () => {
  it('removes the agent, revokes its keys (kept for the record) and verifies them no more', () => {
    const state = initialState()
    const r = issueKey(state, validateIssueRequest({...base, agentType: 'generic_agent'}), 1_000_000)
    const index = new KeyIndex(state)
    expect(index.verify(r.response.keyValue).ok).toBe(true)
    const removed = removeAgentInState(state, r.response.agentId, 2_000_000)
    expect(removed).toMatchObject({ok: true, revokedKeyIds: [r.response.keyId]})
    index.rebuild()
    expect(state.agents).toEqual([])
    expect(state.keys[0].revokedAt).toBe(2000)
    expect(index.verify(r.response.keyValue)).toMatchObject({
      ok: false,
      status: 401,
      message: 'The gateway key was revoked: its agent was removed (`gwctl agents remove`).',
    })
  })

  it('refuses a bound agent and one with sub-agents (409), an unknown id (404), no id (400)', () => {
    const state = initialState()
    const parent = issueKey(state, validateIssueRequest({...base, agentType: 'generic_agent'}), 1_000_000)
    state.bindings = [
      {
        tool: 'codex',
        agentId: parent.response.agentId,
        keyId: 'k',
        port: 1,
        phase: 'bound',
        files: [],
        createdAt: 1,
        updatedAt: 1,
      },
    ]
    expect(removeAgentInState(state, parent.response.agentId)).toMatchObject({
      ok: false,
      status: 409,
      code: 'agent_bound',
    })
    state.bindings = []
    issueKey(
      state,
      validateIssueRequest({
        ...base,
        agentName: 'child',
        agentType: 'claude_code_subagent',
        parentAgentId: parent.response.agentId,
      }),
      1_000_000,
    )
    expect(removeAgentInState(state, parent.response.agentId)).toMatchObject({
      ok: false,
      status: 409,
      code: 'agent_has_subagents',
    })
    expect(removeAgentInState(state, 'agt_nope')).toMatchObject({ok: false, status: 404})
    expect(removeAgentInState(state, undefined)).toMatchObject({ok: false, status: 400})
    expect(state.agents).toHaveLength(2)
  })
})
