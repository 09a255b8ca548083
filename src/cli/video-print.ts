/** Human output of video tasks, shared by the `gwctl video` commands. */
import type {VideoSubmission, VideoTask} from '../api/videos.js'
import type {StatusLine} from '../core/output.js'
import {colorErr, err, formatBytes, formatDuration, printFields, warn} from '../core/output.js'

/** Prints a submission or a queried task as aligned fields. */
export function printTask(task: VideoTask | VideoSubmission, extra: Record<string, unknown> = {}): void {
  const t = task as VideoTask
  printFields({
    id: t.id,
    status: t.status,
    model: t.model,
    provider: t.provider,
    created: t.created_at,
    completed: t.completed_at,
    seconds: t.seconds ?? t.usage?.seconds,
    size: t.size ?? t.usage?.size,
    // Billing can exceed the length (Alpha counts reference videos too, spec 1.6).
    'billed seconds':
      t.usage?.seconds !== undefined && t.usage.seconds !== t.seconds ? t.usage.seconds : undefined,
    video_url: t.video_url,
    error: t.status === 'failed' ? t.error || 'the platform gave no reason' : t.error,
    ...extra,
  })
}

/** Prints the request's warnings on stderr. */
export function printWarnings(warnings: readonly string[]): void {
  for (const w of warnings) warn(w)
}

/** A note on stderr (dim), e.g. the next command to run. */
export function note(text: string): void {
  err(colorErr().dim(text))
}

/** Live line while waiting: "task_ab… in_progress  1m 05s" (TTY stderr only). */
export function waitProgress(line: StatusLine): (task: VideoTask, elapsedMs: number) => void {
  return (task, elapsedMs) => line.update(`${task.id}  ${task.status}  ${formatDuration(elapsedMs)} elapsed`)
}

/** Live download line with a bar when the size is known (TTY stderr only). */
export function downloadProgress(line: StatusLine): (received: number, total?: number) => void {
  return (received, total) => {
    if (!total) return line.update(`downloading  ${formatBytes(received)}`)
    const width = 24
    const filled = Math.round((received / total) * width)
    const pct = Math.floor((received / total) * 100)
    line.update(
      `downloading  [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(pct).padStart(3)}%  ${formatBytes(received)} / ${formatBytes(total)}`,
    )
  }
}
