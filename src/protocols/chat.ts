/**
 * OpenAI Chat Completions codec (`POST /v1/chat/completions`), for chat clients and for
 * OpenAI-compatible chat upstreams (OpenAI, DeepSeek, GLM, vLLM, ...). Streams are in
 * `chat-stream.ts`.
 */
import {
  brokenFinish,
  CHAT_FINISH,
  ChatStreamDecoder,
  ChatStreamEncoder,
  chatFinish,
  chatUsage,
  decodeChatUsage,
  ONLY_NAMELESS,
} from './chat-stream.js'
import {DETAILS, detailsOf, detailsPart, EXTRA, extraOf, extraSignature} from './chat-signatures.js'
import type {Json} from './cm-common.js'
import {
  applyCarry,
  applyTextCarry,
  argsText,
  keepsRawInput,
  repairedArgsText,
  toolSchema,
  answerCallId,
  arr,
  bodyObject,
  budgetEffort,
  chatReasoningSignature,
  isObj,
  makeId,
  MISTRAL_THINKING,
  num,
  REASONING_BETWEEN,
  parseDataUrl,
  splitPromptThink,
  splitThink,
  storeCarry,
  str,
  THINK_CLOSE,
  THINK_OPEN,
  THINK_TAGS,
  thinkingChunkText,
  topKOf,
  userWords,
} from './cm-common.js'
import type {
  Codec,
  CodecContext,
  Effort,
  FunctionTool,
  ImagePart,
  Message,
  Part,
  PlacedSystem,
  PreservedThinking,
  ReasoningSettings,
  Request,
  Response,
  ResponseFormat,
  StopReason,
  TextPart,
  ThinkInPrompt,
  ToolCallPart,
  ToolChoice,
} from './ir.js'
import {
  defaultMaxTokens,
  documentName,
  inPlaceSystem,
  isDocument,
  namedDocumentText,
  omittedFileText,
  placedHere,
  settlePlaced,
  TranslationError,
  verbosityOf,
} from './ir.js'
import {chatEffort, thinkingOffFields} from './thinking-off.js'
import {objectTools} from './tool-schemas.js'

// ---- decoding a chat client's request ----

function contentParts(content: unknown, where: string): Array<TextPart | ImagePart> {
  if (content === null || content === undefined) return []
  if (typeof content === 'string') return content === '' ? [] : [{type: 'text', text: content}]
  if (!Array.isArray(content)) throw new TranslationError(`${where}: content must be a string or an array`)
  return content.map((raw): TextPart | ImagePart => {
    const part = isObj(raw) ? raw : {}
    if (part.type === 'text' || part.type === 'refusal')
      return {type: 'text', text: str(part.text) ?? str(part.refusal) ?? ''}
    if (part.type === 'image_url') return imageUrlPart(part)
    if (part.type === 'file') return filePart(isObj(part.file) ? part.file : {}, where)
    if (part.type === 'input_audio' || part.type === 'video_url') {
      const media = part.type === 'input_audio' ? inputAudioPart(part) : videoUrlPart(part)
      if (media) return media
      throw new TranslationError(
        `${where}: a content part of type "${part.type}" without its data or URL cannot be translated`,
      )
    }
    throw new TranslationError(`${where}: content part type "${String(part.type)}" cannot be translated`)
  })
}

function imageUrlPart(part: Json): ImagePart {
  const url = str(isObj(part.image_url) ? part.image_url.url : part.image_url) ?? ''
  const data = parseDataUrl(url)
  return data ? {type: 'image', ...data} : {type: 'image', url}
}

/** The media type of an `input_audio` part's `format` (OpenAI's `wav` and `mp3`, and the others Qwen Code and audio servers name). */
const AUDIO_FORMATS: Record<string, string> = {
  mp3: 'audio/mpeg',
  mpeg: 'audio/mpeg',
  wav: 'audio/wav',
  m4a: 'audio/mp4',
  mp4: 'audio/mp4',
  flac: 'audio/flac',
  ogg: 'audio/ogg',
  opus: 'audio/ogg',
  webm: 'audio/webm',
  aac: 'audio/aac',
}

/**
 * An `input_audio` part (`{data, format}`): OpenAI's has the bare base64 in `data`, Qwen Code's a
 * data URL (`data:audio/mpeg;base64,...`); a data URL's own type wins, else the `format`'s
 * (`audio/<format>` for one not listed, `audio/wav` for none). Undefined without data.
 */
function inputAudioPart(part: Json): ImagePart | undefined {
  const audio = isObj(part.input_audio) ? part.input_audio : {}
  const raw = str(audio.data)
  if (!raw) return undefined
  const data = parseDataUrl(raw)
  if (data) return {type: 'image', ...data}
  const format = str(audio.format)?.toLowerCase()
  const mediaType = format ? (AUDIO_FORMATS[format] ?? `audio/${format}`) : 'audio/wav'
  // a URL (Qwen Code's for a file it references, DashScope's documented form): the file by its URL
  if (/^(?:https?|gs):\/\//i.test(raw)) return {type: 'image', mediaType, url: raw}
  return {type: 'image', mediaType, data: raw}
}

/** A video file's type by its URL's extension (`video/mp4` for another, or none). */
function videoType(url: string): string {
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase()
  return ext === 'webm'
    ? 'video/webm'
    : ext === 'mov'
      ? 'video/quicktime'
      : ext === 'mpeg' || ext === 'mpg'
        ? 'video/mpeg'
        : ext === 'avi'
          ? 'video/x-msvideo'
          : 'video/mp4'
}

/**
 * A `video_url` part (Qwen Code's, vLLM's and DashScope's; `video_url` an object with `url`, or the
 * URL itself): a data URL as its bytes, an http(s) URL as a URL with the type its extension says.
 * Undefined without a URL.
 */
function videoUrlPart(part: Json): ImagePart | undefined {
  const url = str(isObj(part.video_url) ? part.video_url.url : part.video_url)
  if (!url) return undefined
  const data = parseDataUrl(url)
  return data ? {type: 'image', ...data} : {type: 'image', mediaType: videoType(url), url}
}

/**
 * A chat content part's image, file, audio or video as the IR's (a chat body passed through, whose
 * media a model refused); undefined for any other part, and for a file by `file_id`.
 */
export function chatMediaPart(raw: unknown): ImagePart | undefined {
  if (!isObj(raw)) return undefined
  if (raw.type === 'image_url') return imageUrlPart(raw)
  if (raw.type === 'input_audio') return inputAudioPart(raw)
  if (raw.type === 'video_url') return videoUrlPart(raw)
  if (raw.type !== 'file' || !isObj(raw.file) || str(raw.file.file_data) === undefined) return undefined
  return filePart(raw.file, 'file')
}

/**
 * A `file` content part (OpenAI's PDF input): its `file_data` as a document. A `file_id` names a
 * file stored at OpenAI, which no other upstream can read: refused by name.
 */
function filePart(file: Json, where: string): ImagePart {
  const raw = str(file.file_data)
  if (raw === undefined)
    throw new TranslationError(
      `${where}: a file part ${file.file_id !== undefined ? 'by file_id' : 'without file_data'} cannot be translated (send its bytes as file_data)`,
    )
  // a data URL, or (as some clients send it) the bare base64 of a PDF
  const data = parseDataUrl(raw) ?? {mediaType: 'application/pdf', data: raw}
  const name = str(file.filename)
  return name ? {type: 'image', ...data, name} : {type: 'image', ...data}
}

const texts = (parts: Array<TextPart | ImagePart>): TextPart[] =>
  parts.filter((p): p is TextPart => p.type === 'text')

function decodeToolChoice(v: unknown): ToolChoice | undefined {
  if (v === 'auto' || v === 'none' || v === 'required') return {type: v}
  if (isObj(v) && v.type === 'function' && isObj(v.function) && typeof v.function.name === 'string')
    return {type: 'tool', name: v.function.name}
  return undefined
}

/** A chat `response_format` as the IR's (undefined for none, or one it cannot read). */
export function decodeResponseFormat(v: unknown): ResponseFormat | undefined {
  if (!isObj(v)) return undefined
  if (v.type === 'json_object' || v.type === 'text') return {type: v.type}
  if (v.type === 'json_schema' && isObj(v.json_schema)) {
    const js = v.json_schema
    return {
      type: 'json_schema',
      ...(typeof js.name === 'string' ? {name: js.name} : {}),
      schema: isObj(js.schema) ? js.schema : {},
      ...(typeof js.strict === 'boolean' ? {strict: js.strict} : {}),
    }
  }
  return undefined
}

function decodeEffort(v: unknown): ReasoningSettings | undefined {
  if (v === 'none') return {disabled: true}
  if (v === 'minimal' || v === 'low' || v === 'medium' || v === 'high') return {effort: v}
  // the efforts above `high` (`xhigh`, `max`, `ultra`): the most the IR has, not none
  if (v === 'xhigh') return {effort: 'high', beyond: 'xhigh'}
  if (v === 'max' || v === 'ultra') return {effort: 'high', beyond: 'max'}
  return undefined
}

/**
 * A chat client's thinking setting, in whichever field it wrote it, so that it keeps it going to a
 * Messages, Responses or Gemini upstream: OpenAI's `reasoning_effort`; OpenRouter's unified
 * `reasoning: {effort, max_tokens, enabled, exclude}` (openrouter.ai/docs reasoning tokens;
 * qwen-code writes `{enabled: false}` to an OpenRouter host for no thinking, opencode's OpenRouter
 * provider an effort); `thinking: {type: "enabled" | "disabled", budget_tokens}` (DeepSeek's,
 * Kimi's and GLM's switch, which qwen-code sends to DeepSeek); DashScope's `enable_thinking` with
 * `thinking_budget` (qwen-code's for Qwen3), and vLLM's `chat_template_kwargs.enable_thinking`
 * (qwen-code's for Qwen elsewhere). An off switch in any of them wins (the client said none);
 * else the effort, the budget (a positive one), or both; a switch on with neither is OpenRouter's
 * default effort, medium; `exclude`, the client shows no reasoning (asked for none back).
 * Property reads only: a request with none of them reads four absent properties.
 */
function decodeReasoning(b: Json): ReasoningSettings | undefined {
  const effort = decodeEffort(b.reasoning_effort)
  const {reasoning, thinking, enable_thinking: enable, chat_template_kwargs: kwargs} = b
  if (reasoning === undefined && thinking === undefined && enable === undefined && kwargs === undefined)
    return effort
  const r = isObj(reasoning) ? reasoning : undefined
  const t = isObj(thinking) ? thinking : undefined
  const template = isObj(kwargs) ? kwargs.enable_thinking : undefined
  if (
    effort?.disabled ||
    r?.enabled === false ||
    r?.effort === 'none' ||
    t?.type === 'disabled' ||
    enable === false ||
    template === false
  )
    return {disabled: true}
  const level = effort ?? decodeEffort(r?.effort)
  const budget = num(r?.max_tokens) ?? num(t?.budget_tokens) ?? num(b.thinking_budget)
  const on = r?.enabled === true || t?.type === 'enabled' || enable === true || template === true
  const out: ReasoningSettings | undefined =
    level || (budget !== undefined && budget > 0)
      ? {...level, ...(budget !== undefined && budget > 0 ? {budgetTokens: budget} : {})}
      : on
        ? {effort: 'medium'}
        : undefined
  if (r?.exclude === true) return {...out, include: false}
  return out
}

/**
 * An assistant message's content without Mistral's `thinking` and `reference` chunks (a chat
 * client's history of a Mistral answer it got untranslated, now going to another upstream): its
 * reasoning, which no other upstream takes back, and its citations. Other content as it is.
 */
function withoutMistralChunks(content: unknown): unknown {
  if (!Array.isArray(content)) return content
  const mistral = (p: unknown) => isObj(p) && (p.type === 'thinking' || p.type === 'reference')
  return content.some(mistral) ? content.filter((p) => !mistral(p)) : content
}

/** `before`: the messages decoded before it (the user's last words its text answered). */
function decodeAssistant(m: Json, ctx: CodecContext, before: readonly Message[]): Message {
  const parts: Part[] = []
  const reasoning = str(m.reasoning_content) || str(m.reasoning)
  if (reasoning) parts.push({type: 'reasoning', text: reasoning, signature: chatReasoningSignature(m)})
  parts.push(...contentParts(withoutMistralChunks(m.content), 'assistant message'))
  if (typeof m.refusal === 'string' && m.refusal) parts.push({type: 'text', text: m.refusal})
  for (const raw of arr(m.tool_calls)) {
    const call = isObj(raw) ? raw : {}
    const fn = isObj(call.function) ? call.function : {}
    parts.push({
      type: 'tool_call',
      id: str(call.id) || makeId(ctx, 'call_'),
      name: str(fn.name) ?? '',
      arguments: argsText(fn.arguments) || '{}',
    })
  }
  return {
    role: 'assistant',
    // (an answer of text alone: its reasoning kept under its conversation and its text)
    parts: applyTextCarry(applyCarry(parts, ctx.carry, true), ctx.carry, ctx.carryScope, () =>
      userWords(before),
    ),
  }
}

/** An assistant message as it came and as decoded, and how many of its empty-id calls were answered. */
interface EmptyIds {
  raw: Json
  turn: Message
  answered: number
}

/**
 * The id given to the next unanswered call of `last` that came with an empty id, or `''` when none
 * is left. Read only for a tool message without an id.
 */
function emptyIdCall(last: EmptyIds): string {
  const raws = arr(last.raw.tool_calls)
  const calls = last.turn.parts.filter((p) => p.type === 'tool_call')
  let seen = 0
  for (let i = 0; i < raws.length && i < calls.length; i++) {
    const raw = raws[i]
    if (isObj(raw) && str(raw.id)) continue
    if (seen++ === last.answered) {
      last.answered++
      return calls[i].id
    }
  }
  return ''
}

function decodeMessages(
  raw: unknown,
  ctx: CodecContext,
): {system: TextPart[]; messages: Message[]; placed: PlacedSystem[]} {
  const system: TextPart[] = []
  const messages: Message[] = []
  // (a system message after one of another role: its place, for OpenAI's own API, ir.ts)
  const placed: PlacedSystem[] = []
  const names = new Map<string, string>()
  // the last assistant message, for a result without an id (emptyIdCall)
  let last: EmptyIds | undefined
  const userTurn = (): Message => {
    const last = messages.at(-1)
    if (last?.role === 'user' && last.parts.every((p) => p.type === 'tool_result')) return last
    const turn: Message = {role: 'user', parts: []}
    messages.push(turn)
    return turn
  }
  for (const item of arr(raw)) {
    const m = isObj(item) ? item : {}
    const role = m.role
    if (role === 'system' || role === 'developer') {
      const parts = texts(contentParts(m.content, `${role} message`))
      system.push(...parts)
      const here = placedHere(messages, parts)
      if (here) placed.push(here)
    } else if (role === 'user') userTurn().parts.push(...contentParts(m.content, 'user message'))
    else if (role === 'assistant') {
      const turn = decodeAssistant(m, ctx, messages)
      for (const p of turn.parts) if (p.type === 'tool_call') names.set(p.id, p.name)
      messages.push(turn)
      last = {raw: m, turn, answered: 0}
    } else if (role === 'tool') {
      let callId = str(m.tool_call_id) ?? ''
      // a call that came with an empty id (a server that writes none, sent back as it came) got an
      // id of its own above: its result, also without one, answers it, in order
      if (!callId && last) callId = emptyIdCall(last)
      const name = names.get(callId)
      userTurn().parts.push({
        type: 'tool_result',
        callId,
        ...(name ? {name} : {}),
        content: contentParts(m.content, 'tool message'),
      })
    } else throw new TranslationError(`chat message role "${String(role)}" cannot be translated`)
  }
  settlePlaced(placed, messages)
  return {system, messages, placed}
}

function decodeTools(raw: unknown): {tools: FunctionTool[]; builtin: Array<{family: 'chat'; raw: unknown}>} {
  const tools: FunctionTool[] = []
  const builtin: Array<{family: 'chat'; raw: unknown}> = []
  for (const t of arr(raw)) {
    if (isObj(t) && t.type === 'function' && isObj(t.function)) {
      const fn = t.function
      tools.push({
        name: str(fn.name) ?? '',
        ...(typeof fn.description === 'string' ? {description: fn.description} : {}),
        parameters: isObj(fn.parameters) ? fn.parameters : {type: 'object', properties: {}},
      })
    } else builtin.push({family: 'chat', raw: t})
  }
  return {tools, builtin}
}

function decodeRequest(body: unknown, ctx: CodecContext): Request {
  const b = bodyObject(body, 'chat request')
  if (typeof b.n === 'number' && b.n > 1) throw new TranslationError('n > 1 cannot be translated')
  const {system, messages, placed} = decodeMessages(b.messages, ctx)
  const {tools, builtin} = decodeTools(b.tools)
  const stop = typeof b.stop === 'string' ? [b.stop] : arr(b.stop).filter((s) => typeof s === 'string')
  const maxTokens = num(b.max_completion_tokens) ?? num(b.max_tokens)
  const toolChoice = decodeToolChoice(b.tool_choice)
  const responseFormat = decodeResponseFormat(b.response_format)
  const reasoning = decodeReasoning(b)
  return {
    model: str(b.model) ?? null,
    system,
    messages,
    ...(placed.length ? {placedSystem: placed} : {}),
    tools,
    ...(builtin.length ? {builtinTools: builtin} : {}),
    ...(toolChoice ? {toolChoice} : {}),
    ...(typeof b.parallel_tool_calls === 'boolean' ? {parallelToolCalls: b.parallel_tool_calls} : {}),
    ...(maxTokens !== undefined ? {maxTokens} : {}),
    ...(num(b.temperature) !== undefined ? {temperature: num(b.temperature)} : {}),
    ...(num(b.top_p) !== undefined ? {topP: num(b.top_p)} : {}),
    // (vLLM's and SGLang's extension: for a Messages or Gemini upstream)
    // (a whole number of at least 1: -1 and 0 are vLLM's "off", which Claude and Gemini refuse)
    ...(topKOf(b.top_k) !== undefined ? {topK: topKOf(b.top_k)} : {}),
    ...(verbosityOf(b.verbosity) ? {verbosity: verbosityOf(b.verbosity)} : {}),
    ...(stop.length ? {stop: stop as string[]} : {}),
    ...(responseFormat ? {responseFormat} : {}),
    ...(reasoning ? {reasoning} : {}),
    stream: b.stream === true,
    ...(typeof b.user === 'string' ? {user: b.user} : {}),
    // opencode's: a Responses upstream routes the prompt to the machine that holds its cache by it
    ...(typeof b.prompt_cache_key === 'string' ? {cacheKey: b.prompt_cache_key} : {}),
    // (whose conversation it is: its answers' carry keyed under it)
    ...(ctx.carryScope !== undefined ? {carryScope: ctx.carryScope} : {}),
  }
}

// ---- encoding a request for a chat upstream ----

const imageUrl = (p: ImagePart): Json => ({
  type: 'image_url',
  image_url: {
    url: p.data !== undefined ? `data:${p.mediaType ?? 'image/png'};base64,${p.data}` : (p.url ?? ''),
  },
})

/**
 * A media part as chat text: a text file (its name above it), or the line that says what was there
 * for a file chat cannot carry (`omittedFileText`: another type than PDF, such as audio or a
 * spreadsheet, or a PDF by URL, chat taking a file only as its bytes), not a part the upstream
 * would refuse on every later turn. Undefined for an image or a PDF's bytes, which chat sends as
 * parts of their own.
 */
function mediaText(p: ImagePart): string | undefined {
  if (!isDocument(p)) return undefined
  const text = namedDocumentText(p)
  if (text !== undefined) return text
  if (p.mediaType !== 'application/pdf')
    return omittedFileText(p, 'chat completions take PDF and text files only')
  if (p.data === undefined) return omittedFileText(p, 'chat completions take a file only as its bytes')
  return undefined
}

/** A PDF's bytes as chat takes them: a `file` part (OpenAI's form). */
const pdfPart = (p: ImagePart): Json => ({
  type: 'file',
  file: {filename: documentName(p), file_data: `data:${p.mediaType};base64,${p.data}`},
})

/** The text of a part that is text, or that chat sends as text; undefined for any other. */
const plainText = (p: TextPart | ImagePart): string | undefined => (p.type === 'text' ? p.text : mediaText(p))

/** Text-only content as one string (the form every chat template takes), else an array. */
function userContent(parts: Array<TextPart | ImagePart>): string | Json[] {
  if (parts.every((p) => plainText(p) !== undefined)) return parts.map(plainText).join('\n\n')
  return parts.map((p): Json => {
    if (p.type === 'text') return {type: 'text', text: p.text}
    const text = mediaText(p)
    if (text !== undefined) return {type: 'text', text}
    return isDocument(p) ? pdfPart(p) : imageUrl(p)
  })
}

/**
 * An assistant turn: its text, the chat upstream's own reasoning and its tool calls, in one pass.
 * Reasoning that came in `<think>` tags (signature value {@link THINK_TAGS}) goes back the same
 * way, at the start of the content (MiniMax asks for it in the history, for its interleaved
 * thinking): `<think>`, the reasoning as it came, `</think>`, a blank line, the text; the same bytes
 * on every request.
 */
function encodeAssistant(m: Message): Json | undefined {
  let text = ''
  let reasoning = ''
  let think = ''
  let field = 'reasoning_content'
  const calls: Json[] = []
  // OpenRouter's `reasoning_details` of the turn, and a Google call signature that came as a
  // reasoning part of its own (a Responses client's reasoning item) for the next call
  let details: unknown[] | undefined
  let extra: Json | undefined
  for (const p of m.parts) {
    if (p.type === 'text') text += p.text
    else if (p.type === 'reasoning') {
      if (p.signature?.family !== 'chat') continue
      const value = p.signature.value
      if (value === THINK_TAGS) think += p.text
      // Mistral's thinking chunks: Mistral takes its own content array back, but the history may
      // go to another chat server (a fallback, a switch of model), which refuses a `thinking`
      // part; and Mistral refuses `reasoning_content` (422). Its text alone goes back.
      else if (value === MISTRAL_THINKING) continue
      else if (value.length > 4 && (value.startsWith(DETAILS) || value.startsWith(EXTRA))) {
        const own = detailsOf(value)
        if (own) details = details ? details.concat(own) : own
        else extra = extraOf(value) ?? extra
      } else {
        reasoning += p.text
        if (value === 'reasoning') field = 'reasoning'
      }
    } else if (p.type === 'tool_call') {
      const call: Json = {
        id: p.id,
        type: 'function',
        function: {name: p.name, arguments: p.arguments || '{}'},
      }
      const own = p.signature?.family === 'chat' ? extraOf(p.signature.value) : undefined
      if (own ?? extra) call.extra_content = own ?? extra
      extra = undefined
      calls.push(call)
    }
  }
  // a turn with nothing to say: no text, or whitespace only (a `"\n\n"` a model answered before its
  // call, a client's placeholder) and no reasoning of its own, which a strict server refuses as
  // empty content and which tells the model nothing; without it the turns around it merge
  // (pushMessage)
  if (!calls.length && (!text || (!think && !reasoning && !details && !/\S/.test(text)))) return undefined
  if (think) text = `${THINK_OPEN}${think}${THINK_CLOSE}\n\n${text}`
  const out: Json = {role: 'assistant', content: text || null}
  // the details hold the reasoning's text too: OpenRouter takes them alone, as it gave them
  if (details) out.reasoning_details = details
  else if (reasoning) out[field] = reasoning
  if (calls.length) out.tool_calls = calls
  return out
}

/**
 * A tool result's texts, one line each: its text parts, and its media that chat sends as text (a
 * text file a tool read, the line naming a file chat cannot carry), so they stay the tool's.
 */
function resultText(content: Array<TextPart | ImagePart>): string {
  let text = ''
  let first = true
  for (const c of content) {
    const line = c.type === 'text' ? c.text : mediaText(c)
    if (line === undefined) continue
    text += first ? line : '\n' + line
    first = false
  }
  return text
}

/**
 * Whether a chat upstream's model is Anthropic's, whose servers take its cache marks on content
 * parts (`cache_control`): OpenRouter's `anthropic/...`, LiteLLM's, Portkey's and most relays'
 * `claude-...`. Without them Claude caches nothing through chat completions, and every turn of an
 * agent's conversation pays its whole prompt (peers' users measured 6-13 times the input cost).
 * A Qwen model on DashScope takes the same marks, placed the same (CodecContext `qwenCacheMarks`).
 */
export const takesCacheMarks = (model: string): boolean => /(?:^|\/)anthropic\/|claude/i.test(model)

/** The mark of a system prompt in {@link cacheMarked}. */
const SYSTEM_MARK = 'system'

/**
 * The IR messages (and the system prompt) whose chat messages end with a cache mark: where the
 * client put its own (Claude Code's), else as Claude Code does, the system prompt and the last two
 * user turns.
 */
function cacheMarked(request: Request): Set<Message | typeof SYSTEM_MARK> {
  const marked = new Set<Message | typeof SYSTEM_MARK>()
  if (request.system.some((p) => p.cache)) marked.add(SYSTEM_MARK)
  for (const m of request.messages)
    for (const p of m.parts)
      if (
        (p.type === 'text' && p.cache) ||
        (p.type === 'tool_result' && p.content.some((c) => c.type === 'text' && c.cache))
      )
        marked.add(m)
  if (marked.size > 0) return marked
  marked.add(SYSTEM_MARK)
  let users = 0
  for (let i = request.messages.length - 1; i >= 0 && users < 2; i--)
    if (request.messages[i].role === 'user') {
      marked.add(request.messages[i])
      users++
    }
  return marked
}

/** A chat message's content with Anthropic's cache mark on its last part (a string as one part). */
function withCacheMark(message: Json): void {
  const mark = {type: 'ephemeral'}
  if (typeof message.content === 'string')
    message.content = [{type: 'text', text: message.content, cache_control: mark}]
  else if (Array.isArray(message.content) && message.content.length > 0) {
    const parts = message.content as Json[]
    parts[parts.length - 1] = {...parts[parts.length - 1], cache_control: mark}
  }
}

/** Texts a blank line apart, empty ones left out (a system prompt, a system message). */
function joinedText(parts: readonly TextPart[]): string {
  let text = ''
  for (const p of parts) if (p.text !== '') text += text ? '\n\n' + p.text : p.text
  return text
}

/**
 * `inPlace` (OpenAI's own API, `CodecContext.systemInPlace`): a system message the client sent
 * after the conversation began goes where it stood, as a `system` message, and the system prompt
 * is the rest (ir.ts `inPlaceSystem`), the same on every turn. Where it stood right before a turn's
 * tool results it goes after them (OpenAI: "An assistant message with 'tool_calls' must be followed
 * by tool messages"), and inside an assistant turn (two of the client's, joined) before the turn.
 */
function encodeMessages(request: Request, cache: boolean, inPlace = false): Json[] {
  const out: Json[] = []
  const marked = cache ? cacheMarked(request) : undefined
  const split = inPlace ? inPlaceSystem(request) : undefined
  const system = joinedText(split?.system ?? request.system)
  if (system) {
    out.push({role: 'system', content: system})
    if (marked?.has(SYSTEM_MARK)) withCacheMark(out[0])
  }
  const placed = split?.placed ?? []
  let next = 0
  const pushPlaced = () => {
    const text = joinedText(placed[next++].parts)
    if (text) out.push({role: 'system', content: text})
  }
  for (let i = 0; i < request.messages.length; i++) {
    const m = request.messages[i]
    if (m.role === 'assistant') {
      while (next < placed.length && placed[next].message <= i) pushPlaced()
      const a = encodeAssistant(m)
      if (a) pushMessage(out, a)
      continue
    }
    const before = out.length
    const content = out[before - 1]?.content
    if (next < placed.length && placed[next].message <= i) {
      // the turn in pieces, a system message between (its results first, together)
      let lead = 0
      while (lead < m.parts.length && m.parts[lead].type === 'tool_result') lead++
      let from = 0
      while (next < placed.length && placed[next].message <= i) {
        const at = Math.max(placed[next].part, lead)
        if (at > from) encodeUser({role: 'user', parts: m.parts.slice(from, at)}, out)
        from = Math.max(from, at)
        pushPlaced()
      }
      if (from < m.parts.length) encodeUser({role: 'user', parts: m.parts.slice(from)}, out)
    } else encodeUser(m, out)
    // (a turn merged into the user message before it: the mark on that message's last part)
    if (marked?.has(m) && (out.length > before || (before > 0 && out[before - 1].content !== content)))
      withCacheMark(out[out.length - 1])
  }
  while (next < placed.length) pushPlaced()
  return out
}

/**
 * `message` at the end of `out`, or merged into the last message there when both are `user` or
 * both `assistant`. Chat servers want the roles to alternate: DeepSeek refuses successive user or
 * assistant messages ("deepseek-reasoner does not support successive user or assistant messages
 * (messages[1] and messages[2] in your input)"), and the chat templates of Gemma, Mistral and
 * Llama 2 under vLLM or llama.cpp raise "Conversation roles must alternate
 * user/assistant/user/assistant/...". A translated history has them more often than a chat
 * client's: a turn of another vendor that was only thinking is left out (its two user turns
 * meet), Claude Code sends two user turns in a row (an interrupted turn, a hook's text), a
 * Responses client's items may come as messages of their own.
 *
 * Always, not learned from a refusal: servers that take successive messages (OpenAI) read them as
 * one turn anyway (the model's template puts them one after the other), so a merged message
 * tells the model the same; learning would cost each user a failed request per model after every
 * restart, and the servers' words vary with each template (some only answer a 500 from the
 * template's exception), which no rule would match in full. A conversation that alternates
 * already (nearly all) costs one compare per message and goes byte for byte as before; a merged
 * one is the same bytes on every later turn (the merge depends only on the two turns), so a
 * prefix cache still holds. Tool messages are never merged: each answers its own call.
 */
function pushMessage(out: Json[], message: Json): void {
  const last = out[out.length - 1]
  if (
    last === undefined ||
    last.role !== message.role ||
    (message.role !== 'user' && message.role !== 'assistant')
  )
    out.push(message)
  else if (message.role === 'user') mergeUser(last, message)
  else mergeAssistant(last, message)
}

/**
 * A chat client's messages passed through with successive user or assistant messages as one, as
 * the encoder sends them ({@link pushMessage}), and successive system messages as one (their texts
 * as a user run's: MiniMax and Qwen3.5's chat template refuse a second system message, and the
 * encoder sends one); the same array when there is no such run. For an upstream found to refuse
 * such runs (adaptations.ts `alternateRoles`).
 */
export function alternatingMessages(messages: unknown[]): unknown[] {
  const runs = roleRuns(messages, true)
  if (!runs.turns && !runs.system) return messages
  const out: Json[] = []
  for (const m of messages) {
    // (copies: a merge writes into the message it keeps)
    const copy = m && typeof m === 'object' ? {...(m as Json)} : (m as Json)
    const last = out[out.length - 1]
    if (copy?.role === 'system' && last?.role === 'system') mergeUser(last, copy)
    else pushMessage(out, copy)
  }
  return out
}

/**
 * Whether a chat client's messages hold a run of user or assistant messages (`turns`), one of
 * system messages (`system`) and a system message after a message of another role (`late`), for
 * a refusal to be judged by the one it names; with `first`, only whether there is a run of either
 * (the scan ends at the first).
 */
export function roleRuns(
  messages: unknown[],
  first = false,
): {turns: boolean; system: boolean; late: boolean} {
  const runs = {turns: false, system: false, late: false}
  let turn = false
  for (let i = 0; i < messages.length; i++) {
    const role = (messages[i] as Json | null)?.role
    if (role !== 'system') turn = true
    else if (turn) runs.late = true
    if (i === 0 || (messages[i - 1] as Json | null)?.role !== role) continue
    if (role === 'user' || role === 'assistant') runs.turns = true
    else if (role === 'system') runs.system = true
    else continue
    if (first || (runs.turns && runs.system && runs.late)) break
  }
  return runs
}

/**
 * A chat client's messages passed through with every system message after the first folded into
 * the first, at the front (its text after the first's: strings a blank line apart, else the parts
 * in order); the same array when no system message follows a message of another role. For an
 * upstream found to refuse a system message after the conversation began (adaptations.ts
 * `systemFirst`): Qwen3.5's and later Qwen templates raise "System message must be at the
 * beginning." for any system message not first (a lone one between turns: a chat client passing
 * on a hook's or a harness's reminder, Claude Code's translated ones), MiniMax answers "invalid
 * chat setting (2013)" for any second one.
 *
 * Folded into the first rather than sent as a user turn (wrapped in a tag, as some proxies do): a
 * system message is an instruction of the operator's, and a user turn would have the model read it
 * as the user's words, of less weight, and answer it as a turn of its own; in the system prompt it
 * keeps its authority, which is what the translation does for every system message of a chat
 * client (the chat decoder reads them all into the system prompt) and what the servers that take
 * such messages themselves do (vLLM-MLX's `_collapse_system_messages`, Rapid-MLX #1742's retry
 * with "one combined leading system message"). Its place in time is lost (a model reads it as
 * holding from the start), as it is in every such fold. The first system message's bytes change
 * when a late one comes, so a prefix cache holds from there on, not before it: the same cost as
 * the translation's, and the only form these templates render.
 */
export function systemFirstMessages(messages: unknown[]): unknown[] {
  if (!roleRuns(messages).late) return messages
  let head: Json | undefined
  const rest: unknown[] = []
  for (const m of messages) {
    if ((m as Json | null)?.role !== 'system') rest.push(m)
    // (a copy: the merge writes into it)
    else if (head === undefined) head = {...(m as Json)}
    else mergeUser(head, m as Json)
  }
  return [head, ...rest]
}

/** A content part list of a chat message's content (a string as one text part). */
const contentList = (content: unknown): Json[] =>
  typeof content === 'string'
    ? [{type: 'text', text: content}]
    : Array.isArray(content)
      ? (content as Json[])
      : []

/** `next`'s content after `into`'s: two strings with a blank line between, else their parts in order. */
function mergeUser(into: Json, next: Json): void {
  if (typeof into.content === 'string' && typeof next.content === 'string')
    into.content = `${into.content}\n\n${next.content}`
  else into.content = [...contentList(into.content), ...contentList(next.content)]
}

/**
 * `next` after `into`: the texts with a blank line between, the tool calls one list, the reasoning
 * (each field, `reasoning_details` a list) joined.
 */
function mergeAssistant(into: Json, next: Json): void {
  // (a client's own content as a list of parts, passed through: the parts in order)
  if (Array.isArray(into.content) || Array.isArray(next.content))
    into.content = [...contentList(into.content), ...contentList(next.content)]
  else {
    const a = typeof into.content === 'string' ? into.content : ''
    const b = typeof next.content === 'string' ? next.content : ''
    into.content = a && b ? `${a}\n\n${b}` : a || b || null
  }
  for (const field of ['reasoning_content', 'reasoning'] as const) {
    const x = into[field]
    const y = next[field]
    if (typeof y === 'string' && y) into[field] = typeof x === 'string' && x ? `${x}\n\n${y}` : y
  }
  if (Array.isArray(next.reasoning_details))
    into.reasoning_details = [
      ...((into.reasoning_details as unknown[] | undefined) ?? []),
      ...next.reasoning_details,
    ]
  if (Array.isArray(next.tool_calls))
    into.tool_calls = [...((into.tool_calls as unknown[] | undefined) ?? []), ...next.tool_calls]
}

/** A user turn: its tool results first, each a `tool` message, then its other content. */
function encodeUser(m: Message, out: Json[]): void {
  // (their images and PDFs go with the user's content: a tool message takes text only)
  const rest: Array<TextPart | ImagePart> = []
  for (const p of m.parts)
    if (p.type === 'tool_result') {
      out.push({role: 'tool', tool_call_id: p.callId, content: resultText(p.content)})
      for (const c of p.content) if (c.type === 'image' && mediaText(c) === undefined) rest.push(c)
    }
  for (const p of m.parts) if ((p.type === 'text' && p.text !== '') || p.type === 'image') rest.push(p)
  if (rest.length) pushMessage(out, {role: 'user', content: userContent(rest)})
}

function encodeToolChoice(c: ToolChoice): unknown {
  // (a forced web search never gets here: refuseSearchRequest)
  return c.type === 'tool' ? {type: 'function', function: {name: c.name}} : c.type
}

/**
 * Chat completions has no web search: a request whose point is one (Claude Code's WebSearch forces
 * it, Gemini CLI's sends it as its only tool) is refused, since the model would answer from memory
 * as though it had searched; a search offered beside function tools (Codex) is only left out.
 */
function refuseSearchRequest(request: Request): void {
  const choice = request.toolChoice?.type
  if (!request.webSearch || choice === 'none') return
  if (choice !== 'web_search' && request.tools.length > 0) return
  throw new TranslationError(
    'web search cannot be translated to a chat completions upstream: it has no web search tool, and its model would answer from memory as though it had searched. Route this agent to a Responses, Messages or Gemini provider to search the web',
  )
}

function encodeResponseFormat(f: ResponseFormat): Json {
  if (f.type !== 'json_schema') return {type: f.type}
  return {
    type: 'json_schema',
    json_schema: {
      name: f.name ?? 'response',
      schema: f.schema,
      ...(f.strict !== undefined ? {strict: f.strict} : {}),
    },
  }
}

function requestEffort(r: Request): Effort | undefined {
  if (!r.reasoning || r.reasoning.disabled) return undefined
  if (r.reasoning.effort) return r.reasoning.effort
  return r.reasoning.budgetTokens !== undefined ? budgetEffort(r.reasoning.budgetTokens) : undefined
}

function encodeRequest(request: Request, model: string, ctx?: CodecContext): Record<string, unknown> {
  refuseSearchRequest(request)
  // (a schema whose top level is a union, which OpenAI refuses, as one object)
  const tools = objectTools(request.tools).map((t) => {
    const fn: Record<string, unknown> = {name: t.name}
    if (t.description !== undefined) fn.description = t.description
    fn.parameters = t.parameters
    return {type: 'function', function: fn}
  })
  const builtin = (request.builtinTools ?? []).filter((t) => t.family === 'chat').map((t) => t.raw)
  const allTools = [...tools, ...builtin]
  const effort = requestEffort(request)
  // The body's members in the order they are sent, each optional one set (or assigned, as a spread
  // would: a name already there keeps its place) only when there: a spread of a literal makes and
  // copies an object, a dozen a request.
  const body: Record<string, unknown> = {
    model,
    messages: encodeMessages(
      request,
      (takesCacheMarks(model) || ctx?.qwenCacheMarks === true) && ctx?.noCacheMarks !== true,
      ctx?.systemInPlace === true,
    ),
  }
  if (allTools.length) {
    body.tools = allTools
    if (request.toolChoice) body.tool_choice = encodeToolChoice(request.toolChoice)
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls
  }
  // (OpenAI's own API: as `max_completion_tokens`, which its reasoning models take and
  // `max_tokens` they refuse)
  const limitField = ctx?.openAiApi === true ? 'max_completion_tokens' : 'max_tokens'
  if (request.maxTokens !== undefined) body[limitField] = request.maxTokens
  // a client that sets none (Codex, Gemini CLI) would be cut at the server's default (4 096 on GLM
  // at Z.AI and Ark): a generous one instead (the model's own cap where it is known to be lower),
  // except to a local server, whose default is the rest of its window already and whose window
  // may be smaller than it
  // OpenAI's own API neither: its default is the model's own cap (o3 and gpt-5 100 000 and more,
  // their reasoning counted in it), where 32 000 would cut a long turn of a high effort
  else if (ctx?.localServer !== true && ctx?.openAiApi !== true) body[limitField] = defaultMaxTokens(model)
  if (request.temperature !== undefined) body.temperature = request.temperature
  if (request.topP !== undefined) body.top_p = request.topP
  if (request.stop?.length) body.stop = request.stop
  if (request.responseFormat) body.response_format = encodeResponseFormat(request.responseFormat)
  // GPT-5's verbosity, to OpenAI's own API only: another chat server may refuse a field it does
  // not know (and one of OpenAI's models that refuses it is learned away, adaptations.ts)
  if (request.verbosity && ctx?.openAiApi === true) body.verbosity = request.verbosity
  // (as the model takes it: GLM-5.3 has no medium, thinking-off.ts; a name test for such an effort only)
  if (effort) body.reasoning_effort = chatEffort(model, effort, request.reasoning?.beyond)
  // (a name test only for a request that asked for no thinking)
  if (request.reasoning?.disabled) Object.assign(body, thinkingOffFields(model, ctx?.localServer === true))
  // (a flag read: set only for a model on a host that drops earlier reasoning unless asked, with
  // reasoning on, ../daemon/router/proxy.ts; the history looked at only then)
  else if (ctx?.preservedThinking && request.reasoning)
    Object.assign(body, preservedThinkingFields(ctx.preservedThinking, body.messages as Json[]))
  if (request.user && request.user.length <= 64) body.user = request.user
  // (a flag read: set only for OpenAI's own API and a request with a key, ../daemon/router/proxy.ts)
  if (ctx?.cacheKeys) Object.assign(body, cacheKeyField(request))
  if (request.stream) {
    body.stream = true
    body.stream_options = {include_usage: true}
    // (a flag read: set only for GLM-4.6 on at Z.AI, ../daemon/router/proxy.ts)
    if (ctx?.toolStream && allTools.length) body.tool_stream = true
  }
  return body
}

/**
 * The field that has the host keep the reasoning of the history's assistant turns in the model's
 * input, where the request sends some back (`reasoning_content`, or `reasoning`): without it the
 * server drops each earlier turn's reasoning, and the model works out again what it had worked out
 * (its reasoning also becomes input, cached with the prefix as the rest). Each vendor's own words:
 * - DashScope: `preserve_thinking: true` ("controls whether prior assistant reasoning_content is
 *   folded into the model's input", off by default for qwen3.6-plus, qwen3.7-max/-plus and
 *   kimi-k2.6 there: QwenLM/qwen-code PR #5637, vercel/ai PR #20871 after Alibaba's Chat API
 *   reference; other models ignore it);
 * - Z.AI and BigModel: `thinking: {type: "enabled", clear_thinking: false}` (docs.z.ai "Thinking
 *   Mode": preserved thinking, since GLM-4.7, "disabled by default on the standard API endpoint",
 *   on by default on the Coding Plan's);
 * - Moonshot: `thinking: {type: "enabled", keep: "all"}` (kimi-k2.6 only: "`null` (default) or
 *   omitted: the server ignores `reasoning_content` from historical turns", Moonshot's thinking
 *   guide as can1357/oh-my-pi PR #1839 quotes it; MoonshotAI/kimi-code PR #1417).
 * None for a history with no reasoning in it. A server that refuses the field learns to go
 * without it (../daemon/router/adaptations.ts: `preserve_thinking`, `thinking`).
 */
function preservedThinkingFields(host: PreservedThinking, messages: Json[]): Json | undefined {
  const back = messages.some(
    (m) =>
      m.role === 'assistant' &&
      ((typeof m.reasoning_content === 'string' && m.reasoning_content !== '') ||
        (typeof m.reasoning === 'string' && m.reasoning !== '')),
  )
  if (!back) return undefined
  if (host === 'dashscope') return {preserve_thinking: true}
  return {
    thinking: host === 'zai' ? {type: 'enabled', clear_thinking: false} : {type: 'enabled', keep: 'all'},
  }
}

/**
 * The request's cache key (Codex's `prompt_cache_key`, a Claude Code session, a chat client's key)
 * for OpenAI's chat completions, which take `prompt_cache_key` as the Responses API does: the key,
 * with the prompt's prefix, routes the request to the machine that holds its cache (OpenAI's
 * prompt caching guide; new-api #6538 measured 0 % cached over a translation that dropped it, 88 %
 * with it). Only for `api.openai.com` (`ctx.cacheKeys`): other chat servers refuse the field
 * (Azure Foundry's "Unrecognized request argument supplied: prompt_cache_key", NVIDIA NIM's
 * "Unsupported parameter(s)"), and one that does is learned away (../daemon/router/adaptations.ts).
 */
function cacheKeyField(request: Request): {prompt_cache_key: string} | undefined {
  return request.cacheKey ? {prompt_cache_key: request.cacheKey} : undefined
}

// ---- answers ----

function decodeResponse(body: unknown, ctx?: CodecContext): Response {
  const b = bodyObject(body, 'chat answer')
  const choice = arr(b.choices)[0]
  if (!isObj(choice) || !isObj(choice.message))
    throw new TranslationError('chat answer has no choices[0].message', 502)
  const m = choice.message
  const parts: Part[] = []
  const reasoning = str(m.reasoning_content) || str(m.reasoning)
  // OpenRouter's `reasoning_details` (a cheap test first: most answers have none)
  const details = m.reasoning_details !== undefined ? detailsPart(m.reasoning_details, reasoning) : undefined
  if (details) parts.push(details)
  else if (reasoning) parts.push({type: 'reasoning', text: reasoning, signature: chatReasoningSignature(m)})
  const content =
    typeof m.content === 'string'
      ? m.content
      : Array.isArray(m.content)
        ? answerChunks(m.content, parts)
        : texts(contentParts(m.content, 'answer'))
            .map((t) => t.text)
            .join('')
  // reasoning in `<think>` tags at the start of the content (`think`): a reasoning part of its own;
  // content that only closes the tag (its template opened it in the prompt), when the model is
  // known to answer so or the content has a `</think>` (a byte search)
  let think: {reasoning: string; text: string; unclosed?: boolean} | undefined
  let inPrompt: ThinkInPrompt | undefined
  let repaired = 0
  let nameless = 0
  if (content) {
    think = splitThink(content)
    // (learned, unless the server gave the reasoning apart: then the content is the answer, as the
    // stream decoder reads it)
    const learned = ctx?.thinkOpen === true && parts.length === 0
    if (!think && (learned || content.includes(THINK_CLOSE))) {
      think = splitPromptThink(content, learned)
      if (think) inPrompt = think.unclosed ? 'unclosed' : learned ? undefined : 'closed'
    }
  }
  if (think?.reasoning)
    parts.push({type: 'reasoning', text: think.reasoning, signature: {family: 'chat', value: THINK_TAGS}})
  const answer = think ? think.text : content
  if (answer) parts.push({type: 'text', text: answer})
  if (typeof m.refusal === 'string' && m.refusal) parts.push({type: 'text', text: m.refusal})
  // (the ids the upstream gave the calls so far: one that comes again is not the client's id)
  let upstreamIds: Set<string> | undefined
  for (const raw of arr(m.tool_calls)) {
    const call = isObj(raw) ? raw : {}
    const fn = isObj(call.function) ? call.function : {}
    const upstreamId = str(call.id)
    const repeated = upstreamId !== undefined && upstreamIds?.has(upstreamId) === true
    if (upstreamId) (upstreamIds ??= new Set()).add(upstreamId)
    const name = str(fn.name)
    // (a call with no name can be run by no client, and is the next turn's 400 upstream: left out)
    if (!name) {
      nameless++
      continue
    }
    const part: ToolCallPart = {
      type: 'tool_call',
      id: answerCallId(upstreamId, ctx, repeated),
      name,
      arguments: argsText(fn.arguments) || '{}',
    }
    // arguments that are no JSON (Qwen3-Coder's and GLM's tool parsers): their syntax repaired
    // (a custom tool's free text aside: it is the input as the model wrote it)
    const fixed = repairedArgsText(part.arguments, toolSchema(ctx, part.name))
    if (fixed !== undefined && !keepsRawInput(ctx, part.name, part.arguments)) {
      part.arguments = fixed
      repaired++
    }
    // Google's thought signature on the call (its OpenAI-compatible endpoint, Vertex's)
    if (call.extra_content !== undefined) {
      const signature = extraSignature(call.extra_content)
      if (signature) part.signature = signature
    }
    parts.push(part)
  }
  const broken = brokenFinish(choice.finish_reason)
  if (broken) throw new TranslationError(broken, 502)
  if (nameless && parts.length === 0) throw new TranslationError(ONLY_NAMELESS, 502)
  const hasTools = parts.some((p) => p.type === 'tool_call')
  let stop: StopReason = chatFinish(choice.finish_reason, hasTools)
  if (typeof m.refusal === 'string' && m.refusal && !answer) stop = 'refusal'
  const response: Response = {
    id: str(b.id) || makeId(ctx, 'chatcmpl-'),
    model: str(b.model) ?? ctx?.request?.model ?? '',
    parts,
    stop,
    usage: decodeChatUsage(b.usage ?? choice.usage),
  }
  if (inPrompt) response.thinkInPrompt = inPrompt
  if (repaired) response.repairedArgs = repaired
  if (nameless) response.namelessCalls = nameless
  return response
}

/**
 * The text of an answer's `content` array (Mistral's reasoning answers: `thinking` chunks, then
 * `text` chunks), its `thinking` chunks pushed to `parts` as reasoning parts (signature value
 * {@link MISTRAL_THINKING}). Other chunk types (a `reference` to a tool's result, an image) have
 * nothing a client of another family can show as the answer, and are left out.
 */
function answerChunks(chunks: unknown[], parts: Part[]): string {
  let text = ''
  for (const raw of chunks) {
    if (!isObj(raw)) continue
    if (raw.type === 'text' || raw.type === 'refusal') text += str(raw.text) ?? str(raw.refusal) ?? ''
    else if (raw.type === 'thinking') {
      const thought = thinkingChunkText(raw)
      if (thought)
        parts.push({type: 'reasoning', text: thought, signature: {family: 'chat', value: MISTRAL_THINKING}})
    }
  }
  return text
}

function encodeResponse(response: Response, ctx?: CodecContext): Record<string, unknown> {
  storeCarry(response.parts, 'chat', ctx?.carry, true, ctx?.request)
  const text = response.parts.map((p) => (p.type === 'text' ? p.text : '')).join('')
  const reasoning = response.parts
    .flatMap((p) => (p.type === 'reasoning' && p.text ? [p.text] : []))
    .join(REASONING_BETWEEN)
  const calls = response.parts.flatMap((p) =>
    p.type === 'tool_call'
      ? [{id: p.id, type: 'function', function: {name: p.name, arguments: p.arguments || '{}'}}]
      : [],
  )
  return {
    id: response.id || makeId(ctx, 'chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: response.model || ctx?.request?.model || '',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text || (calls.length ? null : ''),
          ...(reasoning ? {reasoning_content: reasoning} : {}),
          ...(calls.length ? {tool_calls: calls} : {}),
        },
        logprobs: null,
        finish_reason: CHAT_FINISH[response.stop],
      },
    ],
    usage: chatUsage(response.usage),
  }
}

const q = JSON.stringify
const n = (value: number): string => (Number.isFinite(value) ? String(value) : 'null')

/** {@link encodeResponse} written as text: the same bytes, without the object. */
function encodeResponseText(response: Response, ctx?: CodecContext): string {
  storeCarry(response.parts, 'chat', ctx?.carry, true, ctx?.request)
  let text = ''
  let reasoning = ''
  let calls = ''
  for (const p of response.parts) {
    if (p.type === 'text') text += p.text
    else if (p.type === 'reasoning' && p.text) reasoning += (reasoning ? REASONING_BETWEEN : '') + p.text
    else if (p.type === 'tool_call')
      calls += `${calls ? ',' : ''}{"id":${q(p.id)},"type":"function","function":{"name":${q(p.name)},"arguments":${q(p.arguments || '{}')}}}`
  }
  const id = response.id || makeId(ctx, 'chatcmpl-')
  const model = response.model || ctx?.request?.model || ''
  const content = text ? q(text) : calls ? 'null' : '""'
  const u = response.usage
  const input = u.inputTokens ?? 0
  const output = u.outputTokens ?? 0
  return `{"id":${q(id)},"object":"chat.completion","created":${Math.floor(Date.now() / 1000)},"model":${q(model)},"choices":[{"index":0,"message":{"role":"assistant","content":${content}${reasoning ? `,"reasoning_content":${q(reasoning)}` : ''}${calls ? `,"tool_calls":[${calls}]` : ''}},"logprobs":null,"finish_reason":${q(CHAT_FINISH[response.stop])}}],"usage":{"prompt_tokens":${n(input)},"completion_tokens":${n(output)},"total_tokens":${n(input + output)},"prompt_tokens_details":{"cached_tokens":${n(u.cacheReadTokens ?? 0)}${u.cacheCreationTokens ? `,"cache_write_tokens":${n(u.cacheCreationTokens)}` : ''}},"completion_tokens_details":{"reasoning_tokens":${n(u.reasoningTokens ?? 0)}}}}`
}

export const chatCodec: Codec = {
  family: 'chat',
  decodeRequest: (body, ctx) => decodeRequest(body, ctx),
  encodeRequest: (request, model, ctx) => encodeRequest(request, model, ctx),
  path: () => '/v1/chat/completions',
  decodeResponse,
  encodeResponse,
  encodeResponseText,
  streamDecoder: (ctx) => new ChatStreamDecoder(ctx),
  streamEncoder: (ctx) => new ChatStreamEncoder(ctx),
}
