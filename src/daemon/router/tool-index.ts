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
 * - **Their `finish_reason`.** The AI SDK maps any finish but OpenAI's five, none included, to
 *   `unknown`, and opencode's step loop goes on after an `unknown` finish without a tool call: a
 *   request storm (anomalyco/opencode #49414). GLM on DashScope or NVIDIA NIM, Qwen previews and
 *   Groq's Kimi end answers without one; Z.ai says `sensitive`, `network_error` and
 *   `model_context_window_exceeded`, vLLM `abort`, DeepSeek `insufficient_system_resource`,
 *   OpenRouter `error`. The gateway writes a vendor's finish as OpenAI's (`sensitive` as
 *   `content_filter`, the window's end as `length`, a finish that says the answer broke off as an
 *   error event in its place), and a choice without one gets one before the usage chunk or
 *   `[DONE]`: `tool_calls` when it opened a call, else `stop`.
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

/** The `finish_reason`s of OpenAI's chat streams, all the AI SDK maps to one of its own. */
export const OPENAI_FINISH: ReadonlySet<string> = new Set([
  'stop',
  'length',
  'tool_calls',
  'content_filter',
  'function_call',
])

/**
 * OpenAI's finish for a vendor's (as protocols/chat-stream.ts `chatFinish` reads it for a
 * translated answer; not imported: that module is the translation's, loaded only for one):
 * Z.ai's filter and its context window's end; any other the choice's own end.
 */
const VENDOR_FINISH: Readonly<Record<string, string>> = {
  sensitive: 'content_filter',
  model_context_window_exceeded: 'length',
}

/**
 * The finishes that say the answer broke off rather than ended (chat-stream.ts `brokenFinish`):
 * OpenRouter's `error`, vLLM's `abort`, DeepSeek's `insufficient_system_resource`, Z.ai's
 * `network_error`. Written as an error event, as a translated answer ends with one.
 */
const BROKEN_FINISH: ReadonlySet<string> = new Set([
  'error',
  'abort',
  'insufficient_system_resource',
  'network_error',
])

/** What a stream's {@link ToolCallNormaliser} writes. */
export interface ToolCallFixes {
  /** Each tool-call delta's `index`, where one is left out. */
  index?: boolean
  /** A call's `id` where its first delta has none (or a number), and the delta's `role` where it is not `"assistant"`. */
  ids?: boolean
  /** A choice's `finish_reason` as OpenAI's: a vendor's mapped, a missing one written before the usage chunk or `[DONE]`. */
  finish?: boolean
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
const FINISH = '"finish_reason"'
const CHOICES = '"choices"'
const DONE = '[DONE]'
const ERROR = '"error"'

/** Where the value of the member whose key ends at `at` starts in `text` (after `:` and blanks). */
function valueAt(text: string, at: number): number {
  let i = at
  while (i < text.length && ' \t\n\r:'.includes(text[i])) i++
  return i
}

/** The next `"finish_reason"` in `text` from `from` whose value is neither `null` nor `""` (a finish); -1: none. */
function finishAt(text: string, from: number): number {
  for (let at = text.indexOf(FINISH, from); at !== -1; at = text.indexOf(FINISH, from)) {
    const value = valueAt(text, at + FINISH.length)
    if (!text.startsWith('null', value) && !text.startsWith('""', value)) return at
    from = value
  }
  return -1
}

/** The next `"choices": []` in `text` from `from` (a usage chunk's); -1: none. */
function noChoicesAt(text: string, from: number): number {
  for (let at = text.indexOf(CHOICES, from); at !== -1; at = text.indexOf(CHOICES, from)) {
    const open = valueAt(text, at + CHOICES.length)
    if (text[open] === '[' && text[valueAt(text, open + 1)] === ']') return at
    from = open
  }
  return -1
}

/** Per stream: what the finish written needs (fix `finish`). */
interface Finishes {
  /** The first chunk's with choices `id`, `created` and `model`, for a finish chunk written. */
  head?: Json
  /** The upstream's own error event came: the answer ended with it, no finish is written after it. */
  errored?: boolean
  /** The choices seen, those that opened a tool call, those finished. */
  seen: Set<number>
  called: Set<number>
  finished: Set<number>
}

/** A chunk whose choices carry no delta (or an empty one) and no usage, nor the chunk. */
function holdsNothing(payload: Json): boolean {
  if (payload.usage !== null && typeof payload.usage === 'object') return false
  for (const choice of payload.choices as Array<Json | null>) {
    if (choice === null || typeof choice !== 'object') continue
    if (choice.usage !== null && typeof choice.usage === 'object') return false
    const delta = choice.delta
    if (delta !== null && typeof delta === 'object' && Object.keys(delta).length > 0) return false
  }
  return true
}

/** Writes the tool-call deltas (and finishes) of one stream as OpenAI streams them (state across its events). */
export class ToolCallNormaliser {
  private readonly choices = new Map<number, ChoiceCalls>()
  private readonly named = new Map<number, ChoiceIds>()
  private readonly finishes?: Finishes
  /** What an event must hold to be read: each needle's search. */
  private readonly needles: Array<(text: string, from: number) => number>
  /**
   * The message of the error event written for a finish that says the answer broke off (the
   * first): the log row says the stream ended with it.
   */
  stoppedWith?: string

  constructor(private readonly fix: ToolCallFixes) {
    this.needles = [(text, from) => text.indexOf(TOOL_CALLS, from)]
    if (fix.ids) this.needles.push((text, from) => text.indexOf(ROLE, from))
    if (fix.finish) {
      this.finishes = {seen: new Set(), called: new Set(), finished: new Set()}
      this.needles.push(
        finishAt,
        noChoicesAt,
        (text, from) => text.indexOf(DONE, from),
        (text, from) => text.indexOf(ERROR, from),
      )
    }
    this.at = this.needles.map(() => -1)
  }

  /**
   * Where in `text`, from `from`, the next thing is that an event must hold to be read (`"tool_calls"`;
   * with `ids` `"role"`; with `finish` a `finish_reason` that is neither null nor `""`, a usage
   * chunk's `"choices": []`, `[DONE]`, and every event until the first chunk was read); -1 when
   * none: an event without it goes as it came, unparsed.
   */
  mark(text: string, from = 0): number {
    // (the first chunk's id, created and model, for a finish written)
    if (this.finishes && !this.finishes.head) return from
    if (this.needles.length === 1) return text.indexOf(TOOL_CALLS, from)
    // each needle searched again only once the events passed it, a miss kept for the rest of the
    // text: a chunk with a role in every event and no tool call is read once, not once an event
    const {at, needles} = this
    if (from === 0 || text !== this.marked) {
      this.marked = text
      for (let i = 0; i < needles.length; i++) at[i] = needles[i](text, from)
    } else
      for (let i = 0; i < needles.length; i++)
        if (at[i] !== -1 && at[i] < from) at[i] = needles[i](text, from)
    let next = -1
    for (const found of at) if (found !== -1 && (next === -1 || found < next)) next = found
    return next
  }
  /** The text {@link mark} searched last, and where each needle is next in it (-1: none after). */
  private marked?: string
  private readonly at: number[]

  /**
   * One SSE event (`data: {...}` and its blank line) with its tool-call deltas (and finishes)
   * written as OpenAI writes them, a finish chunk before it where one is missing; the same string
   * when none needed it (or it is no JSON chunk).
   */
  event(text: string): string {
    const lines = text.split(/\r\n|\n|\r/)
    let data = ''
    let count = 0
    for (const line of lines)
      if (line.startsWith('data:')) data += (count++ === 0 ? '' : '\n') + line.slice(5).replace(/^ /, '')
    if (count === 0) return text
    if (data === DONE) return this.finishes ? this.unfinished() + text : text
    if (data[0] !== '{') return text
    let payload: Json
    try {
      payload = JSON.parse(data) as Json
    } catch {
      return text
    }
    // (both: the index first, so that the ids go by it)
    const numbered = this.fix.index === true && this.number(payload)
    const named = this.fix.ids === true && this.name(payload)
    const finished = this.finishes ? this.finish(payload) : undefined
    const before = finished?.before ?? ''
    if (!numbered && !named && !finished?.changed) return before + text
    const after = finished?.after ?? ''
    // a chunk that held nothing but a finish that says the answer broke off: the error event in its place
    if (after !== '' && holdsNothing(payload)) return before + after
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
    const written = out.join('\n')
    return before + written + (after === '' || /(?:\n\n|\r\r)$/.test(written) ? '' : '\n\n') + after
  }

  /**
   * Notes the choices of `payload`, their calls and finishes, and writes a vendor's finish as
   * OpenAI's (in place; `changed`); `before`: the finish chunks of the choices without one, for a
   * usage chunk (`"choices": []`); `after`: the error event of a finish that says the answer broke
   * off.
   */
  private finish(payload: Json): {changed: boolean; before: string; after: string} {
    const f = this.finishes!
    const choices = payload.choices
    // the upstream's own error event (OpenRouter's beside its `finish_reason: "error"`, a bare
    // `{"error": ...}`): the answer ends with it, as the AI SDK reads it; nothing is written after
    if (payload.error !== undefined && payload.error !== null) {
      f.errored = true
      return {changed: false, before: '', after: ''}
    }
    if (!Array.isArray(choices)) return {changed: false, before: '', after: ''}
    if (choices.length === 0)
      // a usage chunk after the choices (not Azure's first chunk of `prompt_filter_results`, nor a
      // relay's heartbeat): the finishes that did not come go before it
      return {
        changed: false,
        before:
          payload.usage !== null && typeof payload.usage === 'object' && f.seen.size > 0
            ? this.unfinished()
            : '',
        after: '',
      }
    f.head ??= {
      ...(payload.id === undefined ? {} : {id: payload.id}),
      object: 'chat.completion.chunk',
      ...(payload.created === undefined ? {} : {created: payload.created}),
      ...(payload.model === undefined ? {} : {model: payload.model}),
    }
    let changed = false
    let after = ''
    for (const choice of choices as Array<Json | null>) {
      if (choice === null || typeof choice !== 'object') continue
      const at = typeof choice.index === 'number' ? choice.index : 0
      f.seen.add(at)
      const calls = (choice.delta as Json | null | undefined)?.tool_calls
      if (Array.isArray(calls) && calls.length > 0) f.called.add(at)
      const reason = choice.finish_reason
      if (typeof reason !== 'string' || reason === '') continue
      f.finished.add(at)
      if (OPENAI_FINISH.has(reason)) continue
      changed = true
      if (BROKEN_FINISH.has(reason)) {
        // (the stream's first such: one error event; the AI SDK ends the step with `error`)
        choice.finish_reason = null
        if (this.stoppedWith !== undefined) continue
        const message = `upstream stopped the answer: finish_reason ${reason}`
        this.stoppedWith = message
        after += `data: ${JSON.stringify({error: {message, type: 'upstream_error', code: reason}})}\n\n`
      } else choice.finish_reason = VENDOR_FINISH[reason] ?? (f.called.has(at) ? 'tool_calls' : 'stop')
    }
    return {changed, before: '', after}
  }

  /**
   * The finish chunks of the choices seen without one (choice 0 when none was seen): `tool_calls`
   * where the choice opened a call, else `stop`, with the stream's own id, created and model.
   */
  private unfinished(): string {
    const f = this.finishes!
    if (f.errored) return ''
    let out = ''
    for (const at of f.seen.size === 0 ? [0] : f.seen) {
      if (f.finished.has(at)) continue
      f.finished.add(at)
      const finish = f.called.has(at) ? 'tool_calls' : 'stop'
      out += `data: ${JSON.stringify({...f.head, choices: [{index: at, delta: {}, finish_reason: finish}]})}\n\n`
    }
    return out
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
