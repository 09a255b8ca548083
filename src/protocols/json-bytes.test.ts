import {describe, expect, it} from 'vitest'

import {parseJsonBytes, utf8Bytes, utf8Text} from './json-bytes.js'

/** A body of `n` characters or more with `extra` spliced into its strings now and then. */
function body(n: number, extra: string): string {
  const texts: string[] = []
  let size = 0
  for (let i = 0; size < n; i++) {
    const text = `line ${i}: the quick brown fox ${i % 7 === 0 ? extra : ''} jumps\n\t"over" \\ it`
    texts.push(text)
    size += text.length + 40
  }
  return JSON.stringify({model: 'm', messages: texts.map((content) => ({role: 'user', content}))})
}

describe('JSON bodies between bytes and strings', () => {
  const samples: Array<[string, string]> = [
    ['ASCII', body(40_000, '')],
    ['Latin-1 accents', body(40_000, 'café naïve größe')],
    ['two-byte text', body(40_000, '“quoted” — 東京 ✓ → …')],
    ['astral characters', body(40_000, '🙂 𝄞 emoji 👩‍💻')],
    ['a byte order mark first', '\ufeff' + body(10_000, 'é')],
    ['small', '{"a":"é — 🙂"}'],
    ['empty', ''],
  ]

  it.each(samples)(
    'decodes %s exactly as toString does, and encodes it back as Buffer.from does',
    (_, text) => {
      const bytes = Buffer.from(text)
      expect(utf8Text(bytes)).toBe(bytes.toString('utf8'))
      expect(utf8Bytes(text).equals(Buffer.from(text))).toBe(true)
      if (text && !text.startsWith('\ufeff')) expect(parseJsonBytes(bytes)).toEqual(JSON.parse(text))
    },
  )

  it('decodes invalid UTF-8 with the replacement character, as toString does', () => {
    const good = Buffer.from(body(10_000, 'é'))
    const bad = Buffer.concat([
      good.subarray(0, 5000),
      Buffer.from([0xc3, 0x28, 0xed, 0xa0, 0x80, 0xf0, 0x9f]),
      good.subarray(5000),
    ])
    expect(utf8Text(bad)).toBe(bad.toString('utf8'))
    expect(utf8Text(bad)).toContain('\ufffd')
  })

  it('encodes a lone surrogate as U+FFFD, as Buffer.from does', () => {
    const text = 'x'.repeat(5000) + '\ud800' + 'é'.repeat(3000) + '\udc00'
    expect(utf8Bytes(text).equals(Buffer.from(text))).toBe(true)
  })

  it('gives each call bytes of its own (the scratch buffer is not shared)', () => {
    const a = utf8Bytes(body(20_000, 'é'))
    const copy = Buffer.from(a)
    const b = utf8Bytes(body(30_000, '東京'))
    expect(a.equals(copy)).toBe(true)
    expect(b.toString('utf8')).toBe(body(30_000, '東京'))
    // a body bigger than the scratch buffer kept between calls
    const big = body(500_000, '— ✓')
    expect(utf8Bytes(big).equals(Buffer.from(big))).toBe(true)
  })

  it('throws SyntaxError for a body that is not JSON', () => {
    expect(() => parseJsonBytes(Buffer.from('{"a":' + ' '.repeat(5000)))).toThrow(SyntaxError)
  })
})
