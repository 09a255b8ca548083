/**
 * The body of a request to an Anthropic Messages upstream, from the IR: the rules that keep a
 * translated request from being refused (turn order, thinking blocks, sampling settings, a
 * required `max_tokens`) and the prompt-cache breakpoints a client of another family never set.
 */
import type {Json} from './cm-common.js'
import {argsObject, budgetEffort, budgetWithin, effortBudget} from './cm-common.js'
import type {
  CodecContext,
  ImagePart,
  Message,
  Request,
  TextPart,
  ThinkingForm,
  ThinkingOff,
  ToolChoice,
  ToolResultPart,
  WebSearchTool,
} from './ir.js'
import type {ImageNotes} from './images.js'
import {ENCODER_NOTES, fitImage, imageNote} from './images.js'
import {parseJsonBytes} from './json-bytes.js'
import {
  DEFAULT_MAX_TOKENS,
  defaultMaxTokens,
  documentText,
  isDocument,
  jsonInstructionText,
  omittedFileText,
} from './ir.js'
import {objectTools} from './tool-schemas.js'
import {withEmptyThinking} from './thinking-history.js'

/** Anthropic's smallest thinking budget. */
export const MIN_BUDGET = 1024

/**
 * A `max_tokens` beside thinking the client did not ask for, Anthropic's least budget (a model
 * that takes thinking only on: `thinkingOff: least_budget`): raised by the budget where it is
 * under twice the budget, so that the answer keeps at least the budget's room, or the room the
 * client gave it (the budget is counted in `max_tokens`); also ../daemon/router/top-fields.ts
 * `withLeastThinking` and ./translate.ts `leastThinking`.
 */
export const maxTokensBeside = (maxTokens: number): number =>
  maxTokens < 2 * MIN_BUDGET ? maxTokens + MIN_BUDGET : maxTokens

/** The sampling settings that do not go beside thinking (Kimi's thinking models take temperature 1 only). */
export const SAMPLING_FIELDS: readonly string[] = ['temperature', 'top_p', 'top_k']

/** Anthropic tool ids must match `^[a-zA-Z0-9_-]+$` (Kimi's `functions.f:0` does not). */
const VALID_ID = /^[a-zA-Z0-9_-]+$/
const toolId = (id: string): string =>
  VALID_ID.test(id) ? id : id.replace(/[^a-zA-Z0-9_-]/g, '_') || 'toolu_0'

/**
 * Whether a text has something to say. Anthropic refuses a text block of whitespace alone ("text
 * content blocks must contain non-whitespace text", in `messages` and in `system`), which a chat
 * or Responses history holds after a model answered only "\n\n" or a client sent " ": such a
 * block goes like an empty one. (The test stops at the first character that is not a space: one
 * step for ordinary text.)
 */
const said = (text: string): boolean => /\S/.test(text)

const cacheControl = (cache: TextPart['cache']): Json | undefined =>
  cache === '1h' ? {type: 'ephemeral', ttl: '1h'} : cache ? {type: 'ephemeral'} : undefined

function textBlock(p: TextPart): Json {
  const cc = cacheControl(p.cache)
  // a Messages client's own block (a `search_result`) goes as it came, with the part's cache mark
  if (p.native?.family === 'messages' && p.native.raw !== null && typeof p.native.raw === 'object') {
    const {cache_control: _, ...raw} = p.native.raw as Json
    return cc ? {...raw, cache_control: cc} : raw
  }
  return {type: 'text', text: p.text, ...(cc ? {cache_control: cc} : {})}
}

/**
 * An image block, or a document's: a PDF as `document` (base64 or URL), a text file as a plain
 * text document; another type (audio, a spreadsheet) has no Messages form: a line that says what
 * was there (`omittedFileText`). A base64 image goes with the type its bytes say, or as such a
 * line when Anthropic takes no image of its type or size (images.ts).
 */
function imageBlock(p: ImagePart, notes: ImageNotes): Json {
  if (!isDocument(p)) {
    if (p.data === undefined) return {type: 'image', source: {type: 'url', url: p.url ?? ''}}
    const fit = fitImage(p as ImagePart & {data: string}, 'messages', notes)
    if (fit.text !== undefined) return {type: 'text', text: fit.text}
    return {type: 'image', source: {type: 'base64', media_type: fit.mediaType, data: p.data}}
  }
  const title = p.name ? {title: p.name} : {}
  const text = documentText(p)
  if (text !== undefined)
    return {type: 'document', source: {type: 'text', media_type: 'text/plain', data: text}, ...title}
  if (p.mediaType !== 'application/pdf')
    return {type: 'text', text: omittedFileText(p, 'Anthropic takes PDF and text documents only')}
  return {
    type: 'document',
    source:
      p.data !== undefined
        ? {type: 'base64', media_type: 'application/pdf', data: p.data}
        : {type: 'url', url: p.url ?? ''},
    ...title,
  }
}

function toolResultBlock(p: ToolResultPart, notes: ImageNotes): Json {
  const content: Json[] = []
  for (const c of p.content)
    if (c.type === 'image') content.push(imageBlock(c, notes))
    // (the cache mark of a result's last text is the result's own: below; whitespace alone, a
    // command that printed a newline, is refused by Anthropic as an empty text is)
    else if (said(c.text)) content.push(textBlock(c.cache ? {...c, cache: undefined} : c))
  // A cache mark on a tool result's last text is the tool result's own (see messages.ts).
  const last = p.content.at(-1)
  const cc = last?.type === 'text' ? cacheControl(last.cache) : undefined
  const block: Json = {type: 'tool_result', tool_use_id: toolId(p.callId)}
  if (content.length) block.content = content
  if (p.isError) block.is_error = true
  if (cc) block.cache_control = cc
  return block
}

function assistantBlocks(m: Message): Json[] {
  const out: Json[] = []
  for (const p of m.parts) {
    if (p.type === 'reasoning') {
      // Only Anthropic's own signed or redacted thinking goes back; anything else would be a 400.
      if (p.redacted?.family === 'messages' && p.redacted.value)
        out.push({type: 'redacted_thinking', data: p.redacted.value})
      else if (p.signature?.family === 'messages' && p.signature.value)
        out.push({type: 'thinking', thinking: p.text, signature: p.signature.value})
    } else if (p.type === 'text' && said(p.text)) out.push(textBlock(p))
    else if (p.type === 'tool_call')
      out.push({type: 'tool_use', id: toolId(p.id), name: p.name, input: argsObject(p.arguments)})
  }
  return out
}

function userBlocks(m: Message, notes: ImageNotes): Json[] {
  const results: Json[] = []
  const rest: Json[] = []
  for (const p of m.parts) {
    if (p.type === 'tool_result') results.push(toolResultBlock(p, notes))
    else if (p.type === 'text' && said(p.text)) rest.push(textBlock(p))
    else if (p.type === 'image') rest.push(imageBlock(p, notes))
  }
  return [...results, ...rest]
}

/** Whether a tool result comes after another block (a merged user turn must be reordered). */
function resultAfterOther(content: Json[]): boolean {
  let other = false
  for (const b of content)
    if (b.type !== 'tool_result') other = true
    else if (other) return true
  return false
}

/** Turns with consecutive same-role turns merged and tool results first in each user turn. */
function encodeTurns(request: Request, notes: ImageNotes): Array<{role: string; content: Json[]}> {
  const turns: Array<{role: string; content: Json[]}> = []
  for (const m of request.messages) {
    const content = m.role === 'assistant' ? assistantBlocks(m) : userBlocks(m, notes)
    if (!content.length) continue
    const last = turns.at(-1)
    if (last?.role === m.role) last.content.push(...content)
    else turns.push({role: m.role, content})
  }
  for (const t of turns)
    if (t.role === 'user' && resultAfterOther(t.content))
      t.content = [
        ...t.content.filter((b) => b.type === 'tool_result'),
        ...t.content.filter((b) => b.type !== 'tool_result'),
      ]
  // Anthropic refuses a conversation that does not open with a user turn ("messages: first message
  // must use the "user" role") or has none, which chat and Responses take: a chat UI's greeting
  // before the user's first message, a history trimmed from the front, a user turn of blank text
  // left out above. A user turn of one "." goes first, as LiteLLM sends it.
  if (turns[0]?.role !== 'user') turns.unshift({role: 'user', content: [{type: 'text', text: OPENING_TEXT}]})
  return turns
}

/** The text of the user turn put before a conversation that opens with the assistant's. */
export const OPENING_TEXT = '.'

/**
 * Anthropic refuses thinking when the last assistant turns of the running tool loop (after the
 * last user turn with more than tool results) hold a tool_use without a thinking block first;
 * Kimi's coding endpoint when any assistant turn of the history does (`everyTurn`, learned).
 */
function thinkingWouldBreak(turns: Array<{role: string; content: Json[]}>, everyTurn = false): boolean {
  let from = 0
  if (!everyTurn)
    turns.forEach((t, i) => {
      if (t.role === 'user' && t.content.some((b) => b.type !== 'tool_result')) from = i + 1
    })
  return turns
    .slice(from)
    .some(
      (t) =>
        t.role === 'assistant' &&
        t.content.some((b) => b.type === 'tool_use') &&
        t.content[0].type !== 'thinking' &&
        t.content[0].type !== 'redacted_thinking',
    )
}

function hasCacheMarks(request: Request): boolean {
  const marked = (p: {type: string; cache?: unknown}): boolean => p.type === 'text' && !!p.cache
  return (
    request.system.some(marked) ||
    request.messages.some((m) =>
      m.parts.some((p) => marked(p) || (p.type === 'tool_result' && p.content.some(marked))),
    )
  )
}

/** As Claude Code does: the system and the last two user turns end in a breakpoint. */
function addCacheMarks(system: Json[], turns: Array<{role: string; content: Json[]}>): void {
  if (system.length) system[system.length - 1].cache_control = {type: 'ephemeral'}
  const users = turns.filter((t) => t.role === 'user').slice(-2)
  for (const t of users) {
    const last = t.content.at(-1)
    if (last) last.cache_control = {type: 'ephemeral'}
  }
}

/** The tool a JSON answer is asked through (see {@link jsonAnswerTool}). */
export const JSON_ANSWER_TOOL = 'json_answer'

/**
 * The tool that carries the answer of a request for JSON (a JSON object, or one of a schema of
 * type object) that has no tools of its own, else undefined. Anthropic has no JSON mode, and an
 * instruction alone lets the model write prose or a fenced block around the JSON (Gemini CLI's
 * JSON calls then retry until they give up, about 100 s); a forced call's input is always one
 * JSON object, of the tool's schema. Tool turns in the history do not stand in the way: Gemini
 * CLI's model router asks for JSON before every prompt with the session so far, its calls and
 * their results included, and Anthropic takes a call in the history of a tool the request does
 * not define (as when an MCP server of Claude Code's went away). The upstream's call of this tool
 * is given back as the answer's text (messages.ts, messages-stream.ts: `CodecContext.jsonAnswer`).
 */
export function jsonAnswerTool(
  request: Request,
): {name: string; description: string; input_schema: Json} | undefined {
  const f = request.responseFormat
  if (!f || f.type === 'text' || request.tools.length > 0) return undefined
  if (request.builtinTools?.some((t) => t.family === 'messages') || request.webSearch) return undefined
  const schema = f.type === 'json_schema' ? (f.schema as Json | undefined) : {type: 'object'}
  if (!schema || typeof schema !== 'object' || schema.type !== 'object') return undefined
  // an assistant prefill: Anthropic prefills the answer itself to force a call
  if (request.messages.at(-1)?.role === 'assistant') return undefined
  return {
    name: JSON_ANSWER_TOOL,
    description: 'Give the answer: one JSON value of this schema.',
    input_schema: schema,
  }
}

function encodeToolChoice(c: ToolChoice | undefined, parallel: boolean | undefined): Json | undefined {
  const disable = parallel === false ? {disable_parallel_tool_use: true} : {}
  if (!c) return parallel === false ? {type: 'auto', ...disable} : undefined
  if (c.type === 'none') return {type: 'none'}
  if (c.type === 'required') return {type: 'any', ...disable}
  if (c.type === 'tool') return {type: 'tool', name: c.name, ...disable}
  if (c.type === 'web_search') return {type: 'tool', name: WEB_SEARCH_TOOL, ...disable}
  return {type: 'auto', ...disable}
}

/** The name of Anthropic's web search tool as the translation sends it. */
const WEB_SEARCH_TOOL = 'web_search'

/** Anthropic's web search server tool, limited as the client asked. */
function webSearchTool(search: WebSearchTool): Json {
  return {
    type: 'web_search_20250305',
    name: WEB_SEARCH_TOOL,
    ...(search.maxUses !== undefined ? {max_uses: search.maxUses} : {}),
    ...(search.allowedDomains ? {allowed_domains: search.allowedDomains} : {}),
    // Anthropic refuses both lists together: the allowed ones say more
    ...(search.blockedDomains && !search.allowedDomains ? {blocked_domains: search.blockedDomains} : {}),
    ...(search.userLocation ? {user_location: {type: 'approximate', ...search.userLocation}} : {}),
  }
}

/** The thinking budget, or undefined when thinking is off, and the max_tokens to send. */
function thinkingAndMax(request: Request, model: string): {budget?: number; maxTokens: number} {
  const r = request.reasoning
  let budget =
    !r || r.disabled ? undefined : (r.budgetTokens ?? (r.effort ? effortBudget(r.effort) : undefined))
  if (budget !== undefined) budget = Math.max(MIN_BUDGET, budget)
  if (request.maxTokens === undefined)
    return {
      budget,
      maxTokens: budget === undefined ? defaultMaxTokens(model) : Math.max(DEFAULT_MAX_TOKENS, budget + 4096),
    }
  // (the answer's room kept: a limit of 1 024 or less has none for thinking)
  if (budget !== undefined) budget = budgetWithin(budget, request.maxTokens, MIN_BUDGET)
  if (budget !== undefined && budget >= request.maxTokens) budget = undefined
  return {
    budget: budget !== undefined && budget >= MIN_BUDGET ? budget : undefined,
    maxTokens: request.maxTokens,
  }
}

/**
 * A Claude model's family and version in its name (`claude-opus-4-7`, `anthropic/claude-opus-4.7`,
 * GitHub Copilot's `claude-opus-41`): a one-digit major, a minor of one or two digits.
 */
const CLAUDE_NAME = /claude.*?(opus|sonnet|haiku|fable|mythos)(?:[-.]?(\d)(?:[-.]?(\d{1,2}))?(?!\d))?/i

/** What a model's name says of its thinking, by name (a bounded few names kept). */
const claudeNames = new Map<string, ClaudeThinking>()

export interface ClaudeThinking {
  /** It takes `thinking.type: adaptive` with `output_config.effort` (Opus and Sonnet 4.6 on). */
  adaptive: boolean
  /**
   * It takes only that, and no `temperature`, `top_p` or `top_k` (Opus 4.7 on, Claude 5, Fable,
   * Mythos: "\"thinking.type.enabled\" is not supported for this model", "temperature is
   * deprecated for this model."); its thinking text is omitted unless `display` asks for it.
   */
  only: boolean
  /**
   * How it is asked not to think ({@link ThinkingOff}). Claude 5 thinks when `thinking` is left
   * out; Sonnet 5, Opus 5 and Haiku 5.5 take `disabled`, Sonnet 5.5 only `between_tools`
   * ("\"thinking.type.disabled\" is not supported for this model. Use
   * \"thinking.type.between_tools\" ..."), and Opus 5.5, Fable and Mythos cannot stop thinking at
   * all: a low effort is the least.
   */
  off: ThinkingOff
  /**
   * It refuses a forced `tool_choice` (Opus and Sonnet 5.5, Fable and Mythos 5.1: "tool_choice:
   * type \"tool\" and \"any\" are not supported for this model.").
   */
  noForcedTools: boolean
  /**
   * It binds a thinking block to the conversation before it (Fable 5.1, Opus, Sonnet and Haiku
   * 5.5): a block sent back after a history that changed is a 400 unless the request says to drop
   * it.
   */
  prefixBinding: boolean
  /**
   * It refuses a conversation that ends with an assistant message (Opus and Sonnet 4.6 on, every
   * Claude 5: "This model does not support assistant message prefill. The conversation must end
   * with a user message.").
   */
  noPrefill: boolean
}

/**
 * What a Claude model's name says of how it thinks: Anthropic's ids, also as Bedrock, Vertex and
 * OpenRouter write them (`claude-opus-4-7`, `anthropic.claude-opus-4-7-v1:0`,
 * `claude-opus-4-7@20260416`, `anthropic/claude-opus-4.7`). A date is no version
 * (`claude-opus-4-20250514` is Opus 4, `claude-3-7-sonnet-20250219` an older Sonnet). Any other
 * name (an older Claude, another vendor's Anthropic-compatible server, an alias) gets none of it:
 * `enabled` with a budget, which they all take, until a refusal teaches otherwise
 * (daemon/router/adaptations.ts). A Claude after 5 is taken as the most restrictive 5.x.
 */
export function claudeThinking(model: string): ClaudeThinking {
  const known = claudeNames.get(model)
  if (known) return known
  const m = CLAUDE_NAME.exec(model)
  const result: ClaudeThinking = {
    adaptive: false,
    only: false,
    off: 'omit',
    noForcedTools: false,
    prefixBinding: false,
    noPrefill: false,
  }
  if (m) {
    const family = m[1].toLowerCase()
    const major = m[2] === undefined ? undefined : Number(m[2])
    const minor = m[3] === undefined ? 0 : Number(m[3])
    const named = family === 'fable' || family === 'mythos'
    const five = major === 5
    const later = major !== undefined && major > 5
    result.only =
      named || (major !== undefined && major >= 5) || (family === 'opus' && major === 4 && minor >= 7)
    result.adaptive = result.only || ((family === 'opus' || family === 'sonnet') && major === 4 && minor >= 6)
    if (named || later) result.off = 'low'
    else if (five)
      result.off =
        family === 'sonnet' && minor >= 5
          ? 'between_tools'
          : family === 'opus' && minor >= 5
            ? 'low'
            : 'disabled'
    result.noForcedTools =
      later || (five && (named ? minor >= 1 : (family === 'opus' || family === 'sonnet') && minor >= 5))
    result.prefixBinding = later || (five && (family === 'fable' ? minor >= 1 : !named && minor >= 5))
    // (the models that think adaptively: Opus and Sonnet 4.6 on, and every Claude from 5)
    result.noPrefill = result.adaptive
  }
  if (claudeNames.size >= 256) claudeNames.clear()
  claudeNames.set(model, result)
  return result
}

const EFFORT_RANK = {low: 0, medium: 1, high: 2} as const

/**
 * Anthropic's `output_config.effort` for adaptive thinking: the request's effort, or its budget's;
 * a lower one where the client's `max_tokens` cut the thinking's `budget` (Codex's `high` with a
 * limit of 16 000 is `medium`, of 8 000 `low`), so that the answer keeps its room.
 */
function adaptiveEffort(request: Request, budget: number, beyond: boolean): string | undefined {
  const r = request.reasoning
  const wanted = r?.effort
    ? r.effort === 'minimal'
      ? 'low'
      : r.effort
    : r?.budgetTokens !== undefined
      ? budgetEffort(r.budgetTokens)
      : undefined
  if (wanted === undefined || wanted === 'minimal') return wanted
  const cut = budgetEffort(budget)
  if (cut !== 'minimal' && EFFORT_RANK[cut] < EFFORT_RANK[wanted]) return cut
  // an effort above high, to a model that takes it (Opus 4.7 on)
  return beyond && r?.beyond && wanted === 'high' ? r.beyond : wanted
}

/**
 * The `thinking` (and `output_config`) of a request that thinks with `budget` tokens: adaptive
 * where `form` (learned from a refusal) or the model's name says so, its thinking text asked for
 * (`display: summarized`: Opus 4.7 on omit it by default) unless the client said it shows none
 * (Codex without a reasoning summary, Gemini CLI without thoughts, Claude Code's own `display:
 * omitted`); else `enabled` with the budget.
 */
function thinkingFields(
  request: Request,
  budget: number,
  form: ThinkingForm,
  beyond: boolean,
): Record<string, unknown> {
  if (form === 'enabled') return {thinking: {type: 'enabled', budget_tokens: budget}}
  const effort = adaptiveEffort(request, budget, beyond)
  return {
    // (a client that does not say, a chat client showing `reasoning_content`, wants it too)
    thinking: {type: 'adaptive', ...(request.reasoning?.include !== false ? {display: 'summarized'} : {})},
    ...(effort ? {output_config: {effort}} : {}),
  }
}

/** Whether a tool choice forces a call (`any`, a named tool, the web search). */
const forcing = (c: ToolChoice | undefined): boolean =>
  c?.type === 'required' || c?.type === 'tool' || c?.type === 'web_search'

/**
 * The line that asks in the prompt for the call a model that refuses a forced `tool_choice`
 * cannot be made to give (its choice goes as `auto`).
 */
export function forcedCallText(choice: ToolChoice | undefined, jsonTool: boolean): string {
  if (jsonTool)
    return `Give your answer by calling the ${JSON_ANSWER_TOOL} tool with it, and write no other text.`
  if (choice?.type === 'tool') return `In this answer, call the tool ${choice.name}.`
  if (choice?.type === 'web_search') return 'In this answer, search the web first.'
  return 'In this answer, call one of the tools.'
}

/** The fields that ask a model not to think, as it takes that ({@link ThinkingOff}). */
function offFields(off: ThinkingOff): Record<string, unknown> {
  if (off === 'disabled') return {thinking: {type: 'disabled'}}
  if (off === 'between_tools') return {thinking: {type: 'between_tools'}}
  if (off === 'low') return {output_config: {effort: 'low'}}
  if (off === 'least_budget') return {thinking: {type: 'enabled', budget_tokens: MIN_BUDGET}}
  return {}
}

const isThinking = (b: Json): boolean => b.type === 'thinking' || b.type === 'redacted_thinking'

/**
 * For a model that binds thinking to the conversation: the thinking blocks before the last
 * assistant turn that has none are left out. A block left out of the middle of a history
 * invalidates every block after it (Anthropic: thinking may be removed from the start, from the
 * end, or all of it, not from the middle), and a client keeps the thinking of some turns only (a
 * chat client's as the gateway carried it, lost on a restart; a fallback's turns have none): the
 * model would lose the newest blocks, those of the running tool loop with them. Left out from the
 * start, the newest are kept. A turn of thinking alone keeps it (an empty turn is refused).
 * `all`: every block is left out.
 */
function withoutThinkingBeforeGap(turns: Array<{role: string; content: Json[]}>, all = false): void {
  let gap = all ? turns.length : -1
  let later = false
  for (let i = turns.length - 1; i >= 0 && gap < 0; i--) {
    const t = turns[i]
    if (t.role !== 'assistant') continue
    if (t.content.some(isThinking)) later = true
    else if (later) gap = i
  }
  for (let i = 0; i < gap; i++) {
    const t = turns[i]
    if (t.role !== 'assistant' || !t.content.some(isThinking)) continue
    const rest = t.content.filter((b) => !isThinking(b))
    if (rest.length > 0) t.content = rest
  }
}

/**
 * The signatures and redacted data of the turn that a Messages upstream's refusal of a thinking
 * block's signature names (`` messages.N.content.M: Invalid `signature` in `thinking` block ``,
 * Anthropic's words), read from `body`, the request as it was sent: what ir.ts
 * `withoutWrappedThinking` leaves out. Undefined where the words name no turn, or the turn holds
 * no such value. Read only on that refusal.
 */
export function refusedTurnOpaques(body: Buffer, errorText: string): Set<string> | undefined {
  const at = /\bmessages\.(\d+)\.content\.\d+/.exec(errorText)
  if (!at) return undefined
  let sent: unknown
  try {
    sent = parseJsonBytes(body)
  } catch {
    return undefined
  }
  const messages = (sent as {messages?: unknown} | null)?.messages
  const turn = Array.isArray(messages) ? (messages[Number(at[1])] as Json | undefined) : undefined
  const values = new Set<string>()
  for (const b of Array.isArray(turn?.content) ? (turn.content as Json[]) : []) {
    const value = b?.type === 'thinking' ? b.signature : b?.type === 'redacted_thinking' ? b.data : undefined
    if (typeof value === 'string' && value !== '') values.add(value)
  }
  return values.size > 0 ? values : undefined
}

/** Whether the turns send back a thinking block. */
const sendsThinking = (turns: Array<{role: string; content: Json[]}>): boolean =>
  turns.some((t) => t.role === 'assistant' && t.content.some(isThinking))

/**
 * Anthropic's setting that drops a thinking block bound to another conversation (and every later
 * one) rather than refusing the request: a translated history is the client's, which it may have
 * compacted or edited, and its tools may change between turns (Codex's deferred tools), each of
 * which breaks the binding. Its beta header goes with it (translate.ts, `SentRequest.beta`).
 */
export const BLOCK_BINDING = {prefix_mismatch_behavior: 'drop_block'}
export const BLOCK_BINDING_BETA = 'thinking-binding-controls-2026-08-01'

export function encodeMessagesRequest(
  request: Request,
  model: string,
  ctx?: CodecContext,
): Record<string, unknown> {
  const images: ImageNotes = {seen: 0}
  let turns = encodeTurns(request, images)
  // (a blank system prompt goes, and with it the cache mark it would get)
  const system = request.system.filter((p) => said(p.text)).map(textBlock)
  const claude = claudeThinking(model)
  const learned = ctx?.claude
  const jsonTool = jsonAnswerTool(request)
  // a model that refuses a forced tool choice (Claude 5.5), or that cannot stop thinking (learned:
  // `least_budget`, which Anthropic's rules forbid beside a forced call), gets `auto`, and the call
  // asked for in the prompt
  const unforce =
    (claude.noForcedTools || learned?.noForcedTools === true || learned?.thinkingOff === 'least_budget') &&
    (!!jsonTool || forcing(request.toolChoice))
  const forced = !unforce && (!!jsonTool || forcing(request.toolChoice))
  // kept beside the forced call: an Anthropic-compatible server that ignores `tool_choice` still
  // reads what to answer
  const instruction = unforce && jsonTool ? undefined : jsonInstructionText(request.responseFormat)
  if (instruction) system.push({type: 'text', text: instruction})
  if (!hasCacheMarks(request)) addCacheMarks(system, turns)
  const prefill = claude.noPrefill || learned?.noPrefill === true ? prefillAsContinuation(turns) : undefined
  if (unforce) {
    // at the end of the last user turn, after its cache mark: the system prompt and the turns
    // before stay as they were (the prompt cache, and the thinking blocks bound to them)
    const text = {type: 'text', text: forcedCallText(request.toolChoice, !!jsonTool)}
    const last = turns.at(-1)
    if (last?.role === 'user') last.content.push(text)
    else system.push(text)
  }
  let {budget, maxTokens} = thinkingAndMax(request, model)
  const form = ctx?.thinkingForm ?? (claude.adaptive ? 'adaptive' : 'enabled')
  // a forced tool call and thinking cannot go together; nor thinking `enabled` and a tool loop
  // whose turns hold no Anthropic-signed thinking
  const off = learned?.thinkingOff ?? claude.off
  // a server that wants a thinking block on every tool-call turn and checks only that one is there
  // (DeepSeek's, learned): an empty one where the history has none, thinking kept on (not where
  // thinking goes off as `disabled`: a model told otherwise, or nothing, may still think)
  if (learned?.emptyThinking && !(request.reasoning?.disabled === true && off === 'disabled'))
    turns = withEmptyThinking(turns) ?? turns
  // (a history read only where it matters: a request that thinks, or a model that thinks unless
  // told not to)
  const breaks =
    (budget !== undefined || off !== 'omit') && thinkingWouldBreak(turns, learned?.thinkingEveryToolTurn)
  if (budget !== undefined && (forced || breaks)) budget = undefined
  const tools: unknown[] = jsonTool
    ? [jsonTool]
    : [
        // (a schema whose top level is a union, which Anthropic refuses, as one object; its type
        // `object` whatever the client's said, `null` from Codex Desktop: tool-schemas.ts `typedSchema`)
        ...objectTools(request.tools).map((t) => ({
          name: t.name,
          ...(t.description !== undefined ? {description: t.description} : {}),
          input_schema: {...t.parameters, type: 'object'},
        })),
        ...(request.builtinTools ?? []).filter((t) => t.family === 'messages').map((t) => t.raw),
        ...(request.webSearch ? [webSearchTool(request.webSearch)] : []),
      ]
  const toolChoice =
    jsonTool && !unforce
      ? {type: 'tool', name: JSON_ANSWER_TOOL, disable_parallel_tool_use: true}
      : jsonTool
        ? {type: 'auto', disable_parallel_tool_use: true}
        : tools.length
          ? encodeToolChoice(unforce ? {type: 'auto'} : request.toolChoice, request.parallelToolCalls)
          : undefined
  // thinking takes no sampling settings; Opus 4.7 on take none at all (unless the model refused
  // adaptive thinking: then its name said wrong); `top_k` goes beside either of the other two
  // (Gemini CLI's 64, with its temperature)
  const sampled = !(budget !== undefined || (claude.only && form === 'adaptive'))
  const sampling: Json = !sampled
    ? {}
    : request.temperature !== undefined
      ? {temperature: request.temperature}
      : request.topP !== undefined
        ? {top_p: request.topP}
        : {}
  if (sampled && request.topK !== undefined) sampling.top_k = request.topK
  // a client that sets no limit (Codex, Gemini CLI) gets Claude Code's own default, thinking
  // dropped or not: adaptive thinking has no budget to keep the answer's room, and the thinking of
  // a high effort leaves room in it
  if (budget === undefined && request.maxTokens === undefined) maxTokens = defaultMaxTokens(model)
  let thinking: Record<string, unknown> | undefined
  if (budget !== undefined) thinking = thinkingFields(request, budget, form, claude.only)
  else {
    // a model that thinks unless told not to (Claude 5) is told, as it takes it, where the client
    // turned reasoning off or thinking cannot go with the request (a forced call, a tool loop
    // without signed thinking); a client that said nothing gets the model's own default
    if (off !== 'omit' && (request.reasoning?.disabled === true || forced || breaks))
      thinking = offFields(off)
    // (a model that takes thinking only on, learned from a refusal of a body without it: the least
    // budget, where the client said nothing too, as its note says)
    else if (off === 'least_budget') thinking = offFields(off)
    // (the least budget is thinking: the answer keeps the room the client gave it, past the
    // budget, and no sampling setting goes beside it)
    if (off === 'least_budget' && thinking !== undefined) {
      maxTokens = maxTokensBeside(maxTokens)
      for (const k of Object.keys(sampling)) delete sampling[k]
    }
  }
  const binds =
    (claude.prefixBinding || learned?.dropUnboundThinking === true) && learned?.noBlockBinding !== true
  if (binds) withoutThinkingBeforeGap(turns)
  // bound thinking refused, and the setting that drops it refused on the way (a proxy): no block
  // goes back, as Anthropic advises without the setting
  else if (learned?.noBlockBinding === true && learned.dropUnboundThinking === true)
    withoutThinkingBeforeGap(turns, true)
  // thinking blocks sent back to a model that binds them to the conversation: a block whose
  // history changed is dropped, not refused (`between_tools` takes no other field)
  if (
    binds &&
    (thinking?.thinking as Json | undefined)?.type !== 'between_tools' &&
    (thinking?.thinking as Json | undefined)?.type !== 'disabled' &&
    sendsThinking(turns)
  ) {
    const own = thinking?.thinking as Json | undefined
    // (left out, thinking is adaptive on these models: said, it takes the setting)
    if (own || claude.off !== 'omit')
      thinking = {...thinking, thinking: {...(own ?? {type: 'adaptive'}), block_binding: BLOCK_BINDING}}
  }
  const body: Record<string | symbol, unknown> = {
    model,
    max_tokens: maxTokens,
    ...(system.length ? {system} : {}),
    messages: turns,
    ...(tools.length ? {tools} : {}),
    ...(toolChoice ? {tool_choice: toolChoice} : {}),
    ...thinking,
    ...sampling,
    ...(request.stop?.length ? {stop_sequences: request.stop} : {}),
    ...(request.user ? {metadata: {user_id: request.user}} : {}),
    ...(request.stream ? {stream: true} : {}),
  }
  const left = imageNote(images)
  const notes = [...(left ? [left] : []), ...(prefill ? [PREFILL_NOTE] : [])]
  if (notes.length > 0) body[ENCODER_NOTES] = notes
  return body
}

/** The log row's note for a prefill sent as a user turn ({@link prefillAsContinuation}). */
export const PREFILL_NOTE =
  'ended with an assistant message, a prefill the model refuses: sent as a user turn asking it to continue that text'

/** What a model that takes no prefill is asked in place of one (Anthropic's advice: a user turn). */
export const continuationText = (text: string): string =>
  `Your answer so far reads: «${text}». Continue it from exactly where it stops, without repeating any of it.`

/**
 * For a model that refuses a conversation ending with an assistant message (Claude 4.6 on): a
 * last assistant turn of text (a client's prefill, a chat client's "continue" of a cut-off
 * answer) goes as the request to continue it, quoted, at the end of the user turn before it, as
 * Anthropic's migration guide advises ("move the continuation text into a user message"). The
 * answer then continues the text, but a prefill that steered the answer's form (an opening `{`)
 * only asks for it in words now. A turn with a tool call is no prefill (a tool loop's), nor one
 * without text. Returns whether the turns changed.
 */
function prefillAsContinuation(turns: Array<{role: string; content: Json[]}>): boolean {
  const last = turns.at(-1)
  if (last?.role !== 'assistant') return false
  let text = ''
  for (const b of last.content) {
    if (b.type === 'text' && typeof b.text === 'string') text += b.text
    else if (b.type !== 'thinking' && b.type !== 'redacted_thinking') return false
  }
  if (text === '') return false
  turns.pop()
  const ask = {type: 'text', text: continuationText(text)}
  const user = turns.at(-1)
  if (user?.role === 'user') user.content.push(ask)
  else turns.push({role: 'user', content: [ask]})
  return true
}
