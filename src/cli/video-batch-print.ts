/** Human output of `gwctl video batch`: one plain line per task as it ends, a live totals line on a terminal. */
import {color, err, formatBytes, formatDuration, out, printable} from '../core/output.js'
import type {BatchSummary, BatchTaskResult, BatchTaskView} from '../services/video-batch.js'

/** "line 3  fox-1  completed  task_ab12  out/fox-1.mp4 (1.2 MB)" on stdout. */
export function printBatchResult(result: BatchTaskResult): void {
  const c = color()
  const status = result.status === 'completed' ? c.green(result.status) : c.red(result.status)
  const parts = [`line ${result.line}`, printable(result.id), status, result.task_id ?? '-']
  if (result.output) parts.push(`${result.output} (${formatBytes(result.bytes ?? 0)})`)
  if (result.earlier) parts.push(c.dim('(done earlier)'))
  if (result.error) parts.push(c.dim(printable(result.error)))
  out(parts.join('  '))
}

/** The totals of a run so far: "12/50 done  8 running  1 failed  3.2 tasks/min  1m 05s". */
export function batchTotals(all: readonly BatchTaskView[], startedAt: number): string {
  const count = (states: string[]) => all.filter((v) => states.includes(v.state)).length
  const finished = count(['completed', 'failed', 'refused', 'uncertain'])
  const running = count(['sending', 'queued', 'in_progress', 'downloading'])
  const failed = count(['failed', 'refused', 'uncertain'])
  const elapsed = Date.now() - startedAt
  const fresh = all.filter((v) => !v.resumed && v.ended_at !== undefined).length
  const rate = elapsed > 0 ? (fresh / elapsed) * 60_000 : 0
  return `${finished}/${all.length} done  ${running} running  ${failed} failed  ${rate.toFixed(1)} tasks/min  ${formatDuration(elapsed)}`
}

/** The closing lines on stderr. */
export function printBatchSummary(summary: BatchSummary): void {
  const c = color()
  const text = `${summary.completed} of ${summary.total} completed, ${summary.failed} failed${summary.unfinished ? `, ${summary.unfinished} not finished` : ''}; ${summary.submitted} created by this run in ${summary.elapsed_seconds} s.`
  err(summary.failed ? c.red(text) : text)
  for (const f of summary.failures)
    err(
      c.dim(`  line ${f.line} (${printable(f.id)}): ${f.status}${f.error ? `: ${printable(f.error)}` : ''}`),
    )
}
