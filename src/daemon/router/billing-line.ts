/**
 * Claude Code's attribution line on a Messages request passed through to a server that is not
 * Anthropic's. Since 2.1.36 Claude Code sends, as the first block of its system prompt,
 * `{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.332.3f1; cc_entrypoint=cli;
 * cch=1a2b3;"}`, whose version suffix and `cch` are derived from the request and change on every
 * one. Anthropic reads it (and keeps it out of its prompt cache); any other Anthropic-compatible
 * server (DeepSeek's, Kimi's, Z.AI's, MiniMax's endpoints, OpenRouter, Fireworks, a vLLM or
 * llama.cpp server) sees text at the head of the prompt that changes every turn, so its prefix
 * cache misses on every request and the whole prompt is paid for again (anthropics/claude-code
 * #68900, #50085; ollama #14918 turns it off the same way). A translated request loses it in the
 * Messages decoder (../../protocols/messages.ts); this takes it out of the bytes passed through.
 */

/**
 * The block as Claude Code writes it: the first of the top-level `system` array, in
 * `JSON.stringify`'s spelling. A string cannot hold this unescaped, so a match is the structure.
 */
const BLOCK = Buffer.from('"system":[{"type":"text","text":"x-anthropic-billing-header:')
/** Where the block's `{` is, from the match. */
const OPEN = '"system":['.length
const QUOTE = 0x22
const BACKSLASH = 0x5c
const CLOSE_BRACE = 0x7d
const COMMA = 0x2c

/**
 * Whether a request's `User-Agent` is Claude Code's (`claude-cli/2.1.332 (external, cli)`, the
 * Agent SDK's `... sdk-cli`), the one client that writes the line: any other Messages client's body
 * is not searched.
 */
export function sendsBillingLine(userAgent: string | undefined): boolean {
  return userAgent !== undefined && userAgent.startsWith('claude-cli/')
}

/** Anthropic's own API reads the line: it keeps it. */
export {isAnthropicApi} from '../../gateway/vendor-hosts.js'

/**
 * `body` without Claude Code's attribution block, when its system prompt starts with one followed
 * by another block (the bytes as they came otherwise: no other spelling is touched). Claude Code
 * writes `system` after `messages` and before `tools`: the search runs from the end, over the
 * tools only, whatever the conversation's length.
 */
export function withoutBillingBlock(body: Buffer): Buffer {
  const at = body.lastIndexOf(BLOCK)
  if (at < 0) return body
  // the text ends at the next quote; a backslash before it would be an escape Claude Code never
  // writes there: left as it came
  const textStart = at + BLOCK.length
  const end = body.indexOf(QUOTE, textStart)
  if (end < 0 || end - textStart > 1024) return body
  for (let i = textStart; i < end; i++) if (body[i] === BACKSLASH) return body
  // `"}` then `,` and the next block (the system prompt itself): the block and its comma go
  if (body[end + 1] !== CLOSE_BRACE || body[end + 2] !== COMMA) return body
  const from = at + OPEN
  const out = Buffer.allocUnsafe(body.length - (end + 3 - from))
  body.copy(out, 0, 0, from)
  body.copy(out, from, end + 3)
  return out
}
