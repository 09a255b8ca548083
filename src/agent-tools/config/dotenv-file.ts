/**
 * Edits a `.env` file (Gemini CLI's `~/.gemini/.env`) line by line: only the line that defines a
 * key is replaced, added or removed; comments, other lines, quoting and line endings stay.
 * Gemini CLI reads it with dotenv, where the last definition of a key wins: so does this editor.
 */
import {eolOf} from './file-io.js'

const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=(.*)$/

function splitLines(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\n)/)
}

function lineKey(line: string): string | undefined {
  return LINE.exec(line.replace(/\r?\n$/, ''))?.[1]
}

/** The index of the last line defining `key`, or -1. */
function lastIndex(lines: string[], key: string): number {
  for (let i = lines.length - 1; i >= 0; i--) if (lineKey(lines[i]) === key) return i
  return -1
}

function unquote(raw: string): string {
  let v = raw.trim()
  const quote = v[0]
  if ((quote === '"' || quote === "'" || quote === '`') && v.lastIndexOf(quote) > 0)
    return v.slice(1, v.lastIndexOf(quote))
  const hash = v.search(/\s#/)
  if (hash >= 0) v = v.slice(0, hash)
  return v.trim()
}

/** The value of `key` as dotenv reads it, or undefined. */
export function getEnvValue(text: string | null, key: string): string | undefined {
  if (text === null) return undefined
  const lines = splitLines(text)
  const i = lastIndex(lines, key)
  if (i < 0) return undefined
  return unquote(LINE.exec(lines[i].replace(/\r?\n$/, ''))![2])
}

/** The whole line (without its line break) that defines `key`, or undefined. */
export function getEnvLine(text: string | null, key: string): string | undefined {
  if (text === null) return undefined
  const lines = splitLines(text)
  const i = lastIndex(lines, key)
  return i < 0 ? undefined : lines[i].replace(/\r?\n$/, '')
}

/**
 * `text` with the line of `key` replaced by `line` (`KEY=value` when `line` is a value pair),
 * appended when the key is not there; `line` undefined removes every definition of the key.
 */
export function setEnvLine(text: string, key: string, line: string | undefined): string {
  const eol = eolOf(text)
  const lines = splitLines(text)
  if (line === undefined) return lines.filter((l) => lineKey(l) !== key).join('')
  const i = lastIndex(lines, key)
  if (i >= 0) {
    const ending = /\r?\n$/.exec(lines[i])?.[0] ?? ''
    lines[i] = line + ending
    return lines.join('')
  }
  const body = lines.join('')
  return body + (body === '' || body.endsWith('\n') ? '' : eol) + line + eol
}

/** `text` with `key=value` (an existing `export ` prefix is kept). */
export function setEnvValue(text: string, key: string, value: string): string {
  const old = getEnvLine(text, key)
  const prefix = old && /^\s*export\s/.test(old) ? 'export ' : ''
  return setEnvLine(text, key, `${prefix}${key}=${value}`)
}
