/**
 * Simulated OpenAI Responses upstream: `POST /v1/responses` (JSON or SSE with `event:` lines,
 * `sequence_number`, no `[DONE]`, ending with `response.completed` and its usage).
 */
import {errorBody} from '../../protocols/errors.js'
import type {SimRequest, SimRouter} from '../router.js'
import {sendJson} from '../router.js'
import type {SimContext} from '../context.js'
import type {SseEvent} from '../sse.js'
import {sendSse, simTokens} from '../sse.js'
import type {SimAnswer} from './common.js'
import {bearer, deltas, inputOnly, lastTextOf, simAnswer, simId, textAsked, toolResultText} from './common.js'
import type {Quirks} from './quirks.js'
import {responsesMediaInOutputRefusal} from './media-in-results.js'
import {
  NO_QUIRKS,
  argsPieces,
  argsText,
  foreignEncryptedRefusal,
  namespaceDescriptionRefusal,
  liteRefusal,
  storeFalseRefusal,
  pickedTool,
  plainToolsRefusal,
  quirkAnswer,
  selectQuirks,
  reasoningTextRefusal,
  separatedOutputRefusal,
  toolCapRefusal,
  unknownQuirkMessage,
  ollamaEffortRefusal,
  unknownResponsesParameter,
  inputItemStatusRefusal,
  unsupportedResponsesParameter,
  xaiRefusal,
} from './quirks.js'
import {openAiNameProblem, PromptCache} from '../chat.js'
import {encryptReasoning, responsesHistoryProblem, simAccount} from './turn-checks.js'
import {
  searchAnswer,
  searchDomain,
  searchQuery,
  searchResults,
  searchText,
  wantsSearch,
} from './web-search.js'

type Body = Record<string, unknown>

/**
 * The text of the last user turn: a user message's last text part, or Codex's `agent_message` item
 * (a sub-agent's task, which OpenAI reads as the turn's words): its text parts and the plain text
 * a parent that is not on OpenAI's API stores in its `encrypted_content` parts.
 */
function lastUserText(input: unknown): string {
  if (typeof input === 'string') return input
  if (!Array.isArray(input)) return ''
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i] as Body
    if (item?.role === 'user') return lastTextOf(item.content)
    if (item?.type === 'agent_message' && Array.isArray(item.content))
      return (item.content as Body[])
        .map((p) => String((p?.type === 'encrypted_content' ? p.encrypted_content : p?.text) ?? ''))
        .join('')
  }
  return ''
}

/**
 * A tool the model may call: a function or a custom tool, at the top level or inside a `namespace`
 * tool (Codex's `multi_agent_v1`, and its `functions` namespace holding the custom `exec`). `key`
 * is the name the sim knows it by: its own name at the top level, `namespace__name` inside one
 * (how the gateway names it to other families, so a prompt's `tool:NAME` reads the same).
 */
interface Callable {
  key: string
  name: string
  namespace?: string
  custom: boolean
  parameters?: unknown
}

/**
 * The request's tools as OpenAI reads them: `tools`, then those of Codex's `additional_tools` input
 * items (its Responses Lite request, which sends no `tools`).
 */
function requestTools(body: Body): Body[] {
  const tools = Array.isArray(body.tools) ? (body.tools as Body[]) : []
  const input = body.input
  if (!Array.isArray(input)) return tools
  const added = (input as Body[]).flatMap((item) =>
    item?.type === 'additional_tools' && Array.isArray(item.tools) ? (item.tools as Body[]) : [],
  )
  return added.length === 0 ? tools : [...tools, ...added]
}

const callable = (t: Body, namespace?: string): Callable | undefined =>
  (t?.type === 'function' || t?.type === 'custom') && typeof t.name === 'string'
    ? {
        key: namespace === undefined ? t.name : `${namespace}__${t.name}`,
        name: t.name,
        namespace,
        custom: t.type === 'custom',
        parameters: t.parameters,
      }
    : undefined

/**
 * The tools the sim may call: the top-level functions first (all it called before it read the
 * others), then the custom tools and the tools of namespaces in the request's order. A request that
 * offers a top-level function gets the call it always got (Codex's own request, with its
 * `multi_agent_v1` namespace, still gets its `exec_command` called); Codex's Lite request, all
 * namespaces, gets its `functions` namespace's custom `exec`.
 */
function callableTools(tools: Body[]): Callable[] {
  const functions: Callable[] = []
  const others: Callable[] = []
  for (const t of tools) {
    if (t?.type === 'namespace' && Array.isArray(t.tools) && typeof t.name === 'string') {
      for (const inner of t.tools as Body[]) {
        const c = callable(inner, t.name)
        if (c) others.push(c)
      }
      continue
    }
    const c = callable(t)
    if (c) (c.custom ? others : functions).push(c)
  }
  return [...functions, ...others]
}

/** OpenAI's hosted web search tool (`web_search`, `web_search_preview`, dated versions of each). */
const isWebSearch = (t: Body): boolean =>
  typeof t?.type === 'string' && /^web_search(_preview)?(_\d{4}_\d{2}_\d{2})?$/.test(t.type)

/**
 * The web search tool when the model is to use it: under `required` or a tool_choice naming it, as
 * the only tool (unless `none`), or asked for in the user's words ("search the web"); never under
 * `none` or a function forced by name.
 */
function searchTool(tools: Body[], toolChoice: unknown, userText: string): Body | undefined {
  const tool = tools.find(isWebSearch)
  if (!tool || toolChoice === 'none') return undefined
  const choice = typeof toolChoice === 'object' && toolChoice !== null ? (toolChoice as Body) : undefined
  if (choice) return isWebSearch(choice) ? tool : undefined
  return toolChoice === 'required' || tools.length === 1 || wantsSearch(userText) ? tool : undefined
}

/**
 * The names a `tool_choice` of type function may name: the function tools, and the functions of a
 * `namespace` tool (Codex's `multi_agent_v1`, forced with the namespace beside the name).
 */
function functionNames(tools: Body[]): string[] {
  return tools.flatMap((t) =>
    t?.type === 'function'
      ? [String(t.name)]
      : t?.type === 'namespace' && Array.isArray(t.tools)
        ? (t.tools as Body[]).filter((f) => f?.type === 'function').map((f) => String(f.name))
        : [],
  )
}

/** OpenAI's refusal of a `tool_choice` naming a function the request's tools do not hold. */
export function toolChoiceProblem(body: Body): string | undefined {
  const choice = body.tool_choice as Body | undefined
  if (typeof choice !== 'object' || choice === null || choice.type !== 'function') return undefined
  return functionNames(requestTools(body)).includes(String(choice.name))
    ? undefined
    : "Tool choice 'function' not found in 'tools' parameter."
}

/** The answer to a call: a function's output, or a custom tool's (its `custom_tool_call_output`). */
const isOutput = (item: Body | undefined): boolean =>
  item?.type === 'function_call_output' || item?.type === 'custom_tool_call_output'

/** The tool a `tool_choice` forces by name (a function, or a custom tool), if the request has it. */
function forcedTool(choice: unknown, tools: Callable[]): Callable | undefined {
  if (typeof choice !== 'object' || choice === null) return undefined
  const c = choice as Body
  if (c.type !== 'function' && c.type !== 'custom') return undefined
  return tools.find(
    (t) =>
      t.name === c.name &&
      t.custom === (c.type === 'custom') &&
      (c.namespace === undefined || t.namespace === c.namespace),
  )
}

/** The sim's answer to a Responses request. */
export function responsesAnswer(body: Body, quirks: Quirks = NO_QUIRKS): SimAnswer {
  return responsesCall(body, quirks).answer
}

/**
 * The sim's answer to a Responses request, and the tools it may call by their keys (what each call
 * of the answer names), so the output item can say which namespace a call is of, or that it is a
 * custom tool's.
 */
function responsesCall(
  body: Body,
  quirks: Quirks = NO_QUIRKS,
): {answer: SimAnswer; callable: Map<string, Callable>} {
  const input = body.input
  const items = Array.isArray(input) ? (input as Body[]) : []
  const lastItem = items.at(-1)
  // `tool-search`: Claude Code follows its ToolSearch result with words of its own ("Tool
  // loaded."), a user message after the output: that output is answered too
  const lastOutput = items.findLastIndex(isOutput)
  const outputItem = isOutput(lastItem)
    ? lastItem
    : quirks.has('tool-search') &&
        lastOutput >= 0 &&
        items.slice(lastOutput + 1).every((i) => i?.role === 'user')
      ? items[lastOutput]
      : undefined
  const toolChoice = body.tool_choice
  const reasoning = body.reasoning as Body | undefined
  const userText = lastUserText(input)
  const tools = requestTools(body)
  // text, not a call, under `tool_choice: "none"` or when the user's last words ask for text only
  // (an agent's compaction prompt), unless the tool choice forces a call
  const textOnly =
    toolChoice === 'none' ||
    (toolChoice !== 'required' &&
      (typeof toolChoice !== 'object' || toolChoice === null) &&
      textAsked(userText))
  const search = outputItem || textOnly ? undefined : searchTool(tools, toolChoice, userText)
  const candidates = callableTools(tools)
  // each tool by its key, and a namespace's tools by their own name too (the first holding it)
  const byName = new Map<string, Callable>()
  for (const c of candidates) if (!byName.has(c.key)) byName.set(c.key, c)
  for (const c of candidates) if (!byName.has(c.name)) byName.set(c.name, c)
  const names = [...byName.keys()]
  const forced = forcedTool(toolChoice, candidates)
  // `tool-search`: after a search (a `tool_search` function) loaded the tools, the loaded tool the
  // user's words name
  const loaded =
    (quirks.has('tool-search') || quirks.has('named-tool')) &&
    lastItem?.type === 'function_call_output' &&
    !textOnly
      ? pickedTool(
          names,
          userText,
          quirks,
          String(items.findLast((i) => i?.type === 'function_call' && i.call_id === lastItem.call_id)?.name),
        )
      : undefined
  const picked =
    loaded ?? (outputItem || search || textOnly ? undefined : pickedTool(names, userText, quirks))
  const tool =
    (outputItem && !loaded) || search || textOnly
      ? undefined
      : picked
        ? byName.get(picked.name)
        : (forced ?? candidates[0])
  const toolName = tool?.key
  const answer = simAnswer({
    promptParts: [body.instructions ?? null, input ?? null, body.tools ?? null],
    lastUserText: userText,
    reasoning: !!reasoning && reasoning.effort !== 'none',
    toolName,
    // a custom tool's input is the user's words, as is the `input` of a custom tool sent as a
    // function of one `input` (a Responses server that takes functions only)
    inputArg: tool !== undefined && (tool.custom || inputOnly(tool.parameters)),
    forceTool:
      !!picked ||
      !!forced ||
      toolChoice === 'required' ||
      (toolChoice as Body | undefined)?.type === 'function',
    toolArgs: picked?.args,
    // a function the user's words named: arguments of its schema (Codex's spawn_agent takes a
    // `task_name` and a `message`, and refuses a call without them)
    namedSchema:
      picked && !picked.args && tool && !tool.custom && !inputOnly(tool.parameters)
        ? (tool.parameters ?? {})
        : undefined,
    jsonSchema: ((body.text as Body | undefined)?.format as Body | undefined)?.schema,
    toolResult: outputItem && !loaded ? toolResultText(outputItem.output) : undefined,
    // OpenAI's GPT-5.6 on report the prompt written to the cache (`cache_write_tokens`)
    messagesCache: writesCache(body.model),
  })
  const callable = new Map(byName)
  if (search) {
    const filters = search.filters as Body | undefined
    const found = searchResults(searchQuery(userText), searchDomain(filters?.allowed_domains))
    return {answer: searchAnswer(answer, found, citedText(found).text), callable}
  }
  return {answer: quirkAnswer(answer, candidates[1]?.key, quirks, simTokens), callable}
}

/**
 * A model that reports its cache writes (`input_tokens_details.cache_write_tokens`): OpenAI's
 * GPT-5.6 and later, which bill them at 1.25 times the input; earlier ones write for free and
 * say nothing of it.
 */
export const writesCache = (model: unknown): boolean =>
  typeof model === 'string' && /^(?:openai\/)?gpt-(?:5\.(?:[6-9]|\d\d)|[6-9])/.test(model)

/** The output item of the sim's call of a tool: a `function_call`, or a custom tool's call. */
function callItem(
  call: {name: string; args: Record<string, unknown>},
  tool: Callable | undefined,
  quirks: Quirks,
): Body {
  const namespace = tool?.namespace === undefined ? {} : {namespace: tool.namespace}
  // (`custom-as-function`: a function call of the custom tool's name, its input in JSON)
  if (tool?.custom && !quirks.has('custom-as-function')) {
    const input = call.args.input
    return {
      type: 'custom_tool_call',
      id: simId('ctc_'),
      call_id: simId('call_'),
      name: tool.name,
      ...namespace,
      input: typeof input === 'string' ? input : JSON.stringify(call.args),
      status: 'completed',
    }
  }
  return {
    type: 'function_call',
    id: simId('fc_'),
    call_id: simId('call_'),
    name: tool?.name ?? call.name,
    ...namespace,
    arguments: argsText(call.args, quirks),
    status: 'completed',
  }
}

/** A host as OpenAI's inline citations name a site (`example.com`, no `www.`). */
const site = (url: string): string => new URL(url).hostname.replace(/^www\./, '')

/**
 * The text of a search answer as OpenAI writes it, each result cited inline after its title as a
 * markdown link in parentheses, and the `url_citation` annotations of those links.
 */
export function citedText(search: NonNullable<SimAnswer['search']>): {text: string; annotations: Body[]} {
  const {text, cites} = searchText(search, (r) => `([${site(r.url)}](${r.url}))`)
  const annotations = cites.map(([start, end], i) => ({
    type: 'url_citation',
    start_index: start,
    end_index: end,
    title: search.results[i].title,
    url: search.results[i].url,
  }))
  return {text, annotations}
}

export function responsesUsage(answer: SimAnswer): Body {
  const u = answer.usage
  const output = u.output + u.reasoning
  return {
    input_tokens: u.prompt,
    input_tokens_details:
      u.cacheCreation > 0
        ? {cached_tokens: u.cacheRead, cache_write_tokens: u.cacheCreation}
        : {cached_tokens: u.cacheRead},
    output_tokens: output,
    output_tokens_details: {reasoning_tokens: u.reasoning},
    total_tokens: u.prompt + output,
  }
}

/**
 * `prefix-cache`: the tokens of the longest prefix of the prompt an earlier request sent, as
 * OpenAI's prompt cache reads them: the instructions and tools first (the head of what the model
 * reads), then the input items in order. A prefix's tokens are counted as the prompt's are, so
 * a request that starts with the whole of an earlier one (the next turn of its conversation, or
 * the same request again: a retry) reads exactly that one's `input_tokens`.
 */
function prefixCached(cache: PromptCache, body: Body): number {
  const input = Array.isArray(body.input) ? (body.input as unknown[]) : [body.input ?? null]
  const head = [body.instructions ?? null, body.tools ?? null]
  return cache.lookup<unknown>(
    [head, ...input],
    (prefix) => simTokens(JSON.stringify([body.instructions ?? null, prefix.slice(1), body.tools ?? null])),
    true,
  )
}

function handle(context: SimContext) {
  const cache = new PromptCache()
  return async (request: SimRequest): Promise<void> => {
    if (!bearer(request.headers)) {
      context.sendError(request, 401, 'Missing bearer authentication in header', 'invalid_request_error')
      return
    }
    const selection = selectQuirks(request.headers, (request.body as Body | undefined)?.model)
    if (selection.unknown.length > 0) {
      context.sendError(request, 400, unknownQuirkMessage(selection.unknown), 'invalid_request_error')
      return
    }
    const quirks = selection.quirks
    const body: Body = {...((request.body ?? {}) as Body), model: selection.model}
    if (typeof body.model !== 'string' || body.model === '') {
      context.sendError(request, 400, 'Missing required parameter: model', 'invalid_request_error')
      return
    }
    if (body.input === undefined) {
      context.sendError(request, 400, 'Missing required parameter: input', 'invalid_request_error')
      return
    }
    // (a strict server's schema refuses a field it does not know before it reads any)
    const unknownField = unknownResponsesParameter(body, quirks) ?? inputItemStatusRefusal(body, quirks)
    if (unknownField) {
      sendJson(request.res, 400, {error: unknownField})
      return
    }
    const tooMany = toolCapRefusal('responses', Array.isArray(body.tools) ? body.tools.length : 0, quirks)
    if (tooMany) {
      sendJson(request.res, tooMany.status, tooMany.raw)
      return
    }
    const plain = plainToolsRefusal(body, quirks)
    if (plain) {
      sendJson(request.res, 400, {error: plain})
      return
    }
    const unreasoned = reasoningTextRefusal(body, quirks)
    if (unreasoned) {
      sendJson(request.res, 400, {error: unreasoned})
      return
    }
    const separated = separatedOutputRefusal(body, quirks)
    if (separated) {
      sendJson(request.res, 400, {error: separated})
      return
    }
    // `text-tool-results`: Zen's refusal of an image inside a tool call's output
    const mediaInOutput = responsesMediaInOutputRefusal(body, quirks)
    if (mediaInOutput) {
      sendJson(request.res, mediaInOutput.status, mediaInOutput.raw)
      return
    }
    const lite = liteRefusal(body, request.headers, quirks)
    if (lite) {
      sendJson(request.res, 400, {error: lite})
      return
    }
    const undescribed = namespaceDescriptionRefusal(body, quirks)
    if (undescribed) {
      sendJson(request.res, 400, {error: undescribed})
      return
    }
    const unkept = storeFalseRefusal(body, quirks)
    if (unkept) {
      sendJson(request.res, 400, {error: unkept})
      return
    }
    // `ollama-effort`: Ollama's `/v1/responses`, an effort it does not map
    const ollamaEffort = ollamaEffortRefusal(
      (body.reasoning as {effort?: unknown} | null | undefined)?.effort,
      quirks,
    )
    if (ollamaEffort) {
      sendJson(request.res, 400, {
        error: {message: ollamaEffort, type: 'invalid_request_error', param: null, code: null},
      })
      return
    }
    const refused = unsupportedResponsesParameter(body, quirks)
    if (refused) {
      sendJson(request.res, 400, {
        error: {
          message: refused.message,
          type: 'invalid_request_error',
          param: refused.param,
          code: refused.code,
        },
      })
      return
    }
    // OpenAI's documented minimum of max_output_tokens
    const max = body.max_output_tokens
    if (typeof max === 'number' && max < 16) {
      sendJson(request.res, 400, {
        error: {
          message: `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got ${max} instead.`,
          type: 'invalid_request_error',
          param: 'max_output_tokens',
          code: 'integer_below_min_value',
        },
      })
      return
    }
    const reasoningEffort = (body.reasoning as Body | undefined)?.effort
    const xai = xaiRefusal(body.model, quirks, reasoningEffort !== undefined, false)
    if (xai) {
      sendJson(request.res, xai.status, xai.raw)
      return
    }
    // OpenAI's rule for a function's name, as chat's (a Claude Code plugin's MCP tool past 64)
    for (const [i, tool] of (Array.isArray(body.tools) ? (body.tools as Body[]) : []).entries()) {
      const name = openAiNameProblem(tool?.type === 'function' ? tool.name : undefined, `tools[${i}].name`)
      if (name) {
        sendJson(request.res, 400, name.body())
        return
      }
    }
    const choice = toolChoiceProblem(body)
    if (choice) {
      sendJson(request.res, 400, {
        error: {message: choice, type: 'invalid_request_error', param: 'tool_choice', code: null},
      })
      return
    }
    // (under `encrypted-foreign`, the account's own ciphertext only, refused in ChatGPT's words)
    const account = quirks.has('encrypted-foreign') ? simAccount(bearer(request.headers)!) : undefined
    const foreign = account === undefined ? undefined : foreignEncryptedRefusal(body, quirks, account)
    if (foreign) {
      sendJson(request.res, 400, {error: foreign})
      return
    }
    const problem = account === undefined ? responsesHistoryProblem(body.input) : undefined
    if (problem) {
      sendJson(request.res, 400, errorBody('responses', 400, problem, {code: 'invalid_encrypted_content'}))
      return
    }
    const {answer, callable} = responsesCall(body, quirks)
    if (quirks.has('prefix-cache')) answer.usage.cacheRead = prefixCached(cache, body)
    const created = Math.floor(context.clock.now() / 1000)
    const id = simId('resp_')
    const include = Array.isArray(body.include) ? (body.include as string[]) : []
    const items: Body[] = []
    if (answer.thinking) {
      // (DeepSeek's: the text as `reasoning_text` content, no summary, nothing encrypted)
      const item: Body = quirks.has('reasoning-text')
        ? {
            type: 'reasoning',
            id: simId('rs_'),
            summary: [],
            content: [{type: 'reasoning_text', text: answer.thinking}],
          }
        : {
            type: 'reasoning',
            id: simId('rs_'),
            summary: (body.reasoning as Body).summary ? [{type: 'summary_text', text: answer.thinking}] : [],
          }
      if (include.includes('reasoning.encrypted_content') && !quirks.has('reasoning-text'))
        item.encrypted_content = encryptReasoning(answer.thinking, account)
      items.push(item)
    }
    const annotations = answer.search ? citedText(answer.search).annotations : []
    if (answer.search) {
      const action: Body = {type: 'search', query: answer.search.query}
      // the sources only when asked for, as OpenAI gives them
      if (include.includes('web_search_call.action.sources'))
        action.sources = answer.search.results.map((r) => ({type: 'url', url: r.url}))
      items.push({type: 'web_search_call', id: simId('ws_'), status: 'completed', action})
    }
    if (answer.tool) {
      for (const call of [answer.tool, ...(answer.moreTools ?? [])])
        items.push(callItem(call, callable.get(call.name), quirks))
    } else {
      items.push({
        type: 'message',
        id: simId('msg_'),
        role: 'assistant',
        status: 'completed',
        content: [{type: 'output_text', text: answer.text, annotations}],
      })
    }
    const base: Body = {
      id,
      object: 'response',
      created_at: created,
      model: body.model,
      instructions: body.instructions ?? null,
      tools: body.tools ?? [],
      tool_choice: body.tool_choice ?? 'auto',
      parallel_tool_calls: body.parallel_tool_calls ?? true,
      store: body.store ?? true,
      reasoning: body.reasoning ?? null,
      text: body.text ?? {format: {type: 'text'}},
      previous_response_id: body.previous_response_id ?? null,
      metadata: {},
      error: null,
      incomplete_details: null,
    }
    const completed = {...base, status: 'completed', output: items, usage: responsesUsage(answer)}
    const requestId = simId('req_')
    if (body.stream !== true) {
      sendJson(request.res, 200, completed, {'x-request-id': requestId})
      return
    }
    const events: SseEvent[] = []
    const push = (payload: Body): void => {
      events.push({event: String(payload.type), data: {...payload, sequence_number: events.length}})
    }
    const inProgress = {...base, status: 'in_progress', output: [], usage: null}
    push({type: 'response.created', response: inProgress})
    push({type: 'response.in_progress', response: inProgress})
    items.forEach((item, outputIndex) => {
      if (item.type === 'reasoning') {
        push({type: 'response.output_item.added', output_index: outputIndex, item: {...item, summary: []}})
        push({type: 'response.output_item.done', output_index: outputIndex, item})
      } else if (item.type === 'web_search_call') {
        // OpenAI's sequence: the call added without its action, its three states, then done whole
        const ids = {output_index: outputIndex, item_id: item.id}
        push({
          type: 'response.output_item.added',
          output_index: outputIndex,
          item: {type: 'web_search_call', id: item.id, status: 'in_progress'},
        })
        push({type: 'response.web_search_call.in_progress', ...ids})
        push({type: 'response.web_search_call.searching', ...ids})
        push({type: 'response.web_search_call.completed', ...ids})
        push({type: 'response.output_item.done', output_index: outputIndex, item})
      } else if (item.type === 'function_call') {
        push({
          type: 'response.output_item.added',
          output_index: outputIndex,
          item: {...item, arguments: '', status: 'in_progress'},
        })
        for (const delta of argsPieces(String(item.arguments), quirks, deltas))
          push({
            type: 'response.function_call_arguments.delta',
            item_id: item.id,
            output_index: outputIndex,
            delta,
          })
        push({
          type: 'response.function_call_arguments.done',
          item_id: item.id,
          output_index: outputIndex,
          arguments: item.arguments,
        })
        push({type: 'response.output_item.done', output_index: outputIndex, item})
      } else if (item.type === 'custom_tool_call') {
        // OpenAI's sequence for a custom tool: the call added with an empty input, the input's
        // deltas and its done event, then the call whole
        push({
          type: 'response.output_item.added',
          output_index: outputIndex,
          item: {...item, input: '', status: 'in_progress'},
        })
        for (const delta of deltas(String(item.input)))
          push({
            type: 'response.custom_tool_call_input.delta',
            item_id: item.id,
            output_index: outputIndex,
            delta,
          })
        push({
          type: 'response.custom_tool_call_input.done',
          item_id: item.id,
          output_index: outputIndex,
          input: item.input,
        })
        push({type: 'response.output_item.done', output_index: outputIndex, item})
      } else {
        const ids = {item_id: item.id, output_index: outputIndex, content_index: 0}
        push({
          type: 'response.output_item.added',
          output_index: outputIndex,
          item: {...item, status: 'in_progress', content: []},
        })
        push({
          type: 'response.content_part.added',
          ...ids,
          part: {type: 'output_text', text: '', annotations: []},
        })
        for (const delta of deltas(answer.text))
          push({type: 'response.output_text.delta', ...ids, delta, logprobs: []})
        annotations.forEach((annotation, annotationIndex) =>
          push({
            type: 'response.output_text.annotation.added',
            ...ids,
            annotation_index: annotationIndex,
            annotation,
          }),
        )
        // (the done event has no annotations in OpenAI's shape: the part and the item carry them)
        push({type: 'response.output_text.done', ...ids, text: answer.text, logprobs: []})
        push({
          type: 'response.content_part.done',
          ...ids,
          part: {type: 'output_text', text: answer.text, annotations},
        })
        push({type: 'response.output_item.done', output_index: outputIndex, item})
      }
    })
    if (!quirks.has('no-terminal')) push({type: 'response.completed', response: completed})
    await sendSse(request.res, events, {fault: context.fault(request), headers: {'x-request-id': requestId}})
  }
}

/**
 * `POST /v1/responses/compact`, OpenAI's remote compaction (Codex calls it when its provider is
 * OpenAI's): the history in `input` comes back as its user messages and one `compaction` item whose
 * `encrypted_content` only this server reads (here: the base64 of the other items' count), in a
 * `response.compaction` object with the usage of the summary it made.
 */
function handleCompact(context: SimContext) {
  return (request: SimRequest): void => {
    if (!bearer(request.headers)) {
      context.sendError(request, 401, 'Missing bearer authentication in header', 'invalid_request_error')
      return
    }
    const body = (request.body ?? {}) as Body
    if (typeof body.model !== 'string' || body.model === '') {
      context.sendError(request, 400, 'Missing required parameter: model', 'invalid_request_error')
      return
    }
    const input = typeof body.input === 'string' ? [{role: 'user', content: body.input}] : body.input
    if (!Array.isArray(input)) {
      context.sendError(request, 400, 'Missing required parameter: input', 'invalid_request_error')
      return
    }
    const users = input.filter(
      (item: Body) => item?.role === 'user' && (item.type ?? 'message') === 'message',
    )
    const folded = input.length - users.length
    const prompt = simTokens(JSON.stringify(input))
    sendJson(
      request.res,
      200,
      {
        id: simId('resp_'),
        object: 'response.compaction',
        created_at: Math.floor(context.clock.now() / 1000),
        output: [
          ...users,
          {
            type: 'compaction',
            id: simId('cmp_'),
            encrypted_content: Buffer.from(`sim-compaction:${folded}`).toString('base64'),
          },
        ],
        usage: {
          input_tokens: prompt,
          input_tokens_details: {cached_tokens: 0},
          output_tokens: 32,
          output_tokens_details: {reasoning_tokens: 0},
          total_tokens: prompt + 32,
        },
      },
      {'x-request-id': simId('req_')},
    )
  }
}

export function registerResponses(router: SimRouter, context: SimContext): void {
  context.errorFormat('/v1/responses', (status, message) => errorBody('responses', status, message))
  router.add('POST', '/v1/responses', handle(context))
  router.add('POST', '/v1/responses/compact', handleCompact(context))
}
