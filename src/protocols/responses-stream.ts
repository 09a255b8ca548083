/** The Responses stream decoder: an upstream's `response.*` events as IR stream events. */
import type {CitedPage} from './web-search.js'
import {citationOf, citationsOfOutput, citePages, webSearchOfItem} from './web-search.js'
import type {CodecContext, StopReason, StreamDecoder, StreamEvent, WebSearchPart} from './ir.js'
import {namedStatus} from './errors.js'
import type {Body} from './responses-items.js'
import {isObject, newId, ownReasoning, usageFromResponses} from './responses-items.js'

interface OpenBlock {
  index: number
  kind: 'text' | 'reasoning' | 'tool'
  delta: boolean
  custom?: boolean
  summary?: number
}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

const errorStatus = (code: unknown): number => namedStatus(code) ?? 502

/** JSON-string content of `text` (the text between the quotes). */
const jsonInner = (text: string): string => JSON.stringify(text).slice(1, -1)

export class ResponsesStreamDecoder implements StreamDecoder {
  private started = false
  /** The id and model of `response.created` / `in_progress`, for the start they hold back. */
  private startId: string | undefined
  private startModel: string | undefined
  /** An ack came and the start waits (see holdsStart). */
  private holding = false
  private done = false
  private next = 0
  private toolCalls = false
  private refusal = false
  /** The searches of the answer so far, and the pages its text cites (see handSearches). */
  private searches?: WebSearchPart[]
  private cited?: CitedPage[]
  private readonly blocks = new Map<string, OpenBlock>()
  /** Keys of every block opened so far (an item's `done` after its parts' `done` adds nothing). */
  private readonly seen = new Set<string>()

  constructor(private readonly ctx?: CodecContext) {}

  /** The start is held back after the upstream's ack (`response.created` / `in_progress`). */
  get holdsStart(): boolean {
    return this.holding && !this.started && !this.done
  }

  /** The start held back after the ack, given now (the relay's grace ran out). */
  flushStart(): StreamEvent[] {
    const out: StreamEvent[] = []
    if (this.holdsStart) this.start(out, undefined, undefined)
    return out
  }

  private start(out: StreamEvent[], id: string | undefined, model: string | undefined): void {
    this.started = true
    out.push({
      type: 'start',
      id: this.startId ?? id ?? newId(this.ctx, 'resp'),
      model: this.startModel ?? model ?? '',
    })
  }

  event(name: string | undefined, data: string): StreamEvent[] {
    if (this.done || data.trim() === '[DONE]') return []
    let payload: unknown
    try {
      payload = JSON.parse(data)
    } catch {
      // an empty event is nothing; anything else that is not JSON would lose a part of the answer
      if (data.trim() === '') return []
      throw new Error(`upstream event data is not JSON: ${data.slice(0, 80)}`)
    }
    if (!isObject(payload)) return []
    const type = str(payload.type) ?? name
    const out: StreamEvent[] = []
    const response = isObject(payload.response) ? payload.response : undefined
    if (!this.started && type !== 'error' && type !== 'response.failed') {
      // The start waits for the first event past `response.created` and `response.in_progress`
      // (an output item, even a reasoning one, or the end), or for the relay's short grace after
      // them ({@link holdsStart}, ../daemon/router/translated.ts): a stream that fails at once
      // (`response.failed` with OpenAI's `insufficient_quota`, a rate limit, an overload) has then
      // sent the client nothing, and the relay answers it as an error status, which the client's
      // SDK reads (Claude Code's `x-should-retry`, a 429's status) and another target may take,
      // where a Messages client given `message_start` first got only an in-stream error event.
      const id = str(response?.id)
      const model = str(response?.model)
      if (type === 'response.created' || type === 'response.in_progress') {
        if (id !== undefined) this.startId ??= id
        if (model !== undefined) this.startModel ??= model
        this.holding = true
        return out
      }
      this.start(out, id, model)
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
      case 'response.output_text.annotation.added': {
        const page = this.searches ? citationOf(payload.annotation) : undefined
        if (page) (this.cited ??= []).push(page)
        break
      }
      case 'response.completed':
      case 'response.incomplete': {
        for (const key of [...this.blocks.keys()]) this.close(out, key)
        if (this.searches) this.handSearches(out)
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

  /** The searches, each whole, with the titles the citations gave. */
  private handSearches(out: StreamEvent[]): void {
    const searches = this.searches ?? []
    citePages(searches, this.cited ?? [])
    for (const {type: _, ...search} of searches) {
      const index = this.next++
      out.push(
        {type: 'block_start', index, block: {type: 'web_search', ...search}},
        {type: 'block_stop', index},
      )
    }
    this.searches = undefined
  }

  private itemDone(out: StreamEvent[], oi: number, item: Body): void {
    if (item.type === 'message') {
      const content = Array.isArray(item.content) ? item.content : []
      // the pages it cites, for a search before it (an upstream that sends no annotation events)
      if (this.searches) (this.cited ??= []).push(...citationsOfOutput([item]))
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
    if (item.type === 'web_search_call') {
      // a search OpenAI ran: handed on at the end, with the titles of its pages, which only the
      // answer's citations give (a search's result is read whole: Claude Code's WebSearch waits
      // for the end of the answer)
      const search = webSearchOfItem(item)
      if (search) (this.searches ??= []).push(search)
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
