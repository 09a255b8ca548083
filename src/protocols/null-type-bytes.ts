/**
 * The byte test of a tool schema's `"type": null` (Codex Desktop's `automation_update`), apart from
 * the rewrite (./tool-schemas.ts `withTypedToolSchemas`): the daemon loads this small module at
 * start for every Responses body passed through, and the rewrite, with the schema walk, only when a
 * body holds one (../daemon/router/proxy.ts), so the idle daemon holds none of it.
 */
import {topMembers, type MemberSpan} from './json-spans.js'

/** Byte needles of {@link nullTypeAt}: a member's `null` as a compact writer and a spaced one write it. */
const COLON_NULL = Buffer.from(':null')
const COLON_SPACE_NULL = Buffer.from(': null')
const TYPE = Buffer.from('"type"')

/** Whether byte `c` is JSON whitespace. */
const space = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/**
 * Where the first member `"type"` whose value is `null` lies in a JSON body's bytes, from `from`
 * on (the index of its colon), or -1. Two searches, one for the colon-and-null a compact writer
 * writes (serde_json, `JSON.stringify`, Go: `"type":null`) and one for a spaced writer's (Python's
 * `json.dumps`, a pretty printer: `"type": null`), whatever the body's other members say (a body
 * built by two writers: review76 #2). The colon is rare in text, so each search runs at memchr's
 * pace (about 40 µs for a 256 KB agent body on 2 shared cores, where one for `null` or
 * `"type":null` took 300); from each hit the bytes before it are read back. Inside a string the
 * quotes of `"type"` would be escaped, so a hit is a member. Not found: a tab, two spaces or a line
 * break between the colon and `null`.
 */
function nullTypeAt(body: Buffer, from: number): number {
  let found = -1
  for (const needle of [COLON_NULL, COLON_SPACE_NULL]) {
    const end = found === -1 ? body.length : found
    for (
      let at = body.indexOf(needle, from);
      at !== -1 && at < end;
      at = body.indexOf(needle, at + needle.length)
    ) {
      let i = at - 1
      while (space(body[i])) i--
      if (i >= TYPE.length - 1 && body.compare(TYPE, 0, TYPE.length, i - TYPE.length + 1, i + 1) === 0) {
        found = at
        break
      }
    }
  }
  return found
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
