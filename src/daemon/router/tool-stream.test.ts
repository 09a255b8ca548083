/**
 * Z.AI's and BigModel's GLM-4.6 on stream a tool call's arguments only when asked, `"tool_stream":
 * true` beside `"stream": true` (docs.z.ai "Stream Tool Call"); without it a long call's arguments
 * come whole at the end, after a silence that api.z.ai cuts at 30 s (hermes-agent PR #12758). A
 * streamed request with tools to such a model asks, translated (Claude Code's) or passed through
 * (a chat client's, the field added to its bytes); one without tools, not streamed, to another host
 * or to GLM-4.5 does not; a client's own `tool_stream` stands; a relay that refuses the field (the
 * simulator's `strict-fields` words) learns to go without it. The proxy in this process; the
 * vendors' origins are served by a scripted upstream on 127.0.0.1 (the gateway's connection pool
 * for each is pointed there: nothing leaves this machine).
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {strictFieldsRefusal} from '../../sim/upstream/quirks.js'
import {asksToolStream, withToolStream} from './plain-tools.js'
import type {ProxyTarget} from './proxy.js'
import {
  CHAT_ANSWER,
  chatTarget,
  judgedMessagesGateway,
  serveOrigins,
  translatedChatTarget,
} from './proxy-fixture.js'

const ZAI = 'https://api.z.ai'
const BIGMODEL = 'https://open.bigmodel.cn'
const DASHSCOPE = 'https://dashscope-intl.aliyuncs.com'
const VENDORS = new Set([ZAI, BIGMODEL, DASHSCOPE])
/** The model the scripted upstream refuses unknown fields for, as a strict relay in front of Z.AI does. */
const STRICT = 'glm-5.1-relay'

const STREAM =
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"glm","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"},"finish_reason":null}]}\n\n' +
  'data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"glm","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n' +
  'data: [DONE]\n\n'

let targets: ProxyTarget[] = []
const {gateway, upstream, received, start, clear, close, post} = judgedMessagesGateway(
  (body) => (body.model === STRICT ? strictFieldsRefusal(body) : undefined),
  {route: () => ({targets})},
  {stream: STREAM, json: CHAT_ANSWER},
)
// (the vendors' origins served by the scripted upstream)
serveOrigins(gateway, VENDORS, () => upstream.origin)

beforeAll(start)
afterAll(close)

const translated = translatedChatTarget

/** Claude Code's request, streamed and with its Bash tool unless said otherwise. */
const claudeCode = ({stream = true, tools = true} = {}) => ({
  model: 'claude-sonnet-4-5',
  max_tokens: 8192,
  ...(stream ? {stream: true} : {}),
  messages: [{role: 'user', content: 'write the file'}],
  ...(tools
    ? {tools: [{name: 'Bash', input_schema: {type: 'object', properties: {command: {type: 'string'}}}}]}
    : {}),
})

/** The bodies the upstream got for `send()` to `target`, as they came. */
async function sentFor(target: ProxyTarget, send: () => Promise<Response>): Promise<string[]> {
  targets = [target]
  clear()
  const res = await send()
  expect(res.status).toBe(200)
  await res.text()
  return received.map(String)
}

/** What the upstream got of `tool_stream` for Claude Code's `body` to `target`, each try. */
const asked = async (target: ProxyTarget, body: unknown): Promise<unknown[]> =>
  (await sentFor(target, () => post(body))).map((b) => (JSON.parse(b) as {tool_stream?: unknown}).tool_stream)

/** A chat client's body (OpenCode's, on GLM), its bytes as it writes them. */
const chatBody = (
  model: string,
  rest = ',"tools":[{"type":"function","function":{"name":"write","parameters":{}}}]',
) =>
  `{"model":"${model}","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"write \\"tools\\""}]${rest}}`

const postChat = (body: string) => () =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer gw'},
    body,
  })

describe('which models ask', () => {
  it.each([
    ['glm-4.6', true],
    ['glm-4.7-flash', true],
    ['GLM-5.1', true],
    ['glm-5', true],
    ['glm-5-turbo', true],
    ['zai-org/GLM-4.7', true],
    ['z-ai/glm-5.3-flash', true],
    ['glm-6', true],
    ['glm-4.5', false],
    ['glm-4.5-air', false],
    ['glm-4-plus', false],
    ['glm-4.6v', false],
    ['qwen3.6-plus', false],
  ])('%s: %s', (model, expected) => {
    expect(asksToolStream(model)).toBe(expected)
  })
})

describe("Claude Code's streamed request with tools, translated", () => {
  it.each([
    ['GLM-5.1 on Z.AI', 'glm-5.1', `${ZAI}/api/paas/v4`],
    ["GLM-4.7 on Z.AI's Coding Plan", 'glm-4.7', `${ZAI}/api/coding/paas/v4`],
    ['GLM-4.6 on BigModel, its vendor prefix and capitals', 'zai-org/GLM-4.6', `${BIGMODEL}/api/paas/v4`],
  ])("%s: asks to stream the calls' arguments", async (_, model, baseUrl) => {
    expect(await asked(translated('ts', model, baseUrl), claudeCode())).toEqual([true])
  })

  it('not asked without tools, not streamed, off Z.AI, or for GLM-4.5', async () => {
    const cases: Array<[ProxyTarget, unknown]> = [
      [translated('ts', 'glm-5.1', `${ZAI}/api/paas/v4`), claudeCode({tools: false})],
      [translated('ts', 'glm-5.1', `${ZAI}/api/paas/v4`), claudeCode({stream: false})],
      [translated('ts', 'glm-5.1', `${DASHSCOPE}/compatible-mode/v1`), claudeCode()],
      [translated('ts', 'glm-5.1', upstream.origin), claudeCode()],
      [translated('ts', 'glm-4.5', `${ZAI}/api/paas/v4`), claudeCode()],
    ]
    for (const [target, body] of cases)
      expect([target.model, target.provider.baseUrl, await asked(target, body)]).toEqual([
        target.model,
        target.provider.baseUrl,
        [undefined],
      ])
  })
})

describe("a chat client's streamed request with tools, passed through", () => {
  it('the field added as its last member, every other byte as it came', async () => {
    const body = chatBody('glm-5.1')
    const [one] = await sentFor(chatTarget('ts-pass', 'glm-5.1', `${ZAI}/api/paas/v4`), postChat(body))
    expect(one).toBe(`${body.slice(0, -1)},"tool_stream":true}`)
  })

  it('its own tool_stream stands; no tools, an empty list, GLM-4.5 or another host: as it came', async () => {
    const zai = chatTarget('ts-pass', 'glm-5.1', `${ZAI}/api/paas/v4`)
    const cases: Array<[ProxyTarget, string]> = [
      [
        zai,
        chatBody('glm-5.1', ',"tools":[{"type":"function","function":{"name":"write"}}],"tool_stream":false'),
      ],
      [zai, chatBody('glm-5.1', '')],
      [zai, chatBody('glm-5.1', ',"tools":[ ]')],
      [chatTarget('ts-pass', 'glm-4.5', `${ZAI}/api/paas/v4`), chatBody('glm-4.5')],
      [chatTarget('ts-pass', 'glm-5.1', `${DASHSCOPE}/compatible-mode/v1`), chatBody('glm-5.1')],
    ]
    for (const [target, body] of cases) expect(await sentFor(target, postChat(body))).toEqual([body])
  })

  it('withToolStream: no top-level tools (a schema property of that name) adds nothing', () => {
    const nested = Buffer.from('{"model":"glm-5","stream":true,"response_format":{"schema":{"tools":[1]}}}')
    expect(withToolStream(nested)).toBeUndefined()
  })
})

describe('a relay in front of Z.AI that refuses the field', () => {
  it('translated: learned at once, sent again without it and answered; the next request without it', async () => {
    const target = translated('ts-strict', STRICT, `${ZAI}/api/paas/v4`)
    expect(await asked(target, claudeCode())).toEqual([true, undefined])
    const [row] = await gateway.settled(1)
    expect(row).toMatchObject({status: 200})
    expect(row.error).toMatch(/refused tool_stream: sent again without it/)
    expect(await asked(target, claudeCode())).toEqual([undefined])
  })

  it("passed through: the same, the client's bytes sent again as they came", async () => {
    const target = chatTarget('ts-strict-pass', STRICT, `${ZAI}/api/paas/v4`)
    const body = chatBody(STRICT)
    expect(await sentFor(target, postChat(body))).toEqual([`${body.slice(0, -1)},"tool_stream":true}`, body])
    const [row] = await gateway.settled(1)
    expect(row).toMatchObject({status: 200})
    expect(row.error).toMatch(/refused tool_stream: sent again without it/)
    expect(await sentFor(target, postChat(body))).toEqual([body])
  })
})
