/**
 * Codex Desktop's `automation_update` tool (`"parameters": {"type": null, ...}`, openai/codex
 * #36441) in a body passed through untranslated: DeepSeek refuses every such request
 * ("Invalid schema for function 'codex_app__automation_update': schema must be a JSON Schema of
 * 'type: \"object\"', got 'type: null'.", farion1231/cc-switch #4705, #5300), OpenAI too
 * (Wei-Shaw/sub2api #5364). The gateway sends the tool's schema typed from the first request, so
 * nothing is refused; a body without a null type goes byte for byte as it came. A scripted upstream
 * that refuses `"type": null` in DeepSeek's words, behind the proxy; Codex to a Responses server,
 * a chat client to a chat server, a Messages client to a Messages server.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {
  CHAT_ANSWER,
  chatTarget,
  MESSAGES_ANSWER,
  messagesTarget,
  ProxyGateway,
  RESPONSES_ANSWER,
  startUpstream,
} from './proxy-fixture.js'

const received: Buffer[] = []
let upstream: Upstream
let targets: ProxyTarget[] = []
const gateway = new ProxyGateway({route: () => ({targets})})

/** The first tool whose schema says `"type": null`, by its name (a namespace's tools `ns__tool`), as DeepSeek finds it. */
function nullTyped(body: Record<string, unknown>): string | undefined {
  const tools: Array<[string, unknown]> = []
  const add = (list: unknown, ns = ''): void => {
    for (const t of Array.isArray(list) ? (list as Array<Record<string, unknown>>) : []) {
      if (t.type === 'namespace') add(t.tools, `${String(t.name)}__`)
      const fn = (t.function ?? t) as Record<string, unknown>
      tools.push([`${ns}${String(fn.name)}`, fn.parameters ?? t.input_schema])
    }
  }
  add(body.tools)
  return tools.find(([, schema]) => JSON.stringify(schema ?? {}).includes('"type":null'))?.[0]
}

beforeAll(async () => {
  upstream = await startUpstream((req, res, body) => {
    received.push(body)
    const name = nullTyped(JSON.parse(String(body)) as Record<string, unknown>)
    if (name) {
      res.writeHead(400, {'content-type': 'application/json'})
      res.end(
        JSON.stringify({
          error: {
            message: `Invalid schema for function '${name}': schema must be a JSON Schema of 'type: "object"', got 'type: null'.`,
            type: 'invalid_request_error',
            param: null,
            code: 'invalid_request_error',
          },
        }),
      )
      return
    }
    res.writeHead(200, {'content-type': 'application/json'})
    const url = req.url ?? ''
    res.end(
      url.endsWith('/responses')
        ? RESPONSES_ANSWER
        : url.endsWith('/messages')
          ? MESSAGES_ANSWER
          : CHAT_ANSWER,
    )
  })
  await gateway.listen()
})

afterEach(() => {
  received.length = 0
  gateway.results.length = 0
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

/** DeepSeek's Responses API (on this machine here: Codex's tools kept as they came, as to a remote server). */
const responsesTarget = (): ProxyTarget => ({
  provider: {
    name: 'deepseek',
    family: 'responses',
    baseUrl: `${upstream.origin}/v1`,
    credential: {secret: 'k'},
    plainTools: 'never',
  },
})

const post = (path: string, body: string, headers: Record<string, string> = {}): Promise<Response> =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer gw', ...headers},
    body,
  })

/** Codex Desktop's body as serde writes it, cut down: its `codex_app` namespace once Automations load. */
const codexBody = (automation: string) =>
  `{"model":"gpt-5.6-sol","instructions":"You are Codex.","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Move my daily summary to 9am."}]}],"tools":[{"type":"function","name":"exec_command","description":"Runs a command.","strict":false,"parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"]}},{"type":"namespace","name":"codex_app","description":"Codex app tools.","tools":[{"type":"function","name":"automation_update","description":"Update an automation.","strict":false,"parameters":${automation}}]}],"tool_choice":"auto","parallel_tool_calls":true,"store":false,"stream":false}`

const AUTOMATION =
  '{"type":null,"properties":{"id":{"type":"string"},"model":{"type":null,"description":"The model, or null for the default."},"schedule":{"type":"string"}},"required":["id"]}'
const TYPED =
  '{"type":"object","properties":{"id":{"type":"string"},"model":{"description":"The model, or null for the default."},"schedule":{"type":"string"}},"required":["id"]}'

describe('a tool schema with "type": null in a body passed through', () => {
  it("Codex Desktop's automation_update to DeepSeek's Responses API: the first request goes typed and is answered", async () => {
    targets = [responsesTarget()]
    const answer = await post('/v1/responses', codexBody(AUTOMATION), {originator: 'codex_exec'})
    expect(answer.status).toBe(200)
    expect(await answer.json()).toMatchObject({status: 'completed', output: [{content: [{text: 'done'}]}]})
    expect(received).toHaveLength(1)
    expect(String(received[0])).toBe(codexBody(TYPED))
    expect((await gateway.settled(1))[0].error).toBeNull()
  })

  it('a null type however its writer spelled it (a tab, a line break and an indent, an escaped name) goes typed and is answered', async () => {
    targets = [responsesTarget()]
    const automation = AUTOMATION.replace('"type":null', '"type":\tnull').replace(
      '"type":null',
      '"\\u0074ype" :\n  null',
    )
    expect(JSON.parse(automation)).toEqual(JSON.parse(AUTOMATION))
    const answer = await post('/v1/responses', codexBody(automation), {originator: 'codex_exec'})
    expect(answer.status).toBe(200)
    expect(received).toHaveLength(1)
    expect(String(received[0])).toBe(
      codexBody(automation.replace('\tnull', '\t"object"').replace('"\\u0074ype" :\n  null,', '')),
    )
    expect(nullTyped(JSON.parse(String(received[0])) as Record<string, unknown>)).toBeUndefined()
  })

  it('a chat body to a chat server and a Messages body to a Messages server go as they came (no client of theirs sends one; the search would cost each request)', async () => {
    const chat = (schema: string) =>
      `{"model":"deepseek-v4-pro","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"automation_update","parameters":${schema}}}]}`
    targets = [chatTarget('deepseek-chat', 'deepseek-v4-pro', upstream.origin)]
    // (the scripted server refuses them, as DeepSeek would direct: its words reach the client)
    expect((await post('/v1/chat/completions', chat(AUTOMATION))).status).toBe(400)
    const messages = (schema: string) =>
      `{"model":"deepseek-v4-pro","max_tokens":100,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"automation_update","input_schema":${schema}}]}`
    targets = [messagesTarget('deepseek-anthropic', 'deepseek-v4-pro', upstream.origin)]
    expect((await post('/v1/messages', messages(AUTOMATION))).status).toBe(400)
    expect(received.map(String)).toEqual([chat(AUTOMATION), messages(AUTOMATION)])
  })

  it("a Responses body's other bytes go as they came: its history's spacing, key order, 1.0 and escapes (review76 #1)", async () => {
    targets = [responsesTarget()]
    // (integer-like names after a letter, a float written 1.0, a writer's spacing, an escape: what
    // a parse and a write of the whole body changed)
    const body = (schema: string) =>
      codexBody(schema)
        .replace('"model":', '"model" : ')
        .replace(
          '"stream":false}',
          '"stream":false,"metadata":{"z":1,"10":2,"scale":1.0,"note":"9\\u0061m"}}',
        )
    const answer = await post('/v1/responses', body(AUTOMATION), {originator: 'codex_exec'})
    expect(answer.status).toBe(200)
    expect(received.map(String)).toEqual([body(TYPED)])
  })

  it('a body without a null type goes byte for byte as it came', async () => {
    targets = [responsesTarget()]
    // (a spacing and an escape that a body written again would lose)
    const clean = codexBody(TYPED).replace('"input":', '"input" :').replace('9am', '9\\u0061m')
    expect((await post('/v1/responses', clean, {originator: 'codex_exec'})).status).toBe(200)
    expect(received).toHaveLength(1)
    expect(String(received[0])).toBe(clean)
  })
})
