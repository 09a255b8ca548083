/**
 * Small helpers shared by the chat and messages codecs: reading untyped JSON, ids, data URLs,
 * effort and budget, and the carry rule (see `ir.ts` and the codec brief).
 */
import {hash, randomInt, randomUUID} from 'node:crypto'

import type {
  CarryStore,
  CodecContext,
  Effort,
  Family,
  JsonSchema,
  Message,
  Part,
  ReasoningPart,
  Request,
  TextPart,
  ToolCallPart,
} from './ir.js'
import {carriedId, TranslationError} from './ir.js'
import {isParameterForm, syntaxRepairedArguments} from './conversation-rules.js'

export type Json = Record<string, unknown>

export const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)
export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
export const num = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? v : undefined
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
/**
 * A sampling `top_k` carried to another family: a whole number of at least 1 (vLLM's -1 and 0 mean
 * "off", which Claude and Gemini refuse; Gemini takes no fraction); undefined for any other.
 */
export const topKOf = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : undefined

/** `ctx.newId` or a random id of our own. */
export function makeId(ctx: CodecContext | undefined, prefix: string): string {
  return ctx?.newId?.(prefix) ?? prefix + randomUUID().replace(/-/g, '').slice(0, 24)
}

/**
 * An id that names a call's place, not the call: Kimi's `{tool name}:{N}` (`Bash:0`,
 * `functions.Bash:0`), N its position in the answer, from 0 on every turn (NVIDIA NIM, Fireworks,
 * vLLM's and SGLang's Kimi parsers), or in the history the client sent (SGLang's, which a windowed
 * history makes count again); or digits alone (`0`: a counter, not an id). Such an id is given
 * again in its shape with a number of the gateway's own (`functions.Bash:1000417`).
 */
const POSITIONAL_CALL_ID = /(?:^|:)\d+$/

/**
 * The id a client is given for a tool call of a chat upstream's answer that came with `id`: that
 * id, unless it cannot be trusted to be unique in the client's conversation, then one of our own
 * (`call_…`). It cannot be when it is missing, when an earlier call of the same answer came with
 * it (`repeated`), when it has a positional shape ({@link POSITIONAL_CALL_ID}), or when the
 * request's history already has a call or a result of that id (`ctx.historyCallIds`). Kimi K3's
 * `Bash:0` comes again on the next turn with other arguments: Claude Code then takes the call
 * for one it has answered ("Tool Call Interrupted", or a loop), Anthropic refuses the history
 * ("tool_use ids must be unique"), and what the gateway carries by call id (./carry.ts) is
 * overwritten. A chat upstream takes any id back on the next turn, so the client's own is fine.
 * One regex test and a set lookup, once per call (not per chunk).
 */
export function answerCallId(
  id: string | undefined,
  ctx: CodecContext | undefined,
  repeated: boolean,
): string {
  if (!id) return makeId(ctx, 'call_')
  const positional = POSITIONAL_CALL_ID.exec(id)
  // Kimi's in its own shape, a number no call of this gateway had: its chat template writes the
  // history's ids into the prompt as they are, and the model was trained on `functions.NAME:N`
  // (a bare counter gets one of ours)
  // (not to a Messages client: Anthropic's API, which the conversation may go on to, takes no `:`)
  if (positional && positional.index > 0 && ctx?.plainCallIds !== true)
    return `${id.slice(0, positional.index)}:${nextPosition++}`
  if (positional || repeated || ctx?.historyCallIds?.().has(id) === true) return makeId(ctx, 'call_')
  return id
}

/**
 * The number of the next positional id the gateway gives (`NAME:N`): from a random start past any
 * position a model counts to, so that ids stay apart across conversations (the carry is keyed by
 * call id: ./carry.ts) and across the gateway's restarts.
 */
let nextPosition = 1_000_000 + randomInt(1_000_000_000)

/** The body of a request or answer, or a 400 naming what it should have been. */
export function bodyObject(body: unknown, what: string): Json {
  if (!isObj(body)) throw new TranslationError(`${what} must be a JSON object`)
  return body
}

/** `data:image/png;base64,AAAA` -> media type and base64 data. */
export function parseDataUrl(url: string): {mediaType: string; data: string} | undefined {
  const m = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url)
  return m ? {mediaType: m[1], data: m[2]} : undefined
}

/**
 * Tool arguments text as a JSON object: where it is none, its syntax repaired
 * (`syntaxRepairedArguments`: single quotes, a trailing comma, a fence…); else `{}`.
 */
export function argsObject(args: string): Json {
  try {
    const v: unknown = JSON.parse(args)
    // (a string may hold the object: encoded twice)
    if (typeof v !== 'string') return isObj(v) ? v : {}
  } catch {
    // (repaired below)
  }
  const fixed = syntaxRepairedArguments(args)
  return fixed === undefined ? {} : (JSON.parse(fixed) as Json)
}

/**
 * Tool arguments text that is no JSON (or a JSON string), with its syntax repaired; undefined
 * where it is JSON or cannot be repaired.
 */
export function repairedArgsText(args: string, schema?: () => JsonSchema | undefined): string | undefined {
  try {
    if (typeof JSON.parse(args) !== 'string') return undefined
  } catch {
    // (repaired below)
  }
  return syntaxRepairedArguments(args, schema)
}

/**
 * The schema of the client's tool `name` (CodecContext `tools`), for a repair of its call's
 * arguments; looked up only when one is repaired.
 */
export const toolSchema = (ctx: CodecContext | undefined, name: string) => (): JsonSchema | undefined =>
  ctx?.tools?.find((t) => t.name === name)?.parameters

/**
 * Whether the arguments of a call of the client's tool `name` that are no JSON stay as they came,
 * unrepaired: a Responses client's custom tool (Codex's `apply_patch`, code-mode `exec`) takes
 * free text, and a chat model writes a patch or JavaScript there raw, which the syntax repair
 * would cut to the first `{…}` it holds (a patch's `cfg = {}`, a call's `{"command": …}`).
 * Qwen3-Coder's `<parameter=input>` form is still read (it gives the `{"input": …}` object).
 * Looked up only where a repair would run.
 */
export const keepsRawInput = (ctx: CodecContext | undefined, name: string, args: string): boolean =>
  !!ctx?.tools?.some((t) => t.name === name && t.custom) && !isParameterForm(args)

/**
 * A chat tool call's `arguments` as text: a string as it is; a JSON object or array, which
 * llama.cpp's server and TGI send in its place, as its JSON (it would otherwise be lost as `{}`).
 */
export const argsText = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'object' && v !== null ? JSON.stringify(v) : undefined

export {isCompleteJson} from './json-bytes.js'

const BUDGETS: Record<Effort, number> = {minimal: 1024, low: 4096, medium: 10_000, high: 24_000}

export const effortBudget = (effort: Effort): number => BUDGETS[effort]

/** What a thinking budget cut to a client's limit leaves the answer (half of a smaller limit). */
const ANSWER_ROOM = 4096

/**
 * A thinking budget within a client's limit, which holds the thinking and the answer together (in
 * every family's meaning): one that would leave the answer less than 4 096 tokens (half of a limit
 * under 8 192) is lowered to leave it that, not to the limit less one token, where a model that
 * thinks its whole budget answers nothing; never under `least` (the upstream's smallest budget).
 */
export function budgetWithin(budget: number, maxTokens: number, least: number): number {
  const room = Math.min(ANSWER_ROOM, Math.floor(maxTokens / 2))
  return budget > maxTokens - room ? Math.max(least, maxTokens - room) : budget
}

/** A thinking budget as an effort: under 4k low, under 16k medium, else high. */
export function budgetEffort(budget: number): Effort {
  if (budget < 4096) return 'low'
  if (budget < 16_384) return 'medium'
  return 'high'
}

const hasOpaque = (p: ReasoningPart): boolean => !!(p.signature || p.redacted || p.encrypted)
const foreign = (p: ReasoningPart, family: Family): boolean =>
  [p.signature, p.redacted, p.encrypted].some((o) => o && o.family !== family)

/**
 * Encoders of a client answer: for each tool call, the reasoning parts since the previous tool
 * call (or the start) are kept under the call's id when they hold an opaque the client cannot
 * carry (`always`: any opaque, for chat clients); a tool call's own foreign signature (Gemini)
 * is kept as a trailing tool_call part.
 */
export function storeCarry(
  parts: Part[],
  client: Family,
  carry: CarryStore | undefined,
  always: boolean,
  /** The client's request the answer is to (a chat client's: whose it is, its user's last words). */
  request?: Request,
): void {
  if (!carry) return
  let segment: ReasoningPart[] = []
  let called = false
  for (const part of parts) {
    if (part.type === 'reasoning') segment.push(part)
    if (part.type !== 'tool_call') continue
    const keep = segment.some((p) => (always ? hasOpaque(p) : foreign(p, client)))
    const sig = part.signature && part.signature.family !== client ? part.signature : undefined
    if (keep || sig) {
      const stub: ToolCallPart[] = sig
        ? [{type: 'tool_call', id: part.id, name: part.name, arguments: '', signature: sig}]
        : []
      carry.set(part.id, [...(keep ? segment : []), ...stub])
    }
    segment = []
    called = true
  }
  // a chat client's answer of text alone: its reasoning under its text
  if (always && !called && segment.length > 0)
    storeTextCarry(segment, parts.map((p) => (p.type === 'text' ? p.text : '')).join(''), carry, request)
}

/** The carries that hold the reasoning of a text answer (only these have a text's hash looked up). */
const textCarries = new WeakSet<CarryStore>()

/**
 * The key of the reasoning of a chat client's answer of text alone: a hash of whose conversation
 * it is (`scope`) and of its text.
 */
const textKey = (scope: string | undefined, text: string): string =>
  `text:${hash('sha256', scope === undefined ? text : `${scope}\0${text}`, 'base64url')}`

/**
 * What a text answer's entry keeps of the user's words it answered: a SHA-256 of them, not the
 * words (a pasted file, an XML-tool client's tool result sent as user text: each entry held it
 * whole, counted against the carry's 64 MB; rv-mends #3). Hashed at each store, and on a hit.
 */
const wordsHash = (words: string): string => hash('sha256', words, 'base64url')

/**
 * The text of the user's last words among `messages` (the last user message that holds text: a
 * turn of tool results alone is none), what an answer of text alone answered: kept beside its
 * reasoning, and matched when the client sends the answer back.
 */
export function userWords(messages: readonly Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (m.role !== 'user' || !m.parts.some((p) => p.type === 'text')) continue
    return m.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')
  }
  return ''
}

/**
 * A chat client's answer of text alone (no tool call, no id to key on): its reasoning, when it
 * holds another family's opaque (Anthropic's signed and redacted thinking, a Responses item, a
 * Gemini signature; not a chat server's own, which goes back as the client echoes it), kept under
 * a hash of whose conversation it is (`request.carryScope`: the key's agent, the project, the
 * policy) and of its text, which the client sends back as its assistant message's `content`, with
 * a hash of the user's last words it answered beside it, as a text part after the reasoning
 * ({@link applyTextCarry}). Nothing for an empty text.
 */
export function storeTextCarry(
  reasoning: ReasoningPart[],
  text: string,
  carry: CarryStore | undefined,
  request: Request | undefined,
): void {
  if (!carry || text === '' || !reasoning.some((p) => foreign(p, 'chat'))) return
  const said: TextPart = {type: 'text', text: wordsHash(request ? userWords(request.messages) : '')}
  carry.set(textKey(request?.carryScope, text), [...reasoning, said])
  textCarries.add(carry)
}

/**
 * A chat client's assistant message of text alone (`parts` decoded, no tool call): the reasoning
 * kept under its conversation's `scope` and its text ({@link storeTextCarry}) in place of the
 * reasoning it echoed, which holds the chat marker only, unless the user's last words before it
 * (`said`, read only on a hit) are not those the kept answer answered (another conversation's
 * answer of the same text), or the echo is not the kept reasoning's text. Hashed only once the
 * carry has held such reasoning.
 */
export function applyTextCarry(
  parts: Part[],
  carry: CarryStore | undefined,
  scope: string | undefined,
  said: () => string,
): Part[] {
  if (!carry || !textCarries.has(carry)) return parts
  let text = ''
  let echoed: ReasoningPart | undefined
  for (const p of parts)
    if (p.type === 'text') text += p.text
    else if (p.type !== 'reasoning') return parts
    else if (p.redacted || p.encrypted || (p.signature && p.signature.family !== 'chat') || echoed)
      return parts
    else echoed = p
  if (text === '') return parts
  const entry = carry.get(textKey(scope, text))
  const answered = entry?.at(-1)
  if (answered?.type !== 'text' || answered.text !== wordsHash(said())) return parts
  const kept = entry!.filter((p): p is ReasoningPart => p.type === 'reasoning')
  if (!kept.length) return parts
  if (
    echoed &&
    echoed.text !==
      kept
        .map((p) => p.text)
        .filter(Boolean)
        .join(REASONING_BETWEEN)
  )
    return parts
  return [...kept, ...parts.filter((p) => p.type !== 'reasoning')]
}

/**
 * Decoders of a client request, on one assistant turn: a tool call with no reasoning since the
 * previous tool call gets the carried reasoning put before it; `markerOnly` (chat) also replaces
 * reasoning that holds only the chat marker (the client echoed `reasoning_content` but lost the
 * signature). A tool call without a signature gets a carried one.
 */
export function applyCarry(parts: Part[], carry: CarryStore | undefined, markerOnly: boolean): Part[] {
  if (!carry) return parts
  const out: Part[] = []
  let segment: number[] = []
  for (const part of parts) {
    if (part.type === 'reasoning') segment.push(out.length)
    if (part.type !== 'tool_call') {
      out.push(part)
      continue
    }
    const id = carriedId(carry, part)
    const kept = id === undefined ? undefined : carry.get(id)
    const replaceable =
      segment.length === 0 ||
      (markerOnly &&
        segment.every((i) => {
          const r = out[i] as ReasoningPart
          return !r.redacted && !r.encrypted && (!r.signature || r.signature.family === 'chat')
        }))
    const carried = kept?.filter((p): p is ReasoningPart => p.type === 'reasoning') ?? []
    if (carried.length > 0 && replaceable) {
      const at = segment.length ? segment[0] : out.length
      for (const i of [...segment].reverse()) out.splice(i, 1)
      out.splice(at, 0, ...carried)
    }
    const sig = kept?.find((p): p is ToolCallPart => p.type === 'tool_call' && p.id === id)?.signature
    out.push(!part.signature && sig ? {...part, signature: sig} : part)
    segment = []
  }
  return out
}

/**
 * Between the texts of two reasoning parts of one answer in the `reasoning_content` a chat client
 * is shown (Anthropic's thinking blocks around a redacted one, a Responses upstream's reasoning
 * items): one field for all of them, each block's text a paragraph of its own.
 */
export const REASONING_BETWEEN = '\n\n'

/**
 * The signature of a chat message's reasoning: the field it came in, `reasoning` (Cerebras,
 * OpenRouter, newer vLLM) or `reasoning_content` (DeepSeek; the value is empty), so that it goes
 * back in the same field: a server that writes one may refuse the other back (Cerebras).
 */
export function chatReasoningSignature(m: Record<string, unknown>): {family: 'chat'; value: string} {
  return {family: 'chat', value: str(m.reasoning_content) ? '' : 'reasoning'}
}

/**
 * The chat signature value of reasoning that came in the answer's `content` inside
 * `<think>...</think>` (MiniMax M2's OpenAI endpoint, a reasoning model under llama.cpp, vLLM or
 * Ollama without a reasoning parser, DeepSeek-R1 distills): it goes back in `content` the same way
 * (`gwx1.chat.think` to a client of another family).
 */
export const THINK_TAGS = 'think'
export const THINK_OPEN = '<think>'
export const THINK_CLOSE = '</think>'

/**
 * The index of the first character of `text` that is not a space, a tab or a line break (its
 * length if none).
 */
export function firstNonSpace(text: string): number {
  let i = 0
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) break
  }
  return i
}

/**
 * The reasoning and the text of an answer's content that starts (after white space) with
 * `<think>`: the reasoning is what lies between the tags as it came (all after `<think>` when
 * `</think>` never came: the answer was cut), the text what follows `</think>` without its leading
 * white space. Undefined for content that does not start so (a text that holds the tag later is
 * text).
 */
export function splitThink(content: string): {reasoning: string; text: string} | undefined {
  const start = firstNonSpace(content)
  if (!content.startsWith(THINK_OPEN, start)) return undefined
  const open = start + THINK_OPEN.length
  const close = content.indexOf(THINK_CLOSE, open)
  if (close === -1) return {reasoning: content.slice(open), text: ''}
  const after = close + THINK_CLOSE.length
  return {
    reasoning: content.slice(open, close),
    text: content.slice(after + firstNonSpace(content.slice(after))),
  }
}

/** How many code fences (```) `text` holds before `end`. */
export function fencesBefore(text: string, end: number): number {
  let n = 0
  for (let i = text.indexOf('```'); i !== -1 && i < end; i = text.indexOf('```', i + 3)) n++
  return n
}

/** A quote or a backtick (the tag quoted or in inline code, as text that talks about it). */
const quoting = (c: number): boolean => c === 0x60 || c === 0x22 || c === 0x27

/**
 * Whether the `</think>` at `at` in `text` closes reasoning the prompt opened rather than being
 * words about the tag: not inside a code fence (`fences`: the fences before `text`, and those in
 * it before `at`, are an even number) and not quoted or in inline code (a quote or a backtick
 * right before or after it). The caller has checked that no `<think>` came before it.
 */
export function closesPromptThink(text: string, at: number, fences: number): boolean {
  if ((fences + fencesBefore(text, at)) % 2 !== 0) return false
  if (at > 0 && quoting(text.charCodeAt(at - 1))) return false
  const next = at + THINK_CLOSE.length
  return next >= text.length || !quoting(text.charCodeAt(next))
}

/**
 * The reasoning and the text of an answer's content whose chat template opened `<think>` in the
 * prompt (Qwen3's *-Thinking-2507, DeepSeek-R1-0528 under llama.cpp, vLLM or LM Studio without a
 * reasoning parser): the content holds only the closing tag, `reasoning…</think>\n\nanswer`.
 * `learned`: the model is known to answer so (daemon/router/adaptations.ts), and its content is
 * reasoning up to the first `</think>`; content without one (a turn the template did not open
 * thinking for) is `unclosed`: the caller gives its whole text as both. Not learned, only a
 * `</think>` with no `<think>` before it that {@link closesPromptThink} is read so (the model is
 * then learned). Undefined for content that is none of these (the caller has checked that it does
 * not start with `<think>`).
 */
export function splitPromptThink(
  content: string,
  learned: boolean,
): {reasoning: string; text: string; unclosed: boolean} | undefined {
  let close = content.indexOf(THINK_CLOSE)
  if (close === -1) return learned ? {reasoning: content, text: content, unclosed: true} : undefined
  if (!learned) {
    const open = content.indexOf(THINK_OPEN)
    while (close !== -1 && !closesPromptThink(content, close, 0))
      close = content.indexOf(THINK_CLOSE, close + 1)
    if (close === -1 || (open !== -1 && open < close)) return undefined
  }
  const after = close + THINK_CLOSE.length
  return {
    reasoning: content.slice(0, close),
    text: content.slice(after + firstNonSpace(content.slice(after))),
    unclosed: false,
  }
}

/**
 * The chat signature value of reasoning that came as Mistral's `thinking` content chunks
 * (Magistral; mistral-small and mistral-medium with reasoning on): `content` an array of
 * `{type: "thinking", thinking: [{type: "text", text}]}` and `{type: "text", text}` chunks. It is
 * not sent back (see chat.ts `encodeAssistant`).
 */
export const MISTRAL_THINKING = 'mistral'

/** The text of a Mistral `thinking` chunk: its inner text parts joined (a string as it is). */
export function thinkingChunkText(chunk: Record<string, unknown>): string {
  const inner = chunk.thinking
  if (typeof inner === 'string') return inner
  let text = ''
  if (Array.isArray(inner)) for (const p of inner) if (isObj(p) && typeof p.text === 'string') text += p.text
  return text
}

/**
 * How many characters at the end of `text` may be the start of `tag` cut by the chunk's end (the
 * longest end of `text` that is a proper start of `tag`).
 */
export function tagStartAtEnd(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) if (text.endsWith(tag.slice(0, n))) return n
  return 0
}
