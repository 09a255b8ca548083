/**
 * Simulator module of the chat-completions API (spec part A, ../shared/PROTOCOLS.md A1).
 *
 * Mounts:
 * - `POST /api/v1/chat/completions`, `GET /api/v1/models`: the platform, with provider routing
 *   and a `provider` field on every chunk and on the non-stream object.
 * - `POST /v1/chat/completions`, `GET /v1/models`: a vendor-style upstream (no `provider` field),
 *   for the gateway's tests. Any non-empty `Authorization: Bearer <key>` is accepted (or only the
 *   simulator's `--api-key`), and any model name (answered like `sim-mini` under that name).
 * A further mount is one line: `router.add('POST', path, chatCompletionsHandler(context, {...}))`.
 *
 * Behaviour a caller can steer through the prompt (the text of the last user message):
 * - `[error-mid-stream]`: a stream sends about half of its tokens, then
 *   `data: {"error":{...}}` and ends without `[DONE]`; a non-stream request gets a 502.
 * - `[words=N]`: the reply is N words long (1-2000), to watch streaming.
 * Cached tokens: a request whose leading messages were already sent in an earlier request
 * reports those tokens as `prompt_tokens_details.cached_tokens` (as a prompt cache would).
 * Tools: when `tools` are given and the last message is from the user, the reply is a call of the
 * first tool (`finish_reason: "tool_calls"`), streamed in the A1 shape.
 */
import {createHash} from 'node:crypto'
import {setTimeout as sleep} from 'node:timers/promises'

import {TOOL_TURN_BRIDGE} from '../protocols/conversation-rules.js'

import type {SimRequest, SimHandler} from './router.js'
import {sendJson} from './router.js'
import type {SimContext, SimModule} from './context.js'
import {SIM_API_PREFIX} from './context.js'
import type {SseEvent} from './sse.js'
import {sendSse, simTokens} from './sse.js'
import type {Quirks} from './upstream/quirks.js'
import {
  NO_QUIRKS,
  argsPieces,
  obfuscationPad,
  pickedTool,
  quirkCalls,
  thinkTagPieces,
  promptThinkPieces,
  mistralThinking,
  selectQuirks,
  strictFieldsProblem,
  argumentsRefusal,
  brokenArgsText,
  splitSurrogatePieces,
  unsupportedParameter,
  extraInputs,
  contextRefusal,
  contextWordsRefusal,
  ollamaReportedPrompt,
  refusedHistory,
  refusedMedia,
  kimiRefusal,
  toolCapRefusal,
  toolChoiceRefusal,
  thinkingRefusal,
  chatCallSignature,
  GEMINI_DETAILS_FORMAT,
  thoughtSignatureRefusal,
  geminiSchemaRefusal,
  moonshotUsage,
  objectArgs,
  unknownQuirkMessage,
} from './upstream/quirks.js'
import {instanceOf, namedArgs, textAsked, withoutTextOnlyWords} from './upstream/common.js'
import {chatHistoryProblem} from './upstream/turn-checks.js'

/** A simulated model. */
export interface SimChatModel {
  id: string
  /** Emits `reasoning_content` unless `enable_thinking: false`. */
  reasoning: boolean
  contextLength: number
}

/** A simulated provider: prices per 1M tokens, tokens/s, seconds to first token. */
export interface SimProvider {
  name: string
  inputPrice: number
  outputPrice: number
  throughput: number
  latency: number
  maxInputTokens: number
  models: string[]
}

export const SIM_CHAT_MODELS: readonly SimChatModel[] = [
  {id: 'sim-mini', reasoning: false, contextLength: 128_000},
  {id: 'sim-pro', reasoning: false, contextLength: 128_000},
  {id: 'sim-reasoner', reasoning: true, contextLength: 64_000},
]

/** Catalog order is the default order when a request gives no `order` or `sort`. */
export const SIM_PROVIDERS: readonly SimProvider[] = [
  {
    name: 'alpha-cloud',
    inputPrice: 0.5,
    outputPrice: 1.5,
    throughput: 80,
    latency: 0.4,
    maxInputTokens: 128_000,
    models: ['sim-mini', 'sim-pro', 'sim-reasoner'],
  },
  {
    name: 'beta-ai',
    inputPrice: 0.2,
    outputPrice: 0.8,
    throughput: 40,
    latency: 0.8,
    maxInputTokens: 32_000,
    models: ['sim-mini', 'sim-pro'],
  },
  {
    name: 'gamma-fast',
    inputPrice: 1,
    outputPrice: 3,
    throughput: 200,
    latency: 0.15,
    maxInputTokens: 64_000,
    models: ['sim-mini', 'sim-pro', 'sim-reasoner'],
  },
  {
    name: 'delta-cheap',
    inputPrice: 0.1,
    outputPrice: 0.4,
    throughput: 25,
    latency: 1.2,
    maxInputTokens: 2000,
    models: ['sim-mini'],
  },
]

export const SORT_KEYS = [
  'input_price',
  'output_price',
  'throughput',
  'latency',
  'input_length',
  'price_multiplier',
] as const

/** An error answer of the chat API, in the OpenAI shape. */
export class ChatSimError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
    readonly code: string | null = null,
    readonly param: string | null = null,
    /** The whole error body, where a server's is not OpenAI's shape (Mistral's 422). */
    readonly raw?: unknown,
  ) {
    super(message)
  }

  body(): unknown {
    return this.raw ?? {error: {message: this.message, type: this.type, param: this.param, code: this.code}}
  }
}

/** OpenAI error body (`{error:{message,type,param,code}}`), for `context.errorFormat`. */
export function openAiErrorBody(_status: number, message: string, type: string): unknown {
  return {error: {message, type, param: null, code: null}}
}

const bad = (message: string, param: string | null = null, code: string | null = null): ChatSimError =>
  new ChatSimError(400, message, 'invalid_request_error', code, param)

// ---------------------------------------------------------------------------------------------
// Request reading

type Msg = {role?: unknown; content?: unknown; tool_calls?: unknown; tool_call_id?: unknown}

/** The text of a message's content (string or content items); other items are counted. */
export function contentText(content: unknown): {
  text: string
  images: number
  videos: number
  documents: number
} {
  if (typeof content === 'string') return {text: content, images: 0, videos: 0, documents: 0}
  let text = ''
  let images = 0
  let videos = 0
  let documents = 0
  if (Array.isArray(content)) {
    for (const item of content as Array<Record<string, any>>) {
      if (item?.type === 'text' && typeof item.text === 'string') text += (text ? '\n' : '') + item.text
      else if (item?.type === 'image_url') images++
      else if (item?.type === 'video_url') videos++
      else if (item?.type === 'file') documents++
    }
  }
  return {text, images, videos, documents}
}

/**
 * OpenAI's refusal of a function name outside `^[a-zA-Z0-9_-]{1,64}$`, in its words (a Claude
 * Code plugin's MCP tool past 64 characters, a Gemini CLI tool with a dot).
 */
export function openAiNameProblem(name: unknown, where: string): ChatSimError | undefined {
  if (typeof name !== 'string') return undefined
  if (name.length > 64)
    return bad(
      `Invalid '${where}': string too long. Expected a string with maximum length 64, but got a string with length ${name.length} instead.`,
      where,
      'string_above_max_length',
    )
  if (!/^[a-zA-Z0-9_-]+$/.test(name))
    return bad(
      `Invalid '${where}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
      where,
      'invalid_value',
    )
  return undefined
}

/** Text made only of the gateway's lines for media a model takes none of (`[... not attached: ...]`). */
const ATTACHMENT_NOTES = /^(?:\[[^\]\n]* not attached: [^\]\n]*\]\s*)+$/

/**
 * The last tool message, when only user messages of media (no text of their own) follow it: the
 * form a translated tool result with an image or a document takes in chat (the media cannot ride
 * in a `tool` message), or the lines that stand in for them on a text-only model (`notes`).
 */
function toolResultWithMedia(messages: Msg[]): {tool: Msg; notes: string} | undefined {
  let i = messages.length - 1
  let media = false
  const notes: string[] = []
  for (; i >= 0 && (messages[i].role ?? 'user') === 'user'; i--) {
    const {text, images, documents} = contentText(messages[i].content)
    const note = ATTACHMENT_NOTES.test(text.trim())
    if ((text.trim() !== '' && !note) || (images + documents === 0 && !note)) return undefined
    if (note) notes.unshift(text.trim())
    media = true
  }
  // the gateway's bridge between tool results and a user message (Mistral's turn order) is passed over
  if (media && i > 0 && messages[i].role === 'assistant' && messages[i].content === TOOL_TURN_BRIDGE) i--
  return media && i >= 0 && messages[i].role === 'tool'
    ? {tool: messages[i], notes: notes.join(' ')}
    : undefined
}

/**
 * What OpenAI refuses in a message's media parts: an `image_url` whose data URL is not an image
 * (a PDF sent as an image), a `file` part without a PDF's bytes or a file id.
 */
function mediaProblem(content: unknown, i: number): ChatSimError | undefined {
  if (!Array.isArray(content)) return undefined
  for (const [j, item] of (content as Array<Record<string, any>>).entries()) {
    if (item?.type === 'image_url') {
      const url = typeof item.image_url === 'string' ? item.image_url : item.image_url?.url
      const type = /^data:([^;,]+)/.exec(String(url ?? ''))?.[1]
      if (type && !type.startsWith('image/'))
        return bad('Invalid MIME type. Only image types are supported.', null, 'invalid_image_format')
    } else if (item?.type === 'file') {
      const file = item.file ?? {}
      if (typeof file.file_id === 'string') continue
      const where = `messages[${i}].content[${j}].file.file_data`
      const type = /^data:([^;,]+);base64,/.exec(String(file.file_data ?? ''))?.[1]
      if (type !== 'application/pdf')
        return bad(
          `Invalid file data: '${where}'. Expected a base64-encoded data URL with an application/pdf MIME type (e.g. 'data:application/pdf;base64,SGVsbG8sIFdvcmxkIQ=='), but got ${type ? `unsupported MIME type '${type}'` : 'a value that is not a data URL'}.`,
          where,
          'invalid_value',
        )
    }
  }
  return undefined
}

function checkRange(body: Record<string, any>, name: string, min: number, max: number): void {
  const v = body[name]
  if (v === undefined || v === null) return
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
    throw bad(`${name} must be a number from ${min} to ${max}`, name)
  }
}

/** The provider preferences of a request: top-level `provider` overrides `extra_body.provider`. */
export function providerPrefs(body: Record<string, any>): Record<string, any> {
  const top = body.provider
  const extra = body.extra_body?.provider
  const prefs = top && typeof top === 'object' ? top : extra && typeof extra === 'object' ? extra : {}
  for (const key of ['only', 'ignore', 'order', 'sort']) {
    const v = prefs[key]
    if (v !== undefined && (!Array.isArray(v) || v.some((s) => typeof s !== 'string'))) {
      throw bad(`provider.${key} must be an array of strings`, `provider.${key}`)
    }
  }
  for (const key of prefs.sort ?? []) {
    if (!(SORT_KEYS as readonly string[]).includes(key)) {
      throw bad(`provider.sort: unknown key "${key}" (known: ${SORT_KEYS.join(', ')})`, 'provider.sort')
    }
  }
  for (const key of [
    'input_price_range',
    'output_price_range',
    'throughput_range',
    'latency_range',
    'input_length_range',
  ]) {
    const v = prefs[key]
    if (v === undefined) continue
    if (
      !Array.isArray(v) ||
      v.length !== 2 ||
      v.some((n) => typeof n !== 'number' || !Number.isFinite(n)) ||
      v[0] > v[1]
    ) {
      throw bad(`provider.${key} must be [min, max] with min <= max`, `provider.${key}`)
    }
  }
  return prefs
}

/** Validates the body of a chat request; throws a {@link ChatSimError}. */
export function validateChatBody(body: unknown): asserts body is Record<string, any> {
  if (!body || typeof body !== 'object' || Array.isArray(body))
    throw bad('request body must be a JSON object')
  const b = body as Record<string, any>
  if (typeof b.model !== 'string' || !b.model) throw bad('model is required', 'model')
  if (!Array.isArray(b.messages) || b.messages.length === 0) {
    throw bad('messages must be a non-empty array', 'messages')
  }
  for (const [i, m] of (b.messages as Msg[]).entries()) {
    if (!m || typeof m !== 'object') throw bad(`messages[${i}] must be an object`, `messages[${i}]`)
    const role = m.role ?? 'user'
    if (!['system', 'developer', 'user', 'assistant', 'tool'].includes(role as string)) {
      throw bad(
        `messages[${i}].role must be system, developer, user, assistant or tool`,
        `messages[${i}].role`,
      )
    }
    if (m.content === undefined && !(role === 'assistant' && m.tool_calls)) {
      throw bad(`messages[${i}].content is required`, `messages[${i}].content`)
    }
    const media = mediaProblem(m.content, i)
    if (media) throw media
    // OpenAI holds the history's calls to the rule of a function's name too
    for (const [j, call] of (Array.isArray(m.tool_calls)
      ? (m.tool_calls as Array<Record<string, any>>)
      : []
    ).entries()) {
      const problem = openAiNameProblem(call?.function?.name, `messages[${i}].tool_calls[${j}].function.name`)
      if (problem) throw problem
    }
  }
  checkRange(b, 'temperature', 0, 2)
  checkRange(b, 'top_p', 0, 1)
  checkRange(b, 'presence_penalty', -2, 2)
  if (b.top_k !== undefined && (!Number.isInteger(b.top_k) || b.top_k <= 0)) {
    throw bad('top_k must be an integer greater than 0', 'top_k')
  }
  for (const name of ['max_tokens', 'max_completion_tokens']) {
    if (b[name] !== undefined && b[name] !== null && (!Number.isInteger(b[name]) || b[name] <= 0)) {
      throw bad(`${name} must be a positive integer`, name)
    }
  }
  for (const [i, tool] of (Array.isArray(b.tools) ? (b.tools as Array<Record<string, any>>) : []).entries()) {
    const problem = openAiNameProblem(tool?.function?.name, `tools[${i}].function.name`)
    if (problem) throw problem
    // as OpenAI refuses a schema made of others at its top level (a zod union of an MCP tool)
    const p = tool?.function?.parameters
    if (p && (p.oneOf !== undefined || p.anyOf !== undefined || p.allOf !== undefined))
      throw bad(
        `Invalid schema for function '${String(tool.function.name)}': schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top level.`,
        `tools[${i}].function.parameters`,
      )
  }
  const rf = b.response_format?.type
  if (rf !== undefined && !['text', 'json_object', 'json_schema'].includes(rf)) {
    throw bad('response_format.type must be text or json_object', 'response_format.type')
  }
  providerPrefs(b)
}

// ---------------------------------------------------------------------------------------------
// Routing

export interface RouteResult {
  provider: SimProvider
  /** True when no provider passed the filters and a fallback was taken. */
  fallback: boolean
}

function sortValue(p: SimProvider, key: string): number {
  switch (key) {
    case 'input_price':
      return p.inputPrice
    case 'output_price':
      return p.outputPrice
    case 'throughput':
      return -p.throughput
    case 'latency':
      return p.latency
    case 'input_length':
      return -p.maxInputTokens
    default:
      return p.inputPrice + p.outputPrice
  }
}

function rank(list: SimProvider[], prefs: Record<string, any>): SimProvider[] {
  const order: string[] = prefs.order ?? []
  const sort: string[] = prefs.sort ?? []
  const pos = (p: SimProvider): number => {
    const i = order.indexOf(p.name)
    return i === -1 ? order.length : i
  }
  return [...list].sort((a, b) => {
    if (pos(a) !== pos(b)) return pos(a) - pos(b)
    for (const key of sort) {
      const d = sortValue(a, key) - sortValue(b, key)
      if (d !== 0) return d
    }
    return SIM_PROVIDERS.indexOf(a) - SIM_PROVIDERS.indexOf(b)
  })
}

const inRange = (value: number, range: unknown): boolean =>
  !Array.isArray(range) || (value >= range[0] && value <= range[1])

/**
 * Picks the serving provider: `only`/`ignore` scope the candidates, the ranges and the prompt
 * length filter them, `order` then `sort` rank them. When nothing fits and `allow_fallbacks`
 * (default: false when `only` is given, otherwise true), the best-ranked provider outside the
 * filters that can take the prompt answers; otherwise a 404 `no_provider_available`.
 */
export function routeProvider(model: string, prefs: Record<string, any>, promptTokens: number): RouteResult {
  const serving = SIM_PROVIDERS.filter((p) => p.models.includes(model))
  if (serving.length === 0) {
    throw new ChatSimError(
      404,
      `model "${model}" does not exist`,
      'not_found_error',
      'model_not_found',
      'model',
    )
  }
  const only: string[] | undefined = prefs.only
  const ignore: string[] = prefs.ignore ?? []
  const lengthFilter = prefs.allow_filter_prompt_length !== false
  const fits = serving.filter(
    (p) =>
      (!only || only.includes(p.name)) &&
      !ignore.includes(p.name) &&
      inRange(p.inputPrice, prefs.input_price_range) &&
      inRange(p.outputPrice, prefs.output_price_range) &&
      inRange(p.throughput, prefs.throughput_range) &&
      inRange(p.latency, prefs.latency_range) &&
      inRange(p.maxInputTokens, prefs.input_length_range) &&
      (!lengthFilter || p.maxInputTokens >= promptTokens),
  )
  if (fits.length > 0) return {provider: rank(fits, prefs)[0], fallback: false}
  const allowFallbacks = typeof prefs.allow_fallbacks === 'boolean' ? prefs.allow_fallbacks : !only
  if (allowFallbacks) {
    const others = serving.filter((p) => !ignore.includes(p.name) && p.maxInputTokens >= promptTokens)
    if (others.length > 0) return {provider: rank(others, prefs)[0], fallback: true}
  }
  throw new ChatSimError(
    404,
    `no provider of "${model}" fits the provider preferences` +
      (allowFallbacks ? '' : ' and fallbacks are off (provider.allow_fallbacks)'),
    'not_found_error',
    'no_provider_available',
    'provider',
  )
}

// ---------------------------------------------------------------------------------------------
// Answers

/** Everything an answer needs, decided before the first byte is sent. */
export interface ChatPlan {
  id: string
  created: number
  model: string
  provider: SimProvider
  reasoning: string[]
  content: string[]
  toolCall?: {id: string; name: string; arguments: string}
  /** Further calls in the same answer (quirk `parallel-tools`). */
  moreToolCalls?: Array<{id: string; name: string; arguments: string}>
  /** Quirks of the answer's wire form (upstream/quirks.ts). */
  quirks?: Quirks
  /** The request asked `tool_stream: true` (Z.AI's; read under `glm-tool-stream`). */
  toolStream?: boolean
  finishReason: 'stop' | 'length' | 'tool_calls'
  usage: {
    prompt_tokens: number
    completion_tokens: number
    total_tokens: number
    prompt_tokens_details: {cached_tokens: number}
    completion_tokens_details: {reasoning_tokens: number}
  }
  /** Index into `content` after which a mid-stream error is sent. */
  errorAfter?: number
  includeUsage: boolean
}

/** Remembers message prefixes, to report cached prompt tokens like a prompt cache. */
export class PromptCache {
  private readonly seen = new Set<string>()

  /**
   * Cached tokens of the longest prefix of `messages` an earlier request sent whole; remembers
   * this one's whole (an earlier request's own prefixes are not known by themselves). Each prefix
   * is known by a chained hash (a prefix's key hashes the key before it and its last message), so
   * a conversation costs one encoding of each message, not one of each prefix (an agent's
   * 100-message history made every request quadratic). `whole`: a request that repeats an earlier
   * one whole reads all of it (OpenAI's prompt cache, the Responses sim's `prefix-cache`); without
   * it, only a shorter prefix counts: a repeat reads only an earlier, shorter request (the chat
   * sim's count, as before).
   */
  lookup<T = Msg>(messages: T[], tokensOf: (m: T[]) => number, whole = false): number {
    const keys: string[] = []
    let key = ''
    for (const message of messages) {
      key = createHash('sha256').update(key).update(JSON.stringify(message)).digest('base64')
      keys.push(key)
    }
    let cached = 0
    for (let i = whole ? messages.length : messages.length - 1; i >= 1; i--) {
      if (this.seen.has(keys[i - 1])) {
        cached = tokensOf(messages.slice(0, i))
        break
      }
    }
    if (this.seen.size > 5000) this.seen.clear()
    if (keys.length > 0) this.seen.add(keys[keys.length - 1])
    return cached
  }
}

const words = (text: string): string[] => text.match(/\S+\s*/g) ?? []

const FILLER =
  'the simulator streams this reply word by word so that clients can show tokens as they arrive and measure time to first token and throughput'.split(
    ' ',
  )

function promptTokensOf(messages: Msg[]): number {
  return messages.reduce((n, m) => n + 4 + simTokens(contentText(m.content).text || ' '), 0)
}

let sequence = 0

/** Decides the whole answer of a validated request. */
export function planChat(
  body: Record<string, any>,
  cache: PromptCache,
  nowSeconds: number,
  options: {anyModel?: boolean; quirks?: Quirks} = {},
): ChatPlan {
  const quirks = options.quirks ?? NO_QUIRKS
  const known = SIM_CHAT_MODELS.find((m) => m.id === body.model)
  // A vendor-style upstream takes any model name and answers like sim-mini under that name.
  const model: SimChatModel =
    known ??
    (options.anyModel
      ? {id: body.model, reasoning: false, contextLength: 128_000}
      : {id: body.model, reasoning: false, contextLength: 0})
  const messages = body.messages as Msg[]
  const promptTokens = promptTokensOf(messages)
  const route = routeProvider(
    known || !options.anyModel ? body.model : 'sim-mini',
    providerPrefs(body),
    promptTokens,
  )
  const provider = route.provider
  if (promptTokens > provider.maxInputTokens) {
    throw bad(
      `prompt is ${promptTokens} tokens; provider ${provider.name} accepts at most ${provider.maxInputTokens}`,
      'messages',
      'context_length_exceeded',
    )
  }
  const last = messages[messages.length - 1]
  const lastUser = [...messages].reverse().find((m) => (m.role ?? 'user') === 'user')
  const {text: prompt, images, videos, documents} = contentText(lastUser?.content)
  const thinking = body.enable_thinking ?? body.extra_body?.enable_thinking
  const thinks =
    model.reasoning ||
    quirks.has('reasoning-content') ||
    quirks.has('reasoning-not-back') ||
    quirks.has('think-tags') ||
    quirks.has('think-open-in-prompt') ||
    quirks.has('mistral-thinking') ||
    quirks.has('reasoning-details') ||
    quirks.has('glm-tool-stream') ||
    /reasoner/i.test(model.id)
  // `template-kwargs`: vLLM, SGLang or llama.cpp serving a model that thinks unless its chat
  // template is told not to (Qwen3, GLM: `enable_thinking`; Kimi K2.5, DeepSeek: `thinking`), in
  // `chat_template_kwargs` only: a top-level switch is ignored
  const template = quirks.has('template-kwargs')
  const kwargs = body.chat_template_kwargs
  const templateOff = template && (kwargs?.enable_thinking === false || kwargs?.thinking === false)
  // DeepSeek V4, which thinks unless told `thinking: {type: "disabled"}` (its history rules are
  // not simulated here); `zai-always-thinks`, GLM-5.3, which always does
  const thinksByDefault = template
    ? !templateOff
    : (/^deepseek-v4/i.test(model.id) && body.thinking?.type !== 'disabled') ||
      quirks.has('zai-always-thinks')
  const reasoningOn =
    (thinks || thinksByDefault) &&
    (template ? !templateOff : thinking !== false) &&
    // `think-open-in-prompt`: a turn its template did not open thinking for
    !(quirks.has('think-open-in-prompt') && prompt.includes('[no-think]'))
  // `reasoning-not-back`: a server that makes reasoning and refuses it back (refusedHistory);
  // `think-tags`: its reasoning is in the content, and no field of it is asked back;
  // `reasoning-details`: OpenRouter, which asks its details back (thoughtSignatureRefusal)
  const historyProblem =
    reasoningOn &&
    thinks &&
    !quirks.has('reasoning-not-back') &&
    !quirks.has('think-tags') &&
    !quirks.has('think-open-in-prompt') &&
    !quirks.has('mistral-thinking') &&
    !quirks.has('reasoning-details')
      ? chatHistoryProblem(messages)
      : undefined
  if (historyProblem) throw bad(historyProblem, 'messages')
  const snippet = withoutTextOnlyWords(prompt).replace(/\s+/g, ' ').trim().slice(0, 60)
  // the user's request itself: the last paragraph (an agent's context, Codex's
  // `<environment_context>`, comes before it in the same message on a translated route)
  const request =
    prompt
      .trim()
      .split(/\n\s*\n/)
      .at(-1) ?? ''
  const lengthMatch = /\[words=(\d+)\]/.exec(prompt)

  // a tool's result whose media follow it in a user message of their own (a translated Claude Code
  // turn: its Read of a PDF or an image), answered as the result itself
  const mediaAfterTool = toolResultWithMedia(messages)
  // `tool-search`: Claude Code follows its ToolSearch result with words of its own ("Tool
  // loaded."), in a user message after the tool message: that result is answered too
  const lastTool = quirks.has('tool-search') ? messages.findLastIndex((m) => m.role === 'tool') : -1
  const toolThenWords =
    lastTool >= 0 && messages.slice(lastTool + 1).every((m) => (m.role ?? 'user') === 'user')
      ? messages[lastTool]
      : undefined
  let text: string
  if ((last.role ?? 'user') === 'tool' || toolThenWords) {
    text = `The tool answered: ${contentText((toolThenWords ?? last).content).text.slice(0, 200)}`
  } else if (mediaAfterTool) {
    const seen = [
      images ? `${images} image${images > 1 ? 's' : ''}` : '',
      documents ? `${documents} document${documents > 1 ? 's' : ''}` : '',
    ]
      .filter(Boolean)
      .join(' and ')
    text =
      `The tool answered: ${contentText(mediaAfterTool.tool.content).text.slice(0, 200)}.` +
      (seen ? ` I received ${seen}.` : '') +
      (mediaAfterTool.notes ? ` I was told: ${mediaAfterTool.notes}` : '')
  } else if (lengthMatch) {
    const n = Math.min(2000, Math.max(1, Number(lengthMatch[1])))
    text = Array.from({length: n}, (_, i) => FILLER[i % FILLER.length]).join(' ') + '.'
  } else {
    const seen = [
      images ? `${images} image${images > 1 ? 's' : ''}` : '',
      videos ? `${videos} video${videos > 1 ? 's' : ''}` : '',
      documents ? `${documents} document${documents > 1 ? 's' : ''}` : '',
    ]
      .filter(Boolean)
      .join(' and ')
    text =
      `Hello from ${provider.name}! You said: "${snippet}".` +
      (seen ? ` I received ${seen}.` : '') +
      ` This is a simulated reply of ${model.id}.`
  }
  // a system prompt that asks for JSON (of a schema) is followed as a model follows it: what the
  // gateway sends where the schema or JSON mode was refused (DeepSeek, o1-mini)
  const asked = jsonAskedBySystem(body.messages)
  if (body.response_format?.type === 'json_schema') {
    // a minimal value that fits the schema, as the vendor upstreams of the simulator answer
    text = JSON.stringify(instanceOf(body.response_format.json_schema?.schema))
  } else if (asked?.schema !== undefined) {
    text = JSON.stringify(instanceOf(asked.schema))
  } else if (body.response_format?.type === 'json_object' || asked) {
    text = JSON.stringify({reply: text, provider: provider.name, model: model.id})
  }
  let reasoning = reasoningOn
    ? words(
        `Let me think about "${snippet.slice(0, 30)}". The user wants a short answer, so I will keep it brief.`,
      )
    : []
  let content = words(text)
  // `split-surrogate`: an emoji at the end of the text and of the reasoning, its pair split
  // across two chunks of a stream (joined whole in a JSON answer)
  if (quirks.has('split-surrogate')) {
    reasoning = splitSurrogatePieces(reasoning)
    content = splitSurrogatePieces(content)
  }

  let toolCall: ChatPlan['toolCall']
  let moreToolCalls: ChatPlan['moreToolCalls']
  const tools = Array.isArray(body.tools) ? body.tools : []
  const toolNames = tools.map((t: any) => t?.function?.name)
  // text, not a call, under `tool_choice: "none"` or when the user's last words ask for text only
  // (an agent's compaction prompt, with its tools still offered: Claude Code's `/compact`), unless
  // the tool choice forces a call
  const forcesCall = body.tool_choice === 'required' || typeof body.tool_choice?.function?.name === 'string'
  const textOnly = body.tool_choice === 'none' || (!forcesCall && textAsked(prompt))
  // the tool message answered: the last message, or the one before a user message holding only
  // the result's media (a translated tool result with an image: Claude Code's Read of a PNG)
  const answeredTool = last.role === 'tool' ? last : mediaAfterTool?.tool
  // the user's words the chain reads: after a result's media, those before the tool message
  const chainWords =
    answeredTool && answeredTool !== last
      ? contentText(
          messages.slice(0, messages.indexOf(answeredTool)).findLast((m) => (m.role ?? 'user') === 'user')
            ?.content,
        ).text
      : prompt
  // `tool-search`: after Codex's search (its `tool_search` function) loaded the tools, the loaded
  // tool the user's words name is called, not the result answered; `named-tool`: the next tool
  // the words name after the one answered
  const loaded =
    (quirks.has('tool-search') || quirks.has('named-tool')) && answeredTool && !textOnly
      ? pickedTool(
          toolNames,
          chainWords,
          quirks,
          String(
            messages
              .flatMap((m: any) => (Array.isArray(m.tool_calls) ? m.tool_calls : []))
              .findLast((c: any) => c?.id === answeredTool.tool_call_id)?.function?.name,
          ),
        )
      : undefined
  if (
    tools.length > 0 &&
    !textOnly &&
    (((last.role ?? 'user') === 'user' && !mediaAfterTool && !toolThenWords) || loaded)
  ) {
    // `read-path`: the last absolute path of the user's words for the tool's path argument (an
    // agent's context, its work folder, comes before the prompt)
    const path = quirks.has('read-path')
      ? [...prompt.matchAll(/(?:^|\s)(\/[^\s"'`]+)/g)].at(-1)?.[1]
      : undefined
    // `named`: a tool the user's words picked, called as a model does that means to call it
    // (`namedArgs`: its required properties, each a value of its type: Claude Code's WebSearch
    // refuses a string for its optional domain lists, Codex's spawn_agent a task name of any
    // other characters than lowercase letters, digits and underscores)
    const callOf = (tool: any, named = false): {name: string; args: Record<string, unknown>} => {
      const fn = tool?.function ?? {}
      const schemas = (fn.parameters?.properties ?? {}) as Record<string, any>
      const required: unknown = fn.parameters?.required
      const props =
        named && Array.isArray(required) && required.length > 0
          ? Object.keys(schemas).filter((key) => required.includes(key))
          : Object.keys(schemas)
      const args: Record<string, unknown> = {}
      const pathProps = path ? props.filter((key) => /path$/i.test(key)) : []
      if (path && pathProps.length > 0) for (const key of pathProps) args[key] = path
      else if (named) Object.assign(args, namedArgs(fn.parameters, request))
      else
        for (const key of props)
          // `python-literal-args`: a boolean property true, so that the call has a literal to write
          args[key] =
            quirks.has('python-literal-args') && schemas[key]?.type === 'boolean'
              ? true
              : snippet.slice(0, 20) || 'value'
      return {name: String(fn.name ?? 'tool'), args}
    }
    // a function the `tool_choice` names is the one called, as a model must; else `tool-search`
    // and `named-tool`: the tool the user's words pick (ToolSearch loading a deferred tool, as a
    // model does that needs one; a tool named by `tool:NAME`) instead of the first
    const forcedName = body.tool_choice?.function?.name
    const forced =
      typeof forcedName === 'string' && toolNames.includes(forcedName)
        ? {name: forcedName, args: undefined}
        : undefined
    const picked = loaded ?? forced ?? pickedTool(toolNames, prompt, quirks)
    const [first, ...more] = picked
      ? [
          picked.args
            ? {name: picked.name, args: picked.args}
            : callOf(
                tools.find((t: any) => t?.function?.name === picked.name),
                true,
              ),
        ]
      : quirkCalls(callOf(tools[0]), tools[1] ? callOf(tools[1]) : undefined, quirks)
    // (`kimi-ids`: Kimi K3's `{name}:{position}`, from 0 on every answer)
    const withId = (call: {name: string; args: unknown}, position: number) => ({
      id: quirks.has('kimi-ids') ? `${call.name}:${position}` : `call_${(++sequence).toString(36)}`,
      name: call.name,
      arguments: quirks.has('empty-args') ? '' : brokenArgsText(call.args, quirks),
    })
    toolCall = withId(first, 0)
    if (more.length > 0) moreToolCalls = more.map((call, i) => withId(call, i + 1))
    content = []
  }

  let finishReason: ChatPlan['finishReason'] = toolCall ? 'tool_calls' : 'stop'
  const limit = body.max_completion_tokens ?? body.max_tokens
  let reasoningOut = reasoning
  if (typeof limit === 'number' && !toolCall && reasoning.length + content.length > limit) {
    reasoningOut = reasoning.slice(0, limit)
    content = content.slice(0, Math.max(0, limit - reasoningOut.length))
    finishReason = 'length'
  }
  const toolTokens = [toolCall, ...(moreToolCalls ?? [])].reduce(
    (n, call) => n + (call ? simTokens(call.name + call.arguments) : 0),
    0,
  )
  const completion = reasoningOut.length + content.length + toolTokens
  const cached = cache.lookup(messages, promptTokensOf)
  // `ollama-truncate`: Ollama's count of what it kept of a prompt past its context, no cache
  const reported = ollamaReportedPrompt(quirks, promptTokens)
  return {
    id: `chatcmpl-sim${(++sequence).toString(36)}${Math.floor(nowSeconds).toString(36)}`,
    created: Math.floor(nowSeconds),
    model: model.id,
    provider,
    reasoning: reasoningOut,
    content,
    toolCall,
    ...(moreToolCalls ? {moreToolCalls} : {}),
    ...(quirks.size > 0 ? {quirks} : {}),
    ...(body.tool_stream === true ? {toolStream: true} : {}),
    finishReason,
    usage: {
      prompt_tokens: reported ?? promptTokens,
      completion_tokens: completion,
      total_tokens: (reported ?? promptTokens) + completion,
      prompt_tokens_details: {cached_tokens: reported === undefined ? cached : 0},
      completion_tokens_details: {reasoning_tokens: reasoningOut.length},
    },
    errorAfter: prompt.includes('[error-mid-stream]')
      ? Math.max(1, Math.floor(content.length / 2))
      : undefined,
    includeUsage: body.stream_options?.include_usage === true,
  }
}

/** Where an answer's reasoning goes: `reasoning` for a Cerebras-like server (`reasoning-not-back`). */
function reasoningField(plan: ChatPlan): 'reasoning' | 'reasoning_content' {
  return plan.quirks?.has('reasoning-not-back') || plan.quirks?.has('reasoning-details')
    ? 'reasoning'
    : 'reasoning_content'
}

type PlannedCall = NonNullable<ChatPlan['toolCall']>

/** `reasoning-details`: OpenRouter's item of a Gemini call's thought signature. */
const encryptedDetail = (call: PlannedCall, index: number): Record<string, unknown> => ({
  type: 'reasoning.encrypted',
  data: chatCallSignature(call.name, call.arguments),
  id: call.id,
  format: GEMINI_DETAILS_FORMAT,
  index,
})

/** `reasoning-details`: OpenRouter's item of a piece of reasoning text. */
const textDetail = (text: string): Record<string, unknown> => ({
  type: 'reasoning.text',
  text,
  format: GEMINI_DETAILS_FORMAT,
  index: 0,
})

/** `extra-content`: Google's thought signature on a call (the first of a turn's, as Gemini signs). */
const extraContent = (call: PlannedCall): Record<string, unknown> => ({
  google: {thought_signature: chatCallSignature(call.name, call.arguments)},
})

/** The non-stream `chat.completion` object. */
export function completionObject(plan: ChatPlan, withProvider: boolean): Record<string, unknown> {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: plan.toolCall ? null : plan.content.join(''),
    refusal: null,
  }
  // `think-tags`: the reasoning at the start of the content (of a tool call's turn too)
  if (plan.reasoning.length > 0 && plan.quirks?.has('think-tags'))
    message.content = thinkTagPieces(plan.reasoning).join('') + ((message.content as string | null) ?? '')
  else if (plan.reasoning.length > 0 && plan.quirks?.has('think-open-in-prompt'))
    message.content = promptThinkPieces(plan.reasoning).join('') + ((message.content as string | null) ?? '')
  else if (plan.reasoning.length > 0 && plan.quirks?.has('mistral-thinking')) {
    // Mistral's: the content an array of a thinking chunk and a text chunk (the thinking alone
    // beside tool calls)
    const text = message.content as string | null
    message.content = [
      mistralThinking(plan.reasoning.join(''), true),
      ...(text ? [{type: 'text', text}] : []),
    ]
  } else if (plan.reasoning.length > 0) message[reasoningField(plan)] = plan.reasoning.join('')
  if (plan.quirks?.has('reasoning-details')) {
    const details = plan.reasoning.length > 0 ? [textDetail(plan.reasoning.join(''))] : []
    if (plan.toolCall) details.push(encryptedDetail(plan.toolCall, details.length))
    if (details.length > 0) message.reasoning_details = details
  }
  if (plan.toolCall) {
    message.tool_calls = [plan.toolCall, ...(plan.moreToolCalls ?? [])].map((call, i) => ({
      id: call.id,
      type: 'function',
      function: {
        name: call.name,
        arguments: plan.quirks?.has('object-args') ? objectArgs(call.arguments) : call.arguments,
      },
      ...(i === 0 && plan.quirks?.has('extra-content') ? {extra_content: extraContent(call)} : {}),
    }))
  }
  return {
    id: plan.id,
    object: 'chat.completion',
    created: plan.created,
    model: plan.model,
    ...(withProvider ? {provider: plan.provider.name} : {}),
    choices: [{index: 0, message, logprobs: null, finish_reason: wireFinish(plan)}],
    ...(plan.quirks?.has('no-usage')
      ? {}
      : {usage: plan.quirks?.has('usage-in-choice') ? moonshotUsage(plan.usage) : plan.usage}),
  }
}

/**
 * The `finish_reason` an answer says: none (`no-finish-reason`), Z.ai's `network_error`
 * (`broken-finish`) or `sensitive` (`vendor-finish`) in place of any, else the plan's.
 */
function wireFinish(plan: ChatPlan): string | null {
  const quirks = plan.quirks ?? NO_QUIRKS
  if (quirks.has('no-finish-reason')) return null
  if (quirks.has('broken-finish')) return 'network_error'
  if (quirks.has('vendor-finish')) return 'sensitive'
  return plan.finishReason
}

/** The SSE events of a streamed answer, `[DONE]` included (or the error event instead). */
export function completionChunks(plan: ChatPlan, withProvider: boolean): SseEvent[] {
  const base = (): Record<string, unknown> => ({
    id: plan.id,
    object: 'chat.completion.chunk',
    created: plan.created,
    model: plan.model,
    ...(withProvider ? {provider: plan.provider.name} : {}),
  })
  const quirks = plan.quirks ?? NO_QUIRKS
  // a server that ignores `stream_options.include_usage` (quirk `no-usage`) never names usage
  const noUsage = quirks.has('no-usage')
  const usageNull = plan.includeUsage && !noUsage ? {usage: null} : {}
  // `empty-delta-role`: every delta after the first with `"role": ""` (a server's struct whose
  // role is written even when it has none)
  const emptyRole = quirks.has('empty-delta-role')
  // `empty-finish`: `"finish_reason": ""` on every chunk before the one that finishes
  const notYet = quirks.has('empty-finish') ? '' : null
  const chunk = (delta: Record<string, unknown>, finish: string | null = notYet): SseEvent => ({
    data: {
      ...base(),
      choices: [
        {
          index: 0,
          delta: emptyRole && delta.role === undefined ? {role: '', ...delta} : delta,
          logprobs: null,
          finish_reason: finish,
        },
      ],
      ...usageNull,
    },
  })
  const events: SseEvent[] = [chunk({role: 'assistant', content: ''})]
  if (plan.reasoning.length > 0 && quirks.has('think-tags'))
    for (const piece of thinkTagPieces(plan.reasoning)) events.push(chunk({content: piece}))
  else if (plan.reasoning.length > 0 && quirks.has('think-open-in-prompt'))
    for (const piece of promptThinkPieces(plan.reasoning)) events.push(chunk({content: piece}))
  else if (plan.reasoning.length > 0 && quirks.has('mistral-thinking'))
    for (const piece of plan.reasoning) events.push(chunk({content: [mistralThinking(piece)]}))
  else if (quirks.has('reasoning-details'))
    // OpenRouter's: each piece in `reasoning` and as a piece of the text item (index 0)
    for (const piece of plan.reasoning)
      events.push(chunk({reasoning: piece, reasoning_details: [textDetail(piece)]}))
  else for (const piece of plan.reasoning) events.push(chunk({[reasoningField(plan)]: piece}))
  if (plan.toolCall) {
    const calls = [plan.toolCall, ...(plan.moreToolCalls ?? [])]
    // `object-args`: the whole object on the call's first chunk, no argument deltas after it
    const whole = quirks.has('object-args')
    // `glm-tool-stream`: Z.AI's GLM-4.6 on, whose calls' arguments stream only when asked
    const glm = quirks.has('glm-tool-stream')
    const held = glm && !plan.toolStream
    if (quirks.has('no-tool-index'))
      // Gemini's: each call whole in one delta, id, name and arguments, no index
      for (const {id, name, arguments: args} of calls)
        events.push(chunk({tool_calls: [{id, type: 'function', function: {name, arguments: args}}]}))
    else if (held)
      // not asked: each call whole in one delta at the end, after as long a silence as its
      // arguments took to write
      for (const [index, {id, name, arguments: args}] of calls.entries())
        events.push(chunk({tool_calls: [{index, id, type: 'function', function: {name, arguments: args}}]}))
    else
      for (const [index, call] of calls.entries()) {
        const {id, name, arguments: args} = call
        const first = index === 0
        // asked: the first call's head in the delta of the last piece of reasoning, beside it
        const field = reasoningField(plan)
        const before = (events.at(-1)?.data as {choices?: Array<{delta?: Record<string, unknown>}>})
          .choices?.[0]?.delta
        const beside =
          first && glm && plan.reasoning.length > 0 && before?.[field] === plan.reasoning.at(-1)
            ? (events.pop(), {[field]: plan.reasoning.at(-1)})
            : {}
        events.push(
          chunk({
            ...beside,
            tool_calls: [
              {
                index,
                // GLM's, NVIDIA NIM's, vLLM's gpt-oss: the call opened without its id
                ...(quirks.has('no-tool-call-id') ? {} : {id}),
                type: 'function',
                function: {name, arguments: whole ? objectArgs(args) : ''},
                // Google's: the signature on the call's first delta
                ...(first && quirks.has('extra-content') ? {extra_content: extraContent(call)} : {}),
              },
            ],
            // OpenRouter's: the call's signature beside the call's first delta
            ...(first && quirks.has('reasoning-details')
              ? {reasoning_details: [encryptedDetail(call, plan.reasoning.length > 0 ? 1 : 0)]}
              : {}),
          }),
        )
      }
    const bySize = (args: string): string[] => args.match(/[\s\S]{1,8}/g) ?? []
    const pieces =
      whole || held || quirks.has('no-tool-index')
        ? []
        : calls.map((call) => argsPieces(call.arguments, quirks, bySize))
    if (quirks.has('shifted-index')) {
      // DeepSeek V4's (agno #8879): one call after the other, each call's head at the index of the
      // call before it (the first at 0), its arguments at its own index
      const heads = events.splice(events.length - calls.length, calls.length)
      for (const [index, head] of heads.entries()) {
        type Head = {choices: Array<{delta: {tool_calls: Array<{index: number}>}}>}
        ;(head.data as Head).choices[0].delta.tool_calls[0].index = Math.max(index - 1, 0)
        events.push(head)
        for (const piece of pieces[index] ?? [])
          events.push(chunk({tool_calls: [{index, function: {arguments: piece}}]}))
      }
    } else
      // One call: its pieces in order; parallel calls: interleaved by index (0, 1, 0, 1, ...).
      for (let i = 0; pieces.some((list) => i < list.length); i++)
        for (const [index, list] of pieces.entries())
          if (i < list.length) events.push(chunk({tool_calls: [{index, function: {arguments: list[i]}}]}))
  }
  for (const [i, piece] of plan.content.entries()) {
    if (plan.errorAfter !== undefined && i === plan.errorAfter) {
      events.push({
        data: {
          error: {
            message: `provider ${plan.provider.name} failed mid-stream (simulated by [error-mid-stream])`,
            type: 'api_error',
            param: null,
            code: 'provider_stream_error',
          },
        },
      })
      return events
    }
    // `mistral-thinking`: the first text piece as a text chunk, the rest as strings (as Mistral)
    events.push(
      chunk({content: i === 0 && quirks.has('mistral-thinking') ? [{type: 'text', text: piece}] : piece}),
    )
  }
  const finish = wireFinish(plan)
  if (quirks.has('usage-in-choice') && !noUsage) {
    // Moonshot's: on the finish chunk's choice, with or without `include_usage`, in its shape
    const choice = {index: 0, delta: {}, finish_reason: finish, usage: moonshotUsage(plan.usage)}
    events.push({data: {...base(), choices: [choice]}})
  } else if (quirks.has('usage-last') && !noUsage) {
    const last = chunk({}, finish)
    events.push({data: {...(last.data as Record<string, unknown>), usage: plan.usage}})
  } else {
    if (finish) events.push(chunk({}, finish))
    if (plan.includeUsage && !noUsage) events.push({data: {...base(), choices: [], usage: plan.usage}})
  }
  if (quirks.has('obfuscation'))
    for (const [i, event] of events.entries())
      event.data = {...(event.data as Record<string, unknown>), obfuscation: obfuscationPad(plan.id, i)}
  if (!quirks.has('no-terminal')) events.push({data: '[DONE]'})
  return events
}

// ---------------------------------------------------------------------------------------------
// Handlers

export interface ChatMountOptions {
  /** Add the `provider` extension (platform mount) or not (vendor-style upstream). */
  providerField: boolean
  /** Check `Authorization: Bearer` here (mounts outside `/api/v1`, which the server checks). */
  checkAuth: boolean
  /** Accept any model name (answering like sim-mini), as a stand-in for a vendor's API. */
  anyModel?: boolean
  /** Prompt cache, shared between mounts of one simulator (default: one per handler). */
  cache?: PromptCache
}

/** The schemas of a chat request's function tools, in order. */
function functionSchemas(tools: unknown): unknown[] {
  if (!Array.isArray(tools)) return []
  return (tools as Array<{type?: unknown; function?: {parameters?: unknown}} | null>)
    .filter((t) => t?.type === 'function')
    .map((t) => t?.function?.parameters)
}

/**
 * `openrouter-errors`: a provider's 400 as OpenRouter relays it, its own "Provider returned
 * error" with the provider's body as text in `metadata.raw` (the provider named Alibaba: DashScope
 * behind OpenRouter). Another status goes as it was.
 */
function openRouterWrapped(error: ChatSimError): ChatSimError {
  if (error.status !== 400) return error
  const message = 'Provider returned error'
  return new ChatSimError(400, message, error.type, null, null, {
    error: {message, code: 400, metadata: {raw: JSON.stringify(error.body()), provider_name: 'Alibaba'}},
    user_id: 'user_sim',
  })
}

function sendChatError(request: SimRequest, error: ChatSimError): void {
  sendJson(request.res, error.status, error.body())
}

/**
 * Quirk `stream-errors`: a streamed request refused as LM Studio refuses it, a 200 event stream of
 * one `event: error` holding the error body, then its end (lmstudio-bug-tracker #2322; nugget/
 * thane-ai-agent #1395: "the streaming call answers 200, opens the stream, and delivers the reason
 * as an `event: error` frame").
 */
function sendStreamedError(request: SimRequest, error: ChatSimError): void {
  request.res.writeHead(200, {'content-type': 'text/event-stream', 'cache-control': 'no-cache'})
  request.res.end(`event: error\ndata: ${JSON.stringify(error.body())}\n\n`)
}

function authorized(context: SimContext, request: SimRequest): boolean {
  const key = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1]?.trim()
  if (key && (context.options.apiKey === undefined || key === context.options.apiKey)) return true
  sendChatError(
    request,
    new ChatSimError(
      401,
      key ? 'Incorrect API key provided.' : 'Missing Authorization: Bearer <API_KEY>.',
      'invalid_request_error',
      'invalid_api_key',
    ),
  )
  return false
}

/** `POST …/chat/completions`, for any mount point. */
export function chatCompletionsHandler(context: SimContext, options: ChatMountOptions): SimHandler {
  const cache = options.cache ?? new PromptCache()
  return async (request) => {
    if (options.checkAuth && !authorized(context, request)) return
    let plan: ChatPlan
    let body: Record<string, any>
    let relayed = false
    let inStream = false
    try {
      const raw = request.body as Record<string, any> | undefined
      const selection = selectQuirks(request.headers, raw?.model)
      relayed = selection.quirks.has('openrouter-errors')
      inStream = selection.quirks.has('stream-errors') && raw?.stream === true
      if (selection.unknown.length > 0) throw bad(unknownQuirkMessage(selection.unknown))
      body = raw && typeof raw === 'object' && !Array.isArray(raw) ? {...raw, model: selection.model} : raw!
      // a text-only model refuses media before anything else (DeepSeek's deserializer)
      const media = raw && typeof raw === 'object' ? refusedMedia(body, selection.quirks) : undefined
      if (media) throw new ChatSimError(media.status, media.message, media.type, media.code, null, media.raw)
      validateChatBody(body)
      const tooMany = toolCapRefusal(
        'chat',
        Array.isArray(body.tools) ? body.tools.length : 0,
        selection.quirks,
      )
      if (tooMany)
        throw new ChatSimError(
          tooMany.status,
          tooMany.message,
          'invalid_request_error',
          null,
          'tools',
          tooMany.raw,
        )
      const overflow = contextRefusal(body, selection.quirks, promptTokensOf(body.messages as Msg[]))
      if (overflow) throw bad(overflow, null, 'invalid_request_error')
      const words = contextWordsRefusal(selection.quirks, promptTokensOf(body.messages as Msg[]))
      if (words)
        throw new ChatSimError(words.status, words.message, 'invalid_request_error', null, null, words.raw)
      const strict = selection.quirks.has('strict-fields') ? strictFieldsProblem(body) : undefined
      if (strict) throw bad(strict)
      const extras = extraInputs(body, selection.quirks)
      if (extras)
        throw new ChatSimError(
          422,
          'Extra inputs are not permitted',
          'invalid_request_error',
          null,
          null,
          extras,
        )
      const refused = unsupportedParameter(body, selection.quirks)
      if (refused)
        throw new ChatSimError(400, refused.message, 'invalid_request_error', refused.code, refused.param)
      const kimi = kimiRefusal(body, selection.quirks, selection.model)
      if (kimi) throw new ChatSimError(400, kimi.message, 'invalid_request_error', null, null, kimi.raw)
      const unsigned = thoughtSignatureRefusal(body, selection.quirks)
      if (unsigned)
        throw new ChatSimError(400, unsigned.message, 'invalid_request_error', null, null, unsigned.raw)
      // `gemini-schema`: Google's OpenAI-compatible endpoint, its error bodies in a list
      const schema = geminiSchemaRefusal(functionSchemas(body.tools), selection.quirks)
      if (schema) {
        const error = {code: 400, message: schema, status: 'INVALID_ARGUMENT'}
        throw new ChatSimError(400, schema, 'invalid_request_error', null, null, [{error}])
      }
      const thinking = thinkingRefusal(body, selection.model, selection.quirks)
      if (thinking)
        throw new ChatSimError(
          thinking.status,
          thinking.message,
          'invalid_request_error',
          null,
          null,
          thinking.raw,
        )
      const args = argumentsRefusal(body, selection.quirks)
      if (args)
        throw new ChatSimError(args.status, args.message, 'invalid_request_error', null, null, args.raw)
      const choice = toolChoiceRefusal(body, selection.quirks, selection.model)
      if (choice)
        throw new ChatSimError(choice.status, choice.message, 'invalid_request_error', null, null, choice.raw)
      const history = refusedHistory(body, selection.quirks)
      if (history)
        throw new ChatSimError(
          history.status ?? 400,
          history.message,
          history.type,
          history.code,
          history.param,
          history.raw,
        )
      plan = planChat(body, cache, context.clock.now() / 1000, {
        anyModel: options.anyModel,
        quirks: selection.quirks,
      })
    } catch (error) {
      if (error instanceof ChatSimError) {
        const refusal = relayed ? openRouterWrapped(error) : error
        return inStream ? sendStreamedError(request, refusal) : sendChatError(request, refusal)
      }
      throw error
    }
    const scale = context.options.timeScale
    const timeout = body.extra_body?.timeout
    if (typeof timeout === 'number' && timeout > 0 && plan.provider.latency > timeout) {
      await sleep((timeout * 1000) / scale)
      return sendChatError(
        request,
        new ChatSimError(
          504,
          `provider ${plan.provider.name} sent no first token within ${timeout} s (extra_body.timeout)`,
          'timeout_error',
          'first_token_timeout',
        ),
      )
    }
    // Time to first token, then one chunk per 1/throughput seconds, sped up by the time scale.
    // Below a millisecond a timer would still wait ~1 ms: skip it (benchmarks run at a huge time scale).
    const firstTokenMs = (plan.provider.latency * 1000) / scale
    if (firstTokenMs >= 1) await sleep(firstTokenMs)
    const headers = {'x-request-id': `req_${plan.id}`}
    if (body.stream === true) {
      await sendSse(request.res, completionChunks(plan, options.providerField), {
        fault: context.fault(request),
        headers,
        delayMs: 1000 / plan.provider.throughput / scale,
      })
      return
    }
    if (plan.errorAfter !== undefined) {
      return sendChatError(
        request,
        new ChatSimError(
          502,
          `provider ${plan.provider.name} failed (simulated by [error-mid-stream])`,
          'api_error',
          'provider_error',
        ),
      )
    }
    sendJson(request.res, 200, completionObject(plan, options.providerField), headers)
  }
}

/**
 * `GET …/models`: `{object:"list", data:[{id, object:"model", created, owned_by, context_length,
 * reasoning, providers:[{name, input_price, output_price, throughput, latency, max_input_tokens}]}]}`.
 * The vendor-style mount leaves out the extensions.
 */
export function modelsHandler(
  context: SimContext,
  options: Pick<ChatMountOptions, 'providerField' | 'checkAuth'>,
): SimHandler {
  return (request) => {
    if (options.checkAuth && !authorized(context, request)) return
    const created = 1_760_000_000
    const data = SIM_CHAT_MODELS.map((m) => ({
      id: m.id,
      object: 'model',
      created,
      owned_by: 'sim',
      ...(options.providerField
        ? {
            context_length: m.contextLength,
            reasoning: m.reasoning,
            providers: SIM_PROVIDERS.filter((p) => p.models.includes(m.id)).map((p) => ({
              name: p.name,
              input_price: p.inputPrice,
              output_price: p.outputPrice,
              throughput: p.throughput,
              latency: p.latency,
              max_input_tokens: p.maxInputTokens,
            })),
          }
        : {}),
    }))
    sendJson(request.res, 200, {object: 'list', data})
  }
}

export const chatModule: SimModule = {
  name: 'chat',
  register(router, context) {
    const cache = new PromptCache()
    for (const prefix of [SIM_API_PREFIX + '/chat', SIM_API_PREFIX + '/models', '/v1/chat', '/v1/models']) {
      context.errorFormat(prefix, openAiErrorBody)
    }
    const platform = {providerField: true, checkAuth: false, cache}
    const vendor = {providerField: false, checkAuth: true, anyModel: true, cache}
    router.add('POST', SIM_API_PREFIX + '/chat/completions', chatCompletionsHandler(context, platform))
    router.add('GET', SIM_API_PREFIX + '/models', modelsHandler(context, platform))
    router.add('POST', '/v1/chat/completions', chatCompletionsHandler(context, vendor))
    router.add('GET', '/v1/models', modelsHandler(context, vendor))
  },
}

/**
 * A system message's instruction to answer one JSON object ("Respond with one JSON object only",
 * then, for a schema, "that matches this JSON schema:" and the schema's JSON), or undefined.
 */
function jsonAskedBySystem(messages: unknown): {schema?: unknown} | undefined {
  if (!Array.isArray(messages)) return undefined
  for (const m of messages) {
    if (!m || (m.role !== 'system' && m.role !== 'developer')) continue
    const text =
      typeof m.content === 'string'
        ? m.content
        : Array.isArray(m.content)
          ? m.content.map((p: {text?: unknown}) => (typeof p?.text === 'string' ? p.text : '')).join('\n')
          : ''
    const at = text.indexOf('Respond with one JSON object only')
    if (at < 0) continue
    const schema = /matches this JSON schema:\n(.*)/.exec(text.slice(at))?.[1]
    if (schema === undefined) return {}
    try {
      return {schema: JSON.parse(schema)}
    } catch {
      return {}
    }
  }
  return undefined
}
