/**
 * The live view of `gwctl video batch` on a terminal: totals and throughput, one row per task in
 * flight (state, elapsed, task id), the tasks that failed with their reason, and the last ones
 * that ended. A pure component of its props, so tests render it to a string; {@link startBatchView}
 * draws it on stderr while a batch runs.
 */
import {Box, Text, render} from 'ink'

import {formatDuration} from '../../core/output.js'
import {batchTotals} from '../../cli/video-batch-print.js'
import type {BatchTaskView} from '../../services/video-batch.js'
import {fit} from '../columns.js'

const STATE_COLORS: Record<string, string> = {
  completed: 'green',
  failed: 'red',
  refused: 'red',
  uncertain: 'yellow',
  in_progress: 'cyan',
  downloading: 'blue',
}

export interface BatchViewProps {
  tasks: readonly BatchTaskView[]
  startedAt: number
  now: number
  columns?: number
  rows?: number
}

function row(task: BatchTaskView, now: number, width: number): string {
  const elapsed = task.started_at ? formatDuration((task.ended_at ?? now) - task.started_at) : ''
  const tail = task.error ?? task.output ?? task.task_id ?? ''
  return fit(
    `${`line ${task.line}`.padEnd(9)} ${task.name.slice(0, 20).padEnd(20)} ${task.state.padEnd(11)} ${elapsed.padStart(7)}  ${tail}`,
    width,
  )
}

export function BatchView({tasks, startedAt, now, columns = 80, rows = 24}: BatchViewProps) {
  const width = Math.max(20, columns - 1)
  const running = tasks.filter((t) => ['sending', 'queued', 'in_progress', 'downloading'].includes(t.state))
  const failed = tasks.filter((t) => ['failed', 'refused', 'uncertain'].includes(t.state))
  const ended = tasks
    .filter((t) => t.state === 'completed' && t.ended_at !== undefined)
    .sort((a, b) => (b.ended_at ?? 0) - (a.ended_at ?? 0))
  // the frame stays shorter than the terminal: totals, then running, failed, recent
  let room = Math.max(3, rows - 3)
  const take = <T,>(list: readonly T[]): T[] => {
    const shown = list.slice(0, Math.max(0, room))
    room -= shown.length
    return shown
  }
  const shownRunning = take(running)
  const shownFailed = take(failed)
  const shownEnded = take(ended)
  return (
    <Box flexDirection="column">
      <Text bold>{fit(batchTotals(tasks, startedAt), width)}</Text>
      {shownRunning.map((t) => (
        <Text key={t.line} color={STATE_COLORS[t.state]}>
          {row(t, now, width)}
        </Text>
      ))}
      {shownFailed.map((t) => (
        <Text key={t.line} color={STATE_COLORS[t.state]}>
          {row(t, now, width)}
        </Text>
      ))}
      {shownEnded.map((t) => (
        <Text key={t.line} dimColor>
          {row(t, now, width)}
        </Text>
      ))}
    </Box>
  )
}

/** Draws the view on stderr until `stop()`, which clears it (the caller then prints plain lines). */
export function startBatchView(startedAt: number): {
  update: (tasks: readonly BatchTaskView[]) => void
  stop: () => void
} {
  let tasks: readonly BatchTaskView[] = []
  const frame = () => (
    <BatchView
      tasks={tasks}
      startedAt={startedAt}
      now={Date.now()}
      columns={process.stderr.columns}
      rows={process.stderr.rows}
    />
  )
  const ink = render(frame(), {
    stdout: process.stderr as unknown as NodeJS.WriteStream,
    patchConsole: false,
    exitOnCtrlC: false,
  })
  let pending = false
  let stopped = false
  const draw = () => {
    pending = false
    if (!stopped) ink.rerender(frame())
  }
  const timer = setInterval(draw, 1000)
  return {
    update: (next) => {
      tasks = next
      if (!pending) {
        pending = true
        setTimeout(draw, 100)
      }
    },
    stop: () => {
      if (stopped) return
      stopped = true
      clearInterval(timer)
      ink.clear()
      ink.unmount()
    },
  }
}
