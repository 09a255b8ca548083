/**
 * A JSON body's top-level members cut out of its bytes, everything else byte for byte as it came:
 * a Responses body passed through (Codex's) to a server that refused a field it does not know
 * (./adaptations.ts, `drop`: Codex 0.155's `access_programs` on OpenCode Go, lidge-jun/opencodex
 * #4853), which must not otherwise change (the server's prompt cache matches the bytes of the turn
 * before). Called only for an upstream model that learned such a field.
 */

const QUOTE = 0x22
const BACKSLASH = 0x5c

/** Whether byte `c` is JSON whitespace. */
const space = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/** Where the string whose opening quote is at `at` ends (the index after its closing quote); -1 if it does not. */
function stringEnd(body: Buffer, at: number): number {
  let from = at + 1
  for (;;) {
    const quote = body.indexOf(QUOTE, from)
    if (quote === -1) return -1
    // an even run of backslashes before it: the quote closes the string
    let slashes = 0
    while (body[quote - 1 - slashes] === BACKSLASH) slashes++
    if (slashes % 2 === 0) return quote + 1
    from = quote + 1
  }
}

/** Where the JSON value that starts at `at` ends (the index after it); -1 if it does not. */
function valueEnd(body: Buffer, at: number): number {
  const first = body[at]
  if (first === QUOTE) return stringEnd(body, at)
  if (first === 0x7b || first === 0x5b) {
    let depth = 0
    for (let i = at; i < body.length; i++) {
      const c = body[i]
      if (c === QUOTE) {
        const end = stringEnd(body, i)
        if (end === -1) return -1
        i = end - 1
      } else if (c === 0x7b || c === 0x5b) depth++
      else if ((c === 0x7d || c === 0x5d) && --depth === 0) return i + 1
    }
    return -1
  }
  // a number or a literal: up to the next delimiter
  let i = at
  while (i < body.length && body[i] !== 0x2c && body[i] !== 0x7d && body[i] !== 0x5d && !space(body[i])) i++
  return i === at ? -1 : i
}

/**
 * `body` (a JSON object) without its top-level members named in `fields` (their names as written:
 * a name with an escape in it is not one of them; a name with a dot, a part of a member, is left
 * alone), the bytes around them as they came; undefined when it holds none of them or is not a
 * JSON object. A byte search for each name first: a body that holds none is not scanned. Its
 * strings are skipped by a search for their closing quote, so a 256 KB Codex body is scanned in
 * about its count of strings.
 */
export function withoutTopFields(body: Buffer, fields: readonly string[]): Buffer | undefined {
  const names = fields.filter((f) => !f.includes('.') && body.indexOf(`"${f}"`) !== -1)
  if (names.length === 0) return undefined
  const wanted = new Set(names)
  /** Each member's start (its name's quote) and end (after its value). */
  const members: Array<{start: number; end: number; cut: boolean}> = []
  let i = 0
  while (space(body[i])) i++
  if (body[i] !== 0x7b) return undefined
  i++
  for (;;) {
    while (space(body[i])) i++
    if (body[i] === 0x7d && members.length === 0) break
    if (body[i] !== QUOTE) return undefined
    const start = i
    const nameEnd = stringEnd(body, i)
    if (nameEnd === -1) return undefined
    const name = body.toString('latin1', start + 1, nameEnd - 1)
    i = nameEnd
    while (space(body[i])) i++
    if (body[i] !== 0x3a) return undefined
    i++
    while (space(body[i])) i++
    const end = valueEnd(body, i)
    if (end === -1) return undefined
    members.push({start, end, cut: wanted.has(name)})
    i = end
    while (space(body[i])) i++
    if (body[i] === 0x2c) {
      i++
      continue
    }
    if (body[i] === 0x7d) break
    return undefined
  }
  if (!members.some((m) => m.cut)) return undefined
  // the bytes kept: from each kept member's start to its end, with what stood between two kept
  // members (the comma, its spaces) as it came; the body's head and tail as they came
  const kept = members.filter((m) => !m.cut)
  const parts: Buffer[] = []
  parts.push(body.subarray(0, members[0].start))
  kept.forEach((m, k) => {
    parts.push(body.subarray(m.start, m.end))
    // the separator that followed it in the body (up to the next member), before another kept one
    if (k < kept.length - 1) parts.push(body.subarray(m.end, members[members.indexOf(m) + 1].start))
  })
  parts.push(body.subarray(members.at(-1)!.end))
  return Buffer.concat(parts)
}
