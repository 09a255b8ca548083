/**
 * Anthropic's tool search, for a server that does not implement it. A Messages tool with
 * `defer_loading: true` is not shown to the model until a `tool_reference` block in a tool result
 * names it (Claude Code 2.1.2xx-2.1.33x defers most of its tools, MCP tools included, and its
 * ToolSearch tool answers with references; it also sends a `DeferredToolPlaceholder` that is never
 * to be called). As Anthropic does, a deferred tool nobody referenced is left out, and a referenced
 * one is the model's from then on: it joins the tools after the others, in the order of first
 * reference, so the tool list only grows at its end as a conversation loads more (a prompt cache
 * keeps the longest prefix). Each run of references becomes the text Claude Code's ToolSearch tells
 * the model to expect: the tools' definitions as `<function>` lines in a `<functions>` block (a tool
 * the request does not define: its name only).
 *
 * One rule, two forms: {@link loadReferencedTools} for the Messages decoder of a translated request
 * (./messages.ts, on the IR's tools), and {@link withDeferredToolsLoaded} for a Messages body passed
 * through untranslated to a server that is not Anthropic's (Kimi's coding endpoint, OpenRouter with
 * a model that is not Claude's, Volcengine Ark: each refuses the request, every turn, once the
 * history holds a reference; daemon/router/tool-search.ts says when).
 */
import type {FunctionTool, ReferencedTool} from './ir.js'
import {toolReferenceText} from './ir.js'
import {parseJsonBytes, utf8Bytes} from './json-bytes.js'
import {arrayElements, topMembers, withMembers, type MemberSpan} from './json-spans.js'

// (not ./cm-common.js's: the proxy loads this module for a body passed through, without the codecs)
type Json = Record<string, unknown>
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * A Messages tool as the IR's function tool: a client tool (no `type`, or `custom`) with a name;
 * undefined for a server tool (Anthropic's web search, its tool search, a computer-use tool).
 */
export function messagesFunctionTool(t: unknown): FunctionTool | undefined {
  if (!isObj(t) || (t.type !== undefined && t.type !== 'custom') || typeof t.name !== 'string')
    return undefined
  // (members in the same order, a description set only when there: no literal spread per tool)
  const tool = {name: t.name} as FunctionTool
  if (typeof t.description === 'string') tool.description = t.description
  tool.parameters = isObj(t.input_schema) ? t.input_schema : {type: 'object', properties: {}}
  return tool
}

/** Whether a Messages request's tools hold Anthropic's own (server-side) tool search. */
export const isServerToolSearch = (t: unknown): boolean =>
  isObj(t) && typeof t.type === 'string' && t.type.startsWith('tool_search_tool_')

/**
 * The tools the references load and each run's text: `known` holds the tools the model has (by
 * name; a loaded one joins it), `load` finds a tool a reference loads (a deferred one), `view` is a
 * tool's definition. A reference of a known tool, or of none, loads nothing; `loaded` is in the
 * order of first reference.
 */
export function loadReferencedTools<T>(
  known: Map<string, T>,
  load: (name: string) => T | undefined,
  runs: ReadonlyArray<{readonly names: readonly string[]}>,
  view: (tool: T) => FunctionTool,
): {loaded: T[]; texts: Array<{text: string; references: ReferencedTool[]}>} {
  const loaded: T[] = []
  const texts: Array<{text: string; references: ReferencedTool[]}> = []
  for (const run of runs) {
    const references: ReferencedTool[] = []
    for (const name of run.names) {
      let tool = known.get(name)
      if (tool === undefined) {
        tool = load(name)
        if (tool !== undefined) {
          loaded.push(tool)
          known.set(name, tool)
        }
      }
      const fn = tool === undefined ? undefined : view(tool)
      references.push(fn ? {name, description: fn.description ?? '', parameters: fn.parameters} : {name})
    }
    texts.push({text: toolReferenceText(references), references})
  }
  return {loaded, texts}
}

const DEFER_LOADING = Buffer.from('"defer_loading"')
const TOOL_REFERENCE = Buffer.from('"tool_reference"')

/** Whether a Messages body may use tool search: a byte search for `"defer_loading"`, `"tool_reference"`. */
export const holdsDeferral = (body: Buffer): boolean =>
  body.indexOf(DEFER_LOADING) !== -1 || body.indexOf(TOOL_REFERENCE) !== -1

/** A tool of a Messages body with its definition as the IR reads it. */
interface BodyTool {
  raw: Json
  fn: FunctionTool
}

/** An object without one member, its other members in their order. */
function without(o: Json, key: string): Json {
  const {[key]: _, ...rest} = o
  return rest
}

/**
 * A Messages body (Claude Code's, passed through) with the translated route's rule for deferred
 * tools applied in Messages form (./messages.ts `loadDeferredTools`), every other byte as it came:
 * - a deferred tool no `tool_reference` names is left out of `tools` (the placeholder always is);
 * - a referenced one goes after the others, in the order of first reference, without
 *   `defer_loading` (its other members as they came); so does a deferred tool `tool_choice` forces;
 * - each run of adjacent `tool_reference` blocks in a `tool_result`'s content becomes one text
 *   block of the `<functions>` text, with the run's last cache mark where one of them had one;
 * - beside Anthropic's own tool search (a `tool_search_tool_*` server tool, which nothing else
 *   runs), deferred tools stay where they are, without `defer_loading`.
 * The rewrite depends on the body alone (the same body, the same bytes), and a turn's history is
 * written as it was the turn before: only the tools grow, at their end, when the model loads one.
 * Spliced (./json-spans.ts): `tools`, `tool_choice` and each message that holds a reference are
 * parsed and written again, every other byte goes as it came (a 180 KB turn of Claude Code's is
 * not parsed whole). Undefined when the body holds neither key (a byte search), is not a JSON
 * object, a value it reads is not JSON, or nothing changes.
 */
export function withDeferredToolsLoaded(body: Buffer): Buffer | undefined {
  if (!holdsDeferral(body)) return undefined
  const members = topMembers(body)
  if (!members) return undefined
  try {
    return deferralRewrite(body, members)
  } catch {
    // (a value it reads is not JSON: the body goes as it came, and the server says what it thinks)
    return undefined
  }
}

/** {@link withDeferredToolsLoaded} on a body's members: only `tools`, `tool_choice` and the messages holding a reference are parsed. */
function deferralRewrite(body: Buffer, members: readonly MemberSpan[]): Buffer | undefined {
  // (a name given twice: the last, as a parse reads it)
  const find = (name: string) => members.findLastIndex((m) => m.name === name)
  const valueOf = (k: number): unknown =>
    k === -1 ? undefined : parseJsonBytes(body.subarray(members[k].value, members[k].end))
  const edits = new Map<number, Buffer | null>()

  // each run of references, where its text block goes; the messages that hold one, parsed
  const runs: Array<{names: string[]; block: Json}> = []
  const rewritten: Array<{start: number; end: number; message: Json}> = []
  const m = find('messages')
  let next = m === -1 ? -1 : body.indexOf(TOOL_REFERENCE, members[m].value)
  const elements = next !== -1 && next < members[m].end ? arrayElements(body, members[m].value) : undefined
  for (const element of elements ?? []) {
    if (next === -1) break
    if (next >= element.end) continue
    next = body.indexOf(TOOL_REFERENCE, element.end)
    const message = parseJsonBytes(body.subarray(element.start, element.end))
    if (!isObj(message) || !Array.isArray(message.content)) continue
    let content: unknown[] | undefined
    for (let c = 0; c < message.content.length; c++) {
      const block = message.content[c] as unknown
      if (!isObj(block) || block.type !== 'tool_result' || !Array.isArray(block.content)) continue
      if (!block.content.some((b) => isObj(b) && b.type === 'tool_reference')) continue
      const parts: unknown[] = []
      let run: {names: string[]; block: Json} | undefined
      for (const b of block.content as unknown[]) {
        if (!isObj(b) || b.type !== 'tool_reference') {
          run = undefined
          parts.push(b)
          continue
        }
        const name = typeof b.tool_name === 'string' ? b.tool_name : ''
        if (!run) {
          run = {names: [], block: {type: 'text', text: ''}}
          runs.push(run)
          parts.push(run.block)
        }
        run.names.push(name)
        // (the run's last mark: a mark caches the prefix through its block)
        if (b.cache_control !== undefined) run.block.cache_control = b.cache_control
      }
      content ??= [...message.content]
      content[c] = {...block, content: parts}
    }
    if (content) rewritten.push({start: element.start, end: element.end, message: {...message, content}})
  }

  const t = find('tools')
  const toolsValue = valueOf(t)
  const tools = Array.isArray(toolsValue) ? (toolsValue as unknown[]) : []
  const serverSearch = tools.some(isServerToolSearch)
  const shown: unknown[] = []
  const known = new Map<string, BodyTool>()
  const deferred = new Map<string, BodyTool>()
  for (const tool of tools) {
    const fn = messagesFunctionTool(tool)
    if (!fn) {
      shown.push(tool)
      continue
    }
    const raw = tool as Json
    if (raw.defer_loading !== true) {
      shown.push(tool)
      known.set(fn.name, {raw, fn})
    } else if (serverSearch) {
      // its deferred tools as ordinary ones, where they are
      const undeferred = without(raw, 'defer_loading')
      shown.push(undeferred)
      known.set(fn.name, {raw: undeferred, fn})
    } else deferred.set(fn.name, {raw, fn})
  }
  const {loaded, texts} = loadReferencedTools(
    known,
    (name) => deferred.get(name),
    runs,
    (tool) => tool.fn,
  )
  for (let i = 0; i < runs.length; i++) runs[i].block.text = texts[i].text
  for (const tool of loaded) shown.push(without(tool.raw, 'defer_loading'))
  // a deferred tool the request forces is the model's too (a server refuses a forced tool it was
  // not given)
  const c = find('tool_choice')
  const choice = valueOf(c)
  if (isObj(choice) && choice.type === 'tool' && typeof choice.name === 'string' && !known.has(choice.name)) {
    const forced = deferred.get(choice.name)
    if (forced) shown.push(without(forced.raw, 'defer_loading'))
  }
  if (shown.length !== tools.length || shown.some((tool, i) => tool !== tools[i])) {
    // (every tool deferred, none loaded yet: no tools, and no choice among none, which a server refuses)
    if (shown.length === 0) {
      edits.set(t, null)
      if (c !== -1) edits.set(c, null)
    } else edits.set(t, utf8Bytes(JSON.stringify(shown)))
    // (a name given twice: the ones a parse would not keep go, as the whole body's write left them)
    members.forEach((member, k) => {
      if (k !== t && k !== c && (member.name === 'tools' || (member.name === 'tool_choice' && edits.has(c))))
        edits.set(k, null)
    })
  }
  if (rewritten.length > 0) {
    // the messages array with those messages written again, every other byte as it came
    const parts: Buffer[] = []
    let from = members[m].value
    for (const {start, end, message} of rewritten) {
      parts.push(body.subarray(from, start), utf8Bytes(JSON.stringify(message)))
      from = end
    }
    parts.push(body.subarray(from, members[m].end))
    edits.set(m, Buffer.concat(parts))
  }
  return edits.size > 0 ? withMembers(body, members, edits) : undefined
}
