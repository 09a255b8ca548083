import type {Json, Reader, ToolCallFaults, Usage} from './tap.js'
import {errorMessage, num, obj, streamedUsage} from './tap.js'
import {OPENAI_FINISH} from '../tool-index.js'

const USAGE_KEY = Buffer.from('"usage"')

/** Chat completions: `usage` of the JSON body, or of the usage chunk of a stream. */
export class ChatReader implements Reader {
  private last?: Json
  /** Content deltas streamed (the usage of a stream that broke before its usage chunk). */
  private deltas = 0
  terminal?: boolean
  stopped?: boolean
  streamError?: string
  readonly terminalName = '[DONE]'
  readonly usageKey = USAGE_KEY
  /** What the stream lacked of OpenAI's format so far (see `UsageTap.toolCallFaults`). */
  private faults?: ToolCallFaults
  /**
   * What the stream lacked of OpenAI's format (see `UsageTap.toolCallFaults`): with no finish by
   * `[DONE]` (an error event aside), `finish: null`. A stream that ended without either is
   * truncated, and the relay ends it with an error event the client shows.
   */
  get toolCallFaults(): ToolCallFaults | undefined {
    if (this.terminal && !this.stopped && this.streamError === undefined && this.faults?.finish === undefined)
      return {...this.faults, finish: null}
    return this.faults
  }
  /** The calls opened so far, by choice. */
  private opened?: Map<number, Set<number>>
  onJsonUsage(usage: Json): void {
    this.last = usage
  }
  onPayload(payload: Json): void {
    // `[DONE]` (not JSON) is seen by the tap itself
    if (payload.error !== undefined && payload.error !== null) this.streamError ??= errorMessage(payload)
    const usage = obj(payload.usage)
    if (usage) this.last = usage
    const choices = payload.choices
    if (Array.isArray(choices)) {
      for (const c of choices) {
        const choice = obj(c)
        // (`""` on every chunk is SenseNova's, Perplexity's, Together's "not yet")
        const finish = choice?.finish_reason
        if (typeof finish === 'string' && finish !== '') {
          this.stopped = true
          // a vendor's finish the AI SDK reads as unknown (Z.ai's `sensitive`, vLLM's `abort`)
          // (not beside the upstream's error object: OpenRouter's `finish_reason: "error"` with it
          // is read by the AI SDK as the error it is)
          if (
            !OPENAI_FINISH.has(finish) &&
            this.faults?.finish === undefined &&
            (payload.error === undefined || payload.error === null)
          )
            (this.faults ??= {}).finish = finish
        }
        const delta = obj(choice?.delta)
        if (
          delta &&
          (typeof delta.content === 'string' ? delta.content !== '' : delta.tool_calls !== undefined)
        )
          this.deltas++
        // a tool-call delta without its index (Gemini's OpenAI-compatible endpoint, some relays)
        if (!this.faults?.unindexed && Array.isArray(delta?.tool_calls))
          for (const call of delta.tool_calls)
            if (typeof obj(call)?.index !== 'number') (this.faults ??= {}).unindexed = true
        // a call opened without its id, a number id, an empty role (GLM, Kimi, NIM, vLLM's gpt-oss)
        if (delta && this.faults?.idless !== 'id')
          this.noteIds(delta, typeof choice!.index === 'number' ? choice!.index : 0)
      }
    }
  }
  /** Notes a call of `delta` opened without a string id, a number id, or a role that is not `"assistant"`. */
  private noteIds(delta: Json, at: number): void {
    if (typeof delta.role === 'string' && delta.role !== 'assistant') (this.faults ??= {}).idless = 'role'
    if (!Array.isArray(delta.tool_calls)) return
    this.opened ??= new Map()
    let opened = this.opened.get(at)
    if (!opened) this.opened.set(at, (opened = new Set()))
    for (const c of delta.tool_calls) {
      const call = obj(c)
      if (!call) continue
      let opens: boolean
      if (typeof call.index === 'number') {
        opens = !opened.has(call.index)
        opened.add(call.index)
      } else {
        // a call without an index as well (numbered on the way once that is learned): one that
        // names its function opens it, as the indexer reads it
        const fn = obj(call.function)
        opens = typeof fn?.name === 'string' && fn.name !== ''
      }
      if (typeof call.id === 'number' || (opens && !(typeof call.id === 'string' && call.id !== '')))
        (this.faults ??= {}).idless = 'id'
    }
  }
  /** OpenAI pads every stream chunk with a random-length `obfuscation` string: not part of a template. */
  readonly templateIgnore = 'obfuscation'
  /** The key the last template stands for (see templateKey). */
  private templated?: 'content' | 'arguments'
  /**
   * A chunk of one choice whose delta is one `content` string, or the `arguments` of one tool
   * call and nothing else (nearly every chunk of a stream).
   */
  templateKey(payload: Json): string | undefined {
    this.templated = undefined
    if ((payload.error !== undefined && payload.error !== null) || obj(payload.usage)) return undefined
    const choices = payload.choices
    if (!Array.isArray(choices) || choices.length !== 1) return undefined
    const delta = obj(obj(choices[0])?.delta)
    if (!delta) return undefined
    let only: string | undefined
    for (const key in delta) {
      if (only !== undefined) return undefined
      only = key
    }
    if (only === 'content' && typeof delta.content === 'string') return (this.templated = 'content')
    const calls = delta.tool_calls
    if (only !== 'tool_calls' || !Array.isArray(calls) || calls.length !== 1) return undefined
    const call = obj(calls[0])
    const fn = obj(call?.function)
    if (!call || !fn || typeof fn.arguments !== 'string') return undefined
    for (const key in call) if (key !== 'index' && key !== 'function') return undefined
    for (const key in fn) if (key !== 'arguments') return undefined
    return (this.templated = 'arguments')
  }
  onTemplate(text: string): void {
    // onPayload counts a content delta when its text is not empty, a tool-call delta always
    if (this.templated === 'arguments' || text !== '') this.deltas++
  }
  usage(): Usage | undefined {
    const u = this.last
    if (!u) return this.streamError === undefined ? undefined : streamedUsage(this.deltas)
    const prompt = obj(u.prompt_tokens_details)
    const usage: Usage = {
      inputTokens: num(u.prompt_tokens),
      outputTokens: num(u.completion_tokens),
      // OpenAI's in the details, DeepSeek's `prompt_cache_hit_tokens`, Moonshot's beside the
      // counts: as the translation reads them (protocols/chat-stream.ts `decodeChatUsage`)
      cacheReadTokens: num(prompt?.cached_tokens ?? u.prompt_cache_hit_tokens ?? u.cached_tokens),
      cacheCreationTokens: cacheWrites(u, prompt),
      reasoningTokens: num(obj(u.completion_tokens_details)?.reasoning_tokens),
    }
    // xAI's reasoning beside the completion (its total says so): in the output, as the
    // translation reads it (protocols/chat-stream.ts `decodeChatUsage`)
    if (
      usage.reasoningTokens > 0 &&
      num(u.total_tokens) === usage.inputTokens + usage.outputTokens + usage.reasoningTokens
    )
      usage.outputTokens += usage.reasoningTokens
    // DashScope's breakdown of its writes, `cache_creation.ephemeral_1h_input_tokens`: the part
    // kept one hour, as the Messages tap reads Anthropic's (never more than the writes)
    const oneHour = obj(prompt?.cache_creation)?.ephemeral_1h_input_tokens
    if (typeof oneHour === 'number') usage.cache1hTokens = Math.min(num(oneHour), usage.cacheCreationTokens)
    return usage
  }
}

/**
 * The prompt tokens a chat answer says were written to a cache (a part of `prompt_tokens`), as the
 * translation reads them (protocols/chat-stream.ts `decodeChatUsage`): OpenRouter's
 * `prompt_tokens_details.cache_write_tokens`, DashScope's `prompt_tokens_details.
 * cache_creation_input_tokens` (its explicit cache), LiteLLM's `cache_creation_input_tokens`
 * beside the counts; 0 when none says.
 */
function cacheWrites(u: Json, prompt: Json | undefined): number {
  return num(
    prompt?.cache_write_tokens ?? prompt?.cache_creation_input_tokens ?? u.cache_creation_input_tokens,
  )
}
