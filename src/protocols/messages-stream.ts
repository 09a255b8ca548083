/**
 * Messages streams: the decoder of an Anthropic upstream's events, and the usage and stop-reason
 * mappings both directions share (the client's stream encoder is in `messages-stream-encoder.ts`).
 */
import type {Json} from './cm-common.js'
import {isObj, makeId, num, str} from './cm-common.js'
import type {CodecContext, StopReason, StreamDecoder, StreamEvent, Usage} from './ir.js'
import type {StringTemplate} from './sse-template.js'
import {learnTemplate, templateString} from './sse-template.js'
import {JSON_ANSWER_TOOL} from './messages-request.js'
import {searchResultPart} from './web-search.js'

export const STOP_REASON: Record<StopReason, string> = {
  end: 'end_turn',
  max_tokens: 'max_tokens',
  tool_use: 'tool_use',
  stop_sequence: 'stop_sequence',
  content_filter: 'refusal',
  refusal: 'refusal',
  pause: 'pause_turn',
  context_window: 'model_context_window_exceeded',
}

/**
 * The IR stop of a Messages `stop_reason`. Anthropic's `refusal` is its streaming classifiers
 * cutting the answer off, a content filter (a Responses client is told `incomplete`, not
 * `completed`), not a refusal the model wrote.
 */
export function messagesStop(reason: unknown): StopReason {
  switch (reason) {
    case 'max_tokens':
    case 'tool_use':
    case 'stop_sequence':
      return reason
    case 'refusal':
      return 'content_filter'
    case 'pause_turn':
      return 'pause'
    case 'model_context_window_exceeded':
      return 'context_window'
    default:
      return 'end'
  }
}

/** Anthropic counters as they stand (input_tokens excludes cache reads and writes). */
interface Counters {
  input: number
  cacheRead: number
  cacheCreation: number
  cache1h?: number
  output: number
  /** `output_tokens_details.thinking_tokens`: the part of the output spent thinking. */
  thinking: number
}

function applyCounters(c: Counters, raw: unknown): void {
  const u = isObj(raw) ? raw : {}
  c.input = num(u.input_tokens) ?? c.input
  c.cacheRead = num(u.cache_read_input_tokens) ?? c.cacheRead
  c.cacheCreation = num(u.cache_creation_input_tokens) ?? c.cacheCreation
  c.output = num(u.output_tokens) ?? c.output
  if (isObj(u.cache_creation)) c.cache1h = num(u.cache_creation.ephemeral_1h_input_tokens) ?? c.cache1h
  if (isObj(u.output_tokens_details)) c.thinking = num(u.output_tokens_details.thinking_tokens) ?? c.thinking
}

function countersUsage(c: Counters): Usage {
  return {
    inputTokens: c.input + c.cacheRead + c.cacheCreation,
    outputTokens: c.output,
    cacheReadTokens: c.cacheRead,
    cacheCreationTokens: c.cacheCreation,
    ...(c.cache1h !== undefined ? {cache1hTokens: c.cache1h} : {}),
    // a part of the output, never more than it
    reasoningTokens: Math.min(c.thinking, c.output),
  }
}

export function decodeMessagesUsage(raw: unknown): Usage {
  const c: Counters = {input: 0, cacheRead: 0, cacheCreation: 0, output: 0, thinking: 0}
  applyCounters(c, raw)
  return countersUsage(c)
}

/**
 * gwctl usage as Messages counters (input_tokens = input - cache reads - cache writes); the
 * reasoning as `output_tokens_details.thinking_tokens`, where Anthropic reports it (only when
 * there was some: an answer without reasoning is written as before).
 */
export function messagesUsage(u: Partial<Usage>, searches = 0): Json {
  const read = u.cacheReadTokens ?? 0
  const creation = u.cacheCreationTokens ?? 0
  const thinking = u.reasoningTokens ?? 0
  return {
    input_tokens: Math.max(0, (u.inputTokens ?? 0) - read - creation),
    cache_creation_input_tokens: creation,
    cache_read_input_tokens: read,
    ...(u.cache1hTokens !== undefined
      ? {
          cache_creation: {
            ephemeral_5m_input_tokens: Math.max(0, creation - u.cache1hTokens),
            ephemeral_1h_input_tokens: u.cache1hTokens,
          },
        }
      : {}),
    output_tokens: u.outputTokens ?? 0,
    ...(thinking > 0 ? {output_tokens_details: {thinking_tokens: thinking}} : {}),
    // the searches the upstream ran (Claude Code shows "Did N searches")
    ...(searches > 0 ? {server_tool_use: {web_search_requests: searches}} : {}),
  }
}

/** A count as JSON writes it (a count is always finite; anything else would be `null`). */
export const jsonNumber = (n: number): string => (Number.isFinite(n) ? String(n) : 'null')

/** {@link messagesUsage} as JSON text, byte for byte what `JSON.stringify` of it writes. */
export function messagesUsageText(u: Partial<Usage>, searches = 0): string {
  const read = u.cacheReadTokens ?? 0
  const creation = u.cacheCreationTokens ?? 0
  const oneHour = u.cache1hTokens
  const thinking = u.reasoningTokens ?? 0
  return `{"input_tokens":${jsonNumber(Math.max(0, (u.inputTokens ?? 0) - read - creation))},"cache_creation_input_tokens":${jsonNumber(creation)},"cache_read_input_tokens":${jsonNumber(read)},${oneHour !== undefined ? `"cache_creation":{"ephemeral_5m_input_tokens":${jsonNumber(Math.max(0, creation - oneHour))},"ephemeral_1h_input_tokens":${jsonNumber(oneHour)}},` : ''}"output_tokens":${jsonNumber(u.outputTokens ?? 0)}${thinking > 0 ? `,"output_tokens_details":{"thinking_tokens":${jsonNumber(thinking)}}` : ''}${searches > 0 ? `,"server_tool_use":{"web_search_requests":${jsonNumber(searches)}}` : ''}}`
}

const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
}

/**
 * A `content_block_delta` of one string (text, thinking or tool arguments), split around that
 * string: the events after it with the same name that differ only in it are read without a parse
 * (see ./sse-template.ts).
 */
interface DeltaTemplate extends StringTemplate {
  name: string | undefined
  upstream: number
  deltaType: string
  key: string
}

/** The string key of each delta type that a template may stand for. */
const DELTA_KEYS: Readonly<Record<string, string>> = {
  text_delta: 'text',
  thinking_delta: 'thinking',
  input_json_delta: 'partial_json',
}

/** Reads an Anthropic upstream's stream. */
/**
 * The thinking blocks Anthropic dropped from a request, in words, from its answer's
 * `input_transformations` (`thinking_dropped` entries: a block bound to another conversation, with
 * `block_binding: drop_block`; one another model or account made): `2 (prefix_binding_mismatch)`,
 * or undefined when none was.
 */
export function droppedThinking(transformations: unknown): string | undefined {
  if (!Array.isArray(transformations)) return undefined
  const reasons = new Map<string, number>()
  for (const t of transformations as unknown[]) {
    if (!isObj(t) || t.type !== 'thinking_dropped') continue
    const reason =
      typeof t.reason === 'string' && /^[\w.-]{1,64}$/.test(t.reason) ? t.reason : 'no reason given'
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
  }
  if (reasons.size === 0) return undefined
  return [...reasons].map(([reason, n]) => `${n} (${reason})`).join(', ')
}

/** The log row's note on an answer whose request lost thinking blocks (`droppedThinking`). */
export const droppedThinkingNote = (provider: string, dropped: string): string =>
  `${provider} dropped thinking blocks of the history: ${dropped}`

export class MessagesStreamDecoder implements StreamDecoder {
  private done = false
  /** The answer's stop reason came (`message_delta`): the end of the stream is its end. */
  stopped = false
  private next = 0
  /** Upstream block index -> IR block index (server tool blocks have none). */
  private blocks = new Map<number, {index: number; tool: boolean; args: boolean; json?: boolean}>()
  /** The answer's JSON came as the forced `json_answer` call (`CodecContext.jsonAnswer`). */
  private json = false
  /** A client tool call came (a Messages server that says `end_turn` after one meant `tool_use`). */
  private sawCall = false
  private counters: Counters = {input: 0, cacheRead: 0, cacheCreation: 0, output: 0, thinking: 0}
  private template?: DeltaTemplate
  /** Upstream block index -> a web search's call (its query's JSON so far). */
  private searches?: Map<number, {id: string; json: string}>
  /**
   * The answer's content blocks as they came, each with its deltas applied (`ctx.keepContent`: a
   * turn that may pause, see ./pause.ts); an input's JSON text is kept beside its block until read.
   */
  private kept?: Map<number, {block: Json; json?: string}>
  /** The usage of the answers of this turn before this one (a continuation's decoder). */
  private before?: Usage
  /** The thinking blocks the upstream dropped from the request, in words (`droppedThinking`). */
  private dropped?: string
  /**
   * A JSON answer's text blocks, held (`CodecContext.jsonAnswer`): a model that refuses a forced
   * call (Claude 5.5) may write text before its `json_answer` call, which would make the client's
   * JSON unreadable, or answer in text alone, which is then the answer. Upstream indexes and text.
   */
  private held?: {blocks: Set<number>; text: string}

  constructor(private readonly ctx?: CodecContext) {
    if (ctx?.keepContent) this.kept = new Map()
  }

  droppedThinking(): string | undefined {
    return this.dropped
  }

  /**
   * The decoder of the continuation of this paused answer (./pause.ts): its blocks numbered on
   * from this one's, its output added to this one's (see {@link usageSoFar}).
   */
  continuation(): MessagesStreamDecoder {
    const decoder = new MessagesStreamDecoder(this.ctx)
    decoder.next = this.next
    decoder.before = this.billedSoFar()
    return decoder
  }

  /**
   * The prompts of this turn's earlier calls (each continuation sends the whole prompt again, and
   * is billed so): not the client's context, so not in the usage it is told; the log row adds
   * them. Undefined for a turn of one call.
   */
  earlierInput(): Usage | undefined {
    const b = this.before
    if (!b) return undefined
    return {
      inputTokens: b.inputTokens,
      outputTokens: 0,
      cacheReadTokens: b.cacheReadTokens,
      cacheCreationTokens: b.cacheCreationTokens,
      reasoningTokens: 0,
      ...(b.cache1hTokens !== undefined ? {cache1hTokens: b.cache1hTokens} : {}),
    }
  }

  /** The answer's content blocks as they came (with `ctx.keepContent`; otherwise none). */
  keptContent(): Json[] {
    const out: Json[] = []
    // (in the order the blocks started, which is their indexes' order; a map, not an array by
    // the upstream's index, which a broken upstream could make a billion holes long)
    for (const {block, json} of this.kept?.values() ?? []) {
      if (json === undefined || json === '') out.push(block)
      else {
        let input: unknown
        try {
          input = JSON.parse(json)
        } catch {
          // cut short: the block goes with what its start said
          input = block.input ?? {}
        }
        out.push({...block, input})
      }
    }
    return out
  }

  /**
   * The usage the client is told: this call's prompt (the context the conversation holds, which
   * Codex and Gemini CLI compact by) and every call's output.
   */
  private usageSoFar(): Usage {
    const usage = countersUsage(this.counters)
    const b = this.before
    if (!b) return usage
    usage.outputTokens += b.outputTokens
    usage.reasoningTokens += b.reasoningTokens
    return usage
  }

  /** Every call's usage so far, summed (what the turn was billed). */
  private billedSoFar(): Usage {
    const usage = countersUsage(this.counters)
    const b = this.before
    if (!b) return usage
    const sum: Usage = {
      inputTokens: b.inputTokens + usage.inputTokens,
      outputTokens: b.outputTokens + usage.outputTokens,
      cacheReadTokens: b.cacheReadTokens + usage.cacheReadTokens,
      cacheCreationTokens: b.cacheCreationTokens + usage.cacheCreationTokens,
      reasoningTokens: b.reasoningTokens + usage.reasoningTokens,
    }
    if (b.cache1hTokens !== undefined || usage.cache1hTokens !== undefined)
      sum.cache1hTokens = (b.cache1hTokens ?? 0) + (usage.cache1hTokens ?? 0)
    return sum
  }

  /** Keeps a block's start, or applies a delta to the block kept (`ctx.keepContent`). */
  private keep(upstream: number, start: Json | undefined, d?: Json): void {
    const kept = this.kept!
    if (start) {
      // an input streamed as JSON text: a tool call's, a server tool's
      const streamed = start.type === 'tool_use' || start.type === 'server_tool_use'
      kept.set(upstream, {block: {...start}, ...(streamed ? {json: ''} : {})})
      return
    }
    const entry = kept.get(upstream)
    if (!entry || !d) return
    const block = entry.block
    if (d.type === 'text_delta' && typeof d.text === 'string') block.text = String(block.text ?? '') + d.text
    else if (d.type === 'thinking_delta' && typeof d.thinking === 'string')
      block.thinking = String(block.thinking ?? '') + d.thinking
    else if (d.type === 'signature_delta' && typeof d.signature === 'string') block.signature = d.signature
    else if (d.type === 'input_json_delta' && typeof d.partial_json === 'string') {
      if (entry.json !== undefined) entry.json += d.partial_json
    } else if (d.type === 'citations_delta' && d.citation !== undefined)
      block.citations = [...(Array.isArray(block.citations) ? block.citations : []), d.citation]
  }

  event(name: string | undefined, data: string): StreamEvent[] {
    if (this.done) return []
    const t = this.template
    if (t && name === t.name) {
      const value = templateString(t, data)
      if (value !== undefined) return this.delta(t.upstream, {type: t.deltaType, [t.key]: value})
    }
    this.template = undefined
    let p: Json
    try {
      const parsed: unknown = JSON.parse(data)
      if (!isObj(parsed)) return []
      p = parsed
    } catch {
      // an empty event is nothing; anything else that is not JSON would lose a part of the answer
      if (data.trim() === '') return []
      throw new Error(`upstream event data is not JSON: ${data.slice(0, 80)}`)
    }
    const type = name ?? str(p.type)
    switch (type) {
      case 'message_start': {
        const m = isObj(p.message) ? p.message : {}
        applyCounters(this.counters, m.usage)
        if (m.input_transformations !== undefined) this.dropped = droppedThinking(m.input_transformations)
        return [
          {
            type: 'start',
            id: str(m.id) || makeId(this.ctx, 'msg_'),
            model: str(m.model) ?? '',
            usage: this.usageSoFar(),
          },
        ]
      }
      case 'content_block_start': {
        const upstream = num(p.index) ?? 0
        const block = isObj(p.content_block) ? p.content_block : {}
        if (this.kept) this.keep(upstream, block)
        return this.blockStart(upstream, block)
      }
      case 'content_block_delta': {
        const upstream = num(p.index) ?? 0
        const delta = isObj(p.delta) ? p.delta : {}
        this.learn(name, upstream, delta, data)
        return this.delta(upstream, delta)
      }
      case 'content_block_stop': {
        const b = this.blocks.get(num(p.index) ?? 0)
        if (!b) return []
        const out: StreamEvent[] = []
        if (b.tool && !b.args) out.push({type: 'tool_args_delta', index: b.index, json: '{}'})
        if (b.json && !b.args) out.push({type: 'text_delta', index: b.index, text: '{}'})
        out.push({type: 'block_stop', index: b.index})
        return out
      }
      case 'message_delta': {
        const d = isObj(p.delta) ? p.delta : {}
        applyCounters(this.counters, p.usage)
        // (again after a server-side fallback to another model)
        if (p.input_transformations !== undefined) this.dropped = droppedThinking(p.input_transformations)
        const out: StreamEvent[] = []
        if (d.stop_reason !== undefined && d.stop_reason !== null) {
          // a JSON answer given in text, not through its tool: the text is the answer
          if (this.held && !this.json && this.held.text !== '') {
            const index = this.next++
            out.push(
              {type: 'block_start', index, block: {type: 'text'}},
              {type: 'text_delta', index, text: this.held.text},
              {type: 'block_stop', index},
            )
          }
          this.held = undefined
          const seq = str(d.stop_sequence)
          // the answer's JSON came as a forced call: to the client it is the end of a turn
          let reason = this.json && d.stop_reason === 'tool_use' ? 'end' : messagesStop(d.stop_reason)
          // a call then `end_turn` (vLLM's Anthropic endpoint on a named tool_choice, LiteLLM's
          // ollama_chat): the client must still run it
          if (reason === 'end' && this.sawCall) reason = 'tool_use'
          out.push({type: 'stop', reason, ...(seq ? {stopSequence: seq} : {})})
          this.stopped = true
        }
        out.push({type: 'usage', usage: this.usageSoFar()})
        return out
      }
      case 'message_stop':
        this.done = true
        return [{type: 'end'}]
      case 'error': {
        this.done = true
        const e = isObj(p.error) ? p.error : {}
        const errType = str(e.type)
        // a code that is a status is the status, as the chat decoder reads it: Google's error as
        // Google wrote it (`"code": 429`, no `type`), which a relay in front of Gemini forwards
        // (review74 #3: read as an `api_error`, a 500 the client retried, a daily quota too)
        const code = typeof e.code === 'string' && /^[45]\d\d$/.test(e.code) ? Number(e.code) : e.code
        const status =
          typeof code === 'number' && code >= 400 && code < 600
            ? code
            : (ERROR_STATUS[errType ?? 'api_error'] ?? 502)
        // (its name, for the client's error: the type, else `api_error` where no code said the
        // status, else none, as the chat decoder gives a number none)
        const named = errType ?? (status === code ? undefined : 'api_error')
        return [
          {
            type: 'error',
            status,
            message: str(e.message) ?? 'upstream stream error',
            ...(named !== undefined ? {code: named} : {}),
            // Google's details as a relay in front of Gemini keeps them (a quota's 429)
            ...(Array.isArray(e.details) ? {body: JSON.stringify({error: e})} : {}),
          },
        ]
      }
      default:
        return []
    }
  }

  end(): StreamEvent[] {
    if (this.done) return []
    this.done = true
    // its stop reason came (with the usage, in \`message_delta\`), then the upstream closed without
    // \`message_stop\` (a relay that drops it): the answer is whole; one cut before is an error
    if (this.stopped) return [{type: 'end'}]
    return [{type: 'error', status: 502, message: 'upstream stream ended before message_stop'}]
  }

  private blockStart(upstream: number, c: Json): StreamEvent[] {
    const index = this.next
    if (c.type === 'text' && this.ctx?.jsonAnswer) {
      // held until the answer shows whether its JSON comes through the tool (`held`)
      if (!this.json) {
        this.held ??= {blocks: new Set(), text: ''}
        this.held.blocks.add(upstream)
        this.held.text += str(c.text) ?? ''
      }
      return []
    }
    if (c.type === 'text') {
      this.blocks.set(upstream, {index: this.next++, tool: false, args: false})
      const text = str(c.text)
      return [
        {type: 'block_start', index, block: {type: 'text'}},
        ...(text ? [{type: 'text_delta' as const, index, text}] : []),
      ]
    }
    if (c.type === 'thinking' || c.type === 'redacted_thinking') {
      this.blocks.set(upstream, {index: this.next++, tool: false, args: false})
      const out: StreamEvent[] = [{type: 'block_start', index, block: {type: 'reasoning'}}]
      const text = str(c.thinking)
      if (text) out.push({type: 'reasoning_delta', index, text})
      const sig = str(c.signature)
      if (sig) out.push({type: 'reasoning_opaque', index, signature: {family: 'messages', value: sig}})
      const data = str(c.data)
      if (data) out.push({type: 'reasoning_opaque', index, redacted: {family: 'messages', value: data}})
      return out
    }
    if (c.type === 'tool_use' && this.ctx?.jsonAnswer && c.name === JSON_ANSWER_TOOL) {
      // a second call would make the client's JSON unreadable (a forced single call sends none):
      // its block is left out, its deltas with it
      if (this.json) return []
      // text written before the call is not the answer
      this.held = undefined
      const input = isObj(c.input) && Object.keys(c.input).length ? JSON.stringify(c.input) : ''
      this.blocks.set(upstream, {index: this.next++, tool: false, args: input !== '', json: true})
      this.json = true
      return [
        {type: 'block_start', index, block: {type: 'text'}},
        ...(input ? [{type: 'text_delta' as const, index, text: input}] : []),
      ]
    }
    if (c.type === 'tool_use') {
      this.sawCall = true
      const input = isObj(c.input) && Object.keys(c.input).length ? JSON.stringify(c.input) : ''
      this.blocks.set(upstream, {index: this.next++, tool: true, args: input !== ''})
      const id = str(c.id) || makeId(this.ctx, 'toolu_')
      return [
        {type: 'block_start', index, block: {type: 'tool_call', id, name: str(c.name) ?? ''}},
        ...(input ? [{type: 'tool_args_delta' as const, index, json: input}] : []),
      ]
    }
    if (c.type === 'server_tool_use' && c.name === 'web_search') {
      // its query comes in deltas; the search is handed on whole with its results (below)
      const input = isObj(c.input) && Object.keys(c.input).length ? JSON.stringify(c.input) : ''
      ;(this.searches ??= new Map()).set(upstream, {id: str(c.id) ?? '', json: input})
      return []
    }
    if (c.type === 'web_search_tool_result') {
      const result = searchResultPart(c)
      let query = ''
      for (const call of this.searches?.values() ?? [])
        if (call.id === result.id) {
          try {
            const input: unknown = JSON.parse(call.json || '{}')
            if (isObj(input)) query = str(input.query) ?? ''
          } catch {
            // a query cut short: the search is still told, without it
          }
        }
      this.next++
      return [
        {type: 'block_start', index, block: {...result, type: 'web_search', query}},
        {type: 'block_stop', index},
      ]
    }
    return [] // other server tool blocks: no form outside Messages
  }

  /** Keeps a delta of its type and one string as the template of the events after it. */
  private learn(name: string | undefined, upstream: number, d: Json, data: string): void {
    const deltaType = d.type
    if (typeof deltaType !== 'string' || !Object.hasOwn(DELTA_KEYS, deltaType)) return
    const key = DELTA_KEYS[deltaType]
    if (typeof d[key] !== 'string' || Object.keys(d).length !== 2) return
    const template = learnTemplate(data, key)
    // the fields by name, not a spread: an object literal that starts with a spread and goes on
    // with more members takes µs on Node 20's V8
    if (template)
      this.template = {before: template.before, after: template.after, name, upstream, deltaType, key}
  }

  private delta(upstream: number, d: Json): StreamEvent[] {
    if (this.kept) this.keep(upstream, undefined, d)
    const b = this.blocks.get(upstream)
    if (!b) {
      if (this.held?.blocks.has(upstream) && d.type === 'text_delta' && str(d.text)) this.held.text += d.text
      const search = this.searches?.get(upstream)
      if (search && d.type === 'input_json_delta' && str(d.partial_json))
        search.json += d.partial_json as string
      return []
    }
    const index = b.index
    if (d.type === 'text_delta' && str(d.text)) return [{type: 'text_delta', index, text: d.text as string}]
    if (d.type === 'thinking_delta' && str(d.thinking))
      return [{type: 'reasoning_delta', index, text: d.thinking as string}]
    if (d.type === 'signature_delta' && str(d.signature))
      return [
        {type: 'reasoning_opaque', index, signature: {family: 'messages', value: d.signature as string}},
      ]
    if (d.type === 'input_json_delta' && str(d.partial_json)) {
      b.args = true
      if (b.json) return [{type: 'text_delta', index, text: d.partial_json as string}]
      return [{type: 'tool_args_delta', index, json: d.partial_json as string}]
    }
    return []
  }
}
