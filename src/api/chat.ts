/**
 * Client of `POST {base_url}/chat/completions` (spec 2.1, 2.2, 4.1; wire format
 * ../shared/PROTOCOLS.md A1), on {@link PlatformClient}.
 */
import {createParser} from 'eventsource-parser'

import {GwError, InterruptedError, UpstreamError, isAbortError} from '../core/errors.js'
import type {PlatformClient} from './http.js'

/** A content item of a message (spec 2.1). */
export type ContentItem =
  | {type: 'text'; text: string}
  | {type: 'image_url'; image_url: {url: string}}
  | {type: 'video_url'; video_url: {url: string}}

export interface ChatMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool'
  content: string | ContentItem[] | null
  reasoning_content?: string
  tool_calls?: ToolCall[]
  tool_call_id?: string
}

export interface ToolCall {
  id: string
  type: 'function'
  function: {name: string; arguments: string}
}

/** Provider preferences (spec 2.1, provider object). */
export interface ProviderPreferences {
  only?: string[]
  ignore?: string[]
  order?: string[]
  sort?: string[]
  input_price_range?: [number, number]
  output_price_range?: [number, number]
  effective_multiplier_range?: [number, number]
  throughput_range?: [number, number]
  latency_range?: [number, number]
  input_length_range?: [number, number]
  allow_filter_prompt_length?: boolean
  allow_fallbacks?: boolean
  [key: string]: unknown
}

/** A chat request body; unlisted parameters pass through. */
export interface ChatRequest {
  model: string
  messages: ChatMessage[]
  stream?: boolean
  stream_options?: {include_usage?: boolean}
  max_tokens?: number
  max_completion_tokens?: number
  temperature?: number
  top_p?: number
  top_k?: number
  presence_penalty?: number
  response_format?: {type: 'text' | 'json_object'}
  enable_thinking?: boolean
  extra_body?: {
    provider?: ProviderPreferences
    enable_thinking?: boolean
    timeout?: number
    [k: string]: unknown
  }
  provider?: ProviderPreferences
  [key: string]: unknown
}

export interface ChatUsage {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details?: {cached_tokens?: number} | null
  completion_tokens_details?: {reasoning_tokens?: number} | null
}

/** A streamed chunk (spec 2.2). */
export interface ChatCompletionChunk {
  id: string
  object: 'chat.completion.chunk'
  created: number
  model: string
  provider?: string
  choices: Array<{
    index: number
    delta: {
      role?: string
      content?: string | null
      reasoning_content?: string | null
      tool_calls?: Array<{
        index: number
        id?: string
        type?: 'function'
        function?: {name?: string; arguments?: string}
      }>
    }
    finish_reason: string | null
  }>
  usage?: ChatUsage | null
}

/** A complete (non-stream) answer. */
export interface ChatCompletion {
  id: string
  object: 'chat.completion'
  created: number
  model: string
  provider?: string
  choices: Array<{index: number; message: ChatMessage; finish_reason: string | null}>
  usage?: ChatUsage
  [key: string]: unknown
}

export interface ChatCallOptions {
  signal?: AbortSignal
  /** Longest wait for the answer's headers (the first token), in ms. */
  headersTimeoutMs?: number
}

/** Sends a non-stream chat request and returns the `chat.completion` object. */
export async function createChatCompletion(
  client: PlatformClient,
  body: ChatRequest,
  options: ChatCallOptions = {},
): Promise<ChatCompletion> {
  const res = await client.request<ChatCompletion>('POST', '/chat/completions', {
    body: {...body, stream: false},
    signal: options.signal,
    headersTimeoutMs: options.headersTimeoutMs,
    userTimeoutSeconds: userTimeout(body),
  })
  return res.body
}

/**
 * Sends a streamed chat request and yields its chunks as they arrive, until `data: [DONE]`.
 * An error payload mid-stream (`data: {"error":{...}}`) throws an {@link UpstreamError} with code
 * `stream_error`; a stream cut before `[DONE]` throws one with code `stream_interrupted`.
 */
export async function* streamChatCompletion(
  client: PlatformClient,
  body: ChatRequest,
  options: ChatCallOptions = {},
): AsyncGenerator<ChatCompletionChunk> {
  let res
  try {
    res = await client.stream(
      '/chat/completions',
      {...body, stream: true},
      {...options, userTimeoutSeconds: userTimeout(body)},
    )
  } catch (error) {
    if (options.signal?.aborted) throw new InterruptedError('Request aborted.')
    throw error
  }
  const pending: string[] = []
  let parseProblem: string | undefined
  const parser = createParser({
    onEvent: (event) => pending.push(event.data),
    onError: (error) => (parseProblem = error.message),
  })
  const decoder = new TextDecoder()
  let done = false
  try {
    for await (const bytes of res.body) {
      parser.feed(decoder.decode(bytes as Buffer, {stream: true}))
      while (pending.length > 0) {
        const data = pending.shift() as string
        if (data.trim() === '[DONE]') {
          done = true
          break
        }
        yield parseChunk(data)
      }
      if (done) break
    }
    if (!done) {
      parser.feed(decoder.decode())
      parser.reset({consume: true})
      for (const data of pending.splice(0)) {
        if (data.trim() === '[DONE]') done = true
        else if (!done) yield parseChunk(data)
      }
    }
  } catch (error) {
    if (error instanceof GwError) throw error
    if (options.signal?.aborted || isAbortError(error)) throw new InterruptedError('Request aborted.')
    throw new UpstreamError(`The stream broke off: ${(error as Error).message}.`, {
      code: 'stream_interrupted',
      cause: error,
    })
  } finally {
    if (!done) res.body.destroy()
  }
  if (!done) {
    throw new UpstreamError(
      'The stream ended before `data: [DONE]`' + (parseProblem ? ` (${parseProblem})` : '') + '.',
      {code: 'stream_interrupted'},
    )
  }
}

/** The first-token deadline the user set (`--timeout` -> `extra_body.timeout`), if any. */
function userTimeout(body: ChatRequest): number | undefined {
  const timeout = (body.extra_body as {timeout?: unknown} | undefined)?.timeout
  return typeof timeout === 'number' ? timeout : undefined
}

function parseChunk(data: string): ChatCompletionChunk {
  let value: any
  try {
    value = JSON.parse(data)
  } catch {
    throw new UpstreamError(`The stream sent data that is not JSON: ${data.slice(0, 200)}`, {
      code: 'stream_bad_data',
    })
  }
  // (`"error": null` beside a chunk's choices is no error: OpenAI-compatible servers send it so)
  if (value && typeof value === 'object' && value.error !== undefined && value.error !== null) {
    const e = value.error ?? {}
    const message = typeof e === 'string' ? e : String(e.message ?? 'unknown error')
    const details: Record<string, unknown> = {}
    if (e.type) details.type = e.type
    if (e.code !== undefined && e.code !== null) details.upstream_code = String(e.code)
    if (value.provider) details.provider = value.provider
    throw new UpstreamError(`The stream failed: ${message}`, {code: 'stream_error', details})
  }
  return value as ChatCompletionChunk
}
