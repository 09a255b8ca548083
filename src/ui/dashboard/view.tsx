/**
 * The live dashboard's frame: gateway state, routes with breaker state, recent requests and
 * usage by model. A pure component of its props, so tests render it to a string.
 */
import {Box, Text} from 'ink'

import {printable} from '../../core/output.js'
import type {DashboardData} from '../../services/dashboard.js'
import {routeName, targetState, targetsOf, uptimeLabel} from '../../cli/dashboard-text.js'
import {agentCell, formatCount, formatTime} from '../../cli/log-columns.js'

export interface DashboardViewProps {
  data: DashboardData | null
  /** Why the last refresh failed (the gateway stopped, ...). */
  error?: string | null
  /** Rows of recent requests shown. */
  maxRequests?: number
}

function cell(text: string | number, width: number, right = false): string {
  const s = printable(String(text)) // models come from agents' requests: no escape sequences
  const cut = s.length > width ? s.slice(0, Math.max(0, width - 1)) + '…' : s
  return right ? cut.padStart(width) : cut.padEnd(width)
}

const CIRCUIT_COLORS: Record<string, string> = {closed: 'green', open: 'red', 'half-open': 'yellow'}

export function DashboardView({data, error, maxRequests = 8}: DashboardViewProps) {
  const g = data?.gateway
  return (
    <Box flexDirection="column">
      <Box>
        <Text bold>gwctl dashboard</Text>
        <Text>{'  '}</Text>
        {error ? (
          <Text color="red">gateway: {error}</Text>
        ) : g ? (
          <Text color="green">
            gateway running on 127.0.0.1:{g.port} · pid {g.pid} · up {uptimeLabel(g.uptime_s)} · v{g.version}
          </Text>
        ) : (
          <Text dimColor>connecting…</Text>
        )}
      </Box>
      <Text> </Text>
      <Text bold>Routes</Text>
      {(data?.routes ?? []).length === 0 ? <Text dimColor> (none)</Text> : null}
      {(data?.routes ?? []).map((r) => (
        <Box key={routeName(r)}>
          <Text>{cell(routeName(r), 32)} </Text>
          <Text dimColor>{cell(r.agents === undefined ? '' : `${r.agents} agents`, 10)} </Text>
          {targetsOf(r).length === 0 ? <Text dimColor>(no provider)</Text> : null}
          {targetsOf(r).map((t, i) => {
            const state = targetState(t)
            return (
              <Text key={`${t.provider}-${i}`}>
                {i > 0 ? ' → ' : ''}
                {t.model ? `${t.provider}:${t.model}` : t.provider}{' '}
                <Text color={CIRCUIT_COLORS[state]}>[{state}]</Text>
              </Text>
            )
          })}
        </Box>
      ))}
      <Text> </Text>
      <Text bold>Recent requests</Text>
      {(data?.recent_requests ?? []).length === 0 ? <Text dimColor> (none)</Text> : null}
      {(data?.recent_requests ?? []).slice(0, maxRequests).map((r) => (
        <Text key={r.id} color={r.status >= 400 || r.broken === true ? 'red' : undefined}>
          {cell(formatTime(r.time).slice(11), 8)} {cell(agentCell(r), 18)}{' '}
          {cell(r.provider ? `${r.provider}/${r.model ?? '?'}` : '-', 30)} {cell(r.status, 3, true)}
          {r.fallback ? ' fb' : '   '} {cell(`${r.inputTokens}/${r.outputTokens}`, 13, true)}{' '}
          {cell(`${Math.round(r.latencyMs)}ms`, 8, true)}
        </Text>
      ))}
      <Text> </Text>
      <Text bold>Usage by model</Text>
      {(data?.recent_usage ?? []).length === 0 ? <Text dimColor> (none)</Text> : null}
      {(data?.recent_usage ?? []).map((u) => (
        <Text key={u.key ?? '(none)'}>
          {cell(u.key ?? '(none)', 32)} {cell(`${formatCount(u.requests)} req`, 12, true)}{' '}
          {cell(`${formatCount(u.inputTokens)} in`, 16, true)}{' '}
          {cell(`${formatCount(u.outputTokens)} out`, 16, true)}
        </Text>
      ))}
      <Text> </Text>
      <Text dimColor>refreshes every second · q or Ctrl-C quits</Text>
    </Box>
  )
}
