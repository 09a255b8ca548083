/**
 * Builds and validates chat requests (spec 2.1) from plain options, before anything is sent.
 * Every broken rule is a {@link UsageError} whose code and message name the rule.
 */
import type {ChatMessage, ChatRequest, ContentItem, ProviderPreferences} from '../api/chat.js'
import {UsageError} from '../core/errors.js'
import {parseParamValue} from '../core/input-rules.js'

/** Sort keys of the provider object (spec 2.1; `price_multiplier` is in one schema variant). */
export const PROVIDER_SORT_KEYS = [
  'input_price',
  'output_price',
  'throughput',
  'latency',
  'input_length',
  'price_multiplier',
] as const

const RANGE_KEYS = [
  'input_price_range',
  'output_price_range',
  'effective_multiplier_range',
  'throughput_range',
  'latency_range',
  'input_length_range',
] as const

/** Provider routing as given by a user: lists and ranges as `a,b` / `MIN,MAX` strings. */
export interface ProviderInput {
  /** A whole provider object as JSON; the other fields override its keys. */
  json?: string
  only?: string
  ignore?: string
  order?: string
  sort?: string
  inputPriceRange?: string
  outputPriceRange?: string
  throughputRange?: string
  latencyRange?: string
  inputLengthRange?: string
  /** false sends `allow_filter_prompt_length: false`. */
  promptLengthFilter?: boolean
  fallbacks?: boolean
}

/** Everything a chat request can carry, as plain values (numbers may still be strings). */
export interface ChatInput {
  model?: string
  system?: string
  /** The conversation without the system message (a one-shot chat: one user message). */
  messages: ChatMessage[]
  temperature?: number | string
  topP?: number | string
  topK?: number | string
  presencePenalty?: number | string
  maxTokens?: number | string
  thinking?: boolean
  jsonObject?: boolean
  /** Default true. */
  stream?: boolean
  timeoutSeconds?: number | string
  /** `key=value` passthrough parameters; values are JSON when they parse, strings otherwise. */
  params?: string[]
  provider?: ProviderInput
  /** Told about input that is sent but probably not meant (a `--param` value that is broken JSON). */
  onWarning?: (warning: string) => void
}

/** A user message: plain text, or content items when images or videos are attached. */
export function userMessage(text: string, images: string[] = [], videos: string[] = []): ChatMessage {
  if (images.length === 0 && videos.length === 0) return {role: 'user', content: text}
  const items: ContentItem[] = []
  if (text) items.push({type: 'text', text})
  for (const url of images) items.push({type: 'image_url', image_url: {url: checkUrl(url, '--image')}})
  for (const url of videos) items.push({type: 'video_url', video_url: {url: checkUrl(url, '--video')}})
  return {role: 'user', content: items}
}

function checkUrl(url: string, flag: string): string {
  if (/^data:/i.test(url)) return url
  try {
    const u = new URL(url)
    if (u.protocol === 'http:' || u.protocol === 'https:') return url
  } catch {
    // fall through
  }
  throw new UsageError(`${flag} must be an http(s) or data: URL, got "${url}".`, {
    code: 'invalid_content_url',
  })
}

function toNumber(value: number | string, name: string): number {
  const n = typeof value === 'number' ? value : value.trim() === '' ? Number.NaN : Number(value)
  if (!Number.isFinite(n)) {
    throw new UsageError(`${name} must be a number, got "${value}".`, {code: `invalid_${snake(name)}`})
  }
  return n
}

const snake = (flag: string): string => flag.replace(/^--/, '').replace(/[-.]/g, '_')

// The ranges are those of the chat spec (section 2.1); messages name the flag, never the spec.
function numberIn(value: number | string, name: string, min: number, max: number, example: string): number {
  const n = toNumber(value, name)
  if (n < min || n > max) {
    throw new UsageError(`${name} must be between ${min} and ${max}, got ${n}.`, {
      code: `invalid_${snake(name)}`,
      hint: `Allowed: ${name} from ${min.toFixed(1)} to ${max.toFixed(1)}, e.g. ${name} ${example}.`,
    })
  }
  return n
}

function positiveInt(value: number | string, name: string, example: string): number {
  const n = toNumber(value, name)
  if (!Number.isInteger(n) || n <= 0) {
    throw new UsageError(`${name} must be an integer greater than 0, got ${n}.`, {
      code: `invalid_${snake(name)}`,
      hint: `Allowed: a whole number from 1 up, e.g. ${name} ${example}.`,
    })
  }
  return n
}

/** `a,b` -> `['a','b']` (blanks dropped). */
export function parseList(value: string): string[] {
  return value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}

/** `MIN,MAX` -> `[min, max]`. */
export function parseRange(value: string, flag: string): [number, number] {
  const parts = value.split(',').map((s) => s.trim())
  const nums = parts.map(Number)
  if (parts.length !== 2 || parts.some((p) => p === '') || nums.some((n) => !Number.isFinite(n))) {
    throw new UsageError(`${flag} must be two numbers MIN,MAX, got "${value}".`, {
      code: 'invalid_range',
      hint: `Example: ${flag} 0,2.5`,
    })
  }
  return [nums[0], nums[1]]
}

/** Parses `key=value` passthrough parameters; dotted keys nest (`extra_body.x=1`). */
export function parseParams(
  params: string[],
  onWarning?: (warning: string) => void,
): Record<string, unknown> {
  const result: Record<string, any> = {}
  for (const param of params) {
    const eq = param.indexOf('=')
    const key = eq === -1 ? '' : param.slice(0, eq).trim()
    if (!key || key.split('.').some((k) => !k)) {
      throw new UsageError(`--param must be key=value, got "${param}".`, {
        code: 'invalid_param',
        hint: 'Example: --param seed=7 --param stop=\'["END"]\'',
      })
    }
    if (key.split('.').includes('__proto__')) {
      // `target['__proto__']` is Object.prototype: setting below it would change every object
      throw new UsageError(`--param cannot set "${key}": "__proto__" is not a field name.`, {
        code: 'invalid_param',
      })
    }
    if (key === 'messages' || key === 'stream' || key === 'model') {
      throw new UsageError(`--param cannot set "${key}"; it has its own flag or argument.`, {
        code: 'invalid_param',
      })
    }
    const {value, warning} = parseParamValue(key, param.slice(eq + 1))
    if (warning) onWarning?.(warning)
    const path = key.split('.')
    let target = result
    for (const part of path.slice(0, -1)) {
      if (typeof target[part] !== 'object' || target[part] === null) target[part] = {}
      target = target[part]
    }
    target[path[path.length - 1]] = value
  }
  return result
}

/** Checks a provider object against the rules of spec 2.1. */
export function validateProvider(provider: ProviderPreferences): void {
  for (const key of ['only', 'ignore', 'order', 'sort'] as const) {
    const v = provider[key]
    if (v === undefined) continue
    if (!Array.isArray(v) || v.some((s) => typeof s !== 'string' || !s)) {
      throw new UsageError(`provider.${key} must be a list of names.`, {code: `invalid_provider_${key}`})
    }
  }
  for (const key of provider.sort ?? []) {
    if (!(PROVIDER_SORT_KEYS as readonly string[]).includes(key)) {
      throw new UsageError(`Unknown sort key "${key}".`, {
        code: 'invalid_provider_sort',
        hint: `Sort keys: ${PROVIDER_SORT_KEYS.join(', ')}; priority falls in the order given, e.g. --sort ${PROVIDER_SORT_KEYS.slice(0, 2).join(',')}.`,
      })
    }
  }
  for (const key of RANGE_KEYS) {
    const v = provider[key] as unknown
    if (v === undefined) continue
    const flag = `provider.${key}`
    if (!Array.isArray(v) || v.length !== 2 || v.some((n) => typeof n !== 'number' || !Number.isFinite(n))) {
      throw new UsageError(`${flag} must be two numbers [min, max].`, {code: 'invalid_range'})
    }
    if (v[0] > v[1]) {
      throw new UsageError(`${flag}: min ${v[0]} is greater than max ${v[1]}.`, {
        code: 'invalid_range',
        hint: 'A range is MIN,MAX with MIN <= MAX, e.g. 0,2.5.',
      })
    }
    if (key === 'input_length_range' && v.some((n) => !Number.isInteger(n))) {
      throw new UsageError(`${flag} must hold integers.`, {
        code: 'invalid_range',
        hint: 'input_length_range holds whole numbers, e.g. 1000,8000.',
      })
    }
  }
  for (const key of ['allow_filter_prompt_length', 'allow_fallbacks'] as const) {
    if (provider[key] !== undefined && typeof provider[key] !== 'boolean') {
      throw new UsageError(`provider.${key} must be true or false.`, {code: `invalid_provider_${key}`})
    }
  }
}

/** The provider object of the routing options, or undefined when none is given. */
export function buildProvider(input: ProviderInput = {}): ProviderPreferences | undefined {
  let provider: ProviderPreferences = {}
  if (input.json !== undefined) {
    let parsed: unknown
    try {
      parsed = JSON.parse(input.json)
    } catch (error) {
      throw new UsageError(`--provider is not valid JSON: ${(error as Error).message}.`, {
        code: 'invalid_provider_json',
        hint: `Example: --provider '{"only":["a","b"],"sort":["latency"]}'`,
      })
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new UsageError('--provider must be a JSON object.', {code: 'invalid_provider_json'})
    }
    provider = {...(parsed as ProviderPreferences)}
  }
  if (input.only !== undefined) provider.only = parseList(input.only)
  if (input.ignore !== undefined) provider.ignore = parseList(input.ignore)
  if (input.order !== undefined) provider.order = parseList(input.order)
  if (input.sort !== undefined) provider.sort = parseList(input.sort)
  const ranges: Array<[keyof ProviderInput, string, string]> = [
    ['inputPriceRange', 'input_price_range', '--input-price-range'],
    ['outputPriceRange', 'output_price_range', '--output-price-range'],
    ['throughputRange', 'throughput_range', '--throughput-range'],
    ['latencyRange', 'latency_range', '--latency-range'],
    ['inputLengthRange', 'input_length_range', '--input-length-range'],
  ]
  for (const [field, key, flag] of ranges) {
    const value = input[field]
    if (typeof value === 'string') provider[key] = parseRange(value, flag)
  }
  if (input.promptLengthFilter !== undefined) provider.allow_filter_prompt_length = input.promptLengthFilter
  if (input.fallbacks !== undefined) provider.allow_fallbacks = input.fallbacks
  validateProvider(provider)
  return Object.keys(provider).length > 0 ? provider : undefined
}

/**
 * The request body of a chat. Passthrough parameters go in first, so a named option always wins;
 * the top-level `provider` is sent (it overrides `extra_body.provider`, spec 2.1).
 */
export function buildChatRequest(input: ChatInput): ChatRequest {
  const model = input.model?.trim()
  if (!model) {
    throw new UsageError('No model given.', {
      code: 'missing_model',
      hint: 'Pass --model NAME, or set a default: `gwctl config set chat.model NAME` (see `gwctl models`).',
    })
  }
  const messages: ChatMessage[] = []
  if (input.system) messages.push({role: 'system', content: input.system})
  messages.push(...input.messages)
  if (!messages.some((m) => m.role === 'user')) {
    throw new UsageError('No message to send.', {
      code: 'missing_message',
      hint: 'Give the message as arguments, pipe it on stdin, or use --interactive.',
    })
  }
  const params = parseParams(input.params ?? [], input.onWarning)
  const request: ChatRequest = {...params, model, messages}
  const stream = input.stream ?? true
  request.stream = stream
  if (stream) {
    const given = params.stream_options as Record<string, unknown> | undefined
    request.stream_options = {...given, include_usage: true}
  } else {
    delete request.stream_options
  }
  if (input.temperature !== undefined) {
    request.temperature = numberIn(input.temperature, '--temperature', 0, 2, '0.7')
  }
  if (input.topP !== undefined) request.top_p = numberIn(input.topP, '--top-p', 0, 1, '0.9')
  if (input.topK !== undefined) request.top_k = positiveInt(input.topK, '--top-k', '40')
  if (input.presencePenalty !== undefined) {
    request.presence_penalty = numberIn(input.presencePenalty, '--presence-penalty', -2, 2, '0.5')
  }
  if (input.maxTokens !== undefined) {
    request.max_completion_tokens = positiveInt(input.maxTokens, '--max-tokens', '1024')
  }
  if (input.thinking !== undefined) request.enable_thinking = input.thinking
  if (input.jsonObject) request.response_format = {type: 'json_object'}
  if (input.timeoutSeconds !== undefined) {
    const timeout = positiveInt(input.timeoutSeconds, '--timeout', '60')
    request.extra_body = {...(params.extra_body as object | undefined), timeout}
  }
  const provider = buildProvider(input.provider)
  if (provider) request.provider = provider
  else if (request.provider !== undefined) validateProvider(request.provider as ProviderPreferences)
  return request
}
