/**
 * The model entrances (spec 4.2 plus what real clients call): authentication with each
 * protocol's credential forms, then one call to {@link forward}.
 *
 * | entrance | credentials |
 * |---|---|
 * | `POST /v1/chat/completions` | `Authorization: Bearer` |
 * | `POST /v1/responses`, `POST /v1/responses/compact` | `Authorization: Bearer` |
 * | `POST /v1/messages` (also `?beta=true`), `POST /v1/messages/count_tokens` | `x-api-key` or Bearer |
 * | `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent`, `:countTokens` | `x-vendor-api-key`, `x-goog-api-key`, `?key=` or Bearer |
 * | `GET /v1/models` | Bearer or `x-api-key` |
 */
import type {IncomingHttpHeaders} from 'node:http'

import type {Entrance, EntranceRequest, Identity} from './forward.js'
import {forward, needsWholeBody} from './forward.js'
import {bodyFacts} from './router/request-body.js'
import type {BodyFacts} from './router/proxy-types.js'
import {logRefused} from './refused-log.js'
import type {GatewayContext, GatewayRequest, Route} from './server.js'
import {sendError} from './server.js'
import type {Family} from '../store/schema.js'

/** Largest model request body (images and long histories are big). */
export const ENTRANCE_MAX_BODY = 32 * 1024 * 1024

type CredentialForm = 'bearer' | 'x-api-key' | 'x-vendor-api-key' | 'x-goog-api-key' | 'query-key'

const CREDENTIALS: Record<Family | 'models', CredentialForm[]> = {
  chat: ['bearer'],
  responses: ['bearer'],
  messages: ['x-api-key', 'bearer'],
  gemini: ['x-vendor-api-key', 'x-goog-api-key', 'query-key', 'bearer'],
  models: ['bearer', 'x-api-key'],
}

/** Request headers never passed on to routing: every credential form, and `host`. */
const DROPPED_HEADERS = new Set(['authorization', 'x-api-key', 'x-vendor-api-key', 'x-goog-api-key', 'host'])

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name]
  const s = Array.isArray(v) ? v[0] : v
  return s === undefined ? undefined : s.trim()
}

/** The credential a request presents in one of `forms` (first found wins), or undefined. */
export function presentedKey(
  headers: IncomingHttpHeaders,
  query: URLSearchParams,
  forms: readonly CredentialForm[],
): string | undefined {
  for (const form of forms) {
    let value: string | undefined
    if (form === 'bearer') {
      const auth = header(headers, 'authorization')
      const m = auth ? /^Bearer\s+(.+)$/i.exec(auth) : null
      value = m?.[1].trim()
    } else if (form === 'query-key') {
      value = query.get('key')?.trim()
    } else {
      value = header(headers, form)
    }
    if (value) return value
  }
  return undefined
}

/** Read only: stands for the query of a request without one (saves parsing an empty string). */
const NO_QUERY = new URLSearchParams()

function withoutCredentials(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  // copy what is kept rather than spread and `delete`: deleting keys turns the object into a
  // slow dictionary, and this runs on every model request
  const copy: IncomingHttpHeaders = {}
  for (const name in headers) if (!DROPPED_HEADERS.has(name)) copy[name] = headers[name]
  return copy
}

function entranceHandler(
  family: Family,
  entrance: (request: GatewayRequest) => Entrance,
  credentials: CredentialForm[],
) {
  // not async: forward's promise is handed to the server as it is (a throw here is caught there
  // as a rejection would be: the server awaits the handler in a try)
  return (request: GatewayRequest, context: GatewayContext): Promise<unknown> | undefined => {
    let e: Entrance
    try {
      e = entrance(request)
    } catch (error) {
      if (!(error instanceof URIError)) throw error
      sendError(request.res, family, 400, `The path ${request.path} is not validly percent-encoded.`, {
        code: 'invalid_path',
      })
      return
    }
    const presented = presentedKey(request.headers, request.search ? request.query : NO_QUERY, credentials)
    const verdict = context.index.verify(presented)
    if (!verdict.ok) {
      logRefused(context, e.family, presented, verdict)
      const hint =
        verdict.reason === 'missing'
          ? ` Send it as ${describeForms(credentials)}.`
          : verdict.rotated
            ? // issuing again would rotate once more and revoke the key now in use
              " Use that key (`gwctl key list` shows its prefix; `gwctl agents enable AGENT --rotate` rewrites a bound agent's config)."
            : verdict.reason === 'revoked' || verdict.reason === 'unknown'
              ? ' Issue one with `gwctl key issue`.'
              : ''
      sendError(request.res, e.family, verdict.status, verdict.message + hint, {
        code: verdict.reason === 'forged' ? 'invalid_api_key' : 'unauthorized',
      })
      return
    }
    const {key, agent} = verdict
    request.agentId = agent.id
    const now = Math.floor(Date.now() / 1000)
    agent.lastSeenAt = now
    // `GET /v1/models` says nothing about the protocol the agent speaks
    if (e.operation !== 'models') agent.lastEntrance = e.family
    key.lastUsedAt = now
    context.lastRequestAt = now
    context.touch()

    let body: unknown
    let facts: BodyFacts | undefined
    if (e.operation !== 'models') {
      if (needsWholeBody(context, agent.policyId, e.family)) body = request.json()
      else facts = bodyFacts(request.latin1Json())
    }
    // most requests have no query string: skip parsing one
    let query = NO_QUERY
    if (request.search) {
      query = new URLSearchParams(request.query)
      query.delete('key')
    }
    const forwarded: EntranceRequest = {
      method: request.method,
      path: request.path,
      query,
      headers: withoutCredentials(request.headers),
      body,
      facts,
      rawBody: request.rawBody,
      // no `signal`: the proxy aborts the upstream request itself when the response closes early
      state: context.store.data,
    }
    const identity: Identity = {
      agentId: agent.id,
      agentName: agent.name,
      agentType: agent.type,
      employeeId: agent.employeeId,
      keyId: key.id,
      keyPrefix: key.prefix,
      policyId: agent.policyId,
    }
    return forward(e, forwarded, request.res, identity, context)
  }
}

function describeForms(forms: readonly CredentialForm[]): string {
  const names: Record<CredentialForm, string> = {
    bearer: '`Authorization: Bearer gw-...`',
    'x-api-key': '`x-api-key: gw-...`',
    'x-vendor-api-key': '`x-vendor-api-key: gw-...`',
    'x-goog-api-key': '`x-goog-api-key: gw-...`',
    'query-key': '`?key=gw-...`',
  }
  return forms.map((f) => names[f]).join(' or ')
}

function route(
  method: string,
  path: string | RegExp,
  family: Family,
  credentials: CredentialForm[],
  entrance: (request: GatewayRequest) => Entrance,
): Route {
  return {
    method,
    path,
    family,
    management: false,
    maxBodyBytes: ENTRANCE_MAX_BODY,
    handler: entranceHandler(family, entrance, credentials),
  }
}

/** Every model entrance. */
export function entranceRoutes(): Route[] {
  return [
    route('POST', '/v1/chat/completions', 'chat', CREDENTIALS.chat, () => ({
      family: 'chat',
      operation: 'generate',
      stream: false,
    })),
    route('POST', '/v1/responses', 'responses', CREDENTIALS.responses, () => ({
      family: 'responses',
      operation: 'generate',
      stream: false,
    })),
    // OpenAI's remote compaction, which Codex calls when its provider is OpenAI's (named `openai`,
    // or OPENAI_BASE_URL on the built-in one): passed through to a Responses upstream, refused on
    // a translated route (proxy.ts), no other vendor having the endpoint
    route('POST', '/v1/responses/compact', 'responses', CREDENTIALS.responses, () => ({
      family: 'responses',
      operation: 'generate',
      stream: false,
    })),
    route('POST', '/v1/messages', 'messages', CREDENTIALS.messages, () => ({
      family: 'messages',
      operation: 'generate',
      stream: false,
    })),
    route('POST', '/v1/messages/count_tokens', 'messages', CREDENTIALS.messages, () => ({
      family: 'messages',
      operation: 'count_tokens',
      stream: false,
    })),
    route(
      'POST',
      /^\/v1beta\/models\/(?<model>[^/:]+):(?<method>generateContent|streamGenerateContent|countTokens)$/,
      'gemini',
      CREDENTIALS.gemini,
      (request) => ({
        family: 'gemini',
        operation: request.params.method === 'countTokens' ? 'count_tokens' : 'generate',
        model: decodeURIComponent(request.params.model),
        stream: request.params.method === 'streamGenerateContent',
      }),
    ),
    route('GET', '/v1/models', 'chat', CREDENTIALS.models, () => ({
      family: 'chat',
      operation: 'models',
      stream: false,
    })),
  ]
}
