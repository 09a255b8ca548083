/**
 * Rules some servers hold a conversation's history to, beyond its protocol, which a translated
 * request may break because the history was made by another vendor (a fallback or a switch of
 * provider mid-conversation) or in another protocol's shape. Applied to an upstream body once the
 * upstream's refusal taught them (daemon/router/adaptations.ts):
 *
 * - tool-call ids: Mistral takes only 9 letters and digits ("Tool call id was toolu_01… but must
 *   be a-z, A-Z, 0-9, with a length of 9."), OpenAI at most 40 characters on chat ("string too
 *   long. Expected a string with maximum length 40"). Each id is rewritten by a pure function of
 *   itself, so a call and its result keep the same id, in this request and every later one; an
 *   id that already fits stays as it is (the upstream's own ids go back to it unchanged);
 * - a user message right after tool results: Mistral refuses it ("Unexpected role 'user' after
 *   role 'tool'"), and a Claude Code turn that carries tool results and text (a system reminder,
 *   the user's interjection, an image a tool read) is exactly that in chat completions. An
 *   assistant message goes between, so the text keeps its user role;
 * - the reasoning of the history's assistant messages: a server may refuse it back in a field it
 *   does not take (Cerebras writes `reasoning` and refuses `reasoning_content`; Mistral's 422
 *   refuses both); it goes in the other field, or without.
 */
import {createHash} from 'node:crypto'

/** How the tool-call ids of a request must look to its upstream. */
export interface ToolIdRule {
  /** Exactly this many letters and digits (Mistral: 9). */
  alnum?: number
  /** At most this many characters (OpenAI chat: 40). */
  max?: number
}

/** The assistant message put between tool results and a user message. */
export const TOOL_TURN_BRIDGE = 'Tool results received.'

const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** `length` letters and digits derived from `id` (SHA-256: 62^9 values for a 9-character id). */
function digest(id: string, length: number): string {
  const hash = createHash('sha256').update(id).digest()
  let out = ''
  for (let i = 0; out.length < length; i++) out += DIGITS[hash[i % hash.length] % DIGITS.length]
  return out
}

/** `id` as `rule` wants it: unchanged when it fits, else derived from it. */
export function shapeToolId(id: string, rule: ToolIdRule): string {
  if (rule.alnum !== undefined) {
    const n = rule.alnum
    if (id.length === n && /^[a-zA-Z0-9]+$/.test(id)) return id
    return digest(id, n)
  }
  if (rule.max !== undefined && id.length > rule.max) {
    // the id's start stays readable (`call_…`, `toolu_…`), its end tells long ids apart
    const keep = Math.max(0, rule.max - 12)
    return `${id.slice(0, keep)}${digest(id, rule.max - keep)}`
  }
  return id
}

type Body = Record<string, unknown>

/**
 * The tool-call ids of a chat body (`messages[].tool_calls[].id`, `messages[].tool_call_id`) or a
 * Responses body (`input[].call_id`) shaped by `rule`, in place.
 */
export function shapeToolIds(body: Body, rule: ToolIdRule): void {
  const shape = (value: unknown) => (typeof value === 'string' ? shapeToolId(value, rule) : value)
  if (Array.isArray(body.messages))
    body.messages = (body.messages as Body[]).map((m) => {
      if (!m || typeof m !== 'object') return m
      let out = m
      if (typeof m.tool_call_id === 'string') out = {...out, tool_call_id: shape(m.tool_call_id)}
      if (Array.isArray(m.tool_calls))
        out = {
          ...out,
          tool_calls: (m.tool_calls as Body[]).map((c) =>
            c && typeof c === 'object' && typeof c.id === 'string' ? {...c, id: shape(c.id)} : c,
          ),
        }
      return out
    })
  if (Array.isArray(body.input))
    body.input = (body.input as Body[]).map((item) =>
      item && typeof item === 'object' && typeof item.call_id === 'string'
        ? {...item, call_id: shape(item.call_id)}
        : item,
    )
}

/** A chat body with an assistant message between tool results and a user message after them. */
export function bridgeToolTurns(body: Body): void {
  const messages = body.messages
  if (!Array.isArray(messages)) return
  const out: unknown[] = []
  for (let i = 0; i < messages.length; i++) {
    out.push(messages[i])
    if (
      (messages[i] as Body | undefined)?.role === 'tool' &&
      (messages[i + 1] as Body | undefined)?.role === 'user'
    )
      out.push({role: 'assistant', content: TOOL_TURN_BRIDGE})
  }
  if (out.length !== messages.length) body.messages = out
}

/**
 * A chat body whose assistant messages carry their reasoning in `reasoning` instead of
 * `reasoning_content` (`to: 'reasoning'`), or carry none (`to: 'drop'`).
 */
export function reshapeReasoningHistory(body: Body, to: 'reasoning' | 'drop'): void {
  const messages = body.messages
  if (!Array.isArray(messages)) return
  body.messages = (messages as Body[]).map((m) => {
    if (
      !m ||
      typeof m !== 'object' ||
      (m.reasoning_content === undefined && (to === 'reasoning' || m.reasoning === undefined))
    )
      return m
    const {reasoning_content: content, reasoning, ...rest} = m
    return to === 'drop' ? rest : {...rest, reasoning: reasoning ?? content}
  })
}
