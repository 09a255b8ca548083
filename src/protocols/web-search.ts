/**
 * Web searches an upstream runs itself, in each family's shape: Anthropic's `server_tool_use` and
 * `web_search_tool_result` blocks, a Responses `web_search_call` item, Gemini's `groundingMetadata`
 * (chat completions has none). The IR holds a search as a {@link WebSearchPart}; docs/TRANSLATION.md,
 * "Web search".
 */
import type {Json} from './cm-common.js'
import {arr, isObj, str} from './cm-common.js'
import type {WebSearchPart, WebSearchResult} from './ir.js'
import type {Body} from './responses-items.js'

// ---- Messages ----

/** An Anthropic `web_search_tool_result` block (its pages, or its error), keyed by its call's id. */
export function searchResultPart(b: Json): WebSearchPart {
  const part: WebSearchPart = {type: 'web_search', id: str(b.tool_use_id) ?? '', query: '', results: []}
  if (isObj(b.content)) part.error = str(b.content.error_code) ?? 'error'
  else
    for (const raw of arr(b.content)) {
      if (!isObj(raw) || typeof raw.url !== 'string') continue
      const title = str(raw.title)
      const age = str(raw.page_age)
      part.results.push({url: raw.url, ...(title ? {title} : {}), ...(age ? {pageAge: age} : {})})
    }
  return part
}

/** The `encrypted_content` of a page another vendor's search found (a gwctl-wrapped value). */
export const MADE_UP = 'gwx1.search'

/**
 * The id of a `server_tool_use` the gateway writes for a search of another vendor: a wrapped value
 * (`gwx1.search.<id>`), so that a history holding it, failed or without pages too, is found by the
 * byte check of a route to Anthropic itself and sent as text there (strip.ts).
 */
export const serverToolId = (id: string): string =>
  id.startsWith(`${MADE_UP}.`) ? id : `${MADE_UP}.${id.replace(/[^A-Za-z0-9_]/g, '') || 'search'}`

/**
 * A search as Anthropic answers one: the `server_tool_use` call and its `web_search_tool_result`
 * (the pages found, without the contents only Anthropic can read, or the error).
 */
export function searchBlocks(p: Omit<WebSearchPart, 'type'>): [Json, Json] {
  const id = serverToolId(p.id)
  return [
    {type: 'server_tool_use', id, name: 'web_search', input: {query: p.query}},
    {
      type: 'web_search_tool_result',
      tool_use_id: id,
      content: p.error
        ? {type: 'web_search_tool_result_error', error_code: p.error}
        : p.results.map((r) => ({
            type: 'web_search_result',
            url: r.url,
            title: r.title ?? r.url,
            // only Anthropic can make one: a marker that a route to Anthropic itself takes the
            // search out by (strip.ts) rather than send what it would refuse
            encrypted_content: MADE_UP,
            page_age: r.pageAge ?? null,
          })),
    },
  ]
}

// ---- Responses ----

/** A Responses `web_search_call` item (a search OpenAI ran) as the IR's; undefined for another action. */
export function webSearchOfItem(item: Body): WebSearchPart | undefined {
  const action = isObj(item.action) ? item.action : {}
  // a page opened or searched in (`open_page`, `find_in_page`): a step of a search, not one
  if (action.type !== undefined && action.type !== 'search') return undefined
  const results: WebSearchPart['results'] = []
  for (const source of Array.isArray(action.sources) ? action.sources : [])
    if (isObj(source) && typeof source.url === 'string') results.push({url: source.url})
  const part: WebSearchPart = {
    type: 'web_search',
    id: str(item.id) ?? '',
    query: str(action.query) ?? (Array.isArray(action.queries) ? (str(action.queries[0]) ?? '') : ''),
    results,
  }
  if (item.status === 'failed') part.error = 'unavailable'
  return part
}

/** A search as a Responses `web_search_call` output item. */
export function webSearchItem(part: Omit<WebSearchPart, 'type'>, id: string): Body {
  return {
    type: 'web_search_call',
    id,
    status: part.error ? 'failed' : 'completed',
    action: {
      type: 'search',
      query: part.query,
      sources: part.results.map((r) => ({type: 'url', url: r.url})),
    },
  }
}

/** A page an answer cites (a Responses `url_citation` annotation). */
export interface CitedPage {
  url: string
  title?: string
}

/** The `url_citation` annotations of one `output_text` part, or of `annotation.added` events. */
export function citationOf(annotation: unknown): CitedPage | undefined {
  if (!isObj(annotation) || annotation.type !== 'url_citation' || typeof annotation.url !== 'string')
    return undefined
  const title = str(annotation.title)
  return {url: annotation.url, ...(title ? {title} : {})}
}

/** The pages the messages of a Responses answer's `output` cite. */
export function citationsOfOutput(output: unknown): CitedPage[] {
  const cited: CitedPage[] = []
  for (const item of arr(output)) {
    if (!isObj(item) || item.type !== 'message') continue
    for (const c of arr(item.content)) {
      if (!isObj(c)) continue
      for (const a of arr(c.annotations)) {
        const page = citationOf(a)
        if (page) cited.push(page)
      }
    }
  }
  return cited
}

/**
 * OpenAI lists a search's pages in `action.sources` (URLs only) and their titles only in the
 * answer's citations: each cited page's title given to the search that found it, and a cited page
 * no search listed added to the last search (an upstream that left out `action.sources`).
 */
export function citePages(searches: WebSearchPart[], cited: readonly CitedPage[]): void {
  if (searches.length === 0) return
  const byUrl = new Map<string, WebSearchResult>()
  for (const s of searches) for (const r of s.results) byUrl.set(r.url, r)
  for (const page of cited) {
    const known = byUrl.get(page.url)
    if (known) {
      if (page.title && !known.title) known.title = page.title
      continue
    }
    const result = {...page}
    byUrl.set(page.url, result)
    searches[searches.length - 1].results.push(result)
  }
}

// ---- Gemini ----

/**
 * The searches of a candidate's `groundingMetadata` (Google Search grounding): one a query, the
 * pages found (`groundingChunks`, which Gemini does not tie to a query) on the first.
 */
export function searchesOfGrounding(metadata: unknown, id: () => string): WebSearchPart[] {
  if (!isObj(metadata)) return []
  const queries = Array.isArray(metadata.webSearchQueries)
    ? metadata.webSearchQueries.filter((q): q is string => typeof q === 'string')
    : []
  const results: WebSearchResult[] = []
  for (const chunk of Array.isArray(metadata.groundingChunks) ? metadata.groundingChunks : []) {
    const web = isObj(chunk) && isObj(chunk.web) ? chunk.web : undefined
    if (!web || typeof web.uri !== 'string') continue
    const title = str(web.title)
    results.push({url: web.uri, ...(title ? {title} : {})})
  }
  if (queries.length === 0 && results.length === 0) return []
  return (queries.length ? queries : ['']).map((query, i) => ({
    type: 'web_search',
    id: id(),
    query,
    results: i === 0 ? results : [],
  }))
}

/** Searches as a Gemini candidate's `groundingMetadata` (undefined: none). */
export function groundingOf(searches: ReadonlyArray<Omit<WebSearchPart, 'type'>>): Body | undefined {
  if (searches.length === 0) return undefined
  const chunks: Body[] = []
  for (const s of searches)
    for (const r of s.results) chunks.push({web: {uri: r.url, title: r.title ?? hostOf(r.url)}})
  return {webSearchQueries: searches.map((s) => s.query), groundingChunks: chunks}
}

/** A URL's host name (Gemini's grounding titles are the sites' domains). */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname
  } catch {
    return url
  }
}

/**
 * Grounding of a stream's chunks as one: the queries of both in order (each once), the pages of
 * both (each once, by URL) on the first search, as {@link searchesOfGrounding} puts them.
 */
export function mergeSearches(
  held: WebSearchPart[] | undefined,
  more: WebSearchPart[],
): WebSearchPart[] | undefined {
  if (more.length === 0) return held
  if (!held || held.length === 0) return more
  const queries = new Set(held.map((s) => s.query))
  const urls = new Set(held[0].results.map((r) => r.url))
  for (const search of more) {
    for (const r of search.results)
      if (!urls.has(r.url)) {
        urls.add(r.url)
        held[0].results.push(r)
      }
    if (search.query !== '' && !queries.has(search.query)) {
      queries.add(search.query)
      // a query where the first was none (pages before their query)
      if (held.length === 1 && held[0].query === '') held[0].query = search.query
      else held.push({...search, results: []})
    }
  }
  return held
}
