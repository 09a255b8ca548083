/**
 * Gemini's refusal of tool-schema keywords on a chat request passed through untranslated (a chat
 * client, qwen-code or opencode, on Google's OpenAI-compatible endpoint or a relay to Gemini):
 * what the proxy sends upstream, byte for byte, before and after it learned them. Scripted
 * upstreams behind the proxy (the end-to-end run through the daemon and the simulator is
 * test/translation-gemini-fields.test.ts).
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyTarget} from './proxy.js'
import {learnedAdaptations} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {CHAT_ANSWER, chatTarget, ProxyGateway, startUpstream} from './proxy-fixture.js'

/** What each upstream received, raw. */
const received: Buffer[] = []
/** The refusal lines the next answers carry (empty: the upstream answers). */
let refusal: string[] = []
let upstream: Upstream
let targets: ProxyTarget[] = []
const gateway = new ProxyGateway({route: () => ({targets})})

const target = (name: string, model: string): ProxyTarget => chatTarget(name, model, upstream.origin)

beforeAll(async () => {
  upstream = await startUpstream((_req, res, body) => {
    received.push(body)
    const text = String(body)
    const lines = refusal.filter((line) => text.includes(`"${/"(.+?)"/.exec(line)![1]}"`))
    if (lines.length > 0) {
      // Google's OpenAI-compatible endpoint: its error bodies in a list
      const message = lines.join('\n')
      res.writeHead(400, {'content-type': 'application/json'})
      res.end(JSON.stringify([{error: {code: 400, message, status: 'INVALID_ARGUMENT'}}]))
      return
    }
    res.writeHead(200, {'content-type': 'application/json'})
    res.end(CHAT_ANSWER)
  })
  await gateway.listen()
})

afterEach(() => {
  received.length = 0
  refusal = []
  gateway.results.length = 0
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

const line = (key: string, place = 'tools[0].function_declarations[0].parameters'): string =>
  `Invalid JSON payload received. Unknown name "${key}" at '${place}': Cannot find field.`

/** A body as a client wrote it for `model`: its own spacing and key order, which a pass-through keeps. */
const bodyOf = (model: string): Buffer =>
  Buffer.from(
    `{ "model": "${model}",\n  "messages": [{"role": "user", "content": "hi"}],\n  "tools": [{"type": "function", "function": {"name": "read", "parameters": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}}, "additionalProperties": false}}}] }`,
  )

const post = (body: Buffer): Promise<Response> =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer gw'},
    body,
  })

describe('a chat request passed through to a chat upstream', () => {
  it('learns the keywords Gemini refused and sends the tools without them, once and from then on', async () => {
    targets = [target('gem', 'gemini-2.5-flash')]
    refusal = [line('$schema'), line('additionalProperties'), line('exclusiveMinimum')]
    const BODY = bodyOf('gemini-2.5-flash')
    const first = await post(BODY)
    expect(first.status).toBe(200)
    expect(await first.json()).toMatchObject({choices: [{message: {content: 'done'}}]})
    expect(received).toHaveLength(2)
    expect(received[0].equals(BODY)).toBe(true)
    const retried = JSON.parse(String(received[1]))
    expect(retried.tools[0].function.parameters).toEqual({
      type: 'object',
      properties: {n: {type: 'integer', minimum: 1}},
    })
    expect((await gateway.settled(1))[0].error).toBe(
      'gem refused the tool-schema keywords $schema, additionalProperties, exclusiveMinimum: sent again without them',
    )
    expect(learnedAdaptations().find((a) => a.provider === 'gem')?.rules).toEqual([
      "tool schemas sent without $schema, additionalProperties, exclusiveMinimum (Gemini's schema subset)",
    ])

    const second = await post(BODY)
    expect(second.status).toBe(200)
    expect(received).toHaveLength(3)
    expect(received[2].equals(received[1])).toBe(true)
    expect((await gateway.settled(2))[1].error).toBeNull()
  })

  it('sends a request to an upstream nothing was learned of byte for byte as it came', async () => {
    // (another upstream model learned something in the test above, or learns it here)
    targets = [target('gem', 'gemini-2.5-pro')]
    refusal = [line('$schema')]
    expect((await post(bodyOf('gemini-2.5-pro'))).status).toBe(200)
    expect(learnedAdaptations().some((a) => a.model === 'gemini-2.5-pro')).toBe(true)
    received.length = 0
    refusal = []
    const models = ['gemini-2.5-pro', 'gemini-2.5-flash-lite']
    for (const model of models) {
      // the model learned of, at another provider; another model of the provider that learned
      targets = [target(model === models[0] ? 'plain' : 'gem', model)]
      expect((await post(bodyOf(model))).status).toBe(200)
    }
    expect(received).toHaveLength(2)
    received.forEach((sent, i) => expect(sent.equals(bodyOf(models[i]))).toBe(true))
  })

  it("leaves any other refusal the client's to see, as it came: a name outside the tools' schemas, a request without tools", async () => {
    targets = [target('gem', 'gemini-3-pro')]
    refusal = [line('$schema'), line('store', 'generation_config')]
    const body = Buffer.from(
      String(bodyOf('gemini-3-pro')).replace('"messages"', '"store": true, "messages"'),
    )
    const refused = await post(body)
    expect(refused.status).toBe(400)
    // (a list is no chat error: the gateway's shape holds the upstream's words, as before)
    expect(((await refused.json()) as {error: {message: string}}).error.message).toMatch(
      /^gem: upstream answered 400: \[\{"error":\{"code":400,"message":"Invalid JSON payload received\. Unknown name/,
    )
    expect(received).toHaveLength(1)
    expect(learnedAdaptations().some((a) => a.model === 'gemini-3-pro')).toBe(false)

    received.length = 0
    refusal = [line('tools', 'generation_config')]
    const noTools = Buffer.from('{"model":"m","messages":[{"role":"user","content":"hi"}],"x":"tools"}')
    expect((await post(noTools)).status).toBe(400)
    expect(received).toHaveLength(1)
    expect(learnedAdaptations().some((a) => a.model === 'gemini-3-pro')).toBe(false)
  })
})
