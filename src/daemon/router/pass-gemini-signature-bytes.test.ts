/**
 * A Gemini body passed through to a model that learned to want the skip value on a turn's unsigned
 * first call (Gemini 3 given another model's calls: test/pass-gemini3-signatures.test.ts): the
 * bytes the upstream receives are the client's, with only `,"thoughtSignature":"skip_…"` written
 * into each such part (in this process; the upstream a scripted Gemini 3 that refuses the current
 * turn's unsigned first call). A body every call of which is signed goes byte for byte as it came,
 * though a Python or REST client's bytes are not what `JSON.stringify` writes (`caf\u00e9`, `1.0`,
 * a 20-digit integer, a key `"10"` after others, spaces): a parse and a write would change them all.
 * A relay that wraps Google's refusal, as text, in its own message (lbjlaq/Antigravity-Manager
 * #3229) teaches the same rule.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {ProviderConfig} from '../../store/schema.js'
import type {ProxyTarget} from './proxy.js'
import {judgedMessagesGateway} from './proxy-fixture.js'

const GOOGLE =
  'Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:read_file` , position 2. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.'
const ANSWER = JSON.stringify({
  candidates: [{content: {role: 'model', parts: [{text: 'done'}]}, finishReason: 'STOP', index: 0}],
  usageMetadata: {promptTokenCount: 3, candidatesTokenCount: 1, totalTokenCount: 4},
})
const SKIP = ',"thoughtSignature":"skip_thought_signature_validator"'

/** The refusal's body as the upstream of the test writes it: Google's own, or a relay's wrapping it. */
let refusal: 'google' | 'relay' = 'google'

// Gemini 3: the current turn's first call of each model content must be signed
const {gateway, upstream, received, start, clear, close} = judgedMessagesGateway(
  (body) => {
    const contents = (body.contents ?? []) as Array<{role?: string; parts?: Array<Record<string, unknown>>}>
    let from = 0
    contents.forEach((c, i) => {
      if ((c.role ?? 'user') === 'user' && (c.parts ?? []).some((p) => typeof p.text === 'string')) from = i
    })
    const unsigned = contents.some(
      (c, i) =>
        c.role === 'model' &&
        i > from &&
        (c.parts ?? []).find((p) => p.functionCall !== undefined)?.thoughtSignature === undefined,
    )
    if (!unsigned) return undefined
    const google = {error: {code: 400, message: GOOGLE, status: 'INVALID_ARGUMENT'}}
    return {
      status: 400,
      body:
        refusal === 'google'
          ? google
          : {error: {code: 400, message: JSON.stringify(google, null, 2), status: 'INVALID_ARGUMENT'}},
    }
  },
  {route: () => ({targets})},
  {stream: `data: ${ANSWER}\r\n\r\n`, json: ANSWER},
)
let targets: ProxyTarget[] = []
beforeAll(start)
afterAll(close)

const target = (name: string): ProxyTarget => {
  const provider: ProviderConfig = {
    name,
    family: 'gemini',
    baseUrl: upstream.origin,
    credential: {secret: 'upstream-key'},
  }
  return {provider, model: 'gemini-3-pro-preview'}
}

/** Posts `bytes` as they are to the gateway's Gemini entrance; the status, once read. */
async function post(bytes: string, method = 'generateContent'): Promise<number> {
  clear()
  const res = await fetch(`${gateway.url}/v1beta/models/gemini-2.5-pro:${method}`, {
    method: 'POST',
    headers: {'content-type': 'application/json', 'x-goog-api-key': 'gw'},
    body: bytes,
  })
  await res.text()
  return res.status
}

// a Python google-genai / REST client's bytes: spaces after separators, an escape, floats written
// `1.0`, an integer past 2^53, a key that looks like an index after others
const head =
  '{"contents": [{"role": "user", "parts": [{"text": "caf\\u00e9 \\ud83d\\ude00"}]}, ' +
  '{"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"path": "a", "id": 12345678901234567890, "10": 2}}'
const tail =
  '}, {"functionCall": {"name": "grep", "args": {"q": "b"}}}]}, ' +
  '{"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "ok", "n": 1.0}}}, ' +
  '{"functionResponse": {"name": "grep", "response": {"output": "ok"}}}]}], ' +
  '"generationConfig": {"temperature": 1.0, "topP": 0.95}}'
const unsigned = head + tail
const signed = head + ', "thoughtSignature": "c2ln"' + tail

describe('a Gemini body passed through, once the skip value is learned: its bytes', () => {
  it("learned from the first 400; then only the skip value written in, a signed body's bytes as they came", async () => {
    targets = [target('bytes')]
    expect(await post(unsigned)).toBe(200)
    // refused as it came, then again with the value after the first call's last member
    expect(received.map(String)).toEqual([unsigned, head + SKIP + tail])
    const [row] = await gateway.settled(1)
    expect(row.error).toMatch(/^bytes refused a tool call turn without its thought signature/)
    // the next request at once, the same bytes
    expect(await post(unsigned)).toBe(200)
    expect(received.map(String)).toEqual([head + SKIP + tail])
    // every call signed: nothing to change, byte for byte
    expect(await post(signed)).toBe(200)
    expect(received.map(String)).toEqual([signed])
    // countTokens, the request it counts wrapped: signed inside it
    const counted = `{"generateContentRequest": ${unsigned}}`
    expect(await post(counted, 'countTokens')).toBe(200)
    expect(received.map(String)).toEqual([`{"generateContentRequest": ${head}${SKIP}${tail}}`])
  })

  it('a relay that wraps the refusal in its own message: learned the same, sent again signed', async () => {
    targets = [target('relay')]
    refusal = 'relay'
    try {
      expect(await post(unsigned)).toBe(200)
      expect(received.map(String)).toEqual([unsigned, head + SKIP + tail])
      const [row] = await gateway.settled(1)
      expect(row.error).toMatch(/^relay refused a tool call turn without its thought signature/)
    } finally {
      refusal = 'google'
    }
  })
})
