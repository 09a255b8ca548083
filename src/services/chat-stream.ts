/**
 * Runs one chat turn: sends the request, consumes the stream as it arrives (handing each piece of
 * text to callbacks), and assembles the final completion with timing and usage.
 */
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatMessage,
  ChatRequest,
  ChatUsage,
  ToolCall,
} from '../api/chat.js'
import {createChatCompletion, streamChatCompletion} from '../api/chat.js'
import type {PlatformClient} from '../api/http.js'
import {platformClient} from '../api/http.js'
import {GwError, InterruptedError, UpstreamError} from '../core/errors.js'

export interface ChatTiming {
  /** Milliseconds from sending to the first text (content or reasoning); streams only. */
  first_token_ms?: number
  total_ms: number
  /** Completion tokens per second after the first token (streams) or over the whole call. */
  tokens_per_second?: number
}

export interface ChatTurnResult {
  /** The assembled `chat.completion` (partial when `error` is set). */
  completion: ChatCompletion
  text: string
  reasoning: string
  provider?: string
  finishReason?: string | null
  usage?: ChatUsage
  timing: ChatTiming
  /** Set when the stream failed or was cancelled after it began; the text so far is kept. */
  error?: GwError
}

export interface ChatTurnOptions {
  signal?: AbortSignal
  headersTimeoutMs?: number
  onContent?: (text: string) => void
  onReasoning?: (text: string) => void
  /** Clock in ms (tests). */
  now?: () => number
}

/** The platform client that chat turns go to (base URL and API key from the environment and settings). */
export function chatClient(): PlatformClient {
  return platformClient()
}

/**
 * Sends `request` (streamed when `request.stream`) and returns the assembled answer. Errors before
 * the answer begins are thrown; errors after (a mid-stream error payload, a cut connection,
 * Ctrl-C) are returned in `error` with the partial text.
 */
export async function runChatTurn(
  client: PlatformClient,
  request: ChatRequest,
  options: ChatTurnOptions = {},
): Promise<ChatTurnResult> {
  const now = options.now ?? (() => performance.now())
  const start = now()
  if (!request.stream) {
    let completion: ChatCompletion
    try {
      completion = await createChatCompletion(client, request, options)
    } catch (e) {
      throw withRoutingHint(e)
    }
    const total = now() - start
    const message = completion.choices?.[0]?.message
    const text = typeof message?.content === 'string' ? message.content : ''
    const reasoning = typeof message?.reasoning_content === 'string' ? message.reasoning_content : ''
    if (reasoning) options.onReasoning?.(reasoning)
    if (text) options.onContent?.(text)
    const completionTokens = completion.usage?.completion_tokens
    return {
      completion,
      text,
      reasoning,
      provider: completion.provider,
      finishReason: completion.choices?.[0]?.finish_reason,
      usage: completion.usage,
      timing: {
        total_ms: Math.round(total),
        tokens_per_second:
          completionTokens !== undefined && total > 0 ? round1(completionTokens / (total / 1000)) : undefined,
      },
    }
  }

  const acc = new ChunkAccumulator()
  let firstToken: number | undefined
  let error: GwError | undefined
  let started = false
  try {
    for await (const chunk of streamChatCompletion(client, request, options)) {
      started = true
      const delta = acc.add(chunk)
      if ((delta.content || delta.reasoning) && firstToken === undefined) firstToken = now()
      if (delta.reasoning) options.onReasoning?.(delta.reasoning)
      if (delta.content) options.onContent?.(delta.content)
    }
  } catch (e) {
    const gw = e as GwError
    if (!started && !(gw instanceof InterruptedError)) throw withRoutingHint(e)
    error = withMidStreamHint(gw, acc.completion().provider)
  }
  const end = now()
  const completion = acc.completion()
  const usage = completion.usage
  const tokens = usage?.completion_tokens
  const span = firstToken === undefined ? 0 : end - firstToken
  return {
    completion,
    text: acc.text,
    reasoning: acc.reasoning,
    provider: completion.provider,
    finishReason: completion.choices[0]?.finish_reason,
    usage,
    timing: {
      first_token_ms: firstToken === undefined ? undefined : Math.round(firstToken - start),
      total_ms: Math.round(end - start),
      tokens_per_second: tokens !== undefined && span > 0 ? round1(tokens / (span / 1000)) : undefined,
    },
    error,
  }
}

const NEXT_STEPS: Record<string, string> = {
  no_provider_available:
    'Loosen the routing flags (--only, --ignore, the ranges) or allow fallbacks with --fallbacks.',
  model_not_found: 'Run `gwctl models` for the model names, then pass one with --model.',
}

/** Adds a next step to "no provider fits" and "unknown model" answers (the platform's 404s). */
function withRoutingHint(error: unknown): unknown {
  const hint = error instanceof GwError ? NEXT_STEPS[String(error.details?.upstream_code)] : undefined
  if (error instanceof GwError && hint && !error.hint) {
    return new GwError(error.code, error.message, error.exitCode, {
      details: error.details,
      cause: error,
      hint,
    })
  }
  return error
}

/** A reply cut short: say that the text is partial and how to avoid the provider that failed. */
function withMidStreamHint(error: GwError, provider: string | undefined): GwError {
  if (!(error instanceof UpstreamError) || error.hint) return error
  if (error.code !== 'stream_error' && error.code !== 'stream_interrupted') return error
  const avoid = provider ? `, or route around ${provider} with --ignore ${provider}` : ''
  return new UpstreamError(error.message, {
    code: error.code,
    status: error.status,
    details: error.details,
    cause: error,
    hint: `The reply above is incomplete: try again${avoid}.`,
  })
}

const round1 = (n: number): number => Math.round(n * 10) / 10

/** Folds stream chunks into one `chat.completion` (choice 0). */
export class ChunkAccumulator {
  text = ''
  reasoning = ''
  private id = ''
  private created = 0
  private model = ''
  private provider?: string
  private finishReason: string | null = null
  private usage?: ChatUsage
  private readonly toolCalls: ToolCall[] = []

  /** Adds a chunk; returns the text it carried. */
  add(chunk: ChatCompletionChunk): {content?: string; reasoning?: string} {
    this.id ||= chunk.id
    this.created ||= chunk.created
    this.model ||= chunk.model
    if (chunk.provider) this.provider = chunk.provider
    if (chunk.usage) this.usage = chunk.usage
    const choice = chunk.choices?.find((c) => c.index === 0) ?? chunk.choices?.[0]
    if (!choice) return {}
    if (choice.finish_reason) this.finishReason = choice.finish_reason
    const delta = choice.delta ?? {}
    const content = typeof delta.content === 'string' ? delta.content : undefined
    const reasoning = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : undefined
    if (content) this.text += content
    if (reasoning) this.reasoning += reasoning
    for (const call of delta.tool_calls ?? []) {
      const slot = (this.toolCalls[call.index] ??= {
        id: '',
        type: 'function',
        function: {name: '', arguments: ''},
      })
      if (call.id) slot.id = call.id
      if (call.function?.name) slot.function.name += call.function.name
      if (call.function?.arguments) slot.function.arguments += call.function.arguments
    }
    return {content, reasoning}
  }

  completion(): ChatCompletion {
    const message: ChatMessage = {
      role: 'assistant',
      content: this.toolCalls.length && !this.text ? null : this.text,
    }
    if (this.reasoning) message.reasoning_content = this.reasoning
    if (this.toolCalls.length) message.tool_calls = this.toolCalls.filter(Boolean)
    return {
      id: this.id,
      object: 'chat.completion',
      created: this.created,
      model: this.model,
      ...(this.provider ? {provider: this.provider} : {}),
      choices: [{index: 0, message, finish_reason: this.finishReason}],
      ...(this.usage ? {usage: this.usage} : {}),
    }
  }
}
