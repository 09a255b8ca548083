/**
 * The streaming relay: passes an upstream answer to the client byte for byte as it arrives
 * (backpressure honoured), feeds the usage tap off the critical path, and ends a stream that
 * breaks after its first byte with an error event in the entrance's protocol.
 */
import type {IncomingHttpHeaders, ServerResponse} from 'node:http'
import {performance} from 'node:perf_hooks'
import type {Dispatcher} from 'undici'

import {errorBody, streamErrorEvent, upstreamErrorMessage} from '../../protocols/errors.js'
import type {Family, TimeoutSettings} from '../../store/schema.js'
import {describeError, isSilence, sendFamilyError} from './error-shape.js'
import {mintRequestId, requestIdHeader, returnHeaders} from './headers.js'
import type {ProxyResult, ProxyTarget} from './proxy-types.js'
import {addWaitHeaders, noWaitHelps, waitHeaders} from './rate-limit.js'
import {SecretRedactor} from './redact.js'
import {createUsageTap} from './taps/index.js'
import {overflowFirstEvent} from './stream-overflow.js'
import {MAX_TAPPED_JSON_BYTES} from './taps/tap.js'
import {ToolCallNormaliser} from './tool-index.js'
import type {StreamOutcome, UsageTap} from './taps/tap.js'

/**
 * Drops the usage-only chunk (`"choices":[]` with `usage`) of a chat stream whose client did not
 * ask for usage (`dropUsage`), and with a `normaliser` writes the tool-call deltas of an upstream
 * that leaves their index or id out as OpenAI streams them (./tool-index.ts). Complete events pass on at once; only an
 * incomplete trailing event waits for its end (a client could not use half an event anyway).
 */
export class ChatUsageChunkFilter {
  constructor(
    private readonly dropUsage = true,
    private readonly normaliser?: ToolCallNormaliser,
  ) {}

  private pending = ''
  private readonly decoder = new TextDecoder()
  /** The decoder may hold the start of a character (the last chunk decoded ended in a byte >= 0x80). */
  private held = false

  /**
   * What of `chunk` goes to the client now. After nothing held back, a chunk is split on its
   * bytes (pushBytes): one that ends with its last event and holds no `"choices":[]` (nearly
   * every chunk) goes out as it came, no decoding, no copy.
   */
  push(chunk: Uint8Array): Uint8Array | string {
    return this.pending === '' && !this.held ? this.pushBytes(chunk) : this.pushText(chunk)
  }

  /** `chunk` read as text after what was held back, split into events, the usage chunk dropped. */
  private pushText(chunk: Uint8Array): string {
    this.held = chunk.length > 0 && chunk[chunk.length - 1] >= 0x80
    const text = this.pending + this.decoder.decode(chunk, {stream: true})
    const boundary = /\r\n\r\n|\n\n|\r\r/g
    let out = ''
    let start = 0
    for (let m = boundary.exec(text); m; m = boundary.exec(text)) {
      const end = m.index + m[0].length
      const event = text.slice(start, end)
      if (!(this.dropUsage && this.isUsageOnly(event)))
        out += this.normaliser && this.normaliser.mark(event) !== -1 ? this.normaliser.event(event) : event
      start = end
    }
    this.pending = text.slice(start)
    return out
  }

  /**
   * A chunk after nothing held back (its first byte starts an event), split into events on its
   * bytes as `push` splits its text: only an event that may be the usage chunk is decoded and
   * checked; the others go out as the bytes they came as (a dropped event's neighbours as slices
   * of the chunk). An incomplete last event waits, as text, for the rest.
   */
  private pushBytes(chunk: Uint8Array): Uint8Array | string {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    // one character a byte: its indexes are the bytes' (searched as a string: a Buffer's indexOf
    // of a few bytes costs more than reading the chunk as latin1 once)
    const latin1 = bytes.toString('latin1')
    // with a CR in it, the boundaries have three forms: split as text
    if (latin1.indexOf('\r') !== -1) return this.pushText(chunk)
    const n = bytes.length
    let kept: Buffer[] | undefined
    let start = 0 // where the current event starts
    let keptFrom = 0 // where the bytes kept since the last dropped or rewritten event start
    // (with a normaliser: where the next event it reads is, searched once for the events before it)
    let calls = this.normaliser ? this.normaliser.mark(latin1) : -1
    // without a CR, push's boundaries are the `\n\n` found left to right
    for (let at = latin1.indexOf('\n\n'); at !== -1; at = latin1.indexOf('\n\n', start)) {
      const end = at + 2
      let replaced: string | undefined
      if (
        this.dropUsage &&
        mayHoldNoChoices(latin1, start, end) &&
        this.isUsageOnly(bytes.toString('utf8', start, end))
      )
        replaced = ''
      else if (calls !== -1 && calls < end) {
        const event = bytes.toString('utf8', start, end)
        const written = this.normaliser!.event(event)
        if (written !== event) replaced = written
        calls = this.normaliser!.mark(latin1, end)
      }
      if (replaced !== undefined) {
        ;(kept ??= []).push(bytes.subarray(keptFrom, start))
        if (replaced !== '') kept.push(Buffer.from(replaced))
        keptFrom = end
      }
      start = end
    }
    if (start < n) {
      this.pending = this.decoder.decode(bytes.subarray(start), {stream: true})
      this.held = bytes[n - 1] >= 0x80
    }
    if (!kept) return start === n ? chunk : bytes.subarray(0, start)
    kept.push(bytes.subarray(keptFrom, start))
    return Buffer.concat(kept)
  }

  flush(): string {
    const rest = this.pending + this.decoder.decode()
    this.pending = ''
    if (this.dropUsage && this.isUsageOnly(rest)) return ''
    return this.normaliser && this.normaliser.mark(rest) !== -1 ? this.normaliser.event(rest) : rest
  }

  private isUsageOnly(event: string): boolean {
    if (!event.includes('"usage"') || !/"choices"\s*:\s*\[\s*\]/.test(event)) return false
    const data = event
      .split(/\r\n|\n|\r/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n')
    try {
      const payload = JSON.parse(data) as {choices?: unknown[]; usage?: unknown}
      return Array.isArray(payload.choices) && payload.choices.length === 0 && !!payload.usage
    } catch {
      return false
    }
  }
}

const CHOICES = '"choices"'

/**
 * An SSE event's data line, which a chunk of a stream read on after its client left is searched for
 * (ClientGone `touch`: a keep-alive blank or comment holds none).
 */
export const DATA_LINE = Buffer.from('data:')

/** ASCII whitespace as `\s` reads it (a byte >= 0x80 might be one of its others: not skipped). */
const isAsciiSpace = (c: number): boolean => c === 0x20 || (c >= 0x09 && c <= 0x0d)

/**
 * Whether `latin1` (a chunk read one character a byte) from `from` to `to` may hold
 * `"choices"\s*:\s*\[\s*\]` (what ChatUsageChunkFilter.isUsageOnly looks for): false only when
 * no `"choices"` there can be followed by an empty array.
 */
function mayHoldNoChoices(latin1: string, from = 0, to = latin1.length): boolean {
  const expected = [0x3a, 0x5b, 0x5d] // : [ ]
  for (
    let at = latin1.indexOf(CHOICES, from);
    at !== -1 && at < to;
    at = latin1.indexOf(CHOICES, at + CHOICES.length)
  ) {
    let i = at + CHOICES.length
    let step = 0
    for (; step < expected.length; step++) {
      while (i < to && isAsciiSpace(latin1.charCodeAt(i))) i++
      if (i >= to || latin1.charCodeAt(i) >= 0x80) return true // cut here, or a space \s may read
      if (latin1.charCodeAt(i) !== expected[step]) break
      i++
    }
    if (step === expected.length) return true
  }
  return false
}

/**
 * True when an error body is JSON in the error shape of `family` (what its SDKs read). A body in
 * another shape (a proxy in between, an upstream's own bug page) is wrapped by the caller.
 */
function inFamilyShape(family: Family, text: string): boolean {
  let body: {type?: unknown; error?: {type?: unknown; message?: unknown; status?: unknown}}
  try {
    body = JSON.parse(text) as typeof body
  } catch {
    return false
  }
  const error = body?.error
  if (!error || typeof error !== 'object') return false
  if (family === 'messages') return body.type === 'error' && typeof error.type === 'string'
  if (family === 'gemini') return typeof error.status === 'string' || typeof error.message === 'string'
  return typeof error.message === 'string'
}

/**
 * Words an error about a prompt past the context window has (a cheap test before the reading;
 * DashScope's "Range of input length should be [1, 129024]" has none of the others). The same as
 * context-overflow.ts `MAYBE_OVERFLOW`, kept here so that module loads only for an error that may be one.
 */
const MAYBE_OVERFLOW = /context|too long|token|input length/i

/**
 * A 500 that refuses a prompt past the context window, in vLLM's engine's words ("The decoder
 * prompt (length 66501) is longer than the maximum model length of 65536"): Xinference answers
 * vLLM's error so (langchain-ai/deepagents #468, xorbitsai/inference #3785), where vLLM's own
 * server answers it with a 400; or in LM Studio's MLX engine's and llama.cpp's, `{"error":{"code":
 * 500,"message":"Context size has been exceeded.","type":"server_error"}}` (lmstudio-bug-tracker
 * #2339, which names the MLX path's words). No failure of the server: the same prompt is refused
 * every time, and an agent that retries a 500 (Claude Code does, many times) never compacts. Read
 * as the 400 it stands for when there is no other target to try (the proxy, the relays).
 */
export const OVERFLOW_500 =
  /decoder prompt \(length \d+\) is longer than the maximum model length|context size has been exceeded/i

/**
 * A same-family upstream's refusal of a prompt past its context window in other words than the
 * entrance's own (an Anthropic-compatible server's "This model's maximum context length is ..."
 * or "Prompt exceeds maximum context length"): the error body in the entrance's words, which the
 * agent acts on (Claude Code compacts on "prompt is too long: N tokens > M maximum"), the
 * upstream's after them; undefined for any other answer. The reader is loaded with the first
 * error that may be one.
 */
async function overflowAnswer(
  family: Family,
  status: number,
  text: string,
  provider: string,
  requestId: string,
): Promise<{window?: number; answer?: {body: string; said: string}} | undefined> {
  if (
    !(status === 400 || status === 413 || status === 422 || (status === 500 && OVERFLOW_500.test(text))) ||
    !MAYBE_OVERFLOW.test(text)
  )
    return undefined
  const {contextOverflowError, inEntranceWords, readContextOverflow, saysOverflow} =
    await import('../../protocols/context-overflow.js')
  const said = upstreamErrorMessage(text) ?? text.replace(/\s+/g, ' ').trim().slice(0, 300)
  const overflow = readContextOverflow(said, text)
  if (!overflow) return undefined
  // said in the entrance's words already, or no overflow to this entrance (the completion's room,
  // to a client other than Messages): the answer goes as it came, the window it states is kept
  if (inEntranceWords(family, text) || !saysOverflow(family, overflow)) return {window: overflow.limit}
  const upstream = `${provider}: upstream answered ${status}: ${said}`
  const error = contextOverflowError(family, overflow, upstream)
  return {
    window: overflow.limit,
    answer: {
      body: JSON.stringify(errorBody(family, 400, error.message, {requestId, code: error.code})),
      said: upstream,
    },
  }
}

/** What one relay needs of the request it answers. */
export interface RelayContext {
  res: ServerResponse
  family: Family
  /** Filled in: status, request id, ttfb, usage, error, stream. */
  result: ProxyResult
  /** `performance.now()` at the start of the request. */
  started: number
  /** The proxy asked upstream for stream usage the client did not ask for (chat). */
  addedUsage: boolean
  /**
   * A chat stream passed through from an upstream that leaves the tool-call deltas' index out
   * (./tool-index.ts): numbered on the way. Set for each try.
   */
  indexToolCalls?: boolean
  /**
   * A chat stream passed through from an upstream that opens tool calls without their id, or
   * streams a delta's role that is not `"assistant"` (./tool-index.ts): written on the way. Set
   * for each try.
   */
  idToolCalls?: boolean
  /**
   * A chat stream passed through from an upstream that ends a choice without a `finish_reason`, or
   * with a vendor's the AI SDK reads as unknown (./tool-index.ts): OpenAI's written on the way.
   * Set for each try.
   */
  finishReasons?: boolean
  timeouts: TimeoutSettings
  /**
   * Set when the client left (or the caller aborted). A request not streamed to a vendor's API is
   * `held` (proxy.ts ClientGone), and `hold` holds one whose JSON answer came (the client still
   * there): its upstream request goes on after the client left, within the idle timeout, and
   * `onLeft` is told of the leaving; `letGo` ends that for an answer that is not read on (a
   * stream), aborting it now if the client left already.
   */
  clientGone: {
    readonly aborted: boolean
    readonly held?: boolean
    /** Held as a stream (proxy.ts `billsStreamsCut`): an SSE answer is read on after the leaving. */
    readonly streamHeld?: boolean
    hold?(): boolean
    onLeft?(listener: () => void): void
    letGo?(): void
    /** An event read on after the leaving: the hold's deadline counts from now. */
    touch?(): void
  }
  /**
   * Whether a failure of this attempt before its first byte can fall back to the next target (the
   * policy falls back and one is left); set by the proxy for each attempt.
   */
  canFallBack?: boolean
  /**
   * The client's request headers, read only where a 429's long wait is said (./rate-limit.ts
   * `waitFor`: Codex and Claude Code are told none past a minute).
   */
  clientHeaders?: IncomingHttpHeaders
}

/**
 * What a relay that could not answer tells the proxy: the upstream's answer failed before a byte
 * (headers included) reached the client, so the next target may be tried. The breaker is not
 * settled yet: the proxy counts the failure.
 */
export interface FailedBeforeFirstByte {
  failedBeforeFirstByte: string
  /** The upstream went silent (a timeout), not a reset or another error: 504 rather than 502. */
  silent: boolean
  /**
   * The upstream answered (Gemini's empty answer, twice: translated.ts `answeredNothing`), though
   * with nothing the client can use: the next target is tried, the breaker not told of a failure.
   */
  answered?: true
  /**
   * The upstream refused the request by name (a first event's 401, 403 or 404 in a 200:
   * translated.ts `earlyError`): the next target is tried, the breaker not told of a failure.
   */
  refused?: true
}

/**
 * Relays one upstream answer to the client and settles the target's breaker by its outcome;
 * returns {@link FailedBeforeFirstByte} instead when nothing could be sent. `read`: the error
 * answer's body, already read by the proxy (to learn from it), or how reading it failed.
 */
export async function relay(
  ctx: RelayContext,
  upstream: Dispatcher.ResponseData,
  status: number,
  target: ProxyTarget,
  credential: string | undefined,
  read?: string | Error,
): Promise<FailedBeforeFirstByte | undefined> {
  const {res, family, result, started, clientGone} = ctx
  const headers = returnHeaders(upstream.headers)
  const idName = requestIdHeader(family)
  const upstreamId = headers[idName] ?? headers['request-id'] ?? headers['x-request-id']
  result.requestId = (Array.isArray(upstreamId) ? upstreamId[0] : upstreamId) ?? mintRequestId()
  headers[idName] ??= result.requestId
  const contentType = String(headers['content-type'] ?? '')
  const sse = /text\/event-stream/i.test(contentType)
  result.stream = sse
  if (status >= 400 && !sse && !headers['content-encoding']) {
    // Error answers are small: buffered, so that one cut off mid-way settles the breaker and is
    // answered in the entrance's shape, one that is not JSON (an HTML page, nothing) is wrapped in
    // that shape, and a key some vendors quote back ("Incorrect API key provided: sk-…") is
    // redacted: an agent never sees the provider's credential.
    let text: string
    try {
      if (read instanceof Error) throw read
      text = read ?? (await upstream.body.text())
    } catch (error) {
      const message = `${target.provider.name}: the error answer (${status}) broke off: ${describeError(error, ctx.timeouts)}`
      target.breaker?.recordFailure(message)
      result.status = 502
      result.error = message
      sendFamilyError(res, family, 502, message, {requestId: result.requestId})
      return
    }
    if (credential) text = text.split(credential).join('[redacted]')
    // a daily quota or OpenAI's `insufficient_quota`, which no wait cures (./rate-limit.ts
    // `noWaitHelps`), read from the upstream's own words: a body in another family's shape is
    // rewrapped below, and the rewrap keeps the words but not the code
    const quotaSpent = noWaitHelps(status, text)
    // A wait its body alone states (RetryInfo, "Please try again in 20s."), said as the header the
    // Anthropic and OpenAI SDKs, Claude Code and Codex read, a long wait as each can use it
    // (./rate-limit.ts `waitHeaders`); the body as it came. Not to a Gemini client: Gemini CLI
    // reads Google's RetryInfo and words from the body itself, never the header
    const wait =
      status === 429 &&
      !quotaSpent &&
      family !== 'gemini' &&
      headers['retry-after'] === undefined &&
      headers['retry-after-ms'] === undefined
        ? waitHeaders(text, text, {family, headers: ctx.clientHeaders})
        : undefined
    const overflow = await overflowAnswer(family, status, text, target.provider.name, result.requestId)
    if (overflow?.window) result.contextWindow = overflow.window
    if (overflow?.answer) {
      text = overflow.answer.body
      status = 400
      // the upstream's words, for the log row (after why it fell back, when it did)
      result.error = result.error ? `${result.error}; ${overflow.answer.said}` : overflow.answer.said
      headers['content-type'] = 'application/json'
    } else if (!/json/i.test(contentType) || !inFamilyShape(family, text)) {
      const excerpt = text
        .replace(/<[^>]*>/g, ' ')
        .replace(/\s+/g, ' ')
        .trim()
        .slice(0, 200)
      const message = `${target.provider.name}: upstream answered ${status}${excerpt ? `: ${excerpt}` : ' with an empty body'}`
      result.error ??= message
      text = JSON.stringify(errorBody(family, status, message, {requestId: result.requestId}))
      headers['content-type'] = 'application/json'
    }
    // (said so to the client's SDK, unless the upstream said otherwise itself)
    if (
      headers['x-should-retry'] === undefined &&
      status === 429 &&
      (quotaSpent || noWaitHelps(status, text))
    )
      headers['x-should-retry'] = 'false'
    if (wait) addWaitHeaders(headers, wait)
    // (nobody to read the answer, whose words alone said why (a request held after its client left,
    // proxy.ts ClientGone): the row keeps them, after the leaving)
    if (clientGone.aborted)
      result.error ??= `${target.provider.name}: upstream answered ${status}: ${upstreamErrorMessage(text) ?? (text.replace(/\s+/g, ' ').trim().slice(0, 200) || 'an empty body')}`
    headers['content-length'] = String(Buffer.byteLength(text))
    result.status = status
    result.ttfbMs = performance.now() - started
    res.writeHead(status, headers)
    res.end(text)
    if (status < 500 && status !== 429) target.breaker?.recordSuccess()
    return
  }
  if (!sse && upstream.headers['content-length'] !== undefined)
    headers['content-length'] = String(upstream.headers['content-length'])
  // A stream's headers go out with its first chunk when that chunk is already here (one packet,
  // one wake-up of the client, like a bare pass-through); otherwise at the end of this event
  // loop turn, so a client still sees them as soon as upstream sent them. Any other answer's
  // headers are written with its first body byte (node:http would hold them until then anyway):
  // a body that fails before it (an upstream that sends headers, then silence) has sent the
  // client nothing, so the proxy may still try the next target or answer 502/504.
  let headed = false
  const head = (): void => {
    headed = true
    result.status = status
    res.writeHead(status, headers)
  }
  // (a stream held whose client left before its headers, read on for its usage below, has nobody
  // to send them to)
  if (sse && !clientGone.aborted) {
    head()
    setImmediate(() => {
      if (result.ttfbMs === null && !res.destroyed) res.flushHeaders()
    })
  }

  // the usage tap is made with the first chunk it reads, after that chunk was handed to the socket
  // (a stream's first byte waits for no bookkeeping that can wait)
  const tapped = status < 300
  let tap: UsageTap | undefined
  const normaliser =
    sse && status < 300 && (ctx.indexToolCalls || ctx.idToolCalls || ctx.finishReasons)
      ? new ToolCallNormaliser({
          index: ctx.indexToolCalls,
          ids: ctx.idToolCalls,
          finish: ctx.finishReasons,
          stream: result.requestId,
        })
      : undefined
  const filter =
    sse && status < 300 && (ctx.addedUsage || normaliser)
      ? new ChatUsageChunkFilter(ctx.addedUsage, normaliser)
      : undefined
  // the provider key quoted back in an answer is masked (a key shorter than 8 characters is a
  // test value that could also be an ordinary word of the answer)
  const redactor =
    credential && credential.length >= 8 && !headers['content-encoding']
      ? new SecretRedactor(credential)
      : undefined
  // the last bytes sent, to start an error event on a line of its own if a stream breaks mid-event
  let last = '' as Uint8Array | string
  // how an SSE answer ended (read at its end); `tapEnded` once the tap was ended there
  let outcome: StreamOutcome | undefined
  let tapEnded = false
  const body = upstream.body
  // An SSE tap parses every event (a JSON.parse each): it is fed on the next tick, after the
  // socket write of the chunk (node:http flushes a response's writes on the next tick, queued
  // before this one), so parsing never delays a byte. A JSON tap only collects: fed at once.
  let tapQueue: Buffer[] | undefined
  const feedTap = (): void => {
    const queue = tapQueue
    tapQueue = undefined
    if (!queue) return
    tap ??= createUsageTap(family, sse)
    for (const chunk of queue) tap.feed(chunk)
  }
  const tapLater = (chunk: Buffer): void => {
    if (tapQueue) tapQueue.push(chunk)
    else {
      tapQueue = [chunk]
      process.nextTick(feedTap)
    }
  }
  // A JSON answer whose client leaves before its end (or left before its headers) is read on to
  // its end for its usage, which the upstream bills: its row had none, the body dropped unread.
  // The request is held (proxy.ts ClientGone): the client's leaving no longer aborts it, the body
  // is resumed instead, should it wait for the client's 'drain'. Bounded by what the tap keeps,
  // and by time: the idle timeout counted from the client's leaving, in all (an upstream that
  // sends a blank more often than the idle timeout, as OpenRouter keeps a connection alive, is
  // otherwise read without end, its row unwritten and its budget reservation held: review72 #1);
  // and the gateway's stop ends it at once (Router `close`, through the pools' `readingOn`:
  // review72 #2). Any other answer (a stream: its tap has read what came by then) is let go:
  // aborted at the client's leaving, as before.
  // (a JSON answer to a request streamed, an upstream that ignored `stream`, one-api-style relays,
  // Gemini's streamGenerateContent without alt=sse, is held here: only the ones not streamed were)
  // A stream read on is one held as a stream from its send (proxy.ts `billsStreamsCut`: Amazon
  // Bedrock, which bills a stream whose reader left whole): its events go to the tap alone once the
  // client left, bounded as a JSON answer's bytes are but for time: its deadline counts from its
  // last event (a chunk holding a `data:` line; a keep-alive blank does not count), so a stream
  // still generating is read to its end. An SSE answer to a request held as not streamed (a relay
  // that forces streaming) is let go, as any other stream.
  const readOn =
    tapped &&
    (sse ? clientGone.streamHeld === true : clientGone.held === true || clientGone.hold?.() === true)
  /** Set once the relay read the body to its end or failure: a client leaving later starts nothing. */
  let relayed = false
  if (readOn)
    clientGone.onLeft!(() => {
      if (!relayed) body.resume()
    })
  else clientGone.letGo?.()
  /** The JSON answer's bytes read after its client left (read on: {@link readOn}). */
  let unsent = 0
  /** The JSON answer's bytes the tap was given, in all (it keeps none past MAX_TAPPED_JSON_BYTES). */
  let taken = 0
  // 'data' events rather than `for await`: no Promise per chunk, and each chunk is written to
  // the client in the tick it arrives, before the usage tap reads it (the tap is off the
  // critical path). Backpressure: pause the upstream until the client drains.
  const broken = await new Promise<{error: unknown} | undefined>((resolve) => {
    const resume = (): void => {
      body.resume()
    }
    const send = (data: Uint8Array | string): void => {
      if (data.length === 0) return
      if (!headed) head()
      if (result.ttfbMs === null) result.ttfbMs = performance.now() - started
      last = data
      if (!res.write(data)) {
        body.pause()
        res.once('drain', resume)
      }
    }
    // undici hands on each chunk of a chunked body as a 'data' event of its own, and an upstream
    // writes one chunk an event (a chat stream's 20 events of one read are 20 'data' events in
    // one tick): a stream's chunks of a tick go to the client together at its end, one write (one chunk
    // of the chunked answer) for them, not one each. No byte waits longer: node:http holds a
    // response's writes until the next tick anyway (it corks the socket), and the first write
    // still goes out with the headers in the same socket write as before.
    let pending: Buffer[] | undefined
    let overflowCheck = sse && family === 'chat' && status < 300
    // a chat stream's first bytes, kept back while the error event they open with has not ended
    // in them (./stream-overflow.ts); the body's end or failure releases them (`ended`)
    let held: Buffer | undefined
    const relayPending = (ended = false): void => {
      const chunks = pending ?? (ended && held !== undefined ? [] : undefined)
      if (chunks === undefined) return
      pending = undefined
      if (res.destroyed) {
        if (readOn) {
          // (the client gone: the rest is the tap's alone, up to what it keeps; a stream's after
          // the events it was given already, and those kept back for the overflow check)
          if (sse) {
            feedTap()
            if (held !== undefined) chunks.unshift(held)
            held = undefined
          }
          let event = false
          for (const chunk of chunks) {
            unsent += chunk.length
            taken += chunk.length
            ;(tap ??= createUsageTap(family, sse)).feed(chunk)
            if (sse && !event) event = chunk.includes(DATA_LINE)
          }
          if (event) clientGone.touch?.()
          // (past its limit in all, the tap reads no usage: taps/tap.ts)
          if (taken <= MAX_TAPPED_JSON_BYTES) return
          body.destroy()
        }
        resolve({error: new Error('client closed the connection')})
        return
      }
      let chunk: Buffer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      // a chat stream that opens with an overflow error (LM Studio's 200): in OpenAI's words
      // (./stream-overflow.ts); the tap reads the upstream's, for the row. Only a stream whose
      // first bytes open with an error event not ended in them waits for more (none is sent, none
      // tapped, until they are joined); any other is tested once, here, and never again.
      let said: Buffer = chunk
      if (overflowCheck) {
        if (held !== undefined) said = chunk = Buffer.concat([held, chunk])
        held = undefined
        const overflow = overflowFirstEvent(chunk, ended)
        if (overflow === 'unended') {
          held = chunk
          return
        }
        overflowCheck = false
        if (overflow) {
          said = overflow.bytes
          if (overflow.window !== undefined) result.contextWindow = overflow.window
        }
      }
      const out = redactor ? redactor.push(said) : said
      send(filter ? filter.push(out) : out)
      if (tapped) {
        if (sse) tapLater(chunk)
        else {
          taken += chunk.length
          ;(tap ??= createUsageTap(family, false)).feed(chunk)
        }
      }
    }
    // (what throws there fails the body, as it did thrown in its 'data' event)
    const relayLater = (): void => {
      try {
        relayPending()
      } catch (error) {
        body.destroy(error as Error)
      }
    }
    body.on(
      'data',
      sse
        ? (chunk: Buffer) => {
            if (pending !== undefined) pending.push(chunk)
            else {
              pending = [chunk]
              process.nextTick(relayLater)
            }
          }
        : // (a JSON answer comes in a chunk or few: each goes as it comes)
          (chunk: Buffer) => {
            pending = [chunk]
            relayPending()
          },
    )
    body.on('end', () => {
      // (the chunks before it first, should their tick not have come yet)
      try {
        relayPending(true)
      } catch (error) {
        resolve({error})
        return
      }
      const rest = redactor?.flush()
      if (rest?.length && !res.destroyed) send(filter ? filter.push(rest) : rest)
      if (filter && !res.destroyed) send(filter.flush())
      if (!headed && !res.destroyed) head()
      // A stream must end with its protocol's terminal event: the tap (its last events parsed
      // now, after they were written) tells; a stream without it gets an error event first.
      if (tapped && sse) {
        feedTap()
        tap ??= createUsageTap(family, sse)
        tap.end()
        tapEnded = true
        outcome = tap.outcome()
        // a finish that said the answer broke off, written as an error event (./tool-index.ts)
        if (outcome.kind === 'complete' && normaliser?.stoppedWith !== undefined)
          outcome = {kind: 'error', message: normaliser.stoppedWith}
        if (outcome.kind === 'truncated' && !res.destroyed)
          endWithErrorEvent(truncatedMessage(outcome.expected))
        // a whole answer whose upstream left its terminal event out (Gemini's thought-only
        // answer): the client gets the event its protocol promises
        else if (outcome.kind === 'complete' && outcome.append && !res.destroyed) endWith(outcome.append)
      }
      if (!res.destroyed && !res.writableEnded) res.end()
      resolve(undefined)
    })
    body.on('error', (error) => {
      // (what came before the error is the client's, as it was when each chunk went at once)
      try {
        relayPending(true)
      } catch {
        // the body's own error is the one to report
      }
      resolve({error})
    })
  })
  relayed = true
  // Past this point the answer has been handed to the socket (a success) or has failed: the
  // usage parse below no longer delays a byte to the client.
  if (tapped && !tapEnded) {
    feedTap()
    tap ??= createUsageTap(family, sse)
    tap.end()
  }
  result.usage = tap?.usage() ?? null
  if (sse && family === 'chat') result.toolCallFaults = tap?.toolCallFaults()
  const malformed = broken ? undefined : tap?.malformed()
  // the client got what the upstream sent; the log row says it was not what the protocol promises
  if (malformed) result.error = `${target.provider.name}: upstream answered ${status} with ${malformed}`
  // the client left after the upstream's headers, before the answer's first byte (an answer's head
  // goes with it, but a stream's): as the proxy records a client that left before an answer, a 499
  // (with the usage of a JSON answer read on to its end); one that left during a JSON answer,
  // read on so, keeps its status
  if (!broken && (!headed || unsent > 0)) {
    result.clientAborted = true
    result.error = 'client closed the connection'
    if (!headed) result.status = 499
  }
  if (!broken) {
    if (outcome?.kind === 'truncated') {
      // the client got 200 and then the error event: the row keeps the 200 and says why it broke
      const message = truncatedMessage(outcome.expected)
      result.error = message
      result.broken = true
      target.breaker?.recordFailure(message)
      return
    }
    if (outcome?.kind === 'error') {
      // the upstream reported the error in its stream (the client saw it): an error row, but the
      // provider answered in its protocol, so the breaker does not count it (a request the model
      // refuses, such as one over its context window, must not open the circuit)
      result.error = `${target.provider.name}: upstream stream reported an error: ${outcome.message}`
      result.broken = true
    }
    if (status < 500 && status !== 429) target.breaker?.recordSuccess()
    return
  }
  if (clientGone.aborted || result.clientAborted || res.destroyed) {
    result.clientAborted = true
    result.error = 'client closed the connection'
    if (!headed) result.status = 499
    target.breaker?.release()
    body.destroy()
    return
  }
  const reason = describeError(broken.error, ctx.timeouts)
  if (!headed) {
    // nothing reached the client (not even the headers): the proxy tries the next target or
    // answers 502/504 itself; it settles the breaker
    body.destroy()
    return {
      failedBeforeFirstByte: `${target.provider.name}: upstream answered ${status}, then its body failed before the first byte: ${reason}`,
      silent: isSilence(broken.error),
    }
  }
  // a stream's headers go out at once (above): with no body byte after them, it broke before its
  // first byte, as a translated route's row says; the client still gets the error event
  const message =
    result.ttfbMs === null
      ? `${target.provider.name}: stream sent its headers, then nothing: ${reason}`
      : `${target.provider.name}: stream broke after the first byte: ${reason}`
  result.error = message
  result.broken = true
  target.breaker?.recordFailure(message)
  if (sse && !res.destroyed) endWithErrorEvent(message)
  else res.destroy()
  return

  function truncatedMessage(expected: string): string {
    return `${target.provider.name}: stream ended without its terminal event (${expected})`
  }

  /** Ends the client's stream with an error event in its protocol, on a line of its own. */
  function endWithErrorEvent(message: string): void {
    endWith(streamErrorEvent(family, 502, message, tap?.nextSequence() ?? 0))
  }

  /** Ends the client's stream with `event`, on a line of its own. */
  function endWith(event: string): void {
    const tail =
      typeof last === 'string'
        ? last.slice(-2)
        : Buffer.from(last.buffer, last.byteOffset, last.byteLength).toString(
            'latin1',
            Math.max(0, last.byteLength - 2),
          )
    const separator = tail === '' || tail.endsWith('\n\n') || tail === '\r\r' ? '' : '\n\n'
    res.end(separator + event)
  }
}
