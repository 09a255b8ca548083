/**
 * Codex's reasoning effort passed through to a Responses server that refuses it (Ollama's `xhigh`:
 * ollama/ollama #17252; gpt-4o-mini's refusal of `reasoning.effort`: openai/codex #36735): learned
 * per provider and model, the request sent again at once, and the model's later requests so from
 * the first try; only that value changed in the client's bytes (or the effort cut out of them),
 * the rest byte for byte as Codex sent it, so the server's prompt cache holds. A scripted upstream
 * judged by the simulator's own `ollama-effort` and `no-effort-model` rules (the quirk from the
 * model's name), behind the proxy.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {ollamaEffortRefusal, selectQuirks, unsupportedResponsesParameter} from '../../sim/upstream/quirks.js'
import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {ProxyGateway, startJudgedUpstream} from './proxy-fixture.js'

const ANSWER = JSON.stringify({
  id: 'resp_1',
  object: 'response',
  created_at: 1,
  status: 'completed',
  model: 'glm-5.2:cloud',
  output: [
    {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      content: [{type: 'output_text', text: 'done', annotations: []}],
    },
  ],
  usage: {input_tokens: 9, output_tokens: 1, total_tokens: 10},
})
const STREAM = [
  {type: 'response.created', response: {id: 'resp_1', status: 'in_progress', output: []}},
  {type: 'response.completed', response: JSON.parse(ANSWER) as unknown},
]
  .map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
  .join('')

const received: Buffer[] = []
let upstream: Upstream
let targets: ProxyTarget[] = []
const gateway = new ProxyGateway({route: () => ({targets})})

beforeAll(async () => {
  upstream = await startJudgedUpstream(
    received,
    (body) => {
      const {quirks} = selectQuirks({}, body.model)
      const ollama = ollamaEffortRefusal((body.reasoning as {effort?: unknown} | undefined)?.effort, quirks)
      if (ollama)
        return {
          status: 400,
          body: {error: {message: ollama, type: 'invalid_request_error', param: null, code: null}},
        }
      const refused = unsupportedResponsesParameter(body, quirks)
      return refused && {status: 400, body: {error: {...refused, type: 'invalid_request_error'}}}
    },
    {stream: STREAM, json: ANSWER},
  )
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

const target = (name: string): ProxyTarget => ({
  provider: {
    name,
    family: 'responses',
    baseUrl: `${upstream.origin}/v1`,
    credential: {secret: 'upstream-key'},
  },
})

const post = (body: string) =>
  fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer client',
      originator: 'codex_exec',
      'user-agent': 'codex_exec/0.146.0',
    },
    body,
  })

/**
 * Codex's body, cut down, as raw text: a number and escapes that `JSON.stringify` would write
 * otherwise (`1.0`, `\u00e9`, `\/`), and the effort's words inside the prompt, so a body written
 * again, or a change outside `reasoning`, would show.
 */
const codexText = (model: string, reasoning: string, stream = false) =>
  `{"model":"${model}","instructions":"You are Codex.","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"set \\"reasoning\\":{\\"effort\\":\\"xhigh\\"} caf\\u00e9 a\\/b"}]}],` +
  `"tool_choice":"auto","reasoning":${reasoning},"store":false,"stream":${stream},"include":["reasoning.encrypted_content"],"temperature":1.0}`

describe("Codex's effort refused by a Responses server, passed through", () => {
  it("Ollama's xhigh: sent again with max, that value alone changed; the next request in one try", async () => {
    targets = [target('ollama')]
    const model = 'glm-5.2:cloud+ollama-effort'
    const body = codexText(model, '{"effort":"xhigh","summary":"auto"}')
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(received.map(String)).toEqual([
      body,
      body.replace('"reasoning":{"effort":"xhigh"', '"reasoning":{"effort":"max"'),
    ])
    const [result] = await gateway.settled(1)
    expect([result.status, result.error]).toEqual([
      200,
      'ollama refused reasoning.effort xhigh (it takes high, medium, low, max, none): sent again with max',
    ])
    expect(result.attempts).toEqual([{provider: 'ollama', status: 200}])
    // a stream, with the effort's value spaced otherwise: one try
    received.length = 0
    const spaced = codexText(model, '{ "summary": "auto", "effort" : "xhigh" }', true)
    const next = await post(spaced)
    expect(await next.text()).toBe(STREAM)
    expect(received.map(String)).toEqual([spaced.replace('"effort" : "xhigh"', '"effort" : "max"')])
  })

  it("gpt-4o-mini's refusal of reasoning.effort: the member cut out, the summary kept; reasoning whole when it is all", async () => {
    targets = [target('openai')]
    const model = 'gpt-4o-mini+no-effort-model'
    const body = codexText(model, '{"effort":"none","summary":"auto"}')
    expect((await post(body)).status).toBe(200)
    expect(received.map(String)).toEqual([
      body,
      body.replace('{"effort":"none","summary":"auto"}', '{"summary":"auto"}'),
    ])
    const [result] = await gateway.settled(1)
    expect(result.error).toBe('openai refused reasoning.effort: sent again without it')
    received.length = 0
    // a body whose reasoning holds only the effort: without reasoning
    const only = codexText(model, '{"effort":"low"}')
    expect((await post(only)).status).toBe(200)
    expect(received.map(String)).toEqual([only.replace('"reasoning":{"effort":"low"},', '')])
  })

  it('a body the gateway cannot splice with certainty (the effort escaped) is written again, the value mapped', async () => {
    targets = [target('ollama-2')]
    const model = 'glm-5.2:cloud+ollama-effort'
    // learned first
    expect((await post(codexText(model, '{"effort":"xhigh"}'))).status).toBe(200)
    received.length = 0
    const escaped = codexText(model, '{"effort":"xhig\\u0068"}')
    expect((await post(escaped)).status).toBe(200)
    expect(received).toHaveLength(1)
    expect(JSON.parse(String(received[0]))).toEqual({...JSON.parse(escaped), reasoning: {effort: 'max'}})
  })
})
