/**
 * Cost estimates for usage rows, from the offline, cache-aware price table that
 * `@pydantic/genai-prices` ships (loaded only when a cost is asked for; nothing is fetched from
 * the network). A provider's own `--input-price/--output-price` (USD per 1M tokens) wins for the
 * requests it answered. A model neither knows is unpriced: `null`, never 0.
 */
import {readFileSync} from 'node:fs'

import type {calcPrice as CalcPriceFn} from '@pydantic/genai-prices'

import {homeFile} from '../store/paths.js'

export interface CostTokens {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  /**
   * How many requests these tokens add up (default 1). Long-context tiers apply per request
   * (Claude Sonnet 4.5 and Gemini 2.5 Pro cost twice as much for a request over 200k input tokens),
   * so a sum is priced as `requests` times a request of the average size, never as one huge request.
   */
  requests?: number
}

export interface ProviderPrices {
  input?: number
  output?: number
  cachedInput?: number
}

export interface Pricer {
  /** USD for `tokens` of `model` (answered by `provider` when known), or null when unpriced. */
  cost(model: string | null, tokens: CostTokens, provider?: string | null): number | null
}

/** Provider prices from state.json (read-only; a missing or unreadable file means none). */
export function providerPrices(path = homeFile('state')): Map<string, ProviderPrices> {
  try {
    const data = JSON.parse(readFileSync(path, 'utf8')) as {
      providers?: Array<{name: string; prices?: ProviderPrices}>
    }
    return new Map((data.providers ?? []).filter((p) => p.prices).map((p) => [p.name, p.prices!]))
  } catch {
    return new Map()
  }
}

/** Loads the price table and returns a pricer (memoised per model). */
export async function createPricer(
  overrides: Map<string, ProviderPrices> = providerPrices(),
): Promise<Pricer> {
  const {calcPrice} = (await import('@pydantic/genai-prices')) as {calcPrice: typeof CalcPriceFn}
  const known = new Map<string, boolean>()
  return {
    cost(model, t, provider) {
      const own = provider ? overrides.get(provider) : undefined
      if (own && (own.input !== undefined || own.output !== undefined)) {
        const input = own.input ?? 0
        return (
          ((t.inputTokens + t.cacheCreationTokens) * input +
            t.cacheReadTokens * (own.cachedInput ?? input) +
            t.outputTokens * (own.output ?? 0)) /
          1e6
        )
      }
      if (!model || known.get(model) === false) return null
      try {
        const n = t.requests !== undefined && t.requests > 1 ? t.requests : 1
        const r = calcPrice(
          {
            // genai-prices counts cache reads and writes inside input_tokens.
            input_tokens: (t.inputTokens + t.cacheReadTokens + t.cacheCreationTokens) / n,
            cache_read_tokens: t.cacheReadTokens / n,
            cache_write_tokens: t.cacheCreationTokens / n,
            output_tokens: t.outputTokens / n,
          },
          model,
        )
        const price = r?.total_price
        known.set(model, typeof price === 'number')
        return typeof price === 'number' ? price * n : null
      } catch {
        known.set(model, false)
        return null
      }
    },
  }
}
