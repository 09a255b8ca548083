/**
 * A chat stream's tool-call deltas without their `index`: OpenAI's streaming format numbers each
 * call of a choice (`choices[].delta.tool_calls[].index`), and a client that reassembles calls by it
 * refuses or drops a delta without one: opencode (the AI SDK's schema: "invalid input at
 * `choices[0].delta.tool_calls[0].index`: expected number, got undefined"), the `genai` crate,
 * OpenAI's Python `ChatCompletionStreamState`. Gemini's OpenAI-compatible endpoint and some relays
 * leave it out (AstrBotDevs/AstrBot #6661, CaddyGlow/ccproxy-api PR #49, router-for-me/CLIProxyAPI
 * PR #27). A chat client's stream passed through from such an upstream gets the index the gateway
 * numbers: a new call id is the next index, a delta without an id continues the call before it.
 * Only for an upstream known to leave it out (by its host, or learned from an answer: the chat tap
 * sees it), so every other stream goes byte for byte as it came.
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

/** Numbers the tool-call deltas of one stream (state across its events). */
export class ToolCallIndexer {
  private readonly choices = new Map<number, ChoiceCalls>()

  /**
   * One SSE event (`data: {...}` and its blank line) with an index on each tool-call delta that had
   * none; the same string when none lacked one (or it is no JSON chunk).
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
    if (!this.number(payload)) return text
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
