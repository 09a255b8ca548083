/**
 * Gemini streams (`alt=sse`: `data: <GenerateContentResponse>` events, no terminal event but a
 * chunk with `finishReason`): the decoder opens and closes IR blocks itself; the encoder writes
 * the chunks `@google/genai` and Gemini CLI read.
 */
import {googleStatus} from './errors.js'
import type {
  CodecContext,
  Opaque,
  Part,
  ReasoningPart,
  StopReason,
  StreamDecoder,
  StreamEncoder,
  StreamEvent,
  Usage,
  WebSearchPart,
} from './ir.js'
import {wrapReasoning} from './ir.js'
import {
  answerPart,
  callSignature,
  EMPTY_ANSWER,
  EMPTY_ANSWER_STATUS,
  failedFinish,
  finishReasonOf,
  stopOfFinish,
  thoughtOnlyUsage,
  thoughtPart,
  usageFromGemini,
  usageToGemini,
} from './gemini-parts.js'
import {groundingOf, mergeSearches, searchesOfGrounding} from './web-search.js'
import type {Body} from './responses-items.js'
import {fullUsage, hasForeignOpaque, isObject, newId} from './responses-items.js'

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

export class GeminiStreamDecoder implements StreamDecoder {
  /**
   * The answer's `start` was handed on. It waits for the first thought or answer part (or the
   * finish): before it there is nothing to show, and an answer that ends STOP with no part at all
   * has then sent the client nothing, so the relay may send the request again (EMPTY_ANSWER).
   */
  private started = false
  /** The start's id and model, from the first chunk. */
  private startOf: {id: string; model: string} | undefined
  /** Events of parts before the start that show nothing (a bare thoughtSignature), held with it. */
  private before: StreamEvent[] | undefined
  private finished = false
  private done = false
  private next = 0
  private open: {index: number; kind: 'text' | 'reasoning'} | undefined
  private toolCalls = false
  private heldUsage: Partial<Usage> | undefined
  /** A part that answers (text, a call: see answerPart) came. */
  private answered = false
  /**
   * The last `usageMetadata` was a thought-only answer's (see thoughtOnlyUsage) and its chunk had
   * no part of its own: no thought (Gemini 2.5 counts thoughts on each thought chunk), no answer.
   */
  private thoughtOnly = false
  /** The searches of the grounding so far (see mergeSearches). */
  private grounding: WebSearchPart[] | undefined

  constructor(private readonly ctx?: CodecContext) {}

  event(_name: string | undefined, data: string): StreamEvent[] {
    if (this.done) return []
    let chunk: unknown
    try {
      chunk = JSON.parse(data)
    } catch {
      // an empty event is nothing; anything else that is not JSON would lose a part of the answer
      if (data.trim() === '') return []
      throw new Error(`upstream event data is not JSON: ${data.slice(0, 80)}`)
    }
    if (!isObject(chunk)) return []
    if (isObject(chunk.error)) {
      this.done = true
      const code = typeof chunk.error.code === 'number' ? chunk.error.code : 502
      return [
        {
          type: 'error',
          status: code >= 400 ? code : 502,
          message: str(chunk.error.message) ?? 'upstream error',
          ...(str(chunk.error.status) && {code: str(chunk.error.status)}),
          // (a quota's 429 said so: its QuotaFailure and RetryInfo, ../daemon/router/rate-limit.ts)
          ...(Array.isArray(chunk.error.details) && {body: data}),
        },
      ]
    }
    const out: StreamEvent[] = []
    if (this.startOf === undefined)
      this.startOf = {
        id: str(chunk.responseId) ?? newId(this.ctx, 'resp'),
        model: str(chunk.modelVersion) ?? '',
      }
    const candidate =
      Array.isArray(chunk.candidates) && isObject(chunk.candidates[0]) ? chunk.candidates[0] : {}
    const parts =
      isObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : []
    let thought = false
    for (const p of parts) {
      if (!isObject(p)) continue
      if (answerPart(p)) this.answered = true
      // (an empty thought shows nothing: held as a bare signature is, so that an answer of nothing
      // else may still go again unseen)
      else if (thoughtPart(p) && typeof p.text === 'string' && p.text !== '') thought = true
      this.part(out, p)
    }
    // Google Search grounding may come in pieces (the queries in one chunk, the pages found in
    // later ones): gathered, and handed on once, when the answer finishes
    if (candidate.groundingMetadata !== undefined)
      this.grounding = mergeSearches(
        this.grounding,
        searchesOfGrounding(candidate.groundingMetadata, () => newId(this.ctx, 'ws')),
      )
    const finish = str(candidate.finishReason)
    const blocked = isObject(chunk.promptFeedback) && chunk.promptFeedback.blockReason !== undefined
    const usage = usageFromGemini(chunk.usageMetadata)
    if (usage) {
      this.heldUsage = usage
      this.thoughtOnly = !thought && thoughtOnlyUsage(chunk.usageMetadata)
    }
    // (a prompt blocked is a filter's stop, whatever its candidate says)
    const failed = blocked ? undefined : failedFinish(finish)
    if (failed) {
      this.done = true
      // (the model's answer, not the upstream failing: the breaker is not told of it)
      const error: StreamEvent = {type: 'error', status: 502, message: failed, answered: true}
      // (nothing went to the client: the usage Google bills rides on the error, for the row)
      if (!this.started) return [this.heldUsage ? {...error, usage: this.heldUsage} : error]
      out.push(error)
      return out
    }
    if ((finish || blocked) && !this.finished) {
      // STOP with no answer part: thoughts only, or nothing
      if (!this.answered && finish === 'STOP' && !blocked) return this.empty(out)
      this.close(out)
      this.handSearches(out)
      this.finished = true
      const reason: StopReason = blocked ? 'content_filter' : stopOfFinish(finish, this.toolCalls)
      out.push({type: 'stop', reason})
      if (this.heldUsage) out.push({type: 'usage', usage: this.heldUsage})
    } else if (this.finished && usage) out.push({type: 'usage', usage})
    if (!this.started) return this.begin(out, thought)
    return out
  }

  /**
   * The first events of the answer, after its start, once a thought or an answer part came or it
   * finished; none before (a bare thoughtSignature's events are held until then).
   */
  private begin(out: StreamEvent[], thought: boolean): StreamEvent[] {
    if (!thought && !this.answered && !this.finished) {
      if (out.length > 0) (this.before ??= []).push(...out)
      return []
    }
    this.started = true
    const start: StreamEvent = {type: 'start', id: this.startOf!.id, model: this.startOf!.model}
    const before = this.before
    this.before = undefined
    return before ? [start, ...before, ...out] : [start, ...out]
  }

  /**
   * An answer that ended STOP (or Google's thought-only ending) with no answer part: the
   * EMPTY_ANSWER error. Alone when the client was sent nothing of the answer yet (the relay may
   * send the request again); else after this chunk's thoughts and the usage (the row counts them).
   */
  private empty(out: StreamEvent[]): StreamEvent[] {
    this.done = true
    const error: StreamEvent = {type: 'error', status: EMPTY_ANSWER_STATUS, message: EMPTY_ANSWER}
    // (nothing went to the client: the usage Google bills rides on the error, for the row; the
    // proxy adds it to the row of the answer to the request sent again)
    if (!this.started) return [this.heldUsage ? {...error, usage: this.heldUsage} : error]
    if (this.heldUsage) out.push({type: 'usage', usage: this.heldUsage})
    out.push(error)
    return out
  }

  reportedUsage(): Partial<Usage> | undefined {
    return this.heldUsage
  }

  end(): StreamEvent[] {
    if (this.done) return []
    this.done = true
    const out: StreamEvent[] = []
    if (!this.finished) {
      // Google's thought-only answer ends without finishReason (see thoughtOnlyUsage: a usage of
      // thoughts only, last, on a chunk without a part of its own): whole, it stops as STOP
      // would, and so it is an answer with no answer part (empty); any other stream without one
      // was cut (mid-thinking, too, on Gemini 2.5)
      if (!this.thoughtOnly || this.answered || !this.heldUsage)
        return [
          {type: 'error', status: 502, message: 'upstream stream ended before a chunk with finishReason'},
        ]
      return this.empty(out)
    }
    this.close(out)
    // grounding that came after the chunk with finishReason
    this.handSearches(out)
    out.push({type: 'end'})
    return out
  }

  private part(out: StreamEvent[], p: Body): void {
    const sig: Opaque | undefined = str(p.thoughtSignature)
      ? {family: 'gemini', value: p.thoughtSignature as string}
      : undefined
    if (typeof p.text === 'string') {
      if (p.thought === true) {
        const index = this.ensure(out, 'reasoning')
        if (p.text) out.push({type: 'reasoning_delta', index, text: p.text})
        if (sig) out.push({type: 'reasoning_opaque', index, signature: sig})
        return
      }
      if (sig) {
        const index = this.ensure(out, 'reasoning')
        out.push({type: 'reasoning_opaque', index, signature: sig})
      }
      if (p.text) out.push({type: 'text_delta', index: this.ensure(out, 'text'), text: p.text})
    } else if (isObject(p.functionCall)) {
      this.close(out)
      const fc = p.functionCall
      const index = this.next++
      this.toolCalls = true
      out.push({
        type: 'block_start',
        index,
        block: {
          type: 'tool_call',
          id: str(fc.id) || newId(this.ctx, 'call'),
          name: str(fc.name) ?? '',
          ...(sig && {signature: sig}),
        },
      })
      out.push({type: 'tool_args_delta', index, json: JSON.stringify(isObject(fc.args) ? fc.args : {})})
      out.push({type: 'block_stop', index})
    }
  }

  /** The grounding's searches, each whole (once). */
  private handSearches(out: StreamEvent[]): void {
    for (const {type: _, ...search} of this.grounding ?? []) {
      const index = this.next++
      out.push(
        {type: 'block_start', index, block: {type: 'web_search', ...search}},
        {type: 'block_stop', index},
      )
    }
    this.grounding = undefined
  }

  private ensure(out: StreamEvent[], kind: 'text' | 'reasoning'): number {
    if (this.open?.kind === kind) return this.open.index
    this.close(out)
    this.open = {index: this.next++, kind}
    out.push({type: 'block_start', index: this.open.index, block: {type: kind}})
    return this.open.index
  }

  private close(out: StreamEvent[]): void {
    if (!this.open) return
    out.push({type: 'block_stop', index: this.open.index})
    this.open = undefined
  }
}

/** Gemini's `status` name for an HTTP status. */
export const statusName = (code: number): string => googleStatus(code)

/** Writes `data: <GenerateContentResponse>` chunks for a Gemini client. */
export class GeminiStreamEncoder implements StreamEncoder {
  private id = ''
  private model: string
  private finished = false
  private stop: StopReason = 'end'
  private usage: Partial<Usage> = {}
  private readonly calls = new Map<number, {id: string; name: string; args: string; signature?: Opaque}>()
  private readonly thinking = new Map<number, ReasoningPart>()
  private readonly reasoning: Part[] = []
  /** Whether a call of this answer was written (only the first gets the skip signature). */
  private called = false
  /** The searches the upstream ran, for the last chunk's `groundingMetadata`. */
  private searches?: Array<Omit<WebSearchPart, 'type'>>
  /** The end of a text chunk, after its part (see textChunk), and the model and id it names. */
  private chunkEnd?: {model: string; id: string; text: string}

  constructor(private readonly ctx?: CodecContext & {model?: string}) {
    this.model = ctx?.request?.model ?? ctx?.model ?? ''
  }

  event(event: StreamEvent): string {
    if (this.finished) return ''
    if (!this.id && event.type !== 'error')
      this.id = (event.type === 'start' && event.id) || newId(this.ctx, 'resp')
    switch (event.type) {
      case 'start':
        if (!this.model) this.model = event.model
        return ''
      case 'text_delta':
        return event.text ? this.textChunk(event.text, false) : ''
      case 'block_start':
        if (event.block.type === 'tool_call')
          this.calls.set(event.index, {
            id: event.block.id,
            name: event.block.name,
            args: '',
            ...(event.block.signature && {signature: event.block.signature}),
          })
        else if (event.block.type === 'reasoning')
          this.thinking.set(event.index, {type: 'reasoning', text: ''})
        // a search: its pages go as the grounding of the last chunk, as Gemini sends them
        else if (event.block.type === 'web_search') (this.searches ??= []).push(event.block)
        return ''
      case 'reasoning_delta': {
        const part = this.thinking.get(event.index)
        if (part) part.text += event.text
        return event.text ? this.textChunk(event.text, true) : ''
      }
      case 'reasoning_opaque': {
        const part = this.thinking.get(event.index)
        const {signature, redacted, encrypted} = event
        if (part)
          Object.assign(part, signature && {signature}, redacted && {redacted}, encrypted && {encrypted})
        const wrapped = wrapReasoning('gemini', event)
        return wrapped ? this.chunk([{text: '', thought: true, thoughtSignature: wrapped}]) : ''
      }
      case 'tool_args_delta': {
        const call = this.calls.get(event.index)
        if (call) call.args += event.json
        return ''
      }
      case 'block_stop':
        return this.blockStop(event.index)
      case 'stop':
        this.stop = event.reason
        return ''
      case 'usage':
        this.usage = {...this.usage, ...event.usage}
        return ''
      case 'end': {
        let out = ''
        for (const index of [...this.calls.keys()]) out += this.blockStop(index)
        this.finished = true
        const grounding = this.searches ? groundingOf(this.searches) : undefined
        return (
          out +
          this.data({
            candidates: [
              {
                content: {role: 'model', parts: []},
                finishReason: finishReasonOf(this.stop),
                index: 0,
                ...(grounding ? {groundingMetadata: grounding} : {}),
              },
            ],
            usageMetadata: usageToGemini(fullUsage(this.usage)),
            modelVersion: this.model,
            responseId: this.id,
          })
        )
      }
      case 'error':
        // @google/genai throws ApiError only for a network read that is exactly `{"error":…}`
        // (a `data: {"error":…}` event is yielded as an empty answer). Unframed and with no
        // delimiter after it, a read that coalesced it with earlier bytes still throws
        // ("Incomplete JSON segment at the end").
        this.finished = true
        return JSON.stringify({
          error: {code: event.status, message: event.message, status: statusName(event.status)},
        })
    }
  }

  private blockStop(index: number): string {
    const thought = this.thinking.get(index)
    if (thought) {
      this.thinking.delete(index)
      this.reasoning.push(thought)
      return ''
    }
    const call = this.calls.get(index)
    if (!call) return ''
    this.calls.delete(index)
    if (hasForeignOpaque(this.reasoning, 'gemini')) this.ctx?.carry?.set(call.id, [...this.reasoning])
    let args: unknown = {}
    try {
      const parsed: unknown = JSON.parse(call.args || '{}')
      if (isObject(parsed)) args = parsed
    } catch {
      // unparseable arguments: the call goes out with none
    }
    const first = !this.called
    this.called = true
    return this.chunk([
      {functionCall: {name: call.name, args, id: call.id}, ...callSignature(call.signature, first)},
    ])
  }

  /**
   * `chunk([{text}])` (with `thought: true` for reasoning) byte for byte, written as text: the
   * chunk of nearly every event, whose text after its part is the same in all of them (made again
   * if the model or id it names changed).
   */
  private textChunk(text: string, thought: boolean): string {
    let end = this.chunkEnd
    if (!end || end.model !== this.model || end.id !== this.id)
      end = this.chunkEnd = {
        model: this.model,
        id: this.id,
        text: `]},"index":0}],"modelVersion":${JSON.stringify(this.model)},"responseId":${JSON.stringify(this.id)}}\n\n`,
      }
    return `data: {"candidates":[{"content":{"role":"model","parts":[{"text":${JSON.stringify(text)}${thought ? ',"thought":true}' : '}'}${end.text}`
  }

  private chunk(parts: Body[]): string {
    return this.data({
      candidates: [{content: {role: 'model', parts}, index: 0}],
      modelVersion: this.model,
      responseId: this.id,
    })
  }

  private data(body: Body): string {
    return `data: ${JSON.stringify(body)}\n\n`
  }
}
