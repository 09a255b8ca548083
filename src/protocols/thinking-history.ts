/**
 * Assistant tool-call turns of a Messages history that hold no thinking block, for the
 * Anthropic-compatible servers whose models think unless told not to and refuse such a turn while
 * thinking: DeepSeek's ("The `content[].thinking` in the thinking mode must be passed back to the
 * API.", claude-code #62995), which checks only that a block is there, and Kimi's ("thinking is
 * enabled but reasoning_content is missing in assistant tool call message at index N", cc-switch
 * #3219), which gwctl turns thinking off for. Such a turn comes from Claude Code itself (an empty
 * block it did not keep), from another target's answer after a fallback, or from gwctl taking out
 * another vendor's signed blocks (./strip.ts). Pure functions over the raw JSON of a Messages body
 * or the Messages encoder's turns (the same shape).
 */

import {messagesThinkingOff} from './thinking-off.js'

type Block = {type?: unknown}
type Turn = {role?: unknown; content?: unknown}

/** DeepSeek's placeholder: no text, no signature (it verifies neither). */
const EMPTY_THINKING = {type: 'thinking', thinking: '', signature: ''}

const isThinking = (b: unknown): boolean =>
  b !== null &&
  typeof b === 'object' &&
  ((b as Block).type === 'thinking' || (b as Block).type === 'redacted_thinking')

/** True when `turn` is an assistant turn that calls a tool with no thinking block in it. */
function lacksThinking(turn: unknown): boolean {
  if (turn === null || typeof turn !== 'object') return false
  const {role, content} = turn as Turn
  if (role !== 'assistant' || !Array.isArray(content)) return false
  let calls = false
  for (const b of content) {
    if (isThinking(b)) return false
    if (b !== null && typeof b === 'object' && (b as Block).type === 'tool_use') calls = true
  }
  return calls
}

/** True when some assistant turn of `messages` calls a tool with no thinking block in it. */
export function toolTurnWithoutThinking(messages: unknown): boolean {
  return Array.isArray(messages) && messages.some(lacksThinking)
}

/**
 * `messages` with an empty thinking block at the head of each assistant tool-call turn that has
 * none (new arrays for the turns changed, the others shared); undefined when no turn lacks one.
 */
export function withEmptyThinking<T>(messages: readonly T[]): T[] | undefined {
  if (!messages.some(lacksThinking)) return undefined
  return messages.map((m) =>
    lacksThinking(m) ? {...m, content: [{...EMPTY_THINKING}, ...((m as Turn).content as unknown[])]} : m,
  )
}

/**
 * A Messages body (in place) with thinking turned off where its history holds an assistant
 * tool-call turn without thinking (Kimi's rule, learned): `thinking.type: disabled`, without the
 * `output_config.effort` and the `clear_thinking` context edit that go only with thinking on.
 * True when it was changed.
 */
export function thinkingOffForToolTurns(body: Record<string, unknown>): boolean {
  const thinking = body.thinking as {type?: unknown} | undefined
  if (thinking?.type === 'disabled' || !toolTurnWithoutThinking(body.messages)) return false
  messagesThinkingOff(body)
  const management = body.context_management as {edits?: unknown} | undefined
  if (management && Array.isArray(management.edits)) {
    const edits = management.edits.filter(
      (e) => !(e !== null && typeof e === 'object' && String((e as Block).type).startsWith('clear_thinking')),
    )
    if (edits.length !== management.edits.length) {
      if (edits.length === 0 && Object.keys(management).length === 1) delete body.context_management
      else body.context_management = {...management, edits}
    }
  }
  return true
}
