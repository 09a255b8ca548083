/** The terminal rendering of `gwctl usage`'s cross-source report: its columns and cost cells. */
import type {Column} from '../core/output.js'
import type {UsageReportRow} from '../services/usage.js'
import type {UsagePivotAll} from '../store/usage-query.js'
import {formatCount} from './log-columns.js'

/** `$1.23`, `unpriced`, or `$1.23+` when some models of the row are unpriced. */
export function formatCost(row: Pick<UsageReportRow, 'costUSD' | 'unpricedModels'>): string {
  if (row.costUSD === null) return row.unpricedModels.length > 0 ? 'unpriced' : '-'
  const text = `$${row.costUSD.toFixed(row.costUSD < 1 ? 4 : 2)}`
  return row.unpricedModels.length > 0 ? `${text}+` : text
}

/** The columns of the cross-source usage table. */
export function reportColumns(
  pivot: UsagePivotAll | null,
  label: (key: string | null) => string | null = (key) => key,
): Column<UsageReportRow>[] {
  return [
    {
      header: (pivot ?? 'scope').toUpperCase(),
      value: (r) => (r.key === 'TOTAL' ? 'TOTAL' : label(r.key)) ?? '(none)',
    },
    {header: 'REQUESTS', value: (r) => formatCount(r.requests), align: 'right'},
    {header: 'ERRORS', value: (r) => formatCount(r.errors), align: 'right'},
    {header: 'INPUT', value: (r) => formatCount(r.inputTokens), align: 'right'},
    {header: 'OUTPUT', value: (r) => formatCount(r.outputTokens), align: 'right'},
    {header: 'CACHE READ', value: (r) => formatCount(r.cacheReadTokens), align: 'right'},
    {header: 'CACHE WRITE', value: (r) => formatCount(r.cacheCreationTokens), align: 'right'},
    {header: 'REASONING', value: (r) => formatCount(r.reasoningTokens), align: 'right'},
    {header: 'TOTAL', value: (r) => formatCount(r.totalTokens), align: 'right'},
    {header: 'COST', value: (r) => formatCost(r), align: 'right'},
  ]
}
