/**
 * Edits a JSON settings file (Claude Code's and Gemini CLI's `settings.json`, both of which allow
 * comments) by the smallest span: jsonc-parser's `modify` + `applyEdits` change only the bytes of
 * the value set or removed, so every other key, comment, indentation and line ending stays.
 */
import type {FormattingOptions, ParseError} from 'jsonc-parser'
import {
  applyEdits,
  findNodeAtLocation,
  getNodeValue,
  modify,
  parseTree,
  printParseErrorCode,
} from 'jsonc-parser'

import {ConfigError} from '../../core/errors.js'
import {eolOf} from './file-io.js'

/** Throws exit 3 with the parser's message when `text` is not a JSON object. */
export function checkJsonObject(text: string, path: string): void {
  if (text.trim() === '') return
  const errors: ParseError[] = []
  const root = parseTree(text, errors, {allowTrailingComma: true, disallowComments: false})
  if (errors.length > 0) {
    const e = errors[0]
    const {line, column} = position(text, e.offset)
    throw new ConfigError(
      `${path} does not parse: ${printParseErrorCode(e.error)} at line ${line}, column ${column}. Nothing was written.`,
      {code: 'config_invalid', hint: `Fix the file by hand (or move it away), then run the command again.`},
    )
  }
  if (root && root.type !== 'object') {
    throw new ConfigError(
      `${path} does not parse: the top level is not a JSON object. Nothing was written.`,
      {
        code: 'config_invalid',
        hint: 'Fix the file by hand (or move it away), then run the command again.',
      },
    )
  }
}

function position(text: string, offset: number): {line: number; column: number} {
  const before = text.slice(0, offset).split('\n')
  return {line: before.length, column: before.at(-1)!.length + 1}
}

function formatting(text: string): FormattingOptions {
  const indent = /^([ \t]+)\S/m.exec(text)?.[1]
  return {
    insertSpaces: !indent?.startsWith('\t'),
    tabSize: indent && !indent.startsWith('\t') ? indent.length : 2,
    eol: eolOf(text),
    insertFinalNewline: true,
  }
}

/** The string at `keys`, or undefined (missing or not a string). */
export function getJsonString(text: string | null, keys: string[]): string | undefined {
  if (text === null || text.trim() === '') return undefined
  const root = parseTree(text, [], {allowTrailingComma: true})
  const node = root && findNodeAtLocation(root, keys)
  const value: unknown = node ? getNodeValue(node) : undefined
  return typeof value === 'string' ? value : undefined
}

/** The member names of the object at `keys` (none when it is missing or not an object). */
export function getJsonKeys(text: string | null, keys: string[]): string[] {
  if (text === null || text.trim() === '') return []
  const root = parseTree(text, [], {allowTrailingComma: true})
  const node = root && findNodeAtLocation(root, keys)
  if (node?.type !== 'object') return []
  return (node.children ?? []).flatMap((c) =>
    typeof c.children?.[0]?.value === 'string' ? [c.children[0].value] : [],
  )
}

/** The value at `keys` (any JSON type), or undefined. */
export function getJsonValue(text: string | null, keys: string[]): unknown {
  if (text === null || text.trim() === '') return undefined
  const root = parseTree(text, [], {allowTrailingComma: true})
  const node = root && findNodeAtLocation(root, keys)
  return node ? (getNodeValue(node) as unknown) : undefined
}

/** True when `keys` names an existing value (any type). */
export function hasJsonValue(text: string | null, keys: string[]): boolean {
  if (text === null || text.trim() === '') return false
  const root = parseTree(text, [], {allowTrailingComma: true})
  return Boolean(root && findNodeAtLocation(root, keys))
}

/** `text` with `keys` set to `value` (undefined removes it); an empty file becomes an object. */
export function setJsonValue(text: string, keys: string[], value: unknown): string {
  const base = text.trim() === '' ? '{}' + (text.includes('\r\n') ? '\r\n' : '\n') : text
  const edits = modify(base, keys, value, {formattingOptions: formatting(base)})
  return applyEdits(base, edits)
}

/** True when the object at `keys` exists and has no member. */
export function isEmptyJsonObject(text: string, keys: string[]): boolean {
  const root = parseTree(text, [], {allowTrailingComma: true})
  const node = root && findNodeAtLocation(root, keys)
  return node?.type === 'object' && (node.children?.length ?? 0) === 0
}
