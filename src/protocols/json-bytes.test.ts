import {isAscii} from 'node:buffer'
import {describe, expect, it} from 'vitest'

import {parseJsonBytes, utf8Bytes, utf8Text} from './json-bytes.js'
import {ChunkText} from './sse-template.js'

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

describe("a stream's chunk text", () => {
  /** What the one streaming TextDecoder the chunk text replaces made of these chunks. */
  function reference(chunks: Buffer[]): string {
    let decoder: InstanceType<typeof TextDecoder> | undefined
    let out = ''
    for (const c of chunks)
      if (!decoder && isAscii(c)) out += c.toString('latin1')
      else out += (decoder ??= new TextDecoder()).decode(c, {stream: true})
    return out + (decoder?.decode() ?? '')
  }
  function chunked(chunks: Buffer[]): string {
    const text = new ChunkText()
    let out = ''
    for (const c of chunks) out += text.push(c)
    return out + text.end()
  }
  /** `bytes` cut at every position in `cuts`. */
  const cut = (bytes: Buffer, cuts: number[]): Buffer[] =>
    [0, ...cuts, bytes.length].slice(1).map((end, i, ends) => bytes.subarray(i ? ends[i - 1] : 0, end))

  const text = 'data: {"content":"caf\u00e9 \u2014 \u6771\u4eac \u{1f600}!"}\n\n'.repeat(3)
  const bytes = Buffer.from(text)

  it('gives the text of valid UTF-8 wherever the chunks cut its characters', () => {
    for (let a = 1; a < bytes.length - 1; a++)
      for (const b of [a + 1, a + 2, a + 3, bytes.length - 1]) {
        if (b >= bytes.length) continue
        const chunks = cut(bytes, [a, b])
        expect(chunked(chunks)).toBe(text)
      }
  })

  it('reads invalid bytes, a byte order mark and a character cut off at the end as the streaming decoder did', () => {
    const bad = Buffer.concat([
      Buffer.from('ok "\u00e9" '),
      Buffer.from([0xc3, 0x28, 0xff, 0xe2, 0x82]),
      bytes,
    ])
    const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes])
    const ascii = Buffer.from('data: {"a":1}\n\n')
    const laterBom = Buffer.concat([ascii, Buffer.from([0xef, 0xbb, 0xbf]), bytes])
    const cutAtEnd = Buffer.concat([bytes, Buffer.from([0xf0, 0x9f, 0x98])])
    for (const sample of [bad, bom, laterBom, cutAtEnd])
      for (let a = 1; a < 40; a++) {
        const chunks = cut(sample, [a, a + 7, sample.length - 2])
        expect(chunked(chunks)).toBe(reference(chunks))
      }
    expect(chunked([cutAtEnd])).toBe(text + '\ufffd')
    expect(chunked([bom])).toBe(text)
    expect(chunked(cut(laterBom, [ascii.length]))).toBe('data: {"a":1}\n\n' + text)
  })
})
