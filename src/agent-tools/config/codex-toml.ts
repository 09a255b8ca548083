/**
 * Edits Codex's `config.toml` by the smallest span: the top-level `model_provider` line and the
 * `[model_providers.gwctl]` table are the only bytes gwctl adds, replaces or removes; every other
 * key, comment and blank line stays. smol-toml parses the file before (a broken file is refused)
 * and after each edit, and the result must equal the original plus exactly gwctl's change:
 * otherwise nothing is written.
 */
import {parse, TomlError} from 'smol-toml'

import {ConfigError} from '../../core/errors.js'
import {eolOf} from './file-io.js'

/** The provider id gwctl adds to Codex. */
export const CODEX_PROVIDER_ID = 'gwctl'

type Table = Record<string, unknown>

/** Parses `text`; throws exit 3 with the parser's message. */
export function parseToml(text: string, path: string): Table {
  try {
    return parse(text) as Table
  } catch (error) {
    const message = error instanceof TomlError ? error.message.split('\n')[0] : (error as Error).message
    throw new ConfigError(`${path} does not parse: ${message}. Nothing was written.`, {
      code: 'config_invalid',
      hint: 'Fix the file by hand (or move it away), then run the command again.',
    })
  }
}

function splitLines(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\n)/)
}

const HEADER = /^\s*\[/
const MODEL_PROVIDER = /^\s*model_provider\s*=/
const GWCTL_HEADER = new RegExp(`^\\s*\\[\\s*model_providers\\s*\\.\\s*(["']?)${CODEX_PROVIDER_ID}\\1\\s*\\]`)

function firstHeader(lines: string[]): number {
  const i = lines.findIndex((l) => HEADER.test(l))
  return i < 0 ? lines.length : i
}

/** The raw top-level `model_provider` line (no line break), or undefined. */
export function modelProviderLine(text: string | null): string | undefined {
  if (text === null) return undefined
  const lines = splitLines(text)
  const top = lines.slice(0, firstHeader(lines))
  const line = top.find((l) => MODEL_PROVIDER.test(l))
  return line?.replace(/\r?\n$/, '')
}

/** The `[model_providers.gwctl]` table's lines [start, end), or undefined. */
function gwctlSection(lines: string[]): {start: number; end: number} | undefined {
  const start = lines.findIndex((l) => GWCTL_HEADER.test(l))
  if (start < 0) return undefined
  let end = start + 1
  while (end < lines.length && !HEADER.test(lines[end])) end++
  // trailing blank lines belong to the gap before the next table
  while (end > start + 1 && lines[end - 1].trim() === '') end--
  return {start, end}
}

/** The raw `[model_providers.gwctl]` section, or undefined. */
export function gwctlSectionText(text: string | null): string | undefined {
  if (text === null) return undefined
  const lines = splitLines(text)
  const s = gwctlSection(lines)
  return s ? lines.slice(s.start, s.end).join('') : undefined
}

/** `text` with the top-level `model_provider` line replaced (`line` undefined: removed). */
export function setModelProviderLine(text: string, line: string | undefined): string {
  const eol = eolOf(text)
  const lines = splitLines(text)
  const top = firstHeader(lines)
  const i = lines.slice(0, top).findIndex((l) => MODEL_PROVIDER.test(l))
  if (i >= 0) {
    if (line === undefined) lines.splice(i, 1)
    else lines[i] = line + (/\r?\n$/.exec(lines[i])?.[0] ?? eol)
    return lines.join('')
  }
  if (line === undefined) return text
  // after the last top-level line that is not blank, before the first table
  let at = top
  while (at > 0 && lines[at - 1].trim() === '') at--
  if (at > 0 && !lines[at - 1].endsWith('\n')) lines[at - 1] += eol
  lines.splice(at, 0, line + eol)
  return lines.join('')
}

/** `text` with the `[model_providers.gwctl]` section replaced (`section` undefined: removed). */
export function setGwctlSection(text: string, section: string | undefined): string {
  const eol = eolOf(text)
  const lines = splitLines(text)
  const s = gwctlSection(lines)
  if (s) {
    if (section === undefined) {
      // take one blank line before it with it, so an append followed by a removal leaves no gap
      let start = s.start
      if (
        start > 0 &&
        lines[start - 1].trim() === '' &&
        (s.end >= lines.length || lines[s.end].trim() === '')
      )
        start--
      lines.splice(start, s.end - start)
    } else {
      lines.splice(s.start, s.end - s.start, section.endsWith('\n') ? section : section + eol)
    }
    return lines.join('')
  }
  if (section === undefined) return text
  let body = lines.join('')
  if (body !== '' && !body.endsWith('\n')) body += eol
  if (body.trim() !== '') body += eol
  return body + (section.endsWith('\n') ? section : section + eol)
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date)
      ? Object.fromEntries(Object.entries(v as Table).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  )
}

/** The parsed config without gwctl's two entries (an emptied `model_providers` is dropped). */
export function withoutGwctl(config: Table): Table {
  const copy: Table = {...config}
  delete copy.model_provider
  const providers = copy.model_providers as Table | undefined
  if (providers && typeof providers === 'object') {
    const rest = {...providers}
    delete rest[CODEX_PROVIDER_ID]
    if (Object.keys(rest).length === 0) delete copy.model_providers
    else copy.model_providers = rest
  }
  return copy
}

/** The gateway provider table gwctl writes. */
export function gwctlSectionFor(baseUrl: string, key: string, eol: string): string {
  return [
    `[model_providers.${CODEX_PROVIDER_ID}]`,
    `name = "gwctl gateway"`,
    `base_url = "${baseUrl}/v1"`,
    `wire_api = "responses"`,
    `experimental_bearer_token = "${key}"`,
  ].join(eol)
}

/**
 * Points Codex at the gateway: `model_provider = "gwctl"` and the provider table. Refuses
 * (exit 3, nothing written) when the edit would change anything else.
 */
export function bindCodexConfig(text: string | null, path: string, baseUrl: string, key: string): string {
  const source = text ?? ''
  const before = parseToml(source, path)
  const eol = eolOf(source)
  let next = setModelProviderLine(source, `model_provider = "${CODEX_PROVIDER_ID}"`)
  next = setGwctlSection(next, gwctlSectionFor(baseUrl, key, eol))
  let after: Table
  try {
    after = parse(next) as Table
  } catch {
    after = {}
  }
  const provider = (after.model_providers as Table | undefined)?.[CODEX_PROVIDER_ID] as Table | undefined
  if (
    after.model_provider !== CODEX_PROVIDER_ID ||
    provider?.base_url !== `${baseUrl}/v1` ||
    provider?.experimental_bearer_token !== key ||
    canonical(withoutGwctl(after)) !== canonical(withoutGwctl(before))
  ) {
    throw new ConfigError(
      `${path} has a layout gwctl cannot edit safely (its edit would change other settings). Nothing was written.`,
      {
        code: 'config_unsupported',
        hint: `Add the provider by hand: model_provider = "${CODEX_PROVIDER_ID}" at the top and a [model_providers.${CODEX_PROVIDER_ID}] table (README "Agents").`,
      },
    )
  }
  return next
}

/** What Codex's config points at through gwctl's provider (when it selects it). */
export function codexTarget(text: string | null): {baseUrl?: string; key?: string} {
  if (text === null) return {}
  let config: Table
  try {
    config = parse(text) as Table
  } catch {
    return {}
  }
  if (config.model_provider !== CODEX_PROVIDER_ID) return {}
  const provider = (config.model_providers as Table | undefined)?.[CODEX_PROVIDER_ID] as Table | undefined
  const url = typeof provider?.base_url === 'string' ? provider.base_url.replace(/\/v1\/?$/, '') : undefined
  const key =
    typeof provider?.experimental_bearer_token === 'string' ? provider.experimental_bearer_token : undefined
  return {baseUrl: url, key}
}
