/**
 * The gateway's Prometheus metrics (`GET /metrics`), built with prom-client on a registry of its
 * own. Request rows are folded in off the request path (telemetry.ts batches them); gauges that
 * describe the present (breakers, the log queue, the OTLP queue) are read when Prometheus scrapes.
 *
 * Every label value is bounded: the entrance and the status class are closed sets; agents,
 * policies, providers and models are what the state names, capped per label (past the cap a new
 * value is counted as `other`) and cut to 64 printable characters. No key, key prefix, project
 * header, request id or prompt text is ever a label.
 */
import {createRequire} from 'node:module'
import type * as PromClient from 'prom-client'

import type {LogEntry} from '../../store/log-store.js'
import {statusClass} from '../../store/log-store.js'
import type {BreakerSnapshot} from '../../gateway/events.js'
import type {BudgetView} from '../../gateway/budgets.js'

// The four classes used here, from their own files: prom-client's index also loads its Pushgateway
// (node:http, node:https, node:zlib), Summary (tdigest) and default process metrics (which load
// @opentelemetry/api for exemplars), none of which the gateway uses. Pinned major 15 (no `exports`
// map: these paths are its public CommonJS layout).
const require = createRequire(import.meta.url)
const Registry = require('prom-client/lib/registry') as typeof PromClient.Registry
const Counter = require('prom-client/lib/counter') as typeof PromClient.Counter
const Gauge = require('prom-client/lib/gauge') as typeof PromClient.Gauge
const Histogram = require('prom-client/lib/histogram') as typeof PromClient.Histogram
type Counter<T extends string> = PromClient.Counter<T>
type Histogram<T extends string> = PromClient.Histogram<T>

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

/** The cost of a row in USD, or null when its model is not priced. */
export type CostOf = (entry: LogEntry) => number | null

/** The counters of one route (entrance, agent, policy, provider, model), summed in plain numbers. */
interface RouteSeries {
  labels: Record<string, string>
  requests: Record<'2xx' | '4xx' | '5xx', number>
  /** input, output, cache_read, cache_write, reasoning */
  tokens: [number, number, number, number, number]
  cost: number
}

const TOKEN_KINDS = ['input', 'output', 'cache_read', 'cache_write', 'reasoning'] as const

export class GatewayMetrics {
  /**
   * Requests, tokens and cost per route, added up here and handed to prom-client when Prometheus
   * scrapes: a row costs one Map lookup instead of seven labelled increments (prom-client checks
   * and hashes the labels on each), and a scrape costs one increment per series.
   */
  private readonly series = new Map<string, RouteSeries>()
  readonly registry: PromClient.Registry = new Registry()
  private readonly labels = {
    agent: new BoundedLabel(LABEL_CAPS.agent),
    policy: new BoundedLabel(LABEL_CAPS.policy),
    provider: new BoundedLabel(LABEL_CAPS.provider),
    model: new BoundedLabel(LABEL_CAPS.model),
  }
  private readonly duration: Histogram<string>
  private readonly ttfb: Histogram<string>
  private readonly fallbacks: Counter<string>

  constructor(
    private readonly sources: MetricsSources = {},
    private readonly costOf?: CostOf,
  ) {
    const registers = [this.registry]
    const routeLabels = ['entrance', 'agent', 'policy', 'provider', 'model']
    const series = this.series
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
        for (const s of series.values()) if (s.cost > 0) this.inc(s.labels, s.cost)
      },
    })
    this.duration = new Histogram({
      name: 'gwctl_request_duration_seconds',
      help: 'Time from the request to the end of its answer.',
      labelNames: ['entrance', 'provider', 'model', 'status_class'],
      buckets: DURATION_BUCKETS,
      registers,
    })
    this.ttfb = new Histogram({
      name: 'gwctl_time_to_first_byte_seconds',
      help: "Time from the request to the upstream answer's first byte.",
      labelNames: ['entrance', 'provider', 'model'],
      buckets: TTFB_BUCKETS,
      registers,
    })
    this.fallbacks = new Counter({
      name: 'gwctl_fallbacks_total',
      help: 'Requests answered by a fallback target of their policy, by policy and the provider that answered.',
      labelNames: ['policy', 'provider'],
      registers,
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
  }

  /** Folds one finished request in. */
  record(entry: LogEntry): void {
    const klass = statusClass(entry.status, entry.broken) as '2xx' | '4xx' | '5xx'
    const entrance = entry.entrance
    const agent = this.labels.agent.value(entry.agentId)
    const policy = this.labels.policy.value(entry.policyId)
    const provider = this.labels.provider.value(entry.provider)
    const model = this.labels.model.value(entry.model ?? entry.requestedModel)
    const key = `${entrance}\u0000${agent}\u0000${policy}\u0000${provider}\u0000${model}`
    let s = this.series.get(key)
    if (!s) {
      s = {
        labels: {entrance, agent, policy, provider, model},
        requests: {'2xx': 0, '4xx': 0, '5xx': 0},
        tokens: [0, 0, 0, 0, 0],
        cost: 0,
      }
      this.series.set(key, s)
    }
    s.requests[klass]++
    s.tokens[0] += entry.inputTokens
    s.tokens[1] += entry.outputTokens
    s.tokens[2] += entry.cacheReadTokens
    s.tokens[3] += entry.cacheCreationTokens
    s.tokens[4] += entry.reasoningTokens
    // priced only with tokens and a model under the label cap: the pricer remembers each new model
    // on disk, which endless made-up names (answered 4xx, no tokens) must not turn into writes
    if (this.costOf && model !== 'other' && entry.inputTokens + entry.outputTokens > 0) {
      const usd = this.costOf(entry)
      if (usd) s.cost += usd
    }
    const timing = {entrance, provider, model}
    this.duration.observe({entrance, provider, model, status_class: klass}, entry.latencyMs / 1000)
    if (entry.ttfbMs !== null) this.ttfb.observe(timing, entry.ttfbMs / 1000)
    if (entry.fallback) this.fallbacks.inc({policy, provider})
  }

  /** The Prometheus text exposition. */
  text(): Promise<string> {
    return this.registry.metrics()
  }
}
