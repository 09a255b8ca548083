/**
 * A request's tools held to the most its upstream model takes, once a refusal stated it
 * (../daemon/router/adaptations.ts `toolCap`: OpenAI's "Invalid 'tools': array too long. Expected
 * an array with maximum length 128", Kimi's "a max of 128 tools can be supported", Gemini's "At
 * most 512 function declarations can be specified"). The tool list goes with every request, so
 * without this every turn of the session is refused.
 *
 * The client's first tools stay: agents list their built-ins first and MCP servers' tools last,
 * so the ones cut are the last servers' tools. A tool the history calls stays (a call to a tool
 * the request no longer offers is refused, or the model loses what it did), and so does one the
 * request forces. What goes is the same for the same tool list, turn after turn: the prompt
 * cache, which starts at the tools, keeps matching.
 *
 * The model is told in one line at the end of the system prompt (not in the last user turn: that
 * turn is an older one on the next request, and its bytes would change under the cache), so it can
 * tell the user why a tool is not there rather than guess.
 */
import type {Request, TextPart} from './ir.js'

/** How many names of left-out tools the line to the model and the log row spell out. */
const NAMED = 40

/**
 * Which of a request's tools go within `cap`: `names` are its tools in the client's order
 * (undefined for one that is no function of the client's, a hosted tool: kept, and counted),
 * `needed` the names the history calls or the request forces. Undefined when all of them fit.
 */
export function toolsWithin(
  names: ReadonlyArray<string | undefined>,
  cap: number,
  needed: ReadonlySet<string>,
): {keep: boolean[]; leftOut: string[]} | undefined {
  if (names.length <= cap) return undefined
  const keep = names.map((name) => name === undefined || needed.has(name))
  let count = keep.filter(Boolean).length
  for (let i = 0; i < names.length && count < cap; i++)
    if (!keep[i]) {
      keep[i] = true
      count++
    }
  const leftOut = names.filter((name, i) => !keep[i] && name !== undefined) as string[]
  return leftOut.length > 0 ? {keep, leftOut} : undefined
}

/** `names` in a list of at most {@link NAMED}, the rest counted. */
function nameList(names: readonly string[]): string {
  const shown = names.slice(0, NAMED).join(', ')
  return names.length > NAMED ? `${shown} and ${names.length - NAMED} more` : shown
}

/** The line to the model naming the tools left out (the same for the same tools). */
export function toolCapLine(leftOut: readonly string[], cap: number): string {
  return `[gwctl: this model takes at most ${cap} tools, so ${leftOut.length} of the client's tools were not offered and cannot be called in this conversation: ${nameList(leftOut)}]`
}

/** The log row's note for a request whose tools were cut. */
export function toolCapNote(leftOut: readonly string[], total: number, cap: number): string {
  const shown = leftOut.slice(0, 5).join(', ')
  return `left out ${leftOut.length} of ${total} tools past the model's limit of ${cap} (${shown}${leftOut.length > 5 ? ', …' : ''}): a line in the system prompt says so`
}

/** The names of the tools a request's history calls, and of the one it forces. */
function neededTools(request: Request): Set<string> {
  const needed = new Set<string>()
  for (const message of request.messages)
    if (message.role === 'assistant')
      for (const part of message.parts) if (part.type === 'tool_call') needed.add(part.name)
  if (request.toolChoice?.type === 'tool') needed.add(request.toolChoice.name)
  return needed
}

/**
 * A decoded request with its tools held to `cap` (its web search, which the upstream counts as a
 * tool beside them, counted), and the line that says what was left out at the end of its system
 * prompt; undefined when they fit.
 */
export function requestWithinToolCap(
  request: Request,
  cap: number,
  countsSearch: boolean,
): {request: Request; note: string} | undefined {
  const search = countsSearch && request.webSearch !== undefined ? 1 : 0
  const cut = toolsWithin(
    request.tools.map((t) => t.name),
    cap - search,
    neededTools(request),
  )
  if (!cut) return undefined
  const line: TextPart = {type: 'text', text: toolCapLine(cut.leftOut, cap)}
  return {
    request: {
      ...request,
      tools: request.tools.filter((_, i) => cut.keep[i]),
      system: [...request.system, line],
    },
    note: toolCapNote(cut.leftOut, request.tools.length + search, cap),
  }
}

type Body = Record<string, unknown>

const isObject = (value: unknown): value is Body =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A chat body's tool names (undefined for a tool that is no function), in order. */
const chatToolNames = (tools: unknown[]): Array<string | undefined> =>
  tools.map((tool) => {
    const name = isObject(tool) && isObject(tool.function) ? tool.function.name : undefined
    return typeof name === 'string' ? name : undefined
  })

/**
 * A chat body passed through (a chat client on a chat upstream) with its tools held to `cap` and
 * the line at the end of its first system message (one made first when there is none); undefined
 * when they fit. `body` is not changed.
 */
export function chatBodyWithinToolCap(body: Body, cap: number): {body: Body; note: string} | undefined {
  if (!Array.isArray(body.tools) || body.tools.length <= cap) return undefined
  const needed = new Set<string>()
  for (const message of Array.isArray(body.messages) ? body.messages : [])
    if (isObject(message) && Array.isArray(message.tool_calls))
      for (const call of message.tool_calls) {
        const name = isObject(call) && isObject(call.function) ? call.function.name : undefined
        if (typeof name === 'string') needed.add(name)
      }
  const choice = body.tool_choice
  const forced = isObject(choice) && isObject(choice.function) ? choice.function.name : undefined
  if (typeof forced === 'string') needed.add(forced)
  const tools = body.tools
  const cut = toolsWithin(chatToolNames(tools), cap, needed)
  if (!cut) return undefined
  const text = toolCapLine(cut.leftOut, cap)
  const messages = Array.isArray(body.messages) ? body.messages.slice() : []
  const first = messages[0]
  if (isObject(first) && (first.role === 'system' || first.role === 'developer')) {
    const content = first.content
    messages[0] = {
      ...first,
      content:
        typeof content === 'string' && content
          ? `${content}\n\n${text}`
          : Array.isArray(content)
            ? [...content, {type: 'text', text}]
            : text,
    }
  } else messages.unshift({role: 'system', content: text})
  return {
    body: {...body, tools: tools.filter((_, i) => cut.keep[i]), messages},
    note: toolCapNote(cut.leftOut, tools.length, cap),
  }
}

/**
 * A Messages body passed through (Claude Code on an Anthropic-compatible server: Kimi's) with its
 * tools held to `cap` and the line as a last system block (after Claude Code's cache marks: the
 * prefix they close stays as it was); undefined when they fit. `body` is not changed.
 */
export function messagesBodyWithinToolCap(body: Body, cap: number): {body: Body; note: string} | undefined {
  if (!Array.isArray(body.tools) || body.tools.length <= cap) return undefined
  const needed = new Set<string>()
  for (const message of Array.isArray(body.messages) ? body.messages : [])
    if (isObject(message) && message.role === 'assistant' && Array.isArray(message.content))
      for (const block of message.content)
        if (isObject(block) && block.type === 'tool_use' && typeof block.name === 'string')
          needed.add(block.name)
  const choice = body.tool_choice
  if (isObject(choice) && choice.type === 'tool' && typeof choice.name === 'string') needed.add(choice.name)
  const tools = body.tools
  // (a server tool, `web_search_20250305`, has a type of its own: kept)
  const names = tools.map((tool) =>
    isObject(tool) && (tool.type === undefined || tool.type === 'custom') && typeof tool.name === 'string'
      ? tool.name
      : undefined,
  )
  const cut = toolsWithin(names, cap, needed)
  if (!cut) return undefined
  const text = toolCapLine(cut.leftOut, cap)
  const system = body.system
  return {
    body: {
      ...body,
      tools: tools.filter((_, i) => cut.keep[i]),
      system:
        typeof system === 'string' && system
          ? [
              {type: 'text', text: system},
              {type: 'text', text},
            ]
          : Array.isArray(system)
            ? [...system, {type: 'text', text}]
            : text,
    },
    note: toolCapNote(cut.leftOut, tools.length, cap),
  }
}

/**
 * A Gemini body passed through (Gemini CLI with MCP servers on Gemini) with its function
 * declarations, across its `tools` entries, held to `cap` and the line as a last part of its
 * `systemInstruction`; undefined when they fit. `body` is not changed.
 */
export function geminiBodyWithinToolCap(body: Body, cap: number): {body: Body; note: string} | undefined {
  if (!Array.isArray(body.tools)) return undefined
  const entries = body.tools
  const declarations = (tool: unknown): unknown[] =>
    isObject(tool) && Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : []
  const names: Array<string | undefined> = []
  for (const tool of entries)
    for (const d of declarations(tool))
      names.push(isObject(d) && typeof d.name === 'string' ? d.name : undefined)
  if (names.length <= cap) return undefined
  const needed = new Set<string>()
  for (const content of Array.isArray(body.contents) ? body.contents : [])
    if (isObject(content) && Array.isArray(content.parts))
      for (const part of content.parts) {
        const name = isObject(part) && isObject(part.functionCall) ? part.functionCall.name : undefined
        if (typeof name === 'string') needed.add(name)
      }
  const config = isObject(body.toolConfig) ? body.toolConfig.functionCallingConfig : undefined
  const allowed = isObject(config) ? config.allowedFunctionNames : undefined
  if (Array.isArray(allowed)) for (const name of allowed) if (typeof name === 'string') needed.add(name)
  // (a declaration without a name counts, and stays, as another tool would)
  const cut = toolsWithin(names, cap, needed)
  if (!cut) return undefined
  let i = 0
  const tools = entries.flatMap((tool) => {
    const list = declarations(tool)
    if (list.length === 0) return [tool]
    const kept = list.filter(() => cut.keep[i++])
    if (kept.length === list.length) return [tool]
    // (an entry left with no declaration and nothing else goes: Gemini refuses an empty one)
    const {functionDeclarations: _, ...rest} = tool as Body
    return kept.length > 0
      ? [{...(tool as Body), functionDeclarations: kept}]
      : Object.keys(rest).length > 0
        ? [rest]
        : []
  })
  const text = toolCapLine(cut.leftOut, cap)
  const instruction = isObject(body.systemInstruction) ? body.systemInstruction : undefined
  const parts = Array.isArray(instruction?.parts) ? instruction.parts : []
  return {
    body: {
      ...body,
      tools,
      systemInstruction: {...instruction, parts: [...parts, {text}]},
    },
    note: toolCapNote(cut.leftOut, names.length, cap),
  }
}

/** How many function declarations a Gemini body offers, across its `tools` entries. */
export function geminiDeclarationCount(body: Body): number {
  let count = 0
  if (Array.isArray(body.tools))
    for (const tool of body.tools)
      if (isObject(tool) && Array.isArray(tool.functionDeclarations))
        count += tool.functionDeclarations.length
  return count
}
