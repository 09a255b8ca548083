/**
 * Simulated Anthropic Messages upstream: `POST /v1/messages` and `/v1/messages/count_tokens`
 * (also with `?beta=true`), exact stream order, `request-id` header, Anthropic error shape.
 */
import {errorBody} from '../../protocols/errors.js'
import {PromptCache} from '../chat.js'
import type {SimRequest, SimRouter} from '../router.js'
import {sendJson} from '../router.js'
import type {SimContext} from '../context.js'
import type {SseEvent} from '../sse.js'
import {sendSse, simTokens} from '../sse.js'
import type {SimAnswer} from './common.js'
import {bearer, deltas, header, lastTextOf, simAnswer, simId, textAsked, toolResultText} from './common.js'
import type {Quirks} from './quirks.js'
import {
  NO_QUIRKS,
  argsPieces,
  pickedTool,
  quirkAnswer,
  ollamaMessagesThinkingRefusal,
  deepseekEffortRefusal,
  messagesThinkingFormRefusal,
  kimiEnabledOnlyRefusal,
  messagesThinkingHistoryRefusal,
  messagesToolChoiceRefusal,
  refusedMaxOutput,
  contextRefusal,
  contextWordsRefusal,
  ollamaReportedPrompt,
  selectQuirks,
  toolCapRefusal,
  unknownQuirkMessage,
} from './quirks.js'
import type {DroppedThinking} from './turn-checks.js'
import {
  answerBinding,
  bindingProblem,
  messagesHistoryProblem,
  redactedThinking,
  redactedThinkingProblem,
  thinkingSignature,
} from './turn-checks.js'
import {messagesImageProblem} from './media-checks.js'
import {messagesMediaInResultRefusal} from './media-in-results.js'
import {
  BINDING_BETA,
  claudeModel,
  claudeSettingsProblem,
  prefillProblem,
  thinkingMode,
  thinkingOmitted,
  toolChoiceProblem,
} from './claude-models.js'
import {
  encryptedResult,
  nthQuery,
  searchAnswer,
  searchesWanted,
  searchDomain,
  searchQuery,
  searchResults,
  searchText,
  wantsSearch,
} from './web-search.js'

type Body = Record<string, unknown>

function lastUserText(messages: unknown): string {
  if (!Array.isArray(messages)) return ''
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as Body
    if (m?.role === 'user') {
      const text = lastTextOf(m.content)
      if (text) return text
    }
  }
  return ''
}

function lastIsToolResult(messages: unknown): boolean {
  if (!Array.isArray(messages)) return false
  const last = messages.at(-1) as Body | undefined
  return (
    Array.isArray(last?.content) && (last.content as Body[]).some((block) => block?.type === 'tool_result')
  )
}

/** The text of the last tool_result block of the last message. */
function lastToolResult(messages: unknown): string | undefined {
  if (!lastIsToolResult(messages)) return undefined
  const blocks = ((messages as Body[]).at(-1)!.content as Body[]).filter((b) => b?.type === 'tool_result')
  return toolResultText(blocks.at(-1)?.content)
}

/** The name of the tool whose result the last message holds (its `tool_use` earlier), if any. */
function lastResultTool(messages: unknown): string | undefined {
  if (!lastIsToolResult(messages)) return undefined
  const blocks = ((messages as Body[]).at(-1)!.content as Body[]).filter((b) => b?.type === 'tool_result')
  const id = blocks.at(-1)?.tool_use_id
  for (const m of (messages as Body[]).slice(0, -1).reverse())
    for (const block of Array.isArray(m?.content) ? (m.content as Body[]) : [])
      if (block?.type === 'tool_use' && block.id === id) return String(block.name)
  return undefined
}

const isCustomTool = (t: Body): boolean => typeof t.name === 'string' && (!t.type || t.type === 'custom')

/** Anthropic's server-side web search tool (`web_search_20250305`, `web_search_20260209`, ...). */
const isWebSearch = (t: Body): boolean => typeof t?.type === 'string' && t.type.startsWith('web_search_')

/**
 * The web search tool when the model is to use it: forced by name, under `any`, as the only tool,
 * or asked for in the user's words ("search the web"); never under `none` or another tool forced
 * by name. (Claude Code's WebSearch sends it alone, forced by name.)
 */
function searchTool(tools: Body[], toolChoice: Body | undefined, userText: string): Body | undefined {
  const tool = tools.find(isWebSearch)
  if (!tool || toolChoice?.type === 'none') return undefined
  if (toolChoice?.type === 'tool') return toolChoice.name === tool.name ? tool : undefined
  return toolChoice?.type === 'any' || tools.length === 1 || wantsSearch(userText) ? tool : undefined
}

type Turn = {searches: number} | {problem: string}

/**
 * The paused turn a request continues (quirk `pause-turn`): its last message is the assistant's,
 * and the searches in it are the sim's own as it sent them, each `web_search_tool_result` after
 * its `server_tool_use` and each result's `encrypted_content` the sim's for its URL (Anthropic
 * refuses what it cannot verify). Undefined when the last message is not the assistant's.
 */
export function pausedTurn(messages: unknown): Turn | undefined {
  if (!Array.isArray(messages)) return undefined
  const at = messages.length - 1
  const last = messages[at] as Body | undefined
  if (last?.role !== 'assistant' || !Array.isArray(last.content)) return undefined
  const calls = new Set<string>()
  let searches = 0
  for (const [i, block] of (last.content as Body[]).entries()) {
    if (block?.type === 'server_tool_use') calls.add(String(block.id))
    if (block?.type !== 'web_search_tool_result') continue
    if (!calls.has(String(block.tool_use_id)))
      return {
        problem: `messages.${at}.content.${i}: web_search_tool_result block(s) provided when previous message does not contain a matching server_tool_use (${String(block.tool_use_id)})`,
      }
    const results = Array.isArray(block.content) ? (block.content as Body[]) : []
    for (const [j, result] of results.entries())
      if (result?.encrypted_content !== encryptedResult(String(result?.url)))
        return {
          problem: `messages.${at}.content.${i}.content.${j}.encrypted_content: Invalid encrypted content for web_search_result`,
        }
    searches++
  }
  return {searches}
}

/** The custom tool the user's last words ask to be called (by name, or any), if one is offered. */
function askedTool(tools: Body[], userText: string): Body | undefined {
  // ("call one of the tools": the first)
  if (/\bcall one of the tools\b/i.test(userText)) return tools.find(isCustomTool)
  const m = /\bcall(?:ing)? the (?:tool ([\w-]+)|([\w-]+) tool)\b/i.exec(userText)
  const name = m?.[1] ?? m?.[2]
  return name === undefined ? undefined : tools.find((t) => isCustomTool(t) && t.name === name)
}

/**
 * The sim's answer to a Messages request (with `quirks`, as {@link quirkAnswer} changes it). The
 * model thinks as {@link thinkingMode} says; between tools, only before a tool call.
 */
export function messagesAnswer(body: Body, quirks: Quirks = NO_QUIRKS): SimAnswer {
  const mode = thinkingMode(body, claudeModel(String(body.model), quirks))
  const answer = modelAnswer(body, quirks, mode !== 'off')
  if (mode !== 'between-tools' || answer.tool || !answer.thinking) return answer
  const {thinking: _thinking, ...rest} = answer
  return {...rest, usage: {...answer.usage, reasoning: 0}}
}

function modelAnswer(body: Body, quirks: Quirks, thinks: boolean): SimAnswer {
  const tools = Array.isArray(body.tools) ? (body.tools as Body[]) : []
  const customTool = tools.find(isCustomTool)
  const toolChoice = body.tool_choice as Body | undefined
  // a tool forced by name is the one called, with arguments of its schema
  const forced =
    toolChoice?.type === 'tool' ? tools.find((t) => isCustomTool(t) && t.name === toolChoice.name) : undefined
  const userText = lastUserText(body.messages)
  const names = tools.filter(isCustomTool).map((t) => String(t.name))
  // text, not a call, under `tool_choice: {type: "none"}` or when the user's last words ask for
  // text only (an agent's compaction prompt), unless the tool choice forces a call
  const textOnly =
    toolChoice?.type === 'none' ||
    (toolChoice?.type !== 'any' && toolChoice?.type !== 'tool' && textAsked(userText))
  // `tool-search`: after Codex's search loaded the tools, the loaded tool the user's words name
  const loaded =
    lastIsToolResult(body.messages) && !textOnly
      ? pickedTool(names, userText, quirks, lastResultTool(body.messages) ?? '')
      : undefined
  // (a result answered, or text asked for: no call)
  const answered = (lastIsToolResult(body.messages) && !loaded) || textOnly
  const search = answered || loaded ? undefined : searchTool(tools, toolChoice, userText)
  // a tool the prompt asks for by name ("call the tool f", "calling the json_answer tool"): a model
  // follows it as it would a forced choice (what a model that refuses forcing is told instead)
  const asked = answered || loaded || forced || search ? undefined : askedTool(tools, userText)
  const picked =
    loaded ?? (answered || forced || asked || search ? undefined : pickedTool(names, userText, quirks))
  const called = forced ?? asked
  const answer = simAnswer({
    promptParts: [body.system ?? null, body.messages ?? null, body.tools ?? null],
    lastUserText: userText,
    reasoning: thinks,
    toolName:
      answered || search ? undefined : (picked?.name ?? ((called ?? customTool)?.name as string | undefined)),
    forceTool: !!picked || !!asked || toolChoice?.type === 'any' || toolChoice?.type === 'tool',
    toolArgs: picked?.args,
    // a tool the user's words named: arguments of its schema
    namedSchema:
      picked && !picked.args
        ? (tools.find((t) => isCustomTool(t) && t.name === picked.name)?.input_schema ?? {})
        : undefined,
    forcedSchema: called ? (called.input_schema ?? {}) : undefined,
    messagesCache: true,
    toolResult: loaded ? undefined : lastToolResult(body.messages),
  })
  if (search) {
    const query = searchQuery(userText)
    const domain = searchDomain(search.allowed_domains, search.blocked_domains)
    const found = searchResults(query, domain)
    if (quirks.has('pause-turn')) {
      // one search an answer, each a paused turn, until the turn holds the searches asked for
      const turn = pausedTurn(body.messages)
      const done = turn && 'searches' in turn ? turn.searches : 0
      if (done < searchesWanted(userText)) {
        const next = searchResults(nthQuery(query, done + 1), domain)
        const paused = searchAnswer(answer, next, '')
        if (done > 0) {
          // (its thinking is in the turn already)
          delete paused.thinking
          paused.usage = {...paused.usage, reasoning: 0}
        }
        return {...paused, paused: true, usage: {...paused.usage, output: simTokens(next.query)}}
      }
      // the searches are in the turn already (the paused answers): the text ends it
      const text = searchText(found).text
      return {text, usage: {...answer.usage, reasoning: 0, output: simTokens(text)}}
    }
    return searchAnswer(answer, found, searchText(found).text)
  }
  const second = tools.filter(isCustomTool)[1]?.name as string | undefined
  return quirkAnswer(answer, second, quirks, simTokens)
}

/**
 * The final usage object of a Messages answer (`input_tokens` excludes cache tokens). The cache
 * write is a 5-minute one, or under quirk `cache-1h` half of it (rounded up) a 1-hour one, as
 * Claude Code's 1-hour TTL on its system prompt produces.
 */
export function messagesUsage(answer: SimAnswer, quirks: Quirks = NO_QUIRKS): Body {
  const u = answer.usage
  const oneHour = quirks.has('cache-1h') ? Math.ceil(u.cacheCreation / 2) : 0
  return {
    input_tokens: u.prompt - u.cacheRead - u.cacheCreation,
    cache_creation_input_tokens: u.cacheCreation,
    cache_read_input_tokens: u.cacheRead,
    cache_creation: {
      ephemeral_5m_input_tokens: u.cacheCreation - oneHour,
      ephemeral_1h_input_tokens: oneHour,
    },
    output_tokens: u.output + u.reasoning,
    ...(answer.search ? {server_tool_use: {web_search_requests: 1}} : {}),
    service_tier: 'standard',
  }
}

/**
 * Anthropic's blocks of a web search it ran: the `server_tool_use` call and its
 * `web_search_tool_result` (answered under the call's id, each result with opaque
 * `encrypted_content`), before the text written from it.
 */
function searchBlocks(search: NonNullable<SimAnswer['search']>): Body[] {
  const id = simId('srvtoolu_')
  return [
    {type: 'server_tool_use', id, name: 'web_search', input: {query: search.query}},
    {
      type: 'web_search_tool_result',
      tool_use_id: id,
      content: search.results.map((r) => ({
        type: 'web_search_result',
        url: r.url,
        title: r.title,
        encrypted_content: encryptedResult(r.url),
        page_age: null,
      })),
    },
  ]
}

function authenticate(context: SimContext, request: SimRequest): boolean {
  if (header(request.headers, 'x-api-key') || bearer(request.headers)) return true
  context.sendError(request, 401, 'x-api-key header is required', 'authentication_error', {
    'request-id': simId('req_'),
  })
  return false
}

/** Whether a content value (a string, or blocks) is text, all of it whitespace, and nothing else. */
function blankText(content: unknown): boolean {
  if (typeof content === 'string') return content !== '' && !/\S/.test(content)
  if (!Array.isArray(content) || content.length === 0) return false
  return content.every(
    (b: unknown) =>
      (b as Body | null)?.type === 'text' &&
      typeof (b as Body).text === 'string' &&
      !/\S/.test((b as Body).text as string) &&
      (b as Body).text !== '',
  )
}

/**
 * What Anthropic refuses in a request's content, in its words: a system prompt, a message or a
 * tool's result whose only text is whitespace (a turn of `"\n\n"` beside a `tool_use` is taken),
 * and a tool schema whose top level is a union.
 */
export function messagesContentProblem(body: Body): string | undefined {
  if (blankText(body.system)) return 'system: text content blocks must contain non-whitespace text'
  for (const m of Array.isArray(body.messages) ? (body.messages as Body[]) : []) {
    if (blankText(m?.content)) return 'messages: text content blocks must contain non-whitespace text'
    // a tool's result whose text is whitespace alone, as a list of blocks (Bedrock's and
    // Anthropic's users report it: a command that printed a newline)
    if (
      Array.isArray(m?.content) &&
      (m.content as Body[]).some(
        (b) => b?.type === 'tool_result' && Array.isArray(b.content) && blankText(b.content),
      )
    )
      return 'messages: text content blocks must contain non-whitespace text'
  }
  for (const [i, tool] of (Array.isArray(body.tools) ? (body.tools as Body[]) : []).entries()) {
    const schema = tool?.input_schema as Body | undefined
    if (schema && (schema.oneOf !== undefined || schema.anyOf !== undefined || schema.allOf !== undefined))
      return `tools.${i}.custom.input_schema: input_schema does not support oneOf, allOf, or anyOf at the top level`
  }
  return undefined
}

function validate(context: SimContext, request: SimRequest, needMaxTokens: boolean): Body | undefined {
  const body = (request.body ?? {}) as Body
  const problem =
    typeof body.model !== 'string' || body.model === ''
      ? 'model: Field required'
      : !Array.isArray(body.messages)
        ? 'messages: Field required'
        : needMaxTokens && typeof body.max_tokens !== 'number'
          ? 'max_tokens: Field required'
          : undefined
  if (problem) {
    context.sendError(request, 400, problem, 'invalid_request_error', {'request-id': simId('req_')})
    return undefined
  }
  return body
}

/** A body's part as a server's prompt renders it: no cache marks, a string content as its text block. */
function rendered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rendered)
  if (typeof value !== 'object' || value === null) return value
  const out: Body = {}
  for (const [key, v] of Object.entries(value as Body)) {
    if (key === 'cache_control') continue
    out[key] = key === 'content' && typeof v === 'string' ? [{type: 'text', text: v}] : rendered(v)
  }
  return out
}

/**
 * `prefix-cache` on the Messages endpoint: the tokens of the longest prefix of the prompt an
 * earlier request sent whole, as a server with an automatic prefix cache reads them (DeepSeek's
 * context cache, vLLM's and llama.cpp's prefix caching): the system prompt and tools first, then
 * the messages in order, each as the prompt renders it (its cache marks are no tokens; a string
 * content reads as its one text block). A prefix's tokens are counted as the prompt's are.
 */
function messagesPrefixCached(cache: PromptCache, body: Body): number {
  const messages = Array.isArray(body.messages) ? (body.messages as unknown[]) : []
  const head = rendered([body.system ?? null, body.tools ?? null])
  return cache.lookup<unknown>(
    [head, ...messages.map(rendered)],
    (prefix) =>
      simTokens(
        JSON.stringify([body.system ?? null, messages.slice(0, prefix.length - 1), body.tools ?? null]),
      ),
    true,
  )
}

function handleMessages(context: SimContext) {
  const cache = new PromptCache()
  return async (request: SimRequest): Promise<void> => {
    if (!authenticate(context, request)) return
    const selection = selectQuirks(request.headers, (request.body as Body | undefined)?.model)
    if (selection.unknown.length > 0) {
      context.sendError(request, 400, unknownQuirkMessage(selection.unknown), 'invalid_request_error')
      return
    }
    const quirks = selection.quirks
    const validated = validate(context, request, true)
    if (!validated) return
    const body: Body = {...validated, model: selection.model}
    const refusedFirst =
      refusedMaxOutput(body, selection.model, quirks) ??
      ollamaMessagesThinkingRefusal(body, selection.model, quirks)
    if (refusedFirst) {
      context.sendError(request, 400, refusedFirst, 'invalid_request_error', {'request-id': simId('req_')})
      return
    }
    // `text-tool-results`: LM Studio's refusal of an image inside a tool result
    const mediaInResult = messagesMediaInResultRefusal(body, quirks)
    if (mediaInResult) {
      sendJson(request.res, mediaInResult.status, mediaInResult.raw)
      return
    }
    const tooMany = toolCapRefusal('messages', Array.isArray(body.tools) ? body.tools.length : 0, quirks)
    if (tooMany) {
      sendJson(request.res, tooMany.status, tooMany.raw)
      return
    }
    const deepseek =
      kimiEnabledOnlyRefusal(body, quirks) ??
      messagesToolChoiceRefusal(body, selection.model, quirks) ??
      messagesThinkingHistoryRefusal(body, selection.model, quirks) ??
      deepseekEffortRefusal(body, quirks) ??
      messagesThinkingFormRefusal(body, quirks)
    if (deepseek) {
      sendJson(request.res, 400, deepseek.raw)
      return
    }
    const model = claudeModel(selection.model, quirks)
    const betas = betaValues(request.headers)
    const refusedBetas = strictBetasProblem(betas, body, quirks) ?? strictMessagesFieldsProblem(body, quirks)
    if (refusedBetas) {
      context.sendError(request, 400, refusedBetas, 'invalid_request_error', {'request-id': simId('req_')})
      return
    }
    const refused =
      (quirks.has('no-advisor') ? advisorProblem(body) : undefined) ??
      claudeSettingsProblem(body, model, betas) ??
      toolChoiceProblem(body, model) ??
      prefillProblem(body, model) ??
      messagesImageProblem(body) ??
      messagesContentProblem(body) ??
      (quirks.has('redacted-thinking') ? redactedThinkingProblem(body) : undefined) ??
      // (DeepSeek's and Kimi's endpoints verify no signature, and check a tool turn's thinking their
      // own way: messagesThinkingHistoryRefusal)
      messagesHistoryProblem(body, quirks.has('reasoning-content-required'))
    if (refused) {
      context.sendError(request, 400, refused, 'invalid_request_error', {'request-id': simId('req_')})
      return
    }
    let dropped: DroppedThinking[] = []
    const binding = model.prefixBinding ? bindingProblem(body, betas, BINDING_BETA) : undefined
    if (binding && 'problem' in binding) {
      context.sendError(request, 400, binding.problem, 'invalid_request_error', {'request-id': simId('req_')})
      return
    }
    if (binding) {
      // drop_block: the request goes on without them, and the answer says so
      body.messages = binding.messages
      dropped = binding.dropped
    }
    const turn = quirks.has('pause-turn') ? pausedTurn(body.messages) : undefined
    if (turn && 'problem' in turn) {
      context.sendError(request, 400, turn.problem, 'invalid_request_error', {'request-id': simId('req_')})
      return
    }
    const answer = messagesAnswer(body, quirks)
    if (quirks.has('prefix-cache'))
      answer.usage = {...answer.usage, cacheRead: messagesPrefixCached(cache, body), cacheCreation: 0}
    // `ollama-truncate`: Ollama's Anthropic endpoint, which reports what it kept of a prompt past
    // its context as the whole input, and no cache
    const reported = ollamaReportedPrompt(quirks, answer.usage.prompt)
    if (reported !== undefined)
      answer.usage = {...answer.usage, prompt: reported, cacheRead: 0, cacheCreation: 0}
    // an Anthropic-compatible server that says it in the chat API's words (DeepSeek's)
    const overflow = contextRefusal(body, quirks, answer.usage.prompt)
    if (overflow) {
      context.sendError(request, 400, overflow, 'invalid_request_error', {'request-id': simId('req_')})
      return
    }
    // MiniMax's Anthropic endpoint says it in its own words and body (`minimax-context`)
    const words = quirks.has('minimax-context') ? contextWordsRefusal(quirks, answer.usage.prompt) : undefined
    if (words) {
      sendJson(request.res, words.status, words.raw)
      return
    }
    const requestId = simId('req_')
    const id = simId('msg_')
    const blocks: Body[] = []
    if (answer.thinking) {
      // an omitted thinking: no text, a signature (of no text, so that the sim can check it back)
      const text = thinkingOmitted(body, model) ? '' : answer.thinking
      const signature = thinkingSignature(text, model.prefixBinding ? answerBinding(body) : undefined)
      blocks.push({type: 'thinking', thinking: text, signature})
      // `redacted-thinking`: a redacted block, then more thinking signed after both
      if (quirks.has('redacted-thinking')) {
        const redacted = {type: 'redacted_thinking', data: redactedThinking(answer.thinking)}
        const more = text && 'And the rest, said aloud.'
        const binding = model.prefixBinding ? continuedBinding(body, [blocks[0], redacted]) : undefined
        blocks.push(redacted, {type: 'thinking', thinking: more, signature: thinkingSignature(more, binding)})
      }
    }
    if (answer.search) blocks.push(...searchBlocks(answer.search))
    if (answer.tool)
      for (const tool of [answer.tool, ...(answer.moreTools ?? [])])
        blocks.push({
          type: 'tool_use',
          id: simId('toolu_'),
          name: tool.name,
          input: quirks.has('empty-args') ? {} : tool.args,
        })
    else if (!answer.paused) blocks.push({type: 'text', text: answer.text})
    const stopReason = answer.paused ? 'pause_turn' : answer.tool ? 'tool_use' : 'end_turn'
    const usage = messagesUsage(answer, quirks)
    const message = {
      id,
      type: 'message',
      role: 'assistant',
      model: body.model,
      content: blocks,
      stop_reason: stopReason,
      stop_sequence: null,
      usage,
      ...(dropped.length > 0
        ? {
            input_transformations: dropped.map((d) => ({
              type: 'thinking_dropped',
              reason: 'prefix_binding_mismatch',
              message_index: d.message,
              content_index: d.content,
            })),
          }
        : {}),
    }
    if (body.stream !== true) {
      sendJson(request.res, 200, message, {'request-id': requestId})
      return
    }
    const events: SseEvent[] = []
    const push = (payload: Body): void => {
      events.push({event: String(payload.type), data: payload})
    }
    // the search has not run yet when the message starts: its count comes with message_delta
    const startUsage: Body = {...usage, output_tokens: 1}
    delete startUsage.server_tool_use
    push({
      type: 'message_start',
      message: {...message, content: [], stop_reason: null, usage: startUsage},
    })
    blocks.forEach((block, index) => {
      if (block.type === 'thinking') {
        push({
          type: 'content_block_start',
          index,
          content_block: {type: 'thinking', thinking: '', signature: ''},
        })
        if (index === 0) push({type: 'ping'})
        for (const thinking of deltas(String(block.thinking)))
          push({type: 'content_block_delta', index, delta: {type: 'thinking_delta', thinking}})
        push({
          type: 'content_block_delta',
          index,
          delta: {type: 'signature_delta', signature: block.signature},
        })
      } else if (block.type === 'redacted_thinking') {
        // as Anthropic streams it: whole in the block's start, no deltas
        push({type: 'content_block_start', index, content_block: block})
      } else if (block.type === 'server_tool_use') {
        // as Anthropic streams it: the call empty, its whole input in one delta
        push({type: 'content_block_start', index, content_block: {...block, input: {}}})
        if (index === 0) push({type: 'ping'})
        push({
          type: 'content_block_delta',
          index,
          delta: {type: 'input_json_delta', partial_json: JSON.stringify(block.input)},
        })
      } else if (block.type === 'web_search_tool_result') {
        // the results come whole in the block's start, no deltas
        push({type: 'content_block_start', index, content_block: block})
      } else if (block.type === 'tool_use') {
        push({type: 'content_block_start', index, content_block: {...block, input: {}}})
        if (index === 0) push({type: 'ping'})
        for (const partial_json of argsPieces(JSON.stringify(block.input), quirks, deltas))
          push({type: 'content_block_delta', index, delta: {type: 'input_json_delta', partial_json}})
      } else {
        push({type: 'content_block_start', index, content_block: {type: 'text', text: ''}})
        if (index === 0) push({type: 'ping'})
        for (const text of deltas(String(block.text)))
          push({type: 'content_block_delta', index, delta: {type: 'text_delta', text}})
      }
      push({type: 'content_block_stop', index})
    })
    push({
      type: 'message_delta',
      delta: {stop_reason: stopReason, stop_sequence: null},
      usage: {
        input_tokens: usage.input_tokens,
        cache_creation_input_tokens: usage.cache_creation_input_tokens,
        cache_read_input_tokens: usage.cache_read_input_tokens,
        output_tokens: usage.output_tokens,
        ...(usage.server_tool_use ? {server_tool_use: usage.server_tool_use} : {}),
      },
    })
    if (!quirks.has('no-terminal')) push({type: 'message_stop'})
    await sendSse(request.res, events, {fault: context.fault(request), headers: {'request-id': requestId}})
  }
}

/**
 * The binding of a thinking block that follows `blocks` in the answer (`redacted-thinking` on a
 * model with prefix binding): as if the answer so far were the history's last assistant message.
 */
function continuedBinding(body: Body, blocks: Body[]): string {
  const messages = Array.isArray(body.messages) ? (body.messages as Body[]) : []
  const last = messages.at(-1)
  const sofar =
    last?.role === 'assistant'
      ? [
          ...messages.slice(0, -1),
          {
            ...last,
            content: [
              ...(Array.isArray(last.content) ? last.content : [{type: 'text', text: last.content}]),
              ...blocks,
            ],
          },
        ]
      : [...messages, {role: 'assistant', content: blocks}]
  return answerBinding({...body, messages: sofar})
}

/**
 * `strict-betas`: the betas a host fronting Claude knows (Vertex AI, Azure Foundry, a relay that
 * validates them); any other is refused in Anthropic's words, each named.
 */
const STRICT_BETAS = [
  'claude-code-20250219',
  'interleaved-thinking-2025-05-14',
  'context-management-2025-06-27',
  'fine-grained-tool-streaming-2025-05-14',
  'prompt-caching-2024-07-31',
  'token-efficient-tools-2025-02-19',
  'context-1m-2025-08-07',
  'effort-2025-11-24',
  BINDING_BETA,
]

/** `bedrock-betas`: the betas Bedrock's `anthropic_beta` takes (AWS's Claude Messages API page). */
const BEDROCK_BETAS = [
  'computer-use-2024-10-22',
  'computer-use-2025-01-24',
  'token-efficient-tools-2025-02-19',
  'interleaved-thinking-2025-05-14',
  'output-128k-2025-02-19',
  'dev-full-thinking-2025-05-14',
  'context-1m-2025-08-07',
  'context-management-2025-06-27',
  'effort-2025-11-24',
  'tool-search-tool-2025-10-19',
  'tool-examples-2025-10-29',
]

/**
 * A host's refusal of `anthropic-beta` values it does not know (`strict-betas`: Anthropic's
 * "Unexpected value(s) \`A\`, \`B\` for the \`anthropic-beta\` header. ..."; `bedrock-betas`:
 * Bedrock's "invalid beta flag", naming none), and, under either, of a `context_management` sent
 * without its beta (pydantic's "Extra inputs are not permitted", as Anthropic refuses a beta's
 * field without it). Undefined without those quirks, or when nothing is refused.
 */
function strictBetasProblem(betas: readonly string[], body: Body, quirks: Quirks): string | undefined {
  const strict = quirks.has('strict-betas')
  if (!strict && !quirks.has('bedrock-betas')) return undefined
  const unknown = betas.filter((b) => !(strict ? STRICT_BETAS : BEDROCK_BETAS).includes(b))
  if (unknown.length > 0)
    return strict
      ? `Unexpected value(s) ${unknown.map((b) => `\`${b}\``).join(', ')} for the \`anthropic-beta\` header. Please consult our documentation at docs.anthropic.com or try again without the header.`
      : 'invalid beta flag'
  for (const [field, beta] of BETA_FIELDS)
    if (body[field] !== undefined && !betas.some((b) => b.startsWith(beta)))
      return `${field}: Extra inputs are not permitted`
  return undefined
}

/** The body fields a beta turns on (a field sent without its beta is refused as one it does not know). */
const BETA_FIELDS: ReadonlyArray<readonly [string, string]> = [
  ['context_management', 'context-management-'],
  ['diagnostics', 'cache-diagnosis-'],
  ['fallbacks', 'server-side-fallback-'],
  ['fallback_credit_token', 'server-side-fallback-'],
  ['speed', 'fast-mode-'],
]

/**
 * `strict-messages-fields`: the top-level fields of a Messages body a strict host knows (Bedrock's,
 * Vertex AI's, a LiteLLM or Copilot relay's schema), and the members of a custom tool. Claude
 * Code's newer fields (`diagnostics`, `fallbacks`, `fallback_credit_token`, `speed`) and its tools'
 * `eager_input_streaming` are not among them.
 */
const MESSAGES_FIELDS: readonly string[] = [
  'model',
  'messages',
  'max_tokens',
  'system',
  'metadata',
  'stop_sequences',
  'stream',
  'temperature',
  'top_k',
  'top_p',
  'tools',
  'tool_choice',
  'thinking',
  'service_tier',
  'context_management',
  'output_config',
]
const TOOL_FIELDS: readonly string[] = [
  'type',
  'name',
  'description',
  'input_schema',
  'cache_control',
  'defer_loading',
]

/**
 * `strict-messages-fields`: a strict host's refusal of a top-level field it does not know, or of a
 * custom tool's member, in Anthropic's validation words as Bedrock and the relays pass them on
 * ("diagnostics: Extra inputs are not permitted", "tools.0.custom.eager_input_streaming: Extra
 * inputs are not permitted": 9router #3875, yuegongzi/copilot-api #11), the first named. Undefined
 * without the quirk, or for a body of known fields only.
 */
export function strictMessagesFieldsProblem(body: Body, quirks: Quirks): string | undefined {
  if (!quirks.has('strict-messages-fields')) return undefined
  const field = Object.keys(body).find((k) => !MESSAGES_FIELDS.includes(k))
  if (field !== undefined) return `${field}: Extra inputs are not permitted`
  const tools = Array.isArray(body.tools) ? (body.tools as Array<Record<string, unknown>>) : []
  for (const [i, tool] of tools.entries()) {
    if (tool?.type !== undefined && tool.type !== 'custom') continue
    const member = Object.keys(tool ?? {}).find((k) => !TOOL_FIELDS.includes(k))
    if (member !== undefined) return `tools.${i}.custom.${member}: Extra inputs are not permitted`
  }
  return undefined
}

/** The tags a host without the advisor takes for a tool (`no-advisor`; Anthropic's own list is longer). */
const TOOL_TAGS = "'bash_20250124', 'custom', 'text_editor_20250728', 'web_search_20250305'"

/**
 * `no-advisor`: a host without Claude Code's advisor server tool refuses it by its tag, in
 * Anthropic's validation words ("tools.N: Input tag 'advisor_20260301' found using 'type' does not
 * match any of the expected tags: …", sifxprime/krouter PR #16), and an advisor record in the
 * history likewise (`messages.N.content.M: Input tag 'advisor_tool_result' …`). Undefined when the
 * body holds neither.
 */
function advisorProblem(body: Body): string | undefined {
  const tools = Array.isArray(body.tools) ? (body.tools as Array<{type?: unknown}>) : []
  const at = tools.findIndex((t) => typeof t?.type === 'string' && t.type.startsWith('advisor_'))
  if (at !== -1)
    return `tools.${at}: Input tag '${String(tools[at].type)}' found using 'type' does not match any of the expected tags: ${TOOL_TAGS}`
  const messages = Array.isArray(body.messages) ? (body.messages as Array<{content?: unknown}>) : []
  for (const [i, m] of messages.entries()) {
    const content = Array.isArray(m?.content) ? (m.content as Array<{type?: unknown}>) : []
    const j = content.findIndex((b) => b?.type === 'advisor_tool_result')
    if (j !== -1)
      return `messages.${i}.content.${j}: Input tag 'advisor_tool_result' found using 'type' does not match any of the expected tags: 'text', 'image', 'tool_use', 'tool_result', 'thinking', 'server_tool_use', 'web_search_tool_result'`
  }
  return undefined
}

/** The values of the request's `anthropic-beta` header(s). */
function betaValues(headers: Record<string, string | string[] | undefined>): string[] {
  const raw = headers['anthropic-beta']
  return (Array.isArray(raw) ? raw.join(',') : (raw ?? ''))
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean)
}

function handleCountTokens(context: SimContext) {
  return (request: SimRequest): void => {
    if (!authenticate(context, request)) return
    const body = validate(context, request, false)
    if (!body) return
    // the same check of a forced tool choice as the Messages endpoint's
    const selection = selectQuirks(request.headers, body.model)
    const forced = toolChoiceProblem(body, claudeModel(selection.model, selection.quirks))
    if (forced?.startsWith('tool_choice:')) {
      context.sendError(request, 400, forced, 'invalid_request_error', {'request-id': simId('req_')})
      return
    }
    const answer = messagesAnswer(body)
    sendJson(request.res, 200, {input_tokens: answer.usage.prompt}, {'request-id': simId('req_')})
  }
}

export function registerMessages(router: SimRouter, context: SimContext): void {
  context.errorFormat('/v1/messages', (status, message) => errorBody('messages', status, message))
  router.add('POST', '/v1/messages', handleMessages(context))
  router.add('POST', '/v1/messages/count_tokens', handleCountTokens(context))
}
