/**
 * The content rules of the gamma API (spec gamma-api 2.1 and 2.2), checked before anything is
 * sent. Every failure is a `UsageError` whose message names the rule it broke.
 */
import {UsageError} from '../core/errors.js'
import {HTTP_URL_HINT, isHttpUrl} from '../core/input-rules.js'
import type {
  GammaContentItem,
  GammaContextRequest,
  GammaGenerationRequest,
  GammaRegenerationRequest,
} from '../api/gamma.js'
import {GAMMA_MODEL} from '../api/gamma.js'

export const GAMMA_RATIOS = ['adaptive', '21:9', '16:9', '4:3', '1:1', '3:4', '9:16'] as const
export const GAMMA_RESOLUTIONS = ['768P', '2K'] as const
export const FRAME_ROLES = ['first_frame', 'last_frame'] as const
export const REFERENCE_ROLES = ['reference_image', 'reference_video', 'reference_audio'] as const

/** Which request the content belongs to: regeneration content also carries one base video. */
export type ContentPurpose = 'generation' | 'analysis' | 'regeneration'

/** Content given as flags; each list keeps the order the user gave. */
export interface ContentInput {
  text?: string
  firstFrame?: string
  lastFrame?: string
  images?: readonly string[]
  refImages?: readonly string[]
  refVideos?: readonly string[]
  refAudios?: readonly string[]
  baseVideo?: string
}

/** Builds the content array from flag values (text first, then frames, images and references). */
export function contentFromInput(input: ContentInput): GammaContentItem[] {
  const items: GammaContentItem[] = []
  if (input.text !== undefined) items.push({type: 'text', text: input.text})
  if (input.firstFrame !== undefined)
    items.push({type: 'image_url', image_url: {url: input.firstFrame}, role: 'first_frame'})
  if (input.lastFrame !== undefined)
    items.push({type: 'image_url', image_url: {url: input.lastFrame}, role: 'last_frame'})
  for (const url of input.images ?? []) items.push({type: 'image_url', image_url: {url}})
  for (const url of input.refImages ?? [])
    items.push({type: 'image_url', image_url: {url}, role: 'reference_image'})
  for (const url of input.refVideos ?? [])
    items.push({type: 'video_url', video_url: {url}, role: 'reference_video'})
  for (const url of input.refAudios ?? [])
    items.push({type: 'audio_url', audio_url: {url}, role: 'reference_audio'})
  if (input.baseVideo !== undefined)
    items.push({type: 'video_url', video_url: {url: input.baseVideo}, role: 'base_video'})
  return items
}

const ITEM_TYPES = new Set(['text', 'image_url', 'video_url', 'audio_url'])
/** Roles each item type may carry (`undefined` = no role). */
const ROLES_BY_TYPE: Record<string, ReadonlyArray<string | undefined>> = {
  text: [undefined],
  image_url: [undefined, 'first_frame', 'last_frame', 'reference_image'],
  video_url: ['reference_video', 'base_video'],
  audio_url: ['reference_audio'],
}

/** The flag an item comes from, for messages: `--first-frame`, `--ref-video`, ... */
function describeItem(item: Record<string, any>): string {
  const flags: Record<string, string> = {
    first_frame: '--first-frame',
    last_frame: '--last-frame',
    reference_image: '--ref-image',
    reference_video: '--ref-video',
    reference_audio: '--ref-audio',
    base_video: '--base-video',
  }
  return typeof item.role === 'string' && flags[item.role]
    ? flags[item.role]
    : item.type === 'image_url'
      ? '--image'
      : String(item.type)
}

/** The flag that fixes a rule, where one flag does. */
const FIX: Record<string, string> = {
  'http-url': HTTP_URL_HINT,
  'text-to-video-ratio': 'Add a ratio, e.g. --ratio 16:9.',
  ratio: 'Pass --ratio with one of the listed values.',
  duration: 'Pass --duration (-d) with 4 to 15 seconds, e.g. -d 5.',
  resolution: 'Pass --resolution (-r) with one of the listed values.',
}

function rule(name: string, message: string): UsageError {
  return new UsageError(`Rule "${name}": ${message}`, {
    code: 'content_rule',
    details: {rule: name},
    hint:
      FIX[name] ??
      'See `gwctl gamma generate --help` and the gamma section of the README for the content rules.',
  })
}

/** Checks the shape of each item: known type, its URL object, a role that fits the type. */
function checkShapes(content: unknown): asserts content is GammaContentItem[] {
  if (!Array.isArray(content)) {
    throw rule('content-shape', 'content must be an array of items.')
  }
  content.forEach((raw, i) => {
    const where = `item ${i + 1}`
    if (!raw || typeof raw !== 'object') throw rule('content-shape', `${where} is not an object.`)
    const item = raw as Record<string, any>
    if (typeof item.type !== 'string' || !ITEM_TYPES.has(item.type)) {
      throw rule(
        'content-shape',
        `${where} has type ${JSON.stringify(item.type)}; expected text, image_url, video_url or audio_url.`,
      )
    }
    if (item.type === 'text') {
      if (typeof item.text !== 'string') throw rule('content-shape', `${where} (text) has no "text" string.`)
    } else {
      const url = item[item.type]?.url
      if (typeof url !== 'string' || url.trim() === '') {
        throw rule('content-shape', `${where} (${item.type}) needs {"${item.type}": {"url": "..."}}.`)
      }
      if (!isHttpUrl(url)) {
        throw rule(
          'http-url',
          `${where} (${describeItem(item)}) must be an http(s) URL; got ${JSON.stringify(url)}.`,
        )
      }
    }
    if (item.role !== undefined && typeof item.role !== 'string') {
      throw rule('content-shape', `${where} has a role that is not a string.`)
    }
    if (!ROLES_BY_TYPE[item.type].includes(item.role)) {
      const allowed = ROLES_BY_TYPE[item.type].map((r) => r ?? '(none)').join(', ')
      throw rule(
        'item-role',
        `${where} (${item.type}) cannot have role ${item.role === undefined ? '(none)' : `"${item.role}"`}; allowed: ${allowed}.`,
      )
    }
  })
}

/**
 * Checks a content array against the rules of spec 2.1 (and, for regeneration by original video,
 * the one `base_video` item). Returns whether it is pure text-to-video.
 */
export function validateContent(content: unknown, purpose: ContentPurpose): {textOnly: boolean} {
  checkShapes(content)
  const texts = content.filter((c) => c.type === 'text')
  if (texts.length !== 1) {
    throw rule(
      'one-text',
      `content needs exactly one text item (the prompt, --text); it has ${texts.length}.`,
    )
  }
  if (!(texts[0] as {text: string}).text.trim()) {
    throw rule('one-text', 'the text item (the prompt) must not be empty.')
  }

  const bases = content.filter((c) => c.role === 'base_video')
  if (purpose === 'regeneration') {
    if (bases.length !== 1) {
      throw rule(
        'one-base-video',
        `regeneration by original video needs exactly one video_url item with role base_video; it has ${bases.length}.`,
      )
    }
  } else if (bases.length > 0) {
    throw rule('item-role', 'role base_video is only allowed in a regeneration request.')
  }

  const media = content.filter((c) => c.type !== 'text' && c.role !== 'base_video')
  const refs = media.filter((c) => (REFERENCE_ROLES as readonly string[]).includes(c.role ?? ''))
  const frames = media.filter((c) => c.type === 'image_url' && c.role !== 'reference_image')
  if (refs.length > 0 && frames.length > 0) {
    throw rule(
      'frames-xor-references',
      'frame images (first_frame, last_frame, or an image without role, which is a first frame) and reference items (reference_image, reference_video, reference_audio) cannot be combined.',
    )
  }
  if (frames.length > 0) {
    const roles = frames.map((f) => f.role ?? 'none').sort()
    const allowed = [['first_frame'], ['none'], ['last_frame'], ['first_frame', 'last_frame']]
    if (!allowed.some((a) => a.length === roles.length && a.every((r, i) => r === roles[i]))) {
      throw rule(
        'allowed-combination',
        `images allowed with the text: one (role first_frame or none), one with role last_frame, or two with roles first_frame and last_frame; got ${roles.join(' + ')}.`,
      )
    }
  }
  return {textOnly: media.length === 0}
}

/** The callback URL follows the same URL rule as the content. */
function checkCallbackUrl(url: string): string {
  if (!isHttpUrl(url))
    throw rule('http-url', `--callback-url must be an http(s) URL; got ${JSON.stringify(url)}.`)
  return url
}

/** Duration: a whole number of seconds, 4-15. */
export function validateDuration(duration: unknown): number {
  if (duration === undefined || (typeof duration === 'string' && duration.trim() === '')) {
    throw rule('duration', '--duration (-d) is required: whole seconds from 4 to 15.')
  }
  const n = typeof duration === 'string' ? Number(duration) : duration
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 4 || n > 15) {
    throw rule(
      'duration',
      `duration must be a whole number of seconds from 4 to 15; got ${String(duration)}.`,
    )
  }
  return n
}

/** Resolution: 768P or 2K for generation; only 2K for regeneration. */
export function validateResolution(resolution: unknown, purpose: 'generation' | 'regeneration'): string {
  const allowed: readonly string[] = purpose === 'regeneration' ? ['2K'] : GAMMA_RESOLUTIONS
  if (resolution === undefined && purpose === 'generation') {
    throw rule('resolution', `--resolution (-r) is required: ${allowed.join(' or ')}.`)
  }
  if (typeof resolution !== 'string' || !allowed.includes(resolution)) {
    throw rule(
      'resolution',
      `${purpose} resolution must be ${allowed.join(' or ')}; got ${resolution === undefined ? 'none' : String(resolution)}.`,
    )
  }
  return resolution
}

/** Ratio: one of the known values; pure text-to-video generation needs a concrete one. */
export function validateRatio(ratio: unknown, textOnlyGeneration: boolean): string | undefined {
  if (
    ratio !== undefined &&
    (typeof ratio !== 'string' || !(GAMMA_RATIOS as readonly string[]).includes(ratio))
  ) {
    throw rule('ratio', `ratio must be one of ${GAMMA_RATIOS.join(', ')}; got ${String(ratio)}.`)
  }
  if (textOnlyGeneration && (ratio === undefined || ratio === 'adaptive')) {
    throw rule(
      'text-to-video-ratio',
      `pure text-to-video needs a concrete ratio (${GAMMA_RATIOS.slice(1).join(', ')}), not adaptive.`,
    )
  }
  return ratio as string | undefined
}

export interface GenerationInput {
  content: unknown
  resolution?: string
  duration?: number | string
  ratio?: string
  watermark?: boolean
  callbackUrl?: string
}

/** A checked generation request (spec 2.2). */
export function buildGenerationRequest(input: GenerationInput): GammaGenerationRequest {
  const {textOnly} = validateContent(input.content, 'generation')
  const resolution = validateResolution(input.resolution, 'generation')
  const duration = validateDuration(input.duration)
  const ratio = validateRatio(input.ratio, textOnly)
  return {
    model: GAMMA_MODEL,
    content: input.content as GammaContentItem[],
    resolution,
    duration,
    ...(ratio === undefined ? {} : {ratio}),
    ...(input.watermark ? {aigc_watermark: true} : {}),
    ...(input.callbackUrl ? {callback_url: checkCallbackUrl(input.callbackUrl)} : {}),
  }
}

/** A checked context-analysis request (spec 2.2; no resolution). */
export function buildContextRequest(
  input: Omit<GenerationInput, 'resolution' | 'watermark'>,
): GammaContextRequest {
  validateContent(input.content, 'analysis')
  const duration = validateDuration(input.duration)
  const ratio = validateRatio(input.ratio, false)
  return {
    model: GAMMA_MODEL,
    content: input.content as GammaContentItem[],
    duration,
    ...(ratio === undefined ? {} : {ratio}),
    ...(input.callbackUrl ? {callback_url: checkCallbackUrl(input.callbackUrl)} : {}),
  }
}

export interface RegenerationInput {
  /** Form by task id. */
  sourceTaskId?: string
  /** Form by original video: the original content plus one base_video item. */
  content?: unknown
  resolution?: string
  watermark?: boolean
  callbackUrl?: string
}

/** A checked regeneration request in either form (spec 2.2). */
export function buildRegenerationRequest(input: RegenerationInput): GammaRegenerationRequest {
  if ((input.sourceTaskId === undefined) === (input.content === undefined)) {
    throw rule(
      'regeneration-form',
      'regeneration takes either a source task id or the original content with a base video, not both and not neither.',
    )
  }
  const resolution = validateResolution(input.resolution ?? '2K', 'regeneration')
  const common = {
    model: GAMMA_MODEL,
    resolution,
    ...(input.watermark ? {aigc_watermark: true} : {}),
    ...(input.callbackUrl ? {callback_url: checkCallbackUrl(input.callbackUrl)} : {}),
  }
  if (input.sourceTaskId !== undefined) {
    if (!input.sourceTaskId.trim()) throw rule('regeneration-form', 'the source task id is empty.')
    return {...common, source_task_id: input.sourceTaskId}
  }
  validateContent(input.content, 'regeneration')
  return {...common, content: input.content as GammaContentItem[]}
}

/** Parses a raw content array given with `--content FILE|-`. */
export function parseContentJson(text: string, source: string): unknown {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`${source} is not valid JSON: ${(error as Error).message}`, {
      code: 'invalid_content_file',
    })
  }
  // Accept a whole request body too, and take its content.
  if (value && typeof value === 'object' && !Array.isArray(value) && 'content' in value) {
    return (value as {content: unknown}).content
  }
  return value
}
