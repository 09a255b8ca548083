/** The Usage view: usage rows by a grouping (with costs when known), tokens per hour and a heatmap of days. */
import {Box, Text} from 'ink'

import type {UsageSource} from '../../../store/usage-query.js'
import type {UsagePivot} from '../data.js'
import {USAGE_PIVOTS} from '../data.js'
import type {AppUsageRow} from '../model.js'
import {agentLabel, agentNames, cell, compact} from '../model.js'
import {costOf, costText, dailyTokens, heatmap, hourlyTokens, sparkline} from '../model-usage.js'
import {budgetScopeText, resetText} from '../../../cli/budgets.js'
import {formatBudgetAmount} from '../../../gateway/budgets.js'
import {columnsLine, fitColumns} from '../../columns.js'
import type {ViewProps} from './shared.js'
import {Row, windowOf} from './shared.js'

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
  const budgets = (data.budgets ?? []).slice(0, 3)
  const listH = Math.max(1, height - 10 - budgets.length)
  const [from, to] = windowOf(rows.length, selected, listH)
  const byKey = new Map(data.agents.filter((a) => a.keyPrefix).map((a) => [a.keyPrefix, a.name]))
  const label = (r: AppUsageRow) =>
    pivot === 'agent'
      ? agentLabel(r.key, names)
      : pivot === 'key' && r.key && byKey.has(r.key)
        ? `${r.key} (${byKey.get(r.key)})`
        : (r.key ?? '(none)')
  const columns = fitColumns<AppUsageRow>(
    [
      {header: pivot.toUpperCase(), value: label, min: 10, max: 48},
      {header: 'REQUESTS', value: (r) => compact(r.requests), right: true},
      {header: 'INPUT', value: (r) => compact(r.inputTokens), right: true},
      {header: 'OUTPUT', value: (r) => compact(r.outputTokens), right: true},
      {header: 'CACHED', value: (r) => compact(r.cacheReadTokens + r.cacheCreationTokens), right: true},
      ...(withCost ? [{header: 'COST', value: costText, right: true, min: 8}] : []),
    ],
    rows,
    w,
  )
  return (
    <Box flexDirection="column">
      <Text>{' ' + cell(`by ${tabs} · ${source}, 28 days`, w)}</Text>
      <Text bold>{' ' + columnsLine(columns, undefined, w)}</Text>
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
              text={columnsLine(columns, r, w)}
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
        {budgets.map((b) => (
          <Text
            key={b.id}
            color={color && b.state !== 'ok' ? (b.state === 'exceeded' ? 'red' : 'yellow') : undefined}
          >
            {' ' +
              cell(
                `budget ${budgetScopeText(b)} ${b.period}: ${formatBudgetAmount(b.unit, b.spent)} / ${formatBudgetAmount(b.unit, b.limit)} (${b.percent}%), resets ${resetText(b, now)}`,
                w,
              )}
          </Text>
        ))}
      </Box>
    </Box>
  )
}
