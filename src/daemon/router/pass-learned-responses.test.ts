/**
 * A Responses body passed through (Codex's) refused by a strict server for a top-level field it
 * does not know (Codex 0.155's `access_programs` on OpenCode Go: "unknown parameter
 * `access_programs`", lidge-jun/opencodex #4853): learned per provider and model, the request sent
 * again at once without it, and the model's later requests without it from the first try; the
 * client's bytes otherwise as they came (the member cut out of them, not the body written again). A
 * refusal of a field the request cannot go without reaches the client as it came. A scripted
 * upstream judged by the simulator's own `strict-responses-fields` rule, behind the proxy. Codex's
 * reasoning effort refused (Ollama's `xhigh`: ollama/ollama #17252; gpt-4o-mini's refusal of
 * `reasoning.effort`: openai/codex #36735) is learned the same way, only that value changed in the
 * client's bytes (or the effort cut out of them): the `ollama-effort` and `no-effort-model` rules,
 * the quirk from the model's name.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import {
  inputItemStatusRefusal,
  ollamaEffortRefusal,
  selectQuirks,
  unknownResponsesParameter,
  unsupportedResponsesParameter,
} from '../../sim/upstream/quirks.js'
import {learnedAdaptations, type ProxyTarget} from './proxy.js'
import type {Refusal, Upstream} from './proxy-fixture.js'
import {ProxyGateway, RESPONSES_ANSWER, RESPONSES_STREAM, startJudgedUpstream} from './proxy-fixture.js'

const received: Buffer[] = []
/** A refusal of every request while set (another server's words). */
let refuseAll: Refusal | undefined
/** A refusal of every request that holds `access_programs` while set. */
let refuseProgram: Refusal | undefined
let upstream: Upstream
let targets: ProxyTarget[] = []
const gateway = new ProxyGateway({route: () => ({targets})})

beforeAll(async () => {
  const strict = new Set(['strict-responses-fields' as const])
  upstream = await startJudgedUpstream(
    received,
    (body) => {
      if (refuseAll) return refuseAll
      if (refuseProgram && body.access_programs !== undefined) return refuseProgram
      const refused = unknownResponsesParameter(body, strict)
      if (refused) return {status: 400, body: {error: refused}}
      // the effort's quirks, by the model's name (`glm-5.2:cloud+ollama-effort`)
      const {quirks} = selectQuirks({}, body.model)
      const ollama = ollamaEffortRefusal((body.reasoning as {effort?: unknown} | undefined)?.effort, quirks)
      if (ollama)
        return {
          status: 400,
          body: {error: {message: ollama, type: 'invalid_request_error', param: null, code: null}},
        }
      const effort = unsupportedResponsesParameter(body, quirks)
      if (effort) return {status: 400, body: {error: {...effort, type: 'invalid_request_error'}}}
      // (`gpt-5.5+strict-input-items`: ChatGPT's Codex backend's refusal of an input item's status)
      const status = inputItemStatusRefusal(body, quirks)
      return status && {status: 400, body: {error: status}}
    },
    {stream: RESPONSES_STREAM, json: RESPONSES_ANSWER},
  )
  await gateway.listen()
})

afterEach(() => {
  received.length = 0
  refuseAll = undefined
  refuseProgram = undefined
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

const CODEX_HEADERS = {originator: 'codex_exec', 'user-agent': 'codex_exec/0.155.0'}

const post = (body: string) =>
  fetch(`${gateway.url}/v1/responses`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer client', ...CODEX_HEADERS},
    body,
  })

/**
 * Codex 0.155's body signed in with ChatGPT, cut down, as raw text: a number and escapes that
 * `JSON.stringify` would write otherwise (`1.0`, `\u00e9`, `\/`), so a body written again would
 * show.
 */
const codexText = (model: string, text: string, stream = false) =>
  `{"model":"${model}","instructions":"You are Codex.","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"${text} caf\\u00e9 a\\/b"}]}],` +
  `"tools":[{"type":"function","name":"exec","parameters":{"type":"object","properties":{}}}],"tool_choice":"auto","parallel_tool_calls":true,` +
  `"reasoning":{"effort":"medium","summary":"auto"},"store":false,"stream":${stream},"include":["reasoning.encrypted_content"],` +
  `"prompt_cache_key":"s-1","access_programs":{"cyber":"standard"},"temperature":1.0}`

const ACCESS = ',"access_programs":{"cyber":"standard"}'

/** OpenAI's 400 for a parameter the organization is not entitled to, its whole body. */
const notEnabled = (field: string, param: string): Refusal => ({
  status: 400,
  body: {
    error: {
      message: `The ${field} parameter is not enabled for this organization.`,
      type: 'invalid_request_error',
      param,
      code: 'unsupported_parameter',
    },
  },
})
const NOTE = 'opencode-go refused access_programs (a field it does not know): sent again without it'

describe("Codex's access_programs refused by a strict Responses server", () => {
  it('learned at once: sent again without it, the bytes otherwise as they came, the client gets 200', async () => {
    targets = [target('opencode-go')]
    const body = codexText('muse-spark-1.3', 'List the files.')
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(((await res.json()) as {id: string}).id).toBe('resp_1')
    expect(received).toHaveLength(2)
    // the first try as Codex sent it; the second the same bytes without the member
    expect(String(received[0])).toBe(body)
    expect(String(received[1])).toBe(body.replace(ACCESS, ''))
    const [result] = await gateway.settled(1)
    expect([result.status, result.error]).toEqual([200, NOTE])
    expect(result.attempts).toEqual([{provider: 'opencode-go', status: 200}])
    expect(learnedAdaptations().find((a) => a.provider === 'opencode-go')).toMatchObject({
      model: 'muse-spark-1.3',
      rules: ['sent without access_programs'],
    })
  })

  it("the model's later requests go without it from the first try (a stream too); another model learns its own", async () => {
    targets = [target('opencode-go')]
    const body = codexText('muse-spark-1.3', 'Read a.ts.', true)
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(await res.text()).toBe(RESPONSES_STREAM)
    expect(received.map(String)).toEqual([body.replace(ACCESS, '')])
    const [result] = await gateway.settled(1)
    expect(result.error).toBeNull()
    // another model of the provider is refused once, as the first was
    const other = codexText('muse-spark-1.2', 'hi')
    expect((await post(other)).status).toBe(200)
    expect(received.map(String).slice(1)).toEqual([other, other.replace(ACCESS, '')])
  })

  it('a refusal of a field the request cannot go without reaches the client as it came, after one try, nothing learned', async () => {
    targets = [target('strict-input')]
    for (const field of ['input', 'model', 'tools', 'instructions']) {
      refuseAll = {
        status: 400,
        body: {error: {message: `unknown parameter \`${field}\``, type: 'invalid_request_error'}},
      }
      received.length = 0
      const res = await post(codexText('m', 'hi'))
      expect([field, res.status]).toEqual([field, 400])
      expect(await res.json()).toEqual(refuseAll.body)
      expect(received).toHaveLength(1)
    }
    expect(learnedAdaptations().find((a) => a.provider === 'strict-input')).toBeUndefined()
  })

  it("OpenAI's refusal of the program for another organization's key (vm0-ai/vm0 #35465): sent again without it, the next turn in one try", async () => {
    targets = [target('openai-org')]
    refuseProgram = notEnabled('access_programs', 'access_programs.cyber')
    const body = codexText('gpt-5.5', 'List the files.')
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(((await res.json()) as {id: string}).id).toBe('resp_1')
    expect(received.map(String)).toEqual([body, body.replace(ACCESS, '')])
    const [result] = await gateway.settled(1)
    expect([result.status, result.error]).toEqual([
      200,
      'openai-org refused access_programs (not enabled for this organization): sent again without it',
    ])
    expect(learnedAdaptations().find((a) => a.provider === 'openai-org')).toMatchObject({
      model: 'gpt-5.5',
      rules: ['sent without access_programs'],
    })
    // the next turn (a stream) in one try, without it
    received.length = 0
    const next = codexText('gpt-5.5', 'Read a.ts.', true)
    const again = await post(next)
    expect(again.status).toBe(200)
    expect(await again.text()).toBe(RESPONSES_STREAM)
    expect(received.map(String)).toEqual([next.replace(ACCESS, '')])
  })

  it("the same words of store (never seen on the wire): the client's 400 after one try, store false kept", async () => {
    targets = [target('openai-store')]
    refuseAll = notEnabled('store', 'store')
    const body = codexText('gpt-5.5', 'List the files.')
    expect(body).toContain('"store":false')
    const res = await post(body)
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual(refuseAll.body)
    expect(received.map(String)).toEqual([body])
    expect(learnedAdaptations().find((a) => a.provider === 'openai-store')).toBeUndefined()
  })

  it('fields it refuses one a try are each dropped in the same request, beyond the cap of three other rules', async () => {
    targets = [target('strict-many')]
    // Codex's body with three more fields the server does not know, refused one at a time
    const body = codexText('m', 'hi').replace(/\}$/, ',"client_metadata":{"a":"b"},"x_one":1,"x_two":2}')
    const res = await post(body)
    // access_programs, client_metadata, x_one, x_two learned: each retry cut a field it was sent
    // with (adaptations.ts `onlyMoreCuts`), none counted against MAX_ADAPTATIONS_A_REQUEST
    expect(res.status).toBe(200)
    expect(received).toHaveLength(5)
    const without = body.replace(ACCESS, '').replace(',"client_metadata":{"a":"b"},"x_one":1,"x_two":2', '')
    expect(String(received[4])).toBe(without)
    // the next request goes in one try
    received.length = 0
    expect((await post(body)).status).toBe(200)
    expect(received.map(String)).toEqual([without])
  })
})

/**
 * Codex's body, cut down, as raw text: a number and escapes that `JSON.stringify` would write
 * otherwise (`1.0`, `\u00e9`, `\/`), and the effort's words inside the prompt, so a body written
 * again, or a change outside `reasoning`, would show.
 */
const effortText = (model: string, reasoning: string, stream = false) =>
  `{"model":"${model}","instructions":"You are Codex.","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"set \\"reasoning\\":{\\"effort\\":\\"xhigh\\"} caf\\u00e9 a\\/b"}]}],` +
  `"tool_choice":"auto","reasoning":${reasoning},"store":false,"stream":${stream},"include":["reasoning.encrypted_content"],"temperature":1.0}`

describe("Codex's effort refused by a Responses server, passed through", () => {
  it("Ollama's xhigh: sent again with max, that value alone changed; the next request in one try", async () => {
    targets = [target('ollama')]
    const model = 'glm-5.2:cloud+ollama-effort'
    const body = effortText(model, '{"effort":"xhigh","summary":"auto"}')
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
    const spaced = effortText(model, '{ "summary": "auto", "effort" : "xhigh" }', true)
    const next = await post(spaced)
    expect(await next.text()).toBe(RESPONSES_STREAM)
    expect(received.map(String)).toEqual([spaced.replace('"effort" : "xhigh"', '"effort" : "max"')])
  })

  it("gpt-4o-mini's refusal of reasoning.effort: the member cut out, the summary kept; reasoning whole when it is all", async () => {
    targets = [target('openai')]
    const model = 'gpt-4o-mini+no-effort-model'
    const body = effortText(model, '{"effort":"none","summary":"auto"}')
    expect((await post(body)).status).toBe(200)
    expect(received.map(String)).toEqual([
      body,
      body.replace('{"effort":"none","summary":"auto"}', '{"summary":"auto"}'),
    ])
    const [result] = await gateway.settled(1)
    expect(result.error).toBe('openai refused reasoning.effort: sent again without it')
    received.length = 0
    // a body whose reasoning holds only the effort: without reasoning
    const only = effortText(model, '{"effort":"low"}')
    expect((await post(only)).status).toBe(200)
    expect(received.map(String)).toEqual([only.replace('"reasoning":{"effort":"low"},', '')])
  })

  it('a body the gateway cannot splice with certainty (the effort escaped) is written again, the value mapped', async () => {
    targets = [target('ollama-2')]
    const model = 'glm-5.2:cloud+ollama-effort'
    // learned first
    expect((await post(effortText(model, '{"effort":"xhigh"}'))).status).toBe(200)
    received.length = 0
    const escaped = effortText(model, '{"effort":"xhig\\u0068"}')
    expect((await post(escaped)).status).toBe(200)
    expect(received).toHaveLength(1)
    expect(JSON.parse(String(received[0]))).toEqual({...JSON.parse(escaped), reasoning: {effort: 'max'}})
  })
})

/**
 * The OpenAI SDK's continuation as raw text (zyycn/codex-proxy-rs #194): the answer's output items
 * sent back with their `status`, which ChatGPT's Codex backend refuses ("Unknown parameter:
 * 'input[1].status'."), a web search's among them, whose schema requires it; escapes and a number
 * `JSON.stringify` would write otherwise, and the word `"status"` inside a text, so a body written
 * again, or a cut outside the items, would show.
 */
const SEARCH =
  '{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"q"}},'
const continuation = (model: string, stream = false) =>
  `{"model":"${model}","input":[{"type":"message","role":"user","content":"say \\"status\\": caf\\u00e9"},` +
  `{"type":"reasoning","id":"rs_1","summary":[],"status":"completed"},${SEARCH}` +
  `{"type":"function_call","id":"fc_1","call_id":"c1","name":"exec","arguments":"{}", "status" : "completed"},` +
  `{"type":"function_call_output","call_id":"c1","output":"ok"}],"stream":${stream},"temperature":1.0}`
const withoutReasoningStatus = (text: string) => text.replace(',"status":"completed"}', '}')
const withoutStatus = (text: string) => withoutReasoningStatus(text).replace(', "status" : "completed"}', '}')

describe("an input item's status refused by ChatGPT's Codex backend", () => {
  it("learned at once by the item's type: each type's items sent again without it, a web search's kept, the bytes otherwise as they came; the next turn in one try", async () => {
    targets = [target('codex-backend')]
    const model = 'gpt-5.5+strict-input-items'
    const body = continuation(model)
    const res = await post(body)
    expect(res.status).toBe(200)
    expect(received.map(String)).toEqual([body, withoutReasoningStatus(body), withoutStatus(body)])
    // (the web search's status went every time: its type requires it)
    for (const sent of received) expect(String(sent)).toContain(SEARCH)
    const [result] = await gateway.settled(1)
    expect([result.status, result.error]).toEqual([
      200,
      'codex-backend refused status on its reasoning input items: sent again without it; codex-backend refused status on its function_call input items: sent again without it',
    ])
    expect(learnedAdaptations().find((a) => a.provider === 'codex-backend')?.rules).toEqual([
      'reasoning input items sent without status (refused)',
      'function_call input items sent without status (refused)',
    ])
    // the next turn (a stream): one try, without it
    received.length = 0
    const next = continuation(model, true)
    expect(await (await post(next)).text()).toBe(RESPONSES_STREAM)
    expect(received.map(String)).toEqual([withoutStatus(next)])
  })
})
