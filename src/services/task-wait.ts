/**
 * The one way gwctl waits for a remote task (video and gamma alike): poll every interval until
 * the task ends, give up after `--timeout` seconds (0 = never), and whatever stops the wait
 * (Ctrl-C, the timeout, a network error, the platform going away) ends with the task id and
 * the command that resumes waiting, because the task keeps running on the platform.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import {
  ExitCode,
  GwError,
  InterruptedError,
  NotFoundError,
  TaskFailedError,
  isAbortError,
} from '../core/errors.js'

/** How to watch one task. */
export interface TaskWatch<T> {
  id: string
  /** The command that resumes waiting, e.g. `gwctl video poll task_1`. */
  resume: string
  /** Queries the task once. */
  query: (signal?: AbortSignal) => Promise<T>
  /** Its status, for messages. */
  status: (task: T) => string
  /** True when it ended well; throws the task's own error when it ended badly; false while running. */
  settled: (task: T) => boolean
}

export interface TaskWaitOptions<T> {
  intervalMs: number
  /** Seconds before giving up; 0 or undefined waits without limit. */
  timeoutSeconds?: number
  signal?: AbortSignal
  /** After each query. */
  onUpdate?: (task: T, elapsedMs: number) => void
  /** About once a second between queries (to move an elapsed-time display). */
  onTick?: (task: T, elapsedMs: number) => void
}

/** Polls until the task settles; see the module comment for how every other end reads. */
export async function waitForTask<T>(watch: TaskWatch<T>, options: TaskWaitOptions<T>): Promise<T> {
  const start = Date.now()
  const limitMs = options.timeoutSeconds ? options.timeoutSeconds * 1000 : Infinity
  for (;;) {
    let task: T
    try {
      task = await watch.query(options.signal)
    } catch (error) {
      throw resumable(error, watch, options.signal)
    }
    const elapsed = Date.now() - start
    options.onUpdate?.(task, elapsed)
    if (watch.settled(task)) return task
    if (elapsed >= limitMs) {
      throw new GwError(
        'wait_timeout',
        `Task ${watch.id} is still ${watch.status(task)} after ${formatSeconds(elapsed)} (--timeout ${options.timeoutSeconds}).`,
        ExitCode.upstream,
        {
          hint: `It keeps running on the platform: \`${watch.resume}\` waits again.`,
          details: {task_id: watch.id, status: watch.status(task)},
        },
      )
    }
    // the last query falls on the deadline, so a task that ends just in time is not missed
    const until = Math.min(Date.now() + options.intervalMs, start + limitMs)
    while (Date.now() < until) {
      try {
        await sleep(Math.min(1000, until - Date.now()), undefined, {signal: options.signal})
      } catch (error) {
        throw resumable(error, watch, options.signal)
      }
      options.onTick?.(task, Date.now() - start)
    }
  }
}

function formatSeconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`
}

/**
 * The error that ends a wait, with the task id and the resume command. A task that failed or is
 * gone is a final fact and passes through unchanged.
 */
function resumable(error: unknown, watch: {id: string; resume: string}, signal?: AbortSignal): GwError {
  if (error instanceof TaskFailedError || error instanceof NotFoundError) return error
  const details = {task_id: watch.id}
  if (signal?.aborted || isAbortError(error) || error instanceof InterruptedError) {
    return new InterruptedError(`Stopped waiting for task ${watch.id}; it keeps running.`, {
      hint: `Resume with \`${watch.resume}\`.`,
      details,
    })
  }
  const e =
    error instanceof GwError
      ? error
      : new GwError('unexpected', (error as Error)?.message ?? String(error), ExitCode.unexpected)
  const hint = `Task ${watch.id} was created and keeps running: \`${watch.resume}\` resumes waiting.`
  return new GwError(e.code, `${e.message} (while waiting for task ${watch.id})`, e.exitCode, {
    hint: e.hint ? `${e.hint}\n${hint}` : hint,
    details: {...e.details, ...details},
    cause: error,
  })
}
