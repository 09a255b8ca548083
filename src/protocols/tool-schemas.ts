/**
 * Tool schemas held to what an upstream takes, once it refused some of their keywords. Gemini
 * behind a chat completions server (Google's OpenAI-compatible endpoint, LiteLLM, new-api, a
 * Vertex relay), and a relay that turns `parametersJsonSchema` into the older `parameters` Schema
 * object, read a tool's JSON Schema as Gemini's OpenAPI subset and refuse every keyword outside
 * it ("Invalid JSON payload received. Unknown name \"$schema\" at 'tools[0].function_declarations[0].
 * parameters': Cannot find field."): `$schema`, `exclusiveMinimum`, `propertyNames`, `const`,
 * `additionalProperties`, `$ref` and `$defs`, which Claude Code's, Codex's and opencode's tools
 * carry. The keywords it named go from every schema (daemon/router/adaptations.ts learns them),
 * what they meant kept where another keyword can say it. Pure and deterministic: a request sends
 * the same bytes on every turn (the upstream's prompt cache).
 */
import type {FunctionTool, JsonSchema, Request} from './ir.js'
import {arrayElements, edited, type Edit, memberCuts, type MemberSpan, objectMembers} from './json-spans.js'
import {nullTypeMembers} from './null-type-bytes.js'
import {isObject} from './responses-items.js'

export {holdsNullType} from './null-type-bytes.js'
import {DATA, mapNamed, mapSchema, NAMED_SCHEMAS} from './schema-walk.js'

type Body = Record<string, unknown>

/** The keywords that hold the definitions a `$ref` points to. */
const DEFINITIONS = ['$defs', 'definitions']

/** How many `$ref`s one schema has inlined at most (a schema of shared definitions could grow past any size). */
const MAX_INLINED = 200

interface Strip {
  refused: ReadonlySet<string>
  /** `$ref` (or its definitions) refused: local references are inlined, the definitions dropped. */
  inline: boolean
  root: unknown
  /** The references being inlined, outermost first (a cycle is cut). */
  refs: string[]
  inlined: number
}

/**
 * `request` with `refused` keywords gone from its tools' schemas (copy on write: a request whose
 * schemas hold none of them is returned as it came).
 */
export function withoutSchemaKeys(request: Request, refused: readonly string[]): Request {
  if (request.tools.length === 0 || refused.length === 0) return request
  const keys = new Set(refused)
  return withSchemas(request, (schema) => stripSchemaKeys(schema, keys))
}

/**
 * `request` with every type list of its tools' schemas written as one type ({@link oneTypeSchema}),
 * for an upstream that reads them as Gemini's `Schema` proto and refused a list (copy on write).
 */
export function withOneTypes(request: Request): Request {
  return request.tools.length === 0 ? request : withSchemas(request, oneTypeSchema)
}

/** `request` with `change` made to each tool's schema; the same request when none changed. */
function withSchemas(request: Request, change: (schema: JsonSchema) => JsonSchema): Request {
  let tools: FunctionTool[] | undefined
  request.tools.forEach((tool, i) => {
    const parameters = change(tool.parameters)
    if (parameters !== tool.parameters) (tools ??= request.tools.slice())[i] = {...tool, parameters}
  })
  return tools ? {...request, tools} : request
}

/**
 * A chat completions body as a client sent it (passed through untranslated: a chat client on a
 * chat upstream), with `refused` keywords gone from every `tools[].function.parameters` (the
 * same stripping as {@link withoutSchemaKeys}), or undefined when none held any (the body's
 * bytes then go as they came). Copy on write: `body` itself is left as it is.
 */
export function chatBodyWithoutSchemaKeys(body: Body, refused: readonly string[]): Body | undefined {
  if (refused.length === 0) return undefined
  const keys = new Set(refused)
  return chatBodyWithSchemas(body, (schema) => stripSchemaKeys(schema, keys))
}

/**
 * A chat completions body passed through, with its tools' type lists written as one type each
 * ({@link oneTypeSchema}), or undefined when none held one (copy on write).
 */
export const chatBodyWithOneTypes = (body: Body): Body | undefined => chatBodyWithSchemas(body, oneTypeSchema)

function chatBodyWithSchemas(body: Body, change: (schema: JsonSchema) => JsonSchema): Body | undefined {
  if (!Array.isArray(body.tools)) return undefined
  let tools: unknown[] | undefined
  body.tools.forEach((tool: unknown, i) => {
    const fn = isObject(tool) ? tool.function : undefined
    if (!isObject(tool) || !isObject(fn) || !isObject(fn.parameters)) return
    const parameters = change(fn.parameters as JsonSchema)
    if (parameters !== fn.parameters)
      (tools ??= (body.tools as unknown[]).slice())[i] = {...tool, function: {...fn, parameters}}
  })
  return tools ? {...body, tools} : undefined
}

/**
 * One schema without the `refused` keywords, recursively, its property names left alone (a
 * property called `const` stays). Where a keyword's meaning fits another one it stays said: a
 * `const` string as a one-value `enum`, an `exclusiveMinimum` (`exclusiveMaximum`) number as a
 * `minimum` (`maximum`), one step in for an integer. Where `$ref`, `$defs` or `definitions` is
 * refused, local references (`#/$defs/X`, `#/definitions/X`, any `#/...` pointer) are inlined,
 * their siblings kept over the definition, and the definitions dropped; a reference to itself
 * (or to nothing) becomes `{}` with its name in the description.
 */
export function stripSchemaKeys(schema: JsonSchema, refused: ReadonlySet<string>): JsonSchema {
  const inline = refused.has('$ref') || DEFINITIONS.some((k) => refused.has(k))
  const s: Strip = {refused, inline, root: schema, refs: ['#'], inlined: 0}
  const out = strip(schema, s) as JsonSchema
  // (the top level's `type: object` stays, whatever was learned: Vertex refuses parameters without
  // it, "parameters schema should be of type OBJECT", and so does a forced call)
  return schema.type === 'object' && out.type === undefined ? {type: 'object', ...out} : out
}

/**
 * Keywords that say what one type's values hold: with a type list made `anyOf`, they go to the
 * branch of their type.
 */
const TYPE_KEYWORDS: ReadonlyMap<string, readonly string[]> = new Map([
  ['array', ['items', 'minItems', 'maxItems']],
  ['object', ['properties', 'required', 'minProperties', 'maxProperties']],
])

/**
 * One schema with each JSON Schema type list as Gemini's OpenAPI subset says it (its `Schema`
 * proto's `type` is one enum: a list is refused, "Unknown name \"type\" at '…': Proto field is
 * not repeating, cannot start list."), recursively: `["T", "null"]` as `type: T, nullable: true`
 * (a `null` gone from its `enum`), one type as itself, several as `anyOf` one branch each (the
 * keywords of arrays and objects in their branch, the rest on the schema); a tuple's `items: [S…]`
 * as `items: S`, several as `items: {anyOf: [S…]}`. Copy on write (a schema with no list is
 * returned as it came) and deterministic: a request sends the same bytes on every turn.
 */
export function oneTypeSchema(schema: JsonSchema): JsonSchema {
  return oneTypes(schema) as JsonSchema
}

function oneTypes(schema: unknown): unknown {
  return mapSchema(
    schema,
    (key, value, walk) => {
      if (NAMED_SCHEMAS.has(key) && isObject(value)) return mapNamed(value, walk)
      if (key === 'items' && Array.isArray(value)) {
        const items = walk(value) as unknown[]
        return items.length === 1 ? items[0] : items.length === 0 ? {} : {anyOf: items}
      }
      return key !== 'type' && !DATA.has(key) ? walk(value) : value
    },
    (node) => (Array.isArray(node.type) ? oneType(node, node.type) : node),
  )
}

/** A schema whose `type` is a list, with one type (or `anyOf`) in its place. */
function oneType(node: Body, list: unknown[]): Body {
  const named = [...new Set(list.filter((t): t is string => typeof t === 'string'))]
  const nullable = named.includes('null')
  const kinds = named.filter((t) => t !== 'null')
  const moved = kinds.length > 1 && node.anyOf === undefined
  const out: Body = {}
  for (const key of Object.keys(node)) {
    if (key !== 'type') {
      if (!(moved && kinds.some((k) => TYPE_KEYWORDS.get(k)?.includes(key)))) out[key] = node[key]
      continue
    }
    if (kinds.length === 0) {
      if (nullable) out.type = 'null'
      continue
    }
    // (beside an anyOf of its own, the first type: one anyOf per schema)
    if (kinds.length === 1 || !moved) out.type = kinds[0]
    else
      out.anyOf = kinds.map((kind) => {
        const branch: Body = {type: kind}
        for (const k of TYPE_KEYWORDS.get(kind) ?? []) if (node[k] !== undefined) branch[k] = node[k]
        return branch
      })
    if (nullable) out.nullable = true
  }
  if (nullable && kinds.length > 0) {
    // (a `nullable: false` beside the list, in whatever order its keys came, says less than it)
    out.nullable = true
    // null is what `nullable` says now; an enum of null alone would allow nothing
    if (Array.isArray(out.enum)) {
      const values = out.enum.filter((v) => v !== null)
      if (values.length > 0) out.enum = values
      else delete out.enum
    }
  }
  return out
}

function strip(schema: unknown, s: Strip): unknown {
  if (Array.isArray(schema)) {
    let out: unknown[] | undefined
    for (let i = 0; i < schema.length; i++) {
      const next = strip(schema[i], s)
      if (next !== schema[i]) (out ??= schema.slice())[i] = next
    }
    return out ?? schema
  }
  if (!isObject(schema)) return schema
  if (s.inline && typeof schema.$ref === 'string') return inlineRef(schema, schema.$ref, s)
  let out: Body | undefined
  for (const key of Object.keys(schema)) {
    const value = schema[key]
    if (s.refused.has(key) || (s.inline && DEFINITIONS.includes(key))) {
      out ??= {...schema}
      delete out[key]
      continue
    }
    let next = value
    // (draft-07 `dependencies`: an object's values are schemas, a list's are names)
    if ((NAMED_SCHEMAS.has(key) || key === 'dependencies') && isObject(value)) {
      let named: Body | undefined
      for (const name of Object.keys(value)) {
        const inner = strip(value[name], s)
        if (inner !== value[name]) (named ??= {...value})[name] = inner
      }
      next = named ?? value
    } else if (!DATA.has(key)) next = strip(value, s)
    if (next !== value) (out ??= {...schema})[key] = next
  }
  if (out) keepMeaning(schema, out, s.refused)
  return out ?? schema
}

/** What a dropped `const` or exclusive bound said, in a keyword that is kept (when not there already). */
function keepMeaning(schema: Body, out: Body, refused: ReadonlySet<string>): void {
  if (
    refused.has('const') &&
    typeof schema.const === 'string' &&
    out.enum === undefined &&
    !refused.has('enum')
  )
    out.enum = [schema.const]
  const integer = schema.type === 'integer'
  for (const [exclusive, bound, step] of [
    ['exclusiveMinimum', 'minimum', 1],
    ['exclusiveMaximum', 'maximum', -1],
  ] as const) {
    const n = schema[exclusive]
    if (!refused.has(exclusive) || typeof n !== 'number' || out[bound] !== undefined || refused.has(bound))
      continue
    out[bound] = integer && Number.isInteger(n) ? n + step : n
  }
}

/** A `{$ref, ...siblings}` node with the schema it points to in its place. */
function inlineRef(node: Body, ref: string, s: Strip): unknown {
  const {$ref: _, ...siblings} = node
  const rest = strip(siblings, s) as Body
  const name = ref.slice(ref.lastIndexOf('/') + 1) || ref
  const target = s.refs.includes(ref) || s.inlined >= MAX_INLINED ? undefined : resolve(s.root, ref)
  if (target === undefined) {
    // a cycle, a reference to nothing or to another document: any value, named
    const said = typeof rest.description === 'string' ? `${rest.description} ` : ''
    return {...rest, description: `${said}(${name}${s.refs.includes(ref) ? ', as defined above' : ''})`}
  }
  s.inlined++
  s.refs.push(ref)
  const expanded = strip(target, s)
  s.refs.pop()
  return isObject(expanded) ? {...expanded, ...rest} : rest
}

/** The value a local JSON pointer (`#/$defs/Name`) points to in `root`, if any. */
function resolve(root: unknown, ref: string): unknown {
  if (ref === '#') return root
  if (!ref.startsWith('#/')) return undefined
  let at: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    let segment = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    try {
      segment = decodeURIComponent(segment)
    } catch {
      // not percent-encoded
    }
    if (Array.isArray(at)) at = at[Number(segment)]
    else if (isObject(at) && Object.hasOwn(at, segment)) at = at[segment]
    else return undefined
  }
  return at
}

/**
 * `tool` with a parameters schema that is one object, where its top level is made of others
 * (`oneOf`, `anyOf`, `allOf`: a zod union of an MCP server's tool). Anthropic refuses such a
 * schema ("input_schema does not support oneOf, allOf, or anyOf at the top level"), OpenAI too
 * ("schema must have type 'object' and not have 'oneOf'/'anyOf'/'allOf'/'enum'/'not' at the top
 * level"), and one refused tool fails every request of the session. The branches' properties are
 * merged (a property several branches give differently: `anyOf` its distinct schemas), `required`
 * holds the top level's own, every `allOf` branch's, and those every `oneOf`/`anyOf` branch
 * requires; the forms the model may choose from are said in the description. Its `type`s first
 * made ones strict servers take ({@link typedSchema}). Copy on write (a tool without those keywords
 * nor a null type is returned as it came, for the price of a walk of its schema's keys) and
 * deterministic: the same bytes on every turn.
 */
export function objectTool(tool: FunctionTool): FunctionTool {
  const p = typedSchema(tool.parameters)
  if (p.oneOf === undefined && p.anyOf === undefined && p.allOf === undefined)
    return p === tool.parameters ? tool : {...tool, parameters: p}
  const {oneOf: _o, anyOf: _a, allOf, ...own} = p
  const properties: Body = isObject(own.properties) ? {...own.properties} : {}
  const ownNames = new Set(Object.keys(properties))
  const required = new Set(strings(own.required))
  const given = new Map<string, unknown[]>()
  const add = (branch: Body): void => {
    if (!isObject(branch.properties)) return
    for (const [name, schema] of Object.entries(branch.properties)) {
      if (ownNames.has(name)) continue // the top level's own schema of it stands
      const seen = given.get(name)
      if (!seen) given.set(name, [schema])
      else if (!seen.some((s) => stableString(s) === stableString(schema))) seen.push(schema)
    }
  }
  for (const branch of branches(allOf, p)) {
    add(branch)
    for (const name of strings(branch.required)) required.add(name)
  }
  const forms: string[] = []
  for (const key of ['oneOf', 'anyOf'] as const) {
    const alternatives = branches(p[key], p)
    if (alternatives.length === 0) continue
    let common: Set<string> | undefined
    for (const branch of alternatives) {
      add(branch)
      const names = strings(branch.required)
      common = common ? new Set(names.filter((n) => common!.has(n))) : new Set(names)
    }
    for (const name of common ?? []) required.add(name)
    forms.push(alternatives.map(formText).join(' | '))
  }
  for (const [name, schemas] of given) properties[name] = schemas.length === 1 ? schemas[0] : {anyOf: schemas}
  const parameters: JsonSchema = {...own, type: 'object', properties}
  if (required.size > 0) parameters.required = [...required]
  else delete parameters.required
  if (forms.length === 0) return {...tool, parameters}
  const said = `Arguments take one of these forms: ${forms.join('; and one of: ')}`
  return {...tool, parameters, description: tool.description ? `${tool.description}\n\n${said}` : said}
}

/**
 * A tool's schema with the `type`s strict servers take: its top level `"type": "object"` where its
 * `type` is not a string (JSON null, missing, a list), in the place the `type` had, and each
 * `"type": null` inside it left out, the rest of that subschema kept (any value). Codex Desktop's
 * `automation_update` tool (the `codex_app` namespace, once Automations load) goes with
 * `"parameters": {"type": null, ...}` and `"type": null` on its nullable fields (openai/codex
 * #36441), and JSON null is no JSON Schema type: DeepSeek refuses every request that carries it
 * ("Invalid schema for function 'codex_app__automation_update': schema must be a JSON Schema of
 * 'type: \"object\"', got 'type: null'.", farion1231/cc-switch #4705, #5300), OpenAI too
 * ("invalid_function_parameters: ... None is not valid under any of the given schemas.",
 * Wei-Shaw/sub2api #5364). Copy on write: a schema with a string `type` at its top and no null one
 * inside is returned as it came (a walk of its keys, nothing copied).
 */
export function typedSchema(schema: JsonSchema): JsonSchema {
  const top =
    typeof schema.type === 'string'
      ? schema
      : 'type' in schema
        ? {...schema, type: 'object'}
        : {type: 'object', ...schema}
  return withoutNullTypes(top) as JsonSchema
}

/** A schema without its `"type": null` keys, recursively (names of properties and data left alone). */
function withoutNullTypes(schema: unknown): unknown {
  if (Array.isArray(schema)) {
    let out: unknown[] | undefined
    for (let i = 0; i < schema.length; i++) {
      const next = withoutNullTypes(schema[i])
      if (next !== schema[i]) (out ??= schema.slice())[i] = next
    }
    return out ?? schema
  }
  if (!isObject(schema)) return schema
  let out: Body | undefined
  // (`for in`, no array of keys: this walk runs over every tool of every translated request)
  for (const key in schema) {
    const value = schema[key]
    if (key === 'type') {
      if (value === null) delete (out ??= {...schema}).type
      continue
    }
    if (typeof value !== 'object' || value === null || DATA.has(key)) continue
    let next: unknown
    // (draft-07 `dependencies`: an object's values are schemas, a list's are names)
    if ((NAMED_SCHEMAS.has(key) || key === 'dependencies') && isObject(value)) {
      let named: Body | undefined
      for (const name in value) {
        const inner = withoutNullTypes(value[name])
        if (inner !== value[name]) (named ??= {...value})[name] = inner
      }
      next = named ?? value
    } else next = withoutNullTypes(value)
    if (next !== value) (out ??= {...schema})[key] = next
  }
  return out ?? schema
}

/**
 * A body passed through untranslated (Codex to a Responses server: ../daemon/router/proxy.ts
 * `passedResponses`; it reads a chat or Messages body's tools too, though proxy.ts passes none) with its tools' schemas typed as a translated request's
 * are ({@link typedSchema}), or undefined when its tools hold no `"type": null` (the test of
 * {@link holdsNullType}: a clean body is not parsed and goes as it came) or no tool schema changed.
 * The tools in `tools` (a Responses function's `parameters`, a namespace's functions, a chat
 * tool's `function.parameters`, a Messages tool's `input_schema`) and in a Responses request's
 * input items that hold tools (Codex's `additional_tools` item, a `tool_search_output`), which
 * carry the tool in the history after it loaded (SaladDay/cc-switch-cli #351). Only the bytes that
 * change are changed, in place (./json-spans.ts): a member `"type": null` cut out with the
 * separator after it, a schema's top `type` written `"object"`; every other byte goes as it came,
 * the history's 64-bit integers (a `tool_use.input` id above 2^53), its key order and its `1.0`
 * included, which a parse and a write of the whole body changed (review76 #1).
 */
export function withTypedToolSchemas(body: Buffer): Buffer | undefined {
  const members = nullTypeMembers(body)
  if (members === undefined) return undefined
  const edits: Edit[] = []
  for (const member of members) {
    for (const item of arrayElements(body, member.value) ?? []) {
      if (member.name === 'tools') toolEdits(body, item.start, edits)
      else {
        const inner = objectMembers(body, item.start)
        if (inner?.members.some((m) => m.name === 'tools' && body[m.value] === 0x5b))
          toolEdits(body, item.start, edits)
      }
    }
  }
  return edits.length > 0 ? edited(body, edits) : undefined
}

/**
 * The edits that type the schema of the tool of any family whose bytes start at `at`:
 * `parameters` (Responses), `input_schema` (Messages), its `function`'s (chat), its `tools`' (a
 * Responses namespace, an input item of tools).
 */
function toolEdits(body: Buffer, at: number, edits: Edit[]): void {
  const tool = objectMembers(body, at)
  if (tool === undefined) return
  for (const m of tool.members) {
    const c = body[m.value]
    if ((m.name === 'parameters' || m.name === 'input_schema') && c === 0x7b)
      topSchemaEdits(body, m.value, edits)
    else if (m.name === 'function' && c === 0x7b) toolEdits(body, m.value, edits)
    else if (m.name === 'tools' && c === 0x5b)
      for (const t of arrayElements(body, m.value) ?? []) toolEdits(body, t.start, edits)
  }
}

/** A tool schema's edits, as {@link typedSchema} types it: a top `type` that is no string written `"object"` (put first where it has none), each nested null one cut. */
function topSchemaEdits(body: Buffer, at: number, edits: Edit[]): void {
  const schema = objectMembers(body, at)
  if (schema === undefined) return
  const types = schema.members.filter((m) => m.name === 'type')
  if (types.length === 0)
    edits.push({
      from: at + 1,
      to: at + 1,
      bytes: Buffer.from(schema.members.length > 0 ? '"type":"object",' : '"type":"object"'),
    })
  for (const m of types)
    if (body[m.value] !== 0x22) edits.push({from: m.value, to: m.end, bytes: Buffer.from('"object"')})
  memberEdits(body, schema.members, edits, false)
}

/**
 * The edits of a schema's members as {@link withoutNullTypes} walks them: each `"type": null`
 * cut (`nulls`: not at a tool schema's top, which {@link topSchemaEdits} types), each subschema
 * walked, names of properties and data left alone.
 */
function memberEdits(body: Buffer, members: MemberSpan[], edits: Edit[], nulls = true): void {
  const cut = new Set<MemberSpan>()
  for (const m of members) {
    const c = body[m.value]
    if (m.name === 'type') {
      if (nulls && body.toString('latin1', m.value, m.end) === 'null') cut.add(m)
      continue
    }
    if ((c !== 0x7b && c !== 0x5b) || DATA.has(m.name)) continue
    if (c === 0x7b && (NAMED_SCHEMAS.has(m.name) || m.name === 'dependencies'))
      for (const named of objectMembers(body, m.value)?.members ?? []) schemaEdits(body, named.value, edits)
    else schemaEdits(body, m.value, edits)
  }
  if (cut.size > 0) edits.push(...memberCuts(members, cut))
}

/** The edits of the subschema (or array of them) whose bytes start at `at`. */
function schemaEdits(body: Buffer, at: number, edits: Edit[]): void {
  if (body[at] === 0x5b) {
    for (const e of arrayElements(body, at) ?? []) schemaEdits(body, e.start, edits)
    return
  }
  const object = objectMembers(body, at)
  if (object !== undefined) memberEdits(body, object.members, edits)
}

/** `tools`, each with an object schema ({@link objectTool}); the same array when none changed. */
export function objectTools(tools: FunctionTool[]): FunctionTool[] {
  let out: FunctionTool[] | undefined
  for (let i = 0; i < tools.length; i++) {
    const next = objectTool(tools[i])
    if (next !== tools[i]) (out ??= tools.slice())[i] = next
  }
  return out ?? tools
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []

/** The object branches of a union (a local `$ref` read where it points). */
function branches(value: unknown, root: unknown): Body[] {
  if (!Array.isArray(value)) return []
  return value
    .map((b) => (isObject(b) && typeof b.$ref === 'string' ? resolve(root, b.$ref) : b))
    .filter(isObject)
}

/** One form as the description says it: `{a, b?}` (required names plain, optional ones marked). */
function formText(branch: Body): string {
  const names = isObject(branch.properties) ? Object.keys(branch.properties) : []
  if (names.length === 0)
    return typeof branch.title === 'string'
      ? branch.title
      : typeof branch.type === 'string'
        ? branch.type
        : '{}'
  const required = new Set(strings(branch.required))
  return `{${names.map((n) => (required.has(n) ? n : `${n}?`)).join(', ')}}`
}

/** JSON with sorted keys, to tell schemas apart whatever their key order. */
function stableString(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableString).join(',')}]`
  if (isObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableString(value[k])}`)
      .join(',')}}`
  return JSON.stringify(value) ?? 'null'
}
