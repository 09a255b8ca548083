/**
 * An upstream's 429, read for how long it asks to be left alone.
 *
 * - Codex does not retry a 429 that says no `retry-after`: `retry_429` is false for every provider,
 *   hard-coded (openai/codex #30471, #23304), so such a 429 ends its turn at once with "exceeded
 *   retry limit, last status: 429 Too Many Requests". (One with `retry-after` it retries itself,
 *   waiting what it says, up to 5 times: "Reconnecting... 1/5", measured with Codex 0.171; it
 *   reads no `retry-after-ms`.) The proxy waits for it when such a 429 is the last answer left and
 *   the wait is short ({@link RETRY_429}, ./proxy.ts), as peers found a gateway must
 *   (lidge-jun/opencodex #865, cc-switch #7460).
 * - Google states its wait in the body only: `error.details[]` holds a
 *   `type.googleapis.com/google.rpc.RetryInfo` with `retryDelay` ("37s"), and a `QuotaFailure`
 *   naming the quota (`...PerMinute...`, `...PerDay...`); its message states the same wait
 *   uncut ("Please retry in 58.934310785s." where RetryInfo says "58s", python-genai #2114). No
 *   header says it, so a translated answer gets `retry-after` from the longer of the two
 *   (./translated.ts), which the Anthropic and OpenAI SDKs and Claude Code honour up to a minute
 *   (a longer one: {@link waitFor}).
 *
 * Read only on a 429: nothing here runs for a request that succeeds.
 */
import type {IncomingHttpHeaders} from 'node:http'

import {parseRetryAfter} from '../../core/retry-after.js'
import type {Family} from '../../store/schema.js'
import type {ProxyTarget} from './proxy-types.js'

/** How Codex's requests are waited for: at most this many more tries, this long waited in all. */
export const RETRY_429 = {
  tries: 2,
  capMs: 30_000,
  /** The waits when the upstream states none: 2 s, then 4 s. */
  fixedMs: [2_000, 4_000] as readonly number[],
}

/**
 * Whether a request is Codex's own: its `originator` header (`codex_cli_rs` for the terminal UI,
 * `codex_exec`, `codex_vscode`, `Codex Desktop`...) or its user agent, which starts with the same
 * word (`codex_exec/0.171.0 (Debian 12.0.0; x86_64) ...`).
 */
export function isCodexClient(headers: IncomingHttpHeaders): boolean {
  const originator = headers.originator
  return (
    (typeof originator === 'string' && /^codex/i.test(originator)) ||
    /^codex/i.test(headers['user-agent'] ?? '')
  )
}

/** What a 429's body says of waiting: Google's stated delay, or that no short wait helps. */
export interface BodyWait {
  /**
   * Google's `RetryInfo.retryDelay`, in milliseconds, or the longer wait its message states:
   * RetryInfo is cut to whole seconds ("58s") where the words keep the fraction ("Please retry in
   * 58.934310785s.", python-genai #2114), and a client that waits the 58 s is refused again.
   */
  retryMs?: number
  /**
   * No short wait will do: a daily quota (Google's `QuotaFailure` naming a `PerDay` quota, whatever
   * its `retryDelay`; OpenAI's and Groq's words "per day (TPD)", whatever wait they state), or
   * OpenAI's `insufficient_quota` (billing, not a rate).
   */
  long?: true
}

/**
 * A daily limit's words: OpenAI's and Groq's "Rate limit reached for model … on tokens per day
 * (TPD): Limit 100000, Used 99763, … Please try again in 13m55.2s." (`requests per day (RPD)`
 * alike), whose wait is the day's window rolling on: another try within seconds meets the same.
 */
const DAILY_WORDS = /\bper day\b|\((?:TPD|RPD)\)/i

/**
 * Reads a 429's body for its wait: Google's `error.details[]` (the API's `{"error": …}`, or the
 * list its OpenAI-compatible endpoint answers, `[{"error": …}]`), OpenAI's `insufficient_quota`,
 * a daily limit's words ({@link DAILY_WORDS}, in JSON or not). Undefined when it says nothing of
 * these (or is not JSON).
 */
export function bodyWait(text: string): BodyWait | undefined {
  if (DAILY_WORDS.test(text)) return {long: true}
  // (a byte search first: most 429s hold neither)
  const google = text.includes('google.rpc.')
  const quota = text.includes('insufficient_quota')
  if (!google && !quota) return undefined
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return undefined
  }
  if (Array.isArray(json)) json = json[0]
  const error = (json as {error?: unknown} | null)?.error
  if (!error || typeof error !== 'object') return undefined
  const {code, type, details, message} = error as {
    code?: unknown
    type?: unknown
    details?: unknown
    message?: unknown
  }
  if (code === 'insufficient_quota' || type === 'insufficient_quota') return {long: true}
  if (!Array.isArray(details)) return undefined
  const wait: BodyWait = {}
  for (const detail of details as Array<Record<string, unknown> | null>) {
    const kind = typeof detail?.['@type'] === 'string' ? detail['@type'] : ''
    if (kind.endsWith('google.rpc.RetryInfo')) {
      const ms = durationMs(detail!.retryDelay)
      if (ms !== undefined) wait.retryMs = ms
    } else if (kind.endsWith('google.rpc.QuotaFailure') && Array.isArray(detail!.violations)) {
      for (const violation of detail!.violations as Array<Record<string, unknown> | null>) {
        const id = violation?.quotaId
        if (typeof id === 'string' && /PerDay/i.test(id)) wait.long = true
      }
    }
  }
  if (wait.retryMs !== undefined && typeof message === 'string') {
    const said = statedWaitMs(message)
    if (said !== undefined) wait.retryMs = Math.max(wait.retryMs, Math.ceil(said))
  }
  return wait.retryMs === undefined && !wait.long ? undefined : wait
}

/** A protobuf Duration in its JSON form (`"37s"`, `"0.5s"`; or `{seconds, nanos}`), in milliseconds. */
function durationMs(value: unknown): number | undefined {
  if (typeof value === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)s\s*$/.exec(value)
    return m ? Math.ceil(Number(m[1]) * 1000) : undefined
  }
  if (value && typeof value === 'object') {
    const {seconds, nanos} = value as {seconds?: unknown; nanos?: unknown}
    const s = Number(seconds ?? 0)
    const n = Number(nanos ?? 0)
    if (Number.isFinite(s) && Number.isFinite(n)) return Math.ceil(s * 1000 + n / 1e6)
  }
  return undefined
}

/**
 * Whether a 429 is one no wait cures (a daily quota, a daily limit's words, OpenAI's
 * `insufficient_quota`: {@link bodyWait}); `text` its body, or its words alone.
 * The client is told so, since Claude Code and the OpenAI SDKs retry any 429 otherwise (Claude
 * Code 10 times over minutes, measured with 2.1.332 on a Gemini per-day 429): `x-should-retry:
 * false`, which both SDKs obey before any status (anthropic-sdk-typescript and openai-node
 * `shouldRetry`: "If the server explicitly says whether or not to retry, obey."), and to a Gemini
 * client a `QuotaFailure` naming a daily quota (../../protocols/errors.ts).
 */
export function noWaitHelps(status: number, text: string): boolean {
  return status === 429 && bodyWait(text)?.long === true
}

/** Why no wait cures a 429 ({@link noWaitHelps}), for the words the client is given. */
export function spentQuota(text: string): string {
  return text.includes('insufficient_quota')
    ? 'no retry helps: insufficient_quota'
    : 'no retry helps: a daily quota'
}

/** One part of a stated wait: `1h`, `14m`, `26.4s`, `20ms`, `6 seconds`, `1 minute`. */
const WAIT_PART = /(\d+(?:\.\d+)?) ?(milliseconds?|ms|hours?|h|minutes?|m|seconds?|s)(?![a-z])/gi
const STATED_WAIT = new RegExp(`(?:try again|retry) in ((?:${WAIT_PART.source} ?)+)`, 'i')
/** The longest wait read from a 429's words: a day (a larger number would print as `1e+23`). */
const MOST_STATED_WAIT_S = 86_400
/**
 * The longest wait said as `retry-after` to every client: a minute. The Anthropic SDK honours a
 * `retry-after` only below 60 s (its own short backoff otherwise); Claude Code (2.1.328, `claude
 * -p`, measured) waits one of 60 s and ends the request at once on one of 61 s or more ("API Error:
 * Request rejected (429)"), as on `x-should-retry: false`; Codex waits whatever it says, 5 times
 * (docs/RELIABILITY.md), so Groq's per-day "Please try again in 13m55.2s." as `retry-after: 836`
 * held Codex 70 minutes (small60). A longer wait: {@link MOST_WAITED_MS}, {@link waitFor}.
 */
const MOST_SAID_WAIT_MS = 60_000
/**
 * The longest wait a client is left to sit out: 5 minutes, where Gemini CLI ends the turn itself
 * (`classifyGoogleError`: a RetryInfo past it is a TerminalQuotaError), longer than Claude Code's
 * own backoff. The OpenAI SDK (openai-node 6.49 `retryRequest`: "just do what it says") waits any
 * `retry-after` and `retry-after-ms`, so one of an hour held it the hour.
 */
const MOST_WAITED_MS = 300_000

/**
 * The wait a 429's words state, in milliseconds (at most a day): OpenAI's and Groq's rate-limit
 * messages ("Please try again in 1.054s.", "in 20ms", "in 7m12s", a per-day limit's "in
 * 1h14m26.4s") and Google's ("Please retry in 58.934310785s."). Undefined when they state none.
 */
function statedWaitMs(text: string): number | undefined {
  const stated = STATED_WAIT.exec(text)?.[1]
  if (stated === undefined) return undefined
  let ms = 0
  for (const [, amount, unit] of stated.matchAll(WAIT_PART)) {
    const u = unit!.toLowerCase()
    const each =
      u === 'ms' || u.startsWith('milli') ? 1 : u[0] === 'h' ? 3_600_000 : u[0] === 'm' ? 60_000 : 1000
    ms += Number(amount) * each
  }
  return Math.min(MOST_STATED_WAIT_S * 1000, ms)
}

/**
 * The wait a 429 states in its body, in milliseconds, for the gateway's own wait (Codex's:
 * ./proxy.ts `waitFor429`): Google's `RetryInfo` (or its words' longer wait: {@link bodyWait}),
 * else the wait its words alone state (a server that sends no header and no RetryInfo, only
 * "Please try again in 7s."). Undefined when it states none; `long` when no short wait helps.
 */
export function bodyWaitMs(text: string): BodyWait | undefined {
  const read = bodyWait(text)
  if (read !== undefined) return read
  const said = statedWaitMs(text)
  return said === undefined ? undefined : {retryMs: Math.ceil(said)}
}

/** The headers a 429 gets for its wait ({@link waitFor}). */
export type WaitHeaders = {'retry-after'?: string; 'x-should-retry'?: string}

/**
 * Who a 429's wait is said to: the entrance's family, and the client's request headers (Codex's
 * and Claude Code's are told no wait past a minute; none known: as any other client's).
 */
export interface WaitClient {
  family: Family
  headers?: IncomingHttpHeaders
}

/**
 * Whether a request is Claude Code's: its user agent (`claude-cli/2.1.328 (external, cli)`, the
 * Agent SDK's `... sdk-cli`).
 */
export function isClaudeCodeClient(headers: IncomingHttpHeaders): boolean {
  return headers['user-agent']?.startsWith('claude-cli/') === true
}

/**
 * The headers that say a wait of `ms` to `client`:
 *
 * - a minute or less ({@link MOST_SAID_WAIT_MS}), and any wait to a Gemini client: `retry-after`
 *   in whole seconds (rounded up, at least 1), which every client waits out before it retries. A
 *   Gemini client gets it as Google's `RetryInfo` in the body (./error-shape.ts), which Gemini CLI
 *   reads (not the header) and ends the turn on past 5 minutes itself;
 * - up to 5 minutes ({@link MOST_WAITED_MS}): `retry-after` to a client that waits it (the OpenAI
 *   SDK; the Anthropic SDK backs off on its own instead), and nothing to Codex, which would wait
 *   it 5 times and without it ends the turn saying the 429, nor to Claude Code, which ends the
 *   request at once on a `retry-after` past 60 s and without one retries on its own backoff (10
 *   tries over minutes: measured, 2.1.328), as before waits61 for a wait its words stated;
 * - longer: `x-should-retry: false` and no `retry-after`, which the Anthropic and OpenAI SDKs and
 *   Claude Code obey before any status (anthropic-sdk-typescript and openai-node `shouldRetry`: "If
 *   the server explicitly says whether or not to retry, obey."): the request ends with the
 *   upstream's words, which say the wait. Codex reads no `x-should-retry`: no `retry-after` ends
 *   its turn.
 */
function waitFor(ms: number, client: WaitClient): WaitHeaders {
  const seconds = {'retry-after': String(Math.max(1, Math.ceil(ms / 1000)))}
  if (ms <= MOST_SAID_WAIT_MS || client.family === 'gemini') return seconds
  if (ms > MOST_WAITED_MS) return {'x-should-retry': 'false'}
  const headers = client.headers
  return headers && (isCodexClient(headers) || isClaudeCodeClient(headers)) ? {} : seconds
}

/**
 * The headers that tell a client's SDK how long a 429 asks to be left alone, for one whose upstream
 * sent no `retry-after` of its own: `x-should-retry: false` for a daily quota ({@link bodyWait},
 * {@link DAILY_WORDS}; the caller tells OpenAI's `insufficient_quota` by `noWaitHelps` itself),
 * else the wait said as {@link waitFor} says it. `text`: its body (Google's `RetryInfo` in the
 * error; empty when none), `words`: its message; the wait is the longer of the two, as Google gives
 * both and cuts RetryInfo to whole seconds ({@link BodyWait}). None stated: `retry-after` the first
 * of Codex's waits ({@link RETRY_429}) when `fallback` (a 429 said inside a 200, which Codex would
 * not retry without it), else nothing.
 */
export function waitHeaders(text: string, words: string, client: WaitClient, fallback = false): WaitHeaders {
  const read = text === '' ? undefined : bodyWait(text)
  // (a daily quota, in its details or its words: no wait helps, whatever it states)
  if (read?.long || DAILY_WORDS.test(words)) return {'x-should-retry': 'false'}
  const info = read?.retryMs
  const said = statedWaitMs(words)
  const ms = info === undefined ? said : said === undefined ? info : Math.max(info, Math.ceil(said))
  if (ms === undefined) return fallback ? {'retry-after': String(RETRY_429.fixedMs[0]! / 1000)} : {}
  return waitFor(ms, client)
}

/**
 * A wait given in `retry-after-ms` only (Azure OpenAI, some OpenAI-compatible servers), said as
 * {@link waitFor} says it: as `retry-after` too, in whole seconds (rounded up), the header Claude
 * Code's own retry loop and Codex read (neither reads `-ms`: Claude Code retried after 1.2 s on
 * `retry-after-ms: 90000`, 2.1.328), and a Gemini client gets as RetryInfo (./error-shape.ts); past
 * 5 minutes `x-should-retry: false`, the upstream's `retry-after-ms` kept (the OpenAI SDK would
 * wait it whole). Nothing when `retry-after` is there already or `retry-after-ms` is no number.
 */
export function msWaitHeaders(headers: IncomingHttpHeaders, client: WaitClient): WaitHeaders {
  if (headers['retry-after'] !== undefined || typeof headers['retry-after-ms'] !== 'string') return {}
  const wait = parseRetryAfter(headers)
  return wait === undefined ? {} : waitFor(wait, client)
}

/** Adds `wait`'s headers to `headers` where they have none of that name. */
export function addWaitHeaders(headers: Record<string, unknown>, wait: WaitHeaders): void {
  for (const [name, value] of Object.entries(wait)) headers[name] ??= value
}

/**
 * Settles the target's breaker for a 429. One that sends the request on to another target counts
 * as a failure, so that later requests go to that target at once while the breaker is open. One
 * that is the request's last answer (no other target left, or fallbacks off) does not: the breaker
 * is per provider and could route nowhere else, the client retries on its own clock (Claude Code
 * honours `retry-after`, Gemini CLI waits 5-30 s), and each such retry counted would soon turn the
 * upstream's 429, with its wait and its words, into the gateway's 503 for every agent and every
 * model of that provider (audit57: a Gemini per-day 429 retried by Claude Code opened it). Its
 * permit is released without success or failure; a half-open trial answered 429 (the breaker not
 * closed) still opens the breaker again, as any failed trial does.
 */
export function settle429(target: ProxyTarget, message: string, fallsBack: boolean): void {
  const breaker = target.breaker
  if (!breaker) return
  if (fallsBack || breaker.state !== 'closed') breaker.recordFailure(message)
  else breaker.release()
}

/** The log row's note for the waits of one request (`ms` in all, `tries` more tries). */
export function waitedNote(provider: string, ms: number, tries: number): string {
  const seconds = ms >= 10_000 ? String(Math.round(ms / 1000)) : String(Math.round(ms / 100) / 10)
  return `${provider} waited ${seconds}s for ${tries === 1 ? 'a 429' : `${tries} 429s`} (Codex does not retry one)`
}
