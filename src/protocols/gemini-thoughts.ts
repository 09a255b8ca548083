/**
 * Whether a Gemini answer's parts think or answer, and whether a usage is a thought-only
 * answer's: what the Gemini codec's stream decoder and the pass-through usage tap (../daemon/
 * router/taps/gemini.ts) both read to tell a whole thought-only turn from a cut one. Imports
 * nothing, so the tap, loaded with the daemon, does not load the codecs.
 */

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0)

/**
 * Whether a part answers rather than thinks: anything but a thought and an empty text (the
 * carrier of a bare `thoughtSignature`).
 */
export function answerPart(part: unknown): boolean {
  if (!isObject(part)) return false
  if (part.thought === true) return false
  return !(
    typeof part.text === 'string' &&
    part.text === '' &&
    Object.keys(part).every((k) => k === 'text' || k === 'thoughtSignature')
  )
}

/** Whether a part is a thought (`thought: true`, its text shown or empty). */
export function thoughtPart(part: unknown): boolean {
  return isObject(part) && part.thought === true
}

/**
 * Whether a `usageMetadata` is a thought-only answer's: thoughts counted, no candidate token.
 * Google's backend ends such a turn without `finishReason` (FINISH_REASON_UNSPECIFIED, dropped
 * by proto3; router-for-me/CLIProxyAPI #5226): the stream is whole when no answer part came and
 * the chunk that carried the last such usage had no part of its own (no thought, no text, no
 * call: `parts: []`, no content, or a bare signature). Gemini 2.5 puts a usage of this shape on
 * every thought chunk, so a stream whose last usage rode on a thought chunk was cut mid-thinking.
 */
export function thoughtOnlyUsage(raw: unknown): boolean {
  return isObject(raw) && count(raw.thoughtsTokenCount) > 0 && count(raw.candidatesTokenCount) === 0
}
