/**
 * Claude Code's mid-conversation system messages on a Messages request passed through to a server
 * that is not Anthropic's. Claude Code 2.1.3xx sends `{"role":"system","content":[…]}` in
 * `messages` (Anthropic's `mid-conversation-system-2026-04-07`: the Agent tool's agent types, its
 * skills, an MCP server's tools that came late, a per-turn effort), which only Anthropic takes:
 * DeepSeek answers 400 `unknown variant 'system', expected 'user' or 'assistant'`, vLLM and
 * llama.cpp 400, Ollama 500 `system message must be at the beginning`. After a 400 Claude Code
 * resends without any system message and goes on without them until `/clear` (one wasted request,
 * agent types lost); after Ollama's 500 every turn fails (anthropics/claude-code #63544, #77698;
 * ollama #17774). This moves them where every such server takes them, keeping their place: each
 * one's text as a `<system-reminder>` block of the user turn beside it (the form Claude Code itself
 * gives its reminders), so the system prompt and every turn before stay the same bytes from one
 * request to the next and the server's prefix cache holds (in the top-level `system`, where they
 * went before, the system prompt grew at request 2 and every token after it was a miss). A
 * translated request has them placed by the Messages decoder (../../protocols/messages.ts).
 */
import {toolRemovalText} from '../../protocols/ir.js'
import {parseJsonBytes} from '../../protocols/json-bytes.js'

type Json = Record<string, unknown>

/**
 * A system message as `JSON.stringify` writes it (Claude Code's spelling). A string cannot hold
 * these bytes (its quotes are escaped), so a body without them has no system message: it costs
 * one byte search. A match may still be a tool call's input; the parse below tells.
 */
const SYSTEM_ROLE = Buffer.from('"role":"system"')

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The line in place of a block no such server takes (the Messages decoder's `leftOutText`). */
function leftOutLine(type: unknown): Json {
  const name = typeof type === 'string' && /^[\w.-]{1,64}$/.test(type) ? type : 'unknown'
  return {
    type: 'text',
    text: `[This system message held a block of type "${name}", left out: it cannot be sent to this model]`,
  }
}

/** A system message's text as Claude Code writes its own reminders in a user turn. */
const reminder = (block: Json): Json => ({
  ...block,
  text: `<system-reminder>\n${String(block.text)}\n</system-reminder>`,
})

/**
 * `content` (a user turn's) with `blocks` added: after its last block (`at: 'end'`), or before its
 * first block that is not a tool result (`at: 'start'`: Anthropic wants a turn's results first).
 */
function withBlocks(content: unknown, blocks: Json[], at: 'start' | 'end'): unknown[] {
  const list: unknown[] =
    typeof content === 'string'
      ? content === ''
        ? []
        : [{type: 'text', text: content}]
      : Array.isArray(content)
        ? [...content]
        : []
  if (at === 'end') return [...list, ...blocks]
  let i = 0
  while (i < list.length && isObj(list[i]) && (list[i] as Json).type === 'tool_result') i++
  list.splice(i, 0, ...blocks)
  return list
}

/**
 * `body` with its mid-conversation system messages taken out of `messages`, each one's text in
 * the user turn beside it, where it stood: at the end of the user turn right before it (Claude
 * Code writes one after the turn it follows, in the same request: its date after the first turn,
 * `# Environment` after the first tool result, agent types after the last user turn), else at the
 * start of the user turn right after it (after that turn's tool results), each text block as a
 * `<system-reminder>` block, cache marks as they came. A system message with no user turn beside
 * it (between two assistant turns) goes at the END of the top-level `system` (a string becomes its
 * one text block first), as all of them went before. The turns before a system message are the
 * bytes they were on the request before it, so a server's prefix cache holds from one turn to the
 * next. Every other byte of the body is as it came (it is Claude Code's `JSON.stringify` output,
 * which `JSON.stringify` writes again the same). What the other blocks say
 * (`mid-conversation-tool-changes-2026-07-01`, as the decoder reads them):
 * - a `tool_addition` of a `tool_reference`: the named tool of `tools` loses its `defer_loading`
 *   (where it stays: a server that shows every tool, as these do, renders the same prompt; one
 *   that hides deferred tools shows it from then on; for a model that is not Claude's the gateway
 *   then loads the deferred tools itself, after this: ./tool-search.ts);
 * - a `tool_addition` of a `tool_definition`: the tool joins the end of `tools` (unless a tool of
 *   its name is there, which is then no longer deferred);
 * - a `tool_removal`: `tools` stays as it was (the cache prefix) and a line tells the model the
 *   tool is gone;
 * - any other block: a line that says it was left out (a 400 here would have Claude Code drop
 *   every system message, see above);
 * - a cache mark on such a block goes to the message's last text, where it has one;
 * - `output_config.effort` (Claude Code's per-turn effort statement, `{"content":[],
 *   "output_config":{…}}`, which holds from there on): the last one becomes the request's
 *   `output_config.effort` when the request has an `output_config` (Claude Code sends none to a
 *   model that takes no effort, and a field the server does not know may be refused).
 * The body as it came when it is not JSON or holds no system message.
 */
export function withSystemTurnsPlaced(body: Buffer): Buffer {
  if (body.indexOf(SYSTEM_ROLE) < 0) return body
  let json: unknown
  try {
    json = parseJsonBytes(body)
  } catch {
    return body
  }
  if (!isObj(json) || !Array.isArray(json.messages)) return body
  if (!json.messages.some((m) => isObj(m) && m.role === 'system')) return body
  const tools = Array.isArray(json.tools) ? (json.tools as unknown[]) : undefined
  const toolAt = (name: string): number => (tools ? tools.findIndex((t) => isObj(t) && t.name === name) : -1)
  /** The tool at `i` without its `defer_loading` (its other keys in their order). */
  const load = (i: number): void => {
    const tool = tools![i] as Json
    if (!('defer_loading' in tool)) return
    const {defer_loading: _, ...rest} = tool
    tools![i] = rest
  }
  const messages = json.messages as unknown[]
  const hoisted: Json[] = []
  const kept: unknown[] = []
  /** The texts of system messages with no user turn right before them, for the next user turn. */
  let pending: Json[] = []
  let effort: string | undefined
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]
    if (!isObj(m) || m.role !== 'system') {
      if (pending.length && isObj(m) && m.role === 'user') {
        kept.push({...m, content: withBlocks(m.content, pending.map(reminder), 'start')})
        pending = []
        continue
      }
      // (an assistant turn next: no user turn beside them, the system prompt's)
      hoisted.push(...pending)
      pending = []
      kept.push(m)
      continue
    }
    if (isObj(m.output_config) && typeof m.output_config.effort === 'string') effort = m.output_config.effort
    const texts: Json[] = []
    if (typeof m.content === 'string') {
      if (m.content !== '') texts.push({type: 'text', text: m.content})
    } else {
      let mark: unknown
      for (const raw of Array.isArray(m.content) ? m.content : []) {
        const b = isObj(raw) ? raw : {}
        if (b.type === 'text') {
          texts.push(b)
          continue
        }
        if (b.cache_control !== undefined) mark = b.cache_control
        const tool = isObj(b.tool) ? b.tool : {}
        const name = typeof tool.name === 'string' ? tool.name : undefined
        if (b.type === 'tool_addition' && tool.type === 'tool_reference' && name !== undefined) {
          const at = toolAt(name)
          if (at >= 0) load(at)
        } else if (
          b.type === 'tool_addition' &&
          tool.type === 'tool_definition' &&
          isObj(tool.definition) &&
          typeof tool.definition.name === 'string'
        ) {
          const at = toolAt(tool.definition.name)
          if (at >= 0) load(at)
          else if (tools) tools.push(tool.definition)
          else json.tools = [tool.definition]
        } else if (b.type === 'tool_removal' && name !== undefined)
          texts.push({type: 'text', text: toolRemovalText(name)})
        else texts.push(leftOutLine(b.type))
      }
      const last = texts.at(-1)
      if (mark !== undefined && last && last.cache_control === undefined)
        texts[texts.length - 1] = {...last, cache_control: mark}
    }
    if (!texts.length) continue
    const before = kept.at(-1)
    if (!pending.length && isObj(before) && before.role === 'user')
      kept[kept.length - 1] = {...before, content: withBlocks(before.content, texts.map(reminder), 'end')}
    else pending.push(...texts)
  }
  // (after the last turn, with no user turn before: the system prompt's)
  hoisted.push(...pending)
  json.messages = kept
  if (hoisted.length) {
    const system = json.system
    json.system =
      typeof system === 'string'
        ? system === ''
          ? hoisted
          : [{type: 'text', text: system}, ...hoisted]
        : Array.isArray(system)
          ? [...(system as unknown[]), ...hoisted]
          : hoisted
  }
  if (effort !== undefined && isObj(json.output_config)) json.output_config.effort = effort
  return Buffer.from(JSON.stringify(json))
}
