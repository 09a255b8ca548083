/**
 * A JSON body's top-level members cut out of its bytes, everything else byte for byte as it came:
 * a Responses body passed through (Codex's) to a server that refused a field it does not know
 * (./adaptations.ts, `drop`: Codex 0.155's `access_programs` on OpenCode Go, lidge-jun/opencodex
 * #4853), which must not otherwise change (the server's prompt cache matches the bytes of the turn
 * before). Called only for an upstream model that learned such a field.
 */

import {topMembers, withMembers} from '../../protocols/json-spans.js'

/**
 * `body` (a JSON object) without its top-level members named in `fields` (their names as written:
 * a name with an escape in it is not one of them; a name with a dot, a part of a member, is left
 * alone), the bytes around them as they came; undefined when it holds none of them or is not a
 * JSON object. A byte search for each name first: a body that holds none is not scanned
 * (../../protocols/json-spans.ts scans it in about its count of strings: a 256 KB Codex body).
 */
export function withoutTopFields(body: Buffer, fields: readonly string[]): Buffer | undefined {
  const names = fields.filter((f) => !f.includes('.') && body.indexOf(`"${f}"`) !== -1)
  if (names.length === 0) return undefined
  const members = topMembers(body)
  if (!members) return undefined
  const wanted = new Set(names)
  const edits = new Map<number, null>()
  members.forEach((m, k) => {
    if (wanted.has(m.name)) edits.set(k, null)
  })
  return edits.size > 0 ? withMembers(body, members, edits) : undefined
}
