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
import {isObject} from './responses-items.js'

type Body = Record<string, unknown>

/** Keywords whose value maps names (of properties, of definitions) to schemas: the names are no keywords. */
const NAMED_SCHEMAS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])

/** Keywords whose value is data, not a schema (an enum's values, a default object). */
const DATA = new Set(['enum', 'const', 'default', 'example', 'examples', 'required', 'dependentRequired'])

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
  let tools: FunctionTool[] | undefined
  const keys = new Set(refused)
  request.tools.forEach((tool, i) => {
    const parameters = stripSchemaKeys(tool.parameters, keys)
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
  if (!Array.isArray(body.tools) || refused.length === 0) return undefined
  let tools: unknown[] | undefined
  const keys = new Set(refused)
  body.tools.forEach((tool: unknown, i) => {
    const fn = isObject(tool) ? tool.function : undefined
    if (!isObject(tool) || !isObject(fn) || !isObject(fn.parameters)) return
    const parameters = stripSchemaKeys(fn.parameters as JsonSchema, keys)
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
  return strip(schema, s) as JsonSchema
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
    if (NAMED_SCHEMAS.has(key) && isObject(value)) {
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
