/**
 * The gateway's telemetry: Prometheus metrics on `GET /metrics` (always on, loopback only like the
 * rest of the management API) and, when an OTLP endpoint is configured, OpenTelemetry export
 * (otlp.ts, in a thread of its own started only then: otlp-worker.ts). docs/TELEMETRY.md
 * describes both.
 *
 * Nothing here runs on the request path: the router emits each finished request's log row on the
 * event bus (after its answer went out); this module only pushes the row onto an array, and folds
 * the array into the metrics' sums and the spans in a batch a moment later (or when Prometheus
 * scrapes). prom-client and the pricer are loaded at the first scrape, `@opentelemetry/*` only
 * with an endpoint.
 */
import type {LogEntry} from '../../store/log-store.js'
import type {OtlpTarget, TelemetryStatus} from '../../gateway/telemetry.js'
import {otlpTarget} from '../../gateway/telemetry.js'
import {ConfigError} from '../../core/errors.js'
import {onGatewayEvent} from '../events.js'
import type {Routing} from '../routing.js'
import type {GatewayContext, GatewayRequest} from '../server.js'
import {sendError} from '../server.js'
import type {PricerLoader, SumsPricer} from './metrics.js'
import {GatewayMetrics, METRICS_CONTENT_TYPE} from './metrics.js'
import type {OtlpThread} from './otlp-thread.js'

/** Rows folded at once at most; the fold waits at most FOLD_MS after the first row. */
const FOLD_BATCH = 1024
const FOLD_MS = 200
/** Longest wait for the last export when the gateway stops (a collector that never answers). */
const CLOSE_BOUND_MS = 3000

/** Where and how the OTLP exporter sends. */
export interface OtlpConfig extends OtlpTarget {
  version: string
  /** Spans kept while the collector is down or slow (OTEL_BSP_MAX_QUEUE_SIZE, default 2048). */
  maxQueue: number
  /** Pause before a batch is sent (OTEL_BSP_SCHEDULE_DELAY, default 5000 ms). */
  delayMs: number
  /** One export's bound (OTEL_EXPORTER_OTLP_TIMEOUT, default 10000 ms). */
  timeoutMs: number
  /** Metric export interval (OTEL_METRIC_EXPORT_INTERVAL, default 60000 ms). */
  metricIntervalMs: number
}

function envInt(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 1): number {
  const raw = env[name]
  if (raw === undefined || raw.trim() === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min)
    throw new ConfigError(`${name} must be an integer of at least ${min} (it is "${raw}").`, {
      code: 'invalid_otel_env',
      hint: `Fix or unset ${name}.`,
    })
  return value
}

/**
 * The export settings (gateway/telemetry.ts) with the SDK's batch and timeout variables, or
 * undefined when export is off. A bad value is a configuration error (exit 3) naming its rule.
 */
export function otlpConfig(version: string, env: NodeJS.ProcessEnv = process.env): OtlpConfig | undefined {
  const target = otlpTarget(env)
  if (!target) return undefined
  return {
    ...target,
    version,
    maxQueue: envInt(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048),
    delayMs: envInt(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 0),
    timeoutMs: envInt(env, 'OTEL_EXPORTER_OTLP_TIMEOUT', 10_000),
    metricIntervalMs: envInt(env, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000),
  }
}

/**
 * The pricer of `gwctl usage` (a provider's own prices, else the bundled table), for
 * `gwctl_cost_usd_total`, loaded at the first scrape: a gateway nobody scrapes never loads it nor
 * its price table. It is a use case of services/ and is loaded by `import()`, as the daemon loads
 * the simulator: the daemon's static imports stay within its layer. Undefined when it cannot be
 * loaded (the metric then stays empty; counts and tokens do not need it).
 */
export async function loadPricer(): Promise<SumsPricer | undefined> {
  try {
    const {createPricer} = await import('../../services/usage-cost.js')
    return await createPricer()
  } catch {
    return undefined
  }
}

export interface TelemetryOptions {
  routing?: Routing
  /** Export settings (undefined: no export, and no `@opentelemetry/*` module is loaded). */
  otlp?: OtlpConfig
  /** Loads the pricer for `gwctl_cost_usd_total` at the first scrape (default: {@link loadPricer}). */
  pricer?: PricerLoader
}

export class Telemetry {
  readonly metrics: GatewayMetrics
  private pending: LogEntry[] = []
  private timer: NodeJS.Timeout | undefined
  private unsubscribe: (() => void) | undefined
  private otlp: OtlpThread | undefined

  private constructor(private readonly options: TelemetryOptions) {
    const routing = options.routing
    this.metrics = new GatewayMetrics(
      {
        breakers: routing ? () => routing.router.breakerStates(routing.providers) : undefined,
        logQueue: routing
          ? () => ({pending: routing.logs.pending, dropped: routing.logs.dropped})
          : undefined,
        otlp: () => this.otlp?.stats,
        budgets: routing ? () => routing.router.budgets?.views() ?? [] : undefined,
      },
      options.pricer ?? loadPricer,
    )
  }

  /** Starts listening to finished requests; loads the OTLP exporter when one is configured. */
  static async start(options: TelemetryOptions): Promise<Telemetry> {
    const telemetry = new Telemetry(options)
    if (options.otlp) {
      const {OtlpThread} = await import('./otlp-thread.js')
      telemetry.otlp = await OtlpThread.start(options.otlp)
    }
    telemetry.unsubscribe = onGatewayEvent((event) => {
      if (event.type === 'request') telemetry.add(event.entry)
    })
    return telemetry
  }

  /** One finished request: an array push; the work is done in the next fold. */
  add(entry: LogEntry): void {
    this.pending.push(entry)
    if (this.pending.length === FOLD_BATCH) {
      if (this.timer) clearTimeout(this.timer)
      this.timer = undefined
      setImmediate(() => this.fold())
    } else if (!this.timer && this.pending.length < FOLD_BATCH) {
      this.timer = setTimeout(() => {
        this.timer = undefined
        this.fold()
      }, FOLD_MS)
      this.timer.unref()
    }
  }

  /** Folds the pending rows into the metrics and the export queue. */
  fold(): void {
    if (this.pending.length === 0) return
    const rows = this.pending
    this.pending = []
    for (const entry of rows) {
      try {
        this.metrics.record(entry)
      } catch {
        // one odd row must not stop the others (nor reach the request path: it is long gone)
      }
    }
    this.otlp?.post(rows)
  }

  /** The Prometheus text, the pending rows folded in first. */
  async scrape(): Promise<string> {
    this.fold()
    // the export thread's counts after the rows just posted
    await this.otlp?.fresh()
    return this.metrics.text()
  }

  status(): TelemetryStatus {
    const otlp = this.otlp
    if (!otlp || !this.options.otlp) return {metrics: '/metrics', otlp: {state: 'off'}}
    const stats = otlp.stats
    const failing = stats.lastError !== null
    return {
      metrics: '/metrics',
      otlp: {
        state: failing ? 'failing' : 'exporting',
        endpoint: this.options.otlp.endpoint,
        serviceName: this.options.otlp.serviceName,
        ...stats,
      },
    }
  }

  /** Folds what is pending and exports what is queued (bounded by the exporter's timeout). */
  async close(): Promise<void> {
    this.unsubscribe?.()
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.fold()
    await this.otlp?.close(CLOSE_BOUND_MS)
  }
}

/** `GET /metrics`: the Prometheus text format (a management route: loopback Host, no CORS). */
export async function metricsHandler(request: GatewayRequest, context: GatewayContext): Promise<void> {
  const telemetry = context.telemetry
  if (!telemetry) {
    sendError(request.res, 'chat', 503, 'Metrics are not available in this gateway.', {
      code: 'metrics_unavailable',
    })
    return
  }
  const text = await telemetry.scrape()
  request.res.writeHead(200, {
    'content-type': METRICS_CONTENT_TYPE,
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  })
  request.res.end(request.method === 'HEAD' ? undefined : text)
}
