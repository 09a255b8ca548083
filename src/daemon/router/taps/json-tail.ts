/**
 * Reading a JSON answer's usage without parsing the whole answer: the usage object is a top-level
 * member near the end of every family's answer (`"usage":{…}` after the choices or content,
 * Gemini's `"usageMetadata":{…}`), so only the bytes from its key to the end are looked at, and
 * only the usage object is parsed. Anything else (no such key, a key that is not top-level, a
 * value that is not an object, a tail that does not close the answer) gives undefined, and the
 * tap parses the whole answer as before: the figures are the same either way.
 *
 * What the tail read does not do is check the bytes before the key: an answer broken there (but
 * whole from the key on) has its usage counted instead of being flagged malformed. A cut answer
 * (the usual way an answer breaks) never closes its top-level object, so it is still parsed in
 * full and flagged.
 */

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const COLON = 0x3a

const isSpace = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/** Deepest nesting the tail read follows (deeper: the whole answer is parsed). */
const MAX_DEPTH = 64

/**
 * The value of the top-level member `key` (given as its JSON bytes with quotes, e.g. `"usage"`)
 * of the JSON object in `body`, when it is an object and the last member of that name: parsed
 * from its own bytes only. Undefined when that cannot be told from the tail (see above).
 */
export function tailObject(body: Buffer, key: Buffer): Record<string, unknown> | undefined {
  let first = 0
  while (isSpace(body[first])) first++
  if (body[first] !== OPEN_BRACE) return undefined
  const at = body.lastIndexOf(key)
  // a quote after a backslash may be inside a string: the whole answer decides
  if (at <= first || body[at - 1] === BACKSLASH) return undefined
  let i = at + key.length
  while (isSpace(body[i])) i++
  if (body[i] !== COLON) return undefined
  i++
  while (isSpace(body[i])) i++
  if (body[i] !== OPEN_BRACE) return undefined
  const start = i
  let end = -1
  const n = body.length
  // the closers expected, innermost last, from the value's own on (empty: the top-level object's)
  const closers: number[] = []
  for (; i < n; i++) {
    const c = body[i]
    if (c === QUOTE) {
      for (i++; i < n; i++) {
        const d = body[i]
        if (d === BACKSLASH) i++
        else if (d === QUOTE) break
      }
      if (i >= n) return undefined
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (closers.length > MAX_DEPTH) return undefined
      closers.push(c === OPEN_BRACE ? CLOSE_BRACE : CLOSE_BRACKET)
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      const expected = closers.pop()
      // the top-level object's closer: the key was a top-level member only if nothing else follows
      if (expected === undefined) {
        if (c !== CLOSE_BRACE || end === -1) return undefined
        for (i++; i < n; i++) if (!isSpace(body[i])) return undefined
        try {
          const value: unknown = JSON.parse(body.toString('utf8', start, end))
          return value !== null && typeof value === 'object' && !Array.isArray(value)
            ? (value as Record<string, unknown>)
            : undefined
        } catch {
          return undefined
        }
      }
      if (c !== expected) return undefined
      // the usage value closed (later members' values close at this depth too)
      if (closers.length === 0 && end === -1) end = i + 1
    }
  }
  return undefined
}

/** Where the JSON string starting at `i` (its opening quote) ends (after its closing quote); -1: none, or it holds an escape. */
function plainStringEnd(body: Buffer, i: number): number {
  for (let j = i + 1; j < body.length; j++) {
    const c = body[j]
    if (c === QUOTE) return j + 1
    if (c === BACKSLASH || c >= 0x80) return -1
  }
  return -1
}

/**
 * The string value of the top-level member `key` when it comes among the answer's first members
 * whose values are plain strings (no escapes, ASCII), numbers, `true`, `false` or `null`
 * (Messages' `"type":"message"` is the second member); undefined when a member before it holds
 * an object, an array or an escape, or the start is not plain JSON.
 */
export function headString(body: Buffer, key: string): string | undefined {
  const n = body.length
  let i = 0
  while (isSpace(body[i])) i++
  if (body[i] !== OPEN_BRACE) return undefined
  i++
  for (;;) {
    while (isSpace(body[i])) i++
    if (body[i] !== QUOTE) return undefined
    const keyEnd = plainStringEnd(body, i)
    if (keyEnd === -1) return undefined
    const isKey = keyEnd - i - 2 === key.length && body.toString('latin1', i + 1, keyEnd - 1) === key
    i = keyEnd
    while (isSpace(body[i])) i++
    if (body[i] !== COLON) return undefined
    i++
    while (isSpace(body[i])) i++
    const c = body[i]
    if (c === QUOTE) {
      const valueEnd = plainStringEnd(body, i)
      if (valueEnd === -1) return undefined
      if (isKey) return body.toString('latin1', i + 1, valueEnd - 1)
      i = valueEnd
    } else {
      // a number or a literal: up to the next separator; an object or array ends the look
      if (isKey || c === OPEN_BRACE || c === OPEN_BRACKET || c === undefined) return undefined
      while (i < n && body[i] !== 0x2c && body[i] !== CLOSE_BRACE && !isSpace(body[i])) i++
    }
    while (isSpace(body[i])) i++
    if (body[i] !== 0x2c) return undefined
    i++
  }
}
