/**
 * Reading what the proxy needs from a request body (model, stream) without a full parse where it
 * can, and the body and path to send for each upstream model.
 */
import type {BodyFacts, ProxyRequest} from './proxy-types.js'
import {parseJsonBytes} from '../../protocols/json-bytes.js'

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
  /** The top-level `store` is `false` (a Responses client that names no stored item: Codex). */
  storeOff: boolean
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
      storeOff: false,
    }
  }
  let json: Record<string, unknown> | undefined
  let parsedOnce = false
  if (request.json !== undefined) {
    // the entrance parsed the body already (a translated route needs it): read that
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
      const parsed: unknown = parseJsonBytes(request.body)
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
  let storeOff = false
  let streamOptions: Record<string, unknown> | undefined
  // Agents send large bodies (Claude Code 60-300 KB a turn): what the proxy reads of them comes
  // from a Latin-1 parse (the entrance's check, else made here), never a UTF-8 one, and a new
  // model or a chat stream's `stream_options` goes into the bytes as they came (`spliced`).
  // Only what that cannot tell is parsed whole.
  const chat = request.family === 'chat'
  const facts = parsedOnce ? undefined : (request.facts ?? factsOf(request.body))
  let splice = false
  if (facts && facts.model !== undefined && !(chat && facts.stream && facts.streamOptions === 'other')) {
    requested = facts.model
    stream = facts.stream
    addedUsage = chat && stream && facts.streamOptions === 'none'
    storeOff = facts.storeOff
    splice = true
  } else {
    const body = parse()
    requested = typeof body?.model === 'string' ? body.model : null
    stream = body?.stream === true
    storeOff = body?.store === false
    if (chat) {
      streamOptions = body?.stream_options as Record<string, unknown> | undefined
      addedUsage = stream && !!body && streamOptions?.include_usage !== true
    }
  }
  // bodies re-encoded for an upstream model (made on first need: most requests send theirs as is)
  let bodies: Map<string | null, Buffer> | undefined
  return {
    requestedModel: requested,
    stream,
    bodyFor: (model) => {
      if (model === requested && !addedUsage) return request.body
      let out = bodies?.get(model)
      if (out) return out
      out = splice ? spliced(request.body, model === requested ? null : model, addedUsage) : undefined
      if (!out) {
        const body = parse()
        if (!body) return request.body
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
      }
      bodies ??= new Map()
      bodies.set(model, out)
      return out
    },
    pathFor: () => path,
    query,
    addedUsage,
    storeOff,
  }
}

const MODEL_KEY = Buffer.from('"model"')
/**
 * The start of a `\u` escape of `d`, `e`, `l`, `m` or `o`: the only way to spell another
 * `"model"` key that a byte search for `"model"` misses (`"mod\u0065l"`). JSON.stringify never
 * writes one; a body that has one is parsed and re-encoded.
 */
const MODEL_LETTER_ESCAPE = Buffer.from('\\u006')
const ADDED_USAGE = Buffer.from(',"stream_options":{"include_usage":true}')

/** The facts of a body's Latin-1 parse; undefined when the body is not a JSON object. */
export function bodyFacts(value: unknown): BodyFacts | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined
  const body = value as Record<string, unknown>
  const model = body.model
  const options = body.stream_options
  const config = body.generationConfig
  return {
    model: typeof model !== 'string' ? null : NON_ASCII.test(model) ? undefined : model,
    stream: body.stream === true,
    streamOptions:
      options === undefined
        ? 'none'
        : options !== null &&
            typeof options === 'object' &&
            (options as {include_usage?: unknown}).include_usage === true
          ? 'usage'
          : 'other',
    maxTokens: body.max_tokens ?? body.max_completion_tokens ?? body.max_output_tokens,
    maxOutputTokens:
      config !== null && typeof config === 'object'
        ? (config as {maxOutputTokens?: unknown}).maxOutputTokens
        : undefined,
    storeOff: body.store === false,
  }
}

const NON_ASCII = /[\u0080-\uffff]/

/** The facts of a body no entrance checked (a direct caller of the proxy): undefined when not JSON. */
function factsOf(body: Buffer): BodyFacts | undefined {
  if (body.length === 0) return undefined
  try {
    return bodyFacts(JSON.parse(body.toString('latin1')))
  } catch {
    return undefined
  }
}

/**
 * The body with its top-level model replaced by `model` (null: kept) and, with `addedUsage`,
 * `"stream_options":{"include_usage":true}` added as its last member: the client's bytes
 * otherwise as they came, no parse, no re-encoding. Undefined when the bytes do not allow it
 * (the caller parses and re-encodes): a model the scan cannot place, or one after which
 * `"model"` occurs again, in bytes or spelled with escapes (a second top-level `model`, which a
 * parser takes, is not told from a nested one without a full scan: were it left, a client could
 * pick its model past the policy's).
 */
function spliced(body: Buffer, model: string | null, addedUsage: boolean): Buffer | undefined {
  const parts: Buffer[] = []
  let from = 0
  if (model !== null) {
    const at = topLevelFields(body, false)?.modelAt
    if (!at || body.indexOf(MODEL_KEY, at[1]) !== -1 || body.indexOf(MODEL_LETTER_ESCAPE) !== -1)
      return undefined
    parts.push(body.subarray(0, at[0]), Buffer.from(JSON.stringify(model)))
    from = at[1]
  }
  if (addedUsage) {
    // the body is one JSON object with members (it has `stream`): its last non-blank byte is
    // the closing brace
    let end = body.length - 1
    while (end > from && isBlank(body[end])) end--
    if (body[end] !== 0x7d) return undefined
    parts.push(body.subarray(from, end), ADDED_USAGE, body.subarray(end))
  } else parts.push(body.subarray(from))
  return Buffer.concat(parts)
}

const isBlank = (byte: number): boolean => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09

/**
 * The top-level `model` (string) and, when asked, `stream` (boolean) of a JSON object body, read
 * with a scan that stops as soon as they are found (no full parse; agents put `model` first).
 * Undefined when the body does not look like a JSON object or a value is not a plain
 * string/boolean (the caller then parses).
 */
export function topLevelFields(body: Buffer, wantStream = true): TopLevelFields | undefined {
  // most bodies name the model in their first bytes: scan a prefix first
  if (body.length > 8192) {
    const found = scanFields(body.toString('latin1', 0, 8192), wantStream, true)
    if (found) return found
  }
  return scanFields(body.toString('latin1'), wantStream, false)
}

export interface TopLevelFields {
  model?: string
  stream?: boolean
  /** Where the model's string, quotes included, lies in the body's bytes: [start, end). */
  modelAt?: [number, number]
}

function scanFields(text: string, wantStream: boolean, partial: boolean): TopLevelFields | undefined {
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
  const out: TopLevelFields = {}
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
        // an escaped key may spell `model` (`"mod\u0065l"`): only a parse can tell
        if (key.includes('\\')) return undefined
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
          out.modelAt = [i, valueEnd]
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
