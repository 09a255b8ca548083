/**
 * An image as a Messages or Gemini upstream takes it. A client names its image's type itself (a
 * data URL's, a file's extension), and names it wrong often enough: a JPEG or WebP screenshot
 * saved as `.png` (claude-code #13131, #11975), Cherry Studio's `image/jpg`. Anthropic refuses a
 * wrong label ("Image does not match the provided media type image/png"), any type but JPEG, PNG,
 * GIF and WebP, and an image of more than 5 MB; Gemini refuses `image/jpg`, a GIF, a BMP. The image
 * stays in the history, so every later turn would be refused the same way and the conversation
 * would end there. The encoders write the type the image's bytes say (its first 12, from the first
 * 16 base64 characters: nothing else is decoded), and an image the upstream cannot take goes as
 * the line that says what was there (`omittedFileText`), so the conversation goes on. An image by
 * URL goes as it came: its bytes are the upstream's to fetch.
 */
import type {ImagePart} from './ir.js'
import {omittedFileText} from './ir.js'

/** The upstream families whose encoders fit images here. */
export type ImageUpstream = 'messages' | 'gemini'

const ACCEPTED: Readonly<Record<ImageUpstream, ReadonlySet<string>>> = {
  messages: new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']),
  // (Google's list: the others, `image/jpg` among them, are refused as "Unsupported MIME type")
  gemini: new Set(['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif']),
}

const WHY_TYPE: Readonly<Record<ImageUpstream, string>> = {
  messages: 'Anthropic takes JPEG, PNG, GIF and WebP images only',
  gemini: 'Gemini takes PNG, JPEG, WebP, HEIC and HEIF images only',
}

/**
 * Anthropic's limit, which it measures on the base64 text, not the bytes it decodes to ("image
 * exceeds 5 MB maximum: 6405384 bytes > 5242880 bytes" for a 4 804 036-byte GIF, langchain #21654).
 */
export const ANTHROPIC_IMAGE_MAX = 5 * 1024 * 1024

/** The ISO base media brands of HEIF images (HEIC: HEVC-coded) and AVIF. */
const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis'])
const HEIF_BRANDS = new Set(['mif1', 'msf1', 'mif2'])
const AVIF_BRANDS = new Set(['avif', 'avis'])

const ascii = (b: Buffer, from: number, to: number): string => b.toString('latin1', from, to)

/**
 * The image type that base64 `data` starts with (PNG, JPEG, GIF, WebP, BMP, TIFF, HEIC, HEIF,
 * AVIF), or undefined for bytes of none of these.
 */
export function sniffImageType(data: string): string | undefined {
  const b = Buffer.from(data.slice(0, 16), 'base64')
  if (b.length < 4) return undefined
  if (b[0] === 0x89 && ascii(b, 1, 4) === 'PNG') return 'image/png'
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg'
  const head = ascii(b, 0, 4)
  if (head === 'GIF8') return 'image/gif'
  if (head === 'RIFF' && b.length >= 12 && ascii(b, 8, 12) === 'WEBP') return 'image/webp'
  if (head === 'II*\0' || head === 'MM\0*') return 'image/tiff'
  if (b.length >= 12 && ascii(b, 4, 8) === 'ftyp') {
    const brand = ascii(b, 8, 12)
    if (HEIC_BRANDS.has(brand)) return 'image/heic'
    if (HEIF_BRANDS.has(brand)) return 'image/heif'
    if (AVIF_BRANDS.has(brand)) return 'image/avif'
    return undefined
  }
  if (head.startsWith('BM')) return 'image/bmp'
  return undefined
}

/** A claimed type as the upstreams spell it: lower case, `image/jpg` as `image/jpeg`. */
const normalised = (type: string): string => {
  const lower = type.toLowerCase()
  return lower === 'image/jpg' || lower === 'image/pjpeg' ? 'image/jpeg' : lower
}

/** The images an encoder left out, for the request's log row; `seen` counts the base64 images. */
export interface ImageNotes {
  seen: number
  leftOut?: string[]
}

const ordinal = (n: number): string => {
  const tens = n % 100
  const suffix =
    tens >= 11 && tens <= 13 ? 'th' : n % 10 === 1 ? 'st' : n % 10 === 2 ? 'nd' : n % 10 === 3 ? 'rd' : 'th'
  return `${n}${suffix}`
}

const megabytes = (chars: number): string => `${(chars / (1024 * 1024)).toFixed(1)} MB`

/**
 * A base64 image as `upstream` takes it: `mediaType`, the type its bytes say (else the one
 * claimed, normalised; else PNG), or `text`, the line in its place when the upstream takes no
 * image of its type or size (noted in `notes`). Not for documents nor images by URL.
 */
export function fitImage(
  p: ImagePart & {data: string},
  upstream: ImageUpstream,
  notes: ImageNotes,
): {mediaType: string; text?: undefined} | {text: string} {
  notes.seen++
  const claimed = p.mediaType === undefined ? undefined : normalised(p.mediaType)
  const mediaType = sniffImageType(p.data) ?? claimed ?? 'image/png'
  let why: string | undefined
  if (!ACCEPTED[upstream].has(mediaType)) why = WHY_TYPE[upstream]
  else if (upstream === 'messages' && p.data.length > ANTHROPIC_IMAGE_MAX)
    why = `${megabytes(p.data.length)} of base64, over Anthropic's 5 MB for an image`
  if (why === undefined) return {mediaType}
  ;(notes.leftOut ??= []).push(`the ${ordinal(notes.seen)} image (${mediaType}: ${why})`)
  return {text: omittedFileText({...p, mediaType}, why)}
}

/**
 * Where an encoder's body carries what it left out for the log row: a symbol, so the key is in
 * no JSON text and in none of the body's field names.
 */
export const ENCODER_NOTES = Symbol('gwctl.encoderNotes')

/** The row's note for the images `notes` says were left out (undefined: none). */
export function imageNote(notes: ImageNotes): string | undefined {
  const left = notes.leftOut
  if (!left) return undefined
  return `left out ${left.join(', ')}: a line in place of ${left.length > 1 ? 'each' : 'it'}`
}
