/**
 * Claude Code's auto-mode classifier call: before a side-effecting tool (Bash, Write, Edit,
 * WebFetch) runs in auto mode, Claude Code asks the model in a request of its own whether to
 * block it: not streamed, no tools, its system prompt starting "You are a security monitor for
 * autonomous AI coding agents.", the answer to begin with `<block>` (`stop_sequences:
 * ["</block>"]`, a `max_tokens` of 64 to a few thousand), and a verdict expected within about 30
 * seconds. Some versions send it without `thinking`. A model that thinks unless told not to
 * (DeepSeek V4, GLM, Kimi K2.5 on, MiniMax M3, gpt-oss) reasons first: the call times out or
 * spends its `max_tokens` before `<block>`, and Claude Code blocks every such tool ("... is
 * temporarily unavailable, so auto mode cannot determine the safety of Bash right now", "Auto mode
 * could not evaluate this action and is blocking it for safety"; deepseek-ai/DeepSeek-V3 #1464:
 * 31.8 s thinking, 2.7 s with `thinking: disabled`; farion1231/cc-switch #2898, #5326;
 * Alishahryar1/free-claude-code #787; jundot/omlx PR #3193). Such a call without `thinking` is
 * sent with thinking off: translated, as a request that turned reasoning off (each model's own
 * switch, ./thinking-off.ts); passed through to an Anthropic-compatible server that is not
 * Anthropic's, with `thinking: {"type": "disabled"}`.
 */

import {messagesThinkingOff} from './thinking-off.js'

/** The words the classifier's system prompt starts with. */
export const CLASSIFIER_PROMPT = 'You are a security monitor for autonomous AI coding agents'

const NEEDLE = Buffer.from(CLASSIFIER_PROMPT)

/**
 * Whether a Messages body that is not streamed is the classifier's call: its system prompt holds
 * the words (a byte search: the call is ~126 KB, most of it that prompt and the transcript).
 */
export const holdsClassifierPrompt = (body: Buffer): boolean => body.indexOf(NEEDLE) !== -1

/**
 * The classifier's call passed through, with thinking off: `thinking: {"type": "disabled"}` where
 * it has no `thinking`, and without `output_config.effort` (DeepSeek's endpoint refuses one beside
 * thinking off). Undefined when it is not the call (its system prompt does not start with the
 * words: the search also finds them quoted in a transcript) or it says how to think already.
 */
export function classifierThinkingOff(body: Record<string, unknown>): Record<string, unknown> | undefined {
  if (body.thinking !== undefined || body.stream === true || !startsWithClassifier(body.system))
    return undefined
  const out = {...body}
  messagesThinkingOff(out)
  return out
}

/**
 * Whether a Messages `system` (a string or blocks; Claude Code's attribution block may come first)
 * starts, at one of its first two blocks, with the classifier's words.
 */
export function startsWithClassifier(system: unknown): boolean {
  if (typeof system === 'string') return system.startsWith(CLASSIFIER_PROMPT)
  if (!Array.isArray(system)) return false
  return system
    .slice(0, 2)
    .some(
      (b) =>
        typeof (b as {text?: unknown} | null)?.text === 'string' &&
        (b as {text: string}).text.startsWith(CLASSIFIER_PROMPT),
    )
}
