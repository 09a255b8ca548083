/**
 * Cost estimates for usage rows, from the offline, cache-aware price table that
 * `@pydantic/genai-prices` ships (nothing is fetched from the network; what it says of each model
 * is memoised in `price-memo.json`, so the table is loaded only for a model priced for the first
 * time). A provider's own `--input-price/--output-price` (USD per 1M tokens) wins for the
 * requests it answered. A model neither knows is unpriced: `null`, never 0.
 */
import {readFileSync, renameSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'

import type {calcPrice as CalcPriceFn} from '@pydantic/genai-prices'

import type {ContextBands} from '../store/context-bands.js'
import {homeFile} from '../store/paths.js'

export interface CostTokens {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  /**
   * The part of `cacheCreationTokens` written to the 1-hour cache (Claude's `ephemeral_1h`): billed
   * at the table's 1-hour write price, or twice the input price where the table has none
   * (Anthropic's rule); the rest is a 5-minute write at the table's write price (1.25x input).
   */
  cache1hTokens?: number
  /**
   * How many requests these tokens add up (default 1). Long-context tiers apply per request
   * (Claude Sonnet 4.5 and Gemini 2.5 Pro cost twice as much for a request over 200k input tokens),
   * so a sum is never priced as one huge request: the requests of each context band (`bands`) are
   * priced apart, as `requests` times a request of their average size, and so is the rest (band
   * 0: every request at or under the first threshold).
   */
  requests?: number
  /** The part of these sums made of requests past the first threshold, by band (store/context-bands.ts). */
  bands?: ContextBands
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

type CalcPrice = typeof CalcPriceFn

/**
 * What the price table says of one model, kept in `price-memo.json` so that `gwctl usage` and the
 * app do not load the table (about 50 ms) to price models they have priced before. USD per token;
 * `linearUpTo` is the largest request (input tokens, cache included) for which the price was
 * checked to be these rates times the tokens: a bigger average request (a long-context tier) asks
 * the table itself. `null`: the table does not know the model.
 */
interface MemoEntry {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
  /** A 1-hour cache write (the table's price, else 2x input). */
  cacheWrite1h: number
  /** Whether the table itself prices 1-hour writes (else 2x its input price is added). */
  tablePrices1h: boolean
  linearUpTo: number
  /** The table's id of the model (`claude-sonnet-4-0` for `claude-sonnet-4-20250514`). */
  tableModel?: string
  /** Anthropic's long-context rule, where the table prices the model flat ({@link LONG_CONTEXT}). */
  longContext?: LongContext
}

/** A long-context rate: a request over `over` input tokens pays `input` times the input and cache prices, `output` times the output price. */
interface LongContext {
  over: number
  input: number
  output: number
}

/**
 * Long-context prices the table lacks, by the table's model id. Anthropic bills a Claude Sonnet 4
 * request over 200k input tokens (1M-context beta) at 2x input, cache reads and writes, and 1.5x
 * output, as it bills Sonnet 4.5 (whose tiers the table has); genai-prices' table prices Sonnet 4
 * flat. Applied only while the table prices the model flat at every size probed: a table that
 * brings the tier is used as it is.
 */
const LONG_CONTEXT: Record<string, LongContext> = {
  'claude-sonnet-4-0': {over: 200_000, input: 2, output: 1.5},
}

interface PriceMemo {
  /** The table the entries come from ({@link tableKey}): another table starts afresh. */
  table: string
  models: Record<string, MemoEntry | null>
}

const require = createRequire(import.meta.url)

/** What `prices.json` holds: the downloaded provider list and where and when it came from. */
export interface SavedPrices {
  source: string
  fetchedAt: string
  /** The provider list, as the data file has it (genai-prices' `Provider[]`). */
  data: unknown[]
}

export interface Library {
  REMOTE_DATA_JSON_URL: string
  updatePrices: (factory: (options: {setProviderData: (data: unknown) => void}) => void) => void
  /** The provider list in use (the bundled one until data is loaded). */
  waitForUpdate: () => Promise<unknown[] | null>
}

export const library = (): Library => require('@pydantic/genai-prices') as Library

/** The version of the bundled table (the genai-prices package). */
export function bundledVersion(): string {
  try {
    const main = require.resolve('@pydantic/genai-prices')
    return (JSON.parse(readFileSync(join(dirname(main), '..', 'package.json'), 'utf8')) as {version: string})
      .version
  } catch {
    return 'unknown'
  }
}

/**
 * Reads `prices.json`. Undefined when there is none; throws a sentence when it is not usable
 * (not JSON, or not the shape `update` writes).
 */
export function readSavedPrices(path: string = homeFile('prices')): SavedPrices | undefined {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new Error(`cannot read ${path}: ${(error as Error).message}`)
  }
  let saved: SavedPrices
  try {
    saved = JSON.parse(text) as SavedPrices
  } catch (error) {
    throw new Error(`${path} is not JSON (${(error as Error).message})`)
  }
  if (!saved || !Array.isArray(saved.data) || typeof saved.source !== 'string')
    throw new Error(`${path} is not a price table written by \`gwctl usage prices update\``)
  return saved
}

/**
 * The key of the table in use, for the price memo: the bundled version, plus the time
 * prices.json was written when there is one (an update starts the memo afresh).
 */
export function tableKey(path: string = homeFile('prices')): string {
  try {
    return `${bundledVersion()}+prices@${statSync(path).mtimeMs}`
  } catch {
    return bundledVersion()
  }
}

/**
 * Makes the library price from prices.json when there is a usable one (else its bundled table).
 * Returns the problem when prices.json exists but cannot be loaded.
 */
export function activateSavedPrices(path: string = homeFile('prices')): string | undefined {
  let saved: SavedPrices | undefined
  try {
    saved = readSavedPrices(path)
  } catch (error) {
    return (error as Error).message
  }
  if (!saved) return undefined
  try {
    loadPriceData(library(), saved.data)
  } catch (error) {
    return `${path} cannot be loaded (${(error as Error).message}); the bundled table is used`
  }
  return undefined
}

/** Hands a provider list to the library, synchronously; throws what it refuses. */
export function loadPriceData(lib: Library, data: unknown): void {
  lib.updatePrices(({setProviderData}) => setProviderData(data))
}

function readMemo(path: string, table: string): PriceMemo {
  try {
    const memo = JSON.parse(readFileSync(path, 'utf8')) as PriceMemo
    if (memo.table === table && memo.models && typeof memo.models === 'object') return memo
  } catch {
    // none yet, or unreadable: a cache, rebuilt as models are priced
  }
  return {table, models: {}}
}

function writeMemo(path: string, memo: PriceMemo): void {
  const temp = `${path}.${process.pid}.tmp`
  try {
    writeFileSync(temp, JSON.stringify(memo), {mode: 0o600})
    renameSync(temp, path)
  } catch {
    rmSync(temp, {force: true}) // a read-only home: prices still work, only slower next time
  }
}

const PROBE_SIZES = [1_000, 16_000, 32_000, 64_000, 128_000, 200_000, 256_000, 500_000, 1_000_000, 2_000_000]

/** The model's per-token rates and how far they hold, from the table; null when it has no price. */
function memoEntry(calcPrice: CalcPrice, model: string): MemoEntry | null {
  const price = (
    input: number,
    cacheRead: number,
    cacheWrite: number,
    output: number,
    cacheWrite1h = 0,
  ): number | undefined => {
    const r = calcPrice(
      {
        input_tokens: input,
        cache_read_tokens: cacheRead,
        cache_write_tokens: cacheWrite,
        output_tokens: output,
        ...(cacheWrite1h > 0 ? {cache_write_1h_tokens: cacheWrite1h} : {}),
      },
      model,
    )
    tableModel ??= r?.model?.id
    return typeof r?.total_price === 'number' ? r.total_price : undefined
  }
  let tableModel: string | undefined
  try {
    const unit = 1_000
    const inputCost = price(unit, 0, 0, 0)
    if (inputCost === undefined) return null
    const entry: MemoEntry = {
      input: inputCost / unit,
      output: (price(0, 0, 0, unit) ?? Number.NaN) / unit,
      cacheRead: (price(unit, unit, 0, 0) ?? Number.NaN) / unit,
      cacheWrite: (price(unit, 0, unit, 0) ?? Number.NaN) / unit,
      cacheWrite1h: (price(unit, 0, unit, 0, unit) ?? Number.NaN) / unit,
      tablePrices1h: true,
      linearUpTo: 0,
    }
    if (![entry.output, entry.cacheRead, entry.cacheWrite, entry.cacheWrite1h].every(Number.isFinite))
      return null
    // A table without a 1-hour price bills it as a 5-minute write: Anthropic bills it at 2x input.
    if (Math.abs(entry.cacheWrite1h - entry.cacheWrite) <= 1e-15) {
      entry.cacheWrite1h = 2 * entry.input
      entry.tablePrices1h = false
    }
    // Check a request of every component at growing sizes until the table stops being linear.
    for (const size of PROBE_SIZES) {
      const [cacheRead, cacheWrite, output] = [size / 2, size / 8, size / 10]
      const cache1h = entry.tablePrices1h ? cacheWrite / 2 : 0
      const expected = linearCost(
        entry,
        size - cacheRead - cacheWrite,
        cacheRead,
        cacheWrite,
        output,
        cache1h,
      )
      const actual = price(size, cacheRead, cacheWrite, output, cache1h)
      if (actual === undefined || Math.abs(actual - expected) > 1e-9 * Math.max(1, expected)) break
      entry.linearUpTo = size
    }
    entry.tableModel = tableModel ?? model
    const rule = LONG_CONTEXT[entry.tableModel]
    if (rule && entry.linearUpTo === PROBE_SIZES.at(-1)) entry.longContext = rule
    return entry
  } catch {
    return null
  }
}

function linearCost(
  e: MemoEntry,
  input: number,
  cacheRead: number,
  cacheWrite: number,
  output: number,
  cacheWrite1h = 0,
): number {
  const oneHour = Math.min(Math.max(cacheWrite1h, 0), cacheWrite)
  return (
    input * e.input +
    cacheRead * e.cacheRead +
    (cacheWrite - oneHour) * e.cacheWrite +
    oneHour * e.cacheWrite1h +
    output * e.output
  )
}

/**
 * A pricer (memoised per model). The price table is loaded only for a model not in
 * `price-memo.json` yet, or for requests bigger than its memo says the rates hold for.
 */
export async function createPricer(
  overrides: Map<string, ProviderPrices> = providerPrices(),
  memoPath: string = homeFile('priceMemo'),
  pricesPath: string = homeFile('prices'),
): Promise<Pricer> {
  const memo = readMemo(memoPath, tableKey(pricesPath))
  let calcPrice: CalcPrice | undefined
  // the CommonJS build: a synchronous load, on the first model the memo cannot answer
  const table = (): CalcPrice => {
    if (!calcPrice) {
      // a table downloaded by `gwctl usage prices update` wins over the bundled one; one that
      // cannot be loaded is reported by `gwctl usage prices`, and the bundled table is used
      activateSavedPrices(pricesPath)
      calcPrice = (library() as unknown as {calcPrice: CalcPrice}).calcPrice
    }
    return calcPrice
  }
  const cost = (model: string | null, t: CostTokens, provider?: string | null): number | null => {
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
    if (!model) return null
    // an entry of an older memo (no 1-hour price, no table model) is asked again
    const known = memo.models[model]
    if (
      !(model in memo.models) ||
      (known && (known.cacheWrite1h === undefined || known.tableModel === undefined))
    ) {
      memo.models[model] = memoEntry(table(), model)
      writeMemo(memoPath, memo)
    }
    const entry = memo.models[model]
    if (!entry) return null
    const n = t.requests !== undefined && t.requests > 1 ? t.requests : 1
    const perRequestInput = (t.inputTokens + t.cacheReadTokens + t.cacheCreationTokens) / n
    const oneHour = Math.min(Math.max(t.cache1hTokens ?? 0, 0), t.cacheCreationTokens)
    const long = entry.longContext
    if (long && perRequestInput > long.over)
      return linearCost(
        {
          ...entry,
          input: entry.input * long.input,
          cacheRead: entry.cacheRead * long.input,
          cacheWrite: entry.cacheWrite * long.input,
          cacheWrite1h: entry.cacheWrite1h * long.input,
          output: entry.output * long.output,
        },
        t.inputTokens,
        t.cacheReadTokens,
        t.cacheCreationTokens,
        t.outputTokens,
        oneHour,
      )
    if (perRequestInput <= entry.linearUpTo)
      return linearCost(
        entry,
        t.inputTokens,
        t.cacheReadTokens,
        t.cacheCreationTokens,
        t.outputTokens,
        oneHour,
      )
    try {
      const calc = table()
      const tablePrices1h = entry.tablePrices1h
      const r = calc(
        {
          // genai-prices counts cache reads and writes inside input_tokens, and 1-hour writes
          // inside cache_write_tokens.
          input_tokens: perRequestInput,
          cache_read_tokens: t.cacheReadTokens / n,
          cache_write_tokens: (tablePrices1h ? t.cacheCreationTokens : t.cacheCreationTokens - oneHour) / n,
          ...(tablePrices1h && oneHour > 0 ? {cache_write_1h_tokens: oneHour / n} : {}),
          output_tokens: t.outputTokens / n,
        },
        model,
      )
      if (typeof r?.total_price !== 'number') return null
      if (tablePrices1h || oneHour === 0) return r.total_price * n
      // priced above as plain input at this request size's tier; Anthropic bills 2x that
      const inputOnly = calc({input_tokens: perRequestInput}, model)
      const rate = typeof inputOnly?.total_price === 'number' ? inputOnly.total_price / perRequestInput : 0
      return (r.total_price + (oneHour / n) * rate) * n
    } catch {
      return null
    }
  }
  return {
    cost(model, t, provider) {
      if (!t.bands) return cost(model, t, provider)
      // each band apart, then the rest (band 0): a request's tier is its own
      const rest = {
        inputTokens: t.inputTokens,
        outputTokens: t.outputTokens,
        cacheReadTokens: t.cacheReadTokens,
        cacheCreationTokens: t.cacheCreationTokens,
        cache1hTokens: t.cache1hTokens ?? 0,
        requests: t.requests ?? 1,
      }
      let usd = 0
      for (const band of Object.values(t.bands)) {
        if (band.requests <= 0) continue
        const c = cost(model, band, provider)
        if (c === null) return null
        usd += c
        for (const k of Object.keys(rest) as Array<keyof typeof rest>)
          rest[k] = Math.max(rest[k] - band[k], 0)
      }
      if (
        rest.requests > 0 ||
        rest.inputTokens + rest.outputTokens + rest.cacheReadTokens + rest.cacheCreationTokens > 0
      ) {
        const c = cost(model, {...rest, requests: Math.max(rest.requests, 1)}, provider)
        if (c === null) return null
        usd += c
      }
      return usd
    },
  }
}
