/**
 * Anthropic's server tools in a Messages body passed through (Claude Code on an
 * Anthropic-compatible server) to an upstream that refuses one by its tag: Claude Code's advisor
 * (`{"type": "advisor_20260301", "name": "advisor", …}`, with an advisor model set) on a host
 * without it, "tools.2: Input tag 'advisor_20260301' found using 'type' does not match any of the
 * expected tags" (sifxprime/krouter PR #16: about a fifth of one fleet's calls, where the
 * `advisor-tool-2026-03-01` beta did not reach Anthropic; gwctl learns such a beta away,
 * adaptations.ts `betaRefusal`, and the tool is refused next). adaptations.ts learns the type per
 * provider and model; the body goes without the tool from then on, and without its records in the
 * history, which such a host refuses too (the advice as text).
 */
import {advisorAdviceText} from './messages.js'

type Body = Record<string, unknown>
type Block = Record<string, unknown>

const isObj = (v: unknown): v is Block => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The types of the server tools a Messages body offers beside other tools and could go without:
 * a tool with a `type` of Anthropic's own (not `custom`), not the one its `tool_choice` forces;
 * undefined when there is none. A request whose point is the tool (forced, or its only tool) is
 * never sent without it.
 */
export function optionalServerTools(body: Body): string[] | undefined {
  const tools = body.tools
  if (!Array.isArray(tools) || tools.length < 2) return undefined
  const choice =
    isObj(body.tool_choice) && body.tool_choice.type === 'tool' ? body.tool_choice.name : undefined
  let types: string[] | undefined
  for (const t of tools)
    if (isObj(t) && typeof t.type === 'string' && t.type !== 'custom' && t.name !== choice)
      (types ??= []).push(t.type)
  return types
}

/**
 * `body` without the tools of the `refused` types, and without their records in its history: each
 * `server_tool_use` that called one of them (by its name) and the result that answered it (by its
 * id) left out, the advisor's advice as a text block in its place (messages.ts `advisorAdviceText`);
 * a cache mark on a block left out goes on the block before it; a message left empty goes. In
 * place; true when anything changed.
 */
export function withoutServerTools(body: Body, refused: readonly string[]): boolean {
  if (!Array.isArray(body.tools)) return false
  const names = new Set<string>()
  const tools = body.tools.filter((t) => {
    if (!isObj(t) || typeof t.type !== 'string' || !refused.includes(t.type)) return true
    if (typeof t.name === 'string') names.add(t.name)
    return false
  })
  if (tools.length === body.tools.length) return false
  body.tools = tools
  if (Array.isArray(body.messages)) body.messages = withoutCalls(body.messages, names)
  return true
}

function withoutCalls(messages: unknown[], names: ReadonlySet<string>): unknown[] {
  const ids = new Set<string>()
  const out: unknown[] = []
  for (const m of messages) {
    if (!isObj(m) || !Array.isArray(m.content)) {
      out.push(m)
      continue
    }
    let content: unknown[] | undefined
    for (let i = 0; i < m.content.length; i++) {
      const b: unknown = m.content[i]
      const call = isObj(b) && b.type === 'server_tool_use' && typeof b.name === 'string' && names.has(b.name)
      const result = isObj(b) && typeof b.tool_use_id === 'string' && ids.has(b.tool_use_id)
      if (!call && !result) {
        content?.push(b)
        continue
      }
      content ??= m.content.slice(0, i)
      const block = b as Block
      if (call && typeof block.id === 'string') ids.add(block.id)
      const advice = result && block.type === 'advisor_tool_result' ? advisorAdviceText(block) : undefined
      if (advice !== undefined) content.push({type: 'text', text: advice, ...cacheMark(block)})
      else if (block.cache_control !== undefined) {
        const last = content.at(-1)
        if (isObj(last) && last.cache_control === undefined)
          content[content.length - 1] = {...last, cache_control: block.cache_control}
      }
    }
    if (content === undefined) out.push(m)
    else if (content.length > 0) out.push({...m, content})
  }
  return out
}

const cacheMark = (block: Block): Block =>
  block.cache_control === undefined ? {} : {cache_control: block.cache_control}
