/**
 * Turn-2 checks the real vendors make on the history a client sends back, and the verifiable
 * opaque values the simulator hands out so it can make them:
 *
 * - signature = base64(`simsig:` + first 32 hex digits of sha256(`<kind>:<payload>`)), where
 *   kind/payload is `thinking`/the thinking text (Anthropic thinking block) or
 *   `functionCall`/name + stable JSON of args (Gemini `thoughtSignature`);
 * - Responses `encrypted_content` = base64(`simenc:` + hash + `:` + reasoning text), verifiable
 *   by itself since a reasoning input item need not carry its text.
 *
 * Each check returns the vendor's error text, or undefined when the history is fine.
 */
import {createHash} from 'node:crypto'

type Body = Record<string, unknown>

function hash(kind: string, payload: string): string {
  return createHash('sha256').update(`${kind}:${payload}`).digest('hex').slice(0, 32)
}

/** JSON with sorted object keys, so a signature survives a translation that reorders keys. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Body)[k])}`)
      .join(',')}}`
  return JSON.stringify(value) ?? 'null'
}

/** The signature of an Anthropic thinking block. */
export function thinkingSignature(thinking: string): string {
  return Buffer.from(`simsig:${hash('thinking', thinking)}`).toString('base64')
}

/** The `thoughtSignature` of a Gemini functionCall part. */
export function functionCallSignature(name: string, args: unknown): string {
  return Buffer.from(`simsig:${hash('functionCall', `${name}:${stableJson(args ?? {})}`)}`).toString('base64')
}

/** The `encrypted_content` of a Responses reasoning item. */
export function encryptReasoning(text: string): string {
  return Buffer.from(`simenc:${hash('reasoning', text)}:${text}`).toString('base64')
}

/** True when the sim made this `encrypted_content`. */
export function verifyEncryptedReasoning(value: unknown): boolean {
  if (typeof value !== 'string') return false
  const m = /^simenc:([0-9a-f]{32}):([\s\S]*)$/.exec(Buffer.from(value, 'base64').toString('utf8'))
  return !!m && m[1] === hash('reasoning', m[2]) && encryptReasoning(m[2]) === value
}

const blocksOf = (content: unknown): Body[] => (Array.isArray(content) ? (content as Body[]) : [])

/**
 * Anthropic Messages: each `tool_use` answered by a `tool_result` in the next message, each
 * `tool_result` answering a `tool_use` of the message before, in Anthropic's words.
 */
function toolPairingProblem(messages: Body[]): string | undefined {
  // consecutive messages of one role are one turn, as Anthropic reads them
  const runs: Array<{role: unknown; at: number; blocks: Array<{block: Body; n: number; m: number}>}> = []
  for (const [n, message] of messages.entries()) {
    const blocks = blocksOf(message?.content).map((block, m) => ({block, n, m}))
    const last = runs.at(-1)
    if (last && last.role === message?.role) last.blocks.push(...blocks)
    else runs.push({role: message?.role, at: n, blocks})
  }
  for (const [r, run] of runs.entries()) {
    if (run.role === 'assistant') {
      const ids = run.blocks.filter((b) => b.block?.type === 'tool_use').map((b) => String(b.block.id))
      if (ids.length === 0 || r === runs.length - 1) continue
      const answered = new Set(
        runs[r + 1].blocks
          .filter((b) => b.block?.type === 'tool_result')
          .map((b) => String(b.block.tool_use_id)),
      )
      const missing = ids.filter((id) => !answered.has(id))
      if (missing.length > 0)
        return `messages.${run.at}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`
      continue
    }
    const previous = r > 0 && runs[r - 1].role === 'assistant' ? runs[r - 1].blocks : []
    const before = new Set(
      previous.filter((b) => b.block?.type === 'tool_use').map((b) => String(b.block.id)),
    )
    for (const {block, n, m} of run.blocks)
      if (block?.type === 'tool_result' && !before.has(String(block.tool_use_id)))
        return `messages.${n}.content.${m}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
  }
  return undefined
}

/**
 * Anthropic Messages: tool calls and results paired (toolPairingProblem); every thinking block's
 * signature must be the sim's for its text; with
 * thinking enabled, the last assistant turn that calls a tool must start with a thinking block.
 */
export function messagesHistoryProblem(body: Body): string | undefined {
  const messages = Array.isArray(body.messages) ? (body.messages as Body[]) : []
  const pairing = toolPairingProblem(messages)
  if (pairing) return pairing
  const media = messagesMediaProblem(messages)
  if (media) return media
  const names = new Set<unknown>()
  for (const [i, tool] of (Array.isArray(body.tools) ? (body.tools as Body[]) : []).entries()) {
    if (typeof tool?.name === 'string' && !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name))
      return `tools.${i}.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`
    // a function beside the web search tool (named `web_search`) under that name, as Anthropic says it
    if (names.has(tool?.name)) return 'tools: Tool names must be unique.'
    names.add(tool?.name)
  }
  for (const [n, message] of messages.entries()) {
    if (message?.role !== 'assistant') continue
    for (const [m, block] of blocksOf(message.content).entries()) {
      if (block?.type !== 'thinking') continue
      if (block.signature !== thinkingSignature(String(block.thinking ?? '')))
        return `messages.${n}.content.${m}: Invalid \`signature\` in \`thinking\` block`
    }
  }
  const thinking = body.thinking as Body | undefined
  if (!thinking || (thinking.type !== 'enabled' && thinking.type !== 'adaptive')) return undefined
  let last = -1
  for (let i = messages.length - 1; i >= 0 && last < 0; i--) if (messages[i]?.role === 'assistant') last = i
  if (last < 0) return undefined
  const blocks = blocksOf(messages[last].content)
  const firstTool = blocks.findIndex((b) => b?.type === 'tool_use')
  if (firstTool < 0) return undefined
  const before = blocks.slice(0, firstTool)
  if (before.some((b) => b?.type === 'thinking' || b?.type === 'redacted_thinking')) return undefined
  return (
    `messages.${last}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found ` +
    `\`${String(blocks[0]?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must ` +
    'start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). ' +
    'We recommend you include thinking blocks from previous turns. To avoid this requirement, disable ' +
    '`thinking`. Please consult our documentation at ' +
    'https://docs.claude.com/en/docs/build-with-claude/extended-thinking'
  )
}

const IMAGE_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp']

/**
 * Anthropic's check of a base64 image's or document's media type, in its words: an image block
 * takes the four image types only, a base64 document a PDF only (a PDF sent as an image, or
 * another file as a document, is refused). Blocks inside a tool result are checked too.
 */
function messagesMediaProblem(messages: Body[]): string | undefined {
  const check = (block: Body, where: string): string | undefined => {
    const source = block?.source as Body | undefined
    if (source?.type !== 'base64') return undefined
    if (block.type === 'image' && !IMAGE_TYPES.includes(String(source.media_type)))
      return `${where}.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`
    if (block.type === 'document' && source.media_type !== 'application/pdf')
      return `${where}.document.source.base64.media_type: Input should be 'application/pdf'`
    return undefined
  }
  for (const [n, message] of messages.entries())
    for (const [m, block] of blocksOf(message?.content).entries()) {
      const where = `messages.${n}.content.${m}`
      const problem =
        check(block, where) ??
        (block?.type === 'tool_result'
          ? blocksOf(block.content)
              .map((inner, k) => check(inner, `${where}.tool_result.content.${k}`))
              .find(Boolean)
          : undefined)
      if (problem) return problem
    }
  return undefined
}

/** Gemini's documented value that skips thought signature validation. */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator'

/**
 * Gemini: the first functionCall part of each model turn must carry a `thoughtSignature` the sim
 * made (or the documented bypass). A missing one is refused only for `gemini-3*` models and only
 * in the current turn (model turns after the last user turn with text), as Gemini 3 does.
 */
export function geminiHistoryProblem(model: string, contents: unknown): string | undefined {
  const list = Array.isArray(contents) ? (contents as Body[]) : []
  let currentFrom = 0
  list.forEach((c, i) => {
    const parts = blocksOf(c?.parts)
    if ((c?.role ?? 'user') === 'user' && parts.some((p) => typeof p?.text === 'string')) currentFrom = i
  })
  for (const [i, content] of list.entries()) {
    if (content?.role !== 'model') continue
    const parts = blocksOf(content.parts)
    const index = parts.findIndex((p) => p?.functionCall !== undefined)
    if (index < 0) continue
    const part = parts[index]
    const call = part.functionCall as Body
    const signature = part.thoughtSignature
    if (signature === undefined) {
      if (model.startsWith('gemini-3') && i > currentFrom)
        return (
          'Function call is missing a thought_signature in functionCall parts. This is required for ' +
          'tools to work correctly, and missing thought_signature may lead to degraded model ' +
          `performance. Additional data, function call \`default_api:${String(call?.name)}\` , ` +
          `position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures ` +
          'for more details.'
        )
      continue
    }
    if (signature === SKIP_THOUGHT_SIGNATURE) continue
    if (signature !== functionCallSignature(String(call?.name), call?.args))
      return 'Corrupted thought signature.'
  }
  return undefined
}

/** Responses: reasoning input items' `encrypted_content` must be the sim's. */
export function responsesHistoryProblem(input: unknown): string | undefined {
  if (!Array.isArray(input)) return undefined
  for (const item of input as Body[]) {
    if (item?.type !== 'reasoning' || item.encrypted_content === undefined) continue
    if (!verifyEncryptedReasoning(item.encrypted_content))
      return `The encrypted content for item ${String(item.id ?? 'rs_unknown')} could not be verified.`
  }
  return undefined
}

/**
 * DeepSeek thinking mode: an assistant message with `tool_calls` must carry `reasoning_content`
 * back (its content is not checked: DeepSeek does not sign it).
 */
export function chatHistoryProblem(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return undefined
  for (const [i, m] of (messages as Body[]).entries()) {
    if (m?.role !== 'assistant' || !Array.isArray(m.tool_calls) || m.tool_calls.length === 0) continue
    if (typeof m.reasoning_content !== 'string')
      return `Missing \`reasoning_content\` field in the assistant message at message index ${i}`
  }
  return undefined
}
