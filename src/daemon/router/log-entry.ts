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
