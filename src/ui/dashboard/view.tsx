/**
 * The live dashboard's frame: gateway state, routes with breaker state, recent requests and
 * usage by model. A pure component of its props, so tests render it to a string.
 *
 * It fits the terminal: every line is cut to its width (an ellipsis where a cell is cut, the
 * least useful columns left out first: a request's error when there is no room for it, then its
 * latency and tokens), and the
 * frame is at most one line shorter than its height (a frame as tall as the terminal scrolls it,
 * and the header goes off the top): the routes and usage sections show as many rows as fit and
 * say how many there are, the recent requests fill the rest.
 */
import {Box, Text} from 'ink'

import type {DashboardData, DashboardRoute} from '../../services/dashboard.js'
import {routeName, targetState, targetsOf, uptimeLabel} from '../../cli/dashboard-text.js'
import {agentCell, formatCount, formatTime} from '../../cli/log-columns.js'
import {addIfRoom, columnsLine, fit, fitColumns} from '../columns.js'

export interface DashboardViewProps {
  data: DashboardData | null
  /** Why the last refresh failed (the gateway stopped, ...). */
  error?: string | null
  /** Rows of recent requests shown at most. */
  maxRequests?: number
  /** The terminal's size (default 80x24). */
  columns?: number
  rows?: number
}

type RequestRow = DashboardData['recent_requests'][number]
type UsageRow = DashboardData['recent_usage'][number]

const CIRCUIT_COLORS: Record<string, string> = {closed: 'green', open: 'red', 'half-open': 'yellow'}

/** Lines of each section: every section gets a line, then routes, requests and usage in turn. */
export function sectionRows(
  counts: {routes: number; requests: number; usage: number},
  lines: number,
): {routes: number; requests: number; usage: number} {
  const want = [counts.routes, counts.requests, counts.usage]
  const got: number[] = want.map((n) => (n > 0 ? 1 : 0))
  let left = lines - got.reduce((a, b) => a + b, 0)
  while (left > 0 && got.some((g, i) => g < want[i])) {
    for (let i = 0; i < 3 && left > 0; i++) {
      if (got[i] < want[i]) {
        got[i]++
        left--
      }
    }
  }
  return {routes: got[0], requests: got[1], usage: got[2]}
}

function targetsText(r: DashboardRoute): string {
  const targets = targetsOf(r)
  if (targets.length === 0) return '(no provider)'
  return targets
    .map((t) => `${t.model ? `${t.provider}:${t.model}` : t.provider} [${targetState(t)}]`)
    .join(' → ')
}

export function DashboardView({data, error, maxRequests = 8, columns = 80, rows = 24}: DashboardViewProps) {
  const width = Math.max(20, columns)
  const g = data?.gateway
  const routes = data?.routes ?? []
  const requests = (data?.recent_requests ?? []).slice(0, maxRequests)
  const usage = data?.recent_usage ?? []
  // the header, 3 section titles, 4 blank lines, the footer, and one line spare (module comment)
  const fixed = 9 + 1
  const shown = sectionRows(
    {routes: routes.length, requests: requests.length, usage: usage.length},
    Math.max(3, rows - fixed) - [routes, requests, usage].filter((s) => s.length === 0).length,
  )
  const routeColumns = fitColumns<DashboardRoute>(
    [
      {header: '', value: routeName, min: 12, max: 40},
      {header: '', value: (r) => (r.agents === undefined ? '' : `${r.agents} agents`), drop: 1},
      {header: 'TARGETS', value: targetsText, min: 12},
    ],
    routes,
    width,
  )
  const requestColumns = addIfRoom(
    fitColumns<RequestRow>(
      [
        {header: '', value: (r) => formatTime(r.time).slice(11)},
        {header: '', value: (r) => agentCell(r), min: 6, max: 18},
        {
          header: '',
          value: (r) => (r.provider ? `${r.provider}/${r.model ?? '?'}` : (r.error ?? '-')),
          min: 16,
          max: 40,
        },
        {header: '', value: (r) => `${r.status}${r.fallback ? ' fb' : ''}`, right: true},
        {header: '', value: (r) => `${r.inputTokens}/${r.outputTokens}`, right: true, drop: 1},
        {header: '', value: (r) => `${Math.round(r.latencyMs)}ms`, right: true, drop: 2},
      ],
      requests,
      width,
    ),
    {header: '', value: (r) => (r.provider ? (r.error ?? '') : ''), min: 12},
    requests,
    width,
  )
  const usageColumns = fitColumns<UsageRow>(
    [
      {header: '', value: (u) => u.key ?? '(none)', min: 10, max: 40},
      {header: '', value: (u) => `${formatCount(u.requests)} req`, right: true},
      {header: '', value: (u) => `${formatCount(u.inputTokens)} in`, right: true, drop: 2},
      {header: '', value: (u) => `${formatCount(u.outputTokens)} out`, right: true, drop: 1},
    ],
    usage,
    width,
  )
  const title = (name: string, total: number, n: number) => (
    <Text bold>{fit(n < total ? `${name} (${n} of ${total})` : name, width).trimEnd()}</Text>
  )
  const none = <Text dimColor>{' (none)'}</Text>
  return (
    <Box flexDirection="column">
      <Text>
        <Text bold>gwctl dashboard</Text>
        {'  '}
        {error ? (
          <Text color="red">{fit(`gateway: ${error}`, width - 17).trimEnd()}</Text>
        ) : g ? (
          <Text color="green">
            {firstThatFits(
              [
                `gateway running on 127.0.0.1:${g.port} · pid ${g.pid} · up ${uptimeLabel(g.uptime_s)} · v${g.version}`,
                `gateway running on 127.0.0.1:${g.port} · up ${uptimeLabel(g.uptime_s)} · v${g.version}`,
                `gateway running on 127.0.0.1:${g.port} · up ${uptimeLabel(g.uptime_s)}`,
              ],
              width - 17,
            )}
          </Text>
        ) : (
          <Text dimColor>connecting…</Text>
        )}
      </Text>
      <Text> </Text>
      {title('Routes', routes.length, shown.routes)}
      {routes.length === 0 ? none : null}
      {routes.slice(0, shown.routes).map((r) => (
        <RouteLine key={routeName(r)} route={r} columns={routeColumns} width={width} />
      ))}
      <Text> </Text>
      {title('Recent requests', requests.length, shown.requests)}
      {requests.length === 0 ? none : null}
      {requests.slice(0, shown.requests).map((r) => (
        <Text key={r.id} color={r.status >= 400 || r.broken === true ? 'red' : undefined}>
          {columnsLine(requestColumns, r, width).trimEnd()}
        </Text>
      ))}
      <Text> </Text>
      {title('Usage by model', usage.length, shown.usage)}
      {usage.length === 0 ? none : null}
      {usage.slice(0, shown.usage).map((u) => (
        <Text key={u.key ?? '(none)'}>{columnsLine(usageColumns, u, width).trimEnd()}</Text>
      ))}
      <Text> </Text>
      <Text dimColor>{fit('refreshes every second · q or Ctrl-C quits', width).trimEnd()}</Text>
    </Box>
  )
}

/** The first text that fits in `width`, else the last one cut. */
function firstThatFits(texts: string[], width: number): string {
  return texts.find((t) => t.length <= width) ?? fit(texts.at(-1), width).trimEnd()
}

/** A route, its targets' circuits coloured when the whole line fits (else cut, uncoloured). */
function RouteLine({
  route,
  columns,
  width,
}: {
  route: DashboardRoute
  columns: ReturnType<typeof fitColumns<DashboardRoute>>
  width: number
}) {
  const line = columnsLine(columns, route, width).trimEnd()
  const targets = columns.find((c) => c.header === 'TARGETS')
  const full = targetsText(route)
  if (!targets || !line.endsWith(full)) return <Text>{line}</Text>
  const head = line.slice(0, line.length - full.length)
  const list = targetsOf(route)
  return (
    <Text>
      {head}
      {list.length === 0 ? <Text dimColor>(no provider)</Text> : null}
      {list.map((t, i) => {
        const state = targetState(t)
        return (
          <Text key={`${t.provider}-${i}`}>
            {i > 0 ? ' → ' : ''}
            {fit(t.model ? `${t.provider}:${t.model}` : t.provider, 200).trimEnd()}{' '}
            <Text color={CIRCUIT_COLORS[state]}>[{state}]</Text>
          </Text>
        )
      })}
    </Text>
  )
}
