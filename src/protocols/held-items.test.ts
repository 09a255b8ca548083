/**
 * The rewrite of a Responses body passed through (held-items.ts): which items it takes for
 * references, as the decoder does, and that a body naming gwctl's ids only in full items (the
 * Agents SDK's `to_input_list`, `store` on) has none of its input items walked. Bytes in, bytes out.
 */
import {afterEach, describe, expect, it, vi} from 'vitest'

import {BoundedItems} from './carry.js'
import {withHeldItems} from './held-items.js'
import * as spans from './json-spans.js'
import {ItemReferenceError} from './responses.js'

// (the walk of the input items starts with their spans: counted)
vi.mock('./json-spans.js', async (importOriginal) => {
  const original = await importOriginal<typeof spans>()
  return {...original, arrayElements: vi.fn(original.arrayElements)}
})

afterEach(() => {
  vi.mocked(spans.arrayElements).mockClear()
})

/** An id as gwctl mints one (responses-items.ts `newItemId`). */
const gwId = (prefix: string, n: number) => `${prefix}_gw${String(n).padStart(32, '0')}`
const HELD = gwId('msg', 1)
const LOST = gwId('msg', 2)
const held = () => {
  const items = new BoundedItems()
  items.set(HELD, [{type: 'text', text: 'Held.'}], 8)
  return items
}
const PUT_BACK = '{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Held."}]}'
const USER = '{"role":"user","content":"a"}'
const body = (...input: string[]) => Buffer.from(`{"model":"m","input":[${USER},${input.join(',')}]}`)

describe('a reference, as the decoder reads one', () => {
  it.each([
    ['typed', `{"type":"item_reference","id":"${HELD}"}`],
    ['an id alone', `{"id":"${HELD}"}`],
    [
      "a null type (the SDK's ItemReference types it `'item_reference' | null`)",
      `{"type":null,"id":"${HELD}"}`,
    ],
    ['a null type after the id, spaced', `{ "id" : "${HELD}" , "type" : null }`],
    ['a null role', `{"role":null,"id":"${HELD}"}`],
    ['typed, spaced over lines', `{\n  "type" : "item_reference",\n  "id" : "${HELD}"\n}`],
  ])('%s: put back', (_name, reference) => {
    expect(withHeldItems(body(reference), held())?.toString()).toBe(body(PUT_BACK).toString())
  })

  it.each([
    ['typed', `{"type":"item_reference","id":"${LOST}"}`],
    ['a null type', `{"type":null,"id":"${LOST}"}`],
  ])('%s, lost: refused', (_name, reference) => {
    expect(() => withHeldItems(body(reference), held())).toThrow(ItemReferenceError)
  })

  it('typed, with a member a reference is not written with: put back beside a plain reference, not alone', () => {
    // (the decoder takes it; the look before the walk does not: no client writes one so)
    const odd = `{"type":"item_reference","note":"a \\"}{\\\\\\" [","id":"${HELD}"}`
    expect(withHeldItems(body(odd), held())).toBeUndefined()
    const plain = `{"id":"${gwId('msg', 7)}"}`
    const items = held()
    items.set(gwId('msg', 7), [{type: 'text', text: 'Seven.'}], 8)
    const seven = PUT_BACK.replace('Held.', 'Seven.')
    expect(withHeldItems(body(odd, plain), items)?.toString()).toBe(body(PUT_BACK, seven).toString())
  })

  it('a null type and a role: a message, not a reference', () => {
    const message = `{"type":null,"role":"assistant","id":"${HELD}","content":"x"}`
    expect(withHeldItems(body(message), held())).toBeUndefined()
  })
})

describe("gwctl's ids in full items, not references", () => {
  const CONTENT = '"content":[{"type":"output_text","text":"{\\"id\\": \\"x\\"} ] }","annotations":[]}]'
  it.each([
    ['the id first (the Agents SDK)', `{"id":"${HELD}","type":"message","role":"assistant",${CONTENT}}`],
    ['the id last, after its content', `{"type":"message","role":"assistant",${CONTENT},"id":"${HELD}"}`],
    [
      'a call',
      `{"type":"function_call","id":"${gwId('fc', 3)}","call_id":"call_1","name":"f","arguments":"{}"}`,
    ],
    ['a reasoning item', `{"type":"reasoning","id":"${gwId('rs', 4)}","summary":[]}`],
  ])('%s: nothing made, no input item walked', (_name, item) => {
    expect(withHeldItems(body(item, '{"role":"user","content":"b"}'), held())).toBeUndefined()
    expect(spans.arrayElements).not.toHaveBeenCalled()
  })

  it('beside a reference: the reference put back, the full item as it came', () => {
    const item = `{"type":"message","role":"assistant",${CONTENT},"id":"${gwId('msg', 5)}"}`
    const out = withHeldItems(body(item, `{"type":"item_reference","id":"${HELD}"}`), held())
    expect(out?.toString()).toBe(body(item, PUT_BACK).toString())
  })
})

describe('named: a server refused an id of gwctl shape (a store: false body)', () => {
  const full = `{"type":"reasoning","id":"${gwId('rs', 6)}","summary":[],"encrypted_content":"x"}`
  const reference = (id: string) => `{"type":"item_reference","id":"${id}"}`

  it("an id of a full item: nothing made, whatever the body's references", () => {
    for (const id of [HELD, LOST])
      expect(withHeldItems(body(full, reference(id)), held(), {named: gwId('rs', 6)})).toBeUndefined()
  })

  it("a reference's id: put back, or refused with the advice for store: false", () => {
    const out = withHeldItems(body(full, reference(HELD)), held(), {named: HELD})
    expect(out?.toString()).toBe(body(full, PUT_BACK).toString())
    let refused: unknown
    try {
      withHeldItems(body(reference(LOST)), held(), {named: LOST, storeOff: true})
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(ItemReferenceError)
    expect((refused as Error).message).toMatch(/send the item itself, not a reference/)
    expect((refused as Error).message).not.toMatch(/as Codex does/)
  })
})
