/**
 * Writes a Messages stream for a Messages client (Claude Code, the Anthropic SDK): `message_start`
 * first, `event:` on every event, one content block on the wire at a time (tool calls a chat
 * upstream streams interleaved are written one after the other), thinking signatures wrapped, and
 * the stop held until `end` so that `message_delta` carries the stop reason and final usage.
 */
import {errorType} from './errors.js'
import type {Json} from './cm-common.js'
import {makeId, storeCarry} from './cm-common.js'
import {STOP_REASON, messagesUsageText} from './messages-stream.js'
import type {
  CodecContext,
  Opaque,
  Part,
  ReasoningPart,
  StopReason,
  StreamEncoder,
  StreamEvent,
  Usage,
} from './ir.js'
import {wrapOpaque} from './ir.js'
import {searchBlocks} from './web-search.js'

type BlockEvent = Exclude<StreamEvent, {type: 'start' | 'stop' | 'usage' | 'end' | 'error' | 'block_start'}>

interface Block {
  start: StreamEvent & {type: 'block_start'}
  /** The wire index, once the block's start is written. */
  wire?: number
  /** The text of this block's delta events of `deltaType` up to their string (made once). */
  deltaHead?: string
  deltaType?: string
  /** Events that came while another block held the wire. */
  held: BlockEvent[]
  part?: ReasoningPart
  opaque?: Opaque
  redacted?: Opaque
}

const sse = (payload: Json): string => `event: ${String(payload.type)}\ndata: ${JSON.stringify(payload)}\n\n`
const q = JSON.stringify

// The events every stream has are written as text: byte for byte what `sse` writes for them
// (messages-stream.test.ts compares the two), without an object and a `JSON.stringify` each.
const MESSAGE_STOP = 'event: message_stop\ndata: {"type":"message_stop"}\n\n'
const blockStop = (index: number): string =>
  `event: content_block_stop\ndata: {"type":"content_block_stop","index":${index}}\n\n`
const blockStart = (index: number, block: string): string =>
  `event: content_block_start\ndata: {"type":"content_block_start","index":${index},"content_block":${block}}\n\n`

export class MessagesStreamEncoder implements StreamEncoder {
  private started = false
  private closed = false
  private wireNext = 0
  private current?: number
  private blocks = new Map<number, Block>()
  private queue: number[] = []
  private stop?: {reason: StopReason; stopSequence?: string}
  private usage: Partial<Usage> = {}
  /** Reasoning since the last tool call (kept under the next call's id when foreign). */
  private segment: Part[] = []
  /** The searches the upstream ran (the usage's `server_tool_use`). */
  private searches = 0

  constructor(private readonly ctx?: CodecContext & {model?: string}) {}

  event(e: StreamEvent): string {
    if (this.closed) return ''
    if (e.type === 'error') {
      this.closed = true
      const type = errorType('messages', e.status)
      return sse({type: 'error', error: {type, message: e.message}})
    }
    let out = this.started ? '' : this.begin(e.type === 'start' ? e : undefined)
    switch (e.type) {
      case 'block_start':
        return out + this.blockStart(e)
      case 'stop':
        this.stop = {reason: e.reason, ...(e.stopSequence ? {stopSequence: e.stopSequence} : {})}
        return out
      case 'usage':
        this.usage = {...this.usage, ...e.usage}
        return out
      case 'end':
        out += this.flushAll()
        this.closed = true
        return `${out}event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":${q(STOP_REASON[this.stop?.reason ?? 'end'])},"stop_sequence":${q(this.stop?.stopSequence ?? null)}},"usage":${messagesUsageText(this.usage, this.searches)}}\n\n${MESSAGE_STOP}`
      case 'start':
        return out
      default:
        return out + this.blockEvent(e)
    }
  }

  private begin(start?: {id: string; model: string; usage?: Partial<Usage>}): string {
    this.started = true
    if (start?.usage) this.usage = {...start.usage}
    const id = start?.id || makeId(this.ctx, 'msg_')
    const model = start?.model || this.ctx?.model || this.ctx?.request?.model || ''
    return `event: message_start\ndata: {"type":"message_start","message":{"id":${q(id)},"type":"message","role":"assistant","model":${q(model)},"content":[],"stop_reason":null,"stop_sequence":null,"usage":${messagesUsageText(this.usage)}}}\n\n`
  }

  private blockStart(e: StreamEvent & {type: 'block_start'}): string {
    const block: Block = {start: e, held: []}
    this.blocks.set(e.index, block)
    if (e.block.type === 'reasoning') {
      block.part = {type: 'reasoning', text: ''}
      this.segment.push(block.part)
    } else if (e.block.type === 'tool_call') {
      const call: Part = {type: 'tool_call', id: e.block.id, name: e.block.name, arguments: ''}
      if (e.block.signature) call.signature = e.block.signature
      storeCarry([...this.segment, call], 'messages', this.ctx?.carry, false)
      this.segment = []
    }
    if (this.current !== undefined) {
      this.queue.push(e.index)
      return ''
    }
    return this.open(e.index)
  }

  private blockEvent(e: BlockEvent): string {
    const b = this.blocks.get(e.index)
    if (!b) return ''
    if (b.part && e.type === 'reasoning_delta') b.part.text += e.text
    if (b.part && e.type === 'reasoning_opaque') {
      if (e.signature) b.part.signature = b.opaque = e.signature
      if (e.encrypted) b.part.encrypted = b.opaque = e.encrypted
      if (e.redacted) b.part.redacted = e.redacted
    }
    if (this.current !== e.index) {
      b.held.push(e)
      return ''
    }
    return this.render(b, e)
  }

  /** Gives the wire to a block: its start (a thinking block's waits for its first content). */
  private open(index: number): string {
    const b = this.blocks.get(index) as Block
    this.current = index
    let out = b.start.block.type === 'reasoning' ? '' : this.writeStart(b)
    const held = b.held
    b.held = []
    for (const e of held) out += this.render(b, e)
    return out
  }

  private writeStart(b: Block): string {
    if (b.wire !== undefined) return ''
    b.wire = this.wireNext++
    const s = b.start.block
    if (s.type === 'web_search') {
      // the search's call, its query in one delta, as Anthropic streams it (results: stopBlock)
      const [call] = searchBlocks(s)
      return (
        blockStart(b.wire, q({...call, input: {}})) +
        sse({
          type: 'content_block_delta',
          index: b.wire,
          delta: {type: 'input_json_delta', partial_json: q(call.input)},
        })
      )
    }
    return blockStart(
      b.wire,
      s.type === 'text'
        ? '{"type":"text","text":""}'
        : s.type === 'tool_call'
          ? `{"type":"tool_use","id":${q(s.id)},"name":${q(s.name)},"input":{}}`
          : b.redacted
            ? `{"type":"redacted_thinking","data":${q(wrapOpaque('messages', b.redacted))}}`
            : '{"type":"thinking","thinking":"","signature":""}',
    )
  }

  private delta(b: Block, delta: Json): string {
    return this.writeStart(b) + sse({type: 'content_block_delta', index: b.wire, delta})
  }

  /** `delta(b, {type, [key]: text})` written as text. */
  private textDelta(b: Block, type: string, key: string, text: string): string {
    const start = this.writeStart(b)
    if (b.deltaType !== type) {
      b.deltaType = type
      b.deltaHead = `event: content_block_delta\ndata: {"type":"content_block_delta","index":${b.wire},"delta":{"type":"${type}","${key}":`
    }
    return `${start}${b.deltaHead}${JSON.stringify(text)}}}\n\n`
  }

  private render(b: Block, e: BlockEvent): string {
    switch (e.type) {
      // the events of nearly every chunk: written as text (what `delta` would write, byte for byte)
      case 'text_delta':
        return e.text ? this.textDelta(b, 'text_delta', 'text', e.text) : ''
      case 'reasoning_delta':
        return e.text && !b.redacted ? this.textDelta(b, 'thinking_delta', 'thinking', e.text) : ''
      case 'reasoning_opaque':
        // Redacted thinking is a block of its own kind: it can only open one.
        if (e.redacted && b.wire === undefined) {
          b.redacted = e.redacted
          return this.writeStart(b)
        }
        return ''
      case 'tool_args_delta':
        return e.json ? this.textDelta(b, 'input_json_delta', 'partial_json', e.json) : ''
      case 'block_stop':
        return this.stopBlock(b) + this.advance()
    }
  }

  private stopBlock(b: Block): string {
    this.current = undefined
    const s = b.start.block
    if (s.type === 'web_search') {
      this.searches++
      const start = this.writeStart(b)
      const result = this.wireNext++
      return `${start}${blockStop(b.wire as number)}${blockStart(result, q(searchBlocks(s)[1]))}${blockStop(result)}`
    }
    const reasoning = b.start.block.type === 'reasoning'
    // A thinking block with nothing in it is left out.
    if (reasoning && b.wire === undefined && !b.opaque && !b.part?.text) return ''
    let out = this.writeStart(b)
    if (reasoning && !b.redacted && b.opaque)
      out += sse({
        type: 'content_block_delta',
        index: b.wire,
        delta: {type: 'signature_delta', signature: wrapOpaque('messages', b.opaque)},
      })
    return out + blockStop(b.wire as number)
  }

  private advance(): string {
    if (this.current !== undefined) return ''
    const next = this.queue.shift()
    return next !== undefined ? this.open(next) : ''
  }

  /** Closes what the upstream left open (the stream is ending). */
  private flushAll(): string {
    let out = ''
    while (this.current !== undefined || this.queue.length) {
      if (this.current === undefined) {
        out += this.advance()
        continue
      }
      const b = this.blocks.get(this.current) as Block
      out += this.render(b, {type: 'block_stop', index: this.current})
    }
    return out
  }
}
