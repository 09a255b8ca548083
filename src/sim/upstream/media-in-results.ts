/**
 * `text-tool-results`: a server that takes an image in a user turn but refuses one (or a document,
 * a file) inside a tool result, in its words. The Messages endpoint as LM Studio's `/v1/messages`
 * (lmstudio #425): a `tool_result` whose `content` array holds any block that is not text gets 400
 * "Only text tool_result blocks are supported when tool_result.content is an array." in
 * Anthropic's error body. The Responses endpoint as Zen/OpenCode Go's (opencode #48740): a
 * `function_call_output` (or `custom_tool_call_output`) whose `output` array holds any part that
 * is not `input_text` gets its pydantic 422 `{"error":{"param":"messages.N.user.content.str",
 * "type":"invalid_request_error","message":"... Input should be a valid string"}}` (N: the
 * message the server made of the output, counting the instructions' system message).
 */
import type {Quirks} from './quirks.js'

type Body = Record<string, unknown>

const typeOf = (part: unknown): unknown =>
  typeof part === 'object' && part !== null ? (part as Body).type : undefined

/** LM Studio's refusal of a Messages body, as the status and whole error body; undefined when taken. */
export function messagesMediaInResultRefusal(
  body: Body,
  quirks: Quirks,
): {status: number; raw: unknown} | undefined {
  if (!quirks.has('text-tool-results') || !Array.isArray(body.messages)) return undefined
  const refused = (body.messages as Array<Body | null>).some(
    (m) =>
      Array.isArray(m?.content) &&
      (m.content as unknown[]).some(
        (b) =>
          typeOf(b) === 'tool_result' &&
          Array.isArray((b as Body).content) &&
          ((b as Body).content as unknown[]).some((c) => typeOf(c) !== 'text'),
      ),
  )
  if (!refused) return undefined
  const message = 'Only text tool_result blocks are supported when tool_result.content is an array.'
  return {status: 400, raw: {type: 'error', error: {type: 'invalid_request_error', message}}}
}

/** Zen's refusal of a Responses body, as the status and whole error body; undefined when taken. */
export function responsesMediaInOutputRefusal(
  body: Body,
  quirks: Quirks,
): {status: number; raw: unknown} | undefined {
  if (!quirks.has('text-tool-results') || !Array.isArray(body.input)) return undefined
  const at = (body.input as unknown[]).findIndex(
    (item) =>
      (typeOf(item) === 'function_call_output' || typeOf(item) === 'custom_tool_call_output') &&
      Array.isArray((item as Body).output) &&
      ((item as Body).output as unknown[]).some((p) => typeOf(p) !== 'input_text'),
  )
  if (at === -1) return undefined
  const index = at + (typeof body.instructions === 'string' && body.instructions !== '' ? 1 : 0)
  return {
    status: 422,
    raw: {
      error: {
        param: `messages.${index}.user.content.str`,
        type: 'invalid_request_error',
        message: `1 validation error: messages.${index}.user.content.str Input should be a valid string`,
      },
    },
  }
}
