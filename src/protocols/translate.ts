/**
 * Translation between two families through the IR: a client's request into an upstream's, the
 * upstream's answer (JSON or a stream, event by event) into the client's, its usage in gwctl's
 * one meaning, and a token estimate for the side endpoints an upstream of another family lacks.
 * The daemon's relay does the I/O; everything here is pure and synchronous.
 */
import type {EventSourceMessage} from 'eventsource-parser'
import {createParser} from 'eventsource-parser'

import {adjacentOutputs} from './adjacent-outputs.js'
import {
  messagesHoldMediaInResults,
  messagesMediaOutOfResults,
  responsesMediaOutOfOutputs,
} from './media-out-of-results.js'
import {
  alternatingMessages,
  chatCodec,
  chatMediaPart,
  decodeResponseFormat,
  roleRuns,
  systemFirstMessages,
  takesCacheMarks,
} from './chat.js'
import {budgetEffort, effortBudget} from './cm-common.js'
import type {ThoughtSignatureField, ToolIdRule} from './conversation-rules.js'
import {
  bridgeToolTurns,
  dummySignatures,
  pairToolResults,
  repairToolArguments,
  reshapeReasoningHistory,
  shapeToolIds,
  withoutCallIds,
} from './conversation-rules.js'
import {geminiCodec, RESULT_MEDIA, searchesBesideFunctions, systemIntoFirstTurn} from './gemini.js'
import {ENCODER_NOTES} from './images.js'
import {optionalServerTools, withoutServerTools} from './server-tools.js'
import {
  chatBodyWithinToolCap,
  geminiBodyWithinToolCap,
  messagesBodyWithinToolCap,
  requestWithinToolCap,
} from './tool-cap.js'
import {saidOverflow} from './context-overflow.js'
import {clientToolName, renameTools, upstreamToolNames} from './tool-names.js'
import {
  chatBodyWithOneTypes,
  chatBodyWithoutSchemaKeys,
  objectTool,
  withOneTypes,
  withoutSchemaKeys,
} from './tool-schemas.js'
import type {
  ClaudeLearned,
  Codec,
  CodecContext,
  Effort,
  Family,
  FunctionTool,
  ImagePart,
  Part,
  RefusedMedia,
  Request,
  StreamDecoder,
  StreamEncoder,
  StreamEvent,
  ThinkInPrompt,
  ThinkingForm,
  Usage,
} from './ir.js'
import {
  documentText,
  emptyUsage,
  isDocument,
  jsonInstructionText,
  placedAfter,
  refusedMediaText,
  ServerStateError,
  TranslationError,
  withoutRefusedMedia,
  withSearchesAsText,
  webSearchText,
} from './ir.js'
import {parseJsonBytes, utf8Bytes} from './json-bytes.js'
import {messagesCodec} from './messages.js'
import {
  BLOCK_BINDING_BETA,
  forcedCallText,
  jsonAnswerTool,
  maxTokensBeside,
  MIN_BUDGET,
  SAMPLING_FIELDS,
} from './messages-request.js'
import {responsesCodec} from './responses.js'
import {inputItemType} from './responses-input.js'
import {ChunkText} from './sse-template.js'
import {
  chatThinkingIsOff,
  refusesForcedAlwaysThinking,
  refusesForcedWhileThinking,
  thinkingOffForForcedCall,
} from './thinking-off.js'
import {thinkingOffForToolTurns, withEmptyThinking} from './thinking-history.js'

export {ServerStateError, TranslationError, withoutWrappedThinking} from './ir.js'
export {refusedTurnOpaques} from './messages-request.js'
export {derivedCacheKey, headerCacheKey} from './cache-key.js'
export {geminiDeclarationCount} from './tool-cap.js'
export {ItemReferenceError, REMOTE_COMPACTION_REFUSAL} from './responses.js'

export const CODECS: Readonly<Record<Family, Codec>> = {
  chat: chatCodec,
  responses: responsesCodec,
  messages: messagesCodec,
  gemini: geminiCodec,
}

/** A client request decoded once, ready to be encoded for any upstream family. */
export interface ClientRequest {
  family: Family
  request: Request
  /** Chat clients: `stream_options.include_usage`. */
  includeUsage: boolean
  /** The upstream names of tools each upstream family would refuse (tool-names.ts), once known. */
  toolNames?: Partial<Record<Family, Map<string, string> | null>>
  /** The tool-call ids of the history (its calls and results), once a chat upstream's answer asked. */
  callIds?: ReadonlySet<string>
}

/**
 * The tool-call ids of `client`'s history, its calls' and its results', computed once (the first
 * call of a chat upstream's answer asks: cm-common.ts `answerCallId`).
 */
function historyCallIds(client: ClientRequest): ReadonlySet<string> {
  if (client.callIds) return client.callIds
  const ids = new Set<string>()
  for (const m of client.request.messages)
    for (const p of m.parts)
      if (p.type === 'tool_call') ids.add(p.id)
      else if (p.type === 'tool_result') ids.add(p.callId)
  client.callIds = ids
  return ids
}

/** The renamed tools of `client`'s request for an `upstream` (undefined: none), computed once. */
function toolNamesFor(client: ClientRequest, upstream: Family): Map<string, string> | undefined {
  const known = client.toolNames?.[upstream]
  if (known !== undefined) return known ?? undefined
  const names = upstreamToolNames(client.request, upstream)
  client.toolNames ??= {}
  client.toolNames[upstream] = names ?? null
  return names
}

/** The upstream's calls under the client's tool names. */
function clientCallNames(parts: Part[], names: ReadonlyMap<string, string> | undefined): void {
  if (!names) return
  for (const p of parts) if (p.type === 'tool_call') p.name = clientToolName(p.name, names)
}

/**
 * A client's request body, parsed: `JSON.parse` of its UTF-8 text, decoded by the fast path of
 * `json-bytes.ts` (an agent's body of 60-300 KB with any non-ASCII character in it). Throws
 * {@link TranslationError} for a body that is not JSON.
 */
export function parseClientBody(bytes: Buffer): unknown {
  try {
    return parseJsonBytes(bytes)
  } catch {
    throw new TranslationError('the request body is not JSON')
  }
}

/** Why a Responses request that continues a stored response cannot go to another family's upstream. */
export const PREVIOUS_RESPONSE_REFUSAL =
  'previous_response_id needs a Responses upstream, and this route translates to another protocol; send the whole conversation in `input` (with store: false, as Codex does)'

/** The refusal of a `previous_response_id` on a translated target: state only its server holds. */
export const previousResponseRefusal = (id: string): ServerStateError =>
  new ServerStateError(PREVIOUS_RESPONSE_REFUSAL, `previous_response_id ${JSON.stringify(id)}`)

/**
 * Decodes a client's request body (parsed JSON). `model`/`stream` come from a Gemini path.
 * Throws {@link TranslationError} for a body the IR cannot hold.
 */
export function decodeClientRequest(
  family: Family,
  body: unknown,
  ctx: CodecContext & {model?: string | null; stream?: boolean; toResponses?: boolean},
): ClientRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new TranslationError('the request body must be a JSON object')
  const request = CODECS[family].decodeRequest(body, ctx)
  // every family refuses a history whose tool calls and results do not pair up
  const paired = pairToolResults(request.messages)
  if (paired !== request.messages) {
    // (the system messages that stood between turns: found again in the turns paired)
    if (request.placedSystem)
      request.placedSystem = placedAfter(request.placedSystem, request.messages, () => paired)
    request.messages = paired
  }
  // (`toResponses`: a Responses client on a Responses server sent its tools as plain functions,
  // which keeps the conversation the server holds)
  if (request.previousResponseId && !ctx.toResponses)
    throw previousResponseRefusal(request.previousResponseId)
  const options = (body as {stream_options?: {include_usage?: unknown}}).stream_options
  // every field named, toolNames too: one object shape for every request
  return {family, request, includeUsage: options?.include_usage === true, toolNames: undefined}
}

/** The body and path for an upstream of `upstream` asking for `model`. */
export function encodeUpstreamRequest(
  client: ClientRequest,
  upstream: Family,
  model: string,
  ctx: CodecContext = {},
  adapt?: UpstreamAdaptation,
): {body: Buffer; path: string; sent: SentRequest} {
  const codec = CODECS[upstream]
  // (a built-in tool no other family has: a key test each, only for bodies that offer one)
  if (client.request.builtinTools && upstream !== 'gemini') refuseUrlContext(client.request, upstream)
  const names = toolNamesFor(client, upstream)
  // a text-only model's refusal of images or files: each goes as a line that says what was there
  let request = withSearchesAsText(
    adapt?.media ? withoutRefusedMedia(client.request, adapt.media, model) : client.request,
  )
  if (adapt?.noWebSearch && optionalSearch(request)) request = {...request, webSearch: undefined}
  // tool-schema keywords a Gemini behind a chat server (or a relay) refused: gone from every schema
  if (adapt?.schemaKeys) request = withoutSchemaKeys(request, adapt.schemaKeys)
  if (adapt?.typeLists) request = withOneTypes(request)
  // more tools than the model takes: the client's first, a line saying which were left out
  let capNote: string | undefined
  if (adapt?.toolCap !== undefined) {
    const capped = requestWithinToolCap(request, adapt.toolCap, upstream !== 'gemini')
    if (capped) ({request, note: capNote} = capped)
  }
  const body = codec.encodeRequest(
    names ? renameTools(request, names) : request,
    model,
    adapt?.thinking || adapt?.claude || adapt?.noCacheMarks || adapt?.geminiResultMedia
      ? {
          ...ctx,
          thinkingForm: adapt.thinking ?? ctx.thinkingForm,
          claude: adapt.claude,
          noCacheMarks: adapt.noCacheMarks,
          geminiResultMedia: adapt.geminiResultMedia,
        }
      : ctx,
  )
  // a forced call to a chat model that refuses one while it thinks, as it does by default (DeepSeek
  // V4, Kimi K2.5 on): thinking off for this request, the forced choice kept, from the first try
  // (any other request: a test of one field)
  const forcedOff =
    upstream === 'chat' &&
    body.tool_choice !== undefined &&
    !adapt?.autoToolChoice &&
    forcedChatChoice(body.tool_choice) &&
    refusesForcedWhileThinking(model) &&
    thinkingOffForForcedCall(body, adapt?.drop)
  // (one that cannot stop thinking, Kimi K3 and K2.7 Code: `auto`, the call asked for in words, as
  // a learned `autoToolChoice` does; a name test only for a request that forces a call)
  const forcedAuto =
    !forcedOff &&
    upstream === 'chat' &&
    body.tool_choice !== undefined &&
    !adapt?.autoToolChoice &&
    forcedChatChoice(body.tool_choice) &&
    refusesForcedAlwaysThinking(model)
  if (forcedAuto) unforcedToolChoice(body)
  if (adapt) adaptBody(body, adapt, client.request.responseFormat)
  const max =
    body.max_tokens ??
    body.max_completion_tokens ??
    body.max_output_tokens ??
    (body.generationConfig as {maxOutputTokens?: unknown} | undefined)?.maxOutputTokens
  const format = (body.response_format as {type?: unknown} | undefined)?.type
  // chat `reasoning_effort`, Responses `reasoning.effort`
  const effort = body.reasoning_effort ?? (body.reasoning as {effort?: unknown} | undefined)?.effort
  const thinking = geminiThinking(body) as {thinkingBudget?: unknown; thinkingLevel?: unknown} | undefined
  const budget = thinking?.thinkingBudget
  // (members set one by one, not spread from a literal each: every `...{}` makes an object and
  // copies it, five a request)
  const sent: SentRequest = {upstream, request, fields: Object.keys(body)}
  if (adapt) sent.adaptedWith = adapt
  if (typeof max === 'number') sent.maxTokens = max
  if (typeof format === 'string') sent.responseFormat = format
  if (typeof effort === 'string') sent.effort = effort
  if (typeof budget === 'number') sent.thinkingBudget = budget
  if (thinking !== undefined) {
    sent.thinkingConfig = true
    if (typeof thinking.thinkingLevel === 'string') sent.thinkingLevel = thinking.thinkingLevel
  }
  // (a refusal of the search is learned from a Messages or Responses upstream, and from Gemini 3,
  // whose search beside functions goes by the model's name, gemini.ts)
  if (
    (upstream === 'messages' ||
      upstream === 'responses' ||
      (upstream === 'gemini' && searchesBesideFunctions(model))) &&
    optionalSearch(request)
  )
    sent.optionalSearch = true
  // what the encoder changed that the log row should say (an image left out, images.ts)
  const notes = (body as Record<symbol, unknown>)[ENCODER_NOTES] as string[] | undefined
  if (notes) sent.notes = notes
  if (upstream === 'gemini') {
    if (body.systemInstruction !== undefined) sent.systemInstruction = true
    const layout = (body as Record<symbol, unknown>)[RESULT_MEDIA] as SentRequest['geminiResultMedia']
    if (layout) {
      sent.geminiResultMedia = layout
      // (what Vertex's "Requests ending with a model turn" is judged against: the body sent, whose
      // empty last user message may have gone, not the client's)
      if ((body.contents as Array<{role?: string}>).at(-1)?.role === 'model') sent.geminiEndsWithModel = true
    }
  }
  if (forcedOff) (sent.notes ??= []).push(FORCED_OFF_NOTE)
  else if (forcedAuto) (sent.notes ??= []).push(FORCED_AUTO_NOTE)
  if (capNote) sent.notes = [...(sent.notes ?? []), capNote]
  // (set after the literal: no spread more on every other request)
  if (upstream === 'messages') messagesSent(body, sent)
  else if (upstream === 'chat') {
    if ((takesCacheMarks(model) || ctx.qwenCacheMarks) && !adapt?.noCacheMarks) sent.cacheMarks = true
    if (forcedChatChoice(body.tool_choice)) {
      sent.forcedTool = true
      if (chatThinkingIsOff(body)) sent.thinkingOff = 'disabled'
    }
    // (a flag read: Z.AI's and Moonshot's preserved thinking goes in \`thinking\`, as their off switch)
    if (
      ctx.preservedThinking !== undefined &&
      ctx.preservedThinking !== 'dashscope' &&
      body.thinking !== undefined
    )
      sent.preservedThinking = true
  }
  return {body: upstreamBytes(body), path: codec.path(model, client.request.stream), sent}
}

/** The log row's word for a forced call sent with thinking off from the first try. */
const FORCED_OFF_NOTE =
  'thinking turned off for the forced tool_choice (the model refuses one while thinking)'

/** The log row's word for a forced call sent as `auto` from the first try. */
const FORCED_AUTO_NOTE =
  'tool_choice sent as auto, the call asked for at the end of the prompt (the model refuses a forced one and cannot stop thinking)'

/** What a translated request sent that an upstream may refuse (daemon/router/adaptations.ts). */
export interface SentRequest {
  /** The upstream's family (chat when not said). */
  upstream?: Family
  /** The request as encoded (its media counted only when a refusal may be about them). */
  request?: Request
  /** What was learned of the upstream when this request was encoded (none: undefined). */
  adaptedWith?: UpstreamAdaptation
  /** Its top-level fields. */
  fields: string[]
  /** A chat body passed through untranslated (no `request`): whether it asked for a stream. */
  stream?: boolean
  /** Its `max_tokens` (or `max_completion_tokens`, Responses `max_output_tokens`). */
  maxTokens?: number
  /** Chat `response_format.type`. */
  responseFormat?: string
  /** Chat `reasoning_effort`, Responses `reasoning.effort`, Messages `output_config.effort`. */
  effort?: string
  /** A Responses body passed through asked for a reasoning summary (`reasoning.summary`). */
  reasoningSummary?: true
  /** Gemini `generationConfig.thinkingConfig.thinkingBudget`. */
  thinkingBudget?: number
  /** Gemini `generationConfig.thinkingConfig.thinkingLevel` (Gemma 4's). */
  thinkingLevel?: string
  /** Gemini: a `generationConfig.thinkingConfig` was sent. */
  thinkingConfig?: true
  /** Gemini: a `systemInstruction` was sent. */
  systemInstruction?: true
  /** Messages `thinking.type`, when it thinks. */
  thinking?: ThinkingForm
  /** Messages `thinking.display` was sent. */
  thinkingDisplay?: boolean
  /**
   * Messages: thinking turned off by `thinking.type` (`disabled`, `between_tools`); chat, beside a
   * forced `tool_choice`: by the model's switch (`thinking.type` disabled, `enable_thinking` false,
   * `reasoning_effort` none), as `disabled`.
   */
  thinkingOff?: 'disabled' | 'between_tools'
  /** A forced `tool_choice` was sent (Messages `any`, `tool`; chat `required`, a function). */
  forcedTool?: boolean
  /** Messages: the conversation ended with an assistant message (a prefill). */
  prefill?: boolean
  /** Messages: the `anthropic-beta` header the request needs (`thinking.block_binding`'s). */
  beta?: string
  /**
   * Messages: the `anthropic-beta` header as it went upstream (the client's passed through, or
   * {@link beta}), set by the proxy on a refusal only, for adaptations.ts to judge it against.
   */
  betas?: string
  /**
   * Chat: the `thinking` sent was Z.AI's or Moonshot's ask to keep earlier turns' reasoning
   * (chat.ts `preservedThinkingFields`), not the off switch; its refusal is learned as
   * `noPreservedThinking`, the switch kept.
   */
  preservedThinking?: true
  /** Chat: Anthropic's cache marks went on content parts (`cache_control`, chat.ts `takesCacheMarks`). */
  cacheMarks?: boolean
  /** It offered the upstream's web search beside functions, not forced ({@link optionalSearch}). */
  optionalSearch?: boolean
  /**
   * A Messages body passed through: the types of the server tools it offered that it could go
   * without (Claude Code's `advisor_20260301`; ./server-tools.ts `optionalServerTools`).
   */
  optionalServerTools?: string[]
  /**
   * A Messages body passed through: the members its tools went with (a refusal of one by its place,
   * `tools.N.custom.F`, is learned only for one it sent).
   */
  toolMembers?: string[]
  /**
   * A Responses body passed through: each input item's type and the names of its members, in
   * order (a refusal of a member by its place, `input[2].status`, is learned only for one the item
   * went with, and for the item's type). Read only for a 400's words (sentOfPassedResponses).
   */
  inputItems?: Array<{type: string; members: string[]}>
  /**
   * A Messages body passed through: it held an image or document inside a tool result (a refusal
   * of media there is learned only then; a translated request's is read from `request`).
   */
  mediaInResults?: boolean
  /**
   * A translated Gemini body that sent images or documents in a user content with tool results
   * (inside them or beside them): where they went, in each `functionResponse`'s `parts` (`nested`)
   * or after every response of the turn (`flat`).
   */
  geminiResultMedia?: 'nested' | 'flat'
  /** Such a body's `contents` ended with a `model` content (set only with {@link geminiResultMedia}). */
  geminiEndsWithModel?: true
  /** What the encoder changed for this upstream that the log row says (an image left out). */
  notes?: string[]
  /** A chat body passed through held successive user or assistant messages. */
  successiveRoles?: boolean
  /** A chat body passed through held successive system messages. */
  successiveSystem?: boolean
  /** A chat body passed through held a system message after a user, assistant or tool message. */
  lateSystem?: boolean
  /**
   * How many tools a body passed through offered (a translated request's are its `request`'s),
   * counted on a refusal only.
   */
  tools?: number
}

/**
 * What a Messages body sent that a refusal may be about, onto `sent`: its `thinking.type`, whether
 * it asked for the thinking's text or bound its blocks, its `output_config.effort`, a forced
 * `tool_choice`, a last assistant message (a prefill).
 */
function messagesSent(body: Record<string, unknown>, sent: SentRequest): void {
  const thinking = body.thinking as {type?: unknown; display?: unknown; block_binding?: unknown} | undefined
  if (thinking) {
    if (thinking.type === 'adaptive' || thinking.type === 'enabled') sent.thinking = thinking.type
    else if (thinking.type === 'disabled' || thinking.type === 'between_tools')
      sent.thinkingOff = thinking.type
    if (thinking.display !== undefined) sent.thinkingDisplay = true
    if (thinking.block_binding !== undefined) sent.beta = BLOCK_BINDING_BETA
  }
  const effort = (body.output_config as {effort?: unknown} | undefined)?.effort
  if (typeof effort === 'string') sent.effort = effort
  const choice = (body.tool_choice as {type?: unknown} | undefined)?.type
  if (choice === 'any' || choice === 'tool') sent.forcedTool = true
  const messages = body.messages as Array<{role?: unknown}> | undefined
  if (messages?.at(-1)?.role === 'assistant') sent.prefill = true
}

const UPSTREAM_NAMES: Record<Family, string> = {
  chat: 'a chat completions',
  responses: 'a Responses',
  messages: 'a Messages',
  gemini: 'a Gemini',
}

/**
 * A Gemini request whose point is Google's URL context (Gemini CLI's `web_fetch` sends
 * `tools: [{urlContext: {}}]` alone, in a request of its own), to an upstream of another family,
 * which has no tool that reads a page: refused, since its model would answer from memory as
 * though it had read it, and Gemini CLI takes that answer. On a 400 Gemini CLI fetches the pages
 * itself and asks the model again without the tool (its `web-fetch-fallback`), which translates.
 * Beside function declarations the tool is only left out, as web search is.
 */
function refuseUrlContext(request: Request, upstream: Family): void {
  if (request.tools.length > 0 || request.webSearch) return
  const urlContext = request.builtinTools!.some((b) => {
    const raw = b.raw as {urlContext?: unknown; url_context?: unknown} | null
    return (
      b.family === 'gemini' && raw !== null && (raw.urlContext !== undefined || raw.url_context !== undefined)
    )
  })
  if (!urlContext) return
  throw new TranslationError(
    `Gemini's URL context tool cannot be translated to ${UPSTREAM_NAMES[upstream]} upstream: it has no tool that reads a web page, and its model would answer from memory as though it had read it. Gemini CLI fetches the page itself after this refusal; route this agent to a Gemini provider to have the model read it`,
  )
}

/**
 * The thinking config of a Gemini body passed through (its `thinkingLevel`, its numeric
 * `thinkingBudget`), which the proxy reads only after a 400, to learn what the model refused.
 */
export function geminiThinkingSent(body: Record<string, unknown>): GeminiThinkingSent {
  const thinking = geminiThinking(body) as {thinkingLevel?: unknown; thinkingBudget?: unknown} | undefined
  return {
    ...(typeof thinking?.thinkingLevel === 'string' && {level: thinking.thinkingLevel}),
    ...(typeof thinking?.thinkingBudget === 'number' && {budget: thinking.thinkingBudget}),
    ...(thinking !== undefined && {config: true as const}),
  }
}

/** A Gemini body's thinking config as sent: its level, its numeric budget, whether it had one at all. */
export interface GeminiThinkingSent {
  level?: string
  budget?: number
  config?: true
}

/** A Gemini body's `generationConfig.thinkingConfig`, if any. */
function geminiThinking(body: Record<string, unknown>): {thinkingBudget?: unknown} | undefined {
  const config = body.generationConfig as {thinkingConfig?: {thinkingBudget?: unknown}} | undefined
  return config?.thinkingConfig
}

/**
 * What an upstream was found to refuse (daemon/router/adaptations.ts): top-level fields it goes
 * without, `max_tokens` sent as `max_completion_tokens`, a cap on it, an effort it takes in place
 * of one it refused, how a request for JSON goes where the schema or JSON mode is refused, and
 * the conversation rules of conversation-rules.ts it was found to hold history to.
 */
export interface UpstreamAdaptation {
  drop?: readonly string[]
  /**
   * Responses: a server that refused Codex's namespaces, custom tools or `additional_tools` item:
   * its requests with those go through the Responses codecs, every tool a plain function
   * (daemon/router/plain-tools.ts); or answered one of them as a plain function call.
   */
  plainTools?: boolean
  /**
   * Chat: a server whose streamed tool-call deltas came without their `index` (learned from an
   * answer passed through): a chat client's streams from it get the index numbered on the way
   * (daemon/router/tool-index.ts).
   */
  indexToolCalls?: boolean
  /**
   * Chat: a server whose streamed tool calls open without their `id` (or with a number), or whose
   * deltas carry a `role` that is not `"assistant"` (learned from an answer passed through): a chat
   * client's streams from it get ids and OpenAI's role written on the way
   * (daemon/router/tool-index.ts).
   */
  idToolCalls?: boolean
  /**
   * Chat: a server whose streams end a choice without a `finish_reason`, or with a vendor's outside
   * OpenAI's (Z.ai's `sensitive`, vLLM's `abort`), which the AI SDK reads as unknown (learned from
   * an answer passed through): a chat client's streams from it get OpenAI's written on the way
   * (daemon/router/tool-index.ts).
   */
  openAiFinish?: boolean
  /**
   * Responses: a server that refused Codex's "Responses Lite" request as such (Azure OpenAI, a
   * model that is not Lite): its Lite requests go as Codex sends them for a model that is not Lite,
   * the `additional_tools` item's tools in `tools`, without the Lite header
   * (daemon/router/plain-tools.ts).
   */
  liteOff?: boolean
  /**
   * Responses: a server that refused a tool call's turn without its reasoning ("The
   * `reasoning_text` in the thinking mode must be passed back to the API.": DeepSeek's, in thinking
   * mode, whose reasoning items hold `reasoning_text` content Codex does not send back): its
   * requests go through the Responses codecs (with `plainTools`), each reasoning item with its text
   * as `reasoning_text`, an empty one where Codex kept none (responses-request.ts).
   */
  reasoningTextBack?: boolean
  /**
   * Responses: a server that refused an item named by its id in a request sent with `store: false`
   * (Azure OpenAI behind a domain of its own, which keeps no item then): Codex's requests passed
   * through to it go with `store: true`, as Codex sends them to a provider it knows is Azure
   * (daemon/router/plain-tools.ts `withStoreTrue`), and so do translated ones (the Responses
   * encoder's `storeTrue`, set by the proxy).
   */
  storeTrue?: boolean
  /**
   * Responses: a server that refused a namespace tool's empty `description` (Azure OpenAI's
   * `empty_string`, behind a domain of its own): Codex's `functions` namespace goes with Codex's
   * words for every other one (daemon/router/plain-tools.ts `withNamespaceDescriptions`).
   */
  namespaceDescriptions?: boolean
  /**
   * Messages: a relay in front of Claude that refused Claude Code's 1-hour cache (`cache_control`'s
   * `ttl`, `scope`): its requests passed through go without them (daemon/router/cache-ttl.ts).
   */
  cacheTtlOff?: boolean
  /**
   * Messages: a relay in front of Claude that refused Claude Code's tool search (`defer_loading`
   * tools, `tool_reference` blocks): its requests passed through go with the deferred tools loaded
   * as a translated request's are, without the tool-search betas (daemon/router/tool-search.ts).
   */
  deferralOff?: boolean
  /**
   * Responses: a server that pairs tool calls and outputs by position, refusing any item between
   * them (DeepSeek's "No tool output found for tool call call_…", a developer message of a Codex
   * hook there): each batch of calls goes followed directly by its outputs, what stood between
   * after them (adjacent-outputs.ts), in a translated body and in Codex's passed through.
   */
  adjacentOutputs?: boolean
  /**
   * Messages and Responses: a server that takes an image in a user turn but refused one inside a
   * tool result (Ollama's and LM Studio's `/v1/messages`, a Responses server that is not OpenAI's):
   * images and documents inside results go right after them, the results keeping their text or a
   * placeholder line (media-out-of-results.ts), in a Messages or Responses body passed through.
   */
  mediaOutOfResults?: boolean
  /**
   * Messages: the thinking form the model takes, where it refused the other (`"thinking.type.
   * enabled" is not supported for this model`, `adaptive thinking is not supported on this model`).
   */
  thinking?: ThinkingForm
  maxCompletionTokens?: boolean
  /** The most output tokens the upstream takes: a larger `max_tokens` is capped to it. */
  maxTokens?: number
  /** `reasoning_effort` values refused, each with the nearest one the upstream named. */
  effort?: Readonly<Record<string, string>>
  /**
   * Chat: a model that always thinks refused thinking off (GLM-5.3's 1210: "cannot be disabled;
   * please use low, high, or max"): the switch off the gateway sends for a request that asked for
   * no thinking goes as `effort.none` instead. Its own flag: an `effort.none` learned from another
   * refusal (a client's `reasoning_effort: none`) says nothing of the switch.
   */
  alwaysThinks?: boolean
  /**
   * A request for JSON: `json_object`, the schema refused (DeepSeek takes JSON mode only), so
   * JSON mode with the schema in the system prompt; `instruction`, JSON mode refused too, so
   * only the system prompt says it.
   */
  json?: 'json_object' | 'instruction'
  /** JSON mode kept, with the instruction in the system prompt (DeepSeek's prompt must say "json"). */
  jsonInstruction?: boolean
  /**
   * A Gemini thinking budget the model refused: `none`, any budget (Gemma 4: "Thinking budget is
   * not supported for this model.") is left out, -1 and 0 included; `zero`, a budget of 0 (Gemini 2.5 Pro cannot turn
   * thinking off) is left out, so the model decides; a budget outside `min`-`max` is brought into
   * it; where the model named no range, a budget from `over` up (or up to `under`), refused
   * before, is left out.
   */
  thinkingBudget?: {
    none?: boolean
    zero?: boolean
    min?: number
    max?: number
    over?: number
    under?: number
  }
  /**
   * A Gemini `thinkingLevel` the model refused (a Gemini 2.5 model: "Thinking level is not
   * supported for this model."; Gemini CLI sends one to gemini-3 names and those it does not
   * know; the translated encoder, to Gemma 4): left out, so the model decides.
   */
  noThinkingLevel?: boolean
  /**
   * A chat host, or a relay in front of it, that refused Z.AI's or Moonshot's preserved thinking
   * (`thinking: {type: "enabled", clear_thinking: false}`, `keep: "all"`): it is no longer asked,
   * the earlier turns' reasoning dropped as before; the model's off switch in the same field still
   * goes for a request that asked for no thinking.
   */
  noPreservedThinking?: boolean
  /**
   * Gemini `thinkingLevel`s the model refused by name ("Thinking level MINIMAL is not supported for
   * this model. Please retry with other thinking level."; Vertex: "thinking_level MEDIUM is not
   * supported by this model"), each with the next level up, which goes in its place: a request
   * with thinking off still thinks as little as the model allows, not at its default (high).
   */
  thinkingLevels?: Readonly<Record<string, string>>
  /**
   * A Gemini model that does not think and refuses any `thinkingConfig` ("Thinking is not enabled
   * for models/gemma-3-27b-it": Gemma 3, Gemini 2.0 by another name): the whole config left out.
   */
  noThinking?: boolean
  /**
   * A Gemini model that refuses a `systemInstruction` ("Developer instruction is not enabled for
   * models/gemma-3-27b-it": Gemma 3 on the Gemini API): the system text goes as the first part of
   * the first user turn (gemini.ts `systemIntoFirstTurn`).
   */
  noSystemInstruction?: boolean
  /**
   * Gemini: where the images and documents of a function's result go, the other layout refused
   * (gemini.ts `resultsWithMedia`): `flat`, after every `functionResponse` of the turn (Gemini
   * 2.5 on Vertex: "`function_response.parts` is not supported for this model"); `nested`, in
   * each `functionResponse`'s `parts` (a Gemini 3 whose name does not say so: "Please ensure that
   * the number of function response parts is equal to the number of function call parts of the
   * function call turn.").
   */
  geminiResultMedia?: 'nested' | 'flat'
  /** How tool-call ids must look (Mistral: 9 letters and digits; OpenAI chat: at most 40). */
  toolIds?: ToolIdRule
  /** An assistant message between tool results and a user message right after them (Mistral). */
  bridgeToolTurns?: boolean
  /**
   * The reasoning of the history's assistant messages: `reasoning`, sent in that field instead of
   * `reasoning_content` (Cerebras); `reasoning_content`, the other way (DeepSeek, when the history
   * came from a server that writes `reasoning`), and an empty one on an assistant message that
   * has none (the thinking mode of DeepSeek and Kimi); `drop`, left out (refused in both, or by
   * Mistral's 422).
   */
  reasoningHistory?: 'reasoning' | 'reasoning_content' | 'drop'
  /**
   * Gemini 3 refused a tool call's turn without its thought signature (behind a chat server, or on
   * Gemini's own API to a body passed through): such turns go with Google's documented dummy, in
   * the field the server reads (conversation-rules.ts `dummySignatures`; a Gemini body passed
   * through, `part`, in its bytes: ./part-signatures.ts).
   */
  thoughtSignatures?: ThoughtSignatureField
  /**
   * Images or files the model takes none of (DeepSeek, GLM's text models, a vLLM or llama.cpp
   * server without a vision projector): each goes as a line that says what was there.
   */
  media?: RefusedMedia
  /** Messages: what refusals taught of the model beyond its thinking form. */
  claude?: ClaudeLearned
  /**
   * Messages: `anthropic-beta` values the upstream refused by name (Anthropic's "Unexpected
   * value(s) `A`, `B` for the `anthropic-beta` header", as Vertex, Azure Foundry and relays pass
   * it on): the header goes without them (daemon/router/headers.ts), the body as it was.
   */
  refusedBetas?: readonly string[]
  /**
   * Messages: a refusal of the `anthropic-beta` header that names no value (Bedrock's "invalid beta
   * flag"): the requests go without the header.
   */
  noBetas?: boolean
  /** Chat: Anthropic's cache marks on content parts refused (a server named for Claude that takes none). */
  noCacheMarks?: boolean
  /**
   * Chat: the model's chat template opens `<think>` in the prompt (an answer closed a `</think>` it
   * never opened, Qwen3's *-Thinking-2507, DeepSeek-R1-0528 without a reasoning parser): its answers'
   * content is read as reasoning up to `</think>` (chat-stream.ts). Learned from an answer, not a
   * refusal; nothing in the request changes.
   */
  thinkOpen?: boolean
  /**
   * A web search offered beside function tools (Codex's live search) refused: an Anthropic-compatible
   * server without the server tool. The requests go without it (a search request is still sent).
   */
  noWebSearch?: boolean
  /**
   * Messages: server tool types refused by their tag (a host without Claude Code's advisor: "Input
   * tag 'advisor_20260301' found using 'type' does not match any of the expected tags"): a body
   * passed through goes without them and their records in its history (./server-tools.ts).
   */
  refusedServerTools?: readonly string[]
  /**
   * Messages: members of a tool a body passed through went with that a strict host refused by their
   * place ("tools.0.custom.eager_input_streaming: Extra inputs are not permitted", Claude Code's
   * per-tool streaming to Bedrock, a Copilot relay): cut out of every tool in its bytes from then on
   * (daemon/router/top-fields.ts `withoutItemMembers`).
   */
  toolMembers?: readonly string[]
  /**
   * Responses: members of an input item a body passed through went with that the server refused by
   * their place ("Unknown parameter: 'input[2].status'.", ChatGPT's Codex backend), by the type of
   * the item refused (`{function_call: ['status']}`): cut out of every input item of that type in its
   * bytes from then on (daemon/router/top-fields.ts `withoutItemMembers`), never out of another's
   * (a `web_search_call` needs its `status`).
   */
  inputMembers?: Readonly<Record<string, readonly string[]>>
  /**
   * Tool-schema keywords the upstream refused (Gemini's OpenAPI subset behind a chat server or a
   * relay: "Unknown name \"$schema\" at 'tools[0].function_declarations[0].parameters'"): they go
   * from every tool's schema (tool-schemas.ts).
   */
  schemaKeys?: readonly string[]
  /**
   * A list of types in a tool's schema refused (Gemini's `Schema` proto behind a chat server or a
   * relay: "Unknown name \"type\" at '…': Proto field is not repeating, cannot start list."): each
   * goes as one type, `nullable` or `anyOf` (tool-schemas.ts `oneTypeSchema`).
   */
  typeLists?: boolean
  /**
   * Gemini: the `id` of function calls and responses refused (Vertex AI: "Unknown name \"id\" at
   * 'contents[1].parts[0].function_call'"): both go without it, Gemini pairing them by order and
   * name (conversation-rules.ts `withoutCallIds`).
   */
  noCallIds?: boolean
  /**
   * Chat: a forced `tool_choice` refused (Z.AI's "Tool choice must be auto", OpenRouter's 404 "No
   * endpoints found that support the provided 'tool_choice' value."): sent as `auto`, the call
   * asked for in words at the end of the conversation (the rule Claude 5.5 has on Messages).
   */
  autoToolChoice?: boolean
  /**
   * A forced `tool_choice` refused in thinking mode, by a model whose thinking can be turned off
   * (DashScope's Qwen3: "The tool_choice parameter does not support being set to required or
   * object in thinking mode"; DeepSeek's and Kimi's Anthropic endpoints): a request that forces a
   * call goes with thinking off and the forced choice kept (thinking-off.ts
   * `thinkingOffForForcedCall`), its answer without thinking; one that forces nothing thinks as
   * before. Refused with thinking off too, `autoToolChoice` (or, on Messages, `noForcedTools`)
   * follows and takes its place.
   */
  forcedThinkingOff?: boolean
  /**
   * Chat: `reasoning_effort` refused beside function tools ("Function tools with reasoning_effort
   * are not supported for gpt-5.6 in /v1/chat/completions. To use function tools, use
   * /v1/responses or set reasoning_effort to 'none'."): a request with tools goes without the
   * field (`drop`, gpt-5.4 and 5.5) or with `"none"` (gpt-5.6 refuses tools even without it); one
   * without tools keeps its effort.
   */
  effortWithTools?: 'drop' | 'none'
  /**
   * A non-stream request refused while the model thinks (DashScope's Qwen3: "parameter.
   * enable_thinking must be set to false for non-streaming calls"): it goes with `enable_thinking:
   * false`, so its answer has no reasoning; a stream goes as it was.
   */
  noThinkingUnstreamed?: boolean
  /**
   * Chat: successive user or assistant messages refused (DeepSeek's "does not support successive
   * user or assistant messages", a strict chat template's "Conversation roles must alternate
   * user/assistant/user/assistant/..."), or several system messages (MiniMax's "invalid chat
   * setting (2013)", Qwen3.5's template's "System message must be at the beginning."): a chat
   * client's messages passed through go with each run as one message, as a translated request's
   * always do (chat.ts `alternatingMessages`).
   */
  alternateRoles?: boolean
  /**
   * Chat: a system message after the conversation began refused (Qwen3.5's template's "System
   * message must be at the beginning.", MiniMax's "invalid chat setting (2013)" for a second one),
   * a lone one between turns as well as a run: a chat client's messages passed through go with
   * every system message folded into the first, at the front, as a translated request's always do
   * (chat.ts `systemFirstMessages`).
   */
  systemFirst?: boolean
  /** The fewest output tokens the upstream takes ("Expected a value >= 16"): a smaller maximum is raised to it. */
  minOutputTokens?: number
  /**
   * Chat: the fewest output tokens a request for JSON (`response_format` json_object or
   * json_schema) gets. OpenAI's "Could not finish the message because max_tokens or model output
   * limit was reached" for such a request below 16 that asked no reasoning is its JSON cut short or
   * the model's floor (a GPT-5.x reasons unasked): the gateway cannot tell, and the request goes
   * again with 16, as the probe does under {@link minOutputTokens}, and so each later one for JSON.
   * A JSON answer ends where its JSON does, so the room changes no answer that fitted; a plain
   * one (a classifier's `max_tokens: 1`) would run on, and goes as it came (review77 #6).
   */
  minJsonOutputTokens?: number
  /**
   * Chat: a history tool call's `arguments` that are not JSON refused (DashScope's "The
   * \"function.arguments\" parameter of the code model must be in JSON format."): each such call
   * goes with them repaired (conversation-rules.ts `repairToolArguments`). Only then is a request's
   * history parsed for it.
   */
  repairArgs?: boolean
  /**
   * Messages: `output_config.effort` refused beside `thinking.type: disabled` (DeepSeek's Anthropic
   * endpoint: "thinking options type cannot be disabled when reasoning_effort is set", to Claude
   * Code's sub-agents): a body that turns thinking off goes without the effort; one that thinks
   * keeps it.
   */
  effortOnlyWithThinking?: boolean
  /**
   * Chat: a tool schema whose top level is a union refused (OpenAI's "schema must have type
   * 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level"): a chat client's
   * tools passed through go as one object each (tool-schemas.ts `objectTool`), as a translated
   * request's always do.
   */
  objectSchemas?: boolean
  /**
   * The most tools the model takes, as its refusal of more stated it (OpenAI's and Kimi's 128,
   * Gemini's 512 function declarations): a request with more goes with the client's first ones
   * and a line naming the rest at the end of its system prompt (./tool-cap.ts).
   */
  toolCap?: number
}

/** A chat `tool_choice` that forces a call: `required`, or a named function. */
const forcedChatChoice = (choice: unknown): boolean =>
  choice === 'required' || (typeof choice === 'object' && choice !== null)

/**
 * A chat body's forced `tool_choice` as `auto`, and the call asked for in the words a Claude 5.5
 * request has (`forcedCallText`): at the end of the last user message, or as a user message of its
 * own after tool results, so the system prompt and the turns before stay as they were (the prompt
 * cache).
 */
function unforcedToolChoice(body: Record<string, unknown>): void {
  const choice = body.tool_choice
  if (!forcedChatChoice(choice)) return
  const name = (choice as {function?: {name?: unknown}}).function?.name
  body.tool_choice = 'auto'
  const text = forcedCallText(typeof name === 'string' ? {type: 'tool', name} : {type: 'required'}, false)
  const messages = Array.isArray(body.messages)
    ? (body.messages as Array<Record<string, unknown>>)
    : undefined
  if (!messages) return
  const last = messages.at(-1)
  if (last?.role !== 'user') messages.push({role: 'user', content: text})
  else if (typeof last.content === 'string')
    messages[messages.length - 1] = {...last, content: last.content ? `${last.content}\n\n${text}` : text}
  else if (Array.isArray(last.content))
    messages[messages.length - 1] = {...last, content: [...last.content, {type: 'text', text}]}
  else messages[messages.length - 1] = {...last, content: text}
}

/**
 * A chat body passed through untranslated (a chat client on a chat upstream: qwen-code, opencode)
 * with what was learned of its upstream model applied: the tool-schema keywords and the rules
 * {@link adaptBody} holds a translated chat body to (a field dropped or capped, an effort replaced
 * or set to `none` beside tools, `enable_thinking: false` out of a stream, tool-call ids reshaped,
 * a forced choice made `auto`, JSON asked for in JSON mode or in the system prompt where the schema
 * or JSON mode was refused, a text-only model's images and files as lines...). Its bytes for the
 * upstream: the same for the same body, turn after turn. Called only for an upstream model learned
 * so (adaptations.ts `rewritesChatBody`).
 */
export function adaptPassedChat(
  body: Record<string, unknown>,
  adapt: UpstreamAdaptation,
  notes?: string[],
): Buffer {
  let out = (adapt.schemaKeys && chatBodyWithoutSchemaKeys(body, adapt.schemaKeys)) || {...body}
  if (adapt.typeLists) out = chatBodyWithOneTypes(out) ?? out
  if (adapt.toolCap !== undefined) {
    const capped = chatBodyWithinToolCap(out, adapt.toolCap)
    if (capped) {
      out = capped.body
      notes?.push(capped.note)
    }
  }
  if (adapt.objectSchemas && Array.isArray(out.tools)) out.tools = out.tools.map(objectChatTool)
  if (adapt.systemFirst && Array.isArray(out.messages)) out.messages = systemFirstMessages(out.messages)
  if (adapt.alternateRoles && Array.isArray(out.messages)) out.messages = alternatingMessages(out.messages)
  if (adapt.media && Array.isArray(out.messages))
    out.messages = withoutRefusedChatMedia(
      out.messages,
      adapt.media,
      typeof out.model === 'string' ? out.model : '',
    )
  // (JSON asked for another way, learned: its instruction is read from the client's own field)
  adaptBody(
    out,
    adapt,
    adapt.json || adapt.jsonInstruction ? decodeResponseFormat(out.response_format) : undefined,
  )
  // the client's own template arguments stay: only the gateway's (its switch of thinking off to a
  // local server) are learned away (adaptations.ts `chatOnly`)
  if (body.chat_template_kwargs !== undefined && out.chat_template_kwargs === undefined)
    out.chat_template_kwargs = body.chat_template_kwargs
  return upstreamBytes(out)
}

/**
 * A chat conversation's images or files a text-only model refused, each as a text part with the
 * line a translated request has in its place (`[image/png image not attached: deepseek-chat takes
 * no images]`); every other message as it came (the same array when none changes).
 */
function withoutRefusedChatMedia(messages: unknown[], refused: RefusedMedia, model: string): unknown[] {
  let out: unknown[] | undefined
  messages.forEach((m, i) => {
    const content = (m as {content?: unknown} | null)?.content
    if (!Array.isArray(content)) return
    let parts: unknown[] | undefined
    content.forEach((part, j) => {
      const media = chatMediaPart(part)
      const text = media && refusedMediaText(media, refused, model)
      if (text !== undefined) (parts ??= content.slice())[j] = {type: 'text', text}
    })
    if (parts) (out ??= messages.slice())[i] = {...(m as Record<string, unknown>), content: parts}
  })
  return out ?? messages
}

/** Whether a chat body's messages carry an image or file part. */
const carriesChatMedia = (body: Record<string, unknown>): boolean =>
  Array.isArray(body.messages) &&
  body.messages.some((m: unknown) => {
    const content = (m as {content?: unknown} | null)?.content
    return Array.isArray(content) && content.some((p) => chatMediaPart(p) !== undefined)
  })

/** A chat tool whose parameters' top level is a union, as one object (`objectTool`); any other as it came. */
function objectChatTool(tool: unknown): unknown {
  const fn = (tool as {function?: unknown} | null)?.function as Record<string, unknown> | undefined
  const parameters = fn?.parameters as FunctionTool['parameters'] | undefined
  if (!fn || typeof fn.name !== 'string' || !parameters || typeof parameters !== 'object') return tool
  const given: FunctionTool = {
    name: fn.name,
    parameters,
    ...(typeof fn.description === 'string' ? {description: fn.description} : {}),
  }
  const merged = objectTool(given)
  if (merged === given) return tool
  return {
    ...(tool as Record<string, unknown>),
    function: {
      ...fn,
      parameters: merged.parameters,
      ...(merged.description !== undefined ? {description: merged.description} : {}),
    },
  }
}

/**
 * What a chat body passed through sent, for adaptations.ts to judge a refusal of it against (as a
 * translated request's {@link SentRequest}, without the decoded request).
 */
export function sentOfPassedChat(
  body: Record<string, unknown>,
  adaptedWith?: UpstreamAdaptation,
): SentRequest {
  const max = body.max_tokens ?? body.max_completion_tokens
  const format = (body.response_format as {type?: unknown} | undefined)?.type
  const effort = body.reasoning_effort
  const sent: SentRequest = {upstream: 'chat', fields: Object.keys(body), stream: body.stream === true}
  if (adaptedWith) sent.adaptedWith = adaptedWith
  // (its media, for a text-only model's refusal of them: the request decoded only then)
  if (carriesChatMedia(body))
    try {
      sent.request = decodeClientRequest('chat', body, {}).request
    } catch {
      // (a body the translation cannot read: no media rule for it)
    }
  if (typeof max === 'number') sent.maxTokens = max
  if (typeof format === 'string') sent.responseFormat = format
  if (typeof effort === 'string') sent.effort = effort
  if (forcedChatChoice(body.tool_choice)) {
    sent.forcedTool = true
    if (chatThinkingIsOff(body)) sent.thinkingOff = 'disabled'
  }
  if (Array.isArray(body.messages)) {
    const runs = roleRuns(body.messages)
    if (runs.turns) sent.successiveRoles = true
    if (runs.system) sent.successiveSystem = true
    if (runs.late) sent.lateSystem = true
  }
  if (Array.isArray(body.tools)) sent.tools = body.tools.length
  return sent
}

/**
 * What a Messages body passed through sent (Claude Code on an Anthropic-compatible server), for
 * adaptations.ts to judge a refusal of it against, as {@link sentOfPassedChat} does for chat.
 */
export function sentOfPassedMessages(
  body: Record<string, unknown>,
  adaptedWith?: UpstreamAdaptation,
): SentRequest {
  const sent: SentRequest = {upstream: 'messages', fields: Object.keys(body), stream: body.stream === true}
  if (adaptedWith) sent.adaptedWith = adaptedWith
  if (typeof body.max_tokens === 'number') sent.maxTokens = body.max_tokens
  if (Array.isArray(body.tools)) sent.tools = body.tools.length
  if (messagesHoldMediaInResults(body)) sent.mediaInResults = true
  const serverTools = optionalServerTools(body)
  if (serverTools) sent.optionalServerTools = serverTools
  const members = toolMemberNames(body.tools)
  if (members.length > 0) sent.toolMembers = members
  messagesSent(body, sent)
  return sent
}

/** The names of the members of a Messages body's tools, each once. */
function toolMemberNames(tools: unknown): string[] {
  if (!Array.isArray(tools)) return []
  const names = new Set<string>()
  for (const tool of tools)
    if (tool && typeof tool === 'object' && !Array.isArray(tool))
      for (const name of Object.keys(tool)) names.add(name)
  return [...names]
}

/**
 * What a Responses body passed through sent (Codex on a Responses server), for adaptations.ts to
 * judge a refusal of it against, as {@link sentOfPassedChat} does for chat: its top-level fields
 * (a strict server's refusal of one it does not know, Codex 0.155's `access_programs`, is learned
 * away), its reasoning's effort (a value the model refuses is learned) and whether it asked for a
 * stream (said only of a body passed through).
 */
export function sentOfPassedResponses(
  body: Record<string, unknown>,
  adaptedWith?: UpstreamAdaptation,
): SentRequest {
  const sent: SentRequest = {upstream: 'responses', fields: Object.keys(body), stream: body.stream === true}
  if (adaptedWith) sent.adaptedWith = adaptedWith
  // (its effort as it went: a value the model refuses is learned, adaptations.ts)
  const reasoning = body.reasoning as {effort?: unknown; summary?: unknown} | null | undefined
  if (typeof reasoning?.effort === 'string') sent.effort = reasoning.effort
  // (and its summary: a refusal of one it did not ask for teaches nothing)
  if (reasoning?.summary !== undefined && reasoning.summary !== null) sent.reasoningSummary = true
  // (its input items' types and members: a refusal of one by its place is judged against them)
  if (Array.isArray(body.input))
    sent.inputItems = body.input.map((item: unknown) =>
      item && typeof item === 'object' && !Array.isArray(item)
        ? {type: inputItemType(item), members: Object.keys(item)}
        : {type: '', members: []},
    )
  return sent
}

/**
 * A Messages body passed through untranslated (Claude Code on an Anthropic-compatible server:
 * Ollama, a relay, Anthropic's API behind a model the policy maps to) with what was learned of
 * its upstream model applied: the thinking form it takes (`enabled` with a budget, or `adaptive`
 * with `output_config.effort`), the fields it goes without (thinking for a model without it, a
 * sampling setting, `context_management`...), the server tools it refused (Claude Code's advisor,
 * ./server-tools.ts), its output cap or floor. Everything else goes as the
 * client sent it (its cache marks, its blocks, in its order). Called only for an upstream model
 * learned so (adaptations.ts `rewritesMessagesBody`).
 */
export function adaptPassedMessages(
  body: Record<string, unknown>,
  adapt: UpstreamAdaptation,
  notes?: string[],
): Buffer {
  let out = {...body}
  if (adapt.refusedServerTools) withoutServerTools(out, adapt.refusedServerTools)
  if (adapt.toolCap !== undefined) {
    const capped = messagesBodyWithinToolCap(out, adapt.toolCap)
    if (capped) {
      out = capped.body
      notes?.push(capped.note)
    }
  }
  if (adapt.thinking) passedThinkingForm(out, adapt.thinking)
  // a model that takes thinking only on: as little as it takes, and no forced call beside it
  const least = adapt.claude?.thinkingOff === 'least_budget'
  if (least) leastThinking(out)
  if (adapt.claude?.noForcedTools || least) unforcedMessagesChoice(out)
  // an assistant tool-call turn without thinking: DeepSeek's endpoint takes it with an empty block,
  // Kimi's with thinking off (./thinking-history.ts)
  if (adapt.claude?.emptyThinking && (out.thinking as {type?: unknown} | undefined)?.type !== 'disabled') {
    const messages = Array.isArray(out.messages) ? withEmptyThinking(out.messages as unknown[]) : undefined
    if (messages) out.messages = messages
  } else if (adapt.claude?.thinkingEveryToolTurn && !least) thinkingOffForToolTurns(out)
  adaptBody(out, adapt, undefined)
  return upstreamBytes(out)
}

/**
 * A Gemini body passed through untranslated (Gemini CLI on Gemini) with what was learned of its
 * upstream model applied: its function declarations held to the most the model takes (`toolCap`,
 * ./tool-cap.ts), and its thinking config in the form the model takes (a model of another
 * generation than the one Gemini CLI named: `noThinkingLevel`, `thinkingBudget`), its system
 * instruction in the first user turn (`noSystemInstruction`, Gemma 3), everything else as the
 * client sent it (a model turn's unsigned first call is signed in the bytes, before: the proxy's
 * `withPartSignatures`, ./part-signatures.ts); in a countTokens body that wraps the request it counts (`generateContentRequest`),
 * that request, so the count is of what generateContent would send and Gemma 3 is not sent the
 * system instruction it refuses there either. Its bytes for the upstream, and what the log row says
 * was left out (pushed to `notes`). Called only for an upstream model learned so.
 */
export function adaptPassedGemini(
  body: Record<string, unknown>,
  adapt: UpstreamAdaptation,
  notes?: string[],
): Buffer {
  const wrapped = body.generateContentRequest
  if (wrapped && typeof wrapped === 'object' && !Array.isArray(wrapped))
    return upstreamBytes({
      ...body,
      generateContentRequest: adaptedGemini(wrapped as Record<string, unknown>, adapt, notes),
    })
  return upstreamBytes(adaptedGemini(body, adapt, notes))
}

/** A passed-through Gemini request with what was learned applied ({@link adaptPassedGemini}). */
function adaptedGemini(
  body: Record<string, unknown>,
  adapt: UpstreamAdaptation,
  notes?: string[],
): Record<string, unknown> {
  const capped = adapt.toolCap !== undefined ? geminiBodyWithinToolCap(body, adapt.toolCap) : undefined
  if (capped) notes?.push(capped.note)
  const out = capped?.body ?? body
  if (adapt.noThinking) leaveOutThinking(out)
  if (adapt.noThinkingLevel) leaveOutThinkingLevel(out)
  else if (adapt.thinkingLevels) raiseThinkingLevel(out, adapt.thinkingLevels)
  if (adapt.thinkingBudget) adaptGeminiBudget(out, adapt.thinkingBudget)
  if (adapt.noSystemInstruction) systemIntoFirstTurn(out)
  return out
}

/** A Gemini body without its `thinkingConfig` (a model that does not think). */
function leaveOutThinking(body: Record<string, unknown>): void {
  if (!geminiThinking(body)) return
  const {thinkingConfig: _, ...rest} = body.generationConfig as Record<string, unknown>
  if (Object.keys(rest).length > 0) body.generationConfig = rest
  else delete body.generationConfig
}

/**
 * A Gemini body's `thinkingConfig` without its `thinkingLevel` (`includeThoughts` kept; none left
 * when nothing else was in it: Gemma 4's MINIMAL for a request with thinking off goes as no config,
 * not as `thinkingConfig: {}`).
 */
function leaveOutThinkingLevel(body: Record<string, unknown>): void {
  const thinking = geminiThinking(body) as Record<string, unknown> | undefined
  if (!thinking || thinking.thinkingLevel === undefined) return
  const {thinkingLevel: _, ...rest} = thinking
  if (Object.keys(rest).length > 0)
    body.generationConfig = {...(body.generationConfig as Record<string, unknown>), thinkingConfig: rest}
  else leaveOutThinking(body)
}

/**
 * A Gemini body's `thinkingLevel` refused before as the level learned in its place (`levels`, each
 * refused level's next up, followed while that one was refused too), in the case the body wrote it
 * (`low` for a client's `minimal`); the body as it was otherwise.
 */
function raiseThinkingLevel(body: Record<string, unknown>, levels: Readonly<Record<string, string>>): void {
  const thinking = geminiThinking(body) as Record<string, unknown> | undefined
  if (typeof thinking?.thinkingLevel !== 'string') return
  const sent = thinking.thinkingLevel
  let level = sent.toUpperCase()
  for (let i = 0; i < 4 && levels[level] !== undefined; i++) level = levels[level]
  if (level === sent.toUpperCase()) return
  body.generationConfig = {
    ...(body.generationConfig as Record<string, unknown>),
    thinkingConfig: {...thinking, thinkingLevel: sent === sent.toLowerCase() ? level.toLowerCase() : level},
  }
}

/**
 * A Messages body's forced `tool_choice` (`any`, `tool`) as `auto`, and the call asked for in the
 * words a translated request has (`forcedCallText`) at the end of the last user message (a user
 * message of its own after an assistant's), as the Messages encoder does for a model that refuses
 * forcing (Claude 5.5, a thinking-mode server: DeepSeek's and Kimi's Anthropic endpoints). The
 * system prompt and the turns before stay as they were (the prompt cache).
 */
function unforcedMessagesChoice(body: Record<string, unknown>): void {
  const choice = body.tool_choice as {type?: unknown; name?: unknown; disable_parallel_tool_use?: unknown}
  if (choice?.type !== 'any' && choice?.type !== 'tool') return
  const parallel = choice.disable_parallel_tool_use
  body.tool_choice = {type: 'auto', ...(parallel !== undefined ? {disable_parallel_tool_use: parallel} : {})}
  const text = forcedCallText(
    choice.type === 'tool' && typeof choice.name === 'string'
      ? {type: 'tool', name: choice.name}
      : {type: 'required'},
    false,
  )
  if (!Array.isArray(body.messages)) return
  const messages = (body.messages = body.messages.slice() as Array<Record<string, unknown>>)
  const last = messages.at(-1)
  if (last?.role !== 'user') messages.push({role: 'user', content: [{type: 'text', text}]})
  else if (typeof last.content === 'string')
    messages[messages.length - 1] = {...last, content: last.content ? `${last.content}\n\n${text}` : text}
  else if (Array.isArray(last.content))
    messages[messages.length - 1] = {...last, content: [...last.content, {type: 'text', text}]}
  else messages[messages.length - 1] = {...last, content: text}
}

/**
 * A passed-through body's thinking that is not on (`disabled`, `between_tools`, none) as `enabled`
 * with Anthropic's least budget, a `max_tokens` under twice it raised by it, and no sampling
 * setting beside it, as
 * ../daemon/router/top-fields.ts `withLeastThinking` does in the bytes (a model that takes thinking
 * only on: Kimi's "invalid thinking: only type=enabled is allowed for this model").
 */
function leastThinking(body: Record<string, unknown>): void {
  const type = (body.thinking as {type?: unknown} | null | undefined)?.type
  if (type === 'enabled' || type === 'adaptive') return
  body.thinking = {type: 'enabled', budget_tokens: MIN_BUDGET}
  if (typeof body.max_tokens === 'number') body.max_tokens = maxTokensBeside(body.max_tokens)
  for (const field of SAMPLING_FIELDS) delete body[field]
}

/** Anthropic's efforts, as the effort whose budget a `thinking.type: enabled` gets for them. */
const EFFORT_AS_BUDGET: Readonly<Record<string, Effort>> = {
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
  max: 'high',
}

/**
 * A passed-through body's thinking in the `form` its model takes: `enabled` with a budget becomes
 * `adaptive` with the budget's effort (Claude Code's budget for a model the policy maps to Opus 4.7
 * on); `adaptive` with an effort becomes `enabled` with that effort's budget, kept under
 * `max_tokens` (left out under Anthropic's 1 024). `display` stays as the client asked.
 */
function passedThinkingForm(body: Record<string, unknown>, form: ThinkingForm): void {
  const thinking = body.thinking as {type?: unknown; budget_tokens?: unknown; display?: unknown} | undefined
  if (!thinking || typeof thinking !== 'object' || thinking.type === form) return
  const display = thinking.display !== undefined ? {display: thinking.display} : {}
  const config = body.output_config as Record<string, unknown> | undefined
  if (form === 'adaptive' && thinking.type === 'enabled') {
    body.thinking = {type: 'adaptive', ...display}
    const budget = thinking.budget_tokens
    if (typeof budget === 'number' && (config === undefined || typeof config === 'object'))
      body.output_config = {...config, effort: budgetEffort(budget)}
  } else if (form === 'enabled' && thinking.type === 'adaptive') {
    const effort = typeof config?.effort === 'string' ? config.effort : 'high'
    const max = typeof body.max_tokens === 'number' ? body.max_tokens : Infinity
    const budget = Math.min(effortBudget(EFFORT_AS_BUDGET[effort] ?? 'high'), max - 1)
    if (budget >= MIN_BUDGET) body.thinking = {type: 'enabled', budget_tokens: budget, ...display}
    else delete body.thinking
    if (config && typeof config === 'object' && 'effort' in config) {
      const {effort: _, ...rest} = config
      if (Object.keys(rest).length > 0) body.output_config = rest
      else delete body.output_config
    }
  }
}

/** The search a request offers the model, when it offers one beside functions and does not force it. */
export const optionalSearch = (r: Request): boolean =>
  r.webSearch !== undefined && r.tools.length > 0 && r.toolChoice?.type !== 'web_search'

/** A body's output maximum raised to `floor` where it is below it (chat's, Responses'). */
function raiseMaximum(body: Record<string, unknown>, floor: number): void {
  for (const field of ['max_tokens', 'max_completion_tokens', 'max_output_tokens'])
    if (typeof body[field] === 'number' && (body[field] as number) < floor) body[field] = floor
}

function adaptBody(
  body: Record<string, unknown>,
  adapt: UpstreamAdaptation,
  format: Request['responseFormat'],
): void {
  // (before the fields learned away: a refused switch stays away, and so does the effort)
  if (adapt.forcedThinkingOff && !adapt.autoToolChoice && !adapt.claude?.noForcedTools)
    thinkingOffForForcedCall(body, adapt.drop)
  // the rename first: a field learned away after it (max_completion_tokens) stays away
  if (adapt.maxCompletionTokens && body.max_tokens !== undefined) {
    body.max_completion_tokens = body.max_tokens
    delete body.max_tokens
  }
  for (const field of adapt.drop ?? []) {
    const dot = field.indexOf('.')
    if (dot < 0) delete body[field]
    else {
      // a part of an object (Responses `reasoning.summary`): the object goes on without it
      const [name, part] = [field.slice(0, dot), field.slice(dot + 1)]
      const parent = body[name]
      if (parent && typeof parent === 'object' && part in parent) {
        const {[part]: _, ...rest} = parent as Record<string, unknown>
        // (Messages `output_config.effort`, Responses `text.verbosity`, its only part: no empty
        // object left)
        if ((name === 'output_config' || name === 'text') && Object.keys(rest).length === 0) delete body[name]
        else body[name] = rest
      }
    }
  }
  if (adapt.maxTokens !== undefined) {
    for (const field of ['max_tokens', 'max_completion_tokens'])
      if (typeof body[field] === 'number' && (body[field] as number) > adapt.maxTokens)
        body[field] = adapt.maxTokens
    // Gemini's, in its generation config (the encoder made the object: it is this body's own)
    const config = body.generationConfig as {maxOutputTokens?: unknown} | undefined
    if (typeof config?.maxOutputTokens === 'number' && config.maxOutputTokens > adapt.maxTokens)
      config.maxOutputTokens = adapt.maxTokens
    // Messages: a thinking budget must stay under max_tokens (and at 1 024 or more)
    const thinking = body.thinking as {type?: unknown; budget_tokens?: unknown} | undefined
    const max = body.max_tokens
    if (
      thinking?.type === 'enabled' &&
      typeof thinking.budget_tokens === 'number' &&
      typeof max === 'number' &&
      thinking.budget_tokens >= max
    ) {
      if (max - 1 >= 1024) body.thinking = {...thinking, budget_tokens: max - 1}
      else delete body.thinking
    }
  }
  if (adapt.noThinking) leaveOutThinking(body)
  if (adapt.noThinkingLevel) leaveOutThinkingLevel(body)
  else if (adapt.thinkingLevels) raiseThinkingLevel(body, adapt.thinkingLevels)
  if (adapt.thinkingBudget) adaptGeminiBudget(body, adapt.thinkingBudget)
  if (adapt.noSystemInstruction && Array.isArray(body.contents)) systemIntoFirstTurn(body)
  if (adapt.effortOnlyWithThinking) withoutEffortWhenOff(body)
  // (before the conversation rules: a user message it adds after tool results is bridged too)
  if (adapt.autoToolChoice) unforcedToolChoice(body)
  if (adapt.toolIds) shapeToolIds(body, adapt.toolIds)
  if (adapt.bridgeToolTurns) bridgeToolTurns(body)
  if (adapt.reasoningHistory) reshapeReasoningHistory(body, adapt.reasoningHistory)
  if (adapt.thoughtSignatures) dummySignatures(body, adapt.thoughtSignatures)
  if (adapt.noCallIds) withoutCallIds(body)
  if (adapt.repairArgs) repairToolArguments(body)
  if (adapt.adjacentOutputs && Array.isArray(body.input)) body.input = adjacentOutputs(body.input)
  // images and documents inside tool results, refused there: right after the results (a Messages
  // body's, passed through or translated; a translated Responses body's)
  if (adapt.mediaOutOfResults) {
    if (Array.isArray(body.messages)) body.messages = messagesMediaOutOfResults(body.messages)
    if (Array.isArray(body.input)) body.input = responsesMediaOutOfOutputs(body.input)
  }
  if (adapt.effort) {
    // "off" refused by a model that always thinks (GLM-5.3's 1210, adaptations.ts): the chat switch
    // the gateway sent for a request that asked for no thinking goes, its least effort in its place
    if (adapt.alwaysThinks && adapt.effort.none !== undefined && body.reasoning_effort === undefined) {
      let off = false
      if ((body.thinking as {type?: unknown} | undefined)?.type === 'disabled') off = delete body.thinking
      if (body.enable_thinking === false) off = delete body.enable_thinking
      if (off) body.reasoning_effort = 'none'
    }
    const effort = typeof body.reasoning_effort === 'string' ? adapt.effort[body.reasoning_effort] : undefined
    if (effort !== undefined) body.reasoning_effort = effort
    const reasoning = body.reasoning as {effort?: unknown} | undefined
    const nested = typeof reasoning?.effort === 'string' ? adapt.effort[reasoning.effort] : undefined
    if (nested !== undefined) body.reasoning = {...reasoning, effort: nested}
    // (Messages: `output_config.effort`, a value the model refused)
    const config = body.output_config as {effort?: unknown} | undefined
    const configured = typeof config?.effort === 'string' ? adapt.effort[config.effort] : undefined
    if (configured !== undefined) body.output_config = {...config, effort: configured}
  }
  // (after the efforts learned: "none" is what the model takes beside tools, whatever was asked)
  if (adapt.effortWithTools && Array.isArray(body.tools) && body.tools.length > 0) {
    if (adapt.effortWithTools === 'none') body.reasoning_effort = 'none'
    else delete body.reasoning_effort
  }
  if (adapt.noThinkingUnstreamed && body.stream !== true) body.enable_thinking = false
  if (adapt.minOutputTokens !== undefined) raiseMaximum(body, adapt.minOutputTokens)
  // (before a JSON mode learned away turns the format into words)
  if (adapt.minJsonOutputTokens !== undefined) {
    const asked = (body.response_format as {type?: unknown} | undefined)?.type
    if (asked === 'json_object' || asked === 'json_schema') raiseMaximum(body, adapt.minJsonOutputTokens)
  }
  const instruction = jsonInstructionText(format)
  if (instruction === undefined) return
  // (a Gemini body: its JSON is asked for in generationConfig)
  if (adapt.json === 'instruction' && body.generationConfig !== undefined) {
    geminiJsonAsInstruction(body, instruction)
    return
  }
  if (body.response_format === undefined) return
  if (adapt.json === 'instruction') delete body.response_format
  else if (adapt.json === 'json_object') body.response_format = {type: 'json_object'}
  // JSON mode alone says nothing of a schema, no JSON mode says nothing at all: the instruction
  // carries it (and the word "json" DeepSeek's JSON mode wants in the prompt)
  const mode = (body.response_format as {type?: unknown} | undefined)?.type
  if (
    mode === undefined ||
    (mode === 'json_object' && (format!.type === 'json_schema' || adapt.jsonInstruction))
  )
    addSystemText(body, instruction)
}

/**
 * A Messages body that turns thinking off (`thinking.type: disabled`) without its
 * `output_config.effort` (and without an `output_config` left empty); one that thinks as it was.
 * (The Messages encoder never sends the two together: this is a passed-through body's, Claude
 * Code's sub-agents'.)
 */
function withoutEffortWhenOff(body: Record<string, unknown>): void {
  if ((body.thinking as {type?: unknown} | undefined)?.type !== 'disabled') return
  const config = body.output_config
  if (!config || typeof config !== 'object' || !('effort' in config)) return
  const {effort: _, ...rest} = config as Record<string, unknown>
  if (Object.keys(rest).length > 0) body.output_config = rest
  else delete body.output_config
}

function adaptGeminiBudget(
  body: Record<string, unknown>,
  learned: NonNullable<UpstreamAdaptation['thinkingBudget']>,
): void {
  const thinking = geminiThinking(body)
  const budget = thinking?.thinkingBudget
  if (!thinking || typeof budget !== 'number' || (budget === -1 && !learned.none)) return
  let next: number | undefined = budget
  if (learned.none) next = undefined
  else if (budget === 0) next = learned.zero ? undefined : 0
  else if (
    (learned.over !== undefined && budget >= learned.over) ||
    (learned.under !== undefined && budget <= learned.under)
  )
    next = undefined
  else {
    if (learned.min !== undefined && budget < learned.min) next = learned.min
    if (learned.max !== undefined && budget > learned.max) next = learned.max
  }
  if (next === budget) return
  const {thinkingBudget: _, ...rest} = thinking as Record<string, unknown>
  // (a config of a budget alone goes as none, not as `thinkingConfig: {}`: an absent one is the
  // model's default, as Google's API reference says; `includeThoughts` beside it is kept)
  if (next === undefined && Object.keys(rest).length === 0) {
    leaveOutThinking(body)
    return
  }
  const config = body.generationConfig as Record<string, unknown>
  body.generationConfig = {
    ...config,
    thinkingConfig: next === undefined ? rest : {...rest, thinkingBudget: next},
  }
}

/** `text` at the end of a chat body's first system message (one made first when there is none). */
/**
 * A Gemini body that offers function declarations with a JSON response mime type, for a model that
 * refused the two together (Gemini 2.0 and 2.5: "Function calling with a response mime type:
 * 'application/json' is unsupported"): without `responseMimeType` and its schema, `instruction`
 * (the schema in words, as a Messages upstream gets it beside tools) at the end of its system
 * instruction. A body without declarations keeps its JSON mode, which the model takes.
 */
function geminiJsonAsInstruction(body: Record<string, unknown>, instruction: string): void {
  const config = body.generationConfig as Record<string, unknown>
  if (config.responseMimeType !== 'application/json') return
  const tools = Array.isArray(body.tools) ? (body.tools as Array<{functionDeclarations?: unknown}>) : []
  if (!tools.some((t) => Array.isArray(t?.functionDeclarations) && t.functionDeclarations.length > 0)) return
  const {responseMimeType: _, responseJsonSchema: __, responseSchema: ___, ...rest} = config
  if (Object.keys(rest).length > 0) body.generationConfig = rest
  else delete body.generationConfig
  const system = body.systemInstruction as {parts?: unknown} | undefined
  const parts = Array.isArray(system?.parts) ? (system.parts as unknown[]) : []
  body.systemInstruction = {...system, parts: [...parts, {text: instruction}]}
}

function addSystemText(body: Record<string, unknown>, text: string): void {
  const messages = Array.isArray(body.messages)
    ? (body.messages as Array<Record<string, unknown>>)
    : undefined
  if (!messages) return
  const first = messages[0]
  if (first && (first.role === 'system' || first.role === 'developer')) {
    if (typeof first.content === 'string')
      first.content = first.content ? `${first.content}\n\n${text}` : text
    else if (Array.isArray(first.content)) first.content = [...first.content, {type: 'text', text}]
    else first.content = text
    return
  }
  messages.unshift({role: 'system', content: text})
}

/**
 * The bytes of an upstream request body: `Buffer.from(JSON.stringify(body))`, faster, with every
 * lone UTF-16 surrogate as U+FFFD. A JavaScript agent that cuts a tool's output in the middle of
 * an emoji sends half of it (`"\ud83d"`), and the request's history keeps it: Anthropic refuses
 * it ("no low surrogate in string"), a Rust server too ("lone leading surrogate in hex escape"),
 * on every later turn. `JSON.stringify` writes a surrogate pair as itself and only a lone one as
 * an escape, so one search of the text finds whether there is any.
 */
export function upstreamBytes(body: Record<string, unknown>): Buffer {
  const json = JSON.stringify(body)
  return utf8Bytes(json.includes('\\ud') ? wellFormedEscapes(json) : json)
}

/** A lone surrogate's escape in JSON text, after an even run of backslashes (not an escaped `\\u`). */
const LONE_SURROGATE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g

/** JSON text (of `JSON.stringify`) with each lone surrogate's escape as U+FFFD's. */
export function wellFormedEscapes(json: string): string {
  return json.replace(LONE_SURROGATE, '$1\\ufffd')
}

/**
 * A whole answer's JSON text for the client with each lone surrogate as U+FFFD, as a stream's
 * deltas go (StreamTranslator `mended`): an upstream that cut an emoji in half in its text or in
 * a tool call's arguments (`"\ud83d"`, parsed to a lone surrogate) would otherwise have it escaped
 * alone in the client's JSON, which Codex's serde_json refuses ("lone leading surrogate in hex
 * escape"). The encoders write every string with `JSON.stringify`, which writes a pair as itself
 * and only a lone surrogate as an escape: one search of the text, and nothing more for an answer
 * without one.
 */
const wellFormedAnswer = (json: string): string => (json.includes('\\ud') ? wellFormedEscapes(json) : json)

/** `usage` with the prompt counts of `earlier` added (a paused turn's earlier calls, ./pause.ts). */
export function addPrompts(usage: Usage, earlier: Usage): Usage {
  const sum: Usage = {
    ...usage,
    inputTokens: usage.inputTokens + earlier.inputTokens,
    cacheReadTokens: usage.cacheReadTokens + earlier.cacheReadTokens,
    cacheCreationTokens: usage.cacheCreationTokens + earlier.cacheCreationTokens,
  }
  if (usage.cache1hTokens !== undefined || earlier.cache1hTokens !== undefined)
    sum.cache1hTokens = (usage.cache1hTokens ?? 0) + (earlier.cache1hTokens ?? 0)
  return sum
}

/** Usage of an answer, from its IR events (each `usage` replaces the counts it names). */
export class UsageCollector {
  private counts: Usage | undefined

  add(usage: Partial<Usage> | undefined): void {
    if (!usage) return
    this.counts ??= emptyUsage()
    for (const key of Object.keys(usage) as Array<keyof Usage>) {
      const value = usage[key]
      if (typeof value === 'number') this.counts[key] = value
    }
  }

  get(): Usage | undefined {
    return this.counts
  }
}

/**
 * The context the upstream's decoder reads an answer with: for a Messages upstream asked for
 * JSON through the `json_answer` tool (messages-request.ts), that tool's call is the answer's text;
 * for a chat upstream given the client's tools (`tools`, whose schemas type a call's arguments in
 * Qwen3-Coder's `<parameter=…>` form), the tools it got under another name (one it refuses: an MCP
 * tool's dot, a name past 64 characters; tool-names.ts) under that name, the one its calls come
 * with (the decoder reads a call before it goes back to the client's name), so that such a call is
 * typed by the client's schema too; and for a chat upstream, the history's tool-call ids
 * (`historyCallIds`, computed only when the answer has a call: one that comes with such an id is
 * given another, cm-common.ts `answerCallId`).
 */
function decodeContext(upstream: Family, client: ClientRequest, ctx: CodecContext): CodecContext {
  if (upstream === 'chat') {
    const names = ctx.tools !== undefined ? toolNamesFor(client, upstream) : undefined
    const decode: CodecContext = Object.assign({}, ctx, {
      historyCallIds: () => historyCallIds(client),
      plainCallIds: client.family === 'messages',
    })
    if (names && ctx.tools)
      decode.tools = ctx.tools.map((t) => (names.has(t.name) ? {...t, name: names.get(t.name)!} : t))
    return decode
  }
  if (upstream !== 'messages' || !jsonAnswerTool(client.request)) return ctx
  return Object.assign({}, ctx, {jsonAnswer: true})
}

/**
 * Whether a Messages upstream's stream for this request may pause its turn and be continued
 * (./pause.ts): the request offered it a server tool (its web search; a translated request carries
 * no other), the only kind of answer that can pause. Its decoder keeps the answer's content blocks
 * as they came, to send them back.
 */
const continuable = (upstream: Family, client: ClientRequest): boolean =>
  upstream === 'messages' && client.request.webSearch !== undefined

/** Characters of an answer's output: its text, reasoning and tool calls (names and arguments). */
function outputChars(parts: Part[]): number {
  let chars = 0
  for (const p of parts) {
    if (p.type === 'text' || p.type === 'reasoning') chars += p.text.length
    else if (p.type === 'tool_call') chars += p.name.length + p.arguments.length
  }
  return chars
}

/**
 * Fills in the counts an upstream did not report, by the estimate of `count_tokens` (characters /
 * 4): input tokens when it reported none (an OpenAI-compatible server that ignores
 * `stream_options.include_usage`, or reports `prompt_tokens: 0` for a prompt it had cached),
 * output tokens when it reported none for an answer that has output. A client's agent decides
 * when to compact its conversation from the input tokens it is told (Claude Code's auto-compact,
 * Codex's, Gemini CLI's compression): told 0 on every turn, it never does, and the conversation
 * grows until the upstream refuses it. Returns what was estimated, or undefined when nothing
 * was (the usual answer: no work beyond two comparisons).
 */
export function fillMissingUsage(usage: Usage, request: Request, chars: number): string | undefined {
  if (usage.inputTokens !== 0 && (usage.outputTokens !== 0 || chars === 0)) return undefined
  let input = false
  if (usage.inputTokens === 0) {
    const estimate = estimateInputTokens(request)
    if (estimate > 0) {
      usage.inputTokens = estimate
      input = true
    }
  }
  const output = usage.outputTokens === 0 && chars > 0
  if (output) usage.outputTokens = Math.ceil(chars / CHARS_PER_TOKEN)
  return input && output ? 'input and output' : input ? 'input' : output ? 'output' : undefined
}

/** The log row's note for an answer whose usage was estimated in part or whole. */
export function estimatedUsageNote(provider: string, estimated: string): string {
  return `usage estimated (chars/4): ${provider} reported no ${estimated} tokens`
}

/** Translates a whole (non-stream) upstream answer. */
export function translateResponse(
  upstream: Family,
  client: ClientRequest,
  body: unknown,
  ctx: CodecContext = {},
): {body: Record<string, unknown>; usage: Usage; id: string; estimated?: string} {
  const response = CODECS[upstream].decodeResponse(body, decodeContext(upstream, client, ctx))
  clientCallNames(response.parts, toolNamesFor(client, upstream))
  const estimated = fillMissingUsage(response.usage, client.request, outputChars(response.parts))
  const out = CODECS[client.family].encodeResponse(response, {
    carry: ctx.carry,
    newId: ctx.newId,
    request: client.request,
    server: ctx.server,
  })
  return {body: out, usage: response.usage, id: response.id, estimated}
}

/**
 * Translates a whole (non-stream) upstream answer into the JSON text the client gets, written
 * straight from the IR where the client's codec can (`encodeResponseText`). `id`: the answer's
 * id as the client got it where the encoder made the object, else the upstream's (a Responses
 * client's history keys on it; Responses answers are encoded as objects).
 */
export function translateResponseText(
  upstream: Family,
  client: ClientRequest,
  body: unknown,
  ctx: CodecContext = {},
): {
  text: string
  usage: Usage
  id: string
  estimated?: string
  thinkInPrompt?: ThinkInPrompt
  repairedArgs?: number
  namelessCalls?: number
} {
  const response = CODECS[upstream].decodeResponse(body, decodeContext(upstream, client, ctx))
  clientCallNames(response.parts, toolNamesFor(client, upstream))
  const estimated = fillMissingUsage(response.usage, client.request, outputChars(response.parts))
  const codec = CODECS[client.family]
  const encodeCtx = {carry: ctx.carry, newId: ctx.newId, request: client.request, server: ctx.server}
  const thinkInPrompt = response.thinkInPrompt
  if (codec.encodeResponseText)
    return {
      text: wellFormedAnswer(codec.encodeResponseText(response, encodeCtx)),
      usage: response.usage,
      id: response.id,
      estimated,
      thinkInPrompt,
      repairedArgs: response.repairedArgs,
      namelessCalls: response.namelessCalls,
    }
  const out = codec.encodeResponse(response, encodeCtx)
  return {
    text: wellFormedAnswer(JSON.stringify(out)),
    usage: response.usage,
    id: String(out.id ?? ''),
    estimated,
    thinkInPrompt,
    repairedArgs: response.repairedArgs,
    namelessCalls: response.namelessCalls,
  }
}

/**
 * Translates an upstream's SSE stream into the client's, event by event: `push` takes bytes as
 * they arrive and returns the SSE text to write now; `end` returns the rest. An upstream that
 * ends without its terminal event, or sends an error event, is reported in `error` (and the
 * client gets its own protocol's error event).
 */
export class StreamTranslator {
  readonly usage = new UsageCollector()
  /**
   * The upstream's stream broke or reported an error. `truncated`: it ended without its terminal
   * event or with an event that is not JSON (the upstream failed); otherwise the upstream sent an
   * error event of its own (a refusal, an overload: the upstream answered).
   */
  error:
    | {
        status: number
        message: string
        truncated: boolean
        /** The error's own words and code, as the client's error answer would say them. */
        said: string
        code?: string
        /** The words are the entrance's for a prompt past the context window. */
        overflow?: true
        /** The error is the model's own answer (a failed finish), not the upstream failing. */
        answered?: true
        /** The upstream's error as JSON text, when it holds Google's `details` (the IR event's). */
        body?: string
      }
    | undefined
  /** The answer's id, from the first event. */
  id: string | undefined
  /** The context window an overflow stated in the stream gave (its error event), if it did. */
  contextWindow: number | undefined
  /**
   * Given the first text the stream produces as soon as it is encoded (then never again), instead
   * of returning it from `push`: the client's first byte does not wait for the rest of the
   * upstream chunk's events (a fast upstream sends many in one chunk).
   */
  onFirstOutput: ((text: string) => void) | undefined
  /**
   * Set by the relay for a Messages upstream whose turn may still be continued (./pause.ts): a
   * `pause` stop is held back from the client, with the usage after it and the end, and
   * {@link paused} is set once the upstream's answer has ended; {@link resume} then reads the
   * continuation's stream into the same client stream.
   */
  holdPause = false
  /** The upstream's answer paused and ended, its stop held back from the client (see holdPause). */
  paused = false
  /** An answer that paused went to the client as the turn's end (holdPause off: the cap reached). */
  endedPaused = false
  /**
   * The upstream's answer may pause and be continued (a Messages upstream offered a search): its
   * content blocks are kept as they come. Only then may the relay set {@link holdPause}.
   */
  readonly continuable: boolean
  private out = ''
  private readonly parser
  private decoder: StreamDecoder
  private readonly encoder: StreamEncoder
  private text = new ChunkText()
  private finished = false
  /** A `pause` stop was held back: what comes after it until the end is not the client's. */
  private holding = false
  /** Reading a continuation: its `start` is not the client's (the client's message started). */
  private resumed = false
  /** Set while the events emitted come from the end of the upstream's stream or a bad event. */
  private truncating = false
  /** Text, reasoning and tool-argument deltas streamed (the output of a stream broken before its usage). */
  private deltas = 0
  /** Characters of output streamed: text, reasoning, tool names and arguments (for `fillMissingUsage`). */
  private chars = 0
  /** What of the usage was estimated at the stream's end (`fillMissingUsage`), if anything. */
  estimated: string | undefined
  private readonly request: Request
  private readonly clientFamily: Family
  /** Tools renamed for the upstream (tool-names.ts): its calls go to the client under their own names. */
  private readonly names: Map<string, string> | undefined
  /**
   * High surrogates held back from the end of a delta, by block index, until the block's next
   * delta shows whether its low surrogate follows (see {@link mended}); undefined when none is.
   */
  private surrogates: Map<number, HeldSurrogate> | undefined

  constructor(upstream: Family, client: ClientRequest, ctx: CodecContext = {}) {
    this.request = client.request
    this.clientFamily = client.family
    this.names = toolNamesFor(client, upstream)
    this.continuable = continuable(upstream, client)
    const decode = decodeContext(upstream, client, ctx)
    this.decoder = CODECS[upstream].streamDecoder(
      this.continuable ? Object.assign({}, decode, {keepContent: true}) : decode,
    )
    // the context's fields by name, not a spread: an object literal that starts with a spread and
    // goes on with more members takes µs on Node 20's V8
    this.encoder = CODECS[client.family].streamEncoder({
      carry: ctx.carry,
      newId: ctx.newId,
      request: client.request,
      server: ctx.server,
      includeUsage: client.includeUsage,
      model: client.request.model ?? undefined,
    })
    this.parser = createParser({
      onEvent: (message: EventSourceMessage) => {
        if (this.finished) return
        let events: StreamEvent[]
        try {
          events = this.decoder.event(message.event, message.data)
        } catch (error) {
          this.truncating = true
          events = [
            {type: 'error', status: 502, message: `malformed upstream event: ${(error as Error).message}`},
          ]
        }
        this.emit(events)
      },
    })
  }

  /**
   * The client's stream is complete: its terminal event (or an error event) was written, and
   * nothing the upstream sends after it is translated. The relay may end the answer then, with
   * the last text, in one write.
   */
  get done(): boolean {
    return this.finished
  }

  /**
   * The upstream's answer stopped (a chat `finish_reason`, a Messages `stop_reason`): only its
   * usage and last event may follow, and {@link end} now gives the whole answer.
   */
  get upstreamStopped(): boolean {
    return this.decoder.stopped === true
  }

  /** A chat upstream's answer showed a template that opens `<think>` in the prompt (ir.ts `ThinkInPrompt`). */
  get thinkInPrompt(): ThinkInPrompt | undefined {
    return this.decoder.thinkInPrompt
  }

  /** A chat upstream's tool calls whose arguments were no JSON and went out repaired. */
  get repairedArgs(): number {
    return this.decoder.repairedArgs ?? 0
  }

  /** A chat upstream's tool calls that never got a name, left out of the answer. */
  get namelessCalls(): number {
    return this.decoder.namelessCalls ?? 0
  }

  /**
   * A Responses upstream acked (`response.created`, `in_progress`) and the answer's start is held
   * back, waiting for its first output or a failure (responses-stream.ts); {@link flushStart}
   * sends it now.
   */
  get holdsStart(): boolean {
    return !this.finished && this.decoder.holdsStart === true
  }

  /** The start held back ({@link holdsStart}), encoded now (to `onFirstOutput` while that is set). */
  flushStart(): string {
    if (this.holdsStart && this.decoder.flushStart) this.emit(this.decoder.flushStart())
    return this.take()
  }

  push(chunk: Uint8Array): string {
    this.parser.feed(this.text.push(chunk))
    return this.take()
  }

  end(): string {
    const rest = this.text.end()
    if (rest) this.parser.feed(rest)
    this.parser.feed('\n\n')
    this.truncating = true
    if (!this.finished) this.emit(this.decoder.end())
    return this.take()
  }

  /**
   * The usage of the log row: what the client was told, and for a turn continued after a pause
   * (./pause.ts) the prompts of its earlier calls too, billed but not in the client's context.
   */
  billedUsage(): Usage | undefined {
    const usage = this.usage.get()
    const earlier = this.decoder.earlierInput?.()
    if (!usage || !earlier) return usage
    return addPrompts(usage, earlier)
  }

  /**
   * The usage of the log row of a stream cut before its end (the client left; the upstream reset
   * or went silent): {@link billedUsage}, with what the upstream reported that no event carried yet
   * (`StreamDecoder.reportedUsage`), which it bills, as a pass-through route's row keeps it (the
   * taps). Its output is never below what the events counted: a broken stream's error counts the
   * deltas that streamed (`fail`), which may be more than the upstream's last count; a client that
   * left gets no output made up from the deltas.
   */
  cutUsage(): Usage | undefined {
    const held = this.decoder.reportedUsage?.()
    if (!held) return this.billedUsage()
    const counted = this.usage.get()
    const usage = new UsageCollector()
    usage.add(counted)
    usage.add(held)
    const output = Math.max(counted?.outputTokens ?? 0, held.outputTokens ?? 0)
    usage.add({outputTokens: output})
    const earlier = this.decoder.earlierInput?.()
    return earlier ? addPrompts(usage.get()!, earlier) : usage.get()
  }

  /** The thinking blocks the upstream dropped from the request, in words (Messages), if any. */
  droppedThinking(): string | undefined {
    return this.decoder.droppedThinking?.()
  }

  /**
   * The paused answer's content blocks as the upstream sent them (for the continuation's request;
   * none unless the request offered a server tool).
   */
  pausedContent(): unknown[] {
    return this.decoder.keptContent?.() ?? []
  }

  /**
   * Reads the continuation of the paused answer (./pause.ts) into the same client stream: its
   * blocks numbered on from the paused one's, its usage added to it, its start left out.
   */
  resume(): void {
    const next = this.decoder.continuation?.()
    if (!next) throw new Error('this upstream family has no continuation of a paused turn')
    this.decoder = next
    this.text = new ChunkText()
    this.parser.reset()
    this.truncating = false
    this.holding = false
    this.paused = false
    this.resumed = true
  }

  /**
   * Ends the client's stream with the paused answer as the turn's end, the stop, usage and end that
   * were held back given at last (its continuation was refused or failed: the searches and text so
   * far are the client's answer, as after the most continuations; a client that sees an error
   * would send the whole turn again, and its searches with it).
   */
  endAsPaused(): string {
    this.holdPause = false
    this.holding = false
    this.paused = false
    const usage = this.usage.get()
    const events: StreamEvent[] = [{type: 'stop', reason: 'pause'}]
    if (usage) events.push({type: 'usage', usage})
    events.push({type: 'end'})
    this.emit(events)
    return this.take()
  }

  /** Ends the client's stream with an error event (the upstream broke off: a network error). */
  fail(status: number, message: string): string {
    this.truncating = true
    if (!this.finished) this.emit([{type: 'error', status, message}])
    return this.take()
  }

  private emit(events: StreamEvent[]): void {
    for (let event of events) {
      if (this.finished) return
      if (event.type === 'start') {
        this.id ??= event.id
        this.usage.add(event.usage)
        // a continuation's: the client's message has started
        if (this.resumed) continue
      } else if (event.type === 'usage') {
        this.usage.add(event.usage)
        if (this.holding) continue
      } else if (event.type === 'text_delta' || event.type === 'reasoning_delta') {
        // (a delta that ends in a high surrogate or is not well-formed, or a block with one held)
        let text = event.text
        if (this.surrogates !== undefined || !wellFormedWhole(text)) {
          text = this.mended(event.type, event.index, text)
          if (!text && event.text) continue
          if (text !== event.text) event = {type: event.type, index: event.index, text}
        }
        this.deltas++
        this.chars += text.length
      } else if (event.type === 'tool_args_delta') {
        let json = event.json
        if (this.surrogates !== undefined || !wellFormedWhole(json)) {
          json = this.mended(event.type, event.index, json)
          if (!json && event.json) continue
          if (json !== event.json) event = {type: event.type, index: event.index, json}
        }
        this.deltas++
        this.chars += json.length
      } else if (event.type === 'block_stop') {
        // a high surrogate held to the block's end had no low one after it: a replacement character
        const held = this.surrogates?.get(event.index)
        if (held) {
          this.dropHeld(event.index)
          const index = event.index
          this.out += this.encoder.event(
            held.type === 'tool_args_delta'
              ? {type: held.type, index, json: REPLACEMENT}
              : {type: held.type, index, text: REPLACEMENT},
          )
          this.deltas++
          this.chars++
        }
      } else if (event.type === 'block_start') {
        const block = event.block
        if (block.type === 'tool_call') {
          const name = this.names ? clientToolName(block.name, this.names) : block.name
          if (name !== block.name) event = {...event, block: {...block, name}}
          this.chars += name.length
        }
      } else if (event.type === 'error') {
        // a prompt past the window said inside the stream, before any of the answer (LM Studio
        // answers a streamed request that does not fit with a 200 and one `event: error`): in the
        // words the agent compacts on, as the relay says an error status's (Claude Code reads
        // "prompt is too long" in a stream's error event too; Codex `context_length_exceeded` in
        // `response.failed`)
        let overflowed = false
        if (this.deltas === 0 && !this.truncating) {
          const overflow = saidOverflow(this.clientFamily, event.message)
          if (overflow) {
            this.contextWindow = overflow.window
            overflowed = true
            event = {type: 'error', status: 400, message: overflow.message, code: overflow.code}
          }
        }
        // the log row keeps what the client was told, code included
        const message = event.code ? `${event.code}: ${event.message}` : event.message
        this.error = {status: event.status, message, truncated: this.truncating, said: event.message}
        if (event.code) this.error.code = event.code
        if (overflowed) this.error.overflow = true
        if (event.answered) this.error.answered = true
        if (event.body) this.error.body = event.body
        if (event.usage) this.usage.add(event.usage)
        // the tokens that did stream, when the upstream broke before reporting its usage
        const counted = this.usage.get()
        if (this.deltas > 0 && (counted?.outputTokens ?? 0) < this.deltas)
          this.usage.add({outputTokens: this.deltas})
        this.finished = true
      } else if (event.type === 'stop') {
        if (event.reason === 'pause') {
          if (this.holdPause) {
            this.holding = true
            continue
          }
          this.endedPaused = true
        }
      } else if (event.type === 'end') {
        if (this.holding) {
          // the paused answer ended: the turn goes on in its continuation (resume)
          this.paused = true
          continue
        }
        this.finished = true
        // counts the upstream did not report are estimated, and the client told them with the rest
        const counts = this.usage.get() ?? emptyUsage()
        const estimated = fillMissingUsage(counts, this.request, this.chars)
        if (estimated) {
          this.estimated = estimated
          this.usage.add(counts)
          this.out += this.encoder.event({type: 'usage', usage: counts})
        }
      }
      this.out += this.encoder.event(event)
      const first = this.onFirstOutput
      if (first && this.out) {
        this.onFirstOutput = undefined
        first(this.take())
      }
    }
  }

  private take(): string {
    const out = this.out
    this.out = ''
    return out
  }

  /**
   * A delta's text as the client may be given it: well-formed UTF-16. An upstream that escapes per
   * UTF-16 unit (a JS server, Python's `ensure_ascii`) may end one chunk with an emoji's high
   * surrogate (`\ud83d`) and start the next with its low one (`\ude00`). Each sent as it came is
   * a lone surrogate escaped in the client's JSON: Codex's serde_json refuses such an event
   * ("lone leading surrogate in hex escape"; 0.171 drops the delta, and a `response.completed`
   * holding one ends the turn: "stream closed before response.completed"), a JS client shows two
   * U+FFFD. So a high surrogate that ends a delta is held and put before the block's next delta;
   * one that no low surrogate follows (the next delta, the block's end), and any other lone
   * surrogate, becomes U+FFFD. '' when all there is is held.
   */
  private mended(type: HeldSurrogate['type'], index: number, text: string): string {
    const held = this.surrogates?.get(index)
    if (held) {
      this.dropHeld(index)
      text = held.unit + text
    }
    const last = text.charCodeAt(text.length - 1)
    if (last >= 0xd800 && last <= 0xdbff) {
      ;(this.surrogates ??= new Map()).set(index, {type, unit: text.slice(-1)})
      text = text.slice(0, -1)
    }
    return (text as WellFormedString).toWellFormed()
  }

  private dropHeld(index: number): void {
    const held = this.surrogates
    if (!held) return
    held.delete(index)
    if (held.size === 0) this.surrogates = undefined
  }
}

/** A high surrogate held back from the end of a block's delta (StreamTranslator `mended`). */
interface HeldSurrogate {
  type: 'text_delta' | 'reasoning_delta' | 'tool_args_delta'
  unit: string
}

/** Node 20's `String.prototype.isWellFormed` and `toWellFormed` (ES2024, past this project's lib). */
type WellFormedString = string & {isWellFormed(): boolean; toWellFormed(): string}

const REPLACEMENT = '\ufffd'

/**
 * A delta that can go as it is: well-formed and not ending in a high surrogate. A string of
 * Latin-1 characters only (nearly every English or code delta) is well-formed at once in V8;
 * another is scanned natively.
 */
function wellFormedWhole(text: string): boolean {
  const last = text.charCodeAt(text.length - 1)
  return !(last >= 0xd800 && last <= 0xdbff) && (text as WellFormedString).isWellFormed()
}

export {upstreamErrorMessage} from './errors.js'

/** Characters per token of the estimate (the usual rule of thumb for English and code). */
const CHARS_PER_TOKEN = 4
/** Tokens counted for one image (Anthropic's ~1 600 for a 1.15-megapixel image). */
const IMAGE_TOKENS = 1600

/**
 * An estimate of a request's input tokens, for `count_tokens` / `:countTokens` on a route whose
 * upstream has no such endpoint: characters / 4 over text, tool calls, results and tool
 * schemas, 1 600 per image. The answer says it is an estimate (see the daemon).
 */
export function estimateInputTokens(request: Request): number {
  let chars = 0
  let images = 0
  let documents = 0
  const part = (p: Part): void => {
    switch (p.type) {
      case 'text':
      case 'reasoning':
        chars += p.text.length
        break
      case 'image':
        if (isDocument(p)) documents += documentTokens(p)
        else images++
        break
      case 'tool_call':
        chars += p.name.length + p.arguments.length
        break
      case 'tool_result':
        for (const c of p.content) part(c)
        break
      case 'web_search':
        // the text it goes as (withSearchesAsText)
        chars += webSearchText(p).length
        break
    }
  }
  for (const s of request.system) part(s)
  for (const m of request.messages) for (const p of m.parts) part(p)
  for (const t of request.tools)
    chars += t.name.length + (t.description?.length ?? 0) + JSON.stringify(t.parameters).length
  return Math.ceil(chars / CHARS_PER_TOKEN) + images * IMAGE_TOKENS + documents
}

/** Bytes of a PDF counted as one token (about 1 600 tokens, a page's, for 50 KB). */
const PDF_BYTES_PER_TOKEN = 32

/**
 * A document's tokens for the estimate: a text file's characters / 4, a PDF's bytes / 32 (a
 * rough rule: a page of text is a few KB and about 1 500-3 000 tokens to Anthropic, a scanned
 * page far more bytes), at least an image's 1 600; a document by URL counts as one image.
 */
function documentTokens(p: ImagePart): number {
  const text = documentText(p)
  if (text !== undefined) return Math.ceil(text.length / CHARS_PER_TOKEN)
  if (p.data === undefined) return IMAGE_TOKENS
  const bytes = (p.data.length * 3) / 4
  // audio and video (Gemini's 32 tokens a second of audio, 263 of video: about 500 bytes a token
  // of an mp3 at 128 kbit/s and of a 1 Mbit/s video)
  if (/^(?:audio|video)\//.test(p.mediaType ?? '')) return Math.ceil(bytes / MEDIA_BYTES_PER_TOKEN)
  return Math.max(IMAGE_TOKENS, Math.ceil(bytes / PDF_BYTES_PER_TOKEN))
}

/** Bytes of audio or video counted as one token. */
const MEDIA_BYTES_PER_TOKEN = 500
