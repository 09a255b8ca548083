/**
 * The management API (spec 4.3): health, the help page, key issue, agents, keys, and routing's
 * logs, usage, providers and dashboard (routing-api.ts). No key is
 * needed (spec 5.3); the server's Host and Origin checks keep browsers of other sites out.
 */
import {readFile} from 'node:fs/promises'

import {
  IssueError,
  issueKey,
  removeAgentInState,
  revokeKeyInState,
  validateIssueRequest,
} from '../gateway/key-issue.js'
import type {GatewayState} from '../store/state-schema.js'
import type {GatewayContext, GatewayRequest, Route} from './server.js'
import {sendError, sendJson} from './server.js'
import {routedState} from './routing.js'
import {
  dashboardHandler,
  logsHandler,
  providersHandler,
  routedAgentViews,
  usageHandler,
} from './routing-api.js'
import {agentViews, agentsPerRoute, keyViews, latestRequestAt} from '../gateway/views.js'
import {AGENT_KINDS} from '../gateway/agent-kinds.js'
import {emitGatewayEvent, eventsHandler} from './events.js'
import {budgetViews, reloadBudgets} from './budgets.js'
import {metricsHandler} from './telemetry/telemetry.js'
import {statuslineHandler} from './usage-memory.js'
import {learnedAdaptations} from './router/proxy.js'

/** Largest management request body. */
export const MANAGEMENT_MAX_BODY = 64 * 1024

/** One documented endpoint, for `/help`. */
interface EndpointDoc {
  method: string
  path: string
  purpose: string
  example: string
}

function endpointDocs(port: number): EndpointDoc[] {
  const base = `http://127.0.0.1:${port}`
  const key = 'gw-...'
  return [
    {
      method: 'GET',
      path: '/health',
      purpose: 'Liveness: {status:"ok", timestamp}.',
      example: `curl ${base}/health`,
    },
    {method: 'GET', path: '/help', purpose: 'This page.', example: `curl ${base}/help`},
    {
      method: 'GET',
      path: '/metrics',
      purpose:
        'Prometheus metrics: requests, tokens, cost, latency and first-byte histograms, fallbacks, breakers, log and OTLP queues (docs/TELEMETRY.md).',
      example: `curl ${base}/metrics`,
    },
    {
      method: 'POST',
      path: '/api/keys/issue',
      purpose:
        "Issues a key for an agent (creates or updates the employee and the agent; rotates the agent's previous key). The key is shown once. Same agent again within 5 s: 429.",
      example: `curl -X POST ${base}/api/keys/issue -H 'Content-Type: application/json' -d '{"employeeName":"Ada","employeeContact":"ada@example.com","agentName":"laptop","agentType":"claude_code"}'`,
    },
    {
      method: 'POST',
      path: '/api/keys/revoke',
      purpose: 'Revokes one key by id (`gwctl agents disable`); the next request with it gets 401.',
      example: `curl -X POST ${base}/api/keys/revoke -H 'Content-Type: application/json' -d '{"keyId":"key_..."}'`,
    },
    {
      method: 'POST',
      path: '/api/agents/remove',
      purpose:
        'Removes an agent by id and revokes its keys (`gwctl agents remove`); 409 while a coding agent is bound to it or it has sub-agents.',
      example: `curl -X POST ${base}/api/agents/remove -H 'Content-Type: application/json' -d '{"agentId":"agt_..."}'`,
    },
    {
      method: 'GET',
      path: '/api/agents',
      purpose:
        'Agents with parent-child relations, policy, route (targets with their circuit state), key prefix and last seen time.',
      example: `curl ${base}/api/agents`,
    },
    {
      method: 'GET',
      path: '/api/keys',
      purpose: 'Issued keys: prefix and metadata, never the key.',
      example: `curl ${base}/api/keys`,
    },
    {
      method: 'GET',
      path: '/api/logs',
      purpose:
        'Recent requests, newest first: {logs:[…]}. Filters: agent_id, policy_id, status (2xx, 4xx, 5xx, fallback), since (Unix seconds), limit (default 50).',
      example: `curl '${base}/api/logs?status=5xx&since=1795300000&limit=20'`,
    },
    {
      method: 'GET',
      path: '/api/usage',
      purpose:
        'Token usage summed: {pivot, rows:[…], totals}. The logs filters (without limit) plus pivot (agent, key, provider, model, project, policy).',
      example: `curl '${base}/api/usage?pivot=model&since=1795300000'`,
    },
    {
      method: 'GET',
      path: '/api/usage/statusline',
      purpose:
        'What `gwctl statusline` shows: per-model token sums of today (from ?today=Unix ms), of ?session=ID and of the active 5-hour window, from memory, and their dollars (`figures`).',
      example: `curl '${base}/api/usage/statusline?today=1795300000000'`,
    },
    {
      method: 'GET',
      path: '/api/providers',
      purpose:
        "Providers (credentials redacted) with circuit state, families and the policies routing to them; ?agent=ID_OR_NAME keeps those the agent's policy routes to, in route order.",
      example: `curl '${base}/api/providers?agent=laptop'`,
    },
    {
      method: 'GET',
      path: '/api/adaptations',
      purpose:
        'What upstreams were found to refuse since the gateway started, and what requests to each do since, and the context window an upstream stated when it refused a longer prompt: {adaptations:[{provider, model, learnedAt, rules:[…], window?:{tokens, entrance}}]}, the latest first.',
      example: `curl ${base}/api/adaptations`,
    },
    {
      method: 'GET',
      path: '/api/dashboard',
      purpose:
        "Routes with their targets' circuit state, recent_requests (last 20), recent_usage (per model, last 24 h) and the gateway (pid, port, uptime_s, version).",
      example: `curl ${base}/api/dashboard`,
    },
    {
      method: 'GET',
      path: '/api/budgets',
      purpose:
        'Budgets as enforced now: {budgets:[{scope, target, period, unit, limit, spent, reserved, percent, state, resetAt, onExceed, …}]}.',
      example: `curl ${base}/api/budgets`,
    },
    {
      method: 'POST',
      path: '/api/budgets/reload',
      purpose: 'Reads the budgets from the state file again (`gwctl budgets set/remove` call it).',
      example: `curl -X POST ${base}/api/budgets/reload`,
    },
    {
      method: 'GET',
      path: '/api/status',
      purpose: 'Daemon snapshot: pid, port, version, uptime, agents, agents per route, latest request.',
      example: `curl ${base}/api/status`,
    },
    {
      method: 'POST',
      path: '/v1/chat/completions',
      purpose: 'Chat-completions entrance. Credential: Authorization: Bearer.',
      example: `curl ${base}/v1/chat/completions -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '{"model":"m","messages":[{"role":"user","content":"Hi"}]}'`,
    },
    {
      method: 'POST',
      path: '/v1/responses',
      purpose: 'Responses entrance. Credential: Authorization: Bearer.',
      example: `curl ${base}/v1/responses -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '{"model":"m","input":"Hi"}'`,
    },
    {
      method: 'POST',
      path: '/v1/responses/compact',
      purpose:
        "OpenAI's remote compaction (Codex's, on a provider named OpenAI): to a Responses upstream only; a translated route answers 400. Credential: Authorization: Bearer.",
      example: `curl ${base}/v1/responses/compact -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' -d '{"model":"m","input":"Hi"}'`,
    },
    {
      method: 'POST',
      path: '/v1/messages',
      purpose: 'Messages entrance (also ?beta=true). Credential: x-api-key or Bearer.',
      example: `curl ${base}/v1/messages -H 'x-api-key: ${key}' -H 'anthropic-version: 2023-06-01' -H 'Content-Type: application/json' -d '{"model":"m","max_tokens":64,"messages":[{"role":"user","content":"Hi"}]}'`,
    },
    {
      method: 'POST',
      path: '/v1/messages/count_tokens',
      purpose: 'Token count of a messages request. Credential: x-api-key or Bearer.',
      example: `curl ${base}/v1/messages/count_tokens -H 'x-api-key: ${key}' -H 'Content-Type: application/json' -d '{"model":"m","messages":[{"role":"user","content":"Hi"}]}'`,
    },
    {
      method: 'POST',
      path: '/v1beta/models/{model}:generateContent',
      purpose:
        'GenerateContent entrance; also :streamGenerateContent?alt=sse and :countTokens. Credential: x-vendor-api-key, x-goog-api-key, ?key= or Bearer.',
      example: `curl '${base}/v1beta/models/m:generateContent' -H 'x-goog-api-key: ${key}' -H 'Content-Type: application/json' -d '{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}'`,
    },
    {
      method: 'GET',
      path: '/v1/models',
      purpose:
        "Models the calling agent may use (its policy's targets for its protocol), OpenAI list shape. Credential: Bearer or x-api-key.",
      example: `curl ${base}/v1/models -H 'Authorization: Bearer ${key}'`,
    },
  ]
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'})[c]!,
  )
}

/** The `/help` page. */
export function helpPage(context: Pick<GatewayContext, 'port' | 'version'>): string {
  const rows = endpointDocs(context.port)
    .map(
      (e) =>
        `<tr><td><code>${e.method}</code></td><td><code>${escapeHtml(e.path)}</code></td><td>${escapeHtml(e.purpose)}</td><td><pre>${escapeHtml(e.example)}</pre></td></tr>`,
    )
    .join('\n')
  const kinds = AGENT_KINDS.map(
    (k) =>
      `<li><code>${k.type}</code> — ${escapeHtml(k.description)} (${k.family}${k.subagent ? ', needs parentAgentId' : ''}; default policy <code>${k.defaultPolicy}</code>)</li>`,
  ).join('\n')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gwctl gateway</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.4em;vertical-align:top;text-align:left}pre{white-space:pre-wrap;margin:0}</style>
</head><body>
<h1>gwctl gateway ${escapeHtml(context.version)}</h1>
<p>Listening on <code>http://127.0.0.1:${context.port}</code> (loopback only). Management endpoints need no key; model entrances need a gateway key (<code>gw-…</code>) from <code>POST /api/keys/issue</code> or <code>gwctl key issue</code>.</p>
<table><thead><tr><th>Method</th><th>Path</th><th>Purpose</th><th>Example</th></tr></thead>
<tbody>
${rows}
</tbody></table>
<h2>Agent kinds</h2>
<ul>
${kinds}
</ul>
</body></html>
`
}

function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && /^application\/([\w.+-]*\+)?json\s*(;|$)/i.test(value.trim())
}

async function issue(request: GatewayRequest, context: GatewayContext): Promise<void> {
  if (!isJsonContentType(request.headers['content-type'])) {
    sendError(
      request.res,
      'chat',
      400,
      'The body must be JSON with the header Content-Type: application/json.',
      {
        code: 'invalid_content_type',
      },
    )
    return
  }
  const body = request.json()
  // what the state was, to put back when the new key cannot be saved (a full or read-only disk):
  // a key the caller never receives must not work, nor may a rotation revoke the key in use
  const before = structuredClone(context.store.data)
  let result
  try {
    result = issueKey(context.store.data, validateIssueRequest(body))
  } catch (error) {
    if (error instanceof IssueError) {
      sendError(request.res, 'chat', error.status, error.message, {
        code: error.code,
        headers:
          error.retryAfterSeconds === undefined ? {} : {'retry-after': String(error.retryAfterSeconds)},
      })
      return
    }
    throw error
  }
  context.index.add(result.key, result.agent)
  // The key is answered only once it is on disk: every 200 survives a crash.
  if (!(await saved(request, context, before, 'The key was not issued'))) return
  request.agentId = result.agent.id
  emitGatewayEvent({type: 'agent', agentId: result.agent.id, change: 'key issued'})
  sendJson(request.res, 200, result.response)
}

/** `POST /api/keys/revoke` `{keyId}`: revokes one key at once (agents disable). */
async function revoke(request: GatewayRequest, context: GatewayContext): Promise<void> {
  const body = (isJsonContentType(request.headers['content-type']) ? request.json() : undefined) as
    {keyId?: unknown} | undefined
  const before = structuredClone(context.store.data)
  const result = revokeKeyInState(context.store.data, body?.keyId)
  if (!result.ok) {
    sendError(request.res, 'chat', result.status, result.message, {code: result.code})
    return
  }
  // the index holds the same record objects: the revocation applies to the next request
  if (!(await saved(request, context, before, 'The key was not revoked'))) return
  emitGatewayEvent({type: 'agent', agentId: result.key.agentId ?? null, change: 'key revoked'})
  sendJson(request.res, 200, {keyId: result.key.id, revokedAt: result.key.revokedAt})
}

async function diskBindings(path: string): Promise<GatewayState['bindings'] | undefined> {
  try {
    const disk = JSON.parse(await readFile(path, 'utf8')) as Partial<GatewayState>
    return Array.isArray(disk.bindings) ? disk.bindings : undefined
  } catch {
    return undefined
  }
}

/**
 * `POST /api/agents/remove` `{agentId}`: removes an agent and revokes its keys at once (`gwctl
 * agents remove`); 409 while a coding agent's config is bound to it or it has sub-agents.
 */
async function removeAgent(request: GatewayRequest, context: GatewayContext): Promise<void> {
  const body = (isJsonContentType(request.headers['content-type']) ? request.json() : undefined) as
    {agentId?: unknown} | undefined
  const before = structuredClone(context.store.data)
  // bindings are the CLI's, written to the file at run time: the copy on disk is the live one
  const bindings = await diskBindings(context.store.path)
  const result = removeAgentInState(
    bindings ? {...context.store.data, bindings} : context.store.data,
    body?.agentId,
  )
  if (!result.ok) {
    sendError(request.res, 'chat', result.status, result.message, {code: result.code})
    return
  }
  if (!(await saved(request, context, before, 'The agent was not removed'))) return
  context.index.rebuild()
  emitGatewayEvent({type: 'agent', agentId: result.agent.id, change: 'removed'})
  sendJson(request.res, 200, {agentId: result.agent.id, revokedKeyIds: result.revokedKeyIds})
}

/**
 * Saves the state; when the disk refuses, puts `before` back (the key index with it), answers 503
 * and reports the gateway degraded, so what the caller was told matches what is on disk.
 */
async function saved(
  request: GatewayRequest,
  context: GatewayContext,
  before: GatewayContext['store']['data'],
  what: string,
): Promise<boolean> {
  try {
    await context.store.save()
    context.degrade?.('state', undefined)
    return true
  } catch (error) {
    const data = context.store.data as unknown as Record<string, unknown>
    for (const key of Object.keys(data)) delete data[key]
    Object.assign(data, before)
    context.index.rebuild()
    const reason = `could not save ${context.store.path}: ${(error as Error).message}`
    context.degrade?.('state', reason)
    sendError(
      request.res,
      'chat',
      503,
      `${what}: the gateway ${reason}. Free space or make it writable, then try again.`,
      {
        code: 'state_unwritable',
      },
    )
    return false
  }
}

/** Every management route. */
export function managementRoutes(): Route[] {
  const m = (method: string, path: string, handler: Route['handler']): Route => ({
    method,
    path,
    family: 'chat',
    management: true,
    maxBodyBytes: MANAGEMENT_MAX_BODY,
    handler,
  })
  return [
    // model traffic still flows when the log store cannot write: 200, with the reason
    m('GET', '/health', (request, context) =>
      sendJson(request.res, 200, {
        status: 'ok',
        timestamp: Math.floor(Date.now() / 1000),
        ...(context.degraded ? {degraded: context.degraded} : {}),
      }),
    ),
    m('GET', '/help', (request, context) => {
      const html = helpPage(context)
      request.res.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-length': Buffer.byteLength(html),
        'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
      })
      request.res.end(html)
    }),
    m('GET', '/metrics', metricsHandler),
    m('POST', '/api/keys/issue', issue),
    m('POST', '/api/keys/revoke', revoke),
    m('POST', '/api/agents/remove', removeAgent),
    m('GET', '/api/agents', (request, context) =>
      sendJson(request.res, 200, {agents: routedAgentViews(context.store.data, context.routing)}),
    ),
    m('GET', '/api/logs', logsHandler),
    m('GET', '/api/usage', usageHandler),
    m('GET', '/api/usage/statusline', statuslineHandler),
    m('GET', '/api/providers', providersHandler),
    m('GET', '/api/adaptations', (request) =>
      sendJson(request.res, 200, {adaptations: learnedAdaptations()}),
    ),
    m('GET', '/api/dashboard', dashboardHandler),
    m('GET', '/api/events', eventsHandler),
    m('GET', '/api/budgets', (request, context) =>
      sendJson(request.res, 200, {budgets: budgetViews(context)}),
    ),
    m('POST', '/api/budgets/reload', async (request, context) => {
      try {
        sendJson(request.res, 200, {budgets: await reloadBudgets(context)})
        context.degrade?.('budgets', undefined)
      } catch (error) {
        sendError(request.res, 'chat', 400, `The budgets were not reloaded: ${(error as Error).message}`, {
          code: 'budgets_invalid',
        })
      }
    }),
    m('GET', '/api/keys', (request, context) =>
      sendJson(request.res, 200, {keys: keyViews(context.store.data)}),
    ),
    m('GET', '/api/status', (request, context) => {
      const state = context.store.data
      const views = agentViews(routedState(state, context.routing))
      const latest = Math.max(context.lastRequestAt ?? 0, latestRequestAt(state) ?? 0)
      sendJson(request.res, 200, {
        status: 'ok',
        pid: process.pid,
        port: context.port,
        version: context.version,
        startedAt: Math.floor(context.startedAt / 1000),
        uptimeSeconds: Math.floor((Date.now() - context.startedAt) / 1000),
        agents: views.length,
        enabledAgents: views.filter((v) => v.enabled).length,
        agentsPerRoute: agentsPerRoute(views, context.routing?.providers),
        latestRequestAt: latest || null,
        simOrigin: context.routing?.simOrigin ?? null,
        budgets: budgetViews(context),
        ...(context.telemetry ? {telemetry: context.telemetry.status()} : {}),
        ...(context.degraded ? {degraded: context.degraded} : {}),
      })
    }),
  ]
}
