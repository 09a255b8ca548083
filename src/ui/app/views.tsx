/**
 * The four views of the terminal app. Pure components of their props (data, selection, width,
 * height): each line is built to the exact width, so frames are the same on every terminal of
 * that size and tests compare them whole.
 */
import {Box, Text} from 'ink'

import type {DashboardRoute} from '../../services/dashboard.js'
import type {LogRow} from '../../store/log-query.js'
import type {UsageSource} from '../../store/usage-query.js'
import type {UsagePivot} from './data.js'
import {USAGE_PIVOTS} from './data.js'
import type {AppAgent, AppData, AppUsageRow, ProviderHealth} from './model.js'
import {
  ago,
  agentLabel,
  agentNames,
  bindingOf,
  breakerOf,
  cell,
  circuitText,
  clock,
  compact,
  costOf,
  costText,
  dailyTokens,
  heatmap,
  hourlyTokens,
  lastRequest,
  routeRows,
  providerHealth,
  sparkline,
  todayTokens,
} from './model.js'

export interface ViewProps {
  data: AppData
  width: number
  /** Lines the view may use. */
  height: number
  selected: number
  now: number
  color: boolean
}

/** A line, selected (marker + inverse) or not. */
function Row({text, selected, color}: {text: string; selected?: boolean; color: boolean}) {
  return (
    <Text inverse={Boolean(selected) && color} bold={Boolean(selected) && !color}>
      {(selected ? '›' : ' ') + text}
    </Text>
  )
}

/** Which rows of a list of `count` are visible in `height` lines with `selected` on screen. */
export function windowOf(count: number, selected: number, height: number): [number, number] {
  if (count <= height) return [0, count]
  const start = Math.min(Math.max(0, selected - Math.floor(height / 2)), count - height)
  return [start, start + height]
}

const STATE_COLORS: Record<string, string> = {
  closed: 'green',
  open: 'red',
  'half-open': 'yellow',
  bound: 'green',
  unbound: 'gray',
  stale: 'yellow',
}

function stateColor(text: string, color: boolean): string | undefined {
  return color ? STATE_COLORS[text.split(' ')[0]] : undefined
}

// ---------------------------------------------------------------------------------------------
// Agents

export function AgentsView({
  data,
  width,
  height,
  selected,
  now,
  color,
  costs,
}: ViewProps & {costs?: Map<string, Parameters<typeof costText>[0]>}) {
  const w = width - 1
  if (data.agents.length === 0) {
    return (
      <Box flexDirection="column">
        <Text>{' No agents yet.'}</Text>
        <Text dimColor={color}>
          {' Issue a key: gwctl key issue --agent-name NAME --agent-type claude_code'}
        </Text>
      </Box>
    )
  }
  const names = agentNames(data.agents)
  const today = todayTokens(data.history, now)
  const last = lastRequest(data.history)
  const fixed = 16 + 1 + 12 + 1 + 8 + 1 + 12 + 1 + 8 + 1
  const routeW = Math.max(8, w - fixed)
  const header = `${cell('NAME', 16)} ${cell('KIND', 12)} ${cell('BOUND', 8)} ${cell('POLICY', 12)} ${cell('TODAY', 8, true)} ${cell('ROUTE', routeW)}`
  const listH = Math.max(1, height - 7)
  const [from, to] = windowOf(data.agents.length, selected, listH)
  const agent: AppAgent | undefined = data.agents[selected]
  const lines = data.agents.slice(from, to).map((a, i) => {
    const targets = a.route.targets.map((t) => t.provider).join('→') || '(none)'
    return {
      key: a.agentId,
      selected: from + i === selected,
      text: `${cell(a.name, 16)} ${cell(a.type, 12)} ${cell(bindingOf(a), 8)} ${cell(a.policyId, 12)} ${cell(compact(today.get(a.agentId) ?? 0), 8, true)} ${cell(targets, routeW)}`,
    }
  })
  const seen = agent ? (last.get(agent.agentId) ?? (agent.lastSeenAt ? agent.lastSeenAt * 1000 : null)) : null
  const children = agent?.childAgentIds.map((id) => agentLabel(id, names)).join(', ') || '-'
  return (
    <Box flexDirection="column">
      <Text bold>{' ' + cell(header, w)}</Text>
      {lines.map((l) => (
        <Row key={l.key} text={cell(l.text, w)} selected={l.selected} color={color} />
      ))}
      {agent && (
        <Box flexDirection="column" marginTop={1}>
          <Text>
            {' ' + cell(`${agent.name} · ${agent.agentId} · key ${agent.keyPrefix ?? '(none)'}`, w)}
          </Text>
          <Text>
            {' ' +
              cell(
                `parent ${agent.parentAgentName ?? '-'} · children ${children} · last request ${ago(seen, now)}${costs?.has(agent.agentId) ? ` · today ${costText(costs.get(agent.agentId)!)}` : ''}`,
                w,
              )}
          </Text>
          {routeLine(agent, data.routes, now, w, color)}
        </Box>
      )}
    </Box>
  )
}

function routeLine(
  agent: AppAgent,
  routes: readonly DashboardRoute[],
  now: number,
  w: number,
  color: boolean,
) {
  const head = ` route ${agent.route.family}: `
  if (agent.route.targets.length === 0) return <Text>{cell(`${head}(no target)`, w + 1)}</Text>
  return (
    <Text>
      {head}
      {agent.route.targets.map((t, i) => {
        const state = circuitText(breakerOf(routes, t.provider), now)
        const label = cell(t.model ? `${t.provider}:${t.model}` : t.provider, 40).trimEnd()
        return (
          <Text key={i}>
            {`${i > 0 ? ' → ' : ''}${label} [`}
            <Text color={stateColor(state, color)}>{state}</Text>]
          </Text>
        )
      })}
    </Text>
  )
}

// ---------------------------------------------------------------------------------------------
// Routes and providers

export interface RoutesViewProps extends ViewProps {
  /** While reordering: the route's targets in their new order and the selected target. */
  editing?: {targets: string[]; selected: number} | null
}

export function RoutesView({data, width, height, selected, now, color, editing}: RoutesViewProps) {
  const w = width - 1
  const routes = routeRows(data)
  if (routes.length === 0) {
    return (
      <Box flexDirection="column">
        <Text>{' No routes: no policy has a target.'}</Text>
        <Text dimColor={color}>
          {' Add one: gwctl policies route default --family chat --target PROVIDER'}
        </Text>
      </Box>
    )
  }
  const health = providerHealth(data.history, now)
  const current = routes[Math.min(selected, routes.length - 1)]
  const targets = editing?.targets ?? current.targets
  const [from, to] = windowOf(routes.length, selected, Math.max(1, height - 5 - targets.length))
  const state = (target: string) => circuitText(breakerOf(data.routes, target.split(':')[0]), now)
  return (
    <Box flexDirection="column">
      <Text bold>{' ' + cell(`${cell('ROUTE', 28)} ${cell('AGENTS', 6, true)}  TARGETS [CIRCUIT]`, w)}</Text>
      {routes.slice(from, to).map((r, i) => (
        <Row
          key={`${r.policyId}/${r.family}`}
          selected={from + i === selected}
          color={color}
          text={cell(
            `${cell(`${r.policyId}/${r.family}`, 28)} ${cell(r.agents ?? '', 6, true)}  ${r.targets.map((t) => `${t}${r.translated?.includes(t) ? ' (translated)' : ''} [${state(t)}]`).join(' → ') || '(no target)'}`,
            w,
          )}
        />
      ))}
      <Box flexDirection="column" marginTop={1}>
        <Text bold>
          {' ' +
            cell(
              editing
                ? `Reorder ${current.policyId}/${current.family}: ↑↓ select, +/- move, a apply, Esc cancel`
                : `Targets of ${current.policyId}/${current.family} (Enter reorders)`,
              w,
            )}
        </Text>
        <Text>
          {' ' +
            cell(
              `${cell('#', 3)}${cell('TARGET', 30)} ${cell('CIRCUIT', 10)} ${cell('ERR 5m', 8, true)} ${cell('P50 5m', 8, true)}`,
              w,
            )}
        </Text>
        {targets.map((t, i) => {
          const h: ProviderHealth | undefined = health.get(t.split(':')[0])
          const s = state(t)
          const rate = h && h.requests > 0 ? `${Math.round((h.errors / h.requests) * 100)}%` : '-'
          return (
            <Text key={t + i}>
              {editing && editing.selected === i ? '›' : ' '}
              {cell(`${i + 1}.`, 3)}
              {cell(current.translated?.includes(t) ? `${t} (translated)` : t, 30)}{' '}
              <Text color={stateColor(s, color)}>{cell(s, 10)}</Text> {cell(rate, 8, true)}{' '}
              {cell(h?.p50 == null ? '-' : `${Math.round(h.p50)}ms`, 8, true)}
            </Text>
          )
        })}
      </Box>
    </Box>
  )
}

// ---------------------------------------------------------------------------------------------
// Requests

export interface RequestsViewProps extends ViewProps {
  filter: string
  rows: LogRow[]
}

function statusText(r: LogRow): string {
  return `${r.status}${r.fallback ? ' fb' : ''}`
}

export function RequestsView({data, width, height, selected, color, filter, rows}: RequestsViewProps) {
  const w = width - 1
  const names = agentNames(data.agents)
  if (rows.length === 0) {
    return (
      <Box flexDirection="column">
        <Text>{filter ? ` No requests match "${cell(filter, 30).trim()}".` : ' No requests yet.'}</Text>
        <Text dimColor={color}>{' They appear here as agents call the gateway.'}</Text>
      </Box>
    )
  }
  const fixed = 8 + 1 + 14 + 1 + 6 + 1 + 13 + 1 + 7 + 1
  const modelW = Math.max(8, w - fixed)
  const [from, to] = windowOf(rows.length, selected, Math.max(1, height - 1))
  return (
    <Box flexDirection="column">
      <Text bold>
        {' ' +
          cell(
            `${cell('TIME', 8)} ${cell('AGENT', 14)} ${cell('PROVIDER/MODEL', modelW)} ${cell('STATUS', 6, true)} ${cell('TOKENS IN/OUT', 13, true)} ${cell('LATENCY', 7, true)}`,
            w,
          )}
      </Text>
      {rows.slice(from, to).map((r, i) => {
        const s = statusText(r)
        const model = r.provider
          ? `${r.provider}/${r.model ?? r.requestedModel ?? '?'}`
          : (r.requestedModel ?? '-')
        const tokens = `${compact(r.inputTokens)}/${compact(r.outputTokens)}`
        const text = cell(
          `${cell(clock(r.time), 8)} ${cell(agentLabel(r.agentId, names), 14)} ${cell(model, modelW)} ${cell(s, 6, true)} ${cell(tokens, 13, true)} ${cell(`${Math.round(r.latencyMs)}ms`, 7, true)}`,
          w,
        )
        const bad = r.status >= 400 || r.broken === true
        return (
          <Text key={`${r.id}-${r.time}`} color={bad && color ? 'red' : undefined}>
            <Row text={text} selected={from + i === selected} color={color} />
          </Text>
        )
      })}
    </Box>
  )
}

/** One request, as Enter opens it. */
export function RequestDetail({row, names, width}: {row: LogRow; names: Map<string, string>; width: number}) {
  const w = width - 4
  const cached = `cache read ${row.cacheReadTokens}, cache write ${row.cacheCreationTokens}`
  const lines: Array<[string, string]> = [
    ['Time', new Date(row.time).toISOString()],
    ['Agent', `${agentLabel(row.agentId, names)}${row.agentId ? ` (${row.agentId})` : ''}`],
    ['Key', row.keyPrefix ?? '-'],
    ['Policy', `${row.policyId ?? '-'} · entrance ${row.entrance}`],
    ['Requested', row.requestedModel ?? '-'],
    [
      'Resolved',
      row.provider ? `${row.provider}:${row.model ?? '?'}${row.fallback ? ' (fallback)' : ''}` : '-',
    ],
    ['Status', String(row.status)],
    ['Tokens', `in ${row.inputTokens}, out ${row.outputTokens}, ${cached}, reasoning ${row.reasoningTokens}`],
    [
      'Latency',
      `${Math.round(row.latencyMs)}ms · first byte ${row.ttfbMs === null ? '-' : `${Math.round(row.ttfbMs)}ms`}`,
    ],
    ['Request id', row.requestId ?? '-'],
    ['Error', row.error ?? '-'],
  ]
  return (
    <Box flexDirection="column" borderStyle="single" paddingX={1}>
      <Text bold>{cell('Request', w)}</Text>
      {lines.map(([k, v]) => (
        <Text key={k}>{cell(`${cell(k, 11)} ${v}`, w)}</Text>
      ))}
      <Text dimColor>{cell('Esc or Enter closes', w)}</Text>
    </Box>
  )
}

// ---------------------------------------------------------------------------------------------
// Usage

export interface UsageViewProps extends ViewProps {
  pivot: UsagePivot
  source?: UsageSource
}

export function UsageView({
  data,
  width,
  height,
  selected,
  now,
  color,
  pivot,
  source = 'gateway',
}: UsageViewProps) {
  const w = width - 1
  const names = agentNames(data.agents)
  const rows: AppUsageRow[] = data.usage[pivot] ?? []
  const withCost = rows.some((r) => costOf(r) !== null || (r.unpricedModels ?? []).length > 0)
  const hourly = hourlyTokens(data.history, now)
  const days = dailyTokens(data.history, now, 28)
  const tabs = USAGE_PIVOTS.map((p) => (p === pivot ? `[${p}]` : ` ${p} `)).join('')
  const keyW = Math.max(10, w - 40 - (withCost ? 10 : 0))
  const listH = Math.max(1, height - 10)
  const [from, to] = windowOf(rows.length, selected, listH)
  const byKey = new Map(data.agents.filter((a) => a.keyPrefix).map((a) => [a.keyPrefix, a.name]))
  const label = (r: AppUsageRow) =>
    pivot === 'agent'
      ? agentLabel(r.key, names)
      : pivot === 'key' && r.key && byKey.has(r.key)
        ? `${r.key} (${byKey.get(r.key)})`
        : (r.key ?? '(none)')
  return (
    <Box flexDirection="column">
      <Text>{' ' + cell(`by ${tabs} · ${source}, 28 days`, w)}</Text>
      <Text bold>
        {' ' +
          cell(
            `${cell(pivot.toUpperCase(), keyW)} ${cell('REQUESTS', 9, true)} ${cell('INPUT', 9, true)} ${cell('OUTPUT', 9, true)} ${cell('CACHED', 9, true)}${withCost ? ` ${cell('COST', 9, true)}` : ''}`,
            w,
          )}
      </Text>
      {rows.length === 0 ? (
        <Text>
          {cell(
            source === 'history'
              ? ' No usage in the agents’ history yet.'
              : ' No usage yet: requests through the gateway are counted here.',
            w,
          )}
        </Text>
      ) : (
        rows.slice(from, to).map((r, i) => {
          return (
            <Row
              key={`${r.key}`}
              selected={from + i === selected}
              color={color}
              text={cell(
                `${cell(label(r), keyW)} ${cell(compact(r.requests), 9, true)} ${cell(compact(r.inputTokens), 9, true)} ${cell(compact(r.outputTokens), 9, true)} ${cell(compact(r.cacheReadTokens + r.cacheCreationTokens), 9, true)}${withCost ? ` ${cell(costText(r), 9, true)}` : ''}`,
                w,
              )}
            />
          )
        })
      )}
      <Box flexDirection="column" marginTop={1}>
        <Text>
          {' '}
          {cell('tokens/hour, 24h', 18)}
          <Text color={color ? 'cyan' : undefined}>{sparkline(hourly)}</Text>
          {` max ${compact(Math.max(...hourly))}`}
        </Text>
        <Text>{' ' + cell('tokens/day, 4 weeks (oldest week first, · none … █ most)', w)}</Text>
        {heatmap(days).map((line, i) => (
          <Text key={i}>
            {'   '}
            <Text color={color ? 'green' : undefined}>{line}</Text>
          </Text>
        ))}
      </Box>
    </Box>
  )
}
