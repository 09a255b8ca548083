/**
 * What a translated upstream refused, learned from its 400 and kept per provider and model, so
 * that the request goes again without it at once and the next requests go without it from the
 * start. A translation sends fields the client never wrote for that upstream: a `reasoning_effort`
 * (Responses: `reasoning`) made from Claude Code's thinking or effort, which OpenAI's models
 * without reasoning (gpt-4.1, gpt-4o) refuse; `max_tokens`, which its reasoning models refuse for
 * `max_completion_tokens`; a `temperature` or `top_p` they take only at 1; Claude Code's
 * `max_tokens` of 32 000-64 000, which DeepSeek refuses above 8 192 ("the valid range of
 * max_tokens is [1, 8192]"): capped at the limit the error states; a `reasoning_effort` value the
 * model does not take (o3 and `minimal`), sent as the nearest the error lists; a JSON schema
 * DeepSeek refuses (it has JSON mode only), sent as JSON mode with the schema in the system
 * prompt, and JSON mode refused too, as that instruction alone; a Gemini thinking budget Gemini
 * 2.5 Pro refuses (0: it cannot turn thinking off); a `max_tokens` above a Claude model's output
 * limit, capped at the one Anthropic's error states; tool-call ids Mistral or OpenAI refuse the
 * shape of, Mistral's refusal of a user message right after tool results, and the reasoning of
 * earlier turns in a field a server does not take back (conversation-rules.ts: the history held to
 * the upstream's rules, each rewrite named by the refusal); thinking asked of an Ollama model
 * without it, an effort beside function tools (gpt-5.6 takes only `"none"` there), xAI's
 * camelCase refusal of `reasoningEffort`, DashScope's of thinking in a non-stream call, a
 * maximum below the fewest output tokens a server takes, a forced `tool_choice` refused in
 * thinking mode (sent with thinking off, or as `auto` with the call asked for in words), Codex's
 * tool shapes refused by a Responses server that is not OpenAI's (plain-tools.ts), and more tools
 * than a model takes (its stated cap: the client's first ones go, ../../protocols/tool-cap.ts),
 * and a top-level field of a Responses body passed through (Codex 0.155's `access_programs`) that a
 * strict server does not know (any but those its answer depends on: `RESPONSES_NEEDED`), or a member
 * of its input items (`input[2].status`); a top-level field of a Messages body passed through
 * (Claude Code's `diagnostics`, `speed`...) or a member of its tools (`eager_input_streaming`) that
 * a strict host fronting Claude does not know (`MESSAGES_NEEDED`, `TOOL_NEEDED`), and the fields of
 * a beta refused (`BETA_FIELDS`).
 * Only these optional fields are ever dropped, renamed, capped or changed, and only when the
 * upstream's error names one that was sent; anything else (a 400 about the conversation, a field
 * the answer depends on) reaches the client
 * as before. Kept in memory (lost on restart: the first request after it learns again), at most
 * {@link MAX_TARGETS} targets.
 */
import type {ImagePart, RefusedMedia, Request} from '../../protocols/ir.js'
import {upstreamErrorMessage} from '../../protocols/errors.js'
import type {ThoughtSignatureField} from '../../protocols/conversation-rules.js'
import {INPUT_ITEM_REQUIRES} from '../../protocols/responses-input.js'
import {
  chatThinkingIsOff,
  nameLevel,
  takesThinkingLevel,
  thinkingOffFields,
} from '../../protocols/thinking-off.js'
import type {GeminiThinkingSent, SentRequest, UpstreamAdaptation} from '../../protocols/translate.js'
import type {Family} from '../../store/schema.js'
import {refusesCacheTtl} from './cache-ttl.js'
import {refusesDeferredTools} from './tool-search.js'
import {
  refusesCodexLite,
  refusesOpenAiToolShapes,
  refusesReasoningTextLoss,
  refusesEmptyDescription,
  refusesStoreFalse,
} from './plain-tools.js'

/**
 * Chat sampling settings a chat client sends by default (Kilo's penalties) that a strict server
 * refuses (NVIDIA NIM's 422 "body -> presence_penalty  Extra inputs are not permitted",
 * Kilo-Org/kilocode #9652; OpenAI's reasoning models): the model then samples as its server does.
 * None changes the answer's shape. Learned from a message only in words of a refusal.
 */
const SAMPLING_FIELDS = [
  'presence_penalty',
  'frequency_penalty',
  'repetition_penalty',
  'seed',
  'top_k',
  'min_p',
  'logit_bias',
] as const

/**
 * Top-level fields a translated chat or Responses request may go without, or with another name,
 * when refused. A Responses `reasoning` is refused by its part (`reasoning.effort`, from OpenAI's
 * models without reasoning), `include` by its item.
 */
const ADAPTABLE = [
  'reasoning_effort',
  'max_tokens',
  'max_completion_tokens',
  'temperature',
  'top_p',
  'parallel_tool_calls',
  'user',
  'reasoning',
  'include',
  // a server that refuses it streams without usage: the log row then has none
  'stream_options',
  // Messages: the effort of adaptive thinking, which a server without it refuses (the model's
  // default effort then)
  'output_config',
  // chat: a model's own switch of thinking off, sent by its name for a request that asked for
  // none (chat.ts `thinkingOffFields`), which a proxy with its own schema, or Qwen3 off DashScope,
  // may not take: the model then thinks as it would have (never a Messages upstream's `thinking`,
  // which its request depends on: `chatOnly`)
  'thinking',
  'enable_thinking',
  // chat: DashScope's ask to keep earlier turns' reasoning in the model's input (chat.ts
  // `preservedThinkingFields`), which a relay in front of it may not take: the reasoning of earlier
  // turns is then dropped, as before (Z.AI's and Moonshot's go in `thinking`, above)
  'preserve_thinking',
  // chat: the same switch as a chat template's argument, sent to a server on this machine or the
  // local network (vLLM, SGLang, llama.cpp); one that refuses it (a relay with its own schema)
  // goes without: the model thinks as it would have. Learned from a translated request only: a
  // chat client's own `chat_template_kwargs`, passed through, is its to keep (`chatOnly`)
  'chat_template_kwargs',
  // Responses: the cache's routing key, which a server of other models behind the API refuses
  // (Azure Foundry's "Unrecognized request argument supplied: prompt_cache_key", NVIDIA NIM's
  // "Unsupported parameter(s): prompt_cache_key"): the cache then matches by the prefix alone
  'prompt_cache_key',
  ...SAMPLING_FIELDS,
  // chat: GPT-5's verbosity, sent to OpenAI's own API only, which refuses it for its older models
  // ("Unsupported parameter: 'verbosity' is not supported with this model.", param `verbosity`):
  // the model's own length then
  'verbosity',
  // chat: Z.AI's ask to stream a tool call's arguments (GLM-4.6 on, chat.ts; a chat client's
  // passed through, ./proxy.ts), which a relay in front of it may not take: the arguments then
  // come whole at the end of the call, as before
  'tool_stream',
] as const

/**
 * The fields of {@link ADAPTABLE} a request cannot go without: a Messages upstream's `thinking`;
 * a chat client's own `chat_template_kwargs` passed through (`stream` is said only of a body passed
 * through: translate.ts `sentOfPassedChat`), which only the gateway's own may be learned away.
 */
const chatOnly = (field: string, sent: SentRequest): boolean =>
  (field === 'thinking' && sent.upstream === 'messages') ||
  (field === 'chat_template_kwargs' && sent.stream !== undefined)

/**
 * The top-level fields of a Responses body passed through (Codex's) that its answer depends on: a
 * refusal that names one as unknown is the client's to see, never learned away
 * ({@link unknownResponsesFields}). Any other field such a body sent (Codex 0.155's
 * `access_programs`, its `client_metadata`, `service_tier`, `prompt_cache_key`, `include`,
 * `store`...) a strict server may refuse as one it does not know, and the request then goes
 * without it.
 */
const RESPONSES_NEEDED: readonly string[] = [
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'stream',
  // its `format` (a JSON schema: `codex exec --output-schema`)
  'text',
  'previous_response_id',
  'conversation',
  'prompt',
  'background',
]

/**
 * A server's words for a field it does not know, the field's name right after them: OpenCode Go's
 * "unknown parameter `access_programs`" (lidge-jun/opencodex #4853), OpenAI's "Unknown parameter:
 * 'x'.", serde's "unknown field `x`, expected one of ...", Go's `json: unknown field "x"`, zod's
 * "Unrecognized key(s) in object: 'x'" and "Unrecognized key: \"x\"", "Unsupported parameter:
 * 'x'". A name followed by a dot or a bracket is a part of a field (`reasoning.effort`): no match.
 */
const UNKNOWN_FIELD =
  /\b(?:unknown|unrecogni[sz]ed|unsupported|unexpected)\s+(?:request\s+)?(?:parameter|param|field|argument|key|property)s?(?:\(s\))?(?:\s+supplied|\s+in object)?\s*:?\s*[`'"]?([A-Za-z_][\w-]{0,63})[`'"]?(?![\w.[-])/gi

/**
 * The places a refusal's words for a field it does not know name ({@link UNKNOWN_FIELD}, a strict
 * server's list, {@link LISTS_FIELDS}), each with the path the validator wrote for them where that
 * path starts at a field the request sent (`fields`): before the words (zod 3's "tools.0:
 * Unrecognized key(s) in object: 'eager_input_streaming'" names a member of a tool,
 * "messages.0.content.0: Unrecognized key(s) in object: 'speed'" a member inside the conversation,
 * `messages.0.content.0.speed`, never the top-level field of that name) or after them
 * ({@link PATH_AFTER}: zod 4's `prettifyError`, zod-validation-error's); another word before them is
 * a prefix of the message, not a place ("litellm.BadRequestError: Unknown parameter: speed").
 * `words` without the request's echoes ({@link withoutEchoes}).
 */
function unknownNamed(words: string, fields: readonly string[]): string[] {
  /** The place of `name`, named by the words between `index` and `end`. */
  const at = (index: number, end: number, name: string): string => {
    const after = PATH_AFTER.exec(words.slice(end, end + 480))
    const path =
      after !== null
        ? (after[1] ?? after[2])
        : /([A-Za-z_][\w.[\]]{0,160})\s*:\s*$/.exec(words.slice(Math.max(0, index - 170), index))?.[1]
    return path !== undefined && fields.includes(/^\w*/.exec(path)![0])
      ? `${path.replace(/\[(\d+)\]/g, '.$1')}.${name}`
      : name
  }
  const named = [...words.matchAll(UNKNOWN_FIELD)].map((m) => at(m.index, m.index + m[0].length, m[1]))
  const listed = LISTS_FIELDS.exec(words)
  if (listed) {
    // (zod-validation-error's path after the list: `'speed', 'diagnostics' at "messages[1]"`)
    const [list] = listed[1].split(/\s+at\s+"/)
    const end = listed.index + listed[0].length - listed[1].length + list.length
    named.push(
      ...list
        .split(/[\s,`'"]+/)
        .filter(Boolean)
        .map((n) => at(listed.index, end, n)),
    )
  }
  return named
}

/**
 * A validator's path written after its words for a field it does not know: zod-validation-error's
 * `Unrecognized key(s) in object: 'speed' at "messages[1].content[0]"` (1), zod 4's `prettifyError`,
 * the issue's path on the line after its words, "✖ Unrecognized key: \"eager_input_streaming\"\n  →
 * at tools[0]" (2). Read from the end of the words.
 */
const PATH_AFTER = /^\s*at\s+"([^"\n]{1,160})"|^[^\n]{0,300}\n[ \t]*→ at ([^\s]{1,160})/

/** Pydantic's plain-text refusal of a field: its name on a line of its own, then its words. */
const PYDANTIC_EXTRA = /^([A-Za-z_]\w{0,63})\s*\n\s+Extra inputs are not permitted/gm

/**
 * The top-level fields of a Responses body passed through (`sent`: its fields) that an upstream's
 * refusal names as fields it does not know ({@link UNKNOWN_FIELD}, FastAPI's `extra_forbidden`
 * list, a strict server's list after "Unrecognized request argument supplied:", pydantic's plain
 * text, an error whose `param` is the field with such words): undefined when it names none that
 * was sent, or one the request cannot go without ({@link RESPONSES_NEEDED}: nothing is learned,
 * the client sees the refusal).
 */
export function unknownResponsesFields(errorText: string, sent: readonly string[]): string[] | undefined {
  const judge = (names: readonly string[]): string[] | undefined => {
    const named = [...new Set(names.filter((n) => sent.includes(n)))]
    if (named.length === 0 || named.some((n) => RESPONSES_NEEDED.includes(n))) return undefined
    return named
  }
  const extras = extraFields(errorText)
  if (extras.length > 0) return extras.length === judge(extras)?.length ? extras : undefined
  const {param, message} = errorParts(errorText)
  // (field names in an echo of the request are the client's words, not what was refused)
  const words = withoutEchoes(message)
  const pydantic = [...words.matchAll(PYDANTIC_EXTRA)].map((m) => m[1])
  if (pydantic.length > 0) return judge(pydantic)
  if (ECHOES_INPUT.test(message)) return undefined
  const named = unknownNamed(words, sent)
  if (named.length > 0) return judge(named)
  // a bare `param` beside words for a field it does not know, never for a value it does not take
  // ("Invalid value for 'service_tier': 'flex' is not supported", "... is unsupported when tools is
  // empty": the field stays, its value is the client's)
  if (
    typeof param === 'string' &&
    /^[A-Za-z_]\w*$/.test(param) &&
    REFUSES.test(words) &&
    !/^\s*(?:invalid|unsupported) value\b|\bwhen\b/i.test(message)
  )
    return judge([param])
  return undefined
}

/**
 * What a refusal of a Responses body passed through (Codex's) teaches: its reasoning's effort (a
 * value the model does not take, or the effort itself) or summary refused
 * ({@link passedReasoningRefusal}), and the top-level fields it does not know
 * ({@link unknownResponsesFields}), which its requests go without from then on (`drop`, cut out of
 * the bytes: ./top-fields.ts). Nothing else is read from such a refusal here (its tool shapes,
 * `store`, the order of its outputs have rules of their own: ./plain-tools.ts).
 */
function passedResponsesRefusal(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
  status: number,
): {next: UpstreamAdaptation; note: string} | undefined {
  if (status !== 400 && status !== 422) return undefined
  if (sent.fields.includes('reasoning')) {
    const reasoning = passedReasoningRefusal(errorText, sent, known)
    if (reasoning) return reasoning
  }
  const program = notEnabledResponsesField(errorText, sent, known)
  if (program) return program
  const fields = unknownResponsesFields(errorText, sent.fields)
  if (fields === undefined)
    return sent.fields.includes('input') ? inputMemberRefusal(errorText, sent, known) : undefined
  return {
    next: {...known, drop: [...new Set([...(known.drop ?? []), ...fields])]},
    note: `refused ${fields.join(', ')} (a field it does not know): sent again without ${fields.length > 1 ? 'them' : 'it'}`,
  }
}

/**
 * OpenAI's refusal of a field the organization is not entitled to, by a part of it: "The
 * access_programs parameter is not enabled for this organization." (`param:
 * access_programs.cyber`, `code: unsupported_parameter`; vm0-ai/vm0 #35465), to Codex's
 * `access_programs` on every turn with another organization's key. No field it does not know
 * ({@link unknownResponsesFields}), but the request cannot go with it: `access_programs` goes
 * (`drop`, as a field it does not know), when the body sent it and the param is that field or a
 * part of it. Only that field, the one these words have named on the wire (openai/codex #46398,
 * #46481): the same words of `store`, `include` or `service_tier` would drop what the user
 * chose (without Codex's `store: false` OpenAI keeps the response; without `include`, Codex loses
 * its reasoning's `encrypted_content`), so they stay the client's to see. Undefined for other
 * words.
 */
function notEnabledResponsesField(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  if (!errorText.includes('not enabled for this organization')) return undefined
  const {param, message} = errorParts(errorText)
  const named = 'access_programs'
  if (!/\baccess_programs parameter is not enabled for this organization/i.test(message)) return undefined
  if (typeof param !== 'string' || (param !== named && !param.startsWith(`${named}.`))) return undefined
  if (!sent.fields.includes(named)) return undefined
  return {
    next: {...known, drop: [...new Set([...(known.drop ?? []), named])]},
    note: `refused ${named} (not enabled for this organization): sent again without it`,
  }
}

/**
 * The members of a Responses input item its answer depends on: a refusal of one by its place is the
 * client's to see ({@link inputMemberRefusal}), as is one of a member its item's type requires
 * (`INPUT_ITEM_REQUIRES`: a `web_search_call`'s `status`). Any other (an item's `status`, which the
 * OpenAI SDK sends back on output items and ChatGPT's Codex backend refuses) goes from every input
 * item of the type refused.
 */
const INPUT_ITEM_NEEDED: readonly string[] = [
  'type',
  'role',
  'content',
  'id',
  'call_id',
  'name',
  'arguments',
  'input',
  'output',
  'encrypted_content',
  'summary',
  'action',
  'namespace',
]

/**
 * What a Responses server's refusal of a member of an input item teaches a body passed through:
 * OpenAI's "Unknown parameter: 'input[2].status'." with `param: input[2].status` (ChatGPT's Codex
 * backend to the OpenAI SDK's continuation, zyycn/codex-proxy-rs #194; a Lite endpoint's refusal of
 * `status` on reasoning items), pydantic's "input.2.status: Extra inputs are not permitted": that
 * member goes from every input item of the refused item's type from then on (`inputMembers`, by
 * type, cut out of the bytes: ./top-fields.ts `withoutItemMembers`); another type's refusal of it is
 * learned when it comes. Undefined for any other words, an item the request did not send with that
 * member (`sent.inputItems`), or a member the item needs ({@link INPUT_ITEM_NEEDED},
 * `INPUT_ITEM_REQUIRES` for its type).
 */
function inputMemberRefusal(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  const {param, message: said} = errorParts(errorText)
  // (not in a validator's echo of the request: an item's text may name any place)
  const message = withoutEchoes(said)
  const place = /^input\[(\d+)\]\.([A-Za-z_]\w{0,63})$/.exec(typeof param === 'string' ? param : '')
  const named =
    place !== null && REFUSES.test(message)
      ? place
      : (/\b(?:unknown|unrecogni[sz]ed) parameter\W{1,3}input\[(\d+)\]\.([A-Za-z_]\w{0,63})(?![\w.[])/i.exec(
          message,
        ) ?? /(?<![\w.])input\.(\d+)\.([A-Za-z_]\w{0,63}):\s*Extra inputs are not permitted/i.exec(message))
  if (!named) return undefined
  const [, at, member] = named
  const item = sent.inputItems?.[Number(at)]
  if (item === undefined || !item.members.includes(member)) return undefined
  const {type} = item
  const learned = known.inputMembers?.[type] ?? []
  if (
    INPUT_ITEM_NEEDED.includes(member) ||
    INPUT_ITEM_REQUIRES[type]?.includes(member) ||
    learned.includes(member)
  )
    return undefined
  return {
    next: {...known, inputMembers: {...known.inputMembers, [type]: [...learned, member]}},
    note: `refused ${member} on its ${type} input items: sent again without it`,
  }
}

/**
 * The top-level fields of a Messages body passed through (Claude Code's) that its answer depends
 * on: a refusal that names one is the client's to see ({@link passedMessagesFields}); so is one of
 * `thinking` (its own rules: a model without it), of a structured output's schema (`output_format`)
 * or of what runs tools (`container`, `mcp_servers`). Any other field Claude Code sends (its
 * `diagnostics`, `fallbacks`, `fallback_credit_token`, `speed`, `context_management`, `metadata`,
 * and those it adds next) a strict host may refuse, and the request then goes without it.
 */
const MESSAGES_NEEDED: readonly string[] = [
  'model',
  'messages',
  'max_tokens',
  'system',
  'tools',
  'tool_choice',
  'stream',
  'thinking',
  'stop_sequences',
  'output_format',
  'container',
  'mcp_servers',
]

/**
 * The members of a Messages tool its call depends on (its name, schema, description, type), and
 * those with a rule of their own (`defer_loading`: ./tool-search.ts; `cache_control`: the prompt
 * cache's marks): never cut for a refusal ({@link passedMessagesFields}).
 */
const TOOL_NEEDED: readonly string[] = [
  'name',
  'type',
  'input_schema',
  'description',
  'defer_loading',
  'cache_control',
]

/** Anthropic's (pydantic's) words for a field it does not know, its place before them: `tools.0.custom.eager_input_streaming: Extra inputs are not permitted`. */
const EXTRA_AT = /(?<![\w.[\]])([A-Za-z_][\w.]{0,160}?)\s*:\s*Extra inputs are not permitted/gi

/** Pydantic's plain text: the place on a line of its own, the words on the next. */
const EXTRA_AT_LINE = /^([A-Za-z_][\w.]{0,160})\s*\n\s+Extra inputs are not permitted/gm

/**
 * A validator's echoes of the request's input in its refusal, where the client's own text may say
 * anything, each by the words that open it and those that close it: pydantic's `input_value=` up
 * to its `, input_type=` ("Input should be a valid list [type=list_type, input_value='why: speed:
 * Extra inputs are not permitted', input_type=str]"), serde's quoted value (`invalid type: string
 * "…", expected a sequence`, "unknown variant `…`, expected one of …"), AWS's ("1 validation error
 * detected: Value '…' at 'messages.1.member.content' failed to satisfy constraint", Bedrock's
 * envelope) and zod 3's (`received '…'`, an enum's). A Python repr and a Rust Debug string hold no
 * raw newline (`escapes`), so such an echo runs to the last of its closing words on its line, or to
 * the line's end: the validator's own close is the last on the line, whatever the text quoted says
 * (a quote, `', input_type=str]`). AWS and zod write the text as it came, line breaks and all: their
 * echo runs to the last of its closing words in the whole message, or to its end (a pasted log's
 * "diagnostics: Extra inputs are not permitted" on a line of its own inside `Value '…'` is the
 * client's). What is cut is the client's or lost: a message that echoes so is a refusal of the
 * input already, and a refusal not read is the client's to see, one misread is learned for good.
 */
const ECHOES: ReadonlyArray<readonly [opener: RegExp, closer: string, escapes: boolean]> = [
  [/input_value=/g, ', input_type=', true],
  [/\binvalid (?:type|value): string \\*"/g, '", expected', true],
  [/\bunknown variant `/g, '`, expected', true],
  [/\bValue '/g, "' at '", false],
  [/\breceived '/g, "'", false],
]

/** FastAPI's `"input":` member (JSON, JSON quoted in a message, Python's repr of the list: `'input':`). */
const JSON_ECHO = /\\*["']input\\*["']\s*:/

/**
 * `text` with each echo that `opener` starts cut out up to the last `closer` on its line, or in
 * the whole text where the validator `escapes` no line break ({@link ECHOES}). Each search for the
 * closer runs between the echo's start and that end only, and the next echo is looked for past
 * where this one was cut: an error body is read whole, and a search back to the text's start for
 * each line (a pasted log of 25,000 lines each opening an echo) would hold the daemon for minutes.
 */
function cutEchoes(text: string, opener: RegExp, closer: string, escapes: boolean): string {
  let out = ''
  let at = 0
  opener.lastIndex = 0
  for (let m = opener.exec(text); m !== null; m = opener.exec(text)) {
    const from = m.index + m[0].length
    const line = escapes ? text.indexOf('\n', from) : -1
    const end = line === -1 ? text.length : line
    const close = text.slice(from, end).lastIndexOf(closer)
    const to = close === -1 ? end : from + close
    out += text.slice(at, from) + '…'
    at = to
    opener.lastIndex = to
  }
  return at === 0 ? text : out + text.slice(at)
}

/**
 * `message` without the echoes of the request's input it holds ({@link ECHOES}), and without
 * FastAPI's `"input":` member and all after it ({@link JSON_ECHO}). Read on a refusal only.
 */
function withoutEchoes(message: string): string {
  let cut = message
  for (const [opener, closer, escapes] of ECHOES) cut = cutEchoes(cut, opener, closer, escapes)
  const json = JSON_ECHO.exec(cut)
  return json ? cut.slice(0, json.index) : cut
}

/** Bedrock's older words ("Malformed input request: #: extraneous key [diagnostics] is not permitted"). */
const EXTRANEOUS_KEY = /#(\/tools\/\d+)?: extraneous key \[([A-Za-z_]\w{0,63})\] is not permitted/gi

/**
 * What the refusal of a Messages body passed through names as fields it does not know, by their
 * place: top-level fields (`diagnostics: Extra inputs are not permitted`, as Bedrock, Vertex AI,
 * LiteLLM and OpenCode Zen pass on Anthropic's validation; "Unknown parameter: speed" and the other
 * words of {@link UNKNOWN_FIELD}; FastAPI's list, {@link extraFields}; Bedrock's "extraneous key")
 * and members of a tool (`tools.0.custom.eager_input_streaming: ...`, any tool's). Undefined when
 * it names none, or one that was not sent or that the request cannot go without
 * ({@link MESSAGES_NEEDED}, {@link TOOL_NEEDED}), or a place inside another field
 * (`messages.1.content.0.thinking.cache_control`, `output_config.effort`: their own rules).
 */
export function passedMessagesFields(
  errorText: string,
  sent: SentRequest,
): {fields: string[]; toolMembers: string[]; newer: boolean} | undefined {
  const {message} = errorParts(errorText)
  // (field names in an echo of the request are the client's words, not what was refused)
  const words = withoutEchoes(message)
  const places = [
    ...[...words.matchAll(EXTRA_AT)].map((m) => m[1]),
    ...[...words.matchAll(EXTRA_AT_LINE)].map((m) => m[1]),
    ...[...words.matchAll(EXTRANEOUS_KEY)].map((m) => (m[1] ? `tools.0.${m[2]}` : m[2])),
    ...extraFields(errorText),
  ]
  // (a closed schema's words: everything it does not list is refused alike)
  let closed = places.length > 0
  if (places.length === 0) {
    if (ECHOES_INPUT.test(message)) return undefined
    places.push(...unknownNamed(words, sent.fields))
    closed = CLOSED_SCHEMA.test(words)
  }
  if (places.length === 0) return undefined
  const fields = new Set<string>()
  const toolMembers = new Set<string>()
  let newer = false
  for (const place of new Set(places)) {
    // (the tool's tag in between, Anthropic's `custom` or a server tool's dated type; any other
    // segment, `input_schema`, is a place inside the tool: its own rules)
    const member = /^tools\.\d+\.(custom\.|[a-z_]+_\d{8}\.)?([A-Za-z_]\w{0,63})$/.exec(place)
    if (member !== null) {
      const [, tag, name] = member
      if (TOOL_NEEDED.includes(name) || !sent.toolMembers?.includes(name)) return undefined
      toolMembers.add(name)
      // (a server tool's refusal of it says nothing of the host: Anthropic's own API refuses it there)
      if (name === NEWER_TOOL_MEMBER && (tag === undefined || tag === 'custom.')) newer = closed
    } else if (
      /^[A-Za-z_]\w{0,63}$/.test(place) &&
      sent.fields.includes(place) &&
      !MESSAGES_NEEDED.includes(place)
    ) {
      fields.add(place)
      if (CLAUDE_CODE_NEWER.includes(place) || place === 'context_management') newer = closed
    } else return undefined
  }
  return {fields: [...fields], toolMembers: [...toolMembers], newer}
}

/**
 * Words that say a validator holds the request to a closed schema (pydantic's "Extra inputs are not
 * permitted" is read by its place above): zod's strict object ("Unrecognized key(s) in object"),
 * serde's `deny_unknown_fields` ("unknown field `speed`, expected one of …"), Go's
 * `DisallowUnknownFields` (`json: unknown field "speed"`), "Unknown parameter". Not "Unsupported
 * parameter", which a host that knows the field says of a model without it.
 */
const CLOSED_SCHEMA =
  /\b(?:unknown|unrecogni[sz]ed)\s+(?:request\s+)?(?:parameter|param|field|argument|key|property)/i

/**
 * Claude Code's optional newer fields, each a feature of Anthropic's own API: cache diagnosis's
 * `diagnostics`, the server-side fallback's `fallbacks` and `fallback_credit_token`, fast mode's
 * `speed`, and on each of its tools fine-grained tool streaming's `eager_input_streaming`
 * ({@link NEWER_TOOL_MEMBER}; "Only Anthropic's first-party surfaces accept" it, DotHarness/dotcraft
 * PR #282). A host that validates a closed schema and refuses one of them (Bedrock, Vertex AI, a
 * LiteLLM or Copilot relay, a relay that drops their betas before Anthropic's API) refuses each
 * other one the body carries, a round trip each: they all go in the retry for the first
 * ({@link passedMessagesRefusal}), Claude Code's first turn two tries, not six; and those it did not
 * carry are learned with them, since the host's schema is the same for its next body (a later
 * `/fast` turn's `speed`, a Haiku helper's body learned per model): one more byte search per
 * request for each such name (./top-fields.ts), where a refusal would cost a round trip. Its
 * `context_management` (context editing, June 2025) goes with them only where it is refused itself:
 * Bedrock and Vertex AI take it with its beta, while a host that does not know it knows none of the
 * newer ones. None of them changes the answer: without them the host neither diagnoses its cache,
 * nor falls back on its side, nor runs in fast mode, nor streams a tool's input before it is whole.
 */
const CLAUDE_CODE_NEWER: readonly string[] = ['diagnostics', 'fallbacks', 'fallback_credit_token', 'speed']
const NEWER_TOOL_MEMBER = 'eager_input_streaming'

/**
 * What a strict host's refusal of a Messages body passed through (Claude Code's) teaches
 * ({@link passedMessagesFields}): its top-level fields named go from then on (`drop`, cut out of
 * the bytes: ./top-fields.ts), the tool members named from every tool (`toolMembers`); named one of
 * Claude Code's optional newer fields in a closed schema's words, all the others go with them, those
 * the body carries in the same retry ({@link CLAUDE_CODE_NEWER}).
 */
function passedMessagesRefusal(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  const named = passedMessagesFields(errorText, sent)
  if (named === undefined) return undefined
  const {fields, toolMembers, newer} = named
  const members = toolMembers.filter((m) => !known.toolMembers?.includes(m))
  const words = [...fields, ...members.map((m) => `its tools' ${m}`)]
  const alsoFields = newer
    ? CLAUDE_CODE_NEWER.filter((f) => !fields.includes(f) && !known.drop?.includes(f))
    : []
  const alsoMembers =
    newer && !members.includes(NEWER_TOOL_MEMBER) && !known.toolMembers?.includes(NEWER_TOOL_MEMBER)
      ? [NEWER_TOOL_MEMBER]
      : []
  // (named in the note: those the retry cuts out; the ones the body did not carry are learned alike)
  const carried = [
    ...alsoFields.filter((f) => sent.fields.includes(f)),
    ...alsoMembers.filter((m) => sent.toolMembers?.includes(m)).map((m) => `its tools' ${m}`),
  ]
  const rest = alsoFields.length + alsoMembers.length > carried.length
  const dropped = [...fields, ...alsoFields]
  const cut = [...members, ...alsoMembers]
  return {
    next: {
      ...known,
      ...(dropped.length > 0 ? {drop: [...new Set([...(known.drop ?? []), ...dropped])]} : {}),
      ...(cut.length > 0 ? {toolMembers: [...(known.toolMembers ?? []), ...cut]} : {}),
    },
    note:
      `refused ${words.join(', ')}: sent again without ${words.length > 1 ? 'them' : 'it'}` +
      (carried.length > 0
        ? `, and without ${carried.join(', ')} (Claude Code's other newer ${carried.length > 1 ? 'fields' : 'field'}${rest ? '; the rest from now on too' : ''})`
        : rest
          ? ", and from now on without Claude Code's other newer fields"
          : ''),
  }
}

/**
 * What a refusal of the `reasoning` of a Responses body passed through teaches (spliced in its
 * bytes from then on: ./top-fields.ts `withReasoningAdapted`):
 * - the effort's value, refused with those the model takes (OpenAI's "Unsupported value:
 *   'reasoning.effort' does not support 'xhigh' with this model. Supported values are: ...",
 *   Ollama's `invalid reasoning value: "xhigh" (must be ...)`, pydantic's and zod's words:
 *   {@link refusedEffortValues}): each effort it does not take goes as the nearest it lists
 *   ({@link effortsLearned});
 * - the effort itself, refused by its place with the words for a field it does not take (OpenAI's
 *   "Unsupported parameter: 'reasoning.effort' is not supported with this model.", `param:
 *   reasoning.effort`, to gpt-4o-mini: openai/codex #36735; xAI's "does not support parameter
 *   reasoningEffort"): the requests go without it, the summary kept;
 * - the summary refused by its place (`param: reasoning.summary`): without it, the effort kept.
 * Undefined for other words.
 */
function passedReasoningRefusal(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  const {param, message} = errorParts(errorText)
  const named = (part: string) =>
    param === `reasoning.${part}` ||
    ((param === undefined || param === null) && new RegExp(`['"\`]reasoning\\.${part}['"\`]`).test(message))
  if (sent.effort !== undefined) {
    const listed =
      refusedEffortValues(errorText, sent.effort) ??
      (named('effort') ? supportedValues(errorText).filter((v) => EFFORTS.includes(v)) : [])
    if (listed.length > 0)
      return listed.includes(sent.effort)
        ? undefined
        : effortsLearned(listed, sent.effort, 'reasoning.effort', known)
  }
  const drop = (part: string) => ({
    next: {...known, drop: [...new Set([...(known.drop ?? []), `reasoning.${part}`])]},
    note: `refused reasoning.${part}: sent again without it`,
  })
  // (not where the words refuse the value: "Unsupported value", "Invalid value" anywhere, a
  // relay's prefix before them; serde's "unknown variant `xhigh`"; "Reasoning effort 'minimal' is
  // not supported with the web_search tool", which names the value it refuses)
  if (
    sent.effort !== undefined &&
    ((named('effort') &&
      REFUSES.test(message) &&
      !/\b(?:invalid|unsupported|unknown) (?:value|variant)\b/i.test(message) &&
      !quotes(message, sent.effort)) ||
      /\bdoes not support parameter reasoningEffort\b/.test(message))
  )
    return drop('effort')
  if (param === 'reasoning.summary' && sent.reasoningSummary) return drop('summary')
  return undefined
}

/** Whether `message` names `value` in quotes (', ", `), as a refusal of that value does. */
const quotes = (message: string, value: string): boolean =>
  new RegExp(`['"\`]${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}['"\`]`).test(message)

/**
 * What a refusal of the effort `sent` (of `field`) that lists the efforts the model takes teaches:
 * every effort it does not list goes as the nearest it lists ({@link nearestEffort}: a tie to the
 * higher, `none` only for `minimal`), so that one refusal covers Codex's `xhigh` and `minimal`
 * alike; a mapping learned before of an effort it lists goes. None near `sent`: the field goes.
 */
function effortsLearned(
  listed: readonly string[],
  sent: string,
  field: string,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} {
  const effort: Record<string, string> = {...known.effort}
  for (const value of EFFORTS) {
    const instead = listed.includes(value) ? undefined : nearestEffort(value, listed)
    if (instead !== undefined) effort[value] = instead
    else delete effort[value]
  }
  const instead = effort[sent]
  if (instead === undefined)
    return {
      next: {...known, drop: [...new Set([...(known.drop ?? []), field])]},
      note: `refused ${field} ${sent} (it takes ${listed.join(', ')}): sent again without it`,
    }
  return {
    next: {...known, effort},
    note: `refused ${field} ${sent} (it takes ${listed.join(', ')}): sent again with ${instead}`,
  }
}

/** Targets remembered at most (the oldest learned is forgotten first). */
const MAX_TARGETS = 1000

/**
 * What was learned that changes a chat body itself (translate.ts `adaptBody`, the tool-schema
 * keywords): a chat request passed through untranslated to such an upstream model is rewritten
 * (`adaptPassedChat`); one to a model learned only otherwise (how its answers think, its window)
 * goes as it came, unparsed.
 */
const CHAT_BODY_RULES = [
  'drop',
  'maxCompletionTokens',
  'maxTokens',
  'effort',
  'toolIds',
  'bridgeToolTurns',
  'reasoningHistory',
  'thoughtSignatures',
  'schemaKeys',
  'typeLists',
  'autoToolChoice',
  'forcedThinkingOff',
  'effortWithTools',
  'noThinkingUnstreamed',
  'minOutputTokens',
  'minJsonOutputTokens',
  'objectSchemas',
  'toolCap',
  'media',
  'json',
  'jsonInstruction',
  'alternateRoles',
  'systemFirst',
  'repairArgs',
] as const satisfies ReadonlyArray<keyof UpstreamAdaptation>

/** Whether `a` holds any of `rules` (a rule set to false holds nothing). */
function holdsAny(
  a: UpstreamAdaptation | undefined,
  rules: ReadonlyArray<keyof UpstreamAdaptation>,
): boolean {
  if (a === undefined) return false
  for (const rule of rules) if (a[rule] !== undefined && a[rule] !== false) return true
  return false
}

/** Whether what was learned of an upstream model rewrites a chat body passed through to it. */
export const rewritesChatBody = (a: UpstreamAdaptation | undefined): boolean => holdsAny(a, CHAT_BODY_RULES)

/**
 * What was learned that changes a Messages body itself (its thinking form, a part of a field it
 * goes without, its output cap or floor): a Messages request passed through untranslated to such an
 * upstream model is rewritten (translate.ts `adaptPassedMessages`); any other goes as it came,
 * unparsed, the top-level fields and tools' members it goes without cut out of its bytes (proxy.ts
 * `passedBytes`).
 */
const MESSAGES_BODY_RULES = [
  // an `output_config.effort` value refused, as the nearest the model takes
  'effort',
  'thinking',
  'maxTokens',
  'minOutputTokens',
  'effortOnlyWithThinking',
  'forcedThinkingOff',
  'toolCap',
  // images and documents inside tool results refused there (Ollama's, LM Studio's)
  'mediaOutOfResults',
  'refusedServerTools',
] as const satisfies ReadonlyArray<keyof UpstreamAdaptation>

/**
 * Whether what was learned of an upstream model rewrites a Messages body passed through to it (of
 * what a refusal taught of the model beyond its thinking form: a forced tool choice refused, and a
 * tool-call turn without thinking refused: DeepSeek's empty block, Kimi's thinking off).
 */
export const rewritesMessagesBody = (a: UpstreamAdaptation | undefined): boolean =>
  holdsAny(a, MESSAGES_BODY_RULES) ||
  // (a top-level field learned away is cut out of the bytes, no parse: proxy.ts `passedBytes`; a
  // part of one, `output_config.effort`, is not)
  a?.drop?.some((f) => f.includes('.')) === true ||
  a?.claude?.noForcedTools === true ||
  a?.claude?.emptyThinking === true ||
  a?.claude?.thinkingEveryToolTurn === true

/**
 * The most tools an upstream's refusal of more states it takes: OpenAI's "Invalid 'tools': array
 * too long. Expected an array with maximum length 128, but got an array with length 140 instead."
 * (chat completions and Responses), Kimi's "a max of 128 tools can be supported", Gemini's
 * "tools[0].function_declarations: [FIELD_INVALID] At most 512 function declarations can be
 * specified." Undefined for any other refusal.
 */
export function toolCapStated(errorText: string): number | undefined {
  const stated =
    /Invalid 'tools': array too long\. Expected an array with maximum length (\d{1,5})\b/.exec(
      errorText,
    )?.[1] ??
    /\ba max of (\d{1,5}) tools can be supported/i.exec(errorText)?.[1] ??
    /\bAt most (\d{1,5}) function declarations can be specified/i.exec(errorText)?.[1]
  const n = Number(stated)
  return stated !== undefined && n >= 1 ? n : undefined
}

/**
 * What a refusal of more tools than the model takes teaches a request that sent `sent` tools
 * (its tools held to the cap stated from then on), when it states one below them and below any
 * learned before; undefined otherwise (the tools it cannot go without, those its history calls,
 * over the cap: the client sees the refusal).
 */
function toolCapRefusal(
  errorText: string,
  sent: number | undefined,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  if (sent === undefined) return undefined
  const cap = toolCapStated(errorText)
  if (cap === undefined || cap >= sent || (known.toolCap !== undefined && cap >= known.toolCap))
    return undefined
  return {
    next: {...known, toolCap: cap},
    note: `refused ${sent} tools (it takes at most ${cap}): sent again with the client's first ${cap}`,
  }
}

/** How many refusals one request may learn before its 400 goes to the client (but for fields cut: {@link onlyMoreCuts}). */
export const MAX_ADAPTATIONS_A_REQUEST = 3

/**
 * Whether `after` (learned from a refusal of a body passed through) holds what `before` (what it was
 * sent with) held and more only in what is cut out of its bytes: top-level fields (`drop`, no part of
 * one), tools' members, input items' members. A strict host names one such field a refusal (Claude
 * Code's `diagnostics`, `fallbacks`, `fallback_credit_token`, `speed`, its tools'
 * `eager_input_streaming`: five on its first turn), and a retry for one does not count against
 * {@link MAX_ADAPTATIONS_A_REQUEST}: each goes only when it removes a name the body was sent with
 * (the proxy sends nothing again that is the same bytes), so a body runs out of them.
 */
export function onlyMoreCuts(
  before: UpstreamAdaptation | undefined,
  after: UpstreamAdaptation | undefined,
): boolean {
  if (after === undefined) return false
  const {drop = [], toolMembers = [], inputMembers = {}, ...rest} = after
  const {drop: dropped = [], toolMembers: tools = [], inputMembers: items = {}, ...was} = before ?? {}
  const holds = (now: readonly string[], then: readonly string[]) => then.every((n) => now.includes(n))
  return (
    JSON.stringify(rest) === JSON.stringify(was) &&
    holds(drop, dropped) &&
    drop.every((f) => dropped.includes(f) || !f.includes('.')) &&
    holds(toolMembers, tools) &&
    Object.entries(items).every(([type, members]) => holds(inputMembers[type] ?? [], members))
  )
}

/**
 * Kimi's refusal of thinking that is not on ("invalid thinking: only type=enabled is allowed for this
 * model"), its words first, after a proxy's prefix, or as the `message` of the JSON a relay quotes
 * (LiteLLM's "AnthropicException - {...}"); tested on the message without its echoes: a user who
 * pasted these words, quoted back by a pydantic 400 (vLLM's, SGLang's), teaches nothing.
 */
const ONLY_ENABLED =
  /^(?:[^\n]{0,80}?[:-] |[^\n]{0,200}?"message"\s*:\s*)?["']?invalid thinking\W{0,3}only type\W{0,3}enabled\W{0,3}is allowed/i

/** A pydantic validation error's echo of the input it refused. */
const ECHOES_INPUT = /['"]input['"]\s*:|input_value=|validation errors? for /i

/** Kimi's refusal of a sampling setting its model fixes ("invalid temperature: only 1 is allowed"). */
const ONLY_ALLOWED =
  /(?:^|: |- |["'])invalid (temperature|top_p): only \d+(?:\.\d+)? is allowed(?: for this model)?(?=$|[.;"']|\s*\(|\s*\n)/i

/** A strict server's list of the fields it does not take, after its words. */
const LISTS_FIELDS =
  /(?:unrecognized request arguments? supplied|unsupported parameters?(?:\(s\))?|unrecognized keys?(?:\(s\))? in object):\s*([\w.`'", ]{1,300})/i

/** A refusal's words for a field it does not take ("Extra inputs are not permitted"). */
const REFUSES = /(?:extra inputs|not permitted|not supported|unsupported|unknown|unrecognized)/i

/**
 * A thinking-mode server's refusal of a forced `tool_choice`, in its own words at the start of the
 * message or after a proxy's prefix (`[deepseek/deepseek-v4-pro] [400]: `, DashScope's `<400>
 * InternalError.Algo.InvalidParameter: `): DeepSeek V4's "Thinking mode does not support this
 * tool_choice" (chat completions and its Anthropic endpoint), deepseek-reasoner's "deepseek-reasoner
 * does not support this tool_choice" (also on the Anthropic endpoint for V4), Kimi's "tool_choice
 * 'required' is incompatible with thinking enabled" (`'specified'` for a named tool), DashScope's
 * "The tool_choice parameter does not support being set to required or object in thinking mode".
 */
const THINKING_TOOL_CHOICE =
  /^(?:[^\n]{0,80}?: )?(?:thinking mode does not support this tool_choice|\S+ does not support this tool_choice|tool_choice '(?:specified|required)' is incompatible with thinking enabled|the tool_choice parameter does not support being set to required or object in thinking mode)/i

/**
 * A refusal of `thinking.type: adaptive`: Anthropic's words for its older models, pydantic's
 * discriminator ("Input tag 'adaptive' found using 'type' ..."), and a relay's or server's own
 * schema that knows only enabled and disabled, which Claude Code 2.1.3xx's adaptive thinking for
 * any model name meets: zod's "thinking.type: Invalid enum value. Expected 'enabled' | 'disabled',
 * received 'adaptive'" (freellmapi #632; zod 4's "Invalid option: expected one of
 * \"enabled\"|\"disabled\""), pydantic's literal "thinking.type: Input should be 'enabled' or
 * 'disabled'", a relay's "Validation: `thinking.type` must be `enabled` or `disabled`" (9router
 * #2023), DashScope's "Only 'enabled' and 'disabled' are supported for thinking; 'adaptive' is not
 * supported." (claude-code #29531), MiniMax's form "invalid thinking.type: \"adaptive\" (allowed:
 * enabled, disabled)", pydantic's refusal of the member it does not have, "thinking.adaptive: Extra
 * inputs are not permitted" (its plain-text form puts the words on the next line; not
 * `thinking.adaptive.block_binding`, a part of adaptive thinking, read below).
 */
const ADAPTIVE_REFUSED =
  /adaptive thinking is not supported|thinking\.adaptive\W{0,4}extra inputs are not permitted|thinking\.type\.adaptive["'`]? is not supported|tag ['"]adaptive['"]|received\W{0,3}adaptive\b|thinking\.type\W[^\n]{0,24}?(?:expected|should be|must be)(?: one of)?\W{0,3}enabled\W{0,4}(?:(?:or|and)\W{1,3}|\|\W{0,3})?disabled\b|only\W{0,3}enabled\W{0,3}and\W{0,3}disabled\W{0,3}are supported for thinking|invalid thinking\.type\W{0,4}adaptive\W{0,4}\(allowed:/i

/**
 * FastAPI's 422 for `thinking.type: adaptive` (a Messages endpoint of an MLX or Python server:
 * jundot/omlx #56), by its place and the input refused: `{"detail": [{"type": "literal_error",
 * "loc": ["body", "thinking", "type"], "msg": "Input should be 'enabled' or 'disabled'", "input":
 * "adaptive", ...}]}`, or by the member it does not have (`"loc": ["body", "thinking",
 * "adaptive"]`, `extra_forbidden`).
 */
const FASTAPI_ADAPTIVE =
  /"loc"\s*:\s*\[\s*"body"\s*,\s*"thinking"\s*,\s*(?:"type"\s*\][^{}]*"input"\s*:\s*"adaptive"|"adaptive"\s*\][^{}]*"(?:msg|type)"\s*:\s*"(?:Extra inputs are not permitted|extra_forbidden)")/

/** What a refusal of adaptive thinking teaches: `enabled` with a budget. */
const adaptiveRefused = (known: UpstreamAdaptation): {next: UpstreamAdaptation; note: string} => ({
  next: {...known, thinking: 'enabled'},
  note: 'refused adaptive thinking: sent again with thinking.type enabled and a budget',
})

/**
 * What a Messages upstream's 400 teaches (Anthropic's current models, and Anthropic-compatible
 * servers): the thinking form its model takes, when it refused the other (Opus 4.7 on: "\"thinking.
 * type.enabled\" is not supported for this model. Use \"thinking.type.adaptive\" and \"output_config.
 * effort\" ..."; Claude 4.5 and older: "adaptive thinking is not supported on this model"); a
 * sampling setting it dropped ("temperature is deprecated for this model."); `thinking.display`
 * or `output_config`, which a server that does not know them refuses.
 */
function claudeRefusal(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  const {param, message} = errorParts(errorText)
  // Ollama's Anthropic endpoint, for a model without thinking: `thinking.type: enabled`, or an
  // `output_config.effort` (which it reads as a thinking level), is refused in its chat words
  if (saysNoThinking(message)) {
    const fields = [
      ...(sent.thinking === 'enabled' ? ['thinking'] : []),
      ...(sent.effort !== undefined ? ['output_config.effort'] : []),
    ]
    if (fields.length === 0) return undefined
    return {
      next: {...known, drop: [...new Set([...(known.drop ?? []), ...fields])]},
      note: `refused thinking (a model without it): sent again without ${fields.join(' and ')}`,
    }
  }
  // DeepSeek's Anthropic endpoint refuses an effort beside thinking turned off ("thinking options
  // type cannot be disabled when reasoning_effort is set"), which Claude Code 2.1.166 on sends for
  // its sub-agents and helper calls: the effort goes from those bodies only, the main agent's
  // thinking keeps its own
  if (
    sent.thinkingOff === 'disabled' &&
    sent.effort !== undefined &&
    !known.effortOnlyWithThinking &&
    /thinking\W+(?:options\W+)?type cannot be disabled when reasoning_effort is set/i.test(message)
  )
    return {
      next: {...known, effortOnlyWithThinking: true},
      note: 'refused output_config.effort beside thinking.type disabled: sent again without the effort (requests that turn thinking off, from now on)',
    }
  // (the quotes may come escaped, a proxy's message holding Anthropic's as a JSON string; MiniMax's
  // Anthropic endpoint for M3: "invalid params, invalid thinking.type: \"enabled\" (allowed:
  // adaptive, disabled) (2013)", cherry-studio #16431)
  if (
    sent.thinking === 'enabled' &&
    /thinking\.type\.enabled\W{0,8}is not supported|invalid thinking\.type\W{0,4}enabled\W{0,4}\(allowed:[^)]*\badaptive\b/i.test(
      message,
    )
  )
    return {
      next: {...known, thinking: 'adaptive'},
      note: 'refused thinking.type enabled: sent again as adaptive thinking with output_config.effort',
    }
  if (sent.thinking === 'adaptive' && ADAPTIVE_REFUSED.test(message)) return adaptiveRefused(known)
  const effort =
    sent.effort !== undefined
      ? messagesEffortRefusal(message, sent.effort, sent.thinkingOff !== undefined, known)
      : undefined
  if (effort) return effort
  const claude = claudeLearned(message, sent, known)
  if (claude) return claude
  // (not in a validator's echo of the request: the client's own text may name any field)
  const words = withoutEchoes(message)
  // (anywhere in the message: Bedrock's "The model returned the following errors: temperature is
  // deprecated for this model.", a proxy's prefix)
  const sampling =
    /(?:^|[^\w.])\W{0,2}(temperature|top_p|top_k)\W{0,2} is (?:deprecated|not supported)(?: for this model)?\W{0,6}(?:$|\n)/i.exec(
      words,
    )
  // a field refused by its place (`param`, or a validation error's path) and the words after it,
  // not one a message names in passing (the refusal of `enabled` names `output_config.effort`,
  // and is read above)
  const text = typeof param === 'string' ? `${param}: ${words}` : words
  const refused = (path: string): boolean =>
    new RegExp(`\\b${path}\\b\\W{0,4}${REFUSES.source}`, 'i').test(text)
  const field = sampling
    ? sampling[1].toLowerCase()
    : sent.thinkingDisplay && refused('thinking\\.(?:\\w+\\.)?display')
      ? 'thinking.display'
      : sent.fields.includes('output_config') && refused('output_config')
        ? 'output_config'
        : // a server that does not know Claude Code's context editing (its beta's field)
          sent.fields.includes('context_management') && refused('context_management')
          ? 'context_management'
          : // Gemini CLI's `topK` to an Anthropic-compatible server that does not know it, in its
            // own words ("Unknown parameter: top_k", zod's "Unrecognized key(s) in object: 'top_k'")
            sent.fields.includes('top_k') && (refused('top_k') || namesUnknown(words, 'top_k'))
            ? 'top_k'
            : undefined
  if (field === undefined || !sent.fields.includes(field.split('.')[0])) return undefined
  return {
    next: {...known, drop: [...new Set([...(known.drop ?? []), field])]},
    note: `refused ${field}: sent again without it`,
  }
}

/** `message` names `field` as one it does not know ({@link UNKNOWN_FIELD}, {@link LISTS_FIELDS}). */
function namesUnknown(message: string, field: string): boolean {
  if ([...message.matchAll(UNKNOWN_FIELD)].some((m) => m[1] === field)) return true
  const listed = LISTS_FIELDS.exec(message)
  return listed !== null && listed[1].split(/[\s,`'"]+/).includes(field)
}

/**
 * What a Messages upstream's refusal of the `output_config.effort` it was sent teaches (an
 * Anthropic-compatible server, or a Claude model, that does not take the effort or that value;
 * Claude Code sends one for any model name, `xhigh` and `max` included):
 * - the field itself refused by its path ("output_config.effort: Extra inputs are not permitted",
 *   pydantic's; "unknown", "unrecognized") or in words ("does not support the effort parameter",
 *   "effort is not supported"): the requests go without it (the model's default effort);
 * - the value, with the values it takes (pydantic's "output_config.effort: Input should be 'low',
 *   'medium' or 'high'", zod's "Expected 'low' | 'medium' | 'high', received 'max'", "Supported
 *   values are: ...", Z.AI's "please use low, high, or max"): every effort it does not take goes as
 *   the nearest it lists, so that `xhigh` and `max` both step down from the one failed try;
 * - the value alone ("effort 'max' is not supported for this model"): one above `high` goes as
 *   `high`, which every model with efforts takes; any other goes without the field.
 * Words about the thinking form (`thinking.type` beside an effort, read elsewhere) are not read
 * here, nor Z.AI's list for a body that turned thinking off (its own rule). Undefined for other
 * words.
 */
function messagesEffortRefusal(
  message: string,
  sent: string,
  off: boolean,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  if (
    !(/\beffort\b/i.test(message) || (!off && alwaysThinkingEfforts(message) !== undefined)) ||
    /thinking\.type|thinking\W{1,4}type/i.test(message)
  )
    return undefined
  const drop = (note: string) => ({
    next: {...known, drop: [...new Set([...(known.drop ?? []), 'output_config.effort'])]},
    note: `refused output_config.effort${note}: sent again without it`,
  })
  const value = sent.toLowerCase()
  // the words name the value sent ("does not support effort 'max'", "the effort level max"): a
  // refusal of that value, not of the field (dropped, every later effort would go unsaid)
  const namesValue =
    EFFORTS.includes(value) && new RegExp(`effort(?: level)?\\W{0,3}${value}\\b`, 'i').test(message)
  if (
    !namesValue &&
    (new RegExp(`output_config\\.effort\\W{0,4}${REFUSES.source}`, 'i').test(message) ||
      /does not support (?:the )?\W?effort\b|\beffort(?: parameter)?\W{0,2} is not supported(?: for this model)?\W{0,3}$/im.test(
        message,
      ))
  )
    return drop('')
  if (!EFFORTS.includes(value)) return undefined
  // (without the input a validator echoes: pydantic's `input_value='max'`, `"input": "max"`, zod's
  // `received 'max'`)
  const said = message.replace(/input_value=\S+|['"]input['"]\s*:\s*['"]\w*['"]|received\W{0,3}\w+/gi, '')
  if (
    !/not supported|does not support|unsupported|only available|not (?:a )?valid|invalid|should be|expected|must be|please use|not allowed|allowed values/i.test(
      said,
    )
  )
    return undefined
  // the values it takes: those quoted after its words for a list, or Z.AI's list
  const phrase = /should be|expected|one of|supported values|valid values|please use|allowed|must be/i.exec(
    said,
  )
  const quoted = phrase
    ? [...said.slice(phrase.index).matchAll(/['"`]([a-z]{3,7})['"`]/gi)].map((m) => m[1].toLowerCase())
    : []
  const listed = [...new Set([...quoted, ...(alwaysThinkingEfforts(said) ?? [])])].filter((v) =>
    EFFORTS.includes(v),
  )
  // the value it was sent among those it lists: the refusal is not of it
  if (listed.includes(value)) return undefined
  if (listed.length === 0) {
    // the value alone, named as refused
    if (!new RegExp(`\\b${value}\\b`, 'i').test(said)) return undefined
    if (value !== 'xhigh' && value !== 'max') return drop(` ${value}`)
    const effort = {...known.effort, [value]: 'high'}
    return {next: {...known, effort}, note: `refused output_config.effort ${value}: sent again with high`}
  }
  const effort: Record<string, string> = {...known.effort}
  // (Anthropic's efforts: a Messages body has no `none` or `minimal`)
  for (const v of ['low', 'medium', 'high', 'xhigh', 'max']) {
    const instead = listed.includes(v) ? undefined : nearestEffort(v, listed)
    if (instead !== undefined) effort[v] = instead
  }
  const instead = effort[value]
  if (instead === undefined) return drop(` ${value}`)
  return {
    next: {...known, effort},
    note: `refused output_config.effort ${value} (it takes ${listed.join(', ')}): sent again with ${instead}`,
  }
}

/**
 * What a Claude 5 model's refusal teaches, for a name that does not say it (an alias, a proxy's
 * name): that it takes no forced tool choice (Claude 5.5: "tool_choice: type \"tool\" and \"any\"
 * are not supported for this model."); that it thinks unless told not to ("Thinking may not be
 * enabled when tool_choice forces tool use.", to a forced call sent without `thinking`); how it
 * is told not to think (Sonnet 5.5's refusal of `disabled` names `between_tools`; Opus 5.5's
 * says only adaptive: a low effort); that it binds thinking blocks to their conversation ("The
 * block is bound to a different conversation.").
 */
function claudeLearned(
  message: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  const learn = (claude: NonNullable<UpstreamAdaptation['claude']>, note: string) => ({
    next: {...known, claude: {...known.claude, ...claude}},
    note,
  })
  // an Anthropic-compatible server in thinking mode (DeepSeek's, Kimi's, which think by default)
  // takes the forced call with thinking turned off: that, for the requests that force one; refused
  // with thinking off too, the forcing goes (below)
  if (
    sent.forcedTool &&
    sent.thinkingOff === undefined &&
    !known.forcedThinkingOff &&
    THINKING_TOOL_CHOICE.test(message.trim())
  )
    return {
      next: {...known, forcedThinkingOff: true},
      note: 'refused a forced tool_choice in thinking mode: sent again with thinking.type disabled (and no output_config.effort), the forced choice kept',
    }
  // (and an Anthropic-compatible server in thinking mode: DeepSeek's, Kimi's, in their words)
  if (
    sent.forcedTool &&
    (/tool_choice\W{0,4}type\W{0,4}tool\W{0,4}and\W{0,4}any\W{0,4}are not supported/i.test(message) ||
      THINKING_TOOL_CHOICE.test(message.trim()))
  )
    return learn(
      {noForcedTools: true},
      'refused a forced tool_choice: sent again with tool_choice auto, the call asked for at the end of the prompt',
    )
  // Kimi's coding endpoint (`kimi-for-coding`) wants thinking on every assistant tool-call turn of
  // the history, in its chat words (borawong/AiMaMi #10: "thinking is enabled but
  // reasoning_content is missing in assistant tool call message at index 156"): a history with
  // such a turn (Codex's at effort none, another target's answer, an unsigned block dropped) goes
  // with thinking off, as a running tool loop without it does
  if (
    sent.thinking !== undefined &&
    !known.claude?.thinkingEveryToolTurn &&
    /^(?:[^\n]{0,80}?: )?thinking is enabled but reasoning_content is missing in assistant tool call message\b/i.test(
      message,
    )
  )
    return learn(
      {thinkingEveryToolTurn: true},
      'refused thinking beside an earlier tool call turn without thinking: sent again with thinking off (a history with such a turn, from now on)',
    )
  // DeepSeek's Anthropic endpoint, whose models think unless told not to, wants a thinking block
  // on every assistant tool-call turn of the history (claude-code #62995, claude-code-router PR
  // #1639): a turn Claude Code kept without one (an empty block it dropped), another target's
  // answer after a fallback, one whose vendor's signed blocks gwctl took out. It checks only that
  // the block is there: such a turn gets an empty one, thinking kept on
  if (
    sent.thinkingOff !== 'disabled' &&
    !known.claude?.emptyThinking &&
    /the \\?`?content\[\]\.thinking\\?`? in the thinking mode must be passed back/i.test(message)
  )
    return learn(
      {emptyThinking: true},
      'refused an assistant tool call turn without a thinking block: sent again with an empty one at the head of each such turn (from now on)',
    )
  if (
    sent.prefill &&
    /does not support assistant message prefill\W{0,4}the conversation must end with a user message/i.test(
      message,
    )
  )
    return learn(
      {noPrefill: true},
      'refused a conversation ending with an assistant message (prefill): sent again with that text in a user turn asking to continue it',
    )
  if (
    sent.forcedTool &&
    sent.thinking === undefined &&
    sent.thinkingOff === undefined &&
    /thinking may not be enabled when tool_choice forces tool use/i.test(message)
  )
    return learn(
      {thinkingOff: 'disabled'},
      'thinks unless told not to: sent again with thinking.type disabled',
    )
  // Kimi's Anthropic endpoints (Kimi Code's `api.kimi.com/coding`, Moonshot's `/anthropic`) for a
  // model that takes thinking only on: "invalid thinking: only type=enabled is allowed for this
  // model" (kimi-k2.7-code, kimi-for-coding: MoonshotAI/Kimi-K2 #141, oh-my-pi #3852, hermes-agent
  // #55488) to Claude Code's helper calls (`disabled`, or none): thinking as little as the model
  // takes, `enabled` with Anthropic's least budget, and a forced call as `auto` (Anthropic's rules
  // forbid it beside thinking). Learned, not known by the name: the same name elsewhere takes
  // `disabled` (Kimi Code's K3: openclaw PR #109335)
  if (
    sent.thinking === undefined &&
    known.claude?.thinkingOff !== 'least_budget' &&
    ONLY_ENABLED.test(withoutEchoes(message))
  )
    return {
      next: {...known, forcedThinkingOff: undefined, claude: {...known.claude, thinkingOff: 'least_budget'}},
      note: `refused ${sent.thinkingOff === undefined ? 'a request without thinking' : `thinking.type ${sent.thinkingOff}`} (only enabled is allowed): sent again with thinking.type enabled and the least budget, 1024 tokens${sent.forcedTool ? ', the forced tool_choice as auto with the call asked for at the end of the prompt' : ''} (a request without thinking on, from now on)`,
    }
  // (and an Anthropic-compatible server of a model that always thinks, in Z.AI's words for GLM-5.3:
  // "... cannot be disabled; please use low, high, or max", its least effort then)
  if (
    sent.thinkingOff === 'disabled' &&
    (/thinking\.type\.disabled\W{0,8}is not supported/i.test(message) ||
      alwaysThinkingEfforts(message)?.includes('low') === true)
  ) {
    const between = /thinking\.type\.between_tools/i.test(message)
    return learn(
      {thinkingOff: between ? 'between_tools' : 'low'},
      `refused thinking.type disabled: sent again ${between ? 'with thinking.type between_tools' : 'with output_config.effort low (it cannot stop thinking)'}`,
    )
  }
  if (
    sent.thinkingOff === 'between_tools' &&
    /thinking\.type\.between_tools\W{0,8}is not supported/i.test(message)
  )
    return learn(
      {thinkingOff: 'disabled'},
      'refused thinking.type between_tools: sent again with thinking.type disabled',
    )
  // a proxy's Messages API that does not know the setting ("thinking.adaptive.block_binding:
  // Extra inputs are not permitted"): it binds nothing, the blocks go back without it
  if (sent.beta !== undefined && new RegExp(`block_binding\\W{0,4}${REFUSES.source}`, 'i').test(message))
    return learn(
      {noBlockBinding: true, dropUnboundThinking: undefined},
      'refused thinking.block_binding: sent again without it',
    )
  if (sent.beta === undefined && /bound to a different conversation/i.test(message))
    return learn(
      {dropUnboundThinking: true},
      'refused a thinking block bound to another conversation: sent again with block_binding drop_block',
    )
  return undefined
}

/**
 * A refusal of Z.AI's or Moonshot's preserved thinking (`thinking: {type: "enabled",
 * clear_thinking: false}`, `keep: "all"`, chat.ts `preservedThinkingFields`), which goes in the
 * field their off switch goes in: a relay's "Unrecognized request argument supplied: thinking", or
 * Z.AI's own `{"error": {"code": "1210", "message": "Invalid API parameter
 * thinking.clear_thinking"}}` (its code for a parameter it does not take, sam-dumont/immich-video-
 * memory-generator #919). Learned narrowly, `noPreservedThinking`: the earlier turns' reasoning
 * dropped as before, and `thinking: {type: "disabled"}` still sent for a request that asked for no
 * thinking (a `thinking` drop would have taken that too).
 */
function preservedThinkingRefusal(
  errorText: string,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  if (known.noPreservedThinking) return undefined
  if (
    refusedField(errorText, ['thinking']) !== 'thinking' &&
    !/\bthinking\.(?:clear_thinking|keep)\b|\bclear_thinking\b/.test(errorParts(errorText).message)
  )
    return undefined
  return {
    next: {...known, noPreservedThinking: true},
    note: 'refused preserved thinking (thinking enabled to keep earlier reasoning): sent again without it',
  }
}

/** The field an upstream's 400 names among those sent, if it is one a request may go without. */
export function refusedField(errorText: string, sent: readonly string[]): string | undefined {
  const {param, message} = errorParts(errorText)
  // a Responses reasoning summary, which OpenAI refuses to an unverified organization: only the
  // summary goes, the effort stays
  if (
    sent.includes('reasoning') &&
    (param === 'reasoning.summary' ||
      (typeof param !== 'string' && /['"`]reasoning\.summary['"`]/.test(message)))
  )
    return 'reasoning.summary'
  // a Responses `text.verbosity` a model does not take ("Unsupported value: 'low' is not supported
  // with the 'gpt-4.1' model. Supported values are: 'medium'."): the text format stays
  if (
    sent.includes('text') &&
    (param === 'text.verbosity' || (typeof param !== 'string' && /['"`]text\.verbosity['"`]/.test(message)))
  )
    return 'text.verbosity'
  const candidates = ADAPTABLE.filter((f) => sent.includes(f))
  // a `param` names what was refused: another one (`messages[0].role`, a tool's schema) is no
  // refusal of these, whatever field names its message quotes
  if (typeof param === 'string')
    return candidates.find((f) => param === f || param.startsWith(`${f}.`) || param.startsWith(`${f}[`))
  // a validation error that echoes the request (vLLM's and SGLang's 400, pydantic's `'input':`
  // and `input_value=`): field names in it are the client's words, not what was refused
  if (ECHOES_INPUT.test(message)) return undefined
  // xAI names the field in its API's camelCase ("Model grok-4-latest does not support parameter
  // reasoningEffort."), for chat's `reasoning_effort` and for a Responses `reasoning.effort` alike
  // (its `summary` is taken: only the effort goes)
  const xai = /\bdoes not support parameter ([A-Za-z]\w{0,63})\b/.exec(message)
  if (xai) {
    const field = xai[1].replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)
    if (field === 'reasoning_effort' && !sent.includes(field) && sent.includes('reasoning'))
      return 'reasoning.effort'
    return candidates.find((f) => f === field)
  }
  // Kimi's fixed sampling ("invalid temperature: only 1 is allowed for this model"; 0.6 with
  // thinking off), the field bare but in a clause of its own: at the message's start or after a
  // proxy's prefix (`...: `, `... - `), a number stated, and nothing after it but the message's
  // end, a stop or a request id in brackets, so prose about a temperature is none
  const only = ONLY_ALLOWED.exec(message)
  if (only) {
    const field = only[1].toLowerCase()
    return candidates.find((f) => f === field)
  }
  // the list of fields a strict server does not take, after its words ("Unrecognized request
  // argument supplied: thinking, user", NIM's "Unsupported parameter(s): thinking"): a name
  // there is a field, not prose, bare or not
  const listed = LISTS_FIELDS.exec(message)
  if (listed) {
    const names = listed[1].split(/[\s,`'"]+/)
    const field = candidates.find((f) => names.includes(f))
    if (field) return field
  }
  // no `param`: a field the message names, quoted, or bare when its name cannot be a word of
  // prose ("Unrecognized request argument supplied: reasoning_effort"; not "user" or "temperature").
  // The fields a server lists as the ones it takes (serde's "unknown field `logprobs`, expected one
  // of `model`, ..., `presence_penalty`") are not what it refused; a sampling field is named in
  // words of a refusal only (not "presence_penalty is ignored; ... messages[1].content is empty")
  const named = message.split(TAKES_LIST)[0]
  const refuses = REFUSES.test(named)
  return candidates.find(
    (f) =>
      (refuses || !SAMPLING.has(f)) &&
      new RegExp(f.includes('_') ? `(^|[^a-z_])${f}($|[^a-z_])` : `['"\`]${f}(?:\\.[a-z_]+)?['"\`]`).test(
        named,
      ),
  )
}

/** A server's words before the list of the fields it takes. */
const TAKES_LIST =
  /\b(?:expected one of|(?:supported|valid|allowed|accepted) (?:parameters|fields|arguments|keys) (?:are|is|include)\b)/i

/** The sampling fields of {@link ADAPTABLE}: learned from a message only in words of a refusal. */
const SAMPLING: ReadonlySet<string> = new Set(SAMPLING_FIELDS)

/**
 * The most output tokens an upstream's 400 says it takes, when it refused a `max_tokens` (or
 * `max_completion_tokens`) above it: DeepSeek's "the valid range of max_tokens is [1, 8192]",
 * OpenAI's "This model supports at most 16384 completion tokens", "must be less than or equal to
 * 8192", Google's "a maxOutputTokens value of 32000 but the supported range is from 1 (inclusive)
 * to 8193 (exclusive)" (Gemini 2.0 Flash, Gemma; Vertex AI and the Gemini API). Undefined for
 * anything else, and for a limit that depends on the prompt's length (vLLM's "maximum context
 * length is ... your request has ... input tokens": the field is dropped instead, and vLLM's
 * default, the context left, applies).
 */
export function outputLimit(errorText: string, sent: number | undefined): number | undefined {
  if (sent === undefined) return undefined
  const exclusive =
    /maxOutputTokens value of \d+ but the supported range is from \d+ \(inclusive\) to (\d+) \(exclusive\)/i.exec(
      errorText,
    )?.[1]
  if (exclusive !== undefined) {
    const n = Number(exclusive) - 1
    return Number.isSafeInteger(n) && n >= 1 && n < sent ? n : undefined
  }
  if (!/max_(?:completion_)?tokens/.test(errorText)) return undefined
  if (/context length|input tokens|context_window/i.test(errorText)) {
    // Groq names the context window beside a fixed maximum: only its "less than or equal to"
    if (!/less than or equal to/i.test(errorText)) return undefined
  }
  const limit =
    /range of max_(?:completion_)?tokens is \[\s*\d+\s*,\s*(\d+)\s*\]/i.exec(errorText)?.[1] ??
    /at most (\d+) (?:completion |output )?tokens/i.exec(errorText)?.[1] ??
    /(?:less than or equal to|<=) `?(\d+)`?/i.exec(errorText)?.[1] ??
    // Anthropic: "max_tokens: 64000 > 32000, which is the maximum allowed number of output tokens for ..."
    /max_tokens: \d+ > (\d+), which is the maximum/i.exec(errorText)?.[1]
  const n = Number(limit)
  return limit !== undefined && Number.isSafeInteger(n) && n >= 1 && n < sent ? n : undefined
}

/**
 * The error's `param` and message (the text itself when it is not JSON): OpenAI's `{error: {...}}`,
 * the unwrapped `{message, type, param, code}` of Mistral (with `object: "error"`), vLLM and
 * Cerebras, or xAI's message as the string `error`.
 */
function errorParts(errorText: string): {param: unknown; message: string} {
  try {
    const parsed = JSON.parse(errorText) as {
      error?: {param?: unknown; message?: unknown}
      object?: unknown
      message?: unknown
      param?: unknown
    }
    if (parsed?.error === undefined && typeof parsed?.message === 'string')
      return {param: parsed.param, message: parsed.message}
    // xAI's `{code, error: "Model grok-4 does not support parameter reasoningEffort."}`, Ollama's
    // native `{error: "..."}`
    if (typeof parsed?.error === 'string') return {param: undefined, message: parsed.error}
    const message = parsed?.error?.message
    return {param: parsed?.error?.param, message: typeof message === 'string' ? message : errorText}
  } catch {
    return {param: undefined, message: errorText}
  }
}

/**
 * The provider's own error body that OpenRouter relays as text in `error.metadata.raw` (`{"error":
 * {"message": "Provider returned error", "code": 400, "metadata": {"raw": "<the body>",
 * "provider_name": "Alibaba"}}}`): JSON or plain words, as the provider wrote them. Undefined for
 * another body; a byte search first, so an error of another shape is not parsed again.
 */
function providerRaw(errorText: string): string | undefined {
  if (!errorText.includes('"raw"')) return undefined
  try {
    const raw = (JSON.parse(errorText) as {error?: {metadata?: {raw?: unknown}}})?.error?.metadata?.raw
    return typeof raw === 'string' && raw !== '' ? raw : undefined
  } catch {
    return undefined
  }
}

/**
 * A refusal of the web search tool itself, in the server's own message (not an echo of the body):
 * it names the tool and refuses its kind ("Input tag 'web_search_20250305' found using 'type' does
 * not match any of the expected tags", "unknown tool type web_search"); not a refusal of one of its
 * settings (`tools.1.web_search_20250305.user_location.country: ...`).
 */
export function searchToolRefused(errorText: string): boolean {
  const message = refusalMessage(errorText)
  if (message === undefined) return false
  // Gemini's refusals of Google Search beside function declarations (a model or an endpoint
  // without it: Vertex AI, which has no `include_server_side_tool_invocations`; Gemini 2.5)
  if (
    /built-in tools with function calling|include_server_side_tool_invocations|tool use with function calling is unsupported|tool call context circulation/i.test(
      message,
    )
  )
    return true
  // MiniMax's Anthropic endpoint, which reads Anthropic's search tool as a function without a name
  // or schema: "invalid params, function name or parameters is empty (2013)" (ding113/
  // claude-code-hub #1262). Its words name no tool: read only for a request that sent the search
  // beside functions it could go without (the caller's `optionalSearch`), sent again once without
  // it; a refusal of another tool comes back as it came
  if (/function name or parameters is empty/i.test(message)) return true
  if (!/web_search/i.test(message)) return false
  if (/web_search(?:_\d{8})?\.\w/i.test(message)) return false
  return /\b(?:tags?|unknown|unsupported|not supported|does not match|invalid tool|not allowed|not available|not enabled|no such tool)\b/i.test(
    message,
  )
}

/**
 * The message of an error body, only where the server wrote one (a string `error.message`,
 * `message` or `error`); the text itself when it is no JSON. Undefined for a JSON body whose
 * message is something else (a FastAPI 422's list of refused fields and their input).
 */
function refusalMessage(errorText: string): string | undefined {
  const message = upstreamErrorMessage(errorText)
  if (message !== undefined) return message
  try {
    JSON.parse(errorText)
    return undefined
  } catch {
    return errorText
  }
}

/**
 * How many images, binary files (a PDF; a text file goes as its text), audio and video files a
 * request's turns and tool results carry. Here, not in protocols/ir.ts: this module is on the
 * daemon's request path, which loads the translation only for a translated route.
 */
export function mediaCount(request: Request): {images: number; files: number; audio: number; video: number} {
  const count = {images: 0, files: 0, audio: 0, video: 0}
  const add = (p: ImagePart) => {
    if (p.mediaType === undefined || p.mediaType.startsWith('image/')) count.images++
    else if (p.mediaType.startsWith('audio/')) count.audio++
    else if (p.mediaType.startsWith('video/')) count.video++
    else if (!p.mediaType.startsWith('text/') || p.data === undefined) count.files++
  }
  for (const m of request.messages)
    for (const p of m.parts)
      if (p.type === 'image') add(p)
      else if (p.type === 'tool_result') for (const c of p.content) if (c.type === 'image') add(c)
  return count
}

/** Whether a translated request sent any image, binary file, audio or video (see {@link mediaCount}). */
export function sentMedia(sent: SentRequest): boolean {
  if (!sent.request) return false
  const {images, files, audio, video} = mediaCount(sent.request)
  return images + files + audio + video > 0
}

const MEDIA_KINDS = ['images', 'files', 'audio', 'video'] as const

/** The kinds of media a refusal names, by the chat part type its words name. */
const PART_KIND: Record<string, keyof RefusedMedia> = {
  image_url: 'images',
  input_image: 'images',
  file: 'files',
  input_file: 'files',
  input_audio: 'audio',
  audio_url: 'audio',
  video_url: 'video',
}

/**
 * A text-only model's refusal of the request's images or files, and which of them it refuses:
 * DeepSeek's "Failed to deserialize the JSON body into the target type: messages[3]: unknown
 * variant `image_url`, expected `text`" (`file` for a PDF); vLLM's "deepseek-coder is not a
 * multimodal model"; llama.cpp's 500 "image input is not supported - hint: if this is unexpected,
 * you may need to provide the mmproj" (older: "Unsupported content part type: "image_url"");
 * vLLM's refusal of a `file` part ("Unsupported chat content part type: 'file'", a 400; before
 * mid-2026 a 501, "Unknown part type: file"); Zhipu's 1210 for GLM's text models
 * (`messages.content.type` takes `['text']` only); Groq's "messages[1].content must be a
 * string"; OpenAI's "image_url is only supported by certain models"; the Gemini API's for a
 * Gemma model, 400 INVALID_ARGUMENT "Image input modality is not enabled for
 * models/gemma-3-27b-it" and "Audio input modality is not enabled for models/gemma-3n-e4b-it"
 * (big-AGI's Gemini model list, langchainjs's Gemma 3n test, public bot reports of Gemma 3, 3n
 * and 4 on AI Studio); and the plain words of others ("does not support images"). Learned only for media the request sent: undefined when it
 * sent none of what the error names.
 */
export function mediaRefusal(errorText: string, sent: SentRequest, status = 400): RefusedMedia | undefined {
  // a validation error (a 422) lists what it refused with the input it refused: the conversation's
  // own words (a log the agent read, this very file) are no refusal of its media
  if (!sent.request || status === 422) return undefined
  const message = refusalMessage(errorText)
  if (message === undefined || ECHOES_INPUT.test(message)) return undefined
  let refused: RefusedMedia | undefined
  const serde = /unknown variant `?(\w+)`?, expected `?text`?(\s*(?:,|or\b))?/i.exec(message)
  const variant = serde?.[1]
  // (a part type vLLM does not know, or one its model takes none of: "Unsupported chat content part
  // type: 'input_audio'", "... does not support audio input", "At most 0 video(s) may be provided")
  const other =
    /(?:unsupported (?:chat )?content part type|unknown part type)\W+(input_audio|audio_url|video_url)\b/i.exec(
      message,
    )?.[1] ??
    /\bmodel (?:does not|doesn't|cannot) (?:support|accept) (audio|video)(?: inputs?)?(?:\s*[.,;]|\s*$)|^(audio|video) inputs? (?:is|are) not supported (?:for|by) (?:this|the) model\b|\bat most 0 (audio|video)\(?s?\)? may be provided\b|^(audio) input modality is not enabled for models\//i
      .exec(message)
      ?.slice(1)
      .find((m) => m !== undefined)
  if (variant !== undefined) {
    // serde names the first part it could not read, and the types it reads: `text` alone (DeepSeek)
    // refuses every kind of media the request sent, not only the one named (one try, not one a
    // kind); a longer list (`text` or `image_url`: TGI, mistral.rs) only the one named
    const kind = PART_KIND[variant]
    if (kind === undefined || mediaCount(sent.request)[kind] === 0) return undefined
    refused = serde?.[2] ? {[kind]: true} : {images: true, files: true, audio: true, video: true}
  } else if (
    /is not a multimodal model|content\.type\b[^\]]*\[\s*['"]text['"]\s*\]|^messages\[\d+\]\.content must be a string/i.test(
      message,
    )
  )
    refused = {images: true, files: true, audio: true, video: true}
  else if (other !== undefined)
    refused = {[PART_KIND[other] ?? (other.toLowerCase() as 'audio' | 'video')]: true}
  else if (
    /^image input is not supported|^image input modality is not enabled for models\/|not compiled for multimodal|(?:unsupported (?:chat )?content part type|unknown part type)\W+image_url|image_url is only supported by certain models|\bmodel (?:does not|doesn't|cannot) (?:support|accept) (?:images?|image inputs?|vision)(?:\s*(?:input)?\s*[.,;]|\s*$)|^(?:image|vision|multimodal) inputs? (?:is|are) not supported (?:for|by) (?:this|the) model\b/i.test(
      message,
    )
  )
    refused = {images: true}
  else if (/(?:unsupported (?:chat )?content part type|unknown part type)\W+file\b/i.test(message))
    refused = {files: true}
  if (!refused) return undefined
  const count = mediaCount(sent.request)
  const learned: RefusedMedia = {}
  for (const kind of MEDIA_KINDS) if (refused[kind] && count[kind] > 0) learned[kind] = true
  return MEDIA_KINDS.some((kind) => learned[kind]) ? learned : undefined
}

/** The kinds of media `media` names, in words (`images and audio`). */
const mediaWords = (media: RefusedMedia): string => {
  const kinds = MEDIA_KINDS.filter((kind) => media[kind])
  return kinds.length > 2 ? `${kinds.slice(0, -1).join(', ')} and ${kinds.at(-1)}` : kinds.join(' and ')
}

/**
 * A refusal of how a request asked for JSON, and what to learn from it: DeepSeek takes JSON mode
 * but not a schema ("This response_format type is unavailable now", no `param`; its older 422
 * "response_format.type `json_schema` is unavailable now"), and its JSON mode wants the prompt to
 * say "json" ("Prompt must contain the word 'json' in some form to use 'response_format' of type
 * 'json_object'"); other servers refuse `response_format` whole. Each step keeps the answer JSON
 * as far as the upstream allows: the schema goes into the system prompt, then JSON mode too.
 */
function jsonRefusal(
  errorText: string,
  sent: SentRequest,
): {learned: UpstreamAdaptation; note: string} | undefined {
  // Gemini 2.0 and 2.5 take no JSON response mime type beside function declarations, in Google's
  // words (Gemini 3 takes both: learned per model, not by name): a request with tools goes with
  // the instruction alone, as a Messages upstream gets a schema beside tools
  if (sent.upstream === 'gemini') {
    const asked = sent.request?.responseFormat
    if (
      asked === undefined ||
      asked.type === 'text' ||
      sent.request!.tools.length === 0 ||
      !/function calling with a response mime type: .application\/json. is unsupported/i.test(errorText)
    )
      return undefined
    return {
      learned: {json: 'instruction'},
      note: 'refused a JSON response beside function tools: sent again without the JSON mime type, an instruction to answer JSON at the end of the system instruction',
    }
  }
  const format = sent.responseFormat
  if (format !== 'json_schema' && format !== 'json_object') return undefined
  const {param, message} = errorParts(errorText)
  if (typeof param === 'string' && param !== 'response_format' && !param.startsWith('response_format.'))
    return undefined
  if (format === 'json_object' && /must contain the word\W+json/i.test(message))
    return {
      learned: {jsonInstruction: true},
      note: 'refused response_format json_object without "json" in the prompt: sent again with an instruction to answer JSON',
    }
  if (typeof param !== 'string' && ECHOES_INPUT.test(message)) return undefined
  // the type refused ("This response_format type is unavailable now", "'response_format.type'
  // must be 'json_schema' or 'text'", "Invalid value: 'json_schema'. Supported values are: ...")
  // or the field whole ("'response_format' is not supported"), not the client's own schema
  // (OpenAI's "Invalid schema for response_format ...", "'oneOf' is not supported" name the same
  // param: that 400 is the client's to see, and schemas still work for everyone else)
  const typeNamed =
    new RegExp(`(^|[^a-z_])${format}($|[^a-z_.])`, 'i').test(message) ||
    /response_format[ .`'"]+type/i.test(message) ||
    param === 'response_format.type'
  const wholeRefused =
    /['"`]?response_format['"`]?\s+(?:is\s+)?(?:not supported|unsupported|not allowed)/i.test(message)
  if (!typeNamed && !wholeRefused) return undefined
  if (
    !/unavailable|not (?:supported|available|allowed)|unsupported|unrecognized|unknown|does not support|must be|supported values/i.test(
      message,
    )
  )
    return undefined
  if (/invalid schema|response_format\.json_schema\./i.test(message)) return undefined
  if (typeof param === 'string' && param.startsWith('response_format.json_schema')) return undefined
  // (a request sends the schema only while nothing was learned, JSON mode only before JSON mode
  // was refused: each refusal is the next step's)
  if (format === 'json_schema')
    return {
      learned: {json: 'json_object'},
      note: 'refused response_format json_schema: sent again as json_object, the schema in the system prompt',
    }
  return {
    learned: {json: 'instruction'},
    note: 'refused response_format: sent again without it, an instruction to answer JSON in the system prompt',
  }
}

/**
 * A Gemini model's refusal of the thinking budget sent: "Thinking budget is not supported for this
 * model." (Gemma 4: any budget, 0 included, left out from then on), "Budget 0 is invalid. This model only
 * works in thinking mode." (Gemini 2.5 Pro: the budget is left out, the model decides), "The
 * thinking budget (31999) is invalid." (outside the model's range, 128-32 768 for 2.5 Pro,
 * 0-24 576 for 2.5 Flash: brought into the range when the error states it, else left out, and
 * so is any budget beyond it).
 */
function budgetRefusal(
  errorText: string,
  sent: number | undefined,
): {learned: NonNullable<UpstreamAdaptation['thinkingBudget']>; note: string} | undefined {
  if (sent === undefined) return undefined
  const {message} = errorParts(errorText)
  // Gemma 4 on the Gemini API takes no budget at all, 0 included (it always thinks)
  if (/thinking budget is not supported/i.test(message))
    return {
      learned: {none: true},
      note: `refused thinkingBudget ${sent}: sent again without it (the model takes none)`,
    }
  if (sent === 0 && /budget 0 is invalid/i.test(message))
    return {learned: {zero: true}, note: 'refused thinkingBudget 0: sent again without it, the model decides'}
  if (sent <= 0 || !new RegExp(`thinking budget\\W*${sent}\\W*is invalid`, 'i').test(message))
    return undefined
  const range = /between (\d+) and (\d+)/i.exec(message)
  if (range) {
    const [min, max] = [Number(range[1]), Number(range[2])]
    const next = Math.min(max, Math.max(min, sent))
    if (min > max || next === sent) return undefined
    return {learned: {min, max}, note: `refused thinkingBudget ${sent}: sent again with ${next}, its limit`}
  }
  // no range: a budget this large (or this small) and beyond goes without one (a budget sent is
  // always inside what was learned before: the rest went without)
  const learned = sent >= 1024 ? {over: sent} : {under: sent}
  return {learned, note: `refused thinkingBudget ${sent}: sent again without it, the model decides`}
}

/**
 * A Gemini model's refusal of the thinking config sent, translated or in a Gemini body passed
 * through (Gemini CLI routed to a model of another generation than the one it named): a model that
 * does not think, "Thinking is not enabled for models/gemma-3-27b-it" (Gemma 3; Gemini 2.0,
 * lobehub #7985), the whole config left out from then on; Gemini 2.5's "Thinking level is not
 * supported for this model." (Vertex: "thinking_level MEDIUM is not supported by this model"; Gemma
 * 4's for a level it does not take), the level left out from then on; a budget's refusal
 * ({@link budgetRefusal}).
 */
function thinkingConfigRefusal(
  errorText: string,
  sent: GeminiThinkingSent,
  known: UpstreamAdaptation,
  model: string,
): {next: UpstreamAdaptation; note: string} | undefined {
  if (
    sent.config &&
    !known.noThinking &&
    /thinking is not enabled for\b/i.test(errorParts(errorText).message)
  )
    return {
      next: {...known, noThinking: true},
      note: 'refused thinkingConfig: sent again without it (the model does not think)',
    }
  const raised = levelRefusal(errorText, sent.level, known, model)
  if (raised) return raised
  if (
    sent.level !== undefined &&
    /thinking[ _]level\b.{0,40}not supported/i.test(errorParts(errorText).message)
  )
    return {
      next: {...known, noThinkingLevel: true},
      note: `refused thinkingLevel ${sent.level}: sent again without it, the model decides`,
    }
  const budget = budgetRefusal(errorText, sent.budget)
  if (!budget) return undefined
  return {next: {...known, thinkingBudget: {...known.thinkingBudget, ...budget.learned}}, note: budget.note}
}

/** Gemini 3's thinking levels, each with the next one up (`HIGH`, the most, has none). */
const NEXT_LEVEL: Readonly<Record<string, string>> = {MINIMAL: 'LOW', LOW: 'MEDIUM', MEDIUM: 'HIGH'}

/**
 * A Gemini 3 model's refusal of the one thinking level sent, named in its words (Gemini API:
 * "Thinking level MINIMAL is not supported for this model. Please retry with other thinking
 * level.", theJayTea/WritingTools #282 for Pro and Flash 3.7 on; Vertex: "Unable to submit request
 * because thinking_level MEDIUM is not supported by this model", jenslys/opencode-gemini-auth #14):
 * from then on the next level up goes in its place (`MINIMAL` as `LOW`: leaving the level out
 * would have the model think at its default, high). `HIGH` refused, or a refusal that names no
 * level (Gemini 2.5's, of any), is no such refusal: the level is left out
 * ({@link thinkingConfigRefusal}).
 */
function levelRefusal(
  errorText: string,
  sent: string | undefined,
  known: UpstreamAdaptation,
  model: string,
): {next: UpstreamAdaptation; note: string} | undefined {
  if (sent === undefined) return undefined
  const level = sent.toUpperCase()
  // (a relay's name that fixes the level, `gemini-3-pro-high`: that one at once, not a climb)
  const named = nameLevel(model)
  const next = named !== undefined && named !== level ? named : NEXT_LEVEL[level]
  if (!next || known.thinkingLevels?.[level] !== undefined) return undefined
  const {message} = errorParts(errorText)
  const refused = /thinking[ _]level (\w+) is not supported/i.exec(message)
  if (refused?.[1].toUpperCase() !== level) return undefined
  // (Vertex names the level in the same words for a Gemini 2.5 model, which takes none: a level
  // climbed only for a model that takes levels by its name, or where Google asks for another)
  if (!takesThinkingLevel(model) && !/retry with other thinking level/i.test(message)) return undefined
  return {
    next: {...known, thinkingLevels: {...known.thinkingLevels, [level]: next}},
    note: `refused thinkingLevel ${sent}: sent again with ${next}, ${next === named ? 'the level its name says' : 'the next level up'}`,
  }
}

/**
 * A Gemini model's refusal of a `systemInstruction`, translated or in a Gemini body passed through:
 * Gemma 3 on the Gemini API, 400 INVALID_ARGUMENT "Developer instruction is not enabled for
 * models/gemma-3-27b-it". From then on the system text goes as the first part of the first user
 * turn (gemini.ts `systemIntoFirstTurn`), as Gemma's own chat template puts it.
 */
function systemInstructionRefusal(
  errorText: string,
  sent: boolean,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  if (!sent || known.noSystemInstruction) return undefined
  if (!/developer instruction is not enabled\b/i.test(errorParts(errorText).message)) return undefined
  return {
    next: {...known, noSystemInstruction: true},
    note: 'refused systemInstruction: sent again with the system text in the first user turn (the model takes none)',
  }
}

/** Where a chat or Responses body holds a tool-call id (an error's `param`). */
const TOOL_ID_PARAM = /^(?:messages\[\d+\]\.(?:tool_calls\[\d+\]\.id|tool_call_id)|input\[\d+\]\.call_id)$/

/**
 * A refusal of how the conversation looks rather than of a field (conversation-rules.ts), for a
 * chat upstream (the id length for a Responses one too):
 * - the reasoning of the history's assistant messages sent back, in a field the server does not
 *   take: Cerebras writes `reasoning` and refuses `reasoning_content` ("messages.2.assistant.
 *   reasoning_content: property 'messages.2.assistant.reasoning_content' is unsupported"), so it
 *   goes as `reasoning`; refused as `reasoning` too, it goes without;
 * - a tool-call id of another vendor's shape: Mistral's "Tool call id was toolu_01… but must be
 *   a-z, A-Z, 0-9, with a length of 9." (its chat template's "Tool call IDs should be
 *   alphanumeric strings with length 9!" through vLLM), OpenAI's "Invalid
 *   'messages[2].tool_calls[0].id': string too long. Expected a string with maximum length 40";
 * - a user message right after tool results: Mistral's "Unexpected role 'user' after role 'tool'".
 * A `param` that names another place of the body (`messages[3].content`) is no such refusal,
 * whatever its message quotes.
 */
/**
 * DeepSeek's `/v1/responses` refusing a call and its output that are not next to each other
 * (a developer message, a reasoning item between them): "No tool output found for tool call
 * call_00_…", or, from the output's side, "No tool call found for tool output with call_id …".
 * OpenAI's API pairs them by `call_id` and never says either.
 */
const SEPARATED_OUTPUT = /^No tool (?:output found for tool call|call found for tool output with call_id) \S+/

/** The log row's words for the rule learned from {@link SEPARATED_OUTPUT}. */
const ADJACENT_NOTE =
  "refused a tool call's output not right after the call: sent again with each call's output right after it, what stood between after them"

/**
 * Whether an upstream's error refuses an image or document inside a tool result (a request that
 * held one: the caller's to know), in the servers' words: LM Studio's `/v1/messages` "Only text
 * tool_result blocks are supported when tool_result.content is an array." (lmstudio #425);
 * Ollama's (local and cloud, ollama #18055) and Zen/OpenCode Go's Responses API's pydantic "Input
 * should be a valid string" (opencode #48740, a 422); for a Responses upstream, a relay's bare
 * "Invalid input" whose `param` names a `content` (`messages.12.content`: command-code #795). Read
 * from the error's message (and `param`), not from its whole text.
 */
export function refusesMediaInResults(errorText: string, family: 'messages' | 'responses'): boolean {
  const {param, message} = errorParts(errorText)
  if (/\bOnly text tool_result blocks are supported\b/i.test(message)) return true
  // pydantic's words for any string field: Ollama's whole message, or at a content path (Zen's
  // `param`, a FastAPI `detail` entry's `loc`), never another field's (`metadata.user_id`)
  if (/\bInput should be a valid string\b/.test(message))
    return typeof param === 'string'
      ? CONTENT_PATH.test(param)
      : /^Input should be a valid string\b/.test(message.trim()) ||
          PYDANTIC_AT_CONTENT.test(message) ||
          detailAtContent(errorText)
  return (
    family === 'responses' &&
    /^Invalid input\.?$/i.test(message.trim()) &&
    typeof param === 'string' &&
    CONTENT_PATH.test(param)
  )
}

/** pydantic's plain text: the location on a line of its own, through a content or output, then its words. */
const PYDANTIC_AT_CONTENT =
  /(?:^|\n)\s*[\w.[\]-]*\b(?:content|output)\b[\w.[\]-]*\s*\n\s+Input should be a valid string\b/

/** A path through a message's `content` (or a call output's `output`): `messages.14.user.content.str`. */
const CONTENT_PATH = /(?:^|\.)(?:content|output)(?:$|[.[])/

/** Whether a FastAPI error (`{"detail": [{"loc": [...], "msg": ...}]}`) says a string was wanted at a content. */
function detailAtContent(errorText: string): boolean {
  let detail: unknown
  try {
    detail = (JSON.parse(errorText) as {detail?: unknown}).detail
  } catch {
    return false
  }
  return (
    Array.isArray(detail) &&
    detail.some((d: {loc?: unknown; msg?: unknown} | null) => {
      const loc = d?.loc
      return (
        typeof d?.msg === 'string' &&
        /\bInput should be a valid string\b/.test(d.msg) &&
        Array.isArray(loc) &&
        loc.some((part) => part === 'content' || part === 'output')
      )
    })
  )
}

/** The log row's words for the rule learned from {@link refusesMediaInResults}. */
const MEDIA_OUT_NOTE =
  'refused an image or document inside a tool result: sent again with each one right after the results, in a user turn, the result keeping its text (or "[image attached below]")'

/** Whether a translated request's conversation holds media inside a tool result. */
const mediaInResults = (request: Request): boolean =>
  request.messages.some((m) =>
    m.parts.some((p) => p.type === 'tool_result' && p.content.some((c) => c.type === 'image')),
  )

/**
 * A refusal of media inside tool results ({@link refusesMediaInResults}) of a Messages or Responses
 * request that held some: a Messages body passed through (`sent.mediaInResults`) or a translated
 * request (its `request`). Undefined for any other request or refusal.
 */
function mediaInResultsRefusal(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  const family = sent.upstream
  if (known.mediaOutOfResults || (family !== 'messages' && family !== 'responses')) return undefined
  if (!(sent.mediaInResults || (sent.request !== undefined && mediaInResults(sent.request)))) return undefined
  if (!refusesMediaInResults(errorText, family)) return undefined
  return {next: {...known, mediaOutOfResults: true}, note: MEDIA_OUT_NOTE}
}

/** The log row's words for the rules learned from Gemini's refusal of where a result's media went. */
const RESULT_MEDIA_NOTES = {
  flat: 'refused images and documents inside a functionResponse (function_response.parts): sent again with them after every functionResponse of the turn',
  nested:
    "refused images and documents beside the functionResponse parts: sent again with each inside its functionResponse's parts, one part per call",
} as const

/**
 * A Gemini model's refusal of where a translated request put the images and documents of function
 * results (gemini.ts `resultsWithMedia`, by the model's name until a refusal teaches otherwise):
 * - inside the response (`nested`): Gemini 2.5 on Vertex AI, "Unable to submit request because
 *   `function_response.parts` is not supported for this model." (gemini-cli #19436): after the
 *   responses from then on;
 * - after the responses (`flat`): a Gemini 3 whose name does not say so (an alias, a relay's
 *   name), "Please ensure that the number of function response parts is equal to the number of
 *   function call parts of the function call turn." (gemini-cli PR #16137, #25765), or Vertex AI's
 *   "Requests ending with a model turn are not supported." to a body whose contents did not end with
 *   one (router-for-me/CLIProxyAPI #5415): inside them from then on; never for a `gemini-1*` or
 *   `gemini-2*` name, which refuses them inside.
 * Learned once per model (a rule learned is not turned back: a model that refuses both layouts
 * would have every request sent twice).
 */
function resultMediaRefusal(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
  model: string,
): {next: UpstreamAdaptation; note: string} | undefined {
  const layout = sent.geminiResultMedia
  if (layout === undefined || known.geminiResultMedia !== undefined) return undefined
  const {message} = errorParts(errorText)
  const refused =
    layout === 'nested'
      ? /function_response\.parts\W*(?:is|are) not supported/i.test(message)
      : /number of function response parts is equal to the number of function call parts/i.test(message) ||
        (/requests ending with a model turn are not supported/i.test(message) && !sent.geminiEndsWithModel)
  if (!refused) return undefined
  const next = layout === 'nested' ? 'flat' : 'nested'
  // (a Gemini 1.x or 2.x name refuses nesting: those words have another cause there, and a rule
  // learned is not turned back)
  if (next === 'nested' && /^(?:models\/)?gemini-[12]\b/.test(model)) return undefined
  return {next: {...known, geminiResultMedia: next}, note: RESULT_MEDIA_NOTES[next]}
}

/** The log row's words for the rule learned from Azure's refusal of `store: false` (`refusesStoreFalse`). */
const STORE_NOTE =
  'refused an item named by its id with store false (Azure OpenAI keeps no items then): sent again with store true'

/** The log row's words for the rule learned from a refused 1-hour cache. */
const CACHE_TTL_NOTE =
  "refused cache_control's ttl (Claude Code's 1-hour cache): sent again without ttl and scope (the 5-minute cache)"

/** The log row's words for the rule learned from a refused tool search. */
const DEFERRAL_NOTE =
  "refused Claude Code's tool search (deferred tools, tool_reference blocks): sent again with the referenced tools loaded, the others left out, each reference as its definition"

/** The log row's words for the rule learned from a refused empty namespace description. */
const NAMESPACE_NOTE =
  "refused a namespace tool's empty description: sent again with Codex's words for it (Tools in the functions namespace.)"

/** Whether an upstream's error refuses a call and its output that are not next to each other. */
export const refusesSeparatedOutputs = (errorText: string): boolean =>
  SEPARATED_OUTPUT.test(errorParts(errorText).message)

function conversationRefusal(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  const {param, message} = errorParts(errorText)
  // a validation error that echoes the request: the words are the client's (an error pasted into
  // the conversation), not the upstream's
  if (ECHOES_INPUT.test(message)) return undefined
  const chat = sent.upstream === undefined || sent.upstream === 'chat'
  // a Responses server that pairs calls and outputs by position (DeepSeek): a translated body
  // (another family's client, or Codex's tools made plain) goes with each output after its call
  if (sent.upstream === 'responses' && !known.adjacentOutputs && SEPARATED_OUTPUT.test(message))
    return {next: {...known, adjacentOutputs: true}, note: ADJACENT_NOTE}
  // Azure OpenAI behind a domain of its own, which kept no item of the turn before (sent with
  // `store: false`) and finds none of the reasoning items named by their ids: `store: true`
  if (sent.upstream === 'responses' && !known.storeTrue && refusesStoreFalse(message))
    return {next: {...known, storeTrue: true}, note: STORE_NOTE}
  // Cerebras's own wording, at the start of its message (its `param` is "validation_error")
  const history =
    /^messages\.\d+\.assistant\.(reasoning_content|reasoning): property '[^']*' is unsupported/i.exec(message)
  if (chat && history && (typeof param !== 'string' || param === 'validation_error')) {
    const next: UpstreamAdaptation['reasoningHistory'] =
      history[1].toLowerCase() === 'reasoning_content' && known.reasoningHistory === undefined
        ? 'reasoning'
        : 'drop'
    return {
      next: {...known, reasoningHistory: next},
      note:
        next === 'reasoning'
          ? 'refused reasoning_content in its history: sent again as reasoning'
          : `refused ${history[1]} in its history: sent again without it`,
    }
  }
  // the thinking mode of DeepSeek and Kimi wants `reasoning_content` on a tool call's turn
  // (DeepSeek's "Missing `reasoning_content` field in the assistant message at message index 1",
  // V4's "The `reasoning_content` in the thinking mode must be passed back to the API.", which
  // takes an empty one too, and wants it on the text that ends a tool loop as well;
  // Kimi's "thinking is enabled but reasoning_content is missing in assistant tool call message
  // at index 7", also as SiliconFlow's `{code: 20015, message}`): a history whose reasoning came
  // from a server that writes `reasoning` goes with it renamed, and every assistant message with
  // none (another vendor's turns, a model that streamed no reasoning, a carry lost) with an empty
  // one (conversation-rules.ts), so that no later shape of the history is refused again
  if (
    chat &&
    (typeof param !== 'string' || param === 'messages') &&
    (/^missing `?reasoning_content`? field in the assistant message/i.test(message) ||
      /^(?:[^\n]{0,80}?: )?thinking is enabled but reasoning_content is missing in assistant tool call message\b/i.test(
        message,
      ) ||
      /^(?:[^\n]{0,80}?: )?the `?reasoning_content`? in the thinking mode must be passed back to the api/i.test(
        message,
      )) &&
    known.reasoningHistory === undefined
  )
    return {
      next: {...known, reasoningHistory: 'reasoning_content'},
      note: 'refused an assistant turn without reasoning_content: sent again with it on every assistant turn (the reasoning there, or empty)',
    }
  // DashScope's refusal of a history tool call whose arguments are not JSON (Qwen3-Coder's broken
  // ones, a stream cut at its token limit), after its `<400> InternalError.Algo.InvalidParameter: `,
  // and MiniMax's ("invalid params, invalid function arguments json string, tool_call_id: … (2013)"):
  // the call stays in the client's history, so every later turn would be refused the same way
  if (
    chat &&
    !known.repairArgs &&
    (/^(?:[^\n]{0,80}?: )?the "function\.arguments" parameter .{0,40}must be in json format/i.test(message) ||
      /^invalid params, invalid function arguments json string\b/i.test(message))
  )
    return {
      next: {...known, repairArgs: true},
      note: "refused a history tool call's arguments that are not JSON: sent again with each such call's arguments repaired",
    }
  const unnamed = typeof param !== 'string'
  const alnum =
    /tool call id was [\s\S]* but must be a-z, a-z, 0-9, with a length of (\d+)/i.exec(message) ??
    /tool call ids should be alphanumeric strings with length (\d+)/i.exec(message)
  if (chat && unnamed && alnum) {
    const n = Number(alnum[1])
    if (!(n >= 1 && n <= 64)) return undefined
    return {
      next: {...known, toolIds: {...known.toolIds, alnum: n}},
      note: `refused a tool call id (it takes ${n} letters and digits): sent again with every id in that shape`,
    }
  }
  const where = typeof param === 'string' ? param : /'([^'\s]+)':\s*string too long/i.exec(message)?.[1]
  const max = /string too long[\s\S]*?maximum length (\d+)/i.exec(message)
  if (where !== undefined && TOOL_ID_PARAM.test(where) && max) {
    const n = Number(max[1])
    // shorter than a hash would keep ids apart: not one to learn
    if (!(n >= 9)) return undefined
    return {
      next: {...known, toolIds: {...known.toolIds, max: Math.min(n, known.toolIds?.max ?? n)}},
      note: `refused a tool call id over ${n} characters: sent again with long ids shortened`,
    }
  }
  const signatures =
    chat && known.thoughtSignatures === undefined ? signatureRefusal(errorText, message) : undefined
  if (signatures)
    return {
      next: {...known, thoughtSignatures: signatures},
      note: signaturesNote(signatures),
    }
  if (chat && unnamed && /unexpected role\W+user\W+after role\W+tool/i.test(message))
    return {
      next: {...known, bridgeToolTurns: true},
      note: 'refused a user message right after tool results: sent again with an assistant message between',
    }
  return undefined
}

/** Where a learned dummy thought signature goes, as the log row and `gwctl` name it. */
const signatureField = (field: ThoughtSignatureField): string =>
  field === 'reasoning_details'
    ? 'reasoning_details'
    : field === 'part'
      ? "the thoughtSignature of each model turn's first call"
      : `extra_content.${field}`

const signaturesNote = (field: ThoughtSignatureField): string =>
  `refused a tool call turn without its thought signature: sent again with Google's skip_thought_signature_validator in ${signatureField(field)} where the history has none`

/**
 * Gemini 3's refusal, on Gemini's own API, of a model turn whose first function call has no
 * thought signature (Google's "Function call is missing a thought_signature in functionCall parts",
 * Vertex AI's "... content block is missing a `thought_signature`"): a body passed through (Gemini
 * CLI, the @google/genai SDK) whose history another model made (Gemini 2.5, a fallback to another
 * Gemini, a route changed mid-loop), which a client that names a model not Gemini 3 (Gemini CLI
 * adds its own dummy only for a Gemini 3 name) sends unsigned. Learned: such turns go with the
 * dummy from then on (field `part`: ../../protocols/part-signatures.ts). (A translated body gets
 * the dummy at once: the Gemini encoder signs each turn's first call.)
 */
function geminiSignatureRefusal(
  errorText: string,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  if (known.thoughtSignatures !== undefined) return undefined
  const field = signatureRefusal(errorText, errorParts(errorText).message)
  if (field !== 'google' && field !== 'vertex') return undefined
  return {next: {...known, thoughtSignatures: 'part'}, note: signaturesNote('part')}
}

/**
 * Gemini 3's refusal of a tool call's turn without its thought signature, behind a chat completions
 * server, in its own words at the start of the message (not an echo of the conversation):
 * OpenRouter's (`metadata.raw`: "Gemini models require OpenRouter reasoning details to be preserved
 * in each request ..."), Google's OpenAI-compatible endpoint's ("Function call is missing a
 * thought_signature in functionCall parts ..."), Vertex AI's ("Unable to submit request because
 * function call `default_api:f` in the 2. content block is missing a `thought_signature`"): where
 * the server reads a signature, or undefined.
 */
function signatureRefusal(errorText: string, message: string): ThoughtSignatureField | undefined {
  if (errorText.includes('reasoning details to be preserved')) {
    const raw = providerRaw(errorText)
    return raw !== undefined &&
      /^Gemini models require OpenRouter reasoning details to be preserved/.test(raw)
      ? 'reasoning_details'
      : undefined
  }
  const field = googleSignatureField(errorText, message)
  if (field !== undefined || message === errorText || !/^\s*[[{]/.test(message)) return field
  // a relay that wraps the upstream's error body, as text, in its own message (`{"error": {"code":
  // 400, "message": "{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"Function call is
  // missing a thought_signature…`, lbjlaq/Antigravity-Manager #3229): that body's words, one level
  // down, read as the upstream's (only for a message that is JSON text)
  try {
    JSON.parse(message)
  } catch {
    return undefined
  }
  return googleSignatureField(message, errorParts(message).message)
}

/**
 * Google's and Vertex AI's own words for a call without its thought signature, at the start of the
 * message, or of a message of the body's (Google's endpoint may answer a list of errors).
 */
function googleSignatureField(errorText: string, message: string): 'google' | 'vertex' | undefined {
  const said = (words: string): boolean =>
    message.startsWith(words) ||
    errorText.includes(`"message": "${words}`) ||
    errorText.includes(`"message":"${words}`)
  if (said('Function call is missing a thought_signature in functionCall parts')) return 'google'
  if (
    said('Unable to submit request because function call ') &&
    /content block is missing a `thought_signature`/.test(errorText)
  )
    return 'vertex'
  return undefined
}

/**
 * Gemini's words for a field it cannot read, with the field's place in the body as its API names
 * it (proto names), and why: `Invalid JSON payload received. Unknown name "$schema" at
 * 'tools[0].function_declarations[0].parameters': Cannot find field.` (a field it does not know),
 * `Unknown name "type" at '…parameters.properties[0].value': Proto field is not repeating, cannot
 * start list.` (a field it knows, given a list: JSON Schema's `"type": ["string", "null"]`), one
 * line each, in its own error body or in a relay's message (LiteLLM's, its quotes escaped once or
 * twice).
 */
const UNKNOWN_NAME =
  /Unknown name \\*"([$\w-]{1,64})\\*" at \\*'([^'\\]{1,300})\\*'(?::[ \t]*([A-Za-z][^\n"\\]{0,80}))?/g

/** Why a line says a name is unknown: a field Gemini does not know (the only one learned as such). */
const CANNOT_FIND = /^Cannot find field/i

/** Why a line says a known field is refused: a list where Gemini's proto takes one value. */
const NOT_REPEATING = /^Proto field is not repeating/i

/**
 * Keywords a tool's schema cannot go without (root `type: object` included: Vertex refuses a
 * schema without it, "parameters schema should be of type OBJECT"): never learned as refused,
 * whatever a line says of them.
 */
const STRUCTURAL_KEYS: ReadonlySet<string> = new Set([
  'type',
  'properties',
  'items',
  'required',
  'enum',
  'anyOf',
  'nullable',
  'description',
])

/** Where a function declaration's schema is: the keywords refused in it. */
const SCHEMA_PLACE =
  /^tools\[\d+\]\.(?:function_declarations|functionDeclarations)\[\d+\]\.(?:parameters|parameters_json_schema|parametersJsonSchema)(?:\.|$)/

/** Where a function call's or response's `id` is (Vertex AI refuses it). */
const CALL_ID_PLACE =
  /^contents\[\d+\]\.parts\[\d+\]\.(?:function_call|functionCall|function_response|functionResponse)$/

/**
 * What Gemini's refusal of unknown fields teaches (see {@link UNKNOWN_NAME}), when every field it
 * names is one a request may go without: keywords of the tools' schemas (Google's
 * OpenAI-compatible endpoint and relays to Gemini read them as its OpenAPI subset; Claude Code's,
 * Codex's and opencode's tools carry `$schema`, `exclusiveMinimum`, `propertyNames`, `const`,
 * `additionalProperties`, `$ref`), all learned at once and added to those learned before; the
 * `id` of function calls and responses, which Vertex AI refuses (a Gemini upstream: its calls
 * and responses pair by order and name). Only a line that says `Cannot find field.` names an
 * unknown keyword; a `type` (or tuple `items`) given a list ("Proto field is not repeating, cannot
 * start list.": an MCP tool's `["string", "null"]`) teaches `typeLists`, each list written as one
 * type (tool-schemas.ts), never `type` gone; a structural keyword ({@link STRUCTURAL_KEYS}) is
 * never learned. Anything else it names is the client's to see.
 */
function unknownNames(
  errorText: string,
  tools: boolean,
  upstream: Family | undefined,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  if (!errorText.includes('Unknown name') || ECHOES_INPUT.test(errorText)) return undefined
  const keys: string[] = []
  let ids = false
  let lists = false
  for (const [, name, place, why = ''] of errorText.matchAll(UNKNOWN_NAME)) {
    if (SCHEMA_PLACE.test(place) && tools) {
      if (NOT_REPEATING.test(why) && (name === 'type' || name === 'items')) lists = true
      else if (!CANNOT_FIND.test(why) || STRUCTURAL_KEYS.has(name)) return undefined
      else if (!keys.includes(name)) keys.push(name)
    } else if (name === 'id' && CALL_ID_PLACE.test(place) && upstream === 'gemini' && CANNOT_FIND.test(why))
      ids = true
    else return undefined
  }
  const learned = keys.filter((k) => !known.schemaKeys?.includes(k))
  const newIds = ids && !known.noCallIds
  const newLists = lists && !known.typeLists
  if (learned.length === 0 && !newIds && !newLists) return undefined
  const notes: string[] = []
  if (learned.length > 0)
    notes.push(`refused the tool-schema keyword${learned.length > 1 ? 's' : ''} ${learned.join(', ')}`)
  if (newIds) notes.push('refused the id of function calls and responses')
  if (newLists) notes.push('refused a list of types in a tool schema')
  const gone = learned.length + (newIds ? 1 : 0)
  const how: string[] = []
  if (gone > 0) how.push(`without ${gone > 1 ? 'them' : 'it'}`)
  if (newLists) how.push('with one type each (nullable, or anyOf)')
  return {
    next: {
      ...known,
      ...(learned.length > 0 ? {schemaKeys: [...(known.schemaKeys ?? []), ...learned]} : {}),
      ...(newIds ? {noCallIds: true} : {}),
      ...(newLists ? {typeLists: true} : {}),
    },
    note: `${notes.join(', ')}: sent again ${how.join(', ')}`,
  }
}

/** What {@link extraFields} calls a refused `reasoning_content` of the history's assistant messages. */
export const REASONING_HISTORY = 'messages[].reasoning_content'
/** The same for `reasoning` (the field Cerebras and OpenRouter write). */
const REASONING_HISTORY_OTHER = 'messages[].reasoning'
/** The same for OpenRouter's `reasoning_details` (Gemini 3's signatures, kept for OpenRouter). */
const REASONING_DETAILS_HISTORY = 'messages[].reasoning_details'
/** The same for Google's `extra_content` on a tool call of the history (its thought signature). */
const EXTRA_CONTENT_HISTORY = 'messages[].tool_calls[].extra_content'
/**
 * The history's reasoning fields a server may refuse (a fallback from OpenRouter or Google to
 * Mistral carries them): each goes, with the rest of the history's reasoning.
 */
const HISTORY_FIELDS: readonly string[] = [
  REASONING_HISTORY,
  REASONING_HISTORY_OTHER,
  REASONING_DETAILS_HISTORY,
  EXTRA_CONTENT_HISTORY,
]

/**
 * The top-level fields of pydantic v1's text of `extra_forbidden` errors (`body -> FIELD` on a line,
 * then the words): empty when one of its errors is another (a missing field, a wrong type) or at
 * another place (`body -> messages -> 2 -> name`), which the request cannot go without.
 */
function pydanticV1Extras(text: string): string[] {
  const fields: string[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    // (trims and a prefix test, no regex over the line: an error body's size is the server's)
    const line = lines[i].trim()
    if (!line.startsWith('body -> ')) continue
    const name = line.slice('body -> '.length).trim()
    const why = (lines[i + 1] ?? '').trimEnd()
    if (!why.endsWith('(type=extra_forbidden)') || !/^[A-Za-z_]\w{0,63}$/.test(name)) return []
    fields.push(name)
  }
  return fields
}

/**
 * The top-level fields a FastAPI server refused as unknown (pydantic's `extra_forbidden`, `loc:
 * ["body", FIELD]`): Mistral's API answers 422 `{"message": {"detail": [...]}}` (its older answers
 * hold that detail as JSON text in `message`, others put it at the top). Empty for anything else.
 */
export function extraFields(errorText: string): string[] {
  let body: unknown
  try {
    body = JSON.parse(errorText)
  } catch {
    return []
  }
  const root = body as {detail?: unknown; message?: unknown; error?: unknown}
  // pydantic v1's text (NVIDIA NIM: `{"error": "body -> presence_penalty\n  Extra inputs are not
  // permitted (type=extra_forbidden)\nbody -> frequency_penalty\n  ..."}`)
  const text =
    typeof root?.error === 'string' ? root.error : typeof root?.detail === 'string' ? root.detail : ''
  if (text.includes('type=extra_forbidden')) return pydanticV1Extras(text)
  let message = root?.message
  if (typeof message === 'string' && message.startsWith('{')) {
    try {
      message = JSON.parse(message)
    } catch {
      // prose, not JSON
    }
  }
  const detail = Array.isArray(root?.detail)
    ? root.detail
    : (message as {detail?: unknown} | undefined)?.detail
  if (!Array.isArray(detail)) return []
  const fields: string[] = []
  for (const entry of detail as Array<{type?: unknown; loc?: unknown}>) {
    const loc = entry?.loc
    if (entry?.type !== 'extra_forbidden' || !Array.isArray(loc)) continue
    if (loc.length === 2 && loc[0] === 'body' && typeof loc[1] === 'string') fields.push(loc[1])
    // the reasoning of an assistant message in the history (`loc: ["body", "messages", 2,
    // "assistant", "reasoning_content"]`), or a tool call's thought signature (`[..., "assistant",
    // "tool_calls", 0, "extra_content"]`): the history may go without it
    else if (loc[0] === 'body' && loc[1] === 'messages' && typeof loc[2] === 'number') {
      const last = loc[loc.length - 1]
      const inCall = loc[loc.length - 3] === 'tool_calls' && typeof loc[loc.length - 2] === 'number'
      if (last === 'reasoning_content') fields.push(REASONING_HISTORY)
      else if (last === 'reasoning') fields.push(REASONING_HISTORY_OTHER)
      else if (last === 'reasoning_details') fields.push(REASONING_DETAILS_HISTORY)
      else if (last === 'extra_content' && inCall) fields.push(EXTRA_CONTENT_HISTORY)
      // another field refused inside a message: nothing a request may go without
      else return []
    } else return []
  }
  return [...new Set(fields)]
}

/** Reasoning efforts from least to most. */
const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max']

/** The values an error lists as supported ("Supported values are: 'low', 'medium', and 'high'."). */
export function supportedValues(errorText: string): string[] {
  const list = /supported values are:?\s*([^.]*(?:\.[^\s'"][^.]*)*)/i.exec(errorParts(errorText).message)?.[1]
  return list ? [...list.matchAll(/['"`]([\w-]+)['"`]/g)].map((m) => m[1]) : []
}

/**
 * The efforts a server lists when it refuses the effort value `sent`, in its own words for it:
 * - Ollama's `invalid reasoning value: "xhigh" (must be "high", "medium", "low", "max", or "none")`
 *   (ollama/ollama #17252, its `/v1/chat/completions` and `/v1/responses` alike; the quotes single
 *   or double), the value refused being `sent`;
 * - pydantic's `literal_error` (SGLang's and vLLM's 400, FastAPI's 422), whose `loc` ends in
 *   `reasoning_effort` (or `reasoning`, `effort`), whose `msg` is "Input should be 'low', 'medium'
 *   or 'high'" and whose `input` is `sent`, as Python writes it (`'loc': ('body',
 *   'reasoning_effort')`, CLIProxyAPI #1572) or as JSON (`"loc": ["body", "reasoning_effort"]`),
 *   and its plain text (`reasoning_effort\n  Input should be ... [type=literal_error,
 *   input_value='xhigh', ...]`): a narrow exception to {@link ECHOES_INPUT}, the place naming the
 *   field and the echo only the refused value;
 * - zod's "Expected 'low' | 'medium' | 'high', received 'xhigh'" (Kimi's "expected one of ...",
 *   CLIProxyAPI #1307), `received` being `sent`, with the effort named in the message or `sent` a
 *   value only an effort has (`xhigh`, `max`, `minimal`, `none`; never beside `verbosity`, whose
 *   values are low, medium and high too); serde's "unknown variant `xhigh`, expected one of `low`,
 *   `medium`, `high`" (a server written in Rust) on the same terms.
 * Undefined for other words, for a list without an effort, and for a list that holds `sent` (no
 * refusal of it).
 */
export function refusedEffortValues(errorText: string, sent: string): string[] | undefined {
  const value = sent.toLowerCase()
  if (!EFFORTS.includes(value)) return undefined
  // (quoted values, in JSON's escaped quotes too when a proxy wrapped the body as text)
  const quoted = (list: string) =>
    [...list.matchAll(/\\?['"`]([a-z]{3,7})\\?['"`]/gi)].map((m) => m[1].toLowerCase())
  const judged = (list: string[]): string[] | undefined => {
    const efforts = [...new Set(list.filter((v) => EFFORTS.includes(v)))]
    return efforts.length > 0 && !efforts.includes(value) ? efforts : undefined
  }
  const {message} = errorParts(errorText)
  const ollama = /\binvalid reasoning value:\s*\\?["']([\w-]{1,16})\\?["']\s*\(must be ([^)]{1,200})\)/i.exec(
    message,
  )
  if (ollama) return ollama[1].toLowerCase() === value ? judged(quoted(ollama[2])) : undefined
  if (/literal_error/.test(message)) {
    // each error of the list, as Python or JSON writes it: its place, its words, its input
    for (const m of message.matchAll(PYDANTIC_LITERAL)) {
      const loc = [...m[1].matchAll(/['"]([\w-]+)['"]/g)].map((p) => p[1])
      if (!effortPlace(loc) || m[4].toLowerCase() !== value) continue
      return judged(quoted(m[3]))
    }
    const plain = PYDANTIC_LITERAL_TEXT.exec(message)
    if (plain && effortPlace(plain[1].split('.')) && plain[3].toLowerCase() === value)
      return judged(quoted(plain[2]))
    return undefined
  }
  const zod =
    /\bexpected(?: one of)?:?\s*((?:\\?['"][a-z]{3,7}\\?['"]\s*(?:\||,|or)?\s*){1,8}),?\s*received\s*\\?['"]([\w-]{1,16})\\?['"]/i.exec(
      message,
    )
  if (
    zod &&
    zod[2].toLowerCase() === value &&
    !/verbosity/i.test(message) &&
    (/effort/i.test(message) || !['low', 'medium', 'high'].includes(value))
  )
    return judged(quoted(zod[1]))
  // serde's (a server written in Rust): "unknown variant `xhigh`, expected one of `low`, `medium`,
  // `high`", on the same terms as zod's
  const serde =
    /\bunknown variant `([\w-]{1,16})`, expected (?:one of )?((?:`[a-z]{3,7}`(?:, | or )?){1,8})/i.exec(
      message,
    )
  if (
    serde &&
    serde[1].toLowerCase() === value &&
    !/verbosity/i.test(message) &&
    (/effort/i.test(message) || !['low', 'medium', 'high'].includes(value))
  )
    return judged(quoted(serde[2]))
  return undefined
}

/** Whether a validation error's place (`loc`, a path) is an effort's: `reasoning_effort`, `reasoning.effort`, `effort`. */
const effortPlace = (loc: readonly string[]): boolean => {
  const last = loc.at(-1)
  return last === 'reasoning_effort' || last === 'effort' || last === 'reasoning'
}

/**
 * One error of pydantic's list, in Python's repr (`{'type': 'literal_error', 'loc': ('body',
 * 'reasoning_effort'), 'msg': "Input should be 'low', 'medium' or 'high'", 'input': 'xhigh', ...}`)
 * or as FastAPI's JSON: its `loc` (1), the quote of its `msg` (2), its words after "Input should
 * be" (3) and its `input` (4).
 */
const PYDANTIC_LITERAL =
  /['"]type['"]\s*:\s*['"]literal_error['"]\s*,\s*['"]loc['"]\s*:\s*[[(]([^\])]{0,200})[\])]\s*,\s*['"]msg['"]\s*:\s*(\\?["'])Input should be ((?:(?!\2)[^\n]){1,200})\2\s*,\s*['"]input['"]\s*:\s*['"]([\w-]{1,16})['"]/g

/** pydantic's plain text: the place on a line of its own, its words, the input after `input_value=`. */
const PYDANTIC_LITERAL_TEXT =
  /^\s*([\w.]{1,80})\s*\n\s+Input should be ([^\n[]{1,200}?)\s*\[type=literal_error, input_value='([\w-]{1,16})'/m

/**
 * The efforts a model that always thinks lists when it refuses "off" or another effort: Z.AI's 1210
 * for GLM-5.3, "This model always engages in thinking and cannot be disabled; please use low, high,
 * or max", BigModel's "该模型始终思考，不支持关闭思考；请使用 low、high 或 max。" (hermes-agent PR
 * #97286, #98465). Undefined for other words.
 */
export function alwaysThinkingEfforts(message: string): string[] | undefined {
  const list =
    /cannot be disabled\W{0,3}please use ([\w ,]{1,80})|不支持关闭思考\W{0,3}请使用([\w、 或]{1,80})/i.exec(
      message,
    )
  if (!list) return undefined
  const values = (list[1] ?? list[2]).split(/[\s,、]+|或/).filter((v) => EFFORTS.includes(v.toLowerCase()))
  return values.length > 0 ? values.map((v) => v.toLowerCase()) : undefined
}

/**
 * What a refusal of "off" or an effort by a model that always thinks ({@link alwaysThinkingEfforts})
 * teaches a chat or Responses request: every effort it does not take goes as the nearest it lists
 * (`effort`, the map `supportedValues`' refusals feed), `none` as the least, so that one refusal
 * covers the helper call that asked for no thinking and the main agent's `medium` alike. "Off" is
 * the gateway's own switch for a request that asked for no thinking (`thinking: disabled`,
 * `enable_thinking: false`: the retry sends the least effort in its place, translate.ts
 * `adaptBody`) or an effort `none`. Null for such words about an effort it takes (nothing to
 * learn), undefined for other words.
 */
function alwaysThinkingRefusal(
  message: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | null | undefined {
  const listed = alwaysThinkingEfforts(message)
  if (listed === undefined) return undefined
  const switched =
    sent.request?.reasoning?.disabled === true &&
    (sent.fields.includes('thinking') || sent.fields.includes('enable_thinking'))
  const from = sent.effort ?? (switched ? 'none' : undefined)
  if (from === undefined || listed.includes(from)) return null
  const effort: Record<string, string> = {...known.effort}
  for (const value of EFFORTS) {
    const instead = listed.includes(value) ? undefined : nearestEffort(value, listed)
    if (instead !== undefined) effort[value] = instead
  }
  const instead = effort[from]
  if (instead === undefined) return null
  const field = sent.fields.includes('reasoning') ? 'reasoning.effort' : 'reasoning_effort'
  return {
    next: {...known, effort, alwaysThinks: true},
    note: `refused ${from === 'none' ? 'thinking off' : `${field} ${from}`} (it always thinks, at ${listed.join(', ')}): sent again with ${field} ${instead}`,
  }
}

/**
 * The supported effort nearest `sent` (a tie goes to the higher one: the client asked for some
 * reasoning); `none` only for `minimal`, the one that is nearly none.
 */
export function nearestEffort(sent: string, supported: readonly string[]): string | undefined {
  const at = EFFORTS.indexOf(sent)
  if (at < 0) return undefined
  let best: string | undefined
  let bestDistance = Infinity
  for (const value of supported) {
    const i = EFFORTS.indexOf(value)
    if (i < 0 || (value === 'none' && sent !== 'minimal')) continue
    const distance = Math.abs(i - at)
    if (distance < bestDistance || (distance === bestDistance && i > EFFORTS.indexOf(best!))) {
      best = value
      bestDistance = distance
    }
  }
  return best
}

/**
 * A chat client's system messages passed through where the model's template takes none: after the
 * conversation began, or several in a row. MiniMax's "invalid params, invalid chat setting (2013)"
 * or "chat content has invalid message role: system (2013)", Qwen3.5's and later chat templates'
 * "System message must be at the beginning." (a 400 from vLLM and llama.cpp, a 500 from Ollama:
 * ollama/ollama #18241, Mochocyang/QMAI #59; read by those words only, never a bare 500).
 */
function systemOrderRefusal(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  if (!sent.lateSystem && !sent.successiveSystem) return undefined
  if (
    !/invalid params, invalid chat setting|invalid message role: system|system message must be at the beginning/i.test(
      errorText,
    )
  )
    return undefined
  // a system message after the conversation began (a lone one between turns: a harness's
  // reminder, a hook's context; or a run there): every system message goes folded into the
  // first, at the front, which these templates take. Before the rule for runs: a body with both
  // is taken by this one alone (one system message, at the front)
  if (sent.lateSystem && !known.systemFirst)
    return {
      next: {...known, systemFirst: true},
      note: 'refused a system message after the first turn: sent again with every system message folded into the first',
    }
  // several in a row (opencode's plugins, Cline's and others' context blocks; a translated request
  // sends one): the run goes as one message, as user runs do (the same rule)
  if (sent.successiveSystem && !known.alternateRoles)
    return {
      next: {...known, alternateRoles: true},
      note: 'refused several system messages in a row: sent again with each run of messages of one role as one message',
    }
  return undefined
}

/**
 * What a refusal teaches a request that was sent with `known` learned: the next state and the
 * log row's note, or undefined when it teaches nothing.
 */
/**
 * `anthropic-beta` values a Messages upstream refused, by Anthropic's words as the hosts that front
 * Claude (Vertex AI, Azure Foundry) and relays pass them on: "Unexpected value(s)
 * \`advisor-tool-2026-03-01\` for the \`anthropic-beta\` header. Please consult our documentation
 * at docs.anthropic.com or try again without the header." (several: "\`a\`, \`b\`"; anthropics/
 * claude-code #70563, #46105; QuantumNous/new-api #2975). Each Claude Code release adds betas such
 * a host does not know yet, and every request is refused. Read from the error's whole text (a
 * relay's wrapping keeps the words).
 */
const UNEXPECTED_BETAS =
  /Unexpected value\(s\)\s+([^\n]{1,4000}?)\s+for the\s+\W{0,2}anthropic-beta\W{0,2}\s+header/i

/** Bedrock's refusal of a value of the header, which names none (router-for-me/CLIProxyAPI #4750, new-api #3041). */
const INVALID_BETA_FLAG = /\binvalid beta flag\b/i

/** The values of an `anthropic-beta` header, in order (trimmed, none empty). */
export function betaValues(header: string): string[] {
  const values: string[] = []
  for (const value of header.split(',')) {
    const trimmed = value.trim()
    if (trimmed !== '') values.push(trimmed)
  }
  return values
}

/**
 * The body fields of Claude Code's that a beta of the `anthropic-beta` header turns on, by the
 * beta's name up to its date: a host refuses such a field sent without its beta ("diagnostics:
 * Extra inputs are not permitted"), so a beta learned away takes its fields with it, in the same
 * retry (cache diagnosis's `diagnostics`, the server-side fallback's `fallbacks` and
 * `fallback_credit_token`, fast mode's `speed`, context editing's `context_management`).
 */
const BETA_FIELDS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['context-management-', ['context_management']],
  ['cache-diagnosis-', ['diagnostics']],
  ['server-side-fallback-', ['fallbacks', 'fallback_credit_token']],
  ['fast-mode-', ['speed']],
]

/** The body fields among those sent that need one of the betas `refused` ({@link BETA_FIELDS}). */
function fieldsOfBetas(refused: readonly string[], sent: SentRequest, known: UpstreamAdaptation): string[] {
  const fields: string[] = []
  for (const [prefix, needing] of BETA_FIELDS)
    if (refused.some((b) => b.startsWith(prefix)))
      for (const f of needing) if (sent.fields.includes(f) && !known.drop?.includes(f)) fields.push(f)
  return fields
}

/**
 * What a Messages upstream's refusal of the `anthropic-beta` values it was sent (`sent.betas`)
 * teaches: those it names, among those sent, go no more (the others kept, in order); named none
 * (Bedrock's "invalid beta flag"), the header goes no more. The body fields that need a beta then
 * dropped go with it ({@link BETA_FIELDS}: `drop`, cut out of a body passed through). Undefined for
 * any other words, and for values named that were not sent (a relay's own).
 */
function betaRefusal(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  if (sent.betas === undefined) return undefined
  const values = betaValues(sent.betas)
  if (values.length === 0) return undefined
  /** `learned` with the fields of the betas `refused` dropped, and the note's words for them. */
  const withFields = (learned: UpstreamAdaptation, refused: readonly string[]) => {
    const fields = fieldsOfBetas(refused, sent, known)
    if (fields.length === 0) return {next: learned, also: ''}
    return {
      next: {...learned, drop: [...(known.drop ?? []), ...fields]},
      also: ` and without ${fields.join(', ')} (${fields.length > 1 ? 'fields' : 'a field'} of ${refused.length > 1 ? 'those betas' : 'that beta'})`,
    }
  }
  const named = UNEXPECTED_BETAS.exec(errorText)
  if (named) {
    const refused = [...named[1].matchAll(/[\w.:-]+/g)].map((m) => m[0]).filter((v) => values.includes(v))
    if (refused.length === 0) return undefined
    const {next, also} = withFields(
      {...known, refusedBetas: [...new Set([...(known.refusedBetas ?? []), ...refused])]},
      refused,
    )
    return {
      next,
      note: `refused anthropic-beta ${refused.join(', ')}: sent again without ${refused.length > 1 ? 'them' : 'it'}${also}`,
    }
  }
  if (known.noBetas || !INVALID_BETA_FLAG.test(errorText)) return undefined
  const {next, also} = withFields({...known, noBetas: true}, values)
  return {
    next,
    note: `refused its anthropic-beta values (invalid beta flag, none named): sent again without the header${also}`,
  }
}

/**
 * What a Messages upstream's refusal of a server tool by its tag teaches a body passed through that
 * offered it beside other tools (`sent.optionalServerTools`): Anthropic's validation words for a
 * host without Claude Code's advisor, "tools.2: Input tag 'advisor_20260301' found using 'type' does
 * not match any of the expected tags: …" (sifxprime/krouter PR #16), or a relay's "unknown tool
 * type: advisor_20260301". The type named, among those sent, goes from then on (translate.ts
 * `adaptPassedMessages`); a refusal of a block in the history ("messages.1.content.2: Input tag
 * 'advisor_tool_result' …") names no tool type and teaches nothing here.
 */
function serverToolRefusal(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | undefined {
  const message = refusalMessage(errorText)
  if (message === undefined || sent.optionalServerTools === undefined) return undefined
  const tag =
    /\btools\.\d+\W{0,4}Input tag\W{1,3}([\w.-]{1,64})\W{1,3} found using\W{1,3}type\W{1,3} does not match/i.exec(
      message,
    )?.[1] ?? /\b(?:unknown|unsupported) tool type\W{0,4}([\w.-]{1,64})/i.exec(message)?.[1]
  if (tag === undefined || !sent.optionalServerTools.includes(tag)) return undefined
  return {
    next: {...known, refusedServerTools: [...(known.refusedServerTools ?? []), tag]},
    note: `refused its ${tag} tool: sent again without it`,
  }
}

function decide(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
  status: number,
  model: string,
): {next: UpstreamAdaptation; note: string} | undefined {
  // `anthropic-beta` values a Messages upstream refused (its header, not the body)
  if (status === 400 && sent.betas !== undefined) {
    const betas = betaRefusal(errorText, sent, known)
    if (betas) return betas
  }
  // a server tool of a Messages body passed through refused by its tag (Claude Code's advisor)
  if (status === 400 && sent.optionalServerTools !== undefined) {
    const tool = serverToolRefusal(errorText, sent, known)
    if (tool) return tool
  }
  // a Messages body passed through (Claude Code's): a top-level field or a tool's member a strict
  // host does not know (its `diagnostics`, `speed`, tools' `eager_input_streaming`...)
  if (sent.upstream === 'messages' && sent.stream !== undefined && (status === 400 || status === 422)) {
    const fields = passedMessagesRefusal(errorText, sent, known)
    if (fields) return fields
  }
  // a Responses body passed through (Codex's; `stream` is said only of a body passed through):
  // only a field it does not know is learned here, what passedResponses applies
  if (sent.upstream === 'responses' && sent.stream !== undefined)
    return passedResponsesRefusal(errorText, sent, known, status)
  // a text-only model refused the images or files of the conversation: each goes as a line
  const media = mediaRefusal(errorText, sent, status)
  if (media) {
    const merged: RefusedMedia = {...known.media, ...media}
    return {
      next: {...known, media: merged},
      note: `refused ${mediaWords(merged)} (a text-only model): sent again with a line in place of each`,
    }
  }
  // llama.cpp answers its refusal of images with a 500, older vLLM its refusal of a file with a
  // 501, Ollama its chat template's refusal of a system message's place with a 500: nothing else
  // is learned from one
  if (status >= 500) return status === 500 ? systemOrderRefusal(errorText, sent, known) : undefined
  // more tools than the model takes (a translated request's count with its web search, which the
  // upstream counts as one)
  if (status === 400) {
    const tools =
      sent.tools ?? (sent.request ? sent.request.tools.length + (sent.request.webSearch ? 1 : 0) : undefined)
    const cap = toolCapRefusal(errorText, tools, known)
    if (cap) return cap
  }
  // Gemini's refusal of fields it does not know, by their place: tool-schema keywords (behind a
  // chat server or a relay), the ids of function calls and responses (Vertex AI)
  const unknown =
    status === 400
      ? unknownNames(errorText, (sent.request?.tools.length ?? 0) > 0, sent.upstream, known)
      : undefined
  if (unknown) return unknown
  const choice = toolChoiceRefusal(errorText, sent, known, status, model)
  if (choice) return choice
  // (a 404 is read only for the words above: any other stays what it is)
  if (status === 404) return undefined
  // an effort's value refused in a server's own words (Ollama's, pydantic's literal_error, zod's),
  // with the values it takes: the nearest of them (OpenAI's "Supported values are" is read below,
  // with the field it names)
  if (sent.effort !== undefined && sent.upstream !== 'messages' && sent.upstream !== 'gemini') {
    const listed = refusedEffortValues(errorText, sent.effort)
    if (listed)
      return effortsLearned(
        listed,
        sent.effort,
        sent.fields.includes('reasoning_effort') ? 'reasoning_effort' : 'reasoning.effort',
        known,
      )
  }
  // FastAPI servers (Mistral's API) name each field they do not take by its place in the body
  const extras = extraFields(errorText)
  if (extras.length > 0) {
    const fields = extras.filter(
      (f) =>
        (HISTORY_FIELDS.includes(f) && (sent.upstream === undefined || sent.upstream === 'chat')) ||
        ((ADAPTABLE as readonly string[]).includes(f) && sent.fields.includes(f) && !chatOnly(f, sent)),
    )
    // a field it refuses that the request cannot go without: the client sees the refusal
    if (fields.length !== extras.length) return undefined
    const top = fields.filter((f) => !HISTORY_FIELDS.includes(f))
    const history = top.length < fields.length
    const historyFields = fields
      .filter((f) => !top.includes(f))
      .map((f) =>
        f === EXTRA_CONTENT_HISTORY ? "its tool calls' extra_content" : f.slice('messages[].'.length),
      )
    return {
      next: {
        ...known,
        ...(top.length > 0 ? {drop: [...new Set([...(known.drop ?? []), ...top])]} : {}),
        // FastAPI takes no other field for it: the history goes without
        ...(history ? {reasoningHistory: 'drop' as const} : {}),
      },
      note: `refused ${[...top, ...(history ? [`${historyFields.join(' and ')} in its history`] : [])].join(', ')}: sent again without ${fields.length > 1 ? 'them' : 'it'}`,
    }
  }
  // a 422 is a validation error of any kind (FastAPI servers echo the whole body in it): beyond
  // the fields it names above, only DeepSeek's older refusal of a JSON schema is learned from one
  if (status === 422) {
    if (sent.upstream === 'messages' && sent.thinking === 'adaptive' && FASTAPI_ADAPTIVE.test(errorText))
      return adaptiveRefused(known)
    const json = jsonRefusal(errorText, sent)
    return json && {next: {...known, ...json.learned}, note: json.note}
  }
  // OpenAI's chat "Could not finish the message because max_tokens or model output limit was
  // reached" (`param` null) names max_tokens in its words, which the field rules below would read
  // as max_tokens refused and send every later request without it (review77 #5): it teaches the
  // floor of 16 only below 16 (outputFloor), else nothing (the request at 16 that still cannot
  // finish reaches the client: one try again, no more). Where it can be a JSON answer cut short (a
  // request for JSON without reasoning), the floor is only for requests for JSON: a classifier's
  // plain tiny maximum to that model stays as it came (review77 #6)
  if (COULD_NOT_FINISH.test(errorText)) {
    if (sent.maxTokens === undefined || sent.maxTokens >= 16) return undefined
    if (jsonCutShort(sent))
      return known.minJsonOutputTokens !== undefined
        ? undefined
        : {
            next: {...known, minJsonOutputTokens: 16},
            note: `refused max_tokens ${sent.maxTokens} for JSON (its answer cut short, or the model's floor): sent again with 16, and each request for JSON so`,
          }
  }
  const floor = outputFloor(errorText, sent.maxTokens)
  if (floor !== undefined)
    return {
      next: {...known, minOutputTokens: floor},
      note: `refused max_tokens ${sent.maxTokens}: sent again with ${floor}, its minimum`,
    }
  const limit = outputLimit(errorText, sent.maxTokens)
  if (limit !== undefined) {
    return {
      next: {...known, maxTokens: limit},
      note: `refused max_tokens ${sent.maxTokens}: sent again with ${limit}, its limit`,
    }
  }
  // a web search offered beside functions (Codex's live search) that the server does not run (an
  // Anthropic-compatible one without the server tool): the requests go without it
  if (sent.optionalSearch && !known.noWebSearch && searchToolRefused(errorText))
    return {
      next: {...known, noWebSearch: true},
      note: 'refused its web search tool: sent again without it',
    }
  // Anthropic requires max_tokens: besides its cap, a Messages upstream teaches only how its
  // model thinks and which sampling settings it dropped
  if (sent.upstream === 'messages') return claudeRefusal(errorText, sent, known)
  // (before the field named: gpt-5.6's refusal of tools names `reasoning_effort` as its param
  // whether it was sent or not)
  if (sent.upstream !== 'gemini') {
    const thinking = thinkingRefusal(errorText, sent, known)
    if (thinking !== undefined) return thinking ?? undefined
  }
  // successive user or assistant messages of a chat client passed through (a translated request
  // never sends them): each run goes as one message
  if (
    sent.successiveRoles &&
    !known.alternateRoles &&
    /does not support successive user or assistant messages|roles must alternate user\/assistant/i.test(
      errorText,
    )
  )
    return {
      next: {...known, alternateRoles: true},
      note: 'refused successive user or assistant messages: sent again with each run as one message',
    }
  const system = systemOrderRefusal(errorText, sent, known)
  if (system) return system
  // OpenAI's refusal of a tool schema whose top level is a union (a zod union of an MCP tool),
  // which a translated request never sends: a chat client's tools passed through go as one object
  if (
    (sent.upstream === undefined || sent.upstream === 'chat') &&
    !known.objectSchemas &&
    sent.fields.includes('tools') &&
    /schema must have type 'object' and not have 'oneOf'\/'anyOf'\/'allOf'/.test(errorText)
  )
    return {
      next: {...known, objectSchemas: true},
      note: 'refused a tool schema whose top level is a union: sent again with each as one object',
    }
  // a server named for Claude that takes no cache marks on content parts ("Extra inputs are not
  // permitted" at `messages.0.content.0.cache_control`): the requests go without them
  if (sent.cacheMarks && !known.noCacheMarks && /cache_control/.test(errorText) && REFUSES.test(errorText))
    return {
      next: {...known, noCacheMarks: true},
      note: 'refused cache_control on content parts: sent again without it',
    }
  if (sent.upstream !== 'gemini') {
    const rule = conversationRefusal(errorText, sent, known)
    if (rule) return rule
  }
  // (a flag read: set only where Z.AI's or Moonshot's preserved thinking went)
  if (sent.preservedThinking) {
    const preserved = preservedThinkingRefusal(errorText, known)
    if (preserved) return preserved
  }
  if (sent.upstream === 'gemini') {
    const json = jsonRefusal(errorText, sent)
    if (json) return {next: {...known, ...json.learned}, note: json.note}
    const media = resultMediaRefusal(errorText, sent, known, model)
    if (media) return media
    const instruction = systemInstructionRefusal(errorText, sent.systemInstruction === true, known)
    if (instruction) return instruction
    return thinkingConfigRefusal(
      errorText,
      {
        ...(sent.thinkingLevel !== undefined && {level: sent.thinkingLevel}),
        ...(sent.thinkingBudget !== undefined && {budget: sent.thinkingBudget}),
        ...(sent.thinkingConfig && {config: true as const}),
      },
      known,
      model,
    )
  }
  const json = jsonRefusal(errorText, sent)
  if (json) return {next: {...known, ...json.learned}, note: json.note}
  // vLLM's "maximum context length is C tokens and your request has I input tokens": with the
  // prompt alone past the context, no field is to blame
  const context = /maximum context length is (\d+) tokens and your request has (\d+) input tokens/i.exec(
    errorText,
  )
  if (context && Number(context[2]) >= Number(context[1])) return undefined
  // the older wording of vLLM and OpenAI ("... is 8192 tokens. However, you requested 9000 tokens
  // (1000 in the messages, 8000 in the completion)", `param: messages`): the completion's part is
  // what a request may go without, when the messages alone fit
  const asked =
    /maximum context length is (\d+) tokens.*?\((\d+) in the messages, (\d+) in the completion\)/is.exec(
      errorText,
    )
  const completionField = sent.fields.includes('max_tokens')
    ? 'max_tokens'
    : sent.fields.includes('max_completion_tokens')
      ? 'max_completion_tokens'
      : undefined
  const field = asked
    ? Number(asked[2]) < Number(asked[1]) && Number(asked[3]) > 0
      ? completionField
      : undefined
    : refusedField(errorText, sent.fields)
  if (!field || chatOnly(field, sent)) return undefined
  // a refused effort with the values the model takes ("Supported values are: 'low', 'medium',
  // and 'high'."): the nearest of them, not none
  if ((field === 'reasoning_effort' || field === 'reasoning') && sent.effort !== undefined) {
    const instead = nearestEffort(sent.effort, supportedValues(errorText))
    if (instead !== undefined && instead !== sent.effort) {
      return {
        next: {...known, effort: {...known.effort, [sent.effort]: instead}},
        note: `refused ${field === 'reasoning' ? 'reasoning.effort' : field} ${sent.effort}: sent again with ${instead}`,
      }
    }
  }
  // OpenAI's reasoning models: "Use 'max_completion_tokens' instead." (vLLM names both fields
  // in its "'max_tokens' or 'max_completion_tokens' is too large": dropped, its default is what
  // fits the context)
  const rename = field === 'max_tokens' && /use .?max_completion_tokens.? instead/i.test(errorText)
  const next: UpstreamAdaptation = rename
    ? {...known, maxCompletionTokens: true}
    : {...known, drop: [...new Set([...(known.drop ?? []), field])]}
  return {next, note: `refused ${field}: sent again ${rename ? 'as max_completion_tokens' : 'without it'}`}
}

/**
 * A chat server's refusal of a forced `tool_choice` (`required`, a named function), in its own
 * words, the whole message: Z.AI's 400 for GLM, "Tool choice must be auto" (vectorize-io/hindsight
 * #4246), and OpenRouter's 404 when none of the model's providers takes it, "No endpoints found
 * that support the provided 'tool_choice' value." (zed-industries/zed #36094: a 404, read for
 * these words alone); or a thinking-mode server's 400 at the start of its message
 * ({@link THINKING_TOOL_CHOICE}: DeepSeek V4 and deepseek-reasoner, Kimi, DashScope's Qwen3). The
 * requests go with `auto`, the call asked for in words; but a thinking-mode refusal of a request
 * sent with thinking on, to a model whose switch is known (thinking-off.ts `thinkingOffFields`:
 * Qwen3, GLM; DeepSeek V4 and Kimi get it from the first try), teaches that the requests that force
 * a call go with thinking off instead, the forced choice kept. Not for a model whose "off" is only
 * its least effort (Kimi K3, `kimi-for-coding`, GLM-5.3: `reasoning_effort: "low"`, still
 * thinking): the retry would send the same bytes, so its first refusal teaches `auto`. Refused with
 * thinking off too (or the switch refused as a field), the forcing goes.
 */
function toolChoiceRefusal(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
  status: number,
  model: string,
): {next: UpstreamAdaptation; note: string} | undefined {
  if (!sent.forcedTool || known.autoToolChoice) return undefined
  if (sent.upstream !== undefined && sent.upstream !== 'chat') return undefined
  const message = refusalMessage(errorText)?.trim()
  if (message === undefined) return undefined
  const refused =
    status === 404
      ? /^No endpoints found that support the provided 'tool_choice' value\.?$/.test(message)
      : status === 400 &&
        (/^Tool choice must be auto\.?$/i.test(message) || THINKING_TOOL_CHOICE.test(message))
  if (!refused) return undefined
  const off =
    status === 400 && sent.thinkingOff === undefined && !known.forcedThinkingOff
      ? thinkingOffFields(model)
      : undefined
  if (
    off &&
    chatThinkingIsOff(off) &&
    THINKING_TOOL_CHOICE.test(message) &&
    Object.keys(off).some((field) => !known.drop?.includes(field))
  )
    return {
      next: {...known, forcedThinkingOff: true},
      note: `refused a forced tool_choice in thinking mode: sent again with thinking off (${offWords(off)}), the forced choice kept`,
    }
  return {
    next: {...known, autoToolChoice: true},
    note: 'refused a forced tool_choice: sent again with tool_choice auto, the call asked for at the end of the prompt',
  }
}

/** A model's switch of thinking off, as the log row and `gwctl doctor` name it. */
const offWords = (off: Record<string, unknown>): string =>
  Object.entries(off)
    .map(([field, value]) =>
      typeof value === 'object' && value !== null
        ? Object.entries(value)
            .map(([part, v]) => `${field}.${part} ${String(v)}`)
            .join(', ')
        : `${field} ${String(value)}`,
    )
    .join(', ')

/**
 * A refusal of how a chat (or Responses) request asked the model to think, in the server's own
 * words:
 * - Ollama's model without thinking ("\"llama3.1:8b\" does not support thinking"; before, for a
 *   level it does not take, "think value \"medium\" is not supported for this model"), for the
 *   `reasoning_effort` (Responses: `reasoning`) a translation made of Claude Code's thinking or
 *   Codex's effort: sent without it;
 * - OpenAI's refusal of an effort beside function tools on chat completions ("Function tools with
 *   reasoning_effort are not supported for gpt-5.6 in /v1/chat/completions. To use function
 *   tools, use /v1/responses or set reasoning_effort to 'none'."): gpt-5.4 and 5.5 take tools
 *   without the field, gpt-5.6 only with `"none"` (it refuses them with no effort sent too, its
 *   default being another), so a request with tools goes without it, or with `"none"` where the
 *   words say so, no effort was sent, or going without it was refused too; one without tools
 *   keeps its effort;
 * - DashScope's refusal of a non-stream request while Qwen3 thinks ("parameter.enable_thinking
 *   must be set to false for non-streaming calls", or in Chinese): such requests go with
 *   `enable_thinking: false`.
 * Null for a refusal read here that teaches nothing more (the client's to see), undefined for
 * another.
 */
/**
 * Ollama's refusal of thinking, the whole message: a model without it (`"llama3.1:8b" does not
 * support thinking`), or, before 0.12.x, a level the model does not take (`think value "medium"
 * is not supported for this model`).
 */
function saysNoThinking(message: string): boolean {
  const said = message.trim()
  return (
    /^(?:"[^"\n]{1,300}"|\S{1,300}) does not support thinking\.?$/.test(said) ||
    /^think value "?\w{1,16}"? is not supported for this model\.?$/.test(said)
  )
}

function thinkingRefusal(
  errorText: string,
  sent: SentRequest,
  known: UpstreamAdaptation,
): {next: UpstreamAdaptation; note: string} | null | undefined {
  const {param, message} = errorParts(errorText)
  const always = alwaysThinkingRefusal(message, sent, known)
  if (always !== undefined) return always
  if (saysNoThinking(message)) {
    const field = sent.fields.includes('reasoning_effort')
      ? 'reasoning_effort'
      : sent.fields.includes('reasoning') && sent.effort !== undefined
        ? 'reasoning'
        : undefined
    if (field === undefined) return undefined
    return {
      next: {...known, drop: [...new Set([...(known.drop ?? []), field])]},
      note: `refused thinking (a model without it): sent again without ${field}`,
    }
  }
  const chat = sent.upstream === undefined || sent.upstream === 'chat'
  if (
    chat &&
    (param === undefined || param === null || param === 'reasoning_effort') &&
    /Function tools with reasoning_effort are not supported/i.test(message)
  ) {
    // (words about tools to a request without any: nothing this rule would change)
    if (!sent.fields.includes('tools')) return null
    const effort = sent.fields.includes('reasoning_effort') ? sent.effort : undefined
    // refused with none (a model whose words do not ask for it, gpt-5.4; the none the chat encoder
    // sends for a request that asked for no thinking): without the field, when nothing was
    // learned yet; after that, nothing else would pass
    if (effort === 'none')
      return known.effortWithTools === undefined
        ? {
            next: {...known, effortWithTools: 'drop'},
            note: 'refused reasoning_effort none beside function tools: sent again without it (requests with tools from now on)',
          }
        : null
    const none =
      effort === undefined ||
      known.effortWithTools !== undefined ||
      /set reasoning_effort to\W{0,2}none/i.test(message)
    return {
      next: {...known, effortWithTools: none ? 'none' : 'drop'},
      note: `refused reasoning_effort beside function tools: sent again ${none ? 'with reasoning_effort none' : 'without it'} (requests with tools from now on)`,
    }
  }
  if (
    (sent.request?.stream ?? sent.stream) !== true &&
    !known.noThinkingUnstreamed &&
    /parameter\.enable_thinking ?(?:must be set to false for non-streaming calls|必须设置为false才能进行非流式调用)/.test(
      message,
    )
  )
    return {
      next: {...known, noThinkingUnstreamed: true},
      note: 'refused a non-stream request while thinking: sent again with enable_thinking false (no reasoning in its answer)',
    }
  return undefined
}

const COULD_NOT_FINISH = /Could not finish the message because max_tokens or model output limit was reached/i

/**
 * A request whose "could not finish" may be its JSON answer cut short at its maximum: it asked for
 * JSON (`response_format` json_object or json_schema) and no reasoning. Claude Code's probe
 * (`max_tokens: 1`, no JSON) and a reasoning request are read as the model's floor.
 */
const jsonCutShort = (sent: SentRequest): boolean =>
  (sent.responseFormat === 'json_object' || sent.responseFormat === 'json_schema') &&
  sent.effort === undefined &&
  !sent.fields.includes('reasoning_effort') &&
  !sent.fields.includes('reasoning')

/**
 * The fewest output tokens an upstream's 400 says it takes, when it refused a smaller maximum:
 * OpenAI's "Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but
 * got 1 instead." (the Responses encoder sends at least 16 already: another floor a server
 * states is learned). OpenAI's chat completions state none for a reasoning model (GPT-5.x) that
 * cannot finish within a tiny maximum: "Could not finish the message because max_tokens or model
 * output limit was reached", a 400 for Claude Code's `max_tokens: 1` probe of a model (its
 * `/model` check, which then calls the model unavailable: BerriAI/litellm #35061); below 16 it is
 * read as the Responses floor, 16 (`decide` reads those words first: at 16 or more, or for a JSON
 * answer cut short, they teach nothing).
 */
export function outputFloor(errorText: string, sent: number | undefined): number | undefined {
  if (sent === undefined) return undefined
  if (sent < 16 && COULD_NOT_FINISH.test(errorText)) return 16
  const floor =
    /Invalid '(?:max_output_tokens|max_tokens|max_completion_tokens)': integer below minimum value\. Expected a value >= (\d{1,6})\b/.exec(
      errorParts(errorText).message,
    )?.[1]
  const n = Number(floor)
  return floor !== undefined && n > sent && n <= 65_536 ? n : undefined
}

/** What was learned of one upstream model (`GET /api/adaptations`, `gwctl doctor`). */
export interface LearnedAdaptation {
  provider: string
  model: string
  /** When the last refusal taught something (Unix ms). */
  learnedAt: number
  /** What requests to it do now, one line each. */
  rules: string[]
  /**
   * Its context window (tokens), as its refusal of a longer prompt stated it, and the entrance
   * (the agent's protocol) of that prompt; `cut`: read from a prompt the upstream cut to it
   * without a word (Ollama: ./ollama-cut.ts), whose fix is the server's setting.
   */
  window?: {tokens: number; entrance: Family; cut?: true}
}

/** A window in words, as a rule line: stated in a refusal, or read from a prompt cut to it (`cut`). */
const windowRule = (tokens: number, cut?: true): string =>
  `a context window of ${tokens.toLocaleString('en-US')} tokens (${cut ? 'its num_ctx, read from a longer prompt it cut without a word, its start dropped' : 'stated in its refusal of a longer prompt'})`

/** What an adaptation does to requests, in words (see {@link UpstreamAdaptation}). */
export function describeAdaptation(a: UpstreamAdaptation): string[] {
  const rules: string[] = []
  if (a.media && mediaWords(a.media))
    rules.push(`${mediaWords(a.media)} sent as a line of text (a text-only model)`)
  if (a.reasoningTextBack)
    rules.push(
      "Codex's reasoning sent back as reasoning_text, an empty one where Codex kept none, its tools as plain functions (a turn without it was refused)",
    )
  else if (a.plainTools)
    rules.push(
      "Codex's namespaces and custom tools sent as plain functions, its agent_message items as user messages (refused, or answered as plain calls)",
    )
  else if (a.liteOff)
    rules.push(
      "Codex's Responses Lite requests sent as for a model that is not Lite: its tools in `tools`, without the Lite header (refused)",
    )
  if (a.storeTrue)
    rules.push(
      "Codex's requests and translated ones sent with store true, so the items they name by id are found (refused with store false: Azure OpenAI keeps no items then)",
    )
  if (a.cacheTtlOff)
    rules.push(
      "Claude Code's 1-hour cache sent as the 5-minute one: cache_control without ttl and scope (refused)",
    )
  if (a.deferralOff)
    rules.push(
      "Claude Code's tool search done by the gateway: deferred tools loaded when referenced, the others left out, each tool_reference as the tool's definition (refused)",
    )
  if (a.namespaceDescriptions)
    rules.push("Codex's namespaces without a description sent with Codex's words for one (refused empty)")
  if (a.mediaOutOfResults)
    rules.push(
      'images and documents inside tool results sent right after the results, in the user turn, the result keeping its text (refused inside them)',
    )
  if (a.geminiResultMedia === 'nested')
    rules.push(
      "images and documents of a function's result sent inside its functionResponse (parts), one part per call (refused beside the responses)",
    )
  else if (a.geminiResultMedia === 'flat')
    rules.push(
      "images and documents of a function's result sent after every functionResponse of the turn (refused inside it: function_response.parts)",
    )
  if (a.adjacentOutputs)
    rules.push(
      "each tool call's output sent right after the call, the items between them after it (it pairs them by position)",
    )
  if (a.drop?.length) rules.push(`sent without ${a.drop.join(', ')}`)
  if (a.maxCompletionTokens) rules.push('max_tokens sent as max_completion_tokens')
  if (a.maxTokens !== undefined) rules.push(`max_tokens capped at ${a.maxTokens}`)
  for (const [from, to] of Object.entries(a.effort ?? {}))
    rules.push(
      from === 'none' ? `thinking off (effort none) sent as effort ${to}` : `effort ${from} sent as ${to}`,
    )
  if (a.json === 'json_object') rules.push('a JSON schema sent as JSON mode, the schema in the system prompt')
  else if (a.json === 'instruction')
    rules.push(
      'JSON asked for in the system prompt only (to Gemini: in a request with function tools, which it refuses beside a JSON response)',
    )
  if (a.jsonInstruction) rules.push("JSON mode with the word 'json' in the system prompt")
  const budget = a.thinkingBudget
  if (budget?.none) rules.push('thinkingBudget left out (the model takes none)')
  if (budget?.zero) rules.push('a thinking budget of 0 left out')
  if (budget?.min !== undefined || budget?.max !== undefined)
    rules.push(`thinking budget kept within ${budget.min ?? 0}-${budget.max ?? '…'}`)
  if (budget?.over !== undefined) rules.push(`a thinking budget from ${budget.over} up left out`)
  if (budget?.under !== undefined) rules.push(`a thinking budget up to ${budget.under} left out`)
  if (a.noThinkingLevel) rules.push('thinkingLevel left out (the model takes none)')
  if (a.noPreservedThinking) rules.push("earlier turns' reasoning not asked to be kept (refused)")
  for (const [from, to] of Object.entries(a.thinkingLevels ?? {}))
    rules.push(`thinkingLevel ${from} sent as ${to}`)
  if (a.noThinking) rules.push('thinkingConfig left out (the model does not think)')
  if (a.noSystemInstruction)
    rules.push('the system prompt in the first user turn (systemInstruction refused)')
  if (a.toolIds?.alnum !== undefined) rules.push(`tool-call ids as ${a.toolIds.alnum} letters and digits`)
  if (a.toolIds?.max !== undefined) rules.push(`tool-call ids of at most ${a.toolIds.max} characters`)
  if (a.bridgeToolTurns) rules.push('an assistant message between tool results and a user message')
  if (a.noWebSearch) rules.push('web search beside functions left out')
  if (a.refusedServerTools?.length) rules.push(`${a.refusedServerTools.join(', ')} tools left out (refused)`)
  if (a.toolMembers?.length) rules.push(`tools sent without ${a.toolMembers.join(', ')} (refused)`)
  for (const [type, members] of Object.entries(a.inputMembers ?? {}))
    rules.push(`${type} input items sent without ${members.join(', ')} (refused)`)
  if (a.noCacheMarks) rules.push('no cache marks on content parts (cache_control refused)')
  if (a.schemaKeys?.length)
    rules.push(`tool schemas sent without ${a.schemaKeys.join(', ')} (Gemini's schema subset)`)
  if (a.typeLists)
    rules.push("tool schemas' type lists sent as one type each (nullable, or anyOf: Gemini's schema subset)")
  if (a.noCallIds) rules.push('function calls and responses sent without ids (paired by order and name)')
  if (a.thinking === 'adaptive') rules.push('thinking sent as adaptive, with output_config.effort')
  else if (a.thinking === 'enabled') rules.push('thinking sent as enabled, with a budget (adaptive refused)')
  const off = a.claude?.thinkingOff
  if (off === 'low') rules.push('thinking turned down to output_config.effort low (it cannot be turned off)')
  else if (off === 'least_budget')
    rules.push(
      `thinking turned down to thinking.type enabled with the least budget, 1024 tokens, a forced tool_choice as auto (only enabled is allowed)`,
    )
  else if (off) rules.push(`thinking turned off with thinking.type ${off}`)
  if (a.effortOnlyWithThinking)
    rules.push('output_config.effort left out where thinking.type is disabled (refused together)')
  if (a.claude?.noForcedTools || a.autoToolChoice)
    rules.push('a forced tool_choice sent as auto, the call asked for at the end of the prompt')
  else if (a.forcedThinkingOff)
    rules.push(
      'a request that forces a tool call sent with thinking turned off, the forced tool_choice kept (refused while thinking)',
    )
  if (a.claude?.noPrefill)
    rules.push('a last assistant message (prefill) sent as a user turn asking to continue it')
  if (a.claude?.dropUnboundThinking)
    rules.push("thinking blocks sent with block_binding drop_block (a changed conversation's are dropped)")
  if (a.claude?.thinkingEveryToolTurn)
    rules.push(
      'thinking turned off for a history with an assistant tool call turn without thinking (refused)',
    )
  if (a.indexToolCalls)
    rules.push('streamed tool calls numbered (their index left out; learned from an answer)')
  if (a.idToolCalls)
    rules.push(
      'streamed tool calls given ids and the delta role written as assistant (left out or empty; learned from an answer)',
    )
  if (a.openAiFinish)
    rules.push(
      "streamed finish reasons written as OpenAI's (a missing one as stop or tool_calls, sensitive as content_filter, a broken one as an error; learned from an answer)",
    )
  if (a.claude?.emptyThinking)
    rules.push('an empty thinking block at the head of each assistant tool call turn without one (refused)')
  if (a.claude?.noBlockBinding) rules.push('thinking blocks sent without block_binding (refused)')
  if (a.noBetas) rules.push('sent without the anthropic-beta header (invalid beta flag)')
  else if (a.refusedBetas?.length)
    rules.push(`anthropic-beta sent without ${a.refusedBetas.join(', ')} (refused)`)
  if (a.repairArgs) rules.push("history tool calls' arguments that are not JSON repaired (closed, or {})")
  if (a.reasoningHistory === 'drop') rules.push("the history's reasoning left out")
  else if (a.reasoningHistory === 'reasoning_content')
    rules.push("the history's reasoning sent as reasoning_content, an empty one on an assistant turn without")
  else if (a.reasoningHistory) rules.push(`the history's reasoning sent as ${a.reasoningHistory}`)
  if (a.thinkOpen)
    rules.push(
      'answers read as reasoning up to </think> (its chat template opens <think> in the prompt; learned from an answer)',
    )
  if (a.effortWithTools === 'none')
    rules.push(
      'reasoning_effort sent as none with function tools, so no reasoning there (refused beside tools on chat completions; a provider added with --family responses keeps it)',
    )
  else if (a.effortWithTools === 'drop')
    rules.push(
      'sent without reasoning_effort with function tools (refused beside tools on chat completions; a provider added with --family responses keeps it)',
    )
  if (a.noThinkingUnstreamed)
    rules.push('a non-stream request sent with enable_thinking false, so its answer has no reasoning')
  if (a.minOutputTokens !== undefined) rules.push(`max_tokens raised to at least ${a.minOutputTokens}`)
  if (a.minJsonOutputTokens !== undefined)
    rules.push(`max_tokens of a request for JSON raised to at least ${a.minJsonOutputTokens}`)
  if (a.systemFirst) rules.push('system messages after the first turn folded into the first system message')
  if (a.alternateRoles) rules.push('successive user, assistant or system messages sent as one message')
  if (a.objectSchemas)
    rules.push('tool schemas whose top level is a union (oneOf, anyOf, allOf) sent as one object each')
  if (a.toolCap !== undefined)
    rules.push(
      `at most ${a.toolCap} tools (its stated limit): the client's first ${a.toolCap} sent, and those its history calls, a line in the system prompt naming the rest`,
    )
  if (a.thoughtSignatures)
    rules.push(
      `a tool call turn without its thought signature sent with skip_thought_signature_validator (${signatureField(a.thoughtSignatures)})`,
    )
  return rules
}

export class UpstreamAdaptations {
  private readonly byTarget = new Map<string, UpstreamAdaptation>()
  /** When each target last learned something (Unix ms). */
  private readonly learnedAt = new Map<string, number>()

  /** Each target's context window, as an overflow stated it (see `noteWindow`). */
  private readonly windows = new Map<string, {tokens: number; entrance: Family; at: number; cut?: true}>()

  /** Everything learned so far, the latest first. */
  list(): LearnedAdaptation[] {
    const keys = new Set([...this.byTarget.keys(), ...this.windows.keys()])
    return [...keys]
      .map((key) => {
        const [provider, model] = key.split('\n')
        const adaptation = this.byTarget.get(key)
        const window = this.windows.get(key)
        const rules = adaptation ? describeAdaptation(adaptation) : []
        if (window) rules.push(windowRule(window.tokens, window.cut))
        return {
          provider,
          model,
          learnedAt: Math.max(this.learnedAt.get(key) ?? 0, window?.at ?? 0),
          rules,
          ...(window
            ? {
                window: {
                  tokens: window.tokens,
                  entrance: window.entrance,
                  ...(window.cut ? {cut: window.cut} : {}),
                },
              }
            : {}),
        }
      })
      .sort((a, b) => b.learnedAt - a.learnedAt)
  }

  /**
   * Keeps the context window (`tokens`) that `provider`'s `model` stated when it refused a
   * prompt that came in on `entrance` (the latest refusal's entrance: one agent's advice at a
   * time): `gwctl doctor` tells the agent's user how to have the agent compact before it (Claude
   * Code 2.1.3xx assumes up to 1 000 000 tokens). `cut`: no refusal, the upstream cut a longer
   * prompt to it without a word (Ollama, ./ollama-cut.ts): doctor names the server's setting
   * instead. Nothing about requests changes. At most MAX_TARGETS are kept, the oldest dropped.
   */
  noteWindow(provider: string, model: string, tokens: number, entrance: Family, cut = false): void {
    // (a request without a model, or a name no model has: an upstream that ignores names would
    // otherwise keep one entry for each)
    if (!Number.isSafeInteger(tokens) || tokens <= 0 || !model || model.length > 256) return
    const key = `${provider}\n${model}`
    this.windows.delete(key)
    this.windows.set(key, {tokens, entrance, at: Date.now(), ...(cut ? {cut: true as const} : {})})
    if (this.windows.size > MAX_TARGETS) this.windows.delete(this.windows.keys().next().value!)
  }

  /**
   * Keeps the window a refusal this request learned from states (`learn`'s vLLM and OpenAI
   * "maximum context length is C tokens ... in the completion": the completion's room past the
   * window, which the request goes again without), as {@link noteWindow} does for a refusal that
   * reaches the client.
   */
  noteStatedWindow(provider: string, model: string, errorText: string, entrance: Family): void {
    const stated = /maximum context length (?:is|of) (\d+) tokens/i.exec(errorText)
    if (stated) this.noteWindow(provider, model, Number(stated[1]), entrance)
  }

  /**
   * Keeps that `provider`'s `model` answered with a `</think>` it never opened (its chat template
   * opens `<think>` in the prompt): its later answers are read as reasoning up to the tag
   * (`UpstreamAdaptation.thinkOpen`, ../../protocols/chat-stream.ts). Learned from an answer, so
   * the answer that taught it is not sent again. True when it was not known before.
   */
  noteThinkOpen(provider: string, model: string): boolean {
    // (a request without a model, or a name no model has: see noteWindow)
    if (!model || model.length > 256) return false
    const key = `${provider}\n${model}`
    const current = this.byTarget.get(key)
    if (current?.thinkOpen) return false
    this.remember(key, {...current, thinkOpen: true})
    return true
  }

  /** What requests to `provider`'s `model` go without (undefined: nothing learned). */
  get(provider: string, model: string): UpstreamAdaptation | undefined {
    return this.byTarget.size === 0 ? undefined : this.byTarget.get(`${provider}\n${model}`)
  }

  /**
   * Learns from a 400 of `provider`'s `model` to a request that sent `sent`. When the request
   * should go again, without (or, for `max_tokens` when the error asks for
   * `max_completion_tokens`, renamed) the field it names, with a smaller `max_tokens`, another
   * effort, or JSON asked another way, says so for the log row (`refused max_tokens: sent again
   * as max_completion_tokens`); else undefined.
   */
  learn(
    provider: string,
    model: string,
    errorText: string,
    sent: SentRequest,
    status = 400,
  ): string | undefined {
    // what this refusal teaches, judged against what the request was sent with
    const known = sent.adaptedWith ?? {}
    let decision = decide(errorText, sent, known, status, model)
    // OpenRouter relays a provider's 400 as its own "Provider returned error", the provider's body
    // as text in `error.metadata.raw`: the rules read the provider's words there (DashScope's
    // refusal of history arguments behind OpenRouter's Alibaba), as they would from the provider
    if (decision === undefined && status === 400) {
      const raw = providerRaw(errorText)
      if (raw !== undefined) decision = decide(raw, sent, known, status, model)
    }
    // an image or document inside a tool result refused (only for a request that held one)
    if (decision === undefined && (status === 400 || status === 422))
      decision = mediaInResultsRefusal(errorText, sent, known)
    return this.settle(provider, model, sent.adaptedWith, decision)
  }

  /**
   * Learns from a 400 of `provider`'s `model` to a chat request passed through untranslated (a
   * chat client on a chat upstream), which held tools and was sent with `adaptedWith` learned:
   * only Gemini's refusal of tool-schema keywords (or of a list of types) behind a chat server
   * (Google's OpenAI-compatible endpoint, a relay to Gemini), when every name it refuses is one of
   * them.
   * Anything else such a request is refused for is the client's to see, as it came. Says what
   * was learned for the log row, as {@link learn} does; else undefined.
   */
  learnSchemaKeys(
    provider: string,
    model: string,
    errorText: string,
    adaptedWith: UpstreamAdaptation | undefined,
  ): string | undefined {
    return this.settle(provider, model, adaptedWith, unknownNames(errorText, true, 'chat', adaptedWith ?? {}))
  }

  /**
   * A chat server whose streamed tool-call deltas came without their index (./tool-index.ts): a
   * chat client's streams from it get them numbered from now on. The note for the log row, or
   * undefined when that was known already.
   */
  learnIndexToolCalls(provider: string, model: string): string | undefined {
    const known = this.get(provider, model)
    if (known?.indexToolCalls) return undefined
    return this.settle(provider, model, known, {
      next: {...known, indexToolCalls: true},
      note: "streamed tool calls without their index, which chat clients refuse or drop: the gateway numbers them in this provider's streams from now on",
    })
  }

  /**
   * A chat server whose streamed tool calls open without their id, or whose deltas carry a role
   * that is not "assistant" (`seen`: `id` when a call came without one; ./tool-index.ts): a chat
   * client's streams from it get both written as OpenAI streams them from now on. The note for the
   * log row, or undefined when that was known already.
   */
  learnIdToolCalls(provider: string, model: string, seen: 'id' | 'role'): string | undefined {
    const known = this.get(provider, model)
    if (known?.idToolCalls) return undefined
    return this.settle(provider, model, known, {
      next: {...known, idToolCalls: true},
      note:
        seen === 'id'
          ? "streamed tool calls without their id, which AI SDK clients refuse: the gateway names them in this provider's streams from now on"
          : "streamed a delta role that is not assistant, which AI SDK clients refuse: the gateway writes OpenAI's in this provider's streams from now on",
    })
  }

  /**
   * A chat server whose stream ended a choice without a finish_reason (`said` null) or with a
   * vendor's outside OpenAI's (`said`: Z.ai's `sensitive`, vLLM's `abort`), which AI SDK clients
   * (opencode, Kilo) read as unknown and loop on (./tool-index.ts): a chat client's streams from
   * it get OpenAI's written from now on. The note for the log row, or undefined when that was
   * known already.
   */
  learnOpenAiFinish(provider: string, model: string, said: string | null): string | undefined {
    const known = this.get(provider, model)
    if (known?.openAiFinish) return undefined
    return this.settle(provider, model, known, {
      next: {...known, openAiFinish: true},
      note: `streamed ${said === null ? 'no finish_reason' : `finish_reason ${said}`}, which AI SDK clients (opencode, Kilo) read as unknown and loop on: the gateway writes OpenAI's in this provider's streams from now on`,
    })
  }

  /**
   * A Responses server that answered Codex's custom or namespaced tool `name` as a plain function
   * call (./plain-tools.ts `calledAsFunction`): its requests with those shapes go through the
   * codecs from now on, every tool a plain function and the calls back to Codex in their shape.
   * The note for the log row, or undefined when that was known already.
   */
  learnPlainToolsFromAnswer(provider: string, model: string, name: string): string | undefined {
    // (what is known now: another request may have learned something while this one streamed)
    const known = this.get(provider, model)
    if (known?.plainTools) return undefined
    return this.settle(provider, model, known, {
      next: {...known, plainTools: true},
      note: `answered Codex's tool ${name} as a plain function call (its tool shapes taken but not implemented): later requests go with every tool a plain function, the calls given back to Codex in its shapes`,
    })
  }

  /**
   * Learns from a refusal of `provider`'s `model` to a Responses request passed through with
   * Codex's namespaces, custom tools or `additional_tools` item (./plain-tools.ts): when its words
   * refuse Codex's "Responses Lite" request as such (Azure OpenAI, a model that is not Lite), its
   * Lite requests go as Codex sends them for a model that is not Lite from now on (`liteOff`); when
   * they name one of the shapes (or refuse that request too), as plain functions. Says so for the
   * log row, as {@link learn} does; else undefined.
   */
  learnPlainTools(
    provider: string,
    model: string,
    errorText: string,
    adaptedWith: UpstreamAdaptation | undefined,
  ): string | undefined {
    // DeepSeek's reasoning_text wanted back: the codecs' path gives Codex that text as the item's
    // summary, and sends it back as the item's `reasoning_text` (an empty one for an item whose
    // text Codex did not keep: the turns passed through before)
    if (refusesReasoningTextLoss(errorText))
      return adaptedWith?.reasoningTextBack
        ? undefined
        : this.settle(provider, model, adaptedWith, {
            next: {...adaptedWith, plainTools: true, reasoningTextBack: true},
            note: 'refused a tool call turn without its reasoning_text: sent again through the codecs, each reasoning item with its text as reasoning_text (empty where Codex kept none)',
          })
    if (adaptedWith?.plainTools || !refusesOpenAiToolShapes(errorText)) return undefined
    if (!adaptedWith?.liteOff && refusesCodexLite(errorText))
      return this.settle(provider, model, adaptedWith, {
        next: {...adaptedWith, liteOff: true},
        note: "refused Codex's Responses Lite request: sent again as for a model that is not Lite (its tools in `tools`, without the Lite header)",
      })
    return this.settle(provider, model, adaptedWith, {
      next: {...adaptedWith, plainTools: true},
      // (the plain request has Codex's `agent_message` items as user messages too)
      note: /agent_message/i.test(errorText)
        ? "refused Codex's agent_message item: sent again with it as a user message, every tool a plain function"
        : "refused Codex's tool shapes: sent again with every tool a plain function",
    })
  }

  /**
   * Learns from a 400 of `provider`'s `model` to a Responses request passed through with `store:
   * false`: Azure OpenAI's refusal of an item named by its id (./plain-tools.ts
   * `refusesStoreFalse`, an Azure behind a domain of its own), its requests going with `store:
   * true` from now on (`storeTrue`). Says so for the log row, as {@link learn} does; else undefined.
   */
  learnStoreTrue(
    provider: string,
    model: string,
    errorText: string,
    adaptedWith: UpstreamAdaptation | undefined,
  ): string | undefined {
    if (adaptedWith?.storeTrue || !refusesStoreFalse(errorText)) return undefined
    return this.settle(provider, model, adaptedWith, {
      next: {...adaptedWith, storeTrue: true},
      note: STORE_NOTE,
    })
  }

  /**
   * Learns from a 400 of `provider`'s `model` (a relay in front of Claude) to a Messages request
   * passed through with a `cache_control`'s `ttl` or `scope`: the refusal of either
   * (./cache-ttl.ts `refusesCacheTtl`), its requests going without them from now on
   * (`cacheTtlOff`). Says so for the log row, as {@link learn} does; else undefined.
   */
  learnCacheTtlOff(
    provider: string,
    model: string,
    errorText: string,
    adaptedWith: UpstreamAdaptation | undefined,
  ): string | undefined {
    if (adaptedWith?.cacheTtlOff || !refusesCacheTtl(errorText)) return undefined
    return this.settle(provider, model, adaptedWith, {
      next: {...adaptedWith, cacheTtlOff: true},
      note: CACHE_TTL_NOTE,
    })
  }

  /**
   * Learns from a 400 of `provider`'s `model` (a relay in front of Claude) to a Messages request
   * passed through with Claude Code's tool search (`defer_loading` tools, `tool_reference`
   * blocks; the caller's to know): the refusal of it (./tool-search.ts `refusesDeferredTools`),
   * its requests going with the deferred tools loaded from now on (`deferralOff`). Says so for the
   * log row, as {@link learn} does; else undefined.
   */
  learnDeferralOff(
    provider: string,
    model: string,
    errorText: string,
    adaptedWith: UpstreamAdaptation | undefined,
  ): string | undefined {
    if (adaptedWith?.deferralOff || !refusesDeferredTools(errorText)) return undefined
    return this.settle(provider, model, adaptedWith, {
      next: {...adaptedWith, deferralOff: true},
      note: DEFERRAL_NOTE,
    })
  }

  /**
   * Learns from a 400 of `provider`'s `model` to Codex's Responses request passed through with a
   * namespace tool whose description is empty: the refusal of it (./plain-tools.ts
   * `refusesEmptyDescription`, an Azure behind a domain of its own), its requests going with the
   * namespace described from now on (`namespaceDescriptions`). Says so for the log row, as
   * {@link learn} does; else undefined.
   */
  learnNamespaceDescriptions(
    provider: string,
    model: string,
    errorText: string,
    adaptedWith: UpstreamAdaptation | undefined,
  ): string | undefined {
    if (adaptedWith?.namespaceDescriptions || !refusesEmptyDescription(errorText)) return undefined
    return this.settle(provider, model, adaptedWith, {
      next: {...adaptedWith, namespaceDescriptions: true},
      note: NAMESPACE_NOTE,
    })
  }

  /**
   * Learns from a 400 of `provider`'s `model` to a Responses request passed through untranslated
   * (Codex), sent with `adaptedWith` learned: only a refusal of a call and its output that are not
   * next to each other ({@link refusesSeparatedOutputs}), the server's requests going with each
   * output right after its call from then on. Says so for the log row, as {@link learn} does; else
   * undefined.
   */
  learnAdjacentOutputs(
    provider: string,
    model: string,
    errorText: string,
    adaptedWith: UpstreamAdaptation | undefined,
  ): string | undefined {
    if (adaptedWith?.adjacentOutputs || !refusesSeparatedOutputs(errorText)) return undefined
    return this.settle(provider, model, adaptedWith, {
      next: {...adaptedWith, adjacentOutputs: true},
      note: ADJACENT_NOTE,
    })
  }

  /**
   * Learns from a 400 or 422 of `provider`'s `model` to a Responses request passed through
   * untranslated (Codex) that held an image or file inside a tool call's output, sent with
   * `adaptedWith` learned: only a refusal of media there ({@link refusesMediaInResults}), the
   * server's requests going with it moved out of the outputs from then on (`mediaOutOfResults`).
   * Says so for the log row, as {@link learn} does; else undefined.
   */
  learnMediaOutOfResults(
    provider: string,
    model: string,
    errorText: string,
    adaptedWith: UpstreamAdaptation | undefined,
  ): string | undefined {
    const sent: SentRequest = {upstream: 'responses', fields: [], mediaInResults: true}
    return this.settle(
      provider,
      model,
      adaptedWith,
      mediaInResultsRefusal(errorText, sent, adaptedWith ?? {}),
    )
  }

  /**
   * Learns from a 400 of `provider`'s `model` to a Gemini request passed through untranslated
   * (Gemini CLI on Gemini), which offered `sent` function declarations and was sent with
   * `adaptedWith` learned: only a refusal of more than the model takes, its requests going with
   * the client's first ones from then on. Says so for the log row, as {@link learn} does; else
   * undefined.
   */
  learnToolCap(
    provider: string,
    model: string,
    errorText: string,
    sent: number,
    adaptedWith: UpstreamAdaptation | undefined,
  ): string | undefined {
    return this.settle(provider, model, adaptedWith, toolCapRefusal(errorText, sent, adaptedWith ?? {}))
  }

  /**
   * Learns from a 400 of `provider`'s `model` to a Gemini request passed through untranslated
   * whose thinking config was `sent`, sent with `adaptedWith` learned: a thinking level or budget
   * the model refused, its requests going in the form it takes from then on. Says so for the log
   * row, as {@link learn} does; else undefined.
   */
  learnPassedGeminiThinking(
    provider: string,
    model: string,
    errorText: string,
    sent: GeminiThinkingSent,
    adaptedWith: UpstreamAdaptation | undefined,
  ): string | undefined {
    return this.settle(
      provider,
      model,
      adaptedWith,
      thinkingConfigRefusal(errorText, sent, adaptedWith ?? {}, model),
    )
  }

  /**
   * Learns from a 400 of `provider`'s `model` to a Gemini request passed through untranslated that
   * held a `systemInstruction` (Gemini CLI on Gemma 3), sent with `adaptedWith` learned: the model
   * takes none, and its requests go with the system text in the first user turn from then on.
   * Says so for the log row, as {@link learn} does; else undefined.
   */
  learnPassedGeminiSystem(
    provider: string,
    model: string,
    errorText: string,
    adaptedWith: UpstreamAdaptation | undefined,
  ): string | undefined {
    return this.settle(
      provider,
      model,
      adaptedWith,
      systemInstructionRefusal(errorText, true, adaptedWith ?? {}),
    )
  }

  /**
   * Learns from a 400 of `provider`'s `model` to a Gemini request passed through untranslated that
   * holds a function call, sent with `adaptedWith` learned: Gemini 3's refusal of a model turn whose
   * first call has no thought signature, its requests going with Google's skip value on such calls
   * from then on. Says so for the log row, as {@link learn} does; else undefined.
   */
  learnPassedGeminiSignatures(
    provider: string,
    model: string,
    errorText: string,
    adaptedWith: UpstreamAdaptation | undefined,
  ): string | undefined {
    return this.settle(provider, model, adaptedWith, geminiSignatureRefusal(errorText, adaptedWith ?? {}))
  }

  /** Keeps what a refusal taught (`decided`), unless another request learned something meanwhile. */
  private settle(
    provider: string,
    model: string,
    adaptedWith: UpstreamAdaptation | undefined,
    decided: {next: UpstreamAdaptation; note: string} | undefined,
  ): string | undefined {
    if (!decided) return undefined
    const key = `${provider}\n${model}`
    const current = this.byTarget.get(key)
    // another request learned something since this one was encoded: this one goes again as
    // things stand now, and learns nothing (its refusal may be what the other one learned)
    if (current !== adaptedWith)
      return 'refused it too: sent again with what another request learned meanwhile'
    // nothing new (the same refusal learned before): the 400 is the client's
    if (JSON.stringify(decided.next) === JSON.stringify(current ?? {})) return undefined
    this.remember(key, decided.next)
    return decided.note
  }

  private remember(key: string, adaptation: UpstreamAdaptation): void {
    this.byTarget.delete(key)
    this.byTarget.set(key, adaptation)
    this.learnedAt.set(key, Date.now())
    if (this.byTarget.size > MAX_TARGETS) {
      const oldest = this.byTarget.keys().next().value!
      this.byTarget.delete(oldest)
      this.learnedAt.delete(oldest)
    }
  }
}
