/** The Responses stream encoder: the events openai-node's `responses.stream()` and Codex need. */
import {webSearchItem} from './web-search.js'
import type {
  CodecContext,
  ItemStore,
  Opaque,
  Part,
  ReasoningPart,
  StopReason,
  StreamEncoder,
  StreamEvent,
  Usage,
} from './ir.js'
import type {Body} from './responses-items.js'
import {
  customInput,
  wholeArguments,
  fullUsage,
  functionCallItem,
  hasForeignOpaque,
  isCustomTool,
  itemStoreOf,
  keptCall,
  newId,
  newItemId,
  keepItem,
  reasoningItem,
  responseObject,
  signaturePart,
  statusOf,
} from './responses-items.js'
import {isToolSearch} from './tool-search.js'

interface EncBlock {
  kind: 'text' | 'reasoning' | 'tool'
  outputIndex: number
  itemId: string
  text: string
  opaque?: {signature?: Opaque; redacted?: Opaque; encrypted?: Opaque}
  /** `search`: Codex's tool search, whose `tool_search_call` item has no argument events. */
  call?: {id: string; name: string; custom: boolean; search?: boolean}
  /** What a delta event of this block holds between its sequence number and its delta string. */
  deltaHead?: string
}

/** The delta event of each block kind, and the fields its data has before `delta`. */
const DELTA_EVENT = {
  text: ['response.output_text.delta', ',"content_index":0'],
  reasoning: ['response.reasoning_summary_text.delta', ',"summary_index":0'],
  tool: ['response.function_call_arguments.delta', ''],
} as const

/** The end of a delta event's data after its string, by block kind. */
const DELTA_TAIL = {text: ',"logprobs":[]}\n\n', reasoning: '}\n\n', tool: '}\n\n'} as const

/**
 * Writes a Responses stream (`event:` + `data:` lines, `sequence_number` from 0). Event objects
 * name their fields rather than start with a spread of a shared one: an object literal that starts
 * with a spread and goes on with more members takes µs on Node 20's V8.
 */
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
  /**
   * The call whose block stopped last, its closing events held until the next event: a `stop`
   * for the token limit right after it says the limit cut its arguments (unless they are whole
   * JSON: `wholeArguments`), and such a call is never
   * sent as done (Codex runs a call as soon as its `response.output_item.done` comes, whatever
   * its status or the response's); the response lists it `incomplete`.
   */
  private heldCall?: EncBlock
  /** Where each item's parts are kept when it is done, for the client's item_reference (`store` on). */
  private readonly items: ItemStore | undefined

  constructor(private readonly ctx?: CodecContext & {model?: string}) {
    this.model = ctx?.request?.model ?? ctx?.model ?? ''
    this.items = itemStoreOf(ctx)
  }

  /** Keeps a done item's parts by its id ({@link items}). */
  private keep(id: string, parts: Part[]): void {
    if (this.items) keepItem(this.items, this.ctx, id, parts)
  }

  event(event: StreamEvent): string {
    if (this.finished) return ''
    let out = ''
    if (!this.started && event.type !== 'error') out += this.start(event.type === 'start' ? event : undefined)
    if (this.heldCall) out += this.releaseCall(event)
    switch (event.type) {
      case 'block_start':
        out += this.blockStart(event.index, event.block)
        break
      case 'text_delta': {
        const block = this.blocks.get(event.index)
        if (!block || block.kind !== 'text') break
        block.text += event.text
        out += this.delta(block, event.text)
        break
      }
      case 'reasoning_delta': {
        const block = this.blocks.get(event.index)
        if (!block || block.kind !== 'reasoning') break
        block.text += event.text
        out += this.delta(block, event.text)
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
        if (!block.call.custom && !block.call.search && event.json) out += this.delta(block, event.json)
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
        for (const index of [...this.blocks.keys()]) {
          out += this.blockStop(index)
          if (this.heldCall) out += this.releaseCall(event)
        }
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
    // the same snapshot in both events, its JSON made once (what `emit` would write, byte for byte)
    const response = JSON.stringify(this.snapshot('in_progress'))
    const created = `event: response.created\ndata: {"type":"response.created","sequence_number":${this.seq++},"response":${response}}\n\n`
    return `${created}event: response.in_progress\ndata: {"type":"response.in_progress","sequence_number":${this.seq++},"response":${response}}\n\n`
  }

  /**
   * A block's delta event (text, reasoning summary or call arguments: the event of nearly every
   * chunk), written as text: what `emit` would write, byte for byte, its fixed part made once per
   * block.
   */
  private delta(block: EncBlock, text: string): string {
    const [type, fields] = DELTA_EVENT[block.kind]
    block.deltaHead ??= `,"item_id":${JSON.stringify(block.itemId)},"output_index":${block.outputIndex}${fields},"delta":`
    return `event: ${type}\ndata: {"type":"${type}","sequence_number":${this.seq++}${block.deltaHead}${JSON.stringify(text)}${DELTA_TAIL[block.kind]}`
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

  private blockStart(index: number, start: Extract<StreamEvent, {type: 'block_start'}>['block']): string {
    const outputIndex = this.output.length
    let out = ''
    if (start.type === 'web_search') {
      // a search comes whole: OpenAI's events of one, from added to done, at once
      const item = webSearchItem(start, newItemId(this.ctx, 'ws'))
      this.output.push(item)
      const ref = {output_index: outputIndex, item_id: item.id}
      out += this.emit('response.output_item.added', {
        output_index: outputIndex,
        item: {type: 'web_search_call', id: item.id, status: 'in_progress'},
      })
      out += this.emit('response.web_search_call.in_progress', ref)
      out += this.emit('response.web_search_call.searching', ref)
      // (a failed search has no event of its own: its item's status says it)
      if (item.status === 'completed') out += this.emit('response.web_search_call.completed', ref)
      if (this.items) this.keep(item.id as string, [{...start, type: 'web_search'}])
      return out + this.emit('response.output_item.done', {output_index: outputIndex, item})
    }
    if (start.type === 'text') {
      const block: EncBlock = {kind: 'text', outputIndex, itemId: newItemId(this.ctx, 'msg'), text: ''}
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
        item_id: block.itemId,
        output_index: block.outputIndex,
        content_index: 0,
        part: {type: 'output_text', text: '', annotations: []},
      })
    } else if (start.type === 'reasoning') {
      const block: EncBlock = {kind: 'reasoning', outputIndex, itemId: newItemId(this.ctx, 'rs'), text: ''}
      this.blocks.set(index, block)
      this.output.push({type: 'reasoning', id: block.itemId, summary: []})
      out += this.emit('response.output_item.added', {
        output_index: outputIndex,
        item: this.output[outputIndex],
      })
      out += this.emit('response.reasoning_summary_part.added', {
        item_id: block.itemId,
        output_index: block.outputIndex,
        summary_index: 0,
        part: {type: 'summary_text', text: ''},
      })
    } else {
      if (start.signature) out += this.signatureItem(start.signature)
      const custom = isCustomTool(this.ctx?.request, start.name)
      const search = isToolSearch(this.ctx?.request, start.name)
      const block: EncBlock = {
        kind: 'tool',
        outputIndex: this.output.length,
        itemId: newItemId(this.ctx, custom ? 'ctc' : search ? 'tsc' : 'fc'),
        text: '',
        call: {id: start.id, name: start.name, custom, ...(search ? {search} : {})},
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
    const item = reasoningItem(part, newItemId(this.ctx, 'rs'))
    const outputIndex = this.output.length
    this.output.push(item)
    this.keep(item.id as string, [part])
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
      if (this.items) this.keep(block.itemId, [{type: 'text', text: block.text}])
      out += this.emit('response.output_text.done', {
        item_id: block.itemId,
        output_index: block.outputIndex,
        content_index: 0,
        text: block.text,
        logprobs: [],
      })
      out += this.emit('response.content_part.done', {
        item_id: block.itemId,
        output_index: block.outputIndex,
        content_index: 0,
        part,
      })
      out += this.emit('response.output_item.done', {output_index: block.outputIndex, item})
    } else if (block.kind === 'reasoning') {
      const part: ReasoningPart = {type: 'reasoning', text: block.text, ...block.opaque}
      this.reasoning.push(part)
      const item = reasoningItem(part, block.itemId)
      this.output[block.outputIndex] = item
      this.keep(item.id as string, [part])
      const summaryPart = {type: 'summary_text', text: block.text}
      out += this.emit('response.reasoning_summary_text.done', {
        item_id: block.itemId,
        output_index: block.outputIndex,
        summary_index: 0,
        text: block.text,
      })
      out += this.emit('response.reasoning_summary_part.done', {
        item_id: block.itemId,
        output_index: block.outputIndex,
        summary_index: 0,
        part: summaryPart,
      })
      out += this.emit('response.output_item.done', {output_index: block.outputIndex, item})
    } else if (block.call) this.heldCall = block
    return out
  }

  /** The held call's closing events, or, when the token limit cut it, none ({@link heldCall}). */
  private releaseCall(next: StreamEvent): string {
    const block = this.heldCall!
    this.heldCall = undefined
    const call = {id: block.call!.id, name: block.call!.name, arguments: block.text || '{}'}
    if (this.items) this.keep(block.itemId, [keptCall(this.ctx, {type: 'tool_call', ...call})])
    if (hasForeignOpaque(this.reasoning, 'responses')) this.ctx?.carry?.set(call.id, [...this.reasoning])
    if (next.type === 'stop' && next.reason === 'max_tokens' && !wholeArguments(call.arguments)) {
      this.output[block.outputIndex] = functionCallItem(this.ctx, call, block.itemId, 'incomplete')
      return ''
    }
    const item = functionCallItem(this.ctx, call, block.itemId, 'completed')
    this.output[block.outputIndex] = item
    let out = ''
    if (block.call!.custom) {
      const input = customInput(call.arguments)
      out += this.emit('response.custom_tool_call_input.delta', {
        item_id: block.itemId,
        output_index: block.outputIndex,
        delta: input,
      })
      out += this.emit('response.custom_tool_call_input.done', {
        item_id: block.itemId,
        output_index: block.outputIndex,
        input,
      })
    } else if (!block.call!.search)
      out += this.emit('response.function_call_arguments.done', {
        item_id: block.itemId,
        output_index: block.outputIndex,
        arguments: call.arguments,
      })
    return out + this.emit('response.output_item.done', {output_index: block.outputIndex, item})
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
