/**
 * What the Responses codec's request, answer and stream code share: usage in both directions,
 * output items for a Responses client, reasoning items and their `encrypted_content`.
 */
import {randomUUID} from 'node:crypto'

import type {
  CodecContext,
  ItemStore,
  Message,
  Opaque,
  Part,
  ReasoningPart,
  Request,
  StopReason,
  ToolCallPart,
  Usage,
} from './ir.js'
import {carriedId, emptyUsage, wrapReasoning} from './ir.js'
import {toolSearchCallItem} from './tool-search.js'

export type Body = Record<string, unknown>

export const isObject = (value: unknown): value is Body =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

export const num = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) ? value : 0

export function newId(ctx: CodecContext | undefined, prefix: string): string {
  return ctx?.newId?.(prefix) ?? `${prefix}_${randomUUID().replace(/-/g, '')}`
}

/**
 * The id of an output item gwctl writes (`msg`, `rs`, `fc`, `ctc`, `tsc`, `ws`): its prefix, `gw`
 * and 32 hex digits. The `gw` tells it apart from any server's (OpenAI's are 48 hex digits or
 * more, vLLM's 32 as gwctl's were before it, xAI's its own), so a reference to one gwctl no longer
 * holds (a restart, an eviction) is refused as gwctl's, not sent on to a server that never made
 * it ({@link mintedHere}).
 */
export const newItemId = (ctx: CodecContext | undefined, prefix: string): string =>
  ctx?.newId?.(prefix) ?? `${prefix}_gw${randomUUID().replace(/-/g, '')}`

/** Whether `id` is one gwctl minted for an output item ({@link newItemId}). */
export const mintedHere = (id: string): boolean => /^[a-z]+_gw[0-9a-f]{32}$/.test(id)

/** `resp_…` for an answer id of another family (Codex and the SDK only need it to be a string). */
export const responseId = (id: string): string => (id.startsWith('resp_') ? id : `resp_${id}`)

export function usageFromResponses(raw: unknown): Partial<Usage> | undefined {
  if (!isObject(raw)) return undefined
  const input = isObject(raw.input_tokens_details) ? raw.input_tokens_details : {}
  const output = isObject(raw.output_tokens_details) ? raw.output_tokens_details : {}
  return {
    inputTokens: num(raw.input_tokens),
    outputTokens: num(raw.output_tokens),
    cacheReadTokens: num(input.cached_tokens),
    reasoningTokens: num(output.reasoning_tokens),
    // (GPT-5.6 on: the prompt written to the cache, billed at 1.25 times the input)
    ...(input.cache_write_tokens !== undefined ? {cacheCreationTokens: num(input.cache_write_tokens)} : {}),
  }
}

export function usageToResponses(usage: Usage): Body {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details:
      usage.cacheCreationTokens > 0
        ? {cached_tokens: usage.cacheReadTokens, cache_write_tokens: usage.cacheCreationTokens}
        : {cached_tokens: usage.cacheReadTokens},
    output_tokens: usage.outputTokens,
    output_tokens_details: {reasoning_tokens: usage.reasoningTokens},
    total_tokens: usage.inputTokens + usage.outputTokens,
  }
}

export const fullUsage = (usage: Partial<Usage> | undefined): Usage => ({...emptyUsage(), ...usage})

/** Whether the client's request declared `name` as a Responses `custom` tool. */
export const isCustomTool = (request: Request | undefined, name: string): boolean =>
  !!request?.tools.some((tool) => tool.name === name && tool.custom)

/**
 * The free-form input of a custom tool call from its IR arguments `{"input": …}`. A model of
 * another family that gets the tool as a function of one string `input` also writes it in other
 * shapes, as Codex's peers found (cc-switch #3669, copilot-api #242, codex #35361), recovered
 * here so that Codex gets the patch or the code and not an object of it: the input raw (kept as
 * it came, chat.ts), the input in a key of another name (`{"patch": …}`, `{"code": …}`: the
 * object's one key, of the names models use for it), Codex's shell form of a patch (`{"command": ["apply_patch", PATCH]}`), a JSON
 * string of it; then one ``` fence around the whole input, and a patch's heredoc
 * (`apply_patch <<'EOF'` … `EOF`), taken off.
 */
/**
 * Whether a call's arguments are whole: a JSON object. A call the token limit stopped right after
 * is cut only when they are not (Gemini sends every call whole; a chat model's last call may have
 * ended just before the limit): a whole call is still sent as done, for the client to run.
 */
export function wholeArguments(args: string): boolean {
  try {
    const parsed: unknown = JSON.parse(args)
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
  } catch {
    return false
  }
}

/** The keys a chat model wraps a custom tool's input in (cc-switch #3669, copilot-api #242). */
const WRAPPER_KEYS = new Set([
  'input',
  'patch',
  'code',
  'command',
  'cmd',
  'script',
  'content',
  'text',
  'diff',
])

export function customInput(args: string): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(args)
  } catch {
    // not JSON: the model wrote the input itself
    return unwrappedInput(args)
  }
  if (isObject(parsed)) {
    if (typeof parsed.input === 'string') return unwrappedInput(parsed.input)
    // (the key names models put it under: a custom tool's own JSON input, `{"query": …}`, stays)
    const keys = Object.keys(parsed)
    const only = keys.length === 1 && WRAPPER_KEYS.has(keys[0]) ? parsed[keys[0]] : undefined
    if (typeof only === 'string') return unwrappedInput(only)
    const command = parsed.command ?? parsed.cmd
    if (Array.isArray(command) && command[0] === 'apply_patch' && typeof command[1] === 'string')
      return unwrappedInput(command[1])
  } else if (typeof parsed === 'string') return unwrappedInput(parsed)
  return args
}

/** One ``` fence around the whole text (its language tag and all). */
const FENCED = /^\s*```[^\n`]*\n([\s\S]*?)\n?```\s*$/
/** A patch in a shell heredoc, as Codex's shell runs it: `apply_patch <<'EOF'\n…\nEOF`. */
const HEREDOC = /^\s*(?:apply_patch\s*)?<<-?\s*(['"]?)(\w+)\1[ \t]*\n([\s\S]*?)\n\2\s*$/

/** A custom tool's input without a fence around it, and a patch without its heredoc. */
function unwrappedInput(input: string): string {
  // (a byte looked at before either test: nearly every input has neither)
  if (input.includes('```')) {
    const fenced = FENCED.exec(input)
    if (fenced) input = fenced[1]
  }
  if (input.includes('<<')) {
    const heredoc = HEREDOC.exec(input)
    if (heredoc && heredoc[3].trimStart().startsWith('*** Begin Patch')) input = heredoc[3]
  }
  return input
}

/** The one opaque a reasoning part carries (a Responses item has one string field for it). */
export const opaqueOf = (part: ReasoningPart): Opaque | undefined =>
  part.encrypted ?? part.signature ?? part.redacted

/** A reasoning output item for a Responses client (`summary` from the text, the opaque wrapped). */
export function reasoningItem(part: ReasoningPart, fallbackId: string): Body {
  let id = fallbackId
  let encrypted: string | undefined
  if (part.encrypted?.family === 'responses') {
    const own = parseOwnReasoning(part.encrypted.value)
    if (own.id) id = own.id
    encrypted = own.encrypted_content
  } else encrypted = wrapReasoning('responses', part)
  const item: Body = {
    type: 'reasoning',
    id,
    summary: part.text ? [{type: 'summary_text', text: part.text}] : [],
  }
  if (encrypted !== undefined) item.encrypted_content = encrypted
  return item
}

/** `{"id":…,"encrypted_content":…}`, the value of a Responses-family `encrypted` opaque. */
export function parseOwnReasoning(value: string): {id?: string; encrypted_content?: string} {
  try {
    const parsed: unknown = JSON.parse(value)
    if (isObject(parsed))
      return {
        id: typeof parsed.id === 'string' ? parsed.id : undefined,
        encrypted_content:
          typeof parsed.encrypted_content === 'string' ? parsed.encrypted_content : undefined,
      }
  } catch {
    // a bare value: the encrypted content itself
  }
  return {encrypted_content: value}
}

/**
 * A Responses reasoning item's own state as an opaque. Its JSON text is written when something
 * reads `value` (an upstream or client of the Responses family, a wrap for another client), not
 * when the item is decoded: Codex sends every earlier turn's encrypted reasoning (KBs each) on
 * every turn, and an upstream of another family never reads it. `value` is an own enumerable
 * property (a getter), so a copy, `JSON.stringify` or `structuredClone` of the part has it.
 */
export function ownReasoning(id: unknown, encrypted: unknown): Opaque | undefined {
  if (typeof encrypted !== 'string' || !encrypted) return undefined
  let raw: string | undefined = encrypted
  let text: string | undefined
  return {
    family: 'responses',
    get value(): string {
      if (text === undefined) {
        text = JSON.stringify({id, encrypted_content: raw})
        // (the text holds it: one copy, not two, in a part the gateway keeps, which carry.ts
        // counts once)
        raw = undefined
      }
      return text
    },
  }
}

/** Whether any of these reasoning parts holds state of a family other than `client`'s. */
export const hasForeignOpaque = (parts: Part[], client: string): boolean =>
  parts.some(
    (p) =>
      p.type === 'reasoning' &&
      [p.signature, p.redacted, p.encrypted].some((o) => o !== undefined && o.family !== client),
  )

/** A tool call's own signature (Gemini) as a reasoning part, so a Responses client keeps it. */
export const signaturePart = (signature: Opaque): ReasoningPart => ({type: 'reasoning', text: '', signature})

/**
 * The item of a tool call for a Responses client: a `custom_tool_call` for a tool it declared
 * custom, a tool of one of its namespaces under the tool's own name with `namespace`, and a call
 * of Codex's tool search as the `tool_search_call` it runs.
 */
export function functionCallItem(
  ctx: CodecContext | undefined,
  call: {id: string; name: string; arguments: string},
  itemId: string,
  status: 'in_progress' | 'completed' | 'incomplete',
): Body {
  const tool = ctx?.request?.tools.find((t) => t.name === call.name)
  if (tool?.toolSearch) return toolSearchCallItem(call, itemId, status)
  const named = tool?.namespace
    ? {name: tool.namespace.tool, namespace: tool.namespace.name}
    : {name: call.name}
  if (tool?.custom)
    return {
      type: 'custom_tool_call',
      id: itemId,
      call_id: call.id,
      ...named,
      input: status !== 'in_progress' ? customInput(call.arguments) : '',
      status,
    }
  return {
    type: 'function_call',
    id: itemId,
    call_id: call.id,
    ...named,
    arguments: status !== 'in_progress' ? call.arguments || '{}' : '',
    status,
  }
}

export function statusOf(stop: StopReason): {status: string; incomplete_details: Body | null} {
  if (stop === 'max_tokens' || stop === 'context_window')
    return {status: 'incomplete', incomplete_details: {reason: 'max_output_tokens'}}
  if (stop === 'content_filter') return {status: 'incomplete', incomplete_details: {reason: 'content_filter'}}
  return {status: 'completed', incomplete_details: null}
}

/** The response object of a Responses answer (non-stream body, and the stream's snapshots). */
export function responseObject(fields: {
  id: string
  model: string
  createdAt: number
  status: string
  output: Body[]
  usage: Usage | null
  incompleteDetails?: Body | null
  request?: Request
}): Body {
  return {
    id: responseId(fields.id),
    object: 'response',
    created_at: fields.createdAt,
    status: fields.status,
    error: null,
    incomplete_details: fields.incompleteDetails ?? null,
    model: fields.model,
    output: fields.output,
    parallel_tool_calls: fields.request?.parallelToolCalls ?? true,
    tool_choice: 'auto',
    tools: [],
    usage: fields.usage ? usageToResponses(fields.usage) : null,
  }
}

/**
 * Where an answer's items are kept for the client's `item_reference`s: the daemon's item store,
 * when the client's request left `store` on (ir.ts `Request.storeItems`); undefined otherwise.
 */
export const itemStoreOf = (ctx: CodecContext | undefined): ItemStore | undefined =>
  ctx?.request?.storeItems ? ctx.carry?.items : undefined

/**
 * Keeps an answer item's `parts` in `items` by its `id`, its encrypted reasoning marked with the
 * server that made it (`ctx.server`, ir.ts `ReasoningPart.server`): put back only for that server.
 */
export function keepItem(items: ItemStore, ctx: CodecContext | undefined, id: string, parts: Part[]): void {
  const server = ctx?.server
  const kept =
    server === undefined
      ? parts
      : parts.map((p) => (p.type === 'reasoning' && p.encrypted ? {...p, server} : p))
  items.set(id, kept, partsBytes(parts))
}

/**
 * A call as it is kept for the client's `item_reference`: as the decoder reads the same item sent
 * in full. A custom tool's call is `{"input": …}` of the input the client got ({@link customInput}),
 * not the model's arguments as they came: a chat model writes a patch as raw text (chat.ts keeps
 * it so), which would go to Messages and Gemini as `{}` and to a chat upstream as arguments that
 * are not JSON (review73).
 */
export const keptCall = (ctx: CodecContext | undefined, part: ToolCallPart): ToolCallPart =>
  isCustomTool(ctx?.request, part.name)
    ? {...part, arguments: JSON.stringify({input: customInput(part.arguments)})}
    : part

/**
 * About how many bytes an answer item's parts hold, from the lengths of their strings (an
 * opaque's value was read already, by the item written for the client): nothing serialised.
 */
export function partsBytes(parts: Part[]): number {
  let bytes = 0
  for (const part of parts) {
    bytes += 64
    if (part.type === 'text') bytes += part.text.length
    else if (part.type === 'reasoning') {
      bytes += part.text.length
      const opaque = opaqueOf(part)
      if (opaque) bytes += opaque.value.length
    } else if (part.type === 'tool_call') {
      bytes += part.id.length + part.name.length + part.arguments.length
      if (part.signature) bytes += part.signature.value.length
    } else if (part.type === 'web_search') {
      bytes += part.query.length
      for (const r of part.results) bytes += 32 + r.url.length + (r.title?.length ?? 0)
    }
  }
  return bytes
}

/**
 * CARRY: an assistant turn whose tool call has no reasoning before it gets the reasoning kept for
 * that call (Gemini CLI drops thought parts; a Responses client may leave reasoning items out).
 */
export function restoreCarried(message: Message, ctx: CodecContext): void {
  if (!ctx.carry) return
  const first = message.parts.findIndex((p) => p.type === 'tool_call')
  if (first < 0 || message.parts.slice(0, first).some((p) => p.type === 'reasoning')) return
  for (const part of message.parts)
    if (part.type === 'tool_call') {
      const id = carriedId(ctx.carry, part)
      const kept = id === undefined ? undefined : ctx.carry.get(id)
      if (kept?.length) {
        message.parts.splice(first, 0, ...kept)
        return
      }
    }
}
