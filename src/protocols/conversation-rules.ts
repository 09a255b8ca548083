/**
 * Rules some servers hold a conversation's history to, beyond its protocol, which a translated
 * request may break because the history was made by another vendor (a fallback or a switch of
 * provider mid-conversation) or in another protocol's shape. Applied to an upstream body once the
 * upstream's refusal taught them (daemon/router/adaptations.ts):
 *
 * - tool-call ids: Mistral takes only 9 letters and digits ("Tool call id was toolu_01… but must
 *   be a-z, A-Z, 0-9, with a length of 9."), OpenAI at most 40 characters on chat ("string too
 *   long. Expected a string with maximum length 40"). Each id is rewritten by a pure function of
 *   itself, so a call and its result keep the same id, in this request and every later one; an
 *   id that already fits stays as it is (the upstream's own ids go back to it unchanged);
 * - a user message right after tool results: Mistral refuses it ("Unexpected role 'user' after
 *   role 'tool'"), and a Claude Code turn that carries tool results and text (a system reminder,
 *   the user's interjection, an image a tool read) is exactly that in chat completions. An
 *   assistant message goes between, so the text keeps its user role;
 * - tool calls and their results pair up (pairToolResults, for every translated request: every
 *   family refuses a history where they do not);
 * - the reasoning of the history's assistant messages: a server may refuse it back in a field it
 *   does not take (Cerebras writes `reasoning` and refuses `reasoning_content`; Mistral's 422
 *   refuses both); it goes in the other field, or without; a server in thinking mode may refuse a
 *   tool call's turn without it (DeepSeek, Kimi): an empty one where there is none;
 * - a tool call's thought signature (Gemini 3 through OpenRouter or Google's OpenAI-compatible
 *   endpoint), which a history the gateway lost it from (a restart) or another vendor made has
 *   none of: Google's documented dummy in its place;
 * - the `id` of a Gemini function call and of its response, which Vertex AI refuses ("Unknown name
 *   \"id\" at 'contents[1].parts[0].function_call': Cannot find field."): both go without it, and
 *   Gemini pairs them by order and name, as its API did before ids.
 */
import {createHash} from 'node:crypto'

import {SKIP_THOUGHT_SIGNATURE} from './chat-signatures.js'
import type {JsonSchema, Message, Part, ToolCallPart, ToolResultPart} from './ir.js'

/** How the tool-call ids of a request must look to its upstream. */
export interface ToolIdRule {
  /** Exactly this many letters and digits (Mistral: 9). */
  alnum?: number
  /** At most this many characters (OpenAI chat: 40). */
  max?: number
}

/** The assistant message put between tool results and a user message. */
export const TOOL_TURN_BRIDGE = 'Tool results received.'

const DIGITS = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** `length` letters and digits derived from `id` (SHA-256: 62^9 values for a 9-character id). */
function digest(id: string, length: number): string {
  const hash = createHash('sha256').update(id).digest()
  let out = ''
  for (let i = 0; out.length < length; i++) out += DIGITS[hash[i % hash.length] % DIGITS.length]
  return out
}

/** `id` as `rule` wants it: unchanged when it fits, else derived from it. */
export function shapeToolId(id: string, rule: ToolIdRule): string {
  if (rule.alnum !== undefined) {
    const n = rule.alnum
    if (id.length === n && /^[a-zA-Z0-9]+$/.test(id)) return id
    return digest(id, n)
  }
  if (rule.max !== undefined && id.length > rule.max) {
    // the id's start stays readable (`call_…`, `toolu_…`), its end tells long ids apart
    const keep = Math.max(0, rule.max - 12)
    return `${id.slice(0, keep)}${digest(id, rule.max - keep)}`
  }
  return id
}

type Body = Record<string, unknown>

/**
 * The tool-call ids of a chat body (`messages[].tool_calls[].id`, `messages[].tool_call_id`) or a
 * Responses body (`input[].call_id`) shaped by `rule`, in place.
 */
export function shapeToolIds(body: Body, rule: ToolIdRule): void {
  const shape = (value: unknown) => (typeof value === 'string' ? shapeToolId(value, rule) : value)
  if (Array.isArray(body.messages))
    body.messages = (body.messages as Body[]).map((m) => {
      if (!m || typeof m !== 'object') return m
      let out = m
      if (typeof m.tool_call_id === 'string') out = {...out, tool_call_id: shape(m.tool_call_id)}
      if (Array.isArray(m.tool_calls))
        out = {
          ...out,
          tool_calls: (m.tool_calls as Body[]).map((c) =>
            c && typeof c === 'object' && typeof c.id === 'string' ? {...c, id: shape(c.id)} : c,
          ),
        }
      return out
    })
  if (Array.isArray(body.input))
    body.input = (body.input as Body[]).map((item) =>
      item && typeof item === 'object' && typeof item.call_id === 'string'
        ? {...item, call_id: shape(item.call_id)}
        : item,
    )
}

/** A chat body with an assistant message between tool results and a user message after them. */
export function bridgeToolTurns(body: Body): void {
  const messages = body.messages
  if (!Array.isArray(messages)) return
  const out: unknown[] = []
  for (let i = 0; i < messages.length; i++) {
    out.push(messages[i])
    if (
      (messages[i] as Body | undefined)?.role === 'tool' &&
      (messages[i + 1] as Body | undefined)?.role === 'user'
    )
      out.push({role: 'assistant', content: TOOL_TURN_BRIDGE})
  }
  if (out.length !== messages.length) body.messages = out
}

/**
 * A chat body whose assistant messages carry their reasoning in the field `to` (`reasoning`,
 * Cerebras's; `reasoning_content`, DeepSeek's and Kimi's) instead of the other one, or carry none
 * (`drop`). With `reasoning_content`, every assistant message that has no reasoning at all gets
 * an empty one: the thinking mode of DeepSeek and Kimi refuses a tool call's turn without the
 * field, and DeepSeek V4 also the text that ends a tool loop (its docs: the reasoning of every
 * assistant message between two user messages with a tool call must come back; openclaw #73417,
 * hermes-agent PR #15770 pad every assistant message, as here), and a history whose turns another
 * vendor made, whose model streamed no reasoning, or whose reasoning a client lost (a turn it
 * interrupted, a gateway restart that emptied the carry) has none to send. An empty string, as
 * both take it (DeepSeek ignores the reasoning of a turn without tool calls); always the same
 * bytes, so the prompt cache holds.
 */
export function reshapeReasoningHistory(body: Body, to: 'reasoning' | 'reasoning_content' | 'drop'): void {
  const messages = body.messages
  if (!Array.isArray(messages)) return
  const from = to === 'reasoning' ? 'reasoning_content' : 'reasoning'
  body.messages = (messages as Body[]).map((m) => {
    if (!m || typeof m !== 'object') return m
    if (to === 'drop') {
      // the reasoning in every field a chat server may have given it: DeepSeek's, OpenRouter's
      // and Cerebras', OpenRouter's details, Google's signature on each tool call
      const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as Body[]) : undefined
      const signed = calls?.some((c) => c && typeof c === 'object' && c.extra_content !== undefined)
      if (
        m.reasoning_content === undefined &&
        m.reasoning === undefined &&
        m.reasoning_details === undefined &&
        !signed
      )
        return m
      const {reasoning_content: _c, reasoning: _r, reasoning_details: _d, ...rest} = m
      if (signed)
        rest.tool_calls = calls!.map((c) => {
          if (!c || typeof c !== 'object' || c.extra_content === undefined) return c
          const {extra_content: _e, ...call} = c
          return call
        })
      return rest
    }
    if (m[from] === undefined) {
      // (null too: a client's way of saying none, which DeepSeek counts as missing)
      if (to === 'reasoning_content' && m.reasoning_content == null && m.role === 'assistant')
        return {...m, reasoning_content: ''}
      return m
    }
    const {[from]: text, ...rest} = m
    const value = m[to] ?? text
    // (OpenRouter's `reasoning: null`, echoed back by a chat client: none, as above)
    if (value == null && to === 'reasoning_content' && m.role === 'assistant')
      return {...rest, reasoning_content: ''}
    return {...rest, [to]: value}
  })
}

/**
 * Where a Gemini 3 model wants each tool call's thought signature: behind a chat completions
 * server, `reasoning_details`, OpenRouter's (an encrypted item of the assistant message's);
 * `google`, Google's OpenAI-compatible endpoint (`extra_content.google.thought_signature` on the
 * call); `vertex`, Vertex AI's (`extra_content.vertex`); on Gemini's own API, `part`, the
 * `thoughtSignature` of a model content's `functionCall` part.
 */
export type ThoughtSignatureField = 'reasoning_details' | 'google' | 'vertex' | 'part'

/**
 * A chat body whose assistant messages with tool calls that carry no thought signature (the
 * gateway lost it on a restart, or another vendor made the calls) get Google's documented value
 * that skips the check (`skip_thought_signature_validator`) on their first call, in the field
 * `field` says; a call that has its own signature keeps it. The same bytes on every request.
 */
export function dummySignatures(body: Body, field: ThoughtSignatureField): void {
  // (a Gemini body: the encoder signs each turn's first call itself, gemini.ts; one passed through
  // is signed in its bytes, ./part-signatures.ts)
  if (field === 'part') return
  const messages = body.messages
  if (!Array.isArray(messages)) return
  body.messages = (messages as Body[]).map((m) => {
    if (!m || typeof m !== 'object' || m.role !== 'assistant' || !Array.isArray(m.tool_calls)) return m
    const calls = m.tool_calls as Body[]
    const first = calls[0]
    if (!first || typeof first !== 'object') return m
    if (field === 'reasoning_details') {
      const details = Array.isArray(m.reasoning_details) ? (m.reasoning_details as Body[]) : []
      if (details.some((d) => d?.type === 'reasoning.encrypted')) return m
      const dummy = {
        type: 'reasoning.encrypted',
        data: SKIP_THOUGHT_SIGNATURE,
        id: first.id,
        format: 'google-gemini-v1',
        index: details.length,
      }
      return {...m, reasoning_details: [...details, dummy]}
    }
    if (calls.some((c) => c && typeof c === 'object' && c.extra_content !== undefined)) return m
    const signed = {...first, extra_content: {[field]: {thought_signature: SKIP_THOUGHT_SIGNATURE}}}
    return {...m, tool_calls: [signed, ...calls.slice(1)]}
  })
}

/**
 * A Gemini body whose function calls and function responses carry no `id` (the parts are the
 * encoder's own: rewritten in place). The same bytes on every request.
 */
export function withoutCallIds(body: Body): void {
  const contents = body.contents
  if (!Array.isArray(contents)) return
  for (const content of contents as Body[]) {
    const parts = content?.parts
    if (!Array.isArray(parts)) continue
    for (const part of parts as Body[]) {
      if (!part || typeof part !== 'object') continue
      for (const key of ['functionCall', 'functionResponse'] as const) {
        const inner = part[key] as Body | undefined
        if (inner && typeof inner === 'object' && 'id' in inner) {
          const {id: _, ...rest} = inner
          part[key] = rest
        }
      }
    }
  }
}

/**
 * A chat body whose history's tool calls all have `arguments` that parse (DashScope refuses every
 * request with one that does not: "The \"function.arguments\" parameter of the code model must be
 * in JSON format."; Qwen3-Coder and Qwen3.5 write broken ones, and a stream cut at its token limit
 * leaves one open, which Codex keeps exactly as it came). Each that does not parse goes as
 * {@link repairedArguments} makes it; the rest, and every message without such a call, as they
 * came (copied where changed: a body passed through shares its messages with the client's). The
 * same bytes on every request.
 */
export function repairToolArguments(body: Body): void {
  const messages = body.messages
  if (!Array.isArray(messages)) return
  let out: unknown[] | undefined
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i] as Body | undefined
    if (!m || typeof m !== 'object' || m.role !== 'assistant' || !Array.isArray(m.tool_calls)) continue
    let calls: unknown[] | undefined
    for (let j = 0; j < m.tool_calls.length; j++) {
      const call = m.tool_calls[j] as Body | undefined
      const fn = call?.function as Body | undefined
      if (!fn || typeof fn.arguments !== 'string' || parses(fn.arguments)) continue
      calls ??= [...(m.tool_calls as unknown[])]
      calls[j] = {...call, function: {...fn, arguments: repairedArguments(fn.arguments)}}
    }
    if (!calls) continue
    out ??= [...messages]
    out[i] = {...m, tool_calls: calls}
  }
  if (out) body.messages = out
}

function parses(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** How many shorter prefixes (cut at a comma) a repair tries before it gives up for `{}`. */
const REPAIR_TRIES = 8

/**
 * Tool-call arguments that do not parse, as a JSON object that does: from the first `{`, up to the
 * end of the first complete value, with an open string, arrays and objects closed (a cut stream's
 * `{"command": ["bash", "-lc", "ls` becomes `{"command": ["bash", "-lc", "ls"]}`); where that
 * still does not parse (a key without its value), the same up to an earlier comma; `{}` where
 * nothing is an object. What the model meant is kept as far as it was written, as nanobot's
 * history replay does (HKUDS/nanobot #1487).
 */
export function repairedArguments(text: string): string {
  const start = text.indexOf('{')
  if (start < 0) return '{}'
  let end = text.length
  for (let tries = 0; tries <= REPAIR_TRIES; tries++) {
    const {closed, lastComma} = closeJson(text, start, end)
    if (closed !== undefined) {
      try {
        const value: unknown = JSON.parse(closed)
        if (value && typeof value === 'object' && !Array.isArray(value)) return closed
      } catch {
        // (cut shorter below)
      }
    }
    if (lastComma <= start) break
    end = lastComma
  }
  return '{}'
}

/**
 * Tool-call arguments that do not parse, with only their syntax repaired, as the tool parsers of
 * vLLM, SGLang and llama.cpp write them for Qwen3-Coder and GLM (research47 #2): a ```json fence
 * or words around the object, text after it, a second object run on after the first (`{…}{…}`:
 * the first is kept, the second had lost its call's name), a JSON string that holds the object
 * (encoded twice), single quotes for double ones outside double-quoted strings, a comma before a
 * closing bracket, Python's `True`, `False` and `None` as values for JSON's `true`, `false` and
 * `null` (Qwen and GLM under some tool parsers: `{'path': 'a', 'recursive': True}`);
 * Qwen3-Coder's `<parameter=NAME>` form ({@link parameterArguments}, typed by the tool's `schema`
 * when it is known). Undefined where that does not give one JSON object: above all arguments cut
 * open (a stream stopped at its token limit), which are never closed here, since a cut command
 * must not run as a whole one (`repairedArguments` closes them, for history only).
 */
export function syntaxRepairedArguments(
  text: string,
  schema?: () => JsonSchema | undefined,
): string | undefined {
  // Qwen3-Coder's own format, passed on as the arguments (LM Studio 0.3.29's stream); any other text
  // that starts with a tag (`<tool_call>{…}`, `<|python_tag|>{…}`) has its object taken out below
  if (isParameterForm(text)) return parameterArguments(text, schema?.())
  const start = text.indexOf('{')
  if (start < 0) return encodedTwice(text)
  let body = text
  if (body.includes("'", start)) body = doubleQuoted(body)
  if (body.includes(',', start)) body = body.replace(TRAILING_COMMA, (_, string?: string) => string ?? '')
  if (PYTHON_LITERAL.test(body)) body = body.replace(PYTHON_LITERALS, jsonLiteral)
  const first = closeJson(body, start, body.length, false).closed
  if (first === undefined) return encodedTwice(text)
  try {
    const value: unknown = JSON.parse(first)
    if (value && typeof value === 'object' && !Array.isArray(value)) return first
  } catch {
    // (not an object: maybe a string holding one)
  }
  return encodedTwice(text)
}

/** Whether a call's arguments are in Qwen3-Coder's `<parameter=NAME>` form ({@link parameterArguments}). */
export const isParameterForm = (text: string): boolean =>
  text.trimStart().startsWith('<') && text.includes('<parameter=')

/** One `<parameter=NAME>VALUE</parameter>` of Qwen3-Coder's format, or a tag around them. */
const PARAMETER = /<parameter=([^>\n]+)>([\s\S]*?)<\/parameter>|<\/?(?:tool_call|function(?:=[^>\n]*)?)>|\s+/y

/**
 * Qwen3-Coder's tool-call format as a call's arguments, as LM Studio 0.3.29 streamed it
 * (lmstudio-bug-tracker #1071; opencode #1585: `<parameter=pattern>**</parameter>`; QwenLM/qwen-code
 * #167, #783): `<parameter=path>\nsrc/a.ts\n</parameter>…`, maybe inside its `<function=NAME>`
 * and `<tool_call>` tags, as a JSON object: each parameter a key, its value the text with its
 * surrounding newline trimmed where the tool's schema says the parameter is a string (a Write's
 * `content` that holds JSON stays the file's text), else as JSON where it parses as JSON, else the
 * text (as the Qwen parsers read it, by the schema). A parameter left open (a call cut by the
 * token limit) or any other text: undefined.
 */
function parameterArguments(text: string, schema: JsonSchema | undefined): string | undefined {
  const properties = schema?.properties
  const typeOf = (key: string): unknown =>
    properties && typeof properties === 'object'
      ? (properties as Record<string, {type?: unknown} | undefined>)[key]?.type
      : undefined
  const args: Record<string, unknown> = {}
  let found = false
  PARAMETER.lastIndex = 0
  while (PARAMETER.lastIndex < text.length) {
    const m = PARAMETER.exec(text)
    if (!m) return undefined
    if (m[1] === undefined) continue
    let value = m[2]
    if (value.startsWith('\n')) value = value.slice(1)
    if (value.endsWith('\n')) value = value.slice(0, -1)
    const key = m[1].trim()
    found = true
    if (takesText(typeOf(key))) {
      args[key] = value
      continue
    }
    try {
      args[key] = JSON.parse(value)
    } catch {
      args[key] = value
    }
  }
  return found ? JSON.stringify(args) : undefined
}

/** A schema `type` of a string only (`"string"`, `["string", "null"]`). */
const takesText = (type: unknown): boolean =>
  type === 'string' ||
  (Array.isArray(type) && type.includes('string') && type.every((t) => t === 'string' || t === 'null'))

/** A comma, then only whitespace, before a closing bracket (strings are skipped whole). */
const TRAILING_COMMA = /("(?:[^"\\]|\\.)*")|,(?=\s*[}\]])/g

/** Python's `True`, `False` or `None` somewhere (maybe inside a string: PYTHON_LITERALS tells). */
const PYTHON_LITERAL = /\b(?:True|False|None)\b/
/** Python's `True`, `False` or `None` as a value, outside strings (strings are skipped whole). */
const PYTHON_LITERALS = /("(?:[^"\\]|\\.)*")|(?<=[:,[]\s*)(True|False|None)(?=\s*[,}\]])/g
const jsonLiteral = (_: string, string?: string, literal?: string): string =>
  string ?? (literal === 'True' ? 'true' : literal === 'False' ? 'false' : 'null')

/** `"{\"a\": 1}"`: the object a JSON string holds (once more repaired where it needs it). */
function encodedTwice(text: string): string | undefined {
  let inner: unknown
  try {
    inner = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof inner !== 'string' || inner === text) return undefined
  try {
    const value: unknown = JSON.parse(inner)
    return value && typeof value === 'object' && !Array.isArray(value) ? inner : undefined
  } catch {
    return inner.includes('{') && !inner.trimStart().startsWith('"')
      ? syntaxRepairedArguments(inner)
      : undefined
  }
}

/**
 * Python's repr of a dict as JSON: each single-quoted string outside double-quoted ones becomes a
 * double-quoted one (a `"` inside it escaped, an escaped `\'` a plain `'`).
 */
function doubleQuoted(text: string): string {
  let out = ''
  let from = 0
  let quote = ''
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quote) {
      if (c === '\\') {
        if (quote === "'" && text[i + 1] === "'") {
          out += text.slice(from, i) + "'"
          from = i + 2
        }
        i++
      } else if (c === quote) {
        if (quote === "'") {
          out += text.slice(from, i) + '"'
          from = i + 1
        }
        quote = ''
      } else if (c === '"' && quote === "'") {
        out += text.slice(from, i) + '\\"'
        from = i + 1
      }
    } else if (c === '"' || c === "'") {
      quote = c
      if (c === "'") {
        out += text.slice(from, i) + '"'
        from = i + 1
      }
    }
  }
  return out + text.slice(from)
}

/**
 * `text` from `start` to `end` with what is open at its end closed (a string, then each array and
 * object), cut after the first complete value, a trailing comma or whitespace dropped and a
 * trailing colon given `null`; and where the last comma outside strings is, for a shorter try.
 * Undefined `closed` where a bracket does not match.
 */
function closeJson(
  text: string,
  start: number,
  end: number,
  close = true,
): {closed?: string; lastComma: number} {
  const open: string[] = []
  let inString = false
  let escaped = false
  let lastComma = -1
  let i = start
  for (; i < end; i++) {
    const c = text[i]
    if (inString) {
      if (escaped) escaped = false
      else if (c === '\\') escaped = true
      else if (c === '"') inString = false
      continue
    }
    if (c === '"') inString = true
    else if (c === '{' || c === '[') open.push(c === '{' ? '}' : ']')
    else if (c === '}' || c === ']') {
      if (open.pop() !== c) return {lastComma}
      // the first complete value: anything after it is not the arguments
      if (open.length === 0) return {closed: text.slice(start, i + 1), lastComma}
    } else if (c === ',') lastComma = i
  }
  // (a syntax repair invents nothing: what is still open at the end stays unrepaired)
  if (!close) return {lastComma}
  let head = text.slice(start, i)
  if (inString) head = (escaped ? head.slice(0, -1) : head) + '"'
  else {
    head = head.trimEnd()
    if (head.endsWith(',')) head = head.slice(0, -1)
    else if (head.endsWith(':')) head += 'null'
  }
  return {closed: head + open.reverse().join(''), lastComma}
}

/** The result given to a tool call the history has none for. */
export const NO_RESULT = 'No result was recorded for this tool call.'

/**
 * A history whose tool calls and results pair up, as every upstream family requires (Anthropic:
 * "tool_use ids were found without tool_result blocks immediately after"; OpenAI: "An assistant
 * message with 'tool_calls' must be followed by tool messages responding to each
 * 'tool_call_id'"; the Responses API: "No tool output found for function call"; Gemini: "the
 * number of function response parts is equal to the number of function call parts"). A client's
 * history breaks that when a call was interrupted or the client trimmed its context: a call
 * without a result in the next turn gets an error result saying so; a result whose call is not in
 * the turn before (or a second result of one call) becomes text of its turn, so that nothing it
 * said is lost. A history that pairs already comes back as it came (no copy).
 */
export function pairToolResults(messages: Message[]): Message[] {
  const turns = joinRuns(messages)
  let out: Message[] | undefined
  let calls: ToolCallPart[] = []
  for (let i = 0; i < turns.length; i++) {
    const message = turns[i]
    let next = message
    if (message.role === 'assistant') {
      if (calls.length > 0) {
        // two assistant turns in a row, the first one's calls unanswered: their results between
        out ??= turns.slice(0, i)
        out.push({role: 'user', parts: calls.map(noResult)})
      }
      calls = []
      for (const p of message.parts) if (p.type === 'tool_call') calls.push(p)
    } else {
      if (calls.length > 0 || message.parts.some((p) => p.type === 'tool_result'))
        next = pairedTurn(message, calls)
      calls = []
    }
    if (next !== message) out ??= turns.slice(0, i)
    out?.push(next)
  }
  // the last turn an assistant's with calls: the request asks the model to go on from there
  return out ?? turns
}

/**
 * Consecutive turns of one role read as one, as Anthropic reads them (and the Gemini and
 * Responses encoders write them), where pairing needs it: user turns when a result is in one but
 * the first; assistant turns when the turn after them answers a call of one but the last (else
 * their calls are answered between, by pairToolResults).
 * The same array when there is no such run.
 */
function joinRuns(messages: Message[]): Message[] {
  let out: Message[] | undefined
  for (let i = 0; i < messages.length;) {
    let end = i + 1
    while (end < messages.length && messages[end].role === messages[i].role) end++
    if (end === i + 1) {
      out?.push(messages[i])
      i = end
      continue
    }
    const run = messages.slice(i, end)
    let joined: Message[] = run
    // user turns when results are split over them (else each stays as it came)
    if (run[0].role === 'user') {
      if (run.slice(1).some((m) => m.parts.some((p) => p.type === 'tool_result')))
        joined = [{role: 'user', parts: run.flatMap((m) => m.parts)}]
    } else {
      let after = end
      const answered = new Set<string>()
      while (after < messages.length && messages[after].role === 'user') {
        for (const p of messages[after].parts) if (p.type === 'tool_result') answered.add(p.callId)
        after++
      }
      const early = run
        .slice(0, -1)
        .some((m) => m.parts.some((p) => p.type === 'tool_call' && answered.has(p.id)))
      if (early) joined = [{role: 'assistant', parts: run.flatMap((m) => m.parts)}]
    }
    if (joined !== run) out ??= messages.slice(0, i)
    out?.push(...joined)
    i = end
  }
  return out ?? messages
}

/** A user turn with a result for each of `calls`, and its other results as text; or `turn` itself. */
function pairedTurn(turn: Message, calls: ToolCallPart[]): Message {
  const open = new Map(calls.map((c) => [c.id, c]))
  let orphans = false
  // a result after the turn's text (Codex's hook or user message between a call and its output,
  // Gemini CLI's text before its responses): the results go first, as chat and Messages need
  // them and the Gemini and Responses encoders keep the order they are given (DeepSeek's
  // Responses API refuses anything between a call and its output)
  let other = false
  let late = false
  for (const p of turn.parts)
    if (p.type === 'tool_result') {
      if (other) late = true
      if (open.has(p.callId)) open.delete(p.callId)
      else orphans = true
    } else other = true
  if (!orphans && !late && open.size === 0) return turn
  // the results first (an unanswered call's, then the turn's own), then the rest: the Responses
  // encoder keeps the order it is given
  const parts: Part[] = [...open.values()].map(noResult)
  const rest: Part[] = []
  const answered = new Set<string>()
  const ids = new Set(calls.map((c) => c.id))
  for (const p of turn.parts) {
    if (p.type !== 'tool_result') rest.push(p)
    else if (ids.has(p.callId) && !answered.has(p.callId)) {
      answered.add(p.callId)
      parts.push(p)
    } else {
      const text = p.content.flatMap((c) => (c.type === 'text' ? [c.text] : [])).join('\n')
      rest.push({type: 'text', text: `Result of an earlier tool call (${p.name ?? p.callId}):\n${text}`})
      for (const c of p.content) if (c.type === 'image') rest.push(c)
    }
  }
  return {role: 'user', parts: [...parts, ...rest]}
}

function noResult(call: ToolCallPart): ToolResultPart {
  return {
    type: 'tool_result',
    callId: call.id,
    name: call.name,
    content: [{type: 'text', text: NO_RESULT}],
    isError: true,
  }
}
