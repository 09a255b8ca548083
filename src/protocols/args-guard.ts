/**
 * A streamed tool call's arguments checked as they come, so that what a client gets adds up to
 * JSON that parses (research47 #2: Qwen3-Coder and GLM under vLLM, SGLang and llama.cpp write
 * `{'command': 'ls'}`, a trailing comma, a ```json fence, `{…}{…}`, Python's `True`; Claude
 * Code's JSON parse of such a tool_use fails the turn). Bytes pass through while they can still be
 * the start of one JSON object; a comma is held until the next token shows it is not a trailing
 * one; from the first byte that cannot be (a `'`, a fence, a `T`, `F` or `N` outside strings, text
 * after the object) the rest is held, and at the call's end {@link syntaxRepairedArguments} gives
 * the remainder to send. Nothing is invented: a call cut open by the token limit is never closed,
 * and goes on as it came.
 *
 * Cost on a valid call: one look at each byte outside strings; inside a string (a Write tool's
 * file, nearly all of its bytes) an `indexOf` for the next quote that is not escaped.
 */
import {syntaxRepairedArguments} from './conversation-rules.js'
import type {JsonSchema} from './ir.js'

const QUOTE = 34 // "
const COMMA = 44

/** Whether the backslashes right before `text[end]` (from `from` on) are an odd run. */
function oddBackslashes(text: string, from: number, end: number): boolean {
  let k = end - 1
  while (k >= from && text.charCodeAt(k) === 92) k--
  return ((end - 1 - k) & 1) === 1
}

export class ArgsGuard {
  /** Closers of the arrays and objects open, innermost last. */
  private open = ''
  private inString = false
  private escaped = false
  /** 0: before the object, 1: in it, 2: after it. */
  private where = 0
  /** Bytes held: from a comma not yet known not to be a trailing one, or from a broken byte on. */
  private held = ''
  private broken = false
  /** How many bytes went to the client. */
  private sent = 0

  /** The part of `json`, the call's next arguments, that can go to the client now. */
  feed(json: string): string {
    if (this.broken) {
      this.held += json
      return ''
    }
    let text = json
    let i = 0
    // where in `text` a held comma is (-1: none)
    let holdFrom = -1
    if (this.held) {
      text = this.held + json
      i = this.held.length
      holdFrom = 0
      this.held = ''
    }
    const n = text.length
    while (i < n) {
      if (this.inString) {
        if (this.escaped) {
          this.escaped = false
          i++
          continue
        }
        // to the next quote not escaped (an odd run of backslashes before it), at once
        let q = text.indexOf('"', i)
        while (q >= 0 && oddBackslashes(text, i, q)) q = text.indexOf('"', q + 1)
        if (q < 0) {
          this.escaped = oddBackslashes(text, i, n)
          break
        }
        this.inString = false
        i = q + 1
        continue
      }
      const c = text.charCodeAt(i)
      if (c === 32 || c === 10 || c === 13 || c === 9) {
        i++
        continue
      }
      if (holdFrom >= 0) {
        // the token after a held comma: a closer makes it a trailing one
        if (c === 125 || c === 93) return this.breakAt(text, holdFrom)
        holdFrom = -1
      }
      if (this.where !== 1 && !(this.where === 0 && (c === 123 || c === 91))) return this.breakAt(text, i)
      if (c === QUOTE) this.inString = true
      else if (c === 123 || c === 91) {
        this.open += c === 123 ? '}' : ']'
        this.where = 1
      } else if (c === 125 || c === 93) {
        if (this.open.charCodeAt(this.open.length - 1) !== c) return this.breakAt(text, i)
        this.open = this.open.slice(0, -1)
        if (!this.open) this.where = 2
      } else if (c === COMMA) holdFrom = i
      // a `'`, a fence; Python's `True`, `False`, `None` (no JSON token starts with T, F or N)
      else if (c === 39 || c === 96 || c === 84 || c === 70 || c === 78) return this.breakAt(text, i)
      i++
    }
    if (holdFrom < 0) {
      this.sent += n
      return text
    }
    this.held = text.slice(holdFrom)
    this.sent += holdFrom
    return text.slice(0, holdFrom)
  }

  /** Broken at `text[at]`: what came before goes out, the rest is held to the end. */
  private breakAt(text: string, at: number): string {
    this.broken = true
    this.held = text.slice(at)
    this.sent += at
    return text.slice(0, at)
  }

  /**
   * At the call's end, with its whole arguments: what is left to send. Arguments that broke and
   * whose syntax repair starts with what was sent: the repair's remainder (`repaired` true);
   * otherwise what was held, as it came (the client's parse fails as it would have: nothing
   * sent can be taken back, and nothing is invented). `raw`, asked only where the arguments
   * broke: they are free text to pass on whole (a custom tool's input), never repaired.
   */
  finish(
    all: string,
    schema?: () => JsonSchema | undefined,
    raw?: () => boolean,
  ): {json: string; repaired: boolean} {
    const held = this.held
    this.held = ''
    if (!this.broken || raw?.()) return {json: held, repaired: false}
    const sent = all.slice(0, this.sent)
    // (whitespace around what was sent is no matter to JSON)
    const head = sent.trim()
    const fixed = syntaxRepairedArguments(all, schema)
    if (fixed !== undefined && fixed.startsWith(head)) return {json: fixed.slice(head.length), repaired: true}
    return {json: held, repaired: false}
  }
}
