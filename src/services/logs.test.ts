import {writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it, vi} from 'vitest'

import {freePort, tempHome} from '../../test/helpers/cli.js'

import {renderTable} from '../core/output.js'
import type {LogRow, UsageRow} from '../store/log-query.js'
import {filtersFromFlags} from './log-filters.js'
import {usageTotals} from '../store/log-query.js'
import {issueGatewayKey, listAgents} from './gateway-keys.js'
import {LOG_COLUMNS, followLines, formatCount, usageColumns} from '../cli/log-columns.js'
import {agentNames, namesFromStateFile, parseLimit, parseSince} from './logs.js'

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0)

function row(over: Partial<LogRow> = {}): LogRow {
  return {
    id: 1,
    time: Date.UTC(2026, 10, 22, 11, 59, 30),
    agentId: 'agt_a',
    keyPrefix: 'gw-abc…',
    policyId: 'default',
    entrance: 'messages',
    requestedModel: 'claude',
    provider: 'anthropic',
    model: 'claude-sonnet',
    status: 200,
    fallback: false,
    inputTokens: 1200,
    outputTokens: 34,
    cacheReadTokens: 100,
    cacheCreationTokens: 20,
    reasoningTokens: 0,
    latencyMs: 812.4,
    ttfbMs: 95.6,
    error: null,
    project: null,
    requestId: 'req_1',
    ...over,
  }
}

describe('parseSince', () => {
  it('reads durations back from now', () => {
    expect(parseSince('1h', NOW)).toBe(NOW / 1000 - 3600)
    expect(parseSince('7d', NOW)).toBe(NOW / 1000 - 7 * 86_400)
    expect(parseSince('30m', NOW)).toBe(NOW / 1000 - 1800)
    expect(parseSince('2w', NOW)).toBe(NOW / 1000 - 14 * 86_400)
    expect(parseSince('45s', NOW)).toBe(NOW / 1000 - 45)
  })

  it('takes Unix seconds as they are', () => {
    expect(parseSince('1763800000', NOW)).toBe(1_763_800_000)
  })

  it('refuses anything else with exit 2', () => {
    for (const bad of ['yesterday', '1y', '-1h', '', '1.5.2h']) {
      expect(() => parseSince(bad, NOW)).toThrow(
        expect.objectContaining({exitCode: 2, code: 'invalid_since'}),
      )
    }
  })
})

describe('parseLimit and filtersFromFlags', () => {
  it('accepts 1..10000 and refuses the rest', () => {
    expect(parseLimit(undefined)).toBeUndefined()
    expect(parseLimit(1)).toBe(1)
    expect(parseLimit(10_000)).toBe(10_000)
    expect(() => parseLimit(0)).toThrow(expect.objectContaining({exitCode: 2}))
    expect(() => parseLimit(10_001)).toThrow(expect.objectContaining({exitCode: 2}))
  })

  it('maps flags to store filters', () => {
    expect(
      filtersFromFlags({agent: 'agt_a', policy: 'p', status: '5xx', since: '1h', limit: 5}, NOW),
    ).toEqual({agentId: 'agt_a', policyId: 'p', status: '5xx', since: NOW / 1000 - 3600, limit: 5})
    expect(filtersFromFlags({}, NOW)).toEqual({})
  })
})

describe('log table', () => {
  it('renders every column a user reads', () => {
    const text = renderTable(
      [row(), row({id: 2, status: 502, fallback: true, error: 'upstream\nrefused', ttfbMs: null})],
      LOG_COLUMNS,
    )
    const [header, first, second] = text.split('\n')
    expect(header.split(/\s{2,}/)).toEqual([
      'TIME',
      'AGENT',
      'ENTRANCE',
      'PROVIDER/MODEL',
      'STATUS',
      'FALLBACK',
      'IN',
      'OUT',
      'CACHED',
      'LATENCY',
      'TTFB',
      'ERROR',
    ])
    expect(first.split(/\s+/)).toEqual([
      '2026-11-22',
      '11:59:30',
      'agt_a',
      'messages',
      'anthropic/claude-sonnet',
      '200',
      '-',
      '1200',
      '34',
      '120',
      '812ms',
      '96ms',
    ])
    expect(second).toMatch(/502\s+yes\s+1200\s+34\s+120\s+812ms\s+-\s+upstream refused$/)
  })

  it('follow lines keep fixed columns across batches', () => {
    const [header, a] = followLines([row()], true)
    const [b] = followLines([row({agentId: 'agt_much_longer_agent_id_here', status: 429})])
    expect(header.startsWith('TIME')).toBe(true)
    expect(a.indexOf('messages')).toBe(b.indexOf('messages'))
    expect(a.indexOf('messages')).toBe(header.indexOf('ENTRANCE'))
    expect(b).toContain('agt_much_longer_age…')
  })
})

describe('usage', () => {
  const rows: UsageRow[] = [
    {
      key: 'm1',
      requests: 3,
      errors: 1,
      fallbacks: 1,
      inputTokens: 1000,
      outputTokens: 200,
      cacheReadTokens: 10,
      cacheCreationTokens: 5,
      reasoningTokens: 7,
    },
    {
      key: null,
      requests: 1,
      errors: 0,
      fallbacks: 0,
      inputTokens: 2_000_000,
      outputTokens: 1,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      reasoningTokens: 0,
    },
  ]

  it('sums totals', () => {
    expect(usageTotals(rows)).toEqual({
      requests: 4,
      errors: 1,
      fallbacks: 1,
      inputTokens: 2_001_000,
      outputTokens: 201,
      cacheReadTokens: 10,
      cacheCreationTokens: 5,
      reasoningTokens: 7,
    })
  })

  it('renders the pivot column, grouped counts and (none)', () => {
    const text = renderTable(rows, usageColumns('model'))
    expect(text.split('\n')[0]).toMatch(/^MODEL\s+REQUESTS\s+ERRORS/)
    expect(text).toContain('2,000,000')
    expect(text.split('\n')[2]).toMatch(/^\(none\)/)
  })
})

describe('agent names without a daemon (the state file read as it is)', () => {
  let home: string
  let cleanup: () => void
  let saved: Record<string, string | undefined>
  beforeEach(async () => {
    ;({home, cleanup} = tempHome())
    saved = {GWCTL_HOME: process.env.GWCTL_HOME, GWCTL_GATEWAY_PORT: process.env.GWCTL_GATEWAY_PORT}
    process.env.GWCTL_HOME = home
    process.env.GWCTL_GATEWAY_PORT = String(await freePort()) // no gateway there
  })
  afterEach(() => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k]
      else process.env[k] = v
    }
    cleanup()
  })

  const issue = (agentName: string) =>
    issueGatewayKey({
      agentName,
      agentType: 'claude_code',
      employeeName: 'Alice',
      employeeContact: 'a@example.com',
    })

  it('names agents and their active keys as the state store does, and not a rotated-out key', async () => {
    const first = await issue('alice-claude')
    await issue('ci-bot')
    // the same agent again, past the 5 s issue limit: a new key, the old one revoked
    vi.useFakeTimers({toFake: ['Date']})
    vi.setSystemTime(Date.now() + 6_000)
    const rotated = await issue('alice-claude').finally(() => vi.useRealTimers())
    expect(rotated.rotated).toBe(true)
    const state = join(home, 'state.json')
    const light = namesFromStateFile(state)!
    const views = await listAgents()
    expect([...light.byId]).toEqual(views.map((a) => [a.agentId, a.name]))
    expect([...light.byKeyPrefix].sort()).toEqual(
      views.map((a) => [a.keyPrefix!, a.name] as [string, string]).sort(),
    )
    expect(light.byKeyPrefix.has(first.keyPrefix)).toBe(false)
    expect(await agentNames()).toEqual(light)
  })

  it('is empty without a state file, and leaves an unexpected shape to the store', () => {
    const state = join(home, 'state.json')
    expect(namesFromStateFile(state)).toEqual({byId: new Map(), byKeyPrefix: new Map()})
    writeFileSync(state, '{"agents": [{"id": 1}], "keys": []}')
    expect(namesFromStateFile(state)).toBeUndefined()
    writeFileSync(state, '{"agents": [], "keys": {}}')
    expect(namesFromStateFile(state)).toBeUndefined()
    writeFileSync(state, 'not json')
    expect(namesFromStateFile(state)).toBeUndefined()
  })
})

describe('formatCount', () => {
  it('groups integers in threes as en-US does', () => {
    const samples = [0, 7, 12, 123, 1234, 12345, 123456, 1234567, 1000000, -1, -1234, -1234567, 2 ** 53 - 1]
    for (const n of samples) expect(formatCount(n)).toBe(n.toLocaleString('en-US'))
  })

  it('leaves fractions and non-finite numbers to toLocaleString', () => {
    expect(formatCount(1234.5)).toBe('1,234.5')
    expect(formatCount(Number.NaN)).toBe('NaN')
    expect(formatCount(-0)).toBe((-0).toLocaleString('en-US'))
  })
})
