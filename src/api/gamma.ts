/**
 * Client of the multimodal video task API below `{base_url}/multimodal/gamma/videos` (spec
 * gamma-api). Methods mirror the routes; every answer keeps the platform request id, taken from
 * the body field `platform_id` or else the `Platform-Id` header.
 */
import type {ApiResponse, PlatformClient} from './http.js'
import {headerValue} from './http.js'

/** The only model of the API. */
export const GAMMA_MODEL = 'Gamma-H3'

/** Path of the API below the base URL. */
export const GAMMA_PREFIX = '/multimodal/gamma/videos'

export type GammaTaskStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled'
export type GammaTaskType = 'generation' | 'h3_context_ir' | 'regeneration'
export const GAMMA_STATUSES: readonly GammaTaskStatus[] = [
  'queued',
  'running',
  'succeeded',
  'failed',
  'cancelled',
]
export const GAMMA_TASK_TYPES: readonly GammaTaskType[] = ['generation', 'h3_context_ir', 'regeneration']

/** One item of a `content` array (spec 2.1). The audio item mirrors the image and video items. */
export type GammaContentItem =
  | {type: 'text'; text: string; role?: string}
  | {type: 'image_url'; image_url: {url: string}; role?: string}
  | {type: 'video_url'; video_url: {url: string}; role?: string}
  | {type: 'audio_url'; audio_url: {url: string}; role?: string}

export interface GammaGenerationRequest {
  model: string
  content: GammaContentItem[]
  resolution: string
  duration: number
  ratio?: string
  aigc_watermark?: boolean
  callback_url?: string
}

export interface GammaContextRequest {
  model: string
  content: GammaContentItem[]
  duration: number
  ratio?: string
  callback_url?: string
}

export interface GammaRegenerationRequest {
  model: string
  resolution: string
  source_task_id?: string
  content?: GammaContentItem[]
  aigc_watermark?: boolean
  callback_url?: string
}

export interface GammaUsage {
  total_seconds?: number
  input_seconds?: number
  output_seconds?: number
  input_image_count?: number
  prompt_tokens?: number
  completion_tokens?: number
  total_tokens?: number
}

/** The task object (spec 2.3). */
export interface GammaTask {
  id: string
  model: string
  status: GammaTaskStatus
  task_type: GammaTaskType
  modality?: string
  created_at: number
  updated_at: number
  resolution?: string
  duration?: number
  ratio?: string
  content?: {url?: string; prompt?: string}
  usage?: GammaUsage
  [key: string]: unknown
}

export interface GammaCreated {
  task_id: string
  platform_id?: string
}

export interface GammaTaskResponse {
  task: GammaTask
  platform_id?: string
}

export interface GammaListResponse {
  items: GammaTask[]
  total: number
  platform_id?: string
}

export interface GammaDeleteResponse {
  task_id: string
  /** `deleted`; for a cancelled queued task the platform's body is not specified (see README). */
  action?: string
  status?: string
  platform_id?: string
}

export interface GammaListQuery {
  pageNum?: number
  pageSize?: number
  status?: string
  taskIds?: readonly string[]
  model?: string
  taskType?: string
}

export type GammaCreateKind = 'video_generation' | 'h3_context_ir' | 'video_regeneration'

function withPlatformId<T extends object>(res: ApiResponse<T>): T & {platform_id?: string} {
  const body = (res.body && typeof res.body === 'object' ? res.body : {}) as T & {platform_id?: string}
  const fromHeader = headerValue(res.headers, 'platform-id')
  if (typeof body.platform_id === 'string' && body.platform_id) return body
  return fromHeader ? {...body, platform_id: fromHeader} : body
}

/** The gamma routes on one platform client. */
export class GammaApi {
  constructor(readonly client: PlatformClient) {}

  /** POST `/multimodal/gamma/videos/{kind}`: creates a task (asynchronous). */
  async create(
    kind: GammaCreateKind,
    body: GammaGenerationRequest | GammaContextRequest | GammaRegenerationRequest,
    signal?: AbortSignal,
  ): Promise<GammaCreated> {
    return withPlatformId(
      await this.client.request<GammaCreated>('POST', `${GAMMA_PREFIX}/${kind}`, {body, signal}),
    )
  }

  /** GET `/multimodal/gamma/videos/query/video_generation/{id}`: one task of any type. */
  async get(id: string, signal?: AbortSignal): Promise<GammaTaskResponse> {
    return withPlatformId(
      await this.client.request<GammaTaskResponse>(
        'GET',
        `${GAMMA_PREFIX}/query/video_generation/${encodeURIComponent(id)}`,
        {signal},
      ),
    )
  }

  /** GET `/multimodal/gamma/videos/query/video_generation`: one page of tasks, newest first. */
  async list(query: GammaListQuery = {}, signal?: AbortSignal): Promise<GammaListResponse> {
    const res = withPlatformId(
      await this.client.request<GammaListResponse>('GET', `${GAMMA_PREFIX}/query/video_generation`, {
        signal,
        query: {
          page_num: query.pageNum,
          page_size: query.pageSize,
          'filter.status': query.status,
          'filter.task_ids': query.taskIds && query.taskIds.length > 0 ? query.taskIds : undefined,
          'filter.model': query.model,
          'filter.task_type': query.taskType,
        },
      }),
    )
    return {...res, items: Array.isArray(res.items) ? res.items : [], total: Number(res.total ?? 0)}
  }

  /** DELETE `/multimodal/gamma/videos/video_generation/{id}`: cancels a queued task or deletes a finished one. */
  async delete(id: string, signal?: AbortSignal): Promise<GammaDeleteResponse> {
    return withPlatformId(
      await this.client.request<GammaDeleteResponse>(
        'DELETE',
        `${GAMMA_PREFIX}/video_generation/${encodeURIComponent(id)}`,
        {signal},
      ),
    )
  }
}
