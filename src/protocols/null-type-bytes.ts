/**
 * The byte test of a tool schema's `"type": null` (Codex Desktop's `automation_update`), apart from
 * the rewrite (./tool-schemas.ts `withTypedToolSchemas`): the daemon loads this small module at
 * start for every Responses body passed through, and the rewrite, with the schema walk, only when a
 * body holds one (../daemon/router/proxy.ts), so the idle daemon holds none of it.
 */
import {topMembers, type MemberSpan} from './json-spans.js'

/** The letters of `type`, last first, each as a member's name may write it: itself or its `\u00XX` escape. */
const TYPE_LETTERS = [...'type'].reverse().map((c) => ({
  code: c.charCodeAt(0),
  escape: Buffer.from(`\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
}))

/** Whether byte `c` is JSON whitespace. */
const space = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/**
 * Whether the colon at `colon` is a member `"type"`'s and its value `null`: the bytes after it,
 * past white space, `null`, and the bytes before it, past white space, a name `type` (each letter
 * itself or escaped: `"\u0074ype"`) whose opening quote follows an object's `{` or a `,`. Inside a
 * string no such bytes stand (its quotes are escaped), so a colon that passes is a member's. The
 * white space read forward is the colon's own (up to the next byte that is none), and backward only
 * for a colon followed by `null`: each byte of a body is read a bounded number of times over all its
 * colons, however long its runs of white space.
 */
function nullTypeColon(body: Buffer, colon: number): boolean {
  let j = colon + 1
  while (space(body[j])) j++
  // (`null` byte by byte: most colons fail at the first, without a call)
  if (body[j] !== 0x6e || body[j + 1] !== 0x75 || body[j + 2] !== 0x6c || body[j + 3] !== 0x6c) return false
  let i = colon - 1
  while (space(body[i])) i--
  if (body[i] !== 0x22) return false
  // (i: past the name's last letter)
  for (const letter of TYPE_LETTERS) {
    if (body[i - 1] === letter.code) i--
    else if (i >= 6 && body.compare(letter.escape, 0, 6, i - 6, i) === 0) i -= 6
    else return false
  }
  if (body[i - 1] !== 0x22) return false
  i -= 2
  while (space(body[i])) i--
  return body[i] === 0x7b || body[i] === 0x2c
}

/**
 * Where the first member `"type"` whose value is `null` lies in a JSON body's bytes, from `from`
 * on (the index of its colon), or -1, however it is written: white space of any kind and length
 * around its colon, its name's letters escaped. One search for the colon at memchr's pace, a few
 * bytes read on either side of each ({@link nullTypeColon}), no parse: linear in the body, its
 * white space too. (Stop 60's six searches, one per spelling of the colon's white space, walked
 * back from every tab or line break to its colon: a run of 128 000 tabs held the daemon 38 s.)
 */
function nullTypeAt(body: Buffer, from: number): number {
  for (let at = body.indexOf(0x3a, from); at !== -1; at = body.indexOf(0x3a, at + 1))
    if (nullTypeColon(body, at)) return at
  return -1
}

/**
 * The top-level members of a JSON body that hold tools (`tools`, and `input`: a Responses
 * request's items, some of which hold tools) when a `"type": null` lies inside one of them;
 * undefined when none does. A byte search first ({@link nullTypeAt}): a body without one is not
 * scanned. A hit elsewhere (a model's own null `type` argument in a Messages `tool_use.input`,
 * Claude Code's Grep: every later turn of that conversation carries it) costs one scan of the
 * body's top level (../protocols/json-spans.ts, about its count of strings), no parse.
 */
export function nullTypeMembers(body: Buffer): MemberSpan[] | undefined {
  let at = nullTypeAt(body, 0)
  if (at === -1) return undefined
  const members = topMembers(body)?.filter(
    (m) => (m.name === 'tools' || m.name === 'input') && body[m.value] === 0x5b,
  )
  if (members === undefined || members.length === 0) return undefined
  while (at !== -1) {
    const hit = at
    const within = members.find((m) => hit > m.value && hit < m.end)
    if (within) return members
    // (the next hit, from past the member it lay in, or past it)
    at = nullTypeAt(body, at + 1)
  }
  return undefined
}

/** Whether a JSON body's tools (its `tools`, a Responses request's `input` items) hold a member `"type"` whose value is `null`. */
export function holdsNullType(body: Buffer): boolean {
  return nullTypeMembers(body) !== undefined
}
