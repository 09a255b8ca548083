/**
 * Where the members of a JSON object and the elements of a JSON array lie in its bytes, for a
 * rewrite of a body passed through that must leave every other byte as it came (a server's prompt
 * cache matches the bytes of the turn before; a parse and a write of a 200 KB agent body costs
 * milliseconds that a splice does not). Strings are skipped by a search for their closing quote, so
 * a body is scanned in about its count of strings. The scan trusts what it is given to be JSON of
 * a client: a value's bytes are parsed (`JSON.parse`) by whoever reads them, which is where
 * malformed JSON inside one is found.
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
export function valueEnd(body: Buffer, at: number): number {
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

/** A member of a JSON object in its bytes: its name as a parse reads it ({@link memberName}), where it starts (its name's quote), where its value starts and where it ends. */
export interface MemberSpan {
  name: string
  start: number
  value: number
  end: number
}

/**
 * A member's name, whose string lies from `start` (its opening quote) to `end` (past its closing
 * one): its bytes as latin1 (the names matched are ASCII), or, where it holds an escape, the name
 * it stands for (`"\u0074ype"` is `type` to the server that parses it: Codex Desktop's null types
 * are found however a writer spelled them); a name whose escape is malformed as written.
 */
function memberName(body: Buffer, start: number, end: number): string {
  const written = body.toString('latin1', start + 1, end - 1)
  if (!written.includes('\\')) return written
  try {
    return JSON.parse(body.toString('utf8', start, end)) as string
  } catch {
    return written
  }
}

/**
 * The members of the JSON object whose `{` is at `at` (their names as a parse reads them,
 * {@link memberName}), and the index after its `}`; undefined when no object starts there or it
 * does not end, and at a member `until` is true of, asked of each (its name and where its value
 * starts) before its value is scanned: a reader that wants only objects of some members
 * (held-items.ts) reads no more of another.
 */
export function objectMembers(
  body: Buffer,
  at: number,
  until?: (name: string, value: number) => boolean,
): {members: MemberSpan[]; end: number} | undefined {
  let i = at
  if (body[i] !== 0x7b) return undefined
  i++
  const members: MemberSpan[] = []
  for (;;) {
    while (space(body[i])) i++
    if (body[i] === 0x7d && members.length === 0) return {members, end: i + 1}
    if (body[i] !== QUOTE) return undefined
    const start = i
    const nameEnd = stringEnd(body, i)
    if (nameEnd === -1) return undefined
    const name = memberName(body, start, nameEnd)
    i = nameEnd
    while (space(body[i])) i++
    if (body[i] !== 0x3a) return undefined
    i++
    while (space(body[i])) i++
    const value = i
    if (until?.(name, i)) return undefined
    const end = valueEnd(body, i)
    if (end === -1) return undefined
    members.push({name, start, value, end})
    i = end
    while (space(body[i])) i++
    if (body[i] === 0x2c) {
      i++
      continue
    }
    if (body[i] === 0x7d) return {members, end: i + 1}
    return undefined
  }
}

/** The members of the JSON object `body` is (only white space around it), in their order; undefined when it is not one. */
export function topMembers(body: Buffer): MemberSpan[] | undefined {
  let i = 0
  while (space(body[i])) i++
  const object = objectMembers(body, i)
  if (object === undefined) return undefined
  let j = object.end
  while (space(body[j])) j++
  return j === body.length ? object.members : undefined
}

/** The elements of the JSON array whose `[` is at `at`, each as its start and end; undefined when there is none there. */
export function arrayElements(body: Buffer, at: number): Array<{start: number; end: number}> | undefined {
  if (body[at] !== 0x5b) return undefined
  const elements: Array<{start: number; end: number}> = []
  let i = at + 1
  for (;;) {
    while (space(body[i])) i++
    if (body[i] === 0x5d && elements.length === 0) return elements
    const start = i
    const end = valueEnd(body, i)
    if (end === -1) return undefined
    elements.push({start, end})
    i = end
    while (space(body[i])) i++
    if (body[i] === 0x2c) {
      i++
      continue
    }
    return body[i] === 0x5d ? elements : undefined
  }
}

/** A part of a body's bytes replaced: `from` to `to`, by `bytes` (none: cut out). */
export interface Edit {
  from: number
  to: number
  bytes?: Buffer
}

/**
 * The parts of an object's bytes (its `members`, found in them) that go when the members `cut`
 * go: all but each kept member's own bytes and what stood between two kept members (the comma,
 * its spaces), so the object's head and tail, and the separators left, are as they came.
 */
export function memberCuts(members: readonly MemberSpan[], cut: ReadonlySet<MemberSpan>): Edit[] {
  const kept = members.filter((m) => !cut.has(m))
  const edits: Edit[] = []
  /** Where the bytes not yet kept begin. */
  let from = members[0].start
  kept.forEach((m, k) => {
    if (m.start > from) edits.push({from, to: m.start})
    // with the separator that followed it in the body (up to the next member), before another kept one
    from = k < kept.length - 1 ? members[members.indexOf(m) + 1].start : m.end
  })
  const last = members.at(-1)!.end
  if (last > from) edits.push({from, to: last})
  return edits
}

/** `body` with `edits` (apart, in any order) made. */
export function edited(body: Buffer, edits: readonly Edit[]): Buffer {
  const parts: Buffer[] = []
  let at = 0
  for (const edit of [...edits].sort((x, y) => x.from - y.from)) {
    parts.push(body.subarray(at, edit.from))
    if (edit.bytes) parts.push(edit.bytes)
    at = edit.to
  }
  parts.push(body.subarray(at))
  return Buffer.concat(parts)
}

/**
 * An object's bytes with some of its members' values replaced (`changes`: by the member's index,
 * the new value's bytes, or null to take the member out), every other byte as it came: a member
 * taken out goes with the separator after it (before it, for the last).
 */
export function withMembers(
  body: Buffer,
  members: readonly MemberSpan[],
  changes: ReadonlyMap<number, Buffer | null>,
): Buffer {
  const cut = new Set<MemberSpan>()
  const edits: Edit[] = []
  for (const [k, bytes] of changes) {
    if (bytes === null) cut.add(members[k])
    else edits.push({from: members[k].value, to: members[k].end, bytes})
  }
  return edited(body, cut.size > 0 ? [...memberCuts(members, cut), ...edits] : edits)
}
