/**
 * Header rewriting: which request headers go upstream (never credentials or cookies; the
 * provider's credential is set in its protocol's form), which answer headers come back, and the
 * request id header each family reads.
 */
import {randomBytes} from 'node:crypto'
import type {IncomingHttpHeaders} from 'node:http'

import type {UpstreamAdaptation} from '../../protocols/translate.js'
import type {Family, ProviderConfig} from '../../store/schema.js'
import {isAnthropicApi} from './billing-line.js'
import {asksSafeguards, withoutAutoModeBetas, withoutBetas} from './safeguards.js'
import {asksToolSearch, withoutToolSearchBetas} from './tool-search.js'

/** Request headers forwarded upstream: protocol headers only, never credentials or cookies. */
const FORWARD_HEADERS = new Set([
  'content-type',
  'accept',
  'user-agent',
  'openai-beta',
  'x-goog-api-client',
  'x-app',
  'originator',
  'session-id',
  'thread-id',
  'x-client-request-id',
  'idempotency-key',
])
// (`x-openai-internal-codex-`: Codex's `...-responses-lite: true` beside its `additional_tools`
// item, for OpenAI, which defined both)
const CODEX_INTERNAL = 'x-openai-internal-codex-'
const FORWARD_PREFIXES = ['anthropic-', 'x-stainless-', 'x-codex-', CODEX_INTERNAL, 'x-claude-code-']

// Header filters run for every header of every request and answer: plain loops, no closures.
function hasPrefix(name: string, prefixes: readonly string[]): boolean {
  for (const prefix of prefixes) if (name.startsWith(prefix)) return true
  return false
}

/** Response headers passed back to the client. */
const RETURN_HEADERS = new Set([
  'content-type',
  'content-encoding',
  'cache-control',
  'request-id',
  'x-request-id',
  'retry-after',
  'retry-after-ms',
  'x-should-retry',
  'openai-processing-ms',
  'openai-version',
])
const RETURN_PREFIXES = ['x-ratelimit-', 'anthropic-ratelimit-', 'ratelimit-', 'x-goog-']

/** The id header clients of each family read. */
export const requestIdHeader = (family: Family): string =>
  family === 'messages' ? 'request-id' : 'x-request-id'

/** Random bytes for request ids, drawn 256 ids at a time (one call into the CSPRNG, not one each). */
let idBytes = Buffer.alloc(0)
let idOffset = 0
const ID_BYTES = 12

/** A request id for an answer whose upstream sent none: `req_` and 12 random bytes in hex. */
export function mintRequestId(): string {
  if (idOffset + ID_BYTES > idBytes.length) {
    idBytes = randomBytes(ID_BYTES * 256)
    idOffset = 0
  }
  const id = `req_${idBytes.toString('hex', idOffset, idOffset + ID_BYTES)}`
  idOffset += ID_BYTES
  return id
}

/**
 * Request headers a translated request keeps: none of another protocol's (an `anthropic-beta`
 * a chat server does not know can turn into a 400 upstream), only the neutral ones.
 */
const TRANSLATED_HEADERS = new Set(['user-agent', 'x-client-request-id', 'idempotency-key'])

/**
 * `translated`: true for a request translated to another family (the neutral headers only);
 * `'noLite'` for Codex's request made plain for a Responses server (./plain-tools.ts), or its
 * "Responses Lite" request sent as for a model that is not Lite: its headers as passed through but
 * Codex's `x-openai-internal-codex-*`, whose Lite header asks the server to read the tools from an
 * `additional_tools` item the body no longer has (Azure OpenAI honours it, and refuses a model
 * that is not Lite under it).
 */
export function forwardHeaders(
  incoming: IncomingHttpHeaders,
  provider: ProviderConfig,
  credential: string | undefined,
  length: number,
  translated: boolean | 'noLite' = false,
  /** A translated Messages request's `anthropic-beta` (what its body needs: translate.ts). */
  beta?: string,
  /** What was learned of the upstream model (the betas it refused: {@link withoutLearnedBetas}). */
  learned?: UpstreamAdaptation,
  /** A Messages body that goes with its deferred tools loaded: without the tool-search betas (./tool-search.ts). */
  toolSearchOff = false,
): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const name in incoming) {
    const value = incoming[name]
    if (value === undefined) continue
    if (
      translated === true
        ? TRANSLATED_HEADERS.has(name)
        : FORWARD_HEADERS.has(name) || hasPrefix(name, FORWARD_PREFIXES)
    )
      headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  if (translated === 'noLite')
    for (const name in headers) if (name.startsWith(CODEX_INTERNAL)) delete headers[name]
  // Claude Code's auto-mode betas, which only Anthropic's API reads (./safeguards.ts)
  const betas = headers['anthropic-beta']
  if (betas !== undefined && asksSafeguards(betas) && !isAnthropicApi(provider.baseUrl)) {
    keepBetas(headers, withoutAutoModeBetas)
  }
  // tool search done by the gateway (./tool-search.ts): a server that honours the beta would defer
  // even the tools that go as ordinary ones (Z.AI's)
  if (toolSearchOff && asksToolSearch(headers['anthropic-beta'])) {
    keepBetas(headers, withoutToolSearchBetas)
  }
  // fault injection and quirks of the simulator reach only simulator providers
  if (provider.origin === 'sim') {
    if (typeof incoming['x-sim-fault'] === 'string') headers['x-sim-fault'] = incoming['x-sim-fault']
    if (typeof incoming['x-sim-quirk'] === 'string') headers['x-sim-quirk'] = incoming['x-sim-quirk']
  }
  if (translated === true) headers['content-type'] = 'application/json'
  headers['content-type'] ??= 'application/json'
  if (length > 0) headers['content-length'] = String(length)
  if (provider.family === 'messages') headers['anthropic-version'] ??= '2023-06-01'
  if (beta !== undefined) headers['anthropic-beta'] = beta
  // `anthropic-beta` values the upstream model refused (adaptations.ts): flag tests of what the
  // proxy looked up anyway, the header split only when something was learned of it
  if (learned !== undefined && (learned.noBetas || learned.refusedBetas) && 'anthropic-beta' in headers) {
    keepBetas(headers, (beta) => withoutLearnedBetas(beta, learned))
  }
  if (credential) {
    if (provider.family === 'messages') headers['x-api-key'] = credential
    else if (provider.family === 'gemini') headers['x-goog-api-key'] = credential
    else headers.authorization = `Bearer ${credential}`
  }
  return headers
}

/**
 * An `anthropic-beta` value without the values `learned` says the upstream model refused (its
 * `refusedBetas`; every one for `noBetas`), the others kept in order; undefined when none is left,
 * and the value as it came when nothing of it was refused.
 */
export function withoutLearnedBetas(
  beta: string,
  learned: Pick<UpstreamAdaptation, 'refusedBetas' | 'noBetas'>,
): string | undefined {
  if (learned.noBetas) return undefined
  const refused = learned.refusedBetas
  return refused?.length ? withoutBetas(beta, (name) => refused.includes(name)) : beta
}

/** `headers` with its `anthropic-beta` replaced by `without`'s answer (taken out when undefined). */
function keepBetas(headers: Record<string, string>, without: (beta: string) => string | undefined): void {
  const kept = without(headers['anthropic-beta'])
  if (kept === undefined) delete headers['anthropic-beta']
  else headers['anthropic-beta'] = kept
}

/** Whether an answer header of this (lower-case) name is passed back to the client. */
export function isReturnedHeader(name: string): boolean {
  return RETURN_HEADERS.has(name) || hasPrefix(name, RETURN_PREFIXES)
}

export function returnHeaders(
  upstream: Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {}
  for (const name in upstream) {
    const value = upstream[name]
    if (value === undefined) continue
    if (RETURN_HEADERS.has(name) || hasPrefix(name, RETURN_PREFIXES)) headers[name] = value
  }
  return headers
}
