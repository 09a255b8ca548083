/**
 * Turn-2 checks the real vendors make on the history a client sends back, and the verifiable
 * opaque values the simulator hands out so it can make them:
 *
 * - signature = base64(`simsig:` + first 32 hex digits of sha256(`<kind>:<payload>`)), where
 *   kind/payload is `thinking`/the thinking text (Anthropic thinking block) or
 *   `functionCall`/name + stable JSON of args (Gemini `thoughtSignature`); a thinking block of a
 *   model with prefix binding carries its binding B too: base64(`simsig:` + B + `:` + hash of
 *   `thinking`/B + `:` + text), see {@link bindingProblem};
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

/**
 * The signature of an Anthropic thinking block; with `binding` (a model with prefix binding: what
 * {@link answerBinding} gives), bound to the block's prefix.
 */
export function thinkingSignature(thinking: string, binding?: string): string {
  if (binding === undefined) return Buffer.from(`simsig:${hash('thinking', thinking)}`).toString('base64')
  return Buffer.from(`simsig:${binding}:${hash('thinking', `${binding}:${thinking}`)}`).toString('base64')
}

const BINDING = /^([0-9a-f]{32})\.([0-9a-f]{16})\.(\d+)$/

/**
 * The binding a thinking block's signature carries (`''` for an unbound one), or undefined when
 * the signature is not the sim's for this text.
 */
function signedBinding(signature: unknown, thinking: string): string | undefined {
  if (typeof signature !== 'string') return undefined
  const decoded = Buffer.from(signature, 'base64').toString('utf8')
  const m = /^simsig:(?:([0-9a-f.]+\.\d+):)?[0-9a-f]{32}$/.exec(decoded)
  if (!m || (m[1] !== undefined && !BINDING.test(m[1]))) return undefined
  return thinkingSignature(thinking, m[1]) === signature ? (m[1] ?? '') : undefined
}

/** The `thoughtSignature` of a Gemini functionCall part. */
export function functionCallSignature(name: string, args: unknown): string {
  return Buffer.from(`simsig:${hash('functionCall', `${name}:${stableJson(args ?? {})}`)}`).toString('base64')
}

/**
 * The `encrypted_content` of a Responses reasoning item; with `account` (quirk `encrypted-foreign`:
 * {@link simAccount} of the request's key), one only that account reads.
 */
export function encryptReasoning(text: string, account?: string): string {
  const payload = account === undefined ? text : `${account}:${text}`
  return Buffer.from(`simenc:${hash('reasoning', payload)}:${text}`).toString('base64')
}

/** True when the sim made this `encrypted_content` (for `account`, when given). */
export function verifyEncryptedReasoning(value: unknown, account?: string): boolean {
  if (typeof value !== 'string') return false
  const m = /^simenc:([0-9a-f]{32}):([\s\S]*)$/.exec(Buffer.from(value, 'base64').toString('utf8'))
  return !!m && encryptReasoning(m[2], account) === value
}

/**
 * The `data` of a `redacted_thinking` block (quirk `redacted-thinking`): base64(`simred:` + hash
 * + `:` + what it stands for), verifiable by itself.
 */
export function redactedThinking(payload: string): string {
  return Buffer.from(`simred:${hash('redacted', payload)}:${payload}`).toString('base64')
}

/**
 * Quirk `redacted-thinking`: every `redacted_thinking` block of the history holds `data` the sim
 * made, unchanged, in Anthropic's words for a block that is not as it came (anthropics/claude-code
 * #63267). A `thinking` block that holds such data as its signature is the signature check's
 * (messagesHistoryProblem).
 */
export function redactedThinkingProblem(body: Body): string | undefined {
  const messages = Array.isArray(body.messages) ? (body.messages as Body[]) : []
  for (const [n, message] of messages.entries()) {
    if (message?.role !== 'assistant') continue
    for (const [m, block] of blocksOf(message.content).entries()) {
      if (block?.type !== 'redacted_thinking') continue
      const decoded = typeof block.data === 'string' ? Buffer.from(block.data, 'base64').toString('utf8') : ''
      const made = /^simred:[0-9a-f]{32}:([\s\S]*)$/.exec(decoded)
      if (!made || redactedThinking(made[1]) !== block.data)
        return `messages.${n}.content.${m}: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.`
    }
  }
  return undefined
}

/** The account a key stands for (quirk `encrypted-foreign`): a hash of it, never the key itself. */
export const simAccount = (key: string): string => hash('account', key).slice(0, 12)

const blocksOf = (content: unknown): Body[] => (Array.isArray(content) ? (content as Body[]) : [])

/**
 * Anthropic Messages: a `tool_use` id that an earlier `tool_use` of the history has, in Anthropic's
 * words (a history whose chat upstream named its calls by position, Kimi K3's `Bash:0` of every
 * turn; opencode #1279, claude-code #20901).
 */
function toolIdRepeatProblem(messages: Body[]): string | undefined {
  const ids = new Set<string>()
  for (const [n, message] of messages.entries())
    for (const [m, block] of blocksOf(message?.content).entries()) {
      if (block?.type !== 'tool_use') continue
      const id = String(block.id)
      // (and one of characters Anthropic's API does not take: Kimi's `Bash:0` passed on as it came)
      if (!/^[a-zA-Z0-9_-]+$/.test(id))
        return `messages.${n}.content.${m}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`
      if (ids.has(id)) return `messages.${n}.content.${m}: \`tool_use\` ids must be unique`
      ids.add(id)
    }
  return undefined
}

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
 * signature must be the sim's for its text (bound or not: the binding is bindingProblem's); with
 * thinking enabled, the last assistant turn that calls a tool must start with a thinking block.
 * `unsigned`: an Anthropic-compatible server that verifies no signature (DeepSeek's, Kimi's):
 * neither of the thinking checks.
 */
export function messagesHistoryProblem(body: Body, unsigned = false): string | undefined {
  const messages = Array.isArray(body.messages) ? (body.messages as Body[]) : []
  const repeated = toolIdRepeatProblem(messages)
  if (repeated) return repeated
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
  // (a server that is not Anthropic's, in thinking mode: no signature verified, its own rule)
  if (unsigned) return undefined
  for (const [n, message] of messages.entries()) {
    if (message?.role !== 'assistant') continue
    for (const [m, block] of blocksOf(message.content).entries()) {
      if (block?.type !== 'thinking') continue
      if (signedBinding(block.signature, String(block.thinking ?? '')) === undefined)
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

/** A content value as blocks: a string is one text block. */
const contentBlocks = (content: unknown): Body[] =>
  typeof content === 'string' ? [{type: 'text', text: content}] : blocksOf(content)

const isThinking = (block: Body): boolean => block?.type === 'thinking' || block?.type === 'redacted_thinking'

/** A value without `cache_control` anywhere (a cache mark is not the prefix's content). */
function uncached(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(uncached)
  if (!value || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.entries(value as Body)
      .filter(([k]) => k !== 'cache_control')
      .map(([k, v]) => [k, uncached(v)]),
  )
}

/**
 * The hash of a thinking block's prefix, the block at `messages[at].content[j]` (`at` may be
 * `messages.length`, a block of an answer still to come): `system`, `tools`, each message before
 * it (its role and content) and the blocks before it in its own message, as content (stable JSON
 * without `cache_control`; a string content or system is one text block), so that formatting,
 * key order and cache marks do not count. Thinking blocks are not in it: they are chained
 * ({@link bindingOf}), so that a leading run of them may be left out, as Anthropic allows.
 */
function prefixHash(body: Body, messages: Body[], at: number, j: number): string {
  const kept = (blocks: Body[]) => blocks.filter((b) => !isThinking(b))
  const prefix = {
    system: body.system === undefined ? [] : contentBlocks(body.system),
    tools: body.tools ?? [],
    messages: messages.slice(0, at).map((m) => ({role: m?.role, content: kept(contentBlocks(m?.content))})),
    before: kept(contentBlocks(messages[at]?.content).slice(0, j)),
  }
  return createHash('sha256')
    .update(stableJson(uncached(prefix)))
    .digest('hex')
    .slice(0, 32)
}

/** The thinking blocks before `messages[at].content[j]`, oldest first. */
function thinkingBefore(messages: Body[], at: number, j: number): Body[] {
  const blocks = messages
    .slice(0, at)
    .flatMap((m) => (m?.role === 'assistant' ? contentBlocks(m.content) : []))
  const own = messages[at]?.role === 'assistant' ? contentBlocks(messages[at].content).slice(0, j) : []
  return [...blocks, ...own].filter(isThinking)
}

/** A thinking block's short id in the chain: a hash of its signature (or redacted data). */
const chainId = (block: Body | undefined): string =>
  block ? hash('chain', String(block.signature ?? block.data)).slice(0, 16) : '0'.repeat(16)

/**
 * The binding of a block at `messages[at].content[j]`: `prefixHash.previous.count`, the prefix's
 * hash, the chain id of the thinking block just before it and how many came before it.
 */
function bindingOf(body: Body, messages: Body[], at: number, j: number): string {
  const before = thinkingBefore(messages, at, j)
  return `${prefixHash(body, messages, at, j)}.${chainId(before.at(-1))}.${before.length}`
}

/**
 * The binding of the thinking block an answer to `body` starts with: a new assistant message, or
 * the last one's continuation when the request ends with the assistant's (a paused turn).
 */
export function answerBinding(body: Body): string {
  const messages = Array.isArray(body.messages) ? (body.messages as Body[]) : []
  const last = messages.at(-1)
  return last?.role === 'assistant'
    ? bindingOf(body, messages, messages.length - 1, contentBlocks(last.content).length)
    : bindingOf(body, messages, messages.length, 0)
}

/**
 * Whether the thinking block at `messages[at].content[j]` is bound to this request: its prefix is
 * the one it was made with, and the thinking blocks before it are those it followed, or a run of
 * them with the oldest left out (what Anthropic allows: none, a leading run, or all). A block put
 * back, or one missing from the middle, breaks the chain of the blocks after it.
 */
function isBound(body: Body, messages: Body[], at: number, j: number): boolean {
  const block = contentBlocks(messages[at].content)[j]
  const m = BINDING.exec(signedBinding(block.signature, String(block.thinking ?? '')) ?? '')
  if (!m || m[1] !== prefixHash(body, messages, at, j)) return false
  const before = thinkingBefore(messages, at, j)
  return before.length === 0 || (m[2] === chainId(before.at(-1)) && before.length <= Number(m[3]))
}

/** A thinking block left out under `drop_block`, where it was. */
export interface DroppedThinking {
  message: number
  content: number
}

/**
 * The prefix check of a model with prefix binding (Fable 5.1, Opus 5.5, Sonnet 5.5, Haiku 5.5):
 * every `thinking` block sent back must be bound to this request's prefix ({@link isBound}; an
 * unbound signature, from a model without the check, is not). The first that is not is refused in
 * Anthropic's words, or, with `thinking.block_binding.prefix_mismatch_behavior: "drop_block"` and
 * the `anthropic-beta` value `betaValue`, left out with every thinking block after it: `messages`
 * without them, `dropped` where they were. Undefined when every block is bound.
 */
export function bindingProblem(
  body: Body,
  betas: readonly string[],
  betaValue: string,
): {problem: string} | {messages: Body[]; dropped: DroppedThinking[]} | undefined {
  const messages = Array.isArray(body.messages) ? (body.messages as Body[]) : []
  for (const [at, message] of messages.entries()) {
    if (message?.role !== 'assistant') continue
    for (const [j, block] of contentBlocks(message.content).entries()) {
      if (block?.type !== 'thinking' || isBound(body, messages, at, j)) continue
      const binding = (body.thinking as Body | undefined)?.block_binding as Body | undefined
      const beta = betas.includes(betaValue)
      if (!beta || binding?.prefix_mismatch_behavior !== 'drop_block')
        return {
          problem:
            `messages.${at}.content.${j}: Invalid \`signature\` in \`thinking\` block. The block is bound to ` +
            'a different conversation. Remove the block, or set ' +
            '`thinking.block_binding.prefix_mismatch_behavior` to "drop_block".' +
            (beta
              ? ''
              : ` That setting requires the \`${betaValue}\` value in the \`anthropic-beta\` header.`),
        }
      return dropFrom(messages, at, j)
    }
  }
  return undefined
}

/** The messages without the thinking block at `messages[at].content[j]` and every one after it. */
function dropFrom(messages: Body[], at: number, j: number): {messages: Body[]; dropped: DroppedThinking[]} {
  const dropped: DroppedThinking[] = []
  const kept = messages.map((message, n) => {
    if (n < at || message?.role !== 'assistant' || !Array.isArray(message.content)) return message
    const content = (message.content as Body[]).filter((block, m) => {
      const drop = isThinking(block) && (n > at || m >= j)
      if (drop) dropped.push({message: n, content: m})
      return !drop
    })
    return {...message, content}
  })
  return {messages: kept, dropped}
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
 * made (or the documented bypass). A missing one is refused only where `signedCalls` says the
 * model wants its calls signed (`gemini-3*`, quirk `signed-calls`, Gemini 2.5 thinking: gemini.ts
 * `refusesUnsigned`) and only in the current turn (model turns after the last user turn with
 * text), as Gemini does. A text part that is empty is refused in any turn.
 */
export function geminiHistoryProblem(contents: unknown, signedCalls: boolean): string | undefined {
  const list = Array.isArray(contents) ? (contents as Body[]) : []
  // an empty text part is refused (Gemini's own `{text: "", thoughtSignature}` excepted)
  for (const c of list)
    for (const p of blocksOf(c?.parts))
      if (p?.text === '' && p.thoughtSignature === undefined)
        return (
          'Unable to submit request because it has an empty text parameter. Add a value to the ' +
          'parameter and try again. Learn more: https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/gemini'
        )
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
      if (signedCalls && i > currentFrom)
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
