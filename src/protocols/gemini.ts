/**
 * The Gemini codec (`generateContent` / `streamGenerateContent?alt=sse`, Gemini CLI's protocol):
 * requests and answers both ways; the stream code is in `gemini-stream.ts`.
 */
import type {
  Codec,
  CodecContext,
  Effort,
  ReasoningSettings,
  FunctionTool,
  ImagePart,
  JsonSchema,
  Message,
  Opaque,
  Part,
  ReasoningPart,
  Request,
  Response,
  StopReason,
  TextPart,
  ToolCallPart,
  ToolResultPart,
  WebSearchTool,
} from './ir.js'
import {omittedFileText, searchesOf, TranslationError, unwrapReasoning, wrapReasoning} from './ir.js'
import {GeminiStreamDecoder, GeminiStreamEncoder} from './gemini-stream.js'
import {argsObject, budgetWithin, topKOf} from './cm-common.js'
import type {ImageNotes} from './images.js'
import {ENCODER_NOTES, fitImage, imageNote} from './images.js'
import {groundingOf, searchesOfGrounding} from './web-search.js'
import {
  failedFinish,
  finishReasonOf,
  partsOfCandidate,
  callSignature,
  SKIP_SIGNATURE,
  stopOfFinish,
  usageFromGemini,
  usageToGemini,
} from './gemini-parts.js'
import type {Body} from './responses-items.js'
import {fullUsage, hasForeignOpaque, isObject, newId, restoreCarried} from './responses-items.js'
import {DATA, mapNamed, mapSchema, NAMED_SCHEMAS} from './schema-walk.js'
import {objectTools} from './tool-schemas.js'
import {nameLevel, takesThinkingLevel} from './thinking-off.js'

export {SKIP_SIGNATURE}

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

const TYPE_NAMES = new Set(['STRING', 'NUMBER', 'INTEGER', 'BOOLEAN', 'ARRAY', 'OBJECT', 'NULL'])

const upperType = (v: unknown): boolean => typeof v === 'string' && TYPE_NAMES.has(v)

/**
 * OpenAPI-style schema (`"type": "OBJECT"`) to JSON Schema's lower-case type names, recursively:
 * into every sub-schema, a property's whatever its name (a property called `type` or `enum` is a
 * schema too), never into data (an enum's values, a default, an example).
 * Copy on write: a schema (or any part of it) with nothing to change is returned as it came, not
 * copied (Gemini CLI sends its ~20 tools' schemas on every turn).
 */
export function normaliseSchema(schema: unknown): unknown {
  return mapSchema(schema, (key, value, walk) => {
    if (key === 'type') {
      if (upperType(value)) return (value as string).toLowerCase()
      if (Array.isArray(value) && value.some(upperType))
        return value.map((v) => (upperType(v) ? (v as string).toLowerCase() : v))
      return value
    }
    if (NAMED_SCHEMAS.has(key) && isObject(value)) return mapNamed(value, walk)
    return DATA.has(key) ? value : walk(value)
  })
}

const partsOf = (content: unknown): unknown[] =>
  isObject(content) && Array.isArray(content.parts) ? content.parts : []

function responseContent(response: unknown): {content: Array<TextPart | ImagePart>; isError: boolean} {
  if (isObject(response)) {
    const keys = Object.keys(response)
    if (keys.length === 1 && typeof response.output === 'string')
      return {content: [{type: 'text', text: response.output}], isError: false}
    if (keys.length === 1 && response.error !== undefined) {
      const text = typeof response.error === 'string' ? response.error : JSON.stringify(response.error)
      return {content: [{type: 'text', text}], isError: true}
    }
  }
  return {content: [{type: 'text', text: JSON.stringify(response ?? {})}], isError: false}
}

function decodeRequest(
  body: unknown,
  ctx: CodecContext & {model?: string | null; stream?: boolean},
): Request {
  if (!isObject(body)) throw new TranslationError('request body must be a JSON object')
  const system: TextPart[] = []
  for (const p of partsOf(body.systemInstruction ?? body.system_instruction))
    if (isObject(p) && typeof p.text === 'string') system.push({type: 'text', text: p.text})

  const messages: Message[] = []
  const pending: Array<{id: string; name: string}> = []
  let previousRole: 'user' | 'assistant' | undefined
  const contents = Array.isArray(body.contents) ? body.contents : []
  // the reasoning part of the thought parts right before (a stream's thought comes in pieces:
  // the gateway's own stream puts the signature on an empty piece of its own, before or after
  // the text); one signature for the pieces' text. The pieces may be model contents of their own,
  // one after another: @google/genai's chat session keeps one content per streamed chunk
  let thought: ReasoningPart | undefined
  contents.forEach((content, turn) => {
    const role = isObject(content) && content.role === 'model' ? 'assistant' : 'user'
    if (role !== 'assistant' || previousRole !== 'assistant') thought = undefined
    // a response answers a call of the model turn before it, not an older one of the same name
    if (role === 'assistant' && previousRole === 'user') pending.length = 0
    previousRole = role
    const parts: Part[] = []
    let calls = 0
    for (const p of partsOf(content)) {
      if (!isObject(p)) continue
      const opaque = str(p.thoughtSignature)
        ? unwrapReasoning('gemini', p.thoughtSignature as string)
        : undefined
      const sig = opaque?.signature
      if (opaque?.redacted) {
        // Anthropic's redacted thinking (the gateway's own thought part of no text): a part of its
        // own, where it was, joined to no thought before or after it
        parts.push({type: 'reasoning', text: '', redacted: opaque.redacted})
        thought = undefined
        if (p.thought === true && !p.text) continue
      }
      if (typeof p.text === 'string' && p.thought === true) {
        if (thought && !(thought.signature && sig)) {
          thought.text += p.text
          if (sig) thought.signature = sig
          // a signature on an empty piece after the text closes the thought (Anthropic's and a
          // Responses item's come after their text): the next piece of text is the next thought's
          if (sig && !p.text && thought.text) thought = undefined
        } else {
          thought = {type: 'reasoning', text: p.text, ...(sig && {signature: sig})}
          parts.push(thought)
        }
        continue
      }
      thought = undefined
      if (typeof p.text === 'string') {
        if (sig) parts.push({type: 'reasoning', text: '', signature: sig})
        if (p.text) parts.push({type: 'text', text: p.text})
      } else if (isObject(p.inlineData) || isObject(p.fileData)) {
        let image: ImagePart
        if (isObject(p.inlineData))
          image = {type: 'image', mediaType: str(p.inlineData.mimeType), data: str(p.inlineData.data) ?? ''}
        else {
          const file = p.fileData as Record<string, unknown>
          image = {type: 'image', url: str(file.fileUri) ?? ''}
          if (str(file.mimeType)) image.mediaType = str(file.mimeType)
        }
        // media right after a function response are the tool's (Gemini CLI's read_file of an image
        // or a PDF, for a model without multimodal function responses): they go with its result
        const last = parts.at(-1)
        if (last?.type === 'tool_result') last.content.push(image)
        else parts.push(image)
      } else if (isObject(p.functionCall)) {
        const fc = p.functionCall
        const call: ToolCallPart = {
          type: 'tool_call',
          // (an empty id, as a serializer that writes default fields gives one, is none)
          id: str(fc.id) || `call_${turn}_${calls}`,
          name: str(fc.name) ?? '',
          arguments: JSON.stringify(isObject(fc.args) ? fc.args : {}),
        }
        calls++
        // (the skip value the gateway gave a call another vendor made is no signature)
        if (sig && sig.value !== SKIP_SIGNATURE) call.signature = sig
        pending.push({id: call.id, name: call.name})
        parts.push(call)
      } else if (isObject(p.functionResponse)) {
        const fr = p.functionResponse
        const name = str(fr.name) ?? ''
        let id = str(fr.id) || undefined
        // by id, else by name (Gemini CLI makes its own id for a call that came without one)
        let at = id ? pending.findIndex((c) => c.id === id) : -1
        if (at < 0) at = pending.findIndex((c) => c.name === name)
        if (at >= 0) {
          id = pending[at].id
          pending.splice(at, 1)
        }
        const {content: out, isError} = responseContent(fr.response)
        // a multimodal function response (Gemini 3, Gemini CLI's read_file of an image or a PDF):
        // its media ride in `parts`
        if (Array.isArray(fr.parts))
          for (const media of fr.parts)
            if (isObject(media) && isObject(media.inlineData))
              out.push({
                type: 'image',
                mediaType: str(media.inlineData.mimeType),
                data: str(media.inlineData.data) ?? '',
              })
            else if (isObject(media) && isObject(media.fileData))
              out.push({
                type: 'image',
                url: str(media.fileData.fileUri) ?? '',
                ...(str(media.fileData.mimeType) && {mediaType: str(media.fileData.mimeType)}),
              })
        parts.push({
          type: 'tool_result',
          callId: id ?? `call_${name}`,
          name,
          content: out,
          ...(isError ? {isError} : {}),
        })
      }
    }
    if (!parts.length) return
    const last = messages.at(-1)
    if (last?.role === role) last.parts.push(...parts)
    else messages.push({role, parts})
  })
  for (const message of messages) if (message.role === 'assistant') restoreCarried(message, ctx)

  const tools: FunctionTool[] = []
  const builtinTools: NonNullable<Request['builtinTools']> = []
  let webSearch: WebSearchTool | undefined
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (!isObject(tool)) continue
    const decls = tool.functionDeclarations ?? tool.function_declarations
    if (Array.isArray(decls)) {
      for (const d of decls) {
        if (!isObject(d) || typeof d.name !== 'string') continue
        // Gemini CLI writes some JSON Schemas with the OpenAPI type names too ("OBJECT"): other
        // vendors refuse those, so every schema is normalised
        const parameters = isObject(d.parametersJsonSchema)
          ? (normaliseSchema(d.parametersJsonSchema) as JsonSchema)
          : isObject(d.parameters)
            ? (normaliseSchema(d.parameters) as JsonSchema)
            : {type: 'object', properties: {}}
        tools.push({
          name: d.name,
          ...(typeof d.description === 'string' && {description: d.description}),
          parameters,
        })
      }
      const rest = Object.keys(tool).filter(
        (k) => k !== 'functionDeclarations' && k !== 'function_declarations',
      )
      if (!rest.length) continue
    }
    // Google Search grounding (Gemini CLI's web search sends it alone, in a request of its own)
    const search = tool.googleSearch ?? tool.google_search
    if (isObject(search) && Object.keys(tool).length === 1) {
      const excluded = Array.isArray(search.excludeDomains)
        ? search.excludeDomains.filter((d): d is string => typeof d === 'string')
        : []
      webSearch = excluded.length ? {blockedDomains: excluded} : {}
      continue
    }
    builtinTools.push({family: 'gemini', raw: tool})
  }

  const request: Request = {model: ctx.model ?? null, system, messages, tools, stream: ctx.stream ?? false}
  if (builtinTools.length) request.builtinTools = builtinTools
  if (webSearch) request.webSearch = webSearch
  const fcc = isObject(body.toolConfig) ? body.toolConfig.functionCallingConfig : undefined
  if (isObject(fcc)) {
    const names = Array.isArray(fcc.allowedFunctionNames) ? fcc.allowedFunctionNames : []
    if (fcc.mode === 'NONE') request.toolChoice = {type: 'none'}
    else if (fcc.mode === 'ANY')
      request.toolChoice =
        names.length === 1 && typeof names[0] === 'string'
          ? {type: 'tool', name: names[0]}
          : {type: 'required'}
    else if (fcc.mode === 'AUTO' || fcc.mode === 'VALIDATED') request.toolChoice = {type: 'auto'}
  }
  const config = isObject(body.generationConfig) ? body.generationConfig : {}
  if (typeof config.temperature === 'number') request.temperature = config.temperature
  if (typeof config.topP === 'number') request.topP = config.topP
  if (topKOf(config.topK) !== undefined) request.topK = config.topK as number
  if (typeof config.maxOutputTokens === 'number') request.maxTokens = config.maxOutputTokens
  if (Array.isArray(config.stopSequences))
    request.stop = config.stopSequences.filter((s) => typeof s === 'string')
  if (config.responseMimeType === 'application/json') {
    const schema = isObject(config.responseJsonSchema)
      ? (normaliseSchema(config.responseJsonSchema) as JsonSchema)
      : isObject(config.responseSchema)
        ? (normaliseSchema(config.responseSchema) as JsonSchema)
        : undefined
    request.responseFormat = schema ? {type: 'json_schema', schema} : {type: 'json_object'}
  }
  const thinking = isObject(config.thinkingConfig) ? config.thinkingConfig : undefined
  if (thinking) {
    const budget = thinking.thinkingBudget
    const level = str(thinking.thinkingLevel)?.toLowerCase()
    if (budget === 0) request.reasoning = {disabled: true}
    else
      request.reasoning = {
        ...(typeof budget === 'number' && budget > 0 && {budgetTokens: budget}),
        ...((level === 'minimal' || level === 'low' || level === 'medium' || level === 'high') && {
          effort: level as Effort,
        }),
        ...(typeof thinking.includeThoughts === 'boolean' && {include: thinking.includeThoughts}),
      }
  }
  return request
}

const ownSig = (opaque: Opaque | undefined): string | undefined =>
  opaque?.family === 'gemini' && opaque.value ? opaque.value : undefined

/** A call's arguments as Gemini's `args` object (see `argsObject`: no JSON, its syntax repaired). */
const parseArgs = (args: string): Body => argsObject(args)

function guessMime(url: string): string {
  const ext = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase()
  return ext === 'png'
    ? 'image/png'
    : ext === 'gif'
      ? 'image/gif'
      : ext === 'webp'
        ? 'image/webp'
        : 'image/jpeg'
}

/** The file types Gemini reads (a spreadsheet, an archive or a Word file it refuses: "Unsupported MIME type"). */
const GEMINI_MEDIA = /^(?:image|audio|video|text)\/|^application\/pdf$/

/**
 * An image or a document as Gemini takes it: `inlineData` (its bytes) or `fileData` (a URL); a
 * file of a type Gemini does not read becomes the line that says what was there.
 */
function imagePart(part: ImagePart, notes: ImageNotes): Body {
  if (part.mediaType !== undefined && !GEMINI_MEDIA.test(part.mediaType))
    return {text: omittedFileText(part, 'Gemini reads images, audio, video, PDF and text files only')}
  if (!part.data)
    return {fileData: {mimeType: part.mediaType ?? guessMime(part.url ?? ''), fileUri: part.url ?? ''}}
  // an image's bytes: the type they say, or a line where Gemini takes none of it (images.ts)
  if (part.mediaType === undefined || part.mediaType.startsWith('image/')) {
    const fit = fitImage(part as ImagePart & {data: string}, 'gemini', notes)
    if (fit.text !== undefined) return {text: fit.text}
    return {inlineData: {mimeType: fit.mediaType, data: part.data}}
  }
  return {inlineData: {mimeType: part.mediaType, data: part.data}}
}

const BUDGETS: Record<Effort, number> = {minimal: 512, low: 1024, medium: 8192, high: 24576}

function encodeModelParts(parts: Part[], notes: ImageNotes): Body[] {
  const out: Body[] = []
  let pendingSig: string | undefined // from a reasoning part with no text: goes on the next part
  let turnSig: string | undefined // the turn's reasoning signature, for its first functionCall
  let firstCall = true
  for (const part of parts) {
    if (part.type === 'reasoning') {
      const sig = ownSig(part.signature)
      if (!sig) continue
      turnSig = sig
      if (part.text) out.push({text: part.text, thought: true, thoughtSignature: sig})
      else pendingSig = sig
    } else if (part.type === 'text') {
      // Gemini refuses an empty text part ("Unable to submit request because it has an empty text
      // parameter"), which Claude Code and Codex may send; one that carries a signature stays
      if (!part.text && !pendingSig) continue
      out.push({text: part.text, ...(pendingSig && {thoughtSignature: pendingSig})})
      if (pendingSig) turnSig = undefined
      pendingSig = undefined
    } else if (part.type === 'image') out.push(imagePart(part, notes))
    else if (part.type === 'tool_call') {
      let sig = ownSig(part.signature) ?? pendingSig
      // Google's documented skip value on a first call that has none, to every model: Gemini 3
      // refuses such a turn, and so does Gemini 2.5 thinking (openclaude #583, rowboat #694)
      if (!sig && firstCall) sig = turnSig ?? SKIP_SIGNATURE
      out.push({
        functionCall: {name: part.name, args: parseArgs(part.arguments), id: part.id},
        ...(sig && {thoughtSignature: sig}),
      })
      pendingSig = undefined
      firstCall = false
    }
  }
  if (pendingSig) out.push({text: '', thoughtSignature: pendingSig})
  return out
}

/**
 * Whether the upstream model runs Google Search beside function declarations: Gemini 3 and later
 * do, by the name test of their thinking levels (../thinking-off.ts `takesThinkingLevel`), with
 * `toolConfig.includeServerSideToolInvocations` (else "Please enable
 * tool_config.include_server_side_tool_invocations"); Gemini 2.5 refuses it ("Tool use with
 * function calling is unsupported", and with the flag "Tool call context circulation is not
 * enabled"), and so is every other name (a proxy's own); a refusal of it is learned
 * (daemon/router/adaptations.ts `searchToolRefused`).
 */
export const searchesBesideFunctions = (model: string): boolean => takesThinkingLevel(model)

/**
 * Whether the model takes no `thinkingBudget` by its name: Gemma on the Gemini API refuses any,
 * 0 included (Gemma 4: "Thinking budget is not supported for this model.", it always thinks).
 * The encoder leaves it out from the first request; another name for such a model is learned from
 * its refusal (adaptations.ts).
 */
export const takesNoThinkingBudget = (model: string): boolean => /(?:^|\/)gemma-/i.test(model)

/**
 * Whether the model takes no `thinkingConfig` at all by its name: Gemma 3 (`gemma-3-27b-it`,
 * `gemma-3n-e4b-it`) does not think, and the Gemini API refuses any thinking config for it, a budget
 * of 0 and a lone `includeThoughts` too: "Thinking is not enabled for models/gemma-3-27b-it" (the
 * words Google answers Gemini 2.0 with, lobehub #7985). Another name for such a model is learned
 * from the refusal (adaptations.ts `noThinking`).
 */
export const takesNoThinking = (model: string): boolean => /(?:^|\/)gemma-3(?!\d)/i.test(model)

/**
 * Whether the model takes no `systemInstruction` by its name: Gemma 3 on the Gemini API refuses one
 * with 400 INVALID_ARGUMENT "Developer instruction is not enabled for models/gemma-3-27b-it". The
 * encoder folds the system prompt into the first user turn from the first request
 * ({@link systemIntoFirstTurn}); another name for such a model, and Gemini CLI passed through, learn
 * it from the refusal (adaptations.ts `noSystemInstruction`).
 */
export const takesNoSystemInstruction = (model: string): boolean => takesNoThinking(model)

/**
 * A Gemini body whose `systemInstruction` (or `system_instruction`) goes as the first part of its
 * first user turn (a user turn of its own before the first content when that is the model's), for
 * a model that takes none: what Gemma's own chat template does with a system prompt (the system
 * text, a blank line, the user's words, in the one turn). The first turn is the same on every
 * request of a conversation, so the upstream's prefix cache holds as with a system instruction.
 * Its text parts only (a system instruction holds nothing else); the body as it was when it has
 * none.
 */
export function systemIntoFirstTurn(body: Record<string, unknown>): void {
  const key = body.systemInstruction !== undefined ? 'systemInstruction' : 'system_instruction'
  const system = body[key]
  if (system === undefined) return
  delete body[key]
  const text = partsOf(system)
    .map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : ''))
    .filter(Boolean)
    .join('\n\n')
  if (!text) return
  const part = {text: `${text}\n\n`}
  const contents = Array.isArray(body.contents) ? (body.contents as Body[]) : (body.contents = [])
  const first = contents[0]
  if (first && (first.role === undefined || first.role === 'user'))
    contents[0] = {...first, parts: [part, ...(Array.isArray(first.parts) ? first.parts : [])]}
  else contents.unshift({role: 'user', parts: [part]})
}

/**
 * Gemma 4's thinking level (`gemma-4-31b-it`, `gemma-4-26b-a4b-it`): the Gemini API takes
 * `thinkingLevel` `MINIMAL` or `HIGH` only, `LOW` and `MEDIUM` refused (earendil-works/pi PR
 * #2811), and no budget. The client's effort, as Gemini 3's levels read it (decodeRequest: the
 * level is the effort), on the two: none, minimal and low as `MINIMAL` (Gemma 4 cannot stop
 * thinking), medium and above as `HIGH`; a budget alone as the effort of the same size (`BUDGETS`);
 * nothing for a request that names neither. Another model's name gets no level.
 */
function gemmaLevel(model: string, r: ReasoningSettings): 'MINIMAL' | 'HIGH' | undefined {
  if (!/(?:^|\/)gemma-4(?!\d)/i.test(model)) return undefined
  if (r.disabled) return 'MINIMAL'
  const effort =
    r.effort ?? (r.budgetTokens === undefined ? undefined : r.budgetTokens <= BUDGETS.low ? 'low' : 'high')
  if (effort === undefined) return undefined
  return effort === 'minimal' || effort === 'low' ? 'MINIMAL' : 'HIGH'
}

/** Gemini 3's thinking levels, the least first. */
const GEMINI_LEVELS = ['minimal', 'low', 'medium', 'high'] as const

/**
 * The effort a thinking budget stands for on Gemini 3's levels: the level whose budget
 * ({@link BUDGETS}) is nearest, on a scale of ratios (512 and 1 024 tokens are as far apart as 8 192
 * and 16 384); none for Gemini's dynamic -1.
 */
function budgetEffort(budget: number): Effort | undefined {
  if (budget <= 0) return undefined
  let best: Effort = 'minimal'
  for (const level of GEMINI_LEVELS)
    if (Math.abs(Math.log(budget / BUDGETS[level])) < Math.abs(Math.log(budget / BUDGETS[best]))) best = level
  return best
}

/**
 * A Gemini 3 model's `thinkingLevel` for the client's reasoning: its effort (`xhigh` and `max` as
 * `high`, the most there is), else its budget's nearest level ({@link budgetEffort}), thinking off as
 * the least level the model takes (none stops its thinking); none for a request that names neither.
 * Held to the levels each model takes, by Google's thinking-levels table: Pro takes no `MINIMAL`
 * (it cannot stop thinking: `LOW`), nor does Flash from 3.7 on (`gemini-3.7-flash`,
 * `gemini-3.8-flash`: "Thinking level MINIMAL is not supported for this model.", theJayTea/
 * WritingTools #282, earendil-works/pi #9455; Flash-Lite takes it); Gemini 3 Pro takes no `MEDIUM`
 * (egoist/chatwise-releases #1206; 3.1 Pro does): `HIGH`, the next up. A level another model
 * refuses is learned (adaptations.ts: `thinkingLevels`, the next level up).
 */
function gemini3Level(model: string, r: ReasoningSettings): string | undefined {
  let effort = r.disabled
    ? 'minimal'
    : (r.effort ?? (r.budgetTokens === undefined ? undefined : budgetEffort(r.budgetTokens)))
  if (effort === undefined) return undefined
  // (a relay's name that fixes the level: that one, whatever the client asked)
  const named = nameLevel(model)
  if (named !== undefined) return named
  const name = model.toLowerCase()
  const [, major, minor] = /(?:^|\/)gemini-(\d+)(?:\.(\d+))?/.exec(name) ?? []
  const pro = /-pro\b/.test(name)
  // (`gemini-flash-latest`: Gemini 3.8 Flash in late 2026, ../thinking-off.ts)
  const laterFlash =
    /-flash\b/.test(name) &&
    !/-lite\b/.test(name) &&
    (Number(major) > 3 || Number(minor ?? 0) >= 7 || /(?:^|\/)gemini-flash-latest\b/.test(name))
  if (effort === 'minimal' && (pro || laterFlash)) effort = 'low'
  if (effort === 'medium' && pro && major === '3' && minor === undefined) effort = 'high'
  return effort.toUpperCase()
}

/**
 * Whether the upstream model takes the images and documents of a function's result inside its
 * `functionResponse` (`parts`, "multimodal function responses"): Gemini 3 and later, by the name
 * test of its thinking levels (../thinking-off.ts `takesThinkingLevel`: dotted names, any case, a
 * vendor's prefix, Google's `-latest` aliases), as Gemini CLI decides it. Gemini 2.5 on Vertex
 * refuses them there ("`function_response.parts` is not supported for this model"), and so is every
 * other name (Gemma, a proxy's own name): their media go after the responses. A refusal of either
 * layout is learned per model (`CodecContext.geminiResultMedia`).
 */
export const multimodalResponses = (model: string): boolean => takesThinkingLevel(model)

/** A tool result as Gemini's `functionResponse` part, its text as the response (the media not in it). */
function functionResponse(part: ToolResultPart, callNames: Map<string, string>, text?: string): Body {
  text ??= part.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
  return {
    functionResponse: {
      name: part.name ?? callNames.get(part.callId) ?? '',
      id: part.callId,
      response: part.isError ? {error: text} : {output: text},
    },
  }
}

/**
 * The layout a Gemini body's result media went in (`nested` or `flat`), set on a body only when an
 * `inlineData` or `fileData` part went in a user content with tool results (inside them or beside
 * them): what translate.ts tells the proxy (`SentRequest.geminiResultMedia`), so that a refusal of
 * it is learned (daemon/router/adaptations.ts).
 */
export const RESULT_MEDIA = Symbol('gwctl.geminiResultMedia')

/**
 * Whether the user messages `from`..`to` (one Gemini content: a chat client's tool messages and
 * the user message after them, Claude Code's one message) hold a tool result and an image or a
 * document, inside a result or beside them (opencode's image in the user message after its tool
 * messages, older Codex's `view_image`, Claude Code's pasted image).
 */
function mediaWithResults(messages: Message[], from: number, to: number): boolean {
  let results = false
  let media = false
  for (let i = from; i <= to; i++)
    for (const p of messages[i].parts)
      if (p.type === 'image') media = true
      else if (p.type === 'tool_result') {
        results = true
        if (!media) media = p.content.some((c) => c.type === 'image')
      }
  return results && media
}

/** A tool result of the nested layout, as its media come: its text, the lines said in it, its parts. */
interface Nesting {
  part: ToolResultPart
  text: string
  lines: string[]
  parts: Body[]
  images: boolean
  documents: boolean
}

/**
 * A medium into `into`'s response: its bytes (`inlineData`) in its `parts`; a URL (`fileData`,
 * which the Gemini API takes nowhere inside a function response: "not supported in Gemini API",
 * Google's SDKs say) or a file Gemini does not read as a line of its text. Whether bytes went.
 */
function nestMedium(into: Nesting, medium: ImagePart, notes: ImageNotes): boolean {
  const encoded = imagePart(medium, notes)
  if (typeof encoded.text === 'string') into.lines.push(encoded.text)
  else if (encoded.fileData !== undefined)
    into.lines.push(omittedFileText(medium, 'the Gemini API takes no URL inside a function response'))
  else {
    into.parts.push(encoded)
    if (medium.mediaType === undefined || medium.mediaType.startsWith('image/')) into.images = true
    else into.documents = true
    return true
  }
  return false
}

/**
 * The parts of a Gemini user content whose tool results hold images or documents, or have some
 * beside them (Claude Code's Read of a screenshot, Codex's `view_image`, opencode's image in the
 * user message after its tool messages), so that the content holds one `functionResponse` per
 * call, first, never a medium between or after them (Gemini 3 and Vertex refuse a medium beside
 * a response, Gemini 2.x one between the responses of parallel calls: "Please ensure that the
 * number of function response parts is equal to the number of function call parts of the
 * function call turn."):
 * - `nested` (Gemini 3 and later): each result's media in its response's `parts`, its text in the
 *   response (`[image attached]` where it had none), a file Gemini does not read, or a URL, as a
 *   line of that text; a medium beside the results in the `parts` of the response it follows (the
 *   first one's, for one before them all), as the decoder reads it back; the other parts after
 *   the responses.
 * - `flat` (any other model): every response in its order, then the results' media in theirs,
 *   then the other parts (the media beside the results among them).
 * `media`: whether an `inlineData` or `fileData` part went (every medium may have become a line).
 */
function resultsWithMedia(
  parts: Part[],
  callNames: Map<string, string>,
  notes: ImageNotes,
  layout: 'nested' | 'flat',
): {parts: Body[]; media: boolean} {
  const responses: Body[] = []
  const media: Body[] = []
  const rest: Body[] = []
  let sent = false
  if (layout === 'flat') {
    for (const part of parts)
      if (part.type === 'text') {
        if (part.text) rest.push({text: part.text}) // (an empty one refused, as in encodeRequest)
      } else if (part.type === 'image') rest.push(imagePart(part, notes))
      else if (part.type === 'tool_result') {
        responses.push(functionResponse(part, callNames))
        for (const c of part.content) if (c.type === 'image') media.push(imagePart(c, notes))
      }
    sent = [...media, ...rest].some((p) => p.inlineData !== undefined || p.fileData !== undefined)
    return {parts: [...responses, ...media, ...rest], media: sent}
  }
  const nestings: Nesting[] = []
  const leading: ImagePart[] = [] // (beside the results, before the first)
  for (const part of parts) {
    if (part.type === 'text') {
      if (part.text) rest.push({text: part.text})
    } else if (part.type === 'image') {
      const last = nestings.at(-1)
      if (last === undefined) leading.push(part)
      else if (nestMedium(last, part, notes)) sent = true
    } else if (part.type === 'tool_result') {
      const nesting: Nesting = {part, text: '', lines: [], parts: [], images: false, documents: false}
      for (const c of part.content)
        if (c.type === 'text') nesting.text += c.text
        else if (c.type === 'image' && nestMedium(nesting, c, notes)) sent = true
      if (!nestings.length) for (const medium of leading) if (nestMedium(nesting, medium, notes)) sent = true
      nestings.push(nesting)
    }
  }
  for (const n of nestings) {
    let text = n.lines.length ? [n.text, ...n.lines].filter(Boolean).join('\n') : n.text
    if (!text && n.parts.length)
      text = `[${n.images && n.documents ? 'image and document' : n.images ? 'image' : 'document'} attached]`
    const response = functionResponse(n.part, callNames, text)
    if (n.parts.length) (response.functionResponse as Body).parts = n.parts
    responses.push(response)
  }
  return {parts: [...responses, ...rest], media: sent}
}

/** The last of the user messages from `from` on (before the next assistant message). */
function runEnd(messages: Message[], from: number): number {
  let to = from
  while (to + 1 < messages.length && messages[to + 1].role !== 'assistant') to++
  return to
}

function encodeRequest(request: Request, model: string, ctx?: CodecContext): Record<string, unknown> {
  const callNames = new Map<string, string>()
  const contents: Body[] = []
  const images: ImageNotes = {seen: 0}
  let layout: 'nested' | 'flat' | undefined // (of the results' media: only when one went)
  const messages = request.messages
  let plainTo = -1 // (the last user message of a run found without media beside results)
  for (let i = 0; i < messages.length; i++) {
    const message = messages[i]
    let parts: Body[]
    if (message.role === 'assistant') {
      for (const p of message.parts) if (p.type === 'tool_call') callNames.set(p.id, p.name)
      parts = encodeModelParts(message.parts, images)
    } else if (i > plainTo && mediaWithResults(messages, i, (plainTo = runEnd(messages, i)))) {
      // the run's user messages, one content: its media placed as the model takes them
      const to = plainTo
      const chosen = ctx?.geminiResultMedia ?? (multimodalResponses(model) ? 'nested' : 'flat')
      const run = i === to ? message.parts : messages.slice(i, to + 1).flatMap((m) => m.parts)
      const out = resultsWithMedia(run, callNames, images, chosen)
      if (out.media) layout ??= chosen
      parts = out.parts
      i = to
    } else {
      parts = []
      for (const part of message.parts) {
        if (part.type === 'text') {
          if (part.text) parts.push({text: part.text}) // (an empty one refused, as above)
        } else if (part.type === 'image') parts.push(imagePart(part, images))
        else if (part.type === 'tool_result') parts.push(functionResponse(part, callNames))
      }
    }
    if (!parts.length) continue
    const role = message.role === 'assistant' ? 'model' : 'user'
    const last = contents.at(-1)
    if (last?.role === role) (last.parts as Body[]).push(...parts)
    else contents.push({role, parts})
  }
  const body: Body = {contents}
  if (request.system.length) body.systemInstruction = {parts: request.system.map((p) => ({text: p.text}))}
  // (Gemma 3 takes none: the system prompt as the first user turn's first part)
  if (takesNoSystemInstruction(model)) systemIntoFirstTurn(body)
  const tools: Body[] = []
  if (request.tools.length)
    tools.push({
      // (a schema whose top level is a union as one object: Gemini reads a function's parameters
      // as the object of its arguments)
      functionDeclarations: objectTools(request.tools).map((t) => ({
        name: t.name,
        ...(t.description && {description: t.description}),
        parametersJsonSchema: t.parameters,
      })),
    })
  // Gemini 3 takes Google Search beside function declarations (in the one tool, as Google's
  // example has it), the server's invocations shown; Gemini 2.5 only a search request's (Gemini
  // CLI's, Claude Code's). Its `excludeDomains` is Vertex AI's only: domain limits are not sent.
  // (not beside a forced function, nor a forced search: Gemini cannot force its search, and a
  // forced function beside the search's invocations is reported refused: mode VALIDATED only)
  const choiceType = request.toolChoice?.type
  const combined =
    request.webSearch !== undefined &&
    tools.length > 0 &&
    (choiceType === undefined || choiceType === 'auto') &&
    searchesBesideFunctions(model)
  if (combined) tools[0].googleSearch = {}
  for (const builtin of request.builtinTools ?? [])
    if (builtin.family === 'gemini') tools.push(builtin.raw as Body)
  if (request.webSearch && request.tools.length === 0) tools.push({googleSearch: {}})
  else if (choiceType === 'web_search')
    // a forced search beside functions: not one Gemini can run (Gemini 2.5 refuses the two
    // together, and no Gemini can force its search), and an answer from memory is no search (a
    // later target of the route may take it)
    throw new TranslationError(
      'a forced web search beside function tools cannot be translated to a Gemini upstream: Gemini cannot force Google Search, and Gemini 2.5 refuses it beside function declarations',
    )
  if (tools.length) body.tools = tools
  if (combined) body.toolConfig = {includeServerSideToolInvocations: true}
  const choice = request.toolChoice
  // Gemini cannot force its search, and refuses any function calling config without function
  // declarations ("Function calling config is set without function_declarations.")
  // declarations ("Function calling config is set without function_declarations."). Beside its
  // search (Gemini 3), `AUTO`, the default, is not sent: users report it refused with the search's
  // invocations included (mode VALIDATED only)
  if (choice && choice.type !== 'web_search' && request.tools.length > 0 && !combined)
    body.toolConfig = {
      ...(body.toolConfig as Body | undefined),
      functionCallingConfig:
        choice.type === 'tool'
          ? {mode: 'ANY', allowedFunctionNames: [choice.name]}
          : {mode: choice.type === 'none' ? 'NONE' : choice.type === 'required' ? 'ANY' : 'AUTO'},
    }
  const config: Body = {}
  if (request.temperature !== undefined) config.temperature = request.temperature
  if (request.topP !== undefined) config.topP = request.topP
  if (request.topK !== undefined) config.topK = request.topK
  if (request.maxTokens !== undefined) config.maxOutputTokens = request.maxTokens
  if (request.stop?.length) config.stopSequences = request.stop
  const format = request.responseFormat
  if (format && format.type !== 'text') {
    config.responseMimeType = 'application/json'
    if (format.type === 'json_schema') config.responseJsonSchema = format.schema
  }
  const r = request.reasoning
  if (r) {
    const thinking: Body = {}
    if (takesNoThinkingBudget(model)) {
      // (no budget: the model decides how much it thinks, Gemma 4 at the level asked)
      const level = gemmaLevel(model, r)
      if (level) thinking.thinkingLevel = level
    } else if (takesThinkingLevel(model)) {
      // (Gemini 3 and later: a level, never a budget beside it)
      const level = gemini3Level(model, r)
      if (level) thinking.thinkingLevel = level
    } else if (r.disabled) thinking.thinkingBudget = 0
    else {
      const budget = r.budgetTokens ?? (r.effort ? BUDGETS[r.effort] : undefined)
      // (Gemini counts the thoughts in maxOutputTokens: a budget the limit cuts keeps the answer's
      // room, never under 512, the least 2.5 Flash-Lite and others take, nor above the client's own)
      if (budget !== undefined)
        thinking.thinkingBudget =
          request.maxTokens !== undefined && budget > 0
            ? budgetWithin(budget, request.maxTokens, Math.min(budget, 512))
            : budget
    }
    if (!r.disabled && r.include !== undefined) thinking.includeThoughts = r.include
    // (a model that does not think refuses any thinking config: none goes)
    if (Object.keys(thinking).length && !takesNoThinking(model)) config.thinkingConfig = thinking
  }
  if (Object.keys(config).length) body.generationConfig = config
  const left = imageNote(images)
  if (left) (body as Record<symbol, unknown>)[ENCODER_NOTES] = [left]
  if (layout) (body as Record<symbol, unknown>)[RESULT_MEDIA] = layout
  return body
}

function decodeResponse(body: unknown, ctx?: CodecContext): Response {
  if (!isObject(body)) throw new TranslationError('upstream answer is not a JSON object', 502)
  if (isObject(body.error)) throw new TranslationError(str(body.error.message) ?? 'upstream error', 502)
  const candidate = Array.isArray(body.candidates) && isObject(body.candidates[0]) ? body.candidates[0] : {}
  // a search's records first, as Anthropic and OpenAI give them (Gemini puts them after the text)
  const searches = searchesOfGrounding(candidate.groundingMetadata, () => newId(ctx, 'ws'))
  const parts: Part[] = searches.length
    ? [...searches, ...partsOfCandidate(candidate, ctx)]
    : partsOfCandidate(candidate, ctx)
  const blocked = isObject(body.promptFeedback) && body.promptFeedback.blockReason !== undefined
  const finish = str(candidate.finishReason)
  // (a prompt blocked is a filter's stop, whatever its candidate says)
  const failed = blocked ? undefined : failedFinish(finish)
  if (failed) throw new TranslationError(failed, 502)
  const stop: StopReason = blocked
    ? 'content_filter'
    : stopOfFinish(
        finish,
        parts.some((p) => p.type === 'tool_call'),
      )
  return {
    id: str(body.responseId) ?? newId(ctx, 'resp'),
    model: str(body.modelVersion) ?? '',
    parts,
    stop,
    usage: fullUsage(usageFromGemini(body.usageMetadata)),
  }
}

/** A Gemini client's parts for IR parts (opaques wrapped; CARRY for each tool call). */
export function clientParts(parts: Part[], ctx?: CodecContext): Body[] {
  const out: Body[] = []
  const reasoning: Part[] = []
  let firstCall = true
  for (const part of parts) {
    if (part.type === 'text') out.push({text: part.text})
    else if (part.type === 'reasoning') {
      reasoning.push(part)
      const signature = wrapReasoning('gemini', part)
      if (part.text || signature)
        out.push({text: part.text, thought: true, ...(signature && {thoughtSignature: signature})})
    } else if (part.type === 'tool_call') {
      if (hasForeignOpaque(reasoning, 'gemini')) ctx?.carry?.set(part.id, [...reasoning])
      out.push({
        functionCall: {name: part.name, args: parseArgs(part.arguments), id: part.id},
        ...callSignature(part.signature, firstCall),
      })
      firstCall = false
    } else if (part.type === 'image' && part.data)
      out.push({inlineData: {mimeType: part.mediaType ?? 'image/png', data: part.data}})
  }
  return out
}

function encodeResponse(response: Response, ctx?: CodecContext): Record<string, unknown> {
  const grounding = groundingOf(searchesOf(response.parts))
  return {
    candidates: [
      {
        content: {role: 'model', parts: clientParts(response.parts, ctx)},
        finishReason: finishReasonOf(response.stop),
        index: 0,
        ...(grounding ? {groundingMetadata: grounding} : {}),
      },
    ],
    usageMetadata: usageToGemini(response.usage),
    modelVersion: ctx?.request?.model ?? response.model,
    responseId: response.id,
  }
}

export const geminiCodec: Codec = {
  family: 'gemini',
  decodeRequest,
  encodeRequest,
  path: (model, stream) =>
    `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
  decodeResponse,
  encodeResponse,
  streamDecoder: (ctx) => new GeminiStreamDecoder(ctx),
  streamEncoder: (ctx) => new GeminiStreamEncoder(ctx),
}
