/**
 * How Anthropic and Gemini refuse an image they cannot take, in their words: Anthropic checks a
 * base64 image's bytes against the type it was given ("Image does not match the provided media
 * type image/png", claude-code #13131) and its base64 text against 5 MB ("image exceeds 5 MB
 * maximum: 6278112 bytes > 5242880 bytes"; its four types are checked with the history,
 * turn-checks.ts); Gemini takes PNG, JPEG, WebP, HEIC and HEIF ("Unsupported MIME type:
 * image/gif"; `image/jpg` too). Bytes of no image type the simulator knows (a test's few
 * placeholder bytes) pass as what they claim.
 */
type Body = Record<string, unknown>

const ANTHROPIC_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp']
const GEMINI_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/heic', 'image/heif']
const MAX_BASE64 = 5 * 1024 * 1024

/** The type of the image whose base64 starts `data`, among Anthropic's four. */
function imageType(data: string): string | undefined {
  const b = Buffer.from(data.slice(0, 16), 'base64')
  if (b[0] === 0x89 && b.toString('latin1', 1, 4) === 'PNG') return 'image/png'
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg'
  if (b.toString('latin1', 0, 4) === 'GIF8') return 'image/gif'
  if (b.toString('latin1', 0, 4) === 'RIFF' && b.toString('latin1', 8, 12) === 'WEBP') return 'image/webp'
  return undefined
}

/** Anthropic's refusal of an image block at `path`, or undefined. */
function anthropicImage(block: Body, path: string): string | undefined {
  const source = block.source as Body | undefined
  if (block.type !== 'image' || source?.type !== 'base64') return undefined
  const type = String(source.media_type)
  const data = typeof source.data === 'string' ? source.data : ''
  // (a type it takes none of: turn-checks.ts `messagesMediaProblem`)
  if (!ANTHROPIC_TYPES.includes(type)) return undefined
  if (data.length > MAX_BASE64)
    return `${path}.image.source.base64: image exceeds 5 MB maximum: ${data.length} bytes > ${MAX_BASE64} bytes`
  const actual = imageType(data)
  if (actual !== undefined && actual !== type)
    return `${path}.image.source.base64.data: Image does not match the provided media type ${type}`
  return undefined
}

/** Anthropic's refusal of an image of a Messages body (in a turn or a tool's result), or undefined. */
export function messagesImageProblem(body: Body): string | undefined {
  if (!Array.isArray(body.messages)) return undefined
  for (const [i, m] of (body.messages as Body[]).entries()) {
    if (!Array.isArray(m?.content)) continue
    for (const [j, block] of (m.content as Body[]).entries()) {
      const own = anthropicImage(block ?? {}, `messages.${i}.content.${j}`)
      if (own) return own
      if (block?.type === 'tool_result' && Array.isArray(block.content))
        for (const [k, inner] of (block.content as Body[]).entries()) {
          const nested = anthropicImage(inner ?? {}, `messages.${i}.content.${j}.tool_result.content.${k}`)
          if (nested) return nested
        }
    }
  }
  return undefined
}

/** Gemini's refusal of an inline image of a type it does not read, or undefined. */
export function geminiImageProblem(contents: unknown): string | undefined {
  if (!Array.isArray(contents)) return undefined
  for (const c of contents as Body[]) {
    if (!Array.isArray(c?.parts)) continue
    for (const p of c.parts as Body[]) {
      const type = (p?.inlineData as Body | undefined)?.mimeType
      if (typeof type === 'string' && type.startsWith('image/') && !GEMINI_TYPES.includes(type))
        return `Unsupported MIME type: ${type}`
    }
  }
  return undefined
}

const isMedia = (p: Body | undefined): boolean => p?.inlineData !== undefined || p?.fileData !== undefined

/** Google's refusal of a function-call turn's response parts that do not match its calls. */
export const RESPONSE_COUNT_REFUSAL =
  'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.'

/** Vertex's and Gemini 2.5's refusal of media inside a function response (gemini-cli #19436). */
export const RESPONSE_PARTS_REFUSAL =
  'Unable to submit request because `function_response.parts` is not supported for this model. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini'

/**
 * The simulator's refusal of a URL (`fileData`) inside a function response's `parts`, which the
 * Gemini API does not take ("This data type is not supported in Gemini API", Google's SDKs on
 * `FunctionResponseFileData`; the wording of its 400 is not known: this one says where).
 */
export const RESPONSE_FILE_DATA_REFUSAL = (path: string): string =>
  `Invalid value at '${path}.file_data': file_data is not supported in a function response on the Gemini API.`

/**
 * Gemini's refusal of where a request put the images and documents of function results, by the
 * model's name: a `gemini-3*` model takes them only inside the response (its `parts`: multimodal
 * function responses) and refuses an `inlineData` or `fileData` part after a `functionResponse`
 * of the same content (gemini-cli PR #25765, router-for-me/CLIProxyAPI #5415); a `gemini-2*` model
 * refuses a response's `parts` (gemini-cli #19436); any other model takes media after the
 * responses but not between two of them (gemini-cli PR #16137: a parallel turn's). `nestedOnly`
 * (quirk `media-in-responses`): the Gemini 3 rule whatever the name. A `fileData` part inside a
 * response is refused for any model ({@link RESPONSE_FILE_DATA_REFUSAL}). Undefined when none applies.
 */
export function geminiResultMediaProblem(
  model: string,
  contents: unknown,
  nestedOnly = false,
): string | undefined {
  if (!Array.isArray(contents)) return undefined
  const three = nestedOnly || model.startsWith('gemini-3')
  for (const [i, c] of (contents as Body[]).entries()) {
    if (!Array.isArray(c?.parts) || c.role === 'model') continue
    let responded = false
    let mediaAfter = false
    for (const [j, p] of (c.parts as Body[]).entries()) {
      const response = p?.functionResponse as Body | undefined
      if (response !== undefined) {
        if (Array.isArray(response.parts) && response.parts.length > 0) {
          if (model.startsWith('gemini-2')) return RESPONSE_PARTS_REFUSAL
          const k = (response.parts as Body[]).findIndex((q) => q?.fileData !== undefined)
          if (k >= 0)
            return RESPONSE_FILE_DATA_REFUSAL(`contents[${i}].parts[${j}].function_response.parts[${k}]`)
        }
        if (mediaAfter) return RESPONSE_COUNT_REFUSAL
        responded = true
      } else if (responded && isMedia(p)) {
        if (three) return RESPONSE_COUNT_REFUSAL
        mediaAfter = true
      }
    }
  }
  return undefined
}
