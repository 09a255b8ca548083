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
import {bearer, deltas, lastTextOf, simAnswer, simId, toolResultText} from './common.js'
import type {Quirks} from './quirks.js'
import {
  NO_QUIRKS,
  argsPieces,
  argsText,
  pickedTool,
  quirkAnswer,
  selectQuirks,
  unknownQuirkMessage,
  unsupportedResponsesParameter,
} from './quirks.js'
import {openAiNameProblem} from '../chat.js'
import {encryptReasoning, responsesHistoryProblem} from './turn-checks.js'

type Body = Record<string, unknown>

function lastUserText(input: unknown): string {
  if (typeof input === 'string') return input
  if (!Array.isArray(input)) return ''
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i] as Body
    if (item?.role === 'user') return lastTextOf(item.content)
  }
  return ''
}

function firstFunctionTool(tools: unknown, nth = 0): string | undefined {
  if (!Array.isArray(tools)) return undefined
  const tool = tools.filter((t) => (t as Body)?.type === 'function')[nth] as Body | undefined
  return typeof tool?.name === 'string' ? tool.name : undefined
}

/** The sim's answer and the final `response` object of a Responses request. */
export function responsesAnswer(body: Body, quirks: Quirks = NO_QUIRKS): SimAnswer {
  const input = body.input
  const items = Array.isArray(input) ? (input as Body[]) : []
  const lastItem = items.at(-1)
  // `tool-search`: Claude Code follows its ToolSearch result with words of its own ("Tool
  // loaded."), a user message after the output: that output is answered too
  const lastOutput = items.findLastIndex((i) => i?.type === 'function_call_output')
  const outputItem =
    lastItem?.type === 'function_call_output'
      ? lastItem
      : quirks.has('tool-search') &&
          lastOutput >= 0 &&
          items.slice(lastOutput + 1).every((i) => i?.role === 'user')
        ? items[lastOutput]
        : undefined
  const toolChoice = body.tool_choice
  const reasoning = body.reasoning as Body | undefined
  const userText = lastUserText(input)
  const names = (Array.isArray(body.tools) ? (body.tools as Body[]) : [])
    .filter((t) => t?.type === 'function' && typeof t.name === 'string')
    .map((t) => t.name as string)
  const picked = outputItem ? undefined : pickedTool(names, userText, quirks)
  const answer = simAnswer({
    promptParts: [body.instructions ?? null, input ?? null, body.tools ?? null],
    lastUserText: userText,
    reasoning: !!reasoning && reasoning.effort !== 'none',
    toolName: outputItem ? undefined : (picked?.name ?? firstFunctionTool(body.tools)),
    forceTool: !!picked || toolChoice === 'required' || (toolChoice as Body | undefined)?.type === 'function',
    toolArgs: picked?.args,
    jsonSchema: ((body.text as Body | undefined)?.format as Body | undefined)?.schema,
    toolResult: outputItem ? toolResultText(outputItem.output) : undefined,
  })
  return quirkAnswer(answer, firstFunctionTool(body.tools, 1), quirks, simTokens)
}

export function responsesUsage(answer: SimAnswer): Body {
  const u = answer.usage
  const output = u.output + u.reasoning
  return {
    input_tokens: u.prompt,
    input_tokens_details: {cached_tokens: u.cacheRead},
    output_tokens: output,
    output_tokens_details: {reasoning_tokens: u.reasoning},
    total_tokens: u.prompt + output,
  }
}

function handle(context: SimContext) {
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
    // OpenAI's rule for a function's name, as chat's (a Claude Code plugin's MCP tool past 64)
    for (const [i, tool] of (Array.isArray(body.tools) ? (body.tools as Body[]) : []).entries()) {
      const name = openAiNameProblem(tool?.type === 'function' ? tool.name : undefined, `tools[${i}].name`)
      if (name) {
        sendJson(request.res, 400, name.body())
        return
      }
    }
    const problem = responsesHistoryProblem(body.input)
    if (problem) {
      sendJson(request.res, 400, errorBody('responses', 400, problem, {code: 'invalid_encrypted_content'}))
      return
    }
    const answer = responsesAnswer(body, quirks)
    const created = Math.floor(context.clock.now() / 1000)
    const id = simId('resp_')
    const include = Array.isArray(body.include) ? (body.include as string[]) : []
    const items: Body[] = []
    if (answer.thinking) {
      const item: Body = {
        type: 'reasoning',
        id: simId('rs_'),
        summary: (body.reasoning as Body).summary ? [{type: 'summary_text', text: answer.thinking}] : [],
      }
      if (include.includes('reasoning.encrypted_content'))
        item.encrypted_content = encryptReasoning(answer.thinking)
      items.push(item)
    }
    if (answer.tool) {
      for (const tool of [answer.tool, ...(answer.moreTools ?? [])])
        items.push({
          type: 'function_call',
          id: simId('fc_'),
          call_id: simId('call_'),
          name: tool.name,
          arguments: argsText(tool.args, quirks),
          status: 'completed',
        })
    } else {
      items.push({
        type: 'message',
        id: simId('msg_'),
        role: 'assistant',
        status: 'completed',
        content: [{type: 'output_text', text: answer.text, annotations: []}],
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
        push({type: 'response.output_text.done', ...ids, text: answer.text, logprobs: []})
        push({
          type: 'response.content_part.done',
          ...ids,
          part: {type: 'output_text', text: answer.text, annotations: []},
        })
        push({type: 'response.output_item.done', output_index: outputIndex, item})
      }
    })
    if (!quirks.has('no-terminal')) push({type: 'response.completed', response: completed})
    await sendSse(request.res, events, {fault: context.fault(request), headers: {'x-request-id': requestId}})
  }
}

export function registerResponses(router: SimRouter, context: SimContext): void {
  context.errorFormat('/v1/responses', (status, message) => errorBody('responses', status, message))
  router.add('POST', '/v1/responses', handle(context))
}
