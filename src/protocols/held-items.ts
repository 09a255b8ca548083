/**
 * A Responses body that goes to a Responses server as it came (not translated) may name, by
 * `item_reference` (or by an item of an `id` alone, which OpenAI's API takes as one), items gwctl
 * minted on its translated answers (carry.ts `BoundedItems`): the AI SDK with `store` on sends
 * every earlier answer so, and a route whose translated target answered some turns and a Responses
 * target passed through others has both kinds in one conversation. That server never saw gwctl's
 * ids (OpenAI: "Item with id … not found"): each reference gwctl holds goes as the items
 * themselves, written as the Responses encoder writes an assistant turn, and a reference to the
 * server's own items stays as it came. One gwctl minted and no longer holds (a restart, an
 * eviction) is refused as gwctl's (responses.ts `ItemReferenceError`), not sent on for the server
 * to refuse. Only those references' bytes change (json-spans.ts): the rest of the body goes as it
 * came, its large integers and escapes too. Loaded only for such a body.
 */
import type {FunctionTool, ItemStore, Part, Request} from './ir.js'
import {
  arrayElements,
  edited,
  type Edit,
  memberCuts,
  type MemberSpan,
  objectMembers,
  topMembers,
} from './json-spans.js'
import {ItemReferenceError} from './responses.js'
import {mintedHere} from './responses-items.js'
import {encodeRequest} from './responses-request.js'

type Json = Record<string, unknown>
const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v)

/** An `item_reference`'s type, as its bytes are written (an escape in it is not looked for). */
const REFERENCE = '"item_reference"'

/**
 * The Responses input items of an assistant turn of `parts`, a custom tool's call (`customs`: the
 * body's custom tools) as a `custom_tool_call` of its `input`. Reasoning goes only to the server
 * that made it (`server`, ir.ts `ReasoningPart.server`): OpenAI refuses xAI's ciphertext, and a
 * translated target of another family made none a Responses server could read.
 */
function assistantItems(
  parts: Part[],
  customs: readonly FunctionTool[],
  server: string | undefined,
): unknown[] {
  const request: Request = {
    model: null,
    system: [],
    messages: [
      {
        role: 'assistant',
        parts: parts.filter((p) => p.type !== 'reasoning' || (server !== undefined && p.server === server)),
      },
    ],
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
 * `newItemId`, `"msg_gw` and 32 hex digits): every answer gwctl held items of has one (its
 * message, its calls), and a reference to one it lost too, so a body without one needs nothing
 * more. A search for `_gw`, each found looked at.
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
 * The id the input item whose `{` is at `at` names when it is a reference, as the decoder reads
 * one (responses.ts): `"type": "item_reference"`, or no `type` and no `role` (an item of an `id`
 * alone, which OpenAI's API takes as a reference; some clients write it so); else undefined.
 */
function referencedId(body: Buffer, at: number): string | undefined {
  const members = objectMembers(body, at)?.members
  const id = members?.find((m) => m.name === 'id')
  if (!id) return undefined
  const type = members!.find((m) => m.name === 'type')
  if (
    type
      ? body.toString('latin1', type.value, type.end) !== REFERENCE
      : members!.some((m) => m.name === 'role')
  )
    return undefined
  let value: unknown
  try {
    value = JSON.parse(body.toString('utf8', id.value, id.end))
  } catch {
    return undefined
  }
  return typeof value === 'string' ? value : undefined
}

/**
 * `body` with each `item_reference` (or item of an `id` alone) of its `input` whose item `items`
 * holds replaced by that item's input items (a repeat of one already put back taken out, as the
 * decoder does), reasoning only for the server that made it (`server`, the target's; a reference
 * to that server's own reasoning item stays as it came); undefined when it names none (nothing
 * made). Each input item is looked at (its members, not parsed) only in a body that holds a
 * string of gwctl's id shape. Throws {@link ItemReferenceError} for a reference to an item gwctl
 * minted and no longer holds.
 */
export function withHeldItems(body: Buffer, items: ItemStore, server?: string): Buffer | undefined {
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
  for (const span of spans) {
    const id = referencedId(body, span.start)
    if (id === undefined) continue
    if (put.has(id)) {
      cut.add(span)
      continue
    }
    const parts = items.get(id)
    if (!parts) {
      if (mintedHere(id)) throw new ItemReferenceError(id)
      continue
    }
    // a server's reasoning item gwctl holds by that server's own id (a translated answer gives the
    // client the item as it came): to that server, as it came (it keeps what it answered); to any
    // other, put back as any held item, its reasoning left out
    if (
      !mintedHere(id) &&
      server !== undefined &&
      parts.every((p) => p.type === 'reasoning' && p.server === server)
    )
      continue
    put.add(id)
    if (parts.some((p) => p.type === 'tool_call')) customs ??= customTools(body, members)
    const written = assistantItems(parts, customs ?? [], server)
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
