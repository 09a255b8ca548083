/**
 * A Responses history whose tool calls are each followed directly by their outputs, for a server
 * that pairs them by position rather than by `call_id` (`UpstreamAdaptation.adjacentOutputs`).
 * DeepSeek's `/v1/responses` refuses any item between a call and its output ("No tool output found
 * for tool call call_00_…"), and Codex puts one there: a PostToolUse hook's `additionalContext`
 * lands as a developer message between `function_call` and `function_call_output`, and since the
 * history keeps it, every later request of the session is refused the same way. OpenAI's API
 * pairs by `call_id`, so it takes either order.
 *
 * A batch of calls (Codex's parallel calls: `call A, call B, output A, output B`) stays a batch:
 * DeepSeek reads consecutive calls as one assistant turn, and splitting them would cost the second
 * call the reasoning of that turn. What stood between the calls and their outputs (a developer or
 * user message, a reasoning item) goes right after the outputs, in its order. The rewrite depends
 * only on the history, so every turn gets the same bytes for the same history (the prompt cache).
 */

type Item = Record<string, unknown>

const CALLS = new Set(['function_call', 'custom_tool_call'])
const OUTPUTS = new Set(['function_call_output', 'custom_tool_call_output'])

/** The `call_id` of a call (or output) item of `types`; undefined for any other item. */
function callId(item: unknown, types: ReadonlySet<string>): string | undefined {
  if (typeof item !== 'object' || item === null) return undefined
  const {type, call_id: id} = item as Item
  return typeof type === 'string' && types.has(type) && typeof id === 'string' ? id : undefined
}

/**
 * `input` with each batch of calls followed directly by their outputs, the items that stood
 * between them after those; the same array when every batch is already so. A batch is a run of
 * consecutive calls; a call none of whose outputs is in the history (the last turn, an interrupted
 * call) stays where it is.
 */
export function adjacentOutputs(input: readonly unknown[]): readonly unknown[] {
  let items = input
  let out: unknown[] | undefined
  let i = 0
  while (i < items.length) {
    if (callId(items[i], CALLS) === undefined) {
      out?.push(items[i])
      i++
      continue
    }
    const ids = new Set<string>()
    let j = i
    for (let id; j < items.length && (id = callId(items[j], CALLS)) !== undefined; j++) ids.add(id)
    const calls = items.slice(i, j)
    // their outputs, in the order they came; anything else on the way stood between
    const outputs: unknown[] = []
    const between: unknown[] = []
    for (; j < items.length && ids.size > 0; j++) {
      const id = callId(items[j], OUTPUTS)
      if (id !== undefined && ids.delete(id)) outputs.push(items[j])
      else between.push(items[j])
    }
    if (between.length === 0 || outputs.length === 0) {
      // already adjacent, or none answered: as they came
      const end = outputs.length === 0 ? i + calls.length : j
      out?.push(...items.slice(i, end))
      i = end
      continue
    }
    out ??= items.slice(0, i)
    out.push(...calls, ...outputs)
    // what stood between goes on after them; a call among it is a batch of its own, read again
    if (!between.some((item) => callId(item, CALLS) !== undefined)) {
      out.push(...between)
      i = j
    } else {
      items = [...between, ...items.slice(j)]
      i = 0
    }
  }
  return out ?? input
}
