/**
 * Simulator module of `/api/v1/multimodal/gamma/videos` (spec gamma-api).
 *
 * - Tasks go queued -> running -> succeeded (or failed) on the simulated clock: queued for the
 *   first quarter of `taskSeconds`, running for the rest. A prompt containing `sim-fail` fails.
 * - DELETE follows the state table of spec 3: queued -> cancelled; succeeded/failed -> deleted;
 *   running and cancelled refuse with the error envelope.
 * - Tasks are visible for 7 days after creation (query, list, regeneration source).
 * - Every answer carries a `Platform-Id` header; JSON bodies also carry `platform_id`. Errors use
 *   the chat-style envelope with the internal numeric code at the end of the message.
 * - Finished generation and regeneration tasks link to a small MP4 served below
 *   `/sim-files/gamma/` (`assets/sim/sample.mp4` when present), valid for one simulated hour.
 */
import {randomBytes} from 'node:crypto'
import {existsSync, readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

import type {SimRequest} from './router.js'
import {sendJson} from './router.js'
import type {SimModule} from './context.js'

// Literal rather than imported: server.ts imports this module (a cycle at load time).
const API = '/api/v1/multimodal/gamma'
const PREFIX = `${API}/videos`
const FILES = '/sim-files/gamma'
const MODEL = 'Gamma-H3'
const VISIBLE_MS = 7 * 24 * 3600 * 1000
const LINK_SECONDS = 3600
const MAX_PAGE_SIZE = 100
const RATIOS = ['adaptive', '21:9', '16:9', '4:3', '1:1', '3:4', '9:16']
const STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled']
const TYPES = ['generation', 'h3_context_ir', 'regeneration']

/** Internal numeric codes of the simulator (the real list is not published). */
export const GAMMA_SIM_CODES = {
  parameter: 1001,
  notFound: 1004,
  auth: 1002,
  running: 2001,
  cancelled: 2002,
  rateLimit: 1429,
  server: 1500,
  other: 1000,
} as const

function codeFor(status: number): number {
  if (status === 401 || status === 403) return GAMMA_SIM_CODES.auth
  if (status === 404) return GAMMA_SIM_CODES.notFound
  if (status === 429) return GAMMA_SIM_CODES.rateLimit
  if (status >= 500) return GAMMA_SIM_CODES.server
  if (status === 400) return GAMMA_SIM_CODES.parameter
  return GAMMA_SIM_CODES.other
}

function errorType(status: number, given: string): string {
  if (status === 400) return 'bad_request_error'
  if (status === 401) return 'authentication_error'
  if (status === 404) return 'not_found_error'
  return given
}

export function platformId(): string {
  return `pid-${randomBytes(8).toString('hex')}`
}

interface Record {
  seq: number
  id: string
  taskType: 'generation' | 'h3_context_ir' | 'regeneration'
  createdMs: number
  cancelledMs?: number
  fails: boolean
  resolution?: string
  duration: number
  ratio: string
  prompt: string
  images: number
  refVideos: number
  refItems: number
}

/** A minimal fallback MP4 (an `ftyp` box) when the sample asset is not installed. */
const FALLBACK_MP4 = Buffer.from('000000186674797069736f6d0000020069736f6d69736f32', 'hex')

function sampleVideo(): Buffer {
  const file = fileURLToPath(new URL('../../assets/sim/sample.mp4', import.meta.url))
  return existsSync(file) ? readFileSync(file) : FALLBACK_MP4
}

export const gammaModule: SimModule = {
  name: 'gamma',
  register(router, context) {
    const tasks = new Map<string, Record>()
    let seq = 0

    context.errorFormat(
      API,
      (status, message, type) => ({
        type: 'error',
        error: {
          type: errorType(status, type),
          message: /\(\d+\)\s*$/.test(message) ? message : `${message} (${codeFor(status)})`,
          http_code: String(status),
        },
        platform_id: platformId(),
      }),
      (body) => ({'Platform-Id': String((body as {platform_id?: string}).platform_id ?? platformId())}),
    )

    const ok = (request: SimRequest, body: object, status = 200): void => {
      const pid = platformId()
      sendJson(request.res, status, {...body, platform_id: pid}, {'Platform-Id': pid})
    }
    const fail = (request: SimRequest, status: number, message: string, code?: number): void =>
      context.sendError(
        request,
        status,
        code === undefined ? message : `${message} (${code})`,
        errorType(status, 'error'),
      )

    const now = (): number => context.clock.now()
    const visible = (r: Record): boolean => now() - r.createdMs <= VISIBLE_MS

    function statusOf(r: Record): {status: string; updatedMs: number} {
      if (r.cancelledMs !== undefined) return {status: 'cancelled', updatedMs: r.cancelledMs}
      const total = context.options.taskSeconds * 1000
      const elapsed = now() - r.createdMs
      if (elapsed < total / 4) return {status: 'queued', updatedMs: r.createdMs}
      if (elapsed < total) return {status: 'running', updatedMs: r.createdMs + total / 4}
      return {status: r.fails ? 'failed' : 'succeeded', updatedMs: r.createdMs + total}
    }

    function view(r: Record): object {
      const {status, updatedMs} = statusOf(r)
      const task: {[key: string]: unknown} = {
        id: r.id,
        model: MODEL,
        status,
        task_type: r.taskType,
        created_at: Math.floor(r.createdMs / 1000),
        updated_at: Math.floor(updatedMs / 1000),
        duration: r.duration,
        ratio: r.ratio,
      }
      if (r.resolution) task.resolution = r.resolution
      if (r.taskType === 'h3_context_ir')
        task.modality = r.refItems > 0 || r.images > 0 ? 'multimodal' : 'text'
      if (status === 'succeeded') {
        if (r.taskType === 'h3_context_ir') {
          const prompt = enhance(r)
          task.content = {prompt}
          const promptTokens = Math.ceil(r.prompt.length / 4) + 258 * (r.images + r.refItems)
          const completionTokens = Math.ceil(prompt.length / 4)
          task.usage = {
            prompt_tokens: promptTokens,
            completion_tokens: completionTokens,
            total_tokens: promptTokens + completionTokens,
          }
        } else {
          const expires = Math.floor(now() / 1000) + LINK_SECONDS
          task.content = {url: `${context.origin()}${FILES}/${r.id}.mp4?expires=${expires}`}
          const input = r.refVideos * 5
          task.usage = {
            total_seconds: input + r.duration,
            input_seconds: input,
            output_seconds: r.duration,
            input_image_count: r.images,
          }
        }
      } else if (status === 'failed') {
        task.usage =
          r.taskType === 'h3_context_ir'
            ? {prompt_tokens: 0, completion_tokens: 0, total_tokens: 0}
            : {total_seconds: 0, input_seconds: 0, output_seconds: 0, input_image_count: 0}
      }
      return task
    }

    /** Checks the content of a create request; answers the error and returns false when it breaks a rule. */
    function checkContent(request: SimRequest, content: unknown, regeneration: boolean): content is any[] {
      if (!Array.isArray(content)) {
        fail(request, 400, 'content is required and must be an array', GAMMA_SIM_CODES.parameter)
        return false
      }
      const texts = content.filter((c) => c?.type === 'text')
      if (texts.length !== 1 || typeof texts[0].text !== 'string' || !texts[0].text.trim()) {
        fail(request, 400, 'content must contain exactly one non-empty text item', GAMMA_SIM_CODES.parameter)
        return false
      }
      const roles = content.map((c) => c?.role)
      const frames = content.some(
        (c) => c?.type === 'image_url' && (c.role === undefined || /_frame$/.test(c.role)),
      )
      const refs = roles.some((r) => typeof r === 'string' && r.startsWith('reference_'))
      if (frames && refs) {
        fail(request, 400, 'frame roles and reference roles cannot be combined', GAMMA_SIM_CODES.parameter)
        return false
      }
      const bases = roles.filter((r) => r === 'base_video').length
      if (regeneration ? bases !== 1 : bases !== 0) {
        fail(
          request,
          400,
          'regeneration content needs exactly one base_video item',
          GAMMA_SIM_CODES.parameter,
        )
        return false
      }
      return true
    }

    function create(request: SimRequest, taskType: Record['taskType']): void {
      const b = (request.body ?? {}) as {[key: string]: any}
      if (b.model !== MODEL) return fail(request, 400, `model must be ${MODEL}`, GAMMA_SIM_CODES.parameter)
      let source: Record | undefined
      let content: any[] = []
      if (taskType === 'regeneration' && b.source_task_id !== undefined) {
        source = tasks.get(String(b.source_task_id))
        if (!source || !visible(source)) {
          return fail(
            request,
            400,
            'source task does not exist or is no longer visible',
            GAMMA_SIM_CODES.parameter,
          )
        }
        if (source.taskType !== 'generation' || statusOf(source).status !== 'succeeded') {
          return fail(
            request,
            400,
            'source task must be a succeeded generation task',
            GAMMA_SIM_CODES.parameter,
          )
        }
      } else {
        if (!checkContent(request, b.content, taskType === 'regeneration')) return
        content = b.content
      }
      if (
        taskType === 'regeneration'
          ? b.resolution !== '2K'
          : taskType === 'generation' && !['768P', '2K'].includes(b.resolution)
      ) {
        return fail(request, 400, 'invalid resolution', GAMMA_SIM_CODES.parameter)
      }
      if (
        taskType !== 'regeneration' &&
        (!Number.isInteger(b.duration) || b.duration < 4 || b.duration > 15)
      ) {
        return fail(request, 400, 'duration must be an integer from 4 to 15', GAMMA_SIM_CODES.parameter)
      }
      if (b.ratio !== undefined && !RATIOS.includes(b.ratio)) {
        return fail(request, 400, 'invalid ratio', GAMMA_SIM_CODES.parameter)
      }
      const media = content.filter((c) => c.type !== 'text' && c.role !== 'base_video')
      if (taskType === 'generation' && media.length === 0 && (b.ratio ?? 'adaptive') === 'adaptive') {
        return fail(request, 400, 'text-to-video requires a concrete ratio', GAMMA_SIM_CODES.parameter)
      }
      const prompt = source ? source.prompt : String(content.find((c) => c.type === 'text')?.text ?? '')
      const imageToVideo = media.some((c) => c.type === 'image_url' && c.role !== 'reference_image')
      const record: Record = {
        seq: ++seq,
        id: `cgt-${new Date(now()).toISOString().slice(0, 10).replaceAll('-', '')}-${randomBytes(6).toString('hex')}`,
        taskType,
        createdMs: now(),
        fails: prompt.includes('sim-fail'),
        resolution: taskType === 'h3_context_ir' ? undefined : String(b.resolution),
        duration: source ? source.duration : Number(b.duration ?? 5),
        ratio: source ? source.ratio : (b.ratio ?? (imageToVideo ? '' : 'adaptive')),
        prompt,
        images: source ? source.images : media.filter((c) => c.type === 'image_url').length,
        refVideos: source ? source.refVideos : media.filter((c) => c.role === 'reference_video').length,
        refItems: source
          ? source.refItems
          : media.filter((c) => String(c.role).startsWith('reference_')).length,
      }
      tasks.set(record.id, record)
      ok(request, {task_id: record.id})
    }

    router.add('POST', `${PREFIX}/video_generation`, (r) => create(r, 'generation'))
    router.add('POST', `${PREFIX}/h3_context_ir`, (r) => create(r, 'h3_context_ir'))
    router.add('POST', `${PREFIX}/video_regeneration`, (r) => create(r, 'regeneration'))

    router.add('GET', `${PREFIX}/query/video_generation/:id`, (request) => {
      const r = tasks.get(request.params.id)
      if (!r || !visible(r))
        return fail(request, 404, `task ${request.params.id} not found`, GAMMA_SIM_CODES.notFound)
      ok(request, {task: view(r)})
    })

    router.add('GET', `${PREFIX}/query/video_generation`, (request) => {
      const q = request.query
      const pageNum = q.has('page_num') ? Number(q.get('page_num')) : 1
      const pageSize = q.has('page_size') ? Number(q.get('page_size')) : 20
      if (!Number.isInteger(pageNum) || pageNum < 1) {
        return fail(request, 400, 'page_num must be an integer >= 1', GAMMA_SIM_CODES.parameter)
      }
      if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
        return fail(
          request,
          400,
          `page_size must be an integer from 1 to ${MAX_PAGE_SIZE}`,
          GAMMA_SIM_CODES.parameter,
        )
      }
      const status = q.get('filter.status')
      const type = q.get('filter.task_type')
      const model = q.get('filter.model')
      const ids = new Set(
        q
          .getAll('filter.task_ids')
          .flatMap((v) => v.split(','))
          .map((v) => v.trim())
          .filter(Boolean),
      )
      const invalid =
        (status !== null && !STATUSES.includes(status)) || (type !== null && !TYPES.includes(type))
      const matching = invalid
        ? []
        : [...tasks.values()]
            .filter(visible)
            .filter((r) => status === null || statusOf(r).status === status)
            .filter((r) => type === null || r.taskType === type)
            .filter(() => model === null || model === MODEL)
            .filter((r) => ids.size === 0 || ids.has(r.id))
            .sort((a, b) => b.createdMs - a.createdMs || b.seq - a.seq)
      const start = (pageNum - 1) * pageSize
      ok(request, {items: matching.slice(start, start + pageSize).map(view), total: matching.length})
    })

    router.add('DELETE', `${PREFIX}/video_generation/:id`, (request) => {
      const r = tasks.get(request.params.id)
      if (!r || !visible(r))
        return fail(request, 404, `task ${request.params.id} not found`, GAMMA_SIM_CODES.notFound)
      const {status} = statusOf(r)
      if (status === 'queued') {
        r.cancelledMs = now()
        return ok(request, {task_id: r.id, action: 'cancelled', status: 'cancelled'})
      }
      if (status === 'running') {
        return fail(
          request,
          400,
          'task is running and cannot be cancelled while processing',
          GAMMA_SIM_CODES.running,
        )
      }
      if (status === 'cancelled') {
        return fail(
          request,
          400,
          'task is cancelled; no further operation is allowed',
          GAMMA_SIM_CODES.cancelled,
        )
      }
      tasks.delete(r.id)
      ok(request, {task_id: r.id, action: 'deleted', status: 'deleted'})
    })

    router.add('GET', new RegExp(`^${FILES}/(?<id>[^/]+)\\.mp4$`), (request) => {
      const expires = Number(request.query.get('expires'))
      const pid = platformId()
      if (!tasks.has(request.params.id) || !Number.isFinite(expires) || now() / 1000 > expires) {
        sendJson(
          request.res,
          403,
          {error: {message: 'link expired or unknown', type: 'permission_error'}},
          {'Platform-Id': pid},
        )
        return
      }
      const bytes = sampleVideo()
      request.res.writeHead(200, {
        'content-type': 'video/mp4',
        'content-length': bytes.length,
        'Platform-Id': pid,
      })
      request.res.end(bytes)
    })
  },
}

function enhance(r: Record): string {
  const refs = r.refItems > 0 ? ` Keep the look of the ${r.refItems} reference item(s).` : ''
  const frames = r.images > 0 && r.refItems === 0 ? ' Start from the given frame and move naturally.' : ''
  return `${r.prompt.trim()}. Cinematic ${r.duration}-second shot, soft natural light, smooth camera motion, consistent subject and style.${frames}${refs}`
}
