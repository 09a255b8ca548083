/** The Requests view: the latest requests (filtered), and one request's details as Enter opens it. */
import {Box, Text} from 'ink'

import type {LogRow} from '../../../store/log-query.js'
import {agentLabel, agentNames, cell, clock, compact} from '../model.js'
import type {Column} from '../../columns.js'
import {addIfRoom, columnsLine, fitColumns} from '../../columns.js'
import type {ViewProps} from './shared.js'
import {Row, windowOf} from './shared.js'

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
  const columns = requestColumns(rows, names, w)
  const [from, to] = windowOf(rows.length, selected, Math.max(1, height - 1))
  return (
    <Box flexDirection="column">
      <Text bold>{' ' + columnsLine(columns, undefined, w)}</Text>
      {rows.slice(from, to).map((r, i) => {
        const bad = r.status >= 400 || r.broken === true
        return (
          <Text key={`${r.id}-${r.time}`} color={bad && color ? 'red' : undefined}>
            <Row text={columnsLine(columns, r, w)} selected={from + i === selected} color={color} />
          </Text>
        )
      })}
    </Box>
  )
}

/** Why a request failed or was refused, as its log row says; empty for a success. */
export function errorOf(r: LogRow): string {
  return r.error ?? (r.broken ? 'the answer broke off' : '')
}

/**
 * The requests' columns sized to their content. A request that reached no provider (a refused
 * key, an unknown model) says why in its PROVIDER/MODEL cell; the errors of the others get an
 * ERROR column when some row has one and the other columns leave room for it.
 */
function requestColumns(rows: readonly LogRow[], names: Map<string, string>, width: number) {
  const providerError = (r: LogRow) => (r.provider ? errorOf(r) : '')
  const columns: Column<LogRow>[] = [
    {header: 'TIME', value: (r) => clock(r.time)},
    {header: 'AGENT', value: (r) => agentLabel(r.agentId, names), min: 6, max: 20},
    {
      header: 'PROVIDER/MODEL',
      value: (r) =>
        r.provider
          ? `${r.provider}/${r.model ?? r.requestedModel ?? '?'}`
          : errorOf(r) || (r.requestedModel ?? '-'),
      min: 10,
      max: 48,
    },
    {header: 'STATUS', value: statusText, right: true},
    {header: 'TOKENS', value: (r) => `${compact(r.inputTokens)}/${compact(r.outputTokens)}`, right: true},
    {header: 'LATENCY', value: (r) => `${Math.round(r.latencyMs)}ms`, right: true},
  ]
  const fitted = fitColumns(columns, rows, width)
  if (!rows.some((r) => providerError(r) !== '')) return fitted
  return addIfRoom(fitted, {header: 'ERROR', value: providerError, min: 12}, rows, width)
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
    ['Error', errorOf(row) || '-'],
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
