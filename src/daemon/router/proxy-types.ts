/** The shapes the proxy takes and gives: targets, the request, options, attempts and the result. */
import type {IncomingHttpHeaders} from 'node:http'

import type {Family, ProviderConfig, TimeoutSettings} from '../../store/schema.js'
import type {CarryStore} from '../../protocols/ir.js'
import type {CircuitBreaker} from './breaker.js'
import type {UpstreamPools} from './pools.js'
import type {ToolCallFaults, Usage} from './taps/index.js'

export interface ProxyTarget {
  provider: ProviderConfig
  /** Model rewrite of the policy target. */
  model?: string
  /** The provider's breaker; without one the target is always tried. */
  breaker?: CircuitBreaker
  /** The provider speaks another family than the entrance: translated (src/protocols). */
  translate?: true
}

export interface ProxyRequest {
  /** Entrance family (decides the error shapes, the usage tap and the credential form). */
  family: Family
  method: string
  /** Path and query as received, e.g. `/v1/messages?beta=true`. */
  url: string
  headers: IncomingHttpHeaders
  /** The raw request body (empty for none). */
  body: Buffer
  /**
   * The body already parsed by the caller (the entrance validates it as JSON), or undefined to
   * read `model`/`stream` from the raw bytes. Read only: never changed by the proxy.
   */
  json?: unknown
  /**
   * What the entrance's check of the body read (when it did not parse it whole: `json` is then
   * undefined); without either, the proxy reads the bytes itself.
   */
  facts?: BodyFacts
}

/**
 * What the proxy reads of a request body, taken from its Latin-1 parse (`GatewayRequest.latin1Json` in
 * daemon/server.ts):
 * exact for ASCII keys and strings, booleans and structure.
 */
export interface BodyFacts {
  /**
   * The top-level `model`: null when there is none or it is not a string; undefined when it is a
   * string with a character past U+007F (its Latin-1 reading may differ: a UTF-8 parse reads it).
   */
  model: string | null | undefined
  /** The top-level `stream` is `true`. */
  stream: boolean
  /** The top-level `stream_options`: absent, an object with `include_usage: true`, or anything else. */
  streamOptions: 'none' | 'usage' | 'other'
  /** The output cap a budget estimates with: `max_tokens ?? max_completion_tokens ?? max_output_tokens`. */
  maxTokens: unknown
  /** Gemini's: `generationConfig.maxOutputTokens`. */
  maxOutputTokens: unknown
  /**
   * The top-level `store` is `false`: a Responses client that keeps no items (Codex), so it names
   * none by `item_reference`, and its body is not searched for one (68 µs a 256 KB body).
   */
  storeOff: boolean
}

export interface ProxyOptions {
  targets: readonly ProxyTarget[]
  timeouts: TimeoutSettings
  /** Try the next target after a failure before the first byte (policy `fallbacks`). */
  fallbacks: boolean
  /** Where `{env}` credentials are read, at request time (default `process.env`). */
  env?: NodeJS.ProcessEnv
  /** Connection pools (default: one shared set per process). */
  pools?: UpstreamPools
  /** Aborts the upstream request (in addition to the client closing `res`). */
  signal?: AbortSignal
  /** Opaque turn-2 state kept for translated clients that cannot carry it (one per daemon). */
  carry?: CarryStore
  /**
   * The agent the request is from (its gateway key's), which a translated request's derived cache
   * key is a hash of, with its first turn (protocols/cache-key.ts), so that no two agents share one.
   */
  agentId?: string
  /**
   * The project and the policy of the request (its row's), which with `agentId` say whose a chat
   * client's conversation is: the reasoning of its answers of text alone is kept under them
   * (protocols/cm-common.ts `storeTextCarry`), so that no project gets another's.
   */
  project?: string
  policyId?: string
  /**
   * Waits `ms` before Codex's request goes again after a 429 (./rate-limit.ts); default a timer.
   * Tests pass one that returns at once and records the waits asked for.
   */
  sleep?: (ms: number) => Promise<void>
}

export interface ProxyAttempt {
  provider: string
  /** Upstream HTTP status, when one came back. */
  status?: number
  error?: string
  /**
   * Why the target was not tried: `server-state`, a translated target passed over because the
   * request names state only a Responses server holds (no failure of it: no fallback counted).
   */
  skipped?: 'circuit-open' | 'no-credential' | 'untranslatable' | 'server-state'
}

export interface ProxyResult {
  /** HTTP status sent to the client (499 when the client left before an answer). */
  status: number
  /** Provider and upstream model that answered (or were tried last), null when none was tried. */
  provider: string | null
  model: string | null
  /** Model the client asked for (body `model`, or the Gemini path). */
  requestedModel: string | null
  /** True when the answer came from (or the last try was) a target other than the policy's first. */
  fallback: boolean
  stream: boolean
  usage: Usage | null
  /** Milliseconds from the call to the end of the answer. */
  latencyMs: number
  /** Milliseconds until the first body byte was written to the client, null when none was. */
  ttfbMs: number | null
  /** Why the request failed (or how a stream broke after it started), null on success. */
  error: string | null
  /**
   * The answer broke after its status went out (a stream cut off, or ended without its terminal
   * event, or reporting an error event): the client got `status` and then the error, so the row
   * keeps that status and counts as an error (usage `errors`, `logs --status 5xx`).
   */
  broken?: boolean
  /** The request id the client saw (upstream's, or minted here). */
  requestId: string
  clientAborted: boolean
  attempts: ProxyAttempt[]
  /** The family the answering (or last tried) upstream speaks, when it was translated. */
  upstreamFamily?: Family
  /**
   * The upstream refused a prompt past its context window and said how large the window is
   * (tokens): learned per provider and model (`GET /api/adaptations`, `gwctl doctor`).
   */
  contextWindow?: number
  /**
   * What a chat stream's tool calls lacked of OpenAI's format (./taps/tap.ts
   * `UsageTap.toolCallFaults`): learned per provider and model.
   */
  toolCallFaults?: ToolCallFaults
  /**
   * Tries of another provider or model than the row's whose upstream billed an answer the client
   * never got (an empty answer, a translated stream that failed while its start was held, a paused
   * JSON turn's calls before its continuation failed): each is logged as a row of its own
   * (./log-entry.ts `billedTryEntries`), so that `gwctl usage` counts its tokens under its
   * provider and model, at its prices.
   */
  billedTries?: BilledTry[]
}

/** A try the client never got the answer of, which its upstream billed (ProxyResult `billedTries`). */
export interface BilledTry {
  provider: string | null
  model: string | null
  /** What the upstream reported for it, summed over the tries of that provider and model. */
  usage: Usage
  /** Why the client never got it (the try's failure), and whose row holds the client's answer. */
  error: string
  /**
   * The status its row says: the upstream's where it answered (200 for Gemini's empty answer, of
   * which the client saw nothing: no outage), or failed with a 5xx or 429; 502 where nothing usable
   * came back (a stream that broke while its start was held). (review72 #3)
   */
  status: number
  /** The try was of a target other than the policy's first. */
  fallback: boolean
  /** The family its upstream speaks, when it was translated. */
  upstreamFamily?: Family
  /** Milliseconds from the request's start to the try's end. */
  latencyMs: number
}

/** The result of a request the gateway answered itself, before any upstream was tried. */
export function gatewayAnswered(
  status: number,
  error: string,
  startedAt: number,
  requestId = '',
): ProxyResult {
  return {
    status,
    provider: null,
    model: null,
    requestedModel: null,
    fallback: false,
    stream: false,
    usage: null,
    latencyMs: Date.now() - startedAt,
    ttfbMs: null,
    error,
    requestId,
    clientAborted: false,
    attempts: [],
  }
}
