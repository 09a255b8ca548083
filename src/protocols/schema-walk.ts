/**
 * One walker of JSON schemas, copy on write, for the rewrites that change a few keywords of a tool's
 * schema and leave the rest as it came (tool-schemas.ts `oneTypeSchema`, gemini.ts
 * `normaliseSchema`): a schema, or any part of it, with nothing to change is returned as it came,
 * not copied (Gemini CLI sends its ~20 tools' schemas on every turn), and what changed is copied
 * with its keys in their order, so a request sends the same bytes on every turn.
 */
import {isObject} from './responses-items.js'

type Body = Record<string, unknown>

/** Keywords whose value maps names (of properties, of definitions) to schemas: the names are no keywords. */
export const NAMED_SCHEMAS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
])

/** Keywords whose value is data, not a schema (an enum's values, a default object). */
export const DATA = new Set([
  'enum',
  'const',
  'default',
  'example',
  'examples',
  'required',
  'dependentRequired',
])

/** The walk of a value: `mapSchema` again, with the same visit. */
export type Walk = (value: unknown) => unknown

/**
 * `schema` with each object key's value as `visit(key, value, walk)` gives it (`value` itself for
 * none changed; `walk` to go on into it), each array's items walked, then each object as
 * `after(node)` gives it (after its keys).
 */
export function mapSchema(
  schema: unknown,
  visit: (key: string, value: unknown, walk: Walk) => unknown,
  after?: (node: Body) => Body,
): unknown {
  const walk: Walk = (value) => mapSchema(value, visit, after)
  if (Array.isArray(schema)) {
    let out: unknown[] | undefined
    for (let i = 0; i < schema.length; i++) {
      const next = walk(schema[i])
      if (next !== schema[i]) (out ??= schema.slice())[i] = next
    }
    return out ?? schema
  }
  if (!isObject(schema)) return schema
  let out: Body | undefined
  for (const key of Object.keys(schema)) {
    const value = schema[key]
    const next = visit(key, value, walk)
    if (next !== value) (out ??= {...schema})[key] = next
  }
  const node = out ?? schema
  return after ? after(node) : node
}

/** An object of named schemas (`properties`, `$defs`) with each walked, copy on write. */
export function mapNamed(named: Body, walk: Walk): Body {
  let out: Body | undefined
  for (const name of Object.keys(named)) {
    const next = walk(named[name])
    if (next !== named[name]) (out ??= {...named})[name] = next
  }
  return out ?? named
}
