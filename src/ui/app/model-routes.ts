/**
 * The routes and providers of the terminal app, shaped for the screen: route rows, breaker
 * states and their countdowns, and per-provider health. No React here, so it is tested directly.
 */
import type {BreakerSnapshot} from '../../gateway/events.js'
import type {Family} from '../../store/schema.js'
import type {DashboardRoute} from '../../services/dashboard.js'
import {targetsOf} from '../../cli/dashboard-text.js'
import type {LogEntry} from '../../store/log-store.js'
import type {AppData} from './model.js'

export interface ProviderHealth {
  requests: number
  errors: number
  /** Median latency (ms), null without requests. */
  p50: number | null
}

/** Error rate and median latency per provider over the last `windowMs`. */
export function providerHealth(
  history: readonly LogEntry[],
  now: number,
  windowMs = 5 * 60_000,
): Map<string, ProviderHealth> {
  const latencies = new Map<string, number[]>()
  const out = new Map<string, ProviderHealth>()
  for (const r of history) {
    if (r.time < now - windowMs || !r.provider) continue
    const h = out.get(r.provider) ?? {requests: 0, errors: 0, p50: null}
    h.requests++
    if (r.status >= 500 || r.status === 429) h.errors++
    out.set(r.provider, h)
    latencies.set(r.provider, [...(latencies.get(r.provider) ?? []), r.latencyMs])
  }
  for (const [provider, list] of latencies) {
    const sorted = list.sort((a, b) => a - b)
    out.get(provider)!.p50 = sorted[Math.floor((sorted.length - 1) / 2)]
  }
  return out
}

/** A breaker state with the retry countdown when open: `open 12s`. */
export function circuitText(
  c: Pick<BreakerSnapshot, 'state' | 'retryAt'> | null | undefined,
  now: number,
): string {
  const state = c?.state ?? 'closed'
  if (state === 'open' && c?.retryAt) return `open ${Math.max(0, Math.ceil((c.retryAt - now) / 1000))}s`
  return state
}

export interface RouteRow {
  policyId: string
  family: Family
  /** `provider` or `provider:model`, in order. */
  targets: string[]
  /** The targets translated from the route's family (docs/TRANSLATION.md). */
  translated?: string[]
  agents: number | null
}

/**
 * The routes: the gateway's effective ones (its dashboard, with default routes filled in) while
 * it runs, else every (policy, family) with targets in the state file.
 */
export function routeRows(data: Pick<AppData, 'routes' | 'policies'>): RouteRow[] {
  const label = (t: {provider: string; model?: string}) => (t.model ? `${t.provider}:${t.model}` : t.provider)
  if (data.routes.length > 0) {
    return data.routes.map((r) => ({
      policyId: r.policyId ?? '?',
      family: (r.family ?? 'chat') as Family,
      targets: targetsOf(r).map(label),
      translated: targetsOf(r)
        .filter((t) => (t as {translate?: boolean}).translate)
        .map(label),
      agents: typeof r.agents === 'number' ? r.agents : null,
    }))
  }
  const out: RouteRow[] = []
  for (const p of data.policies)
    for (const [family, targets] of Object.entries(p.routes))
      if ((targets ?? []).length > 0)
        out.push({
          policyId: p.id,
          family: family as Family,
          targets: targets!.map(label),
          translated: targets!.filter((t) => t.translate).map(label),
          agents: null,
        })
  return out
}

/** Applies a breaker event to the routes' targets (the event stream's `breaker`). */
export function withBreaker(
  routes: readonly DashboardRoute[],
  provider: string,
  state: BreakerSnapshot['state'],
  retryAt: number | null,
): DashboardRoute[] {
  return routes.map((r) => ({
    ...r,
    targets: r.targets?.map((t) =>
      t.provider === provider
        ? {
            ...t,
            circuit: {
              provider,
              state,
              retryAt,
              consecutiveFailures: t.circuit?.consecutiveFailures ?? 0,
              openedAt: t.circuit?.openedAt ?? null,
              retryInMs: null,
              lastError: t.circuit?.lastError ?? null,
            },
          }
        : t,
    ),
  }))
}

/** The breaker of a provider as the dashboard's routes last said. */
export function breakerOf(
  routes: readonly DashboardRoute[],
  provider: string,
): Pick<BreakerSnapshot, 'state' | 'retryAt'> | null {
  for (const r of routes)
    for (const t of r.targets ?? []) if (t.provider === provider && t.circuit) return t.circuit
  return null
}
