/**
 * A Qwen model on Alibaba's DashScope caches explicitly where a content part carries
 * `cache_control: {type: 'ephemeral'}` (Model Studio's "Context cache" guide); Alibaba's own Qwen
 * Code marks the system message and the last message, a `tool` message included. Claude Code
 * translated to DashScope's chat completions keeps its marks there, as it does to Claude behind a
 * chat relay; another model on DashScope (GLM) and Qwen on another host get none. The proxy in this
 * process; DashScope's origin is served by a scripted upstream on 127.0.0.1 (the gateway's
 * connection pool for it is pointed there: nothing leaves this machine).
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {CHAT_ANSWER, chatTarget, ProxyGateway, startJudgedUpstream} from './proxy-fixture.js'

const DASHSCOPE = 'https://dashscope-intl.aliyuncs.com'
const MARK = {type: 'ephemeral'}

const received: Buffer[] = []
let targets: ProxyTarget[] = []
let upstream: Upstream
let gateway: ProxyGateway

beforeAll(async () => {
  upstream = await startJudgedUpstream(received, () => undefined, {stream: '', json: CHAT_ANSWER})
  gateway = new ProxyGateway({route: () => ({targets})})
  const get = gateway.pools.get.bind(gateway.pools)
  gateway.pools.get = (origin, timeouts) => get(origin === DASHSCOPE ? upstream.origin : origin, timeouts)
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

const translated = (model: string, baseUrl: string): ProxyTarget => ({
  ...chatTarget('qwen', model, baseUrl),
  translate: true,
})

/** Claude Code's turn after a tool ran: its system prompt and its last tool result marked. */
const CLAUDE_CODE_TURN = {
  model: 'claude-sonnet-4-5',
  max_tokens: 256,
  system: [{type: 'text', text: 'You are Claude Code.', cache_control: MARK}],
  messages: [
    {role: 'user', content: 'list the files'},
    {role: 'assistant', content: [{type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {command: 'ls'}}]},
    {
      role: 'user',
      content: [{type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.ts\nb.ts', cache_control: MARK}],
    },
  ],
  tools: [{name: 'Bash', input_schema: {type: 'object', properties: {command: {type: 'string'}}}}],
}

/** The chat messages the upstream got for Claude Code's turn. */
async function sentMessages(target: ProxyTarget): Promise<Array<Record<string, unknown>>> {
  targets = [target]
  received.length = 0
  const res = await fetch(`${gateway.url}/v1/messages`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer client-key'},
    body: JSON.stringify(CLAUDE_CODE_TURN),
  })
  expect(res.status).toBe(200)
  await res.text()
  return (JSON.parse(String(received[0])) as {messages: Array<Record<string, unknown>>}).messages
}

describe("Claude Code's cache marks to a Qwen model on DashScope", () => {
  it('the system message and the tool message go with cache_control on their last part', async () => {
    const messages = await sentMessages(translated('qwen3-coder-plus', `${DASHSCOPE}/compatible-mode/v1`))
    expect(messages[0]).toEqual({
      role: 'system',
      content: [{type: 'text', text: 'You are Claude Code.', cache_control: MARK}],
    })
    expect(messages.at(-1)).toMatchObject({
      role: 'tool',
      content: [{type: 'text', text: 'a.ts\nb.ts', cache_control: MARK}],
    })
    // (two marks, where Claude Code put them: not on the first user message)
    expect(JSON.stringify(messages).split('cache_control').length - 1).toBe(2)
  })

  it('GLM on DashScope, a DeepSeek distill of Qwen on DashScope, and Qwen on another host: no marks', async () => {
    for (const target of [
      translated('glm-5.1', `${DASHSCOPE}/compatible-mode/v1`),
      // DashScope serves DeepSeek's distills of Qwen, which its explicit cache does not list
      translated('deepseek-r1-distill-qwen-32b', `${DASHSCOPE}/compatible-mode/v1`),
      translated('qwen3-coder-plus', upstream.origin),
    ]) {
      const messages = await sentMessages(target)
      expect([target.model, JSON.stringify(messages).includes('cache_control')]).toEqual([
        target.model,
        false,
      ])
    }
  })
})
