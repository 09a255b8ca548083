import {mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'

import {formatCost} from '../cli/usage-columns.js'
import {reportRows} from './usage.js'
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

  it('memoises what the table says per model, so a later run prices without loading it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gwctl-price-memo-'))
    try {
      const memoPath = join(dir, 'price-memo.json')
      const small = {inputTokens: 1000, outputTokens: 100, cacheReadTokens: 5000, cacheCreationTokens: 10}
      const big = {inputTokens: 300_000, outputTokens: 1000, cacheReadTokens: 0, cacheCreationTokens: 0}
      const first = await createPricer(new Map(), memoPath)
      const costs = [
        first.cost('claude-sonnet-4-5', small),
        first.cost('claude-sonnet-4-5', big),
        first.cost('nope-x', small),
      ]
      expect(costs[2]).toBeNull()
      const memo = JSON.parse(readFileSync(memoPath, 'utf8'))
      expect(memo.models['nope-x']).toBeNull()
      // claude-sonnet-4-5 is linear up to 200k input tokens per request, then its long-context tier.
      const entry = memo.models['claude-sonnet-4-5']
      expect(entry.input).toBeCloseTo(3e-6, 12)
      expect(entry.output).toBeCloseTo(15e-6, 12)
      expect(entry.linearUpTo).toBe(200_000)
      expect(statSync(memoPath).mode & 0o777).toBe(0o600)
      const second = await createPricer(new Map(), memoPath)
      expect([
        second.cost('claude-sonnet-4-5', small),
        second.cost('claude-sonnet-4-5', big),
        second.cost('nope-x', small),
      ]).toEqual(costs)
      expect(costs[1]).toBeCloseTo(300_000 * 6e-6 + 1000 * 22.5e-6, 9)

      // The memo is what answers small requests (a changed rate shows), the table the big ones...
      memo.models['claude-sonnet-4-5'].input = 1
      writeFileSync(memoPath, JSON.stringify(memo))
      const tampered = await createPricer(new Map(), memoPath)
      expect(
        tampered.cost('claude-sonnet-4-5', {
          ...small,
          cacheReadTokens: 0,
          cacheCreationTokens: 0,
          outputTokens: 0,
        }),
      ).toBe(1000)
      expect(tampered.cost('claude-sonnet-4-5', big)).toBeCloseTo(costs[1]!, 9)
      // ...and a memo of another table version is not used.
      writeFileSync(memoPath, JSON.stringify({...memo, table: '0.0.0-old'}))
      const fresh = await createPricer(new Map(), memoPath)
      expect(fresh.cost('claude-sonnet-4-5', small)).toBeCloseTo(costs[0]!, 12)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
