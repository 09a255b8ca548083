/**
 * Long-context tiers, judged per request. A price table may bill a whole request at a higher rate
 * when its input context (input + cache reads + cache writes) passes a threshold: Claude Sonnet
 * 4.5 costs 2x input and 1.5x output (cache reads and writes likewise) for a request over 200 000
 * tokens, Gemini 1.5 Pro over 128 000, GPT-5.4 over 272 000. The tier is the request's own, never
 * that of a day's sum or of the average request, so every sum of requests that is priced also
 * keeps, apart, the sums of its requests past the first threshold, by context band: a band holds
 * requests on the same side of every threshold, so its sums price exactly as its requests one by
 * one would (docs/USAGE-WINDOWS.md, "Long-context prices").
 */

/**
 * The thresholds (input context, in tokens; a tier applies to a request *over* its start) of the
 * price table gwctl bundles (@pydantic/genai-prices): `src/store/context-bands.test.ts` fails when
 * a newer table brings one that is not here. A threshold only an updated table (`gwctl usage
 * prices update`) has is judged on the average request of its band.
 */
export const CONTEXT_EDGES: readonly number[] = [128_000, 199_999, 200_000, 271_999, 272_000, 512_000]

/** The tokens of a band: what a pricer prices, for `requests` requests. */
export interface BandSums {
  requests: number
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  cache1hTokens: number
}

/**
 * The sums of the requests past the first threshold, by band (1: over `CONTEXT_EDGES[0]`, 2: over
 * the second, ...). What the totals beside them hold beyond these is band 0 (a plain object, so
 * it goes through JSON: the daemon's statusline answer carries it).
 */
export type ContextBands = Record<number, BandSums>

/** The band of one request whose input context (input + cache read + cache write) is `context`. */
export function contextBand(context: number): number {
  let band = 0
  for (const edge of CONTEXT_EDGES) if (context > edge) band++
  return band
}

/**
 * The thresholds that matter for a model whose name starts with `prefix` (case-insensitive, as SQL's
 * LIKE): the tier starts of every model of that family in the bundled table (and gwctl's own
 * Sonnet 4 rule, usage-cost.ts). A request between two other edges prices alike on either side,
 * so the usage query keeps such a model's requests in fewer bands: fewer groups, the same dollars
 * (a Claude Code session often runs between 128k and 200k, where the full edges would split it).
 * `test/usage-long-context.test.ts` fails when the table gives a model of a family (any model whose
 * id contains the prefix, under any provider) another start. A threshold only an updated table
 * (`gwctl usage prices update`) has is judged on the average request of its band, as above.
 */
export const FAMILY_EDGES: ReadonlyArray<{prefix: string; edges: readonly number[]}> = [
  {prefix: 'claude', edges: [200_000]},
  {prefix: 'gemini', edges: [128_000, 200_000]},
  {prefix: 'gpt', edges: [200_000, 271_999, 272_000]},
]

/** CASE arms of `edges` (each a member of CONTEXT_EDGES): a band is the number of edges a request passes. */
function bandCases(context: string, edges: readonly number[]): string {
  const arms = edges
    .map((edge) => ({edge, band: CONTEXT_EDGES.indexOf(edge) + 1}))
    .reverse()
    .map(({edge, band}) => `WHEN ${context} > ${edge} THEN ${band}`)
  return `CASE ${arms.join(' ')} ELSE 0 END`
}

/**
 * The SQL expression of the band of a row whose input context is the expression `context`; with
 * `model` (its model's column), a model of a family in {@link FAMILY_EDGES} is cut at its family's
 * edges only. A band then holds, for each model, requests on the same side of each of that model's
 * thresholds, which is all its pricing needs (each band is priced on its average request).
 */
export function bandSql(context: string, model?: string): string {
  const all = bandCases(context, CONTEXT_EDGES)
  if (!model) return `(${all})`
  // a row below the first edge is band 0 whatever its model: the cheap test first
  const families = FAMILY_EDGES.map(
    ({prefix, edges}) => `WHEN ${model} LIKE '${prefix}%' THEN (${bandCases(context, edges)})`,
  )
  return `(CASE WHEN ${context} <= ${CONTEXT_EDGES[0]} THEN 0 ${families.join(' ')} ELSE (${all}) END)`
}

/** The input context of a gateway log row past which it may be in a band (the partial index `logs_long`). */
export const FIRST_EDGE = CONTEXT_EDGES[0]

const BAND_FIELDS = [
  'requests',
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheCreationTokens',
  'cache1hTokens',
] as const

type Tokens = Omit<BandSums, 'requests' | 'cache1hTokens'> & {
  requests?: number
  cache1hTokens?: number
  bands?: ContextBands
}

/** Adds `sums` (`band` > 0) into `into`'s bands. */
export function addToBand(into: {bands?: ContextBands}, band: number, sums: Tokens): void {
  if (band <= 0) return
  const bands = (into.bands ??= {})
  const b = (bands[band] ??= {
    requests: 0,
    inputTokens: 0,
    outputTokens: 0,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    cache1hTokens: 0,
  })
  for (const k of BAND_FIELDS) b[k] += k === 'requests' ? (sums.requests ?? 1) : (sums[k] ?? 0)
}

/**
 * Adds the bands of `e` into `into`: those of a sum (its `bands`), or the band of one request (no
 * `requests`, or 1) by its own context. A sum of several requests without bands is band 0.
 */
export function addBands(into: {bands?: ContextBands}, e: Tokens): void {
  if (e.bands) {
    for (const [band, sums] of Object.entries(e.bands)) addToBand(into, Number(band), sums)
    return
  }
  if (e.requests !== undefined && e.requests !== 1) return
  addToBand(into, contextBand(e.inputTokens + e.cacheReadTokens + e.cacheCreationTokens), e)
}
