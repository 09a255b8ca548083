/**
 * OpenTelemetry export of the gateway's requests over OTLP/HTTP, with the official SDK and
 * exporters. Loaded by `import()` only when an endpoint is configured (telemetry.ts): a gateway
 * without export loads none of `@opentelemetry/*`.
 *
 * Each finished request becomes one CLIENT span following the GenAI semantic conventions, plus the
 * GenAI metrics `gen_ai.client.token.usage` and `gen_ai.client.operation.duration`. A span is made
 * from the request's log row, after the answer went out, in a batch off the request path; it
 * carries counts, names and timings only: prompts, answers and error texts are never exported.
 *
 * The SDK's BatchSpanProcessor drops the newest spans when its queue is full; the rule here is
 * the opposite (the newest say most about the present), so the queue is ours: bounded, oldest
 * dropped and counted, one export in flight at a time, a failed batch put back at the head and
 * tried again after a growing pause (1 s to 30 s). A collector that is down or never answers
 * costs the request path nothing: the queue fills, the oldest spans go, the count says how many.
 */
import {Agent as HttpAgent} from 'node:http'
import {Agent as HttpsAgent} from 'node:https'
import type {Socket} from 'node:net'

import type {Attributes, Histogram, Tracer} from '@opentelemetry/api'
import {SpanKind, SpanStatusCode} from '@opentelemetry/api'
import {ExportResultCode} from '@opentelemetry/core'
import {OTLPMetricExporter} from '@opentelemetry/exporter-metrics-otlp-http'
import {OTLPTraceExporter} from '@opentelemetry/exporter-trace-otlp-http'
import {defaultResource, resourceFromAttributes} from '@opentelemetry/resources'
import {MeterProvider, PeriodicExportingMetricReader} from '@opentelemetry/sdk-metrics'
import type {ReadableSpan, SpanProcessor} from '@opentelemetry/sdk-trace-base'
import {BasicTracerProvider} from '@opentelemetry/sdk-trace-base'

import type {LogEntry} from '../../store/log-store.js'
import {BoundedLabel, LABEL_CAPS} from './metrics.js'
import type {OtlpStats} from '../../gateway/telemetry.js'
import type {OtlpConfig} from './telemetry.js'

/** Spans a batch holds at most (the SDK's default OTEL_BSP_MAX_EXPORT_BATCH_SIZE). */
const MAX_BATCH = 512
/** Longest pause between tries while the collector fails. */
const MAX_BACKOFF_MS = 30_000

/** GenAI token usage buckets of the semantic conventions. */
const TOKEN_BUCKETS = [
  1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864,
]
/** GenAI operation duration buckets of the semantic conventions (seconds). */
const DURATION_BUCKETS = [
  0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
]

/**
 * The exporters' HTTP agent: keep-alive, with every socket unref'd, so that an export still under
 * way (a collector that never answers) does not keep a stopping gateway alive for its timeout.
 */
async function unrefAgent(protocol: string): Promise<HttpAgent> {
  const agent = protocol === 'https:' ? new HttpsAgent({keepAlive: true}) : new HttpAgent({keepAlive: true})
  const create = agent.createConnection.bind(agent) as (...args: unknown[]) => Socket | undefined
  agent.createConnection = ((...args: unknown[]) => {
    const socket = create(...args)
    socket?.unref()
    return socket
  }) as typeof agent.createConnection
  return agent
}

/** `gen_ai.operation.name` of an entrance family. */
function operationOf(entrance: string): string {
  return entrance === 'gemini' ? 'generate_content' : 'chat'
}

/** Collects the spans the tracer ends into the export queue. */
class QueueProcessor implements SpanProcessor {
  constructor(private readonly push: (span: ReadableSpan) => void) {}
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    this.push(span)
  }
  forceFlush(): Promise<void> {
    return Promise.resolve()
  }
  shutdown(): Promise<void> {
    return Promise.resolve()
  }
}

export class OtlpExport {
  private queue: ReadableSpan[] = []
  private readonly exporter: OTLPTraceExporter
  private readonly tracerProvider: BasicTracerProvider
  private readonly tracer: Tracer
  private readonly meterProvider: MeterProvider
  private readonly tokenUsage: Histogram
  private readonly duration: Histogram
  private readonly models = new BoundedLabel(LABEL_CAPS.model)
  private readonly requestModels = new BoundedLabel(LABEL_CAPS.model)
  private readonly providers = new BoundedLabel(LABEL_CAPS.provider)
  private timer: NodeJS.Timeout | undefined
  private inFlight: Promise<void> | undefined
  private backoffMs = 0
  /** Spans of the batch under way (still counted as queued: they are not delivered yet). */
  private sending = 0
  private closed = false
  readonly stats: OtlpStats = {
    queued: 0,
    exported: 0,
    dropped: 0,
    failures: 0,
    lastError: null,
    lastSuccessAt: null,
  }

  constructor(private readonly config: OtlpConfig) {
    const resource = defaultResource().merge(
      resourceFromAttributes({'service.name': config.serviceName, 'service.version': config.version}),
    )
    this.exporter = new OTLPTraceExporter({
      url: config.tracesUrl,
      headers: config.headers,
      timeoutMillis: config.timeoutMs,
      httpAgentOptions: unrefAgent,
    })
    this.tracerProvider = new BasicTracerProvider({
      resource,
      spanProcessors: [new QueueProcessor((span) => this.enqueue(span))],
    })
    this.tracer = this.tracerProvider.getTracer('gwctl', config.version)
    this.meterProvider = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter({
            url: config.metricsUrl,
            headers: config.headers,
            timeoutMillis: config.timeoutMs,
            httpAgentOptions: unrefAgent,
          }),
          exportIntervalMillis: config.metricIntervalMs,
          exportTimeoutMillis: Math.min(config.timeoutMs, config.metricIntervalMs),
        }),
      ],
    })
    const meter = this.meterProvider.getMeter('gwctl', config.version)
    this.tokenUsage = meter.createHistogram('gen_ai.client.token.usage', {
      unit: '{token}',
      description: 'Number of input and output tokens used.',
      advice: {explicitBucketBoundaries: TOKEN_BUCKETS},
    })
    this.duration = meter.createHistogram('gen_ai.client.operation.duration', {
      unit: 's',
      description: 'GenAI operation duration.',
      advice: {explicitBucketBoundaries: DURATION_BUCKETS},
    })
  }

  /** One finished request: its span (queued for export) and its GenAI metrics. */
  record(entry: LogEntry): void {
    if (this.closed) return
    const operation = operationOf(entry.entrance)
    const failed = entry.status >= 400 || entry.broken === true
    const common: Attributes = {
      'gen_ai.operation.name': operation,
      'gen_ai.provider.name': this.providers.value(entry.provider),
      'gen_ai.request.model': this.requestModels.value(entry.requestedModel),
      'gen_ai.response.model': this.models.value(entry.model),
    }
    if (failed) common['error.type'] = entry.broken ? 'broken_stream' : String(entry.status)
    const attributes: Attributes = {
      ...common,
      'gen_ai.usage.input_tokens': entry.inputTokens,
      'gen_ai.usage.output_tokens': entry.outputTokens,
      'gen_ai.usage.cache_read.input_tokens': entry.cacheReadTokens,
      'gen_ai.usage.cache_creation.input_tokens': entry.cacheCreationTokens,
      'gen_ai.usage.reasoning.output_tokens': entry.reasoningTokens,
      'http.response.status_code': entry.status,
      'gwctl.entrance': entry.entrance,
      'gwctl.agent': entry.agentId ?? '',
      'gwctl.policy': entry.policyId ?? '',
      'gwctl.fallback': entry.fallback,
      'gwctl.upstream_family': entry.upstreamFamily ?? entry.entrance,
    }
    if (entry.requestId) attributes['gen_ai.response.id'] = entry.requestId
    if (entry.ttfbMs !== null) attributes['gwctl.ttfb_ms'] = entry.ttfbMs
    const model = entry.requestedModel ?? entry.model
    const span = this.tracer.startSpan(model ? `${operation} ${model}` : operation, {
      kind: SpanKind.CLIENT,
      startTime: new Date(entry.time),
      attributes,
    })
    if (failed) span.setStatus({code: SpanStatusCode.ERROR})
    span.end(new Date(entry.time + entry.latencyMs))

    const seconds = entry.latencyMs / 1000
    this.duration.record(seconds, common)
    if (!failed || entry.inputTokens + entry.outputTokens > 0) {
      this.tokenUsage.record(entry.inputTokens, {...common, 'gen_ai.token.type': 'input'})
      this.tokenUsage.record(entry.outputTokens, {...common, 'gen_ai.token.type': 'output'})
    }
  }

  private enqueue(span: ReadableSpan): void {
    this.queue.push(span)
    if (this.queue.length > this.config.maxQueue) {
      const lost = this.queue.length - this.config.maxQueue
      this.queue.splice(0, lost)
      this.stats.dropped += lost
    }
    this.stats.queued = this.queue.length + this.sending
    this.schedule(this.backoffMs || this.config.delayMs)
  }

  private schedule(ms: number): void {
    if (this.timer || this.inFlight || this.closed) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      void this.exportBatch()
    }, ms)
    this.timer.unref()
  }

  /** Sends one batch; the next is scheduled when it is done. */
  private exportBatch(): Promise<void> {
    if (this.inFlight || this.queue.length === 0) return this.inFlight ?? Promise.resolve()
    const batch = this.queue.splice(0, MAX_BATCH)
    this.sending = batch.length
    this.inFlight = new Promise<void>((resolve) => {
      this.exporter.export(batch, (result) => {
        this.sending = 0
        if (result.code === ExportResultCode.SUCCESS) {
          this.stats.exported += batch.length
          this.stats.lastSuccessAt = Date.now()
          this.stats.lastError = null
          this.backoffMs = 0
        } else {
          this.stats.failures++
          this.stats.lastError = describe(result.error)
          this.backoffMs = Math.min(MAX_BACKOFF_MS, this.backoffMs ? this.backoffMs * 2 : 1000)
          // back to the head, in order; the bound still holds (the oldest go first)
          this.queue = batch.concat(this.queue)
          if (this.queue.length > this.config.maxQueue) {
            const lost = this.queue.length - this.config.maxQueue
            this.queue.splice(0, lost)
            this.stats.dropped += lost
          }
        }
        this.stats.queued = this.queue.length
        resolve()
      })
    }).finally(() => {
      this.inFlight = undefined
      if (this.queue.length > 0)
        this.schedule(this.backoffMs || (this.queue.length >= MAX_BATCH ? 0 : this.config.delayMs))
    })
    return this.inFlight
  }

  /**
   * Exports what is queued and the last metrics, within `boundMs` in all, then stops. Never
   * throws. A collector that fails or does not answer in time gets nothing more: what it did not
   * take is lost, and nothing left behind (sockets are unref'd) holds the gateway's exit.
   */
  async close(boundMs: number): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.backoffMs = 0
    const deadline = Date.now() + boundMs
    let timer: NodeJS.Timeout | undefined
    const inTime = async (work: Promise<unknown>): Promise<boolean> => {
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), Math.max(0, deadline - Date.now()))
        timer.unref()
      })
      const outcome = await Promise.race([
        work.then(
          () => 'done' as const,
          () => 'done' as const,
        ),
        late,
      ])
      clearTimeout(timer)
      return outcome === 'done'
    }
    try {
      if (this.inFlight && !(await inTime(this.inFlight))) return
      while (this.queue.length > 0 && this.stats.lastError === null) {
        if (!(await inTime(this.exportBatch()))) return
      }
      this.closed = true
      // the last metrics, unless the collector is failing (its timeout would only delay the exit)
      if (this.stats.lastError === null) await inTime(this.meterProvider.shutdown())
    } finally {
      this.closed = true
      if (this.timer) clearTimeout(this.timer)
      this.timer = undefined
    }
  }
}

/** An export error in one line, without headers or bodies. */
function describe(error: Error | undefined): string {
  if (!error) return 'export failed'
  const message = error.message.split('\n')[0].slice(0, 200)
  return message || error.name
}
