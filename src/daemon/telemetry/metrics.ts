/**
 * The gateway's Prometheus metrics (`GET /metrics`), exposed with prom-client on a registry of its
 * own. Finished requests are summed here in plain numbers (telemetry.ts folds them in off the
 * request path); prom-client, and the pricer for `gwctl_cost_usd_total`, are loaded only when
 * Prometheus first scrapes, and each scrape hands them the sums: a gateway nobody scrapes never
 * loads either, and a row costs a few Map lookups and additions. Gauges that describe the present
 * (breakers, the log queue, the OTLP queue, budgets) are read at the scrape.
 *
 * Cost is priced at the scrape from the tokens summed per series (route and model), as
 * `gwctl usage` prices its groups: the tokens of `requests` requests of the average size.
 *
 * Every label value is bounded: the entrance and the status class are closed sets; agents,
 * policies, providers and models are what the state names, capped per label (past the cap a new
 * value is counted as `other`) and cut to 64 printable characters. No key, key prefix, project
 * header, request id or prompt text is ever a label.
 */
import {createRequire} from 'node:module'
import type * as PromClient from 'prom-client'

import type {ContextBands} from '../../store/context-bands.js'
import {FIRST_EDGE, addBands} from '../../store/context-bands.js'
import type {LogEntry} from '../../store/log-store.js'
import {statusClass} from '../../store/log-store.js'
import type {BreakerSnapshot} from '../../gateway/events.js'
import type {BudgetView} from '../../gateway/budgets.js'

/** prom-client's four classes the metrics use. */
interface Prom {
  Registry: typeof PromClient.Registry
  Counter: typeof PromClient.Counter
  Gauge: typeof PromClient.Gauge
  Histogram: typeof PromClient.Histogram
}

const require = createRequire(import.meta.url)

/**
 * prom-client, at the first scrape. The four classes from their own files: its index also loads its
 * Pushgateway (node:http, node:https, node:zlib), Summary (tdigest) and default process metrics
 * (which load @opentelemetry/api for exemplars), none of which the gateway uses. Pinned major 15
 * (no `exports` map: these paths are its public CommonJS layout).
 */
function loadProm(): Prom {
  return {
    Registry: require('prom-client/lib/registry') as Prom['Registry'],
    Counter: require('prom-client/lib/counter') as Prom['Counter'],
    Gauge: require('prom-client/lib/gauge') as Prom['Gauge'],
    Histogram: require('prom-client/lib/histogram') as Prom['Histogram'],
  }
}

/** The Prometheus text format's content type (version 0.0.4). */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

/** Request duration buckets (seconds): agents' requests run from tens of ms to minutes. */
const DURATION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300]
/** Time-to-first-byte buckets (seconds). */
const TTFB_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** Distinct values one label may take before new ones count as `other`. */
export const LABEL_CAPS = {agent: 500, policy: 100, provider: 100, model: 200} as const

/** The label values of one dimension, bounded in number and length. */
export class BoundedLabel {
  private readonly seen = new Map<string, string>()

  constructor(readonly cap: number) {}

  /** `none` for no value, the value (cut and cleaned) while under the cap, else `other`. */
  value(raw: string | null | undefined): string {
    if (raw === null || raw === undefined || raw === '') return 'none'
    const known = this.seen.get(raw)
    if (known !== undefined) return known
    if (this.seen.size >= this.cap) return 'other'
    // printable ASCII only, 64 characters at most: a label is for grouping, not for storage
    const clean = raw.slice(0, 64).replace(/[^\x20-\x7e]/g, '_')
    this.seen.set(raw, clean)
    return clean
  }
}

/** What the scrape reads of the running gateway at that moment. */
export interface MetricsSources {
  breakers?: () => readonly BreakerSnapshot[]
  logQueue?: () => {pending: number; dropped: number}
  otlp?: () => {queued: number; exported: number; dropped: number; failures: number} | undefined
  /** The budgets as the gateway enforces them now (the router's budget book; none: []). */
  budgets?: () => readonly BudgetView[]
}

/** The tokens of a series as the pricer takes them (`inputTokens` without the cache, as `gwctl usage`). */
export interface TokenSums {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
  /** The part of the cache writes that went to the 1-hour cache (rows that say so). */
  cache1hTokens: number
  /** How many requests the tokens add up (long-context tiers apply per request). */
  requests: number
  /** The requests past a long-context threshold, by band (store/context-bands.ts). */
  bands?: ContextBands
}

/** Prices token sums: the pricer of `gwctl usage` (services/usage-cost.ts) fits this shape. */
export interface SumsPricer {
  /** USD, or null when the model is not priced. */
  cost(model: string | null, tokens: TokenSums, provider?: string | null): number | null
}

/** Loads the pricer (at the first scrape); undefined when it cannot be had. */
export type PricerLoader = () => Promise<SumsPricer | undefined>

/** The counters of one route (entrance, agent, policy, provider, model), summed in plain numbers. */
interface RouteSeries {
  labels: Record<string, string>
  /** The model and provider the row named (priced by these), null when the model label is `other`. */
  model: string | null
  provider: string | null
  requests: Record<'2xx' | '4xx' | '5xx', number>
  /** input, output, cache_read, cache_write, reasoning (input with the cache, as the log rows) */
  tokens: [number, number, number, number, number]
  /** Input without the cache, summed row by row as `gwctl usage` does (never below 0 per row). */
  uncachedInput: number
  cache1h: number
  /** The requests past a long-context threshold, by band: each priced at its own tier. */
  bands?: ContextBands
}

const TOKEN_KINDS = ['input', 'output', 'cache_read', 'cache_write', 'reasoning'] as const

/** One histogram series: counts per bucket (not cumulative; the last is past the largest bound). */
interface HistogramSeries {
  labels: Record<string, string>
  counts: number[]
  sum: number
  count: number
}

/** A histogram in plain numbers, keyed by its label values. */
class HistogramSums {
  readonly series = new Map<string, HistogramSeries>()

  constructor(readonly bounds: readonly number[]) {}

  /** The series of `key`, made (with `labels()`) on its first value. */
  seriesOf(key: string, labels: () => Record<string, string>): HistogramSeries {
    let s = this.series.get(key)
    if (!s) {
      s = {labels: labels(), counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0}
      this.series.set(key, s)
    }
    return s
  }

  /** Adds `value` to series `s` (one of this histogram's). */
  add(s: HistogramSeries, value: number): void {
    let i = 0
    while (i < this.bounds.length && value > this.bounds[i]) i++
    s.counts[i]++
    s.sum += value
    s.count++
  }
}

/**
 * The series the last row was folded into, by what that row named (raw, before the labels' caps):
 * a gateway's rows come mostly in runs of one agent, policy, provider and model, and the next row
 * of the run finds its series by six comparisons, without building three keys and looking them up.
 */
interface LastSeries {
  entrance: string
  agentId: string | null
  policyId: string | null
  provider: string | null
  rawModel: string | null
  klass: '2xx' | '4xx' | '5xx'
  policyLabel: string
  providerLabel: string
  route: RouteSeries
  duration: HistogramSeries
  /** Made at the run's first row with a first-byte time. */
  ttfb: HistogramSeries | undefined
  timingKey: string
  model: string
}

/** What prom-client's Histogram keeps per label set (lib/histogram.js, major 15). */
interface PromHistogramValue {
  labels: Record<string, string>
  bucketValues: Record<number, number>
  sum: number
  count: number
}

export class GatewayMetrics {
  /**
   * Requests and tokens per route, added up here and handed to prom-client when Prometheus
   * scrapes: a row costs one Map lookup instead of seven labelled increments (prom-client checks
   * and hashes the labels on each), and a scrape costs one increment per series.
   */
  private readonly series = new Map<string, RouteSeries>()
  private readonly duration = new HistogramSums(DURATION_BUCKETS)
  private readonly ttfb = new HistogramSums(TTFB_BUCKETS)
  private readonly fallbacks = new Map<string, {labels: Record<string, string>; count: number}>()
  private readonly labels = {
    agent: new BoundedLabel(LABEL_CAPS.agent),
    policy: new BoundedLabel(LABEL_CAPS.policy),
    provider: new BoundedLabel(LABEL_CAPS.provider),
    model: new BoundedLabel(LABEL_CAPS.model),
  }
  /** prom-client's registry and the pricer: made at the first scrape. */
  private ready: Promise<PromClient.Registry> | undefined
  private pricer: SumsPricer | undefined
  private last: LastSeries | undefined

  constructor(
    private readonly sources: MetricsSources = {},
    private readonly loadPricer?: PricerLoader,
  ) {}

  /** Whether a scrape has loaded prom-client and the pricer yet. */
  get loaded(): boolean {
    return this.ready !== undefined
  }

  /** Folds one finished request in. */
  record(entry: LogEntry): void {
    const klass = statusClass(entry.status, entry.broken) as '2xx' | '4xx' | '5xx'
    const rawModel = entry.model ?? entry.requestedModel
    let last = this.last
    if (
      last === undefined ||
      last.rawModel !== rawModel ||
      last.provider !== entry.provider ||
      last.agentId !== entry.agentId ||
      last.policyId !== entry.policyId ||
      last.entrance !== entry.entrance ||
      last.klass !== klass
    )
      last = this.last = this.seriesOf(entry, rawModel, klass)
    const s = last.route
    s.requests[klass]++
    s.tokens[0] += entry.inputTokens
    s.tokens[1] += entry.outputTokens
    s.tokens[2] += entry.cacheReadTokens
    s.tokens[3] += entry.cacheCreationTokens
    s.tokens[4] += entry.reasoningTokens
    const uncachedInput = Math.max(entry.inputTokens - entry.cacheReadTokens - entry.cacheCreationTokens, 0)
    s.uncachedInput += uncachedInput
    // 1-hour cache writes, where the row says so (a field the log rows may carry)
    const cache1h = (entry as {cache1hTokens?: number}).cache1hTokens ?? 0
    s.cache1h += cache1h
    // a request past a long-context threshold: its own tier, kept apart (most add nothing here)
    if (uncachedInput + entry.cacheReadTokens + entry.cacheCreationTokens > FIRST_EDGE)
      addBands(s, {
        inputTokens: uncachedInput,
        outputTokens: entry.outputTokens,
        cacheReadTokens: entry.cacheReadTokens,
        cacheCreationTokens: entry.cacheCreationTokens,
        cache1hTokens: cache1h,
      })
    this.duration.add(last.duration, entry.latencyMs / 1000)
    if (entry.ttfbMs !== null) {
      const {entrance, providerLabel: provider, model} = last
      last.ttfb ??= this.ttfb.seriesOf(last.timingKey, () => ({entrance, provider, model}))
      this.ttfb.add(last.ttfb, entry.ttfbMs / 1000)
    }
    if (entry.fallback) {
      const policy = last.policyLabel
      const provider = last.providerLabel
      const fallbackKey = `${policy}\u0000${provider}`
      const f = this.fallbacks.get(fallbackKey)
      if (f) f.count++
      else this.fallbacks.set(fallbackKey, {labels: {policy, provider}, count: 1})
    }
  }

  /** The series of a row (found by their keys, made on a first row): the start of a run. */
  private seriesOf(entry: LogEntry, rawModel: string | null, klass: '2xx' | '4xx' | '5xx'): LastSeries {
    const entrance = entry.entrance
    const agent = this.labels.agent.value(entry.agentId)
    const policy = this.labels.policy.value(entry.policyId)
    const provider = this.labels.provider.value(entry.provider)
    const model = this.labels.model.value(rawModel)
    // the row's own model and provider are part of the key (two names cut to one label are priced
    // each at its own price); both are bounded: past a label's cap they are `other`, not the name
    const priced = model !== 'other' && provider !== 'other'
    const key = `${entrance}\u0000${agent}\u0000${policy}\u0000${provider}\u0000${model}${priced ? `\u0000${entry.provider ?? ''}\u0000${rawModel ?? ''}` : ''}`
    let route = this.series.get(key)
    if (!route) {
      route = {
        labels: {entrance, agent, policy, provider, model},
        model: priced ? rawModel : null,
        provider: priced ? entry.provider : null,
        requests: {'2xx': 0, '4xx': 0, '5xx': 0},
        tokens: [0, 0, 0, 0, 0],
        uncachedInput: 0,
        cache1h: 0,
      }
      this.series.set(key, route)
    }
    const timingKey = `${entrance}\u0000${provider}\u0000${model}`
    return {
      entrance,
      agentId: entry.agentId,
      policyId: entry.policyId,
      provider: entry.provider,
      rawModel,
      klass,
      policyLabel: policy,
      providerLabel: provider,
      route,
      duration: this.duration.seriesOf(`${timingKey}\u0000${klass}`, () => ({
        entrance,
        provider,
        model,
        status_class: klass,
      })),
      ttfb: undefined,
      timingKey,
      model,
    }
  }

  /** The Prometheus text exposition (the first call loads prom-client and the pricer). */
  async text(): Promise<string> {
    this.ready ??= (async () => {
      this.pricer = await this.loadPricer?.().catch(() => undefined)
      return this.registry(loadProm())
    })()
    return (await this.ready).metrics()
  }

  /** The USD of a series, priced from its sums; 0 when unpriced or without tokens. */
  private cost(s: RouteSeries): number {
    if (!this.pricer || s.model === null) return 0
    const [, output, cacheRead, cacheWrite] = s.tokens
    if (s.uncachedInput + output + cacheRead + cacheWrite === 0) return 0
    try {
      const usd = this.pricer.cost(
        s.model,
        {
          inputTokens: s.uncachedInput,
          outputTokens: output,
          cacheReadTokens: cacheRead,
          cacheCreationTokens: cacheWrite,
          cache1hTokens: s.cache1h,
          requests: s.requests['2xx'] + s.requests['4xx'] + s.requests['5xx'],
          ...(s.bands ? {bands: s.bands} : {}),
        },
        s.provider,
      )
      return usd !== null && Number.isFinite(usd) && usd > 0 ? usd : 0
    } catch {
      return 0
    }
  }

  /** The registry: every metric reads the sums (or the gateway) when it is collected. */
  private registry(prom: Prom): PromClient.Registry {
    const {Registry, Counter, Gauge, Histogram} = prom
    const registry = new Registry()
    const registers = [registry]
    const routeLabels = ['entrance', 'agent', 'policy', 'provider', 'model']
    const series = this.series
    const cost = (s: RouteSeries) => this.cost(s)
    new Counter({
      name: 'gwctl_requests_total',
      help: 'Model requests answered by the gateway, by entrance, agent, policy, provider, model and status class.',
      labelNames: [...routeLabels, 'status_class'],
      registers,
      collect() {
        this.reset()
        for (const s of series.values())
          for (const klass of ['2xx', '4xx', '5xx'] as const)
            if (s.requests[klass] > 0) this.inc({...s.labels, status_class: klass}, s.requests[klass])
      },
    })
    new Counter({
      name: 'gwctl_tokens_total',
      help: 'Tokens of the answered requests by kind (input, output, cache_read, cache_write, reasoning).',
      labelNames: [...routeLabels, 'kind'],
      registers,
      collect() {
        this.reset()
        for (const s of series.values())
          for (let k = 0; k < TOKEN_KINDS.length; k++)
            if (s.tokens[k] > 0) this.inc({...s.labels, kind: TOKEN_KINDS[k]}, s.tokens[k])
      },
    })
    new Counter({
      name: 'gwctl_cost_usd_total',
      help: 'Estimated cost in USD (provider prices, else the bundled price table); unpriced models add nothing.',
      labelNames: routeLabels,
      registers,
      collect() {
        this.reset()
        for (const s of series.values()) {
          const usd = cost(s)
          if (usd > 0) this.inc(s.labels, usd)
        }
      },
    })
    const histogram = (name: string, help: string, labelNames: string[], sums: HistogramSums) =>
      new Histogram({
        name,
        help,
        labelNames,
        buckets: [...sums.bounds],
        registers,
        collect() {
          // prom-client has no call to set a histogram's counts: each series is zeroed through its
          // API and its values (the object `zero` made for these labels) are set from the sums
          this.reset()
          const byLabels = new Map<object, HistogramSeries>()
          for (const s of sums.series.values()) {
            this.zero(s.labels)
            byLabels.set(s.labels, s)
          }
          for (const value of Object.values(
            (this as unknown as {hashMap: Record<string, PromHistogramValue>}).hashMap,
          )) {
            const s = byLabels.get(value.labels)
            if (!s) continue
            sums.bounds.forEach((bound, i) => (value.bucketValues[bound] = s.counts[i]))
            value.sum = s.sum
            value.count = s.count
          }
        },
      })
    histogram(
      'gwctl_request_duration_seconds',
      'Time from the request to the end of its answer.',
      ['entrance', 'provider', 'model', 'status_class'],
      this.duration,
    )
    histogram(
      'gwctl_time_to_first_byte_seconds',
      'Time from the request to the first byte of its answer written to the client.',
      ['entrance', 'provider', 'model'],
      this.ttfb,
    )
    const fallbacks = this.fallbacks
    new Counter({
      name: 'gwctl_fallbacks_total',
      help: 'Requests answered by a fallback target of their policy, by policy and the provider that answered.',
      labelNames: ['policy', 'provider'],
      registers,
      collect() {
        this.reset()
        for (const f of fallbacks.values()) this.inc(f.labels, f.count)
      },
    })
    const breakers = this.sources.breakers
    new Gauge({
      name: 'gwctl_breaker_state',
      help: "Circuit breaker state per provider: 1 for the provider's current state (closed, half-open, open), 0 for the others.",
      labelNames: ['provider', 'state'],
      registers,
      collect() {
        this.reset()
        for (const b of breakers?.() ?? [])
          for (const state of ['closed', 'half-open', 'open'] as const)
            this.set({provider: b.provider, state}, b.state === state ? 1 : 0)
      },
    })
    const logQueue = this.sources.logQueue
    new Gauge({
      name: 'gwctl_log_queue_rows',
      help: 'Request log rows waiting to be written to the log database.',
      registers,
      collect() {
        this.set(logQueue?.().pending ?? 0)
      },
    })
    new Counter({
      name: 'gwctl_log_rows_dropped_total',
      help: 'Request log rows lost (a write the disk refused, or the locked-database queue bound).',
      registers,
      collect() {
        this.reset()
        this.inc(logQueue?.().dropped ?? 0)
      },
    })
    const otlp = this.sources.otlp
    new Gauge({
      name: 'gwctl_otlp_queue_spans',
      help: 'Spans waiting to be exported to the OTLP collector (0 when export is off).',
      registers,
      collect() {
        this.set(otlp?.()?.queued ?? 0)
      },
    })
    const otlpCounter = (name: string, help: string, field: 'exported' | 'dropped' | 'failures') =>
      new Counter({
        name,
        help,
        registers,
        collect() {
          this.reset()
          this.inc(otlp?.()?.[field] ?? 0)
        },
      })
    otlpCounter('gwctl_otlp_spans_exported_total', 'Spans the OTLP collector accepted.', 'exported')
    otlpCounter(
      'gwctl_otlp_spans_dropped_total',
      'Spans dropped, oldest first, because the export queue was full (collector down or slow).',
      'dropped',
    )
    otlpCounter('gwctl_otlp_export_failures_total', 'OTLP export attempts that failed.', 'failures')
    const budgets = this.sources.budgets
    const budgetGauge = (name: string, help: string, field: 'spent' | 'limit') =>
      new Gauge({
        name,
        help,
        labelNames: ['budget', 'scope', 'period', 'unit'],
        registers,
        collect() {
          this.reset()
          for (const b of budgets?.() ?? [])
            this.set({budget: b.id, scope: b.scope, period: b.period, unit: b.unit}, b[field])
        },
      })
    budgetGauge(
      'gwctl_budget_spent',
      'Spent by each budget in its current period (USD or tokens, by unit), as the gateway enforces it.',
      'spent',
    )
    budgetGauge(
      'gwctl_budget_limit',
      'The limit of each budget for its period (USD or tokens, by unit).',
      'limit',
    )
    return registry
  }
}
