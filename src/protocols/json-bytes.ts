/**
 * JSON bodies between bytes and strings, on the translated route's request thread. A body of an
 * agent (60-300 KB a turn) with a single non-ASCII character in it (a curly quote, an em dash, an
 * emoji) is decoded by `buffer.toString('utf8')` and encoded by `Buffer.from(string)` character
 * by character on Node 20, at ~4 ns a byte: more than `JSON.parse` or `JSON.stringify` of the same
 * body. These give the same strings and bytes by faster paths (ICU's bulk UTF-8 to UTF-16 for
 * valid UTF-8, `TextEncoder.encodeInto` into a reused scratch buffer); small bodies take the plain
 * ones (docs/TRANSLATION.md, "One design, not twelve translators").
 */
import {isAscii, isUtf8, transcode} from 'node:buffer'

/** Below this many bytes (or characters) the plain paths are as fast: no check, no scratch. */
const SMALL = 2048
/** The largest scratch kept between calls (bytes); a bigger body gets a buffer of its own. */
const MAX_SCRATCH = 1024 * 1024

/**
 * The text of UTF-8 `bytes`, exactly `Buffer.from(bytes).toString('utf8')` (invalid sequences
 * replaced by U+FFFD, a byte order mark kept).
 */
export function utf8Text(bytes: Buffer): string {
  if (bytes.length < SMALL) return bytes.toString('utf8')
  if (isAscii(bytes)) return bytes.toString('latin1')
  // valid UTF-8 only: the replacement of invalid sequences is toString's own
  if (!isUtf8(bytes)) return bytes.toString('utf8')
  let utf16: Buffer
  try {
    utf16 = transcode(bytes, 'utf8', 'ucs2')
  } catch {
    // not expected for valid UTF-8 (ICU out of memory?): the plain decode, never another error
    return bytes.toString('utf8')
  }
  return utf16.toString('ucs2')
}

/** `JSON.parse` of a UTF-8 body (throws SyntaxError as `JSON.parse` does). */
export function parseJsonBytes(bytes: Buffer): unknown {
  return JSON.parse(utf8Text(bytes))
}

const encoder = new TextEncoder()
let scratch: Buffer | undefined

/** The UTF-8 bytes of `text`, exactly `Buffer.from(text)` (a lone surrogate as U+FFFD). */
export function utf8Bytes(text: string): Buffer {
  if (text.length < SMALL) return Buffer.from(text)
  // at most 3 bytes a UTF-16 code unit (a surrogate pair: 4 bytes for 2 units)
  const most = text.length * 3
  let into: Buffer
  if (most <= MAX_SCRATCH) {
    if (!scratch || scratch.length < most) scratch = Buffer.allocUnsafeSlow(Math.min(MAX_SCRATCH, most * 2))
    into = scratch
  } else into = Buffer.allocUnsafeSlow(most)
  const {written} = encoder.encodeInto(text, into)
  const out = Buffer.allocUnsafe(written)
  into.copy(out, 0, 0, written)
  return out
}

/** Whether `text` is one complete JSON value (a streamed tool call's arguments are done). */
export function isCompleteJson(text: string): boolean {
  if (text.trim() === '') return false
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** Whether `args` ends with `}` (white space after it aside): a cheap test before a parse. */
export function endsWithBrace(args: string): boolean {
  let i = args.length - 1
  while (i >= 0 && args.charCodeAt(i) <= 32) i--
  return i >= 0 && args.charCodeAt(i) === 125
}
