/**
 * Stream chunks read without a parse. The chunks of one stream mostly differ from each other
 * only in one string (the text of a delta): a chunk that was parsed, and meant nothing but that
 * string, is kept as a template split around it. A later chunk that is the template with another
 * string in that place (checked to be one JSON string, so nothing outside it changes meaning)
 * means what the template meant with that string, and is read in a few comparisons instead of a
 * `JSON.parse`. Anything else (another shape, a cut or broken chunk) does not match and is parsed.
 */

import {isAscii, isUtf8} from 'node:buffer'

/**
 * A parsed chunk split around the string of one key and, optionally, around a second string
 * whose value means nothing to the reader (OpenAI's `obfuscation` padding, a different
 * random-length string on every chunk of its streams).
 */
export interface StringTemplate {
  /** The chunk's text up to the string's opening quote (included). */
  before: string
  /**
   * The chunk's text from the string's closing quote (included): to its end, or, with `tail`, to
   * the ignored string's opening quote (included).
   */
  after: string
  /** The chunk's text from the ignored string's closing quote (included), when there is one. */
  tail?: string | undefined
}

/** The inside of a JSON string literal that needs no decoding (no escape, quote or control character). */
// control characters are what this must find (JSON allows none unescaped in a string)
// eslint-disable-next-line no-control-regex
const PLAIN_STRING = /^[^"\\\u0000-\u001f]*$/

/** The index of the quote that closes the JSON string whose contents start at `from`; -1 if none. */
function closingQuote(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) return i
    if (c === 0x5c) i++
  }
  return -1
}

/** The index of the opening quote of the string value of the one `"key"` in `data`; -1 if none. */
function valueQuote(data: string, key: string): number {
  const name = `"${key}"`
  const at = data.indexOf(name)
  if (at === -1 || data.indexOf(name, at + 1) !== -1) return -1
  let open = at + name.length
  while (data[open] === ' ') open++
  if (data[open] !== ':') return -1
  open++
  while (data[open] === ' ') open++
  return data[open] === '"' ? open : -1
}

/**
 * `data` (a chunk that parsed to a JSON object) split around the string value of `key`, when
 * `key` occurs once in the whole text: a quote inside a JSON string is escaped, so `"key"` there
 * can only be a key or a value, and a value is not followed by a colon. The caller has checked
 * that the parsed chunk means nothing but that string. `ignore`: a key whose string value means
 * nothing to the caller (checked by it); when it occurs once, after `key`'s string, its value
 * becomes a second hole, matched as any plain string and dropped (a chunk whose `ignore` comes
 * first has no template).
 */
export function learnTemplate(data: string, key: string, ignore?: string): StringTemplate | undefined {
  const open = valueQuote(data, key)
  if (open === -1) return undefined
  const close = closingQuote(data, open + 1)
  if (close === -1) return undefined
  const before = data.slice(0, open + 1)
  // one shape, `tail` or not (the reads of a template stay monomorphic)
  if (ignore === undefined || !data.includes(`"${ignore}"`))
    return {before, after: data.slice(close), tail: undefined}
  const skip = valueQuote(data, ignore)
  if (skip <= close) return undefined
  const skipClose = closingQuote(data, skip + 1)
  if (skipClose === -1) return undefined
  return {before, after: data.slice(close, skip + 1), tail: data.slice(skipClose)}
}

/**
 * The string a chunk holds in the template's place, decoded; undefined when `data` is not the
 * template with one JSON string there (and, with a `tail`, any plain string in the ignored
 * string's place): then it is parsed as usual.
 */
export function templateString(t: StringTemplate, data: string): string | undefined {
  const {before, after, tail} = t
  let end: number
  // `slice` and `===` rather than startsWith/endsWith: several times faster on V8 for these lengths
  if (tail === undefined) {
    if (
      data.length < before.length + after.length ||
      data.slice(0, before.length) !== before ||
      data.slice(data.length - after.length) !== after
    )
      return undefined
    end = data.length - after.length
  } else {
    const tailAt = data.length - tail.length
    if (
      tailAt < before.length + after.length ||
      data.slice(0, before.length) !== before ||
      data.slice(tailAt) !== tail
    )
      return undefined
    // the ignored string's opening quote: the last quote before the tail when that string holds
    // none (an escaped quote in it is found instead, and then `after`, which ends in `:"`, differs)
    const open = data.lastIndexOf('"', tailAt - 1)
    end = open + 1 - after.length
    if (end < before.length || data.slice(end, open + 1) !== after) return undefined
    if (!PLAIN_STRING.test(data.slice(open + 1, tailAt))) return undefined
  }
  const inner = data.slice(before.length, end)
  if (PLAIN_STRING.test(inner)) return inner
  // escapes: one JSON string ending where the template's did, or not this template
  if (closingQuote(data, before.length) !== end) return undefined
  try {
    return JSON.parse(`"${inner}"`) as string
  } catch {
    return undefined
  }
}

/**
 * How many bytes at the end of `bytes` begin a character that the next chunk completes (0-3): a
 * lead byte whose sequence is longer than what follows it. Anything else (a complete or an
 * invalid sequence) is left to the UTF-8 check.
 */
function cutOff(bytes: Uint8Array): number {
  const n = bytes.length
  for (let back = 1; back <= 3 && back <= n; back++) {
    const byte = bytes[n - back]
    if ((byte & 0xc0) === 0x80) continue
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
    return length > back ? back : 0
  }
  return 0
}

/**
 * The text of a stream's chunks, exactly what one streaming `TextDecoder` gives: an ASCII chunk
 * (nearly every one: JSON escapes what it needs to) is its own text; another is checked to be
 * valid UTF-8 (a character cut off at its end held for the next chunk) and decoded by
 * `toString`, ~40 % cheaper than the streaming decoder for a read of a few KB. From the first
 * invalid byte on, the streaming decoder reads the rest.
 */
export class ChunkText {
  private decoder: InstanceType<typeof TextDecoder> | undefined
  /** The first bytes of a character that the last chunk cut off. */
  private held: Buffer | undefined
  /**
   * No chunk but ASCII ones yet: the streaming decoder this replaces started at the first other
   * chunk, and skipped a byte order mark there.
   */
  private fresh = true

  push(chunk: Uint8Array): string {
    if (this.decoder) return this.decoder.decode(chunk, {stream: true})
    let bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    if (this.held) {
      bytes = Buffer.concat([this.held, bytes])
      this.held = undefined
    }
    if (isAscii(bytes)) return bytes.toString('latin1')
    const cut = cutOff(bytes)
    const whole = cut ? bytes.subarray(0, bytes.length - cut) : bytes
    if (!isUtf8(whole)) {
      // as the one decoder would from here: a byte order mark is skipped only at its start
      this.decoder = new TextDecoder('utf-8', {ignoreBOM: !this.fresh})
      return this.decoder.decode(bytes, {stream: true})
    }
    // a copy: the chunk's memory may be reused once it is handed on
    if (cut) this.held = Buffer.from(bytes.subarray(bytes.length - cut))
    if (this.fresh && whole.length === 0) return ''
    const bom = this.fresh && whole[0] === 0xef && whole[1] === 0xbb && whole[2] === 0xbf
    this.fresh = false
    return (bom ? whole.subarray(3) : whole).toString('utf8')
  }

  /** What the decoder still holds (a character cut off at the end: U+FFFD). */
  end(): string {
    if (this.decoder) return this.decoder.decode()
    const held = this.held
    this.held = undefined
    return held ? new TextDecoder().decode(held) : ''
  }
}
