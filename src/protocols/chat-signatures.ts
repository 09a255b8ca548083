/**
 * Thought signatures of Gemini 3 (and Anthropic's models) reached through a chat completions
 * server, which must come back on the next turn or the call's turn is refused:
 *
 * - OpenRouter's `reasoning_details` beside `reasoning` on an answer (stream deltas and JSON): an
 *   array of `reasoning.text`, `reasoning.summary` and `reasoning.encrypted` items, which a stream
 *   gives in pieces keyed by `index`. It goes back whole, verbatim, on the assistant message
 *   ("Gemini models require OpenRouter reasoning details to be preserved in each request").
 *   Kept as the chat-family signature of the answer's reasoning part: {@link DETAILS} and the
 *   array's JSON.
 * - Google's OpenAI-compatible endpoint (and Vertex's): `extra_content: {google: {thought_signature}}`
 *   (`vertex` on Vertex) on each tool call, echoed on the same call ("Function call is missing a
 *   thought_signature"). Kept as the chat-family signature of the tool call: {@link EXTRA} and the
 *   object's JSON.
 *
 * Both are chat-family opaques (ir.ts): only a chat upstream gets them back; a client of another
 * family carries them wrapped (`gwx1.chat.rd1:[…]`) or the gateway's carry keeps them. The text
 * is the upstream's own JSON re-serialized once, when the answer is decoded: the same bytes on
 * every later turn (the prompt cache holds).
 */
import type {Opaque, ReasoningPart} from './ir.js'

type Json = Record<string, unknown>
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The start of a chat reasoning signature that holds OpenRouter's `reasoning_details` (version 1). */
export const DETAILS = 'rd1:'
/** The start of a chat tool-call signature that holds Google's `extra_content` (version 1). */
export const EXTRA = 'ec1:'

/**
 * The most characters of `reasoning_details` kept as a signature. Past it only the items that are
 * not text are kept (the encrypted state the vendor checks: Gemini's signatures are a few KB),
 * and past it again nothing (the turn then degrades: conversation-rules.ts `dummySignatures`).
 */
export const MAX_DETAILS = 256 * 1024
/** The most characters of a tool call's `extra_content` kept. */
export const MAX_EXTRA = 64 * 1024

/** Google's documented value for a call whose signature was lost (it skips the check). */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator'

/** The chat signature of an answer's `reasoning_details` (undefined: none, or too large to keep). */
export function detailsSignature(details: readonly unknown[]): Opaque | undefined {
  if (details.length === 0) return undefined
  let text = JSON.stringify(details)
  if (text.length > MAX_DETAILS) {
    const opaque = details.filter((d) => !(isObj(d) && d.type === 'reasoning.text'))
    if (opaque.length === 0) return undefined
    text = JSON.stringify(opaque)
    if (text.length > MAX_DETAILS) return undefined
  }
  return {family: 'chat', value: DETAILS + text}
}

/** The `reasoning_details` array of a chat signature value, or undefined for another value. */
export function detailsOf(value: string): unknown[] | undefined {
  if (!value.startsWith(DETAILS)) return undefined
  try {
    const parsed: unknown = JSON.parse(value.slice(DETAILS.length))
    return Array.isArray(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

/** The chat signature of a tool call's `extra_content` (undefined: not an object, or too large). */
export function extraSignature(extra: unknown): Opaque | undefined {
  if (!isObj(extra)) return undefined
  const text = JSON.stringify(extra)
  return text.length <= MAX_EXTRA && text !== '{}' ? {family: 'chat', value: EXTRA + text} : undefined
}

/** The `extra_content` object of a chat signature value, or undefined for another value. */
export function extraOf(value: string): Json | undefined {
  if (!value.startsWith(EXTRA)) return undefined
  try {
    const parsed: unknown = JSON.parse(value.slice(EXTRA.length))
    return isObj(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}

/** The text of `reasoning.text` items (for an answer that sent no `reasoning` beside them). */
export function detailsText(details: readonly unknown[]): string {
  let text = ''
  for (const d of details)
    if (isObj(d) && d.type === 'reasoning.text' && typeof d.text === 'string') text += d.text
  return text
}

/** The string fields a streamed item's pieces add to (its text, a summary, encrypted data). */
const PIECES = new Set(['text', 'summary', 'data', 'signature'])

/**
 * A stream's `reasoning_details` pieces merged into items: an item is keyed by its `index` and
 * `type` (an item without `index` is one of its own); a piece of an item seen before adds its
 * string fields' text to the item's and sets fields the item lacks. The items keep the order they
 * first came in, each with its keys in the order they came.
 */
export class DetailsMerger {
  private items: Json[] = []
  private byKey = new Map<string, Json>()

  add(pieces: readonly unknown[]): void {
    for (const piece of pieces) {
      if (!isObj(piece)) continue
      const key = typeof piece.index === 'number' ? `${piece.index}\n${String(piece.type)}` : undefined
      const item = key === undefined ? undefined : this.byKey.get(key)
      if (!item) {
        const copy = {...piece}
        this.items.push(copy)
        if (key !== undefined) this.byKey.set(key, copy)
        continue
      }
      for (const [k, v] of Object.entries(piece)) {
        if (v === null || v === undefined) continue
        if (PIECES.has(k) && typeof v === 'string' && typeof item[k] === 'string') item[k] += v
        else if (item[k] === undefined || item[k] === null) item[k] = v
      }
    }
  }

  get size(): number {
    return this.items.length
  }

  /** The items so far, and a fresh start. */
  take(): Json[] {
    const items = this.items
    this.items = []
    this.byKey.clear()
    return items
  }
}

/**
 * The reasoning part of an answer's (or a delta's) `reasoning_details`, its text the `reasoning`
 * beside it (or, without one, the items' text); undefined when there are none to keep.
 */
export function detailsPart(raw: unknown, reasoning: string | undefined): ReasoningPart | undefined {
  if (!Array.isArray(raw) || raw.length === 0) return undefined
  const signature = detailsSignature(raw)
  if (!signature) return undefined
  return {type: 'reasoning', text: reasoning || detailsText(raw), signature}
}
