/** Turns a proxy result into the log store's row (the daemon adds who asked). */
import type {LogEntry} from '../../store/log-store.js'
import type {Family} from '../../store/schema.js'
import type {ProxyResult} from './proxy.js'

export interface RequestIdentity {
  agentId: string | null
  keyPrefix: string | null
  policyId: string | null
  /** `x-gw-project` header, else the agent's project. */
  project: string | null
}

/** The log row of one proxied request; `time` is when the request arrived (Unix ms). */
export function logEntryFor(
  entrance: Family,
  identity: RequestIdentity,
  result: ProxyResult,
  time: number = Date.now() - result.latencyMs,
): LogEntry {
  const usage = result.usage
  return {
    time,
    agentId: identity.agentId,
    keyPrefix: identity.keyPrefix,
    policyId: identity.policyId,
    entrance,
    requestedModel: result.requestedModel,
    provider: result.provider,
    model: result.model,
    status: result.status,
    fallback: result.fallback,
    inputTokens: usage?.inputTokens ?? 0,
    outputTokens: usage?.outputTokens ?? 0,
    cacheReadTokens: usage?.cacheReadTokens ?? 0,
    cacheCreationTokens: usage?.cacheCreationTokens ?? 0,
    cache1hTokens: usage?.cache1hTokens ?? 0,
    reasoningTokens: usage?.reasoningTokens ?? 0,
    latencyMs: Math.round(result.latencyMs * 100) / 100,
    ttfbMs: result.ttfbMs === null ? null : Math.round(result.ttfbMs * 100) / 100,
    error: result.error,
    project: identity.project,
    // The id the agent's history will hold: the response id of the body where the protocol has
    // one the agent records (Codex), else the request-id header forwarded or minted.
    requestId: usage?.responseId || result.requestId || null,
    upstreamFamily: result.upstreamFamily ?? null,
    broken: result.broken,
  }
}

/**
 * The rows of a request's tries whose upstream billed an answer the client never got, of another
 * provider or model than its own row (ProxyResult `billedTries`): one each, so that the hourly
 * roll-up and `gwctl usage` count their tokens under that provider and model, at its prices (a
 * row holds one). Each has the try's status (BilledTry `status`: 200 for an answer of nothing, its
 * note saying why it is a row of its own; the upstream's 5xx or 429; 502 where nothing usable came
 * back), so that an empty 200 does not count as an outage in provider health, Prometheus or
 * `gwctl usage` errors (review72 #3). It is at the request's time, with no request id (the client
 * saw none of it), and marked `billedTry`: as any row, it counts as a request (one the gateway sent that
 * upstream, which billed it) with its tokens and cost under that provider and model, and `usage
 * reconcile` leaves it out (reconcile-query.ts).
 */
export function billedTryEntries(
  entrance: Family,
  identity: RequestIdentity,
  result: ProxyResult,
  time: number = Date.now() - result.latencyMs,
): LogEntry[] {
  const tries = result.billedTries
  if (!tries) return []
  return tries.map((tried) => ({
    time,
    agentId: identity.agentId,
    keyPrefix: identity.keyPrefix,
    policyId: identity.policyId,
    entrance,
    requestedModel: result.requestedModel,
    provider: tried.provider,
    model: tried.model,
    status: tried.status,
    fallback: tried.fallback,
    inputTokens: tried.usage.inputTokens,
    outputTokens: tried.usage.outputTokens,
    cacheReadTokens: tried.usage.cacheReadTokens,
    cacheCreationTokens: tried.usage.cacheCreationTokens,
    cache1hTokens: tried.usage.cache1hTokens ?? 0,
    reasoningTokens: tried.usage.reasoningTokens,
    latencyMs: Math.round(tried.latencyMs * 100) / 100,
    ttfbMs: null,
    error: tried.error,
    project: identity.project,
    requestId: null,
    upstreamFamily: tried.upstreamFamily ?? null,
    broken: false,
    billedTry: true,
  }))
}
