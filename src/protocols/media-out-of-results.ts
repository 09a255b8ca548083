/**
 * A history whose images and documents inside tool results are moved out of them, for a server
 * that takes the same image in a user turn but refuses it inside a result
 * (`UpstreamAdaptation.mediaOutOfResults`). Claude Code's Read of a PNG or a PDF gives it back
 * inside a `tool_result` block's `content` array; Codex's `view_image` (and a computer-use or
 * browser tool) inside a `function_call_output` whose `output` is an array. Ollama's `/v1/messages`
 * (local and cloud: "Input should be a valid string", ollama #18055), LM Studio's ("Only text
 * tool_result blocks are supported when tool_result.content is an array.", lmstudio #425) and
 * Responses servers that are not OpenAI's (Zen/OpenCode Go's 422 "Input should be a valid string",
 * opencode #48740; a relay's "Invalid input" with `param` `messages.12.content`, command-code
 * #795) refuse it, and since the history keeps it, every later request of the session too.
 *
 * - Messages: in each user message, every `image` and `document` block inside a `tool_result`'s
 *   content goes, in its order, to right after the message's last `tool_result` block (top-level
 *   blocks of the same user message, as the translated routes do: docs/TRANSLATION.md). The result
 *   keeps its other blocks as they were; one left with nothing gets the string
 *   {@link placeholder} (`[image attached below]`). A moved block keeps its `cache_control`, and
 *   every other mark stays where it was.
 * - Responses: a `function_call_output` (or `custom_tool_call_output`) whose `output` array holds
 *   `input_image` or `input_file` parts keeps the rest: its texts as one string output (joined by
 *   a newline), or the placeholder when no text is left (any other part keeps the array); the moved
 *   parts go, in their order, in one `{"type":"message","role":"user","content":[...]}` item right
 *   after the run of adjacent outputs they came from.
 *
 * The rewrite depends only on the history, so every turn gets the same bytes for the same history
 * (the upstream's prompt cache).
 */
import {withInputMapped} from './responses-input.js'

type Item = Record<string, unknown>

const MESSAGES_MEDIA = new Set(['image', 'document'])
const RESPONSES_MEDIA = new Set(['input_image', 'input_file'])
const OUTPUTS = new Set(['function_call_output', 'custom_tool_call_output'])

const typeOf = (part: unknown): unknown =>
  typeof part === 'object' && part !== null ? (part as Item).type : undefined

/**
 * The line a result left with no content gets: `[image attached below]`, `[document attached
 * below]` (Responses: `[file attached below]`), or both kinds joined by "and", as moved.
 */
export function placeholder(moved: readonly unknown[]): string {
  const image = moved.some((p) => typeOf(p) === 'image' || typeOf(p) === 'input_image')
  const document = moved.some((p) => typeOf(p) === 'document')
  const file = moved.some((p) => typeOf(p) === 'input_file')
  const kinds = [image && 'image', document && 'document', file && 'file'].filter(Boolean)
  return `[${kinds.join(' and ')} attached below]`
}

/**
 * A Messages conversation with the images and documents of its tool results moved out of them (see
 * the module's comment); the same array when none holds any.
 */
export function messagesMediaOutOfResults(messages: readonly unknown[]): readonly unknown[] {
  let out: unknown[] | undefined
  for (let i = 0; i < messages.length; i++) {
    const moved = userTurnMediaOut(messages[i])
    if (moved !== undefined) (out ??= messages.slice())[i] = moved
  }
  return out ?? messages
}

/** One user message with its results' media moved out of them; undefined when it holds none. */
function userTurnMediaOut(message: unknown): Item | undefined {
  const m = message as Item | null
  if (m?.role !== 'user' || !Array.isArray(m.content)) return undefined
  const content = m.content as unknown[]
  let blocks: unknown[] | undefined
  let lastResult = -1
  const moved: unknown[] = []
  for (let j = 0; j < content.length; j++) {
    const block = content[j] as Item | null
    if (typeOf(block) !== 'tool_result') continue
    lastResult = j
    if (!Array.isArray(block!.content)) continue
    const inner = block!.content as unknown[]
    if (!inner.some((c) => MESSAGES_MEDIA.has(typeOf(c) as string))) continue
    const media = inner.filter((c) => MESSAGES_MEDIA.has(typeOf(c) as string))
    const kept = inner.filter((c) => !MESSAGES_MEDIA.has(typeOf(c) as string))
    moved.push(...media)
    ;(blocks ??= content.slice())[j] = {...block, content: kept.length > 0 ? kept : placeholder(media)}
  }
  if (blocks === undefined) return undefined
  blocks.splice(lastResult + 1, 0, ...moved)
  return {...m, content: blocks}
}

/**
 * A Responses `input` with the images and files of its tool outputs moved out of them (see the
 * module's comment); the same array when none holds any.
 */
export function responsesMediaOutOfOutputs(input: readonly unknown[]): readonly unknown[] {
  let out: unknown[] | undefined
  let pending: unknown[] = []
  for (let i = 0; i < input.length; i++) {
    const moved = outputMediaOut(input[i])
    if (moved !== undefined) {
      out ??= input.slice(0, i)
      out.push(moved.item)
      pending.push(...moved.media)
    } else out?.push(input[i])
    // the end of a run of outputs: what was moved out of them goes right after it
    if (pending.length > 0 && !OUTPUTS.has(typeOf(input[i + 1]) as string)) {
      out!.push({type: 'message', role: 'user', content: pending})
      pending = []
    }
  }
  return out ?? input
}

/** A tool output with its media moved out, and that media; undefined when it holds none. */
function outputMediaOut(item: unknown): {item: Item; media: unknown[]} | undefined {
  if (!OUTPUTS.has(typeOf(item) as string)) return undefined
  const output = (item as Item).output
  if (!Array.isArray(output) || !output.some((p) => RESPONSES_MEDIA.has(typeOf(p) as string)))
    return undefined
  const media = output.filter((p) => RESPONSES_MEDIA.has(typeOf(p) as string))
  const kept = output.filter((p) => !RESPONSES_MEDIA.has(typeOf(p) as string))
  const texts = kept.every((p) => typeOf(p) === 'input_text' && typeof (p as Item).text === 'string')
  // (an empty text, which a translated result's cache mark leaves, is no text)
  const text = texts ? kept.map((p) => (p as Item).text as string).join('\n') : undefined
  const rest = text === undefined ? kept : text === '' ? placeholder(media) : text
  return {item: {...(item as Item), output: rest}, media}
}

const TOOL_RESULT = Buffer.from('"tool_result"')
const MESSAGES_NEEDLES = [Buffer.from('"image"'), Buffer.from('"document"')]
const CALL_OUTPUT = Buffer.from('_call_output"')
const RESPONSES_NEEDLES = [Buffer.from('"input_image"'), Buffer.from('"input_file"')]

/**
 * Whether a body of `family` may hold media inside a tool result (a byte search: a body that
 * holds none is known so without parsing it; one that may is confirmed by the rewrite).
 */
export function mayHoldMediaInResults(family: 'messages' | 'responses', body: Buffer): boolean {
  return family === 'messages'
    ? body.indexOf(TOOL_RESULT) !== -1 && MESSAGES_NEEDLES.some((n) => body.indexOf(n) !== -1)
    : body.lastIndexOf(CALL_OUTPUT) !== -1 && RESPONSES_NEEDLES.some((n) => body.indexOf(n) !== -1)
}

/**
 * A Responses body passed through (Codex's) with {@link responsesMediaOutOfOutputs} applied to its
 * `input`, every other member as it came (parsed and written again, as the other rewrites of a
 * body passed through are: the same bytes for the same body). Undefined for a body that is not
 * JSON or holds no media inside an output: it goes as it came.
 */
export function withMediaOutOfOutputs(body: Buffer): Buffer | undefined {
  if (!mayHoldMediaInResults('responses', body)) return undefined
  return withInputMapped(body, responsesMediaOutOfOutputs)
}

/**
 * Whether a Messages body (parsed) holds an image or document inside a tool result: what a refusal
 * of media inside results is learned from.
 */
export function messagesHoldMediaInResults(body: Record<string, unknown>): boolean {
  return Array.isArray(body.messages) && messagesMediaOutOfResults(body.messages) !== body.messages
}
