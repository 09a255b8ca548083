import {describe, expect, it} from 'vitest'

import {withPartSignatures} from './part-signatures.js'

const SKIP = ',"thoughtSignature":"skip_thought_signature_validator"'

describe("withPartSignatures: the skip value written into the bytes of a model turn's unsigned first call", () => {
  it("signs each model content's first call only, where it has no signature; every other byte as it came", () => {
    const call = (name: string) => `{ "functionCall" : {"name": "${name}", "args": {"n": 1.0}} }`
    const body =
      '{ "contents": [ {"role": "user", "parts": [{"text": "{\\"functionCall\\": 1}"}]},\n' +
      `  {"role": "model", "parts": [{"text": "plan"}, ${call('a')}, ${call('b')}]},\n` +
      `  {"role": "user", "parts": [${call('not-a-model-turn')}]},\n` +
      `  {"role": "\\u006dodel", "parts": [${call('c')}]},\n` +
      `  {"role": "model", "parts": [{"functionCall": {"name": "d"}, "thoughtSignature": "c2ln"}, ${call('e')}]},\n` +
      `  {"role": "model", "parts": [{"functionCall": {"name": "f"}, "thought_signature": "c2ln"}]} ] }`
    const signed = (name: string) => `{ "functionCall" : {"name": "${name}", "args": {"n": 1.0}}${SKIP} }`
    expect(String(withPartSignatures(Buffer.from(body)))).toBe(
      body
        .replace(call('a'), signed('a'))
        // (an escape in the role is read as a server reads it)
        .replace(call('c'), signed('c')),
    )
  })

  it('undefined when nothing needs it, or the body is not a JSON object', () => {
    for (const body of [
      '{"contents": [{"role": "model", "parts": [{"functionCall": {"name": "a"}, "thoughtSignature": "x"}]}]}',
      '{"contents": [{"role": "model", "parts": [{"text": "hi"}]}]}',
      '{"contents": [{"parts": [{"functionCall": {"name": "a"}}]}]}',
      '[{"contents": []}]',
      '{"contents": [',
    ])
      expect(withPartSignatures(Buffer.from(body)), body).toBeUndefined()
  })
})
