/**
 * Shared pieces of the simulated vendor upstreams (Responses, Messages, Gemini): deterministic
 * replies and usage, credential checks, ids.
 *
 * Usage is a pure function of the request so tests can predict it to the token:
 * - `prompt`   = simTokens(JSON of the prompt-bearing fields: system/instructions, messages/input/contents, tools)
 * - `cacheRead` = floor(prompt / 4), `cacheCreation` = floor(prompt / 8) (Messages, and OpenAI's
 *   GPT-5.6 on, which report it)
 * - `reasoning` = simTokens(thinking text) when the request asks for reasoning/thinking, else 0
 * - `output`   = simTokens(reply text, or the tool call's JSON arguments)
 */
import {simTokens} from '../sse.js'

export interface SimUsage {
  prompt: number
  cacheRead: number
  cacheCreation: number
  reasoning: number
  output: number
}

/** What the simulated model answers: text, or a call of the first tool. */
export interface SimAnswer {
  text: string
  thinking?: string
  tool?: {name: string; args: Record<string, unknown>}
  /** Further calls in the same answer (quirk `parallel-tools`). */
  moreTools?: Array<{name: string; args: Record<string, unknown>}>
  /** A web search the vendor ran on its side before `text` (web-search.ts). */
  search?: SimSearch
  /** The turn paused after the search, without text (Messages `pause_turn`, quirk `pause-turn`). */
  paused?: boolean
  usage: SimUsage
}

/** A server-side web search: the query the model chose and the results it read. */
export interface SimSearch {
  query: string
  results: Array<{url: string; title: string}>
}

let counter = 0
/** A short unique id with a vendor prefix (`msg_sim0001a2b3`). */
export function simId(prefix: string): string {
  counter++
  return `${prefix}${counter.toString(36).padStart(4, '0')}${Math.random().toString(36).slice(2, 8)}`
}

/** True when the user's last text asks for a tool, e.g. "please use a tool" / "call tool". */
export function wantsTool(lastUserText: string): boolean {
  return /\b(use|call)\s+(a\s+|the\s+)?tools?\b/i.test(lastUserText)
}

/**
 * The words of a request for an answer in text only, as each agent writes its compaction prompt
 * (the tools are often still offered, so that the request shares the session's cached prefix):
 * - Claude Code 2.1.332's `/compact`: "CRITICAL: Respond with TEXT ONLY. Do NOT call any tools."
 * - Qwen Code 0.24.4's compression sharing the cache: "Do not call tools; tool execution is
 *   disabled for this request. First, reason in your <analysis> block. Then, produce the
 *   <state_snapshot> XML."
 * - Codex 0.171: "You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary…"
 * - Gemini CLI 0.61.0: "First, reason in your scratchpad. Then, generate the updated
 *   <state_snapshot>.", then "Critically evaluate the <state_snapshot> you just generated."
 * - OpenCode 1.18.33: "Create a new anchored summary from the conversation history…", or with a
 *   summary before it "Construct a new summary that combines both."
 */
const TEXT_ONLY_WORDS = [
  /\brespond with text only\b/i,
  /\bdo not (?:call|use) (?:any )?tools\b/i,
  /\bcontext checkpoint compaction\b/i,
  /\b(?:generate|produce) the (?:updated )?<state_snapshot>/i,
  /\bcritically evaluate the <state_snapshot>/i,
  /\bcreate a new anchored summary\b/i,
  /\bconstruct a new summary that combines both\b/i,
]

/**
 * True when the user's last words ask for an answer in text, not a tool call (an agent's
 * compaction prompt, {@link TEXT_ONLY_WORDS}): a model follows them, so every family of the sim
 * answers such a request in text unless the client's tool choice forces a tool.
 */
export function textAsked(lastUserText: string): boolean {
  return TEXT_ONLY_WORDS.some((words) => words.test(lastUserText))
}

/**
 * The user's words without an agent's text-only words ({@link TEXT_ONLY_WORDS}), for the answer to
 * quote: a compaction summary that quoted them would sit in every later request of the session,
 * and each would read as one more request for text only (no tool called again).
 */
export function withoutTextOnlyWords(text: string): string {
  return TEXT_ONLY_WORDS.reduce((out, words) => out.replace(new RegExp(words.source, 'gi'), ''), text)
}

/** True for a schema whose one property is the string `input` (a Responses custom tool elsewhere). */
export function inputOnly(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object') return false
  const properties = (schema as Record<string, unknown>).properties
  if (!properties || typeof properties !== 'object') return false
  const keys = Object.keys(properties)
  const input = (properties as Record<string, {type?: unknown} | undefined>).input
  return keys.length === 1 && typeof input?.type === 'string' && input.type.toLowerCase() === 'string'
}

/** The deterministic answer for a request. */
export function simAnswer(options: {
  promptParts: unknown
  lastUserText: string
  reasoning: boolean
  toolName?: string
  forceTool?: boolean
  /**
   * The schema of a tool the client forced by name: the call's arguments fill it in, as a model
   * does when it must call that tool (otherwise they are `{query}`, the user's words).
   */
  forcedSchema?: unknown
  /** The call's arguments, as given (a tool the user's words picked: quirks.ts `pickedTool`). */
  toolArgs?: Record<string, unknown>
  /**
   * The schema of a tool the user's words named (quirks.ts `pickedTool`, no arguments of its own):
   * the call's arguments are {@link namedArgs}, as a model writes them that means to call it.
   */
  namedSchema?: unknown
  /**
   * The tool takes one string, `input` (a Responses custom tool as the gateway sends it elsewhere,
   * {@link inputOnly}): the call's arguments are `{input}`, the user's words, as a model writes them.
   */
  inputArg?: boolean
  messagesCache?: boolean
  jsonSchema?: unknown
  /** The tool result the request ends with: the answer quotes it, so a tool loop ends. */
  toolResult?: string
}): SimAnswer {
  const prompt = simTokens(JSON.stringify(options.promptParts ?? ''))
  const snippet = withoutTextOnlyWords(options.lastUserText).replace(/\s+/g, ' ').trim().slice(0, 60)
  const thinking = options.reasoning ? `The user wrote "${snippet}". A short answer will do.` : undefined
  const reasoning = thinking ? simTokens(thinking) : 0
  const usageBase = {
    prompt,
    cacheRead: Math.floor(prompt / 4),
    cacheCreation: options.messagesCache ? Math.floor(prompt / 8) : 0,
    reasoning,
  }
  if (options.toolName && (options.forceTool || wantsTool(options.lastUserText))) {
    const args =
      options.toolArgs ??
      (options.namedSchema !== undefined
        ? namedArgs(options.namedSchema, options.lastUserText)
        : undefined) ??
      (options.forcedSchema !== undefined
        ? (instanceOf(options.forcedSchema) as Record<string, unknown>)
        : options.inputArg
          ? {input: snippet || 'sim'}
          : {query: snippet || 'sim'})
    return {
      text: '',
      thinking,
      tool: {name: options.toolName, args},
      usage: {...usageBase, output: simTokens(JSON.stringify(args))},
    }
  }
  const text =
    options.toolResult !== undefined
      ? `The tool answered: ${options.toolResult.slice(0, 200)}`
      : options.jsonSchema === undefined
        ? `PONG from sim: ${snippet || 'hello'}`
        : JSON.stringify(instanceOf(options.jsonSchema))
  return {text, thinking, usage: {...usageBase, output: simTokens(text)}}
}

/** Splits text into a few stream deltas (word groups), never losing a character. */
export function deltas(text: string, parts = 3): string[] {
  if (text.length === 0) return []
  const size = Math.max(1, Math.ceil(text.length / parts))
  const out: string[] = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

/**
 * The arguments a model writes for a tool it means to call (one the user's words named: the
 * `named-tool` quirk), read from the tool's schema: its required properties (every property when
 * none is listed); an enum's first value; a value of its type for any other non-string; for a
 * string, `words` (without a `tool:NAME`, which tells the model which tool, and is no input of it;
 * 60 characters at most),
 * or, for a property that names or identifies something (`task_name`, `agent_id`, `id`), those
 * words as an identifier: lowercase letters, digits and underscores, which such a field takes
 * (Codex's `spawn_agent` refuses any other task name; its schema says so only in prose).
 */
export function namedArgs(schema: unknown, words: string): Record<string, unknown> {
  const s = (schema && typeof schema === 'object' ? schema : {}) as Record<string, unknown>
  const properties = (s.properties && typeof s.properties === 'object' ? s.properties : {}) as Record<
    string,
    unknown
  >
  const required = Array.isArray(s.required) ? s.required.filter((k) => k in properties) : []
  const text =
    words
      .replace(/\btool:[\w.:-]*\w/g, ' ')
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 60)
      .trim() || 'sim'
  const args: Record<string, unknown> = {}
  for (const key of required.length > 0 ? required : Object.keys(properties)) {
    const property = (properties[key] ?? {}) as Record<string, unknown>
    const type = String(Array.isArray(property.type) ? property.type[0] : (property.type ?? 'string'))
    if (Array.isArray(property.enum) && property.enum.length > 0) args[key] = property.enum[0]
    else if (type.toLowerCase() !== 'string') args[key] = instanceOf(property)
    else if (/(?:^|_)(?:name|id)$/i.test(key))
      args[key] =
        text
          .toLowerCase()
          .replace(/[^a-z0-9]+/g, '_')
          .replace(/^_+|_+$/g, '')
          .slice(0, 24)
          .replace(/_+$/, '') || 'sim'
    else args[key] = text
  }
  return args
}

/** A minimal JSON value fitting a JSON Schema (or Gemini's OpenAPI-style schema). */
export function instanceOf(schema: unknown): unknown {
  if (!schema || typeof schema !== 'object') return {}
  const s = schema as Record<string, unknown>
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0]
  const type = String(Array.isArray(s.type) ? s.type[0] : (s.type ?? 'object')).toLowerCase()
  switch (type) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, unknown>
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, instanceOf(v)]))
    }
    case 'array':
      return []
    case 'integer':
    case 'number':
      return typeof s.minimum === 'number' ? Math.max(s.minimum, 1) : 1
    case 'boolean':
      return false
    case 'null':
      return null
    default:
      return 'sim'
  }
}

/** Text of a content value in any vendor's shape (string, parts array, blocks). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content))
    return content
      .map((part) => {
        if (typeof part === 'string') return part
        const p = part as Record<string, unknown>
        return typeof p.text === 'string' ? p.text : ''
      })
      .filter(Boolean)
      .join('\n')
  return ''
}

/**
 * The last non-empty text part of a content value that is no `<system-reminder>` block: the prompt
 * itself when an agent puts context blocks before it in the same message (Claude Code's
 * `<system-reminder>`, Gemini CLI's `<session_context>`), or after it (a system message Claude Code
 * sent mid-conversation, placed by the gateway as a `<system-reminder>` block where it stood:
 * ../../daemon/router/system-turns.ts). A message of reminders alone gives its last.
 */
export function lastTextOf(content: unknown): string {
  if (!Array.isArray(content)) return textOf(content)
  let reminder = ''
  for (let i = content.length - 1; i >= 0; i--) {
    const text = textOf([content[i]])
    if (!text.trim()) continue
    if (!text.trimStart().startsWith('<system-reminder>')) return text
    reminder ||= text
  }
  return reminder
}

/** The bearer token of an `Authorization` header, if any. */
export function bearer(headers: Record<string, string | string[] | undefined>): string | undefined {
  const auth = headers.authorization
  const value = Array.isArray(auth) ? auth[0] : auth
  const token = /^Bearer\s+(.+)$/i.exec(value ?? '')?.[1]?.trim()
  return token || undefined
}

/** First value of a header. */
export function header(
  headers: Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  const value = headers[name]
  return (Array.isArray(value) ? value[0] : value)?.trim() || undefined
}

/** The text of a tool result in any vendor's shape (string, text blocks, or a JSON value). */
export function toolResultText(value: unknown): string {
  if (typeof value === 'string') return value
  if (Array.isArray(value)) return textOf(value)
  return value === undefined ? '' : JSON.stringify(value)
}
