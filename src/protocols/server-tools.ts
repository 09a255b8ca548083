/**
 * Anthropic's server tools in a Messages body passed through (Claude Code on an
 * Anthropic-compatible server) to an upstream that refuses one by its tag: Claude Code's advisor
 * (`{"type": "advisor_20260301", "name": "advisor", …}`, with an advisor model set) on a host
 * without it, "tools.2: Input tag 'advisor_20260301' found using 'type' does not match any of the
 * expected tags" (sifxprime/krouter PR #16: about a fifth of one fleet's calls, where the
 * `advisor-tool-2026-03-01` beta did not reach Anthropic; gwctl learns such a beta away,
 * adaptations.ts `betaRefusal`, and the tool is refused next). adaptations.ts learns the type per
 * provider and model; the body goes without the tool from then on, and without its records in the
 * history, which such a host refuses too (what they said as text: the advice, another server
 * tool's results).
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
 * `body` without the tools of the `refused` types it could go without ({@link
 * optionalServerTools}: one forced or offered alone goes as it came, and so do its records), and
 * without the records of the refused types in its history, whether it still offers the tool or not
 * (Claude Code after `/advisor` off: the host refuses the blocks as it refused the tool, review77
 * #4). See {@link withoutCalls}. In place; true when anything changed.
 */
export function withoutServerTools(body: Body, refused: readonly string[]): boolean {
  const optional = optionalServerTools(body) ?? []
  const kept = new Set<string>()
  const names = new Set<string>()
  // a server tool's name is its type less the date (`advisor_20260301`: `advisor`)
  for (const type of refused) names.add(type.replace(/_\d{8}$/, ''))
  for (const [name, calls] of CALLED_AS) if (names.has(name)) for (const c of calls) names.add(c)
  let changed = false
  if (Array.isArray(body.tools)) {
    const tools = body.tools.filter((t) => {
      const drop =
        isObj(t) && typeof t.type === 'string' && refused.includes(t.type) && optional.includes(t.type)
      if (isObj(t) && typeof t.name === 'string') (drop ? names : kept).add(t.name)
      return !drop
    })
    if (tools.length !== body.tools.length) {
      body.tools = tools
      changed = true
    }
  }
  for (const name of kept) names.delete(name)
  if (names.size === 0 || !Array.isArray(body.messages) || !callsAny(body.messages, names)) return changed
  body.messages = withoutCalls(body.messages, names)
  return true
}

/** Server tools whose calls go by other names than the tool's (code execution's, 2025-08-25). */
const CALLED_AS: ReadonlyArray<[string, readonly string[]]> = [
  ['code_execution', ['bash_code_execution', 'text_editor_code_execution']],
]

const callsAny = (messages: unknown[], names: ReadonlySet<string>): boolean =>
  messages.some(
    (m) =>
      isObj(m) &&
      Array.isArray(m.content) &&
      m.content.some(
        (b) => isObj(b) && b.type === 'server_tool_use' && typeof b.name === 'string' && names.has(b.name),
      ),
  )

/** The blocks a cache mark may go on (Anthropic refuses one on `thinking`, `redacted_thinking`). */
const MARKABLE = new Set(['text', 'tool_use', 'tool_result', 'image'])

/** What a turn left empty by the advisor's records dropped holds instead (review77 #1). */
export const CONSULTED = '(advisor consulted)'

/** What a turn left empty by the records of the server tools `names` dropped holds instead: {@link CONSULTED} for the advisor's. */
function emptiedText(names: ReadonlySet<string>): string {
  if (names.size === 0 || (names.size === 1 && names.has('advisor'))) return CONSULTED
  return `(server tool${names.size > 1 ? 's' : ''} used: ${[...names].join(', ')})`
}

/** The fields of a server tool's result read out as text, in this order (any other is a server's own: an encrypted page, a file id). */
const READABLE = ['title', 'url', 'page_age', 'stdout', 'stderr', 'return_code', 'path', 'file_type']

/**
 * What a server tool's result block says, as text, or undefined when it says nothing a model can
 * read: the advisor's advice (messages.ts `advisorAdviceText`); another tool's result (a web
 * search's titles and addresses, a fetched page's text, code execution's output) under the call's
 * name and input (`Result of the web_search server tool {"query":"…"}:`). A failed call (a
 * `…_error` result) or a redacted one is left out, as the advisor's: the model went on without it
 * then too.
 */
function resultText(result: Block, call: Block | undefined): string | undefined {
  if (result.type === 'advisor_tool_result') return advisorAdviceText(result)
  const said = readable(result.content)
  if (said === undefined) return undefined
  const name = typeof call?.name === 'string' ? call.name : String(result.type).replace(/_tool_result$/, '')
  const input =
    isObj(call?.input) && Object.keys(call.input).length > 0 ? ` ${JSON.stringify(call.input)}` : ''
  return `Result of the ${name} server tool${input}:\n${said}`
}

/** The text a result's content holds ({@link READABLE}, a text's, a text document's, a viewed file's, an edit's lines), or undefined. */
function readable(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value
  if (Array.isArray(value)) {
    const parts = value.map(readable).filter((p) => p !== undefined)
    return parts.length > 0 ? parts.join('\n') : undefined
  }
  if (!isObj(value) || (typeof value.type === 'string' && value.type.endsWith('_error'))) return undefined
  const lines: string[] = []
  for (const key of READABLE) {
    const v = value[key]
    if ((typeof v === 'string' && v !== '') || typeof v === 'number') lines.push(`${key}: ${v}`)
  }
  if (typeof value.text === 'string' && value.text !== '') lines.push(value.text)
  // (a fetched page: a document whose source is text)
  const source = value.source
  if (isObj(source) && source.type === 'text' && typeof source.data === 'string') lines.push(source.data)
  // (a result's blocks, or text: a text editor's view of a file, `content` its text)
  const inner = readable(value.content)
  if (inner !== undefined) lines.push(inner)
  // (a text editor's edit: `lines`, its diff's lines)
  const edit = value.lines
  if (Array.isArray(edit) && edit.length > 0 && edit.every((l) => typeof l === 'string'))
    lines.push(edit.join('\n'))
  return lines.length > 0 ? lines.join('\n') : undefined
}

/**
 * `messages` without each `server_tool_use` that called one of `names` and the result that
 * answered it (by its id), what the result said as a text block in its place ({@link resultText}:
 * the advisor's advice, another server tool's results). A cache mark on a block left out goes on
 * the nearest block before it that may carry one, else on the previous message's last such block
 * (never on a thinking block, which Anthropic refuses one on: review77 #2). A message left empty
 * keeps its place with a short text naming the tools ({@link emptiedText}: {@link CONSULTED} for
 * Claude Code's turn of an advisor call and a redacted or failed result): without it two user
 * turns would sit side by side, which a host that needs the roles to alternate refuses (review77
 * #1); the last message left empty goes (a prefill of nothing).
 */
function withoutCalls(messages: unknown[], names: ReadonlySet<string>): unknown[] {
  const calls = new Map<string, Block>()
  const out: unknown[] = []
  for (let n = 0; n < messages.length; n++) {
    const m = messages[n]
    if (!isObj(m) || !Array.isArray(m.content)) {
      out.push(m)
      continue
    }
    let content: unknown[] | undefined
    let mark: unknown
    const used = new Set<string>()
    for (let i = 0; i < m.content.length; i++) {
      const b: unknown = m.content[i]
      const call = isObj(b) && b.type === 'server_tool_use' && typeof b.name === 'string' && names.has(b.name)
      const result = isObj(b) && typeof b.tool_use_id === 'string' && calls.has(b.tool_use_id)
      if (!call && !result) {
        content?.push(b)
        continue
      }
      content ??= m.content.slice(0, i)
      const block = b as Block
      if (call) {
        if (typeof block.id === 'string') calls.set(block.id, block)
        used.add(block.name as string)
      }
      const said = result ? resultText(block, calls.get(block.tool_use_id as string)) : undefined
      if (said !== undefined) content.push({type: 'text', text: said, ...cacheMark(block)})
      else if (block.cache_control !== undefined && !markLast(content, block.cache_control))
        mark ??= block.cache_control
    }
    if (content === undefined) {
      out.push(m)
      continue
    }
    const last = n === messages.length - 1
    if (content.length === 0 && !last) {
      content.push({
        type: 'text',
        text: emptiedText(used),
        ...(mark === undefined ? {} : {cache_control: mark}),
      })
      mark = undefined
    }
    if (mark !== undefined) {
      // no block before it in this message: the previous message's last one
      const before = out.at(-1)
      if (isObj(before)) {
        const blocks =
          typeof before.content === 'string' ? [{type: 'text', text: before.content}] : before.content
        if (Array.isArray(blocks)) {
          const copy = [...blocks]
          if (markLast(copy, mark)) out[out.length - 1] = {...before, content: copy}
        }
      }
    }
    if (content.length > 0) out.push({...m, content})
  }
  return out
}

/**
 * Puts `mark` on the last block of `blocks` that may carry one (in place, the block copied); true
 * when there is one (one already marked keeps its own).
 */
function markLast(blocks: unknown[], mark: unknown): boolean {
  for (let i = blocks.length - 1; i >= 0; i--) {
    const b = blocks[i]
    if (!isObj(b) || typeof b.type !== 'string' || !MARKABLE.has(b.type)) continue
    if (b.cache_control === undefined) blocks[i] = {...b, cache_control: mark}
    return true
  }
  return false
}

const cacheMark = (block: Block): Block =>
  block.cache_control === undefined ? {} : {cache_control: block.cache_control}
