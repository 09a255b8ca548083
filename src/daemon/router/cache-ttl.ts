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

/** A `cache_control` object of flat members, as Claude Code writes it (not one inside a string: its quotes would be escaped). */
const CACHE_CONTROL = /"cache_control"(\s*):(\s*)\{([^{}"]*(?:"(?:[^"\\]|\\.)*"[^{}"]*)*)\}/g
const TTL_OR_SCOPE = /"(?:ttl|scope)"\s*:/

/**
 * A Messages body with each `cache_control`'s `ttl` and `scope` left out, every other byte as it
 * came; undefined when it holds neither (a byte search for `"ttl"` and `"scope"` first).
 */
export function withoutCacheTtl(body: Buffer): Buffer | undefined {
  if (body.indexOf('"ttl"') === -1 && body.indexOf('"scope"') === -1) return undefined
  const text = body.toString('utf8')
  let changed = false
  const next = text.replace(CACHE_CONTROL, (all, before: string, after: string, members: string) => {
    if (!TTL_OR_SCOPE.test(members)) return all
    let parsed: Record<string, unknown>
    try {
      parsed = JSON.parse(`{${members}}`) as Record<string, unknown>
    } catch {
      return all
    }
    delete parsed.ttl
    delete parsed.scope
    changed = true
    return `"cache_control"${before}:${after}${JSON.stringify(parsed)}`
  })
  return changed ? Buffer.from(next) : undefined
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
