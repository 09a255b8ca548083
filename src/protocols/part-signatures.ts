/**
 * A Gemini body passed through untranslated (Gemini CLI's, the @google/genai SDK's, a REST
 * client's) to a model that refused a model turn whose first `functionCall` part has no
 * `thoughtSignature` (Gemini 3 given calls another model or route made; learned in
 * daemon/router/adaptations.ts, `thoughtSignatures: 'part'`): Google's documented
 * `skip_thought_signature_validator` put on that part, written into the bytes after its last
 * member, every other byte as it came (its escapes, its numbers, its members' order, its white
 * space: a server's prompt cache matches the bytes of the turn before). A part with its own
 * signature keeps it, and the calls after the first of a turn stay unsigned, as Gemini 3 sent them
 * (its parallel calls: only the first is signed). Every model content, not only the current
 * turn's: the history's bytes stay the same from turn to turn. Loaded only for a model that learned
 * the rule, and a body that holds `"functionCall"`.
 */
import {arrayElements, edited, type Edit, type MemberSpan, objectMembers, topMembers} from './json-spans.js'

/** What goes after a part's last member. */
const SKIP = Buffer.from(',"thoughtSignature":"skip_thought_signature_validator"')

/**
 * `body` with the skip value on the first call of each model content that has no signature
 * (in a countTokens body, in the request it wraps too, `generateContentRequest`); undefined when
 * no part needed it (the body goes as it came) or it is not a JSON object.
 */
export function withPartSignatures(body: Buffer): Buffer | undefined {
  const top = topMembers(body)
  if (!top) return undefined
  const edits: Edit[] = []
  signContents(body, top, edits)
  const wrapped = top.find((m) => m.name === 'generateContentRequest')
  const inner = wrapped && objectMembers(body, wrapped.value)?.members
  if (inner) signContents(body, inner, edits)
  return edits.length > 0 ? edited(body, edits) : undefined
}

/** The edits that sign the model contents of a request whose members are `members`. */
function signContents(body: Buffer, members: readonly MemberSpan[], edits: Edit[]): void {
  const contents = members.find((m) => m.name === 'contents')
  for (const content of (contents && arrayElements(body, contents.value)) ?? []) {
    const fields = objectMembers(body, content.start)?.members
    const role = fields?.find((m) => m.name === 'role')
    const parts = fields?.find((m) => m.name === 'parts')
    if (!role || !parts || stringAt(body, role) !== 'model') continue
    for (const element of arrayElements(body, parts.value) ?? []) {
      const part = objectMembers(body, element.start)?.members
      if (!part?.some((m) => m.name === 'functionCall')) continue
      if (!part.some((m) => m.name === 'thoughtSignature' || m.name === 'thought_signature')) {
        const end = part.at(-1)!.end
        edits.push({from: end, to: end, bytes: SKIP})
      }
      break
    }
  }
}

/** The string a member's value is (its escapes read), else undefined. */
function stringAt(body: Buffer, member: MemberSpan): string | undefined {
  const written = body.toString('latin1', member.value, member.end)
  if (!written.includes('\\'))
    return written.length >= 2 && written[0] === '"' ? written.slice(1, -1) : undefined
  try {
    const value: unknown = JSON.parse(body.toString('utf8', member.value, member.end))
    return typeof value === 'string' ? value : undefined
  } catch {
    return undefined
  }
}
