import {describe, expect, it} from 'vitest'

import {formatCost, reportRows} from './usage.js'
import {createPricer} from './usage-cost.js'

const tokens = {
  inputTokens: 1_000_000,
  outputTokens: 1_000_000,
  cacheReadTokens: 1_000_000,
  cacheCreationTokens: 0,
}
const group = (key: string, model: string | null, provider: string | null = null) => ({
  key,
  provider,
  model,
  requests: 1,
  errors: 0,
  fallbacks: 0,
  reasoningTokens: 0,
  ...tokens,
})

describe('usage cost', () => {
  it('prices cache reads apart from input, and a provider price wins', async () => {
    const pricer = await createPricer(new Map([['mine', {input: 1, output: 2}]]))
    // claude-sonnet-4: $3 input, $0.30 cache read, $15 output per 1M.
    expect(pricer.cost('claude-sonnet-4-20250514', tokens)).toBeCloseTo(18.3, 6)
    expect(pricer.cost('claude-sonnet-4-20250514', tokens, 'mine')).toBeCloseTo(1 + 1 + 2, 6)
    expect(pricer.cost('no-such-model-x', tokens)).toBeNull()
    expect(pricer.cost(null, tokens)).toBeNull()
  })

  it('an unknown model is "unpriced", never $0; a mixed row says so', async () => {
    const pricer = await createPricer(new Map())
    const {rows, totals} = reportRows(
      [group('a', 'no-such-model-x'), group('b', 'no-such-model-x'), group('b', 'claude-sonnet-4-20250514')],
      pricer,
      'project',
    )
    const a = rows.find((r) => r.key === 'a')!
    const b = rows.find((r) => r.key === 'b')!
    expect(a).toMatchObject({costUSD: null, unpricedModels: ['no-such-model-x'], totalTokens: 3_000_000})
    expect(formatCost(a)).toBe('unpriced')
    expect(b.costUSD).toBeCloseTo(18.3, 6)
    expect(formatCost(b)).toBe('$18.30+')
    expect(totals.costUSD).toBeCloseTo(18.3, 6)
    expect(totals.requests).toBe(3)
  })

  it('applies long-context tiers per request, not to a sum of many requests', async () => {
    const pricer = await createPricer(new Map())
    // claude-sonnet-4-5: $3 input and $15 output per 1M, $6 and $22.50 for a request over 200k input.
    const sum = {inputTokens: 1_000_000, outputTokens: 100_000, cacheReadTokens: 0, cacheCreationTokens: 0}
    // 1 000 requests of 1 000 input and 100 output tokens each: all at the base price.
    expect(pricer.cost('claude-sonnet-4-5', {...sum, requests: 1000})).toBeCloseTo(3 + 1.5, 6)
    // The same tokens in one request: the long-context price.
    expect(pricer.cost('claude-sonnet-4-5', sum)).toBeCloseTo(6 + 2.25, 6)
    // A usage row of 1 000 such requests costs what its requests cost one by one.
    const {rows} = reportRows(
      [{...group('a', 'claude-sonnet-4-5'), ...sum, requests: 1000}],
      pricer,
      'project',
    )
    const one = pricer.cost('claude-sonnet-4-5', {
      inputTokens: 1000,
      outputTokens: 100,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
    })!
    expect(rows[0].costUSD).toBeCloseTo(one * 1000, 6)
  })
})
