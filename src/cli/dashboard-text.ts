/**
 * The dashboard's plain rendering: the route, target and uptime labels the live view shares, and
 * the text snapshot printed when stdout is not a terminal.
 */
import {renderTable} from '../core/output.js'
import type {DashboardData, DashboardRoute, DashboardTarget} from '../services/dashboard.js'
import {agentCell, formatCount, formatTime} from './log-columns.js'

/** `claude_code_default/messages` */
export function routeName(r: DashboardRoute): string {
  if (typeof r.route === 'string' && r.route) return r.route.split(' -> ')[0]
  return `${r.policyId ?? '?'}/${r.family ?? '?'}`
}

/**
 * The targets of a route, in order. Without a `targets` list they are read from the route label
 * (`default/chat -> a, b:model`), with no breaker state.
 */
export function targetsOf(r: DashboardRoute): DashboardTarget[] {
  if (Array.isArray(r.targets)) return r.targets
  const label = typeof r.route === 'string' ? r.route.split(' -> ')[1] : undefined
  if (!label || label === '(no provider)') return []
  return label.split(', ').map((text) => {
    const at = text.indexOf(':')
    return at < 0 ? {provider: text} : {provider: text.slice(0, at), model: text.slice(at + 1)}
  })
}

/** A target's breaker state: `closed` when the gateway tracks none for it yet. */
export function targetState(t: DashboardTarget): string {
  return t.circuit?.state ?? t.breaker?.state ?? t.state ?? 'closed'
}

/** `anthropic (closed), sim-messages:claude-sim (open)` */
export function routeTargets(r: DashboardRoute): string {
  const targets = targetsOf(r)
  if (targets.length === 0) return '(no provider)'
  return targets
    .map((t) => `${t.model ? `${t.provider}:${t.model}` : t.provider} (${targetState(t)})`)
    .join(', ')
}

/** `1h 02m 05s` */
export function uptimeLabel(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const pad = (n: number) => String(n).padStart(2, '0')
  return h > 0 ? `${h}h ${pad(m)}m ${pad(s % 60)}s` : m > 0 ? `${m}m ${pad(s % 60)}s` : `${s % 60}s`
}

/** The plain-text snapshot printed when stdout is not a terminal. */
export function dashboardText(data: DashboardData): string {
  const g = data.gateway
  const lines = [
    `Gateway: running on 127.0.0.1:${g.port} (pid ${g.pid}, up ${uptimeLabel(g.uptime_s)}, v${g.version})`,
    '',
    'Routes',
  ]
  lines.push(
    data.routes.length === 0
      ? '  (none)'
      : renderTable(data.routes, [
          {header: 'ROUTE', value: routeName},
          {header: 'AGENTS', value: (r) => r.agents ?? '', align: 'right'},
          {header: 'TARGETS (CIRCUIT)', value: routeTargets},
        ]),
  )
  lines.push('', 'Recent requests')
  lines.push(
    data.recent_requests.length === 0
      ? '  (none)'
      : renderTable(data.recent_requests.slice(0, 10), [
          {header: 'TIME', value: (r) => formatTime(r.time)},
          {header: 'AGENT', value: (r) => agentCell(r)},
          {header: 'PROVIDER/MODEL', value: (r) => (r.provider ? `${r.provider}/${r.model ?? '?'}` : '-')},
          {header: 'STATUS', value: (r) => r.status, align: 'right'},
          {header: 'IN', value: (r) => r.inputTokens, align: 'right'},
          {header: 'OUT', value: (r) => r.outputTokens, align: 'right'},
          {header: 'LATENCY', value: (r) => `${Math.round(r.latencyMs)}ms`, align: 'right'},
        ]),
  )
  lines.push('', 'Usage by model')
  lines.push(
    data.recent_usage.length === 0
      ? '  (none)'
      : renderTable(data.recent_usage, [
          {header: 'MODEL', value: (r) => r.key ?? '(none)'},
          {header: 'REQUESTS', value: (r) => formatCount(r.requests), align: 'right'},
          {header: 'INPUT', value: (r) => formatCount(r.inputTokens), align: 'right'},
          {header: 'OUTPUT', value: (r) => formatCount(r.outputTokens), align: 'right'},
          {
            header: 'CACHED',
            value: (r) => formatCount(r.cacheReadTokens + r.cacheCreationTokens),
            align: 'right',
          },
        ]),
  )
  return lines.join('\n')
}
