/**
 * What the Gemini codec's answer and stream code share: a candidate's parts, finish reasons and
 * usage in both directions.
 */
import type {CodecContext, Opaque, Part, StopReason, Usage} from './ir.js'
import {wrapOpaque} from './ir.js'
import type {Body} from './responses-items.js'
import {isObject, newId, num} from './responses-items.js'

import {answerPart} from './gemini-thoughts.js'

export {answerPart, thoughtOnlyUsage, thoughtPart} from './gemini-thoughts.js'

/** Gemini 3 accepts this in place of a thought signature it did not make (documented). */
export const SKIP_SIGNATURE = 'skip_thought_signature_validator'

/**
 * The `thoughtSignature` of a call in a Gemini client's answer: its own (wrapped when another
 * family made it), else on an answer's first call Google's skip value. Gemini CLI keeps a call's
 * signature in its history and sends it back, and Gemini 3 refuses a turn whose first call has
 * none ("Function call is missing a thought_signature in functionCall parts"): a call a fallback
 * of another family made would otherwise break the turn when it goes to Gemini again. The same
 * value every time, so the history's bytes do not change.
 */
export const callSignature = (signature: Opaque | undefined, first: boolean): {thoughtSignature?: string} =>
  signature
    ? {thoughtSignature: wrapOpaque('gemini', signature)}
    : first
      ? {thoughtSignature: SKIP_SIGNATURE}
      : {}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

const FILTERED = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
])

/**
 * The error message of a `finishReason` that says the answer broke off rather than ended: any but
 * STOP, MAX_TOKENS and the filters' (MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, OTHER,
 * LANGUAGE, ...). Read as a stop, they would hand the client a cut answer as a whole one.
 */
export function failedFinish(finish: string | undefined): string | undefined {
  if (!finish || finish === 'STOP' || finish === 'MAX_TOKENS' || FILTERED.has(finish)) return undefined
  return finish === 'MALFORMED_FUNCTION_CALL'
    ? 'upstream produced a malformed function call'
    : `upstream stopped the answer: finishReason ${finish}`
}

/**
 * What a translated client is told of a Gemini answer that ended STOP with no answer part (no
 * text, no call: no part at all, or thoughts only), which Gemini sends now and then, most often
 * right after a function response (AstrBot #6735, google/adk-js #344). An agent can do nothing
 * with such a turn (Claude Code: "API returned an empty or malformed response (HTTP 200)", or it
 * stops mid-task): the relay sends the request again once before the client has seen any of it
 * (../daemon/router/translated.ts), else the client gets this as an error (an error event once the stream began: one Claude Code retries).
 */
export const EMPTY_ANSWER = 'the upstream answered nothing (Gemini finishReason STOP with no text or call)'

/**
 * The status of {@link EMPTY_ANSWER}'s error event in a stream: 529, which a Messages client gets
 * as `overloaded_error` (the one error event Claude Code retries), the others as a server error.
 */
export const EMPTY_ANSWER_STATUS = 529

/**
 * Whether a Gemini `generateContent` answer is {@link EMPTY_ANSWER}'s: ended STOP (or with no
 * finishReason, read as STOP) with no answer part, the prompt not blocked.
 */
export function emptyAnswer(body: unknown): boolean {
  if (!isObject(body) || isObject(body.error)) return false
  if (isObject(body.promptFeedback) && body.promptFeedback.blockReason !== undefined) return false
  const candidate = Array.isArray(body.candidates) && isObject(body.candidates[0]) ? body.candidates[0] : {}
  const finish = candidate.finishReason
  if (finish !== undefined && finish !== 'STOP') return false
  const parts =
    isObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : []
  return !parts.some(answerPart)
}

/**
 * The error message of a Gemini `generateContent` answer that broke off ({@link failedFinish}:
 * MALFORMED_FUNCTION_CALL, UNEXPECTED_TOOL_CALL, OTHER, ...), the prompt not blocked; else undefined.
 */
export function failedAnswer(body: unknown): string | undefined {
  if (!isObject(body) || isObject(body.error)) return undefined
  if (isObject(body.promptFeedback) && body.promptFeedback.blockReason !== undefined) return undefined
  const candidate = Array.isArray(body.candidates) && isObject(body.candidates[0]) ? body.candidates[0] : {}
  return failedFinish(str(candidate.finishReason))
}

/** The IR stop reason of a `finishReason` (STOP after function calls is `tool_use`). */
export function stopOfFinish(finish: string | undefined, toolCalls: boolean): StopReason {
  if (finish === 'MAX_TOKENS') return 'max_tokens'
  if (finish && FILTERED.has(finish)) return 'content_filter'
  return toolCalls ? 'tool_use' : 'end'
}

export function finishReasonOf(stop: StopReason): string {
  if (stop === 'max_tokens' || stop === 'context_window') return 'MAX_TOKENS'
  if (stop === 'content_filter' || stop === 'refusal') return 'SAFETY'
  return 'STOP'
}

export function usageFromGemini(raw: unknown): Partial<Usage> | undefined {
  if (!isObject(raw)) return undefined
  const thoughts = num(raw.thoughtsTokenCount)
  return {
    inputTokens: num(raw.promptTokenCount) + num(raw.toolUsePromptTokenCount),
    outputTokens: num(raw.candidatesTokenCount) + thoughts,
    cacheReadTokens: num(raw.cachedContentTokenCount),
    reasoningTokens: thoughts,
  }
}

export function usageToGemini(usage: Usage): Body {
  const out: Body = {
    promptTokenCount: usage.inputTokens,
    candidatesTokenCount: Math.max(0, usage.outputTokens - usage.reasoningTokens),
    totalTokenCount: usage.inputTokens + usage.outputTokens,
  }
  if (usage.cacheReadTokens) out.cachedContentTokenCount = usage.cacheReadTokens
  if (usage.reasoningTokens) out.thoughtsTokenCount = usage.reasoningTokens
  return out
}

/** The IR parts of a candidate's content (a thoughtSignature on a text part: a reasoning part). */
export function partsOfCandidate(candidate: Body, ctx?: CodecContext): Part[] {
  const parts: Part[] = []
  const raw =
    isObject(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : []
  for (const p of raw) {
    if (!isObject(p)) continue
    const sig = str(p.thoughtSignature)
      ? {family: 'gemini' as const, value: p.thoughtSignature as string}
      : undefined
    if (typeof p.text === 'string') {
      if (p.thought === true) parts.push({type: 'reasoning', text: p.text, ...(sig && {signature: sig})})
      else {
        if (sig) parts.push({type: 'reasoning', text: '', signature: sig})
        if (p.text) parts.push({type: 'text', text: p.text})
      }
    } else if (isObject(p.functionCall)) {
      const fc = p.functionCall
      parts.push({
        type: 'tool_call',
        id: str(fc.id) || newId(ctx, 'call'),
        name: str(fc.name) ?? '',
        arguments: JSON.stringify(isObject(fc.args) ? fc.args : {}),
        ...(sig && {signature: sig}),
      })
    } else if (isObject(p.inlineData))
      parts.push({type: 'image', mediaType: str(p.inlineData.mimeType), data: str(p.inlineData.data) ?? ''})
  }
  return parts
}
