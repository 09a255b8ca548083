/**
 * The gateway's memory of opaque turn-2 state for clients whose protocol has no field to carry it
 * (a chat client given an Anthropic thinking signature, a Gemini client whose CLI drops thought
 * parts from its history): kept by tool-call id, bounded, lost on restart. A lookup that misses
 * degrades to dropping the reasoning (the upstream's encoder then sends none), never to a 400.
 *
 * Beside it, {@link BoundedItems}: the items of the answers gwctl wrote for a Responses client,
 * by the ids it minted, for that client's `item_reference`s (responses.ts `referencedParts`).
 */
import type {CarryStore, ItemStore, Part} from './ir.js'

/** A least-recently-set map of at most `maxEntries` keys and about `maxBytes` of text. */
class BoundedParts {
  protected readonly map = new Map<string, {parts: Part[]; bytes: number}>()
  private bytes = 0

  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
  ) {}

  get(key: string): Part[] | undefined {
    return this.map.get(key)?.parts
  }

  protected put(key: string, parts: Part[], bytes: number): void {
    const old = this.map.get(key)
    if (old) {
      this.bytes -= old.bytes
      this.map.delete(key)
    }
    if (bytes > this.maxBytes) return
    this.map.set(key, {parts, bytes})
    this.bytes += bytes
    for (const [k, v] of this.map) {
      if (this.map.size <= this.maxEntries && this.bytes <= this.maxBytes) break
      this.map.delete(k)
      this.bytes -= v.bytes
    }
  }

  get size(): number {
    return this.map.size
  }
}

/**
 * The items of gwctl's answers to Responses clients (a message's text, a reasoning item with its
 * opaque state, a function call, a web search), by item id: at most `maxEntries` and about
 * `maxBytes`, the least recently set or read dropped first (a conversation's earliest answer is
 * referenced on every turn, so a read keeps it). The size is the caller's estimate: the encoder
 * keeps a reference to parts it already made, and serialises nothing to measure them.
 */
export class BoundedItems extends BoundedParts implements ItemStore {
  constructor(maxEntries = 50_000, maxBytes = 64 * 1024 * 1024) {
    super(maxEntries, maxBytes)
  }

  override get(id: string): Part[] | undefined {
    const entry = this.map.get(id)
    if (!entry) return undefined
    // (read: the newest again)
    this.map.delete(id)
    this.map.set(id, entry)
    return entry.parts
  }

  set(id: string, parts: Part[], bytes: number): void {
    this.put(id, parts, id.length + bytes)
  }
}

/** Reasoning carried by tool-call id; its {@link items} the Responses answers' items. */
export class BoundedCarry extends BoundedParts implements CarryStore {
  /** The items of answers to Responses clients (one per daemon, with the carry it travels in). */
  readonly items: ItemStore

  constructor(maxEntries = 20_000, maxBytes = 64 * 1024 * 1024, items: ItemStore = new BoundedItems()) {
    super(maxEntries, maxBytes)
    this.items = items
  }

  set(key: string, parts: Part[]): void {
    this.put(key, parts, key.length + JSON.stringify(parts).length)
  }
}
