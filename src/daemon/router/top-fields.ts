/**
 * A JSON body's top-level members cut out of its bytes, everything else byte for byte as it came:
 * a Responses body passed through (Codex's) to a server that refused a field it does not know
 * (./adaptations.ts, `drop`: Codex 0.155's `access_programs` on OpenCode Go, lidge-jun/opencodex
 * #4853), or a value inside its `reasoning` (an effort the model does not take, sent as the nearest
 * it does; the effort or the summary it refuses, left out: Ollama's refusal of Codex's `xhigh`,
 * ollama/ollama #17252; OpenAI's of `reasoning.effort` for gpt-4o-mini, openai/codex #36735),
 * which must not otherwise change (the server's prompt cache matches the bytes of the turn
 * before); and the same cuts in a Messages body passed through (Claude Code's `diagnostics`,
 * `speed`, its tools' `eager_input_streaming` refused by a strict host fronting Claude). Called
 * only for an upstream model that learned such a rule.
 */

import {parseJsonBytes, utf8Bytes} from '../../protocols/json-bytes.js'
import {maxTokensBeside, MIN_BUDGET, SAMPLING_FIELDS} from '../../protocols/messages-request.js'
import {inputItemType} from '../../protocols/responses-input.js'
import {
  arrayElements,
  edited,
  memberCuts,
  objectMembers,
  topMembers,
  type Edit,
  type MemberSpan,
} from '../../protocols/json-spans.js'

/**
 * `body` (a JSON object) without its top-level members named in `fields` (their names as a parse
 * reads them, escapes decoded: ../../protocols/json-spans.ts `memberName`; a name with a dot, a
 * part of a member, is left alone), the bytes around them as they came; undefined when it holds
 * none of them or is not a JSON object. A byte search for each name, written plain, first: a body
 * that holds none is not scanned (json-spans scans it in about its count of strings: a 256 KB
 * Codex body), so a member whose name is written only with an escape, which no client is known to
 * write, stays unless the plain name stands elsewhere in the body.
 */
export function withoutTopFields(body: Buffer, fields: readonly string[]): Buffer | undefined {
  const names = fields.filter((f) => !f.includes('.') && body.indexOf(`"${f}"`) !== -1)
  if (names.length === 0) return undefined
  const members = topMembers(body)
  if (members === undefined) return undefined
  const cut = new Set(members.filter((m) => names.includes(m.name)))
  if (cut.size === 0) return undefined
  return edited(body, memberCuts(members, cut))
}

/**
 * `body` (a JSON object) with the members named in `members` cut out of each object of its
 * top-level array `array` (a Messages body's `tools`: Claude Code's `eager_input_streaming` refused
 * by a strict host), or, `members` by an item's type, out of each of that type (a Responses body's
 * `input`: a `function_call`'s `status` refused, a `web_search_call`'s kept), the bytes around them
 * as they came; undefined when none holds one, or the body is not a JSON object. A byte search for
 * each name first: a body that holds none is not scanned, and an item's type is read only for an
 * item that holds one.
 */
export function withoutItemMembers(
  body: Buffer,
  array: string,
  members: readonly string[] | Readonly<Record<string, readonly string[]>>,
): Buffer | undefined {
  const byType = Array.isArray(members) ? undefined : (members as Readonly<Record<string, readonly string[]>>)
  const all = byType ? [...new Set(Object.values(byType).flat())] : (members as readonly string[])
  const names = all.filter((m) => body.indexOf(`"${m}"`) !== -1)
  if (names.length === 0) return undefined
  const top = topMembers(body)
  const at = top?.find((m) => m.name === array)
  const elements = at === undefined ? undefined : arrayElements(body, at.value)
  if (elements === undefined) return undefined
  const edits: Edit[] = []
  for (const element of elements) {
    const object = objectMembers(body, element.start)
    const held = object?.members.filter((m) => names.includes(m.name))
    if (!object || !held?.length) continue
    const cut = new Set(
      byType ? held.filter((m) => byType[itemType(body, object.members)]?.includes(m.name)) : held,
    )
    if (cut.size > 0) edits.push(...memberCuts(object.members, cut))
  }
  return edits.length > 0 ? edited(body, edits) : undefined
}

/** The type of the input item whose members are `members` (../../protocols/responses-input.ts `inputItemType`). */
function itemType(body: Buffer, members: readonly MemberSpan[]): string {
  const type = members.find((m) => m.name === 'type')
  if (type === undefined) return 'message'
  try {
    return inputItemType({type: JSON.parse(body.toString('utf8', type.value, type.end))})
  } catch {
    return ''
  }
}

/** What was learned of a model's `reasoning` (./adaptations.ts): efforts sent as others, parts it goes without. */
export interface ReasoningRules {
  /** Each effort refused, with the one sent in its place. */
  effort?: Readonly<Record<string, string>>
  /** The fields learned away (`reasoning.effort`, `reasoning.summary` are read). */
  drop?: readonly string[]
}

/**
 * `body` (a Responses body passed through: Codex's) with what was learned of its model's
 * `reasoning` applied: its effort's value as the one sent in its place (`"xhigh"` as `"high"`),
 * or its effort or summary left out (a `reasoning` left empty goes whole: the field is optional in
 * OpenAI's API, while whether a model without reasoning takes `{}` is not verified). Only those
 * bytes change, the rest byte for byte as it came (the server's prompt cache matches the turn before). Undefined
 * when there is nothing to change (no `reasoning`, an effort not refused); `'unsafe'` when the
 * bytes cannot be changed so with certainty (a name twice, an escape in the effort's value, no
 * JSON object): the caller writes the body again from its parse, or sends it as it came.
 */
export function withReasoningAdapted(body: Buffer, rules: ReasoningRules): Buffer | 'unsafe' | undefined {
  if (body.indexOf('"reasoning"') === -1) return undefined
  const top = topMembers(body)
  if (top === undefined) return 'unsafe'
  const found = top.filter((m) => m.name === 'reasoning')
  if (found.length !== 1) return found.length === 0 ? undefined : 'unsafe'
  const [reasoning] = found
  // (`null`: no reasoning asked for; another value is the server's to judge)
  if (body[reasoning.value] !== 0x7b) return undefined
  const inner = objectMembers(body, reasoning.value)
  if (inner === undefined || inner.end !== reasoning.end) return 'unsafe'
  const named = (name: string) => inner.members.filter((m) => m.name === name)
  const [effort, summary] = [named('effort'), named('summary')]
  if (effort.length > 1 || summary.length > 1) return 'unsafe'
  const cut = new Set<MemberSpan>()
  if (rules.drop?.includes('reasoning.effort') && effort[0]) cut.add(effort[0])
  if (rules.drop?.includes('reasoning.summary') && summary[0]) cut.add(summary[0])
  // every member of `reasoning` cut: the whole member goes
  if (cut.size > 0 && cut.size === inner.members.length)
    return edited(body, memberCuts(top, new Set([reasoning])))
  const edits = cut.size > 0 ? memberCuts(inner.members, cut) : []
  if (effort[0] && !cut.has(effort[0]) && rules.effort) {
    const raw = body.toString('latin1', effort[0].value, effort[0].end)
    if (raw.startsWith('"')) {
      if (raw.includes('\\')) return 'unsafe'
      const value = raw.slice(1, -1)
      const instead = Object.hasOwn(rules.effort, value) ? rules.effort[value] : undefined
      if (instead !== undefined && instead !== value)
        edits.push({from: effort[0].value, to: effort[0].end, bytes: Buffer.from(JSON.stringify(instead))})
    }
  }
  return edits.length > 0 ? edited(body, edits) : undefined
}

/**
 * `body` parsed and written again with what was learned of its `reasoning` applied, as
 * {@link withReasoningAdapted} does in its bytes: for a body whose bytes cannot be changed so
 * with certainty (an escape in the effort's value, a name twice: JSON's parse keeps the last).
 * Undefined when it is no JSON object or there is nothing to change.
 */
export function reasoningRewritten(body: Buffer, rules: ReasoningRules): Buffer | undefined {
  let parsed: unknown
  try {
    parsed = parseJsonBytes(body)
  } catch {
    return undefined
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined
  const object = parsed as Record<string, unknown>
  const reasoning = object.reasoning
  if (!reasoning || typeof reasoning !== 'object' || Array.isArray(reasoning)) return undefined
  const next: Record<string, unknown> = {...(reasoning as Record<string, unknown>)}
  if (rules.drop?.includes('reasoning.effort')) delete next.effort
  if (rules.drop?.includes('reasoning.summary')) delete next.summary
  const effort = next.effort
  if (typeof effort === 'string' && rules.effort && Object.hasOwn(rules.effort, effort))
    next.effort = rules.effort[effort]
  const before = Object.keys(reasoning)
  if (
    before.length === Object.keys(next).length &&
    before.every((k) => next[k] === (reasoning as Record<string, unknown>)[k])
  )
    return undefined
  if (Object.keys(next).length === 0) delete object.reasoning
  else object.reasoning = next
  return utf8Bytes(JSON.stringify(object))
}

/** Anthropic's least thinking budget (../../protocols/messages-request.ts `MIN_BUDGET`). */
const LEAST_THINKING = Buffer.from(`{"type":"enabled","budget_tokens":${MIN_BUDGET}}`)

/**
 * A Messages body passed through (Claude Code's helper call, its classifier's) to a model that
 * takes thinking only on (./adaptations.ts, `claude.thinkingOff: least_budget`: Kimi's "invalid
 * thinking: only type=enabled is allowed for this model"), with its `thinking` (`disabled`,
 * `between_tools`, or none) as `enabled` with Anthropic's least budget, a `max_tokens` under twice
 * that budget raised by it (Anthropic's rule: the budget below `max_tokens`; the answer keeps the
 * room the client gave it, or the budget's), its sampling settings cut out (`temperature`, `top_p`,
 * `top_k`: thinking takes none, Kimi's thinking models temperature 1 only), every other byte as it
 * came (the server's prompt cache matches the
 * bytes of the turn before). Undefined when it thinks already (`enabled`, `adaptive`); `'unsafe'`
 * when the bytes cannot be changed so with certainty (a name twice, a value that does not parse,
 * no JSON object) or a forced `tool_choice` must go as `auto` with the call asked for in the prompt:
 * the caller writes the body again from its parse (../../protocols/translate.ts
 * `adaptPassedMessages`).
 */
export function withLeastThinking(body: Buffer): Buffer | 'unsafe' | undefined {
  const top = topMembers(body)
  if (top === undefined || top.length === 0) return 'unsafe'
  const one = (name: string): MemberSpan | null | undefined => {
    const found = top.filter((m) => m.name === name)
    return found.length > 1 ? null : found[0]
  }
  const [thinking, max, choice] = [one('thinking'), one('max_tokens'), one('tool_choice')]
  if (thinking === null || max === null || choice === null) return 'unsafe'
  const value = (m: MemberSpan): unknown => JSON.parse(body.toString('utf8', m.value, m.end))
  try {
    const forced = choice && (value(choice) as {type?: unknown} | null)?.type
    if (forced === 'any' || forced === 'tool') return 'unsafe'
    const type = thinking && (value(thinking) as {type?: unknown} | null)?.type
    if (type === 'enabled' || type === 'adaptive') return undefined
    // (the sampling settings cut with their separators; thinking, when it is added, after the last
    // member, whichever stays: a body of nothing else is written again from its parse)
    const sampling = new Set(top.filter((m) => SAMPLING_FIELDS.includes(m.name)))
    if (sampling.size === top.length) return 'unsafe'
    const edits: Edit[] = sampling.size > 0 ? memberCuts(top, sampling) : []
    if (thinking) edits.push({from: thinking.value, to: thinking.end, bytes: LEAST_THINKING})
    else {
      const end = top.at(-1)!.end
      edits.push({from: end, to: end, bytes: Buffer.concat([Buffer.from(',"thinking":'), LEAST_THINKING])})
    }
    const tokens = max && value(max)
    if (typeof tokens === 'number' && maxTokensBeside(tokens) !== tokens)
      edits.push({from: max!.value, to: max!.end, bytes: Buffer.from(String(maxTokensBeside(tokens)))})
    return edited(body, edits)
  } catch {
    return 'unsafe'
  }
}
