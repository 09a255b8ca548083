/**
 * A Responses request for an upstream of that family, from the IR: instructions, input items
 * (reasoning items only from a Responses upstream, custom tools and their calls restored),
 * `store: false` with encrypted reasoning asked for when reasoning is on, or the model reasons
 * anyway (Grok 4: thinking-off.ts `reasonsRegardless`).
 */
import type {CodecContext, Effort, ImagePart, ReasoningPart, Request} from './ir.js'
import {documentName, inPlaceSystem, isDocument, namedDocumentText, omittedFileText} from './ir.js'
import type {Body} from './responses-items.js'
import {customInput, parseOwnReasoning} from './responses-items.js'
import {beyondEffort, reasonsRegardless} from './thinking-off.js'
import {objectTools} from './tool-schemas.js'

/** The fewest output tokens OpenAI's Responses API takes (its documented minimum of `max_output_tokens`). */
export const MIN_OUTPUT_TOKENS = 16

function effortOf(request: Request, model: string): Effort | 'xhigh' | 'max' | undefined {
  const r = request.reasoning
  if (!r || r.disabled) return undefined
  // (an effort above `high`, as the most the model is known to take: a name test for it only)
  if (r.beyond && r.effort === 'high') return beyondEffort(model, r.beyond) ?? 'high'
  if (r.effort) return r.effort
  if (r.budgetTokens === undefined) return undefined
  return r.budgetTokens <= 1024 ? 'low' : r.budgetTokens <= 8192 ? 'medium' : 'high'
}

/**
 * An image as `input_image`, a document as `input_file` (a PDF by its bytes or URL), a text file
 * as its text (`input_text`); undefined for an image without bytes or URL.
 */
function mediaInput(part: ImagePart): Body | undefined {
  if (isDocument(part)) {
    const text = namedDocumentText(part)
    if (text !== undefined) return {type: 'input_text', text}
    // OpenAI's input_file reads PDFs: another file (audio, a spreadsheet) is the line naming it
    if (part.mediaType !== 'application/pdf')
      return {
        type: 'input_text',
        text: omittedFileText(part, 'the Responses API takes PDF and text files only'),
      }
    return part.data !== undefined
      ? {
          type: 'input_file',
          filename: documentName(part),
          file_data: `data:${part.mediaType};base64,${part.data}`,
        }
      : {type: 'input_file', file_url: part.url ?? ''}
  }
  const url = part.data ? `data:${part.mediaType ?? 'image/png'};base64,${part.data}` : part.url
  return url ? {type: 'input_image', image_url: url, detail: 'auto'} : undefined
}

/**
 * A reasoning item of a server that is not OpenAI's, its text as the one `reasoning_text` content
 * part gpt-oss's servers make and read: vLLM reads `content` alone (older releases answer a 500 to
 * an item without it, or with more than one part), and Codex sends it back so on a pass-through.
 * The item the client got from the gateway had the text as its summary; its id is kept.
 */
function textReasoning(part: ReasoningPart, at: number): Body {
  return {
    type: 'reasoning',
    // (an item without one: an id by its place, the same on every turn, so the prefix is too)
    id: part.itemId ?? `rs_${at}`,
    summary: [],
    content: [{type: 'reasoning_text', text: part.text}],
  }
}

/**
 * Whether `model` labels its assistant messages with a `phase` (any `vendor/` prefix aside):
 * OpenAI's GPT-5.3-codex and every later GPT (5.3, 5.4, 5.5, …, 6), whose guidance is to send it
 * back on every assistant message of the history. Earlier models (GPT-5.2, the `gpt-5.x-codex`
 * before 5.3, GPT-4o) get none: they were made before it, so it would tell them nothing. A name
 * test only: an Azure deployment of another name gets none either.
 */
export function usesPhase(model: string): boolean {
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase()
  return /^gpt-(?:5\.(?:[3-9]|[1-9]\d)|[6-9](?:\.\d+)?|[1-9]\d(?:\.\d+)?)(?![\d.])/.test(name)
}

/**
 * `ctx.phases`: the `phase` of each assistant `message` item of one assistant turn, the items
 * from `start` on in `input`. A turn is a run of consecutive assistant messages of the history
 * (one answer of the model: Messages' assistant content, chat's assistant message with its
 * `tool_calls`, Gemini's model content, however the client split it), up to the next user
 * message (a prompt, or the results of its calls). Within it, the text that ends it, with no
 * function or custom tool call after it, is its `final_answer`; every other text is `commentary`
 * (a preamble before the turn's calls, a text a reasoning item cut in two). A turn that ends in a
 * call, or holds one anywhere (a text after its call included: the results come in the next user
 * message, the model's turn goes on), holds commentary only. Nothing is carried
 * from the upstream's answer: the same history gives the same phases on every turn, so the
 * prompt cache's prefix holds, and a history that was never the upstream's (Claude's, Gemini's)
 * gets them too.
 */
function withPhases(input: Body[], start: number): void {
  let last = -1
  for (let at = start; at < input.length; at++) {
    const type = input[at].type
    // (a call anywhere in the turn, a text after it too: the results come next, the turn goes on)
    if (type === 'function_call' || type === 'custom_tool_call') {
      last = -1
      break
    }
    if (type === 'message' && input[at].role === 'assistant') last = at
  }
  // (a developer message placed in the turn has none)
  for (let at = start; at < input.length; at++)
    if (input[at].type === 'message' && input[at].role === 'assistant')
      input[at].phase = at === last ? 'final_answer' : 'commentary'
}

/**
 * `ctx.plainTools`: for a Responses server that is not OpenAI's (vLLM, Ollama, llama.cpp, LM
 * Studio, sglang, a relay), which takes function tools only: a custom tool (Codex's `exec`,
 * `apply_patch`) goes as a function of one string `input`, its calls and their outputs as function
 * calls and outputs, and OpenAI's hosted tools (its web search, image generation) are left out.
 * A namespace's tools are functions of their own names here anyway (responses.ts `namespaced`).
 * A reasoning item the server made without encrypted content (gpt-oss's reasoning as text) goes
 * back to it as its text: gpt-oss keeps its reasoning across the calls of a turn
 * ({@link textReasoning}). OpenAI reads only its own encrypted reasoning.
 */
/**
 * `store` of a request that asks for encrypted reasoning: `true` where the server refuses `false`
 * (Azure's: kept, so that the next turn's reasoning items, named by their ids, are found); left
 * out (the server's default, on) for a request that continues a stored conversation
 * (`previous_response_id`: xAI and OpenAI refuse it with `store: false`, the earlier answer is
 * looked up in what they stored) or whose client keeps its items there (`store` on: the AI SDK,
 * whose next turn names them by `item_reference`); else `false`, nothing kept server-side.
 */
function storeFor(body: Body, request: Request, ctx: CodecContext | undefined): void {
  if (ctx?.storeTrue === true) body.store = true
  else if (!request.previousResponseId && request.storeItems !== true) body.store = false
}

export function encodeRequest(request: Request, model: string, ctx?: CodecContext): Record<string, unknown> {
  const plain = ctx?.plainTools === true
  const customs = new Set(plain ? [] : request.tools.filter((t) => t.custom).map((t) => t.name))
  const callNames = new Map<string, string>()
  const input: Body[] = []
  const phases = ctx?.phases === true && usesPhase(model)
  // where the assistant turn being written began in `input` (-1: none is)
  let turn = -1
  // (a system message the client sent after the conversation began: where it stood, for OpenAI's
  // own servers, the system prompt the rest, ir.ts `inPlaceSystem`)
  const split = ctx?.systemInPlace ? inPlaceSystem(request) : undefined
  const placed = split?.placed ?? []
  let next = 0
  // (one that stood before part `j` of message `i`, or earlier)
  const due = (i: number, j: number): boolean =>
    next < placed.length &&
    (placed[next].message < i || (placed[next].message === i && placed[next].part <= j))
  const developer = () => {
    const content = placed[next++].parts.flatMap((p) => (p.text ? [{type: 'input_text', text: p.text}] : []))
    if (content.length) input.push({type: 'message', role: 'developer', content})
  }
  for (let i = 0; i < request.messages.length; i++) {
    const message = request.messages[i]
    if (phases)
      if (message.role !== 'assistant') {
        if (turn !== -1) withPhases(input, turn)
        turn = -1
      } else if (turn === -1) turn = input.length
    let content: Body[] = []
    const flush = () => {
      if (content.length) input.push({type: 'message', role: message.role, content})
      content = []
    }
    for (let j = 0; j < message.parts.length; j++) {
      if (due(i, j)) {
        flush()
        while (due(i, j)) developer()
      }
      const part = message.parts[j]
      if (part.type === 'text')
        content.push({type: message.role === 'assistant' ? 'output_text' : 'input_text', text: part.text})
      else if (part.type === 'image') {
        if (message.role === 'assistant') continue
        const media = mediaInput(part)
        if (media) content.push(media)
      } else if (part.type === 'reasoning') {
        flush()
        if (plain && !part.encrypted && !part.signature && !part.redacted) {
          // (DeepSeek's thinking mode refuses a tool call's turn without its reasoning: there, one
          // Codex kept no text of goes as an empty part, which it takes)
          if (part.text || ctx?.reasoningTextBack) input.push(textReasoning(part, input.length))
          continue
        }
        if (part.encrypted?.family !== 'responses' || !part.encrypted.value) continue
        const own = parseOwnReasoning(part.encrypted.value)
        if (!own.encrypted_content) continue
        input.push({
          type: 'reasoning',
          ...(own.id ? {id: own.id} : {}),
          summary: part.text ? [{type: 'summary_text', text: part.text}] : [],
          encrypted_content: own.encrypted_content,
        })
      } else if (part.type === 'tool_call') {
        flush()
        callNames.set(part.id, part.name)
        input.push(
          customs.has(part.name)
            ? {
                type: 'custom_tool_call',
                call_id: part.id,
                name: part.name,
                input: customInput(part.arguments),
              }
            : {type: 'function_call', call_id: part.id, name: part.name, arguments: part.arguments || '{}'},
        )
      } else if (part.type === 'tool_result') {
        flush()
        const name = part.name ?? callNames.get(part.callId)
        const images = part.content.some((c) => c.type === 'image')
        const text = part.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
        const output = images
          ? part.content.flatMap((c) => {
              if (c.type === 'text') return [{type: 'input_text', text: c.text}]
              const media = mediaInput(c)
              if (!media) return []
              // an output's image takes no `detail`
              if (media.type === 'input_image') delete media.detail
              return [media]
            })
          : text
        input.push({
          type: name && customs.has(name) ? 'custom_tool_call_output' : 'function_call_output',
          call_id: part.callId,
          output,
        })
      }
    }
    flush()
  }
  while (next < placed.length) developer()
  if (phases && turn !== -1) withPhases(input, turn)
  const body: Body = {model, input}
  const instructions = (split?.system ?? request.system).map((p) => p.text).join('\n\n')
  if (instructions) body.instructions = instructions
  // (a schema whose top level is a union, which OpenAI refuses, as one object)
  const tools: unknown[] = objectTools(request.tools).map((tool) =>
    tool.custom && !plain
      ? {
          type: 'custom',
          name: tool.name,
          // (the client's own words: responses.ts rewrites a line of them for a function)
          ...(tool.custom.description
            ? {description: tool.custom.description}
            : tool.description
              ? {description: tool.description}
              : {}),
          ...(tool.custom.format !== undefined ? {format: tool.custom.format} : {}),
        }
      : {
          type: 'function',
          name: tool.name,
          ...(tool.description ? {description: tool.description} : {}),
          parameters: tool.parameters,
          strict: false,
        },
  )
  if (!plain)
    for (const builtin of request.builtinTools ?? [])
      if (builtin.family === 'responses') tools.push(builtin.raw)
  const search = plain ? undefined : request.webSearch
  if (search)
    tools.push({
      type: 'web_search',
      // Responses has no list of blocked domains, nor a most of searches
      ...(search.allowedDomains ? {filters: {allowed_domains: search.allowedDomains}} : {}),
      ...(search.userLocation ? {user_location: {type: 'approximate', ...search.userLocation}} : {}),
    })
  if (tools.length) body.tools = tools
  const choice = request.toolChoice
  // (a forced search left out with the search: the model's choice)
  if (choice && !(plain && choice.type === 'web_search'))
    body.tool_choice =
      choice.type === 'tool'
        ? {type: customs.has(choice.name) ? 'custom' : 'function', name: choice.name}
        : // a forced search: the only tool Claude Code's search request has, so a call is the search
          choice.type === 'web_search'
          ? 'required'
          : choice.type
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls
  // OpenAI refuses fewer than 16 ("Invalid 'max_output_tokens': integer below minimum value.
  // Expected a value >= 16, but got 1 instead."), which Claude Code's quota probe (`max_tokens: 1`)
  // and connection tests (5-10) ask for: raised to it, the answer as the upstream gives it
  if (request.maxTokens !== undefined) body.max_output_tokens = Math.max(MIN_OUTPUT_TOKENS, request.maxTokens)
  if (request.temperature !== undefined) body.temperature = request.temperature
  if (request.topP !== undefined) body.top_p = request.topP
  const format = request.responseFormat
  if (format)
    body.text = {
      format:
        format.type === 'json_schema'
          ? {
              type: 'json_schema',
              name: format.name ?? 'response',
              schema: format.schema,
              ...(format.strict !== undefined ? {strict: format.strict} : {}),
            }
          : {type: format.type},
    }
  if (request.verbosity) body.text = {...(body.text as Body | undefined), verbosity: request.verbosity}
  // OpenAI refuses its web search with the `minimal` effort ("The following tools cannot be used
  // with reasoning.effort 'minimal': web_search")
  const asked = effortOf(request, model)
  const effort = search && asked === 'minimal' ? 'low' : asked
  if (request.reasoning && !request.reasoning.disabled) {
    body.reasoning = {...(effort ? {effort} : {}), ...(request.reasoning.include ? {summary: 'auto'} : {})}
    storeFor(body, request, ctx)
    body.include = ['reasoning.encrypted_content']
  } else if (reasonsRegardless(model)) {
    // Grok reasons with thinking off too (Claude Code's sub-agents, a chat client that named no
    // effort): its reasoning asked for all the same, for the next turn to give back
    storeFor(body, request, ctx)
    body.include = ['reasoning.encrypted_content']
  } else if (ctx?.storeTrue) body.store = true
  // the pages a search found (without it OpenAI names only those the answer cites)
  if (search)
    body.include = [...((body.include as string[] | undefined) ?? []), 'web_search_call.action.sources']
  if (request.previousResponseId) body.previous_response_id = request.previousResponseId
  if (request.cacheKey) body.prompt_cache_key = request.cacheKey
  // (as to chat: OpenAI refuses a `user` over 64 characters, "Invalid 'user': string too long",
  // and Claude Code's `metadata.user_id`, a JSON object of ids, is about 150)
  if (request.user && request.user.length <= 64) body.user = request.user
  body.stream = request.stream
  return body
}
