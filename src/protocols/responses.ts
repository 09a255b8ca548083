/**
 * The OpenAI Responses codec (`POST /v1/responses`, Codex's protocol): requests and answers
 * both ways; the stream code is in `responses-stream.ts`.
 */
import type {
  Codec,
  CodecContext,
  Effort,
  FunctionTool,
  ImagePart,
  Message,
  Part,
  PlacedSystem,
  ReasoningPart,
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
import {
  placedAfter,
  placedHere,
  ServerStateError,
  settlePlaced,
  TranslationError,
  unwrapReasoning,
  verbosityOf,
} from './ir.js'
import type {Body} from './responses-items.js'
import {
  restoreCarried,
  fullUsage,
  functionCallItem,
  hasForeignOpaque,
  isObject,
  itemStoreOf,
  keptCall,
  newId,
  newItemId,
  mintedHere,
  ownReasoning,
  keepItem,
  reasoningItem,
  responseObject,
  signaturePart,
  statusOf,
  usageFromResponses,
  wholeArguments,
} from './responses-items.js'
import {encodeRequest} from './responses-request.js'
import {citationsOfOutput, citePages, webSearchItem, webSearchOfItem} from './web-search.js'
import {ResponsesStreamDecoder} from './responses-stream.js'
import {ResponsesStreamEncoder} from './responses-stream-encoder.js'
import {toolSearchFunction, toolSearchPart, withLoadedTools} from './tool-search.js'

const CUSTOM_PARAMETERS = {type: 'object', properties: {input: {type: 'string'}}, required: ['input']}

export function imageFromUrl(url: string): ImagePart {
  const m = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s.exec(url)
  return m ? {type: 'image', mediaType: m[1], data: m[2]} : {type: 'image', url}
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

/** Text and images of a message's `content` or a tool output (string or parts). */
function contentParts(content: unknown): Array<TextPart | ImagePart> {
  if (typeof content === 'string') return content ? [{type: 'text', text: content}] : []
  if (!Array.isArray(content)) return []
  const parts: Array<TextPart | ImagePart> = []
  for (const raw of content) {
    if (!isObject(raw)) continue
    if (typeof raw.text === 'string') parts.push({type: 'text', text: raw.text})
    else if (raw.type === 'refusal' && typeof raw.refusal === 'string')
      parts.push({type: 'text', text: raw.refusal})
    else if (raw.type === 'input_image') {
      const url = str(raw.image_url) ?? (isObject(raw.image_url) ? str(raw.image_url.url) : undefined)
      if (url) parts.push(imageFromUrl(url))
    } else if (raw.type === 'input_file') parts.push(inputFile(raw))
  }
  return parts
}

/**
 * An `input_file` (a PDF by its bytes or a URL) as a document. One by `file_id` names a file
 * stored at OpenAI, which no other upstream can read: refused by name.
 */
function inputFile(raw: Body): ImagePart {
  const name = str(raw.filename)
  const data = str(raw.file_data)
  const url = str(raw.file_url)
  let part: ImagePart
  if (data !== undefined) {
    const decoded = imageFromUrl(data)
    // a data URL, or (as some clients send it) the bare base64 of a PDF
    part = decoded.data !== undefined ? decoded : {type: 'image', mediaType: 'application/pdf', data}
  } else if (url !== undefined) part = {type: 'image', mediaType: 'application/pdf', url}
  else
    throw new TranslationError(
      `an input_file ${raw.file_id !== undefined ? 'by file_id' : 'without file_data or file_url'} cannot be translated (send its bytes as file_data)`,
    )
  if (name) part.name = name
  return part
}

/**
 * A reasoning item of the history. Its text is the summary's, or (none) its `reasoning_text`
 * content: Codex sends back what a server that is not OpenAI's gave it (gpt-oss's whole reasoning
 * as content, no encrypted content).
 */
function reasoningFromItem(item: Body): ReasoningPart {
  const summary = Array.isArray(item.summary) ? item.summary.filter(isObject) : []
  const content = summary.length || !Array.isArray(item.content) ? [] : item.content.filter(isObject)
  const texts = (summary.length ? summary : content).map((s) => str(s.text) ?? '')
  const part: ReasoningPart = {type: 'reasoning', text: texts.filter(Boolean).join('\n\n')}
  const encrypted = str(item.encrypted_content)
  if (encrypted) {
    const opaque = unwrapReasoning('responses', encrypted)
    // (a foreign wrap: Anthropic's signature, or its redacted thinking under its own marker)
    if (opaque.signature?.family === 'responses') part.encrypted = ownReasoning(item.id, encrypted)
    else if (opaque.redacted) part.redacted = opaque.redacted
    else part.signature = opaque.signature
  } else if (typeof item.id === 'string') part.itemId = item.id
  return part
}

function toolChoice(raw: unknown): ToolChoice | undefined {
  if (raw === 'auto' || raw === 'none' || raw === 'required') return {type: raw}
  // a tool of a namespace by the name it has elsewhere (FunctionTool.namespace)
  if (isObject(raw) && (raw.type === 'function' || raw.type === 'custom') && typeof raw.name === 'string')
    return {type: 'tool', name: namespaced(str(raw.namespace), raw.name)}
  if (isObject(raw) && typeof raw.type === 'string' && raw.type.startsWith('web_search'))
    return {type: 'web_search'}
  return undefined
}

function responseFormat(text: unknown): ResponseFormat | undefined {
  const format = isObject(text) ? text.format : undefined
  if (!isObject(format)) return undefined
  if (format.type === 'json_object') return {type: 'json_object'}
  if (format.type === 'json_schema' && isObject(format.schema))
    return {
      type: 'json_schema',
      name: str(format.name),
      schema: format.schema,
      ...(typeof format.strict === 'boolean' ? {strict: format.strict} : {}),
    }
  if (format.type === 'text') return {type: 'text'}
  return undefined
}

/** OpenAI's efforts as the IR's: those above `high` (GPT-5.x's `xhigh`, GPT-6's `max` and `ultra`) are `high`. */
const EFFORTS: Record<string, Effort> = {
  minimal: 'minimal',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
  max: 'high',
  ultra: 'high',
}

/**
 * The refusal of OpenAI's remote compaction on a translated route: `POST /v1/responses/compact`,
 * or a `compaction_trigger` item (Codex's remote_compaction_v2), which Codex sends when its
 * provider is OpenAI's. No other vendor compacts a conversation for the client, and Codex does not
 * fall back to its own compaction on an error ("Error running remote compact task"): the message
 * says how to have it compact locally, through the same route.
 */
export const REMOTE_COMPACTION_REFUSAL =
  "remote compaction (POST /v1/responses/compact, or a compaction_trigger item) needs a Responses upstream (OpenAI's API), and this route's upstream is another vendor's, which has none. Codex compacts locally, with its own summary through this route, on a model provider of its own not named OpenAI (a [model_providers] entry with wire_api = \"responses\", as `gwctl` binds Codex) with remote_compaction_v2 off in [features]"

/**
 * A `compaction` item (`compaction_summary` in Codex's older name) in a translated request: the
 * history OpenAI's remote compaction folded, as `encrypted_content` only OpenAI reads. Another
 * vendor cannot read it, and leaving it out would send the model the conversation without
 * everything before the compaction, as if it had never happened: refused by name.
 */
const COMPACTION_ITEM_REFUSAL =
  "a compaction item (the history OpenAI's remote compaction folded, encrypted so that only OpenAI reads it) cannot be translated: another vendor's model would get the conversation without everything before it. Route this conversation to a Responses upstream (OpenAI's API), or start a new one on this route (Codex then compacts locally: see remote compaction in docs/TRANSLATION.md)"

/**
 * An `agent_message` item whose task another vendor cannot read: `encrypted_content` that is
 * OpenAI's ciphertext (`gAAAAA…`), which a Codex parent on OpenAI's API writes. Leaving it out would
 * send the sub-agent its task's preamble without the task: refused by name.
 */
const AGENT_MESSAGE_CIPHERTEXT_REFUSAL =
  "an agent_message item (Codex's message between its agents) holds its text encrypted by OpenAI, which another vendor cannot read: the sub-agent would run without its task. Give the agents that talk to each other the same upstream family (a parent on OpenAI's API, its sub-agents on OpenAI's API too)"

/** OpenAI's ciphertext (Fernet tokens start with version byte 0x80: `gAAAAA` in base64). */
const OPENAI_CIPHERTEXT = /^gAAAAA/

/**
 * Codex's `agent_message` item (multi-agent v2: a parent's task for a sub-agent, a sub-agent's
 * report to its parent) as the text of a user turn: a line `Message from AUTHOR:`, then its
 * `input_text` parts and its `encrypted_content` parts, which hold the text itself when the parent
 * was not on OpenAI's API (Codex stores a `spawn_agent` call's `message` there as it came). The
 * recipient is the model the request is for: left out. OpenAI's ciphertext is refused by name, and
 * an item with no text at all too, rather than the model getting an empty turn.
 */
function agentMessageText(item: Body): TextPart {
  const texts: string[] = []
  const content = typeof item.content === 'string' ? [{type: 'input_text', text: item.content}] : item.content
  for (const part of Array.isArray(content) ? content : []) {
    if (!isObject(part)) continue
    const text = str(part.type === 'encrypted_content' ? part.encrypted_content : part.text)
    if (!text) continue
    if (part.type === 'encrypted_content' && OPENAI_CIPHERTEXT.test(text))
      throw new TranslationError(AGENT_MESSAGE_CIPHERTEXT_REFUSAL)
    texts.push(text)
  }
  if (!texts.length)
    throw new TranslationError("an agent_message item (Codex's message between its agents) holds no text")
  const author = str(item.author)
  return {type: 'text', text: `${author ? `Message from ${author}:\n` : ''}${texts.join('')}`}
}

/**
 * The refusal of an `item_reference` whose item this gateway does not hold: one of an answer from
 * before a restart, one evicted from the bounded store, one another server minted. Leaving it out
 * would send the model the conversation without that turn of its own (the AI SDK, whose default
 * `store` sends every earlier answer so, would get a reply to its first message: opencode PR
 * #10142), so the request is refused, saying how to send the conversation whole: `store: false`,
 * or, to a body that already has it (`storeOff`: no server keeps its items), the item itself.
 */
export const itemReferenceRefusal = (id: string, storeOff = false): string =>
  `an item_reference names item ${JSON.stringify(id)}, which this gateway does not hold (it keeps the items of its own recent answers in memory: not those from before a restart, long ago or of another server), and this route's upstream cannot look it up; ${
    storeOff
      ? 'send the item itself, not a reference (with `store: false` no server keeps it)'
      : "send the conversation's items in full: `store: false` (the AI SDK: providerOptions.openai.store = false), as Codex does"
  }`

/**
 * The refusal of an `item_reference` the gateway does not hold ({@link itemReferenceRefusal}): a
 * TranslationError of its own, so that a route that passes a request the codecs cannot hold
 * through as it came (proxy.ts `plainRequest`, a Responses server that takes plain functions)
 * answers it with this 400 instead of sending the raw body (review73). State of the server that
 * minted the id (OpenAI's, on an answer passed through): a Responses target passed through later
 * in the route takes the request (ir.ts {@link ServerStateError}).
 */
export class ItemReferenceError extends ServerStateError {
  /**
   * Whether gwctl minted the id (responses-items.ts `newItemId`): an item it held and lost (a
   * restart, an eviction), which no server has either. Refused at once: a later target passed
   * through would only send it on to a server that never made it, whose refusal would blame it.
   */
  readonly lost: boolean

  /** `storeOff`: the request has `store: false` ({@link itemReferenceRefusal}). */
  constructor(
    readonly id: string,
    storeOff = false,
  ) {
    super(itemReferenceRefusal(id, storeOff), `item_reference ${JSON.stringify(id)}`)
    this.name = 'ItemReferenceError'
    this.lost = mintedHere(id)
  }
}

/**
 * The parts of an earlier answer's item named by an `item_reference`: copies of those the
 * gateway kept when it wrote the item (carry.ts `BoundedItems`), so that what a later step does to
 * a request's parts leaves the kept ones as they were. Refused when not held.
 */
function referencedParts(id: unknown, ctx: CodecContext, storeOff: boolean): Part[] {
  const kept = typeof id === 'string' ? ctx.carry?.items?.get(id) : undefined
  if (!kept) throw new ItemReferenceError(typeof id === 'string' ? id : String(id), storeOff)
  return kept.map((part) => ({...part}))
}

function decodeRequest(body: unknown, ctx: CodecContext): Request {
  if (!isObject(body)) throw new TranslationError('request body must be a JSON object')
  const system: TextPart[] = []
  if (typeof body.instructions === 'string' && body.instructions)
    system.push({type: 'text', text: body.instructions})
  const messages: Message[] = []
  let placed: PlacedSystem[] = []
  const callNames = new Map<string, string>()
  const push = (role: Message['role'], parts: Part[]) => {
    if (!parts.length) return
    const last = messages.at(-1)
    if (last?.role === role) last.parts.push(...parts)
    else messages.push({role, parts})
  }
  const input =
    typeof body.input === 'string' ? [{type: 'message', role: 'user', content: body.input}] : body.input
  let searched = false
  // Codex's "Responses Lite" (0.144+, its own model names): its tools in an input item, not `tools`
  let additional: unknown[] | undefined
  // the tools Codex's tool searches loaded (tool-search.ts)
  const loaded: Body[] = []
  // the effort of the last `configuration_update` item, which holds from its place on
  let updatedEffort: string | undefined
  // the ids of the item_references put back
  const referenced = new Set<string>()
  for (const item of Array.isArray(input) ? input : []) {
    if (!isObject(item)) continue
    // (an item reference's `type` is optional in OpenAI's API: an item of an `id` alone is one)
    const type =
      item.type ?? (item.role ? 'message' : typeof item.id === 'string' ? 'item_reference' : undefined)
    if (type === 'item_reference') {
      // an earlier answer's item by its id: the parts it stood for, in its place, once. The AI SDK
      // sends one reference per text part of a message (its doGenerate makes a part of each
      // `output_text`, each with the message's id), so a message of several is named as often;
      // OpenAI refuses a request that holds an item twice, so a repeat adds nothing (review73)
      if (typeof item.id === 'string' && referenced.has(item.id)) continue
      const parts = referencedParts(item.id, ctx, body.store === false)
      referenced.add(item.id as string)
      for (const part of parts) if (part.type === 'tool_call') callNames.set(part.id, part.name)
      if (parts.some((p) => p.type === 'web_search')) searched = true
      push('assistant', parts)
    } else if (type === 'additional_tools') {
      if (Array.isArray(item.tools)) additional = [...(additional ?? []), ...(item.tools as unknown[])]
    } else if (type === 'message') {
      const parts = contentParts(item.content)
      if (item.role === 'system' || item.role === 'developer') {
        const texts = parts.filter((p): p is TextPart => p.type === 'text')
        system.push(...texts)
        // (after the first turn: its place kept too, for an upstream that takes it there)
        const here = placedHere(messages, texts)
        if (here) placed.push(here)
      } else push(item.role === 'assistant' ? 'assistant' : 'user', parts)
    } else if (type === 'function_call' || type === 'custom_tool_call') {
      const id = str(item.call_id) ?? str(item.id) ?? ''
      const name = namespaced(str(item.namespace), str(item.name) ?? '')
      callNames.set(id, name)
      const args =
        type === 'custom_tool_call'
          ? JSON.stringify({input: str(item.input) ?? ''})
          : str(item.arguments) || '{}'
      push('assistant', [{type: 'tool_call', id, name, arguments: args}])
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      const callId = str(item.call_id) ?? ''
      const result: ToolResultPart = {type: 'tool_result', callId, content: contentParts(item.output)}
      const name = callNames.get(callId)
      if (name) result.name = name
      push('user', [result])
    } else if (type === 'reasoning') push('assistant', [reasoningFromItem(item)])
    else if (type === 'web_search_call') {
      const search = webSearchOfItem(item)
      if (search) {
        push('assistant', [search])
        searched = true
      }
    } else if (type === 'agent_message') push('user', [agentMessageText(item)])
    else if (type === 'configuration_update') {
      // OpenAI's change of effort mid-conversation that keeps the cached prefix (GPT-6 Astra): it
      // holds until the next one, so the answer due is made at the last one's effort
      const effort = isObject(item.reasoning) ? str(item.reasoning.effort) : undefined
      if (effort) updatedEffort = effort
    } else if (type === 'compaction' || type === 'compaction_summary')
      throw new ServerStateError(COMPACTION_ITEM_REFUSAL, 'a compaction item')
    else if (type === 'compaction_trigger')
      throw new ServerStateError(REMOTE_COMPACTION_REFUSAL, 'remote compaction')
    else if (type === 'tool_search_call' || type === 'tool_search_output') {
      const search = toolSearchPart(item, loaded)
      if (search) push(search.role, [search.part])
    }
  }
  settlePlaced(placed, messages)
  const restore = () => {
    for (const message of messages) if (message.role === 'assistant') restoreCarried(message, ctx)
    return messages
  }
  // (a carried part goes into a turn: the places found again, only in a request with one)
  if (placed.length) placed = placedAfter(placed, messages, restore)
  else restore()

  const tools: FunctionTool[] = []
  const builtinTools: NonNullable<Request['builtinTools']> = []
  let webSearch: WebSearchTool | undefined
  const declared = Array.isArray(body.tools) ? body.tools : []
  // the item's tools read as `tools` are, after them (a body with both); then the tools a search
  // loaded
  for (const tool of withLoadedTools(additional ? [...declared, ...additional] : declared, loaded)) {
    if (!isObject(tool)) continue
    const own = functionTool(tool) ?? toolSearchFunction(tool)
    if (own) tools.push(own)
    else if (tool.type === 'namespace' && typeof tool.name === 'string' && Array.isArray(tool.tools)) {
      // its functions, each under a name of its own elsewhere (FunctionTool.namespace)
      for (const inner of tool.tools) {
        const fn = isObject(inner) ? functionTool(inner) : undefined
        if (!fn) continue
        fn.namespace = {name: tool.name, tool: fn.name}
        fn.name = namespaced(tool.name, fn.name)
        tools.push(fn)
      }
    } else if (isWebSearchTool(tool)) webSearch = webSearchSettings(tool)
    else builtinTools.push({family: 'responses', raw: tool})
  }

  const request: Request = {
    model: str(body.model) ?? null,
    system,
    messages,
    tools,
    stream: body.stream === true,
  }
  if (placed.length) request.placedSystem = placed
  if (builtinTools.length) request.builtinTools = builtinTools
  if (webSearch) request.webSearch = webSearch
  if (searched) request.searchesInHistory = true
  const choice = toolChoice(body.tool_choice)
  // a choice of the search with no live search to choose (Codex's cached one): the model's own
  if (choice && (choice.type !== 'web_search' || webSearch)) request.toolChoice = choice
  if (typeof body.parallel_tool_calls === 'boolean') request.parallelToolCalls = body.parallel_tool_calls
  if (typeof body.max_output_tokens === 'number') request.maxTokens = body.max_output_tokens
  if (typeof body.temperature === 'number') request.temperature = body.temperature
  if (typeof body.top_p === 'number') request.topP = body.top_p
  const format = responseFormat(body.text)
  if (format) request.responseFormat = format
  // (Codex's on GPT-5.x, opencode's openai provider's)
  const verbosity = isObject(body.text) ? verbosityOf(body.text.verbosity) : undefined
  if (verbosity) request.verbosity = verbosity
  if (isObject(body.reasoning) || updatedEffort) {
    const reasoning = isObject(body.reasoning) ? body.reasoning : {}
    const effort = updatedEffort ?? str(reasoning.effort)
    if (effort === 'none') request.reasoning = {disabled: true}
    else
      request.reasoning = {
        // (`summary: "none"` asks for none)
        include:
          reasoning.summary !== undefined && reasoning.summary !== null && reasoning.summary !== 'none',
        ...(effort && EFFORTS[effort] ? {effort: EFFORTS[effort]} : {}),
        ...(effort === 'xhigh'
          ? {beyond: 'xhigh'}
          : effort === 'max' || effort === 'ultra'
            ? {beyond: 'max'}
            : {}),
      }
  }
  if (typeof body.previous_response_id === 'string') request.previousResponseId = body.previous_response_id
  if (body.store !== false) request.storeItems = true
  if (typeof body.prompt_cache_key === 'string') request.cacheKey = body.prompt_cache_key
  if (typeof body.user === 'string') request.user = body.user
  return request
}

/**
 * A Responses web search tool the upstream may run live: Codex's `web_search`, unless Codex asked
 * for its cached index only (`external_web_access: false`), which another vendor's live search is not.
 */
function isWebSearchTool(tool: Body): boolean {
  return (
    typeof tool.type === 'string' &&
    /^web_search(?:_preview)?(?:_\d{4}_\d{2}_\d{2})?$/.test(tool.type) &&
    tool.external_web_access !== false
  )
}

function webSearchSettings(tool: Body): WebSearchTool {
  const search: WebSearchTool = {}
  const filters = isObject(tool.filters) ? tool.filters : undefined
  const allowed = Array.isArray(filters?.allowed_domains)
    ? filters.allowed_domains.filter((d): d is string => typeof d === 'string')
    : []
  if (allowed.length) search.allowedDomains = allowed
  if (isObject(tool.user_location)) {
    const l = tool.user_location
    const location: NonNullable<WebSearchTool['userLocation']> = {}
    for (const key of ['city', 'region', 'country', 'timezone'] as const)
      if (typeof l[key] === 'string' && l[key]) location[key] = l[key] as string
    if (Object.keys(location).length) search.userLocation = location
  }
  return search
}

/** A Responses `function` or `custom` tool as the IR's; undefined for any other tool. */
function functionTool(tool: Body): FunctionTool | undefined {
  if (typeof tool.name !== 'string') return undefined
  if (tool.type === 'function')
    return {
      name: tool.name,
      ...(typeof tool.description === 'string' ? {description: tool.description} : {}),
      parameters: isObject(tool.parameters) ? tool.parameters : {type: 'object', properties: {}},
    }
  if (tool.type === 'custom') {
    if (typeof tool.description !== 'string')
      return {name: tool.name, parameters: structuredClone(CUSTOM_PARAMETERS), custom: {format: tool.format}}
    const description = functionDescription(tool.description)
    return {
      name: tool.name,
      description,
      parameters: structuredClone(CUSTOM_PARAMETERS),
      custom: {
        format: tool.format,
        ...(description !== tool.description ? {description: tool.description} : {}),
      },
    }
  }
  return undefined
}

/** Codex's line that tells the model not to wrap its `apply_patch` input in JSON. */
const FREEFORM_LINE = 'This is a FREEFORM tool, so do not wrap the patch in JSON.'

/**
 * A custom tool's description for the function of one string `input` it becomes for any upstream
 * but a Responses one that takes custom tools: Codex's `apply_patch` says "This is a FREEFORM
 * tool, so do not wrap the patch in JSON.", which a chat model told to call a JSON function
 * follows by writing the patch raw as the arguments, or in a key of its own choosing (codex-relay
 * #65, cc-switch #3669); that line says where the patch goes instead, the rest of Codex's words
 * kept. The same words on every turn: the prompt cache holds.
 */
function functionDescription(description: string): string {
  return description.includes(FREEFORM_LINE)
    ? description.replace(FREEFORM_LINE, 'Put the whole patch text in the `input` string.')
    : description
}

/** The IR's name of a tool of a Responses `namespace` (FunctionTool.namespace); `name` without one. */
const namespaced = (namespace: string | undefined, name: string): string =>
  namespace ? `${namespace}__${name}` : name

/** The parts of one output item of a Responses answer. */
export function partsOfItem(item: Body): Part[] {
  if (item.type === 'message') return contentParts(item.content)
  if (item.type === 'web_search_call') {
    const search = webSearchOfItem(item)
    return search ? [search] : []
  }
  if (item.type === 'function_call')
    return [
      {
        type: 'tool_call',
        id: str(item.call_id) ?? str(item.id) ?? '',
        name: str(item.name) ?? '',
        arguments: str(item.arguments) || '{}',
      },
    ]
  if (item.type === 'custom_tool_call')
    return [
      {
        type: 'tool_call',
        id: str(item.call_id) ?? str(item.id) ?? '',
        name: str(item.name) ?? '',
        arguments: JSON.stringify({input: str(item.input) ?? ''}),
      },
    ]
  if (item.type === 'reasoning') {
    const summary = (Array.isArray(item.summary) ? item.summary : []).filter(isObject)
    const content = (Array.isArray(item.content) ? item.content : []).filter(isObject)
    const texts = (summary.length ? summary : content).map((s) => str(s.text) ?? '').filter(Boolean)
    const part: ReasoningPart = {type: 'reasoning', text: texts.join('\n\n')}
    const encrypted = ownReasoning(item.id, item.encrypted_content)
    if (encrypted) part.encrypted = encrypted
    return [part]
  }
  return []
}

export function stopOf(
  status: unknown,
  incomplete: unknown,
  toolCalls: boolean,
  refusal: boolean,
): StopReason {
  if (status === 'incomplete') {
    const reason = isObject(incomplete) ? incomplete.reason : undefined
    return reason === 'content_filter' ? 'content_filter' : 'max_tokens'
  }
  return toolCalls ? 'tool_use' : refusal ? 'refusal' : 'end'
}

function decodeResponse(body: unknown, ctx?: CodecContext): Response {
  if (!isObject(body)) throw new TranslationError('upstream answer is not a JSON object', 502)
  if (body.status === 'failed' || isObject(body.error)) {
    const error = isObject(body.error) ? body.error : {}
    throw new TranslationError(str(error.message) ?? 'upstream response failed', 502)
  }
  const parts: Part[] = []
  let refusal = false
  for (const item of Array.isArray(body.output) ? body.output : []) {
    if (!isObject(item)) continue
    parts.push(...partsOfItem(item))
    if (item.type === 'message' && Array.isArray(item.content))
      refusal ||= item.content.some((c) => isObject(c) && c.type === 'refusal')
  }
  if (parts.some((p) => p.type === 'web_search'))
    citePages(
      parts.filter((p): p is WebSearchPart => p.type === 'web_search'),
      citationsOfOutput(body.output),
    )
  return {
    id: str(body.id) ?? newId(ctx, 'resp'),
    model: str(body.model) ?? '',
    parts,
    stop: stopOf(
      body.status,
      body.incomplete_details,
      parts.some((p) => p.type === 'tool_call'),
      refusal,
    ),
    usage: fullUsage(usageFromResponses(body.usage)),
  }
}

function encodeResponse(response: Response, ctx?: CodecContext): Record<string, unknown> {
  const output: Body[] = []
  const reasoning: Part[] = []
  // each item's parts, kept by its id for the client's item_reference (a request with `store` on)
  const items = itemStoreOf(ctx)
  const keep = (item: Body, parts: Part[]) => items && keepItem(items, ctx, item.id as string, parts)
  let message: Body | undefined
  let texts: Part[] = []
  for (const part of response.parts) {
    if (part.type === 'text') {
      if (!message) {
        message = {
          type: 'message',
          id: newItemId(ctx, 'msg'),
          role: 'assistant',
          status: 'completed',
          content: [],
        }
        output.push(message)
        texts = []
      }
      ;(message.content as Body[]).push({type: 'output_text', text: part.text, annotations: []})
      texts.push(part)
      continue
    }
    // (a message's text parts kept once they are all there)
    if (message) keep(message, texts)
    message = undefined
    if (part.type === 'reasoning') {
      reasoning.push(part)
      const item = reasoningItem(part, newItemId(ctx, 'rs'))
      output.push(item)
      keep(item, [part])
    } else if (part.type === 'tool_call') {
      if (part.signature) {
        const sig = signaturePart(part.signature)
        reasoning.push(sig)
        const item = reasoningItem(sig, newItemId(ctx, 'rs'))
        output.push(item)
        keep(item, [sig])
      }
      if (hasForeignOpaque(reasoning, 'responses')) ctx?.carry?.set(part.id, [...reasoning])
      // the answer's last part, a call, when the token limit stopped it: its arguments were cut,
      // unless they are whole
      const cut =
        response.stop === 'max_tokens' &&
        part === response.parts[response.parts.length - 1] &&
        !wholeArguments(part.arguments)
      const item = functionCallItem(ctx, part, newItemId(ctx, 'fc'), cut ? 'incomplete' : 'completed')
      output.push(item)
      if (items) keep(item, [keptCall(ctx, part)])
    } else if (part.type === 'web_search') {
      const item = webSearchItem(part, newItemId(ctx, 'ws'))
      output.push(item)
      keep(item, [part])
    }
  }
  if (message) keep(message, texts)
  const {status, incomplete_details} = statusOf(response.stop)
  return responseObject({
    id: response.id,
    model: ctx?.request?.model ?? response.model,
    createdAt: Math.floor(Date.now() / 1000),
    status,
    incompleteDetails: incomplete_details,
    output,
    usage: response.usage,
    request: ctx?.request,
  })
}

export const responsesCodec: Codec = {
  family: 'responses',
  decodeRequest,
  encodeRequest,
  path: () => '/v1/responses',
  decodeResponse,
  encodeResponse,
  streamDecoder: (ctx) => new ResponsesStreamDecoder(ctx),
  streamEncoder: (ctx) => new ResponsesStreamEncoder(ctx),
}
