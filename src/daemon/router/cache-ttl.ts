/**
 * Claude Code's 1-hour prompt cache (`ENABLE_PROMPT_CACHING_1H=1`, which its docs name as the way
 * API-key and third-party-provider users get it) writes `"cache_control": {"type": "ephemeral",
 * "ttl": "1h"}` on its messages and `{"type": "ephemeral", "ttl": "1h", "scope": "global"}` on its
 * system blocks (anthropics/claude-code #49139). Anthropic's API takes both; the Anthropic
 * endpoints of other vendors refuse the request, every turn: LiteLLM's "`cache_control.ttl: 1h` is
 * not supported" (BerriAI/litellm PR #38790, #39355), MiniMax's, Fireworks' and Kimi's `400 invalid
 * params` (BYK/loreai PR #560). Their models cache by prefix on their own terms, so nothing is lost
 * by leaving the two members out: each such `cache_control` goes as `{"type": "ephemeral"}`, the
 * rest of the body byte for byte (the same bytes each turn, so the server's cache holds).
 */
import {servesOwnModelsOnly} from '../../gateway/vendor-hosts.js'

const CACHE_CONTROL = Buffer.from('"cache_control"')
const TTL = Buffer.from('"ttl"')
const SCOPE = Buffer.from('"scope"')

/** Whether byte `c` is JSON whitespace. */
const space = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

/**
 * A Messages body with each `cache_control`'s `ttl` and `scope` left out, every other byte as it
 * came; undefined when none holds either. Read by bytes: each `"cache_control"` (one not inside a
 * string: its quotes would be escaped there) is followed to its object of flat members, and only
 * an object that holds `"ttl"` or `"scope"` is parsed and written again (Claude Code's four marks:
 * a search through the body, nothing decoded for a body without them).
 */
export function withoutCacheTtl(body: Buffer): Buffer | undefined {
  let parts: Buffer[] | undefined
  let kept = 0
  for (
    let at = body.indexOf(CACHE_CONTROL);
    at !== -1;
    at = body.indexOf(CACHE_CONTROL, at + CACHE_CONTROL.length)
  ) {
    let i = at + CACHE_CONTROL.length
    while (space(body[i])) i++
    if (body[i] !== 0x3a) continue
    i++
    while (space(body[i])) i++
    if (body[i] !== 0x7b) continue
    const close = body.indexOf(0x7d, i)
    if (close === -1) break
    const object = body.subarray(i, close + 1)
    // (flat and short, as Claude Code writes it: anything else is not one of its marks)
    if (object.length > 256 || object.indexOf(0x7b, 1) !== -1) continue
    if (object.indexOf(TTL) === -1 && object.indexOf(SCOPE) === -1) continue
    let members: Record<string, unknown>
    try {
      members = JSON.parse(object.toString('utf8')) as Record<string, unknown>
    } catch {
      continue
    }
    delete members.ttl
    delete members.scope
    ;(parts ??= []).push(body.subarray(kept, i), Buffer.from(JSON.stringify(members)))
    kept = close + 1
  }
  if (!parts) return undefined
  parts.push(body.subarray(kept))
  return Buffer.concat(parts)
}

/**
 * Whether an upstream's error refuses a `cache_control`'s `ttl` (or `scope`): LiteLLM's
 * "`cache_control.ttl: 1h` is not supported", a validator's path (`system.0.cache_control.scope:
 * Extra inputs are not permitted`, `['cache_control']['ttl']`).
 */
export function refusesCacheTtl(errorText: string): boolean {
  return /cache_control\W{1,4}(?:ttl|scope)\b/i.test(errorText)
}

/** Whether a model name is Claude's (a relay in front of Anthropic's models may take the 1-hour cache). */
export const isClaudeModel = (model: string | null | undefined): boolean =>
  typeof model === 'string' && /claude/i.test(model)

const ownOnly = new WeakMap<object, boolean>()

/**
 * `servesOwnModelsOnly` of a provider's base URL (../../gateway/vendor-hosts.ts), found once per
 * provider (the routing engine keeps its providers' objects from one request to the next).
 */
export function ownModelsOnly(provider: {baseUrl: string}): boolean {
  let known = ownOnly.get(provider)
  if (known === undefined) ownOnly.set(provider, (known = servesOwnModelsOnly(provider.baseUrl)))
  return known
}
