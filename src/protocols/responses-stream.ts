/**
 * Responses streams: the decoder reads an upstream's `response.*` events into IR stream events;
 * the encoder writes the events openai-node's `responses.stream()` and Codex need.
 */
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
} from './ir.js'
import type {Body} from './responses-items.js'
import {
  customInput,
  fullUsage,
  functionCallItem,
  hasForeignOpaque,
  isCustomTool,
  isObject,
  newId,
  ownReasoning,
  reasoningItem,
  responseObject,
  signaturePart,
  statusOf,
  usageFromResponses,
} from './responses-items.js'

interface OpenBlock {
  index: number
  kind: 'text' | 'reasoning' | 'tool'
  delta: boolean
  custom?: boolean
  summary?: number
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

function errorStatus(code: unknown): number {
  if (code === 'rate_limit_exceeded' || code === 'insufficient_quota') return 429
  if (code === 'context_length_exceeded' || code === 'invalid_prompt') return 400
  return 502
}

/** JSON-string content of `text` (the text between the quotes). */
const jsonInner = (text: string): string => JSON.stringify(text).slice(1, -1)

export class ResponsesStreamDecoder implements StreamDecoder {
  private started = false
  private done = false
  private next = 0
  private toolCalls = false
  private refusal = false
  private readonly blocks = new Map<string, OpenBlock>()
  /** Keys of every block opened so far (an item's `done` after its parts' `done` adds nothing). */
  private readonly seen = new Set<string>()

  constructor(private readonly ctx?: CodecContext) {}

  event(name: string | undefined, data: string): StreamEvent[] {
    if (this.done || data.trim() === '[DONE]') return []
    let payload: unknown
    try {
      payload = JSON.parse(data)
    } catch {
      return []
    }
    if (!isObject(payload)) return []
    const type = str(payload.type) ?? name
    const out: StreamEvent[] = []
    const response = isObject(payload.response) ? payload.response : undefined
    if (!this.started && type !== 'error' && type !== 'response.failed') {
      this.started = true
      out.push({
        type: 'start',
        id: str(response?.id) ?? newId(this.ctx, 'resp'),
        model: str(response?.model) ?? '',
      })
    }
    const oi = typeof payload.output_index === 'number' ? payload.output_index : 0
    const ci = typeof payload.content_index === 'number' ? payload.content_index : 0
    const item = isObject(payload.item) ? payload.item : undefined
    switch (type) {
      case 'response.output_item.added':
        if (item?.type === 'reasoning') this.open(out, `${oi}`, 'reasoning')
        else if (item?.type === 'function_call' || item?.type === 'custom_tool_call') {
          const custom = item.type === 'custom_tool_call'
          this.toolCalls = true
          const block = this.open(out, `${oi}`, 'tool', {
            id: str(item.call_id) ?? str(item.id) ?? newId(this.ctx, 'call'),
            name: str(item.name) ?? '',
          })
          block.custom = custom
          if (custom) out.push({type: 'tool_args_delta', index: block.index, json: '{"input":"'})
        }
        break
      case 'response.content_part.added': {
        const part = isObject(payload.part) ? payload.part : {}
        if (part.type === 'output_text' || part.type === 'refusal') this.open(out, `${oi}:${ci}`, 'text')
        break
      }
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        if (type === 'response.refusal.delta') this.refusal = true
        this.text(out, `${oi}:${ci}`, str(payload.delta) ?? '')
        break
      case 'response.output_text.done':
      case 'response.refusal.done': {
        const block = this.blocks.get(`${oi}:${ci}`)
        if (!block?.delta) this.text(out, `${oi}:${ci}`, str(payload.text) ?? str(payload.refusal) ?? '')
        break
      }
      case 'response.content_part.done':
        this.close(out, `${oi}:${ci}`)
        break
      case 'response.function_call_arguments.delta':
      case 'response.custom_tool_call_input.delta': {
        const block = this.blocks.get(`${oi}`)
        const delta = str(payload.delta) ?? ''
        if (block?.kind !== 'tool' || !delta) break
        block.delta = true
        out.push({type: 'tool_args_delta', index: block.index, json: block.custom ? jsonInner(delta) : delta})
        break
      }
      case 'response.function_call_arguments.done':
      case 'response.custom_tool_call_input.done': {
        const block = this.blocks.get(`${oi}`)
        const full = str(payload.arguments) ?? str(payload.input) ?? ''
        if (block?.kind !== 'tool' || block.delta || !full) break
        block.delta = true
        out.push({type: 'tool_args_delta', index: block.index, json: block.custom ? jsonInner(full) : full})
        break
      }
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta': {
        const block = this.blocks.get(`${oi}`)
        if (block?.kind !== 'reasoning') break
        const summary = typeof payload.summary_index === 'number' ? payload.summary_index : 0
        const sep = block.delta && block.summary !== summary ? '\n\n' : ''
        block.summary = summary
        block.delta = true
        out.push({type: 'reasoning_delta', index: block.index, text: sep + (str(payload.delta) ?? '')})
        break
      }
      case 'response.output_item.done':
        if (item) this.itemDone(out, oi, item)
        break
      case 'response.completed':
      case 'response.incomplete': {
        for (const key of [...this.blocks.keys()]) this.close(out, key)
        const stop: StopReason =
          type === 'response.incomplete'
            ? isObject(response?.incomplete_details) &&
              response.incomplete_details.reason === 'content_filter'
              ? 'content_filter'
              : 'max_tokens'
            : this.toolCalls
              ? 'tool_use'
              : this.refusal
                ? 'refusal'
                : 'end'
        out.push({type: 'stop', reason: stop})
        const usage = usageFromResponses(response?.usage)
        if (usage) out.push({type: 'usage', usage})
        out.push({type: 'end'})
        this.done = true
        break
      }
      case 'response.failed':
      case 'error': {
        const error = isObject(response?.error)
          ? response.error
          : isObject(payload.error)
            ? payload.error
            : payload
        this.done = true
        out.push({
          type: 'error',
          status: errorStatus(error.code),
          message: str(error.message) ?? 'upstream response failed',
          ...(typeof error.code === 'string' ? {code: error.code} : {}),
        })
        break
      }
    }
    return out
  }

  end(): StreamEvent[] {
    if (this.done) return []
    this.done = true
    return [{type: 'error', status: 502, message: 'upstream stream ended before response.completed'}]
  }

  private open(
    out: StreamEvent[],
    key: string,
    kind: OpenBlock['kind'],
    call?: {id: string; name: string},
  ): OpenBlock {
    const existing = this.blocks.get(key)
    if (existing) return existing
    const block: OpenBlock = {index: this.next++, kind, delta: false}
    this.blocks.set(key, block)
    this.seen.add(key)
    out.push({
      type: 'block_start',
      index: block.index,
      block: kind === 'tool' ? {type: 'tool_call', id: call?.id ?? '', name: call?.name ?? ''} : {type: kind},
    })
    return block
  }

  private text(out: StreamEvent[], key: string, text: string): void {
    const block = this.open(out, key, 'text')
    if (!text) return
    block.delta = true
    out.push({type: 'text_delta', index: block.index, text})
  }

  private close(out: StreamEvent[], key: string): void {
    const block = this.blocks.get(key)
    if (!block) return
    this.blocks.delete(key)
    if (block.kind === 'tool' && block.custom)
      out.push({type: 'tool_args_delta', index: block.index, json: '"}'})
    out.push({type: 'block_stop', index: block.index})
  }

  private itemDone(out: StreamEvent[], oi: number, item: Body): void {
    if (item.type === 'message') {
      const content = Array.isArray(item.content) ? item.content : []
      content.forEach((part, ci) => {
        if (!isObject(part)) return
        const key = `${oi}:${ci}`
        const text = str(part.text) ?? str(part.refusal) ?? ''
        if (part.type === 'refusal') this.refusal = true
        if (this.seen.has(key) && !this.blocks.has(key)) return
        if (!this.blocks.get(key)?.delta) this.text(out, key, text)
        this.close(out, key)
      })
      return
    }
    const key = `${oi}`
    if (this.seen.has(key) && !this.blocks.has(key)) return
    if (item.type === 'reasoning') {
      const block = this.open(out, key, 'reasoning')
      if (!block.delta) {
        const summary = (Array.isArray(item.summary) ? item.summary : []).filter(isObject)
        const text = summary
          .map((s) => str(s.text) ?? '')
          .filter(Boolean)
          .join('\n\n')
        if (text) out.push({type: 'reasoning_delta', index: block.index, text})
      }
      const encrypted = ownReasoning(item.id, item.encrypted_content)
      if (encrypted) out.push({type: 'reasoning_opaque', index: block.index, encrypted})
      this.close(out, key)
    } else if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      const custom = item.type === 'custom_tool_call'
      this.toolCalls = true
      const block =
        this.blocks.get(key) ??
        this.open(out, key, 'tool', {
          id: str(item.call_id) ?? str(item.id) ?? newId(this.ctx, 'call'),
          name: str(item.name) ?? '',
        })
      if (block.custom === undefined && custom) {
        block.custom = true
        out.push({type: 'tool_args_delta', index: block.index, json: '{"input":"'})
      }
      if (!block.delta) {
        const full = custom ? jsonInner(str(item.input) ?? '') : (str(item.arguments) ?? '')
        if (full) out.push({type: 'tool_args_delta', index: block.index, json: full})
        block.delta = true
      }
      this.close(out, key)
    }
  }
}

interface EncBlock {
  kind: 'text' | 'reasoning' | 'tool'
  outputIndex: number
  itemId: string
  text: string
  opaque?: {signature?: Opaque; redacted?: Opaque; encrypted?: Opaque}
  call?: {id: string; name: string; custom: boolean}
}

/** Writes a Responses stream (`event:` + `data:` lines, `sequence_number` from 0). */
export class ResponsesStreamEncoder implements StreamEncoder {
  private seq = 0
  private started = false
  private finished = false
  private id = ''
  private model: string
  private readonly createdAt = Math.floor(Date.now() / 1000)
  private readonly output: Body[] = []
  private readonly blocks = new Map<number, EncBlock>()
  private readonly reasoning: Part[] = []
  private stop: StopReason = 'end'
  private usage: Partial<Usage> = {}

  constructor(private readonly ctx?: CodecContext & {model?: string}) {
    this.model = ctx?.request?.model ?? ctx?.model ?? ''
  }

  event(event: StreamEvent): string {
    if (this.finished) return ''
    let out = ''
    if (!this.started && event.type !== 'error') out += this.start(event.type === 'start' ? event : undefined)
    switch (event.type) {
      case 'block_start':
        out += this.blockStart(event.index, event.block)
        break
      case 'text_delta': {
        const block = this.blocks.get(event.index)
        if (!block || block.kind !== 'text') break
        block.text += event.text
        out += this.emit('response.output_text.delta', {
          ...this.at(block),
          content_index: 0,
          delta: event.text,
          logprobs: [],
        })
        break
      }
      case 'reasoning_delta': {
        const block = this.blocks.get(event.index)
        if (!block || block.kind !== 'reasoning') break
        block.text += event.text
        out += this.emit('response.reasoning_summary_text.delta', {
          ...this.at(block),
          summary_index: 0,
          delta: event.text,
        })
        break
      }
      case 'reasoning_opaque': {
        const block = this.blocks.get(event.index)
        if (block?.kind === 'reasoning') {
          const {signature, redacted, encrypted} = event
          block.opaque = {
            ...block.opaque,
            ...(signature && {signature}),
            ...(redacted && {redacted}),
            ...(encrypted && {encrypted}),
          }
        }
        break
      }
      case 'tool_args_delta': {
        const block = this.blocks.get(event.index)
        if (!block?.call) break
        block.text += event.json
        if (!block.call.custom && event.json)
          out += this.emit('response.function_call_arguments.delta', {...this.at(block), delta: event.json})
        break
      }
      case 'block_stop':
        out += this.blockStop(event.index)
        break
      case 'stop':
        this.stop = event.reason
        break
      case 'usage':
        this.usage = {...this.usage, ...event.usage}
        break
      case 'end':
        for (const index of [...this.blocks.keys()]) out += this.blockStop(index)
        out += this.complete()
        break
      case 'error': {
        const code = event.code ?? (event.status === 429 ? 'rate_limit_exceeded' : 'server_error')
        const error = {type: 'error', code, message: event.message, param: null}
        // openai-node throws on a payload with `error`; Codex reads `response.failed`.
        out += this.emit('error', {...error, error: {...error}})
        out += this.emit('response.failed', {
          response: {
            ...this.snapshot('failed'),
            error: {code, message: event.message},
          },
        })
        this.finished = true
        break
      }
    }
    return out
  }

  private start(event?: {id: string; model: string}): string {
    this.started = true
    this.id = event?.id || newId(this.ctx, 'resp')
    if (!this.model) this.model = event?.model ?? ''
    return (
      this.emit('response.created', {response: this.snapshot('in_progress')}) +
      this.emit('response.in_progress', {response: this.snapshot('in_progress')})
    )
  }

  private snapshot(
    status: string,
    output: Body[] = [],
    usage: Usage | null = null,
    incomplete?: Body | null,
  ): Body {
    return responseObject({
      id: this.id,
      model: this.model,
      createdAt: this.createdAt,
      status,
      output,
      usage,
      incompleteDetails: incomplete,
      request: this.ctx?.request,
    })
  }

  private at(block: EncBlock): Body {
    return {item_id: block.itemId, output_index: block.outputIndex}
  }

  private blockStart(index: number, start: Extract<StreamEvent, {type: 'block_start'}>['block']): string {
    const outputIndex = this.output.length
    let out = ''
    if (start.type === 'text') {
      const block: EncBlock = {kind: 'text', outputIndex, itemId: newId(this.ctx, 'msg'), text: ''}
      this.blocks.set(index, block)
      this.output.push({
        type: 'message',
        id: block.itemId,
        role: 'assistant',
        status: 'in_progress',
        content: [],
      })
      out += this.emit('response.output_item.added', {
        output_index: outputIndex,
        item: this.output[outputIndex],
      })
      out += this.emit('response.content_part.added', {
        ...this.at(block),
        content_index: 0,
        part: {type: 'output_text', text: '', annotations: []},
      })
    } else if (start.type === 'reasoning') {
      const block: EncBlock = {kind: 'reasoning', outputIndex, itemId: newId(this.ctx, 'rs'), text: ''}
      this.blocks.set(index, block)
      this.output.push({type: 'reasoning', id: block.itemId, summary: []})
      out += this.emit('response.output_item.added', {
        output_index: outputIndex,
        item: this.output[outputIndex],
      })
      out += this.emit('response.reasoning_summary_part.added', {
        ...this.at(block),
        summary_index: 0,
        part: {type: 'summary_text', text: ''},
      })
    } else {
      if (start.signature) out += this.signatureItem(start.signature)
      const custom = isCustomTool(this.ctx?.request, start.name)
      const block: EncBlock = {
        kind: 'tool',
        outputIndex: this.output.length,
        itemId: newId(this.ctx, custom ? 'ctc' : 'fc'),
        text: '',
        call: {id: start.id, name: start.name, custom},
      }
      this.blocks.set(index, block)
      const item = functionCallItem(
        this.ctx,
        {id: start.id, name: start.name, arguments: ''},
        block.itemId,
        'in_progress',
      )
      this.output.push(item)
      out += this.emit('response.output_item.added', {output_index: block.outputIndex, item})
    }
    return out
  }

  /** A Gemini call's own thoughtSignature travels as a reasoning item before the call. */
  private signatureItem(signature: Opaque): string {
    const part = signaturePart(signature)
    this.reasoning.push(part)
    const item = reasoningItem(part, newId(this.ctx, 'rs'))
    const outputIndex = this.output.length
    this.output.push(item)
    return (
      this.emit('response.output_item.added', {
        output_index: outputIndex,
        item: {...item, encrypted_content: undefined},
      }) + this.emit('response.output_item.done', {output_index: outputIndex, item})
    )
  }

  private blockStop(index: number): string {
    const block = this.blocks.get(index)
    if (!block) return ''
    this.blocks.delete(index)
    let out = ''
    if (block.kind === 'text') {
      const part = {type: 'output_text', text: block.text, annotations: []}
      const item = {
        type: 'message',
        id: block.itemId,
        role: 'assistant',
        status: 'completed',
        content: [part],
      }
      this.output[block.outputIndex] = item
      out += this.emit('response.output_text.done', {
        ...this.at(block),
        content_index: 0,
        text: block.text,
        logprobs: [],
      })
      out += this.emit('response.content_part.done', {...this.at(block), content_index: 0, part})
      out += this.emit('response.output_item.done', {output_index: block.outputIndex, item})
    } else if (block.kind === 'reasoning') {
      const part: ReasoningPart = {type: 'reasoning', text: block.text, ...block.opaque}
      this.reasoning.push(part)
      const item = reasoningItem(part, block.itemId)
      this.output[block.outputIndex] = item
      const summaryPart = {type: 'summary_text', text: block.text}
      out += this.emit('response.reasoning_summary_text.done', {
        ...this.at(block),
        summary_index: 0,
        text: block.text,
      })
      out += this.emit('response.reasoning_summary_part.done', {
        ...this.at(block),
        summary_index: 0,
        part: summaryPart,
      })
      out += this.emit('response.output_item.done', {output_index: block.outputIndex, item})
    } else if (block.call) {
      const call = {id: block.call.id, name: block.call.name, arguments: block.text || '{}'}
      if (hasForeignOpaque(this.reasoning, 'responses')) this.ctx?.carry?.set(call.id, [...this.reasoning])
      const item = functionCallItem(this.ctx, call, block.itemId, 'completed')
      this.output[block.outputIndex] = item
      if (block.call.custom) {
        const input = customInput(call.arguments)
        out += this.emit('response.custom_tool_call_input.delta', {...this.at(block), delta: input})
        out += this.emit('response.custom_tool_call_input.done', {...this.at(block), input})
      } else
        out += this.emit('response.function_call_arguments.done', {
          ...this.at(block),
          arguments: call.arguments,
        })
      out += this.emit('response.output_item.done', {output_index: block.outputIndex, item})
    }
    return out
  }

  private complete(): string {
    this.finished = true
    const {status, incomplete_details} = statusOf(this.stop)
    const response = this.snapshot(status, this.output, fullUsage(this.usage), incomplete_details)
    return this.emit(status === 'incomplete' ? 'response.incomplete' : 'response.completed', {response})
  }

  private emit(type: string, fields: Body): string {
    const data = {type, sequence_number: this.seq++, ...fields}
    return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`
  }
}
