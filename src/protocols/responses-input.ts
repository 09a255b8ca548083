/**
 * A Responses body passed through (Codex's) with its `input` rewritten by one rule, every other
 * member as it came: parsed and written again, as the other rewrites of a body passed through
 * are (the same bytes for the same body, so the server's prompt cache holds).
 */

/**
 * `body` with `map` applied to its `input` array; undefined for a body that is not JSON, has no
 * `input` array, or whose `input` `map` gave back as it was (the same array): it goes as it came.
 */
export function withInputMapped(
  body: Buffer,
  map: (input: readonly unknown[]) => readonly unknown[],
): Buffer | undefined {
  let json: unknown
  try {
    json = JSON.parse(body.toString('utf8'))
  } catch {
    return undefined
  }
  const request = json as {input?: unknown}
  if (!json || typeof json !== 'object' || !Array.isArray(request.input)) return undefined
  const input = map(request.input)
  return input === request.input ? undefined : Buffer.from(JSON.stringify({...request, input}))
}

/**
 * The members of a Responses input item its type's schema requires beyond those every item's
 * answer depends on (OpenAI's, openai-python `response_input_item_param.py`): a `web_search_call`,
 * a `local_shell_call`... goes with its `status`, which OpenAI's API refuses to miss ("Missing
 * required parameter: 'input[3].status'."); a `message`, `reasoning` or `function_call` item's is
 * optional. A strict server's refusal of one of these is the client's to see (daemon/router/
 * adaptations.ts `inputMemberRefusal`), and the simulator's strict server refuses its absence.
 */
export const INPUT_ITEM_REQUIRES: Readonly<Record<string, readonly string[]>> = {
  web_search_call: ['status'],
  file_search_call: ['status', 'queries'],
  computer_call: ['status', 'pending_safety_checks'],
  code_interpreter_call: ['status', 'code', 'container_id', 'outputs'],
  image_generation_call: ['status', 'result'],
  local_shell_call: ['status'],
  apply_patch_call: ['status', 'operation'],
  apply_patch_call_output: ['status'],
}

/** An input item's type: its `type`, or `message` for one without (a message given by its `role`). */
export const inputItemType = (item: {type?: unknown}): string =>
  typeof item.type === 'string' ? item.type : 'message'
