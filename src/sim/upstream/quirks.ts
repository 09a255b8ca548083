/**
 * Quirks on demand: wire behaviours of real (or OpenAI-compatible) servers that broke peers'
 * protocol translation, which the simulator produces only when a request asks for them.
 *
 * Selected by a header `x-sim-quirk: q1,q2` or by `+q` suffixes of the model name
 * (`sim-mini+parallel-tools+cut-args`); the suffixes are stripped before any other use of the
 * name, so the answer's `model` echoes the bare name. A quirk that does not apply to a family is
 * ignored; an unknown name is refused (a typo would otherwise test nothing). See
 * docs/SIMULATOR.md for what each one imitates.
 */
import {INPUT_ITEM_REQUIRES, inputItemType} from '../../protocols/responses-input.js'
import type {SimAnswer} from './common.js'
import {functionCallSignature, SKIP_THOUGHT_SIGNATURE, verifyEncryptedReasoning} from './turn-checks.js'

export const SIM_QUIRKS = [
  'parallel-tools',
  'cut-args',
  'empty-args',
  'reasoning-content',
  'no-finish-reason',
  'usage-last',
  'strict-fields',
  'no-terminal',
  'cache-1h',
  // OpenAI's prompt cache: a request's cached tokens are those of the longest prefix an earlier
  // request sent (the default is a quarter of the prompt, whatever it holds)
  'prefix-cache',
  'obfuscation',
  'no-reasoning',
  'o-series',
  'max-tokens-8192',
  'deepseek-json',
  'no-json-mode',
  'no-minimal-effort',
  'thinking-only',
  'no-thinking-level',
  // Gemini 3 Pro, Flash from 3.7 on: a thinkingLevel MINIMAL refused (by name too, without it)
  'no-minimal-level',
  // Gemma 4 on the Gemini API: any thinkingBudget refused, 0 included
  'no-thinking-budget',
  // Gemma 3 (and Gemini 2.0) on the Gemini API: any thinkingConfig refused
  'no-thinking',
  // Gemma 3 on the Gemini API: any systemInstruction refused
  'no-system-instruction',
  'max-output-32000',
  'max-output-8192',
  'mistral-extra',
  // NVIDIA NIM's 422 for sampling fields it does not take, in pydantic v1's text (Kilo's
  // penalties: Kilo-Org/kilocode #9652)
  'nim-extra',
  'mistral-ids',
  'mistral-order',
  'max-id-40',
  'reasoning-not-back',
  'no-usage',
  // Kimi (Moonshot) and the servers in front of it
  'kimi-temperature',
  // Kimi K3 (NVIDIA NIM, Fireworks, vLLM's and SGLang's parsers): a tool call's id is its name and
  // its position in the answer, `Bash:0`, the same on every turn
  'kimi-ids',
  'reasoning-content-required',
  // Kimi K3 (by its name `kimi-k3…` too): it always reasons, `thinking.type: disabled`, an effort
  // but low, high and max, and a forced tool_choice refused
  'kimi-always-thinks',
  // Kimi's Anthropic endpoints for K2.7 Code and kimi-for-coding: thinking only on (`enabled`),
  // and no forced tool_choice
  'kimi-enabled-only',
  'usage-in-choice',
  'object-args',
  'think-tags',
  'think-open-in-prompt',
  'mistral-thinking',
  'read-path',
  'tool-search',
  'named-tool',
  'text-only',
  'no-mmproj',
  'context-8k',
  'context-4k',
  'context-128k',
  // a prompt past the window refused in other vendors' words: DashScope's, LM Studio's, MiniMax's,
  // vLLM's engine's (a 400) and Xinference's (the same words as a 500)
  'dashscope-context',
  'cerebras-context',
  'lmstudio-context',
  'lmstudio-mlx-context',
  'lmstudio-fit-context',
  'minimax-context',
  'vllm-context',
  'xinference-context',
  'adaptive-only',
  'no-adaptive',
  'pause-turn',
  'thinks-by-default',
  'no-disabled',
  'between-tools',
  'no-forced-tools',
  'no-prefill',
  'prefix-binding',
  // DeepSeek's refusal of two user or two assistant messages in a row
  'successive-roles',
  // Gemini 3 through a chat completions server: OpenRouter's and Google's own thought signatures
  'reasoning-details',
  'extra-content',
  // Gemini's schema subset behind a chat server or a relay; Vertex AI's refusal of call ids
  'gemini-schema',
  'vertex-no-ids',
  // a Gemini 3 behind a name that does not say so (an alias, a relay's): a function result's
  // media taken only inside its response
  'media-in-responses',
  // a Gemini 3 behind a name that does not say so: a model turn's first call without a thought
  // signature refused, as a `gemini-3*` model refuses it
  'signed-calls',
  // a forced tool_choice refused: Z.AI's 400 (GLM), OpenRouter's 404
  'tool-choice-auto-only',
  'tool-choice-404',
  // DeepSeek's Anthropic endpoint: an effort beside thinking turned off refused
  'deepseek-effort-off',
  // thinking and efforts refused: Ollama's models without thinking (its current and older words),
  // OpenAI's gpt-5.6 and gpt-5.4 beside function tools, xAI's camelCase refusal, DashScope's Qwen3
  'ollama-no-think',
  'ollama-think-value',
  'tools-effort-none',
  'tools-no-effort',
  'xai-params',
  'dashscope-thinking',
  // an effort value refused with those the model takes, in a server's own words: Ollama's (0.32:
  // Codex's xhigh and minimal, chat and Responses), SGLang's pydantic literal_error (chat); and the
  // effort itself refused on Responses, as OpenAI does for gpt-4o-mini (openai/codex #36735)
  'ollama-effort',
  'pydantic-effort',
  'no-effort-model',
  // Z.AI's GLM-4.6 on: a tool call's arguments held and sent whole at the end of the stream,
  // unless the request asks `tool_stream: true` (then streamed in pieces, the call's head beside
  // the last reasoning)
  'glm-tool-stream',
  // a model that always thinks: Z.AI's GLM-5.3 (1210: no off switch, efforts low, high, max only)
  'zai-always-thinks',
  // a thinking form refused by an Anthropic-compatible server: MiniMax-M3's refusal of `enabled`,
  // a relay's zod schema that knows only `enabled` and `disabled` (Claude Code's adaptive refused)
  'minimax-thinking',
  'enum-thinking',
  // the same from a pydantic schema: `adaptive` as a member it does not have; and a server that
  // takes `output_config.effort` low, medium and high only (Claude Code's xhigh and max refused)
  'pydantic-thinking',
  'effort-levels',
  // vLLM, SGLang, llama.cpp: a model that thinks by default, turned off only by its chat
  // template's arguments (`chat_template_kwargs`)
  'template-kwargs',
  // DashScope's and MiniMax's refusal of a history tool call whose arguments are not JSON
  'dashscope-args',
  'minimax-args',
  // several system messages refused: MiniMax's 2013, Qwen3.5's chat template (llama.cpp's 400)
  'minimax-system',
  'system-first',
  'ollama-system-first',
  // a 400 as OpenRouter relays a provider's: "Provider returned error", the body in metadata.raw
  'openrouter-errors',
  // LM Studio: a streamed request's refusal as a 200 stream of one `event: error`
  'stream-errors',
  // a Responses server that takes function tools only (vLLM, llama.cpp): Codex's namespaces,
  // custom tools and `additional_tools` item refused
  'plain-tools',
  // more tools than the model takes: OpenAI's and Kimi's 128, Gemini's 512 function declarations
  'tool-cap-128',
  'tool-cap-512',
  // Codex's "Responses Lite" header honoured: Azure OpenAI's refusal of a namespace in the
  // `additional_tools` item, OpenAI's of a model that is not a Lite one
  'lite-azure',
  'not-lite',
  // Azure OpenAI: no item kept of a request sent with `store: false`, so a later request that
  // names a reasoning item by its id is refused
  'azure-store',
  // Azure OpenAI: a namespace tool's description must be a string of one character or more
  // (Codex's `functions` namespace goes with "")
  'azure-namespace-description',
  // Gemini 2.0 and 2.5: function declarations beside a JSON response mime type refused
  'no-json-tools',
  // Gemini's thought-only turn: thoughts, no candidate token, and no `finishReason` (proto3 drops
  // FINISH_REASON_UNSPECIFIED: router-for-me/CLIProxyAPI #5226)
  'thoughts-no-finish',
  // Gemini's empty STOP right after a function response (no part, or a thought only), once: the
  // same request sent again gets a whole answer (AstrBot #6735, google/adk-js #344)
  'empty-stop',
  'empty-stop-thought',
  // DeepSeek V4's chat stream: a call's head at the index of the call before it, its arguments at
  // its own index
  'shifted-index',
  // DeepSeek's `/v1/responses`: a tool call and its output paired by position, any item between
  // them refused
  'adjacent-outputs',
  // Qwen3-Coder and GLM under vLLM, SGLang and llama.cpp tool parsers: a call's arguments that are
  // no JSON (a Python dict's single quotes, a trailing comma, a ```json fence)
  'single-quote-args',
  'trailing-comma-args',
  'fenced-args',
  // the same parsers: Python's literals (`True`, `False`, `None`) in a call's arguments
  'python-literal-args',
  // Qwen3-Coder's own `<parameter=NAME>` format passed on as a call's arguments (LM Studio 0.3.29)
  'parameter-args',
  // a free-form tool's input (a function of one string `input`: Codex's apply_patch elsewhere)
  // written raw as the call's arguments, as a chat model told "do not wrap the patch in JSON" does
  'raw-input-args',
  // DeepSeek's Responses API in thinking mode: reasoning as `reasoning_text` content, wanted back
  // on a tool call's turn
  'reasoning-text',
  // Gemini's OpenAI-compatible endpoint: each streamed tool call whole in one delta, without its
  // `index` (AstrBotDevs/AstrBot #6661)
  'no-tool-index',
  // GLM, Kimi, NVIDIA NIM, vLLM's gpt-oss: a streamed tool call opened (its index, name and type)
  // without its `id` (anomalyco/opencode PR #12585)
  'no-tool-call-id',
  // a chat stream whose deltas after the first carry `"role": ""` (zhipu/glm-5 on an
  // OpenAI-compatible server: anomalyco/opencode #28427)
  'empty-delta-role',
  // a chat stream whose chunks carry `"finish_reason": ""` until the real one (SenseNova, Perplexity,
  // Together, OpenCode Zen's hy3)
  'empty-finish',
  // a chat answer that ends with Z.ai's `sensitive` (its filter), a finish the AI SDK reads as
  // unknown (anomalyco/opencode #49414); `broken-finish`: Z.ai's `network_error` (the answer broke off)
  'vendor-finish',
  'broken-finish',
  // a Responses server that takes Codex's custom tools without a word and answers one as a plain
  // function call, its input wrapped in JSON (MiniMax M3: CLIProxyAPI #5753)
  'custom-as-function',
  // a server that escapes per UTF-16 unit (a JS server, Python's `ensure_ascii`) and streams an
  // emoji's surrogate pair split across two chunks
  'split-surrogate',
  // Ollama's silent cut of a prompt longer than its context (4 096, its default below 24 GiB of
  // VRAM) to half of it and two, reported as the whole input
  'ollama-truncate',
  // encrypted content bound to the account (the key) that made it: another account's reasoning or
  // compaction item refused as ChatGPT's backend refuses it (`code: null`)
  'encrypted-foreign',
  // a strict Responses server (OpenCode Go): a top-level field it does not know refused, Codex
  // 0.155's `access_programs` (lidge-jun/opencodex #4853)
  'strict-responses-fields',
  // a host fronting Claude that validates `anthropic-beta`: values it does not know refused in
  // Anthropic's words, each named (Vertex AI, Azure Foundry, relays), or as Bedrock does, none named
  'strict-betas',
  'bedrock-betas',
  // a strict host fronting Claude (Bedrock, a LiteLLM or Copilot relay): a top-level field of a
  // Messages body it does not know, or a custom tool's member, refused in pydantic's words
  // (Claude Code's `diagnostics`, `speed`, tools' `eager_input_streaming`: 9router #3875)
  'strict-messages-fields',
  // ChatGPT's Codex backend: an input item's `status` refused, "Unknown parameter:
  // 'input[2].status'." (zyycn/codex-proxy-rs #194)
  'strict-input-items',
  // a GPT-5.x reasoning model's chat completions: a maximum below 16 (Claude Code's `max_tokens: 1`
  // probe) refused, "Could not finish the message because max_tokens or model output limit was
  // reached", no floor stated (BerriAI/litellm #35061)
  'output-floor-16',
  // a host without Claude Code's advisor server tool: the `advisor_20260301` tool refused by its
  // tag, in Anthropic's validation words, and so are the advisor's blocks in a history
  // (sifxprime/krouter PR #16)
  'no-advisor',
  // an image inside a tool result refused, the same image in a user turn taken: LM Studio's and
  // Ollama's `/v1/messages`, Zen's `/v1/responses` (./media-in-results.ts)
  'text-tool-results',
  // Anthropic's redacted thinking: a `redacted_thinking` block between two signed thinking blocks,
  // whose `data` must come back as it was, in a `redacted_thinking` block (anthropics/claude-code
  // #63267's words otherwise)
  'redacted-thinking',
] as const

export type SimQuirk = (typeof SIM_QUIRKS)[number]
export type Quirks = ReadonlySet<SimQuirk>

export const NO_QUIRKS: Quirks = new Set()

export interface QuirkSelection {
  /** The model name without `+quirk` suffixes. */
  model: string
  quirks: Quirks
  /** Names that are no quirk (refused by the caller). */
  unknown: string[]
}

/** The quirks a request asks for, from `x-sim-quirk` and the model name's `+` suffixes. */
export function selectQuirks(
  headers: Record<string, string | string[] | undefined>,
  model: unknown,
): QuirkSelection {
  const raw = headers['x-sim-quirk']
  const fromHeader = (Array.isArray(raw) ? raw.join(',') : (raw ?? '')).split(',')
  const [bare, ...suffixes] = typeof model === 'string' ? model.split('+') : ['']
  const quirks = new Set<SimQuirk>()
  const unknown: string[] = []
  for (const name of [...fromHeader, ...suffixes].map((s) => s.trim()).filter(Boolean)) {
    if ((SIM_QUIRKS as readonly string[]).includes(name)) quirks.add(name as SimQuirk)
    else unknown.push(name)
  }
  return {model: typeof model === 'string' ? bare : '', quirks, unknown}
}

const PAD_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/**
 * The `obfuscation` string of a stream's chunk `index` (quirk `obfuscation`): 1 to 24 letters and
 * digits, a different length and text on every chunk, as OpenAI pads each chunk of its streams
 * against length side channels. Derived from `seed` (the answer's id) and the index, so that a
 * test can predict it.
 */
export function obfuscationPad(seed: string, index: number): string {
  let h = 2166136261
  for (let i = 0; i < seed.length; i++) h = Math.imul(h ^ seed.charCodeAt(i), 16777619)
  h = Math.imul(h ^ (index + 1), 16777619) >>> 0
  const length = 1 + (h % 24)
  let pad = ''
  for (let i = 0; i < length; i++) {
    h = Math.imul(h ^ i, 16777619) >>> 0
    pad += PAD_CHARS[h % PAD_CHARS.length]
  }
  return pad
}

/**
 * `think-tags`: an answer's reasoning as the start of its content, `<think>\n…\n</think>\n\n`
 * (MiniMax M2's OpenAI endpoint, a reasoning model under llama.cpp or vLLM without a reasoning
 * parser), as one string (a JSON answer) or in stream pieces that cut both tags (`<thi` `nk>`,
 * `</th` `ink>`).
 */
export function thinkTagPieces(reasoning: readonly string[]): string[] {
  return ['<thi', 'nk>\n', ...reasoning, '\n</th', 'ink>\n\n']
}

/**
 * `think-open-in-prompt`: the content of a model whose chat template opens `<think>` in the prompt
 * (Qwen3's *-Thinking-2507, DeepSeek-R1-0528 under llama.cpp, vLLM or LM Studio without a reasoning
 * parser): the reasoning, then only the closing tag, cut across chunks (`\n</th`, `ink>\n\n`).
 */
export function promptThinkPieces(reasoning: readonly string[]): string[] {
  return [...reasoning, '\n</th', 'ink>\n\n']
}

/** `mistral-thinking`: a Mistral `thinking` content chunk of `text`. */
export const mistralThinking = (text: string, closed?: boolean): Record<string, unknown> => ({
  type: 'thinking',
  thinking: [{type: 'text', text}],
  ...(closed ? {closed: true} : {}),
})

/** The refusal text for unknown quirk names. */
export function unknownQuirkMessage(unknown: string[]): string {
  return `unknown sim quirk ${unknown.map((q) => `"${q}"`).join(', ')} (known: ${SIM_QUIRKS.join(', ')})`
}

/**
 * Tool-call argument text cut mid-token, one piece per chunk: inside every string (key or value)
 * and right after every backslash, so that a piece ends inside an escaped quote (`\` | `"`).
 * Joined, the pieces give `json` back.
 */
export function cutPieces(json: string): string[] {
  const cuts = new Set<number>()
  let start = -1
  for (let i = 0; i < json.length; i++) {
    const c = json[i]
    if (start >= 0) {
      if (c === '\\') {
        cuts.add(i + 1)
        i++
      } else if (c === '"') {
        if (i - start > 2) cuts.add(start + 1 + Math.floor((i - start - 1) / 2))
        start = -1
      }
    } else if (c === '"') start = i
  }
  const at = [0, ...[...cuts].filter((n) => n > 0 && n < json.length).sort((a, b) => a - b), json.length]
  const pieces: string[] = []
  for (let i = 1; i < at.length; i++) if (at[i] > at[i - 1]) pieces.push(json.slice(at[i - 1], at[i]))
  return pieces
}

type Args = Record<string, unknown>
type Call = {name: string; args: Args}

/** Different arguments for the second call of the same tool. */
function variant(args: Args): Args {
  const keys = Object.keys(args)
  if (keys.length === 0) return {call: 2}
  return Object.fromEntries(keys.map((k) => [k, typeof args[k] === 'string' ? `${args[k]} #2` : args[k]]))
}

/** `cut-args` puts an escaped quote into every string value, so a cut can land inside `\"`. */
function quoted(args: Args): Args {
  const keys = Object.keys(args)
  if (!keys.some((k) => typeof args[k] === 'string')) return {...args, query: 'said "sim"'}
  return Object.fromEntries(keys.map((k) => [k, typeof args[k] === 'string' ? `said "${args[k]}"` : args[k]]))
}

/** `split-surrogate` ends every string value with {@link SPLIT_EMOJI}, whose pair a piece cut splits. */
function withEmoji(args: Args): Args {
  const keys = Object.keys(args)
  return Object.fromEntries(
    keys.map((k) => [k, typeof args[k] === 'string' ? `${args[k]} ${SPLIT_EMOJI}` : args[k]]),
  )
}

/**
 * The tool calls of an answer under `parallel-tools` (the first two tools, or the first one twice
 * with different arguments), `cut-args` (string values with escaped quotes) and `split-surrogate`
 * (string values ending with an emoji).
 */
export function quirkCalls(first: Call, second: Call | undefined, quirks: Quirks): Call[] {
  let calls = [first]
  if (quirks.has('parallel-tools')) calls.push(second ?? {name: first.name, args: variant(first.args)})
  if (quirks.has('cut-args')) calls = calls.map((c) => ({...c, args: quoted(c.args)}))
  if (quirks.has('split-surrogate')) calls = calls.map((c) => ({...c, args: withEmoji(c.args)}))
  return calls
}

/**
 * The tool call the user's words pick under `tool-search` (`select:NAME` with a `ToolSearch` tool
 * offered: ToolSearch with that query, as Claude Code's search takes it; `search:QUERY` with a
 * `tool_search` tool offered: Codex's search, `{query}`) or `named-tool` (`tool:NAME` naming an
 * offered tool: that tool, its arguments as usual), for a vendor upstream of the simulator;
 * undefined otherwise. `answered`: the name of the tool whose result the request ends with, where
 * it does: after Codex's `tool_search` (its output loaded the tools), `tool-search` calls the tool
 * `tool:NAME` names once it is offered; under `named-tool`, the result of one tool the words name
 * is followed by a call of the next they name; any other result is answered, never followed by a call.
 */
export function pickedTool(
  names: readonly string[],
  userText: string,
  quirks: Quirks,
  answered?: string,
): {name: string; args?: Record<string, unknown>} | undefined {
  if (answered !== undefined) {
    if (answered === 'tool_search' && quirks.has('tool-search')) {
      const loaded = /\btool:([\w.:-]*\w)/.exec(userText)?.[1]
      return loaded && names.includes(loaded) ? {name: loaded} : undefined
    }
    if (!quirks.has('named-tool')) return undefined
    // `named-tool` with several tools named: the one named after the tool just answered (Codex's
    // spawn_agent, then its wait_agent, so the parent waits for its sub-agent's report), by its
    // own name or `namespace__name`
    const named = [...userText.matchAll(/\btool:([\w.:-]*\w)/g)].map((m) => m[1])
    const at = named.findIndex((n) => n === answered || n.endsWith(`__${answered}`))
    const next = at >= 0 ? named[at + 1] : undefined
    return next && names.includes(next) ? {name: next} : undefined
  }
  const select = quirks.has('tool-search') ? /\bselect:([\w,-]*\w)/.exec(userText)?.[1] : undefined
  if (select && names.includes('ToolSearch')) return {name: 'ToolSearch', args: {query: `select:${select}`}}
  const query = quirks.has('tool-search') ? /\bsearch:([\w,-]*\w)/.exec(userText)?.[1] : undefined
  if (query && names.includes('tool_search')) return {name: 'tool_search', args: {query}}
  const wanted = quirks.has('named-tool') ? /\btool:([\w.:-]*\w)/.exec(userText)?.[1] : undefined
  return wanted && names.includes(wanted) ? {name: wanted} : undefined
}

/** A vendor upstream's answer with the quirks applied to its tool call(s). */
export function quirkAnswer(
  answer: SimAnswer,
  secondTool: string | undefined,
  quirks: Quirks,
  tokens: (text: string) => number,
): SimAnswer {
  if (!answer.tool || (!quirks.has('parallel-tools') && !quirks.has('cut-args'))) return answer
  const second = secondTool ? {name: secondTool, args: answer.tool.args} : undefined
  const [tool, ...moreTools] = quirkCalls(answer.tool, second, quirks)
  const output = tokens([tool, ...moreTools].map((c) => JSON.stringify(c.args)).join(''))
  return {...answer, tool, moreTools, usage: {...answer.usage, output}}
}

/** Argument text as sent: empty under `empty-args`. */
export function argsText(args: Args, quirks: Quirks): string {
  return quirks.has('empty-args') ? '' : JSON.stringify(args)
}

/**
 * A chat call's argument text as a broken tool parser writes it: a Python dict's repr under
 * `single-quote-args`, a comma before the last `}` under `trailing-comma-args`, in a ```json
 * fence under `fenced-args`, Python's `True`, `False` and `None` for JSON's literals under
 * `python-literal-args` (with `single-quote-args` too: the whole repr), Qwen3-Coder's
 * `<parameter=NAME>\nVALUE\n</parameter>\n` for each under `parameter-args`; the one string
 * `input` itself, not JSON, under `raw-input-args`; else as JSON.
 */
export function brokenArgsText(args: unknown, quirks: Quirks): string {
  if (
    quirks.has('raw-input-args') &&
    args &&
    typeof args === 'object' &&
    Object.keys(args).length === 1 &&
    typeof (args as {input?: unknown}).input === 'string'
  )
    return (args as {input: string}).input
  if (quirks.has('parameter-args') && args && typeof args === 'object' && !Array.isArray(args))
    return Object.entries(args)
      .map(([k, v]) => `<parameter=${k}>\n${typeof v === 'string' ? v : JSON.stringify(v)}\n</parameter>\n`)
      .join('')
  const literals = quirks.has('python-literal-args')
  if (quirks.has('single-quote-args')) return pyRepr(args, literals)
  const json = literals ? pyLiterals(JSON.stringify(args)) : JSON.stringify(args)
  if (quirks.has('trailing-comma-args') && json.length > 2 && json.endsWith('}'))
    return json.slice(0, -1) + ', }'
  if (quirks.has('fenced-args')) return '```json\n' + json + '\n```'
  return json
}

/** JSON's `true`, `false` and `null` outside strings written as Python's. */
function pyLiterals(json: string): string {
  return json.replace(
    /("(?:[^"\\]|\\.)*")|true|false|null/g,
    (m, string?: string) => string ?? (m === 'null' ? 'None' : m === 'true' ? 'True' : 'False'),
  )
}

/**
 * Python's repr of a JSON value: single-quoted strings, `, ` and `: ` between members; with
 * `literals`, Python's `True`, `False` and `None`.
 */
function pyRepr(v: unknown, literals = false): string {
  if (typeof v === 'string')
    return `'${JSON.stringify(v).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`
  if (Array.isArray(v)) return `[${v.map((x) => pyRepr(x, literals)).join(', ')}]`
  if (v && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x, literals)}`)
      .join(', ')}}`
  return literals ? pyLiterals(JSON.stringify(v)) : JSON.stringify(v)
}

/** An emoji (U+1F600) whose two UTF-16 units `split-surrogate` streams in two chunks. */
export const SPLIT_EMOJI = '\u{1F600}'

/**
 * `split-surrogate`: streamed text pieces with {@link SPLIT_EMOJI} added at the end, its high
 * surrogate ending one piece and its low surrogate starting the next (as a server that escapes
 * per UTF-16 unit writes them: `"\ud83d"`, then `"\ude00"`). Joined, they are well-formed.
 */
export function splitSurrogatePieces(pieces: readonly string[]): string[] {
  if (pieces.length === 0) return [...pieces]
  return [...pieces.slice(0, -1), `${pieces.at(-1)} ${SPLIT_EMOJI[0]}`, `${SPLIT_EMOJI[1]}.`]
}

/**
 * Argument stream pieces: none under `empty-args`, cut mid-token under `cut-args`; under
 * `split-surrogate`, cut again between the two units of the first surrogate pair.
 */
export function argsPieces(text: string, quirks: Quirks, normal: (text: string) => string[]): string[] {
  if (quirks.has('empty-args') || text === '') return []
  const pieces = quirks.has('cut-args') ? cutPieces(text) : normal(text)
  if (!quirks.has('split-surrogate')) return pieces
  const at = text.indexOf(SPLIT_EMOJI)
  if (at < 0) return pieces
  // the pieces up to the pair's low unit, that one cut there, the rest
  const out: string[] = []
  let end = 0
  for (const piece of pieces) {
    const start = end
    end += piece.length
    if (start <= at && at + 1 < end) out.push(piece.slice(0, at + 1 - start), piece.slice(at + 1 - start))
    else out.push(piece)
  }
  return out
}

/**
 * Top-level chat request fields a strict OpenAI-compatible server knows: PROTOCOLS.md A1 plus
 * what the platform spec accepts (`top_k`, `presence_penalty`, `modalities`, `enable_thinking`,
 * `extra_body`, `provider`).
 */
export const CHAT_FIELDS: readonly string[] = [
  'model',
  'messages',
  'stream',
  'stream_options',
  'max_completion_tokens',
  'max_tokens',
  'temperature',
  'top_p',
  'n',
  'stop',
  'seed',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'reasoning_effort',
  'user',
  'provider',
  'top_k',
  'presence_penalty',
  'modalities',
  'enable_thinking',
  'extra_body',
]

/** The refusal of a strict server for unknown top-level fields, or undefined. */
export function strictFieldsProblem(body: Record<string, unknown>): string | undefined {
  const unknown = Object.keys(body).filter((k) => !CHAT_FIELDS.includes(k))
  return unknown.length > 0 ? `Unrecognized request argument supplied: ${unknown.join(', ')}` : undefined
}

/**
 * {@link strictFieldsProblem}'s refusal as the simulator answers it (a 400 with OpenAI's error
 * object), for a scripted upstream that stands for a strict relay; undefined when every field is
 * one it knows.
 */
export function strictFieldsRefusal(
  body: Record<string, unknown>,
): {status: number; body: {error: Record<string, unknown>}} | undefined {
  const message = strictFieldsProblem(body)
  return message === undefined
    ? undefined
    : {status: 400, body: {error: {message, type: 'invalid_request_error', param: null, code: null}}}
}

/**
 * OpenAI's refusal of a chat request's parameter, as its `error` object (`param` named):
 * `no-reasoning`, a model without reasoning (gpt-4.1, gpt-4o), refuses `reasoning_effort`;
 * `o-series`, a reasoning model (o3, o4-mini), refuses `max_tokens` (it takes
 * `max_completion_tokens`) and a `temperature` or `top_p` other than 1; `max-tokens-8192`,
 * DeepSeek's chat models, refuse a `max_tokens` above 8 192 (with no `param`); `deepseek-json`,
 * DeepSeek's JSON output: a `json_schema` response format refused (no `param`), JSON mode taken
 * only when the messages say "json"; `no-json-mode`, a model without JSON output (o1-mini), refuses
 * `response_format`; `no-minimal-effort`, a reasoning model that takes only low, medium and high
 * (o3), refuses `minimal`, `none` and those above high (`xhigh`, `max`) and says what it takes;
 * `output-floor-16`, a GPT-5.x reasoning model, refuses a maximum below 16 with no floor stated
 * (BerriAI/litellm #35061). Undefined when the request is one the
 * model takes.
 */
export function unsupportedParameter(
  body: Record<string, unknown>,
  quirks: Quirks,
): {message: string; param: string | null; code: string} | undefined {
  if (quirks.has('no-reasoning') && body.reasoning_effort !== undefined)
    return {
      message: "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
      param: 'reasoning_effort',
      code: 'unsupported_parameter',
    }
  const max = body.max_completion_tokens ?? body.max_tokens
  if (quirks.has('output-floor-16') && typeof max === 'number' && max < 16)
    return {
      message:
        'Could not finish the message because max_tokens or model output limit was reached. Please try again with higher max_tokens.',
      param: null,
      code: 'invalid_request_error',
    }
  if (quirks.has('max-tokens-8192') && typeof body.max_tokens === 'number' && body.max_tokens > 8192)
    return {
      message: 'Invalid max_tokens value, the valid range of max_tokens is [1, 8192]',
      param: null,
      code: 'invalid_request_error',
    }
  const format = (body.response_format as {type?: unknown} | undefined)?.type
  if (quirks.has('no-json-mode') && format !== undefined && format !== 'text')
    return {
      message: "Unsupported parameter: 'response_format' is not supported with this model.",
      param: 'response_format',
      code: 'unsupported_parameter',
    }
  if (quirks.has('deepseek-json') && format === 'json_schema')
    return {
      message: 'This response_format type is unavailable now',
      param: null,
      code: 'invalid_request_error',
    }
  if (quirks.has('deepseek-json') && format === 'json_object' && !/json/i.test(JSON.stringify(body.messages)))
    return {
      message:
        "Prompt must contain the word 'json' in some form to use 'response_format' of type 'json_object'.",
      param: null,
      code: 'invalid_request_error',
    }
  const effort = minimalEffortRefusal('reasoning_effort', body.reasoning_effort, quirks)
  if (effort) return effort
  if (!quirks.has('o-series')) return undefined
  if (body.max_tokens !== undefined)
    return {
      message:
        "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      param: 'max_tokens',
      code: 'unsupported_parameter',
    }
  for (const param of ['temperature', 'top_p'])
    if (body[param] !== undefined && body[param] !== 1)
      return {
        message: `Unsupported value: '${param}' does not support ${String(body[param])} with this model. Only the default (1) value is supported.`,
        param,
        code: 'unsupported_value',
      }
  return undefined
}

/**
 * OpenAI's refusal of a Responses request's parameter, as its `error` object: `no-reasoning`
 * (gpt-4.1, gpt-4o) refuses a `reasoning` with an effort or a summary; `no-effort-model` the
 * effort alone, any value (gpt-4o-mini to Codex 0.146's `none`: openai/codex #36735); `no-minimal-effort` (o3)
 * refuses the efforts `minimal` and `none` and says what it takes. Undefined when the model takes
 * the request.
 */
export function unsupportedResponsesParameter(
  body: Record<string, unknown>,
  quirks: Quirks,
): {message: string; param: string; code: string} | undefined {
  const reasoning = body.reasoning as {effort?: unknown; summary?: unknown} | undefined
  if (!reasoning || typeof reasoning !== 'object') return undefined
  // (`no-effort-model`: the effort alone, whatever its value, `none` included; the summary taken)
  if (quirks.has('no-effort-model') && reasoning.effort !== undefined)
    return {
      message: "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
      param: 'reasoning.effort',
      code: 'unsupported_parameter',
    }
  if (quirks.has('no-reasoning') && (reasoning.effort !== undefined || reasoning.summary !== undefined)) {
    const param = reasoning.effort !== undefined ? 'reasoning.effort' : 'reasoning.summary'
    return {
      message: `Unsupported parameter: '${param}' is not supported with this model.`,
      param,
      code: 'unsupported_parameter',
    }
  }
  return minimalEffortRefusal('reasoning.effort', reasoning.effort, quirks)
}

/**
 * `plain-tools`: vLLM's 400 for what its Responses API takes none of (on a gpt-oss model): an
 * `additional_tools` input item (Codex's "Responses Lite"), then a tool of a type other than
 * `function` (a `namespace`, a `custom` tool, a hosted tool such as `web_search`), as its error
 * object. Undefined when the request holds none.
 */
export function plainToolsRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
): {message: string; type: string; param: string; code: number} | undefined {
  if (!quirks.has('plain-tools')) return undefined
  const items = Array.isArray(body.input) ? (body.input as Array<{type?: unknown}>) : []
  if (items.some((item) => item?.type === 'additional_tools'))
    return {
      message: "Unsupported Responses API input item type: 'additional_tools'",
      type: 'BadRequestError',
      param: 'input',
      code: 400,
    }
  const tools = Array.isArray(body.tools) ? (body.tools as Array<{type?: unknown}>) : []
  const other = tools.find((tool) => tool?.type !== 'function')
  if (other)
    return {
      message: `tool type ${String(other.type)} not supported`,
      type: 'BadRequestError',
      param: 'tools',
      code: 400,
    }
  return undefined
}

/**
 * The top-level fields of OpenAI's Responses API reference (what a strict Responses server knows;
 * Codex 0.155's `access_programs`, OpenAI's private field, is not one of them).
 */
export const RESPONSES_FIELDS: readonly string[] = [
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'max_tool_calls',
  'stream',
  'stream_options',
  'store',
  'include',
  'reasoning',
  'text',
  'max_output_tokens',
  'temperature',
  'top_p',
  'top_logprobs',
  'truncation',
  'metadata',
  'user',
  'safety_identifier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'previous_response_id',
  'conversation',
  'prompt',
  'background',
  'service_tier',
  'context_management',
]

/**
 * `strict-responses-fields`: a Responses request with a top-level field outside
 * {@link RESPONSES_FIELDS} refused as OpenCode Go's gateway refuses one (lidge-jun/opencodex #4853,
 * #4907), the first such field named: "unknown parameter `access_programs`". Undefined for a
 * request of known fields only.
 */
export function unknownResponsesParameter(
  body: Record<string, unknown>,
  quirks: Quirks,
): {message: string; type: string; param: null; code: null} | undefined {
  if (!quirks.has('strict-responses-fields')) return undefined
  const unknown = Object.keys(body).find((k) => !RESPONSES_FIELDS.includes(k))
  if (unknown === undefined) return undefined
  return {message: `unknown parameter \`${unknown}\``, type: 'invalid_request_error', param: null, code: null}
}

/**
 * `strict-input-items`: an input item's `status` refused as ChatGPT's Codex backend refuses the
 * OpenAI SDK's continuation (zyycn/codex-proxy-rs #194): "Unknown parameter: 'input[2].status'.",
 * its place in `param`, `code: unknown_parameter`; but on an item whose type's schema requires it
 * (a `web_search_call`, a `local_shell_call`: `INPUT_ITEM_REQUIRES`) it is taken, and its absence
 * refused as OpenAI's API does ("Missing required parameter: 'input[3].status'.", `code:
 * missing_required_parameter`). The first such item's, in order; undefined for an input without one.
 */
export function inputItemStatusRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
): {message: string; type: string; param: string; code: string} | undefined {
  if (!quirks.has('strict-input-items') || !Array.isArray(body.input)) return undefined
  for (const [at, item] of (body.input as unknown[]).entries()) {
    if (item === null || typeof item !== 'object') continue
    const required = INPUT_ITEM_REQUIRES[inputItemType(item)]?.includes('status') === true
    if (required === 'status' in item) continue
    const param = `input[${at}].status`
    return required
      ? {
          message: `Missing required parameter: '${param}'.`,
          type: 'invalid_request_error',
          param,
          code: 'missing_required_parameter',
        }
      : {
          message: `Unknown parameter: '${param}'.`,
          type: 'invalid_request_error',
          param,
          code: 'unknown_parameter',
        }
  }
  return undefined
}

/**
 * `azure-store`: Azure OpenAI's 400 for a request sent with `store: false` (or without `store: true`)
 * whose input names a reasoning item by its id (`rs_…`, as Codex sends its history since 0.146):
 * Azure kept no item of the earlier answer, so it finds none, in its words. Undefined with `store:
 * true` (the items are taken as found) or without such an item (Codex's first turn).
 */
export function storeFalseRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
): {message: string; type: string; param: string; code: null} | undefined {
  if (!quirks.has('azure-store') || body.store === true) return undefined
  const items = Array.isArray(body.input) ? (body.input as Array<{type?: unknown; id?: unknown}>) : []
  const named = items.find((item) => item?.type === 'reasoning' && typeof item.id === 'string')
  if (!named) return undefined
  return {
    message: `Item with id '${String(named.id)}' not found. Items are not persisted when \`store\` is set to false. Try again with \`store\` set to true, or remove this item from your input.`,
    type: 'invalid_request_error',
    param: 'input',
    code: null,
  }
}

/**
 * `encrypted-foreign`: encrypted content bound to the account that made it, as OpenAI's is (an API
 * key, an Azure deployment, a ChatGPT account: each reads only its own). A reasoning input item's
 * `encrypted_content` must be the sim's for the request's account (`account`: `simAccount` of its
 * key; the sim mints its reasoning so under the quirk), and a `compaction` item's (`cmp_…`) the
 * sim's own (what its `/v1/responses/compact` gives); any other is refused in the words of
 * ChatGPT's backend, `code: null` (lidge-jun/opencodex #2269). Undefined for a history without one.
 */
export function foreignEncryptedRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
  account: string,
): {message: string; type: string; param: null; code: null} | undefined {
  if (!quirks.has('encrypted-foreign') || !Array.isArray(body.input)) return undefined
  for (const item of body.input as Array<Record<string, unknown> | null>) {
    const type = item?.type
    const value = item?.encrypted_content
    if (value === undefined) continue
    const foreign =
      type === 'reasoning'
        ? !verifyEncryptedReasoning(value, account)
        : type === 'compaction' || type === 'compaction_summary'
          ? typeof value !== 'string' ||
            !/^sim-compaction:\d+$/.test(Buffer.from(value, 'base64').toString('utf8'))
          : false
    if (foreign)
      return {
        message: `The encrypted content for item ${String(item!.id ?? (type === 'reasoning' ? 'rs_unknown' : 'cmp_unknown'))} could not be verified. Reason: Encrypted content could not be decrypted or parsed.`,
        type: 'invalid_request_error',
        param: null,
        code: null,
      }
  }
  return undefined
}

/**
 * `reasoning-text`: a Responses history refused as DeepSeek's `/v1/responses` in thinking mode
 * refuses it when a tool call's turn (the items after the last user message or tool output) has
 * no reasoning item with `reasoning_text` content before the call (an empty text is taken), in
 * its words (lidge-jun/opencodex #1594).
 */
export function reasoningTextRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
): {message: string; type: string; param: null; code: string} | undefined {
  if (!quirks.has('reasoning-text') || !Array.isArray(body.input)) return undefined
  let reasoned = false
  for (const item of body.input as Array<{type?: unknown; role?: unknown; content?: unknown} | null>) {
    const type = item?.type
    if (type === 'reasoning')
      reasoned =
        Array.isArray(item?.content) &&
        (item.content as Array<{type?: unknown} | null>).some((part) => part?.type === 'reasoning_text')
    else if (type === 'function_call' || type === 'custom_tool_call') {
      if (!reasoned)
        return {
          message: 'The `reasoning_text` in the thinking mode must be passed back to the API.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_request_error',
        }
    } else if (item?.role === 'user' || type === 'function_call_output' || type === 'custom_tool_call_output')
      reasoned = false
  }
  return undefined
}

/**
 * `adjacent-outputs`: a Responses history refused as DeepSeek's `/v1/responses` refuses it when an
 * item stands between a tool call and its output (a Codex hook's developer message, a reasoning
 * item), in its words: "No tool output found for tool call CALL_ID", or "No tool call found for
 * tool output with call_id CALL_ID" for an output whose call is not right before it. A batch of
 * calls followed by all their outputs (parallel calls) is taken, as DeepSeek takes it.
 */
export function separatedOutputRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
): {message: string; type: string; param: null; code: string} | undefined {
  if (!quirks.has('adjacent-outputs') || !Array.isArray(body.input)) return undefined
  const refusal = (message: string) => ({
    message,
    type: 'invalid_request_error',
    param: null,
    code: 'invalid_request_error',
  })
  // the calls of the batch still waiting for their outputs; whether an output has come since
  const open: string[] = []
  let answering = false
  for (const item of body.input as Array<{type?: unknown; call_id?: unknown} | null>) {
    const type = item?.type
    const id = typeof item?.call_id === 'string' ? item.call_id : ''
    if (type === 'function_call' || type === 'custom_tool_call') {
      if (answering && open.length > 0) return refusal(`No tool output found for tool call ${open[0]}`)
      answering = false
      open.push(id)
    } else if (type === 'function_call_output' || type === 'custom_tool_call_output') {
      const at = open.indexOf(id)
      if (at === -1) return refusal(`No tool call found for tool output with call_id ${id}`)
      open.splice(at, 1)
      answering = true
    } else if (open.length > 0) return refusal(`No tool output found for tool call ${open[0]}`)
  }
  return open.length > 0 ? refusal(`No tool output found for tool call ${open[0]}`) : undefined
}

/**
 * `azure-namespace-description`: Azure OpenAI's 400 for a namespace tool whose `description` is
 * empty or missing, in `tools` or in the Lite request's `additional_tools` item, in its words
 * (openai/codex #37380: "Invalid 'input[0].tools[0].description': empty string. Expected a string
 * with minimum length 1, but got an empty string instead.", `code: empty_string`).
 */
export function namespaceDescriptionRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
): {message: string; type: string; param: string; code: string} | undefined {
  if (!quirks.has('azure-namespace-description')) return undefined
  type Tool = {type?: unknown; description?: unknown} | null
  const lists: Array<[string, unknown]> = [['tools', body.tools]]
  if (Array.isArray(body.input))
    for (const [i, item] of (body.input as Array<{type?: unknown; tools?: unknown} | null>).entries())
      if (item?.type === 'additional_tools') lists.push([`input[${i}].tools`, item.tools])
  for (const [at, list] of lists) {
    if (!Array.isArray(list)) continue
    for (const [j, tool] of (list as Tool[]).entries()) {
      if (tool?.type !== 'namespace' || (typeof tool.description === 'string' && tool.description !== ''))
        continue
      const param = `${at}[${j}].description`
      return tool.description === ''
        ? {
            message: `Invalid '${param}': empty string. Expected a string with minimum length 1, but got an empty string instead.`,
            type: 'invalid_request_error',
            param,
            code: 'empty_string',
          }
        : {
            message: `Missing required parameter: '${param}'.`,
            type: 'invalid_request_error',
            param,
            code: 'missing_required_parameter',
          }
    }
  }
  return undefined
}

/**
 * `lite-azure`, `not-lite`: a request with Codex's header `x-openai-internal-codex-responses-lite:
 * true` refused as Azure OpenAI refuses a tool of the Lite request that is not a function, a
 * custom tool or the client-run tool search (Codex's namespaces: in its `additional_tools` item, or
 * in `tools`, read under the same rules), and as OpenAI refuses a model that is not a Lite one,
 * in their words. Undefined without the header: the same tools pass as any request's.
 */
export function liteRefusal(
  body: Record<string, unknown>,
  headers: Record<string, string | string[] | undefined>,
  quirks: Quirks,
): {message: string; type: string; param: string; code: string} | undefined {
  if (
    (!quirks.has('lite-azure') && !quirks.has('not-lite')) ||
    String(headers['x-openai-internal-codex-responses-lite']).toLowerCase() !== 'true'
  )
    return undefined
  if (quirks.has('not-lite'))
    return {
      message: 'This model is not supported when using X-OpenAI-Internal-Codex-Responses-Lite.',
      type: 'invalid_request_error',
      param: 'model',
      code: 'unsupported_value',
    }
  type Tool = {type?: unknown; execution?: unknown}
  const items = Array.isArray(body.input) ? (body.input as Array<{type?: unknown; tools?: unknown}>) : []
  const tools: Tool[] = [
    ...(Array.isArray(body.tools) ? (body.tools as Tool[]) : []),
    ...items.flatMap((item) =>
      item?.type === 'additional_tools' && Array.isArray(item.tools) ? (item.tools as Tool[]) : [],
    ),
  ]
  const taken = (t: Tool) =>
    t?.type === 'function' || t?.type === 'custom' || (t?.type === 'tool_search' && t.execution === 'client')
  if (tools.every(taken)) return undefined
  return {
    message:
      'X-OpenAI-Internal-Codex-Responses-Lite only supports function tools, custom tools, and client-executed tool search.',
    type: 'invalid_request_error',
    param: 'tools',
    code: 'unsupported_value',
  }
}

/** Whether `quirk` is asked for and `effort` is one, other than low, medium and high (all an o3 or SGLang's literal takes). */
const beyondLowToHigh = (quirk: SimQuirk, effort: unknown, quirks: Quirks): effort is string =>
  quirks.has(quirk) && typeof effort === 'string' && !['low', 'medium', 'high'].includes(effort)

/** `no-minimal-effort`: o3's refusal of an effort but low, medium and high, naming what it takes. */
function minimalEffortRefusal(
  param: string,
  effort: unknown,
  quirks: Quirks,
): {message: string; param: string; code: string} | undefined {
  // (o3 takes none above high either: OpenAI's xhigh came with GPT-5.1-Codex-Max)
  if (!beyondLowToHigh('no-minimal-effort', effort, quirks)) return undefined
  return {
    message: `Unsupported value: '${param}' does not support '${effort}' with this model. Supported values are: 'low', 'medium', and 'high'.`,
    param,
    code: 'unsupported_value',
  }
}

/**
 * Whether a Gemini 3 model refuses a thinking level (upper case), as Google's thinking-levels table
 * has it: `MINIMAL` with `no-minimal-level`, and by name for Pro (`gemini-3.1-pro-preview`) and
 * Flash from 3.7 on (`gemini-3.8-flash`, not Flash-Lite); `MEDIUM` for Gemini 3 Pro
 * (`gemini-3-pro-preview`; 3.1 Pro takes it).
 */
function refusesLevel(level: string, model: string, quirks: Quirks): boolean {
  const [, major, minor] = /^gemini-(\d+)(?:\.(\d+))?-/.exec(model) ?? []
  if (major === undefined) return level === 'MINIMAL' && quirks.has('no-minimal-level')
  const pro = /-pro\b/.test(model)
  const laterFlash =
    /-flash\b/.test(model) && !/-lite\b/.test(model) && (Number(major) > 3 || Number(minor ?? 0) >= 7)
  if (level === 'MINIMAL') return quirks.has('no-minimal-level') || pro || laterFlash
  return level === 'MEDIUM' && pro && major === '3' && minor === undefined
}

/**
 * Gemini's refusal of a thinking config, as its message, or undefined: of any (`no-thinking`, and
 * a `gemma-3` name: a model that does not think); of a thinking budget (`thinking-only`, Gemini 2.5
 * Pro: thinking cannot be turned off, budgets 128-32 768; `no-thinking-budget` and a `gemma-4`
 * name, Gemma 4: any budget, 0 and -1 included); of a thinking level (`no-thinking-level`; a
 * `gemma-4` name: any but `MINIMAL` and `HIGH`).
 */
export function refusedThinkingBudget(
  body: Record<string, unknown>,
  quirks: Quirks,
  model = '',
): string | undefined {
  const config = body.generationConfig as
    {thinkingConfig?: {thinkingBudget?: unknown; thinkingLevel?: unknown}} | undefined
  // Gemma 3: "Thinking is not enabled for models/gemma-3-27b-it", a budget of 0 or a lone
  // includeThoughts too (the words Google answers Gemini 2.0 with, lobehub #7985)
  if (config?.thinkingConfig !== undefined && (quirks.has('no-thinking') || /^gemma-3(?!\d)/.test(model)))
    return `Thinking is not enabled for models/${model}`
  const gemma4 = /^gemma-4(?!\d)/.test(model)
  const level = config?.thinkingConfig?.thinkingLevel
  // `no-thinking-level`: a Gemini 2.5 model, which takes a budget only; Gemma 4 takes MINIMAL and
  // HIGH only (earendil-works/pi PR #2811)
  if (
    level !== undefined &&
    (quirks.has('no-thinking-level') || (gemma4 && level !== 'MINIMAL' && level !== 'HIGH'))
  )
    return 'Thinking level is not supported for this model.'
  const budget = config?.thinkingConfig?.thinkingBudget
  // Gemini 3: a level and a budget together refused (sterlp/eclipse-peon-ai #115); a level the model
  // does not take, named (theJayTea/WritingTools #282, egoist/chatwise-releases #1206)
  if (level !== undefined && budget !== undefined)
    return 'You can only set only one of thinking budget and thinking level.'
  if (typeof level === 'string' && refusesLevel(level.toUpperCase(), model, quirks))
    return `Thinking level ${level.toUpperCase()} is not supported for this model. Please retry with other thinking level.`
  if ((quirks.has('no-thinking-budget') || gemma4) && budget !== undefined)
    return 'Thinking budget is not supported for this model.'
  if (!quirks.has('thinking-only')) return undefined
  if (typeof budget !== 'number' || budget === -1) return undefined
  if (budget === 0) return 'Budget 0 is invalid. This model only works in thinking mode.'
  return budget < 128 || budget > 32768 ? `The thinking budget (${budget}) is invalid.` : undefined
}

/**
 * Gemini's refusal of a system instruction, as its message, or undefined: Gemma 3 on the Gemini API
 * takes none (`no-system-instruction`, and a `gemma-3` name): 400 INVALID_ARGUMENT "Developer
 * instruction is not enabled for models/gemma-3-27b-it".
 */
export function refusedSystemInstruction(
  body: Record<string, unknown>,
  quirks: Quirks,
  model = '',
): string | undefined {
  if (body.systemInstruction === undefined && body.system_instruction === undefined) return undefined
  if (!quirks.has('no-system-instruction') && !/^gemma-3(?!\d)/.test(model)) return undefined
  return `Developer instruction is not enabled for models/${model}`
}

/**
 * Google's refusal of a `maxOutputTokens` above a model's output limit (`max-output-8192`: Gemini
 * 2.0 Flash's and Gemma's 8 192), as its message (the Gemini API's and Vertex AI's words), or
 * undefined.
 */
export function refusedMaxOutputTokens(body: Record<string, unknown>, quirks: Quirks): string | undefined {
  const max = (body.generationConfig as {maxOutputTokens?: unknown} | undefined)?.maxOutputTokens
  if (!quirks.has('max-output-8192') || typeof max !== 'number' || max <= 8192) return undefined
  return `Unable to submit request because it has a maxOutputTokens value of ${max} but the supported range is from 1 (inclusive) to 8193 (exclusive). Update the value and try again.`
}

/**
 * Anthropic's refusal of a `max_tokens` above a model's output limit (`max-output-32000`: Claude
 * Opus 4's 32 000), as its message, or undefined.
 */
export function refusedMaxOutput(
  body: Record<string, unknown>,
  model: string,
  quirks: Quirks,
): string | undefined {
  const max = body.max_tokens
  if (!quirks.has('max-output-32000') || typeof max !== 'number' || max <= 32000) return undefined
  return `max_tokens: ${max} > 32000, which is the maximum allowed number of output tokens for ${model}`
}

/** Top-level chat fields Mistral's API refuses as unknown (as its users report them). */
const MISTRAL_EXTRAS = ['reasoning_effort', 'user', 'max_completion_tokens', 'seed', 'n', 'metadata']
const NIM_EXTRAS = ['presence_penalty', 'frequency_penalty', 'seed']

/**
 * `mistral-extra`: Mistral's 422 for top-level fields it does not take, one pydantic
 * `extra_forbidden` entry a field (`loc: ["body", FIELD]`), as its whole error body; undefined
 * when the request has none.
 */
export function extraInputs(body: Record<string, unknown>, quirks: Quirks): unknown {
  if (quirks.has('nim-extra')) {
    const extras = NIM_EXTRAS.filter((f) => body[f] !== undefined)
    if (extras.length === 0) return undefined
    // (pydantic v1's words, one field after the other, as one string)
    return {
      error: extras
        .map((f) => `body -> ${f}\n  Extra inputs are not permitted (type=extra_forbidden)`)
        .join('\n'),
    }
  }
  if (!quirks.has('mistral-extra')) return undefined
  const extras = MISTRAL_EXTRAS.filter((f) => body[f] !== undefined)
  if (extras.length === 0) return undefined
  return {
    object: 'error',
    message: {
      detail: extras.map((f) => ({
        type: 'extra_forbidden',
        loc: ['body', f],
        msg: 'Extra inputs are not permitted',
        input: body[f],
      })),
    },
    type: 'invalid_request_error',
    param: null,
    code: null,
  }
}

/**
 * A chat server's refusal of a conversation's shape, as its error: `mistral-ids`, Mistral's tool
 * call ids (9 letters and digits; the simulator's own `call_…` ids are not, as after a switch of
 * provider mid-conversation); `max-id-40`, OpenAI's 40 characters at most for an id;
 * `mistral-order`, Mistral's refusal of a user message right after a tool result;
 * `reasoning-not-back`, a server that writes its reasoning as `reasoning` (the quirk turns it on)
 * and refuses `reasoning_content` in the history, as Cerebras does (its error body, unwrapped);
 * `successive-roles`, DeepSeek's refusal of two user or two assistant messages in a row (its
 * indices count the system message). Undefined when the history is one the server takes.
 */
export function refusedHistory(
  body: Record<string, unknown>,
  quirks: Quirks,
):
  | {message: string; type: string; code: string | null; param: string | null; raw?: unknown; status?: number}
  | undefined {
  if (!Array.isArray(body.messages)) return undefined
  // Mistral's error body has no `error` wrapper
  const mistral = (message: string, type: string, code: string | null) => ({
    message,
    type,
    code,
    param: null,
    raw: {object: 'error', message, type, param: null, code},
  })
  const messages = body.messages as Array<Record<string, unknown> | null>
  for (const [i, m] of messages.entries()) {
    if (!m || typeof m !== 'object') continue
    // `minimax-system`: MiniMax's refusal of a second system message (MiniMax-AI/MiniMax-M2 #51,
    // openclaw #19386); `system-first`: Qwen3.5's chat template's of a system message anywhere but
    // first, as llama.cpp answers its exception (a 400)
    if (m.role === 'system' && i > 0) {
      if (quirks.has('minimax-system') && messages.slice(0, i).some((x) => x?.role === 'system')) {
        const {message, raw} = minimaxRefusal('invalid params, invalid chat setting (2013)')
        return {message, type: 'bad_request_error', code: null, param: null, raw}
      }
      // (`ollama-system-first`: the same exception as Ollama answers it, a 500, ollama/ollama #18241)
      if (quirks.has('system-first') || quirks.has('ollama-system-first')) {
        const message =
          "\n------------\nWhile executing CallExpression at line 85, column 32 in source:\n...first %}\u21b5            {{- raise_exception('System message must be at the beginnin...\n                                           ^\nError: Jinja Exception: System message must be at the beginning."
        if (quirks.has('ollama-system-first')) {
          const type = 'server_error'
          return {
            message,
            type,
            code: null,
            param: null,
            status: 500,
            raw: {error: {code: 500, message, type}},
          }
        }
        const type = 'invalid_request_error'
        return {message, type, code: null, param: null, raw: {error: {code: 400, message, type}}}
      }
    }
    if (quirks.has('reasoning-not-back') && m.role === 'assistant' && m.reasoning_content !== undefined) {
      const message = `messages.${i}.assistant.reasoning_content: property 'messages.${i}.assistant.reasoning_content' is unsupported`
      const type = 'invalid_request_error'
      return {
        message,
        type,
        code: 'wrong_api_format',
        param: 'validation_error',
        raw: {message, type, param: 'validation_error', code: 'wrong_api_format'},
      }
    }
    const calls = Array.isArray(m.tool_calls) ? (m.tool_calls as Array<{id?: unknown}>) : []
    const ids: Array<[string, unknown]> = [
      ...calls.map((c, j): [string, unknown] => [`messages[${i}].tool_calls[${j}].id`, c?.id]),
      [`messages[${i}].tool_call_id`, m.tool_call_id],
    ]
    for (const [param, id] of ids) {
      if (typeof id !== 'string') continue
      if (quirks.has('mistral-ids') && !/^[a-zA-Z0-9]{9}$/.test(id))
        return mistral(
          `Tool call id was ${id} but must be a-z, A-Z, 0-9, with a length of 9.`,
          'invalid_request_error',
          null,
        )
      if (quirks.has('max-id-40') && id.length > 40)
        return {
          message: `Invalid '${param}': string too long. Expected a string with maximum length 40, but got a string with length ${id.length} instead.`,
          type: 'invalid_request_error',
          code: 'string_above_max_length',
          param,
        }
    }
    if (
      quirks.has('successive-roles') &&
      (m.role === 'user' || m.role === 'assistant') &&
      messages[i + 1]?.role === m.role
    )
      return {
        message: `${String(body.model)} does not support successive user or assistant messages (messages[${i}] and messages[${i + 1}] in your input). You should interleave the user/assistant messages in the message sequence.`,
        type: 'invalid_request_error',
        code: 'invalid_request_error',
        param: null,
      }
    if (quirks.has('mistral-order') && m.role === 'tool' && messages[i + 1]?.role === 'user')
      return mistral("Unexpected role 'user' after role 'tool'", 'invalid_request_message_order', '3230')
  }
  return undefined
}

/**
 * A text-only model's refusal of a chat request's media (quirks `text-only`, `no-mmproj`): the
 * first `image_url` or `file` part of any message. `text-only` is DeepSeek's 400 (its
 * deserializer names the part's type: "unknown variant `image_url`, expected `text`"), for
 * images and files alike; `no-mmproj` is llama.cpp's server without a vision projector, a 500
 * for an image.
 */
export function refusedMedia(
  body: Record<string, unknown>,
  quirks: Quirks,
): {status: number; message: string; type: string; code: string | null; raw?: unknown} | undefined {
  const textOnly = quirks.has('text-only')
  if ((!textOnly && !quirks.has('no-mmproj')) || !Array.isArray(body.messages)) return undefined
  for (const [i, m] of (body.messages as Array<{content?: unknown} | null>).entries()) {
    if (!Array.isArray(m?.content)) continue
    for (const part of m.content as Array<{type?: unknown} | null>) {
      const type = part?.type
      if (
        textOnly &&
        (type === 'image_url' || type === 'file' || type === 'input_audio' || type === 'video_url')
      ) {
        const column = JSON.stringify(body).indexOf(`"type":"${type}"`) + 1
        return {
          status: 400,
          message: `Failed to deserialize the JSON body into the target type: messages[${i}]: unknown variant \`${type}\`, expected \`text\` at line 1 column ${column}`,
          type: 'invalid_request_error',
          code: 'invalid_request_error',
        }
      }
      if (!textOnly && type === 'image_url') {
        const message =
          'image input is not supported - hint: if this is unexpected, you may need to provide the mmproj'
        return {
          status: 500,
          message,
          type: 'server_error',
          code: null,
          raw: {error: {code: 500, message, type: 'server_error'}},
        }
      }
    }
  }
  return undefined
}

/** The quirks that say a prompt past the window in another vendor's words (contextWordsRefusal). */
const CONTEXT_WORDS: readonly SimQuirk[] = [
  'dashscope-context',
  'cerebras-context',
  'lmstudio-context',
  'lmstudio-mlx-context',
  'lmstudio-fit-context',
  'minimax-context',
  'vllm-context',
  'xinference-context',
]

/** The context windows of quirks `context-8k`, `context-4k` and `context-128k`. */
export const CONTEXT_8K = 8192
const CONTEXT_4K = 4096
const CONTEXT_128K = 131_072

/**
 * DeepSeek's refusal of a request past its context window (quirk `context-8k`, a window of 8 192
 * tokens; `context-4k`, 4 096; `context-128k`, 131 072): the prompt (`promptTokens`, the simulator's count) and the completion it asks room for
 * (`max_tokens`), in its words. Undefined when both fit.
 */
export function contextRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
  promptTokens: number,
): string | undefined {
  const window = quirks.has('context-4k')
    ? CONTEXT_4K
    : quirks.has('context-8k')
      ? CONTEXT_8K
      : quirks.has('context-128k')
        ? CONTEXT_128K
        : undefined
  // (another vendor's words asked for: said by contextWordsRefusal instead)
  if (window === undefined || CONTEXT_WORDS.some((q) => quirks.has(q))) return undefined
  const asked = body.max_completion_tokens ?? body.max_tokens
  const completion = typeof asked === 'number' ? asked : 0
  if (promptTokens + completion <= window) return undefined
  return `This model's maximum context length is ${window} tokens. However, you requested ${promptTokens + completion} tokens (${promptTokens} in the messages, ${completion} in the completion). Please reduce the length of the messages or completion.`
}

/** MiniMax's 400 in its body's shape (its OpenAI and Anthropic endpoints alike): code 2013 in the message. */
function minimaxRefusal(message: string): {status: number; message: string; raw: unknown} {
  return {
    status: 400,
    message,
    raw: {type: 'error', error: {type: 'bad_request_error', message, http_code: '400'}, request_id: 'sim'},
  }
}

/**
 * A prompt past the window (the window of `context-8k`, `context-4k` or `context-128k`; 8 192
 * without one) refused in another vendor's words and error body, the prompt alone counted (each of
 * them refuses the input, its room for the completion aside): `dashscope-context`, DashScope's
 * "Range of input length should be [1, W]"; `lmstudio-context`, LM Studio's "Trying to keep the
 * first P tokens when context the overflows ..." (`{"error": "…"}`); `lmstudio-fit-context`, its
 * 0.4.21 words "Input does not fit in context length. The input has P tokens, but the context
 * length only supports W tokens." (the same body); `lmstudio-mlx-context`, its MLX
 * engine's (and llama.cpp's) 500 "Context size has been exceeded.", no counts; `minimax-context`, MiniMax's
 * "invalid params, context window exceeds limit (2013)"; `vllm-context`, vLLM's engine's "The
 * decoder prompt (length P) is longer than the maximum model length of W."; `xinference-context`,
 * the same words as Xinference answers them, a 500 with `detail`; `cerebras-context`, Cerebras's
 * "Please reduce the length of the messages or completion. Current length is P while limit is W"
 * (its body unwrapped, `code: context_length_exceeded`). Undefined when the prompt fits
 * or none is asked for.
 */
export function contextWordsRefusal(
  quirks: Quirks,
  promptTokens: number,
): {status: number; message: string; raw: unknown} | undefined {
  const window = quirks.has('context-4k')
    ? CONTEXT_4K
    : quirks.has('context-128k')
      ? CONTEXT_128K
      : CONTEXT_8K
  if (promptTokens <= window || !CONTEXT_WORDS.some((q) => quirks.has(q))) return undefined
  if (quirks.has('dashscope-context'))
    return dashscopeRefusal(
      `<400> InternalError.Algo.InvalidParameter: Range of input length should be [1, ${window}]`,
    )
  if (quirks.has('lmstudio-context')) {
    const message = `Trying to keep the first ${promptTokens} tokens when context the overflows. However, the model is loaded with context length of only ${window} tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input`
    return {status: 400, message, raw: {error: message}}
  }
  if (quirks.has('cerebras-context')) {
    const message = `Please reduce the length of the messages or completion. Current length is ${promptTokens} while limit is ${window}`
    return {
      status: 400,
      message,
      raw: {
        message,
        type: 'invalid_request_error',
        param: 'validation_error',
        code: 'context_length_exceeded',
      },
    }
  }
  if (quirks.has('lmstudio-fit-context')) {
    const message = `Input does not fit in context length. The input has ${promptTokens} tokens, but the context length only supports ${window} tokens.`
    return {status: 400, message, raw: {error: message}}
  }
  if (quirks.has('lmstudio-mlx-context')) {
    const message = 'Context size has been exceeded.'
    return {status: 500, message, raw: {error: {code: 500, message, type: 'server_error'}}}
  }
  if (quirks.has('minimax-context'))
    return minimaxRefusal('invalid params, context window exceeds limit (2013)')
  const vllm = `The decoder prompt (length ${promptTokens}) is longer than the maximum model length of ${window}. Make sure that \`max_model_len\` is no smaller than the number of text tokens.`
  if (quirks.has('vllm-context'))
    return {
      status: 400,
      message: vllm,
      raw: {object: 'error', message: vllm, type: 'BadRequestError', param: null, code: 400},
    }
  if (quirks.has('xinference-context')) {
    const message = `[address=127.0.0.1:40471, pid=1065] ${vllm}`
    return {status: 500, message, raw: {detail: message}}
  }
  return undefined
}

/** The context of quirk `ollama-truncate`: Ollama's default below 24 GiB of VRAM. */
export const OLLAMA_CONTEXT = 4096

/**
 * Quirk `ollama-truncate`: the prompt count Ollama reports for a prompt of `promptTokens` (the
 * simulator's count). Since 0.30.11 a prompt past its context is cut to `num_ctx - floor((num_ctx
 * - num_keep) / 2)` tokens (`num_keep` 4), 2 050 of 4 096, its start dropped, and the answer is
 * a 200 that reports only those (ollama/ollama #17427, #17889). Ollama reports no cached tokens.
 * Undefined without the quirk.
 */
export function ollamaReportedPrompt(quirks: Quirks, promptTokens: number): number | undefined {
  if (!quirks.has('ollama-truncate')) return undefined
  return promptTokens < OLLAMA_CONTEXT ? promptTokens : OLLAMA_CONTEXT - Math.floor((OLLAMA_CONTEXT - 4) / 2)
}

// ---- Kimi (Moonshot) and the servers in front of it ----

/**
 * Kimi's refusals, as its whole error body (`{"error": {message, type}}`, no `param`, no `code`):
 * `kimi-temperature`, K2.5 and later with thinking, which fix the temperature at 1 ("invalid
 * temperature: only 1 is allowed for this model"); `reasoning-content-required`, its thinking
 * mode, which refuses an assistant message with tool calls and no `reasoning_content` string
 * (empty taken) in the history ("thinking is enabled but reasoning_content is missing in assistant
 * tool call message at index N"), in DeepSeek V4's words and error body for a `deepseek-v4*` model
 * ("The `reasoning_content` in the thinking mode must be passed back to the API.", `type` and
 * `code` `invalid_request_error`), which refuses as well the text of an assistant message after a
 * tool result (the end of a tool loop) without one; `kimi-always-thinks` (and a model named
 * `kimi-k3…` but `-fast`), Kimi K3, which always reasons: `thinking.type: disabled` ("invalid
 * thinking: only type=enabled is allowed for this model", Kimi's words for K2.7 Code: oh-my-pi
 * #3852), a `reasoning_effort` but `low`, `high` and `max` (`none`, `medium`: "invalid
 * reasoning_effort: only low, high and max are allowed for this model", in the same words), a
 * forced `tool_choice` ("tool_choice 'required' is incompatible with thinking enabled"). Undefined
 * when the request is one it takes.
 */
export function kimiRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
  model = '',
): {message: string; raw: unknown} | undefined {
  const kimi = (message: string) => ({message, raw: {error: {message, type: 'invalid_request_error'}}})
  const deepseek = /^deepseek-v4/i.test(model)
  if (quirks.has('kimi-temperature') && body.temperature !== undefined && body.temperature !== 1)
    return kimi('invalid temperature: only 1 is allowed for this model')
  if (quirks.has('kimi-always-thinks') || /^kimi-k3(?!\d|\S*-fast)/i.test(model)) {
    const always = kimiAlwaysThinks(body)
    if (always) return kimi(always)
  }
  if (quirks.has('reasoning-content-required') && Array.isArray(body.messages)) {
    // (DeepSeek V4: also the text that ends a tool loop, an assistant message after a tool
    // result and before the next user message, as its docs say and openclaw #73417 found)
    let inLoop = false
    for (const [i, m] of (body.messages as Array<Record<string, unknown> | null>).entries()) {
      if (m?.role === 'user') inLoop = false
      else if (m?.role === 'tool') inLoop = true
      const calls = Array.isArray(m?.tool_calls) && m.tool_calls.length > 0
      if (
        m?.role === 'assistant' &&
        (calls || (deepseek && inLoop)) &&
        typeof m.reasoning_content !== 'string'
      ) {
        if (!deepseek)
          return kimi(
            `thinking is enabled but reasoning_content is missing in assistant tool call message at index ${i}`,
          )
        const message = 'The `reasoning_content` in the thinking mode must be passed back to the API.'
        return {
          message,
          raw: {error: {message, type: 'invalid_request_error', param: null, code: 'invalid_request_error'}},
        }
      }
    }
  }
  return undefined
}

/** Kimi K3's words for what it refuses of a request (`kimi-always-thinks`, {@link kimiRefusal}). */
function kimiAlwaysThinks(body: Record<string, unknown>): string | undefined {
  if ((body.thinking as {type?: unknown} | undefined)?.type === 'disabled')
    return 'invalid thinking: only type=enabled is allowed for this model'
  const effort = body.reasoning_effort
  if (effort !== undefined && !['low', 'high', 'max'].includes(String(effort)))
    return 'invalid reasoning_effort: only low, high and max are allowed for this model'
  const choice = body.tool_choice
  if (choice === 'required' || (typeof choice === 'object' && choice !== null))
    return `tool_choice '${choice === 'required' ? 'required' : 'specified'}' is incompatible with thinking enabled`
  return undefined
}

/**
 * A chat server's refusal of a forced `tool_choice` (`required`, a named function): quirk
 * `tool-choice-auto-only`, Z.AI's 400 for GLM (vectorize-io/hindsight #4246), or, by the model's
 * name, a thinking-mode server's, which takes the forced choice with thinking turned off:
 * DeepSeek V4's (`deepseek-v4*`, unless `thinking.type` is `disabled`), deepseek-reasoner's, Kimi's
 * (`kimi*`, `'required'` or `'specified'`, unless `thinking.type` is `disabled`), DashScope's
 * (`qwen*`, unless `enable_thinking` is false); `tool-choice-404`, OpenRouter's 404 when none of
 * the model's providers takes it (zed-industries/zed #36094).
 */
export function toolChoiceRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
  model = '',
): {status: number; message: string; raw: unknown} | undefined {
  const choice = body.tool_choice
  const forced = choice === 'required' || (typeof choice === 'object' && choice !== null)
  if (!forced) return undefined
  if (quirks.has('tool-choice-auto-only')) {
    const off = (body.thinking as {type?: unknown} | undefined)?.type === 'disabled'
    const openai = (
      message: string,
      type = 'invalid_request_error',
      code: unknown = 'invalid_request_error',
    ) => ({
      status: 400,
      message,
      raw: {error: {message, type, param: null, code}},
    })
    if (/^deepseek-reasoner/i.test(model))
      return openai('deepseek-reasoner does not support this tool_choice')
    if (/^deepseek-v4/i.test(model))
      return off ? undefined : openai('Thinking mode does not support this tool_choice')
    if (/^kimi/i.test(model))
      return off
        ? undefined
        : openai(
            `tool_choice '${choice === 'required' ? 'required' : 'specified'}' is incompatible with thinking enabled`,
            'invalid_request_error',
            null,
          )
    if (/^qwen/i.test(model))
      return body.enable_thinking === false
        ? undefined
        : openai(
            '<400> InternalError.Algo.InvalidParameter: The tool_choice parameter does not support being set to required or object in thinking mode',
            'invalid_request_error',
            'invalid_parameter_error',
          )
    const message = 'Tool choice must be auto'
    return {status: 400, message, raw: {error: {message, code: 400, metadata: {provider_name: 'Z.AI'}}}}
  }
  if (quirks.has('tool-choice-404')) {
    const message = "No endpoints found that support the provided 'tool_choice' value."
    return {status: 404, message, raw: {error: {message, code: 404}}}
  }
  return undefined
}

/** DashScope's 400 in its body's shape: its code and `request_id`, the message at the start. */
function dashscopeRefusal(message: string): {status: number; message: string; raw: unknown} {
  return {
    status: 400,
    message,
    raw: {
      error: {code: 'invalid_parameter_error', param: null, message, type: 'invalid_request_error'},
      id: 'chatcmpl-sim',
      request_id: 'sim',
    },
  }
}

/**
 * `dashscope-args`: DashScope's 400 for a history whose tool call's `arguments` is not JSON (Qwen3
 * Coder and Qwen3.5 write broken ones, and so does a stream cut at its token limit), refused on
 * every later turn since the call stays in the history (HKUDS/nanobot #1487, continuedev/continue
 * #11270): undefined when each call's arguments parse.
 */
export function argumentsRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
): {status: number; message: string; raw: unknown} | undefined {
  const minimax = quirks.has('minimax-args')
  if ((!quirks.has('dashscope-args') && !minimax) || !Array.isArray(body.messages)) return undefined
  for (const m of body.messages as Array<{role?: unknown; tool_calls?: unknown}>) {
    if (m?.role !== 'assistant' || !Array.isArray(m.tool_calls)) continue
    for (const call of m.tool_calls as Array<{id?: unknown; function?: {arguments?: unknown}}>) {
      const args = call?.function?.arguments
      if (typeof args !== 'string') continue
      try {
        JSON.parse(args)
      } catch {
        // `minimax-args`: MiniMax's words, the call's id in them (MiniMax-AI/cli #235)
        if (minimax)
          return minimaxRefusal(
            `invalid params, invalid function arguments json string, tool_call_id: ${String(call.id)} (2013)`,
          )
        return dashscopeRefusal(
          '<400> InternalError.Algo.InvalidParameter: The "function.arguments" parameter of the code model must be in JSON format.',
        )
      }
    }
  }
  return undefined
}

/**
 * Chat usage as Moonshot's API writes it (quirk `usage-in-choice`): the cache hits as
 * `cached_tokens` beside the counts, no `prompt_tokens_details`.
 */
export function moonshotUsage(usage: {
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  prompt_tokens_details: {cached_tokens: number}
}): Record<string, number> {
  const {prompt_tokens, completion_tokens, total_tokens} = usage
  return {
    prompt_tokens,
    completion_tokens,
    total_tokens,
    cached_tokens: usage.prompt_tokens_details.cached_tokens,
  }
}

/**
 * A chat tool call's `arguments` as llama.cpp's server and TGI have sent them (quirk
 * `object-args`): the JSON object itself, not its text.
 */
export const objectArgs = (text: string): unknown => JSON.parse(text || '{}') as unknown

// ---- Gemini 3 through a chat completions server ----

/** The `format` OpenRouter gives Gemini's `reasoning_details` items. */
export const GEMINI_DETAILS_FORMAT = 'google-gemini-v1'

/**
 * The thought signature the simulator gives a chat tool call (quirks `reasoning-details`,
 * `extra-content`): the Gemini one of its name and arguments (turn-checks.ts), so that a signature
 * sent back is checked against the call it came back on.
 */
export function chatCallSignature(name: string, args: string): string {
  let parsed: unknown = {}
  try {
    parsed = JSON.parse(args || '{}')
  } catch {
    // arguments that are not JSON sign as none
  }
  return functionCallSignature(name, parsed)
}

/**
 * Gemini 3's refusal of a chat request whose tool call's turn lacks its thought signature, as
 * OpenRouter (`reasoning-details`: the call's signature is a `reasoning.encrypted` item of the
 * assistant message's `reasoning_details`, its `id` the call's) and Google's OpenAI-compatible
 * endpoint (`extra-content`: the first call's `extra_content.google.thought_signature`) answer it,
 * as their whole error bodies. Only the current turn is checked (the assistant messages after
 * the last user message), as Gemini does; Google's `skip_thought_signature_validator` passes. A
 * signature not the simulator's for that call is "Corrupted thought signature.". Undefined when
 * the history is one the model takes.
 */
export function thoughtSignatureRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
): {message: string; raw: unknown} | undefined {
  const details = quirks.has('reasoning-details')
  if ((!details && !quirks.has('extra-content')) || !Array.isArray(body.messages)) return undefined
  type Msg = Record<string, unknown> | null
  const messages = (body.messages as Msg[]).filter((m) => m?.role !== 'system' && m?.role !== 'developer')
  const from = messages.findLastIndex((m) => (m?.role ?? 'user') === 'user')
  for (let i = from + 1; i < messages.length; i++) {
    const m = messages[i]
    const calls = m?.role === 'assistant' && Array.isArray(m.tool_calls) ? (m.tool_calls as Msg[]) : []
    if (calls.length === 0) continue
    const call = calls[0] ?? {}
    const fn = (call.function ?? {}) as {name?: unknown; arguments?: unknown}
    let sent: unknown
    if (details) {
      const items = Array.isArray(m!.reasoning_details) ? (m!.reasoning_details as Msg[]) : []
      sent = items.find(
        (d) => d?.type === 'reasoning.encrypted' && (d.id === undefined || d.id === call.id),
      )?.data
    } else {
      const extra = call.extra_content as {google?: {thought_signature?: unknown}} | undefined
      sent = extra?.google?.thought_signature
    }
    const expected = chatCallSignature(
      String(fn.name),
      typeof fn.arguments === 'string' ? fn.arguments : '{}',
    )
    if (sent === SKIP_THOUGHT_SIGNATURE || sent === expected) continue
    const google =
      sent === undefined
        ? 'Function call is missing a thought_signature in functionCall parts. This is required for ' +
          'tools to work correctly, and missing thought_signature may lead to degraded model ' +
          `performance. Additional data, function call \`default_api:${String(fn.name)}\` , ` +
          `position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures ` +
          'for more details.'
        : 'Corrupted thought signature.'
    const error = {code: 400, message: google, status: 'INVALID_ARGUMENT'}
    if (!details) return {message: google, raw: {error}}
    const raw =
      (sent === undefined
        ? 'Gemini models require OpenRouter reasoning details to be preserved in each request. Please ' +
          'refer to our docs: https://openrouter.ai/docs/guides/best-practices/reasoning-tokens#preserving-reasoning-blocks. '
        : '') + `Upstream error: ${JSON.stringify({error}, null, 2)}\n`
    const message = 'Provider returned error'
    return {message, raw: {error: {message, code: 400, metadata: {raw, provider_name: 'Google AI Studio'}}}}
  }
  return undefined
}

// ---- Gemini's OpenAPI schema subset; Vertex AI's function calls without ids ----

/**
 * JSON Schema keywords outside Gemini's OpenAPI subset (its `Schema` object), which Google's
 * OpenAI-compatible endpoint and relays that convert a tool's schema to `parameters` refuse.
 */
export const GEMINI_UNKNOWN_KEYWORDS: ReadonlySet<string> = new Set([
  '$schema',
  '$id',
  '$ref',
  '$defs',
  '$comment',
  'definitions',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'propertyNames',
  'patternProperties',
  'additionalProperties',
  'const',
  'if',
  'then',
  'else',
])

/** Keywords whose value maps names to schemas (the names are no keywords). */
const NAMED = new Set(['properties', 'patternProperties', '$defs', 'definitions'])
/** Keywords whose value is data. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'example', 'examples', 'required'])

/** Google's proto name of a keyword in a place's path (`anyOf` → `any_of`). */
const protoName = (key: string): string => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)

function unknownKeywords(schema: unknown, path: string, out: string[]): void {
  if (Array.isArray(schema)) {
    schema.forEach((s, i) => unknownKeywords(s, `${path}[${i}]`, out))
    return
  }
  if (schema === null || typeof schema !== 'object') return
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (GEMINI_UNKNOWN_KEYWORDS.has(key)) {
      out.push(`Invalid JSON payload received. Unknown name "${key}" at '${path}': Cannot find field.`)
      continue
    }
    // the proto's `type` is one enum, its `items` one schema: a list (`["string", "null"]`, a tuple) is refused
    if ((key === 'type' || key === 'items') && Array.isArray(value)) {
      out.push(
        `Invalid JSON payload received. Unknown name "${key}" at '${path}': Proto field is not repeating, cannot start list.`,
      )
      continue
    }
    if (NAMED.has(key) && value !== null && typeof value === 'object')
      Object.values(value as Record<string, unknown>).forEach((v, i) =>
        unknownKeywords(v, `${path}.${protoName(key)}[${i}].value`, out),
      )
    else if (!DATA_KEYWORDS.has(key)) unknownKeywords(value, `${path}.${protoName(key)}`, out)
  }
}

/**
 * Quirk `gemini-schema`: Gemini's refusal of tool-schema keywords outside its subset, in Google's
 * words, one line each (`Invalid JSON payload received. Unknown name "$schema" at
 * 'tools[0].function_declarations[0].parameters': Cannot find field.`), and of a list where its
 * proto takes one value (`Unknown name "type" at '…properties[0].value': Proto field is not
 * repeating, cannot start list.`: a type list, a tuple's `items`). `schemas` are the
 * function declarations' schemas in order. Undefined when they hold none.
 */
export function geminiSchemaRefusal(schemas: readonly unknown[], quirks: Quirks): string | undefined {
  if (!quirks.has('gemini-schema')) return undefined
  const lines: string[] = []
  schemas.forEach((schema, i) =>
    unknownKeywords(schema, `tools[0].function_declarations[${i}].parameters`, lines),
  )
  return lines.length > 0 ? lines.join('\n') : undefined
}

/**
 * Quirk `vertex-no-ids`: Vertex AI's refusal of an `id` on a function call or a function response
 * (`Invalid JSON payload received. Unknown name "id" at 'contents[1].parts[0].function_call':
 * Cannot find field.`), one line each. Undefined when no part has one.
 */
export function callIdRefusal(contents: unknown, quirks: Quirks): string | undefined {
  if (!quirks.has('vertex-no-ids') || !Array.isArray(contents)) return undefined
  const lines: string[] = []
  contents.forEach((content: unknown, c) => {
    const parts = (content as {parts?: unknown} | null)?.parts
    if (!Array.isArray(parts)) return
    parts.forEach((part: unknown, p) => {
      for (const [key, name] of [
        ['functionCall', 'function_call'],
        ['functionResponse', 'function_response'],
      ] as const) {
        const inner = (part as Record<string, unknown> | null)?.[key]
        if (inner !== null && typeof inner === 'object' && 'id' in inner)
          lines.push(
            `Invalid JSON payload received. Unknown name "id" at 'contents[${c}].parts[${p}].${name}': Cannot find field.`,
          )
      }
    })
  })
  return lines.length > 0 ? lines.join('\n') : undefined
}

/**
 * `no-json-tools`: Gemini 2.0's and 2.5's 400 (status `INVALID_ARGUMENT`) for a request that offers
 * function declarations with `generationConfig.responseMimeType: application/json` (a JSON schema
 * or JSON mode beside tools: `codex exec --output-schema`), in Google's words. Gemini 3 takes the
 * two together. Undefined without declarations or without the JSON mime type.
 */
export function jsonWithToolsRefusal(
  body: Record<string, unknown>,
  declarations: number,
  quirks: Quirks,
): string | undefined {
  if (!quirks.has('no-json-tools') || declarations === 0) return undefined
  const config = body.generationConfig as {responseMimeType?: unknown} | undefined
  if (config?.responseMimeType !== 'application/json') return undefined
  return "Function calling with a response mime type: 'application/json' is unsupported"
}

// ---- thinking and efforts refused ----

/**
 * Ollama's Anthropic endpoint (`/v1/messages`), which reads `thinking.type: enabled` as thinking
 * on, `disabled` as off, and otherwise an `output_config.effort` as a thinking level: its refusal
 * under `ollama-no-think` (a model without thinking, any of them but off) and `ollama-think-value`
 * (Ollama before 0.12.x, a level), in its chat words (the message of its Anthropic error body).
 * Undefined when the request is one the model takes.
 */
export function ollamaMessagesThinkingRefusal(
  body: Record<string, unknown>,
  model: string,
  quirks: Quirks,
): string | undefined {
  if (!quirks.has('ollama-no-think') && !quirks.has('ollama-think-value')) return undefined
  const type = (body.thinking as {type?: unknown} | undefined)?.type
  const effort = (body.output_config as {effort?: unknown} | undefined)?.effort
  const level =
    type === 'enabled' || type === 'disabled'
      ? undefined
      : typeof effort === 'string' &&
          ['low', 'medium', 'high', 'max', 'xhigh'].includes(effort.trim().toLowerCase())
        ? effort.trim().toLowerCase().replace('xhigh', 'high')
        : undefined
  if (quirks.has('ollama-no-think') && (type === 'enabled' || level !== undefined))
    return `"${model}" does not support thinking`
  if (quirks.has('ollama-think-value') && level !== undefined)
    return `think value "${level}" is not supported for this model`
  return undefined
}

/**
 * `deepseek-effort-off`: DeepSeek's Anthropic endpoint, which refuses an `output_config.effort`
 * beside `thinking.type: disabled` (Claude Code 2.1.166 on, for its sub-agents: deepseek-ai/
 * DeepSeek-V3 #1397), in its OpenAI-shaped error body. Undefined when the request is one it takes.
 */
export function deepseekEffortRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
): {message: string; raw: unknown} | undefined {
  if (!quirks.has('deepseek-effort-off')) return undefined
  if ((body.thinking as {type?: unknown} | undefined)?.type !== 'disabled') return undefined
  if ((body.output_config as {effort?: unknown} | undefined)?.effort === undefined) return undefined
  const message = 'thinking options type cannot be disabled when reasoning_effort is set'
  return {
    message,
    raw: {error: {message, type: 'invalid_request_error', param: null, code: 'invalid_request_error'}},
  }
}

/**
 * A thinking form an Anthropic-compatible server that is not Anthropic's refuses, as its whole
 * error body: `minimax-thinking`, MiniMax-M3's Anthropic endpoint, to `thinking.type: enabled`
 * (`{"type":"error","error":{"type":"bad_request_error","message":"invalid params, invalid
 * thinking.type: \"enabled\" (allowed: adaptive, disabled) (2013)","http_code":"400"}}`,
 * cherry-studio #16431); `enum-thinking`, a relay whose zod schema knows only `enabled` and
 * `disabled`, to `adaptive` ("Invalid request: thinking.type: Invalid enum value. Expected
 * 'enabled' | 'disabled', received 'adaptive'", freellmapi #632); `pydantic-thinking`, a pydantic
 * schema without an `adaptive` member, to `adaptive` ("thinking.adaptive: Extra inputs are not
 * permitted"); `effort-levels`, a server that takes `output_config.effort` low, medium and high
 * only, to another (`xhigh`, `max`: "output_config.effort: Input should be 'low', 'medium' or
 * 'high'", in Anthropic's own wording for a value it does not know). Undefined when it takes the
 * request.
 */
export function messagesThinkingFormRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
): {message: string; raw: unknown} | undefined {
  const type = (body.thinking as {type?: unknown} | undefined)?.type
  if (quirks.has('minimax-thinking') && type === 'enabled') {
    const message = 'invalid params, invalid thinking.type: "enabled" (allowed: adaptive, disabled) (2013)'
    return {message, raw: {type: 'error', error: {type: 'bad_request_error', message, http_code: '400'}}}
  }
  if (quirks.has('enum-thinking') && type === 'adaptive') {
    const message =
      "Invalid request: thinking.type: Invalid enum value. Expected 'enabled' | 'disabled', received 'adaptive'"
    return {message, raw: {type: 'error', error: {type: 'invalid_request_error', message}}}
  }
  if (quirks.has('pydantic-thinking') && type === 'adaptive') {
    const message = 'thinking.adaptive: Extra inputs are not permitted'
    return {message, raw: {type: 'error', error: {type: 'invalid_request_error', message}}}
  }
  const effort = (body.output_config as {effort?: unknown} | undefined)?.effort
  if (
    quirks.has('effort-levels') &&
    effort !== undefined &&
    !['low', 'medium', 'high'].includes(String(effort))
  ) {
    const message = "output_config.effort: Input should be 'low', 'medium' or 'high'"
    return {message, raw: {type: 'error', error: {type: 'invalid_request_error', message}}}
  }
  return undefined
}

/** `zai-always-thinks`: the efforts GLM-5.3 takes on Z.AI's standard route. */
const ZAI_EFFORTS = ['low', 'high', 'max']

/**
 * `tool-choice-auto-only` on the Messages endpoint: DeepSeek's and Kimi's Anthropic endpoints,
 * whose models think by default and refuse a forced `tool_choice` (`any`, `tool`) unless
 * `thinking.type` is `disabled`: Kimi's (`kimi*`) "tool_choice 'specified' is incompatible with
 * thinking enabled" (`'required'` for `any`), in Anthropic's error body; DeepSeek's (any other
 * name) "deepseek-reasoner does not support this tool_choice", which it says for
 * `deepseek-v4-pro` too (deepseek-ai/awesome-deepseek-integration #598, #606), in its
 * OpenAI-shaped body. Undefined when the request is one it takes.
 */
export function messagesToolChoiceRefusal(
  body: Record<string, unknown>,
  model: string,
  quirks: Quirks,
): {message: string; raw: unknown} | undefined {
  if (!quirks.has('tool-choice-auto-only')) return undefined
  const type = (body.tool_choice as {type?: unknown} | undefined)?.type
  if (type !== 'any' && type !== 'tool') return undefined
  if ((body.thinking as {type?: unknown} | undefined)?.type === 'disabled') return undefined
  if (/^kimi/i.test(model)) {
    const message = `tool_choice '${type === 'any' ? 'required' : 'specified'}' is incompatible with thinking enabled`
    return {message, raw: {type: 'error', error: {type: 'invalid_request_error', message}}}
  }
  const message = 'deepseek-reasoner does not support this tool_choice'
  return {
    message,
    raw: {error: {message, type: 'invalid_request_error', param: null, code: 'invalid_request_error'}},
  }
}

/**
 * `kimi-enabled-only` on the Messages endpoint: Kimi's Anthropic endpoints (Kimi Code's
 * `api.kimi.com/coding`, Moonshot's `/anthropic`) for a model that thinks always (K2.7 Code,
 * kimi-for-coding), in Anthropic's error body: a `thinking.type` that turns thinking off
 * (`disabled`, `between_tools`) gets Kimi's "invalid thinking: only type=enabled is allowed for this
 * model" (MoonshotAI/Kimi-K2 #141, can1357/oh-my-pi #3852); a forced `tool_choice` (`any`, `tool`)
 * "tool_choice 'required' is incompatible with thinking enabled" (`'specified'` for a named tool),
 * with any thinking; `enabled` with a budget under 1 024, or not under `max_tokens`, Anthropic's
 * words for its rules. No thinking, `adaptive` and `enabled` within the rules are taken. Undefined
 * when it takes the request.
 */
export function kimiEnabledOnlyRefusal(
  body: Record<string, unknown>,
  quirks: Quirks,
): {message: string; raw: unknown} | undefined {
  if (!quirks.has('kimi-enabled-only')) return undefined
  const thinking = body.thinking as {type?: unknown; budget_tokens?: unknown} | undefined
  const type = (body.tool_choice as {type?: unknown} | undefined)?.type
  const budget = thinking?.type === 'enabled' ? Number(thinking.budget_tokens) : undefined
  const message =
    thinking?.type === 'disabled' || thinking?.type === 'between_tools'
      ? 'invalid thinking: only type=enabled is allowed for this model'
      : type === 'any' || type === 'tool'
        ? `tool_choice '${type === 'any' ? 'required' : 'specified'}' is incompatible with thinking enabled`
        : budget !== undefined && !(budget >= 1024)
          ? 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024'
          : budget !== undefined && !(budget < Number(body.max_tokens))
            ? '`max_tokens` must be greater than `thinking.budget_tokens`'
            : undefined
  return message === undefined
    ? undefined
    : {message, raw: {type: 'error', error: {type: 'invalid_request_error', message}}}
}

/**
 * `reasoning-content-required` on the Messages endpoint: DeepSeek's and Kimi's Anthropic
 * endpoints, whose models think unless `thinking.type` is `disabled`, refuse an assistant tool-call
 * turn without a thinking block in the history: DeepSeek's (`deepseek*`) "The `content[].thinking`
 * in the thinking mode must be passed back to the API." in its OpenAI-shaped body (claude-code
 * #62995), which checks only that a block is there (an empty one, unsigned, is taken); Kimi's (any
 * other name) "thinking is enabled but reasoning_content is missing in assistant tool call message
 * at index N" (cc-switch #3219), in Anthropic's error body. Undefined when it takes the request.
 */
export function messagesThinkingHistoryRefusal(
  body: Record<string, unknown>,
  model: string,
  quirks: Quirks,
): {message: string; raw: unknown} | undefined {
  if (!quirks.has('reasoning-content-required') || !Array.isArray(body.messages)) return undefined
  if ((body.thinking as {type?: unknown} | undefined)?.type === 'disabled') return undefined
  const at = (body.messages as Array<Record<string, unknown> | null>).findIndex((m) => {
    if (m?.role !== 'assistant' || !Array.isArray(m.content)) return false
    const blocks = m.content as Array<{type?: unknown} | null>
    return (
      blocks.some((b) => b?.type === 'tool_use') &&
      !blocks.some((b) => b?.type === 'thinking' || b?.type === 'redacted_thinking')
    )
  })
  if (at < 0) return undefined
  if (/^deepseek/i.test(model)) {
    const message = 'The `content[].thinking` in the thinking mode must be passed back to the API.'
    return {
      message,
      raw: {error: {message, type: 'invalid_request_error', param: null, code: 'invalid_request_error'}},
    }
  }
  const message = `thinking is enabled but reasoning_content is missing in assistant tool call message at index ${at}`
  return {message, raw: {type: 'error', error: {type: 'invalid_request_error', message}}}
}

/** The efforts Ollama 0.32 maps (ollama/ollama #17252): Codex's `xhigh` and `minimal` are not among them. */
const OLLAMA_EFFORTS = ['high', 'medium', 'low', 'max', 'none']

/**
 * `ollama-effort`: Ollama's refusal of an effort it does not map, in its words, the message of its
 * `/v1` error body, on chat (`reasoning_effort`) and Responses (`reasoning.effort`) alike:
 * `invalid reasoning value: "xhigh" (must be "high", "medium", "low", "max", or "none")`. Undefined
 * for an effort it takes, or none.
 */
export function ollamaEffortRefusal(effort: unknown, quirks: Quirks): string | undefined {
  if (!quirks.has('ollama-effort') || typeof effort !== 'string' || OLLAMA_EFFORTS.includes(effort))
    return undefined
  return `invalid reasoning value: "${effort}" (must be "high", "medium", "low", "max", or "none")`
}

/**
 * `pydantic-effort`: SGLang's 400 for a `reasoning_effort` outside its schema's literal (low,
 * medium, high), its pydantic error as Python writes it, twice (CLIProxyAPI #1572), in its error
 * body (`"type": "Bad Request"`, `"code": 400`). Undefined for an effort it takes, or none.
 */
function pydanticEffortRefusal(
  effort: unknown,
  quirks: Quirks,
): {status: number; message: string; raw: unknown} | undefined {
  if (!beyondLowToHigh('pydantic-effort', effort, quirks)) return undefined
  const error = `{'type': 'literal_error', 'loc': ('body', 'reasoning_effort'), 'msg': "Input should be 'low', 'medium' or 'high'", 'input': '${effort}', 'ctx': {'expected': "'low', 'medium' or 'high'"}}`
  const message = `1 validation error:\n  ${error}\n\n  File "/sgl-workspace/sglang/python/sglang/srt/entrypoints/http_server.py", line 1324, in openai_v1_chat_completions\n    POST /v1/chat/completions [${error}]`
  return {status: 400, message, raw: {object: 'error', message, type: 'Bad Request', param: null, code: 400}}
}

/**
 * A chat server's refusal of how a request asked its model to think, as the status and whole
 * error body it answers with:
 * - `ollama-no-think`: Ollama's model without thinking, to a `reasoning_effort` ("\"llama3.1:8b\"
 *   does not support thinking"); `ollama-think-value`, Ollama before 0.12.x, to a level the model
 *   does not take ("think value \"medium\" is not supported for this model", type `api_error`);
 * - `tools-effort-none`: gpt-5.6 beside function tools, unless `reasoning_effort` is `"none"` (an
 *   effort left out is refused too); `tools-no-effort`: gpt-5.4 and 5.5, which take tools only
 *   without one;
 * - `xai-params`: xAI's refusal of `reasoningEffort` (and of `stop`, which its reasoning models
 *   take none of), `{code, error}` with the field in camelCase;
 * - `ollama-effort`, `pydantic-effort`: an effort outside Ollama's (high, medium, low, max, none)
 *   in its words; outside SGLang's literal (low, medium, high) in pydantic's;
 * - `dashscope-thinking`: DashScope's Qwen3, which thinks unless told not to and refuses a
 *   non-stream request without `enable_thinking: false`;
 * - `zai-always-thinks`: Z.AI's GLM-5.3, which always thinks: `thinking.type: disabled`, or a
 *   `reasoning_effort` other than `low`, `high` and `max`, gets its 1210 (`{"error":{"code":"1210",
 *   "message":"This model always engages in thinking and cannot be disabled; please use low, high,
 *   or max"}}`; hermes-agent PR #97286).
 * Undefined when the request is one the model takes.
 */
export function thinkingRefusal(
  body: Record<string, unknown>,
  model: string,
  quirks: Quirks,
): {status: number; message: string; raw: unknown} | undefined {
  const effort = body.reasoning_effort
  const openai = (message: string, type = 'invalid_request_error', param: string | null = null) => ({
    status: 400,
    message,
    raw: {error: {message, type, param, code: null}},
  })
  if (quirks.has('ollama-no-think') && effort !== undefined)
    return openai(`"${model}" does not support thinking`)
  if (quirks.has('ollama-think-value') && typeof effort === 'string')
    return openai(`think value "${effort}" is not supported for this model`, 'api_error')
  const ollamaEffort = ollamaEffortRefusal(effort, quirks)
  if (ollamaEffort) return openai(ollamaEffort)
  const pydantic = pydanticEffortRefusal(effort, quirks)
  if (pydantic) return pydantic
  const tools = Array.isArray(body.tools) && body.tools.length > 0
  if (
    tools &&
    ((quirks.has('tools-effort-none') && effort !== 'none') ||
      (quirks.has('tools-no-effort') && effort !== undefined))
  )
    return openai(
      quirks.has('tools-effort-none')
        ? `Function tools with reasoning_effort are not supported for ${model} in /v1/chat/completions. To use function tools, use /v1/responses or set reasoning_effort to 'none'.`
        : `Function tools with reasoning_effort are not supported for ${model} in /v1/chat/completions. Please use /v1/responses instead.`,
      'invalid_request_error',
      'reasoning_effort',
    )
  const xai = xaiRefusal(model, quirks, effort !== undefined, body.stop !== undefined)
  if (xai) return xai
  if (
    quirks.has('zai-always-thinks') &&
    ((body.thinking as {type?: unknown} | undefined)?.type === 'disabled' ||
      (effort !== undefined && !ZAI_EFFORTS.includes(String(effort))))
  ) {
    const message =
      'This model always engages in thinking and cannot be disabled; please use low, high, or max'
    return {status: 400, message, raw: {error: {code: '1210', message}}}
  }
  if (quirks.has('dashscope-thinking') && body.stream !== true && body.enable_thinking !== false) {
    return dashscopeRefusal('parameter.enable_thinking must be set to false for non-streaming calls')
  }
  return undefined
}

/**
 * `xai-params`: xAI's 400 for a parameter its model takes none of, the field in camelCase
 * (`reasoningEffort`: chat's `reasoning_effort`, a Responses `reasoning.effort`; `stop`).
 */
export function xaiRefusal(
  model: string,
  quirks: Quirks,
  effort: boolean,
  stop: boolean,
): {status: number; message: string; raw: unknown} | undefined {
  if (!quirks.has('xai-params') || (!effort && !stop)) return undefined
  const message = `Model ${model} does not support parameter ${effort ? 'reasoningEffort' : 'stop'}.`
  return {status: 400, message, raw: {code: 'Client specified an invalid argument', error: message}}
}

/**
 * Quirks `tool-cap-128` and `tool-cap-512`: a model that takes at most that many tools, refusing
 * `count` more in its family's words, as the status and whole error body: OpenAI's on chat
 * completions and Responses ("Invalid 'tools': array too long. Expected an array with maximum
 * length 128, but got an array with length 140 instead.", `code: array_above_max_length`), Kimi's
 * on Messages (its Anthropic endpoint: "a max of 128 tools can be supported"), Gemini's on Gemini
 * (function declarations: "At most 512 function declarations can be specified."). Undefined when
 * they fit.
 */
export function toolCapRefusal(
  family: 'chat' | 'responses' | 'messages' | 'gemini',
  count: number,
  quirks: Quirks,
): {status: number; message: string; raw: unknown} | undefined {
  const cap = quirks.has('tool-cap-128') ? 128 : quirks.has('tool-cap-512') ? 512 : undefined
  if (cap === undefined || count <= cap) return undefined
  if (family === 'gemini') {
    const message = `* GenerateContentRequest.tools[0].function_declarations: [FIELD_INVALID] At most ${cap} function declarations can be specified.\n`
    return {status: 400, message, raw: {error: {code: 400, message, status: 'INVALID_ARGUMENT'}}}
  }
  if (family === 'messages') {
    const message = `a max of ${cap} tools can be supported`
    return {status: 400, message, raw: {error: {message, type: 'invalid_request_error'}}}
  }
  const message = `Invalid 'tools': array too long. Expected an array with maximum length ${cap}, but got an array with length ${count} instead.`
  return {
    status: 400,
    message,
    raw: {error: {message, type: 'invalid_request_error', param: 'tools', code: 'array_above_max_length'}},
  }
}
