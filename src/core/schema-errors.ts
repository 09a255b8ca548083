/**
 * The one place that turns JSON Schema (ajv) errors into sentences: the field in the user's
 * words, what it must be, and an example. Raw schema text (`must match pattern "^https?://…"`)
 * never reaches a user.
 */

/** The parts of an ajv `ErrorObject` this needs (core does not import ajv). */
export interface SchemaError {
  keyword: string
  instancePath: string
  params: Record<string, unknown>
  message?: string
}

/** How to talk about one field: its name for the user (a flag) and what a good value looks like. */
export interface FieldHelp {
  /** e.g. `--base-url` */
  label?: string
  /** e.g. `an http(s) URL with no spaces, query or fragment` */
  rule?: string
  /** e.g. `https://api.openai.com/v1` */
  example?: string
}

/** `/routes/chat/0/provider` -> `routes.chat[0].provider`; `` -> the whole value. */
export function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, part) => (/^\d+$/.test(part) ? `${path}[${part}]` : path ? `${path}.${part}` : part), '')
}

/**
 * Sentences for the errors of one value. `fields` is keyed by the path of {@link fieldPath}, or
 * by its last name (`baseUrl`), so one entry covers every place a field occurs.
 */
export function describeSchemaErrors(
  subject: string,
  errors: readonly SchemaError[],
  fields: Record<string, FieldHelp> = {},
): string[] {
  // `oneOf` explains itself; the errors of its branches below it would only repeat it
  const oneOfPaths = errors.filter((e) => e.keyword === 'oneOf').map((e) => e.instancePath)
  const kept = errors.filter(
    (e) =>
      e.keyword === 'oneOf' ||
      !oneOfPaths.some((p) => e.instancePath === p || e.instancePath.startsWith(`${p}/`)),
  )
  const sentences = kept.map((e) => sentence(subject, e, fields))
  return [...new Set(sentences)]
}

function helpFor(path: string, fields: Record<string, FieldHelp>): FieldHelp {
  const last =
    path
      .replace(/\[\d+\]$/, '')
      .split('.')
      .pop() ?? path
  return fields[path] ?? fields[last] ?? {}
}

function sentence(subject: string, e: SchemaError, fields: Record<string, FieldHelp>): string {
  const path = fieldPath(e.instancePath)
  const help = helpFor(path, fields)
  const name = path ? `${subject} field "${path}"${help.label ? ` (${help.label})` : ''}` : `The ${subject}`
  const example = help.example === undefined ? '' : `, e.g. ${help.example}`
  const p = e.params
  switch (e.keyword) {
    case 'required': {
      const missing = String(p.missingProperty)
      const child = helpFor(path ? `${path}.${missing}` : missing, fields)
      const childExample = child.example === undefined ? '' : `, e.g. ${child.example}`
      return `${name} lacks the required field "${missing}"${child.label ? ` (${child.label})` : ''}${childExample}.`
    }
    case 'additionalProperties':
      return `${name} has a field gwctl does not know: "${String(p.additionalProperty)}"; remove it (check its spelling).`
    case 'enum':
      return `${name} must be one of ${((p.allowedValues as unknown[]) ?? []).map(String).join(', ')}.`
    case 'pattern':
    case 'format':
      return `${name} must be ${help.rule ?? 'in the documented format'}${example}.`
    case 'type':
      return `${name} must be ${article(String(p.type))}${example}.`
    case 'minimum':
      return `${name} must be ${String(p.limit)} or more${example}.`
    case 'maximum':
      return `${name} must be ${String(p.limit)} or less${example}.`
    case 'minLength':
      return Number(p.limit) <= 1
        ? `${name} must not be empty${example}.`
        : `${name} must be at least ${String(p.limit)} characters long${example}.`
    case 'maxLength':
      return `${name} must be at most ${String(p.limit)} characters long.`
    case 'oneOf':
      return `${name} must be ${help.rule ?? 'exactly one of the allowed shapes'}${example}.`
    default:
      return `${name} ${e.message ?? 'is not valid'}${example}.`
  }
}

function article(type: string): string {
  const words: Record<string, string> = {
    object: 'an object ({...})',
    array: 'a list ([...])',
    string: 'a string',
    integer: 'a whole number',
    number: 'a number',
    boolean: 'true or false',
  }
  return words[type] ?? `of type ${type}`
}
