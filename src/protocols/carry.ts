/**
 * The gateway's memory of opaque turn-2 state for clients whose protocol has no field to carry it
 * (a chat client given an Anthropic thinking signature, a Gemini client whose CLI drops thought
 * parts from its history): kept by tool-call id, bounded, lost on restart. A lookup that misses
 * degrades to dropping the reasoning (the upstream's encoder then sends none), never to a 400.
 */
import type {CarryStore, Part} from './ir.js'

/** A least-recently-set map of at most `maxEntries` keys and about `maxBytes` of text. */
export class BoundedCarry implements CarryStore {
  private readonly map = new Map<string, {parts: Part[]; bytes: number}>()
  private bytes = 0

  constructor(
    private readonly maxEntries = 20_000,
    private readonly maxBytes = 64 * 1024 * 1024,
  ) {}

  get(key: string): Part[] | undefined {
    return this.map.get(key)?.parts
  }

  set(key: string, parts: Part[]): void {
    const old = this.map.get(key)
    if (old) {
      this.bytes -= old.bytes
      this.map.delete(key)
    }
    const bytes = key.length + JSON.stringify(parts).length
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
