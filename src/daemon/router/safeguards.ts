/**
 * Claude Code's auto mode on a server that is not Anthropic's. From 2.1.278 Claude Code asks
 * Anthropic's API to classify its tool actions itself: every Messages request carries a
 * `safeguards` field (`[{"type": "dangerous_tool_use", "classifier_context": {...}}]`, a condensed
 * transcript for the classifier) under the betas `dangerous-tool-use-2026-09-03` and
 * `afk-mode-2026-01-31`, and reads the verdicts back from `safeguard_results`. Only Anthropic's API
 * answers them. Another vendor's Anthropic-compatible endpoint (DeepSeek's, Z.AI's, Kimi's,
 * MiniMax's, a relay) gets a field and betas it does not know, and a strict one refuses them, which
 * Claude Code takes worse than an answer without results (a 400 fails closed; without results it
 * says once that it classifies locally, and does: farion1231/cc-switch #7518, #7625;
 * router-for-me/CLIProxyAPI #6009; decolua/9router #4173; zai-org/feedback #785). Such a request
 * passed through goes without both; to Anthropic's API it goes as it came, and the results come back
 * byte for byte. A translated request never carried them (the Messages decoder reads no such field).
 * `gwctl run claude-code` on such a route also sets `CLAUDE_CODE_AUTO_MODE_SERVER=0`, which stops
 * Claude Code asking (and its notice).
 */

/** The auto-mode betas' names, each followed by its date. */
const AUTO_MODE_BETA = /^(?:dangerous-tool-use|afk-mode)-/

/** Whether a request's `anthropic-beta` names an auto-mode beta (substring tests). */
export function asksSafeguards(beta: string | string[] | undefined): boolean {
  if (beta === undefined) return false
  const value = Array.isArray(beta) ? beta.join(',') : beta
  return value.includes('dangerous-tool-use-') || value.includes('afk-mode-')
}

/**
 * An `anthropic-beta` value without the betas `drop` names: the value as it came when none is
 * dropped (empty names and all), else the names left joined by commas, undefined when none is left. The one splitter of every rule that takes betas out (auto
 * mode's here, tool search's, the ones an upstream refused: headers.ts).
 */
export function withoutBetas(beta: string, drop: (name: string) => boolean): string | undefined {
  const kept: string[] = []
  let dropped = false
  for (const value of beta.split(',')) {
    const name = value.trim()
    if (name === '') continue
    if (drop(name)) dropped = true
    else kept.push(name)
  }
  if (!dropped) return beta
  return kept.length > 0 ? kept.join(',') : undefined
}

/** An `anthropic-beta` value without the auto-mode betas; undefined when none is left. */
export const withoutAutoModeBetas = (beta: string): string | undefined =>
  withoutBetas(beta, (name) => AUTO_MODE_BETA.test(name))

const FIELD = Buffer.from(',"safeguards":')
const KEY = Buffer.from('"safeguards"')

/**
 * A Messages body without its top-level `safeguards` (the bytes as they came when it has none, or
 * is not JSON). Claude Code writes it last: found from the end, and where its value runs to the
 * body's closing brace it is cut out of the bytes (only the value parsed, to be sure it is one);
 * anywhere else the body is parsed and written again.
 */
export function withoutSafeguards(
  body: Buffer,
  parse: (b: Buffer) => Record<string, unknown> | undefined,
): Buffer {
  const at = body.lastIndexOf(FIELD)
  if (at !== -1) {
    let close = body.length - 1
    while (close > at && body[close] !== 0x7d) close--
    try {
      JSON.parse(body.toString('utf8', at + FIELD.length, close))
      return Buffer.concat([body.subarray(0, at), body.subarray(close)])
    } catch {
      // (not the last member: the whole body)
    }
  } else if (body.lastIndexOf(KEY) === -1) return body
  const json = parse(body)
  if (!json || !('safeguards' in json)) return body
  const {safeguards: _, ...rest} = json
  return Buffer.from(JSON.stringify(rest))
}
