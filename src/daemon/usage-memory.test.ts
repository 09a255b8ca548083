import {describe, expect, it} from 'vitest'

import type {LogEntry, LogStore} from '../store/log-store.js'
import type {EntryFilters, SessionEntry} from '../store/usage-entries.js'
import {emitGatewayEvent} from './events.js'
import {statuslineAnswer} from './usage-memory.js'

const HOUR = 3_600_000
const NOW = Date.parse('2026-11-20T12:30:00Z')

const row = (ts: number, input: number, session: string | null = null): SessionEntry => ({
  ts,
  model: 'claude-sonnet-4-5',
  provider: null,
  session,
  inputTokens: input,
  outputTokens: 0,
  cacheReadTokens: 0,
  cacheCreationTokens: 0,
  cache1hTokens: 0,
})

/** A log store that only answers `usageEntries`, counting its reads. */
function fakeStore(rows: SessionEntry[]) {
  const reads: EntryFilters[] = []
  const store = {
    usageEntries(f: EntryFilters) {
      reads.push(f)
      return rows.filter((r) => f.sinceMs === undefined || r.ts >= f.sinceMs)
    },
  }
  return {store: store as unknown as LogStore, reads}
}

const logEntry = (time: number, inputTokens: number, cacheReadTokens = 0): LogEntry => ({
  time,
  agentId: 'agt_1',
  keyPrefix: null,
  policyId: 'default',
  entrance: 'messages',
  requestedModel: 'claude-sonnet-4-5',
  provider: 'anthropic',
  model: 'claude-sonnet-4-5',
  status: 200,
  fallback: false,
  inputTokens,
  outputTokens: 10,
  cacheReadTokens,
  cacheCreationTokens: 0,
  reasoningTokens: 0,
  latencyMs: 1,
  ttfbMs: null,
  error: null,
  project: null,
})

describe('the daemon’s statusline memory', () => {
  it('reads the database once, then follows the event bus; a history scan makes it read again', () => {
    const rows = [row(NOW - 30 * HOUR, 5), row(NOW - 2 * HOUR, 100, 'sess'), row(NOW - HOUR, 50)]
    const {store, reads} = fakeStore(rows)
    const midnight = Date.parse('2026-11-20T00:00:00Z')
    const first = statuslineAnswer(store, {todayStartMs: midnight, session: 'sess', now: NOW})
    expect(reads).toHaveLength(1)
    expect(first.source).toBe('daemon')
    expect(first.today.map((m) => [m.requests, m.inputTokens])).toEqual([[2, 150]])
    expect(first.session!.map((m) => m.inputTokens)).toEqual([100])
    expect(first.window).toMatchObject({requests: 2, inputTokens: 150, active: true})

    // a request the gateway served: in memory, input without its cached part, no database read
    emitGatewayEvent({type: 'request', entry: logEntry(NOW - 60_000, 1000, 400)})
    // an error without usage adds nothing
    emitGatewayEvent({type: 'request', entry: {...logEntry(NOW, 0), outputTokens: 0, status: 502}})
    const second = statuslineAnswer(store, {todayStartMs: midnight, session: 'sess', now: NOW})
    expect(reads).toHaveLength(1)
    expect(second.today.map((m) => m.requests).reduce((a, b) => a + b)).toBe(3)
    expect(second.window).toMatchObject({requests: 3, inputTokens: 750, cacheReadTokens: 400})

    // the history scanner added rows: the next answer reads them
    rows.push(row(NOW - 10 * 60_000, 7, 'sess'))
    emitGatewayEvent({type: 'usage', rows: 1})
    const third = statuslineAnswer(store, {todayStartMs: midnight, session: 'sess', now: NOW})
    expect(reads).toHaveLength(2)
    expect(third.session!.map((m) => m.inputTokens)).toEqual([107])
  })
})
