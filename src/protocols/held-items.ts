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
const QUOTE = 0x22
const BACKSLASH = 0x5c
const isHex = (c: number | undefined): boolean =>
  c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))
const isLetter = (c: number | undefined): boolean => c !== undefined && c >= 0x61 && c <= 0x7a
const isSpace = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/** Whether the quote at `at` is escaped (an odd run of backslashes before it): inside a string. */
function escaped(body: Buffer, at: number): boolean {
  let slashes = 0
  while (body[at - 1 - slashes] === BACKSLASH) slashes++
  return slashes % 2 === 1
}

/**
 * Where the name of the member whose value is the string at `quote` starts, when that name is
 * `"id"` (written plainly: an escape in it is not looked for); else undefined.
 */
function idNameBefore(body: Buffer, quote: number): number | undefined {
  let i = quote - 1
  while (isSpace(body[i])) i--
  if (body[i] !== 0x3a) return undefined
  i--
  while (isSpace(body[i])) i--
  const name = i - 3
  if (body[i] !== QUOTE || body[i - 1] !== 0x64 || body[i - 2] !== 0x69 || body[name] !== QUOTE)
    return undefined
  return escaped(body, name) ? undefined : name
}

/**
 * The `{` of the object a member whose name's quote is at `at` lies in: a scan back over that
 * object's earlier members only (a string skipped by a search back for its opening quote, the one
 * no odd run of backslashes comes before); undefined when it lies in no object.
 */
function objectStartBefore(body: Buffer, at: number): number | undefined {
  let depth = 0
  for (let i = at - 1; i >= 0; i--) {
    const c = body[i]
    if (c === QUOTE) {
      let open = i
      do {
        if (open === 0) return undefined
        open = body.lastIndexOf(QUOTE, open - 1)
      } while (open > 0 && escaped(body, open))
      if (open < 0) return undefined
      i = open
    } else if (c === 0x7d || c === 0x5d) depth++
    else if (c === 0x7b || c === 0x5b) {
      if (depth === 0) return c === 0x7b ? i : undefined
      depth--
    }
  }
  return undefined
}

/**
 * Whether `body` names by reference an id of the shape gwctl mints (responses-items.ts
 * `newItemId`, `"msg_gw` and 32 hex digits): every answer gwctl held items of has one (its
 * message, its calls), and a reference to one it lost too, so a body without one needs nothing
 * more. A search for `_gw`; of each string of that shape, only one that is the value of an `"id"`
 * has its object looked at ({@link referencedId}, found by a scan back from the id): a client that
 * sends gwctl's answers back in full (the Agents SDK's `to_input_list`, `store` on) names them by
 * an id in a full item, not a reference, and costs no walk of the body's input items.
 */
function namesMintedReference(body: Buffer): boolean {
  for (let at = body.indexOf(MARK); at !== -1; at = body.indexOf(MARK, at + 1)) {
    let start = at
    while (isLetter(body[start - 1])) start--
    if (start === at || body[start - 1] !== QUOTE || body[at + 35] !== QUOTE) continue
    let hex = at + 3
    while (hex < at + 35 && isHex(body[hex])) hex++
    if (hex < at + 35) continue
    const name = idNameBefore(body, start - 1)
    const open = name === undefined ? undefined : objectStartBefore(body, name)
    if (open !== undefined && referencedId(body, open, (n, value) => !referenceMember(body, n, value)))
      return true
  }
  return false
}

/** Whether a member's value (its bytes from `from` to `to`) is JSON `null`, which a decoder reads as absent. */
const isNull = (body: Buffer, from: number, to: number): boolean =>
  to - from === 4 && body.toString('latin1', from, to) === 'null'

/** Whether the value at `at` starts with `text`'s bytes. */
const startsWith = (body: Buffer, at: number, text: string): boolean =>
  body.toString('latin1', at, at + text.length) === text

/**
 * Whether a member of name `name`, its value at `value`, is one a reference is written with
 * ({@link namesMintedReference}): its `id`, a `type` of item_reference or null, a `role` of null.
 * An item with any other (its content, a call's arguments) is read no further; a reference
 * written with more members than those (which the decoder takes) is found only beside one that is not.
 */
const referenceMember = (body: Buffer, name: string, value: number): boolean =>
  name === 'id' ||
  (name === 'type' && (startsWith(body, value, REFERENCE) || startsWith(body, value, 'null'))) ||
  (name === 'role' && startsWith(body, value, 'null'))

/**
 * The id the input item whose `{` is at `at` names when it is a reference, as the decoder reads
 * one (responses.ts): `"type": "item_reference"`, or no `type` and no `role` (an item of an `id`
 * alone, which OpenAI's API takes as a reference; some clients write it so); a `type` or `role`
 * of `null` is none (the official SDK's `ItemReference` types its `type` as `'item_reference' |
 * null`); else undefined, and where `until` is true of a member (json-spans.ts `objectMembers`).
 */
function referencedId(
  body: Buffer,
  at: number,
  until?: (name: string, value: number) => boolean,
): string | undefined {
  const members = objectMembers(body, at, until)?.members
  const id = members?.find((m) => m.name === 'id')
  if (!id) return undefined
  const type = members!.find((m) => m.name === 'type' && !isNull(body, m.value, m.end))
  if (
    type
      ? body.toString('latin1', type.value, type.end) !== REFERENCE
      : members!.some((m) => m.name === 'role' && !isNull(body, m.value, m.end))
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

/** What {@link withHeldItems} is for besides the body. */
export interface HeldItemsFor {
  /** The target's server (targets.ts `serverOf`): the only one held reasoning of its own goes back to. */
  server?: string
  /**
   * An id of gwctl's shape a server's refusal named (proxy.ts, a `store: false` body's 400 or
   * 404): nothing is done (undefined) unless it is a reference's id in the body.
   */
  named?: string
  /** The body has `store: false`: a refusal of an id lost says to send the item itself. */
  storeOff?: boolean
}

/**
 * `body` with each `item_reference` (or item of an `id` alone) of its `input` whose item `items`
 * holds replaced by that item's input items (a repeat of one already put back taken out, as the
 * decoder does), reasoning only for the server that made it (`server`, the target's; a reference
 * to that server's own reasoning item stays as it came); undefined when it names none (nothing
 * made). Each input item is looked at (its members, not parsed) only in a body that names an id
 * of gwctl's shape by reference ({@link namesMintedReference}). Throws {@link ItemReferenceError}
 * for a reference to an item gwctl minted and no longer holds.
 */
export function withHeldItems(
  body: Buffer,
  items: ItemStore,
  {server, named, storeOff}: HeldItemsFor = {},
): Buffer | undefined {
  if (!namesMintedReference(body)) return undefined
  const members = topMembers(body)
  const input = members?.find((m) => m.name === 'input')
  const elements = input && arrayElements(body, input.value)
  if (!members || !elements?.length) return undefined
  const spans: MemberSpan[] = elements.map((e) => ({name: '', start: e.start, value: e.start, end: e.end}))
  const ids = spans.map((span) => referencedId(body, span.start))
  if (named !== undefined && !ids.includes(named)) return undefined
  const edits: Edit[] = []
  const cut = new Set<MemberSpan>()
  const put = new Set<string>()
  let customs: FunctionTool[] | undefined
  for (const [at, span] of spans.entries()) {
    const id = ids[at]
    if (id === undefined) continue
    if (put.has(id)) {
      cut.add(span)
      continue
    }
    const parts = items.get(id)
    if (!parts) {
      if (mintedHere(id)) throw new ItemReferenceError(id, storeOff)
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
