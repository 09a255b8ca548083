/**
 * The relay of a translated target: the upstream speaks another family than the entrance, so its
 * answer is decoded and encoded again (src/protocols) instead of passed on byte for byte. A
 * stream stays a stream: each upstream event is translated and written as it arrives
 * (backpressure honoured). Usage comes from the decoded answer, in gwctl's one meaning; an
 * upstream error is answered with its status and message in the entrance's shape; a stream that
 * breaks or ends without its terminal event ends the client's stream with its protocol's error
 * event and is logged and counted as a failure.
 *
 * A Messages upstream's turn that pauses (`stop_reason: "pause_turn"`, its server-side web search
 * loop) is continued here for the client, who has no such stop (../../protocols/pause.ts): the
 * relay hands the proxy a {@link PausedTurn}, the proxy sends the continuation, and the relay reads
 * its answer into the same client answer (one stream, or one JSON answer), usage summed.
 */
import {performance} from 'node:perf_hooks'
import type {Dispatcher} from 'undici'

import type {ClientRequest} from '../../protocols/translate.js'
import {
  estimatedUsageNote,
  StreamTranslator,
  translateResponseText,
  upstreamErrorMessage,
} from '../../protocols/translate.js'
import {namedStatus} from '../../protocols/errors.js'
import {
  contextOverflowError,
  inEntranceWords,
  readContextOverflow,
  saidOverflow,
  saysOverflow,
} from '../../protocols/context-overflow.js'
import {EMPTY_ANSWER, emptyAnswer, failedAnswer, usageFromGemini} from '../../protocols/gemini-parts.js'
import type {CarryStore, ThinkInPrompt, Usage} from '../../protocols/ir.js'
import {parseJsonBytes, utf8Bytes} from '../../protocols/json-bytes.js'
import {decodeMessagesUsage, droppedThinking, droppedThinkingNote} from '../../protocols/messages-stream.js'
import {joinAnswers, MAX_CONTINUATIONS, pausedAnswer, sumCounts} from '../../protocols/pause.js'
import type {UpstreamAdaptations} from './adaptations.js'
import {describeError, isSilence, sendFamilyError} from './error-shape.js'
import {isReturnedHeader, mintRequestId, requestIdHeader} from './headers.js'
import type {ProxyTarget} from './proxy-types.js'
import {serverOf} from './targets.js'
import {addWaitHeaders, msWaitHeaders, noWaitHelps, settle429, spentQuota, waitHeaders} from './rate-limit.js'
import {DATA_LINE, OVERFLOW_500} from './relay.js'
import {createUsageTap} from './taps/index.js'
import {MAX_TAPPED_JSON_BYTES} from './taps/tap.js'
import type {FailedBeforeFirstByte, RelayContext} from './relay.js'
import type {Family} from '../../store/schema.js'

/** Largest non-stream upstream answer translated (a bigger one is refused with a 502). */
const MAX_TRANSLATED_JSON_BYTES = 64 * 1024 * 1024

/** From this many characters a translated answer is written as bytes (`utf8Bytes`), not text. */
const LARGE_ANSWER = 16 * 1024

export class TooLarge extends Error {}

/**
 * The body's bytes, refused once they pass the cap, or the usage tap's 16 MB once the client is
 * `gone` (an answer read on only for its usage: a pass-through relay reads no more either). By its
 * 'data' events, as the pass-through relays: undici's `arrayBuffer()` and `for await` add a
 * promise chain, a consume state, a copy into a fresh array and several ticks to an answer that
 * came in one read.
 */
export function readAll(
  body: Dispatcher.ResponseData['body'],
  cap: number,
  gone?: {readonly aborted: boolean},
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    const onData = (chunk: Buffer): void => {
      size += chunk.length
      if (size > cap || (size > MAX_TAPPED_JSON_BYTES && gone?.aborted)) {
        body.off('data', onData)
        body.destroy()
        reject(new TooLarge(`answer larger than ${cap} bytes`))
        return
      }
      chunks.push(chunk)
    }
    let ended = false
    // `on`, not `once`: a stream emits each of these once, and `once` wraps every listener (an
    // object and a bound function a listener, a request) and unwraps it when it runs
    body.on('data', onData)
    body.on('end', () => {
      ended = true
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size))
    })
    body.on('error', reject)
    // destroyed without an error (not expected of undici): settled, never left pending (an Error
    // made after every answer's end would cost its stack trace, ~10 µs)
    body.on('close', () => {
      if (!ended) reject(new Error('the answer closed before its end'))
    })
  })
}

/**
 * The usage of a JSON answer to a request streamed, read whole by the usage tap of its upstream's
 * `family` (null past what the tap keeps, or when the answer broke off). `gone`: as readAll's.
 */
async function unstreamedUsage(
  body: Dispatcher.ResponseData['body'],
  family: Family,
  gone: {readonly aborted: boolean},
): Promise<Usage | null> {
  let bytes: Buffer
  try {
    bytes = await readAll(body, MAX_TAPPED_JSON_BYTES, gone)
  } catch {
    return null
  }
  const tap = createUsageTap(family, false)
  tap.feed(bytes)
  tap.end()
  return tap.usage() ?? null
}

/**
 * An upstream's JSON answer from its bytes (a UTF-8 byte order mark skipped, as undici's `text()`
 * does), by the fast decode of a large body.
 */
function parseAnswer(bytes: Buffer): unknown {
  const bom = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf
  return parseJsonBytes(bom ? bytes.subarray(3) : bytes)
}

/**
 * How long after its answer's stop an upstream's stream may stay open before the client's answer
 * ends without it (the usage chunk of a chat stream follows its finish reason at once).
 */
export const STOPPED_GRACE_MS = 2_000

/**
 * How long a translated Responses stream's start is held after the upstream's ack
 * (`response.created`, `response.in_progress`) for a failure that would come with it (OpenAI's
 * `insufficient_quota` in `response.failed`, answered as an HTTP 429) before it goes to the client
 * anyway: 50 ms, vercel/ai #18154's `acceptedGraceMs` for the same peek (OpenAI sends the two
 * events about 1 ms apart, "then nothing until the first output item at time-to-first-token").
 */
export const START_GRACE_MS = 50

/** What a translated relay needs beyond the plain relay's context. */
export interface Translation {
  client: ClientRequest
  carry?: CarryStore
  /**
   * A chat upstream's model is known to open `<think>` in its prompt (adaptations.ts
   * `noteThinkOpen`): its answers are read as reasoning up to `</think>`.
   */
  thinkOpen?: boolean
  /** Where an answer that shows it is learned (the proxy's adaptations), with the model asked for. */
  learned?: Pick<UpstreamAdaptations, 'noteThinkOpen'>
  upstreamModel?: string
}

function excerpt(text: string): string {
  return text
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200)
}

/** Upstream answer headers that a translated answer never passes on (it sets its own). */
const OWN_HEADERS = new Set(['content-type', 'content-encoding', 'request-id', 'x-request-id'])

/**
 * The headers of a translated answer, as the flat `[name, value, ...]` list `writeHead` takes
 * (no object to build, copy or delete from on every request): the upstream's returned headers
 * but its type, encoding and request id (and, on a stream, its cache-control: a stream sets its
 * own), then the entrance's request id header.
 */
function answerHeaders(
  upstream: Record<string, string | string[] | undefined>,
  stream: boolean,
  idName: string,
  requestId: string,
): Array<string | string[]> {
  const headers: Array<string | string[]> = []
  for (const name in upstream) {
    const value = upstream[name]
    if (value === undefined || OWN_HEADERS.has(name) || (stream && name === 'cache-control')) continue
    if (isReturnedHeader(name)) headers.push(name, value)
  }
  headers.push(idName, requestId)
  return headers
}

/** Adds a note to the row's (an estimate, a continued turn; an answer after a fallback keeps why it fell back). */
function addNote(result: RelayContext['result'], note: string): void {
  result.error = result.error ? `${result.error}; ${note}` : note
}

/** The log row's note on tool calls whose arguments were no JSON (research47 #2). */
const repairedArgsNote = (provider: string, count: number): string =>
  `${provider}: repaired ${count === 1 ? "a tool call's arguments" : `${count} tool calls' arguments`} (not JSON as they came: their syntax fixed)`

/** The log row's note on tool calls that never got a name, left out of the answer. */
const namelessCallsNote = (provider: string, count: number): string =>
  `${provider}: left out ${count === 1 ? 'a tool call' : `${count} tool calls`} with no name (no client can run one, and the next turn would be refused with it)`

export {continuationBody} from '../../protocols/pause.js'

/**
 * A Gemini answer that ended STOP with no answer part (EMPTY_ANSWER: no text, no call) and of which
 * the client was sent nothing: the proxy sends the same request again, once, and hands its answer
 * to {@link relayTranslated} with `again`. The breaker is not settled until then.
 */
export interface AnsweredNothing {
  answeredNothing: true
}

/** The usage Google bills for a Gemini answer the client gets none of (its `usageMetadata`), if any. */
function billedGemini(body: unknown): Usage | null {
  const billed = usageFromGemini((body as {usageMetadata?: unknown}).usageMetadata)
  if (!billed) return null
  return {
    inputTokens: billed.inputTokens ?? 0,
    outputTokens: billed.outputTokens ?? 0,
    cacheReadTokens: billed.cacheReadTokens ?? 0,
    cacheCreationTokens: billed.cacheCreationTokens ?? 0,
    reasoningTokens: billed.reasoningTokens ?? 0,
  }
}

/** The log row's note on an answer sent again after an empty one (a whole answer came). */
const sentAgainNote = (provider: string): string =>
  `${provider}: ${EMPTY_ANSWER}: the request went again once, unseen by the client`

/**
 * An empty answer (EMPTY_ANSWER) of which the client saw nothing: the proxy sends the request
 * again (`again` unset); for the answer to that, the next target when the policy has one (an
 * upstream that answers nothing every time is routed around), else a 502 in the client's shape
 * that its SDK retries, the row saying why. The upstream answered: no breaker failure.
 */
function answeredNothing(
  ctx: RelayContext,
  target: ProxyTarget,
  again: boolean | undefined,
): AnsweredNothing | FailedBeforeFirstByte | undefined {
  if (!again) return {answeredNothing: true}
  const {res, family, result} = ctx
  if (ctx.canFallBack)
    return {
      failedBeforeFirstByte: `${upstreamNamed(target.provider, family)}: ${EMPTY_ANSWER}, twice (sent again once)`,
      silent: false,
      answered: true,
    }
  const message = `${upstreamNamed(target.provider, family)}: ${EMPTY_ANSWER}, twice (sent again once): the client got a 502 to retry`
  result.status = 502
  result.error = result.error ? `${result.error}; ${message}` : message
  result.ttfbMs = performance.now() - ctx.started
  target.breaker?.recordSuccess()
  sendFamilyError(res, family, 502, `${upstreamNamed(target.provider, family)}: ${EMPTY_ANSWER}`, {
    requestId: result.requestId,
  })
  return undefined
}

/**
 * What a chat answer showed of a template that opens `<think>` in the prompt: learned for the
 * model (`closed`: its later answers are read as reasoning up to `</think>`), or, for a model
 * learned so, an answer without `</think>` (`unclosed`), whose text went to the client as its
 * reasoning and as its text: each said on the log row.
 */
function thinkInPrompt(
  result: RelayContext['result'],
  translation: Translation,
  provider: string,
  seen: ThinkInPrompt,
): void {
  if (seen === 'unclosed') {
    addNote(
      result,
      `${provider}: the answer had no </think> to end the reasoning its template opens: its text went to the client as reasoning and as text`,
    )
    return
  }
  if (translation.learned?.noteThinkOpen(provider, translation.upstreamModel ?? ''))
    addNote(
      result,
      `${provider}: the answer closed a </think> it never opened (its chat template opens <think> in the prompt): the tag left out, and later answers read as reasoning up to it`,
    )
}

/**
 * A turn a Messages upstream paused (`pause_turn`), handed to the proxy to send its continuation
 * (../../protocols/pause.ts) and given back to {@link relayTranslated} with its answer. The breaker
 * is not settled until the turn ends.
 */
export interface PausedTurn {
  paused: true
  /** The continuations sent so far, this one's included. */
  count: number
  /** The turn's assistant content so far, every paused answer's blocks as the upstream sent them. */
  content: unknown[]
  /** A stream: the client's, going on (its status and headers were sent). */
  translator?: StreamTranslator
  /** Not a stream: the answers so far, joined (nothing was sent to the client yet). */
  answer?: Record<string, unknown>
  /** Not a stream: the usages of the calls so far, summed (Anthropic's counts). */
  billed?: unknown
}

/** The prompt counts of a continued JSON turn's every call (`billed`), over the client's `usage`. */
function billedPrompts(usage: Usage, billed: unknown): Partial<Usage> {
  const all = decodeMessagesUsage(billed)
  return {
    inputTokens: all.inputTokens,
    cacheReadTokens: all.cacheReadTokens,
    cacheCreationTokens: all.cacheCreationTokens,
    ...(all.cache1hTokens !== undefined || usage.cache1hTokens !== undefined
      ? {cache1hTokens: all.cache1hTokens ?? 0}
      : {}),
  }
}

/** The log row's note on a turn continued `count` times (its usage holds every call's prompt). */
const continuedNote = (provider: string, count: number): string =>
  `${provider} paused the turn (pause_turn): continued ${count} time${count === 1 ? '' : 's'}`

/** The log row's note on a turn that paused again after the most continuations. */
const pausedNote = (provider: string): string =>
  `${provider} paused the turn (pause_turn) again after ${MAX_CONTINUATIONS} continuations: the client got it as it was`

/**
 * A JSON turn's calls that paused, on the row (`billed`, the sum the upstream reported: what it
 * bills) before its continuation is answered: a continuation that fails or is refused, or whose
 * client leaves, keeps them, as a stream's row does (`endAsItIs`). The proxy counts them with the
 * try's usage (its `keepUnseen` for a failed try); an answer replaces them with every call's.
 */
function keepPausedUsage(result: RelayContext['result'], paused: PausedTurn): void {
  if (!paused.translator && paused.billed !== undefined) result.usage = decodeMessagesUsage(paused.billed)
}

/**
 * The continuation of a paused turn could not be sent (a connect error, a timeout, the client
 * gone): a stream already begun ends with its protocol's error event; an answer not yet begun is
 * a failed try the proxy may take to the next target (it settles the breaker).
 */
export function continuationFailed(
  ctx: RelayContext,
  target: ProxyTarget,
  paused: PausedTurn,
  error: unknown,
): FailedBeforeFirstByte | undefined {
  const {result} = ctx
  keepPausedUsage(result, paused)
  if (ctx.clientGone.aborted) {
    result.clientAborted = true
    result.error = 'client closed the connection'
    if (!paused.translator) result.status = 499
    target.breaker?.release()
    return undefined
  }
  const message = `${target.provider.name}: the continuation of a paused turn failed: ${describeError(error, ctx.timeouts, ctx.result.stream || ctx.canFallBack === true)}`
  if (!paused.translator) return {failedBeforeFirstByte: message, silent: isSilence(error)}
  target.breaker?.recordFailure(message)
  endAsItIs(ctx, paused.translator, message)
  return undefined
}

/**
 * The log row's usage of a translated stream: every call's (./pause.ts), and for a Responses
 * client the response id it was given (Codex's history): the row keys on it. `cut`: the stream
 * ended before its end (the client left; the upstream reset, went silent or closed without its
 * finish), and the row counts what the upstream had reported by then, the usage it held for the
 * stream's end included (StreamTranslator `cutUsage`), as a pass-through route's row does.
 */
function streamRowUsage(
  family: RelayContext['family'],
  translator: StreamTranslator,
  cut = false,
): RelayContext['result']['usage'] {
  const usage = cut ? translator.cutUsage() : translator.billedUsage()
  return usage && family === 'responses' && translator.id
    ? {responseId: translator.id, ...usage}
    : (usage ?? null)
}

/**
 * A paused turn whose continuation was refused or failed (`message`) ends as it is: what streamed
 * is the client's answer (an error event would have it send the whole turn again, its searches
 * with it), and the row says why.
 */
function endAsItIs(ctx: RelayContext, translator: StreamTranslator, message: string): void {
  endStream(ctx.res, translator.endAsPaused())
  addNote(ctx.result, `${message}; the client got the turn as it was`)
  ctx.result.usage = streamRowUsage(ctx.family, translator)
}

/**
 * The error of an answer that is an error alone (`{"error": {...}}`, no choices, output, content or
 * candidates), with the status its code names: a number (one-api's `429`, LiteLLM's `"429"`, a
 * 4xx or 5xx), else a name it knows (`rate_limit_exceeded`, `insufficient_quota` 429,
 * `context_length_exceeded` 400, `invalid_api_key` 401, `model_not_found` 404: ../../protocols/
 * errors.ts `namedStatus`, in its code or its type, as OpenRouter, new-api and one-api answer them
 * with HTTP 200), else 502; and its string code, kept for an OpenAI client (Codex reads
 * `insufficient_quota`). Undefined for any other answer.
 */
export function errorOnly(body: unknown): {message: string; status: number; code?: string} | undefined {
  if (body === null || typeof body !== 'object') return undefined
  const b = body as Record<string, unknown>
  if (b.error === undefined || b.error === null) return undefined
  if (
    b.choices !== undefined ||
    b.output !== undefined ||
    b.content !== undefined ||
    b.candidates !== undefined
  )
    return undefined
  const error = b.error as {message?: unknown; code?: unknown; status?: unknown; type?: unknown} | string
  if (typeof error === 'string') return {message: error, status: 502}
  const message =
    typeof error.message === 'string' ? error.message : excerpt(JSON.stringify(error)) || 'an error'
  const number = Number(error.code) || Number(error.status)
  if (number >= 400 && number <= 599) return {message, status: number}
  const status = namedStatus(error.code) ?? namedStatus(error.type) ?? 502
  return typeof error.code === 'string' && error.code !== ''
    ? {message, status, code: error.code}
    : {message, status}
}

/** Ends a translated stream with its last text (nothing when the client left). */
function endStream(res: RelayContext['res'], data: string): void {
  if (res.destroyed || res.writableEnded) return
  if (data.length > 0) res.end(data)
  else res.end()
}

/**
 * How an error names the upstream: its provider and the family it was translated to (Codex's tools
 * made plain for a Responses server went to the entrance's own family: the provider alone).
 */
const upstreamNamed = (provider: {name: string; family: Family}, entrance: Family): string =>
  provider.family === entrance ? provider.name : `${provider.name} (${provider.family}, translated)`

/** Relays one upstream answer of another family, translated, and settles the breaker. */
export async function relayTranslated(
  ctx: RelayContext,
  upstream: Dispatcher.ResponseData,
  status: number,
  target: ProxyTarget,
  credential: string | undefined,
  translation: Translation,
  /** An error answer's body, already read (or how reading it failed). */
  errorText?: string | Error,
  /** The turn this answer continues (a paused one's continuation), if any. */
  paused?: PausedTurn,
  /** This answer is the one to the request sent again after an empty answer (AnsweredNothing). */
  again?: boolean,
): Promise<FailedBeforeFirstByte | PausedTurn | AnsweredNothing | undefined> {
  const {res, family, result, started} = ctx
  const provider = target.provider
  const upFamily = provider.family
  if (paused === undefined) {
    // (a continuation's answer keeps the id the client was given)
    const upstreamId = upstream.headers['request-id'] ?? upstream.headers['x-request-id']
    result.requestId = (Array.isArray(upstreamId) ? upstreamId[0] : upstreamId) ?? mintRequestId()
  }
  const contentType = String(upstream.headers['content-type'] ?? '')
  result.stream = translation.client.request.stream
  const redact = (text: string): string => (credential ? text.split(credential).join('[redacted]') : text)

  if (paused) keepPausedUsage(result, paused)
  if (paused && status >= 400) {
    const refused = await continuationRefused(ctx, upstream, status, target, paused, redact)
    if (refused !== 'answer') return refused
  }
  if (status >= 400) {
    let text: string
    try {
      if (errorText instanceof Error) throw errorText
      text = redact(errorText ?? (await upstream.body.text()))
    } catch (error) {
      const message = `${provider.name}: the error answer (${status}) broke off: ${describeError(error, ctx.timeouts)}`
      target.breaker?.recordFailure(message)
      result.status = 502
      result.error = message
      sendFamilyError(res, family, 502, message, {requestId: result.requestId})
      return
    }
    const said = upstreamErrorMessage(text) ?? (excerpt(text) || 'an empty body')
    // a daily quota or OpenAI's `insufficient_quota`, which no wait cures: said so in the client's
    // terms, or Claude Code retries it 10 times over minutes (./rate-limit.ts)
    const quotaSpent = noWaitHelps(status, text)
    // (a paused turn's continuation refused, no other target left: the row names it, as the
    // continuation's other failures do)
    const which = paused ? 'the continuation of a paused turn: ' : ''
    const message = `${upstreamNamed(provider, family)}: ${which}upstream answered ${status}: ${said}${quotaSpent ? ` (${spentQuota(text)})` : ''}`
    result.status = status
    result.error = message
    result.ttfbMs = performance.now() - started
    const passed: Record<string, string> = {}
    for (const name of ['retry-after', 'retry-after-ms', 'x-should-retry']) {
      const value = upstream.headers[name]
      if (typeof value === 'string') passed[name] = value
    }
    // Google states its wait in the body only (RetryInfo, and its words), some servers in their
    // words only ("Please try again in 7s."): said as the header the client's SDK reads, a long
    // wait as each client can use it (./rate-limit.ts `waitHeaders`), as a stream's first-event
    // 429 gets it; none for a spent quota
    if (
      status === 429 &&
      !quotaSpent &&
      passed['retry-after'] === undefined &&
      passed['retry-after-ms'] === undefined
    )
      addWaitHeaders(passed, waitHeaders(text, said, {family, headers: ctx.clientHeaders}))
    if (quotaSpent && passed['x-should-retry'] === undefined) passed['x-should-retry'] = 'false'
    // a prompt past the model's context window, in the words the agent acts on (Claude Code
    // compacts on "prompt is too long", Codex knows `context_length_exceeded`): a 400, as every
    // vendor answers it but Xinference (vLLM's words as a 500)
    const overflow =
      (status < 500 && status !== 429) || (status === 500 && OVERFLOW_500.test(text))
        ? readContextOverflow(said, text)
        : undefined
    // the window it states is kept, an overflow or only the completion's room
    if (overflow?.limit) result.contextWindow = overflow.limit
    if (overflow && saysOverflow(family, overflow)) {
      const words = contextOverflowError(family, overflow, message)
      result.status = 400
      sendFamilyError(res, family, 400, words.message, {
        requestId: result.requestId,
        headers: passed,
        code: words.code,
      })
      target.breaker?.recordSuccess()
      return
    }
    // (OpenAI's own code kept for an OpenAI client: Codex 0.171 then says "Quota exceeded. Check your
    // plan and billing details." where it said "exceeded retry limit, last status: 429")
    const code = quotaSpent && text.includes('insufficient_quota') ? 'insufficient_quota' : undefined
    sendFamilyError(res, family, status, message, {
      requestId: result.requestId,
      headers: passed,
      quotaSpent,
      ...(code ? {code} : {}),
    })
    if (status < 500 && status !== 429) target.breaker?.recordSuccess()
    return
  }

  const headers = answerHeaders(
    upstream.headers,
    translation.client.request.stream,
    requestIdHeader(family),
    result.requestId,
  )
  // (the client's tools: the schemas of calls whose arguments a chat upstream's answer must have repaired)
  const tools = translation.client.request.tools
  // (a Responses server's answer to a Responses client: its reasoning held as that server's)
  const server = upFamily === 'responses' && family === 'responses' ? serverOf(target) : undefined
  const ctxCodec = translation.thinkOpen
    ? {carry: translation.carry, thinkOpen: true, tools, server}
    : {carry: translation.carry, tools, server}
  if (!translation.client.request.stream) {
    let body: unknown
    let failure: string | undefined
    let tooLarge = false
    try {
      body = parseAnswer(await readAll(upstream.body, MAX_TRANSLATED_JSON_BYTES, ctx.clientGone))
    } catch (error) {
      tooLarge = error instanceof TooLarge
      // (its client gone, past what is read on for the usage: given up, the row a 499 without it)
      if (tooLarge && ctx.clientGone.aborted)
        return {failedBeforeFirstByte: 'client closed the connection', silent: false}
      if (!(error instanceof SyntaxError) && !tooLarge) {
        // the body failed (silence past the idle timeout, a reset) before the client got a
        // byte: the proxy may try the next target (it settles the breaker)
        upstream.body.destroy()
        return {
          failedBeforeFirstByte: `${provider.name}: upstream answered ${status}, then its body failed before the first byte: ${describeError(error, ctx.timeouts)}`,
          silent: isSilence(error),
        }
      }
      failure = tooLarge ? (error as Error).message : 'an answer that is not JSON'
    }
    // a 200 whose body is an error alone (relays of the one-api kind answer a quota or an
    // overload so): the upstream's words and status, not "an answer that cannot be translated"
    const said = failure ? undefined : errorOnly(body)
    if (said) {
      // (an `insufficient_quota` or Google's daily quota said so: no wait cures it,
      // ./rate-limit.ts), which the row says as the same error's status and stream rows do
      const text = JSON.stringify(body)
      const quotaSpent = noWaitHelps(said.status, text)
      const message = `${upstreamNamed(provider, family)}: upstream answered ${status} with an error: ${redact(said.message)}${quotaSpent ? ` (${spentQuota(text)})` : ''}`
      // a prompt past the window said so (LM Studio, llama.cpp-based relays): the entrance's
      // overflow answer, a 400 the agent compacts on, the window kept
      const overflow =
        said.status === 429 ? undefined : saidOverflow(family, redact(said.message), JSON.stringify(body))
      if (overflow || (said.status !== 429 && inEntranceWords(family, said.message))) {
        if (overflow?.window) result.contextWindow = overflow.window
        target.breaker?.recordSuccess()
        result.status = 400
        result.error = message
        sendFamilyError(res, family, 400, overflow?.message ?? redact(said.message), {
          requestId: result.requestId,
          ...(overflow?.code
            ? {code: overflow.code}
            : family === 'chat' || family === 'responses'
              ? {code: 'context_length_exceeded'}
              : {}),
        })
        return
      }
      // a 429 with another target left: that target, this one's breaker told (as a 429's status
      // would); the client's answer otherwise, the request's last, no breaker failure
      if (said.status === 429 && ctx.canFallBack) return {failedBeforeFirstByte: message, silent: false}
      if (said.status === 429) settle429(target, message, false)
      else if (said.status >= 500) target.breaker?.recordFailure(message)
      else target.breaker?.recordSuccess()
      result.status = said.status
      result.error = message
      // any 429 but a spent quota: the longer of Google's RetryInfo and the wait its words state,
      // else the first of Codex's waits, as a stream's first-event 429 gets it (`earlyError` below)
      const wait =
        said.status === 429 && !quotaSpent
          ? waitHeaders(text, said.message, {family, headers: ctx.clientHeaders}, true)
          : undefined
      sendFamilyError(res, family, said.status, message, {
        requestId: result.requestId,
        ...(quotaSpent ? {headers: {'x-should-retry': 'false'}, quotaSpent} : {}),
        ...(wait !== undefined ? {headers: wait} : {}),
        ...(said.code ? {code: said.code} : {}),
      })
      return
    }
    // a Gemini answer that broke off (MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, OTHER): the
    // model's answer, as a stream's first event says it (earlyError): a 502 in the client's shape,
    // its usage billed on the row, no breaker failure, no other target
    const broke = !failure && upFamily === 'gemini' ? failedAnswer(body) : undefined
    if (broke) {
      const message = `${upstreamNamed(provider, family)}: ${broke}`
      result.status = 502
      result.error = message
      result.ttfbMs = performance.now() - started
      result.usage = billedGemini(body)
      target.breaker?.recordSuccess()
      sendFamilyError(res, family, 502, message, {requestId: result.requestId})
      return
    }
    // a Gemini answer that ended STOP with no text nor call: sent again once, then a 502 to retry
    if (!failure && upFamily === 'gemini' && paused === undefined && emptyAnswer(body)) {
      // (its usage, which Google bills, for the row: the proxy adds it to the next answer's)
      const billed = billedGemini(body)
      if (billed) result.usage = billed
      return answeredNothing(ctx, target, again)
    }
    // a Messages upstream's turn that paused: joined to the answers before it, and continued while
    // the continuations last (nothing is added for an answer that did not pause: one comparison)
    let billed: unknown
    // (only a request that offered the search: the stream's rule, translate.ts `continuable`)
    if (
      !failure &&
      upFamily === 'messages' &&
      (paused !== undefined || (translation.client.request.webSearch !== undefined && pausedAnswer(body)))
    ) {
      const raw = body as Record<string, unknown>
      // every call's usage, summed (the log row's); the client is told the last call's prompt
      billed = paused ? sumCounts(paused.billed, raw.usage) : raw.usage
      if (paused?.answer) body = joinAnswers(paused.answer, raw)
      const count = paused?.count ?? 0
      if (pausedAnswer(body)) {
        if (count < MAX_CONTINUATIONS) {
          const answer = body as Record<string, unknown>
          return {paused: true, count: count + 1, content: answer.content as unknown[], answer, billed}
        }
        addNote(result, pausedNote(provider.name))
      } else if (paused) addNote(result, continuedNote(provider.name, paused.count))
    }
    let out: ReturnType<typeof translateResponseText> | undefined
    if (!failure) {
      try {
        out = translateResponseText(upFamily, translation.client, body, ctxCodec)
      } catch (error) {
        failure = `an answer that cannot be translated (${(error as Error).message})`
      }
    }
    if (!out) {
      const message = `${provider.name}: upstream answered ${status} with ${failure}`
      target.breaker?.recordFailure(message)
      result.status = 502
      result.error = message
      sendFamilyError(res, family, 502, message, {requestId: result.requestId})
      return
    }
    if (ctx.clientGone.aborted) {
      // the client left while the answer was read on for its usage (a request not streamed is
      // held: proxy.ts ClientGone): a 499 row, as the pass-through relay writes, with the usage
      // the upstream billed
      result.status = 499
      result.clientAborted = true
      result.error = 'client closed the connection'
    } else {
      // a small answer is written as one string with the status line and headers (one socket
      // write, no buffer); a large one as its bytes (encoded once, its length from them), in the
      // same write
      const {text} = out
      const bytes = text.length >= LARGE_ANSWER ? utf8Bytes(text) : undefined
      result.status = status
      result.ttfbMs = performance.now() - started
      headers.push(
        'content-type',
        'application/json',
        'content-length',
        String(bytes ? bytes.length : Buffer.byteLength(text)),
      )
      res.writeHead(status, headers)
      res.end(bytes ?? text)
    }
    // the id first: an object literal that starts with a spread and goes on with more members takes
    // µs on Node 20's V8
    result.usage = family === 'responses' ? {responseId: out.id, ...out.usage} : out.usage
    // a continued turn: the row holds every call's prompt (the client, the last one's)
    if (paused && out.usage) result.usage = {...result.usage, ...billedPrompts(out.usage, billed)}
    if (out.estimated) addNote(result, estimatedUsageNote(provider.name, out.estimated))
    if (out.thinkInPrompt) thinkInPrompt(result, translation, provider.name, out.thinkInPrompt)
    if (out.repairedArgs) addNote(result, repairedArgsNote(provider.name, out.repairedArgs))
    if (out.namelessCalls) addNote(result, namelessCallsNote(provider.name, out.namelessCalls))
    if (again) addNote(result, sentAgainNote(provider.name))
    if (upFamily === 'messages') {
      const dropped = droppedThinking((body as {input_transformations?: unknown}).input_transformations)
      if (dropped) addNote(result, droppedThinkingNote(provider.name, dropped))
    }
    target.breaker?.recordSuccess()
    return
  }

  if (!/text\/event-stream/i.test(contentType)) {
    // a JSON answer (an upstream that ignored `stream`, a relay that answers so): its upstream
    // bills it, so it is read whole for its usage (up to what the usage tap keeps), held as the
    // relay holds one (proxy.ts ClientGone): a client that leaves meanwhile no longer aborts it,
    // and its row is a 499 with that usage (nothing went out)
    if (paused === undefined) {
      ctx.clientGone.hold?.()
      result.usage = await unstreamedUsage(upstream.body, upFamily, ctx.clientGone)
      if (ctx.clientGone.aborted) {
        result.status = 499
        result.clientAborted = true
        result.error = 'client closed the connection'
        target.breaker?.release()
        return
      }
    } else await upstream.body.dump().catch(() => undefined)
    const message = `${provider.name}: upstream answered ${status} with ${contentType || 'no content type'}, not a stream`
    target.breaker?.recordFailure(message)
    result.error = message
    if (paused?.translator) {
      // the client's stream was going on: it ends with its error event
      result.broken = true
      endStream(res, paused.translator.fail(502, message))
      return
    }
    result.status = 502
    sendFamilyError(res, family, 502, message, {requestId: result.requestId})
    return
  }

  let translator: StreamTranslator
  if (paused?.translator) {
    // the continuation of a paused turn: read into the client's stream, which goes on
    translator = paused.translator
    translator.resume()
  } else {
    translator = new StreamTranslator(upFamily, translation.client, ctxCodec)
    result.status = status
    headers.push('content-type', 'text/event-stream', 'cache-control', 'no-cache')
  }
  // The stream's headers go with its first output (node:http would hold them until then anyway):
  // a stream whose first event is an error has sent the client nothing, and is answered as an
  // error status is (below)
  let headed = paused?.translator !== undefined
  const head = (): void => {
    headed = true
    res.writeHead(status, headers)
  }
  /** The upstream's error, when it was the stream's first event (nothing went to the client). */
  let early: NonNullable<StreamTranslator['error']> | undefined
  // a Messages upstream's pause is held back from the client while the turn may be continued
  translator.holdPause = translator.continuable && (paused?.count ?? 0) < MAX_CONTINUATIONS
  const body = upstream.body
  // A stream held as a stream from its send (proxy.ts `billsStreamsCut`: Amazon Bedrock bills a
  // stream whose reader left whole) is translated on to its end once its client left, for the
  // usage on the row, its output dropped; bounded as relay.ts bounds one (the idle timeout from its
  // last event, a keep-alive blank not counted, and what the usage tap keeps in all). It may wait
  // for the gone client's 'drain': resumed then.
  const readOn = ctx.clientGone.streamHeld === true
  if (readOn) ctx.clientGone.onLeft?.(() => body.resume())
  /** The upstream's bytes read on after the client left ({@link readOn}). */
  let unsent = 0
  const resume = (): void => {
    body.resume()
  }
  const send = (data: string): void => {
    if (data.length === 0 || early || res.destroyed || res.writableEnded) return
    if (!headed) head()
    if (result.ttfbMs === null) result.ttfbMs = performance.now() - started
    if (!res.write(data)) {
      body.pause()
      res.once('drain', resume)
    }
  }
  // Once the client's stream is complete (its terminal or error event translated), the answer
  // ends with its last text: one socket write with the chunked terminator, not a second one for
  // it when the upstream's body ends (a later read, or the same one a tick later). What the
  // upstream sends after its terminal event is read and dropped, as before.
  const sendLast = (data: string): void => {
    if (early || res.destroyed || res.writableEnded) return
    if (!headed) head()
    if (data.length > 0 && result.ttfbMs === null) result.ttfbMs = performance.now() - started
    if (data.length > 0) res.end(data)
    else res.end()
  }
  // An upstream whose answer stopped (its finish reason, its stop_reason) but whose stream then
  // neither ends nor fails (kept open, heartbeats: bifrost #6784), or fails (its idle timeout, a
  // dropped connection): the client's answer is whole, ended as at the stream's end, at most
  // STOPPED_GRACE_MS after the stop (time for the usage that follows it)
  let grace: NodeJS.Timeout | undefined
  // A Responses upstream's ack holds the client's start (translator.holdsStart) for at most
  // START_GRACE_MS: a failure or an output within it is read as now (the failure an HTTP answer or
  // the next target); after it the start goes as it did at the ack, and a later failure is the
  // stream's error event. SSE comments and keep-alives after the ack do not prolong it.
  let held: NodeJS.Timeout | undefined
  const broken = await new Promise<{error: unknown} | undefined>((resolve) => {
    // (called from a timer and from the body's events: a throw in the translation fails the
    // stream, never the process)
    const endStopped = (): void => {
      clearTimeout(grace)
      try {
        if (!translator.done) finish()
      } catch (error) {
        resolve({error})
        return
      }
      resolve(undefined)
    }
    // the client's end of the answer (a paused answer's end is not the client's: its
    // continuation follows)
    const finish = (): void => {
      const rest = translator.end()
      if (translator.paused) send(rest)
      else sendLast(rest)
    }
    // The first event goes out as soon as it is translated, with the headers: node:http holds a
    // response's writes until the next tick (it corks the socket), so it is uncorked at once
    // rather than after the rest of that upstream read is translated. The rest of each read is
    // one write, sent at the end of the tick.
    translator.onFirstOutput = (data: string): void => {
      // an error before anything else (Gemini's in-stream 503 "The model is overloaded",
      // OpenRouter's first-line error, LM Studio's overflow): kept from the client's stream
      if (translator.error && !headed) {
        early = translator.error
        return
      }
      send(data)
      res.uncork()
    }
    // the start held past the ack's grace: through onFirstOutput, with the headers, at once (what
    // the translation throws fails the body, as in translateLater)
    const sendHeldStart = (): void => {
      if (headed || early || translator.done || res.destroyed || !translator.holdsStart) return
      try {
        send(translator.flushStart())
      } catch (error) {
        body.destroy(error as Error)
      }
    }
    // undici hands on each chunk of a chunked body as a 'data' event of its own, and an upstream
    // writes one chunk an event (a chat stream's 20 events of one read are 20 'data' events in
    // one tick): the chunks of a tick are translated together at its end, one push and one write
    // for them, not one each (the client gets the same bytes; the first event still goes out as
    // soon as it is translated)
    let pending: Buffer[] | undefined
    const translate = (): void => {
      const chunks = pending
      if (chunks === undefined) return
      pending = undefined
      if (translator.done) return
      const chunk = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)
      if (res.destroyed) {
        unsent += chunk.length
        if (readOn && chunk.includes(DATA_LINE)) ctx.clientGone.touch?.()
        if (!readOn || unsent > MAX_TAPPED_JSON_BYTES) {
          resolve({error: new Error('client closed the connection')})
          return
        }
      }
      const data = translator.push(chunk)
      if (translator.done) sendLast(data)
      else {
        send(data)
        if (held === undefined && !headed && translator.holdsStart)
          held = setTimeout(sendHeldStart, START_GRACE_MS)
        if (grace === undefined && translator.upstreamStopped)
          grace = setTimeout(() => {
            endStopped()
            body.destroy()
          }, STOPPED_GRACE_MS)
      }
    }
    // (what throws there fails the body, as it did thrown in its 'data' event: undici destroys the
    // socket with it, not the process)
    const translateLater = (): void => {
      try {
        translate()
      } catch (error) {
        body.destroy(error as Error)
      }
    }
    body.on('data', (chunk: Buffer) => {
      if (pending !== undefined) pending.push(chunk)
      else {
        pending = [chunk]
        process.nextTick(translateLater)
      }
    })
    body.on('end', () => {
      // (the chunks before it first, should their tick not have come yet; a throw there fails the
      // stream, as in its tick, never the process from an event handler)
      try {
        translate()
        clearTimeout(grace)
        finish()
      } catch (error) {
        clearTimeout(grace)
        // (an answer already whole and ended is not broken by what failed after it)
        resolve(translator.done && res.writableEnded ? undefined : {error: error as Error})
        return
      }
      resolve(undefined)
    })
    body.on('error', (error) => {
      try {
        translate()
      } catch {
        // the body's own error is the one to report
      }
      if (translator.upstreamStopped && !res.destroyed) endStopped()
      else resolve({error})
    })
  })
  clearTimeout(grace)
  clearTimeout(held)
  // (from here an error event is the gateway's own, for a stream the client may have begun)
  translator.onFirstOutput = undefined
  // (a stream the upstream closed before its finish: what it had reported, as when it reset)
  result.usage = streamRowUsage(family, translator, translator.error?.truncated === true)
  // (an overflow said in the stream: the window it states is kept, as from an error status)
  if (translator.contextWindow) result.contextWindow = translator.contextWindow
  if (early && !(ctx.clientGone.aborted || res.destroyed)) {
    if (early.said === EMPTY_ANSWER && paused === undefined) {
      body.destroy()
      return answeredNothing(ctx, target, again)
    }
    return earlyError(ctx, target, provider, early, body)
  }
  // the client left: while the answer's start was held (nothing sent, not even the headers: a
  // Gemini answer before its first part), a 499, as the proxy records a client that left before
  // an answer; the upstream request was aborted with it (the body's signal)
  if ((broken || !headed) && (ctx.clientGone.aborted || result.clientAborted || res.destroyed)) {
    result.clientAborted = true
    result.error = 'client closed the connection'
    if (!headed) result.status = 499
    // (the upstream bills what it reported: a Gemini usage held for the finish counts)
    result.usage = streamRowUsage(family, translator, true)
    target.breaker?.release()
    body.destroy()
    return
  }
  if (broken && !headed) {
    // nothing reached the client, not even the headers (a Gemini answer's start is held until its
    // first part; a usage-only chunk, then a reset or silence): as relay.ts, the proxy tries the
    // next target or answers 502/504 in the client's shape; it settles the breaker. The usage
    // the upstream reported by then, which it bills, stays the request's (proxy.ts `keepUnseen`)
    body.destroy()
    result.usage = streamRowUsage(family, translator, true)
    return {
      failedBeforeFirstByte: `${provider.name}: upstream answered ${status}, then its body failed before the first byte: ${describeError(broken.error, ctx.timeouts)}`,
      silent: isSilence(broken.error),
    }
  }
  // (the client left a stream read on to its end: the status it got, why it has not the rest)
  if (!broken && ctx.clientGone.aborted) {
    result.clientAborted = true
    result.error = 'client closed the connection'
  }
  if (broken) {
    const message = `${provider.name}: ${paused ? 'the continuation of a paused turn' : 'stream'} broke after the first byte: ${describeError(broken.error, ctx.timeouts)}`
    result.error = message
    result.broken = true
    target.breaker?.recordFailure(message)
    sendLast(translator.fail(502, message))
    // again: what the upstream reported by then (a Gemini usageMetadata, a chat usage held for the
    // stop: the row used to count neither), its output never below the deltas that streamed
    result.usage = streamRowUsage(family, translator, true)
    return
  }
  if (translator.error) {
    // (an empty answer after its thoughts streamed: the client was told to retry; the upstream
    // answered, though Google's thought-only ending is read at the stream's end)
    const empty = translator.error.said === EMPTY_ANSWER
    const message = empty
      ? `${upstreamNamed(provider, family)}: ${EMPTY_ANSWER} after its thoughts streamed${again ? ' (sent again once)' : ''}: the client got an error event`
      : `${upstreamNamed(provider, family)}: ${translator.error.message}`
    result.error = result.error && empty ? `${result.error}; ${message}` : message
    result.broken = true
    // a truncated stream is the upstream failing; an error event of its own (a refusal, an
    // overload it reported) is an answer, as on pass-through routes: the breaker is not told; a
    // rate limit or a spent quota said after the first byte is the request's last answer, as a
    // 429's status (./rate-limit.ts `settle429`)
    if (translator.error.truncated && !empty) target.breaker?.recordFailure(message)
    else if (translator.error.status === 429 && !empty) settle429(target, message, false)
    else target.breaker?.recordSuccess()
    return
  }
  if (translator.paused) {
    // the answer paused: the proxy sends its continuation, read into this stream
    const count = paused?.count ?? 0
    return {
      paused: true,
      count: count + 1,
      content: [...(paused?.content ?? []), ...translator.pausedContent()],
      translator,
    }
  }
  if (translator.endedPaused && paused) addNote(result, pausedNote(provider.name))
  else if (paused) addNote(result, continuedNote(provider.name, paused.count))
  if (translator.estimated) addNote(result, estimatedUsageNote(provider.name, translator.estimated))
  const seen = translator.thinkInPrompt
  if (seen) thinkInPrompt(result, translation, provider.name, seen)
  const repaired = translator.repairedArgs
  if (repaired) addNote(result, repairedArgsNote(provider.name, repaired))
  const nameless = translator.namelessCalls
  if (nameless) addNote(result, namelessCallsNote(provider.name, nameless))
  const dropped = translator.droppedThinking()
  if (dropped) addNote(result, droppedThinkingNote(provider.name, dropped))
  if (again) addNote(result, sentAgainNote(provider.name))
  target.breaker?.recordSuccess()
}

/**
 * A translated stream whose first event was the upstream's error (nothing reached the client):
 * answered as an error status would have been. An upstream failure (a 5xx or 429 in the event, a
 * stream that ended with nothing) goes to the next target when there is one, the breaker counting
 * it; else, and for a refusal (a 4xx: a prompt past the window in the entrance's words), the client
 * gets an error answer with that status in its own protocol's shape, which its SDK retries as it
 * would the upstream's (Claude Code retried only an `overloaded_error` event, and compacts on a
 * 400's "prompt is too long" as on the event's).
 */
function earlyError(
  ctx: RelayContext,
  target: ProxyTarget,
  provider: {name: string; family: Family},
  early: NonNullable<StreamTranslator['error']>,
  body: Dispatcher.ResponseData['body'],
): FailedBeforeFirstByte | undefined {
  const {res, family, result} = ctx
  // OpenAI's `insufficient_quota` in a Responses stream's `response.failed` or a chat stream's
  // error chunk, or Google's daily quota in a Gemini stream's error chunk (its QuotaFailure, also
  // as relays forward it): no wait cures it (./rate-limit.ts `noWaitHelps`), and the row says so,
  // as of the same 429 answered with its status
  const google = early.status === 429 ? (early.body ?? '') : ''
  // (a chat chunk's daily limit said in its words alone: "tokens per day (TPD)")
  const quotaSpent =
    early.status === 429 &&
    (early.code === 'insufficient_quota' || noWaitHelps(429, google) || noWaitHelps(429, early.message))
  const spent = quotaSpent
    ? ` (${spentQuota(early.code === 'insufficient_quota' ? early.code : google)})`
    : ''
  const message = `${upstreamNamed(provider, family)}: ${early.message}${spent}`
  // (a failed finish is the model's answer, as it was once the stream had begun: the client gets
  // the 502, the breaker is not told, no other target is tried.) A first event naming a key the
  // server refuses (`invalid_api_key`: a 401 or 403 by ../../protocols/errors.ts `namedStatus`) in
  // a 200 is what a relay says of its own upstream, which another target may not share: the next
  // target when there is one. So is a model it does not know (`model_not_found`, a 404) where the
  // target names its own model; where it passes the client's, the client's typo is the answer, as
  // the same 404 with its status is. Neither tells the breaker of a failure (a request is refused,
  // not the provider down: as a 401 or 404 with its status; rv-mends #2)
  const upstreamFailed = !early.answered && (early.truncated || early.status >= 500 || early.status === 429)
  const refused =
    !early.answered &&
    (early.status === 401 || early.status === 403 || (early.status === 404 && target.model !== undefined))
  body.destroy()
  if (ctx.canFallBack && (upstreamFailed || refused))
    return {
      failedBeforeFirstByte: message,
      silent: false,
      ...(upstreamFailed ? {} : {refused: true as const}),
    }
  const failure = upstreamFailed
  result.status = early.status
  result.error = message
  result.ttfbMs = performance.now() - ctx.started
  // (a 429 with no other target to go to is no failure of the provider: ./proxy.ts `settle429`)
  if (failure && early.status === 429) settle429(target, message, false)
  else if (failure) target.breaker?.recordFailure(message)
  else target.breaker?.recordSuccess()
  // A rate limit said so (a chat chunk naming `rate_limit_exceeded`, a `response.failed`, Google's
  // per-minute quota), not a spent quota: the longer of Google's RetryInfo and the wait its words
  // state, else the first of Codex's waits (./rate-limit.ts RETRY_429), as `retry-after`. Codex
  // retries no 429 without it (it ended the turn, "exceeded retry limit, last status: 429", where
  // this was a 502 it retried before the stream's 429 was read); Claude Code and the OpenAI SDKs
  // wait what it says; a Gemini client gets it as RetryInfo.
  const wait =
    early.status === 429 && !quotaSpent
      ? waitHeaders(google, early.message, {family, headers: ctx.clientHeaders}, true)
      : undefined
  sendFamilyError(
    res,
    family,
    early.status,
    early.overflow ? early.said : `${upstreamNamed(provider, family)}: ${early.said}${spent}`,
    {
      requestId: result.requestId,
      ...(early.code ? {code: early.code} : {}),
      ...(quotaSpent ? {headers: {'x-should-retry': 'false'}, quotaSpent} : {}),
      ...(wait !== undefined ? {headers: wait} : {}),
    },
  )
  return undefined
}

/**
 * A continuation of a paused turn answered with an error status. A stream already begun ends with
 * its protocol's error event (the status and the upstream's words); a JSON answer not begun is a
 * failed try the proxy may take to the next target when the status is a 5xx, or a 429 with another
 * target left, and otherwise gets the error in the client's shape as any translated error
 * (`'answer'`: the caller does it), the usage of the answers that paused in its row.
 */
async function continuationRefused(
  ctx: RelayContext,
  upstream: Dispatcher.ResponseData,
  status: number,
  target: ProxyTarget,
  paused: PausedTurn,
  redact: (text: string) => string,
): Promise<FailedBeforeFirstByte | undefined | 'answer'> {
  const provider = target.provider
  const failure = status >= 500 || status === 429
  if (!paused.translator) {
    // a 429 with no other target left is the request's last answer, as any other 429: the client
    // gets it in its shape (its `retry-after`, `x-should-retry: false` for a spent quota), and the
    // breaker no failure (./rate-limit.ts `settle429`), not a 502 and a failure
    const last429 = status === 429 && !ctx.canFallBack
    if (failure && !last429) {
      await upstream.body.dump().catch(() => undefined)
      return {
        failedBeforeFirstByte: `${provider.name}: the continuation of a paused turn: upstream answered ${status}`,
        silent: false,
      }
    }
    if (last429) {
      settle429(target, `${provider.name}: the continuation of a paused turn: upstream answered 429`, false)
      // (a wait in `retry-after-ms` only, as `retry-after` too: the proxy's rule for a first answer)
      addWaitHeaders(
        upstream.headers,
        msWaitHeaders(upstream.headers, {family: ctx.family, headers: ctx.clientHeaders}),
      )
    }
    return 'answer'
  }
  let said: string
  try {
    const text = redact(await upstream.body.text())
    said = upstreamErrorMessage(text) ?? (excerpt(text) || 'an empty body')
  } catch (error) {
    said = `its error answer broke off: ${describeError(error, ctx.timeouts)}`
  }
  const message = `${provider.name}: the continuation of a paused turn: upstream answered ${status}: ${said}`
  // (a 429 here is the request's last answer: no breaker failure, ./rate-limit.ts `settle429`)
  if (status === 429) settle429(target, message, false)
  else if (failure) target.breaker?.recordFailure(message)
  else target.breaker?.recordSuccess()
  endAsItIs(ctx, paused.translator, message)
  return undefined
}
