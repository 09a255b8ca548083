/** The join of a provider base URL with an entrance path: the proxy's upstream requests and `providers models` use it. */

const parsedBases = new Map<string, {origin: string; path: string; versioned: boolean}>()

/**
 * A base path that ends in its API's version (`/v1`, `/api/paas/v4`, `/api/v3`, `/v1beta`), or in
 * Google's OpenAI-compatible `/v1beta/openai`: the base URL as the vendor's OpenAI SDK settings give
 * it, to which a path without the version is joined.
 */
const VERSIONED_BASE = /\/v\d+[a-z]*\d*(?:\/openai)?$/
/** An entrance path's version: dropped after a base that has its own. */
const ENTRANCE_VERSION = /^\/v1(?:beta|alpha)?(?=[/?])/

/**
 * Joins a provider base URL and an entrance path. A base that ends in a version takes the path
 * without the entrance's (`.../v1` + `/v1/x` -> `.../v1/x`; Z.AI's `.../api/paas/v4` +
 * `/v1/chat/completions` -> `.../api/paas/v4/chat/completions`, as OpenAI's SDK joins its
 * `baseURL`); any other base (an origin, Anthropic-style `.../api/anthropic`, a proxy's prefix)
 * takes the path whole.
 */
export function upstreamPath(baseUrl: string, path: string): {origin: string; path: string} {
  let base = parsedBases.get(baseUrl)
  if (!base) {
    const url = new URL(baseUrl)
    const basePath = url.pathname.replace(/\/+$/, '')
    base = {origin: url.origin, path: basePath, versioned: VERSIONED_BASE.test(basePath)}
    if (parsedBases.size > 1000) parsedBases.clear()
    parsedBases.set(baseUrl, base)
  }
  // (`/v1/` or `/v1?`, nearly every request, by a character; `/v1beta` by the expression)
  const rest =
    !base.versioned || !path.startsWith('/v1')
      ? path
      : path.charCodeAt(3) === 47 || path.charCodeAt(3) === 63
        ? path.slice(3)
        : path.replace(ENTRANCE_VERSION, '')
  return {origin: base.origin, path: base.path + rest}
}
