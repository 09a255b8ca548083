/**
 * Claude Code's 1-hour prompt cache (`ENABLE_PROMPT_CACHING_1H=1`: `ttl`, and `scope` on its
 * system blocks) to a Messages server that is not Anthropic's: left out for a model that is not
 * Claude's, learned from a relay's refusal for one that is; every other byte as it came.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {refusesCacheTtl, withoutCacheTtl} from './cache-ttl.js'
import type {ProxyTarget} from './proxy.js'
import {learnedAdaptations} from './proxy.js'
import {judgedMessagesGateway, messagesTarget} from './proxy-fixture.js'

describe('withoutCacheTtl', () => {
  it("leaves out each cache_control's ttl and scope, nothing else", () => {
    const body =
      '{"system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral","ttl":"1h","scope":"global"}}],' +
      '"messages":[{"role":"user","content":[{"type":"text","text":"\\"cache_control\\":{\\"ttl\\":\\"1h\\"}","cache_control": {"type": "ephemeral", "ttl": "1h"}}]}],' +
      '"metadata":{"ttl":"x"}}'
    expect(String(withoutCacheTtl(Buffer.from(body)))).toBe(
      body
        .replace('{"type":"ephemeral","ttl":"1h","scope":"global"}', '{"type":"ephemeral"}')
        .replace('{"type": "ephemeral", "ttl": "1h"}', '{"type":"ephemeral"}'),
    )
    for (const other of [
      '{"system":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}}]}',
      '{"metadata":{"ttl":"1h"},"messages":[]}',
      '{"messages":[{"role":"user","content":"\\"cache_control\\":{\\"ttl\\":\\"1h\\"}"}]}',
    ])
      expect(withoutCacheTtl(Buffer.from(other))).toBeUndefined()
  })

  it("reads a refusal of the ttl or scope in a relay's words, not another", () => {
    for (const words of [
      '{"error":{"message":"`cache_control.ttl: 1h` is not supported","type":"invalid_request_error"},"type":"error"}',
      'system.0.cache_control.scope: Extra inputs are not permitted',
      "Invalid value at ['messages'][0]['content'][0]['cache_control']['ttl']",
    ])
      expect([words, refusesCacheTtl(words)]).toEqual([words, true])
    for (const words of ['invalid params', 'cache_control is not supported', 'ttl must be a string'])
      expect([words, refusesCacheTtl(words)]).toEqual([words, false])
  })
})

let refuseTtl = false
let targets: ProxyTarget[] = []
const {gateway, upstream, received, start, clear, close, post} = judgedMessagesGateway(
  (b) =>
    refuseTtl && JSON.stringify(b).includes('"ttl"')
      ? {
          status: 400,
          body: {
            type: 'error',
            error: {type: 'invalid_request_error', message: '`cache_control.ttl: 1h` is not supported'},
          },
        }
      : undefined,
  {route: () => ({targets})},
)

beforeAll(start)
afterEach(() => {
  clear()
  refuseTtl = false
})
afterAll(close)

/** Claude Code's request with its 1-hour cache on, as it writes it. */
const claudeCode = (model: string, text = 'hi') =>
  JSON.stringify({
    model,
    messages: [
      {role: 'user', content: [{type: 'text', text, cache_control: {type: 'ephemeral', ttl: '1h'}}]},
    ],
    system: [
      {
        type: 'text',
        text: 'You are Claude Code.',
        cache_control: {type: 'ephemeral', ttl: '1h', scope: 'global'},
      },
    ],
    max_tokens: 32000,
    stream: false,
  })
const fiveMinutes = (body: string) =>
  body
    .replace('{"type":"ephemeral","ttl":"1h","scope":"global"}', '{"type":"ephemeral"}')
    .replace('{"type":"ephemeral","ttl":"1h"}', '{"type":"ephemeral"}')

describe("Claude Code's 1-hour cache passed through", () => {
  it('to a model that is not Claude (DeepSeek, Kimi, MiniMax behind their Anthropic endpoints): the 5-minute cache from the first request', async () => {
    targets = [messagesTarget('deepseek', 'deepseek-v4-flash', upstream.origin)]
    expect((await post(claudeCode('claude-sonnet-4-5'))).status).toBe(200)
    expect(received.map(String)).toEqual([fiveMinutes(claudeCode('deepseek-v4-flash'))])
    expect(gateway.results.map((r) => r.error)).toEqual([null])
  })

  it("to a vendor's host that serves its own models only, Claude Code's claude- name unmapped (Z.AI): the 5-minute cache", async () => {
    const ZAI = 'https://api.z.ai'
    targets = [
      {
        provider: {
          name: 'zai',
          family: 'messages',
          baseUrl: `${ZAI}/api/anthropic`,
          credential: {secret: 'k'},
        },
      },
    ]
    // (Z.AI's origin, served by the scripted upstream: nothing leaves this machine)
    const get = gateway.pools.get.bind(gateway.pools)
    gateway.pools.get = (origin, timeouts) => get(origin === ZAI ? upstream.origin : origin, timeouts)
    try {
      expect((await post(claudeCode('claude-sonnet-4-5'))).status).toBe(200)
    } finally {
      gateway.pools.get = get
    }
    expect(received.map(String)).toEqual([fiveMinutes(claudeCode('claude-sonnet-4-5'))])
  })

  it('to a relay in front of Claude: as it came; refused, learned and sent again at once without ttl and scope, later requests so from the first try', async () => {
    targets = [messagesTarget('relay', 'claude-sonnet-4-5', upstream.origin)]
    expect((await post(claudeCode('claude-sonnet-4-5'))).status).toBe(200)
    expect(received.map(String)).toEqual([claudeCode('claude-sonnet-4-5')])
    received.length = 0
    targets = [messagesTarget('strict-relay', 'claude-sonnet-4-5', upstream.origin)]
    refuseTtl = true
    expect((await post(claudeCode('claude-sonnet-4-5'))).status).toBe(200)
    expect(received.map(String)).toEqual([
      claudeCode('claude-sonnet-4-5'),
      fiveMinutes(claudeCode('claude-sonnet-4-5')),
    ])
    expect(gateway.results.at(-1)?.error).toBe(
      "strict-relay refused cache_control's ttl (Claude Code's 1-hour cache): sent again without ttl and scope (the 5-minute cache)",
    )
    expect(learnedAdaptations().find((a) => a.provider === 'strict-relay')?.rules).toEqual([
      "Claude Code's 1-hour cache sent as the 5-minute one: cache_control without ttl and scope (refused)",
    ])
    received.length = 0
    expect((await post(claudeCode('claude-sonnet-4-5', 'again'))).status).toBe(200)
    expect(received.map(String)).toEqual([fiveMinutes(claudeCode('claude-sonnet-4-5', 'again'))])
  })
})
