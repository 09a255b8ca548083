/**
 * Use cases of the gamma task API: create, wait, download, list, cancel/delete. Plain options in,
 * data out; no flags and no printing: progress goes to the callbacks the caller passes.
 */
import {existsSync} from 'node:fs'

import type {
  GammaApi,
  GammaContextRequest,
  GammaCreateKind,
  GammaCreated,
  GammaDeleteResponse,
  GammaGenerationRequest,
  GammaListQuery,
  GammaListResponse,
  GammaRegenerationRequest,
  GammaTask,
  GammaTaskResponse,
} from '../api/gamma.js'
import {GammaApi as GammaApiClass} from '../api/gamma.js'
import type {PlatformClient} from '../api/http.js'
import {platformClient} from '../api/http.js'
import {NotFoundError, TaskFailedError, UpstreamError, UsageError} from '../core/errors.js'
import {waitForTask} from './task-wait.js'

/** Largest page the CLI asks for (the spec does not give a maximum; the simulator enforces 100). */
export const GAMMA_MAX_PAGE_SIZE = 100
export const GAMMA_DEFAULT_PAGE_SIZE = 20
export const GAMMA_VISIBILITY_DAYS = 7

export function gammaApi(client: PlatformClient = platformClient()): GammaApi {
  return new GammaApiClass(client)
}

const FINAL = new Set(['succeeded', 'failed', 'cancelled'])

export function isFinal(task: GammaTask): boolean {
  return FINAL.has(task.status)
}

const NOT_VISIBLE_HINT = `Tasks are visible for ${GAMMA_VISIBILITY_DAYS} days after creation; check the id with \`gwctl gamma list\`.`

/** Adds the visibility hint to a not-found answer of the query endpoint. */
function explainNotFound(error: unknown, id: string): unknown {
  if (error instanceof NotFoundError && error.code !== 'no_such_endpoint') {
    return new NotFoundError(`Task ${id} is unknown or no longer visible. ${error.message}`, {
      code: 'task_not_visible',
      hint: NOT_VISIBLE_HINT,
      details: error.details,
      cause: error,
    })
  }
  return error
}

export async function getGammaTask(
  api: GammaApi,
  id: string,
  signal?: AbortSignal,
): Promise<GammaTaskResponse> {
  try {
    return await api.get(id, signal)
  } catch (error) {
    throw explainNotFound(error, id)
  }
}

export async function createGammaTask(
  api: GammaApi,
  kind: GammaCreateKind,
  request: GammaGenerationRequest | GammaContextRequest | GammaRegenerationRequest,
  signal?: AbortSignal,
): Promise<GammaCreated> {
  return api.create(kind, request, signal)
}

/**
 * Before a regeneration by task id: the source must be visible, a generation task, and
 * `succeeded`. Throws NotFoundError (exit 7) or UsageError (exit 2); nothing is created.
 */
export async function checkRegenerationSource(
  api: GammaApi,
  sourceId: string,
  signal?: AbortSignal,
): Promise<GammaTaskResponse> {
  let source: GammaTaskResponse
  try {
    source = await api.get(sourceId, signal)
  } catch (error) {
    if (error instanceof NotFoundError) {
      throw new NotFoundError(`Source task ${sourceId} is unknown or no longer visible; nothing was sent.`, {
        code: 'source_not_visible',
        hint: `Regeneration needs a source created within the last ${GAMMA_VISIBILITY_DAYS} days; use --base-video with the original content instead.`,
        details: error.details,
        cause: error,
      })
    }
    throw error
  }
  const {task} = source
  if (task.task_type !== 'generation') {
    throw new UsageError(
      `Source task ${sourceId} is a ${task.task_type} task; regeneration needs a generation task. Nothing was sent.`,
      {
        code: 'source_not_generation',
        details: source.platform_id ? {platform_id: source.platform_id} : undefined,
      },
    )
  }
  if (task.status !== 'succeeded') {
    throw new UsageError(
      `Source task ${sourceId} is ${task.status}; regeneration needs a succeeded source. Nothing was sent.`,
      {
        code: 'source_not_succeeded',
        hint:
          task.status === 'queued' || task.status === 'running'
            ? `Wait for it: \`gwctl gamma poll ${sourceId}\`, then regenerate.`
            : 'Generate the video again, then regenerate the new task.',
        details: source.platform_id ? {platform_id: source.platform_id} : undefined,
      },
    )
  }
  return source
}

export interface WaitOptions {
  intervalMs: number
  /** 0 = no limit. */
  timeoutMs: number
  signal?: AbortSignal
  /** Called after each query and about once a second while waiting. */
  onProgress?: (response: GammaTaskResponse, elapsedMs: number) => void
}

/**
 * Why a task failed, in the platform's words when it gave any (the spec has no error field, so
 * any of the usual names is read), else "the platform gave no reason".
 */
export function gammaFailureReason(task: GammaTask): string {
  for (const key of ['error', 'error_message', 'message', 'reason', 'fail_reason']) {
    const value = task[key]
    if (typeof value === 'string' && value.trim()) return value.trim()
    if (value && typeof value === 'object' && typeof (value as {message?: unknown}).message === 'string')
      return (value as {message: string}).message
  }
  return 'the platform gave no reason'
}

/**
 * Throws the exit-8 error of a failed task, and with `cancelled` also of a cancelled one (a wait
 * for a result that will never come); returns otherwise. `gamma get` shows a cancelled task
 * without failing: cancelling is what the user asked for.
 */
export function assertGammaTaskNotEnded(
  response: GammaTaskResponse,
  id = response.task.id,
  {cancelled = true}: {cancelled?: boolean} = {},
): void {
  const {task} = response
  const details = {
    task_id: id,
    status: task.status,
    ...(response.platform_id ? {platform_id: response.platform_id} : {}),
  }
  if (task.status === 'failed') {
    throw new TaskFailedError(`Task ${id} failed: ${gammaFailureReason(task)}.`, {
      details,
      hint: 'Change the content and create a new task (`gwctl gamma generate`); quote the platform_id to support.',
    })
  }
  if (cancelled && task.status === 'cancelled') {
    throw new TaskFailedError(`Task ${id} was cancelled.`, {code: 'task_cancelled', details})
  }
}

/**
 * Polls a task until it is final (the shared wait of `task-wait.ts`). Resolves on `succeeded`;
 * throws TaskFailedError (exit 8) on `failed` or `cancelled`, `wait_timeout` (exit 5) when the
 * timeout passes first, and names `gwctl gamma poll ID` on every other way out.
 */
export async function waitForGammaTask(
  api: GammaApi,
  id: string,
  options: WaitOptions,
): Promise<GammaTaskResponse> {
  return waitForTask<GammaTaskResponse>(
    {
      id,
      resume: `gwctl gamma poll ${id}`,
      query: (signal) => getGammaTask(api, id, signal),
      status: (response) => response.task.status,
      settled: (response) => {
        if (response.task.status === 'succeeded') return true
        assertGammaTaskNotEnded(response, id)
        return false
      },
    },
    {
      intervalMs: options.intervalMs,
      timeoutSeconds: options.timeoutMs / 1000,
      signal: options.signal,
      onUpdate: options.onProgress,
      onTick: options.onProgress,
    },
  )
}

/** Refuses to overwrite an existing file without `force` (checked before anything is sent). */
export function assertCanWrite(dest: string | undefined, force: boolean): void {
  if (dest !== undefined && !force && existsSync(dest)) {
    throw new UsageError(`${dest} already exists; nothing was sent.`, {
      code: 'output_exists',
      hint: 'Pass --force to overwrite it, or choose another --output.',
    })
  }
}

/** Downloads the video of a succeeded generation or regeneration task. */
export async function downloadGammaVideo(
  api: GammaApi,
  task: GammaTask,
  dest: string,
  options: {signal?: AbortSignal; onProgress?: (received: number, total?: number) => void} = {},
): Promise<{path: string; bytes: number}> {
  const url = task.content?.url
  if (!url) {
    throw new NotFoundError(`Task ${task.id} has no video to download (${task.task_type}, ${task.status}).`, {
      code: 'no_video',
    })
  }
  const {bytes} = await api.client.download(url, dest, options)
  return {path: dest, bytes}
}

/** A waited-for task (`gamma poll`, `--wait`), with the file of its video when downloaded. */
export type GammaPollResult = GammaTaskResponse & {task_id: string; file?: {path: string; bytes: number}}

/** What a create command returns: the created task, or the task it waited for. */
export type GammaResult = GammaCreated | GammaPollResult

export interface PollOptions extends WaitOptions {
  /**
   * Download the finished video to this file (the caller checks it with `assertCanWrite` before
   * anything is sent).
   */
  output?: string
  onDownloadProgress?: (received: number, total?: number) => void
}

/**
 * Waits for a task until it succeeds (as `waitForGammaTask`) and, with `output`, downloads its
 * video: `gamma poll`, and `gamma generate` and `regenerate` with `--wait` or `--output`.
 */
export async function pollGammaTask(
  api: GammaApi,
  id: string,
  options: PollOptions,
): Promise<GammaPollResult> {
  const response = await waitForGammaTask(api, id, options)
  const result: GammaPollResult = {task_id: id, ...response}
  if (options.output !== undefined) {
    result.file = await downloadGammaVideo(api, response.task, options.output, {
      signal: options.signal,
      onProgress: options.onDownloadProgress,
    })
  }
  return result
}

export interface ListOptions extends GammaListQuery {
  /** Walk every page (page size `pageSize` or the maximum). */
  all?: boolean
  signal?: AbortSignal
}

export interface ListResult extends GammaListResponse {
  page_num: number
  page_size: number
  pages_read: number
}

/** One page, or with `all` every page, of tasks; newest first. */
export async function listGammaTasks(api: GammaApi, options: ListOptions): Promise<ListResult> {
  const pageSize = options.pageSize ?? (options.all ? GAMMA_MAX_PAGE_SIZE : GAMMA_DEFAULT_PAGE_SIZE)
  const query = {...options, pageSize}
  if (!options.all) {
    const pageNum = options.pageNum ?? 1
    const page = await api.list({...query, pageNum}, options.signal)
    return {...page, page_num: pageNum, page_size: pageSize, pages_read: 1}
  }
  const seen = new Map<string, GammaTask>()
  let total = 0
  let platformId: string | undefined
  let pageNum = options.pageNum ?? 1
  let pages = 0
  for (;;) {
    const page = await api.list({...query, pageNum}, options.signal)
    pages++
    total = page.total
    platformId ??= page.platform_id
    for (const task of page.items) if (!seen.has(task.id)) seen.set(task.id, task)
    if (page.items.length === 0 || pageNum * pageSize >= total) break
    pageNum++
  }
  // Tasks created while paging shift pages; keep one copy of each, newest first.
  const items = [...seen.values()].sort((a, b) => b.created_at - a.created_at)
  return {items, total, platform_id: platformId, page_num: 1, page_size: pageSize, pages_read: pages}
}

export interface CancelResult extends GammaDeleteResponse {
  action: 'cancelled' | 'deleted' | string
}

/**
 * DELETE on a task: a queued task is cancelled, a succeeded or failed one deleted. A refusal
 * (running or cancelled task) comes back with a plain-language explanation of the state rule.
 */
export async function cancelGammaTask(
  api: GammaApi,
  id: string,
  signal?: AbortSignal,
): Promise<CancelResult> {
  let response: GammaDeleteResponse
  try {
    response = await api.delete(id, signal)
  } catch (error) {
    throw await explainRefusal(api, id, error, signal)
  }
  const action =
    response.action ??
    (response.status === 'cancelled' ? 'cancelled' : response.status === 'deleted' ? 'deleted' : 'unknown')
  return {...response, task_id: response.task_id ?? id, action}
}

async function explainRefusal(
  api: GammaApi,
  id: string,
  error: unknown,
  signal?: AbortSignal,
): Promise<unknown> {
  if (error instanceof NotFoundError) return explainNotFound(error, id)
  if (
    !(error instanceof UpstreamError) ||
    error.status === undefined ||
    error.status >= 500 ||
    error.status === 429
  )
    return error
  let status: string | undefined
  try {
    status = (await api.get(id, signal)).task.status
  } catch {
    return error
  }
  const hints: Record<string, {code: string; hint: string}> = {
    running: {
      code: 'task_running',
      hint: `Task ${id} is running: a task can be cancelled only while queued, and deleted only once it has succeeded or failed. Wait for it to finish (\`gwctl gamma poll ${id}\`), then run cancel again to delete it.`,
    },
    cancelled: {
      code: 'task_cancelled',
      hint: `Task ${id} is already cancelled: a cancelled task allows no further operation. It stays visible until ${GAMMA_VISIBILITY_DAYS} days after its creation.`,
    },
  }
  const known = status === undefined ? undefined : hints[status]
  if (!known) return error
  return new UpstreamError(error.message, {
    code: known.code,
    status: error.status,
    details: {...error.details, task_status: status},
    hint: known.hint,
    cause: error,
  })
}
