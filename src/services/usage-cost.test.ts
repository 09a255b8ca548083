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
// (20 requests: 150k tokens each, under Claude Sonnet 4's 200k long-context threshold)
const group = (key: string, model: string | null, provider: string | null = null) => ({
  key,
  provider,
  model,
  requests: 20,
  errors: 0,
  fallbacks: 0,
  reasoningTokens: 0,
  cache1hTokens: 0,
  ...tokens,
})

describe('usage cost', () => {
  it('prices cache reads apart from input, and a provider price wins', async () => {
    const pricer = await createPricer(new Map([['mine', {input: 1, output: 2}]]))
    // claude-sonnet-4: $3 input, $0.30 cache read, $15 output per 1M.
    expect(pricer.cost('claude-sonnet-4-20250514', {...tokens, requests: 20})).toBeCloseTo(18.3, 6)
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
    expect(totals.requests).toBe(60)
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

  describe('cache writes at their own prices (hand-computed dollars)', () => {
    const none = {inputTokens: 0, outputTokens: 0, cacheReadTokens: 0}
    it('a 5-minute write costs 1.25x input', async () => {
      const pricer = await createPricer(new Map())
      // claude-sonnet-4: input $3 per 1M, so a 5-minute write is $3.75 per 1M (10 requests of 100k).
      expect(
        pricer.cost('claude-sonnet-4-20250514', {...none, cacheCreationTokens: 1_000_000, requests: 10}),
      ).toBeCloseTo(3.75, 9)
      // claude-haiku-4-5: input $1, write $1.25 per 1M; 40k written: $0.05.
      expect(pricer.cost('claude-haiku-4-5', {...none, cacheCreationTokens: 40_000})).toBeCloseTo(0.05, 9)
    })

    it('a 1-hour write costs 2x input, not the 5-minute price', async () => {
      const pricer = await createPricer(new Map())
      // 1M written to the 1-hour cache of claude-sonnet-4 (10 requests): 2 x $3 = $6 (the defect
      // priced $3.75).
      expect(
        pricer.cost('claude-sonnet-4-20250514', {
          ...none,
          cacheCreationTokens: 1_000_000,
          cache1hTokens: 1_000_000,
          requests: 10,
        }),
      ).toBeCloseTo(6, 9)
      // A mixed request: 10k input ($0.03), 20k 5-minute writes ($0.075), 30k 1-hour writes
      // ($0.18), 50k cache reads ($0.015), 2k output ($0.03): $0.33.
      expect(
        pricer.cost('claude-sonnet-4-20250514', {
          inputTokens: 10_000,
          cacheCreationTokens: 50_000,
          cache1hTokens: 30_000,
          cacheReadTokens: 50_000,
          outputTokens: 2_000,
        }),
      ).toBeCloseTo(0.33, 9)
      // claude-opus-4-1: input $15, so 100k 1-hour writes are $3.00 and 100k 5-minute ones $1.875.
      expect(
        pricer.cost('claude-opus-4-1', {...none, cacheCreationTokens: 200_000, cache1hTokens: 100_000}),
      ).toBeCloseTo(4.875, 9)
    })

    it('a request over the long-context threshold pays the tier of every part', async () => {
      const pricer = await createPricer(new Map())
      // claude-sonnet-4-5 over 200k input tokens: input $6, 5-minute write $7.50, 1-hour write $12,
      // cache read $0.60, output $22.50 per 1M. One request of 100k input, 100k 5-minute writes,
      // 100k 1-hour writes, 10k output: 0.6 + 0.75 + 1.2 + 0.225 = $2.775.
      const big = {
        inputTokens: 100_000,
        cacheCreationTokens: 200_000,
        cache1hTokens: 100_000,
        cacheReadTokens: 0,
        outputTokens: 10_000,
      }
      expect(pricer.cost('claude-sonnet-4-5', big)).toBeCloseTo(2.775, 9)
      // The same tokens as 10 requests of 30k: the base tier ($3, $3.75, $6, $15):
      // 0.3 + 0.375 + 0.6 + 0.15 = $1.425.
      expect(pricer.cost('claude-sonnet-4-5', {...big, requests: 10})).toBeCloseTo(1.425, 9)
    })

    it('Claude Sonnet 4 over 200k input tokens: Anthropic’s long-context rate, which the table lacks', async () => {
      const pricer = await createPricer(new Map())
      // One request of 50k input, 150k cache reads, 40k 5-minute and 20k 1-hour writes (260k in
      // all), 10k output, at 2x input and cache and 1.5x output (6, 0.60, 7.50, 12, 22.50 per 1M):
      // 0.30 + 0.09 + 0.30 + 0.24 + 0.225 = $1.155.
      const big = {
        inputTokens: 50_000,
        cacheReadTokens: 150_000,
        cacheCreationTokens: 60_000,
        cache1hTokens: 20_000,
        outputTokens: 10_000,
      }
      for (const model of ['claude-sonnet-4-20250514', 'claude-sonnet-4-0', 'claude-sonnet-4'])
        expect(pricer.cost(model, big), model).toBeCloseTo(1.155, 12)
      // Exactly 200k is not over: the base rate (3, 0.30, 3.75, 6, 15): 0.15 + 0.045 + 0.075 + 0.06
      // (10k 1-hour) + 0.15 = $0.48.
      const at = {...big, cacheReadTokens: 100_000, cacheCreationTokens: 50_000, cache1hTokens: 10_000}
      expect(pricer.cost('claude-sonnet-4-20250514', at)).toBeCloseTo(0.15 + 0.03 + 0.15 + 0.06 + 0.15, 12)
      // Sonnet 4.5 (the table's own tiers) prices the big request alike
      expect(pricer.cost('claude-sonnet-4-5', big)).toBeCloseTo(1.155, 12)
    })

    it('a memo written before 1-hour prices is asked again, not trusted', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'gwctl-price-memo-'))
      try {
        const memoPath = join(dir, 'price-memo.json')
        await createPricer(new Map(), memoPath).then((p) =>
          p.cost('claude-sonnet-4-20250514', {...none, cacheCreationTokens: 1}),
        )
        const memo = JSON.parse(readFileSync(memoPath, 'utf8'))
        delete memo.models['claude-sonnet-4-20250514'].cacheWrite1h
        writeFileSync(memoPath, JSON.stringify(memo))
        const pricer = await createPricer(new Map(), memoPath)
        expect(
          pricer.cost('claude-sonnet-4-20250514', {
            ...none,
            cacheCreationTokens: 1e6,
            cache1hTokens: 1e6,
            requests: 10,
          }),
        ).toBeCloseTo(6, 9)
      } finally {
        rmSync(dir, {recursive: true, force: true})
      }
    })
  })
})
