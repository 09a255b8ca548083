/**
 * Simulator module of `/api/v1/videos` (spec videos-api.md).
 *
 * - `POST /api/v1/videos`: standard or native body; answers the submission response of 2.5
 *   (id, status `queued`, model, seconds, size, provider). Bad requests get 400 with
 *   `{"error":{"message","type":"invalid_request_error","code":400}}` naming the problem.
 * - `GET /api/v1/videos/:id`: the query response of 2.6. The task is `queued` for the first fifth
 *   of `taskSeconds`, then `in_progress`, then `completed` (or `failed`) on the sim clock.
 *   An id older than 24 h of sim clock answers 200 `{"id","status":"UNKNOWN"}`; an id never
 *   issued answers 404.
 * - Failure on request: a prompt containing `[fail]`, or a passthrough `sim_outcome: "failed"`
 *   (top level, or in native `parameters`) makes the task end in `failed` with an error text.
 * - `GET /sim-storage/videos/:file`: the video (a real 1 s MP4 from `assets/sim/sample.mp4`),
 *   outside `/api/v1` and without auth, like a signed storage link; gone after 24 h.
 */
import {randomBytes} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

import type {VideoModel} from '../api/video-catalog.js'
import {
  ALPHA_SIZES,
  BETA_SIZES,
  findVideoModel,
  findVideoModelLoose,
  normalizeSize,
} from '../api/video-catalog.js'
import type {SimRequest} from './router.js'
import {sendJson} from './router.js'
import type {SimContext, SimModule} from './context.js'
import {SIM_API_PREFIX} from './context.js'

const DAY_MS = 24 * 3600 * 1000
/** The providers the sim names in `provider` (spec 2.5: name of the upstream provider). */
export const SIM_PROVIDERS = {Alpha: 'sim-alpha-cloud', Beta: 'sim-beta-studio'} as const

interface SimTask {
  id: string
  model: VideoModel
  provider: string
  createdMs: number
  seconds: number
  size: string
  fail: boolean
  referenceVideos: number
}

let sample: Buffer | undefined
/** The sample clip, read once from the package's `assets` folder (same path from src/ and dist/). */
function sampleVideo(): Buffer {
  sample ??= readFileSync(fileURLToPath(new URL('../../assets/sim/sample.mp4', import.meta.url)))
  return sample
}

/** ISO 8601 with microseconds and `Z`, as the platform writes timestamps. */
export function isoMicro(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z')
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined
}

function outputSize(model: VideoModel, fields: Record<string, unknown>): string {
  const size = str(fields.size) ? normalizeSize(String(fields.size)) : undefined
  if (model.family === 'Alpha') {
    if (size === '720P' || size === '720p') return ALPHA_SIZES['720P'][0]
    if (size === '1080P' || size === '1080p') return ALPHA_SIZES['1080P'][0]
    return size ?? ALPHA_SIZES['720P'][0]
  }
  const tier = str(fields.resolution)?.toUpperCase() as keyof typeof BETA_SIZES | undefined
  const row = tier && BETA_SIZES[tier] ? BETA_SIZES[tier] : undefined
  // Size without resolution is ignored (spec 2.3); resolution alone gives its 16:9 size.
  if (row) return size && Object.values(row).includes(size) ? size : row['16:9']
  return BETA_SIZES['720P']['16:9']
}

/** The problem with a create body, or undefined. Light on purpose: gwctl validates fully. */
function problemOf(model: VideoModel, fields: Record<string, unknown>): string | undefined {
  const needsPrompt = model.family === 'Alpha' || model.mode !== 'image-to-video'
  if (needsPrompt && !str(fields.prompt)) return `prompt is required for ${model.name}`
  if (model.mode === 'image-to-video' && !str(fields.img_url)) return `img_url is required for ${model.name}`
  if (model.mode === 'reference-video-to-video') {
    const v = fields.reference_video_urls
    if (!Array.isArray(v) || v.length === 0) return `reference_video_urls is required for ${model.name}`
  }
  if (model.mode === 'first-last-frame') {
    const named = str(fields.first_frame_url) && str(fields.last_frame_url)
    const images = fields.reference_images
    if (!named && !(Array.isArray(images) && images.length === 2)) {
      return `first_frame_url and last_frame_url (or reference_images [first, last]) are required for ${model.name}`
    }
    if (!str(fields.resolution)) return `resolution is required for ${model.name}`
  }
  if (model.mode === 'reference-to-video') {
    const images = fields.reference_images
    if (!Array.isArray(images) || images.length === 0) return `reference_images is required for ${model.name}`
  }
  const duration = model.family === 'Alpha' ? fields.seconds : fields.duration
  if (duration !== undefined) {
    const max = model.duration.max ?? Infinity
    const ok =
      typeof duration === 'number' &&
      Number.isInteger(duration) &&
      ((duration >= 1 && duration <= max) || (duration === 0 && model.duration.allowsZero))
    if (!ok) return `${model.duration.field} out of range for ${model.name}`
  }
  return undefined
}

export const videosModule: SimModule = {
  name: 'videos',
  register(router, context: SimContext) {
    const tasks = new Map<string, SimTask>()
    const base = `${SIM_API_PREFIX}/videos`

    router.add('POST', base, (request) => {
      const body = request.body
      if (!body || typeof body !== 'object' || Array.isArray(body)) {
        return context.sendError(request, 400, 'request body must be a JSON object with a model field')
      }
      const b = body as Record<string, unknown>
      const native = b.input !== undefined
      const modelName = str(b.model)
      if (!modelName) return context.sendError(request, 400, 'model is required')
      const model = native ? findVideoModelLoose(modelName) : findVideoModel(modelName)
      if (!model) {
        const hint = !native && findVideoModelLoose(modelName) ? ' (model names are case-sensitive)' : ''
        return context.sendError(request, 400, `unknown model: ${modelName}${hint}`)
      }
      let fields: Record<string, unknown> = b
      let outcome = b.sim_outcome
      if (native) {
        if (!b.input || typeof b.input !== 'object' || Array.isArray(b.input)) {
          return context.sendError(request, 400, 'input must be an object in the native format')
        }
        const parameters =
          b.parameters && typeof b.parameters === 'object' ? (b.parameters as Record<string, unknown>) : {}
        fields = {...(b.input as Record<string, unknown>), ...parameters}
        outcome ??= parameters.sim_outcome
      } else {
        const problem = problemOf(model, b)
        if (problem) return context.sendError(request, 400, problem)
      }
      const seconds = Number(model.family === 'Alpha' ? (fields.seconds ?? 5) : fields.duration || 5)
      const task: SimTask = {
        id: `task_${randomBytes(12).toString('hex')}`,
        model,
        provider: SIM_PROVIDERS[model.family],
        createdMs: context.clock.now(),
        seconds: Number.isFinite(seconds) && seconds > 0 ? seconds : 5,
        size: outputSize(model, fields),
        fail: outcome === 'failed' || String(fields.prompt ?? '').includes('[fail]'),
        referenceVideos: Array.isArray(fields.reference_video_urls) ? fields.reference_video_urls.length : 0,
      }
      tasks.set(task.id, task)
      sendJsonOk(request, {
        id: task.id,
        status: 'queued',
        model: native ? modelName : model.name,
        seconds: task.seconds,
        size: task.size,
        provider: task.provider,
      })
    })

    router.add('GET', `${base}/:id`, (request) => {
      const task = tasks.get(request.params.id)
      if (!task)
        return context.sendError(request, 404, `no task with id ${request.params.id}`, 'not_found_error')
      const now = context.clock.now()
      const age = now - task.createdMs
      const created_at = isoMicro(task.createdMs)
      if (age >= DAY_MS) return sendJsonOk(request, {id: task.id, status: 'UNKNOWN'})
      const runMs = context.options.taskSeconds * 1000
      if (age < runMs / 5) return sendJsonOk(request, {id: task.id, status: 'queued', created_at})
      if (age < runMs) return sendJsonOk(request, {id: task.id, status: 'in_progress', created_at})
      const endMs = task.createdMs + runMs
      if (task.fail) {
        return sendJsonOk(request, {
          id: task.id,
          status: 'failed',
          created_at,
          error:
            'simulated failure: the upstream provider rejected the task (requested with [fail] or sim_outcome)',
        })
      }
      const video_url = `${context.origin()}/sim-storage/videos/${task.id}.mp4`
      // Alpha reference videos are billed too (spec 1.6); the sim counts 5 s per reference video.
      const billed = task.seconds + (task.model.family === 'Alpha' ? task.referenceVideos * 5 : 0)
      const alpha = task.model.family === 'Alpha'
      sendJsonOk(request, {
        id: task.id,
        status: 'completed',
        created_at,
        completed_at: isoMicro(endMs),
        // Spec 2.6: updated_at, seconds and size are seen on completed Alpha tasks.
        ...(alpha ? {updated_at: isoMicro(endMs), seconds: task.seconds, size: task.size} : {}),
        video_url,
        usage: {seconds: billed, video_count: 1, size: task.size},
        raw_response: {
          simulated: true,
          provider: task.provider,
          request_id: `sim-${task.id.slice(5, 17)}`,
          output: {task_id: task.id, task_status: 'SUCCEEDED', video_url},
        },
      })
    })

    router.add('GET', '/sim-storage/videos/:file', (request) => {
      const id = request.params.file.replace(/\.mp4$/, '')
      const task = tasks.get(id)
      const age = task ? context.clock.now() - task.createdMs : 0
      if (!task || task.fail || age < context.options.taskSeconds * 1000 || age >= DAY_MS) {
        return context.sendError(
          request,
          404,
          'no such video (unknown, not ready, or past its 24 h)',
          'not_found_error',
        )
      }
      const data = sampleVideo()
      request.res.writeHead(200, {'content-type': 'video/mp4', 'content-length': data.length})
      request.res.end(data)
    })
  },
}

function sendJsonOk(request: SimRequest, body: unknown): void {
  sendJson(request.res, 200, body)
}
