/**
 * Tool names each family takes, and the names a translated request gives the tools whose names
 * the upstream would refuse. Claude Code's MCP tools from plugins are named
 * `mcp__plugin_<plugin>_<server>__<tool>`, often past 64 characters: Anthropic takes up to 128,
 * OpenAI (chat and Responses) and Gemini 64, so every request of such a session to an OpenAI or
 * Gemini model was a 400 ("Invalid 'tools[5].function.name': string too long. Expected a string
 * with maximum length 64", LibreChat #7435, chrome-devtools-mcp #1169). Gemini takes `.` and `:` in
 * a name, which OpenAI and Anthropic refuse, and wants a letter or `_` first.
 *
 * A name that does not fit is rewritten by a pure function of itself (its characters outside the
 * rule as `_` and a hash of the name after them; one too long keeps its head and its tail, the
 * part that names the tool, around that hash), so the same tool has the same name on every
 * request, whatever other tools come with it, and the upstream's prompt cache holds. The
 * upstream's calls come back under the client's own names (`clientToolName`): the client never
 * sees a rewritten one.
 */
import {createHash} from 'node:crypto'

import type {Family, Message, Part, Request, ToolResultPart} from './ir.js'
import {toolReferenceText} from './ir.js'

interface ToolNameRule {
  /** The longest name. */
  max: number
  /** `.` and `:` are taken (Gemini). */
  dots: boolean
  /** The first character must be a letter or `_` (Gemini). */
  letterFirst: boolean
}

const RULES: Record<Family, ToolNameRule> = {
  // OpenAI: ^[a-zA-Z0-9_-]{1,64}$
  chat: {max: 64, dots: false, letterFirst: false},
  responses: {max: 64, dots: false, letterFirst: false},
  // Anthropic: ^[a-zA-Z0-9_-]{1,128}$
  messages: {max: 128, dots: false, letterFirst: false},
  // Gemini: a letter or `_` first, then letters, digits, `_`, `.`, `:` and `-`, at most 64
  gemini: {max: 64, dots: true, letterFirst: true},
}

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122)
}

function allowed(c: number, rule: ToolNameRule): boolean {
  return isLetter(c) || (c >= 48 && c <= 57) || c === 95 || c === 45 || (rule.dots && (c === 46 || c === 58))
}

/** Whether `name` fits the rule (a character loop: this runs for every tool of every request). */
function fits(name: string, rule: ToolNameRule): boolean {
  if (name.length === 0 || name.length > rule.max) return false
  const first = name.charCodeAt(0)
  if (rule.letterFirst && !isLetter(first) && first !== 95) return false
  for (let i = 0; i < name.length; i++) if (!allowed(name.charCodeAt(i), rule)) return false
  return true
}

/**
 * The name of the upstream's own web search, which a function beside it may not have: Anthropic's
 * `web_search_*` tool is named `web_search` and Anthropic refuses two tools of one name ("Tool
 * names must be unique"); OpenAI's model knows its `web_search` tool by that name too. Gemini's
 * `googleSearch` takes no name of a function.
 */
const SEARCH_NAME: Partial<Record<Family, string>> = {messages: 'web_search', responses: 'web_search'}

const hash = (name: string): string => createHash('sha256').update(name).digest('hex').slice(0, 8)

/** `name` made to fit: characters outside the rule as `_`, and one too long as head, hash, tail. */
function fitted(name: string, rule: ToolNameRule, taken: ReadonlySet<string>): string {
  let out = ''
  for (let i = 0; i < name.length; i++) out += allowed(name.charCodeAt(i), rule) ? name[i] : '_'
  if (out === '' || (rule.letterFirst && !isLetter(out.charCodeAt(0)) && out.charCodeAt(0) !== 95))
    out = `_${out}`
  if (out.length > rule.max) {
    // the head (the MCP server) and the tail (the tool itself), around a hash of the whole name
    const tail = Math.floor((rule.max - 10) / 2)
    out = `${out.slice(0, rule.max - 10 - tail)}_${hash(name)}_${out.slice(out.length - tail)}`
  } else {
    // a hash of the name too: what the name becomes depends on it alone, never on which other
    // tools the request has (`a.b` and `a:b` would both be `a_b`)
    out = `${out.slice(0, rule.max - 9)}_${hash(name)}`
  }
  // a name that fits already and is exactly this (not to be expected): the hash of the hash
  while (taken.has(out)) out = `${out.slice(0, rule.max - 9)}_${hash(out)}`
  return out
}

/**
 * The upstream names of the tools `request` names (its tools, its tool choice and the history's
 * calls and results: a tool dropped from the list since, an MCP server gone mid-session, still
 * has its calls in the history) that the `upstream` family would refuse: the client's name to the
 * upstream's, or undefined when every name fits (the usual request, one loop over its tools and
 * the history's calls).
 */
export function upstreamToolNames(request: Request, upstream: Family): Map<string, string> | undefined {
  const rule = RULES[upstream]
  // a function named as the web search the upstream also gets (a Codex or Gemini CLI user's own
  // `web_search` tool beside the vendor's search) is renamed like a name the upstream refuses
  const search = request.webSearch ? SEARCH_NAME[upstream] : undefined
  const keeps = (name: string): boolean => name !== search && fits(name, rule)
  if (eachName(request, (name) => !keeps(name)) === undefined) return undefined
  // the names that fit keep them, and no rename may take one; tools first, so the renames (and
  // their clashes) come in the same order each time
  const taken = new Set<string>(search ? [search] : [])
  eachName(request, (name) => {
    if (keeps(name)) taken.add(name)
    return false
  })
  const names = new Map<string, string>()
  eachName(request, (name) => {
    if (!keeps(name) && !names.has(name)) {
      const renamed = fitted(name, rule, taken)
      names.set(name, renamed)
      taken.add(renamed)
    }
    return false
  })
  return names
}

/**
 * Calls `visit` with each tool name of `request` (its tools, its tool choice, the history's calls
 * and results) until it returns true; returns that name, or undefined.
 */
function eachName(request: Request, visit: (name: string) => boolean): string | undefined {
  for (const tool of request.tools) if (visit(tool.name)) return tool.name
  const choice = request.toolChoice
  if (choice?.type === 'tool' && visit(choice.name)) return choice.name
  for (const m of request.messages)
    for (const p of m.parts)
      if ((p.type === 'tool_call' || (p.type === 'tool_result' && p.name !== undefined)) && visit(p.name!))
        return p.name
  return undefined
}

/** `request` with its tools, tool choice and the history's calls and results under the upstream's names. */
export function renameTools(request: Request, names: ReadonlyMap<string, string>): Request {
  const rename = (name: string): string => names.get(name) ?? name
  // a tool result that holds the definitions of tools (Messages `tool_reference`): their names too
  const refersRenamed = (p: ToolResultPart): boolean =>
    p.content.some((c) => c.type === 'text' && c.references?.some((r) => names.has(r.name)))
  const renameResult = (p: ToolResultPart): ToolResultPart => {
    const renamed = p.name !== undefined && names.has(p.name) ? {...p, name: rename(p.name)} : {...p}
    if (refersRenamed(p))
      renamed.content = p.content.map((c) =>
        c.type === 'text' && c.references ? {...c, text: toolReferenceText(c.references, rename)} : c,
      )
    return renamed
  }
  const renamePart = (p: Part): Part =>
    p.type === 'tool_call' && names.has(p.name)
      ? {...p, name: rename(p.name)}
      : p.type === 'tool_result' && ((p.name !== undefined && names.has(p.name)) || refersRenamed(p))
        ? renameResult(p)
        : p
  const messages = request.messages.map((m): Message => {
    if (
      !m.parts.some(
        (p) =>
          (p.type === 'tool_call' && names.has(p.name)) ||
          (p.type === 'tool_result' && (names.has(p.name ?? '') || refersRenamed(p))),
      )
    )
      return m
    return {...m, parts: m.parts.map(renamePart)}
  })
  const choice = request.toolChoice
  return {
    ...request,
    tools: request.tools.map((t) => (names.has(t.name) ? {...t, name: rename(t.name)} : t)),
    ...(choice?.type === 'tool' && names.has(choice.name)
      ? {toolChoice: {type: 'tool' as const, name: rename(choice.name)}}
      : {}),
    messages,
  }
}

/** The client's name of a tool the upstream called by `name` (its own when it was not renamed). */
export function clientToolName(name: string, names: ReadonlyMap<string, string> | undefined): string {
  if (!names) return name
  for (const [client, upstream] of names) if (upstream === name) return client
  return name
}
