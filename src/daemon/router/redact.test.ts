import {describe, expect, it} from 'vitest'

import {KeyRedactor, keyRedactor} from './redact.js'

const KEY = 'sk-upstream-secret-0123456789'

function run(chunks: string[], key = KEY): string {
  const r = new KeyRedactor(key)
  const out: Buffer[] = chunks.map((c) => r.push(Buffer.from(c)))
  out.push(r.flush())
  return Buffer.concat(out).toString()
}

describe('KeyRedactor', () => {
  it('masks the key with a mask of the same length, in one chunk and repeated', () => {
    const text = `{"echo":"${KEY}","again":"${KEY}"}`
    const masked = run([text])
    expect(masked).not.toContain(KEY)
    expect(masked).toContain('[redacted]*******************')
    expect(Buffer.byteLength(masked)).toBe(Buffer.byteLength(text))
  })

  it('masks a key split across chunks at every position, and across three chunks', () => {
    const text = `data: {"delta":"your key is ${KEY} ok"}\n\n`
    for (let cut = 1; cut < text.length; cut++) {
      const masked = run([text.slice(0, cut), text.slice(cut)])
      expect(masked, `cut at ${cut}`).not.toContain(KEY)
      expect(masked.length).toBe(text.length)
    }
    const start = text.indexOf(KEY)
    expect(
      run([text.slice(0, start + 3), text.slice(start + 3, start + 9), text.slice(start + 9)]),
    ).not.toContain(KEY)
  })

  it('passes other bytes unchanged, holding back nothing on an ordinary chunk end', () => {
    const r = new KeyRedactor(KEY)
    const chunk = Buffer.from('data: {"choices":[{"delta":{"content":"sk"}}]}\n\n')
    expect(r.push(chunk)).toBe(chunk) // the very buffer: no copy
    // a tail that could start the key is held until the next chunk, then released as it was
    expect(r.push(Buffer.from('abc sk-up')).toString()).toBe('abc ')
    expect(r.push(Buffer.from('per')).toString()).toBe('sk-upper')
    expect(r.push(Buffer.from('x sk')).toString()).toBe('x ')
    expect(r.flush().toString()).toBe('sk')
  })

  it('never writes into the chunk it was given', () => {
    const chunk = Buffer.from(`a${KEY}b`)
    const copy = Buffer.from(chunk)
    new KeyRedactor(KEY).push(chunk)
    expect(chunk.equals(copy)).toBe(true)
  })

  it('masks a short key with stars only; the relay masks no credential under 8 characters', () => {
    expect(run(['x abc y', 'ab', 'c'], 'abc')).toBe('x *** y***')
    expect(keyRedactor('k')).toBeUndefined() // would mask every "k" of the answer
    expect(keyRedactor(undefined)).toBeUndefined()
    expect(keyRedactor('12345678')).toBeInstanceOf(KeyRedactor)
  })
})
