/**
 * How each coding agent is told the context window of the model behind the gateway, so that it
 * compacts its conversation before the upstream refuses a longer prompt (docs/TRANSLATION.md,
 * "Compacting in time"). The gateway learns a window from such a refusal; `gwctl doctor` says the
 * setting, `gwctl run` sets it for its run.
 */

/**
 * The largest window Claude Code assumes (2.1.3xx takes 1 000 000 for its own models, 2.1.1xx
 * 200 000 for a model it does not know), and the most `CLAUDE_CODE_AUTO_COMPACT_WINDOW` takes.
 */
export const CLAUDE_CODE_MOST_WINDOW = 1_000_000
/** The least `CLAUDE_CODE_AUTO_COMPACT_WINDOW` Claude Code takes (a smaller one is raised to it). */
export const CLAUDE_CODE_LEAST_AUTO_COMPACT = 100_000
/** Codex compacts at this part of the window (`model_auto_compact_token_limit`). */
export const CODEX_COMPACT_AT = 0.9

/**
 * Claude Code's setting for a window of `tokens`: `CLAUDE_CODE_AUTO_COMPACT_WINDOW` from 100 000
 * up to what it may assume; below, only `CLAUDE_CODE_MAX_CONTEXT_TOKENS` with a model name that
 * does not start with `claude-` (which a run cannot choose for the user); undefined from the most
 * it assumes on.
 */
export function claudeCodeWindowSetting(
  tokens: number,
):
  | {variable: 'CLAUDE_CODE_AUTO_COMPACT_WINDOW' | 'CLAUDE_CODE_MAX_CONTEXT_TOKENS'; value: number}
  | undefined {
  if (tokens >= CLAUDE_CODE_MOST_WINDOW) return undefined
  return tokens >= CLAUDE_CODE_LEAST_AUTO_COMPACT
    ? {variable: 'CLAUDE_CODE_AUTO_COMPACT_WINDOW', value: tokens}
    : {variable: 'CLAUDE_CODE_MAX_CONTEXT_TOKENS', value: tokens}
}

/** Codex's config keys for a window of `tokens` (`-c` overrides or config.toml lines). */
export function codexWindowSettings(tokens: number): {
  model_context_window: number
  model_auto_compact_token_limit: number
} {
  return {model_context_window: tokens, model_auto_compact_token_limit: Math.floor(tokens * CODEX_COMPACT_AT)}
}

/**
 * The window Gemini CLI assumes for every model but Gemma 4 (0.61.0's `tokenLimit`: 1 048 576),
 * whatever the model behind the gateway holds.
 */
export const GEMINI_CLI_ASSUMED_WINDOW = 1_048_576
/** The window Gemini CLI 0.61.0 assumes for its two Gemma 4 models (`GEMMA_4_TOKEN_LIMIT`). */
export const GEMINI_CLI_GEMMA_4_WINDOW = 256_000
const GEMINI_CLI_GEMMA_4 = new Set(['gemma-4-31b-it', 'gemma-4-26b-a4b-it'])

/**
 * The window Gemini CLI assumes for the model it is run with (its `tokenLimit`: the two Gemma 4
 * names by name, every other 1 048 576), the part of which its compression threshold is.
 */
export function geminiCliAssumedWindow(model: string | undefined): number {
  return model !== undefined && GEMINI_CLI_GEMMA_4.has(model)
    ? GEMINI_CLI_GEMMA_4_WINDOW
    : GEMINI_CLI_ASSUMED_WINDOW
}
/** Gemini CLI compresses at this part of the window it assumes unless told otherwise. */
export const GEMINI_CLI_DEFAULT_THRESHOLD = 0.5
/** gwctl has Gemini CLI compress at this part of a learned window. */
export const GEMINI_CLI_COMPRESS_AT = 0.8

/**
 * Gemini CLI's `model.compressionThreshold` for a window of `tokens`: the part of the window it
 * assumes (`assumed`: 1 048 576, 256 000 for Gemma 4, {@link geminiCliAssumedWindow}) at which 80 %
 * of the real one is used, 3 decimals (rounded down; at least 0.001, as it takes 0 for "not set").
 * Undefined when its own half of the window it assumes comes in time already.
 */
export function geminiCompressionThreshold(
  tokens: number,
  assumed = GEMINI_CLI_ASSUMED_WINDOW,
): number | undefined {
  const part = Math.floor((GEMINI_CLI_COMPRESS_AT * tokens * 1000) / assumed) / 1000
  return part >= GEMINI_CLI_DEFAULT_THRESHOLD ? undefined : Math.max(0.001, part)
}
