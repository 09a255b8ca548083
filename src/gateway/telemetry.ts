/**
 * The telemetry vocabulary the daemon, `status` and `doctor` share: where OTLP export goes (from
 * the settings and the OTEL_* variables, read as the OpenTelemetry SDK reads them) and what the
 * daemon reports of it. The export itself is the daemon's (`src/daemon/telemetry/`).
 */
import {getCheckedSetting} from '../store/settings.js'

/** Where OTLP/HTTP export sends, or undefined when export is off. */
export interface OtlpTarget {
  /** The configured endpoint as shown (no query string: a token there stays out of output). */
  endpoint: string
  tracesUrl: string
  metricsUrl: string
  /** From `telemetry.headers` / OTEL_EXPORTER_OTLP_HEADERS; secret, never printed. */
  headers: Record<string, string>
  serviceName: string
}

/** How export fares, as the daemon counts it. */
export interface OtlpStats {
  /** Spans waiting in the bounded queue. */
  queued: number
  /** Spans the collector accepted. */
  exported: number
  /** Spans dropped, oldest first, because the queue was full. */
  dropped: number
  /** Export attempts that failed. */
  failures: number
  /** Why the latest attempt failed; null once one works again. */
  lastError: string | null
  /** Unix ms of the latest accepted batch. */
  lastSuccessAt: number | null
}

/** What `/api/status` says of telemetry (`telemetry`). */
export interface TelemetryStatus {
  /** Path of the Prometheus endpoint. */
  metrics: string
  otlp: {state: 'off'} | ({state: 'exporting' | 'failing'; endpoint: string; serviceName: string} & OtlpStats)
}

/** `a=1,b=2` (names and values URL-encoded, as OTEL_EXPORTER_OTLP_HEADERS) as an object. */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const decode = (s: string): string => {
    try {
      return decodeURIComponent(s.trim())
    } catch {
      return s.trim()
    }
  }
  const headers: Record<string, string> = {}
  for (const pair of (text ?? '').split(',')) {
    const eq = pair.indexOf('=')
    if (eq <= 0) continue
    headers[decode(pair.slice(0, eq)).toLowerCase()] = decode(pair.slice(eq + 1))
  }
  return headers
}

/** A URL without its query and fragment. */
export function shownEndpoint(url: string): string {
  try {
    const u = new URL(url)
    return `${u.origin}${u.pathname}`
  } catch {
    return url
  }
}

/**
 * The export target, or undefined when export is off: no endpoint, or OTEL_SDK_DISABLED=true. The
 * endpoint (`telemetry.otlp-endpoint`, overridden by OTEL_EXPORTER_OTLP_ENDPOINT) is a base URL:
 * `/v1/traces` and `/v1/metrics` are added to it as the SDK does; OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
 * and OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, when set, are used as they are. Throws the settings'
 * ConfigError (exit 3) for a value that breaks its rule.
 */
export function otlpTarget(env: NodeJS.ProcessEnv = process.env): OtlpTarget | undefined {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return undefined
  const endpoint = getCheckedSetting('telemetry.otlp-endpoint')
  const tracesEnv = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()
  const metricsEnv = env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT?.trim()
  if (!endpoint && !tracesEnv) return undefined
  const base = (endpoint ?? '').replace(/\/+$/, '')
  const tracesUrl = tracesEnv || `${base}/v1/traces`
  return {
    endpoint: shownEndpoint(endpoint ?? tracesEnv!),
    tracesUrl,
    metricsUrl:
      metricsEnv || (base ? `${base}/v1/metrics` : tracesUrl.replace(/\/v1\/traces\/?$/, '/v1/metrics')),
    headers: parseOtlpHeaders(getCheckedSetting('telemetry.headers')),
    serviceName: getCheckedSetting('telemetry.service-name')?.trim() || 'gwctl-gateway',
  }
}
