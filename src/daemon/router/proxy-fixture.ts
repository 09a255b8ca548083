/**
 * Test helpers of the router tests (not a test itself; nothing in the product imports it): the
 * daemon's part played in this process by a tiny `node:http` server over `proxyRequest`, and
 * scripted upstreams. Both listen on 127.0.0.1, on a free port each.
 */
import {mkdtempSync, rmSync} from 'node:fs'
import type {IncomingHttpHeaders, IncomingMessage, Server, ServerResponse} from 'node:http'
import {createServer} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {LogStore} from '../../store/log-store.js'
import type {Family, PolicyConfig, ProviderConfig, TimeoutSettings} from '../../store/schema.js'
import {DEFAULT_TIMEOUTS} from '../../store/schema.js'
import type {RouterOptions} from './index.js'
import {Router} from './index.js'
import type {RequestIdentity} from './log-entry.js'
import type {ProxyOptions, ProxyResult, ProxyTarget} from './proxy.js'
import {proxyRequest, UpstreamPools} from './proxy.js'

/** A request's whole body. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** The entrance a path belongs to (Gemini for any path not of the three others). */
export function familyOf(url: string): Family {
  if (url.startsWith('/v1/chat/')) return 'chat'
  if (url.startsWith('/v1/responses')) return 'responses'
  if (url.startsWith('/v1/messages')) return 'messages'
  return 'gemini'
}

/** Starts `server` on a free port of 127.0.0.1; its origin. */
async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

/** Closes `server` and the connections it holds (without waiting for them to end). */
function shut(server: Server): void {
  server.closeAllConnections()
  server.close()
}

/** A scripted upstream: its origin, and what closes it. */
export interface Upstream {
  origin: string
  close: () => void
}

/** What a scripted upstream does with a request, given its whole body. */
export type UpstreamHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  body: Buffer,
) => void | Promise<void>

/** Starts a scripted upstream over `handler`. */
export async function startUpstream(handler: UpstreamHandler): Promise<Upstream> {
  const server = createServer(async (req, res) => handler(req, res, await readBody(req)))
  const origin = await listen(server)
  return {origin, close: () => shut(server)}
}

/**
 * Records what each write to `res`'s socket holds, in order, into `writes` (`_write`, or `_writev`
 * for the writes of a corked tick, joined): the chunks a client receives, as the relays wrote them.
 */
export function recordSocketWrites(res: ServerResponse, writes: string[]): void {
  const socket = res.socket as Socket & {
    _write: (chunk: Buffer | string, encoding: string, cb: () => void) => void
    _writev: (chunks: Array<{chunk: Buffer | string}>, cb: () => void) => void
  }
  const write = socket._write
  const writev = socket._writev
  socket._write = function (c, encoding, cb) {
    writes.push(String(c))
    write.call(this, c, encoding, cb)
  }
  socket._writev = function (chunks, cb) {
    writes.push(chunks.map((c) => String(c.chunk)).join(''))
    writev.call(this, chunks, cb)
  }
}

/**
 * A chat client's smallest request (`hi`, not streamed) posted to the gateway at `origin`, which
 * the client leaves (aborts) 50 ms after `sent` resolves: a client gone once the upstream has
 * sent its headers, before any byte of the answer reached it. Resolves once its fetch has ended.
 */
export async function leaveChat(origin: string, sent: Promise<void>): Promise<void> {
  const controller = new AbortController()
  const answer = fetch(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify({model: 'm', messages: [{role: 'user', content: 'hi'}]}),
    signal: controller.signal,
  }).catch(() => undefined)
  await sent
  await new Promise((resolve) => setTimeout(resolve, 50))
  controller.abort()
  await answer
}

/** An upstream's refusal of a request: its status and JSON body. */
export interface Refusal {
  status: number
  body: unknown
}

/**
 * A scripted upstream that keeps each request's body in `received` and answers it as `judge`
 * says (given the body and the request's headers): its refusal, or (none) `answers.stream` as an
 * event stream to a body that asked for one, else `answers.json`.
 */
export function startJudgedUpstream(
  received: Buffer[],
  judge: (body: Record<string, unknown>, headers: IncomingHttpHeaders) => Refusal | undefined,
  answers: {stream: string; json: string},
): Promise<Upstream> {
  return startUpstream((req, res, body) => {
    received.push(body)
    const json = JSON.parse(String(body)) as Record<string, unknown>
    const refused = judge(json, req.headers)
    if (refused) {
      res.writeHead(refused.status, {'content-type': 'application/json'})
      res.end(JSON.stringify(refused.body))
      return
    }
    // (Gemini asks in its URL: `:streamGenerateContent`, `alt=sse`)
    const stream = json.stream === true || /:streamGenerateContent|[?&]alt=sse/.test(req.url ?? '')
    res.writeHead(200, {'content-type': stream ? 'text/event-stream' : 'application/json'})
    res.end(stream ? answers.stream : answers.json)
  })
}

/** A chat provider's target at a scripted upstream (`origin`), for `model`. */
export const chatTarget = (name: string, model: string, origin: string): ProxyTarget => ({
  provider: {name, family: 'chat', baseUrl: origin, credential: {secret: 'upstream-key'}},
  model,
})

/** A chat provider's target at `baseUrl` for `model`, translated from the client's family. */
export const translatedChatTarget = (name: string, model: string, baseUrl: string): ProxyTarget => ({
  ...chatTarget(name, model, baseUrl),
  translate: true,
})

/** A Messages provider's target at a scripted upstream (`origin`), for `model`. */
export const messagesTarget = (name: string, model: string, origin: string): ProxyTarget => ({
  provider: {name, family: 'messages', baseUrl: origin, credential: {secret: 'upstream-key'}},
  model,
})

/** A Responses provider's target at a scripted upstream (`origin`, its API under `/v1`), for `model`. */
export const responsesTarget = (name: string, model: string, origin: string): ProxyTarget => ({
  provider: {name, family: 'responses', baseUrl: `${origin}/v1`, credential: {secret: 'k'}},
  model,
})

/** A Responses answer of one message (`text`, its id `messageId`), as a scripted upstream gives it. */
export const responsesAnswer = (id: string, messageId: string, text: string, inputTokens: number): string =>
  JSON.stringify({
    id,
    object: 'response',
    created_at: 1,
    status: 'completed',
    model: 'gpt-5.5',
    output: [
      {
        type: 'message',
        id: messageId,
        role: 'assistant',
        status: 'completed',
        content: [{type: 'output_text', text, annotations: []}],
      },
    ],
    usage: {input_tokens: inputTokens, output_tokens: 1, total_tokens: inputTokens + 1},
  })

/**
 * A Messages client's smallest request (`hi`, 64 tokens, not streamed, the key `gw-key`) posted to
 * the gateway at `origin`: what a test of the answer's status and headers sends.
 */
export const askMessages = (origin: string): Promise<Response> =>
  fetch(`${origin}/v1/messages`, {
    method: 'POST',
    headers: {'content-type': 'application/json', 'x-api-key': 'gw-key', 'anthropic-version': '2023-06-01'},
    body: JSON.stringify({
      model: 'claude-sonnet-4-5',
      max_tokens: 64,
      messages: [{role: 'user', content: 'hi'}],
    }),
  })

const MESSAGE = {
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'm',
  content: [{type: 'text', text: 'done'}],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: {input_tokens: 3, output_tokens: 1},
}

/** The headers Claude Code 2.1.332 posts to the gateway's `/v1/messages` with (its key `gw`), `extra` over them. */
export const claudeCodeHeaders = (extra: Record<string, string> = {}): Record<string, string> => ({
  'content-type': 'application/json',
  'x-api-key': 'gw',
  'anthropic-version': '2023-06-01',
  'user-agent': 'claude-cli/2.1.332 (external, cli)',
  ...extra,
})

/**
 * Points the gateway's connection pools for the vendors' `origins` (`https://api.z.ai`) at `to()`
 * (a scripted upstream or the simulator on 127.0.0.1): a target at a vendor's base URL, its host
 * tests and all, is served here, and nothing leaves this machine.
 */
export function serveOrigins(gateway: ProxyGateway, origins: ReadonlySet<string>, to: () => string): void {
  const get = gateway.pools.get.bind(gateway.pools)
  gateway.pools.get = (origin, timeouts) => get(origins.has(origin) ? to() : origin, timeouts)
}

/** A Messages answer a scripted upstream answers with (its text: `done`). */
export const MESSAGES_ANSWER = JSON.stringify(MESSAGE)

/** The same answer as a Messages stream. */
export const MESSAGES_STREAM = [
  ['message_start', {type: 'message_start', message: {...MESSAGE, content: [], stop_reason: null}}],
  ['content_block_start', {type: 'content_block_start', index: 0, content_block: {type: 'text', text: ''}}],
  ['content_block_delta', {type: 'content_block_delta', index: 0, delta: {type: 'text_delta', text: 'done'}}],
  ['content_block_stop', {type: 'content_block_stop', index: 0}],
  ['message_delta', {type: 'message_delta', delta: {stop_reason: 'end_turn'}, usage: {output_tokens: 1}}],
  ['message_stop', {type: 'message_stop'}],
]
  .map(([event, data]) => `event: ${event as string}\ndata: ${JSON.stringify(data)}\n\n`)
  .join('')

/** A chat completion a scripted upstream answers with (its text: `done`). */
export const CHAT_ANSWER = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{index: 0, message: {role: 'assistant', content: 'done'}, finish_reason: 'stop'}],
})

/** A Responses answer a scripted upstream answers with (its text: `done`, its id `resp_1`). */
export const RESPONSES_ANSWER = responsesAnswer('resp_1', 'msg_1', 'done', 9)

/** The same answer as a Responses stream (created, then completed). */
export const RESPONSES_STREAM = [
  {type: 'response.created', response: {id: 'resp_1', status: 'in_progress', output: []}},
  {type: 'response.completed', response: JSON.parse(RESPONSES_ANSWER) as unknown},
]
  .map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`)
  .join('')

/** {@link CHAT_ANSWER} with the usage its upstream bills (1200 input, 40 output tokens). */
export const CHAT_ANSWER_BILLED = JSON.stringify({
  ...(JSON.parse(CHAT_ANSWER) as object),
  usage: {prompt_tokens: 1200, completion_tokens: 40, total_tokens: 1240},
})

/** What the gateway does with a request: the policy's part of `proxyRequest`'s options. */
export interface GatewayRoute {
  targets: ProxyTarget[]
  /** Default true. */
  fallbacks?: boolean
  /** Default DEFAULT_TIMEOUTS. */
  timeouts?: TimeoutSettings
}

export interface ProxyGatewayOptions {
  /** Asked at each request (after its body is read), so a test may change it between requests. */
  route: (family: Family, req: IncomingMessage) => GatewayRoute
  /** The entrance of each request (default: by its path, `familyOf`). */
  family?: (req: IncomingMessage) => Family
  /** Sees each answer before the proxy writes to it (e.g. to spy on its socket). */
  onResponse?: (res: ServerResponse) => void
  /** The proxy's waits after a 429 (`ProxyOptions.sleep`; default a timer). */
  sleep?: (ms: number) => Promise<void>
  /** The daemon's memory of opaque state and minted items (`ProxyOptions.carry`; default none). */
  carry?: ProxyOptions['carry']
}

/**
 * A gateway over `proxyRequest` with connection pools of its own; `results` collects each
 * request's result, in the order they end. Made at once, listening after `listen()`.
 */
export class ProxyGateway {
  readonly results: ProxyResult[] = []
  readonly pools = new UpstreamPools()
  private readonly server: Server
  private origin: string | undefined

  constructor(options: ProxyGatewayOptions) {
    this.server = createServer(async (req, res) => {
      const url = req.url ?? '/'
      const family = options.family?.(req) ?? familyOf(url)
      const body = await readBody(req)
      const route = options.route(family, req)
      options.onResponse?.(res)
      this.results.push(
        await proxyRequest({family, method: req.method ?? 'POST', url, headers: req.headers, body}, res, {
          targets: route.targets,
          fallbacks: route.fallbacks ?? true,
          timeouts: route.timeouts ?? DEFAULT_TIMEOUTS,
          pools: this.pools,
          sleep: options.sleep,
          carry: options.carry,
        }),
      )
    })
  }

  /** Starts listening; the gateway's origin. */
  async listen(): Promise<string> {
    this.origin = await listen(this.server)
    return this.origin
  }

  /** `http://127.0.0.1:<port>`, once listening. */
  get url(): string {
    if (!this.origin) throw new Error('the gateway is not listening: call listen() first')
    return this.origin
  }

  /** The results once `n` requests have ended (or as they are after 2 s). */
  async settled(n = 1): Promise<ProxyResult[]> {
    for (let i = 0; i < 400 && this.results.length < n; i++) await new Promise((r) => setTimeout(r, 5))
    return this.results
  }

  /** Closes the server, its connections and the pools. */
  async close(): Promise<void> {
    shut(this.server)
    await this.pools.close()
  }
}

/** A judged Messages upstream behind a `ProxyGateway`: what the tests of a pass-through rule use. */
export interface JudgedMessagesGateway {
  /** The gateway, made at once, listening after `start()`. */
  gateway: ProxyGateway
  /** The upstream (its origin once `start()` has run). */
  upstream: {readonly origin: string}
  /** Each request's body as the upstream received it, in order. */
  received: Buffer[]
  /** Each request's headers as the upstream received them, in order. */
  headers: IncomingHttpHeaders[]
  /** Starts the upstream, then the gateway (each on a free port of 127.0.0.1). */
  start: () => Promise<void>
  /** Forgets the requests received and the gateway's results (between tests). */
  clear: () => void
  /** Closes the gateway (its pools too) and the upstream. */
  close: () => Promise<void>
  /**
   * Posts `body` (bytes as they are, else its JSON) to the gateway's `/v1/messages` as Claude Code
   * 2.1.332 does (its key, `anthropic-version`, its user agent), `headers` over those.
   */
  post: (body: unknown, headers?: Record<string, string>) => Promise<Response>
}

/**
 * A judged upstream (`startJudgedUpstream`: refuses as `judge` says, else answers `answers`, by
 * default Messages' `MESSAGES_STREAM` or `MESSAGES_ANSWER`; a chat or Gemini upstream's behind a
 * translated route) behind a `ProxyGateway` over `options`; both started by `start()`. Made at
 * once, so a test file may destructure it at its top.
 */
export function judgedMessagesGateway(
  judge: (body: Record<string, unknown>, headers: IncomingHttpHeaders) => Refusal | undefined,
  options: ProxyGatewayOptions,
  answers: {stream: string; json: string} = {stream: MESSAGES_STREAM, json: MESSAGES_ANSWER},
): JudgedMessagesGateway {
  const received: Buffer[] = []
  const headers: IncomingHttpHeaders[] = []
  const gateway = new ProxyGateway(options)
  let started: Upstream | undefined
  const upstream = {
    get origin(): string {
      if (!started) throw new Error('the upstream is not listening: call start() first')
      return started.origin
    },
  }
  return {
    gateway,
    upstream,
    received,
    headers,
    start: async () => {
      started = await startJudgedUpstream(
        received,
        (body, h) => {
          headers.push(h)
          return judge(body, h)
        },
        answers,
      )
      await gateway.listen()
    },
    clear: () => {
      received.length = 0
      headers.length = 0
      gateway.results.length = 0
    },
    close: async () => {
      await gateway.close()
      started?.close()
    },
    post: (body, extra = {}) =>
      fetch(`${gateway.url}/v1/messages`, {
        method: 'POST',
        headers: claudeCodeHeaders(extra),
        body: typeof body === 'string' ? body : JSON.stringify(body),
      }),
  }
}

/** What `routerWithLogs` routes: the daemon's part of a request, as its server hands it over. */
export interface RouterWithLogsOptions {
  providers: ProviderConfig[]
  /** Each request's policy (a function: asked at each request, so it may depend on the request). */
  policy: PolicyConfig | ((req: IncomingMessage) => PolicyConfig | undefined)
  /** The entrance of each request (default: by its path, `familyOf`). */
  family?: Family
  /** Who calls, for the rows (default: `agent-1` of the policy `p`, no key, no project). */
  identity?: RequestIdentity | ((req: IncomingMessage) => RequestIdentity)
  /** The Router's other options (its log store is the one made here). */
  router?: Omit<RouterOptions, 'logStore'>
}

/** A Router writing its rows into a logs.db of its own, behind a server of its own. */
export interface RouterWithLogs {
  /** The server's origin, `http://127.0.0.1:<port>`. */
  url: string
  router: Router
  store: LogStore
  /** The temp folder whose logs.db the rows go into (a `gwctl` run's HOME, to read them back). */
  home: string
  /** Closes the server and its connections, the Router, the store, and removes the home. */
  close: () => Promise<void>
}

/**
 * The daemon's request path in this process, rows and all: a `Router` whose log store is a
 * logs.db in a temp folder, behind a `node:http` server on a free port of 127.0.0.1 that routes each
 * request as `options` say. What a test of a request's log row (logs.db, `gwctl usage`) runs over.
 */
export async function routerWithLogs(options: RouterWithLogsOptions): Promise<RouterWithLogs> {
  const home = mkdtempSync(join(tmpdir(), 'gwctl-test-'))
  const store = await LogStore.open(join(home, 'logs.db'))
  const router = new Router({...options.router, logStore: store})
  const {policy, identity} = options
  const server = createServer(async (req, res) => {
    const body = await readBody(req)
    const url = req.url ?? '/'
    await router.route(
      {
        family: options.family ?? familyOf(url),
        method: req.method ?? 'POST',
        url,
        headers: req.headers,
        body,
        policy: typeof policy === 'function' ? policy(req) : policy,
        providers: options.providers,
        identity: (typeof identity === 'function' ? identity(req) : identity) ?? {
          agentId: 'agent-1',
          keyPrefix: null,
          policyId: 'p',
          project: null,
        },
      },
      res,
    )
  })
  return {
    url: await listen(server),
    router,
    store,
    home,
    close: async () => {
      shut(server)
      await router.close()
      store.close()
      rmSync(home, {recursive: true, force: true})
    },
  }
}
