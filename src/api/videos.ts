/**
 * Client of `{base_url}/videos` (spec videos-api.md section 4): create a task, query a task.
 * Thin on purpose: validation lives in the services, transport in {@link PlatformClient}.
 */
import type {PlatformClient} from './http.js'

/** States of a task (spec 2.6 and 3). `UNKNOWN` is the answer for an id past its 24 h. */
export type VideoStatus = 'queued' | 'in_progress' | 'completed' | 'failed' | 'UNKNOWN'

/** The submission response of spec 2.5. */
export interface VideoSubmission {
  id: string
  status: VideoStatus
  model: string
  seconds?: number
  size?: string
  provider?: string
}

/** The query response of spec 2.6. */
export interface VideoTask {
  id: string
  status: VideoStatus | string
  created_at?: string
  completed_at?: string
  updated_at?: string
  seconds?: number
  size?: string
  video_url?: string
  usage?: {seconds?: number; video_count?: number; size?: string}
  raw_response?: Record<string, unknown>
  error?: string
  /** Not part of 2.6; kept when the platform adds it. */
  model?: string
  provider?: string
}

/** A standard (flat fields) or provider-native (`model`, `input`, `parameters`) create body. */
export type VideoCreateBody = Record<string, unknown> & {model: string}

/** True when a status means the task will not change any more. */
export function isTerminalStatus(status: string): boolean {
  return status === 'completed' || status === 'failed' || isExpiredStatus(status)
}

/** True for the answer given to ids past their 24 h (`UNKNOWN`, in any case). */
export function isExpiredStatus(status: string): boolean {
  return status.toUpperCase() === 'UNKNOWN'
}

/** `videos.create` / `videos.get` bound to one platform client. */
export class VideosApi {
  constructor(private readonly client: PlatformClient) {}

  /** `POST /videos`. Sent once: the client never retries a create the platform may have acted on. */
  async create(body: VideoCreateBody, options: {signal?: AbortSignal} = {}): Promise<VideoSubmission> {
    const res = await this.client.request<VideoSubmission>('POST', '/videos', {body, signal: options.signal})
    return res.body
  }

  /** `GET /videos/{id}`, with the optional `provider` hint that speeds up the lookup. */
  async get(id: string, provider?: string, options: {signal?: AbortSignal} = {}): Promise<VideoTask> {
    const res = await this.client.request<VideoTask>('GET', `/videos/${encodeURIComponent(id)}`, {
      query: {provider: provider || undefined},
      signal: options.signal,
    })
    return res.body
  }
}

/** The videos API of a platform client. */
export function videos(client: PlatformClient): VideosApi {
  return new VideosApi(client)
}
