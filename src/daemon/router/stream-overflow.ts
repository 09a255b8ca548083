/**
 * A passed-through chat stream whose first event is an error that states a prompt past the
 * context window, said in OpenAI's words. LM Studio answers a streamed request that does not fit
 * with a 200 and one `event: error` whose data is `{"error":"Input does not fit in context
 * length. The input has P tokens, but the context length only supports W tokens."}`
 * (lmstudio-bug-tracker #2322, LM Studio 0.4.21; its older "Trying to keep the first P tokens when
 * context the overflows ..."). That is no OpenAI error: `error` a string, no code, words no
 * agent's overflow test is written for (the AI SDK's chat schema, under OpenCode and Kilo, wants
 * `error.message`; the OpenAI SDK, under Qwen Code, quotes the string as JSON), so the agent does
 * not compact and every turn fails the same way. Rewritten, the event is OpenAI's (`code:
 * context_length_exceeded`, "This model's maximum context length is W tokens. However, your
 * messages resulted in P tokens."), as a translated route says it (../../protocols/
 * context-overflow.ts), with LM Studio's words after them. Only the stream's first event is looked
 * at, and only when the stream opens with an error (no header is held, no other stream is read).
 * That event may come in more than one read (its `event: error` line written apart from its data,
 * a reverse proxy or a LAN hop between): the stream's first bytes are then kept back until the
 * event ends, the body ends, or {@link HOLD_BYTES} came (review75 #1).
 */
import {inEntranceWords, saidOverflow} from '../../protocols/context-overflow.js'

/** The chunk's first event is an error (`event: error`, or a `data:` line holding `"error"` first). */
const OPENS_WITH_ERROR = /^(?:event:[ \t]*error\b|data:[ \t]*\{\s*"error")/

/**
 * The most of a stream's first bytes kept back for the end of the error event they open with
 * (LM Studio's event is some 200 bytes; past this, they go as they came).
 */
export const HOLD_BYTES = 8 * 1024

/** A stream's first bytes with their first event in OpenAI's words, and the window it states. */
interface Rewritten {
  bytes: Buffer
  window: number | undefined
}

/**
 * `chunk`, a passed-through chat stream's first bytes, with its first event in OpenAI's words for
 * a prompt past the context window, and the window it states; `'unended'` when the bytes open
 * with an error event that has not ended in them, more may come (`final` false) and they are
 * under {@link HOLD_BYTES}: the caller keeps them back and asks again with more. Undefined when
 * that event is no such error, or does not end in the bytes and no more are waited for. A stream
 * that does not open with an error costs one test of its first 32 bytes.
 */
export function overflowFirstEvent(chunk: Buffer): Rewritten | undefined
export function overflowFirstEvent(chunk: Buffer, final: boolean): Rewritten | 'unended' | undefined
export function overflowFirstEvent(chunk: Buffer, final = true): Rewritten | 'unended' | undefined {
  if (!OPENS_WITH_ERROR.test(chunk.toString('latin1', 0, Math.min(chunk.length, 32)))) return undefined
  const text = chunk.toString('utf8')
  const boundary = /\r\n\r\n|\n\n|\r\r/.exec(text)
  if (!boundary) return !final && chunk.length < HOLD_BYTES ? 'unended' : undefined
  const end = boundary.index + boundary[0].length
  const data = text
    .slice(0, boundary.index)
    .split(/\r\n|\n|\r/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''))
    .join('\n')
  let error: unknown
  try {
    error = (JSON.parse(data) as {error?: unknown}).error
  } catch {
    return undefined
  }
  const said =
    typeof error === 'string'
      ? error
      : typeof (error as {message?: unknown} | undefined)?.message === 'string'
        ? (error as {message: string}).message
        : undefined
  // (OpenAI's own code already there: as it came)
  if (said === undefined || inEntranceWords('chat', data)) return undefined
  const overflow = saidOverflow('chat', said, data)
  if (!overflow) return undefined
  const event = `data: ${JSON.stringify({
    error: {message: overflow.message, type: 'invalid_request_error', param: null, code: overflow.code},
  })}\n\n`
  return {
    bytes: Buffer.concat([Buffer.from(event), chunk.subarray(Buffer.byteLength(text.slice(0, end)))]),
    window: overflow.window,
  }
}
