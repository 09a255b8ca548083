/**
 * A translated request's cache key (`Request.cacheKey`: OpenAI's `prompt_cache_key`, Moonshot's,
 * xAI's `x-grok-conv-id`) where the client's body named none: OpenCode with its Anthropic provider
 * names its session only in headers, and Gemini CLI and Qwen Code name none at all. Without a key
 * an upstream that routes a prompt to its cache by one leaves a long conversation's hits to chance
 * (docs/TRANSLATION.md, the prompt cache).
 *
 * - {@link headerCacheKey}: the client's session id, from the first of {@link SESSION_HEADERS} it
 *   sent (OpenCode 1.18: `x-session-affinity` and `x-session-id`, `ses_…`), as a hash of it: the
 *   id itself goes to no upstream.
 * - {@link derivedCacheKey}: a key derived, with no state, from what every turn of a conversation
 *   repeats: the agent, the start of the system prompt and the first user turn's first text part.
 *   It is the same on every turn (later turns are not read) and after a resume, differs between
 *   Gemini CLI's conversations of different folders or days (its first part is its context: the
 *   date, the working directory and its files; Qwen Code's is its skill list, the same for one
 *   agent's conversations), and says nothing of the text (a SHA-256 of it). Only the first text part: both clients rewrite the rest of their first turn
 *   when a session is resumed (Gemini CLI drops the first prompt, Qwen Code moves its date
 *   reminder to the new one: audit56), and a key that changed there sent the resumed conversation
 *   to a cold cache. Only a bounded part is hashed: the first {@link HEAD} characters of the
 *   system prompt's first part and of that text part, with its length and, for a longer one, its
 *   last {@link TAIL} characters (a prompt written after a long context in one string).
 *
 * Two conversations that happen to get one key (the same first turn of one agent) lose nothing but
 * the spread of their requests over the upstream's machines: the key only routes.
 */
import {hash} from 'node:crypto'

import type {Request} from './ir.js'

/** The headers a client names its session in, in the order they are read. */
export const SESSION_HEADERS = ['x-session-affinity', 'x-session-id', 'session-id'] as const

/** Characters of the system prompt's first part, and of each text part of the first user turn. */
const HEAD = 512
/** Characters of the end of a text part longer than {@link HEAD} + this. */
const TAIL = 128
/** `gw-` and 32 characters of `text`'s SHA-256 (base64url: 192 bits). */
const hashed = (text: string): string => `gw-${hash('sha256', text, 'base64url').slice(0, 32)}`

/**
 * The key of the session a client named in its headers, if any: its hash, never the id itself (a
 * translated route sends no client header upstream, and the hash is as stable a key).
 */
export function headerCacheKey(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): string | undefined {
  for (const name of SESSION_HEADERS) {
    const value = headers[name]
    if (typeof value === 'string' && value !== '') return hashed(value)
  }
  return undefined
}

/**
 * A key for `request`'s conversation, the same on each of its turns: a hash of `agent` (the
 * gateway's agent id, so that two agents' conversations never share one), the start of the system
 * prompt and the first user turn's first text part.
 */
export function derivedCacheKey(request: Request, agent = ''): string {
  let text = `${agent}\u0000${request.system[0]?.text.slice(0, HEAD) ?? ''}`
  const first = request.messages.find((m) => m.role === 'user')
  const part = first?.parts.find((p) => p.type === 'text')
  if (part) {
    const t = part.text
    text += `\u0000${t.length}:${t.slice(0, HEAD)}`
    if (t.length > HEAD + TAIL) text += `\u0000${t.slice(-TAIL)}`
  }
  return hashed(text)
}
