import fc from 'fast-check'
import {describe, expect, it} from 'vitest'

import {SecretRedactor} from './redact.js'

const SECRET = 'sk-live-0123456789abcdefghij'

function run(chunks: string[]): {out: string; parts: string[]} {
  const r = new SecretRedactor(SECRET)
  const parts = chunks.map((c) => r.push(Buffer.from(c)).toString())
  parts.push(r.flush().toString())
  return {out: parts.join(''), parts}
}

describe('SecretRedactor', () => {
  it('masks the secret with a mask of its length, also when split across chunks', () => {
    const body = `{"echo":"${SECRET}","again":"${SECRET}"}`
    const expected = body.split(SECRET).join('[redacted]' + '*'.repeat(SECRET.length - 10))
    expect(run([body]).out).toBe(expected)
    for (let cut = 1; cut < body.length; cut++)
      expect(run([body.slice(0, cut), body.slice(cut)]).out).toBe(expected)
    expect(Buffer.byteLength(expected)).toBe(Buffer.byteLength(body))
  })

  it('holds nothing back from an ordinary SSE stream', () => {
    const events = ['data: {"a":1}\n\n', 'data: {"b":"s"}\n\n', 'data: [DONE]\n\n']
    expect(run(events).parts.slice(0, 3)).toEqual(events)
  })

  it('holds back only a tail that may start the secret, and lets it go when it does not', () => {
    const {parts} = run(['data: "sk-li', 've!"\n\n'])
    expect(parts).toEqual(['data: "', 'sk-live!"\n\n', ''])
  })

  it('never lets the secret through, however the bytes are cut', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.array(fc.nat(), {maxLength: 8}), (a, b, cuts) => {
        const body = a + SECRET + b
        const points = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((x, y) => x - y)
        const chunks: string[] = []
        let last = 0
        for (const p of points) {
          chunks.push(body.slice(last, p))
          last = p
        }
        chunks.push(body.slice(last))
        const {out} = run(chunks)
        expect(out).not.toContain(SECRET)
        expect(Buffer.byteLength(out)).toBe(Buffer.byteLength(body))
      }),
    )
  })
})
