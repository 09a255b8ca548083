/** The Routes view: every route with its targets' circuits, and the selected route's targets (reordered here). */
import {Box, Text} from 'ink'

import {cell} from '../model.js'
import {columnsLine, fitColumns} from '../../columns.js'
import type {ProviderHealth, RouteRow} from '../model-routes.js'
import {breakerOf, circuitText, providerHealth, routeRows} from '../model-routes.js'
import type {ViewProps} from './shared.js'
import {Row, stateColor, windowOf} from './shared.js'

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
  const label = (r: RouteRow, t: string) => (r.translated?.includes(t) ? `${t} (translated)` : t)
  const columns = fitColumns<RouteRow>(
    [
      {header: 'ROUTE', value: (r) => `${r.policyId}/${r.family}`, min: 12, max: 40},
      {header: 'AGENTS', value: (r) => String(r.agents ?? ''), right: true},
      {
        header: 'TARGETS [CIRCUIT]',
        value: (r) => r.targets.map((t) => `${label(r, t)} [${state(t)}]`).join(' → ') || '(no target)',
        min: 12,
      },
    ],
    routes,
    w,
  )
  const targetW = Math.min(48, Math.max(6, ...targets.map((t) => label(current, t).length)))
  return (
    <Box flexDirection="column">
      <Text bold>{' ' + columnsLine(columns, undefined, w)}</Text>
      {routes.slice(from, to).map((r, i) => (
        <Row
          key={`${r.policyId}/${r.family}`}
          selected={from + i === selected}
          color={color}
          text={columnsLine(columns, r, w)}
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
              `${cell('#', 3)}${cell('TARGET', targetW)} ${cell('CIRCUIT', 10)} ${cell('ERR 5m', 8, true)} ${cell('P50 5m', 8, true)}`,
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
              {cell(label(current, t), targetW)} <Text color={stateColor(s, color)}>{cell(s, 10)}</Text>{' '}
              {cell(rate, 8, true)} {cell(h?.p50 == null ? '-' : `${Math.round(h.p50)}ms`, 8, true)}
            </Text>
          )
        })}
      </Box>
    </Box>
  )
}
