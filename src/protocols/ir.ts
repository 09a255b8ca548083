/**
 * The one intermediate representation (IR) of a model request, a model answer and a stream event
 * that translation between the four protocol families goes through. Each family has one codec
 * (`src/protocols/<family>.ts`) with a decoder and an encoder for each; a translated request is
 * `encode_to(decode_from(body))`, so there are four codecs, not twelve translators.
 *
 * Rules every codec keeps:
 * - Pure: no I/O, no clock, no randomness except where a codec is given `ids`. Nothing here
 *   imports outside `src/protocols/` and `src/core/`.
 * - Counts have gwctl's one meaning for every protocol (the same as the usage taps):
 *   `inputTokens` is every prompt token, cache reads and cache writes included; `outputTokens`
 *   every generated token, reasoning included; `reasoningTokens` the part of output spent
 *   reasoning; `cacheReadTokens` / `cacheCreationTokens` the parts of input read from / written to
 *   a cache (`cache1hTokens` the part of the writes kept one hour, when the protocol says).
 * - Opaque state that a vendor needs back on the next turn (Anthropic thinking signatures and
 *   redacted thinking, Gemini `thoughtSignature`, Responses reasoning `encrypted_content`,
 *   DeepSeek-style `reasoning_content`) is an {@link Opaque} tagged with the family that made it.
 *   An encoder of an upstream request sends an opaque value only to the family that made it; an
 *   encoder of a client answer whose protocol has a string field for it wraps a foreign value
 *   with {@link wrapOpaque} so that the client sends it back verbatim, and the decoder of the next
 *   request unwraps it with {@link unwrapOpaque}.
 */

/** The four protocol families (the same names as the gateway's entrances and providers). */
export type Family = 'chat' | 'responses' | 'messages' | 'gemini'

/** A value only the family that made it can read (a signature, encrypted reasoning, ...). */
export interface Opaque {
  family: Family
  value: string
  /**
   * It came back in a gwctl wrap (`gwx1.…`, {@link unwrapOpaque}): a value gwctl gave a client of
   * another family. A Messages upstream's refusal of its signature has the request sent again once
   * without such thinking ({@link withoutWrappedThinking}): a wrap written before stop 60 holds
   * redacted data as a signature.
   */
  wrapped?: true
}

/** JSON Schema, as the client sent it (passed on untouched where the target accepts it). */
export type JsonSchema = Record<string, unknown>

export interface TextPart {
  type: 'text'
  text: string
  /** A prompt-cache breakpoint ends here (Anthropic `cache_control`). */
  cache?: 'ephemeral' | '1h'
  /**
   * The tools whose definitions this text is (Messages `tool_reference` blocks, written by
   * {@link toolReferenceText}), so that an upstream that knows a tool by another name
   * (./tool-names.ts) reads that name in it.
   */
  references?: ReferencedTool[]
  /**
   * The client's own block this text stands for (a Messages `search_result`), sent as it came to
   * an upstream of that family; every other family reads the text.
   */
  native?: {family: Family; raw: unknown}
}

/** A tool a `tool_reference` names: its definition, or its name alone when the request has none. */
export interface ReferencedTool {
  name: string
  description?: string
  parameters?: JsonSchema
}

/**
 * Referenced tools as the text Claude Code's ToolSearch tells the model to expect: each one's
 * definition as a `<function>` line in a `<functions>` block.
 */
export function toolReferenceText(
  tools: readonly ReferencedTool[],
  rename?: (name: string) => string,
): string {
  let text = '<functions>'
  for (const tool of tools) {
    const name = rename ? rename(tool.name) : tool.name
    const definition =
      tool.parameters !== undefined
        ? {description: tool.description ?? '', name, parameters: tool.parameters}
        : {name}
    text += `\n<function>${JSON.stringify(definition)}</function>`
  }
  return `${text}\n</functions>`
}

/**
 * The line that tells a model a tool it was given is gone (a Messages `tool_removal`, Claude Code
 * 2.1.3xx's when an MCP server disconnects): the tool stays in the request's tools, so that the
 * upstream's prompt cache keeps the tool list, and the model is told not to call it. A name only
 * (a tool's name is a word), not whatever text a client put there, goes into the prompt.
 */
export function toolRemovalText(name: string): string {
  const word = /^[\w.:-]{1,128}$/.test(name) ? name : 'unknown'
  return `[The tool "${word}" is no longer available: do not call it.]`
}

/**
 * Binary media of a turn: an image, or a document (a PDF) when `mediaType` is not `image/*`
 * (`isDocument`). One part for both because every family but chat sends them the same way (a
 * Gemini `inlineData` of any type); each encoder writes a document in its own form: a Messages
 * `document` block, a chat `file` part, a Responses `input_file`.
 */
export interface ImagePart {
  type: 'image'
  /** `image/png`, `application/pdf`, ... (required with `data`). */
  mediaType?: string
  /** Base64 bytes, without a `data:` prefix. */
  data?: string
  /** A URL (http(s)); a `data:` URL is decoded into `mediaType` + `data` by the decoders. */
  url?: string
  /** A document's title or file name (Messages `title`, chat `filename`, Responses `filename`). */
  name?: string
}

/** Whether a media part is a document (a PDF, a text file), not an image. */
export const isDocument = (p: ImagePart): boolean =>
  p.mediaType !== undefined && !p.mediaType.startsWith('image/')

/** A document's file name for protocols that require one: its own, or `document.pdf` (`.txt`, ...). */
export function documentName(p: ImagePart): string {
  if (p.name) return p.name
  const type = p.mediaType ?? 'application/pdf'
  const ext = type === 'application/pdf' ? 'pdf' : type.startsWith('text/') ? 'txt' : 'bin'
  return `document.${ext}`
}

/** The text of a base64 text document (`text/plain`, `text/markdown`, ...), for protocols without text files. */
export function documentText(p: ImagePart): string | undefined {
  if (!p.mediaType?.startsWith('text/') || p.data === undefined) return undefined
  return Buffer.from(p.data, 'base64').toString('utf8')
}

/**
 * What goes in place of a file an upstream's protocol cannot carry (audio to chat, a PDF by URL to
 * chat): a line that says what was there, so the model knows and the conversation goes on (a
 * refusal would come back on every later turn, the file being in the history).
 */
export function omittedFileText(p: ImagePart, why: string): string {
  const kind = isDocument(p) ? 'file' : 'image'
  const what = p.url
    ? `${p.mediaType ?? kind} at ${p.url}`
    : `${p.mediaType ? `${p.mediaType} ${kind}` : kind}${p.name ? ` ${p.name}` : ''}`
  return `[${what} not attached: ${why}]`
}

/** Media an upstream model was found to take none of (daemon/router/adaptations.ts). */
export interface RefusedMedia {
  /** Images (`image/*`). */
  images?: boolean
  /**
   * Documents sent as files (PDFs, and any other binary file). A text file is never refused here:
   * chat and Responses upstreams get its text, Messages and Gemini upstreams a text document.
   */
  files?: boolean
  /** Audio (`audio/*`: a chat client's `input_audio`). */
  audio?: boolean
  /** Video (`video/*`: a chat client's `video_url`). */
  video?: boolean
}

/** The kind of media `p` is, as {@link RefusedMedia} names it (a text document, sent as its text, none). */
export function mediaKind(p: ImagePart): keyof RefusedMedia | undefined {
  if (!isDocument(p)) return 'images'
  if (p.mediaType!.startsWith('audio/')) return 'audio'
  if (p.mediaType!.startsWith('video/')) return 'video'
  return isTextDocument(p) ? undefined : 'files'
}

/** Whether `p` is media of a kind `refused` names (a text document, sent as its text, never is). */
function isRefused(p: ImagePart, refused: RefusedMedia): boolean {
  const kind = mediaKind(p)
  return kind !== undefined && refused[kind] === true
}

/** A text document with its bytes (no refusal learned here names it), without decoding it. */
const isTextDocument = (p: ImagePart): boolean =>
  p.mediaType?.startsWith('text/') === true && p.data !== undefined

/** The line that stands in for a media part `model` refused (`[image/png image not attached: m takes no images]`). */
const refusedMediaLine = (p: ImagePart, model: string): string =>
  omittedFileText(p, `${model || 'this model'} takes no ${mediaKind(p) ?? 'files'}`)

/** The line that stands in for `p` when the media it is were refused, else undefined. */
export const refusedMediaText = (p: ImagePart, refused: RefusedMedia, model: string): string | undefined =>
  isRefused(p, refused) ? refusedMediaLine(p, model) : undefined

/**
 * `request` with each image or file of a kind `refused` names (in a turn or in a tool's result)
 * replaced by the line that says what was there (`[image/png image not attached: deepseek-chat
 * takes no images]`): a text-only model (DeepSeek's, GLM's text models, a vLLM or llama.cpp
 * server without a vision projector) refuses the whole request for one image, and every later
 * request carries it in the history. The request itself is not changed: turns without such
 * media are shared, the others copied.
 */
export function withoutRefusedMedia(request: Request, refused: RefusedMedia, model: string): Request {
  let messages: Message[] | undefined
  for (let i = 0; i < request.messages.length; i++) {
    const m = request.messages[i]
    let parts: Part[] | undefined
    for (let j = 0; j < m.parts.length; j++) {
      const p = m.parts[j]
      let next: Part = p
      if (p.type === 'image' && isRefused(p, refused)) next = {type: 'text', text: refusedMediaLine(p, model)}
      else if (p.type === 'tool_result' && p.content.some((c) => c.type === 'image' && isRefused(c, refused)))
        next = {
          ...p,
          // a line of its own after the tool's text (Responses and Gemini join a result's texts)
          content: p.content.map((c, k) =>
            c.type === 'image' && isRefused(c, refused)
              ? {type: 'text' as const, text: (k > 0 ? '\n' : '') + refusedMediaLine(c, model)}
              : c,
          ),
        }
      if (next !== p) (parts ??= m.parts.slice())[j] = next
    }
    if (parts) (messages ??= request.messages.slice())[i] = {...m, parts}
  }
  return messages ? {...request, messages} : request
}

/** A text document as text: its name (when it has one) above its text, so files stay apart. */
export function namedDocumentText(p: ImagePart): string | undefined {
  const text = documentText(p)
  return text !== undefined && p.name ? `${p.name}\n\n${text}` : text
}

/**
 * Reasoning (thinking) the model produced. `text` may be empty (encrypted or redacted only).
 * `signature`: Anthropic's thinking signature, Gemini's thoughtSignature, or (family `chat`) a
 * marker that the text came from a chat upstream, with the field it came in: `''` for
 * `reasoning_content` (DeepSeek), `'reasoning'` for `reasoning` (Cerebras, OpenRouter).
 * `redacted`: Anthropic `redacted_thinking.data`. `encrypted`: a Responses reasoning item, as
 * the JSON text `{"id":…,"encrypted_content":…}` (family `responses`). `itemId`: the id of a
 * Responses client's reasoning item that had no encrypted content (the reasoning of a server that
 * is not OpenAI's, gpt-oss's on vLLM or LM Studio): such a server takes its text back
 * (responses-request.ts, `plainTools`), OpenAI does not. `server`: on an item gwctl holds for a
 * Responses client ({@link ItemStore}), the Responses server whose `encrypted` it is
 * ({@link CodecContext.server}), the only one it is put back for when a reference to it goes to a
 * Responses server passed through (held-items.ts).
 */
export interface ReasoningPart {
  type: 'reasoning'
  text: string
  signature?: Opaque
  redacted?: Opaque
  encrypted?: Opaque
  itemId?: string
  server?: string
}

export interface ToolCallPart {
  type: 'tool_call'
  /** The call id (`call_…`, `toolu_…`; Gemini has none: the decoder makes one). */
  id: string
  name: string
  /** The arguments as JSON text, exactly as the model produced them (`"{}"` when empty). */
  arguments: string
  /** Gemini `thoughtSignature` carried on a `functionCall` part. */
  signature?: Opaque
}

export interface ToolResultPart {
  type: 'tool_result'
  callId: string
  /** The tool's name when the protocol says it (Gemini needs it: decoders fill it from the call). */
  name?: string
  content: Array<TextPart | ImagePart>
  isError?: boolean
}

/**
 * A web search the upstream ran itself (Anthropic's `server_tool_use` + `web_search_tool_result`,
 * a Responses `web_search_call`, Gemini's `groundingMetadata`): what was searched and the pages
 * found. Only the vendor that ran it can read its encrypted page contents, so none are kept; in a
 * request's history it goes to every upstream as text ({@link webSearchText}).
 */
export interface WebSearchPart {
  type: 'web_search'
  id: string
  query: string
  results: WebSearchResult[]
  /** The vendor's error code when the search failed (Anthropic's `unavailable`, `max_uses_exceeded`). */
  error?: string
}

export interface WebSearchResult {
  url: string
  title?: string
  /** Anthropic's `page_age` ("2 days ago"). */
  pageAge?: string
}

/** A search of an earlier turn as the model of another vendor reads it. */
export function webSearchText(p: WebSearchPart): string {
  // a paragraph of its own: chat joins an assistant turn's texts with nothing between
  let text = `Searched the web for ${JSON.stringify(p.query)}`
  if (p.error) return `${text}: the search failed (${p.error}).\n\n`
  if (p.results.length === 0) return `${text}: no results.\n\n`
  text += ':'
  for (const r of p.results) text += `\n- ${r.title ? `${r.title} ` : ''}<${r.url}>`
  return `${text}\n\n`
}

/**
 * The same request with every {@link WebSearchPart} of its history as text (no upstream reads
 * another vendor's search records); `request` itself when it has none.
 */
export function withSearchesAsText(request: Request): Request {
  if (!request.searchesInHistory) return request
  let messages: Message[] | undefined
  for (let i = 0; i < request.messages.length; i++) {
    const m = request.messages[i]
    if (!m.parts.some((p) => p.type === 'web_search')) continue
    const parts = m.parts.map((p): Part =>
      p.type === 'web_search' ? {type: 'text', text: webSearchText(p)} : p,
    )
    ;(messages ??= request.messages.slice())[i] = {...m, parts}
  }
  return messages ? {...request, messages} : request
}

/** The pages of an answer's searches (for a client whose protocol lists them once: Gemini's grounding). */
export const searchesOf = (parts: readonly Part[]): WebSearchPart[] =>
  parts.filter((p): p is WebSearchPart => p.type === 'web_search')

export type Part = TextPart | ImagePart | ReasoningPart | ToolCallPart | ToolResultPart | WebSearchPart

/**
 * One turn. Tool results travel in `user` turns (as in Messages); a decoder of a protocol with a
 * `tool` role or `function_call_output` items merges consecutive results into one user turn.
 */
export interface Message {
  role: 'user' | 'assistant'
  parts: Part[]
}

export interface FunctionTool {
  name: string
  description?: string
  parameters: JsonSchema
  /**
   * A Responses `custom` (free-form) tool, such as Codex's `apply_patch`: elsewhere it is a
   * function with one string parameter `input`, and its calls come back to a Responses client as
   * `custom_tool_call` items. `format` is the tool's grammar, kept for a Responses upstream, and
   * `description` the client's own where `description` says it otherwise for the function
   * (responses.ts `functionDescription`).
   */
  custom?: {format?: unknown; description?: string}
  /**
   * A tool of a Responses `namespace` (Codex 0.17x's sub-agent tools `multi_agent_v1`): elsewhere
   * it is a function named `<namespace>__<tool>`, and its calls go back to a Responses client under
   * the tool's own name with `namespace`, which Codex needs to run it ("unsupported call" without).
   */
  namespace?: {name: string; tool: string}
  /**
   * Codex's client-side tool search (`tool_search`, tool-search.ts): elsewhere a function of that
   * name, its calls going back to Codex as `tool_search_call` items.
   */
  toolSearch?: true
}

export type ToolChoice =
  | {type: 'auto'}
  | {type: 'none'}
  | {type: 'required'}
  | {type: 'tool'; name: string}
  /** The upstream's own web search, forced (Claude Code's WebSearch asks it so). */
  | {type: 'web_search'}

/**
 * The upstream's own web search (Anthropic's `web_search_*` server tool, Responses' `web_search`,
 * Gemini's `googleSearch`), with what the client limited it to. Chat completions has none.
 */
export interface WebSearchTool {
  maxUses?: number
  allowedDomains?: string[]
  blockedDomains?: string[]
  userLocation?: {city?: string; region?: string; country?: string; timezone?: string}
}

export type ResponseFormat =
  | {type: 'text'}
  | {type: 'json_object'}
  | {type: 'json_schema'; name?: string; schema: JsonSchema; strict?: boolean}

export type Effort = 'minimal' | 'low' | 'medium' | 'high'

/** How a chat host keeps the reasoning of earlier turns when asked (CodecContext `preservedThinking`). */
export type PreservedThinking = 'dashscope' | 'zai' | 'moonshot'

export type Verbosity = 'low' | 'medium' | 'high'

/** A client's verbosity, when it is one OpenAI names. */
export const verbosityOf = (v: unknown): Verbosity | undefined =>
  v === 'low' || v === 'medium' || v === 'high' ? v : undefined

/**
 * What a request for JSON says in its system prompt where the upstream cannot be held to it: a
 * Messages upstream (no JSON mode), a chat upstream that refused the schema (DeepSeek) or JSON
 * mode. It names JSON, which DeepSeek's JSON mode requires of the prompt.
 */
export function jsonInstructionText(format: ResponseFormat | undefined): string | undefined {
  if (!format || format.type === 'text') return undefined
  if (format.type === 'json_object' || format.schema === undefined)
    return 'Respond with one JSON object only, with no other text.'
  return `Respond with one JSON object only, with no other text, that matches this JSON schema:\n${JSON.stringify(format.schema)}`
}

export interface ReasoningSettings {
  /** Reasoning off (Anthropic `thinking.type: disabled`, Gemini `thinkingBudget: 0`, effort none). */
  disabled?: boolean
  effort?: Effort
  /**
   * The client's effort above `high` (`effort` is then `high`, the most every family has): `xhigh`
   * (GPT-5.x's, Anthropic's), `max` (Anthropic's; GPT-6's `max` and `ultra`). Claude models that
   * take them (Opus 4.7 on) get them, a chat or Responses model the most it is known to take
   * (thinking-off.ts `beyondEffort`: GLM-5.3's `max`, GPT-5.2 on's `xhigh`); any other `high`.
   */
  beyond?: 'xhigh' | 'max'
  /** Tokens the model may spend thinking (Anthropic `budget_tokens`, Gemini `thinkingBudget`). */
  budgetTokens?: number
  /** The client wants the reasoning text back (Gemini `includeThoughts`, Responses `summary`). */
  include?: boolean
}

export interface Request {
  /** The model the client asked for (Gemini: from the path). */
  model: string | null
  /**
   * System prompt / instructions / developer messages, in order: every system text of the request,
   * those the client sent after the conversation began included (see {@link placedSystem}), as
   * most upstreams get them, one system prompt.
   */
  system: TextPart[]
  messages: Message[]
  /**
   * The system messages the client sent after the conversation began, with their places (set by
   * the decoders; see {@link PlacedSystem}). Their parts are in `system` too: an upstream that
   * takes such a message where it stood ({@link CodecContext.systemInPlace}) gets them there and
   * the rest of `system` as its system prompt ({@link inPlaceSystem}); every other one gets
   * `system`.
   */
  placedSystem?: PlacedSystem[]
  tools: FunctionTool[]
  /**
   * Built-in tools the source protocol named (web search, code interpreter, ...) that have no
   * function form: kept only for the same family (`raw`), dropped elsewhere with `note`.
   */
  builtinTools?: Array<{family: Family; raw: unknown}>
  /** The client offered the model a web search its upstream runs (see {@link WebSearchTool}). */
  webSearch?: WebSearchTool
  /** The history holds a {@link WebSearchPart} (set by the decoders: no scan of requests without). */
  searchesInHistory?: boolean
  /**
   * The types of the client's blocks that went as a line saying they were left out (a block no
   * other family has, in a tool's result or a user turn), for the log row; set by the decoders.
   */
  leftOut?: string[]
  toolChoice?: ToolChoice
  parallelToolCalls?: boolean
  maxTokens?: number
  temperature?: number
  topP?: number
  /**
   * Sample from the k likeliest tokens (Gemini `topK`, Messages `top_k`: Gemini CLI sends 64 on
   * every call); OpenAI's chat completions and Responses have none.
   */
  topK?: number
  stop?: string[]
  responseFormat?: ResponseFormat
  /**
   * How long an answer the client asked for (Responses `text.verbosity`, chat `verbosity`: GPT-5's,
   * which Codex sends for its catalog models): kept for a Responses upstream and OpenAI's own chat
   * completions; no other family has it.
   */
  verbosity?: Verbosity
  reasoning?: ReasoningSettings
  stream: boolean
  /** Responses `previous_response_id` (a translating route holds or refuses it). */
  previousResponseId?: string
  /**
   * Responses: the request's `store` is not false (the API's default): the client may name the
   * answer's items by id in a later request (`item_reference`), so the answer's items are kept
   * ({@link ItemStore}). Codex sends `store: false`: nothing kept for it.
   */
  storeItems?: boolean
  /** Responses `prompt_cache_key` / a client's cache hint, passed where the target has one. */
  cacheKey?: string
  /**
   * Chat clients: whose conversation it is ({@link CodecContext.carryScope}), which the reasoning
   * of its answer of text alone is kept under (cm-common.ts `storeTextCarry`).
   */
  carryScope?: string
  /** An end-user id (`user`, `metadata.user_id`), passed where the target has one. */
  user?: string
}

/**
 * A system message the client sent after the conversation began: a Messages `role: "system"`
 * message (Claude Code 2.1.3xx's `# Environment` after the first tool result, its date, its agent
 * types), a Responses `developer` or `system` input item after the first turn (Codex's), a chat
 * client's `system` or `developer` message after one of another role. It stood before part `part`
 * of `messages[message]` (`part` 0: before the message; `message` equal to the count of messages:
 * after the last one); `parts` are the same objects as in `Request.system`, where it is folded for
 * an upstream that takes no system message there.
 */
export interface PlacedSystem {
  message: number
  part: number
  parts: TextPart[]
}

/**
 * The system prompt and the placed system messages for an upstream that takes a system message
 * where it stood (OpenAI's Responses API takes a `developer` message anywhere in `input`, its chat
 * completions a `system` message anywhere): `system` without the parts of `placedSystem`, and the
 * placed messages, in order. So the system prompt is the same on every turn of a conversation and
 * the upstream's prompt cache keeps the whole prefix when such a message comes (Claude Code's
 * first one after its first tool result made every token after the old prompt's end a miss).
 * Undefined for a request without any, or whose placed parts are not all in `system` (a rewrite
 * that made new parts): the fold then, as to any other upstream.
 */
export function inPlaceSystem(request: Request): {system: TextPart[]; placed: PlacedSystem[]} | undefined {
  const placed = request.placedSystem
  if (!placed?.length) return undefined
  const moved = new Set<TextPart>()
  for (const p of placed) for (const part of p.parts) moved.add(part)
  const system = request.system.filter((p) => !moved.has(p))
  return system.length + moved.size === request.system.length ? {system, placed} : undefined
}

/**
 * A decoder's record of a system message at the end of the turn it followed (`messages` being
 * the turns so far: the message's place there, the turn's part count), or undefined before the
 * first turn (the system prompt's there anyway).
 */
export function placedHere(messages: readonly Message[], parts: TextPart[]): PlacedSystem | undefined {
  const last = messages.at(-1)
  return last && parts.length ? {message: messages.length - 1, part: last.parts.length, parts} : undefined
}

/**
 * The decoders' records ({@link placedHere}) once the turns are read: one that ended a turn
 * (the turn after it was one of its own, not joined to that one) stood before the next turn, or
 * after the last.
 */
export function settlePlaced(placed: PlacedSystem[], messages: readonly Message[]): void {
  for (const p of placed)
    if (p.part >= messages[p.message].parts.length) {
      p.message++
      p.part = 0
    }
}

/**
 * The part a placed system message stood before: the first one at or after its place, over turns
 * without parts (a chat `{"role": "assistant", "content": ""}`, a Messages `content: []`, kept as
 * turns of none); undefined only when no part follows (after the last turn). An empty turn's part 0
 * is no part, and read as "after the last" it moved an old system message to the end of the
 * conversation (review65 F1).
 */
function anchorOf(p: PlacedSystem, messages: readonly Message[]): Part | undefined {
  for (let m = p.message, k = p.part; m < messages.length; m++, k = 0) {
    const part = messages[m].parts[k]
    if (part) return part
  }
  return undefined
}

/**
 * The places of `placed` in the turns `rewrite` makes of `messages` (which it may change in place):
 * a part moved, added or turned into text, turns joined or added (conversation-rules.ts
 * `pairToolResults`). Each one is found again by the part it stood before (after the last turn:
 * after the last again); one whose part is gone is left out, and so is folded into the system
 * prompt as to any other upstream.
 */
export function placedAfter(
  placed: readonly PlacedSystem[],
  messages: readonly Message[],
  rewrite: () => readonly Message[],
): PlacedSystem[] {
  const anchors = placed.map((p) => anchorOf(p, messages))
  const out = rewrite()
  const at = new Map<Part, {message: number; part: number}>()
  for (let i = 0; i < out.length; i++)
    for (let j = 0; j < out[i].parts.length; j++) at.set(out[i].parts[j], {message: i, part: j})
  const kept: PlacedSystem[] = []
  for (let k = 0; k < placed.length; k++) {
    const anchor = anchors[k]
    const place = anchor === undefined ? {message: out.length, part: 0} : at.get(anchor)
    if (place) kept.push({...place, parts: placed[k].parts})
  }
  return kept
}

export type StopReason =
  | 'end'
  | 'max_tokens'
  | 'tool_use'
  | 'stop_sequence'
  /** A filter stopped the answer (Anthropic's `refusal` stop, Gemini's SAFETY, chat `content_filter`). */
  | 'content_filter'
  /** The model refused in words (a chat or Responses `refusal`): the answer is whole. */
  | 'refusal'
  | 'pause'
  | 'context_window'

export interface Usage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  /** The part of `cacheCreationTokens` written for one hour (Anthropic), when known. */
  cache1hTokens?: number
  reasoningTokens: number
}

export interface Response {
  id: string
  model: string
  /** The assistant's parts in order (reasoning, text, tool calls). */
  parts: Part[]
  stop: StopReason
  /** The stop sequence that ended the answer, when `stop` is `stop_sequence`. */
  stopSequence?: string
  usage: Usage
  /** Chat upstreams: see {@link StreamDecoder.thinkInPrompt}. */
  thinkInPrompt?: ThinkInPrompt
  /** Chat upstreams: see {@link StreamDecoder.repairedArgs}. */
  repairedArgs?: number
  /** Chat upstreams: see {@link StreamDecoder.namelessCalls}. */
  namelessCalls?: number
}

/**
 * What a chat answer showed of a template that opens `<think>` in the prompt: `closed`, its
 * content closed a `</think>` it never opened (the model is learned so, ../daemon/router/
 * adaptations.ts); `unclosed`, the model is known to answer so and this answer had no `</think>`:
 * its text went to the client as reasoning and as text.
 */
export type ThinkInPrompt = 'closed' | 'unclosed'

/**
 * A stream as a sequence of blocks, each opened, filled by deltas and closed (the Messages
 * shape, the most structured of the four). Decoders of the other protocols open and close
 * blocks themselves (a chat stream's `delta.content` after `delta.reasoning_content` closes the
 * reasoning block and opens a text block). Indexes count blocks from 0 in order of opening;
 * at most one text or reasoning block is open at a time, tool-call blocks may interleave
 * (several tool calls streamed in parallel).
 *
 * A complete stream is: `start`, blocks, `stop`, optionally `usage` (cumulative: each one
 * replaces the counts it names), `end`. A stream that breaks is: ..., `error`.
 */
export type StreamEvent =
  | {type: 'start'; id: string; model: string; usage?: Partial<Usage>}
  | {type: 'block_start'; index: number; block: BlockStart}
  | {type: 'text_delta'; index: number; text: string}
  | {type: 'reasoning_delta'; index: number; text: string}
  /** A reasoning block's opaque state (it may come before, among or after its text deltas). */
  | {type: 'reasoning_opaque'; index: number; signature?: Opaque; redacted?: Opaque; encrypted?: Opaque}
  | {type: 'tool_args_delta'; index: number; json: string}
  | {type: 'block_stop'; index: number}
  | {type: 'stop'; reason: StopReason; stopSequence?: string}
  | {type: 'usage'; usage: Partial<Usage>}
  | {type: 'end'}
  /**
   * The upstream broke or reported an error. `answered`: the error is the model's own answer (a
   * finish that says the answer broke off, as Gemini's MALFORMED_FUNCTION_CALL), not the upstream
   * failing: no breaker failure, and no other target is tried for it. `usage`: what the upstream
   * billed for an answer of which the client was sent nothing (Gemini's empty or failed first
   * finish): the log row counts it, the client is told none. `body`: the upstream's error as JSON
   * text, kept when it holds Google's `details` (a `QuotaFailure` naming a daily quota, `RetryInfo`):
   * the relay reads a 429's wait from it as from the same error answered with its status.
   */
  | {
      type: 'error'
      status: number
      message: string
      code?: string
      answered?: true
      usage?: Partial<Usage>
      body?: string
    }

export type BlockStart =
  | {type: 'text'}
  | {type: 'reasoning'}
  | {type: 'tool_call'; id: string; name: string; signature?: Opaque}
  /** A search the upstream ran, whole: opened and closed with nothing between. */
  | (Omit<WebSearchPart, 'type'> & {type: 'web_search'})

/** A request the codec cannot represent or that breaks its protocol's rules: answered 400. */
export class TranslationError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message)
    this.name = 'TranslationError'
  }
}

/**
 * A Responses request that names state only the Responses server that made it holds or reads: a
 * `previous_response_id`, an `item_reference` to an item gwctl did not mint (OpenAI's, from an
 * answer passed through), remote compaction and its `compaction` items (OpenAI's ciphertext). No
 * translated target can take it, nor a Responses one whose tools gwctl makes plain: the router
 * skips them for a Responses target passed through as it came, and refuses it (400, this message)
 * only where the route has none. `named` says what it named, for the log row of a request that
 * went on to such a target.
 */
export class ServerStateError extends TranslationError {
  constructor(
    message: string,
    readonly named: string,
  ) {
    super(message)
    this.name = 'ServerStateError'
  }
}

/** Reasoning and signatures kept across turns for clients whose protocol cannot carry them. */
export interface CarryStore {
  get(key: string): Part[] | undefined
  set(key: string, parts: Part[]): void
  /** The items of gwctl's answers to Responses clients, for their `item_reference`s (one per daemon). */
  readonly items?: ItemStore
}

/**
 * The items of the answers gwctl encoded for a Responses client, as the parts each stood for, by
 * the item id gwctl minted (`msg_…`, `rs_…`, `fc_…`, `ws_…`): the AI SDK's Responses provider sends
 * an earlier answer's items back as `{"type": "item_reference", "id"}` unless told `store: false`,
 * and only the server that answered can say what they were. Bounded, lost on restart.
 */
export interface ItemStore {
  get(id: string): Part[] | undefined
  /** `bytes`: about how much `parts` hold (the encoder's estimate: nothing is serialised to measure them). */
  set(id: string, parts: Part[], bytes: number): void
  /** How many items it holds (none: no body passed through can name one of them). */
  readonly size: number
}

/**
 * The id `call`'s carried parts are kept under: its own, or for a call Gemini CLI named
 * `<name>__<id>` (the history of its model router's JSON calls, which relabels every call of the
 * session so: `update_topic__call_e` for the main calls' `call_e`) the id after that prefix.
 * Without it the router call lost the reasoning of every earlier turn (DeepSeek V4 refused it
 * once a restart: test:agents --translate --resume, stop 56). Undefined when neither is carried.
 */
export function carriedId(carry: CarryStore, call: ToolCallPart): string | undefined {
  if (carry.get(call.id)) return call.id
  const prefix = `${call.name}__`
  if (call.name === '' || !call.id.startsWith(prefix)) return undefined
  const id = call.id.slice(prefix.length)
  return carry.get(id) ? id : undefined
}

/** How a Messages upstream is asked to think: `enabled` with a budget, or `adaptive` with an effort. */
export type ThinkingForm = 'adaptive' | 'enabled'

/**
 * How a Messages upstream's model is asked not to think: `omit`, no `thinking` (off by default:
 * Claude 4.x); `disabled`, `thinking.type: disabled` (Sonnet 5, Opus 5, Haiku 5.5: on by
 * default); `between_tools`, its lowest setting (Sonnet 5.5, which refuses `disabled`); `low`,
 * an `output_config.effort` of low (Opus 5.5, Fable, Mythos: thinking cannot be turned off);
 * `least_budget`, `thinking.type: enabled` with Anthropic's least budget, 1 024 tokens (a server
 * that takes only `enabled`, learned from its refusal of `disabled`: Kimi's Anthropic endpoints for
 * K2.7 Code and kimi-for-coding, "invalid thinking: only type=enabled is allowed for this model").
 */
export type ThinkingOff = 'omit' | 'disabled' | 'between_tools' | 'low' | 'least_budget'

/** What a Messages upstream's refusals taught of its model, beyond its thinking form. */
export interface ClaudeLearned {
  /** How it is asked not to think (its refusal of another way, or of thinking beside a forced tool). */
  thinkingOff?: ThinkingOff
  /** It refuses a forced `tool_choice` (`any`, `tool`): sent as `auto`, the tool named in the prompt. */
  noForcedTools?: boolean
  /**
   * It refuses a conversation that ends with an assistant message (a prefill): such a last turn
   * of text goes as a user turn asking to continue it.
   */
  noPrefill?: boolean
  /**
   * It refused a thinking block bound to another conversation's prefix: thinking blocks go with
   * `block_binding.prefix_mismatch_behavior: drop_block` (and its beta header).
   */
  dropUnboundThinking?: boolean
  /**
   * It refused `thinking.block_binding` (a proxy's Messages API that does not know it, and binds
   * nothing): thinking blocks go back without it.
   */
  noBlockBinding?: boolean
  /**
   * It refused thinking beside an assistant tool-call turn without a thinking block anywhere in
   * the history, not only in the running tool loop (Kimi's coding endpoint: "thinking is enabled
   * but reasoning_content is missing in assistant tool call message at index 156"): such a
   * history goes with thinking off.
   */
  thinkingEveryToolTurn?: boolean
  /**
   * It refused an assistant tool-call turn without a thinking block while thinking, and checks
   * only that one is there, not its signature (DeepSeek's Anthropic endpoint, whose models think
   * unless told not to: "The `content[].thinking` in the thinking mode must be passed back to the
   * API."): such a turn goes with an empty thinking block at its head, thinking kept on.
   */
  emptyThinking?: boolean
}

/** What every codec's functions may be given. */
export interface CodecContext {
  /** Kept opaque state for protocols with no field to carry it (chat clients). */
  carry?: CarryStore
  /**
   * Chat clients: whose conversation it is (the gateway key's agent, the project, the policy:
   * daemon/router/proxy.ts), which the reasoning of an answer of text alone is kept under, beside
   * its text (cm-common.ts `storeTextCarry`): one project's never goes into another's request.
   */
  carryScope?: string
  /**
   * A Responses upstream's answer to a Responses client: the server that made it (its provider's
   * name and base URL, daemon/router/translated.ts `serverOf`), kept with the encrypted reasoning of
   * the items held for the client's `item_reference`s ({@link ReasoningPart.server}).
   */
  server?: string
  /**
   * Messages upstreams: the thinking form the model was found to take (a refusal of the other,
   * daemon/router/adaptations.ts), over what its name says (`claudeThinking`).
   */
  thinkingForm?: ThinkingForm
  /** Messages upstreams: what refusals taught of the model beyond its thinking form. */
  claude?: ClaudeLearned
  /** Chat upstreams: the server refused Anthropic's cache marks on content parts (`cache_control`). */
  noCacheMarks?: boolean
  /**
   * Chat upstreams: Alibaba's DashScope serving a Qwen model (../daemon/router/plain-tools.ts
   * `isDashScopeApi`), whose explicit cache takes Anthropic's cache marks on content parts (Model
   * Studio's "Context cache" guide: `cache_control: {type: 'ephemeral'}`, at most 4 a request, each
   * looking back 20 content blocks, a prefix of 1 024 tokens at least; without them only its
   * implicit cache, hits not guaranteed): marked as for Claude. Alibaba's own Qwen Code marks so
   * the system message and the last message, a `tool` message included (its DashScope provider,
   * `addDashScopeCacheControl`).
   */
  qwenCacheMarks?: boolean
  /**
   * Chat upstreams: a model on a host that leaves the reasoning of earlier assistant turns out of
   * its input unless asked to keep it (../daemon/router/plain-tools.ts `preservedThinkingOf`), for
   * a request with reasoning on: `dashscope`, Alibaba's `preserve_thinking: true` (Qwen3.6 on,
   * Kimi K2.6 there); `zai`, Z.AI's and BigModel's `thinking.clear_thinking: false` (GLM-4.7, GLM-5);
   * `moonshot`, Moonshot's `thinking.keep: "all"` (Kimi K2.6). Sent only with reasoning going back
   * (chat.ts `preservedThinkingFields`).
   */
  preservedThinking?: PreservedThinking
  /**
   * Chat upstreams: GLM-4.6 or later on Z.AI or BigModel, for a streamed request
   * (../daemon/router/plain-tools.ts `asksToolStream`): a request with tools asks for their calls'
   * arguments to be streamed, `"tool_stream": true` (chat.ts), else the model sends each call whole
   * at the end, after as long a silence as its arguments take to write.
   */
  toolStream?: boolean
  /**
   * Gemini upstreams: where the images and documents of a function's result go, learned from a
   * refusal of the other layout (daemon/router/adaptations.ts), over what the model's name says
   * (gemini.ts `multimodalResponses`): `nested`, in the `functionResponse`'s own `parts`; `flat`,
   * after every `functionResponse` of the turn.
   */
  geminiResultMedia?: 'nested' | 'flat'
  /**
   * Chat upstreams: the model's chat template opens `<think>` in the prompt (learned,
   * ../daemon/router/adaptations.ts): its answer's content is reasoning up to `</think>`.
   */
  thinkOpen?: boolean
  /**
   * Responses upstreams: a server that is not OpenAI's, which takes function tools only (custom
   * tools as functions, OpenAI's hosted tools left out: responses-request.ts).
   */
  plainTools?: boolean
  /**
   * Responses upstreams, with `plainTools`: a server that wants every reasoning item back with its
   * text (DeepSeek's, learned: translate.ts `UpstreamAdaptation.reasoningTextBack`): one whose text
   * Codex did not keep goes as an empty `reasoning_text` part, not left out.
   */
  reasoningTextBack?: boolean
  /**
   * Responses upstreams: Azure OpenAI, by its host (daemon/router/plain-tools.ts `azureProvider`),
   * which keeps no item of a request sent with `store: false` and then refuses the reasoning items
   * the next turn names by their ids: the requests go with `store: true`, as Codex sends them to a
   * provider it knows is Azure.
   */
  storeTrue?: boolean
  /**
   * Responses upstreams: OpenAI's own hosts (its API, ChatGPT's backend, Azure OpenAI), whose
   * input messages take an assistant message's `phase` (`commentary`, `final_answer`): each
   * assistant message of the history goes with its phase, derived from the history, for a model
   * that labels its messages so (responses-request.ts `usesPhase`). Other Responses servers may
   * refuse the member: they get none.
   */
  phases?: boolean
  /**
   * Responses and chat upstreams: OpenAI's own (its Responses API, ChatGPT's backend, Azure
   * OpenAI, the simulator that stands for them; its chat completions at `api.openai.com`), which
   * take a developer or system message anywhere in the conversation: a system message the client
   * sent after the conversation began goes where it stood ({@link inPlaceSystem}), not into the
   * system prompt. Other servers keep the fold: DeepSeek's Responses API refuses any item between
   * a call and its output, and the chat templates behind vLLM, llama.cpp and Ollama (their chat
   * and Responses endpoints alike) refuse a system message after the first turn (Qwen3.5's
   * "System message must be at the beginning.").
   */
  systemInPlace?: boolean
  /**
   * Chat upstreams: OpenAI's own API (`api.openai.com`), whose chat completions take the
   * request's cache key as `prompt_cache_key`; most other chat servers refuse the field.
   */
  cacheKeys?: boolean
  /**
   * Chat upstreams: OpenAI's own API (`api.openai.com`), whose chat completions take the output
   * limit as `max_completion_tokens` on every model and refuse `max_tokens` on its reasoning ones
   * (o-series, gpt-5): sent so from the first request.
   */
  openAiApi?: boolean
  /**
   * Chat upstreams, set only for a request that asked for no thinking or set no `max_tokens`: the
   * server is on this machine or the local network (vLLM, SGLang, llama.cpp, LM Studio, Ollama),
   * which reads a model's switch of thinking off from `chat_template_kwargs` (thinking-off.ts
   * `thinkingOffFields`) and whose own output limit is the rest of its window (no
   * {@link DEFAULT_MAX_TOKENS}).
   */
  localServer?: boolean
  /**
   * Chat upstreams' decoders: the client's tools, whose schemas type the parameters of a call's
   * arguments in Qwen3-Coder's `<parameter=…>` form when they are repaired (conversation-rules.ts).
   */
  tools?: readonly FunctionTool[]
  /** Makes ids for things the source had none for (Gemini tool calls, responses). */
  newId?: (prefix: string) => string
  /**
   * Chat upstreams' decoders: the tool-call ids of the client's history (its calls and their
   * results), computed on the first call (translate.ts `decodeContext`): an answer's call that
   * comes with one of them is given a new id (cm-common.ts `answerCallId`).
   */
  historyCallIds?: () => ReadonlySet<string>
  /**
   * Chat upstreams' decoders, for a Messages client: a call id the gateway gives instead of the
   * upstream's is `call_…` always (Anthropic's API, which the conversation may go on to, takes
   * `[a-zA-Z0-9_-]` only), not Kimi's `NAME:N` shape.
   */
  plainCallIds?: boolean
  /**
   * The client's request, decoded (given to the encoders of the client's answer): which tools
   * are custom, whether a chat client asked for stream usage, the model it asked for.
   */
  request?: Request
  /** Chat streams: the client asked for the usage chunk (`stream_options.include_usage`). */
  includeUsage?: boolean
  /**
   * Messages upstreams: the request asked for its JSON answer through the `json_answer` tool
   * (`jsonAnswerTool`, messages-request.ts): that tool's call is the answer's text.
   */
  jsonAnswer?: boolean
  /**
   * Messages upstreams: the stream decoder keeps the answer's content blocks as they came, to be
   * sent back if the turn pauses (`pause_turn`, ./pause.ts). Set only where the request offered
   * a server tool (its web search): no other answer can pause.
   */
  keepContent?: boolean
}

/**
 * The `max_tokens` a chat or Messages upstream is sent when the client sets none (Codex and Gemini
 * CLI never do): Claude Code's own default. Left out, a chat server cuts at its own default (4 096
 * on GLM at Z.AI and Ark), and the thinking of a high effort can take all of it. A server whose cap
 * is lower says so and it is learned (daemon/router/adaptations.ts `outputLimit`).
 */
export const DEFAULT_MAX_TOKENS = 32_000

/**
 * The documented output caps below {@link DEFAULT_MAX_TOKENS} of models still routed to, by name
 * (a provider's prefix such as `openai/` aside): each refuses a larger `max_tokens` (OpenAI's "max_tokens is too large: 32000. This model supports at most 16384 completion tokens",
 * Anthropic's "max_tokens: 32000 > 8192"), which is learned, at the cost of a failed request per
 * model after each start. Only models whose cap cannot change (a dated model or its alias): the
 * moving aliases (DeepSeek's `deepseek-chat`, 8K today) are left to the learned cap, which follows
 * them. Sources: OpenAI's model pages (gpt-4o and gpt-4o-mini 16 384, gpt-4o-2024-05-13 4 096;
 * gpt-4 8 192; gpt-4-turbo, the gpt-4 previews and gpt-3.5-turbo 4 096; gpt-4.1 is 32 768), Anthropic's models overview (Claude 3.5 Haiku and
 * Sonnet 8 192, Claude 3 Haiku and Opus 4 096).
 */
const OUTPUT_CAPS: ReadonlyArray<readonly [RegExp, number]> = [
  // (the first that matches: gpt-4o's first snapshot had gpt-4-turbo's 4 096)
  [/^(?:[\w.-]+\/)?gpt-4o-2024-05-13$/, 4096],
  [/^(?:[\w.-]+\/)?(?:chatgpt-)?gpt-4o(?:-mini)?(?:-\d{4}-\d\d-\d\d|-latest)?$/, 16_384],
  [/^(?:[\w.-]+\/)?gpt-4(?:-\d{4})?$/, 8192],
  [
    /^(?:[\w.-]+\/)?gpt-(?:4-turbo(?:-\d{4}-\d\d-\d\d|-preview)?|4-\d{4}-preview|4-vision-preview|3\.5-turbo(?:-\d{4}|-16k)?)$/,
    4096,
  ],
  [/^(?:[\w.-]+\/)?claude-3-5-(?:haiku|sonnet)/, 8192],
  [/^(?:[\w.-]+\/)?claude-3-(?:haiku|opus)/, 4096],
]

const defaultLimits = new Map<string, number>()

/**
 * The `max_tokens` a request whose client set none is sent: {@link DEFAULT_MAX_TOKENS}, or the
 * model's documented cap where that is lower ({@link OUTPUT_CAPS}).
 */
export function defaultMaxTokens(model: string): number {
  // (one lookup a request: the names tested once a model)
  let known = defaultLimits.get(model)
  if (known === undefined) {
    known = DEFAULT_MAX_TOKENS
    for (const [name, cap] of OUTPUT_CAPS)
      if (name.test(model)) {
        known = cap
        break
      }
    if (defaultLimits.size >= 256) defaultLimits.clear()
    defaultLimits.set(model, known)
  }
  return known
}

const WRAP = 'gwx1.'
/**
 * After the family in the wrap of Anthropic's redacted thinking (`gwx1.messages+redacted.<data>`),
 * so that it comes back as redacted, not as a signature: a reasoning item's `encrypted_content`
 * and a Gemini `thoughtSignature` are one string for either. A wrap without it (every one written
 * before stop 60) reads as before.
 */
const REDACTED = '+redacted'

const FAMILIES: ReadonlySet<string> = new Set<Family>(['chat', 'responses', 'messages', 'gemini'])

/**
 * The string a client of `clientFamily` is given for `opaque`: the vendor's own value when the
 * client speaks that vendor's protocol (a client going straight to the vendor later still works),
 * else `gwx1.<family>.<value>`, which only gwctl reads back (`gwx1.<family>+redacted.<value>` for
 * `redacted` thinking).
 */
export function wrapOpaque(clientFamily: Family, opaque: Opaque, redacted = false): string {
  return opaque.family === clientFamily
    ? opaque.value
    : `${WRAP}${opaque.family}${redacted ? REDACTED : ''}.${opaque.value}`
}

/**
 * The one string a client of `clientFamily` is given for a reasoning part's opaque state (a
 * Responses `encrypted_content`, a Gemini `thoughtSignature`), redacted thinking marked as such;
 * undefined when it has none.
 */
export function wrapReasoning(
  clientFamily: Family,
  part: Pick<ReasoningPart, 'signature' | 'encrypted' | 'redacted'>,
): string | undefined {
  const opaque = part.signature ?? part.encrypted
  if (opaque) return wrapOpaque(clientFamily, opaque)
  return part.redacted && wrapOpaque(clientFamily, part.redacted, true)
}

/** The inverse of {@link wrapOpaque}: a string a client of `clientFamily` sent back. */
export function unwrapOpaque(clientFamily: Family, value: string): Opaque {
  return unwrapped(clientFamily, value)[0]
}

/**
 * The inverse of {@link wrapReasoning}: the reasoning state a client of `clientFamily` sent back,
 * as the part's `redacted` when its wrap says so, else as its `signature`.
 */
export function unwrapReasoning(
  clientFamily: Family,
  value: string,
): {signature: Opaque; redacted?: undefined} | {redacted: Opaque; signature?: undefined} {
  const [opaque, redacted] = unwrapped(clientFamily, value)
  return redacted ? {redacted: opaque} : {signature: opaque}
}

/** A wrap's opaque, and whether it is redacted thinking. */
function unwrapped(clientFamily: Family, value: string): [Opaque, boolean] {
  if (value.startsWith(WRAP)) {
    const dot = value.indexOf('.', WRAP.length)
    const family = value.slice(WRAP.length, dot)
    if (dot > 0) {
      if (FAMILIES.has(family))
        return [{family: family as Family, value: value.slice(dot + 1), wrapped: true}, false]
      // (the marker looked for only past a family that is none of the four)
      if (family.endsWith(REDACTED)) {
        const maker = family.slice(0, -REDACTED.length)
        if (FAMILIES.has(maker))
          return [{family: maker as Family, value: value.slice(dot + 1), wrapped: true}, true]
      }
    }
  }
  return [{family: clientFamily, value}, false]
}

/** Whether a reasoning part's opaque state came back in a gwctl wrap. */
const fromWrap = (p: ReasoningPart): boolean => !!(p.signature?.wrapped || p.redacted?.wrapped)

/**
 * How far {@link withoutWrappedThinking} reaches: `turn`, the turn a refusal named alone; `earlier`,
 * every turn but the last assistant turn (the running tool loop's, whose wraps are of now) besides;
 * `all`, that one too.
 */
export type WrapReach = 'turn' | 'earlier' | 'all'

/**
 * The request without the thinking that came in gwctl's wraps (every reasoning part of a message
 * whose state came in a wrap: its signed and its redacted thinking, a turn's thinking going back
 * whole or not at all; the parts the gateway carried kept), in the assistant messages that a
 * Messages upstream's refusal of a signature (`` messages.N.content.M: Invalid `signature` in
 * `thinking` block ``) points at: those whose every Anthropic signature and redacted data is one
 * of `named`, the values of the refused turn N as it was sent; and, as `reach` widens (a request's
 * second refusal, then its third: Anthropic names the first bad block only, and a history may hold
 * more old wraps than a request has retries), each message that holds a wrapped Anthropic
 * signature but the last assistant message, then that one too. Without `named` (words that name
 * no turn) the reach is `earlier` at least (a wrap written before stop 60 holds redacted data as a
 * signature, and reads as any other: it cannot be told by its value, nor by an empty text, which
 * thinking shown as `omitted` also has). Undefined when nothing is left out. What such a refusal
 * is sent again with.
 */
export function withoutWrappedThinking(
  request: Request,
  named?: ReadonlySet<string>,
  reach: WrapReach = 'turn',
): Request | undefined {
  const last = request.messages.findLastIndex((m) => m.role === 'assistant')
  const wide = named ? reach : reach === 'turn' ? 'earlier' : reach
  const points = (m: Message, i: number): boolean =>
    m.role === 'assistant' &&
    ((named !== undefined &&
      m.parts.some((p) => p.type === 'reasoning' && fromWrap(p)) &&
      sentIn(m, named)) ||
      (wide !== 'turn' &&
        (i !== last || wide === 'all') &&
        m.parts.some(
          (p) => p.type === 'reasoning' && p.signature?.wrapped && p.signature.family === 'messages',
        )))
  let changed = false
  const messages = request.messages.map((m, i) => {
    if (!points(m, i)) return m
    changed = true
    return {...m, parts: m.parts.filter((p) => p.type !== 'reasoning' || !fromWrap(p))}
  })
  return changed ? {...request, messages} : undefined
}

/**
 * Whether every Anthropic signature and redacted data of message `m` is one of `named` (a turn as
 * sent): it is that turn's, or part of it. Every one, not any: a value may stand in two turns (a
 * thinking of the same text, signed alike by a server that binds nothing).
 */
function sentIn(m: Message, named: ReadonlySet<string>): boolean {
  let held = false
  for (const p of m.parts) {
    const opaque = p.type === 'reasoning' ? (p.redacted ?? p.signature) : undefined
    if (opaque?.family !== 'messages' || opaque.value === '') continue
    if (!named.has(opaque.value)) return false
    held = true
  }
  return held
}

export const emptyUsage = (): Usage => ({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  reasoningTokens: 0,
})

/**
 * One family's codec. Requests and answers are parsed JSON; streams are SSE events, decoded one
 * at a time (`event` is the SSE `event:` name, `data` the raw `data:` text) and encoded into SSE
 * text ready to write (several events may come out of one).
 */
export interface Codec {
  readonly family: Family
  /** A client's request body (and, for Gemini, the model and stream flag from its path). */
  decodeRequest(body: unknown, ctx: CodecContext & {model?: string | null; stream?: boolean}): Request
  /** The body to send to an upstream of this family for `request`, asking for `model`. */
  encodeRequest(request: Request, model: string, ctx?: CodecContext): Record<string, unknown>
  /** The path (below the provider's base URL) of a request of this family. */
  path(model: string, stream: boolean): string
  /** An upstream's non-stream answer. */
  decodeResponse(body: unknown, ctx?: CodecContext): Response
  /** A non-stream answer for a client of this family. */
  encodeResponse(response: Response, ctx?: CodecContext): Record<string, unknown>
  /**
   * The same answer as JSON text, byte for byte `JSON.stringify(encodeResponse(...))`, written
   * without building the object first (a codec without it is encoded as an object, then
   * stringified).
   */
  encodeResponseText?(response: Response, ctx?: CodecContext): string
  /** Reads an upstream's stream of this family. */
  streamDecoder(ctx?: CodecContext): StreamDecoder
  /** Writes a stream for a client of this family. */
  streamEncoder(ctx?: CodecContext & {model?: string}): StreamEncoder
}

export interface StreamDecoder {
  /** One SSE event of the upstream; returns the IR events it amounts to. */
  event(name: string | undefined, data: string): StreamEvent[]
  /**
   * The upstream's stream ended. Returns what remains (closing open blocks); a stream that ended
   * without its protocol's terminal event yields an `error` event.
   */
  end(): StreamEvent[]
  /**
   * Chat and Messages: the answer's stop came (a `finish_reason`, a `stop_reason` in
   * `message_delta`), so what is left is its usage and the stream's last event; {@link end} after
   * it gives the whole answer, not an error.
   */
  readonly stopped?: boolean
  /**
   * Messages: the decoder of the continuation of an answer that paused (./pause.ts), numbering
   * its blocks on from this one's and adding its output to this one's.
   */
  continuation?(): StreamDecoder
  /**
   * Gemini and chat: the usage the upstream reported that no event carried yet (Gemini's
   * `usageMetadata`, on every chunk, goes to the client with the finish; a chat server that sends
   * its usage before its stop is held until then). The row of a stream cut before its end (the
   * client left, the upstream reset or went silent) counts it, as a pass-through route's does.
   */
  reportedUsage?(): Partial<Usage> | undefined
  /** Chat: what the answer showed of a template that opens `<think>` in the prompt, if anything. */
  readonly thinkInPrompt?: ThinkInPrompt
  /** Chat: how many tool calls' arguments were no JSON and went out with their syntax repaired. */
  readonly repairedArgs?: number
  /** Chat: how many tool calls never got a name, and were left out of the answer. */
  readonly namelessCalls?: number
  /** Messages: the answer's content blocks as they came (with `CodecContext.keepContent`). */
  keptContent?(): unknown[]
  /**
   * Messages, a continuation's decoder: the prompts of the turn's earlier calls, billed but not in
   * the usage the client is told (the log row adds them).
   */
  earlierInput?(): Usage | undefined
  /**
   * Messages: the thinking blocks the upstream dropped from the request, in words (its
   * `input_transformations`), if any.
   */
  droppedThinking?(): string | undefined
  /**
   * Responses: the answer's start is held back after the upstream's ack (`response.created`,
   * `response.in_progress`), waiting for its first output or a failure; {@link flushStart} gives
   * it now (the relay's grace ran out, ../daemon/router/translated.ts).
   */
  readonly holdsStart?: boolean
  /** Responses: the start held back ({@link holdsStart}), emitted now; nothing when none is held. */
  flushStart?(): StreamEvent[]
}

export interface StreamEncoder {
  /** The SSE text for one IR event ('' when it needs no bytes of its own). */
  event(event: StreamEvent): string
}
