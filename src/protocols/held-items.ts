/**
 * A Responses body that goes to a Responses server as it came (not translated) may name, by
 * `item_reference`, items gwctl minted on its translated answers (carry.ts `BoundedItems`): the AI
 * SDK with `store` on sends every earlier answer so, and a route whose translated target answered
 * some turns and a Responses target passed through others has both kinds in one conversation. That
 * server never saw gwctl's ids (OpenAI: "Item with id … not found"): each reference gwctl holds
 * goes as the items themselves, written as the Responses encoder writes an assistant turn, and a
 * reference to the server's own items stays as it came. Loaded only for such a body.
 */
import type {ItemStore, Part} from './ir.js'
import {encodeRequest} from './responses-request.js'

type Json = Record<string, unknown>
const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v)

/** The Responses input items of an assistant turn of `parts` (another vendor's reasoning left out). */
function assistantItems(parts: Part[]): unknown[] {
  const request = {
    model: null,
    system: [],
    messages: [{role: 'assistant' as const, parts}],
    tools: [],
    stream: false,
  }
  return encodeRequest(request, '').input as unknown[]
}

/**
 * Replaces, in `body.input` (in place), each `item_reference` whose item `items` holds with that
 * item's input items (a repeat of one already put back left out, as the decoder does). True when
 * anything was replaced.
 */
export function expandHeldItems(body: Json, items: ItemStore): boolean {
  if (!Array.isArray(body.input)) return false
  const out: unknown[] = []
  const put = new Set<string>()
  for (const item of body.input) {
    const id =
      isObj(item) && item.type === 'item_reference' && typeof item.id === 'string' ? item.id : undefined
    const parts = id === undefined || put.has(id) ? undefined : items.get(id)
    if (id !== undefined && (parts || put.has(id))) {
      if (parts) out.push(...assistantItems(parts))
      put.add(id)
    } else out.push(item)
  }
  if (put.size === 0) return false
  body.input = out
  return true
}
