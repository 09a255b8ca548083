/**
 * Chat Completions streams: the decoder of an upstream's `chat.completion.chunk` events and the
 * encoder of a chat client's stream.
 */
import {ArgsGuard} from './args-guard.js'
import {DetailsMerger, detailsSignature, detailsText, extraSignature} from './chat-signatures.js'
import type {Json} from './cm-common.js'
import {namedStatus} from './errors.js'
import {endsWithBrace} from './json-bytes.js'
import {
  argsText,
  answerCallId,
  arr,
  chatReasoningSignature,
  closesPromptThink,
  fencesBefore,
  firstNonSpace,
  isCompleteJson,
  isObj,
  makeId,
  MISTRAL_THINKING,
  num,
  REASONING_BETWEEN,
  storeCarry,
  storeTextCarry,
  str,
  tagStartAtEnd,
  THINK_CLOSE,
  THINK_OPEN,
  THINK_TAGS,
  thinkingChunkText,
  keepsRawInput,
  toolSchema,
} from './cm-common.js'
import type {
  BlockStart,
  CodecContext,
  Opaque,
  Part,
  ReasoningPart,
  StopReason,
  StreamDecoder,
  StreamEncoder,
  StreamEvent,
  ThinkInPrompt,
  Usage,
} from './ir.js'
import type {StringTemplate} from './sse-template.js'
import {learnTemplate, templateString} from './sse-template.js'

/**
 * A chat `finish_reason` (missing or unknown: `tool_use` when tool calls were seen, else `end`).
 * `tool_calls` without a call (an empty `tool_calls` array: LM Studio, relays) is `end`: a
 * Messages client told `tool_use` with no `tool_use` block ends its turn running nothing and
 * saying nothing (opencode2api #27).
 */
export function chatFinish(reason: unknown, sawTools: boolean): StopReason {
  if (reason === 'length') return 'max_tokens'
  // (Z.ai's GLM names its filter `sensitive`, and its context's end `model_context_window_exceeded`)
  if (reason === 'content_filter' || reason === 'sensitive') return 'content_filter'
  if (reason === 'model_context_window_exceeded') return 'context_window'
  // Some servers (vLLM, older proxies) say `stop` after tool calls: the client must run them.
  return sawTools ? 'tool_use' : 'end'
}

/**
 * A choice's `finish_reason` when it has one: not `null`, not missing, and not `""`, which
 * SenseNova, Perplexity, Together and some relays (OpenCode Zen's hy3) send on every chunk before
 * the real one (read as the stop, it would end the client's answer at its first chunk).
 */
export function finishOf(choice: {finish_reason?: unknown}): unknown {
  const reason = choice.finish_reason
  return reason === null || reason === undefined || reason === '' ? undefined : reason
}

/**
 * The `finish_reason`s that say the answer broke off rather than ended: OpenRouter's `error` (its
 * `error` object, when it sends one, is read first), vLLM's `abort`, DeepSeek's
 * `insufficient_system_resource`, Z.ai's `network_error`. Read as a stop, they would hand the client a cut answer as a
 * whole one.
 */
const BROKEN_FINISH = new Set(['error', 'abort', 'insufficient_system_resource', 'network_error'])

/** The error message of a `finish_reason` that says the answer broke off (undefined for any other). */
export function brokenFinish(reason: unknown): string | undefined {
  return typeof reason === 'string' && BROKEN_FINISH.has(reason)
    ? `upstream stopped the answer: finish_reason ${reason}`
    : undefined
}

/**
 * Chat `usage` in gwctl's meaning (prompt_tokens already includes cached tokens, read and
 * written). The cache reads are OpenAI's `prompt_tokens_details.cached_tokens`, DeepSeek's
 * `prompt_cache_hit_tokens`, or Moonshot's (Kimi's) `cached_tokens` beside the counts; the cache
 * writes OpenRouter's `prompt_tokens_details.cache_write_tokens`, DashScope's
 * `prompt_tokens_details.cache_creation_input_tokens` (its explicit cache, Qwen models with
 * `cache_control` marks: billed at 125 % of input; the DashScope SDK's `PromptTokensDetails`,
 * Alibaba Cloud Model Studio's context-cache guide) or LiteLLM's `cache_creation_input_tokens`
 * beside the counts. DashScope may break its writes down as Anthropic does,
 * `prompt_tokens_details.cache_creation: {ephemeral_5m_input_tokens, ephemeral_1h_input_tokens}`
 * (the DashScope SDK's `PromptTokensDetails.CacheCreation`): the 1-hour part is `cache1hTokens`,
 * as a Messages upstream's (`messages-stream.ts`), never more than the writes.
 */
export function decodeChatUsage(raw: unknown): Usage {
  const u = isObj(raw) ? raw : {}
  const prompt = isObj(u.prompt_tokens_details) ? u.prompt_tokens_details : {}
  const completion = isObj(u.completion_tokens_details) ? u.completion_tokens_details : {}
  // every field by name, no spread of emptyUsage(): an object literal that starts with a spread and
  // goes on with more members takes µs on Node 20's V8
  const usage: Usage = {
    inputTokens: num(u.prompt_tokens) ?? 0,
    outputTokens: num(u.completion_tokens) ?? 0,
    cacheReadTokens: num(prompt.cached_tokens) ?? num(u.prompt_cache_hit_tokens) ?? num(u.cached_tokens) ?? 0,
    // OpenRouter's `cache_write_tokens`, DashScope's in the details, LiteLLM's beside the counts
    // (Claude behind it)
    cacheCreationTokens:
      num(prompt.cache_write_tokens) ??
      num(prompt.cache_creation_input_tokens) ??
      num(u.cache_creation_input_tokens) ??
      0,
    reasoningTokens: num(completion.reasoning_tokens) ?? 0,
  }
  // xAI counts the reasoning beside the completion, not in it (its total is prompt + completion +
  // reasoning: vercel/ai #12425, inspect_ai #5528): the output is both, as every other server
  // counts it (two additions, on an answer that says it reasoned)
  if (usage.reasoningTokens > 0) {
    const total = num(u.total_tokens)
    if (total !== undefined && total === usage.inputTokens + usage.outputTokens + usage.reasoningTokens)
      usage.outputTokens += usage.reasoningTokens
  }
  // (only where DashScope breaks its writes down: no other chat usage carries the member)
  if (isObj(prompt.cache_creation)) {
    const oneHour = num(prompt.cache_creation.ephemeral_1h_input_tokens)
    if (oneHour !== undefined) usage.cache1hTokens = Math.min(oneHour, usage.cacheCreationTokens)
  }
  return usage
}

export function chatUsage(u: Partial<Usage>): Json {
  const input = u.inputTokens ?? 0
  const output = u.outputTokens ?? 0
  return {
    prompt_tokens: input,
    completion_tokens: output,
    total_tokens: input + output,
    // (the prompt written to the cache as OpenAI's GPT-5.6 and OpenRouter say it, when any was)
    prompt_tokens_details: u.cacheCreationTokens
      ? {cached_tokens: u.cacheReadTokens ?? 0, cache_write_tokens: u.cacheCreationTokens}
      : {cached_tokens: u.cacheReadTokens ?? 0},
    completion_tokens_details: {reasoning_tokens: u.reasoningTokens ?? 0},
  }
}

interface OpenCall {
  block?: number
  /** The id the client is given (cm-common.ts `answerCallId`). */
  id: string
  /** The id the upstream sent with the call's first delta, if any (the same on its later ones). */
  upstreamId?: string
  name: string
  args: string
  /** Argument text that came before the name (a block needs its name to start). */
  pending: string
  open: boolean
  /**
   * The name of the next call at this call's index, which came without an id and without
   * arguments after this call's arguments were whole: the call starts with its first arguments.
   */
  nextName?: string
  /** Google's `extra_content` (its thought signature), as a chat signature. */
  signature?: Opaque
  /** What of the arguments can go out before the call's end (./args-guard.ts). */
  guard?: ArgsGuard
}

/** The start of a tool call's block (its signature only when it has one: one shape for most). */
const callStart = (call: OpenCall): BlockStart =>
  call.signature
    ? {type: 'tool_call', id: call.id, name: call.name, signature: call.signature}
    : {type: 'tool_call', id: call.id, name: call.name}

/**
 * A chunk that carried nothing but one text (or reasoning) delta, split around that delta's
 * string (see ./sse-template.ts).
 */
interface DeltaTemplate extends StringTemplate {
  /** `args`: the arguments of one tool call (`tool_calls: [{index, function: {arguments}}]`). */
  kind: 'text' | 'reasoning' | 'args'
  /** The tool call's index (kind `args`). */
  call?: number
  /**
   * A text or reasoning template's chunk with an empty delta and a finish reason in place of its
   * `null` (the chunk that ends most streams), split around that reason's string.
   */
  finish?: StringTemplate
}

/** Delta keys whose chunks become templates, and the kind of each. */
const TEMPLATE_KEYS = {content: 'text', reasoning_content: 'reasoning'} as const
const DELTA_OPEN = '"delta":{'
const ROLE = '"role":"assistant",'
const ROLE_DELTA = `${DELTA_OPEN}${ROLE}"content":`
const FINISH = '"finish_reason"'
const EMPTY_CONTENT = '"content":""'
const EMPTY_REFUSAL = '"content":"","refusal":null'
/** A key whose string means nothing to the decoder: OpenAI's per-chunk padding. */
const IGNORED = 'obfuscation'

/**
 * Where the answer's content stands as to `<think>` tags (see ChatStreamDecoder.content): not yet
 * known (no content but white space, or the start of the tag, so far), plain text (nothing more
 * is looked for), inside the tags (reasoning), just after `</think>` (white space there is not the
 * text's), or text that may still close a `<think>` the prompt opened (see
 * ChatStreamDecoder.watch).
 */
const THINK_UNKNOWN = 0
const THINK_NONE = 1
const THINK_INSIDE = 2
const THINK_AFTER = 3
const THINK_WATCH = 4

/**
 * Whether `text` holds a `<` or a backtick (ChatStreamDecoder.watch): one pass over a chunk's few
 * characters, cheaper than two searches; a long text is searched.
 */
function tagOrTick(text: string): boolean {
  if (text.length > 32) return text.indexOf('<') !== -1 || text.indexOf('`') !== -1
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x3c || c === 0x60) return true
  }
  return false
}

/** Reads a chat upstream's stream. */
export class ChatStreamDecoder implements StreamDecoder {
  private started = false
  private done = false
  private next = 0
  private open?: {kind: 'text' | 'reasoning'; index: number}
  private calls = new Map<number, OpenCall>()
  /** The ids the upstream gave this answer's calls so far (made at the first call with an id). */
  private upstreamIds?: Set<string>
  private sawTools = false
  /** Its finish reason came (see {@link StreamDecoder.stopped}). */
  stopped = false
  private usage?: Usage
  private template?: DeltaTemplate
  /**
   * A parsed chunk to learn a template from, learned at the next chunk: its events are handed on
   * first (a stream's first event waits for nothing).
   */
  private toLearn?: {chunk: Json; choice: Json; data: string}
  /** Where the content stands as to `<think>` tags (THINK_*). */
  private think = THINK_UNKNOWN
  /** Content held back: the start of a tag the chunk cut, or white space before any content. */
  private held = ''
  /** OpenRouter's `reasoning_details` of the open reasoning block (made at its first piece). */
  private merged?: DetailsMerger
  /** See {@link StreamDecoder.thinkInPrompt}. */
  thinkInPrompt: ThinkInPrompt | undefined
  /** See {@link StreamDecoder.repairedArgs}. */
  repairedArgs = 0
  /** See {@link StreamDecoder.namelessCalls}. */
  namelessCalls = 0
  /**
   * The reasoning of a model whose template opens `<think>` in the prompt (`ctx.thinkOpen`), so
   * far: given as the answer's text too if no `</think>` comes (undefined when not inside it).
   */
  private promptReasoning: string | undefined
  /** Code fences in the text watched so far (THINK_WATCH): a `</think>` inside one is text. */
  private fences = 0

  constructor(private readonly ctx?: CodecContext) {}

  event(_name: string | undefined, data: string): StreamEvent[] {
    if (this.done) return []
    const toLearn = this.toLearn
    if (toLearn) {
      this.toLearn = undefined
      this.learn(toLearn.chunk, toLearn.choice, toLearn.data)
    }
    const template = this.template
    if (template) {
      const fast = this.fromTemplate(template, data)
      if (fast) return fast
      const reason = template.finish && templateString(template.finish, data)
      // what the parse of that chunk would give: a delta with nothing in it, then the finish
      if (reason !== undefined) return this.interpret({choices: [{delta: {}, finish_reason: reason}]}, data)
    }
    const text = data.trim()
    if (text === '[DONE]') return this.finish()
    let chunk: Json
    try {
      const parsed: unknown = JSON.parse(text)
      if (!isObj(parsed)) return []
      chunk = parsed
    } catch {
      // an empty event is nothing; anything else that is not JSON would lose a part of the answer
      if (data.trim() === '') return []
      throw new Error(`upstream event data is not JSON: ${data.slice(0, 80)}`)
    }
    // (`"error": null` on an answer's chunk is none: servers and gateways write it, e.g. gollm's
    // test "explicit error: null must stream through"; review68)
    if (chunk.error !== undefined && chunk.error !== null) return this.fail(chunk.error)
    return this.interpret(chunk, data)
  }

  /** The events of one parsed chunk (`data`: its text, kept as a template when it may be one). */
  private interpret(chunk: Json, data: string): StreamEvent[] {
    const out: StreamEvent[] = []
    if (!this.started) {
      this.started = true
      out.push({
        type: 'start',
        id: str(chunk.id) || makeId(this.ctx, 'chatcmpl-'),
        model: str(chunk.model) ?? '',
      })
    }
    let justStopped = false
    const choice = arr(chunk.choices)[0]
    if (isObj(choice)) {
      const delta = isObj(choice.delta) ? choice.delta : {}
      const reasoning = str(delta.reasoning_content) || str(delta.reasoning)
      // the field it came in goes into the signature
      if (reasoning) this.textual('reasoning', reasoning, out, chatReasoningSignature(delta).value)
      // OpenRouter's `reasoning_details` pieces (before the chunk's tool calls: they are the
      // reasoning's that led to them)
      if (delta.reasoning_details !== undefined) this.details(delta.reasoning_details, !reasoning, out)
      const content = str(delta.content) || str(delta.refusal)
      if (content) {
        if (this.think === THINK_WATCH) this.watch(content, out)
        else if (this.think === THINK_NONE) this.textual('text', content, out)
        else this.content(content, out)
      } else if (Array.isArray(delta.content)) this.chunks(delta.content, out)
      for (const raw of arr(delta.tool_calls)) if (isObj(raw)) this.toolCall(raw, out)
      const finish = finishOf(choice)
      if (finish !== undefined && !this.stopped) {
        const broken = brokenFinish(finish)
        if (broken) {
          this.done = true
          out.push({type: 'error', status: 502, message: broken})
          return out
        }
        this.closeAll(out)
        if (this.onlyNameless()) {
          this.done = true
          out.push({type: 'error', status: 502, message: ONLY_NAMELESS})
          return out
        }
        this.stopped = true
        justStopped = true
        out.push({type: 'stop', reason: chatFinish(finish, this.sawTools)})
      }
    }
    // Moonshot's streams (Kimi) put it in the choice, on the finish chunk: looked for only there,
    // when the chunk has none (one property read a chunk)
    const rawUsage = chunk.usage ?? (isObj(choice) ? choice.usage : undefined)
    const usageNew = isObj(rawUsage)
    if (usageNew) this.usage = decodeChatUsage(rawUsage)
    // Usage follows the stop (a server that sends it earlier, on every chunk, is held till then).
    if (this.usage && this.stopped && (usageNew || justStopped)) out.push({type: 'usage', usage: this.usage})
    if (!this.stopped && !usageNew && isObj(choice)) this.toLearn = {chunk, choice, data}
    return out
  }

  /**
   * Keeps `data` as the template of the chunks after it when it carried nothing but one text or
   * reasoning delta: one choice with no finish reason, a delta of one key, no usage, no error.
   * The key must occur once in the whole text (a quote inside a JSON string is escaped, so
   * `"content"` can only be a key or a value there, and a value is not followed by a colon): the
   * string after it is then that delta's, whatever else the chunk holds.
   */
  private learn(chunk: Json, choice: Json, data: string): void {
    this.template = undefined
    if (arr(chunk.choices).length !== 1) return
    if (finishOf(choice) !== undefined) return
    const delta = choice.delta
    if (!isObj(delta)) return
    const keys = Object.keys(delta)
    if (keys.length === 1 && keys[0] === 'tool_calls') {
      this.learnArgs(delta.tool_calls, data, typeof chunk.obfuscation === 'string' ? IGNORED : undefined)
      return
    }
    // OpenAI pads every chunk with an `obfuscation` string of its own: a second hole, ignored
    const ignore = typeof chunk.obfuscation === 'string' ? IGNORED : undefined
    // A stream's first chunk, `"delta":{"role":"assistant","content":""}` (vLLM, DeepSeek, the
    // simulator; OpenAI adds `"refusal":null`): the text chunks after it are that chunk without
    // its role (and refusal), so they need no parse of their own to learn from. The role member
    // is the delta's first, the content the next: removing them leaves the same chunk with a
    // delta of one string (`"delta"` occurs once in the text, so it is this chunk's delta; a quote
    // inside a JSON string is escaped, so the text matched is structure).
    if (
      keys[0] === 'role' &&
      keys[1] === 'content' &&
      delta.role === 'assistant' &&
      typeof delta.content === 'string' &&
      (keys.length === 2 ||
        (keys.length === 3 && keys[2] === 'refusal' && delta.refusal === null && delta.content === ''))
    ) {
      const at = data.indexOf(ROLE_DELTA)
      if (at === -1 || data.indexOf('"delta"', at + 1) !== -1 || data.lastIndexOf('"delta"', at - 1) !== -1)
        return
      const content = at + DELTA_OPEN.length + ROLE.length
      let rest = data.slice(content)
      if (keys.length === 3) {
        if (rest.slice(0, EMPTY_REFUSAL.length) !== EMPTY_REFUSAL) return
        rest = EMPTY_CONTENT + rest.slice(EMPTY_REFUSAL.length)
      }
      const without = data.slice(0, at + DELTA_OPEN.length) + rest
      this.keep(learnTemplate(without, 'content', ignore), 'content', choice.finish_reason === null)
      return
    }
    if (keys.length !== 1 || !Object.hasOwn(TEMPLATE_KEYS, keys[0])) return
    const key = keys[0] as keyof typeof TEMPLATE_KEYS
    const value = delta[key]
    if (typeof value !== 'string') return
    this.keep(learnTemplate(data, key, ignore), key, choice.finish_reason === null)
  }

  /**
   * Keeps a text or reasoning template, and its finish form: the template's chunk ends its delta
   * right after the string (`"},`), so the same chunk with an empty delta (`{}`) and a string
   * where its one `"finish_reason":null` is (`nullFinish`: the choice has that key, so the one
   * occurrence in the text is the choice's), is the chunk that finishes the stream.
   */
  private keep(
    template: StringTemplate | undefined,
    key: keyof typeof TEMPLATE_KEYS,
    nullFinish: boolean,
  ): void {
    if (!template) return
    // the fields by name, not a spread: an object literal that starts with a spread and goes on
    // with more members takes µs on Node 20's V8
    const {before, after, tail} = template
    const kept: DeltaTemplate = {before, after, tail, kind: TEMPLATE_KEYS[key]}
    this.template = kept
    if (!nullFinish) return
    const open = `${DELTA_OPEN}"${key}":"`
    // `slice` and `===` rather than endsWith (see ./sse-template.ts)
    if (
      before.slice(before.length - open.length) !== open ||
      after[1] !== '}' ||
      before.includes(FINISH) ||
      tail?.includes(FINISH)
    )
      return
    const head = before.slice(0, before.length - open.length + DELTA_OPEN.length)
    const rest = after.slice(1)
    const at = rest.indexOf(`${FINISH}:null`)
    if (at === -1 || rest.indexOf(FINISH, at + 1) !== -1) return
    kept.finish = {
      before: `${head}${rest.slice(0, at + FINISH.length + 1)}"`,
      after: `"${rest.slice(at + FINISH.length + 5)}`,
      tail,
    }
  }

  /**
   * The events of a chunk that is its template with another delta string, read without a parse;
   * undefined for any other chunk (parsed as usual). The text outside the string is the
   * template's, which parsed to nothing but that delta; the string is checked to be one JSON
   * string (nothing outside it changes meaning), so the chunk means what the template meant with
   * this text.
   */
  /**
   * A chunk of one tool call's arguments and nothing else (no id, name or type: those start a
   * call) is the template of the argument chunks after it (what agents' tool calls stream most).
   */
  private learnArgs(calls: unknown, data: string, ignore: string | undefined): void {
    if (!Array.isArray(calls) || calls.length !== 1 || !isObj(calls[0])) return
    const call = calls[0]
    const index = call.index
    const fn = call.function
    if (typeof index !== 'number' || !isObj(fn) || typeof fn.arguments !== 'string') return
    for (const key in call) if (key !== 'index' && key !== 'function') return
    for (const key in fn) if (key !== 'arguments') return
    const template = learnTemplate(data, 'arguments', ignore)
    if (template)
      this.template = {
        before: template.before,
        after: template.after,
        tail: template.tail,
        kind: 'args',
        call: index,
      }
  }

  private fromTemplate(t: DeltaTemplate, data: string): StreamEvent[] | undefined {
    const text = templateString(t, data)
    if (text === undefined) return undefined
    const out: StreamEvent[] = []
    if (t.kind === 'args') {
      // what the parse would hand toolCall for this chunk
      this.toolCall({index: t.call, function: {arguments: text}}, out)
      return out
    }
    if (!text) return out
    if (t.kind === 'reasoning' || this.think === THINK_NONE) this.textual(t.kind, text, out)
    else if (this.think === THINK_WATCH) this.watch(text, out)
    else this.content(text, out)
    return out
  }

  /**
   * Mistral's content chunks (Magistral; mistral-small and mistral-medium with reasoning on): a
   * delta's `content` as an array of `thinking` chunks (reasoning, signature value
   * {@link MISTRAL_THINKING}) and `text` chunks (read as string content is); the same stream
   * sends later text as plain strings. Other chunk types are left out. (No template is learned
   * from such a chunk, and a template's string never matches one: these are always parsed.)
   */
  private chunks(list: unknown[], out: StreamEvent[]): void {
    for (const raw of list) {
      if (!isObj(raw)) continue
      if (raw.type === 'text') {
        const text = str(raw.text)
        if (!text) continue
        if (this.think === THINK_WATCH) this.watch(text, out)
        else if (this.think === THINK_NONE) this.textual('text', text, out)
        else this.content(text, out)
      } else if (raw.type === 'thinking') {
        const thought = thinkingChunkText(raw)
        if (thought) this.textual('reasoning', thought, out, MISTRAL_THINKING)
      }
    }
  }

  /**
   * Text that may close a `<think>` the model's chat template opened in the prompt (Qwen3's
   * *-Thinking-2507, DeepSeek-R1-0528 under llama.cpp, vLLM or LM Studio without a reasoning
   * parser): its content is `reasoning…</think>\n\nanswer`, with no opening tag. The text streams
   * as it comes (nothing is held back but the start of a tag a chunk cut); a `</think>` that
   * {@link closesPromptThink} (not in a code fence, not quoted) is left out with the white space
   * after it, the rest is text, and the model is learned so (`thinkInPrompt`): its later answers
   * are read as reasoning up to the tag. A chunk with neither `<` nor a backtick (nearly every
   * one) is text at the cost of two byte searches.
   */
  private watch(text: string, out: StreamEvent[]): void {
    if (!this.held && !tagOrTick(text)) {
      this.textual('text', text, out)
      return
    }
    const s = this.held ? this.held + text : text
    this.held = ''
    // words about the tags (a `<think>` first): plain text from here
    const open = s.indexOf(THINK_OPEN)
    let close = s.indexOf(THINK_CLOSE)
    while (close !== -1 && (open === -1 || close < open) && !closesPromptThink(s, close, this.fences))
      close = s.indexOf(THINK_CLOSE, close + 1)
    if (open !== -1 && (close === -1 || open < close)) {
      this.think = THINK_NONE
      this.textual('text', s, out)
      return
    }
    if (close !== -1) {
      if (close > 0) this.textual('text', s.slice(0, close), out)
      this.thinkInPrompt = 'closed'
      this.think = THINK_AFTER
      this.content(s.slice(close + THINK_CLOSE.length), out)
      return
    }
    const cut = tagStartAtEnd(s, THINK_CLOSE) || tagStartAtEnd(s, THINK_OPEN)
    const shown = cut ? s.slice(0, s.length - cut) : s
    this.fences += fencesBefore(shown, shown.length)
    if (cut) this.held = s.slice(s.length - cut)
    if (shown) this.textual('text', shown, out)
  }

  /**
   * Content while it may hold `<think>` tags: an answer whose content starts (after white space)
   * with `<think>` (MiniMax M2's OpenAI endpoint, a reasoning model under llama.cpp, vLLM or Ollama
   * without a reasoning parser) has its reasoning there, up to `</think>`: a reasoning block
   * (signature value `think`, so that it goes back the same way), the rest the answer's text
   * (without the white space right after the tag). A tag may be cut across chunks (`<thi`,
   * `nk>`): the start of one at a chunk's end is held until the next. Content that starts with
   * anything else is text that may still close a `<think>` the prompt opened ({@link watch}); for
   * a model known to answer so (`ctx.thinkOpen`), it is reasoning from its first byte up to
   * `</think>` (see settleContent for an answer without one).
   */
  private content(text: string, out: StreamEvent[]): void {
    let s = this.held ? this.held + text : text
    this.held = ''
    if (this.think === THINK_UNKNOWN) {
      const start = firstNonSpace(s)
      if (
        start === s.length ||
        (s.length - start < THINK_OPEN.length && THINK_OPEN.startsWith(s.slice(start)))
      ) {
        this.held = s
        return
      }
      if (!s.startsWith(THINK_OPEN, start)) {
        // a model whose template opens `<think>` in the prompt (learned): reasoning from the first
        // byte, unless the server gave the reasoning apart (a block came before the content)
        if (this.ctx?.thinkOpen && this.next === 0) {
          this.think = THINK_INSIDE
          this.promptReasoning = ''
        } else {
          this.think = THINK_WATCH
          this.watch(s, out)
          return
        }
      } else {
        this.think = THINK_INSIDE
        s = s.slice(start + THINK_OPEN.length)
      }
    }
    if (this.think === THINK_INSIDE) {
      const close = s.indexOf(THINK_CLOSE)
      if (close === -1) {
        const cut = tagStartAtEnd(s, THINK_CLOSE)
        if (cut) this.held = s.slice(s.length - cut)
        if (s.length > cut) this.reasoning(s.slice(0, s.length - cut), out)
        return
      }
      if (close > 0) this.reasoning(s.slice(0, close), out)
      this.promptReasoning = undefined
      this.think = THINK_AFTER
      s = s.slice(close + THINK_CLOSE.length)
    }
    const start = firstNonSpace(s)
    if (start === s.length) return
    this.think = THINK_NONE
    this.textual('text', start ? s.slice(start) : s, out)
  }

  /** Reasoning of the content (in `<think>` tags, or after the prompt's). */
  private reasoning(text: string, out: StreamEvent[]): void {
    if (this.promptReasoning !== undefined) this.promptReasoning += text
    this.textual('reasoning', text, out, THINK_TAGS)
  }

  /** Content held back (a tag's start that no chunk completed, white space) as what it is. */
  private releaseHeld(out: StreamEvent[]): void {
    const held = this.held
    this.held = ''
    if (this.think === THINK_INSIDE) this.reasoning(held, out)
    else {
      if (this.think !== THINK_WATCH) this.think = THINK_NONE
      this.textual('text', held, out)
    }
  }

  /**
   * Content held back, then, for a model whose template opens `<think>` in the prompt, reasoning
   * that no `</think>` closed (a turn the template did not open thinking for: its content was
   * the answer): the reasoning block closes and its whole text is the answer's text too.
   */
  private settleContent(out: StreamEvent[]): void {
    if (this.held) this.releaseHeld(out)
    const reasoning = this.promptReasoning
    if (reasoning === undefined) return
    this.promptReasoning = undefined
    this.think = THINK_NONE
    if (!reasoning) return
    this.thinkInPrompt = 'unclosed'
    this.closeText(out)
    this.textual('text', reasoning, out)
  }

  end(): StreamEvent[] {
    if (this.done) return []
    // its finish reason came, then the upstream closed without `[DONE]` (servers that leave it
    // out): the answer is whole, as at `[DONE]`; one cut before its finish reason is an error
    if (this.stopped) return this.finish()
    this.done = true
    return [{type: 'error', status: 502, message: 'upstream stream ended before [DONE]'}]
  }

  private fail(raw: unknown): StreamEvent[] {
    this.done = true
    const e = isObj(raw) ? raw : {message: String(raw)}
    // a code that is a status is the status: one-api relays' number (`"code": 429`), LiteLLM's
    // proxy's string (`"code": "429"`, its ProxyException's str(status)), which names nothing else
    const code = typeof e.code === 'string' && /^[45]\d\d$/.test(e.code) ? Number(e.code) : e.code
    // (LiteLLM writes an unset type as Python's `"None"`: no name)
    const type = typeof e.type === 'string' && e.type !== 'None' ? e.type : undefined
    const named = typeof code === 'string' ? code : type
    // else OpenAI's code or type names the status (a rate limit or a spent quota, `insufficient_quota`,
    // as OpenAI-compatible servers say it in a stream: a 429, as its status would be, which the relay
    // reads as a spent quota; `model_not_found` a 404...), or a relay forwards Anthropic's type name
    // (`rate_limit_error`): ./errors.ts `namedStatus`
    const status = typeof code === 'number' && code >= 400 && code < 600 ? code : (namedStatus(named) ?? 502)
    return [
      {
        type: 'error',
        status,
        message: str(e.message) ?? 'upstream stream error',
        ...(named !== undefined ? {code: named} : {}),
        // Google's error as a relay forwards it (one-api kinds): its QuotaFailure and RetryInfo
        ...(Array.isArray(e.details) ? {body: JSON.stringify({error: e})} : {}),
      },
    ]
  }

  reportedUsage(): Partial<Usage> | undefined {
    return this.usage
  }

  private finish(): StreamEvent[] {
    this.done = true
    const out: StreamEvent[] = []
    if (!this.started) out.push({type: 'start', id: makeId(this.ctx, 'chatcmpl-'), model: ''})
    if (!this.stopped) {
      this.closeAll(out)
      if (this.onlyNameless()) {
        out.push({type: 'error', status: 502, message: ONLY_NAMELESS})
        return out
      }
      out.push({type: 'stop', reason: chatFinish(undefined, this.sawTools)})
      if (this.usage) out.push({type: 'usage', usage: this.usage})
    }
    out.push({type: 'end'})
    return out
  }

  private textual(kind: 'text' | 'reasoning', text: string, out: StreamEvent[], field = ''): void {
    if (this.open?.kind !== kind) {
      this.closeText(out)
      this.closeDoneCalls(out)
      const index = this.next++
      this.open = {kind, index}
      out.push({type: 'block_start', index, block: {type: kind}})
      if (kind === 'reasoning')
        out.push({type: 'reasoning_opaque', index, signature: {family: 'chat', value: field}})
    }
    out.push({type: kind === 'text' ? 'text_delta' : 'reasoning_delta', index: this.open.index, text})
  }

  /**
   * OpenRouter's `reasoning_details` pieces: merged by item until the reasoning block closes, which
   * then gets them as its signature (see ./chat-signatures.ts). Pieces with no reasoning block open
   * (after the text, beside a tool call) open one of their own. `text`: the chunk had no
   * `reasoning` beside them, so their text items' text is the reasoning's.
   */
  private details(raw: unknown, text: boolean, out: StreamEvent[]): void {
    if (!Array.isArray(raw) || raw.length === 0) return
    const own = text ? detailsText(raw) : ''
    if (own) this.textual('reasoning', own, out, 'reasoning')
    else if (this.open?.kind !== 'reasoning') {
      this.closeText(out)
      this.closeDoneCalls(out)
      const index = this.next++
      this.open = {kind: 'reasoning', index}
      out.push({type: 'block_start', index, block: {type: 'reasoning'}})
    }
    ;(this.merged ??= new DetailsMerger()).add(raw)
  }

  private toolCall(raw: Json, out: StreamEvent[]): void {
    const fn = isObj(raw.function) ? raw.function : {}
    const key = num(raw.index) ?? 0
    const id = str(raw.id)
    let name = str(fn.name)
    // (an object, llama.cpp's and TGI's, is its JSON text: a whole value, on the call's first chunk)
    const args = argsText(fn.arguments) ?? ''
    let call = this.calls.get(key)
    // DeepSeek V4's shifted heads (foldNameless), three calls or more: the next call's head where
    // the call before it put its arguments, which go to that call now, before the head opens its own
    if (call && id && call.block === undefined && !call.name && call.pending) {
      const owner = this.lastUnargued()
      if (owner) {
        this.argsDelta(owner, call.pending, out)
        call.open = false
        call = undefined
      }
    }
    if (call && call.block !== undefined) {
      // A server that reuses index 0 for every call (new id each time): a new call.
      if (id && call.upstreamId !== id) {
        this.closeCall(call, out)
        call = undefined
      } else if (!id && (name || call.nextName) && endsWithBrace(call.args) && isCompleteJson(call.args)) {
        // One that reuses the index with no new id (Gemini's and Qwen's OpenAI-compatible
        // servers): a name where the call's arguments are already one whole JSON value is the next
        // call's. A name without arguments waits for them, so that a server that repeats the name
        // on every chunk, a last empty one included, makes no call of that.
        if (!args) {
          if (name) call.nextName = name
          return
        }
        name ||= call.nextName
        this.closeCall(call, out)
        call = undefined
      }
    }
    if (!call) {
      if (this.held || this.promptReasoning !== undefined) this.settleContent(out)
      this.closeText(out)
      this.closeDoneCalls(out)
      call = {id: this.clientCallId(id), upstreamId: id, name: '', args: '', pending: '', open: true}
      this.calls.set(key, call)
    }
    if (name && call.block === undefined) call.name += name
    // Google's thought signature, on the call's first delta (before its block starts)
    if (raw.extra_content !== undefined && call.block === undefined)
      call.signature = extraSignature(raw.extra_content) ?? call.signature
    if (call.block === undefined) {
      call.pending += args
      if (!call.name) return
      call.block = this.next++
      this.sawTools = true
      out.push({type: 'block_start', index: call.block, block: callStart(call)})
      if (call.pending) this.argsDelta(call, call.pending, out)
      return
    }
    if (args) this.argsDelta(call, args, out)
  }

  /**
   * The id the client is given for a call that starts with the upstream's `id`: that id, or one
   * of our own for an id that cannot be trusted to be unique (a repeat within this answer, Kimi's
   * `Bash:0`, one of the history's: cm-common.ts `answerCallId`). Once per call.
   */
  private clientCallId(id: string | undefined): string {
    if (!id) return makeId(this.ctx, 'call_')
    const seen = (this.upstreamIds ??= new Set())
    const repeated = seen.has(id)
    seen.add(id)
    return answerCallId(id, this.ctx, repeated)
  }

  private argsDelta(call: OpenCall, json: string, out: StreamEvent[]): void {
    call.args += json
    const sent = (call.guard ??= new ArgsGuard()).feed(json)
    if (sent) out.push({type: 'tool_args_delta', index: call.block as number, json: sent})
  }

  private closeText(out: StreamEvent[]): void {
    if (!this.open) return
    if (this.merged?.size && this.open.kind === 'reasoning') {
      const signature = detailsSignature(this.merged.take())
      if (signature) out.push({type: 'reasoning_opaque', index: this.open.index, signature})
    }
    out.push({type: 'block_stop', index: this.open.index})
    this.open = undefined
  }

  /** Tool calls whose arguments are already one whole JSON value can take no more: close them. */
  private closeDoneCalls(out: StreamEvent[]): void {
    for (const call of this.calls.values())
      if (call.open && isCompleteJson(call.args)) this.closeCall(call, out)
  }

  private closeCall(call: OpenCall, out: StreamEvent[]): void {
    if (!call.open) return
    call.open = false
    if (call.block === undefined) {
      // A call that never got a name (and no named call to fold it into: foldNameless) can be run
      // by no client, and a nameless call in the history is the next turn's 400 upstream (OpenAI's
      // `function.name` takes 1-64 characters): left out, and counted for the log row.
      if (!call.name) {
        // (an empty stub, no id and no arguments, before the real answer: nothing was left out)
        if (call.upstreamId || call.pending || call.args) this.namelessCalls++
        return
      }
      call.block = this.next++
      this.sawTools = true
      out.push({type: 'block_start', index: call.block, block: callStart(call)})
      if (call.pending) this.argsDelta(call, call.pending, out)
    }
    if (call.guard) {
      // arguments that are no JSON: the rest of their syntax repair, or of what came
      const {json, repaired} = call.guard.finish(call.args, toolSchema(this.ctx, call.name), () =>
        keepsRawInput(this.ctx, call.name, call.args),
      )
      if (json) out.push({type: 'tool_args_delta', index: call.block, json})
      if (repaired) this.repairedArgs++
    }
    if (call.args.trim() === '') out.push({type: 'tool_args_delta', index: call.block, json: '{}'})
    out.push({type: 'block_stop', index: call.block})
  }

  private closeAll(out: StreamEvent[]): void {
    if (this.held || this.promptReasoning !== undefined) this.settleContent(out)
    this.closeText(out)
    const open = [...this.calls.values()].filter((c) => c.open)
    if (open.some((c) => c.block === undefined && !c.name)) this.foldNameless(open, out)
    open.sort((a, b) => (a.block ?? Infinity) - (b.block ?? Infinity))
    for (const call of open) this.closeCall(call, out)
  }

  /**
   * Arguments that came at an index of their own with neither an id nor a name, and never got
   * one, belong to the call started last when that call still has none: DeepSeek V4 streams a
   * call's head (id, name) at the index of the call before it and its arguments at the next index
   * (agno #8879). Read as they came, the named call would run with `{}` and a call with no name
   * would hold the arguments. Folded at the end, or when the next call's head comes where they
   * are (three calls or more), never while the call started last has arguments of its own: a
   * server that sends a call's arguments before its id and name (vercel/ai #5885) still gets them
   * on that call.
   */
  private foldNameless(open: OpenCall[], out: StreamEvent[]): void {
    for (const c of open) {
      if (c.block !== undefined || c.name) continue
      const owner = this.lastUnargued()
      if (!owner) continue
      if (c.pending) this.argsDelta(owner, c.pending, out)
      c.open = false
    }
  }

  /** Whether the answer, closed, was nothing but tool calls that never got a name. */
  private onlyNameless(): boolean {
    return this.namelessCalls > 0 && this.next === 0
  }

  /** The open call started last, when it has no arguments yet; undefined otherwise. */
  private lastUnargued(): OpenCall | undefined {
    let last: OpenCall | undefined
    for (const c of this.calls.values())
      if (c.open && c.block !== undefined && (last === undefined || c.block > (last.block as number)))
        last = c
    return last?.args === '' ? last : undefined
  }
}

/**
 * An answer of nothing but tool calls with no name: no client can run them, and an empty turn
 * would stop the agent mid-task saying nothing; a 502 its SDK retries.
 */
export const ONLY_NAMELESS = 'the upstream answered only tool calls with no name (nothing a client can run)'

/** Writes a stream for a chat client. */
export class ChatStreamEncoder implements StreamEncoder {
  private id?: string
  private model: string
  private readonly created = Math.floor(Date.now() / 1000)
  private toolIndex = new Map<number, number>()
  private parts: Part[] = []
  private reasoning = new Map<number, ReasoningPart>()
  /** The block whose reasoning text was shown last. */
  private shownReasoning: number | undefined
  private finished = false
  private usage: Partial<Usage> = {}
  private closed = false
  /** The start of a text chunk (see textChunk); set once `id` and `model` are. */
  private textHead?: string
  /** The text of an answer with reasoning and no call so far (a client's carry only): its carry's key. */
  private text = ''

  constructor(private readonly ctx?: CodecContext & {model?: string}) {
    this.model = ctx?.model ?? ctx?.request?.model ?? ''
  }

  event(e: StreamEvent): string {
    if (this.closed) return ''
    let out = ''
    if (!this.id && e.type !== 'error') out += this.begin(e.type === 'start' ? e : undefined)
    switch (e.type) {
      case 'block_start':
        if (e.block.type === 'reasoning') {
          const part: ReasoningPart = {type: 'reasoning', text: ''}
          this.reasoning.set(e.index, part)
          this.parts.push(part)
        } else if (e.block.type === 'tool_call') {
          const k = this.toolIndex.size
          this.toolIndex.set(e.index, k)
          const part: Part = {type: 'tool_call', id: e.block.id, name: e.block.name, arguments: ''}
          if (e.block.signature) part.signature = e.block.signature
          this.parts.push(part)
          storeCarry(this.parts, 'chat', this.ctx?.carry, true, this.ctx?.request)
          this.parts = this.parts.filter((p) => p.type !== 'tool_call' && p.type !== 'reasoning')
          out += this.chunk({
            tool_calls: [
              {index: k, id: e.block.id, type: 'function', function: {name: e.block.name, arguments: ''}},
            ],
          })
        }
        return out
      case 'text_delta':
        // (the text of an answer without a call, after its reasoning: kept under it at the end)
        if (this.toolIndex.size === 0 && this.parts.length > 0 && this.ctx?.carry) this.text += e.text
        return out + (e.text ? this.textChunk(e.text) : '')
      case 'reasoning_delta': {
        const part = this.reasoning.get(e.index)
        if (part) part.text += e.text
        if (!e.text) return out
        // (the text of a block after another's shown: a paragraph of its own, as in an answer)
        const between = this.shownReasoning !== undefined && this.shownReasoning !== e.index
        this.shownReasoning = e.index
        return out + this.chunk({reasoning_content: between ? REASONING_BETWEEN + e.text : e.text})
      }
      case 'reasoning_opaque': {
        const part = this.reasoning.get(e.index)
        if (part) {
          if (e.signature) part.signature = e.signature
          if (e.redacted) part.redacted = e.redacted
          if (e.encrypted) part.encrypted = e.encrypted
        }
        return out
      }
      case 'tool_args_delta': {
        const k = this.toolIndex.get(e.index)
        if (k === undefined || !e.json) return out
        return out + this.chunk({tool_calls: [{index: k, function: {arguments: e.json}}]})
      }
      case 'stop':
        if (this.finished) return out
        this.finished = true
        return out + this.chunk({}, CHAT_FINISH[e.reason] ?? 'stop')
      case 'usage':
        this.usage = {...this.usage, ...e.usage}
        return out
      case 'end': {
        if (this.toolIndex.size === 0 && this.text !== '')
          storeTextCarry(this.parts as ReasoningPart[], this.text, this.ctx?.carry, this.ctx?.request)
        if (!this.finished) out += this.chunk({}, 'stop')
        this.finished = true
        this.closed = true
        if (this.ctx?.includeUsage)
          out += this.data({
            id: this.id,
            object: 'chat.completion.chunk',
            created: this.created,
            model: this.model,
            choices: [],
            usage: chatUsage(this.usage),
          })
        return out + 'data: [DONE]\n\n'
      }
      case 'error':
        this.closed = true
        return (
          out +
          this.data({
            error: {
              message: e.message,
              type: e.status >= 500 ? 'server_error' : 'invalid_request_error',
              param: null,
              code: e.code ?? null,
            },
          })
        )
      default:
        return out
    }
  }

  private begin(start?: {id: string; model: string; usage?: Partial<Usage>}): string {
    this.id = start?.id || makeId(this.ctx, 'chatcmpl-')
    if (start?.model) this.model = start.model
    if (start?.usage) this.usage = {...start.usage}
    return this.chunk({role: 'assistant', content: ''})
  }

  /**
   * `chunk({content: text})` byte for byte, written as text (the chunk of nearly every event): the
   * part before the text is the same in every one of them.
   */
  private textChunk(text: string): string {
    this.textHead ??= `data: {"id":${JSON.stringify(this.id)},"object":"chat.completion.chunk","created":${this.created},"model":${JSON.stringify(this.model)},"choices":[{"index":0,"delta":{"content":`
    return `${this.textHead}${JSON.stringify(text)}},"logprobs":null,"finish_reason":null}]}\n\n`
  }

  // the fields by name, not a spread of a base object: an object literal that starts with a spread
  // and goes on with more members takes µs on Node 20's V8
  private chunk(delta: Json, finish: string | null = null): string {
    return this.data({
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{index: 0, delta, logprobs: null, finish_reason: finish}],
    })
  }

  private data(payload: Json): string {
    return `data: ${JSON.stringify(payload)}\n\n`
  }
}

export const CHAT_FINISH: Record<StopReason, string> = {
  end: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  stop_sequence: 'stop',
  content_filter: 'content_filter',
  refusal: 'content_filter',
  pause: 'stop',
  context_window: 'length',
}
