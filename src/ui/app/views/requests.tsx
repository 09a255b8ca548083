/** The Requests view: the latest requests (filtered), and one request's details as Enter opens it. */
import {Box, Text} from 'ink'

import type {LogRow} from '../../../store/log-query.js'
import {agentLabel, agentNames, cell, clock, compact} from '../model.js'
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
