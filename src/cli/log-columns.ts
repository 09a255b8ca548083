/**
 * The terminal rendering of the gateway's log and usage rows: the columns of `gwctl logs` and
 * `gwctl usage --source gateway`, the fixed-width lines of `logs --follow`, and the formatters the
 * dashboard shares (times, counts, agent cells).
 */
import type {Column} from '../core/output.js'
import type {LogRow, Pivot, UsageRow} from '../store/log-query.js'

/** `laptop`; with `verbose`, `laptop (agt_…)`; the id when the name is unknown. */
export function agentCell(r: Pick<LogRow, 'agentId'> & {agentName?: string | null}, verbose = false): string {
  if (!r.agentId) return '-'
  if (!r.agentName) return r.agentId
  return verbose ? `${r.agentName} (${r.agentId})` : r.agentName
}

/** `2026-11-22 03:57:11` in local time. */
export function formatTime(ms: number): string {
  const d = new Date(ms)
  const p = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`
}

function ms(value: number | null): string {
  return value === null ? '-' : `${Math.round(value)}ms`
}

function truncate(text: string, max: number): string {
  return text.length > max ? text.slice(0, max - 1) + '…' : text
}

/**
 * `1,234,567`. By hand for integers: the first `toLocaleString` of a process sets up ICU's number
 * format, 20-25 ms of a `gwctl usage`.
 */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n) || Object.is(n, -0)) return n.toLocaleString('en-US')
  const digits = String(Math.abs(n))
  let out = digits.slice(0, digits.length % 3 || 3)
  for (let i = out.length; i < digits.length; i += 3) out += ',' + digits.slice(i, i + 3)
  return n < 0 ? '-' + out : out
}

/** The columns of the log table (oldest row at the top). */
export const LOG_COLUMNS: Column<LogRow & {agentName?: string | null}>[] = [
  {header: 'TIME', value: (r) => formatTime(r.time)},
  {header: 'AGENT', value: (r) => agentCell(r)},
  {header: 'ENTRANCE', value: (r) => r.entrance},
  {
    header: 'PROVIDER/MODEL',
    value: (r) => (r.provider ? `${r.provider}/${r.model ?? r.requestedModel ?? '?'}` : '-'),
  },
  {header: 'STATUS', value: (r) => r.status, align: 'right'},
  {header: 'FALLBACK', value: (r) => (r.fallback ? 'yes' : '-')},
  {header: 'IN', value: (r) => r.inputTokens, align: 'right'},
  {header: 'OUT', value: (r) => r.outputTokens, align: 'right'},
  {header: 'CACHED', value: (r) => r.cacheReadTokens + r.cacheCreationTokens, align: 'right'},
  {header: 'LATENCY', value: (r) => ms(r.latencyMs), align: 'right'},
  {header: 'TTFB', value: (r) => ms(r.ttfbMs), align: 'right'},
  {header: 'ERROR', value: (r) => (r.error ? truncate(r.error.replace(/\s+/g, ' '), 60) : '')},
]

/** Fixed widths of the columns when following (rows arrive one batch at a time). */
const FOLLOW_WIDTHS = [19, 20, 9, 32, 6, 8, 7, 7, 7, 9, 8, 0]

/** One line per row with fixed column widths, for `--follow`; the header when `header`. */
export function followLines(
  rows: readonly (LogRow & {agentName?: string | null})[],
  header = false,
): string[] {
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => {
        const width = FOLLOW_WIDTHS[i]
        if (width === 0) return cell
        const text = truncate(cell, width)
        return LOG_COLUMNS[i].align === 'right' ? text.padStart(width) : text.padEnd(width)
      })
      .join('  ')
      .trimEnd()
  const lines = rows.map((r) => line(LOG_COLUMNS.map((c) => String(c.value(r) ?? ''))))
  return header ? [line(LOG_COLUMNS.map((c) => c.header)), ...lines] : lines
}

/** The columns of the usage table; the first is the pivot value. */
export function usageColumns(
  pivot: Pivot | null,
  label: (key: string | null) => string | null = (key) => key,
): Column<UsageRow & {key: string | null}>[] {
  return [
    {
      header: (pivot ?? 'scope').toUpperCase(),
      value: (r) => (r.key === 'TOTAL' ? 'TOTAL' : label(r.key)) ?? '(none)',
    },
    {header: 'REQUESTS', value: (r) => formatCount(r.requests), align: 'right'},
    {header: 'ERRORS', value: (r) => formatCount(r.errors), align: 'right'},
    {header: 'FALLBACKS', value: (r) => formatCount(r.fallbacks), align: 'right'},
    {header: 'INPUT', value: (r) => formatCount(r.inputTokens), align: 'right'},
    {header: 'OUTPUT', value: (r) => formatCount(r.outputTokens), align: 'right'},
    {header: 'CACHE READ', value: (r) => formatCount(r.cacheReadTokens), align: 'right'},
    {header: 'CACHE WRITE', value: (r) => formatCount(r.cacheCreationTokens), align: 'right'},
    {header: 'REASONING', value: (r) => formatCount(r.reasoningTokens), align: 'right'},
  ]
}
