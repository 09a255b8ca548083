/**
 * Claude Code's attribution block out of a Messages body passed through to a server that is not
 * Anthropic's: the bytes that remain, and the spellings left as they came.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {isAnthropicApi, sendsBillingLine, withoutBillingBlock} from './billing-line.js'
import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {
  MESSAGES_ANSWER,
  MESSAGES_STREAM,
  messagesTarget,
  ProxyGateway,
  startJudgedUpstream,
} from './proxy-fixture.js'

const LINE = 'x-anthropic-billing-header: cc_version=2.1.332.3f1; cc_entrypoint=cli; cch=1a2b3;'
const SYSTEM = [
  {type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude."},
  {type: 'text', text: 'The rest of the prompt.', cache_control: {type: 'ephemeral'}},
]
/** Claude Code's key order: messages, then system, then tools. */
const claudeBody = (system: unknown[], messages: unknown[] = [{role: 'user', content: 'hi'}]) =>
  Buffer.from(
    JSON.stringify({
      model: 'glm-4.6',
      messages,
      system,
      tools: [{name: 'Bash', description: 'Runs "system" commands', input_schema: {type: 'object'}}],
      max_tokens: 32000,
      stream: true,
    }),
  )

describe('withoutBillingBlock', () => {
  it('takes the first system block out when it is the attribution line, and nothing else', () => {
    const body = claudeBody([{type: 'text', text: LINE}, ...SYSTEM])
    const out = withoutBillingBlock(body)
    expect(String(out)).toBe(String(claudeBody(SYSTEM)))
    expect(JSON.parse(String(out)).system).toEqual(SYSTEM)
  })

  it('gives the same bytes for two turns whose lines differ (the prefix cache holds)', () => {
    const turn1 = withoutBillingBlock(claudeBody([{type: 'text', text: LINE}, ...SYSTEM]))
    const turn2 = withoutBillingBlock(
      claudeBody([{type: 'text', text: LINE.replace('3f1', '9c0').replace('1a2b3', 'ffe01')}, ...SYSTEM]),
    )
    expect(turn2.equals(turn1)).toBe(true)
  })

  it('finds the block however long the conversation before it is, its words in messages untouched', () => {
    const messages = Array.from({length: 400}, (_, i) => ({
      role: i % 2 ? 'assistant' : 'user',
      content: `turn ${i}: the prompt starts with ${LINE} and "system":[{"type":"text"`,
    }))
    const out = withoutBillingBlock(claudeBody([{type: 'text', text: LINE}, ...SYSTEM], messages))
    const parsed = JSON.parse(String(out)) as {messages: unknown[]; system: unknown[]}
    expect(parsed.system).toEqual(SYSTEM)
    expect(parsed.messages).toEqual(messages)
  })

  it('leaves every other spelling as it came', () => {
    const cases = [
      // no attribution line
      claudeBody(SYSTEM),
      // the line not first
      claudeBody([SYSTEM[0], {type: 'text', text: LINE}, SYSTEM[1]]),
      // the only block (an empty system array is not written in its place)
      claudeBody([{type: 'text', text: LINE}]),
      // a block with more than its text
      claudeBody([{type: 'text', text: LINE, cache_control: {type: 'ephemeral'}}, ...SYSTEM]),
      // an escape inside the text
      claudeBody([{type: 'text', text: `${LINE} "quoted"`}, ...SYSTEM]),
      // a system prompt as a string
      Buffer.from(JSON.stringify({model: 'm', messages: [], system: `${LINE}\nYou are Claude Code.`})),
      // spaced JSON
      Buffer.from(
        `{"model": "m", "system": [{"type": "text", "text": "${LINE}"}, {"type": "text", "text": "x"}]}`,
      ),
    ]
    for (const body of cases) expect(withoutBillingBlock(body)).toBe(body)
  })
})

describe('sendsBillingLine', () => {
  it('knows Claude Code and its Agent SDK by their User-Agent', () => {
    expect(sendsBillingLine('claude-cli/2.1.332 (external, cli)')).toBe(true)
    expect(sendsBillingLine('claude-cli/2.1.197 (external, sdk-cli)')).toBe(true)
    for (const ua of [undefined, 'opencode/1.18.33', 'Anthropic/JS 0.94.0', 'Bun/1.4.0'])
      expect(sendsBillingLine(ua)).toBe(false)
  })
})

describe('isAnthropicApi', () => {
  it("knows Anthropic's API by its host", () => {
    for (const url of [
      'https://api.anthropic.com',
      'https://api.anthropic.com/v1',
      'https://eu.api.anthropic.com:443/',
    ])
      expect(isAnthropicApi(url)).toBe(true)
    for (const url of [
      'https://api.deepseek.com/anthropic',
      'https://open.bigmodel.cn/api/anthropic',
      'https://anthropic.com.evil.example',
      'https://api.moonshot.ai/anthropic?via=anthropic.com',
      'http://127.0.0.1:8080',
      'https://user@anthropic.com.example',
    ])
      expect(isAnthropicApi(url)).toBe(false)
  })
})

describe('a Messages request passed through to a server that is not Anthropic', () => {
  const received: Buffer[] = []
  let upstream: Upstream
  let targets: ProxyTarget[] = []
  const gateway = new ProxyGateway({route: () => ({targets})})

  beforeAll(async () => {
    upstream = await startJudgedUpstream(received, () => undefined, {
      stream: MESSAGES_STREAM,
      json: MESSAGES_ANSWER,
    })
    await gateway.listen()
  })

  afterAll(async () => {
    await gateway.close()
    upstream.close()
  })

  it("goes without Claude Code's attribution block, the rest byte for byte", async () => {
    targets = [messagesTarget('zai', 'glm-4.6', upstream.origin)]
    for (const cch of ['1a2b3', '77c01']) {
      const answer = await fetch(`${gateway.url}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-api-key': 'gw',
          'anthropic-version': '2023-06-01',
          'user-agent': 'claude-cli/2.1.332 (external, cli)',
        },
        body: claudeBody([{type: 'text', text: LINE.replace('1a2b3', cch)}, ...SYSTEM]),
      })
      expect(answer.status).toBe(200)
    }
    expect(received).toHaveLength(2)
    expect(String(received[0])).toBe(String(claudeBody(SYSTEM)))
    expect(received[1].equals(received[0])).toBe(true)

    // another client's body (not Claude Code's User-Agent) is not searched: as it came
    received.length = 0
    const other = claudeBody([{type: 'text', text: LINE}, ...SYSTEM])
    const answer = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: {'content-type': 'application/json', 'x-api-key': 'gw', 'user-agent': 'opencode/1.18.33'},
      body: other,
    })
    expect(answer.status).toBe(200)
    expect(received[0].equals(other)).toBe(true)
  })
})
