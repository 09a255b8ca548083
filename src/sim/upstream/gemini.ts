/**
 * Simulated Gemini upstream: `POST /v1beta/models/{model}:generateContent`,
 * `:streamGenerateContent?alt=sse` (data-only SSE, no `[DONE]`) and `:countTokens`.
 */
import {errorBody} from '../../gateway/protocol-errors.js'
import type {SimRequest, SimRouter} from '../router.js'
import {sendJson} from '../router.js'
import type {SimContext} from '../context.js'
import {sendSse} from '../sse.js'
import type {SimAnswer} from './common.js'
import {bearer, deltas, header, lastTextOf, simAnswer, simId} from './common.js'

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

function firstFunction(tools: unknown): string | undefined {
  if (!Array.isArray(tools)) return undefined
  for (const tool of tools as Body[]) {
    const decls = tool?.functionDeclarations
    if (Array.isArray(decls) && typeof (decls[0] as Body)?.name === 'string')
      return (decls[0] as Body).name as string
  }
  return undefined
}

/** The sim's answer to a Gemini request. */
export function geminiAnswer(body: Body): SimAnswer {
  const config = (body.generationConfig ?? {}) as Body
  const thinking = config.thinkingConfig as Body | undefined
  const mode = ((body.toolConfig as Body | undefined)?.functionCallingConfig as Body | undefined)?.mode
  const json = config.responseMimeType === 'application/json'
  return simAnswer({
    promptParts: [body.systemInstruction ?? null, body.contents ?? null, body.tools ?? null],
    lastUserText: lastUserText(body.contents),
    reasoning: !!thinking && thinking.thinkingBudget !== 0,
    toolName: lastIsFunctionResponse(body.contents) ? undefined : firstFunction(body.tools),
    forceTool: mode === 'ANY',
    jsonSchema: json ? (config.responseJsonSchema ?? config.responseSchema ?? {type: 'object'}) : undefined,
  })
}

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

function handle(context: SimContext) {
  return async (request: SimRequest): Promise<void> => {
    const {model, method} = request.params
    if (!authenticated(request)) {
      context.sendError(
        request,
        403,
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      )
      return
    }
    const body = (request.body ?? {}) as Body
    if (!Array.isArray(body.contents)) {
      context.sendError(request, 400, '* GenerateContentRequest.contents: contents is not specified')
      return
    }
    const answer = geminiAnswer(body)
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
    }
    const usageMetadata = geminiUsage(answer)
    const parts: Body[] = []
    if (answer.thinking && includeThoughts) parts.push({text: answer.thinking, thought: true})
    if (answer.tool) parts.push({functionCall: {name: answer.tool.name, args: answer.tool.args}})
    else parts.push({text: answer.text})

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
    if (answer.thinking && includeThoughts) events.push(chunk([{text: answer.thinking, thought: true}]))
    if (answer.tool) events.push(chunk([parts.at(-1)!]))
    else for (const text of deltas(answer.text)) events.push(chunk([{text}]))
    const last = events.pop() ?? chunk([{text: ''}])
    const lastCandidate = (last.candidates as Body[])[0]
    events.push({...last, candidates: [{...lastCandidate, ...final}], usageMetadata})
    await sendSse(
      request.res,
      events.map((data) => ({data})),
      {fault: context.fault(request)},
    )
  }
}

export function registerGemini(router: SimRouter, context: SimContext): void {
  context.errorFormat('/v1beta/', (status, message) => errorBody('gemini', status, message))
  router.add(
    'POST',
    /^\/v1beta\/models\/(?<model>[^/:]+):(?<method>generateContent|streamGenerateContent|countTokens)$/,
    handle(context),
  )
}
