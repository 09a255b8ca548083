/**
 * A chat stream's tool-call deltas as the clients that reassemble them need them, written on the
 * way for an upstream known to stream them otherwise (by its host, or learned from an answer: the
 * chat tap sees it), so every other stream goes byte for byte as it came.
 *
 * - **Their `index`.** OpenAI's streaming format numbers each call of a choice
 *   (`choices[].delta.tool_calls[].index`), and a client that reassembles calls by it refuses or
 *   drops a delta without one: opencode (the AI SDK's schema: "invalid input at
 *   `choices[0].delta.tool_calls[0].index`: expected number, got undefined"), the `genai` crate,
 *   OpenAI's Python `ChatCompletionStreamState`. Gemini's OpenAI-compatible endpoint and some
 *   relays leave it out (AstrBotDevs/AstrBot #6661, CaddyGlow/ccproxy-api PR #49,
 *   router-for-me/CLIProxyAPI PR #27). The gateway numbers them: a new call id is the next index,
 *   a delta without an id continues the call before it.
 * - **Their `id`, and the delta's `role`.** The AI SDK's OpenAI-compatible provider (opencode,
 *   Kilo) ends the turn on the first delta of a new call without a string `id` ("Expected 'id' to
 *   be a string.") and on a `role` that is not `"assistant"` (its schema: `"role": ""`). GLM, Kimi,
 *   NVIDIA NIM, vLLM's gpt-oss and some relays stream them so (anomalyco/opencode PR #12585 and
 *   #28427, OmniRoute #8316). The gateway writes `call_<chunk id>_<choice>_<index>` for a call
 *   opened without one (the answer's request id where the chunk has none; the client keeps the
 *   id and sends it back as it got it, so the prompt cache holds), a number id as its string, and
 *   the first such role of a choice as `"assistant"` (OpenAI's first delta), the later ones left
 *   out (OpenAI sends none).
 */

/** Gemini's OpenAI-compatible chat completions (`.../v1beta/openai/`), which number no call. */
export function omitsToolCallIndex(baseUrl: string): boolean {
  return /^https:\/\/generativelanguage\.googleapis\.com\/[^?#]*\/openai(?:[/?#]|$)/i.test(baseUrl)
}

import {endsWithBrace, isCompleteJson} from '../../protocols/json-bytes.js'

type Json = Record<string, unknown>

/** Per choice of a stream: what its calls so far tell the next delta's index. */
interface ChoiceCalls {
  /** The index of each call id. */
  ids: Map<string, number>
  /** The index of the last call a delta went to, and whether that call has a name. */
  last?: number
  named: boolean
  /** The last call's arguments so far (for a delta without id or index that names the next). */
  args: string
  /**
   * The server names the call again on its later deltas (a relay that copies the name onto every
   * one): a named delta without arguments then goes on with the call before it.
   */
  repeatsName: boolean
  /** The next index free. */
  next: number
}

/** Whether a call's arguments are one whole JSON value (they can take no more), as the chat decoder reads it. */
const wholeJson = (text: string): boolean => endsWithBrace(text) && isCompleteJson(text)

/** What a stream's {@link ToolCallNormaliser} writes. */
export interface ToolCallFixes {
  /** Each tool-call delta's `index`, where one is left out. */
  index?: boolean
  /** A call's `id` where its first delta has none (or a number), and the delta's `role` where it is not `"assistant"`. */
  ids?: boolean
  /** The id of the call's chunk where the chunk has none (the gateway's request id: unique to the answer). */
  stream?: string
}

/** Per choice of a stream: the calls opened so far, and whether its role was sent. */
interface ChoiceIds {
  opened: Set<number>
  roled: boolean
}

const TOOL_CALLS = '"tool_calls"'
const ROLE = '"role"'

/** Writes the tool-call deltas of one stream as OpenAI streams them (state across its events). */
export class ToolCallNormaliser {
  private readonly choices = new Map<number, ChoiceCalls>()
  private readonly named = new Map<number, ChoiceIds>()

  constructor(private readonly fix: ToolCallFixes) {}

  /**
   * Where in `text`, from `from`, the next thing is that an event must hold to be read (`"tool_calls"`,
   * and with `ids` `"role"`); -1 when none: an event without it goes as it came, unparsed.
   */
  mark(text: string, from = 0): number {
    if (!this.fix.ids) return text.indexOf(TOOL_CALLS, from)
    // each needle searched again only once the events passed it, a miss kept for the rest of the
    // text: a chunk with a role in every event and no tool call is read once, not once an event
    if (from === 0 || text !== this.marked) {
      this.marked = text
      this.calls = text.indexOf(TOOL_CALLS, from)
      this.role = text.indexOf(ROLE, from)
    } else {
      if (this.calls !== -1 && this.calls < from) this.calls = text.indexOf(TOOL_CALLS, from)
      if (this.role !== -1 && this.role < from) this.role = text.indexOf(ROLE, from)
    }
    const {calls, role} = this
    return calls === -1 ? role : role === -1 ? calls : Math.min(calls, role)
  }
  /** The text {@link mark} searched last, and where its needles are next (-1: none after). */
  private marked?: string
  private calls = -1
  private role = -1

  /**
   * One SSE event (`data: {...}` and its blank line) with its tool-call deltas written as OpenAI
   * writes them; the same string when none needed it (or it is no JSON chunk).
   */
  event(text: string): string {
    const lines = text.split(/\r\n|\n|\r/)
    let data = ''
    let count = 0
    for (const line of lines)
      if (line.startsWith('data:')) data += (count++ === 0 ? '' : '\n') + line.slice(5).replace(/^ /, '')
    if (count === 0 || data[0] !== '{') return text
    let payload: Json
    try {
      payload = JSON.parse(data) as Json
    } catch {
      return text
    }
    // (both: the index first, so that the ids go by it)
    const numbered = this.fix.index === true && this.number(payload)
    const named = this.fix.ids === true && this.name(payload)
    if (!numbered && !named) return text
    const json = JSON.stringify(payload)
    let placed = false
    const out: string[] = []
    for (const line of lines) {
      if (!line.startsWith('data:')) out.push(line)
      else if (!placed) {
        placed = true
        out.push(`data: ${json}`)
      }
    }
    return out.join('\n')
  }

  /**
   * Gives each call of `payload` opened without a usable id one, a number id its string, and a
   * delta's role that is not `"assistant"` OpenAI's (in place); true when any.
   */
  private name(payload: Json): boolean {
    const choices = payload.choices
    if (!Array.isArray(choices)) return false
    const chunk =
      typeof payload.id === 'string' && payload.id !== ''
        ? payload.id
        : typeof payload.id === 'number'
          ? String(payload.id)
          : (this.fix.stream ?? 'x')
    let changed = false
    for (const choice of choices as Array<Json | null>) {
      const delta = choice?.delta as Json | undefined
      if (delta === null || typeof delta !== 'object') continue
      const at = typeof choice!.index === 'number' ? choice!.index : 0
      let state = this.named.get(at)
      if (!state) this.named.set(at, (state = {opened: new Set(), roled: false}))
      if (typeof delta.role === 'string' && delta.role !== 'assistant') {
        // the first as OpenAI's first delta has it (in its place), later ones left out as OpenAI does
        if (state.roled) delete delta.role
        else delta.role = 'assistant'
        changed = true
      }
      if (delta.role === 'assistant') state.roled = true
      const calls = delta.tool_calls
      if (!Array.isArray(calls)) continue
      for (let i = 0; i < calls.length; i++) {
        const call = calls[i] as Json | null
        // (a call without an index cannot be told opened or not: left as it came)
        if (call === null || typeof call !== 'object' || typeof call.index !== 'number') continue
        const opens = !state.opened.has(call.index)
        state.opened.add(call.index)
        let id: string | undefined
        if (typeof call.id === 'number') id = String(call.id)
        else if (opens && !(typeof call.id === 'string' && call.id !== ''))
          id = `call_${chunk}_${at}_${call.index}`
        if (id === undefined) continue
        // right after the index, where OpenAI writes it; the rest in the order it came
        const written: Json = {}
        for (const key in call) {
          if (key === 'id') continue
          written[key] = call[key]
          if (key === 'index') written.id = id
        }
        calls[i] = written
        changed = true
      }
    }
    return changed
  }

  /** Gives each tool-call delta of `payload` without an index one (in place); true when any. */
  private number(payload: Json): boolean {
    const choices = payload.choices
    if (!Array.isArray(choices)) return false
    let changed = false
    for (const choice of choices as Array<Json | null>) {
      const delta = choice?.delta as Json | undefined
      const calls = delta?.tool_calls
      if (!Array.isArray(calls)) continue
      const at = typeof choice!.index === 'number' ? choice!.index : 0
      let state = this.choices.get(at)
      if (!state)
        this.choices.set(at, (state = {ids: new Map(), named: false, args: '', repeatsName: false, next: 0}))
      for (let i = 0; i < calls.length; i++) {
        const call = calls[i] as Json | null
        if (call === null || typeof call !== 'object') continue
        const id = typeof call.id === 'string' && call.id !== '' ? call.id : undefined
        const fn = call.function as Json | undefined
        const name = typeof fn?.name === 'string' && fn.name !== '' ? fn.name : undefined
        const args = typeof fn?.arguments === 'string' ? fn.arguments : ''
        let index: number
        if (typeof call.index === 'number') index = call.index
        else {
          // a call id: its own index; none: the call before it goes on, unless this is another
          // entry of the same delta, or names a call where the one before has a name and
          // arguments that can take no more (a relay's `"id": ""` on every call), but for a
          // server that names the call on every delta, a named one with no arguments
          const next =
            id !== undefined
              ? !state.ids.has(id)
              : state.last === undefined ||
                i > 0 ||
                (name !== undefined &&
                  state.named &&
                  wholeJson(state.args) &&
                  !(state.repeatsName && args === ''))
          if (id === undefined && !next && name !== undefined && state.named) state.repeatsName = true
          index = id !== undefined && !next ? state.ids.get(id)! : next ? state.next : state.last!
          // (the index first, where OpenAI writes it; a `null` one replaced)
          const {index: _, ...rest} = call
          calls[i] = {index, ...rest}
          changed = true
        }
        if (id !== undefined && !state.ids.has(id)) state.ids.set(id, index)
        if (index !== state.last) {
          state.named = false
          state.args = ''
        }
        state.last = index
        if (name !== undefined) state.named = true
        state.args += args
        if (index >= state.next) state.next = index + 1
      }
    }
    return changed
  }
}
