/**
 * Simulated Gemini upstream: `POST /v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent?alt=sse` (data-only SSE, no `[DONE]`) and `:countTokens`.
 */
import {createHash} from 'node:crypto'

import {errorBody} from '../../protocols/errors.js'
import type {SimRequest, SimRouter} from '../router.js'
import {sendJson} from '../router.js'
import type {SimContext} from '../context.js'
import {sendSse, simTokens} from '../sse.js'
import type {SimAnswer} from './common.js'
import {geminiImageProblem, geminiResultMediaProblem} from './media-checks.js'
import {
  bearer,
  deltas,
  header,
  inputOnly,
  lastTextOf,
  simAnswer,
  simId,
  textAsked,
  toolResultText,
} from './common.js'
import type {Quirks} from './quirks.js'
import {
  callIdRefusal,
  geminiSchemaRefusal,
  jsonWithToolsRefusal,
  NO_QUIRKS,
  pickedTool,
  quirkAnswer,
  refusedMaxOutputTokens,
  refusedSystemInstruction,
  refusedThinkingBudget,
  selectQuirks,
  toolCapRefusal,
  unknownQuirkMessage,
} from './quirks.js'
import {functionCallSignature, geminiHistoryProblem} from './turn-checks.js'
import {
  searchAnswer,
  searchDomain,
  searchQuery,
  searchResults,
  searchText,
  wantsSearch,
} from './web-search.js'

type Body = Record<string, unknown>

function lastUserText(contents: unknown): string {
  if (!Array.isArray(contents)) return ''
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i] as Body
    if (!c?.role || c.role === 'user') {
      const text = lastTextOf(c?.parts)
      if (text) return text
    }
  }
  return ''
}

function lastIsFunctionResponse(contents: unknown): boolean {
  if (!Array.isArray(contents)) return false
  const parts = (contents.at(-1) as Body | undefined)?.parts
  return Array.isArray(parts) && (parts as Body[]).some((p) => p?.functionResponse !== undefined)
}

/** The function whose response the last content ends with, by the name the response carries. */
function lastResponseName(contents: unknown): string | undefined {
  if (!lastIsFunctionResponse(contents)) return undefined
  const parts = ((contents as Body[]).at(-1)!.parts as Body[]).filter((p) => p?.functionResponse)
  const name = (parts.at(-1)?.functionResponse as Body | undefined)?.name
  return typeof name === 'string' ? name : undefined
}

function firstFunction(tools: unknown): string | undefined {
  if (!Array.isArray(tools)) return undefined
  for (const tool of tools as Body[]) {
    const decls = tool?.functionDeclarations
    if (Array.isArray(decls) && typeof (decls[0] as Body)?.name === 'string')
      return (decls[0] as Body).name as string
  }
  return undefined
}

/** The parameters of the function declared as `name` (either field). */
function declarationSchema(tools: unknown, name: string): unknown {
  for (const tool of Array.isArray(tools) ? (tools as Body[]) : [])
    for (const decl of Array.isArray(tool?.functionDeclarations) ? (tool.functionDeclarations as Body[]) : [])
      if (decl?.name === name) return decl.parametersJsonSchema ?? decl.parameters
  return undefined
}

/** The second declared function (quirk `parallel-tools`). */
function secondFunction(tools: unknown): string | undefined {
  if (!Array.isArray(tools)) return undefined
  const names = (tools as Body[])
    .flatMap((tool) =>
      Array.isArray(tool?.functionDeclarations) ? (tool.functionDeclarations as Body[]) : [],
    )
    .map((decl) => decl?.name)
  return typeof names[1] === 'string' ? names[1] : undefined
}

/** The response of the last functionResponse part of the last content. */
function lastFunctionResponse(contents: unknown): string | undefined {
  if (!lastIsFunctionResponse(contents)) return undefined
  const parts = ((contents as Body[]).at(-1)!.parts as Body[]).filter((p) => p?.functionResponse)
  return toolResultText((parts.at(-1)?.functionResponse as Body | undefined)?.response)
}

/** Whether a body asks the sim to think: a thinking config whose budget is not 0 (none: no thinking). */
function thinkingOn(body: Body): boolean {
  const thinking = ((body.generationConfig ?? {}) as Body).thinkingConfig as Body | undefined
  return !!thinking && thinking.thinkingBudget !== 0
}

/**
 * True when the sim signs the first functionCall part: any `gemini-3*` model, any model with quirk
 * `signed-calls` (a Gemini 3 behind another name: it signs its own calls as it wants them back),
 * or thinking on.
 */
export function geminiSigns(model: string, body: Body, signedCalls = false): boolean {
  return signedCalls || model.startsWith('gemini-3') || thinkingOn(body)
}

/**
 * Whether the model refuses a current turn's model content whose first call has no thought
 * signature: Gemini 3 (any model with `signed-calls`), and Gemini 2.5 thinking, whose signed calls
 * must come back signed too (Gitlawb/openclaude #583: 2.5 Flash and Pro, `thinkingBudget: 0` the
 * workaround; Mirrowel/LLM-API-Key-Proxy #160: 2.5 Flash-Lite; rowboatlabs/rowboat #694). The
 * sim's 2.5 thinks only when a thinking config asks it to, and signs only then: what it refuses
 * unsigned it would have signed.
 */
function refusesUnsigned(model: string, body: Body, signedCalls: boolean): boolean {
  return signedCalls || model.startsWith('gemini-3') || (model.startsWith('gemini-2.5') && thinkingOn(body))
}

/** Gemini's Google Search tool (`googleSearch`, or `google_search` as the REST API also takes). */
function searchTool(tools: unknown): Body | undefined {
  if (!Array.isArray(tools)) return undefined
  for (const tool of tools as Body[]) {
    const search = tool?.googleSearch ?? tool?.google_search
    if (search !== undefined) return (search ?? {}) as Body
  }
  return undefined
}

/**
 * Gemini's refusal of a function calling config with nothing to apply to: any mode with no
 * function declarations (the Gemini API's words; a request with `googleSearch` alone and a
 * `toolConfig`, as pydantic-ai #5791 and claude-code-router #1207 met it; Gemini 3 takes it
 * with `includeServerSideToolInvocations`), or ANY allowing a name no declaration has.
 */
export function functionCallingProblem(body: Body): string | undefined {
  const toolConfig = body.toolConfig as Body | undefined
  const config = toolConfig?.functionCallingConfig as Body | undefined
  if (config?.mode === undefined) return undefined
  const names = declaredNames(body.tools)
  if (names.length === 0)
    return toolConfig?.includeServerSideToolInvocations === true
      ? undefined
      : 'Function calling config is set without function_declarations.'
  if (config.mode !== 'ANY' || !Array.isArray(config.allowedFunctionNames)) return undefined
  const unknown = (config.allowedFunctionNames as unknown[]).find((n) => !names.includes(String(n)))
  return unknown === undefined
    ? undefined
    : `allowed_function_names contains a function name not in function declarations: ${String(unknown)}`
}

/**
 * Gemini's refusal of Google Search beside function declarations, by the model's name: Gemini 3
 * takes it with `toolConfig.includeServerSideToolInvocations` (the server's search then shown as
 * `toolCall` / `toolResponse` parts), Gemini 2.5 and older not at all (the API's words).
 */
export function searchBesideFunctionsProblem(model: string, body: Body): string | undefined {
  if (declaredNames(body.tools).length === 0 || searchTool(body.tools) === undefined) return undefined
  const shown = (body.toolConfig as Body | undefined)?.includeServerSideToolInvocations === true
  if (!model.startsWith('gemini-3'))
    return shown
      ? `Tool call context circulation is not enabled for models/${model}`
      : 'Tool use with function calling is unsupported'
  return shown
    ? undefined
    : 'Please enable tool_config.include_server_side_tool_invocations to use Built-in tools with Function calling.'
}

function declaredNames(tools: unknown): string[] {
  return (Array.isArray(tools) ? (tools as Body[]) : []).flatMap((t) =>
    Array.isArray(t?.functionDeclarations)
      ? (t.functionDeclarations as Body[]).map((d) => String(d?.name))
      : [],
  )
}

/** The sim's answer to a Gemini request (with `quirks`, as {@link quirkAnswer} changes it). */
export function geminiAnswer(body: Body, quirks: Quirks = NO_QUIRKS): SimAnswer {
  const config = (body.generationConfig ?? {}) as Body
  const thinking = config.thinkingConfig as Body | undefined
  const calling = (body.toolConfig as Body | undefined)?.functionCallingConfig as Body | undefined
  const mode = calling?.mode
  const json = config.responseMimeType === 'application/json'
  const userText = lastUserText(body.contents)
  const names = declaredNames(body.tools)
  // text, not a call, under mode NONE or when the user's last words ask for text only (an agent's
  // compaction prompt), unless mode ANY forces a call
  const textOnly = mode === 'NONE' || (mode !== 'ANY' && textAsked(userText))
  // `tool-search`: after Codex's search loaded the tools, the loaded tool the user's words name
  const loaded =
    lastIsFunctionResponse(body.contents) && !textOnly
      ? pickedTool(names, userText, quirks, lastResponseName(body.contents) ?? '')
      : undefined
  // (a response answered, or text asked for: no call)
  const answered = (lastIsFunctionResponse(body.contents) && !loaded) || textOnly
  // Google Search runs when there is no function to call instead (Gemini CLI's web search), or
  // beside functions (Gemini 3) when the user's words ask for it
  const search =
    answered || loaded || (names.length > 0 && !wantsSearch(userText)) ? undefined : searchTool(body.tools)
  const picked = loaded ?? (answered || search ? undefined : pickedTool(names, userText, quirks))
  // mode ANY with `allowedFunctionNames` (how a client's forced tool reaches Gemini): one of those,
  // with arguments of its schema, as the API holds the model to them
  const allowed =
    mode === 'ANY' && Array.isArray(calling?.allowedFunctionNames)
      ? (calling.allowedFunctionNames as unknown[]).find(
          (n): n is string => typeof n === 'string' && names.includes(n),
        )
      : undefined
  const toolName = answered || search ? undefined : (picked?.name ?? allowed ?? firstFunction(body.tools))
  const answer = simAnswer({
    promptParts: [body.systemInstruction ?? null, body.contents ?? null, body.tools ?? null],
    lastUserText: userText,
    reasoning: !!thinking && thinking.thinkingBudget !== 0,
    toolName,
    forceTool: !!picked || mode === 'ANY',
    toolArgs: picked?.args,
    forcedSchema:
      !picked && allowed !== undefined ? (declarationSchema(body.tools, allowed) ?? {}) : undefined,
    // a function the user's words named: arguments of its schema (not one of a single `input`)
    namedSchema:
      picked && !picked.args && !inputOnly(declarationSchema(body.tools, picked.name))
        ? (declarationSchema(body.tools, picked.name) ?? {})
        : undefined,
    // (the signature of the call binds its arguments: `{query}` to a custom tool came back `{input}`)
    inputArg: toolName !== undefined && inputOnly(declarationSchema(body.tools, toolName)),
    jsonSchema: json ? (config.responseJsonSchema ?? config.responseSchema ?? {type: 'object'}) : undefined,
    toolResult: loaded ? undefined : lastFunctionResponse(body.contents),
  })
  if (search) {
    const found = searchResults(searchQuery(userText), searchDomain(undefined, search.excludeDomains))
    return searchAnswer(answer, found, searchText(found).text)
  }
  return quirkAnswer(answer, secondFunction(body.tools), quirks, simTokens)
}

/**
 * The candidate's `groundingMetadata` of a search answer, as Gemini writes it: the query, a chunk
 * per result, and one support tying the sentence that names the results to both chunks (its
 * offsets in bytes of the UTF-8 text, as Gemini counts them).
 */
export function groundingMetadata(search: NonNullable<SimAnswer['search']>): Body {
  const {text, lead, claim} = searchText(search)
  return {
    searchEntryPoint: {renderedContent: `<div class="sim-search">${escapeHtml(search.query)}</div>`},
    groundingChunks: search.results.map((r) => ({web: {uri: r.url, title: r.title}})),
    groundingSupports: [
      {
        segment: {
          startIndex: Buffer.byteLength(`${lead} `),
          endIndex: Buffer.byteLength(text),
          text: claim,
        },
        groundingChunkIndices: search.results.map((_, i) => i),
      },
    ],
    webSearchQueries: [search.query],
  }
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/** `usageMetadata` of an answer (`promptTokenCount` includes the cached tokens). */
export function geminiUsage(answer: SimAnswer): Body {
  const u = answer.usage
  return {
    promptTokenCount: u.prompt,
    candidatesTokenCount: u.output,
    totalTokenCount: u.prompt + u.output + u.reasoning,
    cachedContentTokenCount: u.cacheRead,
    thoughtsTokenCount: u.reasoning,
    promptTokensDetails: [{modality: 'TEXT', tokenCount: u.prompt}],
  }
}

function authenticated(request: SimRequest): boolean {
  return !!(
    header(request.headers, 'x-goog-api-key') ||
    header(request.headers, 'x-vendor-api-key') ||
    request.query.get('key') ||
    bearer(request.headers)
  )
}

function handle(context: SimContext, emptied: Set<string>) {
  return async (request: SimRequest): Promise<void> => {
    const {method} = request.params
    let rawModel = request.params.model
    try {
      rawModel = decodeURIComponent(rawModel)
    } catch {
      // not percent-encoded: keep it as it is
    }
    const selection = selectQuirks(request.headers, rawModel)
    const {model, quirks} = selection
    if (!authenticated(request)) {
      context.sendError(
        request,
        403,
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      )
      return
    }
    const sent = (request.body ?? {}) as Body
    // countTokens may wrap the request it counts (`generateContentRequest`, Google's REST form:
    // its system instruction, tools and config go only there)
    const wrapped = sent.generateContentRequest
    const body = method === 'countTokens' && wrapped && typeof wrapped === 'object' ? (wrapped as Body) : sent
    if (!Array.isArray(body.contents)) {
      context.sendError(request, 400, '* GenerateContentRequest.contents: contents is not specified')
      return
    }
    if (selection.unknown.length > 0) {
      context.sendError(request, 400, unknownQuirkMessage(selection.unknown))
      return
    }
    // (a system instruction refused in a request to count too: Gemma 3's)
    const refused =
      method === 'countTokens'
        ? refusedSystemInstruction(body, quirks, model)
        : (refusedThinkingBudget(body, quirks, model) ??
          refusedSystemInstruction(body, quirks, model) ??
          refusedMaxOutputTokens(body, quirks))
    if (refused) {
      context.sendError(request, 400, refused)
      return
    }
    // Gemini's rule for a function's name: a letter or `_` first, then letters, digits, `_.:-`, at most 64
    const tools = Array.isArray(body.tools) ? (body.tools as Body[]) : []
    const declarations = tools.flatMap((t) =>
      Array.isArray(t?.functionDeclarations) ? (t.functionDeclarations as Body[]) : [],
    )
    const tooMany =
      method === 'countTokens' ? undefined : toolCapRefusal('gemini', declarations.length, quirks)
    if (tooMany) {
      sendJson(request.res, tooMany.status, tooMany.raw)
      return
    }
    const badName = declarations.find(
      (d) => typeof d?.name === 'string' && !/^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/.test(d.name),
    )
    if (badName) {
      context.sendError(
        request,
        400,
        `* GenerateContentRequest.tools[0].function_declarations[${declarations.indexOf(badName)}].name: Invalid function name. Must start with a letter or an underscore. Must be alphameric (a-z, A-Z, 0-9), underscores (_), dots (.), colons (:), or dashes (-), with a maximum length of 64.`,
      )
      return
    }
    // quirks `gemini-schema` (a relay that sends the schemas as Gemini's `parameters`) and
    // `vertex-no-ids` (Vertex AI)
    const unknownFields =
      method === 'countTokens'
        ? undefined
        : (geminiSchemaRefusal(
            declarations.map((d) => d?.parametersJsonSchema ?? d?.parameters),
            quirks,
          ) ?? callIdRefusal(body.contents, quirks))
    if (unknownFields) {
      context.sendError(request, 400, unknownFields)
      return
    }
    const calling =
      method === 'countTokens'
        ? undefined
        : (searchBesideFunctionsProblem(model, body) ??
          functionCallingProblem(body) ??
          jsonWithToolsRefusal(body, declarations.length, quirks))
    if (calling) {
      context.sendError(request, 400, calling)
      return
    }
    const problem =
      method === 'countTokens'
        ? undefined
        : (geminiImageProblem(body.contents) ??
          geminiResultMediaProblem(model, body.contents, quirks.has('media-in-responses')) ??
          geminiHistoryProblem(body.contents, refusesUnsigned(model, body, quirks.has('signed-calls'))))
    if (problem) {
      context.sendError(request, 400, problem)
      return
    }
    const answer = geminiAnswer(body, quirks)
    if (method === 'countTokens') {
      sendJson(request.res, 200, {
        totalTokens: answer.usage.prompt,
        promptTokensDetails: [{modality: 'TEXT', tokenCount: answer.usage.prompt}],
      })
      return
    }
    const config = (body.generationConfig ?? {}) as Body
    const includeThoughts = !!(config.thinkingConfig as Body | undefined)?.includeThoughts
    const responseId = simId('')
    const chunk = (parts: Body[], extra: Body = {}): Body => ({
      candidates: [{content: {role: 'model', parts}, index: 0, ...extra}],
      usageMetadata: {promptTokenCount: answer.usage.prompt, totalTokenCount: answer.usage.prompt},
      modelVersion: model,
      responseId,
    })
    const final = {
      finishReason: 'STOP',
      // on the candidate, with the finish reason (a stream's last chunk)
      ...(answer.search ? {groundingMetadata: groundingMetadata(answer.search)} : {}),
    }
    if (
      (quirks.has('empty-stop') || quirks.has('empty-stop-thought')) &&
      lastIsFunctionResponse(body.contents) &&
      firstAfterResult(emptied, model, body.contents)
    ) {
      await emptyStop(request, answer, quirks, includeThoughts, chunk, method === 'generateContent', context)
      return
    }
    if (quirks.has('thoughts-no-finish')) {
      await thoughtsNoFinish(
        request,
        answer,
        quirks,
        includeThoughts,
        chunk,
        method === 'generateContent',
        context,
      )
      return
    }
    const usageMetadata = geminiUsage(answer)
    const parts: Body[] = []
    if (answer.thinking && includeThoughts) parts.push({text: answer.thinking, thought: true})
    if (answer.tool)
      for (const [i, tool] of [answer.tool, ...(answer.moreTools ?? [])].entries()) {
        const args = quirks.has('empty-args') ? {} : tool.args
        parts.push({
          functionCall: {name: tool.name, args},
          ...(i === 0 && geminiSigns(model, body, quirks.has('signed-calls'))
            ? {thoughtSignature: functionCallSignature(tool.name, args)}
            : {}),
        })
      }
    else {
      // the server's own search, shown as Gemini 3 shows it beside functions (verify the shape)
      if (answer.search && (body.toolConfig as Body | undefined)?.includeServerSideToolInvocations === true)
        parts.push(
          {
            toolCall: {
              toolType: 'GOOGLE_SEARCH_WEB',
              args: {queries: [answer.search.query]},
              id: 'sim-search-1',
            },
            thoughtSignature: functionCallSignature('google_search', {queries: [answer.search.query]}),
          },
          {
            toolResponse: {
              toolType: 'GOOGLE_SEARCH_WEB',
              response: {results: answer.search.results.map((r) => ({url: r.url, title: r.title}))},
              id: 'sim-search-1',
            },
          },
        )
      parts.push({text: answer.text})
    }

    if (method === 'generateContent') {
      sendJson(request.res, 200, {...chunk(parts, final), usageMetadata})
      return
    }
    if (request.query.get('alt') !== 'sse') {
      // Without alt=sse the real API streams a JSON array; the sim only speaks SSE.
      context.sendError(request, 400, 'the simulator only streams with ?alt=sse')
      return
    }
    const events: Body[] = []
    // the thoughts with the usage of thoughts so far, no candidate token yet (Gemini 2.5)
    if (answer.thinking && includeThoughts)
      events.push({
        ...chunk([{text: answer.thinking, thought: true}]),
        usageMetadata: {
          promptTokenCount: answer.usage.prompt,
          totalTokenCount: answer.usage.prompt + answer.usage.reasoning,
          thoughtsTokenCount: answer.usage.reasoning,
        },
      })
    if (answer.tool) events.push(chunk(parts.filter((p) => p.functionCall !== undefined)))
    else {
      const shown = parts.filter((p) => p.toolCall !== undefined || p.toolResponse !== undefined)
      if (shown.length) events.push(chunk(shown))
      for (const text of deltas(answer.text)) events.push(chunk([{text}]))
    }
    const last = events.pop() ?? chunk([{text: ''}])
    const lastCandidate = (last.candidates as Body[])[0]
    const end = quirks.has('no-terminal') ? {} : final
    events.push({...last, candidates: [{...lastCandidate, ...end}], usageMetadata})
    await sendSse(
      request.res,
      events.map((data) => ({data})),
      {fault: context.fault(request)},
    )
  }
}

/**
 * Quirk `thoughts-no-finish`: a thinking model's turn that is only thinking, as Google's backend
 * ends it: the thoughts (shown when `includeThoughts`), each thought chunk with the running usage
 * of thoughts as Gemini 2.5 streams it, then a chunk with `parts: []` and the final usage of
 * thoughts and no candidate token (`totalTokenCount` = prompt + thoughts, no
 * `candidatesTokenCount`; that ending chunk's shape after CLIProxyAPI #5226's description), and
 * no `finishReason` on any chunk nor on the answer. With `no-terminal` too, the stream ends after
 * its last thought chunk, without that ending chunk (a cut mid-thinking).
 */
async function thoughtsNoFinish(
  request: SimRequest,
  answer: SimAnswer,
  quirks: Quirks,
  includeThoughts: boolean,
  chunk: (parts: Body[], extra?: Body) => Body,
  whole: boolean,
  context: SimContext,
): Promise<void> {
  const thoughts = answer.thinking ?? `The user wants an answer. Thinking it over before saying anything.`
  const reasoning = answer.usage.reasoning || simTokens(thoughts)
  const u = answer.usage
  const usageOf = (thinking: number): Body => ({
    promptTokenCount: u.prompt,
    totalTokenCount: u.prompt + thinking,
    ...(u.cacheRead ? {cachedContentTokenCount: u.cacheRead} : {}),
    thoughtsTokenCount: thinking,
    promptTokensDetails: [{modality: 'TEXT', tokenCount: u.prompt}],
  })
  const usageMetadata = usageOf(reasoning)
  const parts: Body[] = includeThoughts ? [{text: thoughts, thought: true}] : []
  if (whole) {
    sendJson(request.res, 200, {...chunk(parts), usageMetadata})
    return
  }
  if (request.query.get('alt') !== 'sse') {
    context.sendError(request, 400, 'the simulator only streams with ?alt=sse')
    return
  }
  const events: Body[] = []
  if (includeThoughts) {
    // the running usage of thoughts on each thought chunk (Gemini 2.5)
    const pieces = deltas(thoughts)
    let seen = 0
    for (const [i, text] of pieces.entries()) {
      seen += text.length
      const running =
        i === pieces.length - 1 ? reasoning : Math.max(1, Math.floor((reasoning * seen) / thoughts.length))
      events.push({...chunk([{text, thought: true}]), usageMetadata: usageOf(running)})
    }
  }
  if (!quirks.has('no-terminal') || !includeThoughts) events.push({...chunk([]), usageMetadata})
  await sendSse(
    request.res,
    events.map((data) => ({data})),
    {fault: context.fault(request)},
  )
}

/** Requests of an `empty-stop` quirk kept (a digest each) before the memory is cleared. */
const EMPTIED_KEPT = 10_000

/**
 * Whether this is the first request with these contents for the model (`empty-stop`: the first
 * answer after a function response is empty, the same request sent again gets a whole one).
 */
function firstAfterResult(emptied: Set<string>, model: string, contents: unknown): boolean {
  const key = createHash('sha256')
    .update(model)
    .update('\0')
    .update(JSON.stringify(contents))
    .digest('base64')
  if (emptied.has(key)) return false
  if (emptied.size >= EMPTIED_KEPT) emptied.clear()
  emptied.add(key)
  return true
}

/**
 * Quirks `empty-stop` and `empty-stop-thought`: Gemini's empty STOP right after a function
 * response (AstrBot #6735, google/adk-js #344). `empty-stop`: `finishReason: STOP` with `content:
 * {role: "model"}` and no part at all; `empty-stop-thought`: a thought (shown with
 * `includeThoughts`, streamed in a chunk of its own) and then STOP on a chunk whose only part is an
 * empty text with a `thoughtSignature` (no part when thoughts are not shown), the usage one of
 * thoughts. The stream or the answer alike; its usage has no candidate token.
 */
async function emptyStop(
  request: SimRequest,
  answer: SimAnswer,
  quirks: Quirks,
  includeThoughts: boolean,
  chunk: (parts: Body[], extra?: Body) => Body,
  whole: boolean,
  context: SimContext,
): Promise<void> {
  const u = answer.usage
  const thought = quirks.has('empty-stop-thought')
  const thoughts = answer.thinking ?? 'The tool answered. Thinking about what to do next.'
  const reasoning = thought ? u.reasoning || simTokens(thoughts) : 0
  const usageMetadata: Body = {
    promptTokenCount: u.prompt,
    totalTokenCount: u.prompt + reasoning,
    ...(reasoning ? {thoughtsTokenCount: reasoning} : {}),
  }
  const shown: Body[] = thought && includeThoughts ? [{text: thoughts, thought: true}] : []
  const signed: Body[] = thought && includeThoughts ? [{text: '', thoughtSignature: 'c2lt'}] : []
  const stop = (parts: Body[]): Body => {
    const c = chunk(parts, {finishReason: 'STOP'})
    const [candidate] = c.candidates as Body[]
    // no part at all: `content` with its role only, as Gemini writes it
    const content = parts.length ? candidate!.content : {role: 'model'}
    return {...c, candidates: [{...candidate, content}], usageMetadata}
  }
  if (whole) {
    sendJson(request.res, 200, stop(shown))
    return
  }
  if (request.query.get('alt') !== 'sse') {
    context.sendError(request, 400, 'the simulator only streams with ?alt=sse')
    return
  }
  const events: Body[] = shown.length ? [{...chunk(shown), usageMetadata}, stop(signed)] : [stop([])]
  await sendSse(
    request.res,
    events.map((data) => ({data})),
    {fault: context.fault(request)},
  )
}

export function registerGemini(router: SimRouter, context: SimContext): void {
  context.errorFormat('/v1beta/', (status, message) => errorBody('gemini', status, message))
  router.add(
    'POST',
    /^\/v1beta\/models\/(?<model>[^/:]+):(?<method>generateContent|streamGenerateContent|countTokens)$/,
    handle(context, new Set()),
  )
}
