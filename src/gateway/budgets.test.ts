import {describe, expect, it} from 'vitest'

import type {BudgetPricer} from './budgets.js'
import {
  BudgetCounter,
  budgetCovers,
  budgetView,
  exceededMessage,
  parseBudgetAmount,
  parseOnExceed,
  periodBounds,
} from './budgets.js'
import type {BudgetRecord} from '../store/state-schema.js'
import {initialState, validateState} from '../store/state-schema.js'

const iso = (ms: number) => new Date(ms).toISOString()

describe('periodBounds (UTC calendar periods)', () => {
  it('a day runs from 00:00 to the next 00:00', () => {
    const b = periodBounds('daily', Date.parse('2026-11-26T23:59:59.999Z'))
    expect([iso(b.start), iso(b.reset)]).toEqual(['2026-11-26T00:00:00.000Z', '2026-11-27T00:00:00.000Z'])
    const midnight = periodBounds('daily', Date.parse('2026-11-27T00:00:00.000Z'))
    expect(iso(midnight.start)).toBe('2026-11-27T00:00:00.000Z')
  })

  it('a week starts on Monday, Sunday included in the week before', () => {
    // 2026-11-29 is a Sunday, 2026-11-30 a Monday
    const sunday = periodBounds('weekly', Date.parse('2026-11-29T12:00:00Z'))
    expect([iso(sunday.start), iso(sunday.reset)]).toEqual([
      '2026-11-23T00:00:00.000Z',
      '2026-11-30T00:00:00.000Z',
    ])
    const monday = periodBounds('weekly', Date.parse('2026-11-30T00:00:00Z'))
    expect(iso(monday.start)).toBe('2026-11-30T00:00:00.000Z')
  })

  it('a month runs from the 1st, across year ends and leap days', () => {
    const dec = periodBounds('monthly', Date.parse('2026-12-31T18:00:00Z'))
    expect([iso(dec.start), iso(dec.reset)]).toEqual(['2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'])
    const feb = periodBounds('monthly', Date.parse('2028-02-29T10:00:00Z'))
    expect(iso(feb.reset)).toBe('2028-03-01T00:00:00.000Z')
  })
})

describe('parsing', () => {
  it('reads USD amounts and refuses what is not one, naming the rule', () => {
    expect(parseBudgetAmount('5', false)).toBe(5)
    expect(parseBudgetAmount('$2.50', false)).toBe(2.5)
    expect(parseBudgetAmount('0', false)).toMatch(/more than 0/)
    expect(parseBudgetAmount('-1', false)).toMatch(/not an amount in USD/)
    expect(parseBudgetAmount('5k', false)).toMatch(/--tokens/)
  })

  it('reads token amounts with k/M/B and wants whole tokens', () => {
    expect(parseBudgetAmount('500k', true)).toBe(500_000)
    expect(parseBudgetAmount('2M', true)).toBe(2_000_000)
    expect(parseBudgetAmount('1.5k', true)).toBe(1500)
    expect(parseBudgetAmount('1.5', true)).toMatch(/whole number/)
    expect(parseBudgetAmount('$5', true)).toMatch(/not a token amount/)
  })

  it('reads --on-exceed', () => {
    expect(parseOnExceed('block')).toEqual({action: 'block'})
    expect(parseOnExceed('fallback:openai')).toEqual({action: 'fallback', provider: 'openai'})
    expect(parseOnExceed('fallback:local:llama3:8b')).toEqual({
      action: 'fallback',
      provider: 'local',
      model: 'llama3:8b',
    })
    expect(parseOnExceed('fallback:')).toMatch(/block, or fallback:PROVIDER/)
    expect(parseOnExceed('deny')).toMatch(/not an action/)
  })
})

describe('budgetCovers', () => {
  const who = {agentId: 'agt_1', keyPrefix: 'gw-ab12…', policyId: 'default', project: 'web'}
  it('matches the one field of its scope', () => {
    expect(budgetCovers({scope: 'agent', target: 'agt_1'}, who)).toBe(true)
    expect(budgetCovers({scope: 'agent', target: 'agt_2'}, who)).toBe(false)
    expect(budgetCovers({scope: 'key', target: 'gw-ab12…'}, who)).toBe(true)
    expect(budgetCovers({scope: 'policy', target: 'default'}, who)).toBe(true)
    expect(budgetCovers({scope: 'project', target: 'web'}, who)).toBe(true)
    expect(budgetCovers({scope: 'project', target: 'api'}, who)).toBe(false)
  })
})

/** $1 per 1M input, $4 per 1M output, cache at a quarter; `unknown` unpriced. */
const pricer: BudgetPricer = {
  cost: (model, t) =>
    model === 'unknown'
      ? null
      : (t.inputTokens * 1 + t.outputTokens * 4 + (t.cacheReadTokens + t.cacheCreationTokens) * 0.25) / 1e6,
}

describe('BudgetCounter', () => {
  it('sums per provider and model, prices each group, keeps unpriced tokens apart', () => {
    const c = new BudgetCounter(pricer)
    c.add('p', 'm', {
      inputTokens: 1000,
      outputTokens: 500,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      requests: 1,
    })
    c.add('p', 'm', {
      inputTokens: 1000,
      outputTokens: 500,
      cacheReadTokens: 4000,
      cacheCreationTokens: 0,
      requests: 1,
    })
    c.add('p', 'unknown', {
      inputTokens: 10,
      outputTokens: 10,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      requests: 1,
    })
    // 2000 in ($0.002) + 1000 out ($0.004) + 4000 cache read ($0.001)
    expect(c.spentUSD).toBeCloseTo(0.007, 12)
    expect(c.tokens).toBe(2000 + 1000 + 4000 + 20)
    expect(c.unpricedModels).toEqual(['unknown'])
  })

  it('its view says spent, percent, state and reset, and the 429 sentence names them', () => {
    const record: BudgetRecord = {
      id: 'bgt_00000001',
      scope: 'agent',
      target: 'agt_1',
      period: 'daily',
      unit: 'usd',
      limit: 0.005,
      onExceed: {action: 'block'},
      createdAt: 0,
      updatedAt: 0,
    }
    const c = new BudgetCounter(pricer)
    c.add('p', 'm', {
      inputTokens: 1000,
      outputTokens: 1000,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      requests: 1,
    })
    const now = Date.parse('2026-11-26T10:00:00Z')
    const view = budgetView(record, c, {nowMs: now, name: 'codex', source: 'gateway'})
    expect(view).toMatchObject({spent: 0.005, percent: 100, state: 'exceeded', name: 'codex'})
    expect(iso(view.resetAt)).toBe('2026-11-27T00:00:00.000Z')
    expect(exceededMessage(view)).toBe(
      'Budget exceeded: agent "codex" has spent $0.0050 of its daily budget of $0.0050. It resets at 2026-11-27T00:00:00.000Z.',
    )
  })
})

describe('the state schema of budgets', () => {
  const valid: BudgetRecord = {
    id: 'bgt_0a1b2c3d',
    scope: 'agent',
    target: 'agt_1',
    period: 'daily',
    unit: 'usd',
    limit: 5,
    onExceed: {action: 'fallback', provider: 'openai', model: 'gpt-4o-mini'},
    createdAt: 1,
    updatedAt: 1,
  }
  const problems = (budget: unknown) => validateState({...initialState(), budgets: [budget]})

  it('takes a valid budget, and a state without budgets', () => {
    expect(problems(valid)).toEqual([])
    expect(validateState(initialState())).toEqual([])
  })

  it('refuses what the CLI never writes: a zero limit, an unknown scope, a fallback without provider, a block with one', () => {
    expect(problems({...valid, limit: 0}).join()).toMatch(/limit/)
    expect(problems({...valid, scope: 'team'}).join()).toMatch(/scope/)
    expect(problems({...valid, onExceed: {action: 'fallback'}}).join()).toMatch(/provider/)
    expect(problems({...valid, onExceed: {action: 'block', provider: 'x'}}).length).toBeGreaterThan(0)
    expect(problems({...valid, id: 'x'}).join()).toMatch(/id/)
  })
})
