import type {Json, Reader, Usage} from './tap.js'
import {errorMessage, num, obj, streamedUsage} from './tap.js'

/** Responses: `usage` of the JSON body, or of `response.completed` (or `.incomplete`/`.failed`). */
export class ResponsesReader implements Reader {
  private last?: Json
  private id?: string
  /** Output deltas streamed (the usage of a stream that broke before its usage came). */
  private deltas = 0
  /** `sequence_number` of the last stream event seen. */
  lastSequence?: number
  terminal?: boolean
  streamError?: string
  /** The names of the answer's function calls without a namespace (see `Usage.functionCalls`). */
  private calls?: string[]
  readonly terminalName = 'response.completed'
  onPayload(payload: Json): void {
    const type = payload.type
    if (type === 'response.output_text.delta' || type === 'response.function_call_arguments.delta')
      this.deltas++
    else if (type === 'response.output_item.added') {
      const item = obj(payload.item)
      if (
        item?.type === 'function_call' &&
        typeof item.name === 'string' &&
        item.namespace === undefined &&
        (this.calls ??= []).length < 16
      )
        this.calls.push(item.name)
    } else if (type === 'error') this.streamError ??= errorMessage(payload)
    else if (type === 'response.failed') {
      const error = obj(obj(payload.response)?.error)
      this.streamError ??= error ? errorMessage({error}) : 'response.failed'
    } else if (type === 'response.completed' || type === 'response.incomplete') this.terminal = true
    if (typeof payload.sequence_number === 'number') this.lastSequence = payload.sequence_number
    const response = type === undefined ? payload : obj(payload.response)
    if (response && typeof response.id === 'string' && response.id !== '') this.id = response.id
    // (a remote compaction's answer, `response.compaction`, has the usage of the summary it made)
    if (type === undefined && (payload.object === 'response' || payload.object === 'response.compaction')) {
      const usage = obj(payload.usage)
      if (usage) this.last = usage
      return
    }
    if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
      const usage = obj(obj(payload.response)?.usage)
      if (usage) this.last = usage
    }
  }
  usage(): Usage | undefined {
    const u = this.last
    if (!u) {
      const streamed = this.streamError === undefined ? undefined : streamedUsage(this.deltas)
      return streamed && this.id ? {...streamed, responseId: this.id} : streamed
    }
    return {
      ...(this.calls ? {functionCalls: this.calls} : {}),
      inputTokens: num(u.input_tokens),
      outputTokens: num(u.output_tokens),
      cacheReadTokens: num(obj(u.input_tokens_details)?.cached_tokens),
      // GPT-5.6 on: the prompt written to the cache (billed at 1.25 times the input)
      cacheCreationTokens: num(obj(u.input_tokens_details)?.cache_write_tokens),
      reasoningTokens: num(obj(u.output_tokens_details)?.reasoning_tokens),
      ...(this.id ? {responseId: this.id} : {}),
    }
  }
}
