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
