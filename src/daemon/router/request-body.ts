/**
 * Reading what the proxy needs from a request body (model, stream) without a full parse where it
 * can, and the body and path to send for each upstream model.
 */
import type {ProxyRequest} from './proxy-types.js'

const GEMINI_PATH = /^(\/v1beta\/models\/)([^/:]+)(:[A-Za-z]+)$/

/** A request body the gateway cannot send on (answered 400 in the entrance's shape). */
export class RequestBodyError extends Error {}

export interface Prepared {
  requestedModel: string | null
  stream: boolean
  /** Body to send for an upstream model (cached per model). */
  bodyFor(model: string | null): Buffer
  /** Path (without query) for an upstream model. */
  pathFor(model: string | null): string
  query: string
  /** The proxy asked upstream for stream usage the client did not ask for (chat). */
  addedUsage: boolean
}

export function prepare(request: ProxyRequest): Prepared {
  const q = request.url.indexOf('?')
  const path = q === -1 ? request.url : request.url.slice(0, q)
  let query = ''
  if (q !== -1) {
    const params = new URLSearchParams(request.url.slice(q + 1))
    params.delete('key')
    query = params.toString()
  }
  if (request.family === 'gemini') {
    const m = GEMINI_PATH.exec(path)
    const requested = m ? decodeURIComponent(m[2]) : null
    return {
      requestedModel: requested,
      stream: m?.[3] === ':streamGenerateContent',
      bodyFor: () => request.body,
      pathFor: (model) => (m && model ? m[1] + encodeURIComponent(model) + m[3] : path),
      query,
      addedUsage: false,
    }
  }
  let json: Record<string, unknown> | undefined
  let parsedOnce = false
  if (request.json !== undefined) {
    // the entrance parsed the body already (it answers 400 to one that is not JSON): read that
    parsedOnce = true
    const given = request.json
    if (given !== null && typeof given === 'object' && !Array.isArray(given))
      json = given as Record<string, unknown>
  }
  const parse = (): Record<string, unknown> | undefined => {
    if (parsedOnce) return json
    parsedOnce = true
    if (request.body.length === 0) return undefined
    try {
      const parsed: unknown = JSON.parse(request.body.toString('utf8'))
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        json = parsed as Record<string, unknown>
    } catch {
      // passed on as is: the upstream answers its own 400
    }
    return json
  }
  let requested: string | null
  let stream: boolean
  let addedUsage = false
  let streamOptions: Record<string, unknown> | undefined
  // Chat streams need `stream_options` (to ask upstream for usage): only they are parsed. A
  // non-stream chat body is scanned for model/stream like the other families, saving a
  // JSON.parse of every chat request.
  const chatFields = request.family === 'chat' && !parsedOnce ? topLevelFields(request.body) : undefined
  if (request.family === 'chat' && !(chatFields && chatFields.stream !== true)) {
    const body = parse()
    requested = typeof body?.model === 'string' ? body.model : null
    stream = body?.stream === true
    streamOptions = body?.stream_options as Record<string, unknown> | undefined
    addedUsage = stream && !!body && streamOptions?.include_usage !== true
  } else if (chatFields) {
    requested = chatFields.model ?? null
    stream = false
  } else {
    // agents send large bodies (Claude Code ~76 KB): read model/stream without parsing them
    const fields = parsedOnce ? undefined : topLevelFields(request.body, false)
    if (fields) {
      requested = typeof fields.model === 'string' ? fields.model : null
      stream = fields.stream === true
    } else {
      const body = parse()
      requested = typeof body?.model === 'string' ? body.model : null
      stream = body?.stream === true
    }
  }
  // bodies re-encoded for an upstream model (made on first need: most requests send theirs as is)
  let bodies: Map<string | null, Buffer> | undefined
  return {
    requestedModel: requested,
    stream,
    bodyFor: (model) => {
      if (model === requested && !addedUsage) return request.body
      const body = parse()
      if (!body) return request.body
      bodies ??= new Map()
      let out = bodies.get(model)
      if (!out) {
        const copy: Record<string, unknown> = {...body}
        if (model !== null) copy.model = model
        if (addedUsage) copy.stream_options = {...streamOptions, include_usage: true}
        try {
          out = Buffer.from(JSON.stringify(copy))
        } catch (error) {
          // JSON.stringify recurses: a body nested some thousands deep overflows the stack
          throw new RequestBodyError(
            `The request body could not be re-encoded for the upstream (${(error as Error).message}); nest its JSON less deeply.`,
          )
        }
        bodies.set(model, out)
      }
      return out
    },
    pathFor: () => path,
    query,
    addedUsage,
  }
}

/**
 * The top-level `model` (string) and, when asked, `stream` (boolean) of a JSON object body, read
 * with a scan that stops as soon as they are found (no full parse; agents put `model` first).
 * Undefined when the body does not look like a JSON object or a value is not a plain
 * string/boolean (the caller then parses).
 */
export function topLevelFields(
  body: Buffer,
  wantStream = true,
): {model?: string; stream?: boolean} | undefined {
  // most bodies name the model in their first bytes: scan a prefix first
  if (body.length > 8192) {
    const found = scanFields(body.toString('latin1', 0, 8192), wantStream, true)
    if (found) return found
  }
  return scanFields(body.toString('latin1'), wantStream, false)
}

function scanFields(
  text: string,
  wantStream: boolean,
  partial: boolean,
): {model?: string; stream?: boolean} | undefined {
  let i = 0
  const n = text.length
  const ws = (): void => {
    while (i < n && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++
  }
  const skipString = (): number => {
    // i at the opening quote; returns the index after the closing quote
    let j = i + 1
    for (;;) {
      const q = text.indexOf('"', j)
      if (q === -1) return -1
      let backslashes = 0
      while (text.charCodeAt(q - 1 - backslashes) === 92) backslashes++
      if (backslashes % 2 === 0) return q + 1
      j = q + 1
    }
  }
  const structural = /["{}[\],]/g
  ws()
  if (text[i] !== '{') return undefined
  i++
  const out: {model?: string; stream?: boolean} = {}
  let depth = 1
  let expectKey = true
  for (;;) {
    structural.lastIndex = i
    const next = structural.exec(text)
    if (!next) return undefined
    i = next.index
    const c = text[i]
    if (c === '"') {
      const end = skipString()
      if (end === -1) return undefined
      if (depth === 1 && expectKey) {
        const key = text.slice(i + 1, end - 1)
        i = end
        ws()
        if (text[i] !== ':') return undefined
        i++
        ws()
        if (key === 'model') {
          if (text[i] !== '"') return undefined
          const valueEnd = skipString()
          if (valueEnd === -1) return undefined
          const raw = text.slice(i + 1, valueEnd - 1)
          if (raw.includes('\\') || /[\x80-\xff]/.test(raw)) return undefined
          out.model = raw
          i = valueEnd
        } else if (key === 'stream') {
          if (text.startsWith('true', i)) out.stream = true
          else if (text.startsWith('false', i)) out.stream = false
          else return undefined
          i += out.stream ? 4 : 5
        }
        expectKey = false
        if (out.model !== undefined && (!wantStream || out.stream !== undefined)) return out
        continue
      }
      i = end
      continue
    }
    if (c === '{' || c === '[') depth++
    else if (c === '}' || c === ']') {
      depth--
      if (depth === 0) return partial ? undefined : out
    } else if (c === ',' && depth === 1) expectKey = true
    i++
  }
}
