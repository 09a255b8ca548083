/**
 * Rules every command applies the same way to what a user types: what counts as a URL the
 * platform can fetch, and how a `--param key=value` value is read.
 */

/** True for an absolute `http:` or `https:` URL: the only kind the platform fetches or calls. */
export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:'
  } catch {
    return false
  }
}

/** The hint of every refused input URL (video, gamma). */
export const HTTP_URL_HINT =
  'The platform fetches inputs itself: give a publicly reachable http:// or https:// URL, e.g. https://example.com/a.png.'

/**
 * A `--param` value: JSON when it parses (`5`, `true`, `{"a":1}`), else the text itself. A value
 * that looks like JSON (starts with `{`, `[` or `"`) but does not parse is most likely a typo: it
 * is still sent as text, with a warning that says so.
 */
export function parseParamValue(key: string, text: string): {value: unknown; warning?: string} {
  try {
    return {value: JSON.parse(text)}
  } catch (error) {
    if (!/^\s*[[{"]/.test(text)) return {value: text}
    const why = (error as Error).message.replace(/\s+/g, ' ').slice(0, 120)
    return {
      value: text,
      warning: `--param ${key}: ${JSON.stringify(text)} looks like JSON but does not parse (${why}); it is sent as the string ${JSON.stringify(text)}. Quote it for the shell, e.g. --param '${key}={"a":1}'.`,
    }
  }
}
