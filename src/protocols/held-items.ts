/**
 * A Responses body that goes to a Responses server as it came (not translated) may name, by
 * `item_reference`, items gwctl minted on its translated answers (carry.ts `BoundedItems`): the AI
 * SDK with `store` on sends every earlier answer so, and a route whose translated target answered
 * some turns and a Responses target passed through others has both kinds in one conversation. That
 * server never saw gwctl's ids (OpenAI: "Item with id … not found"): each reference gwctl holds
 * goes as the items themselves, written as the Responses encoder writes an assistant turn, and a
 * reference to the server's own items stays as it came. One gwctl minted and no longer holds (a
 * restart, an eviction) is refused as gwctl's (responses.ts `ItemReferenceError`), not sent on for
 * the server to refuse. Only those references' bytes change (json-spans.ts): the rest of the body
 * goes as it came, its large integers and escapes too. Loaded only for such a body.
 */
import type {FunctionTool, ItemStore, Part, Request} from './ir.js'
import {arrayElements, edited, type Edit, memberCuts, type MemberSpan, topMembers} from './json-spans.js'
import {ItemReferenceError} from './responses.js'
import {mintedHere} from './responses-items.js'
import {encodeRequest} from './responses-request.js'

type Json = Record<string, unknown>
const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v)

const REFERENCE = Buffer.from('"item_reference"')

/**
 * The Responses input items of an assistant turn of `parts`, a custom tool's call (`customs`: the
 * body's custom tools) as a `custom_tool_call` of its `input`. Reasoning is left out: only the
 * server that made a reasoning item reads it (OpenAI refuses xAI's ciphertext, a translated
 * target's has none it could read), and gwctl does not keep which server that was.
 */
function assistantItems(parts: Part[], customs: readonly FunctionTool[]): unknown[] {
  const request: Request = {
    model: null,
    system: [],
    messages: [{role: 'assistant', parts: parts.filter((p) => p.type !== 'reasoning')}],
    tools: [...customs],
    stream: false,
  }
  return encodeRequest(request, '').input as unknown[]
}

/** The body's custom tools (`{"type": "custom"}`, Codex's `apply_patch`), as the IR names them. */
function customTools(body: Buffer, members: readonly MemberSpan[]): FunctionTool[] {
  const tools = members.find((m) => m.name === 'tools')
  if (!tools) return []
  let list: unknown
  try {
    list = JSON.parse(body.toString('utf8', tools.value, tools.end))
  } catch {
    return []
  }
  return (Array.isArray(list) ? list : []).flatMap((t) =>
    isObj(t) && t.type === 'custom' && typeof t.name === 'string'
      ? [{name: t.name, parameters: {}, custom: {}}]
      : [],
  )
}

const MARK = Buffer.from('_gw')
const isHex = (c: number | undefined): boolean =>
  c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))
const isLetter = (c: number | undefined): boolean => c !== undefined && c >= 0x61 && c <= 0x7a

/**
 * Whether `body` holds a string of the shape of an id gwctl mints (responses-items.ts
 * `newItemId`, `"msg_gw` and 32 hex digits): every item gwctl holds has one, and a reference to
 * one it lost too, so a body without one needs nothing more. A search for `_gw`, each found looked at.
 */
function namesMinted(body: Buffer): boolean {
  for (let at = body.indexOf(MARK); at !== -1; at = body.indexOf(MARK, at + 1)) {
    let start = at
    while (isLetter(body[start - 1])) start--
    if (start === at || body[start - 1] !== 0x22 || body[at + 35] !== 0x22) continue
    let hex = at + 3
    while (hex < at + 35 && isHex(body[hex])) hex++
    if (hex === at + 35) return true
  }
  return false
}

/**
 * `body` with each `item_reference` of its `input` whose item `items` holds replaced by that
 * item's input items (a repeat of one already put back taken out, as the decoder does); undefined
 * when it names none (nothing made). Throws {@link ItemReferenceError} for a reference to an item
 * gwctl minted and no longer holds.
 */
export function withHeldItems(body: Buffer, items: ItemStore): Buffer | undefined {
  if (!namesMinted(body)) return undefined
  const members = topMembers(body)
  const input = members?.find((m) => m.name === 'input')
  const elements = input && arrayElements(body, input.value)
  if (!members || !elements?.length) return undefined
  const spans: MemberSpan[] = elements.map((e) => ({name: '', start: e.start, value: e.start, end: e.end}))
  const edits: Edit[] = []
  const cut = new Set<MemberSpan>()
  const put = new Set<string>()
  let customs: FunctionTool[] | undefined
  // each element the word lies in, found by a search from one to the next
  let at = body.indexOf(REFERENCE, input!.value)
  for (const span of spans) {
    if (at === -1 || at >= input!.end) break
    if (at >= span.end) continue
    at = body.indexOf(REFERENCE, span.end)
    if (body[span.start] !== 0x7b) continue
    let item: unknown
    try {
      item = JSON.parse(body.toString('utf8', span.start, span.end))
    } catch {
      continue
    }
    if (!isObj(item) || item.type !== 'item_reference' || typeof item.id !== 'string') continue
    const id = item.id
    if (put.has(id)) {
      cut.add(span)
      continue
    }
    const parts = items.get(id)
    if (!parts) {
      if (mintedHere(id)) throw new ItemReferenceError(id)
      continue
    }
    put.add(id)
    if (parts.some((p) => p.type === 'tool_call')) customs ??= customTools(body, members)
    const written = assistantItems(parts, customs ?? [])
    if (written.length === 0) cut.add(span)
    else
      edits.push({
        from: span.start,
        to: span.end,
        bytes: Buffer.from(written.map((i) => JSON.stringify(i)).join(',')),
      })
  }
  if (put.size === 0) return undefined
  if (cut.size) edits.push(...memberCuts(spans, cut))
  return edited(body, edits)
}
