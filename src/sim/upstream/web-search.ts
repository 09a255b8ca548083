/**
 * The vendors' own web search, as the simulated upstreams answer it: Anthropic's `web_search_*`
 * server tool, the Responses `web_search` tool, Gemini's `googleSearch`. The vendor runs the search
 * on its side, so one answer holds the search, its results and the text written from them.
 *
 * All of it is a pure function of the request, so tests can predict it:
 * - the query is the user's last text without Claude Code's `Perform a web search for the query: `
 *   (its WebSearch tool's sub-request, which a translation carries to every family);
 * - two results, `https://<domain>/search/<slug>/1` and `/2`, titled `<query> (result N)`; the
 *   domain is the tool's first allowed domain, else example.com (example.org when that is blocked);
 * - the text: `Web search results for "<query>". <title 1> and <title 2> cover it.`, with a
 *   citation after each title where the family writes them inline (Responses).
 */
import {simTokens} from '../sse.js'
import type {SimAnswer, SimSearch} from './common.js'

/** Claude Code's words before the query in its WebSearch sub-request. */
const CLAUDE_CODE_PREFIX = /^\s*Perform a web search for the query:\s*/i

/** True when the user's words ask for a web search ("search the web"). */
export function wantsSearch(lastUserText: string): boolean {
  return /\bsearch the web\b/i.test(lastUserText)
}

/** The query the model searches for: the user's words, without Claude Code's prefix. */
export function searchQuery(lastUserText: string): string {
  return lastUserText.replace(CLAUDE_CODE_PREFIX, '').replace(/\s+/g, ' ').trim().slice(0, 200) || 'sim'
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.trim() !== '') : []

/**
 * The results' domain: the first allowed one (a bare host: a scheme or path given with it is
 * dropped), else example.com, or example.org when example.com is blocked.
 */
export function searchDomain(allowed: unknown, blocked?: unknown): string {
  const first = strings(allowed)[0]
  if (first)
    return first
      .trim()
      .replace(/^[a-z]+:\/\//i, '')
      .split('/')[0]
  return strings(blocked).includes('example.com') ? 'example.org' : 'example.com'
}

/** The two results of a search for `query` on `domain`. */
export function searchResults(query: string, domain: string): SimSearch {
  const slug =
    query
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .slice(0, 60)
      .replace(/^-+|-+$/g, '') || 'search'
  return {
    query,
    results: [1, 2].map((n) => ({
      url: `https://${domain}/search/${slug}/${n}`,
      title: `${query} (result ${n})`,
    })),
  }
}

/**
 * The answer's text, in two sentences: `lead` names the query, the second names the results (the
 * sentence a Gemini grounding support covers). `cite` writes a citation after each result's title;
 * `cites` are their [start, end) offsets in `text`, in UTF-16 units.
 */
export function searchText(
  search: SimSearch,
  cite?: (result: SimSearch['results'][number]) => string,
): {text: string; lead: string; claim: string; cites: Array<[number, number]>} {
  const lead = `Web search results for "${search.query}".`
  let text = `${lead} `
  const cites: Array<[number, number]> = []
  search.results.forEach((result, i) => {
    if (i > 0) text += i === search.results.length - 1 ? ' and ' : ', '
    text += result.title
    if (cite) {
      const citation = cite(result)
      text += ' '
      cites.push([text.length, text.length + citation.length])
      text += citation
    }
  })
  text += ' cover it.'
  return {text, lead, claim: text.slice(lead.length + 1), cites}
}

/** A search answer: `base`'s thinking and prompt usage, `text` the reply (output: its tokens). */
export function searchAnswer(base: SimAnswer, search: SimSearch, text: string): SimAnswer {
  return {
    text,
    ...(base.thinking === undefined ? {} : {thinking: base.thinking}),
    search,
    usage: {...base.usage, output: simTokens(text)},
  }
}

/** The opaque `encrypted_content` of an Anthropic search result (the sim's: its URL, in base64). */
export function encryptedResult(url: string): string {
  return Buffer.from(`simweb:${url}`).toString('base64')
}

/**
 * The searches a turn takes under quirk `pause-turn`: the number the user's words ask for
 * (`3 searches`, `1 search`), else 2.
 */
export function searchesWanted(lastUserText: string): number {
  const n = /\b(\d{1,2})\s+(?:web\s+)?search(?:es)?\b/i.exec(lastUserText)?.[1]
  return n === undefined ? 2 : Math.max(1, Number(n))
}

/** The query of a turn's search number `n` (from 1): the first is the query, the later ones say which. */
export const nthQuery = (query: string, n: number): string => (n === 1 ? query : `${query} (search ${n})`)
