/**
 * The terminal rendering of `gwctl usage`'s cross-source reports: the pivot table's columns, the
 * ccusage-like period tables (`usage`, `usage daily|monthly|session`), the 5-hour windows of
 * `usage blocks` with weekly totals, their shared flags and the cost cells.
 */
import {Flags} from '@oclif/core'

import type {Column} from '../core/output.js'
import {color, renderTable} from '../core/output.js'
import {roundUsd} from '../core/usd.js'
import type {UsageReport, UsageReportRow} from '../services/usage.js'
import type {BlockRow, BlocksReport, WeekRow} from '../services/usage-blocks.js'
import type {UsagePivotAll} from '../store/usage-query.js'
import {USAGE_SOURCES} from '../store/usage-query.js'
import {formatCount} from './log-columns.js'

/** `$1.23`, `unpriced`, or `$1.23+` when some models of the row are unpriced. */
export function formatCost(row: Pick<UsageReportRow, 'costUSD' | 'unpricedModels'>): string {
  if (row.costUSD === null) return row.unpricedModels.length > 0 ? 'unpriced' : '-'
  const usd = roundUsd(row.costUSD)
  const text = `$${usd.toFixed(usd < 1 ? 4 : 2)}`
  return row.unpricedModels.length > 0 ? `${text}+` : text
}

/** 999, 1.2k, 34.5k, 1.23M, 4.56B: token counts in at most 6 cells. */
export function shortCount(n: number): string {
  const abs = Math.abs(n)
  if (abs < 1000) return String(Math.round(n))
  const [value, unit] = abs < 1e6 ? [n / 1e3, 'k'] : abs < 1e9 ? [n / 1e6, 'M'] : [n / 1e9, 'B']
  const digits = Math.abs(value) < 10 ? 2 : Math.abs(value) < 100 ? 1 : 0
  return `${value.toFixed(digits)}${unit}`
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

/** The flags of the period reports and `usage blocks`. */
export const reportFlags = {
  source: Flags.string({description: 'Which records to count.', options: [...USAGE_SOURCES], default: 'all'}),
  since: Flags.string({description: 'From: a day (2026-11-20 or 20261120), 30m, 7d, or Unix seconds.'}),
  until: Flags.string({description: 'Up to (a day counts whole): the same forms as --since.'}),
  timezone: Flags.string({description: 'IANA time zone of the days and weeks (default UTC).'}),
  breakdown: Flags.boolean({description: 'One line per model under each row.'}),
  compact: Flags.boolean({
    description: 'The narrow layout (under 100 columns); the default when the terminal is narrower than 100.',
  }),
}

/** Whether to draw the narrow layout: asked for, or a terminal under 100 columns. */
export function compactWanted(flag: boolean | undefined): boolean {
  if (flag) return true
  const columns = process.stdout.isTTY ? process.stdout.columns : undefined
  return columns !== undefined && columns < 100
}

type PeriodRow = Omit<UsageReportRow, 'key'> & {key: string | null; model?: string | null; sub?: boolean}

/** Rows of a period report with the `--breakdown` lines under each row, and the total. */
function withBreakdown(report: UsageReport): PeriodRow[] {
  const rows: PeriodRow[] = []
  for (const r of report.rows) {
    rows.push(r)
    for (const m of r.breakdown ?? []) rows.push({...m, key: r.key, sub: true})
  }
  rows.push({key: 'TOTAL', ...report.totals})
  return rows
}

/**
 * The table of `usage` (days), `usage monthly` and `usage session`: the full layout (models,
 * token counts in full) or the compact one (short counts, no models: under 100 columns).
 */
export function periodTable(
  report: UsageReport,
  options: {header: string; compact: boolean; label?: (key: string | null) => string},
): string {
  const count = options.compact ? shortCount : formatCount
  const key = (r: PeriodRow) =>
    r.sub
      ? `  ${r.model ?? '(unknown)'}`
      : r.key === 'TOTAL'
        ? 'TOTAL'
        : ((options.label ?? ((k) => k ?? '(none)'))(r.key) ?? '(none)')
  const columns: Column<PeriodRow>[] = [
    {header: options.header, value: key},
    {header: 'REQS', value: (r) => count(r.requests), align: 'right'},
    {header: 'INPUT', value: (r) => count(r.inputTokens), align: 'right'},
    {header: 'OUTPUT', value: (r) => count(r.outputTokens), align: 'right'},
    {
      header: options.compact ? 'C.WRITE' : 'CACHE WRITE',
      value: (r) => count(r.cacheCreationTokens),
      align: 'right',
    },
    {
      header: options.compact ? 'C.READ' : 'CACHE READ',
      value: (r) => count(r.cacheReadTokens),
      align: 'right',
    },
    {header: 'TOTAL', value: (r) => count(r.totalTokens), align: 'right'},
    {header: 'COST', value: (r) => formatCost(r), align: 'right'},
  ]
  return renderTable(withBreakdown(report), columns)
}

/** `2026-11-20 10:00` in `zone`. */
export function timeIn(iso: string, zone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: zone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
  }).formatToParts(new Date(iso))
  const n = (type: string) => parts.find((p) => p.type === type)?.value ?? ''
  return `${n('year')}-${n('month')}-${n('day')} ${n('hour')}:${n('minute')}`
}

/** 2h05m, 45m. */
export function formatMinutes(minutes: number): string {
  const m = Math.max(0, Math.round(minutes))
  return m >= 60 ? `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m` : `${m}m`
}

/** `$1.23/h`, or `unpriced`. */
export function formatRate(costPerHour: number | null): string {
  return costPerHour === null ? 'unpriced' : `$${roundUsd(costPerHour).toFixed(2)}/h`
}

type BlockLine = BlockRow & {sub?: string}

/** The windows' table (`usage blocks`). */
export function blocksTable(report: Pick<BlocksReport, 'blocks' | 'timezone'>, compact: boolean): string {
  const count = compact ? shortCount : formatCount
  const rows: BlockLine[] = []
  for (const b of report.blocks) {
    rows.push(b)
    for (const m of b.breakdown ?? [])
      rows.push({...b, ...m, models: [], sub: m.model ?? '(unknown)', gap: false, active: false})
  }
  const status = (b: BlockLine) =>
    b.sub ? '' : b.gap ? 'gap' : b.active ? `ACTIVE, ${formatMinutes(b.remainingMinutes ?? 0)} left` : ''
  const columns: Column<BlockLine>[] = [
    {header: 'WINDOW', value: (b) => (b.sub ? `  ${b.sub}` : timeIn(b.start, report.timezone))},
    {header: 'STATUS', value: (b) => (b.active ? color().green(status(b)) : color().dim(status(b)))},
    {header: 'REQS', value: (b) => (b.gap ? '' : count(b.requests)), align: 'right'},
    {header: 'TOKENS', value: (b) => (b.gap ? '' : count(b.totalTokens)), align: 'right'},
    {header: 'COST', value: (b) => (b.gap ? '' : formatCost(b)), align: 'right'},
    ...(compact
      ? []
      : [{header: 'MODELS', value: (b: BlockLine) => (b.sub || b.gap ? '' : b.models.join(', '))}]),
  ]
  return renderTable(rows, columns)
}

/** The active window's lines: cost, time left, burn rate and projection. */
export function activeLines(active: BlockRow | null, zone: string, compact: boolean): string[] {
  if (!active) return ['No active window (none has a request in the last 5 hours).']
  const count = compact ? shortCount : formatCount
  const lines = [
    `Active window ${timeIn(active.start, zone)} to ${timeIn(active.end, zone).slice(11)}: ` +
      `${count(active.totalTokens)} tokens, ${formatCost(active)}, ${formatMinutes(active.remainingMinutes ?? 0)} left`,
  ]
  if (active.burnRate)
    lines.push(
      `Burn rate: ${count(Math.round(active.burnRate.tokensPerMinute))} tokens/min, ${formatRate(active.burnRate.costPerHour)}`,
    )
  if (active.projection)
    lines.push(
      `Projected by its end: ${count(active.projection.totalTokens)} tokens, ` +
        (active.projection.costUSD === null
          ? 'unpriced'
          : `$${roundUsd(active.projection.costUSD).toFixed(2)}`),
    )
  return lines
}

/** The weekly totals (Monday to Sunday). */
export function weeksTable(weeks: readonly WeekRow[], compact: boolean): string {
  const count = compact ? shortCount : formatCount
  return renderTable(weeks, [
    {header: 'WEEK OF', value: (w) => w.week},
    {header: 'REQS', value: (w) => count(w.requests), align: 'right'},
    {header: 'TOKENS', value: (w) => count(w.totalTokens), align: 'right'},
    {header: 'COST', value: (w) => formatCost(w), align: 'right'},
  ])
}

/** The flag values the period reports and `usage blocks` read. */
export interface ReportFlagValues {
  source: string
  since?: string
  until?: string
  timezone?: string
  breakdown?: boolean
  compact?: boolean
  tool?: string
}

/** `--since` and `--until` as Unix seconds (a day in `--timezone`); `defaultSince` when none. */
export async function reportBounds(
  flags: ReportFlagValues,
  defaultSince?: string,
): Promise<{since?: number; until?: number}> {
  const {parseBound} = await import('../services/usage-dates.js')
  const since = flags.since ?? defaultSince
  return {
    ...(since === undefined ? {} : {since: parseBound(since, {flag: '--since', timezone: flags.timezone})}),
    ...(flags.until === undefined
      ? {}
      : {until: parseBound(flags.until, {flag: '--until', timezone: flags.timezone})}),
  }
}

/** Prints a period report (nothing for `--json`). */
export function printPeriodReport(
  report: UsageReport,
  options: {header: string; compact?: boolean; json: boolean; empty?: string},
  write: (text: string) => void,
): void {
  if (options.json) return
  if (report.rows.length === 0) write(options.empty ?? 'No usage in this period.')
  else write(periodTable(report, {header: options.header, compact: compactWanted(options.compact)}))
}
