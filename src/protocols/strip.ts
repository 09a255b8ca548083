/**
 * A client that was once answered through translation holds values wrapped for gwctl
 * (`gwx1.<family>.<value>`, see `wrapOpaque`): a thinking signature a chat upstream's reasoning
 * was given, a Gemini signature carried in a Responses reasoning item. When the same history later
 * goes to an upstream of the client's own family untranslated (the route changed, a fallback), the
 * vendor would refuse those values with a 400. They are removed here, with what depends on them.
 */
import type {Family} from './ir.js'
import {webSearchText} from './ir.js'
import {searchResultPart} from './web-search.js'

/** The bytes every wrapped value starts with, as a JSON string: cheap to look for in a raw body. */
export const WRAPPED_MARKER = '"gwx1.'

type Json = Record<string, unknown>
const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v)
const wrapped = (v: unknown): boolean => typeof v === 'string' && v.startsWith('gwx1.')

/** The Gemini value that tells the API to skip its thought-signature check of a call. */
const SKIP_SIGNATURE = 'skip_thought_signature_validator'

/**
 * Removes gwctl-wrapped values from a request body of `family` (in place). Returns true when
 * anything was removed.
 */
export function stripWrapped(family: Family, body: Json): boolean {
  switch (family) {
    case 'messages':
      return stripMessages(body)
    case 'responses':
      return stripResponses(body)
    case 'gemini':
      return stripGemini(body)
    default:
      return false
  }
}

function stripMessages(body: Json): boolean {
  if (!Array.isArray(body.messages)) return false
  let removed = false
  for (const message of body.messages) {
    if (!isObj(message) || !Array.isArray(message.content)) continue
    if (searchesAsText(message.content)) removed = true
    const kept = message.content.filter(
      (block) =>
        !(
          isObj(block) &&
          ((block.type === 'thinking' && wrapped(block.signature)) ||
            (block.type === 'redacted_thinking' && wrapped(block.data)))
        ),
    )
    if (kept.length !== message.content.length) {
      removed = true
      message.content = kept.length > 0 ? kept : [{type: 'text', text: ''}]
    }
  }
  // With thinking on, Anthropic wants the running tool loop's assistant turns to start with
  // thinking: without the removed blocks the request goes with thinking off instead of a 400.
  if (
    removed &&
    isObj(body.thinking) &&
    body.thinking.type !== 'disabled' &&
    loopLacksThinking(body.messages)
  )
    delete body.thinking
  return removed
}

/**
 * A search another vendor ran, as the gateway wrote it for a Messages client (its results'
 * `encrypted_content` wrapped: only Anthropic can make one): the `server_tool_use` and its
 * `web_search_tool_result` become one text block that says what was searched and found, as a
 * translated request sends it (ir.ts `webSearchText`). In place; true when any was.
 */
function searchesAsText(content: unknown[]): boolean {
  let changed = false
  for (let i = 0; i < content.length; i++) {
    const block = content[i]
    // the gateway's searches carry a wrapped id (web-search.ts `serverToolId`)
    if (!isObj(block) || block.type !== 'web_search_tool_result' || !wrapped(block.tool_use_id)) continue
    const at = content.findIndex(
      (b) => isObj(b) && b.type === 'server_tool_use' && b.id === block.tool_use_id,
    )
    const call = at >= 0 ? (content[at] as Json) : undefined
    const search = searchResultPart(block)
    if (isObj(call?.input) && typeof call.input.query === 'string') search.query = call.input.query
    // what a translated request sends for it (a block of its own here: no paragraph break after)
    const text = webSearchText(search).trimEnd()
    content[i] = {type: 'text', text}
    if (at >= 0) {
      content.splice(at, 1)
      if (at < i) i--
    }
    changed = true
  }
  // a call whose result went missing (a cut stream)
  for (let i = content.length - 1; i >= 0; i--) {
    const b = content[i]
    if (isObj(b) && b.type === 'server_tool_use' && wrapped(b.id)) {
      content.splice(i, 1)
      changed = true
    }
  }
  return changed
}

/** True when an assistant turn after the last plain user turn has tool_use but no thinking first. */
function loopLacksThinking(messages: unknown[]): boolean {
  let start = 0
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (!isObj(m) || m.role !== 'user') continue
    const content = m.content
    const onlyResults =
      Array.isArray(content) &&
      content.length > 0 &&
      content.every((b) => isObj(b) && b.type === 'tool_result')
    if (!onlyResults) {
      start = i + 1
      break
    }
  }
  for (const m of messages.slice(start)) {
    if (!isObj(m) || m.role !== 'assistant' || !Array.isArray(m.content)) continue
    const first = m.content.find((b) => isObj(b) && b.type !== 'text')
    const hasTool = m.content.some((b) => isObj(b) && b.type === 'tool_use')
    if (hasTool && !(isObj(first) && (first.type === 'thinking' || first.type === 'redacted_thinking')))
      return true
  }
  return false
}

function stripResponses(body: Json): boolean {
  if (!Array.isArray(body.input)) return false
  const kept = body.input.filter(
    (item) => !(isObj(item) && item.type === 'reasoning' && wrapped(item.encrypted_content)),
  )
  if (kept.length === body.input.length) return false
  body.input = kept
  return true
}

function stripGemini(body: Json): boolean {
  if (!Array.isArray(body.contents)) return false
  let removed = false
  const emptied = new Set<unknown>()
  for (const content of body.contents) {
    if (!isObj(content) || !Array.isArray(content.parts) || !content.parts.length) continue
    const parts: unknown[] = []
    for (const part of content.parts) {
      if (!isObj(part) || !wrapped(part.thoughtSignature)) {
        parts.push(part)
        continue
      }
      removed = true
      if (part.functionCall !== undefined) parts.push({...part, thoughtSignature: SKIP_SIGNATURE})
      else if (!(part.thought === true && !part.text)) {
        const rest = {...part}
        delete rest.thoughtSignature
        parts.push(rest)
      }
    }
    content.parts = parts
    if (!parts.length) emptied.add(content)
  }
  // a content left with no part (a signature piece in a content of its own: @google/genai's chat
  // session keeps one per streamed chunk) goes too: Gemini refuses it ("contents.parts must not be
  // empty", langchain-google #691)
  if (emptied.size) body.contents = body.contents.filter((c) => !emptied.has(c))
  return removed
}
