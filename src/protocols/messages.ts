/**
 * Anthropic Messages codec (`POST /v1/messages`), for Messages clients (Claude Code) and Messages
 * upstreams. Streams are in `messages-stream.ts`.
 */
import type {Json} from './cm-common.js'
import {
  applyCarry,
  argsObject,
  arr,
  bodyObject,
  isObj,
  makeId,
  num,
  storeCarry,
  str,
  topKOf,
} from './cm-common.js'
import {startsWithClassifier} from './classifier.js'
import {MessagesStreamEncoder} from './messages-stream-encoder.js'
import {
  MessagesStreamDecoder,
  decodeMessagesUsage,
  messagesStop,
  messagesUsage,
  messagesUsageText,
  STOP_REASON,
} from './messages-stream.js'
import {encodeMessagesRequest, JSON_ANSWER_TOOL} from './messages-request.js'
import {searchBlocks, searchResultPart} from './web-search.js'
import type {
  Codec,
  CodecContext,
  Effort,
  FunctionTool,
  ImagePart,
  Message,
  PlacedSystem,
  Part,
  ReasoningPart,
  ReasoningSettings,
  Request,
  Response,
  ResponseFormat,
  StopReason,
  TextPart,
  ToolChoice,
  ToolResultPart,
  WebSearchPart,
  WebSearchTool,
} from './ir.js'
import {isServerToolSearch, loadReferencedTools, messagesFunctionTool} from './deferred-tools.js'
import {placedHere, settlePlaced, TranslationError, toolRemovalText, unwrapOpaque, wrapOpaque} from './ir.js'

// ---- decoding a Messages client's request ----

function cacheOf(block: Json): TextPart['cache'] | undefined {
  if (!isObj(block.cache_control)) return undefined
  return block.cache_control.ttl === '1h' ? '1h' : 'ephemeral'
}

function textPart(block: Json): TextPart {
  const cache = cacheOf(block)
  return {type: 'text', text: str(block.text) ?? '', ...(cache ? {cache} : {})}
}

function imagePart(block: Json): ImagePart {
  const source = isObj(block.source) ? block.source : {}
  if (source.type === 'url') return {type: 'image', url: str(source.url) ?? ''}
  // an image stored at Anthropic (the Files API) means nothing to another vendor: refused by name,
  // not sent as an empty image
  if (source.type !== 'base64' && source.type !== undefined)
    throw new TranslationError(
      `Messages image source type "${String(source.type)}" cannot be translated: send the image's bytes (base64) or its URL`,
    )
  return {type: 'image', mediaType: str(source.media_type) ?? 'image/png', data: str(source.data) ?? ''}
}

const unsupported = (type: unknown): TranslationError =>
  new TranslationError(`Messages content block type "${String(type)}" cannot be translated`)

/**
 * A `search_result` block (Anthropic's search results for RAG, in a tool's result or a user turn):
 * for another family the text its model reads, its title and source, then its text; the block
 * itself for a Messages upstream (`native`).
 */
function searchResultText(block: Json): TextPart {
  const title = str(block.title) ?? ''
  const source = str(block.source) ?? ''
  let text = `Search result${title ? ` ${JSON.stringify(title)}` : ''}${source ? ` <${source}>` : ''}:`
  for (const raw of arr(block.content))
    if (isObj(raw) && raw.type === 'text' && typeof raw.text === 'string') text += `\n${raw.text}`
  const cache = cacheOf(block)
  return {type: 'text', text, ...(cache ? {cache} : {}), native: {family: 'messages', raw: block}}
}

/**
 * A block of a user turn or a tool's result that no other family has (and that carries nothing
 * the model must act on): a line in its place that says so, and its type noted for the log row.
 * Refused, it would fail this turn and every later one, the block being in the history; dropped
 * without a word, the model would take the rest for all there was.
 */
function leftOutText(type: unknown, where: string, refs: ToolReferences): TextPart {
  // (a name, not whatever text a client put there, goes into the prompt and the log row)
  const name = typeof type === 'string' && /^[\w.-]{1,64}$/.test(type) ? type : 'unknown'
  refs.leftOut ??= new Set()
  refs.leftOut.add(name)
  return {
    type: 'text',
    text: `[${where} held a block of type "${name}", left out: it cannot be sent to this model]`,
  }
}

/**
 * A `document` block (Claude Code's Read of a PDF, an attached file): a base64 or URL PDF as a
 * media part, a plain-text document as its text. A document by file id (the Files API) or of
 * content blocks has no equivalent elsewhere and is refused by name.
 */
function documentPart(block: Json): ImagePart | TextPart {
  const source = isObj(block.source) ? block.source : {}
  const name = str(block.title)
  const named = <T extends ImagePart>(part: T): T => (name ? Object.assign(part, {name}) : part)
  if (source.type === 'base64')
    return named({
      type: 'image',
      mediaType: str(source.media_type) ?? 'application/pdf',
      data: str(source.data) ?? '',
    })
  if (source.type === 'url')
    return named({type: 'image', mediaType: 'application/pdf', url: str(source.url) ?? ''})
  if (source.type === 'text') {
    const text = str(source.data) ?? ''
    return {type: 'text', text: name ? `${name}\n\n${text}` : text}
  }
  throw new TranslationError(
    `Messages document source type "${String(source.type)}" cannot be translated: send the document's bytes (base64), its URL or its text`,
  )
}

/** A signature a Messages client sent back: the client's own, or a wrapped foreign one. */
function reasoningOf(text: string, signature: string): ReasoningPart {
  const opaque = unwrapOpaque('messages', signature)
  // A Responses reasoning item travels as `encrypted`, the others as `signature`.
  return opaque.family === 'responses'
    ? {type: 'reasoning', text, encrypted: opaque}
    : {type: 'reasoning', text, signature: opaque}
}

/**
 * The `tool_reference` blocks of a request's tool results (Anthropic's tool search: Claude Code
 * 2.1.3xx answers its ToolSearch tool with them), each run of adjacent ones one text part whose text
 * is written once the request's tools are known (`loadDeferredTools`).
 */
interface ToolReferences {
  /** Each run's text part and the tool names it references, in order. */
  runs: Array<{part: TextPart; names: string[]}>
  /** A web search's blocks were read: in the request, and in the turn being read. */
  searches?: boolean
  turnSearches?: boolean
  /** The types of the blocks left out (`leftOutText`). */
  leftOut?: Set<string>
  /** The tools a mid-conversation system message defines (`tool_definition`), by name. */
  defined?: Map<string, FunctionTool>
}

function toolResult(block: Json, refs: ToolReferences): ToolResultPart {
  const content: Array<TextPart | ImagePart> = []
  if (typeof block.content === 'string') {
    if (block.content !== '') content.push({type: 'text', text: block.content})
  } else {
    let run: ToolReferences['runs'][number] | undefined
    for (const raw of arr(block.content)) {
      const b = isObj(raw) ? raw : {}
      if (b.type === 'tool_reference') {
        const name = str(b.tool_name) ?? ''
        if (run) run.names.push(name)
        else {
          run = {part: {type: 'text', text: ''}, names: [name]}
          refs.runs.push(run)
          content.push(run.part)
        }
        continue
      }
      run = undefined
      if (b.type === 'text') content.push(textPart(b))
      else if (b.type === 'image') content.push(imagePart(b))
      else if (b.type === 'document') content.push(documentPart(b))
      else if (b.type === 'search_result') content.push(searchResultText(b))
      // a tool's odd output must not end the session; the model is told what it does not see
      else content.push(leftOutText(b.type, "The tool's result", refs))
    }
  }
  // The IR has no cache mark on a tool result: it rides on its last text (see the report).
  const cache = cacheOf(block)
  if (cache) {
    const last = content.findLast((p): p is TextPart => p.type === 'text')
    if (last) last.cache = cache
    else content.push({type: 'text', text: '', cache})
  }
  return {
    type: 'tool_result',
    callId: str(block.tool_use_id) ?? '',
    content,
    ...(block.is_error === true ? {isError: true} : {}),
  }
}

/**
 * What Claude Code's advisor (the `advisor_20260301` server tool, `advisorModel` in its settings)
 * said, as text for another vendor's model: Anthropic ran the call (`server_tool_use` named
 * `advisor`, dropped) and wrote the stronger model's advice in the `advisor_tool_result` after it
 * (`{"type": "advisor_result", "text": …}`). A redacted result (`advisor_redacted_result`, only
 * Anthropic can read its `encrypted_content`) or a failed call (`advisor_tool_result_error`) is
 * left out: the model went on without advice then too. Refused, the blocks would fail every later
 * turn of a session that used the advisor and then moved to another vendor (a `/model` switch, a
 * pool's fallback).
 */
function advisorText(block: Json): TextPart | undefined {
  const advice = advisorAdviceText(block)
  // a paragraph of its own: chat joins an assistant turn's texts with nothing between
  return advice ? {type: 'text', text: `\n\n${advice}\n\n`} : undefined
}

/**
 * The advice of an `advisor_tool_result` as the model reads it (`Advisor's advice: …`), or
 * undefined for a redacted result or a failed call (also for a Messages body passed through to a
 * host that refuses the advisor: ./server-tools.ts).
 */
export function advisorAdviceText(block: Json): string | undefined {
  const content = isObj(block.content) ? block.content : {}
  const text = content.type === 'advisor_result' ? str(content.text) : undefined
  return text ? `Advisor's advice: ${text}` : undefined
}

function decodeBlock(raw: unknown, refs: ToolReferences, user: boolean): Part | undefined {
  const b = isObj(raw) ? raw : {}
  switch (b.type) {
    case 'text':
      return textPart(b)
    case 'search_result':
      return searchResultText(b)
    case 'image':
      return imagePart(b)
    case 'document':
      return documentPart(b)
    case 'tool_use':
      return {
        type: 'tool_call',
        id: str(b.id) ?? '',
        name: str(b.name) ?? '',
        arguments: JSON.stringify(b.input ?? {}),
      }
    case 'tool_result':
      return toolResult(b, refs)
    case 'thinking': {
      const sig = str(b.signature)
      return sig ? reasoningOf(str(b.thinking) ?? '', sig) : {type: 'reasoning', text: str(b.thinking) ?? ''}
    }
    case 'redacted_thinking':
      return {type: 'reasoning', text: '', redacted: unwrapOpaque('messages', str(b.data) ?? '')}
    case 'server_tool_use':
      // the advisor's call: its advice comes in the next block (advisorText)
      if (b.name === 'advisor') return undefined
      // a web search Anthropic ran (a history made there, now going to another vendor); its
      // results come in the next block (joinSearches)
      if (b.name !== 'web_search') throw unsupported(`server_tool_use (${String(b.name)})`)
      refs.searches = refs.turnSearches = true
      return {
        type: 'web_search',
        id: str(b.id) ?? '',
        query: isObj(b.input) ? (str(b.input.query) ?? '') : '',
        results: [],
      }
    case 'web_search_tool_result':
      refs.searches = refs.turnSearches = true
      return searchResultPart(b)
    case 'advisor_tool_result':
      return advisorText(b)
    default:
      // a user's block as a tool result's is; an assistant turn's (another server tool's
      // records) is refused by name
      if (user) return leftOutText(b.type, 'This message', refs)
      throw unsupported(b.type)
  }
}

/** The parts with each search's results joined to its `server_tool_use` (the block before them). */
function joinSearches(parts: Part[]): Part[] {
  const out: Part[] = []
  const calls = new Map<string, WebSearchPart>()
  for (const p of parts) {
    if (p.type !== 'web_search') out.push(p)
    else if (p.query === '' && calls.has(p.id)) {
      const call = calls.get(p.id)!
      call.results = p.results
      if (p.error) call.error = p.error
    } else {
      calls.set(p.id, p)
      out.push(p)
    }
  }
  return out
}

/**
 * A mid-conversation system message (`role: "system"` in `messages`, Anthropic's
 * `mid-conversation-system-2026-04-07`: Claude Code sends the Agent tool's agent types as one,
 * after the last user turn, so the cached top-level system prompt stays the same): its text blocks,
 * with what its other blocks say (`mid-conversation-tool-changes-2026-07-01`, Claude Code 2.1.273
 * on, as its `Avl` writes them: the text, then the removals, then the additions, the last block
 * with the message's cache mark):
 * - `{"type":"tool_addition","tool":{"type":"tool_reference","name":…}}` makes a deferred tool of
 *   the request's (`defer_loading`) the model's from then on, as a `tool_reference` in a tool result
 *   does (`loadDeferredTools`, in the same first-reference order); it has no text of its own: the
 *   message's text announces it;
 * - `{"type":"tool_addition","tool":{"type":"tool_definition","definition":{name, description,
 *   input_schema}}}` defines a tool that is not in `tools` at all (an MCP tool that came late): it
 *   joins the tools at that point of the order;
 * - `{"type":"tool_removal","tool":{"type":"tool_reference","name":…}}` takes a tool away: the tool
 *   list stays as it was (the upstream's prompt cache keeps it) and a line tells the model the tool
 *   is gone (`toolRemovalText`).
 * Any other block is left out with a line that says so (`leftOutText`), not refused: Claude Code
 * reads a 400 it does not recognise as its system messages refused, resends the request without
 * any of them and goes on without them (agent types, skills, late MCP tools, per-turn effort) until
 * `/clear`, all without a word to its user; a line loses one block and the log row names it.
 * A cache mark on a block that has no text here rides on the message's last text.
 */
function systemMessageParts(m: Json, refs: ToolReferences): TextPart[] {
  if (typeof m.content === 'string') return m.content === '' ? [] : [{type: 'text', text: m.content}]
  const parts: TextPart[] = []
  let cache: TextPart['cache'] | undefined
  for (const raw of arr(m.content)) {
    const b = isObj(raw) ? raw : {}
    if (b.type === 'text') {
      parts.push(textPart(b))
      continue
    }
    const tool = isObj(b.tool) ? b.tool : {}
    const name = str(tool.name) ?? str(tool.tool_name)
    if (b.type === 'tool_addition' && tool.type === 'tool_reference' && name !== undefined)
      refs.runs.push({part: {type: 'text', text: ''}, names: [name]})
    else if (b.type === 'tool_addition' && tool.type === 'tool_definition' && isObj(tool.definition)) {
      const defined = definedTool(tool.definition)
      if (defined) {
        ;(refs.defined ??= new Map()).set(defined.name, defined)
        refs.runs.push({part: {type: 'text', text: ''}, names: [defined.name]})
      } else parts.push(leftOutText('tool_definition', 'This system message', refs))
    } else if (b.type === 'tool_removal' && name !== undefined)
      parts.push({type: 'text', text: toolRemovalText(name)})
    else parts.push(leftOutText(b.type, 'This system message', refs))
    cache = cacheOf(b) ?? cache
  }
  const last = parts.at(-1)
  if (cache && last && !last.cache) last.cache = cache
  return parts
}

/** A `tool_definition`'s tool (a custom tool: a name and an input schema), or undefined. */
function definedTool(d: Json): FunctionTool | undefined {
  if (typeof d.name !== 'string' || (d.type !== undefined && d.type !== 'custom')) return undefined
  return {
    name: d.name,
    ...(typeof d.description === 'string' ? {description: d.description} : {}),
    parameters: isObj(d.input_schema) ? d.input_schema : {type: 'object', properties: {}},
  }
}

/**
 * The effort a mid-conversation system message states (`output_config.effort`: Claude Code
 * 2.1.332 writes `{"role":"system","content":[],"output_config":{"effort":…}}` after a user turn
 * whose effort differs from the one before, `/effort` changed mid-conversation). As Claude Code
 * reads its own history (`ECt`), a statement holds from there on until the next one: the last one
 * in the request is the effort of the answer asked for, over the request's own `output_config`.
 * Its `timing` (the time of the turn) is not sent on: a line for every turn would change the
 * system prompt, and with it the upstream's prompt cache, on every request.
 */
function statedEffort(m: Json): Effort | undefined {
  const config = isObj(m.output_config) ? m.output_config : undefined
  return config && typeof config.effort === 'string' ? MESSAGES_EFFORT[config.effort] : undefined
}

/** Anthropic's effort above `high` (`xhigh`, `max`) an `output_config` states, for the IR's `beyond`. */
function statedBeyond(m: Json): 'xhigh' | 'max' | undefined {
  const effort = isObj(m.output_config) ? m.output_config.effort : undefined
  return effort === 'xhigh' || effort === 'max' ? effort : undefined
}

/** The turns of a Messages request, with its mid-conversation system messages ({@link decodeTurns}). */
interface Turns {
  messages: Message[]
  system: TextPart[]
  placed: PlacedSystem[]
  effort?: Effort
  beyond?: 'xhigh' | 'max'
}

/**
 * The turns of a Messages request, and the text of its mid-conversation system messages. Few other
 * upstreams take a system message at a position of its own (several system messages, or one after
 * the first turn, are refused by many chat templates and by Gemini): they join the system prompt,
 * after the top-level one, in order, with their cache marks, and each one's place is kept beside
 * (`placed`: OpenAI's Responses API and chat completions get it there, ir.ts `inPlaceSystem`); the
 * turns around one that was taken out are one turn when they have the same role, as Anthropic
 * reads consecutive turns of a role (its place then inside that turn).
 */
function decodeTurns(raw: unknown, ctx: CodecContext, refs: ToolReferences): Turns {
  const names = new Map<string, string>()
  const messages: Message[] = []
  const system: TextPart[] = []
  const placed: PlacedSystem[] = []
  let effort: Effort | undefined
  let beyond: 'xhigh' | 'max' | undefined
  let joinNext = false
  for (const item of arr(raw)) {
    const m = isObj(item) ? item : {}
    if (m.role === 'system') {
      const parts = systemMessageParts(m, refs)
      system.push(...parts)
      // (one before the first turn is the system prompt's anywhere; an effort statement has no text)
      const here = placedHere(messages, parts)
      if (here) placed.push(here)
      const stated = statedEffort(m)
      if (stated) {
        effort = stated
        beyond = statedBeyond(m)
      }
      joinNext = true
      continue
    }
    if (m.role !== 'user' && m.role !== 'assistant')
      throw new TranslationError(`Messages role "${String(m.role)}" cannot be translated`)
    let parts: Part[] = []
    if (typeof m.content === 'string') {
      if (m.content !== '') parts.push({type: 'text', text: m.content})
    } else
      for (const block of arr(m.content)) {
        // (the advisor's call has no part of its own)
        const part = decodeBlock(block, refs, m.role === 'user')
        if (part) parts.push(part)
      }
    if (refs.turnSearches) {
      parts = joinSearches(parts)
      refs.turnSearches = false
    }
    for (const p of parts) {
      if (p.type === 'tool_call') names.set(p.id, p.name)
      if (p.type === 'tool_result' && names.has(p.callId)) p.name = names.get(p.callId)
    }
    const turn: Message =
      m.role === 'assistant'
        ? {role: 'assistant', parts: applyCarry(parts, ctx.carry, false)}
        : {role: 'user', parts}
    const last = messages.at(-1)
    if (joinNext && last?.role === turn.role) last.parts.push(...turn.parts)
    else messages.push(turn)
    joinNext = false
  }
  settlePlaced(placed, messages)
  const turns: Turns = {messages, system, placed}
  if (effort) turns.effort = effort
  if (beyond) turns.beyond = beyond
  return turns
}

function decodeTools(raw: unknown): {
  tools: FunctionTool[]
  builtin: Array<{family: 'messages'; raw: unknown}>
  deferred: Map<string, FunctionTool> | undefined
  search?: {tool: WebSearchTool; name: string}
} {
  const tools: FunctionTool[] = []
  const builtin: Array<{family: 'messages'; raw: unknown}> = []
  let deferred: Map<string, FunctionTool> | undefined
  let search: {tool: WebSearchTool; name: string} | undefined
  for (const t of arr(raw)) {
    if (isObj(t) && typeof t.type === 'string' && t.type.startsWith('web_search_')) {
      // Anthropic's web search (Claude Code's WebSearch asks for it in a request of its own)
      search = {tool: webSearchTool(t), name: str(t.name) ?? 'web_search'}
      continue
    }
    const tool = messagesFunctionTool(t)
    if (!tool) builtin.push({family: 'messages', raw: t})
    else if ((t as Json).defer_loading === true) (deferred ??= new Map()).set(tool.name, tool)
    else tools.push(tool)
  }
  return {tools, builtin, deferred, search}
}

const strings = (v: unknown): string[] | undefined => {
  const list = arr(v).filter((s): s is string => typeof s === 'string')
  return list.length ? list : undefined
}

/** What an Anthropic `web_search_*` tool limits the search to. */
function webSearchTool(t: Json): WebSearchTool {
  const tool: WebSearchTool = {}
  const max = num(t.max_uses)
  if (max !== undefined) tool.maxUses = max
  const allowed = strings(t.allowed_domains)
  if (allowed) tool.allowedDomains = allowed
  const blocked = strings(t.blocked_domains)
  if (blocked) tool.blockedDomains = blocked
  if (isObj(t.user_location)) {
    const l = t.user_location
    const location = {
      ...(str(l.city) ? {city: str(l.city)} : {}),
      ...(str(l.region) ? {region: str(l.region)} : {}),
      ...(str(l.country) ? {country: str(l.country)} : {}),
      ...(str(l.timezone) ? {timezone: str(l.timezone)} : {}),
    }
    if (Object.keys(location).length) tool.userLocation = location
  }
  return tool
}

/**
 * Anthropic's tool search, for an upstream of another family (./deferred-tools.ts: the rule, which
 * a Messages body passed through to a server that is not Anthropic's gets in its own form): a
 * deferred tool nobody referenced is left out, a referenced one joins the tools after the others
 * in the order of first reference, and each run of references is written as the tools'
 * definitions in a `<functions>` block.
 */
function loadDeferredTools(
  tools: FunctionTool[],
  deferred: Map<string, FunctionTool> | undefined,
  refs: ToolReferences,
): void {
  if (refs.runs.length === 0) return
  const known = new Map<string, FunctionTool>()
  for (const tool of tools) known.set(tool.name, tool)
  const {loaded, texts} = loadReferencedTools(
    known,
    (name) => deferred?.get(name) ?? refs.defined?.get(name),
    refs.runs,
    (tool) => tool,
  )
  tools.push(...loaded)
  for (let i = 0; i < refs.runs.length; i++) {
    refs.runs[i].part.text = texts[i].text
    refs.runs[i].part.references = texts[i].references
  }
}

function decodeToolChoice(v: unknown): {choice?: ToolChoice; parallel?: boolean} {
  if (!isObj(v)) return {}
  const parallel = v.disable_parallel_tool_use === true ? {parallel: false} : {}
  if (v.type === 'auto' || v.type === 'none') return {choice: {type: v.type}, ...parallel}
  if (v.type === 'any') return {choice: {type: 'required'}, ...parallel}
  if (v.type === 'tool' && typeof v.name === 'string')
    return {choice: {type: 'tool', name: v.name}, ...parallel}
  return parallel
}

function decodeThinking(v: unknown): ReasoningSettings | undefined {
  if (!isObj(v)) return undefined
  if (v.type === 'disabled') return {disabled: true}
  // `display: omitted`: the client wants no thinking text back (its signature still goes)
  const include = v.display !== 'omitted'
  if (v.type === 'enabled') {
    const budget = num(v.budget_tokens)
    return {include, ...(budget !== undefined ? {budgetTokens: budget} : {})}
  }
  if (v.type === 'adaptive') return {include}
  return undefined
}

/**
 * Anthropic's effort levels, as the IR's: the two above `high` are `high` with the IR's `beyond`
 * (each upstream gets the most it takes: thinking-off.ts `beyondEffort`).
 */
const MESSAGES_EFFORT: Record<string, Effort> = {
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
  max: 'high',
}

/**
 * What `output_config` asks (Claude Code sends it with models that take it): the effort, and a
 * structured output's JSON schema (`output_config.format`, or the deprecated beta `output_format`).
 * `task_budget` has no equivalent elsewhere.
 */
function decodeOutputConfig(b: Json): {effort?: Effort; beyond?: 'xhigh' | 'max'; format?: ResponseFormat} {
  const config = isObj(b.output_config) ? b.output_config : undefined
  const effort = config && typeof config.effort === 'string' ? MESSAGES_EFFORT[config.effort] : undefined
  const beyond = statedBeyond(b)
  const raw = config && config.format !== undefined ? config.format : b.output_format
  const format =
    isObj(raw) && raw.type === 'json_schema' && isObj(raw.schema)
      ? ({type: 'json_schema', schema: raw.schema} as ResponseFormat)
      : undefined
  return {...(effort ? {effort} : {}), ...(beyond ? {beyond} : {}), ...(format ? {format} : {})}
}

/**
 * The reasoning a request asks: its `thinking`, with `output_config`'s effort (thinking turned
 * off stays off: the effort then only says how much to write, which no other family has).
 */
function requestReasoning(
  thinking: unknown,
  effort: Effort | undefined,
  beyond: 'xhigh' | 'max' | undefined,
): ReasoningSettings | undefined {
  const reasoning = decodeThinking(thinking)
  if (!effort || reasoning?.disabled) return reasoning
  return beyond ? {...reasoning, effort, beyond} : {...reasoning, effort}
}

/** How Claude Code's attribution line starts. */
const BILLING_LINE = 'x-anthropic-billing-header:'

/**
 * The system prompt without Claude Code's attribution line (`x-anthropic-billing-header:
 * cc_version=2.1.332.3f1; cc_entrypoint=cli; cch=…;`), its first block. Anthropic bills a
 * subscription by it; to any other vendor it is text at the head of the prompt that changes from
 * request to request (the version's suffix is taken from the conversation, `cch` from the body),
 * so every turn would miss the upstream's prefix cache and pay for the whole prompt again. This
 * decoder serves translated routes only (a Messages upstream gets the client's own bytes), so
 * the line goes here; as a leading line of a longer block, that line. One `startsWith` per block.
 */
function withoutBillingLine(system: TextPart[]): TextPart[] {
  let out: TextPart[] | undefined
  for (let i = 0; i < system.length; i++) {
    const p = system[i]
    if (!p.text.startsWith(BILLING_LINE)) {
      out?.push(p)
      continue
    }
    out ??= system.slice(0, i)
    const end = p.text.indexOf('\n')
    const rest = end < 0 ? '' : p.text.slice(end + 1).replace(/^\n+/, '')
    if (rest !== '') out.push({...p, text: rest})
  }
  return out ?? system
}

/**
 * Claude Code's session id, from its `metadata.user_id` (a JSON object of `device_id`,
 * `account_uuid` and `session_id` since 2.1): the same for every turn of a session, it is the
 * `prompt_cache_key` a Responses upstream routes the prompt to its cache by (without one OpenAI's
 * cache hits are rare). An older `user_id` (`user_…_session_…`) or another client's holds none.
 */
function sessionOf(userId: string): string | undefined {
  if (userId.indexOf('"session_id"') < 0) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(userId)
  } catch {
    return undefined
  }
  const id = isObj(parsed) ? parsed.session_id : undefined
  // (OpenAI's limit for the key, as for `user`: 64 characters)
  return typeof id === 'string' && id && id.length <= 64 ? id : undefined
}

function decodeRequest(body: unknown, ctx: CodecContext): Request {
  const b = bodyObject(body, 'Messages request')
  const refs: ToolReferences = {runs: []}
  const turns = decodeTurns(b.messages, ctx, refs)
  const system: TextPart[] = withoutBillingLine(
    typeof b.system === 'string'
      ? b.system === ''
        ? []
        : [{type: 'text', text: b.system}]
      : arr(b.system).map((raw) => textPart(isObj(raw) ? raw : {})),
  )
  system.push(...turns.system)
  const {tools, builtin, deferred, search} = decodeTools(b.tools)
  // Anthropic's own tool search (a `tool_search_tool_*` server tool, which no other family runs):
  // its deferred tools go as ordinary tools, or the model would have none of them
  if (deferred && builtin.some((t) => isServerToolSearch(t.raw))) {
    tools.push(...deferred.values())
    // (the tools a system message defines still join)
    if (refs.defined) loadDeferredTools(tools, undefined, refs)
  } else loadDeferredTools(tools, deferred, refs)
  const decodedChoice = decodeToolChoice(b.tool_choice)
  const parallel = decodedChoice.parallel
  // a choice of the search tool by its name forces the search, not a function
  const choice: ToolChoice | undefined =
    search && decodedChoice.choice?.type === 'tool' && decodedChoice.choice.name === search.name
      ? {type: 'web_search'}
      : decodedChoice.choice
  // a deferred tool the request forces is the model's too (an upstream refuses a forced tool it
  // was not given)
  const forced = choice?.type === 'tool' ? deferred?.get(choice.name) : undefined
  if (forced && !tools.includes(forced)) tools.push(forced)
  const stop = arr(b.stop_sequences).filter((s): s is string => typeof s === 'string')
  const output = decodeOutputConfig(b)
  // (a mid-conversation statement's effort holds over the request's own, its `beyond` with it)
  const reasoning = turns.effort
    ? requestReasoning(b.thinking, turns.effort, turns.beyond)
    : requestReasoning(b.thinking, output.effort, output.beyond)
  const user = isObj(b.metadata) ? str(b.metadata.user_id) : undefined
  const cacheKey = user ? sessionOf(user) : undefined
  // (the optional members set one by one: a spread of a literal makes and copies an object, twelve
  // a request)
  const request: Request = {
    model: str(b.model) ?? null,
    system,
    messages: turns.messages,
    tools,
    stream: b.stream === true,
  }
  if (turns.placed.length) request.placedSystem = turns.placed
  if (builtin.length) request.builtinTools = builtin
  if (choice) request.toolChoice = choice
  if (parallel !== undefined) request.parallelToolCalls = parallel
  const maxTokens = num(b.max_tokens)
  if (maxTokens !== undefined) request.maxTokens = maxTokens
  const temperature = num(b.temperature)
  if (temperature !== undefined) request.temperature = temperature
  const topP = num(b.top_p)
  if (topP !== undefined) request.topP = topP
  const topK = topKOf(b.top_k)
  if (topK !== undefined) request.topK = topK
  if (stop.length) request.stop = stop
  if (output.format) request.responseFormat = output.format
  // Claude Code's auto-mode classifier call without `thinking`: thinking off (its effort aside),
  // or a model that thinks by default misses its verdict's deadline (./classifier.ts)
  if (!request.stream && b.thinking === undefined && startsWithClassifier(b.system))
    request.reasoning = {disabled: true}
  else if (reasoning) request.reasoning = reasoning
  if (user) request.user = user
  if (cacheKey) request.cacheKey = cacheKey
  if (search) request.webSearch = search.tool
  if (refs.searches) request.searchesInHistory = true
  if (refs.leftOut) request.leftOut = [...refs.leftOut]
  return request
}

// ---- answers ----

/**
 * The IR stop of a Messages answer: its forced JSON call is the end of a turn to the client, and
 * `end_turn` (or none) after a tool call is `tool_use` (vLLM's Anthropic endpoint on a named
 * `tool_choice`, LiteLLM's `ollama_chat`): a chat client told `stop` would not run the call.
 */
function messagesAnswerStop(reason: unknown, json: boolean, parts: Part[]): StopReason {
  if (json && reason === 'tool_use') return 'end'
  const stop = messagesStop(reason)
  return stop === 'end' && parts.some((p) => p.type === 'tool_call') ? 'tool_use' : stop
}

function decodeResponse(body: unknown, ctx?: CodecContext): Response {
  const b = bodyObject(body, 'Messages answer')
  if (!Array.isArray(b.content)) throw new TranslationError('Messages answer has no content', 502)
  const parts: Part[] = []
  let json = false
  for (const raw of b.content) {
    const c = isObj(raw) ? raw : {}
    if (c.type === 'text') {
      // text after the JSON answer is dropped (see below)
      if (!json) parts.push({type: 'text', text: str(c.text) ?? ''})
    } else if (c.type === 'thinking') {
      const sig = str(c.signature)
      parts.push({
        type: 'reasoning',
        text: str(c.thinking) ?? '',
        ...(sig ? {signature: {family: 'messages' as const, value: sig}} : {}),
      })
    } else if (c.type === 'redacted_thinking')
      parts.push({type: 'reasoning', text: '', redacted: {family: 'messages', value: str(c.data) ?? ''}})
    else if (c.type === 'tool_use' && ctx?.jsonAnswer && c.name === JSON_ANSWER_TOOL) {
      // the answer is the first call's input alone (text or a second call beside it would make
      // the client's JSON unreadable; a forced single call has neither)
      if (json) continue
      for (let i = parts.length - 1; i >= 0; i--) if (parts[i].type === 'text') parts.splice(i, 1)
      parts.push({type: 'text', text: JSON.stringify(c.input ?? {})})
      json = true
    } else if (c.type === 'tool_use')
      parts.push({
        type: 'tool_call',
        id: str(c.id) ?? makeId(ctx, 'toolu_'),
        name: str(c.name) ?? '',
        arguments: JSON.stringify(c.input ?? {}),
      })
    else if (c.type === 'server_tool_use' && c.name === 'web_search')
      parts.push({
        type: 'web_search',
        id: str(c.id) ?? '',
        query: isObj(c.input) ? (str(c.input.query) ?? '') : '',
        results: [],
      })
    else if (c.type === 'web_search_tool_result') parts.push(searchResultPart(c))
    // Other server tool blocks (code execution, web fetch, ...) have no form outside Messages: dropped.
  }
  const joined = joinSearches(parts)
  const stopSequence = str(b.stop_sequence)
  return {
    id: str(b.id) || makeId(ctx, 'msg_'),
    model: str(b.model) ?? ctx?.request?.model ?? '',
    parts: joined,
    // the answer's JSON came as a forced call: to the client it is the end of a turn
    stop: messagesAnswerStop(b.stop_reason, json, joined),
    ...(stopSequence ? {stopSequence} : {}),
    usage: decodeMessagesUsage(b.usage),
  }
}

function encodeResponse(response: Response, ctx?: CodecContext): Record<string, unknown> {
  storeCarry(response.parts, 'messages', ctx?.carry, false)
  const content: Json[] = []
  for (const p of response.parts) {
    if (p.type === 'text' && p.text !== '') content.push({type: 'text', text: p.text})
    else if (p.type === 'reasoning') {
      if (p.redacted) content.push({type: 'redacted_thinking', data: wrapOpaque('messages', p.redacted)})
      else {
        const opaque = p.signature ?? p.encrypted
        if (p.text === '' && !opaque) continue
        content.push({
          type: 'thinking',
          thinking: p.text,
          signature: opaque ? wrapOpaque('messages', opaque) : '',
        })
      }
    } else if (p.type === 'tool_call') {
      content.push({type: 'tool_use', id: p.id, name: p.name, input: toolInput(p.arguments)})
    } else if (p.type === 'web_search') content.push(...searchBlocks(p))
  }
  return {
    id: response.id || makeId(ctx, 'msg_'),
    type: 'message',
    role: 'assistant',
    model: response.model || ctx?.request?.model || '',
    content,
    stop_reason: STOP_REASON[response.stop],
    stop_sequence: response.stopSequence ?? null,
    usage: messagesUsage(response.usage, searchCount(response.parts)),
  }
}

const searchCount = (parts: readonly Part[]): number => {
  let n = 0
  for (const p of parts) if (p.type === 'web_search') n++
  return n
}

const q = JSON.stringify

/** A tool call's arguments as Messages' `input` object (see `argsObject`; none: `{}`). */
const toolInput = (args: string): unknown => (args ? argsObject(args) : {})

/** {@link encodeResponse} written as text: the same bytes, without the object. */
function encodeResponseText(response: Response, ctx?: CodecContext): string {
  storeCarry(response.parts, 'messages', ctx?.carry, false)
  let content = ''
  for (const p of response.parts) {
    let block: string
    if (p.type === 'text') {
      if (p.text === '') continue
      block = `{"type":"text","text":${q(p.text)}}`
    } else if (p.type === 'reasoning') {
      if (p.redacted) block = `{"type":"redacted_thinking","data":${q(wrapOpaque('messages', p.redacted))}}`
      else {
        const opaque = p.signature ?? p.encrypted
        if (p.text === '' && !opaque) continue
        block = `{"type":"thinking","thinking":${q(p.text)},"signature":${q(opaque ? wrapOpaque('messages', opaque) : '')}}`
      }
    } else if (p.type === 'tool_call') {
      block = `{"type":"tool_use","id":${q(p.id)},"name":${q(p.name)},"input":${q(toolInput(p.arguments))}}`
    } else if (p.type === 'web_search') {
      const [call, result] = searchBlocks(p)
      block = `${q(call)},${q(result)}`
    } else continue
    content += content === '' ? block : `,${block}`
  }
  const id = response.id || makeId(ctx, 'msg_')
  const model = response.model || ctx?.request?.model || ''
  return `{"id":${q(id)},"type":"message","role":"assistant","model":${q(model)},"content":[${content}],"stop_reason":${q(STOP_REASON[response.stop])},"stop_sequence":${q(response.stopSequence ?? null)},"usage":${messagesUsageText(response.usage, searchCount(response.parts))}}`
}

export const messagesCodec: Codec = {
  family: 'messages',
  decodeRequest: (body, ctx) => decodeRequest(body, ctx),
  encodeRequest: (request, model, ctx) => encodeMessagesRequest(request, model, ctx),
  path: () => '/v1/messages',
  decodeResponse,
  encodeResponse,
  encodeResponseText,
  streamDecoder: (ctx) => new MessagesStreamDecoder(ctx),
  streamEncoder: (ctx) => new MessagesStreamEncoder(ctx),
}
