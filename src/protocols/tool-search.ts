/**
 * Codex's client-side tool search (`tool_search`, Codex 0.17x with MCP tools deferred): Codex
 * declares `{"type":"tool_search","execution":"client","description","parameters"}` instead of
 * its MCP tools, the model calls it (a `tool_search_call` item, `arguments` an object), and Codex
 * answers with a `tool_search_output` item whose `tools` are the tools the search loaded
 * (functions and namespaces), callable from then on. OpenAI reads those loaded tools from the
 * history; another vendor has neither the tool nor the items, so on a translated route the search
 * is a function of that name, its calls and outputs a call and a result, and the tools it loaded
 * join the request's tools. A call of it goes back to Codex as a `tool_search_call` item: Codex
 * runs no `function_call` of that name ("unsupported payload").
 */

import type {FunctionTool, Request, ToolCallPart, ToolResultPart} from './ir.js'

type Body = Record<string, unknown>

// (not responses-items.ts's, which imports this file)
const isObject = (value: unknown): value is Body =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The name of the search elsewhere, as Codex names the tool in its own history. */
export const TOOL_SEARCH = 'tool_search'

/** Codex's client-side search tool as the IR's function of that name; undefined for any other tool. */
export function toolSearchFunction(tool: Body): FunctionTool | undefined {
  // `execution: "server"` is OpenAI's own search over the tools it holds: nothing a client runs
  if (tool.type !== 'tool_search' || tool.execution === 'server') return undefined
  return {
    name: TOOL_SEARCH,
    ...(typeof tool.description === 'string' ? {description: tool.description} : {}),
    parameters: isObject(tool.parameters) ? tool.parameters : {type: 'object', properties: {}},
    toolSearch: true,
  }
}

/**
 * A `tool_search_call` or `tool_search_output` item of the history as the IR's call or result
 * (undefined for a server-run one, which OpenAI alone reads); the tools an output loaded are added
 * to `loaded`.
 */
export function toolSearchPart(
  item: Body,
  loaded: Body[],
): {role: 'assistant'; part: ToolCallPart} | {role: 'user'; part: ToolResultPart} | undefined {
  if (item.execution === 'server') return undefined
  const callId = typeof item.call_id === 'string' ? item.call_id : typeof item.id === 'string' ? item.id : ''
  if (item.type === 'tool_search_call') {
    const args = item.arguments
    const text = typeof args === 'string' ? args || '{}' : JSON.stringify(args ?? {})
    return {role: 'assistant', part: {type: 'tool_call', id: callId, name: TOOL_SEARCH, arguments: text}}
  }
  const tools = Array.isArray(item.tools) ? item.tools.filter(isObject) : []
  loaded.push(...tools)
  return {
    role: 'user',
    part: {
      type: 'tool_result',
      callId,
      name: TOOL_SEARCH,
      content: [{type: 'text', text: loadedText(tools)}],
    },
  }
}

/** What the model reads of a search's output: the names of the tools it loaded, now callable. */
function loadedText(tools: Body[]): string {
  const names: string[] = []
  for (const tool of tools) {
    if (typeof tool.name !== 'string') continue
    if (tool.type === 'namespace' && Array.isArray(tool.tools))
      for (const inner of tool.tools)
        if (isObject(inner) && typeof inner.name === 'string') names.push(`${tool.name}__${inner.name}`)
    if (tool.type !== 'namespace') names.push(tool.name)
  }
  return names.length ? `Tools loaded, now callable: ${names.join(', ')}` : 'No tools matched.'
}

/**
 * The request's tools followed by those the history's searches loaded, in the order they were
 * first loaded: what was sent on the previous turn stays the prefix (the upstream's prompt cache
 * holds). A tool loaded twice, or already declared, is sent once; a namespace loaded again adds
 * only its tools not loaded before.
 */
export function withLoadedTools(declared: unknown, loaded: Body[]): unknown[] {
  const tools = Array.isArray(declared) ? declared : []
  if (!loaded.length) return tools
  const seen = new Set<string>()
  const key = (namespace: string, name: unknown) => `${namespace}\u0000${String(name)}`
  const note = (tool: unknown): void => {
    if (!isObject(tool)) return
    if (tool.type === 'namespace' && Array.isArray(tool.tools))
      for (const inner of tool.tools) if (isObject(inner)) seen.add(key(String(tool.name), inner.name))
    seen.add(key('', tool.name))
  }
  for (const tool of tools) note(tool)
  const out = [...tools]
  for (const tool of loaded) {
    if (tool.type === 'namespace' && Array.isArray(tool.tools)) {
      const fresh = tool.tools.filter(
        (inner) => isObject(inner) && !seen.has(key(String(tool.name), inner.name)),
      )
      if (!fresh.length) continue
      const added = {...tool, tools: fresh}
      note(added)
      out.push(added)
    } else if (!seen.has(key('', tool.name))) {
      note(tool)
      out.push(tool)
    }
  }
  return out
}

/** Whether the client's request declared `name` as Codex's tool search. */
export const isToolSearch = (request: Request | undefined, name: string): boolean =>
  name === TOOL_SEARCH && !!request?.tools.some((tool) => tool.name === name && tool.toolSearch)

/** A call of the search as Codex records it: a `tool_search_call` item, `arguments` an object. */
export function toolSearchCallItem(
  call: {id: string; arguments: string},
  itemId: string,
  status: 'in_progress' | 'completed' | 'incomplete',
): Body {
  let args: unknown = {}
  if (status !== 'in_progress')
    try {
      const parsed: unknown = JSON.parse(call.arguments || '{}')
      if (isObject(parsed)) args = parsed
    } catch {
      // a model's broken JSON: Codex reads an object; its search then says what is missing
    }
  return {
    type: 'tool_search_call',
    id: itemId,
    call_id: call.id,
    status,
    execution: 'client',
    arguments: args,
  }
}
