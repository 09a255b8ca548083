/**
 * The seam between the gateway core (authentication) and routing. Every authenticated model
 * request ends here, once, with the entrance it came in at, the request, the response to write,
 * and who is calling. Routing (policies, providers, breakers, proxy, usage taps) replaces the
 * body is the router (`context.routing`); without one it answers an honest 503.
 */
import type {IncomingHttpHeaders, ServerResponse} from 'node:http'

import type {GatewayState} from '../store/state-schema.js'
import {agentKind, fixedFamily} from '../gateway/agent-kinds.js'
import {errorBody} from '../protocols/errors.js'
import type {GatewayContext} from './server.js'
import {sendJson} from './server.js'
import type {Family, PolicyConfig, ProviderConfig} from '../store/schema.js'
import type {BodyFacts} from './router/proxy-types.js'

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
  /** Query parameters without `key` (the gemini credential form). Read only: a request without a query shares one empty object. */
  query: URLSearchParams
  /** Request headers without `authorization`, `x-api-key`, `x-goog-api-key`, `x-vendor-api-key`, `host`. */
  headers: IncomingHttpHeaders
  /**
   * The parsed JSON body: undefined when empty, or when the route needs no more than the
   * entrance's check read of it (`facts`).
   */
  body: unknown
  /** What the entrance's check read of the body (see `GatewayRequest.latin1Json`), when not parsed whole. */
  facts?: BodyFacts
  rawBody: Buffer
  /**
   * Aborts the upstream request. Optional: the router already aborts it when the client closes
   * the response early.
   */
  signal?: AbortSignal
  /** The live gateway state (policies, providers); read only. */
  state: GatewayState
}

/**
 * Answers one authenticated model request. Writes the whole answer to `response` (status,
 * headers, body or stream) and resolves when done; never throws for an upstream failure (it
 * answers in the entrance's shape instead).
 *
 * - `models`: the models this agent may use (see {@link modelsFor}), in the OpenAI list shape.
 * - A policy with no target for the entrance's family: 503 `no_provider` (logged).
 * - Otherwise the router: targets in order, breakers, fallbacks, usage, one log row. The project
 *   of the row is the `x-gw-project` header, else the agent's name.
 */
export function forward(
  entrance: Entrance,
  request: EntranceRequest,
  response: ServerResponse,
  identity: Identity,
  context?: Pick<GatewayContext, 'routing' | 'startedAt'>,
): Promise<unknown> | undefined {
  // not async: the router's promise is handed on as it is (no promise and tick more per request)
  const routing = context?.routing
  const policy = routing?.policies.get(identity.policyId)
  if (routing && entrance.operation === 'models') {
    const family = modelsFamily(request.headers, identity)
    const created = Math.floor((context?.startedAt ?? Date.now()) / 1000)
    const data = modelsFor(policy, family, routing.providers).map((m) => ({
      id: m.id,
      object: 'model',
      created,
      owned_by: m.provider,
    }))
    sendJson(response, 200, {object: 'list', data})
    return
  }
  const who = {
    agentId: identity.agentId,
    keyPrefix: identity.keyPrefix,
    policyId: identity.policyId,
    project: identity.agentName,
  }
  if (!routing) {
    // no router at all (a gateway core without routing): nothing to log the request in
    const message = `No provider is configured for this route (policy "${identity.policyId}", ${entrance.family}). Add a provider and a route to the policy, then restart the gateway.`
    const text = JSON.stringify(errorBody(entrance.family, 503, message, {code: 'no_provider'}))
    response.writeHead(503, {'content-type': 'application/json', 'content-length': Buffer.byteLength(text)})
    response.end(text)
    return
  }
  const query = request.query.toString()
  return routing.router.route(
    {
      family: entrance.family,
      method: request.method,
      url: query ? `${request.path}?${query}` : request.path,
      headers: request.headers,
      body: request.rawBody,
      json: request.body,
      facts: request.facts,
      signal: request.signal,
      policy,
      providers: routing.providers,
      identity: who,
    },
    response,
  )
}

/**
 * The family whose targets `GET /v1/models` lists: messages when the client sends
 * `anthropic-version`, else the agent kind's protocol (generic agents: chat).
 */
export function modelsFamily(headers: IncomingHttpHeaders, identity: Pick<Identity, 'agentType'>): Family {
  if (headers['anthropic-version'] !== undefined) return 'messages'
  const kind = agentKind(identity.agentType)
  return fixedFamily(kind) ?? 'chat'
}

/**
 * The models an agent may ask for on a route: each target's model rewrite, else the requested
 * names of its provider's `models` map; in route order, without repeats.
 */
export function modelsFor(
  policy: PolicyConfig | undefined,
  family: Family,
  providers: readonly ProviderConfig[],
): Array<{id: string; provider: string}> {
  const byName = new Map(providers.map((p) => [p.name, p]))
  const seen = new Set<string>()
  const models: Array<{id: string; provider: string}> = []
  for (const target of policy?.routes[family] ?? []) {
    const provider = byName.get(target.provider)
    if (!provider || (provider.family !== family && !target.translate)) continue
    const ids = target.model ? [target.model] : Object.keys(provider.models ?? {})
    for (const id of ids) {
      if (seen.has(id)) continue
      seen.add(id)
      models.push({id, provider: provider.name})
    }
  }
  return models
}

/**
 * Whether routing will read the request body whole: a translated target decodes it. Every other
 * request is routed (and a budget's estimate made) on the entrance's cheaper check of the body
 * (`GatewayRequest.latin1Json`, its `BodyFacts`): its bytes are sent on as they came.
 */
export function needsWholeBody(
  context: Pick<GatewayContext, 'routing'>,
  policyId: string,
  family: Family,
): boolean {
  const routing = context.routing
  if (!routing) return false
  const targets = routing.policies.get(policyId)?.routes[family]
  if (targets) for (const target of targets) if (target.translate) return true
  return false
}
