/**
 * A gateway log row for tests that write the log store directly: a 200 chat answer of the
 * simulator's model at 2026-11-20 10:30 UTC, 10 tokens in and 5 out; `overrides` sets what a test
 * looks at.
 */
import type {LogEntry} from '../../src/store/log-store.js'

export const LOG_T0 = Date.UTC(2026, 10, 20, 10, 30)

export function logEntry(overrides: Partial<LogEntry> = {}): LogEntry {
  return {
    time: LOG_T0,
    agentId: 'agent-a',
    keyPrefix: 'gw-aaaa…',
    policyId: 'default',
    entrance: 'chat',
    requestedModel: 'sim-mini',
    provider: 'sim',
    model: 'sim-mini',
    status: 200,
    fallback: false,
    inputTokens: 10,
    outputTokens: 5,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    reasoningTokens: 0,
    latencyMs: 1,
    ttfbMs: 1,
    error: null,
    project: null,
    ...overrides,
  }
}
