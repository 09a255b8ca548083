/**
 * Turns plain create options into the body of `POST /videos`, checking every rule of the spec
 * before anything is sent. Each broken rule is a {@link UsageError} whose message names the rule
 * and whose hint names the fix; softer problems come back as warnings (data, printed by the
 * command).
 */
import type {BetaTier, VideoModel} from '../api/video-catalog.js'
import {
  ALPHA_SHOT_TYPES,
  ALPHA_SIZES,
  BETA_DEFAULT_TIER,
  BETA_PROMPT_MAX,
  BETA_SIZES,
  REFERENCE_IMAGES_MAX,
  REFERENCE_IMAGES_MAX_WITH_VIDEOS,
  REFERENCE_VIDEOS_MAX,
  SEED_MAX,
  VIDEO_MODELS,
  alphaTierOfSize,
  betaTierOfSize,
  describeDuration,
  findVideoModel,
  findVideoModelLoose,
  normalizeSize,
} from '../api/video-catalog.js'
import type {VideoCreateBody} from '../api/videos.js'
import {UsageError} from '../core/errors.js'
import {HTTP_URL_HINT, isHttpUrl, parseParamValue} from '../core/input-rules.js'

/** How the two frames of a first-and-last-frame request go on the wire (spec 4.3.2). */
export type FramesShape = 'fields' | 'reference-images'

/**
 * Default frame shape: the named fields. The parameter table of spec 2.3 is the contract and
 * names `first_frame_url`/`last_frame_url` as required; the two-element `reference_images` array
 * only appears in one sample, and named fields cannot swap first and last by accident.
 */
export const DEFAULT_FRAMES_SHAPE: FramesShape = 'fields'

/** Create options, free of flags. Numbers may arrive as text; they are checked, not trusted. */
export interface VideoRequestOptions {
  model: string
  prompt?: string
  imgUrl?: string
  refVideos?: string[]
  /** Alpha */
  seconds?: number | string
  size?: string
  /** Alpha: `false` sends `prompt_extend: false`. */
  promptExtend?: boolean
  shotType?: string
  audioUrl?: string
  callbackUrl?: string
  /** Beta */
  firstFrame?: string
  lastFrame?: string
  refImages?: string[]
  duration?: number | string
  resolution?: string
  audio?: boolean
  watermark?: boolean
  seed?: number | string
  /** `key=value` pairs added to the body as they are (values JSON-parsed when they parse). */
  params?: string[]
  /** Provider-native format: JSON text of `input` and `parameters`. */
  nativeInput?: string
  nativeParameters?: string
  framesAs?: FramesShape
  /** false skips the rules of the spec (the body is still built). */
  validate?: boolean
}

export interface VideoRequest {
  body: VideoCreateBody
  /** The catalog entry, when the model is known. */
  model?: VideoModel
  native: boolean
  warnings: string[]
}

type Body = Record<string, unknown> & {model: string}

/** Options field -> body field, the flag that sets it, and where it applies. */
interface FieldSpec {
  option: keyof VideoRequestOptions
  flag: string
  field: string
  /** Which models accept it; a message says what it is for. */
  applies: (m: VideoModel) => boolean
  for: string
}

const alpha = (m: VideoModel): boolean => m.family === 'Alpha'
const betaModel = (m: VideoModel): boolean => m.family === 'Beta'

const FIELDS: readonly FieldSpec[] = [
  {option: 'prompt', flag: '--prompt', field: 'prompt', applies: () => true, for: 'every model'},
  {
    option: 'imgUrl',
    flag: '--img-url',
    field: 'img_url',
    applies: (m) => m.mode === 'image-to-video',
    for: 'image-to-video models',
  },
  {
    option: 'refVideos',
    flag: '--ref-video',
    field: 'reference_video_urls',
    applies: (m) => m.mode === 'reference-video-to-video' || Boolean(m.acceptsReferenceVideos),
    for: 'Alpha2.6-R2V and BetaQ2-Pro-Reference2Video',
  },
  {
    option: 'seconds',
    flag: '--seconds',
    field: 'seconds',
    applies: alpha,
    for: 'Alpha models (Beta: --duration)',
  },
  {option: 'size', flag: '--size', field: 'size', applies: () => true, for: 'every model'},
  {
    option: 'promptExtend',
    flag: '--no-prompt-extend',
    field: 'prompt_extend',
    applies: alpha,
    for: 'Alpha models',
  },
  {option: 'shotType', flag: '--shot-type', field: 'shot_type', applies: alpha, for: 'Alpha models'},
  {
    option: 'audioUrl',
    flag: '--audio-url',
    field: 'audio_url',
    applies: alpha,
    for: 'Alpha models (Beta: --audio)',
  },
  {option: 'callbackUrl', flag: '--callback-url', field: 'callback_url', applies: alpha, for: 'Alpha models'},
  {
    option: 'firstFrame',
    flag: '--first-frame',
    field: 'first_frame_url',
    applies: (m) => m.mode === 'first-last-frame',
    for: 'first-and-last-frame models (*-Start-End2Video)',
  },
  {
    option: 'lastFrame',
    flag: '--last-frame',
    field: 'last_frame_url',
    applies: (m) => m.mode === 'first-last-frame',
    for: 'first-and-last-frame models (*-Start-End2Video)',
  },
  {
    option: 'refImages',
    flag: '--ref-image',
    field: 'reference_images',
    applies: (m) => m.mode === 'reference-to-video',
    for: 'BetaQ2-Pro-Reference2Video',
  },
  {
    option: 'duration',
    flag: '--duration',
    field: 'duration',
    applies: betaModel,
    for: 'Beta models (Alpha: --seconds)',
  },
  {option: 'resolution', flag: '--resolution', field: 'resolution', applies: betaModel, for: 'Beta models'},
  {
    option: 'audio',
    flag: '--audio',
    field: 'audio',
    applies: betaModel,
    for: 'Beta models (Alpha: --audio-url)',
  },
  {option: 'watermark', flag: '--watermark', field: 'watermark', applies: betaModel, for: 'Beta models'},
  {option: 'seed', flag: '--seed', field: 'seed', applies: betaModel, for: 'Beta models'},
]

const URL_FIELDS = [
  'img_url',
  'audio_url',
  'callback_url',
  'first_frame_url',
  'last_frame_url',
  'reference_images',
  'reference_video_urls',
] as const

function rule(code: string, message: string, hint?: string): UsageError {
  return new UsageError(message, {code, hint})
}

/** `"5"` -> 5 for integer-looking text; anything else unchanged (and then refused by the rules). */
export function numberish(value: number | string | undefined): number | string | undefined {
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return Number(value.trim())
  return value
}

/** Parses `key=value` pairs; values are JSON when they parse (`5`, `true`, `{"a":1}`), else text. */
export function parseParams(
  pairs: readonly string[] = [],
  onWarning?: (warning: string) => void,
): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const pair of pairs) {
    const eq = pair.indexOf('=')
    const key = eq === -1 ? '' : pair.slice(0, eq).trim()
    if (!key) {
      throw rule(
        'invalid_param',
        `--param "${pair}" is not key=value.`,
        'Example: --param sim_outcome=failed',
      )
    }
    if (key === '__proto__') {
      // `out['__proto__'] = ...` would replace the prototype, not add a field
      throw rule('invalid_param', `--param "${pair}": "__proto__" is not a field name.`)
    }
    const {value, warning} = parseParamValue(key, pair.slice(eq + 1))
    out[key] = value
    if (warning) onWarning?.(warning)
  }
  return out
}

function parseJsonObject(text: string, flag: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw rule(
      'invalid_json',
      `${flag} is not valid JSON: ${(error as Error).message}.`,
      `Example: ${flag} '{"prompt":"a cat"}'`,
    )
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw rule('invalid_json', `${flag} must be a JSON object.`, `Example: ${flag} '{"prompt":"a cat"}'`)
  }
  return value as Record<string, unknown>
}

function knownModel(name: string): VideoModel {
  const model = findVideoModel(name) ?? findVideoModelLoose(name)
  if (!model) {
    throw rule(
      'unknown_model',
      `Unknown video model "${name}".`,
      `Known models: ${VIDEO_MODELS.map((m) => m.name).join(', ')} (see \`gwctl video models\`).`,
    )
  }
  return model
}

/** Builds (and unless told not to, validates) the create body. Nothing is sent here. */
export function buildVideoRequest(options: VideoRequestOptions): VideoRequest {
  const validate = options.validate !== false
  const paramWarnings: string[] = []
  const params = parseParams(options.params, (w) => paramWarnings.push(w))
  if (options.nativeInput !== undefined || options.nativeParameters !== undefined) {
    const native = buildNative(options, params, validate)
    return {...native, warnings: [...paramWarnings, ...native.warnings]}
  }
  const model = validate ? knownModel(options.model) : findVideoModel(options.model)
  const name = model?.name ?? options.model
  if (validate && model) checkFlagsApply(options, model)

  const body: Body = {model: name}
  const set = (field: string, value: unknown): void => {
    if (value !== undefined) body[field] = value
  }
  set('prompt', options.prompt)
  set('img_url', options.imgUrl)
  const framesAs = options.framesAs ?? DEFAULT_FRAMES_SHAPE
  if (options.firstFrame !== undefined || options.lastFrame !== undefined) {
    if (framesAs === 'reference-images') {
      if (options.firstFrame === undefined || options.lastFrame === undefined) {
        throw rule(
          'missing_field',
          `${name} needs both frames: --first-frame and --last-frame.`,
          'The two frames go on the wire as reference_images [first, last] (--frames-as reference-images).',
        )
      }
      set('reference_images', [options.firstFrame, options.lastFrame])
    } else {
      set('first_frame_url', options.firstFrame)
      set('last_frame_url', options.lastFrame)
    }
  }
  if (options.refImages?.length) set('reference_images', [...options.refImages])
  if (options.refVideos?.length) set('reference_video_urls', [...options.refVideos])
  set('seconds', numberish(options.seconds))
  set('duration', numberish(options.duration))
  set('size', options.size === undefined ? undefined : normalizeSize(options.size))
  set('resolution', options.resolution === undefined ? undefined : options.resolution.trim().toUpperCase())
  if (options.promptExtend === false) body.prompt_extend = false
  set('shot_type', options.shotType)
  set('audio_url', options.audioUrl)
  set('callback_url', options.callbackUrl)
  set('audio', options.audio)
  set('watermark', options.watermark)
  set('seed', numberish(options.seed))
  // Passthrough: unknown parameters go as they are (spec 1.5); known ones meet the same rules.
  Object.assign(body, params)
  body.model = name

  const warnings: string[] = [...paramWarnings]
  if (validate && model) {
    if (model.duration.required && body.duration === undefined) body.duration = model.duration.default
    validateStandardBody(body, model, warnings)
  }
  return {body, model, native: false, warnings}
}

/** Flags of the other family or of another mode are refused, naming the flag for this model. */
function checkFlagsApply(options: VideoRequestOptions, model: VideoModel): void {
  for (const spec of FIELDS) {
    const value = options[spec.option]
    if (value === undefined || (Array.isArray(value) && value.length === 0)) continue
    if (!spec.applies(model)) {
      throw rule(
        'field_not_for_model',
        `${spec.flag} (${spec.field}) does not apply to ${model.name} (${model.family}, ${model.mode}): it is for ${spec.for}.`,
        'Drop the flag, pick another model (`gwctl video models`), or send it anyway with --param / --no-validate.',
      )
    }
  }
}

function buildNative(
  options: VideoRequestOptions,
  params: Record<string, unknown>,
  validate: boolean,
): VideoRequest {
  const standard = FIELDS.filter((f) => {
    const v = options[f.option]
    return v !== undefined && !(Array.isArray(v) && v.length === 0)
  }).map((f) => f.flag)
  if (standard.length > 0) {
    throw rule(
      'native_and_standard',
      // spec 1.4: the native format wins over the standard fields
      `${standard.join(', ')} cannot be combined with --native-input/--native-parameters: the platform would use the native body and drop them.`,
      'Put those values into --native-input or --native-parameters instead.',
    )
  }
  if (options.nativeInput === undefined) {
    throw rule(
      'missing_field',
      '--native-parameters needs --native-input (the native format requires input).',
    )
  }
  const input = parseJsonObject(options.nativeInput, '--native-input')
  const parameters =
    options.nativeParameters === undefined
      ? undefined
      : parseJsonObject(options.nativeParameters, '--native-parameters')
  const model = validate ? knownModel(options.model) : findVideoModelLoose(options.model)
  // The native format writes the model name in lower case (spec 2.1).
  const name = (model?.name ?? options.model).toLowerCase()
  const body: Body = {model: name, input, ...(parameters ? {parameters} : {})}
  Object.assign(body, params)
  body.model = name
  return {body, model, native: true, warnings: []}
}

/** Checks a standard-format body against the model's rules; pushes soft problems to `warnings`. */
export function validateStandardBody(
  body: Record<string, unknown>,
  model: VideoModel,
  warnings: string[],
): void {
  checkUrls(body)
  if (model.family === 'Alpha') validateAlpha(body, model)
  else validateBeta(body, model, warnings)
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== ''
}

function requirePrompt(body: Record<string, unknown>, model: VideoModel, why: string): void {
  if (!isNonEmptyString(body.prompt)) {
    throw rule('missing_field', `${model.name} needs a non-empty prompt (${why}).`, 'Add --prompt "..."')
  }
}

function checkUrls(body: Record<string, unknown>): void {
  for (const field of URL_FIELDS) {
    const value = body[field]
    if (value === undefined) continue
    const list = Array.isArray(value) ? value : [value]
    for (const item of list) {
      if (!isHttpUrl(item)) {
        throw rule(
          'invalid_url',
          `${field} must hold http(s) URLs; got ${JSON.stringify(item)}.`,
          HTTP_URL_HINT,
        )
      }
    }
  }
}

function checkPositiveInteger(body: Record<string, unknown>, field: string, flag: string): void {
  const value = body[field]
  if (value === undefined) return
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw rule(
      'invalid_seconds',
      `${field} must be a positive integer (whole seconds); got ${JSON.stringify(value)}.`,
      `Example: ${flag} 5`,
    )
  }
}

function checkBoolean(body: Record<string, unknown>, field: string): void {
  const value = body[field]
  if (value !== undefined && typeof value !== 'boolean') {
    throw rule('invalid_boolean', `${field} must be true or false; got ${JSON.stringify(value)}.`)
  }
}

function validateAlpha(body: Record<string, unknown>, model: VideoModel): void {
  requirePrompt(body, model, 'every Alpha mode needs one')
  if (model.mode === 'image-to-video' && !isNonEmptyString(body.img_url)) {
    throw rule('missing_field', `${model.name} (image to video) needs img_url.`, 'Add --img-url https://...')
  }
  if (model.mode === 'reference-video-to-video') {
    const videos = body.reference_video_urls
    if (!Array.isArray(videos) || videos.length === 0) {
      throw rule(
        'missing_field',
        `${model.name} (reference video to video) needs reference_video_urls.`,
        'Add --ref-video https://... (repeatable).',
      )
    }
  }
  checkPositiveInteger(body, 'seconds', '--seconds')
  if (body.size !== undefined) body.size = alphaSize(body.size, model)
  checkBoolean(body, 'prompt_extend')
  if (body.shot_type !== undefined && !(ALPHA_SHOT_TYPES as readonly unknown[]).includes(body.shot_type)) {
    throw rule(
      'invalid_shot_type',
      `shot_type must be "single" or "multi" (default multi); got ${JSON.stringify(body.shot_type)}.`,
      'Example: --shot-type single',
    )
  }
}

/** An Alpha size written the platform's way, or a usage error listing the tier lists. */
export function alphaSize(value: unknown, model: VideoModel): string {
  const text = typeof value === 'string' ? value : String(value)
  const tierLabel = text.trim().toUpperCase()
  // The spec shows an image-to-video request carrying a tier label in size (2.2).
  if (model.mode === 'image-to-video' && (tierLabel === '720P' || tierLabel === '1080P')) return tierLabel
  const size = normalizeSize(text)
  if (alphaTierOfSize(size) === undefined) {
    throw rule(
      'invalid_size',
      `size "${text}" is not an Alpha size. 720P: ${ALPHA_SIZES['720P'].join(', ')}; 1080P: ${ALPHA_SIZES['1080P'].join(', ')}.`,
      `Use width*height or widthxheight, e.g. --size 1280x720${model.mode === 'image-to-video' ? ' (or a tier label: 720P, 1080P)' : ''}.`,
    )
  }
  return size
}

function validateBeta(body: Record<string, unknown>, model: VideoModel, warnings: string[]): void {
  switch (model.mode) {
    case 'text-to-video':
      requirePrompt(body, model, 'text to video')
      break
    case 'image-to-video':
      if (!isNonEmptyString(body.img_url)) {
        throw rule(
          'missing_field',
          `${model.name} (first-frame image to video) needs img_url.`,
          'Add --img-url https://...',
        )
      }
      break
    case 'first-last-frame':
      requirePrompt(body, model, 'it describes the change between the frames')
      checkFrames(body, model)
      break
    case 'reference-to-video':
      requirePrompt(body, model, 'reference to video')
      break
  }
  if (body.prompt !== undefined) {
    if (typeof body.prompt !== 'string') throw rule('invalid_prompt', 'prompt must be text.')
    const length = [...body.prompt].length
    if (length > BETA_PROMPT_MAX) {
      throw rule(
        'prompt_too_long',
        `prompt has ${length} characters; Beta models take at most ${BETA_PROMPT_MAX}.`,
        'Shorten the prompt.',
      )
    }
  }
  checkDuration(body, model)
  checkResolution(body, model)
  checkBetaSize(body, warnings)
  checkBoolean(body, 'audio')
  checkBoolean(body, 'watermark')
  if (body.audio === true) checkAudio(model, warnings)
  if (body.seed !== undefined) {
    const seed = body.seed
    if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0 || seed > SEED_MAX) {
      throw rule(
        'invalid_seed',
        `seed must be an integer from 0 to ${SEED_MAX}; got ${JSON.stringify(seed)}.`,
        'Example: --seed 42',
      )
    }
  }
  checkReferences(body, model)
}

function checkFrames(body: Record<string, unknown>, model: VideoModel): void {
  const named = isNonEmptyString(body.first_frame_url) && isNonEmptyString(body.last_frame_url)
  const images = body.reference_images
  const asArray = Array.isArray(images) && images.length === 2
  if (Array.isArray(images) && images.length !== 2) {
    throw rule(
      'invalid_frames',
      `${model.name}: reference_images in first-and-last-frame mode must hold exactly 2 URLs [first, last]; got ${images.length}.`,
      'Use --first-frame URL --last-frame URL.',
    )
  }
  if (!named && !asArray) {
    throw rule(
      'missing_field',
      `${model.name} (first and last frame) needs both frames: first_frame_url and last_frame_url.`,
      'Add --first-frame https://... --last-frame https://...',
    )
  }
}

function checkDuration(body: Record<string, unknown>, model: VideoModel): void {
  const value = body.duration
  if (value === undefined) return
  const rule_ = model.duration
  const ok =
    typeof value === 'number' &&
    Number.isInteger(value) &&
    ((value >= rule_.min && value <= (rule_.max ?? Infinity)) || (value === 0 && rule_.allowsZero === true))
  if (!ok) {
    throw rule(
      'invalid_duration',
      `duration ${JSON.stringify(value)} is out of range for ${model.name}: ${describeDuration(rule_)}.`,
      `Example: --duration ${rule_.default ?? rule_.min}${rule_.allowsZero ? ' (0 lets the model plan the length, up to 10 s)' : ''}`,
    )
  }
}

function checkResolution(body: Record<string, unknown>, model: VideoModel): void {
  const allowed = model.resolutions ?? []
  if (body.resolution === undefined) {
    if (model.resolutionRequired) {
      throw rule(
        'missing_field',
        `${model.name} (first and last frame) needs resolution: ${allowed.join(', ')}.`,
        'Add --resolution 720P',
      )
    }
    return
  }
  const value = typeof body.resolution === 'string' ? body.resolution.trim().toUpperCase() : body.resolution
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw rule(
      'invalid_resolution',
      `resolution ${JSON.stringify(body.resolution)} is not accepted by ${model.name}: ${allowed.join(', ')}.`,
      `Example: --resolution ${allowed.includes('720P') ? '720P' : allowed[0]}`,
    )
  }
  body.resolution = value
}

function checkBetaSize(body: Record<string, unknown>, warnings: string[]): void {
  if (body.size === undefined) return
  if (typeof body.size !== 'string')
    throw rule('invalid_size', `size must be text like 1280*720; got ${JSON.stringify(body.size)}.`)
  const size = normalizeSize(body.size)
  body.size = size
  const tier = body.resolution as BetaTier | undefined
  if (tier !== undefined) {
    const sizes = Object.values(BETA_SIZES[tier])
    if (!sizes.includes(size)) {
      throw rule(
        'size_not_in_tier',
        `size ${size} does not belong to resolution ${tier}: ${sizes.join(', ')}.`,
        `Pick a size of the ${tier} row, or the resolution whose row holds ${size}${betaTierOfSize(size) ? ` (${betaTierOfSize(size)})` : ''}.`,
      )
    }
    return
  }
  if (betaTierOfSize(size) === undefined) {
    throw rule(
      'invalid_size',
      `size ${size} is not a Beta size (see \`gwctl video models\` for the table by tier).`,
      'Example: --resolution 720P --size 1280*720',
    )
  }
  warnings.push(
    `size ${size} without resolution is ignored by the platform: the default ${BETA_DEFAULT_TIER} with ${BETA_SIZES[BETA_DEFAULT_TIER]['16:9']} applies. Add --resolution ${betaTierOfSize(size)} to fix the aspect ratio.`,
  )
}

function checkAudio(model: VideoModel, warnings: string[]): void {
  if (model.audio === 'supported') return
  if (model.audio === 'listed-as-supported') {
    warnings.push(
      // spec 4.3.3: the model table and the parameter text disagree
      `--audio on ${model.name}: audio is documented for the Q3 models (BetaQ3-*); whether ${model.name} honours it is not documented. Leave out --audio, or pick a Q3 model.`,
    )
    return
  }
  throw rule(
    'audio_not_supported',
    `${model.name} does not support audio (${model.audio === 'not-stated' ? 'not stated for this model; the parameter text limits audio to the Q3 series' : 'model table: not supported'}).`,
    'Drop --audio, or pick a Q3 model (`gwctl video models`).',
  )
}

function checkReferences(body: Record<string, unknown>, model: VideoModel): void {
  const videos = body.reference_video_urls
  if (videos !== undefined) {
    if (!model.acceptsReferenceVideos) {
      throw rule(
        'invalid_reference_videos',
        `reference_video_urls are accepted only by BetaQ2-Pro-Reference2Video among Beta models, not ${model.name}.`,
        'Drop --ref-video or use BetaQ2-Pro-Reference2Video.',
      )
    }
    if (!Array.isArray(videos) || videos.length < 1 || videos.length > REFERENCE_VIDEOS_MAX) {
      throw rule(
        'invalid_reference_videos',
        `reference_video_urls must hold 1-${REFERENCE_VIDEOS_MAX} videos; got ${Array.isArray(videos) ? videos.length : JSON.stringify(videos)}.`,
        `Give --ref-video at most ${REFERENCE_VIDEOS_MAX} times.`,
      )
    }
  }
  if (model.mode !== 'reference-to-video') return
  const images = body.reference_images
  const withVideos = Array.isArray(videos) && videos.length > 0
  const max = withVideos ? REFERENCE_IMAGES_MAX_WITH_VIDEOS : REFERENCE_IMAGES_MAX
  if (!Array.isArray(images) || images.length === 0) {
    throw rule(
      'missing_field',
      `${model.name} (reference to video) needs reference_images (1-${max}).`,
      'Add --ref-image https://... (repeatable).',
    )
  }
  if (images.length > max) {
    throw rule(
      'invalid_reference_images',
      `reference_images: at most ${max} images${withVideos ? ' when reference videos accompany them' : ''}; got ${images.length}.`,
      withVideos
        ? `With --ref-video, give --ref-image at most ${max} times.`
        : `Give --ref-image at most ${max} times.`,
    )
  }
}
