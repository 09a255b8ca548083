/**
 * The seam between the gateway core (authentication) and routing. Every authenticated model
 * request ends here, once, with the entrance it came in at, the request, the response to write,
 * and who is calling. Routing (policies, providers, breakers, proxy, usage taps) replaces the
 * body of {@link forward}; until then it answers an honest 503.
 */
import type {IncomingHttpHeaders, ServerResponse} from 'node:http'

import type {GatewayState} from '../store/state.js'
import {errorBody} from './protocol-errors.js'
import type {Family} from './types.js'

/** Where a request came in. */
export interface Entrance {
  family: Family
  /**
   * `generate`: a model call (`/v1/chat/completions`, `/v1/responses`, `/v1/messages`,
   * `:generateContent`, `:streamGenerateContent`); `count_tokens`: `/v1/messages/count_tokens`
   * or `:countTokens`; `models`: `GET /v1/models`.
   */
  operation: 'generate' | 'count_tokens' | 'models'
  /** The model named in the path (gemini); for the other families read `request.body.model`. */
  model?: string
  /** The path asks for a stream (`:streamGenerateContent`); other families say so in the body. */
  stream: boolean
}

/** The authenticated caller. */
export interface Identity {
  agentId: string
  agentName: string
  agentType: string
  employeeId: string
  keyId: string
  /** Display prefix of the key (never the key). */
  keyPrefix: string
  /** The policy bound to the agent. */
  policyId: string
}

/** The request as routing needs it. Credentials are already removed. */
export interface EntranceRequest {
  method: string
  /** Path without the query string, e.g. `/v1/messages`. */
  path: string
  /** Query parameters without `key` (the gemini credential form). */
  query: URLSearchParams
  /** Request headers without `authorization`, `x-api-key`, `x-goog-api-key`, `x-vendor-api-key`, `host`. */
  headers: IncomingHttpHeaders
  /** Parsed JSON body, or undefined when empty. */
  body: unknown
  rawBody: Buffer
  /** Aborted when the client goes away: abort the upstream request with it. */
  signal: AbortSignal
  /** The live gateway state (policies, providers); read only. */
  state: GatewayState
}

/**
 * Answers one authenticated model request. Writes the whole answer to `response` (status,
 * headers, body or stream) and resolves when done; never throws for an upstream failure (it
 * answers in the entrance's shape instead).
 */
export async function forward(
  entrance: Entrance,
  _request: EntranceRequest,
  response: ServerResponse,
  identity: Identity,
): Promise<void> {
  const message = `No provider is configured for this route (policy "${identity.policyId}", ${entrance.family}). Add a provider and a route to the policy, then restart the gateway.`
  const text = JSON.stringify(errorBody(entrance.family, 503, message, {code: 'no_provider'}))
  response.writeHead(503, {'content-type': 'application/json', 'content-length': Buffer.byteLength(text)})
  response.end(text)
}
