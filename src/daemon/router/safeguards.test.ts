/**
 * Claude Code's auto-mode `safeguards` field and betas passed through: to a server that is not
 * Anthropic's they go without both (the other betas kept); unit rules of the beta list.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyTarget} from './proxy.js'
import {judgedMessagesGateway, MESSAGES_STREAM, messagesTarget} from './proxy-fixture.js'
import {asksSafeguards, withoutAutoModeBetas, withoutBetas, withoutSafeguards} from './safeguards.js'

let targets: ProxyTarget[] = []
const {upstream, received, headers, start, close, post} = judgedMessagesGateway(() => undefined, {
  route: () => ({targets}),
})

beforeAll(start)

afterAll(close)

const BETAS =
  'claude-code-20250219,dangerous-tool-use-2026-09-03,afk-mode-2026-01-31,interleaved-thinking-2025-05-14'

describe("Claude Code's auto-mode safeguards to a server that is not Anthropic's", () => {
  it('goes without the field and its two betas; the rest of the body and the other betas as they came', async () => {
    targets = [messagesTarget('zai', 'glm-5.3', upstream.origin)]
    const body = {
      model: 'claude-sonnet-4-5',
      max_tokens: 32000,
      messages: [{role: 'user', content: 'hi'}],
      stream: true,
      safeguards: [{type: 'dangerous_tool_use', classifier_context: {version: 1, transcript: 'User: hi'}}],
    }
    const res = await post(body, {
      'anthropic-beta': BETAS,
      'user-agent': 'claude-cli/2.1.290 (external, cli)',
    })
    expect(res.status).toBe(200)
    expect(await res.text()).toBe(MESSAGES_STREAM)
    const {safeguards: _, ...rest} = body
    expect(String(received.at(-1))).toBe(JSON.stringify({...rest, model: 'glm-5.3'}))
    expect(headers.at(-1)!['anthropic-beta']).toBe('claude-code-20250219,interleaved-thinking-2025-05-14')
  })
})

describe('withoutSafeguards', () => {
  const parse = (b: Buffer) => JSON.parse(String(b)) as Record<string, unknown>
  it('cuts the last member out of the bytes, or writes a body with it elsewhere again', () => {
    const last =
      '{"model":"m","messages":[],"safeguards":[{"type":"dangerous_tool_use","classifier_context":{"t":"}"}}]}'
    expect(String(withoutSafeguards(Buffer.from(last), parse))).toBe('{"model":"m","messages":[]}')
    const inside = '{"model":"m","safeguards":[{"type":"dangerous_tool_use"}],"stream":true}'
    expect(JSON.parse(String(withoutSafeguards(Buffer.from(inside), parse)))).toEqual({
      model: 'm',
      stream: true,
    })
    const first = '{ "safeguards": [{"type": "dangerous_tool_use"}], "model": "m" }'
    expect(JSON.parse(String(withoutSafeguards(Buffer.from(first), parse)))).toEqual({model: 'm'})
    const none = Buffer.from('{"model":"m","messages":[{"role":"user","content":"\\"safeguards\\""}]}')
    expect(withoutSafeguards(none, parse)).toBe(none)
  })
})

describe('the beta list', () => {
  it('knows the ask, and keeps every other beta', () => {
    expect(asksSafeguards(BETAS)).toBe(true)
    expect(asksSafeguards(['a', 'dangerous-tool-use-2026-09-03'])).toBe(true)
    expect(asksSafeguards('afk-mode-2026-01-31')).toBe(true)
    expect(asksSafeguards('interleaved-thinking-2025-05-14')).toBe(false)
    expect(asksSafeguards(undefined)).toBe(false)
    expect(withoutAutoModeBetas('dangerous-tool-use-2026-09-03, afk-mode-2026-01-31')).toBeUndefined()
    expect(withoutAutoModeBetas(BETAS)).toBe('claude-code-20250219,interleaved-thinking-2025-05-14')
  })

  it('splits one way for every rule: the value as it came when nothing goes, empty names dropped', () => {
    const none = () => false
    expect(withoutBetas('a-1, b-2', none)).toBe('a-1, b-2')
    expect(withoutBetas('a-1, ,b-2,', none)).toBe('a-1, ,b-2,')
    expect(withoutBetas('a-1, ,b-2', (name) => name === 'b-2')).toBe('a-1')
    expect(withoutBetas(' a-1 , b-2 ', (name) => name === 'a-1')).toBe('b-2')
    expect(withoutBetas('a-1', () => true)).toBeUndefined()
  })
})
