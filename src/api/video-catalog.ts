/**
 * The video models of `{base_url}/videos` (spec videos-api.md 2.1-2.3) and their field rules, as
 * data. Validation (`src/services/video-request.ts`), `gwctl video models` and the simulator all
 * read this table, so the rules live in one place.
 */

/** The two model families of the `/videos` API. */
export type VideoFamily = 'Alpha' | 'Beta'

/** What a model makes, and so which inputs it needs. */
export type VideoMode =
  'text-to-video' | 'image-to-video' | 'reference-video-to-video' | 'first-last-frame' | 'reference-to-video'

/**
 * Audio support as the spec's model table states it:
 * - `audio-url`: Alpha, audio driven by an `audio_url` input (no `audio` switch);
 * - `supported` / `not-supported`;
 * - `listed-as-supported`: the table says supported but the parameter text limits `audio` to the
 *   Q3 series (spec 4.3.3); gwctl sends it and warns;
 * - `not-stated`: the table says nothing; treated as not supported.
 */
export type AudioSupport = 'audio-url' | 'supported' | 'not-supported' | 'listed-as-supported' | 'not-stated'

export type BetaTier = '540P' | '720P' | '1080P'
export type AlphaTier = '720P' | '1080P'

/** Duration rule of a model: `seconds` (Alpha, positive integer, no upper bound) or `duration`. */
export interface DurationRule {
  field: 'seconds' | 'duration'
  min: number
  /** Upper bound; undefined for Alpha (any positive integer). */
  max?: number
  default?: number
  /** 0 is accepted and means "planned automatically, at most `max`". */
  allowsZero?: boolean
  /** The spec marks duration as required for this mode (gwctl sends the default when omitted). */
  required?: boolean
}

export interface VideoModel {
  name: string
  family: VideoFamily
  mode: VideoMode
  /** Beta generation (Q3 or Q2); decides resolutions and audio. */
  series?: 'Q3' | 'Q2'
  duration: DurationRule
  audio: AudioSupport
  /** Beta resolution tiers accepted by this model's mode (undefined for Alpha). */
  resolutions?: readonly BetaTier[]
  /** Beta: `resolution` must be sent (first-last-frame mode). */
  resolutionRequired?: boolean
  /** Beta reference mode: reference videos may accompany the images. */
  acceptsReferenceVideos?: boolean
}

const ALL_TIERS: readonly BetaTier[] = ['540P', '720P', '1080P']
const Q2_I2V_TIERS: readonly BetaTier[] = ['720P', '1080P']
const ALPHA_SECONDS: DurationRule = {field: 'seconds', min: 1}
const beta = (max: number, extra: Partial<DurationRule> = {}): DurationRule => ({
  field: 'duration',
  min: 1,
  max,
  default: 5,
  ...extra,
})

/** Every model of spec 2.1, in the spec's order. */
export const VIDEO_MODELS: readonly VideoModel[] = [
  {name: 'Alpha2.6-T2V', family: 'Alpha', mode: 'text-to-video', duration: ALPHA_SECONDS, audio: 'audio-url'},
  {
    name: 'Alpha2.6-I2V',
    family: 'Alpha',
    mode: 'image-to-video',
    duration: ALPHA_SECONDS,
    audio: 'audio-url',
  },
  {
    name: 'Alpha2.6-R2V',
    family: 'Alpha',
    mode: 'reference-video-to-video',
    duration: ALPHA_SECONDS,
    audio: 'audio-url',
  },
  {
    name: 'BetaQ3-Pro-Text2Video',
    family: 'Beta',
    mode: 'text-to-video',
    series: 'Q3',
    duration: beta(16),
    audio: 'supported',
    resolutions: ALL_TIERS,
  },
  {
    name: 'BetaQ3-Turbo-Text2Video',
    family: 'Beta',
    mode: 'text-to-video',
    series: 'Q3',
    duration: beta(16),
    audio: 'supported',
    resolutions: ALL_TIERS,
  },
  {
    name: 'BetaQ2-Text2Video',
    family: 'Beta',
    mode: 'text-to-video',
    series: 'Q2',
    duration: beta(10),
    audio: 'not-supported',
    resolutions: ALL_TIERS,
  },
  {
    name: 'BetaQ3-Pro-Img2Video',
    family: 'Beta',
    mode: 'image-to-video',
    series: 'Q3',
    duration: beta(16),
    audio: 'supported',
    resolutions: ALL_TIERS,
  },
  {
    name: 'BetaQ3-Turbo-Img2Video',
    family: 'Beta',
    mode: 'image-to-video',
    series: 'Q3',
    duration: beta(16),
    audio: 'supported',
    resolutions: ALL_TIERS,
  },
  {
    name: 'BetaQ2-Pro-Img2Video',
    family: 'Beta',
    mode: 'image-to-video',
    series: 'Q2',
    duration: beta(10),
    audio: 'not-supported',
    resolutions: Q2_I2V_TIERS,
  },
  {
    name: 'BetaQ2-Turbo-Img2Video',
    family: 'Beta',
    mode: 'image-to-video',
    series: 'Q2',
    duration: beta(16),
    audio: 'listed-as-supported',
    resolutions: Q2_I2V_TIERS,
  },
  {
    name: 'BetaQ3-Pro-Start-End2Video',
    family: 'Beta',
    mode: 'first-last-frame',
    series: 'Q3',
    duration: beta(16, {required: true}),
    audio: 'supported',
    resolutions: ALL_TIERS,
    resolutionRequired: true,
  },
  {
    name: 'BetaQ2-Pro-Start-End2Video',
    family: 'Beta',
    mode: 'first-last-frame',
    series: 'Q2',
    duration: beta(16, {required: true}),
    audio: 'listed-as-supported',
    resolutions: ALL_TIERS,
    resolutionRequired: true,
  },
  {
    name: 'BetaQ2-Turbo-Start-End2Video',
    family: 'Beta',
    mode: 'first-last-frame',
    series: 'Q2',
    duration: beta(10, {required: true}),
    audio: 'not-supported',
    resolutions: ALL_TIERS,
    resolutionRequired: true,
  },
  {
    name: 'BetaQ2-Pro-Reference2Video',
    family: 'Beta',
    mode: 'reference-to-video',
    series: 'Q2',
    duration: beta(10, {required: true, allowsZero: true}),
    audio: 'not-stated',
    resolutions: ALL_TIERS,
    acceptsReferenceVideos: true,
  },
]

/** Alpha sizes per tier (spec 2.2), width*height. */
export const ALPHA_SIZES: Readonly<Record<AlphaTier, readonly string[]>> = {
  '720P': ['1280*720', '720*1280', '960*960', '1088*832', '832*1088'],
  '1080P': ['1920*1080', '1080*1920', '1440*1440', '1632*1248', '1248*1632'],
}

/** Aspect ratios of the Beta size table, in the spec's column order (16:9 is the default). */
export const BETA_ASPECTS = ['16:9', '9:16', '1:1', '4:3', '3:4'] as const

/** Beta sizes per tier and aspect ratio (spec 2.3). */
export const BETA_SIZES: Readonly<Record<BetaTier, Readonly<Record<(typeof BETA_ASPECTS)[number], string>>>> =
  {
    '540P': {'16:9': '960*528', '9:16': '528*960', '1:1': '720*720', '4:3': '816*608', '3:4': '608*816'},
    '720P': {'16:9': '1280*720', '9:16': '720*1280', '1:1': '960*960', '4:3': '1104*816', '3:4': '816*1104'},
    '1080P': {
      '16:9': '1920*1080',
      '9:16': '1080*1920',
      '1:1': '1440*1440',
      '4:3': '1674*1238',
      '3:4': '1238*1674',
    },
  }

/** Beta's default tier and the size used when `size` is sent without `resolution`. */
export const BETA_DEFAULT_TIER: BetaTier = '720P'

export const BETA_PROMPT_MAX = 5000
export const SEED_MAX = 2_147_483_647
export const REFERENCE_IMAGES_MAX = 7
export const REFERENCE_IMAGES_MAX_WITH_VIDEOS = 4
export const REFERENCE_VIDEOS_MAX = 2
export const ALPHA_SHOT_TYPES = ['single', 'multi'] as const

/** The model with this exact name, or undefined. */
export function findVideoModel(name: string): VideoModel | undefined {
  return VIDEO_MODELS.find((m) => m.name === name)
}

/** The model whose name matches case-insensitively (the native format writes it in lower case). */
export function findVideoModelLoose(name: string): VideoModel | undefined {
  const lower = name.toLowerCase()
  return VIDEO_MODELS.find((m) => m.name.toLowerCase() === lower)
}

/** A size with `x`/`X` separators written the platform's way (`1280x720` -> `1280*720`). */
export function normalizeSize(size: string): string {
  return size.trim().replace(/\s*[xX×]\s*/, '*')
}

/** The Beta tier whose table holds this size, if any. */
export function betaTierOfSize(size: string): BetaTier | undefined {
  return (Object.keys(BETA_SIZES) as BetaTier[]).find((tier) =>
    Object.values(BETA_SIZES[tier]).includes(size),
  )
}

/** The Alpha tier whose list holds this size, if any. */
export function alphaTierOfSize(size: string): AlphaTier | undefined {
  return (Object.keys(ALPHA_SIZES) as AlphaTier[]).find((tier) => ALPHA_SIZES[tier].includes(size))
}

/** Human text of a duration rule: "1-16 s, default 5", "positive integer". */
export function describeDuration(rule: DurationRule): string {
  if (rule.max === undefined) return 'positive integer'
  const range = `${rule.allowsZero ? '0 (auto) or ' : ''}${rule.min}-${rule.max} s`
  return rule.default === undefined ? range : `${range}, default ${rule.default}`
}
