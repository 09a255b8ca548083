/**
 * Video task use cases: create (validate, send once, journal), get, wait, download.
 * No flags and no printing: progress and warnings go to the callbacks the caller passes.
 */
import {existsSync, statSync} from 'node:fs'
import {dirname, resolve} from 'node:path'

import type {PlatformClient} from '../api/http.js'
import {platformClient} from '../api/http.js'
import type {VideoSubmission, VideoTask} from '../api/videos.js'
import {isExpiredStatus, videos} from '../api/videos.js'
import {NotFoundError, TaskFailedError, UsageError} from '../core/errors.js'
import {getSetting} from '../store/settings.js'
import type {JournalTask} from '../store/video-journal.js'
import {appendJournal, findVideoTask, listVideoTasks} from '../store/video-journal.js'
import type {VideoRequest, VideoRequestOptions} from './video-request.js'
import {buildVideoRequest} from './video-request.js'
import {waitForTask} from './task-wait.js'

/** The polling interval the spec suggests (section 3). */
export const DEFAULT_INTERVAL_SECONDS = 15

export interface WaitOptions {
  /** Seconds between queries (default: setting `video.interval`, else 15). */
  intervalSeconds?: number
  /** Give up waiting after this many seconds (the task keeps running); 0 or none = never. */
  timeoutSeconds?: number
  signal?: AbortSignal
  /** Called after each query and about once a second while waiting. */
  onProgress?: (task: VideoTask, elapsedMs: number) => void
}

export interface DownloadOptions {
  force?: boolean
  signal?: AbortSignal
  onProgress?: (received: number, total?: number) => void
}

interface ClientOption {
  /** Tests may pass their own; by default the configured platform. */
  client?: PlatformClient
}

export interface CreateVideoTaskOptions extends WaitOptions, ClientOption {
  wait?: boolean
  /** Download the finished video here (implies wait). */
  output?: string
  force?: boolean
  /** Called with the request's warnings before it is sent. */
  onWarnings?: (warnings: string[]) => void
  onDownloadProgress?: DownloadOptions['onProgress']
}

export interface CreateVideoTaskResult {
  submission: VideoSubmission
  /** The final task when waited for. */
  task?: VideoTask
  warnings: string[]
  download?: {path: string; bytes: number}
  request: VideoRequest
}

/** The interval to poll with: the option, else the `video.interval` setting, else 15 s. */
export function resolveInterval(intervalSeconds?: number): number {
  if (intervalSeconds !== undefined) return intervalSeconds
  const setting = getSetting('video.interval')
  return setting ? Number(setting) : DEFAULT_INTERVAL_SECONDS
}

/**
 * Refuses an output path that exists (unless `force`) or whose folder is missing, before any
 * request is sent, so no task is paid for only to fail at the end.
 */
export function checkOutputPath(output: string, force = false): string {
  const path = resolve(output)
  if (existsSync(path)) {
    if (statSync(path).isDirectory()) {
      throw new UsageError(`--output ${output} is a folder; give a file name.`, {
        code: 'output_is_folder',
        hint: `Example: --output ${output.replace(/\/+$/, '')}/clip.mp4`,
      })
    }
    if (!force) {
      throw new UsageError(`${output} exists; gwctl does not overwrite files unless told to.`, {
        code: 'file_exists',
        hint: 'Add --force to overwrite it, or pick another --output.',
      })
    }
  }
  if (!existsSync(dirname(path))) {
    throw new UsageError(`The folder of --output ${output} does not exist.`, {
      code: 'output_folder_missing',
      hint: `Create it first: mkdir -p ${dirname(path)}`,
    })
  }
  return path
}

/** Validates, sends the create call once, journals the task, and optionally waits and downloads. */
export async function createVideoTask(
  request: VideoRequestOptions,
  options: CreateVideoTaskOptions = {},
): Promise<CreateVideoTaskResult> {
  const built = buildVideoRequest(request)
  const output = options.output === undefined ? undefined : checkOutputPath(options.output, options.force)
  const client = options.client ?? platformClient()
  if (built.warnings.length > 0) options.onWarnings?.(built.warnings)
  const submission = await videos(client).create(built.body, {signal: options.signal})
  const prompt = built.native
    ? typeof (built.body.input as {prompt?: unknown})?.prompt === 'string'
      ? ((built.body.input as {prompt: string}).prompt as string)
      : undefined
    : typeof built.body.prompt === 'string'
      ? built.body.prompt
      : undefined
  appendJournal({
    type: 'created',
    id: submission.id,
    model: submission.model ?? built.body.model,
    provider: submission.provider,
    prompt,
    created_at: new Date().toISOString(),
    status: submission.status ?? 'queued',
  })
  const result: CreateVideoTaskResult = {submission, warnings: built.warnings, request: built}
  if (!options.wait && output === undefined) return result
  result.task = await waitForVideoTask(submission.id, {...options, client, provider: submission.provider})
  if (output !== undefined) {
    result.download = await downloadTaskVideo(result.task, output, {
      client,
      force: options.force,
      signal: options.signal,
      onProgress: options.onDownloadProgress,
    })
  }
  return result
}

/**
 * Records a status the journal has not seen yet (tasks created elsewhere are not journaled);
 * with `seen`, also an unchanged one, so `video list` can say when it was last seen.
 */
function journalStatus(task: VideoTask, known: JournalTask | undefined, seen = false): void {
  if (!known || (known.status === task.status && !seen)) return
  appendJournal({
    type: 'status',
    id: task.id ?? known.id,
    status: task.status,
    at: new Date().toISOString(),
    ...(task.video_url ? {video_url: task.video_url} : {}),
    ...(task.error ? {error: task.error} : {}),
  })
}

/**
 * Queries a task once, sending the journal's `provider` hint unless one is given, and records a
 * new status in the journal.
 */
export async function getVideoTask(
  id: string,
  options: {provider?: string; signal?: AbortSignal; recordSeen?: boolean} & ClientOption = {},
): Promise<VideoTask> {
  const known = findVideoTask(id)
  const client = options.client ?? platformClient()
  const task = await videos(client)
    .get(id, options.provider ?? known?.provider, {signal: options.signal})
    .catch((error: unknown) => {
      // a missing endpoint (base URL without /api/v1) keeps its own hint
      if (error instanceof NotFoundError && error.code !== 'no_such_endpoint') {
        throw new NotFoundError(`${error.message} (task ${id})`, {
          code: 'task_not_found',
          hint: `Check the id (\`gwctl video list\` shows the tasks created here); ids are kept for 24 hours.`,
          details: error.details,
          cause: error,
        })
      }
      throw error
    })
  journalStatus({...task, id: task.id ?? id}, known, options.recordSeen)
  return task
}

/** The error for an id past its 24 h (`UNKNOWN`). Exit 7. */
export function expiredTaskError(id: string): NotFoundError {
  return new NotFoundError(`Task ${id} is no longer known to the platform (status UNKNOWN).`, {
    code: 'task_expired',
    hint: 'Task ids (and video URLs) are valid for 24 hours after creation; after that the result cannot be fetched.',
    details: {id, status: 'UNKNOWN'},
  })
}

/** The error for a task that ended in `failed`. Exit 8. */
export function failedTaskError(task: VideoTask): TaskFailedError {
  return new TaskFailedError(`Task ${task.id} failed: ${task.error || 'the platform gave no reason'}.`, {
    hint: 'Change the request and create a new task (`gwctl video create`).',
    details: {id: task.id, status: task.status},
  })
}

/** Throws the matching error for a failed or expired task; returns otherwise. */
export function assertTaskNotEnded(task: VideoTask, id = task.id): void {
  if (task.status === 'failed') throw failedTaskError(task)
  if (isExpiredStatus(String(task.status))) throw expiredTaskError(id)
}

/** Polls until the task completes; failed -> exit 8, UNKNOWN -> exit 7, timeout -> exit 5. */
export async function waitForVideoTask(
  id: string,
  options: WaitOptions & ClientOption & {provider?: string} = {},
): Promise<VideoTask> {
  const client = options.client ?? platformClient()
  return waitForTask<VideoTask>(
    {
      id,
      resume: `gwctl video poll ${id}`,
      query: (signal) => getVideoTask(id, {provider: options.provider, signal, client}),
      status: (task) => String(task.status),
      settled: (task) => {
        if (task.status === 'completed') return true
        assertTaskNotEnded(task, id)
        return false
      },
    },
    {
      intervalMs: resolveInterval(options.intervalSeconds) * 1000,
      timeoutSeconds: options.timeoutSeconds,
      signal: options.signal,
      onUpdate: options.onProgress,
      onTick: options.onProgress,
    },
  )
}

/** Downloads the video of a completed task; refuses other states with the matching error. */
export async function downloadTaskVideo(
  task: VideoTask,
  output: string,
  options: DownloadOptions & ClientOption = {},
): Promise<{path: string; bytes: number}> {
  assertTaskNotEnded(task)
  if (task.status !== 'completed' || !task.video_url) {
    throw new NotFoundError(`Task ${task.id} has no video yet (status ${task.status}).`, {
      code: 'video_not_ready',
      hint: `Wait for it: \`gwctl video poll ${task.id} --output ${output}\`.`,
      details: {id: task.id, status: task.status},
    })
  }
  const path = checkOutputPath(output, options.force)
  const client = options.client ?? platformClient()
  const {bytes} = await client.download(task.video_url, path, {
    signal: options.signal,
    onProgress: options.onProgress,
  })
  return {path, bytes}
}

/** Queries a task and downloads its video. */
export async function downloadVideo(
  id: string,
  output: string,
  options: DownloadOptions & ClientOption & {provider?: string} = {},
): Promise<{task: VideoTask; path: string; bytes: number}> {
  checkOutputPath(output, options.force)
  const client = options.client ?? platformClient()
  const task = await getVideoTask(id, {provider: options.provider, signal: options.signal, client})
  const result = await downloadTaskVideo({...task, id: task.id ?? id}, output, {...options, client})
  return {task, ...result}
}

/** Polls a task (as `waitForVideoTask`) and downloads it when `output` is given. */
export async function pollVideoTask(
  id: string,
  options: WaitOptions & {
    provider?: string
    output?: string
    force?: boolean
    onDownloadProgress?: DownloadOptions['onProgress']
  } & ClientOption = {},
): Promise<{task: VideoTask; download?: {path: string; bytes: number}}> {
  if (options.output !== undefined) checkOutputPath(options.output, options.force)
  const client = options.client ?? platformClient()
  const task = await waitForVideoTask(id, {...options, client})
  if (options.output === undefined) return {task}
  const download = await downloadTaskVideo(task, options.output, {
    client,
    force: options.force,
    signal: options.signal,
    onProgress: options.onDownloadProgress,
  })
  return {task, download}
}

/** The journal's tasks, newest first. */
export function listJournaledVideoTasks(): JournalTask[] {
  return listVideoTasks()
}

/** Statuses after which a task never changes: `video list --refresh` does not ask again. */
const FINISHED = new Set(['completed', 'failed', 'UNKNOWN', 'unknown', 'expired'])

/**
 * `video list --refresh`: queries the platform once for every listed task that had not finished
 * when last seen, records what it answers, and returns the journal as it is then. A task the
 * platform no longer knows is reported through `onWarning`, not thrown.
 */
export async function refreshVideoTasks(
  tasks: readonly JournalTask[],
  options: {signal?: AbortSignal; onWarning?: (warning: string) => void} & ClientOption = {},
): Promise<{tasks: JournalTask[]; refreshed: number}> {
  const open = tasks.filter((t) => !FINISHED.has(t.status))
  if (open.length === 0) return {tasks: [...tasks], refreshed: 0}
  const client = options.client ?? platformClient()
  for (const task of open) {
    try {
      await getVideoTask(task.id, {signal: options.signal, client, recordSeen: true})
    } catch (error) {
      if (!(error instanceof NotFoundError)) throw error
      options.onWarning?.(`${task.id}: ${error.message}`)
    }
  }
  const fresh = new Map(listVideoTasks().map((t) => [t.id, t]))
  return {tasks: tasks.map((t) => fresh.get(t.id) ?? t), refreshed: open.length}
}
