/**
 * The proxy: sends one entrance request to the policy's targets in order and streams the answer
 * back, byte for byte as it arrives.
 *
 * - Targets whose breaker is open are skipped. A connect error, a timeout, a 5xx or a 429 moves on
 *   to the next target while nothing has been sent to the client (when the policy allows
 *   fallbacks). After the first byte, a failure ends an SSE answer with an error event in the
 *   entrance's protocol.
 * - No target answered: 502 (the reason included); every target's breaker open: 503. Both in
 *   the entrance's error shape. An upstream 5xx/429 with nothing left to try is passed through;
 *   after a 429 Codex would not retry (one without `retry-after`), Codex's request first goes
 *   again to the same target after the short wait the upstream states (./rate-limit.ts).
 * - The gateway key never leaves: every credential header and `?key=` are dropped and the
 *   provider's credential is set in its protocol's form. Only protocol headers are forwarded.
 * - A client disconnect aborts a stream's upstream request at once; a request not streamed to a
 *   vendor's API, or a stream to Amazon Bedrock, goes on (within the idle timeout) for the usage
 *   its upstream bills (ClientGone).
 *
 * The pieces live next to this file: target selection (targets.ts), body reading
 * (request-body.ts), header rewriting (headers.ts), the streaming relay (relay.ts), error shaping
 * (error-shape.ts), connection pools (pools.ts); the log row is made by log-entry.ts.
 */
import type {EventEmitter} from 'node:events'
import type {ServerResponse} from 'node:http'
import {performance} from 'node:perf_hooks'

import {answerNoTarget, describeError, isSilence, sendFamilyError} from './error-shape.js'
import {forwardHeaders, mintRequestId, requestIdHeader, withoutLearnedBetas} from './headers.js'
import {upstreamModel} from '../../gateway/policy.js'
import {upstreamPath} from '../../gateway/upstream-path.js'
import {answerWaitMs, defaultPools} from './pools.js'
import {omitsToolCallIndex} from './tool-index.js'
import {asksSafeguards, withoutSafeguards} from './safeguards.js'
import {isClaudeModel, ownModelsOnly, withoutCacheTtl} from './cache-ttl.js'
import {holdsDeferral, withDeferredToolsLoaded} from '../../protocols/deferred-tools.js'
import {classifierThinkingOff, holdsClassifierPrompt} from '../../protocols/classifier.js'
import type {
  BilledTry,
  ProxyAttempt,
  ProxyOptions,
  ProxyRequest,
  ProxyResult,
  ProxyTarget,
} from './proxy-types.js'
import {isAnthropicApi, sendsBillingLine, withoutBillingBlock} from './billing-line.js'
import {
  azureProvider,
  withNamespaceDescriptions,
  calledAsFunction,
  holdsAgentMessage,
  holdsCallOutput,
  holdsOpenAiToolShapes,
  isLocalServer,
  isDashScopeApi,
  isMoonshotApi,
  isOpenAiApi,
  preservedThinkingOf,
  asksToolStream,
  zaiProvider,
  withToolStream,
  isAmazonBedrock,
  isXaiApi,
  isOpenAiResponsesHost,
  simStandsForOtherServer,
  withAdjacentOutputs,
  withoutLiteItem,
  withStoreTrue,
} from './plain-tools.js'
import {
  foreignCiphertextRefusal,
  holdsEncryptedContent,
  namesCompactionItem,
  refusesForeignCiphertext,
  strippedNote,
  unrepairableCiphertext,
  withoutReasoningCiphertext,
} from './encrypted-content.js'
import {errorBody as familyErrorBody} from '../../protocols/errors.js'
import {cutConfirmed, cutNote, cutWindow, holdsMedia, mayBeOllama} from './ollama-cut.js'
import {OVERFLOW_500, relay} from './relay.js'
import {
  addWaitHeaders,
  bodyWaitMs,
  isCodexClient,
  msWaitHeaders,
  RETRY_429,
  settle429,
  waitedNote,
} from './rate-limit.js'
import {parseRetryAfter} from '../../core/retry-after.js'
import {withSystemTurnsPlaced} from './system-turns.js'
import {
  reasoningRewritten,
  withLeastThinking,
  withoutItemMembers,
  withoutTopFields,
  withReasoningAdapted,
} from './top-fields.js'
import type {RelayContext} from './relay.js'
import {prepare, RequestBodyError} from './request-body.js'
import {acquireTarget, canTryAfter, serverOf} from './targets.js'
import {addBilled} from './taps/tap.js'
import type {Usage} from './taps/tap.js'
import type {LearnedAdaptation} from './adaptations.js'
import type {UpstreamAdaptation} from '../../protocols/translate.js'
import {
  MAX_ADAPTATIONS_A_REQUEST,
  onlyMoreCuts,
  refusesMediaInResults,
  rewritesChatBody,
  rewritesMessagesBody,
  sentMedia,
  toolCapStated,
  UpstreamAdaptations,
} from './adaptations.js'
import type {Translation} from './translated.js'
import type * as TranslatedModuleNs from './translated.js'
import type * as TranslateModuleNs from '../../protocols/translate.js'
import type {ClientRequest, SentRequest} from '../../protocols/translate.js'
import type {CodecContext, Family, WrapReach} from '../../protocols/ir.js'
import {parseJsonBytes} from '../../protocols/json-bytes.js'
import {mayHoldMediaInResults, withMediaOutOfOutputs} from '../../protocols/media-out-of-results.js'
import {holdsNullType} from '../../protocols/null-type-bytes.js'

export {sendFamilyError} from './error-shape.js'
export {defaultPools, UpstreamPools} from './pools.js'
export {upstreamPath} from '../../gateway/upstream-path.js'
export {gatewayAnswered} from './proxy-types.js'
export type {
  BilledTry,
  ProxyAttempt,
  ProxyOptions,
  ProxyRequest,
  ProxyResult,
  ProxyTarget,
} from './proxy-types.js'
export {topLevelFields} from './request-body.js'

type TranslateModule = typeof TranslateModuleNs
type TranslatedModule = typeof TranslatedModuleNs
let translation: Promise<[TranslateModule, TranslatedModule]> | undefined
/** The translation modules once loaded (then no await is needed for them). */
let translationLoaded: [TranslateModule, TranslatedModule] | undefined
/** The translation code, loaded on the first translated request (a daemon without any never loads it). */
const loadTranslation = (): Promise<[TranslateModule, TranslatedModule]> =>
  (translation ??= Promise.all([import('../../protocols/translate.js'), import('./translated.js')]).then(
    (modules) => (translationLoaded = modules),
  ))

/** Anthropic's refusal of a thinking block's signature (`messages.1.content.0: Invalid …`). */
const INVALID_SIGNATURE = /Invalid \\?`signature\\?` in \\?`thinking\\?` block/

/**
 * The row's note on a request sent again without the thinking of gwctl's wraps: of the turn the
 * refusal named (`turn`), of every turn but the last assistant turn besides (`earlier`: words that
 * name none, or a request's second refusal), of every turn (`all`: its third).
 */
const withoutWrapsNote = (reach: WrapReach): string =>
  `refused a thinking block's signature: sent again without the thinking of gwctl's wraps ${reach === 'turn' ? 'of the turn it named' : reach === 'earlier' ? 'before the last assistant turn' : 'of every turn'} (a wrap written before stop 60 held redacted thinking as a signature); nothing learned`

/** How far each retry of a refused signature reaches, the request's first, second and third. */
const WRAP_REACHES: readonly WrapReach[] = ['turn', 'earlier', 'all']

/** See src/protocols/strip.ts (kept here too: that module loads only when a body holds it). */
const WRAPPED_MARKER = '"gwx1.'

/**
 * A body passed through untranslated with what was learned of its upstream model applied: a chat
 * body (a chat client on a chat upstream) by translate.ts `adaptPassedChat` (Gemini's tool-schema
 * keywords behind a chat server, a field or an effort refused, Mistral's tool-call ids...), a
 * Messages body (Claude Code on an Anthropic-compatible server) by `adaptPassedMessages` (its
 * thinking form, thinking for a model without it, a field refused), a Gemini body (Gemini CLI on
 * Gemini) by `adaptPassedGemini` (only its function declarations past the model's cap); the bytes
 * as they came when they are not JSON. What a rewrite left out (tools past a cap) goes to `notes`,
 * for the log row. Called only for an upstream model learned so (`rewritesChatBody`,
 * `rewritesMessagesBody`): any other request costs the Map lookup that finds nothing.
 */
/** A body a client sent, parsed, when it is a JSON object; else undefined (the client's to see). */
function sentObject(body: Buffer): Record<string, unknown> | undefined {
  let json: unknown
  try {
    json = parseJsonBytes(body)
  } catch {
    return undefined
  }
  return json && typeof json === 'object' && !Array.isArray(json)
    ? (json as Record<string, unknown>)
    : undefined
}

async function passedBody(
  family: 'chat' | 'messages' | 'gemini',
  body: Buffer,
  adapt: UpstreamAdaptation,
  notes: string[],
): Promise<Buffer> {
  let json: unknown
  try {
    json = parseJsonBytes(body)
  } catch {
    return body
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) return body
  const [translate] = translationLoaded ?? (await loadTranslation())
  const rewrite =
    family === 'chat'
      ? translate.adaptPassedChat
      : family === 'messages'
        ? translate.adaptPassedMessages
        : translate.adaptPassedGemini
  return rewrite(json as Record<string, unknown>, adapt, notes)
}

/**
 * Whether what was learned of an upstream model rewrites a body of `family` passed through to it
 * (a Gemini body: only for more function declarations than the model takes, or a thinking config
 * it refused).
 */
const rewritesPassed = (family: Family, learned: UpstreamAdaptation | undefined): boolean =>
  family === 'chat'
    ? rewritesChatBody(learned)
    : family === 'messages'
      ? rewritesMessagesBody(learned)
      : family === 'gemini' &&
        learned !== undefined &&
        (learned.toolCap !== undefined ||
          learned.noThinkingLevel === true ||
          learned.thinkingLevels !== undefined ||
          learned.noThinking === true ||
          learned.noSystemInstruction === true ||
          learned.thinkingBudget !== undefined)

/**
 * What translated upstreams were found to refuse, and the context windows upstreams stated, per
 * provider and model (adaptations.ts).
 */
const adaptations = new UpstreamAdaptations()

/** What upstreams were found to refuse, and to hold, so far (`GET /api/adaptations`). */
export const learnedAdaptations = (): LearnedAdaptation[] => adaptations.list()

/** A request encoded for a translated target. */
interface TranslatedRequest {
  body: Buffer
  path: string
  translation: Translation
  /** What it sent that an upstream may refuse. */
  sent: SentRequest
  /** The model it asks the upstream for. */
  upstreamModel: string
  /** How many refused fields this request has gone again without. */
  adapted?: number
  /**
   * How many times it went again without the thinking of gwctl's wraps after a Messages upstream
   * refused a signature (ir.ts `withoutWrappedThinking`): at most MAX_ADAPTATIONS_A_REQUEST a
   * request, each time reaching wider (WRAP_REACHES: the named turn, every turn but the last
   * assistant turn, every turn).
   */
  withoutWraps?: number
  /**
   * The conversation encoded in place of the client's (its thinking of gwctl's wraps left out):
   * encoded again so where a refusal teaches a rule.
   */
  conversation?: ClientRequest['request']
}

/**
 * Codex Desktop's `automation_update` tool, `"parameters": {"type": null, ...}`, refused by OpenAI
 * and DeepSeek on every request, typed as a translated request's tools are, in a Responses body
 * passed through: a byte search first (../../protocols/null-type-bytes.ts), and only for a body that
 * holds one the rewrite (../../protocols/tool-schemas.ts `withTypedToolSchemas`), loaded then, so
 * the daemon holds no schema walk for bodies without (its idle RSS).
 */
async function typedToolSchemas(body: Buffer): Promise<Buffer> {
  const {withTypedToolSchemas} = await import('../../protocols/tool-schemas.js')
  return withTypedToolSchemas(body) ?? body
}

/**
 * A translated request's conversation (its cache key: Codex's `prompt_cache_key`, a Claude Code
 * session, a session header, or one derived from its first turn) named to xAI in `x-grok-conv-id`, which keeps its prefix cached on one machine
 * (./plain-tools.ts `isXaiApi`); any other request's headers as they are.
 */
function conversationHeader(
  headers: Record<string, string>,
  translated: TranslatedRequest | undefined,
  provider: {baseUrl: string},
): Record<string, string> {
  const key = translated?.translation.client.request.cacheKey
  if (key !== undefined && isXaiApi(provider.baseUrl)) headers['x-grok-conv-id'] = key
  return headers
}

/**
 * Whether `provider` routes a prompt to its cache by a conversation's key, where one derived from
 * the first turn helps: a Responses server not on this machine or network (OpenAI's, Azure's; a
 * local server's cache is on one machine), OpenAI's and Moonshot's chat completions, and xAI
 * (`x-grok-conv-id`). Any other upstream has no such key (a Messages or Gemini upstream, another
 * chat server, which refuses the field).
 */
function routesByCacheKey(provider: ProxyTarget['provider']): boolean {
  if (provider.family === 'responses') return provider.origin === 'sim' || !isLocalServer(provider.baseUrl)
  return (
    isXaiApi(provider.baseUrl) ||
    (provider.family === 'chat' && (isOpenAiApi(provider.baseUrl) || isMoonshotApi(provider.baseUrl)))
  )
}

/** The body of a count-tokens request (`/v1/messages/count_tokens`, `:countTokens`). */
const COUNT_TOKENS = /(?:\/count_tokens|:countTokens)(?:\?|$)/
/** OpenAI's remote compaction (`/v1/responses/compact`), which only a Responses upstream has. */
const COMPACT = /\/responses\/compact(?:\?|$)/

/** An error answer's body, read whole to learn from (or how reading it failed). */
async function errorBody(body: {text(): Promise<string>}): Promise<string | Error> {
  try {
    return await body.text()
  } catch (error) {
    return error as Error
  }
}

/** Request bodies above this size use a connection of their own (closed after the answer). */
const RESET_BODY_BYTES = 1024 * 1024

/**
 * Aborts the upstream request when the client leaves. undici takes an EventEmitter-like `signal`
 * (it calls `once('abort', …)` and `removeListener`); an AbortController (an EventTarget), or even
 * an EventEmitter, costs more per request to create and to subscribe to, and this one is created
 * for every proxied request. It holds the listeners of the requests of one proxied request (one
 * at a time, but a failed try's may still be subscribed when the next try subscribes).
 *
 * A request not streamed is held ({@link hold}) while its try goes to an upstream that is not on this
 * machine or network (`holdable`): the upstream bills the whole answer whether or not anyone reads
 * it (it generates it before it sends a byte), so the client's leaving, before the upstream's
 * headers or during its answer, no longer aborts the request under way: it goes on, and its answer
 * is read to its end for the usage on the row (relay.ts, translated.ts), for the idle timeout
 * counted from the leaving at most; then, or at the pools' close, it is given up (its listeners
 * told). `aborted` is set at the leaving all the same: nothing new is sent (no other target, no
 * retry), and the breaker's half-open trial the try took is released then ({@link trial}: a retry
 * is not refused as circuit-broken while nobody waits for the held one; its late outcome still
 * settles the breaker if it comes). A stream is aborted at once, as the vendors stop generating a
 * stream whose reader left (docs/USAGE-WINDOWS.md), but one to Amazon Bedrock, which bills it
 * whole (`billsStreamsCut`): held as a stream (`hold(true)`), its events read on to the usage tap
 * alone (relay.ts, translated.ts), its deadline counted from its last event ({@link touch}); a
 * request held as not streamed that gets an SSE answer is let go then. A JSON answer the relay
 * reads, to a request streamed or not, is held by the relay itself once its headers came, the
 * client still there. A server on this machine or network (vLLM, Ollama, LM Studio) bills
 * nothing: held, it would only generate for nobody.
 */
class ClientGone {
  aborted = false
  reason: unknown = undefined
  /** The try's breaker, when the try took its half-open trial: released when a held request's client leaves. */
  trial: {release(): void} | undefined = undefined
  private listeners: Array<() => void> | undefined = undefined
  /** How long a held request may go on after the client left (ms); undefined: never held. */
  private holdMs: number | undefined = undefined
  /** Where the pools' close finds {@link giveUp} while a held request goes on. */
  private stops: Set<() => void> | undefined = undefined
  private holding = false
  /** Held as a stream ({@link hold}'s `stream`): an SSE answer is read on after the client left. */
  private stream = false
  private deadline: NodeJS.Timeout | undefined = undefined
  /** Told once when the client leaves a held request (relay.ts: the body resumed). */
  private left: (() => void) | undefined = undefined
  /** Ends a held request the client left (made at its leaving). */
  private giveUp: (() => void) | undefined = undefined

  // what undici checks a signal for (`typeof signal.on === 'function'`)
  on(_event: 'abort', listener: () => void): this {
    return this.once(_event, listener)
  }

  once(_event: 'abort', listener: () => void): this {
    if (this.listeners) this.listeners.push(listener)
    else this.listeners = [listener]
    return this
  }

  removeListener(_event: 'abort', listener: () => void): this {
    const listeners = this.listeners
    const at = listeners ? listeners.indexOf(listener) : -1
    if (at !== -1) listeners!.splice(at, 1)
    return this
  }

  /**
   * The upstream requests of this request may be held: the client's leaving gives them up only
   * `ms` later, or when the pools close (`stops`: their `readingOn`).
   */
  canHold(ms: number, stops: Set<() => void>): void {
    this.holdMs = ms
    this.stops = stops
  }

  /**
   * Holds the request under way, if it may be held and its client is still there: whether it is
   * held. `stream`: held as a stream (`billsStreamsCut`), whose SSE answer is read on after the
   * client left ({@link streamHeld}); a request held as not streamed that gets an SSE answer (a
   * relay that forces streaming) is let go, its upstream aborted at the leaving.
   */
  hold(stream = false): boolean {
    if (!this.aborted && this.holdMs !== undefined) {
      this.holding = true
      this.stream = stream
    }
    return this.holding
  }

  /** Whether the upstream request goes on after the client's leaving (or went on past it, still). */
  get held(): boolean {
    return this.holding
  }

  /** Whether the request is held as a stream ({@link hold}): its SSE answer is read on. */
  get streamHeld(): boolean {
    return this.holding && this.stream
  }

  /**
   * A stream read on after its client left gave an event: the deadline counts from now (a stream
   * still generating is not cut at the idle timeout from the leaving; one silent past it is, and
   * undici's body timeout ends one silent between its bytes). Not for a keep-alive blank, which
   * would keep the request held without end (review72 #1), nor for a JSON answer.
   */
  touch(): void {
    if (this.giveUp) this.deadline!.refresh()
  }

  /** `listener` is told when the client leaves a held request (once; a later call replaces it). */
  onLeft(listener: () => void): void {
    this.left = listener
  }

  /**
   * The request is held no longer: an answer not read on (a stream, an answer that failed) is
   * given up at the client's leaving, at once if it left already.
   */
  letGo(): void {
    if (!this.holding) return
    this.unhold()
    if (this.aborted) this.tell()
  }

  /** The request ended: nothing held, no timer left (the listeners are not told). */
  settle(): void {
    if (this.holding) this.unhold()
  }

  abort(reason: unknown): void {
    if (this.aborted) return
    this.aborted = true
    this.reason = reason
    if (this.holding) {
      const giveUp = (this.giveUp = () => this.letGo())
      this.deadline = setTimeout(giveUp, this.holdMs)
      this.deadline.unref()
      this.stops!.add(giveUp)
      this.trial?.release()
      this.trial = undefined
      this.left?.()
      return
    }
    this.tell()
  }

  private unhold(): void {
    this.holding = false
    this.stream = false
    this.left = undefined
    if (this.giveUp) {
      clearTimeout(this.deadline)
      this.stops!.delete(this.giveUp)
      this.giveUp = undefined
    }
  }

  private tell(): void {
    const listeners = this.listeners
    this.listeners = undefined
    if (listeners) for (const listener of listeners) listener()
  }
}

/**
 * Whether a try of `provider` is held after its client left (ClientGone): a vendor's API, which
 * bills the answer it generates; not a server on this machine or network (plain-tools.ts
 * `isLocalServer`: loopback, a private address, a one-label name), which bills nothing and would
 * generate for nobody. The simulator stands for the vendors' APIs.
 */
const holdable = (provider: ProxyTarget['provider']): boolean =>
  provider.origin === 'sim' || !isLocalServer(provider.baseUrl)

/**
 * Whether a stream of `provider` is held after its client left (ClientGone), read on to its end for
 * the usage its upstream bills: Amazon Bedrock's runtime and Mantle endpoints (plain-tools.ts
 * `isAmazonBedrock`), where Bedrock goes on generating a stream whose reader left and bills it whole
 * (BerriAI/litellm #34147, from AWS's cost reports; litellm PR #36008, from Bedrock's invocation
 * logs, both on the runtime's own API: the OpenAI-compatible paths and Mantle are inferred to bill
 * alike), where OpenAI and Anthropic direct stop (docs/USAGE-WINDOWS.md). Vertex AI is not known
 * to: its streams are aborted as the others. One lookup per base URL (memoized).
 */
const billsStreamsCut = (provider: ProxyTarget['provider']): boolean => isAmazonBedrock(provider.baseUrl)

/** A provider and model as the log's notes name them (`provider/model`). */
const named = (p: string | null, m: string | null): string => (m ? `${p ?? ''}/${m}` : (p ?? 'none'))

/** A usage's tokens in words: its input, and its output when there is any. */
const tokensSaid = (usage: Usage): string =>
  usage.outputTokens > 0
    ? `${usage.inputTokens} input and ${usage.outputTokens} output tokens`
    : `${usage.inputTokens} input tokens`

/**
 * The log row's note on the usage of tries the client never saw (an empty answer, a translated
 * stream that failed while its start was held) of another provider or model than the row's: the
 * tokens said in words, counted in a row of their own under that provider and model (review67 #2;
 * ProxyResult `billedTries`), not under the row's.
 */
function unseenNote(
  provider: string | null,
  model: string | null,
  usage: Usage,
  rowProvider: string | null,
  rowModel: string | null,
): string {
  return `${named(provider, model)} billed ${tokensSaid(usage)} for what the client never got (counted in a row of its own, not in this one, which is ${named(rowProvider, rowModel)}'s)`
}

/**
 * The `error` of a billed try's own row: why the client never got it, and whose row has its answer.
 * (The row is marked as a billed try by its `billed_try` flag, not by these words: log-entry.ts;
 * rows written before the flag are known by them once: store/usage-sql.ts `BILLED_TRY_NOTE`.)
 */
function billedTryError(
  why: string | undefined,
  usage: Usage,
  rowProvider: string | null,
  rowModel: string | null,
): string {
  return `${why ? `${why}; ` : ''}billed ${tokensSaid(usage)} for what the client never got (its request's answer is in the row of ${named(rowProvider, rowModel)})`
}

/**
 * Waits `ms` (with `sleep`, else a timer): true when the time is up, false at once when the client
 * leaves first.
 */
function pause(ms: number, clientGone: ClientGone, sleep?: (ms: number) => Promise<void>): Promise<boolean> {
  if (clientGone.aborted) return Promise.resolve(false)
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined
    const gone = (): void => {
      if (timer) clearTimeout(timer)
      resolve(false)
    }
    const done = (): void => {
      clientGone.removeListener('abort', gone)
      resolve(!clientGone.aborted)
    }
    // (a held request, not streamed (Codex's compaction): its listeners are told only when it is
    // given up, the leaving itself through `onLeft`; no relay reads meanwhile)
    if (clientGone.held) clientGone.onLeft(gone)
    else clientGone.once('abort', gone)
    if (sleep) void sleep(ms).then(done, done)
    else timer = setTimeout(done, ms)
  })
}

/**
 * Waits for Codex's request after `upstream`'s 429 as ./rate-limit.ts says (`retried` tries again
 * and `waited` ms so far): the milliseconds it waited, when the request may go again now (the
 * target's breaker permit taken); else the 429's body, read, for the client (a wait too long or
 * not stated short, the breaker open, the client gone). Its body is read first (a JSON error,
 * small): Google states the wait only there.
 */
async function waitFor429(
  upstream: {headers: Record<string, string | string[] | undefined>; body: {text(): Promise<string>}},
  target: ProxyTarget,
  clientGone: ClientGone,
  sleep: ProxyOptions['sleep'],
  retried: number,
  waited: number,
): Promise<number | string | Error | undefined> {
  // Codex retries a 429 that carries `retry-after` itself, waiting what it says, up to 5 times
  // ("Reconnecting... 1/5": measured with Codex 0.171; it reads no `retry-after-ms`): that one
  // goes to it as it came. (A compressed body or a stream is not read here either.)
  if (
    typeof upstream.headers['retry-after'] === 'string' ||
    upstream.headers['content-encoding'] !== undefined ||
    /text\/event-stream/i.test(String(upstream.headers['content-type'] ?? ''))
  )
    return undefined
  const text = await errorBody(upstream.body)
  if (typeof text !== 'string') return text
  const said = parseRetryAfter(upstream.headers)
  const read = said === undefined ? bodyWaitMs(text) : undefined
  const wait = said ?? read?.retryMs ?? RETRY_429.fixedMs[retried] ?? RETRY_429.capMs
  if (read?.long || waited + wait > RETRY_429.capMs) return text
  // (an open breaker, or a half-open trial that this 429 reopened, is not waited for)
  if (target.breaker && !target.breaker.canTry()) return text
  if (!(await pause(wait, clientGone, sleep))) return text
  // taken as any try takes it (the breaker may have opened meanwhile, on other requests' failures)
  if (target.breaker && !target.breaker.tryAcquire()) return text
  return wait
}

/**
 * What an item id gwctl mints holds after its prefix (protocols/responses-items.ts `newItemId`),
 * looked for in a Responses body passed through (`namesHeldItems`).
 */
const MINTED_MARK = '_gw'
/** An id gwctl mints, in an upstream's words (protocols/responses-items.ts `mintedHere`). */
const MINTED_ID = /\b[a-z]+_gw[0-9a-f]{32}\b/

/** Sends one request through the targets; never throws for upstream trouble (see the result). */
export async function proxyRequest(
  request: ProxyRequest,
  res: ServerResponse,
  options: ProxyOptions,
): Promise<ProxyResult> {
  const started = performance.now()
  const {family} = request
  const env = options.env ?? process.env
  const pools = options.pools ?? defaultPools()
  const prepared = prepare(request)
  // A request not streamed waits for its answer's headers up to the idle timeout (./pools.ts)
  // from the request's last target: one with another target after it goes on at the first-byte
  // timeout, as the policy asks; a count of tokens is answered at once by a live upstream.
  const answerWait = answerWaitMs(options.timeouts, prepared.stream || COUNT_TOKENS.test(request.url))
  const attempts: ProxyAttempt[] = []
  const result: ProxyResult = {
    status: 0,
    provider: null,
    model: null,
    requestedModel: prepared.requestedModel,
    fallback: false,
    stream: prepared.stream,
    usage: null,
    latencyMs: 0,
    ttfbMs: null,
    error: null,
    requestId: '',
    clientAborted: false,
    attempts,
  }
  /** The client left before the answer's headers went out. */
  let leftEarly = false
  /** What a refusal of the upstream changed in this request (adaptations.ts), for its log row. */
  const adapted: string[] = []
  /**
   * The usage of answers the client never saw but their upstream billed (Gemini's empty answer,
   * translated.ts `AnsweredNothing`; a translated stream that failed while its start was held,
   * after a usage-only chunk), summed per provider and model (keyed by both, JSON).
   */
  // (made by the first try whose usage the client never got: most requests have none)
  let unseen: Map<string, Omit<BilledTry, 'error'> & {why?: string}> | undefined
  /**
   * Moves the usage of the try that just failed (`why`) or answered nothing into {@link unseen},
   * with what its own row would need should it be of another provider or model than the answer's
   * (its `status`: BilledTry's; the last try's of that provider and model, as its `why` is).
   */
  const keepUnseen = (why: string | undefined, status: number): void => {
    if (result.usage) {
      const key = JSON.stringify([result.provider, result.model])
      unseen ??= new Map()
      const kept = unseen.get(key)
      unseen.set(key, {
        provider: result.provider,
        model: result.model,
        usage: addBilled(kept?.usage ?? null, result.usage),
        why: why ?? kept?.why,
        status,
        fallback: result.fallback,
        ...(result.upstreamFamily ? {upstreamFamily: result.upstreamFamily} : {}),
        latencyMs: performance.now() - started,
      })
    }
    result.usage = null
  }
  const finish = (): ProxyResult => {
    result.latencyMs = performance.now() - started
    // a request not streamed whose client left before any answer went on (ClientGone): an answer
    // that was no success (an error answer, read with nobody to send it to) is a 499 row as any
    // client's leaving before an answer is, with the upstream's words after it
    if (leftEarly && result.status !== 499 && !prepared.stream) {
      result.error = result.error
        ? `client closed the connection; ${result.error}`
        : 'client closed the connection'
      result.status = 499
    }
    // The row's tokens count under its provider and model (the hourly roll-up, `gwctl usage`, the
    // cost estimate at that model's prices): an unseen answer's go into its usage only when the
    // same provider and model are the row's (a resend's answer, a 5xx after it with none after);
    // another's (a fallback's answer) would put them on the wrong line and price, so they go in a
    // row of their own, of their provider and model (a store row holds one: review67 #2), and this
    // row says them in words
    if (unseen)
      for (const kept of unseen.values()) {
        if (kept.provider === result.provider && kept.model === result.model)
          result.usage = addBilled(result.usage, kept.usage)
        else {
          const note = unseenNote(kept.provider, kept.model, kept.usage, result.provider, result.model)
          result.error = result.error ? `${result.error}; ${note}` : note
          const {why, ...tried} = kept
          ;(result.billedTries ??= []).push({
            ...tried,
            error: billedTryError(why, kept.usage, result.provider, result.model),
          })
        }
      }
    // whatever the outcome, the row says what went again and how
    if (adapted.length > 0) result.error = [result.error, ...adapted].filter(Boolean).join('; ')
    return result
  }

  // Client disconnect (or the caller's signal) aborts whatever upstream request is running.
  const clientGone = new ClientGone()
  const onClose = (): void => {
    if (!res.writableFinished) {
      result.clientAborted = true
      leftEarly = !res.headersSent
      clientGone.abort(new Error('client closed the connection'))
    }
  }
  // `on` + `off` rather than `once`: no wrapper per request (onClose runs at most once anyway)
  res.on('close', onClose)
  const onSignal = (): void => clientGone.abort(options.signal?.reason)
  options.signal?.addEventListener('abort', onSignal, {once: true})
  // (a request not streamed to a vendor's API goes on after its client left, for its usage:
  // ClientGone, held for each try)
  clientGone.canHold(options.timeouts.idleMs, pools.readingOn)
  const relayContext: RelayContext = {
    res,
    family,
    result,
    started,
    addedUsage: prepared.addedUsage,
    timeouts: options.timeouts,
    clientGone,
    clientHeaders: request.headers,
  }

  const targets = options.targets
  const carry = options.carry
  /** The request for untranslated targets, once looked at for wrapped values. */
  let stripped: typeof prepared | undefined
  /** The server the items gwctl held were put back into {@link stripped} for (its reasoning only to it). */
  let heldFor: string | undefined
  /** Whether the client's body holds Claude Code's tool search ({@link holdsDeferralSent}). */
  let heldDeferral: boolean | undefined
  /** The client's request decoded for translation (on the first translated target tried). */
  let client: ClientRequest | undefined
  /** The client's request holds a cache key derived for a target (not its own, nor its header's). */
  let derivedKey = false
  let tried = 0
  // the last failed try went silent (a first-byte or idle timeout): 504 rather than 502
  let silent = false
  // set by a try after which no other target may be tried (a failure with fallbacks off)
  let stop = false
  /** Codex's tries again after a 429, and the milliseconds waited for them (./rate-limit.ts). */
  let retried429 = 0
  let waited429 = 0
  /** The first translated target that could not take the request, when a later one was tried. */
  let untranslatable:
    {message: string; provider: string; upstreamFamily: ProxyResult['upstreamFamily']} | undefined
  try {
    for (let i = 0; i < targets.length; i++) {
      if (clientGone.aborted || stop) break
      const target = targets[i]
      const acquired = acquireTarget(target, env, attempts)
      if (!acquired) continue
      if ('skipped' in acquired) {
        result.error = acquired.skipped
        continue
      }
      const {credential} = acquired
      // (the trial taken leaves the breaker half-open; a closed one stays closed)
      clientGone.trial = target.breaker?.state === 'half-open' ? target.breaker : undefined
      if (prepared.stream ? billsStreamsCut(target.provider) : holdable(target.provider))
        clientGone.hold(prepared.stream)
      else clientGone.letGo()
      // Whatever ends this try (an exception included) settles the breaker permit: a half-open
      // trial left taken would keep the provider circuit-broken until the gateway restarts.
      const model = upstreamModel(target, prepared.requestedModel ?? undefined) ?? null
      let body: Buffer
      let translated: TranslatedRequest | undefined
      /** What was learned of the upstream model when a request passed through (chat, Messages, Responses) was sent. */
      let passedWith: UpstreamAdaptation | undefined
      try {
        if (target.translate) {
          const sent = await translateFor(target, model)
          if (sent === 'answered') {
            target.breaker?.release()
            return finish()
          }
          ;({body} = sent)
          translated = sent
        } else if (
          family === 'responses' &&
          // (what was learned of the model: looked up once, kept for the refusal below)
          plainWanted(
            target,
            (passedWith = adaptations.get(target.provider.name, model ?? prepared.requestedModel ?? '')),
          ) &&
          (translated = await plainRequest(target, model, true)) !== undefined
        ) {
          // Codex's tool shapes to a Responses server that takes plain functions (./plain-tools.ts)
          body = translated.body
        } else {
          // (held items put back for another server: its reasoning is not this one's)
          if (heldFor !== undefined && heldFor !== serverOf(target)) stripped = undefined
          // most bodies hold no wrapped value: no await, nothing loaded for them
          stripped ??=
            family === 'chat' || (request.body.indexOf(WRAPPED_MARKER) === -1 && !namesHeldItems())
              ? prepared
              : undefined
          body = (stripped ?? (await untranslated(target))).bodyFor(model)
          // an upstream found to refuse something of a chat or Messages body (adaptations.ts):
          // what was learned of it applies to a client's requests passed through, as to
          // translated ones
          if (family === 'chat' || family === 'messages' || family === 'gemini') {
            passedWith = adaptations.get(target.provider.name, model ?? prepared.requestedModel ?? '')
            body = await passedBytes(body, target, passedWith, model)
          } else if (family === 'responses') {
            if (holdsNullType(body)) body = await typedToolSchemas(body)
            body = passedResponses(body, target, passedWith)
          }
        }
      } catch (error) {
        target.breaker?.release()
        // (loaded where a codec threw: a translated target, a plain one's item_reference)
        const codecs = translationLoaded?.[0]
        // state only the Responses server that made it holds (ir.ts ServerStateError): a
        // previous_response_id, an item_reference gwctl did not mint, remote compaction
        // (an item gwctl minted and lost: its refusal at once, no server has it)
        const lost = codecs !== undefined && error instanceof codecs.ItemReferenceError && error.lost
        const serverState = codecs !== undefined && error instanceof codecs.ServerStateError && !lost
        const refused =
          error instanceof RequestBodyError ||
          serverState ||
          lost ||
          (target.translate && codecs !== undefined && error instanceof codecs.TranslationError)
        if (!refused) throw error
        const message = target.translate
          ? `the request cannot be translated from ${family} to ${target.provider.family}: ${(error as Error).message}`
          : (error as Error).message
        if (
          options.fallbacks &&
          !lost &&
          (serverState
            ? // only a Responses target passed through as it came takes it: skipped for one after
              // this; where none is, skipped after a target that failed (its failure is the answer)
              tried > 0 || canTryAfter(targets, i, true)
            : target.translate && client !== undefined && canTryAfter(targets, i))
        ) {
          // decoded, but not for this upstream's family, and nothing was sent: a later target of
          // another family may take it (a web search, which chat completions has no tool for; a
          // reference to a server's state, which only a Responses target passed through has);
          // answered as below if none does. (A request the IR cannot hold is refused at once.)
          const note = serverState
            ? `skipped ${target.provider.name}: ${(error as {named: string}).named} is held by the Responses server that made it, not by gwctl`
            : message
          // (after a failed try the answer is that failure's, which a try that fell back left unsaid)
          if (serverState && tried > 0) result.error ??= attempts.findLast((a) => !a.skipped)?.error ?? null
          attempts.push({
            provider: target.provider.name,
            skipped: serverState ? 'server-state' : 'untranslatable',
            error: note,
          })
          untranslatable ??= {message, provider: target.provider.name, upstreamFamily: target.provider.family}
          continue
        }
        result.status = 400
        result.error = message
        result.provider = target.provider.name
        result.upstreamFamily = target.translate ? target.provider.family : undefined
        result.requestId = sendFamilyError(res, family, 400, message)
        return finish()
      }
      try {
        if (await tryTarget(i, model, body, credential, translated, passedWith)) return finish()
      } catch (error) {
        target.breaker?.release()
        throw error
      }
    }

    if (result.clientAborted || clientGone.aborted) {
      result.clientAborted = true
      result.status = 499
      result.error = 'client closed the connection'
      return finish()
    }
    if (untranslatable && tried === 0) {
      // no later target took it either: the first refusal, as when there is no fallback
      result.status = 400
      result.error = untranslatable.message
      result.provider = untranslatable.provider
      result.upstreamFamily = untranslatable.upstreamFamily
      result.requestId = sendFamilyError(res, family, 400, untranslatable.message)
      return finish()
    }
    answerNoTarget(res, family, result, targets, tried, silent)
    return finish()
  } finally {
    res.off('close', onClose)
    options.signal?.removeEventListener('abort', onSignal)
    clientGone.settle()
  }

  /**
   * Whether a Responses body may name, by `item_reference` (or an item of an `id` alone), items
   * gwctl minted on its translated answers (held, or lost to a restart): one byte search, for the
   * mark every id gwctl mints holds (the AI SDK with `store` on; protocols/held-items.ts looks at
   * each string of that shape).
   */
  function namesHeldItems(): boolean {
    return (
      family === 'responses' &&
      !!carry?.items &&
      // a body with `store: false` (Codex) names no stored item: not searched (an upstream's
      // refusal that names one of gwctl's ids is read instead: tryTarget)
      !prepared.storeOff &&
      request.body.indexOf(MINTED_MARK) !== -1
    )
  }

  /**
   * The request as an untranslated target gets it. A client answered through translation before
   * may hold gwctl-wrapped reasoning (`gwx1.`) that its own vendor would refuse, and references to
   * items gwctl minted, which that server never saw: such a body (found by a byte search, so others
   * cost nothing more) goes without those values, and with the items themselves, their reasoning
   * only where `target` made it (protocols/held-items.ts).
   */
  async function untranslated(target: ProxyTarget): Promise<typeof prepared> {
    let source = request
    heldFor = undefined
    if (carry?.items && namesHeldItems()) {
      const {withHeldItems} = await import('../../protocols/held-items.js')
      let body: Buffer | undefined
      try {
        body = withHeldItems(request.body, carry.items, {server: serverOf(target)})
      } catch (error) {
        // (an id gwctl lost: refused as the codecs' ItemReferenceError, which the caller reads)
        await loadTranslation()
        throw error
      }
      if (body) {
        source = {...request, body, json: undefined, facts: undefined}
        heldFor = serverOf(target)
      }
    }
    const same = (): typeof prepared => (stripped = source === request ? prepared : prepare(source))
    if (source.body.indexOf(WRAPPED_MARKER) === -1) return same()
    const {stripWrapped} = await import('../../protocols/strip.js')
    let json: unknown = source.json
    try {
      json ??= parseJsonBytes(source.body)
    } catch {
      return same()
    }
    if (!json || typeof json !== 'object' || Array.isArray(json)) return same()
    const copy = structuredClone(json) as Record<string, unknown>
    if (!stripWrapped(family, copy)) return same()
    return (stripped = prepare({...source, body: Buffer.from(JSON.stringify(copy)), json: copy}))
  }

  /**
   * Whether Responses `target`, a server that is not OpenAI's, gets Codex's namespaces, custom
   * tools and `additional_tools` item as plain functions (./plain-tools.ts): when the body holds
   * one of them and the server is on this machine or the local network (not the simulator, which
   * is OpenAI's API), or refused them before. The provider's `plainTools` setting overrides the
   * guess: `always` whatever the host, `never` not at all. A body with Codex's `agent_message`
   * items goes so to any server that is not OpenAI's (./plain-tools.ts `holdsAgentMessage`). Any
   * other request passes through as it came.
   */
  function plainWanted(target: ProxyTarget, learned: UpstreamAdaptation | undefined): boolean {
    const provider = target.provider
    const setting = provider.plainTools
    if (provider.family !== 'responses' || setting === 'never' || COMPACT.test(request.url)) return false
    const plain =
      setting === 'always' ||
      learned?.plainTools === true ||
      (provider.origin !== 'sim' && isLocalServer(provider.baseUrl))
    if (plain && holdsOpenAiToolShapes(request.body)) return true
    // Codex's `agent_message` items (a sub-agent's task, its report) as user messages to any server
    // that is not OpenAI's, by rule: DeepSeek drops them without a word, so no refusal could teach
    // it (the host looked at first: the body searched only for such a server)
    return (
      (plain || (provider.origin !== 'sim' && !isOpenAiResponsesHost(provider.baseUrl))) &&
      holdsAgentMessage(request.body)
    )
  }

  /**
   * The request for `target` with every tool a plain function; undefined (passed through as it
   * came) for one the Responses codecs cannot hold. An `item_reference` the gateway does not hold
   * is no such request: passed through, the server would get the raw body and refuse its tool
   * shapes, not the reference (review73). Before anything was sent (`beforeSending`) it is thrown,
   * and the caller skips this target for a later one passed through as it came, or answers the
   * gateway's 400 that names the id; after the server refused the body passed through (the
   * learned path), that refusal goes back.
   */
  async function plainRequest(
    target: ProxyTarget,
    model: string | null,
    beforeSending = false,
  ): Promise<TranslatedRequest | undefined> {
    const [translate] = translationLoaded ?? (await loadTranslation())
    try {
      const sent = await translateFor(target, model, true)
      return sent === 'answered' ? undefined : sent
    } catch (error) {
      if (beforeSending && error instanceof translate.ItemReferenceError) throw error
      if (error instanceof translate.TranslationError) return undefined
      throw error
    }
  }

  /**
   * The request for a translated target, decoded once for all of them: the body and path in the
   * provider's family, or `'answered'` when the gateway answered itself (a count of tokens, which
   * an upstream of another family has no endpoint for). Throws TranslationError for a request the
   * IR cannot hold.
   */
  async function translateFor(
    target: ProxyTarget,
    model: string | null,
    plainTools = false,
    /** The conversation to encode in place of the client's (its thinking of gwctl's wraps left out). */
    conversation?: ClientRequest['request'],
  ): Promise<TranslatedRequest | 'answered'> {
    const [translate] = translationLoaded ?? (await loadTranslation())
    // (a later target of the client's own family may take it, passed through: see the refusal)
    if (family === 'responses' && COMPACT.test(request.url))
      throw new translate.ServerStateError(translate.REMOTE_COMPACTION_REFUSAL, 'remote compaction')
    if (!client) {
      let json: unknown = request.json
      if (json === undefined && request.body.length > 0) {
        try {
          json = parseJsonBytes(request.body)
        } catch {
          throw new translate.TranslationError('the request body is not JSON')
        }
      }
      // Gemini's countTokens may wrap the request it counts
      const wrapped = (json as {generateContentRequest?: unknown} | undefined)?.generateContentRequest
      if (family === 'gemini' && wrapped && typeof wrapped === 'object') json = wrapped
      client = translate.decodeClientRequest(family, json ?? {}, {
        model: prepared.requestedModel,
        stream: prepared.stream,
        carry,
        // (refused below for a target of another family)
        toResponses: family === 'responses',
        // (whose conversation a chat client's is: its text answers' reasoning kept under it)
        ...(family === 'chat' && carry
          ? {carryScope: `${options.agentId ?? ''}\0${options.project ?? ''}\0${options.policyId ?? ''}`}
          : {}),
      })
      // blocks no other family has, each sent as a line that says so (messages.ts): the row says which
      const leftOut = client.request.leftOut
      if (leftOut) adapted.push(`left out ${leftOut.join(', ')} blocks: a line in place of each`)
    }
    // the conversation a Responses server holds: no other family's upstream has it
    if (client.request.previousResponseId && !plainTools)
      throw translate.previousResponseRefusal(client.request.previousResponseId)
    if (COUNT_TOKENS.test(request.url)) {
      const tokens = translate.estimateInputTokens(client.request)
      const text = JSON.stringify(
        family === 'gemini' ? {totalTokens: tokens, estimate: true} : {input_tokens: tokens, estimate: true},
      )
      result.status = 200
      result.provider = target.provider.name
      result.model = model
      result.upstreamFamily = target.provider.family
      result.requestId = mintRequestId()
      result.ttfbMs = performance.now() - started
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(text)),
        'x-gw-estimate': 'chars/4',
        [requestIdHeader(family)]: result.requestId,
      })
      res.end(text)
      return 'answered'
    }
    const upstreamModelName = model ?? client.request.model ?? ''
    // a conversation whose body named no cache key (OpenCode's Anthropic provider, Gemini CLI, Qwen
    // Code): the session its headers name, else, for an upstream that routes to its cache by a key,
    // one derived from its first turn (protocols/cache-key.ts): a few header lookups, and a hash of
    // at most ~1 KB, only for such a request (not for a Responses client's own tools made plain)
    // (the request is every target's: a key derived for one that routes by it is taken off again for
    // a fallback that does not)
    if (derivedKey && (plainTools || !routesByCacheKey(target.provider))) {
      client.request.cacheKey = undefined
      derivedKey = false
    } else if (client.request.cacheKey === undefined && !plainTools) {
      const named = translate.headerCacheKey(request.headers)
      if (named !== undefined) client.request.cacheKey = named
      else if (routesByCacheKey(target.provider)) {
        client.request.cacheKey = translate.derivedCacheKey(client.request, options.agentId)
        derivedKey = true
      }
    }
    const adapt = adaptations.get(target.provider.name, upstreamModelName)
    const ctx: CodecContext = plainTools ? {carry, plainTools} : {carry}
    // OpenAI's own chat completions: the output limit as `max_completion_tokens` (its reasoning
    // models refuse `max_tokens`), and a cache key (Codex's, a Claude Code session's) as it takes
    // it (chat.ts `cacheKeyField`); the host looked at for a chat upstream only
    if (target.provider.family === 'chat' && isOpenAiApi(target.provider.baseUrl)) {
      ctx.openAiApi = true
      // (and a system message the client sent mid-conversation where it stood: ir.ts `inPlaceSystem`)
      if (client.request.placedSystem) ctx.systemInPlace = true
      if (client.request.cacheKey !== undefined) ctx.cacheKeys = true
    } else if (
      client.request.cacheKey !== undefined &&
      target.provider.family === 'chat' &&
      isMoonshotApi(target.provider.baseUrl)
    )
      ctx.cacheKeys = true
    // a Qwen model on DashScope (named `qwen...`, not a distill of one: `deepseek-r1-distill-qwen-32b`)
    // caches explicitly where a content part is marked (chat.ts `cacheMarksFor`): Claude Code's
    // marks, or marks placed as it places them, go there too
    if (
      target.provider.family === 'chat' &&
      /^qwen/i.test(upstreamModelName.slice(upstreamModelName.lastIndexOf('/') + 1)) &&
      isDashScopeApi(target.provider.baseUrl)
    )
      ctx.qwenCacheMarks = true
    // a model on a host that drops earlier turns' reasoning unless asked (DashScope's Qwen3.6 on,
    // Z.AI's GLM-5, Moonshot's Kimi K2.6): asked to keep it, for a request with reasoning on (the
    // model's name looked at only then, the host only for such a name: plain-tools.ts)
    if (target.provider.family === 'chat' && client.request.reasoning && !client.request.reasoning.disabled) {
      const preserved = preservedThinkingOf(upstreamModelName, target.provider.baseUrl)
      if (preserved && !adapt?.noPreservedThinking) ctx.preservedThinking = preserved
    }
    // GLM-4.6 on at Z.AI or BigModel streams a tool call's arguments only when asked
    // (plain-tools.ts `asksToolStream`): a streamed request with tools asks (the host looked at
    // once per provider, the model's name only on such a host; a refusal of the field learned
    // away as any other's, adaptations.ts)
    if (
      target.provider.family === 'chat' &&
      client.request.stream &&
      (client.request.tools.length > 0 || client.request.builtinTools?.length) &&
      zaiProvider(target.provider) &&
      asksToolStream(upstreamModelName)
    )
      ctx.toolStream = true
    // Azure OpenAI keeps the items the next turn names by id only with `store: true`: by its host
    // (looked at once per provider, only for a Responses upstream), or learned from its refusal
    if (target.provider.family === 'responses' && (adapt?.storeTrue || azureProvider(target.provider)))
      ctx.storeTrue = true
    // OpenAI's own hosts (and Azure learned so; the simulator, which stands for them) take an
    // assistant message's `phase`, which GPT-5.3 and later want back (responses-request.ts)
    if (
      target.provider.family === 'responses' &&
      !plainTools &&
      (ctx.storeTrue || target.provider.origin === 'sim' || isOpenAiResponsesHost(target.provider.baseUrl))
    ) {
      ctx.phases = true
      // a system message the client sent mid-conversation as a developer message where it stood, the
      // instructions the same on every turn (ir.ts `inPlaceSystem`; other servers keep the fold, the
      // simulator's stand-in for one too: ./plain-tools.ts `simStandsForOtherServer`)
      if (
        client.request.placedSystem &&
        (target.provider.origin !== 'sim' ||
          !simStandsForOtherServer(upstreamModelName, request.headers['x-sim-quirk']))
      )
        ctx.systemInPlace = true
    }
    // DeepSeek's Responses API refused a turn without its reasoning_text: every reasoning item goes
    // back with its text, an empty one where Codex kept none (learned, with `plainTools`)
    if (plainTools && adapt?.reasoningTextBack) ctx.reasoningTextBack = true
    // a local server reads a model's switch of thinking off from its chat template's arguments
    // (thinking-off.ts `thinkingOffFields`), and gets no default `max_tokens` (chat.ts): a map
    // lookup only for a request that asked for no thinking or set no limit (not the simulator,
    // which stands for the vendors' APIs)
    if (
      (client.request.reasoning?.disabled || client.request.maxTokens === undefined) &&
      target.provider.family === 'chat' &&
      target.provider.origin !== 'sim' &&
      isLocalServer(target.provider.baseUrl)
    )
      ctx.localServer = true
    const {body, path, sent} = translate.encodeUpstreamRequest(
      conversation ? {...client, request: conversation} : client,
      target.provider.family,
      upstreamModelName,
      ctx,
      adapt,
    )
    // what the encoder changed for this upstream (an image it takes none of, left out): said once
    if (sent.notes) for (const note of sent.notes) if (!adapted.includes(note)) adapted.push(note)
    // (every field named: one shape for every translation)
    const translation = {
      client,
      carry,
      thinkOpen: adapt?.thinkOpen === true,
      learned: adaptations,
      upstreamModel: upstreamModelName,
    }
    return {
      body,
      path,
      translation,
      sent,
      upstreamModel: upstreamModelName,
      ...(conversation ? {conversation} : {}),
    }
  }

  /** Whether the client's body holds `defer_loading` or `tool_reference` (one byte search a request). */
  function holdsDeferralSent(): boolean {
    return (heldDeferral ??= holdsDeferral(request.body))
  }

  /**
   * Whether `target`'s upstream model is Claude's (a relay in front of Anthropic's models): by its
   * name, never at a vendor's host that serves its own models only (Z.AI's Anthropic endpoint
   * without a model mapping gets Claude Code's `claude-…` name for GLM).
   */
  function isClaudeUpstream(target: ProxyTarget): boolean {
    return (
      isClaudeModel(upstreamModel(target, prepared.requestedModel ?? undefined) ?? prepared.requestedModel) &&
      !ownModelsOnly(target.provider)
    )
  }

  /**
   * Whether a Messages body passed through to `target` goes with Claude Code's tool search done
   * by the gateway (./tool-search.ts): to a server that is not Anthropic's API, by rule for a model
   * that is not Claude's, or learned (`deferralOff`) from a relay in front of Claude.
   */
  function loadsDeferredTools(target: ProxyTarget, learned: UpstreamAdaptation | undefined): boolean {
    return (
      family === 'messages' &&
      !isAnthropicApi(target.provider.baseUrl) &&
      (learned?.deferralOff === true || !isClaudeUpstream(target))
    )
  }

  /**
   * A chat or Messages body passed through to `target`, as it goes upstream: with what was learned
   * of its model (`learned`) applied; a Messages body from Claude Code to a server other than
   * Anthropic's API without Claude Code's attribution line, which changes every request and would
   * miss that server's prefix cache on every turn (./billing-line.ts), and with its mid-conversation
   * system messages in the user turns beside them (./system-turns.ts); a streamed chat body with
   * tools to GLM-4.6 on at Z.AI asking to stream its calls' arguments (`model`: the upstream's).
   */
  async function passedBytes(
    body: Buffer,
    target: ProxyTarget,
    learned: UpstreamAdaptation | undefined,
    model: string | null,
  ): Promise<Buffer> {
    if (
      family === 'messages' &&
      sendsBillingLine(request.headers['user-agent']) &&
      !isAnthropicApi(target.provider.baseUrl)
    ) {
      // (its mid-conversation system messages too, which only Anthropic takes: ./system-turns.ts;
      // before what was learned, which holds the effort a statement hoisted sets to what the
      // model takes, and keeps away an effort it refused)
      body = withoutBillingBlock(withSystemTurnsPlaced(body))
    }
    // Claude Code's auto-mode `safeguards`, which only Anthropic's API answers (./safeguards.ts;
    // the betas go in forwardHeaders)
    if (
      family === 'messages' &&
      asksSafeguards(request.headers['anthropic-beta']) &&
      !isAnthropicApi(target.provider.baseUrl)
    )
      body = withoutSafeguards(body, sentObject)
    // Claude Code's auto-mode classifier call (not streamed) to a server that is not Anthropic's,
    // without `thinking`: sent with thinking off, or a model that thinks by default misses the
    // verdict's deadline (../../protocols/classifier.ts; a byte search of the unstreamed bodies only)
    if (
      family === 'messages' &&
      !prepared.stream &&
      sendsBillingLine(request.headers['user-agent']) &&
      !isAnthropicApi(target.provider.baseUrl) &&
      holdsClassifierPrompt(body)
    ) {
      const sent = sentObject(body)
      const off = sent ? classifierThinkingOff(sent) : undefined
      if (off) body = Buffer.from(JSON.stringify(off))
    }
    // Claude Code's 1-hour cache (`ttl`, `scope` of its `cache_control`s) to a server that is not
    // Anthropic's: left out for a model that is not Claude's (no such server takes it), or where a
    // relay in front of Claude refused it (`cacheTtlOff`); a byte search first (./cache-ttl.ts)
    if (
      family === 'messages' &&
      !isAnthropicApi(target.provider.baseUrl) &&
      (learned?.cacheTtlOff || !isClaudeUpstream(target))
    )
      body = withoutCacheTtl(body) ?? body
    // Claude Code's tool search (`defer_loading` tools, `tool_reference` blocks) to such a server:
    // the deferred tools loaded as a translated request's are, for a model that is not Claude's (no
    // such server implements deferral), or where a relay in front of Claude refused it
    // (`deferralOff`); a byte search first (./tool-search.ts, ../../protocols/deferred-tools.ts)
    if (loadsDeferredTools(target, learned) && holdsDeferralSent())
      body = withDeferredToolsLoaded(body) ?? body
    // (a tool schema's `"type": null` is typed only in a Responses body passed through, Codex
    // Desktop's: no chat or Messages client is known to send one, and its byte search would cost
    // every Claude Code request ~20 µs a 64 KB body: passedResponses, docs/TRANSLATION.md)
    // a strict host's refusal of Claude Code's tools' members (`eager_input_streaming`): cut out of
    // every tool in the bytes (./top-fields.ts)
    if (family === 'messages' && learned?.toolMembers !== undefined)
      body = withoutItemMembers(body, 'tools', learned.toolMembers) ?? body
    // a model that refused a turn's unsigned first call (learned: Gemini 3 given another model's
    // calls): the skip value written into each such part's bytes, every other byte as it came; a
    // byte search first, only a body that holds a call has a turn to sign (./part-signatures.ts)
    if (
      family === 'gemini' &&
      learned?.thoughtSignatures === 'part' &&
      body.indexOf('"functionCall"') !== -1
    ) {
      const {withPartSignatures} = await import('../../protocols/part-signatures.js')
      body = withPartSignatures(body) ?? body
    }
    if (rewritesPassed(family, learned)) {
      // (what it left out, said on the log row once)
      const notes: string[] = []
      body = await passedBody(family as 'chat' | 'messages' | 'gemini', body, learned!, notes)
      for (const note of notes) if (!adapted.includes(note)) adapted.push(note)
    } else if (family === 'messages') {
      // its top-level fields a strict host refused (Claude Code's `diagnostics`, `speed`,
      // `context_management`...): cut out of the bytes, every other as it came (./top-fields.ts)
      if (learned?.drop !== undefined) body = withoutTopFields(body, learned.drop) ?? body
      // a model that takes thinking only on (Kimi's Anthropic endpoints, learned): a body that
      // turns it off or leaves it out goes with the least budget, in its bytes; one that forces a
      // call is written again from its parse (its prompt asks for the call)
      if (learned?.claude?.thinkingOff === 'least_budget') {
        const least = withLeastThinking(body)
        body = least === 'unsafe' ? await passedBody('messages', body, learned, []) : (least ?? body)
      }
    }
    // a chat client's streamed request to GLM-4.6 on at Z.AI or BigModel: asked to stream its
    // calls' arguments where it offers tools (./plain-tools.ts `withToolStream`), unless a refusal
    // taught it away (the host looked at once per provider, the model's name only on such a host,
    // the bytes only then)
    if (
      family === 'chat' &&
      prepared.stream &&
      zaiProvider(target.provider) &&
      !learned?.drop?.includes('tool_stream') &&
      asksToolStream(model ?? prepared.requestedModel ?? '')
    )
      body = withToolStream(body) ?? body
    return body
  }

  /**
   * Codex's body passed through to a Responses server, as it goes upstream, with what was learned
   * of its model applied: its Lite request as for a model that is not Lite where the model refused
   * it (`liteOff`, ./plain-tools.ts `withoutLiteItem`), each tool call's output right after the
   * call (`adjacentOutputs`, DeepSeek: ./plain-tools.ts `withAdjacentOutputs`); and `store: false`
   * as `store: true` to Azure OpenAI, by its host or learned from its refusal (`storeTrue`), which
   * keeps no items otherwise and refuses the ids Codex sends on the next turn (./plain-tools.ts
   * `withStoreTrue`; Codex's requests only, as Codex itself does for a provider it knows is
   * Azure); without the top-level fields the model's server refused as fields it does not know
   * (`drop`: Codex 0.155's `access_programs`, cut out of the bytes, ./top-fields.ts), and without
   * the members of its input items it refused (`inputMembers`: an item's `status`); with its
   * reasoning's effort as the nearest the model takes where it refused Codex's (`effort`: Ollama's
   * `xhigh`), or without the effort or summary it refused (`drop`: `reasoning.effort` to
   * gpt-4o-mini), that value alone changed in the bytes (./top-fields.ts). (Its tool schemas'
   * `"type": null` is typed before, by the caller: `typedToolSchemas`.) Any other goes as it came:
   * flag tests and a lookup of the provider, a header test and a byte search only for a body to
   * Azure.
   */
  function passedResponses(
    body: Buffer,
    target: ProxyTarget,
    learned: UpstreamAdaptation | undefined,
  ): Buffer {
    // (a tool schema's `"type": null`, Codex Desktop's `automation_update`, is typed before this:
    // `typedToolSchemas`, where the body's bytes hold one)
    if (learned?.drop !== undefined) body = withoutTopFields(body, learned.drop) ?? body
    // (an input item's member refused by its place: `input[2].status`)
    if (learned?.inputMembers !== undefined)
      body = withoutItemMembers(body, 'input', learned.inputMembers) ?? body
    // (an effort the model refused as the nearest it takes, its effort or summary refused left out:
    // spliced in the bytes, the body written again only where they cannot be with certainty)
    if (learned?.effort !== undefined || learned?.drop?.some((f) => f.startsWith('reasoning.'))) {
      const adapted = withReasoningAdapted(body, learned)
      body = (adapted === 'unsafe' ? reasoningRewritten(body, learned) : adapted) ?? body
    }
    if (learned?.liteOff) body = withoutLiteItem(body) ?? body
    if (learned?.adjacentOutputs) body = withAdjacentOutputs(body) ?? body
    // (images inside tool outputs refused there: after the outputs, ../../protocols/media-out-of-results.ts)
    if (learned?.mediaOutOfResults) body = withMediaOutOfOutputs(body) ?? body
    // (Codex's only: another client's `store: false` is its own choice that Azure keep nothing)
    if ((learned?.storeTrue || azureProvider(target.provider)) && isCodexClient(request.headers))
      body = withStoreTrue(body) ?? body
    // (Azure refuses Codex's `functions` namespace with its empty description, every Lite request)
    if (learned?.namespaceDescriptions || azureProvider(target.provider))
      body = withNamespaceDescriptions(body) ?? body
    return body
  }

  /** One try of target `i`: true when it answered (relayed), false to go on with the next. */
  async function tryTarget(
    i: number,
    model: string | null,
    body: Buffer,
    credential: string | undefined,
    translated?: TranslatedRequest,
    passedWith?: UpstreamAdaptation,
    passedAdapted = 0,
    /**
     * The same request sent again after a Gemini answer with no text nor call (translated.ts
     * `AnsweredNothing`), which the client did not see: its answer is relayed with `again`.
     */
    again = false,
  ): Promise<boolean> {
    const target = targets[i]
    const provider = target.provider
    tried++
    /**
     * Counts a failed try before anything reached the client (a connect error, a timeout, a body
     * that failed before its first byte): false to go on with the next target, or, with none
     * left (or fallbacks off), to have the proxy answer 502/504.
     */
    const failed = (
      message: string,
      wentSilent: boolean,
      status?: number,
      answered?: true,
      refused?: true,
    ): false => {
      // a 5xx/429 was counted when it came in; an answer of nothing is no failure of the target,
      // nor is a request it refused by name (a first event's 401/403/404: relay.ts
      // FailedBeforeFirstByte). Either way the usage the upstream billed (an empty answer's; a
      // translated stream's usage chunk before it failed, its start held) stays the request's
      if (answered) target.breaker?.recordSuccess()
      else if (refused) target.breaker?.release()
      else if (status === undefined || (status < 500 && status !== 429))
        target.breaker?.recordFailure(message)
      // (the try's own row, should it have one: the upstream's status where it answered or
      // failed with a 5xx or 429, else 502)
      keepUnseen(
        message,
        status !== undefined && (answered || status >= 500 || status === 429) ? status : 502,
      )
      attempts.push({provider: provider.name, ...(status === undefined ? {} : {status}), error: message})
      result.error = message
      result.status = 0
      silent = wentSilent
      if (!(options.fallbacks && canTryAfter(targets, i))) stop = true
      return false
    }
    result.provider = provider.name
    result.model = model
    // (a target passed over for the server state the request names was never tried: going on
    // from it is no fallback, as going on from one that failed, was open or had no key is)
    result.fallback = i > 0 && attempts.some((a) => a.skipped !== 'server-state')
    // (Codex's tools made plain for a Responses server went through the codecs, not to another family)
    result.upstreamFamily = translated && provider.family !== family ? provider.family : undefined
    const {origin, path} = upstreamPath(
      provider.baseUrl,
      translated ? translated.path : prepared.pathFor(model),
    )
    // a translated request's path is the provider family's own (its query included)
    const fullPath = prepared.query && !translated ? `${path}?${prepared.query}` : path

    const headers = conversationHeader(
      forwardHeaders(
        request.headers,
        provider,
        credential,
        body.length,
        // (Codex's tools made plain for a Responses server, or its Lite request sent as for a
        // model that is not Lite: its headers go as passed through, but its Lite header: ./headers.ts)
        translated === undefined
          ? passedWith?.liteOff === true && family === 'responses' && 'noLite'
          : provider.family !== family || 'noLite',
        translated?.sent.beta,
        // (the `anthropic-beta` values its model refused: ./headers.ts)
        translated ? translated.sent.adaptedWith : passedWith,
        // (the tool-search betas, for a body whose deferred tools the gateway loads: ./tool-search.ts)
        translated === undefined &&
          request.headers['anthropic-beta'] !== undefined &&
          loadsDeferredTools(target, passedWith) &&
          holdsDeferralSent(),
      ),
      translated,
      provider,
    )
    // (a relay that honours the client's idempotency key would answer the resend with the empty
    // answer it kept)
    if (again) for (const name of Object.keys(headers)) if (name.includes('idempotency')) delete headers[name]
    // (no other target after this one: an answer not streamed may wait up to the idle timeout)
    const lastTarget = !(options.fallbacks && canTryAfter(targets, i))
    let upstream
    try {
      upstream = await pools.get(origin, options.timeouts).request({
        method: request.method as 'POST',
        path: fullPath,
        headers,
        body: body.length > 0 ? body : undefined,
        // An upstream may answer a large body (413) without reading it: the unread rest would
        // block the next request on that keep-alive connection. Such requests get their own.
        reset: body.length > RESET_BODY_BYTES,
        signal: clientGone as unknown as EventEmitter,
        // (the key only when set: undici's request options as they were for every other request)
        ...(lastTarget && answerWait !== undefined ? {headersTimeout: answerWait} : {}),
      })
    } catch (error) {
      if (clientGone.aborted) {
        target.breaker?.release()
        return false
      }
      return failed(
        `${provider.name}: ${describeError(error, options.timeouts, !(lastTarget && answerWait !== undefined))}`,
        isSilence(error),
      )
    }

    let status = upstream.statusCode
    silent = false
    // A translated upstream that refuses an optional field the translation sent (OpenAI's models
    // without reasoning and `reasoning_effort`, `reasoning.effort`; Gemini 2.5 Pro and a thinking
    // budget of 0; a max_tokens above a model's limit): learned, and the request goes again
    // without it (adaptations.ts); any other 400 goes to the client as it came.
    let errorText: string | Error | undefined
    /**
     * The upstream refused what gwctl mends or answers itself (encrypted content another account
     * made, an item gwctl minted): no rule is learned from its words.
     */
    let refusalRead = false
    /**
     * A 400 (or a 422, `or422`) to a body passed through whose words may teach one rule of a
     * rewrite (`store`, adjacent outputs, the 1-hour cache, tool search, a namespace's description,
     * media out of results, unknown fields): not compressed, no stream, tries left.
     */
    const passedRefusal = (or422 = false) =>
      !translated &&
      (status === 400 || (or422 && status === 422)) &&
      passedAdapted < MAX_ADAPTATIONS_A_REQUEST &&
      upstream.headers['content-encoding'] === undefined &&
      !/text\/event-stream/i.test(String(upstream.headers['content-type'] ?? ''))
    /**
     * Sends `again` (the body as sent with one rule's rewrite) when the upstream's words teach that
     * rule (`learn`, the Adaptations method that reads them), as the model's
     * later requests go: the try's outcome, else undefined (the refusal goes on to other readers).
     */
    const retryLearned = async (
      again: Buffer | undefined,
      learn:
        | 'learnStoreTrue'
        | 'learnAdjacentOutputs'
        | 'learnCacheTtlOff'
        | 'learnDeferralOff'
        | 'learnNamespaceDescriptions',
    ): Promise<boolean | undefined> => {
      if (!again) return undefined
      errorText ??= await errorBody(upstream.body)
      const upstreamModelName = model ?? prepared.requestedModel ?? ''
      const change =
        typeof errorText === 'string'
          ? adaptations[learn](provider.name, upstreamModelName, errorText, passedWith)
          : undefined
      if (!change) return undefined
      tried--
      adapted.push(`${provider.name} ${change}`)
      const learned = adaptations.get(provider.name, upstreamModelName)
      return tryTarget(i, model, again, credential, undefined, learned, passedAdapted + 1)
    }
    /**
     * Codex's bytes passed through again with what was learned of the model now (`change`, the
     * learning's note): the same bytes as its later turns (`passedResponses`); undefined when
     * nothing was learned, or what was changes nothing of this body (the refusal is the client's).
     */
    const retryResponsesLearned = async (change: string | undefined): Promise<boolean | undefined> => {
      if (!change) return undefined
      const upstreamModelName = model ?? prepared.requestedModel ?? ''
      const learned = adaptations.get(provider.name, upstreamModelName)
      let bytes = (stripped ?? (await untranslated(target))).bodyFor(model)
      if (holdsNullType(bytes)) bytes = await typedToolSchemas(bytes)
      const again = passedResponses(bytes, target, learned)
      if (again.equals(body)) return undefined
      tried--
      adapted.push(`${provider.name} ${change}`)
      // (a field or an input item's member cut, one a refusal: not counted, adaptations.ts `onlyMoreCuts`)
      const counted = onlyMoreCuts(passedWith, learned) ? 0 : 1
      return tryTarget(i, model, again, credential, undefined, learned, passedAdapted + counted)
    }
    if (
      translated &&
      // DeepSeek's older refusal of a JSON schema came as 422; llama.cpp's refusal of images as
      // 500 and older vLLM's of a file part as 501, read only for a request with media and no
      // target to fall back to (a fallback may take them)
      (status === 400 ||
        status === 422 ||
        // OpenRouter's refusal of a forced tool_choice is a 404 (adaptations.ts reads only its words)
        (status === 404 && translated.sent.forcedTool === true && translated.sent.upstream === 'chat') ||
        ((status === 500 || status === 501) &&
          !(options.fallbacks && canTryAfter(targets, i)) &&
          sentMedia(translated.sent))) &&
      (translated.adapted ?? 0) < MAX_ADAPTATIONS_A_REQUEST
    ) {
      errorText = await errorBody(upstream.body)
      // (the `anthropic-beta` it went with, for a refusal of a value: adaptations.ts)
      const betas = provider.family === 'messages' ? headers['anthropic-beta'] : undefined
      const change =
        typeof errorText === 'string'
          ? adaptations.learn(
              provider.name,
              translated.upstreamModel,
              errorText,
              betas === undefined ? translated.sent : {...translated.sent, betas},
              status,
            )
          : undefined
      if (change) {
        adaptations.noteStatedWindow(provider.name, translated.upstreamModel, errorText as string, family)
        // (the row says what was learned before what the encoding then left out)
        const at = adapted.length
        // (Codex's tools made plain for a Responses server stay plain: ./plain-tools.ts)
        // (a conversation sent without some of gwctl's wraps stays without them)
        const again = await translateFor(target, model, !target.translate, translated.conversation)
        if (again !== 'answered') {
          tried--
          adapted.splice(at, 0, `${provider.name} ${change}`)
          return tryTarget(i, model, again.body, credential, {
            ...again,
            adapted: (translated.adapted ?? 0) + 1,
            withoutWraps: translated.withoutWraps,
          })
        }
      }
      // Anthropic's refusal of a thinking block's signature, in a conversation that holds thinking
      // gwctl wrapped for the client (one wrapped before stop 60 holds redacted data as a
      // signature): sent again without the wrapped thinking of the turn its words name (the body
      // as sent read for it), the running tool loop's kept; should the next refusal name another,
      // without every turn's but the last assistant turn's; on a third, without that one's too
      // (Anthropic names the first bad block only: any number of old turns in 3 retries). Nothing
      // learned (the next request's wraps may be sound). The words searched only in a Messages
      // upstream's 400.
      if (
        !change &&
        provider.family === 'messages' &&
        (translated.withoutWraps ?? 0) < MAX_ADAPTATIONS_A_REQUEST &&
        typeof errorText === 'string' &&
        INVALID_SIGNATURE.test(errorText)
      ) {
        const [translate] = translationLoaded ?? (await loadTranslation())
        const from = translated.conversation ?? client?.request
        const named = translate.refusedTurnOpaques(body, errorText)
        // (the named turn, and wider on each refusal more: the first reach that leaves one out)
        let reach: WrapReach | undefined
        let conversation: ClientRequest['request'] | undefined
        for (reach of WRAP_REACHES.slice(translated.withoutWraps ?? 0)) {
          conversation = from && translate.withoutWrappedThinking(from, named, reach)
          if (conversation) break
        }
        const again = conversation && (await translateFor(target, model, !target.translate, conversation))
        if (again && again !== 'answered' && reach) {
          tried--
          const wide = named || reach !== 'turn' ? reach : 'earlier'
          const note = `${provider.name} ${withoutWrapsNote(wide)}`
          if (!adapted.includes(note)) adapted.push(note)
          return tryTarget(i, model, again.body, credential, {
            ...again,
            adapted: translated.adapted,
            withoutWraps: WRAP_REACHES.indexOf(reach) + 1,
          })
        }
      }
    }
    // A request passed through (a chat client on a chat upstream: qwen-code, opencode; Claude
    // Code on an Anthropic-compatible server) that its upstream refused for something a translated
    // request is adapted for (Gemini's tool-schema keywords behind a chat server, Ollama's model
    // without thinking, xAI's `reasoningEffort`, gpt-5.6's effort beside tools, Mistral's
    // tool-call ids, a forced tool_choice; Claude's thinking form, a field a Messages server does
    // not know...): learned, and the request goes again with the rule applied, as a translated one
    // does (adaptations.ts; the same rules, by the same words). Read only where relay() would
    // buffer the answer anyway (an error that is no stream, not compressed); any refusal that
    // teaches nothing reaches the client as it came.
    if (
      !translated &&
      (family === 'chat' || family === 'messages') &&
      (status === 400 ||
        status === 422 ||
        // OpenRouter's refusal of a forced tool_choice (adaptations.ts reads only its words)
        (status === 404 && family === 'chat' && body.indexOf('"tool_choice"') !== -1) ||
        // llama.cpp's refusal of images is a 500, older vLLM's of a file part a 501, Ollama's of a
        // system message's place a 500: read for a chat body with media, or with a system message
        // (adaptations.ts reads only its template's words), and no target to fall back to, as for a translated one
        ((status === 500 || status === 501) &&
          family === 'chat' &&
          !(options.fallbacks && canTryAfter(targets, i)) &&
          (body.indexOf('"image_url"') !== -1 ||
            body.indexOf('"file"') !== -1 ||
            (status === 500 && body.indexOf('"system"') !== -1)))) &&
      passedAdapted < MAX_ADAPTATIONS_A_REQUEST &&
      upstream.headers['content-encoding'] === undefined &&
      !/text\/event-stream/i.test(String(upstream.headers['content-type'] ?? ''))
    ) {
      errorText = await errorBody(upstream.body)
      const upstreamModelName = model ?? prepared.requestedModel ?? ''
      let change =
        family === 'chat' && typeof errorText === 'string' && body.indexOf('"tools"') !== -1
          ? adaptations.learnSchemaKeys(provider.name, upstreamModelName, errorText, passedWith)
          : undefined
      if (change === undefined && typeof errorText === 'string') {
        const sentBody = sentObject(body)
        if (sentBody) {
          const [translate] = translationLoaded ?? (await loadTranslation())
          const sent = (family === 'chat' ? translate.sentOfPassedChat : translate.sentOfPassedMessages)(
            sentBody,
            passedWith,
          )
          // (the `anthropic-beta` it went with, for a refusal of a value: adaptations.ts)
          if (family === 'messages' && headers['anthropic-beta'] !== undefined)
            sent.betas = headers['anthropic-beta']
          change = adaptations.learn(provider.name, upstreamModelName, errorText, sent, status)
        }
      }
      if (change) {
        // the client's bytes again, with what is learned now (the same bytes as later turns)
        const learned = adaptations.get(provider.name, upstreamModelName)
        const at = adapted.length
        const again = await passedBytes((stripped ?? prepared).bodyFor(model), target, learned, model)
        // (a rule learned that changes nothing of this body, nor of its betas: the refusal is the client's)
        const beta = headers['anthropic-beta']
        if (
          !again.equals(body) ||
          (family === 'messages' &&
            beta !== undefined &&
            learned !== undefined &&
            withoutLearnedBetas(beta, learned) !== beta)
        ) {
          adaptations.noteStatedWindow(provider.name, upstreamModelName, errorText as string, family)
          tried--
          adapted.splice(at, 0, `${provider.name} ${change}`)
          // (Claude Code's newer fields, named one a refusal by a strict host: each retry for one
          // cuts a name the body was sent with, not counted against the cap, adaptations.ts
          // `onlyMoreCuts`; its first turn sends five)
          const counted = onlyMoreCuts(passedWith, learned) ? 0 : 1
          return tryTarget(i, model, again, credential, undefined, learned, passedAdapted + counted)
        }
      }
    }
    // Gemini CLI's function declarations (its MCP servers' tools) past the most a Gemini model
    // takes ("At most 512 function declarations can be specified."), or its thinking config
    // refused by a model of another generation than it named ("Thinking level is not supported
    // for this model.", "Budget 0 is invalid. This model only works in thinking mode."): learned,
    // and the request goes again in the form the model takes, as later ones do; so does its system
    // instruction, refused by Gemma 3 ("Developer instruction is not enabled for
    // models/gemma-3-27b-it": then in the first user turn); and Gemini 3's refusal of a model turn
    // whose first call has no thought signature ("Function call is missing a thought_signature in
    // functionCall parts": a history another model or route made), then sent with Google's skip
    // value there (read only for a body that offers declarations or holds a thinking config, a
    // system instruction or a call)
    if (
      !translated &&
      family === 'gemini' &&
      status === 400 &&
      passedAdapted < MAX_ADAPTATIONS_A_REQUEST &&
      upstream.headers['content-encoding'] === undefined &&
      !/text\/event-stream/i.test(String(upstream.headers['content-type'] ?? '')) &&
      (body.indexOf('"functionDeclarations"') !== -1 ||
        body.indexOf('"thinkingConfig"') !== -1 ||
        body.indexOf('"systemInstruction"') !== -1 ||
        body.indexOf('"system_instruction"') !== -1 || // Google's REST examples spell it so
        body.indexOf('"functionCall"') !== -1)
    ) {
      errorText = await errorBody(upstream.body)
      const upstreamModelName = model ?? prepared.requestedModel ?? ''
      let change: string | undefined
      const capStated = typeof errorText === 'string' && toolCapStated(errorText) !== undefined
      if (typeof errorText === 'string' && /missing a `?thought_signature/.test(errorText))
        change = adaptations.learnPassedGeminiSignatures(
          provider.name,
          upstreamModelName,
          errorText,
          passedWith,
        )
      else if (typeof errorText === 'string' && /developer instruction is not enabled/i.test(errorText))
        change = adaptations.learnPassedGeminiSystem(provider.name, upstreamModelName, errorText, passedWith)
      else if (typeof errorText === 'string' && (capStated || /thinking/i.test(errorText))) {
        const sent = sentObject(body)
        if (sent) {
          const [translate] = translationLoaded ?? (await loadTranslation())
          change = capStated
            ? adaptations.learnToolCap(
                provider.name,
                upstreamModelName,
                errorText,
                translate.geminiDeclarationCount(sent),
                passedWith,
              )
            : adaptations.learnPassedGeminiThinking(
                provider.name,
                upstreamModelName,
                errorText,
                translate.geminiThinkingSent(sent),
                passedWith,
              )
        }
      }
      if (change) {
        const learned = adaptations.get(provider.name, upstreamModelName)
        const at = adapted.length
        const again = await passedBytes((stripped ?? prepared).bodyFor(model), target, learned, model)
        if (!again.equals(body)) {
          tried--
          adapted.splice(at, 0, `${provider.name} ${change}`)
          return tryTarget(i, model, again, credential, undefined, learned, passedAdapted + 1)
        }
      }
    }
    // An id gwctl minted, named in a Responses server's refusal (OpenAI's 404 "Item with id 'msg_gw…'
    // not found", its 400 under `store: false`) of a body not searched for them before it went
    // (`store: false`: namesHeldItems), which that server never saw: one gwctl holds is put back and
    // the request goes again at once; one it lost (a restart, an eviction) gets gwctl's 400 that
    // says how to send the conversation, not the server's words, and the row says so. Read only for
    // a 400 or 404 to a body that holds gwctl's mark (a byte search) whose words name such an id.
    if (
      !translated &&
      family === 'responses' &&
      (status === 400 || status === 404) &&
      carry?.items &&
      passedAdapted < MAX_ADAPTATIONS_A_REQUEST &&
      upstream.headers['content-encoding'] === undefined &&
      !/text\/event-stream/i.test(String(upstream.headers['content-type'] ?? '')) &&
      body.indexOf(MINTED_MARK) !== -1
    ) {
      errorText = await errorBody(upstream.body)
      const named = typeof errorText === 'string' ? MINTED_ID.exec(errorText)?.[0] : undefined
      if (named !== undefined) {
        const {withHeldItems} = await import('../../protocols/held-items.js')
        let again: Buffer | undefined
        try {
          // (only a reference's id: one of a full item the server refused is the client's to mend)
          again = withHeldItems(body, carry.items, {
            server: serverOf(target),
            named,
            storeOff: prepared.storeOff,
          })
        } catch (error) {
          const [translate] = translationLoaded ?? (await loadTranslation())
          if (!(error instanceof translate.ItemReferenceError)) throw error
          refusalRead = true
          const lost = `"${error.id}", which gwctl minted and no longer holds`
          adapted.push(
            `${provider.name} answered ${status} for item ${error.id === named ? lost : `"${named}", which gwctl held, and the body names ${lost}`}: answered 400, send the item itself, not a reference`,
          )
          // (relayed as the upstream's refusal, as a 400: its request id, the breaker settled)
          status = 400
          errorText = JSON.stringify(familyErrorBody('responses', 400, error.message))
          upstream.headers['content-type'] = 'application/json'
        }
        if (again) {
          tried--
          adapted.push(
            `${provider.name} answered ${status} for item "${named}", which gwctl held: sent again with its items in place of the references`,
          )
          return tryTarget(i, model, again, credential, undefined, passedWith, passedAdapted + 1)
        }
      }
    }
    // Encrypted content another provider or account made, refused (OpenAI's `invalid_encrypted_content`,
    // ChatGPT's "could not be verified" with `code: null`: ./encrypted-content.ts): Codex's
    // conversation answered elsewhere before (a fallback, a route changed). The request goes again
    // at once without its reasoning items' ciphertext (once: the body sent again holds none), not
    // learned (it is the conversation's); a compaction item or an agent_message's encrypted text,
    // which cannot be left out, is answered a 400 that says so. Read only for a 400 to a body that
    // holds an `encrypted_content` key (a byte search); the error's words tested before the body is parsed.
    if (
      !translated &&
      family === 'responses' &&
      status === 400 &&
      upstream.headers['content-encoding'] === undefined &&
      !/text\/event-stream/i.test(String(upstream.headers['content-type'] ?? '')) &&
      holdsEncryptedContent(body)
    ) {
      errorText ??= await errorBody(upstream.body)
      if (!refusalRead && typeof errorText === 'string' && refusesForeignCiphertext(errorText)) {
        refusalRead = true
        const again =
          passedAdapted < MAX_ADAPTATIONS_A_REQUEST && !namesCompactionItem(errorText)
            ? withoutReasoningCiphertext(body)
            : undefined
        if (again) {
          tried--
          adapted.push(strippedNote(provider.name, again))
          return tryTarget(i, model, again.body, credential, undefined, passedWith, passedAdapted + 1)
        }
        const held = unrepairableCiphertext(body)
        if (held) {
          // (relayed as the upstream's refusal: its status, its request id, the breaker settled)
          errorText = JSON.stringify(
            familyErrorBody('responses', 400, foreignCiphertextRefusal(provider.name, held), {
              code: 'invalid_encrypted_content',
            }),
          )
          upstream.headers['content-type'] = 'application/json'
          adapted.push(
            `${provider.name} refused another account's encrypted content that cannot be left out (${held === 'compaction' ? 'a compaction item' : 'an encrypted agent_message'}): answered 400, start a new conversation`,
          )
        }
      }
    }
    // Codex's namespaces, custom tools or `additional_tools` item refused by a Responses server
    // that is not OpenAI's (vLLM's 400, llama.cpp's, Ollama's 500, xAI's 422: ./plain-tools.ts):
    // learned, and the request goes again with every tool a plain function, as later ones do
    // (not for a provider set to `never`: its refusal is the client's to see)
    if (
      !translated &&
      family === 'responses' &&
      !refusalRead &&
      provider.plainTools !== 'never' &&
      (status === 400 || status === 422 || status === 500) &&
      passedAdapted < MAX_ADAPTATIONS_A_REQUEST &&
      upstream.headers['content-encoding'] === undefined &&
      !/text\/event-stream/i.test(String(upstream.headers['content-type'] ?? '')) &&
      !COMPACT.test(request.url) &&
      (holdsOpenAiToolShapes(request.body) || holdsAgentMessage(request.body))
    ) {
      // (read already when encrypted content was looked for in it, above)
      errorText ??= await errorBody(upstream.body)
      const change =
        typeof errorText === 'string'
          ? adaptations.learnPlainTools(
              provider.name,
              model ?? prepared.requestedModel ?? '',
              errorText,
              passedWith,
            )
          : undefined
      const learned = change
        ? adaptations.get(provider.name, model ?? prepared.requestedModel ?? '')
        : undefined
      if (learned?.liteOff && !learned.plainTools) {
        // Codex's Lite request refused as such: as Codex sends it for a model that is not Lite
        // (without the Lite header: tryTarget's headers), namespaces and custom tools kept
        tried--
        adapted.push(`${provider.name} ${change}`)
        let bytes = (stripped ?? (await untranslated(target))).bodyFor(model)
        if (holdsNullType(bytes)) bytes = await typedToolSchemas(bytes)
        return tryTarget(
          i,
          model,
          passedResponses(bytes, target, learned),
          credential,
          undefined,
          learned,
          passedAdapted + 1,
        )
      }
      const again = learned ? await plainRequest(target, model) : undefined
      if (again) {
        tried--
        adapted.push(`${provider.name} ${change}`)
        return tryTarget(i, model, again.body, credential, {...again, adapted: 1})
      }
    }
    // Azure OpenAI's refusal of an item named by its id in a request sent with `store: false`
    // ("Item with id 'rs_…' not found. Items are not persisted when `store` is set to false."),
    // which Codex cannot get past and which comes only on a later turn: learned, and the request
    // goes again with `store: true`, as later ones do (an Azure behind a domain of its own; one at
    // Azure's own hosts gets it from the first request: `passedResponses`). Read only for Codex's
    // body that holds `"store":false` (another client's `store: false` is its own to keep).
    if (
      family === 'responses' &&
      passedRefusal() &&
      !refusalRead &&
      passedWith?.storeTrue !== true &&
      isCodexClient(request.headers) &&
      !COMPACT.test(request.url)
    ) {
      // (read already when Codex's tool shapes were looked for in it, above)
      const sent = await retryLearned(withStoreTrue(body), 'learnStoreTrue')
      if (sent !== undefined) return sent
    }
    // Codex's history refused by a Responses server that pairs tool calls and outputs by position
    // (DeepSeek's "No tool output found for tool call call_…": a hook's developer message, a
    // reasoning item between a call and its output), which its later requests keep: learned, and
    // the request goes again with each output right after its call, as later ones do (read only
    // for a body that holds an output; after the tool shapes' reading above, whose text it reuses)
    if (
      family === 'responses' &&
      passedWith?.adjacentOutputs !== true &&
      passedRefusal() &&
      !refusalRead &&
      !COMPACT.test(request.url) &&
      holdsCallOutput(body)
    ) {
      // (no rewrite for a history whose outputs follow their calls already: that refusal is the
      // client's, and nothing is learned from it)
      const sent = await retryLearned(withAdjacentOutputs(body), 'learnAdjacentOutputs')
      if (sent !== undefined) return sent
    }
    // A relay in front of Claude that refuses Claude Code's 1-hour cache ("`cache_control.ttl: 1h`
    // is not supported"): learned, and the request goes again without `ttl` and `scope`, as later
    // ones do (`passedBytes`; read only for a Messages body that holds either)
    if (family === 'messages' && passedWith?.cacheTtlOff !== true && passedRefusal()) {
      const sent = await retryLearned(withoutCacheTtl(body), 'learnCacheTtlOff')
      if (sent !== undefined) return sent
    }
    // A relay in front of Claude that refuses Claude Code's tool search (OpenRouter's "Deferred
    // custom tools are only supported on Anthropic models ...", Ark's "invalid value:
    // tool_reference", Kimi's bare "Invalid request Error": ./tool-search.ts): learned, and the
    // request goes again with its deferred tools loaded, without the tool-search betas, as later
    // ones do (`passedBytes`; read only for a Messages body that holds either key and that the
    // rewrite changes)
    if (
      family === 'messages' &&
      passedWith?.deferralOff !== true &&
      !isAnthropicApi(provider.baseUrl) &&
      passedRefusal()
    ) {
      const sent = await retryLearned(withDeferredToolsLoaded(body), 'learnDeferralOff')
      if (sent !== undefined) return sent
    }
    // A namespace tool's empty description refused (Azure OpenAI's `empty_string`, behind a domain
    // of its own; one at Azure's hosts gets it described from the first request: `passedResponses`):
    // learned, and the request goes again with it described, as later ones do
    if (
      family === 'responses' &&
      passedWith?.namespaceDescriptions !== true &&
      !refusalRead &&
      passedRefusal()
    ) {
      const sent = await retryLearned(withNamespaceDescriptions(body), 'learnNamespaceDescriptions')
      if (sent !== undefined) return sent
    }
    // An image or file inside Codex's tool call output (its view_image, a screenshot) refused by a
    // Responses server that takes one in a user message (Zen/OpenCode Go's 422 "Input should be a
    // valid string", a relay's "Invalid input": adaptations.ts `refusesMediaInResults`), which
    // the history keeps: learned, and the request goes again with the media in a user message right
    // after the outputs, as later ones do (read only for a body that holds such media: a byte
    // search, then the rewrite; a Messages body's is learned by the block for its family above)
    if (
      family === 'responses' &&
      passedWith?.mediaOutOfResults !== true &&
      passedRefusal(true) &&
      !refusalRead &&
      !COMPACT.test(request.url) &&
      mayHoldMediaInResults('responses', body)
    ) {
      errorText ??= await errorBody(upstream.body)
      const upstreamModelName = model ?? prepared.requestedModel ?? ''
      const change =
        typeof errorText === 'string' &&
        refusesMediaInResults(errorText, 'responses') &&
        withMediaOutOfOutputs(body) !== undefined
          ? adaptations.learnMediaOutOfResults(provider.name, upstreamModelName, errorText, passedWith)
          : undefined
      const sent = await retryResponsesLearned(change)
      if (sent !== undefined) return sent
    }
    // A Responses body passed through (Codex's) refused for a top-level field the server does not
    // know (Codex 0.155's `access_programs` on OpenCode Go: "unknown parameter `access_programs`",
    // lidge-jun/opencodex #4853; any field but those its answer depends on: adaptations.ts
    // `unknownResponsesFields`): learned, and the request goes again at once without it, as the
    // model's later ones do (`passedResponses`). Read only where relay() would buffer the answer
    // anyway, after the rules above (their words are theirs), whose reading of the error it reuses
    if (family === 'responses' && passedRefusal(true) && !refusalRead) {
      errorText ??= await errorBody(upstream.body)
      const sentBody = typeof errorText === 'string' ? sentObject(body) : undefined
      if (sentBody) {
        const [translate] = translationLoaded ?? (await loadTranslation())
        const upstreamModelName = model ?? prepared.requestedModel ?? ''
        const change = adaptations.learn(
          provider.name,
          upstreamModelName,
          errorText as string,
          translate.sentOfPassedResponses(sentBody, passedWith),
          status,
        )
        const sent = await retryResponsesLearned(change)
        if (sent !== undefined) return sent
      }
    }
    // Xinference's refusal of a prompt past the window (vLLM's words, as a 500) with no other
    // target to try: a refusal like a 400's, which the relays answer in the agent's words (read
    // only for a 500 that is no stream; relay.ts OVERFLOW_500)
    if (
      status === 500 &&
      !(options.fallbacks && canTryAfter(targets, i)) &&
      upstream.headers['content-encoding'] === undefined &&
      !/text\/event-stream/i.test(String(upstream.headers['content-type'] ?? ''))
    )
      errorText ??= await errorBody(upstream.body)
    const overflow500 = status === 500 && typeof errorText === 'string' && OVERFLOW_500.test(errorText)
    if ((status >= 500 || status === 429) && !overflow500) {
      const message = `${provider.name}: upstream answered ${status}`
      const fallsBack = options.fallbacks && canTryAfter(targets, i)
      // A 429 counts only when the request falls back on it (./rate-limit.ts `settle429`): a 429
      // that is its last answer, and a try the gateway waited for (Codex's, below: only when
      // nothing else is left), count nothing unless they took a half-open trial (the breaker
      // having opened on other requests meanwhile), whose 429 opens the breaker again
      if (status === 429) settle429(target, message, fallsBack)
      else target.breaker?.recordFailure(message)
      if (fallsBack) {
        attempts.push({provider: provider.name, status, error: message})
        await upstream.body.dump().catch(() => undefined)
        return false
      }
      // Codex retries no 429 without `retry-after` (./rate-limit.ts): with nothing left to try,
      // the same request goes again to the same target after the wait its upstream states, when short
      if (status === 429 && retried429 < RETRY_429.tries && isCodexClient(request.headers)) {
        const waited = await waitFor429(upstream, target, clientGone, options.sleep, retried429, waited429)
        if (typeof waited === 'number') {
          waited429 += waited
          retried429++
          const note = waitedNote(provider.name, waited429, retried429)
          const at = adapted.findIndex((n) => n.endsWith('(Codex does not retry one)'))
          if (at === -1) adapted.push(note)
          else adapted[at] = note
          tried--
          return tryTarget(i, model, body, credential, translated, passedWith, passedAdapted, again)
        }
        errorText = waited
        // the client left while it waited: nothing more to send (the proxy answers 499)
        if (clientGone.aborted) return false
      }
      // a wait stated in `retry-after-ms` only, which neither Codex nor Claude Code's own retry
      // loop reads: as `retry-after` too, in whole seconds (rounded up), so that Codex waits it out
      // itself rather than end its turn, and Claude Code waits it (up to a minute: it retried
      // after 0.7 s on a 1.5 s wait, audit57); a Gemini client gets it as RetryInfo (error-shape.ts);
      // past 5 minutes `x-should-retry: false` (./rate-limit.ts `msWaitHeaders`)
      if (status === 429)
        addWaitHeaders(upstream.headers, msWaitHeaders(upstream.headers, {family, headers: request.headers}))
      attempts.push({provider: provider.name, status, error: message})
      result.error = message
    } else {
      attempts.push({provider: provider.name, status})
      // an answer after earlier failures keeps why it fell back; a clean answer has no error
      // (after server-state skips only, no fallback: the row names the skips as such)
      const reasons = attempts.length > 1 ? attempts.filter((a) => a.error).map((a) => a.error) : []
      result.error =
        reasons.length > 0 ? `${result.fallback ? 'fell back after: ' : ''}${reasons.join('; ')}` : null
    }

    let outcome
    if (translated) {
      const [, {relayTranslated, continuationBody, continuationFailed}] =
        translationLoaded ?? (await loadTranslation())
      // (a stream whose first event is an error may still go to the next target)
      relayContext.canFallBack = options.fallbacks && canTryAfter(targets, i)
      let relayed = await relayTranslated(
        relayContext,
        upstream,
        status,
        target,
        credential,
        translated.translation,
        errorText,
        undefined,
        again || undefined,
      )
      // A Gemini answer with no text nor call (translated.ts `AnsweredNothing`), of which the client
      // saw nothing: the same request again, once, as a try of the same target (its status read as
      // any first answer's: a 5xx/429 falls back, Codex's 429 waits), its answer relayed `again`
      if (relayed !== undefined && 'answeredNothing' in relayed) {
        attempts.pop()
        tried--
        // (the empty answer's usage, which Google bills: added to the request's row at the end,
        // to the usage of the answer to the resend, of a target after it, or alone when none set
        // one: a 5xx, a reset, the client gone)
        keepUnseen(undefined, status)
        return tryTarget(i, model, body, credential, translated, passedWith, passedAdapted, true)
      }
      // A Messages upstream paused the turn (pause_turn): the same request again with the turn's
      // content so far as its last assistant message, read into the same client answer
      // (translated.ts), until it ends or the continuations run out
      while (relayed !== undefined && 'paused' in relayed) {
        const paused = relayed
        const again = continuationBody(body, paused.content)
        let next
        try {
          if (clientGone.aborted) throw clientGone.reason
          next = await pools.get(origin, options.timeouts).request({
            method: request.method as 'POST',
            path: fullPath,
            headers: forwardHeaders(
              request.headers,
              provider,
              credential,
              again.length,
              true,
              translated.sent.beta,
              translated.sent.adaptedWith,
            ),
            body: again,
            reset: again.length > RESET_BODY_BYTES,
            signal: clientGone as unknown as EventEmitter,
            ...(lastTarget && answerWait !== undefined ? {headersTimeout: answerWait} : {}),
          })
        } catch (error) {
          relayed = continuationFailed(relayContext, target, paused, error)
          break
        }
        relayed = await relayTranslated(
          relayContext,
          next,
          next.statusCode,
          target,
          credential,
          translated.translation,
          undefined,
          paused,
        )
      }
      // (an answer sent again or continued is never AnsweredNothing: translated.ts answers it)
      outcome = relayed !== undefined && 'answeredNothing' in relayed ? undefined : relayed
    } else {
      // a chat stream from an upstream that leaves its tool calls' index out (./tool-index.ts)
      relayContext.indexToolCalls =
        family === 'chat' && (passedWith?.indexToolCalls === true || omitsToolCallIndex(provider.baseUrl))
      // ... or opens them without their id, or streams an empty role (the same filter)
      relayContext.idToolCalls = family === 'chat' && passedWith?.idToolCalls === true
      // ... or ends a choice without an OpenAI finish_reason (the same filter)
      relayContext.finishReasons = family === 'chat' && passedWith?.openAiFinish === true
      outcome = await relay(relayContext, upstream, status, target, credential, errorText)
    }
    if (result.contextWindow)
      adaptations.noteWindow(
        provider.name,
        translated ? translated.upstreamModel : (model ?? prepared.requestedModel ?? ''),
        result.contextWindow,
        family,
      )
    // Ollama's silent cut of a prompt longer than its context (./ollama-cut.ts): an answer whose
    // reported input has the cut's shape, for a request clearly larger (two integer tests; the
    // rest only when they pass), the same count as the model's answer of that shape before. The
    // answer stands (a stream went out already): the row says it, the window is kept for doctor.
    const usage = result.usage
    // Codex's custom or namespaced tool answered as a plain function call by a Responses server
    // that took the shapes without a word (MiniMax M3): learned, so its next requests go with
    // plain tools and the calls come back to Codex in their shapes (this answer stands: Codex
    // tells the model its call failed, and the model calls again). Read only for an answer that
    // made a function call, to a request that holds the shapes.
    if (
      usage?.functionCalls &&
      family === 'responses' &&
      !translated &&
      status < 300 &&
      provider.plainTools !== 'never' &&
      !isOpenAiResponsesHost(provider.baseUrl)
    ) {
      const name = calledAsFunction(body, usage.functionCalls)
      const note =
        name === undefined
          ? undefined
          : adaptations.learnPlainToolsFromAnswer(provider.name, model ?? prepared.requestedModel ?? '', name)
      if (note)
        result.error = result.error ? `${result.error}; ${provider.name} ${note}` : `${provider.name} ${note}`
    }
    // (a stream's tool-call faults apart from its usage: a client that refuses such a delta closes
    // the stream there, before the usage comes)
    const faults = result.toolCallFaults
    if (faults?.unindexed && family === 'chat' && !translated && !relayContext.indexToolCalls) {
      // (this answer went as it came: the client may have dropped its calls; the next ones are numbered)
      const note = adaptations.learnIndexToolCalls(provider.name, model ?? prepared.requestedModel ?? '')
      if (note)
        result.error = result.error ? `${result.error}; ${provider.name} ${note}` : `${provider.name} ${note}`
    }
    if (faults?.idless && family === 'chat' && !translated && !relayContext.idToolCalls) {
      // (this answer went as it came: an AI SDK client refused it; the next ones carry ids)
      const note = adaptations.learnIdToolCalls(
        provider.name,
        model ?? prepared.requestedModel ?? '',
        faults.idless,
      )
      if (note)
        result.error = result.error ? `${result.error}; ${provider.name} ${note}` : `${provider.name} ${note}`
    }
    if (faults?.finish !== undefined && family === 'chat' && !translated && !relayContext.finishReasons) {
      // (this answer went as it came: an AI SDK client read its finish as unknown; the next ones get OpenAI's)
      const note = adaptations.learnOpenAiFinish(
        provider.name,
        model ?? prepared.requestedModel ?? '',
        faults.finish,
      )
      if (note)
        result.error = result.error ? `${result.error}; ${provider.name} ${note}` : `${provider.name} ${note}`
    }
    if (usage && status < 300) {
      const kept = usage.inputTokens + usage.cacheReadTokens + usage.cacheCreationTokens
      const window = cutWindow(kept, body.length)
      const upstreamModelName = translated
        ? translated.upstreamModel
        : (model ?? prepared.requestedModel ?? '')
      if (
        window !== undefined &&
        mayBeOllama(provider, upstreamModelName) &&
        !holdsMedia(body) &&
        cutConfirmed(provider.name, upstreamModelName, kept)
      ) {
        const note = cutNote(provider.name, window, kept, body.length)
        result.error = result.error ? `${result.error}; ${note}` : note
        adaptations.noteWindow(provider.name, upstreamModelName, window, family, true)
      }
    }
    if (!outcome) return true
    // headers, then a body that failed before its first byte: nothing reached the client, so this
    // is a failure like a connect error (the attempt's status is the one the upstream sent)
    if (clientGone.aborted) {
      target.breaker?.release()
      return false
    }
    attempts.pop()
    return failed(outcome.failedBeforeFirstByte, outcome.silent, status, outcome.answered, outcome.refused)
  }
}
