/**
 * A Messages upstream's paused turn, continued for a client of another family. Anthropic's
 * server-side loop (its web search) may stop a turn with `stop_reason: "pause_turn"`: "send the
 * response back as-is in a subsequent request to let Claude continue its turn". Claude Code does
 * that itself; a translated client cannot (its protocol has no such stop), so the gateway sends
 * the request again with the paused content appended as the last assistant turn, and joins the
 * continuation onto the client's answer. The pieces here are pure: the continuation's body, the
 * answers joined, their usage summed. The relay (daemon/router/translated.ts) and the stream
 * translator (translate.ts) do the rest; nothing here runs for an answer that did not pause.
 */
import type {Json} from './cm-common.js'
import {isObj} from './cm-common.js'
import {parseJsonBytes} from './json-bytes.js'
import {upstreamBytes} from './translate.js'

/** Continuations of one client turn at most; a turn paused after them ends as it is. */
export const MAX_CONTINUATIONS = 5

/** A Messages answer (parsed JSON) that stopped with `pause_turn`. */
export const pausedAnswer = (body: unknown): boolean =>
  (body as {stop_reason?: unknown} | null)?.stop_reason === 'pause_turn'

/**
 * The body of the continuation: the request that was sent (`sent`, its bytes) with `content`, the
 * turn's assistant content so far (every paused answer's blocks, as they came), as the last
 * assistant message, and a forced tool choice (satisfied by that content) as `auto`. A request that ended with an assistant message of its own (a prefill) has
 * the content added to it, so the turn stays one assistant message.
 */
export function continuationBody(sent: Buffer, content: readonly unknown[]): Buffer {
  const body = parseJsonBytes(sent) as Json
  const messages = Array.isArray(body.messages) ? [...(body.messages as Json[])] : []
  const last = messages.at(-1)
  if (last?.role === 'assistant') {
    const own =
      typeof last.content === 'string'
        ? last.content
          ? [{type: 'text', text: last.content}]
          : []
        : Array.isArray(last.content)
          ? last.content
          : []
    messages[messages.length - 1] = {...last, content: [...own, ...content]}
  } else messages.push({role: 'assistant', content: [...content]})
  body.messages = messages
  // a forced tool (a client that forced the search) was used by the paused content:
  // forced again, the model would search again on every continuation
  const choice = body.tool_choice as Json | undefined
  if (choice && (choice.type === 'tool' || choice.type === 'any'))
    body.tool_choice = {
      type: 'auto',
      ...(choice.disable_parallel_tool_use !== undefined
        ? {disable_parallel_tool_use: choice.disable_parallel_tool_use}
        : {}),
    }
  return upstreamBytes(body)
}

/**
 * Counts added up, field by field: numbers summed, objects (`cache_creation`, `server_tool_use`,
 * `output_tokens_details`) summed the same way, anything else (`service_tier`) the later one's.
 */
export function sumCounts(a: unknown, b: unknown): unknown {
  if (typeof a === 'number' && typeof b === 'number') return a + b
  if (!isObj(a) || !isObj(b)) return b === undefined || b === null ? a : b
  const out: Json = {...a}
  for (const key of Object.keys(b)) out[key] = key in a ? sumCounts(a[key], b[key]) : b[key]
  return out
}

/** The counts of a Messages usage that are the prompt's (the rest are the output's). */
const PROMPT_COUNTS = new Set([
  'input_tokens',
  'cache_read_input_tokens',
  'cache_creation_input_tokens',
  'cache_creation',
])

/**
 * Two Messages answers of one turn as one: the first's id and model, the content of both in order,
 * the later one's stop. Its usage is what the client is told: the later call's prompt (the context
 * the conversation holds, which Codex and Gemini CLI compact by) and both calls' output and
 * searches. What the calls were billed, each continuation's input the whole prompt again, is
 * {@link sumCounts} of their usages (the log row's).
 */
export function joinAnswers(first: Json, next: Json): Json {
  const content = [
    ...(Array.isArray(first.content) ? first.content : []),
    ...(Array.isArray(next.content) ? next.content : []),
  ]
  const before = isObj(first.usage) ? first.usage : {}
  const usage: Json = isObj(next.usage) ? {...next.usage} : {}
  for (const key of Object.keys(before))
    if (!PROMPT_COUNTS.has(key)) usage[key] = key in usage ? sumCounts(before[key], usage[key]) : before[key]
  return {
    ...next,
    id: first.id ?? next.id,
    model: first.model ?? next.model,
    content,
    usage,
  }
}
