/**
 * Faults found by probing the daemon (issue 14), each as a fast deterministic test: what ends a
 * breaker trial settles it, unexpected errors are answered in the entrance's shape and logged, a
 * large body answered early does not block the next request, upstream errors that are not JSON
 * are wrapped.
 */
import type {ServerResponse} from 'node:http'
import {createServer} from 'node:http'
import type {AddressInfo, Socket} from 'node:net'
import {createServer as createNetServer} from 'node:net'
import {gunzipSync, gzipSync} from 'node:zlib'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {LogEntry, LogStore} from '../../store/log-store.js'
import type {Family, PolicyConfig, ProviderConfig, TimeoutSettings} from '../../store/schema.js'
import {DEFAULT_BREAKER, DEFAULT_TIMEOUTS} from '../../store/schema.js'
import {BreakerRegistry} from './breaker.js'
import {Router} from './index.js'
import type {ProxyTarget} from './proxy.js'
import {learnedAdaptations} from './proxy.js'
import type {UpstreamHandler} from './proxy-fixture.js'
import {ProxyGateway, readBody, startUpstream} from './proxy-fixture.js'

let gatewayUrl: string
let route: () => {targets: ProxyTarget[]; timeouts?: TimeoutSettings}
const closers: (() => void)[] = []
const gateway = new ProxyGateway({
  family: (req) => (req.headers['x-test-family'] as Family | undefined) ?? 'chat',
  route: () => route(),
})
const {results} = gateway

const provider = (name: string, family: Family, baseUrl: string): ProviderConfig => ({
  name,
  family,
  baseUrl,
  credential: {secret: `upstream-key-${name}`},
})

async function upstreamServer(handler: UpstreamHandler): Promise<string> {
  const upstream = await startUpstream(handler)
  closers.push(upstream.close)
  return upstream.origin
}

const chatOk = (res: ServerResponse): void => {
  const text = JSON.stringify({
    id: 'c1',
    object: 'chat.completion',
    choices: [{index: 0, message: {role: 'assistant', content: 'ok'}, finish_reason: 'stop'}],
    usage: {prompt_tokens: 3, completion_tokens: 1, total_tokens: 4},
  })
  res.writeHead(200, {'content-type': 'application/json', 'content-length': Buffer.byteLength(text)})
  res.end(text)
}

const chat = (body: string | Buffer): Promise<Response> =>
  fetch(`${gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body,
  })

beforeAll(async () => {
  gatewayUrl = await gateway.listen()
})

afterEach(() => {
  results.length = 0
  for (const close of closers.splice(0)) close()
})

afterAll(async () => {
  await gateway.close()
})

/** A breaker already open, whose cooldown has just passed (the next request is its one trial). */
function halfOpen(name: string): {breakers: BreakerRegistry; advance: (ms: number) => void} {
  let now = 1_000_000
  const breakers = new BreakerRegistry(
    () => ({failureThreshold: 1, cooldownMs: 30_000}),
    () => now,
  )
  breakers.get(name).recordFailure('status 500')
  now += 30_000
  expect(breakers.snapshotOf(name).state).toBe('half-open')
  return {breakers, advance: (ms) => (now += ms)}
}

describe('503 while a breaker trial is in flight (issue 29, item 7)', () => {
  it('carries Retry-After, as the 503 of an open breaker does', async () => {
    const origin = await upstreamServer((_req, res) => chatOk(res))
    const {breakers} = halfOpen('up')
    route = () => ({targets: [{provider: provider('up', 'chat', origin), breaker: breakers.get('up')}]})
    // another request holds the one trial
    expect(breakers.get('up').tryAcquire()).toBe(true)
    const res = await chat('{"model":"m","messages":[{"role":"user","content":"hi"}]}')
    expect(res.status).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(((await res.json()) as {error: {message: string}}).error.message).toMatch(/circuit-broken/)
  })
})

describe('a breaker trial is settled whatever ends it', () => {
  it('a streaming chat nested 20 000 deep is answered 400 in the chat shape and leaves the trial free', async () => {
    const origin = await upstreamServer((_req, res) => chatOk(res))
    const {breakers} = halfOpen('up')
    route = () => ({targets: [{provider: provider('up', 'chat', origin), breaker: breakers.get('up')}]})
    const deep = '['.repeat(20_000) + ']'.repeat(20_000)
    // `stream_options` without `include_usage`: the body is parsed and re-encoded to ask for usage
    // (a body without one has the member added to its bytes, and goes through as it came)
    const res = await chat(
      `{"model":"m","stream":true,"stream_options":{},"messages":[{"role":"user","content":${deep}}]}`,
    )
    expect(res.status).toBe(400)
    const body = (await res.json()) as {error: {type: string; message: string}}
    expect(body.error.type).toBe('invalid_request_error')
    expect(body.error.message).toMatch(/nest its JSON less deeply/)
    // the trial was given back: the next request takes it, and its success closes the breaker
    expect(breakers.snapshotOf('up').state).toBe('half-open')
    const next = await chat('{"model":"m","messages":[{"role":"user","content":"hi"}]}')
    expect(next.status).toBe(200)
    expect(breakers.snapshotOf('up').state).toBe('closed')
  })

  it('an error answer cut off mid-way counts as a failure (502 in the chat shape), and the breaker closes after its next cooldown', async () => {
    let cut = true
    const origin = await upstreamServer((_req, res) => {
      if (!cut) return chatOk(res)
      res.writeHead(500, {'content-type': 'application/json', 'content-length': '200'})
      res.write('{"error":{"message":"boo')
      setTimeout(() => res.destroy(), 20)
    })
    const {breakers, advance} = halfOpen('up')
    route = () => ({targets: [{provider: provider('up', 'chat', origin), breaker: breakers.get('up')}]})
    const res = await chat('{"model":"m","messages":[]}')
    expect(res.status).toBe(502)
    const body = (await res.json()) as {error: {message: string}}
    expect(body.error.message).toMatch(/broke off/)
    expect(breakers.snapshotOf('up').state).toBe('open')
    const open = await chat('{"model":"m","messages":[]}')
    expect(open.status).toBe(503)
    expect(open.headers.get('retry-after')).toBe('30')
    cut = false
    advance(30_000)
    expect((await chat('{"model":"m","messages":[]}')).status).toBe(200)
    expect(breakers.snapshotOf('up').state).toBe('closed')
  })
})

describe('upstream errors that are not JSON', () => {
  it('an HTML 502 page and an empty 503 are wrapped in the entrance shape; a quoted key is redacted', async () => {
    let answer = 0
    const origin = await upstreamServer((_req, res) => {
      answer++
      if (answer === 1) {
        res.writeHead(502, {'content-type': 'text/html'})
        res.end('<html><body><h1>502 Bad Gateway</h1> nginx upstream-key-up</body></html>')
      } else {
        res.writeHead(503)
        res.end()
      }
    })
    route = () => ({targets: [{provider: provider('up', 'chat', origin)}]})
    const html = await chat('{"model":"m","messages":[]}')
    expect(html.status).toBe(502)
    expect(html.headers.get('content-type')).toBe('application/json')
    const text = await html.text()
    expect(text).not.toContain('upstream-key-up')
    const body = JSON.parse(text) as {error: {message: string; type: string}}
    expect(body.error.message).toContain('502 Bad Gateway nginx [redacted]')
    const empty = await chat('{"model":"m","messages":[]}')
    expect(empty.status).toBe(503)
    expect(((await empty.json()) as {error: {message: string}}).error.message).toMatch(/empty body/)
  })
})

describe('an HTML or empty upstream error, for each entrance', () => {
  const shapes: Record<Family, (body: any) => string> = {
    chat: (b) => b.error.message,
    responses: (b) => b.error.message,
    messages: (b) => (b.type === 'error' ? b.error.message : 'not the messages shape'),
    gemini: (b) =>
      typeof b.error.code === 'number' && typeof b.error.status === 'string' ? b.error.message : 'no',
  }
  for (const family of ['chat', 'responses', 'messages', 'gemini'] as Family[]) {
    it(`is wrapped in the ${family} error shape`, async () => {
      let answer = 0
      const origin = await upstreamServer((_req, res) => {
        answer++
        if (answer === 1) {
          res.writeHead(502, {'content-type': 'text/html'})
          res.end('<html><body><h1>502 Bad Gateway</h1></body></html>')
        } else {
          res.writeHead(500)
          res.end()
        }
      })
      route = () => ({targets: [{provider: provider('up', family, origin)}]})
      const send = () =>
        fetch(`${gatewayUrl}/x`, {method: 'POST', headers: {'x-test-family': family}, body: '{}'})
      const html = await send()
      expect(html.status).toBe(502)
      expect(html.headers.get('content-type')).toBe('application/json')
      expect(shapes[family](await html.json())).toBe('up: upstream answered 502: 502 Bad Gateway')
      const empty = await send()
      expect(empty.status).toBe(500)
      expect(shapes[family](await empty.json())).toBe('up: upstream answered 500 with an empty body')
    })
  }
})

describe('a 200 answer that quotes the provider key or is not JSON', () => {
  const KEY = 'upstream-key-echo'
  it('a key echoed in a JSON 200 is masked, the Content-Length still exact', async () => {
    const origin = await upstreamServer((_req, res) => {
      const text = `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"your key is ${KEY}"}}]}`
      res.writeHead(200, {'content-type': 'application/json', 'content-length': Buffer.byteLength(text)})
      res.end(text)
    })
    route = () => ({targets: [{provider: provider('echo', 'chat', origin)}]})
    const res = await chat('{"model":"m","messages":[]}')
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).not.toContain(KEY)
    expect(JSON.parse(text).choices[0].message.content).toBe('your key is [redacted]*******')
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(text))
  })

  it('a JSON answer goes out byte for byte: in one read or two, UTF-8, gzip bytes, a large one', async () => {
    const bodies: Array<{bytes: Buffer; headers: Record<string, string | number>; split?: boolean}> = []
    const json = (content: string) =>
      Buffer.from(
        `{"id":"c1","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":${JSON.stringify(content)}}}]}`,
      )
    // multi-byte characters, bytes that are not text at all (a gzip body), a large answer, and one
    // whose second half comes a read later
    bodies.push({
      bytes: json('héllo wörld — 日本語 😀 \u0000'),
      headers: {'content-type': 'application/json'},
    })
    bodies.push({
      bytes: gzipSync(json('compressed é')),
      headers: {'content-type': 'application/json', 'content-encoding': 'gzip'},
    })
    bodies.push({bytes: json('ü'.repeat(20_000)), headers: {'content-type': 'application/json'}})
    bodies.push({bytes: json('two reads ✓'), headers: {'content-type': 'application/json'}, split: true})
    let at = 0
    const origin = await upstreamServer(async (_req, res) => {
      const {bytes, headers, split} = bodies[at++]
      res.writeHead(200, {...headers, 'content-length': bytes.length})
      if (!split) return void res.end(bytes)
      // cut inside a character of three bytes
      const cut = bytes.indexOf(Buffer.from('✓')) + 1
      res.write(bytes.subarray(0, cut))
      await new Promise((resolve) => setTimeout(resolve, 30))
      res.end(bytes.subarray(cut))
    })
    route = () => ({targets: [{provider: provider('bytes', 'chat', origin)}]})
    for (const {bytes, headers} of bodies) {
      const res = await chat('{"model":"m","messages":[]}')
      expect(res.status).toBe(200)
      expect(res.headers.get('content-encoding') ?? undefined).toBe(headers['content-encoding'])
      // (fetch decodes a gzip body: compared with the upstream's bytes gunzipped)
      const got = Buffer.from(await res.arrayBuffer())
      const expected = headers['content-encoding'] ? gunzipSync(bytes) : bytes
      expect(got.equals(expected)).toBe(true)
    }
  })

  it('a key split across two chunks of a stream is masked; the stream is not held back', async () => {
    let second: () => void = () => undefined
    const secondSent = new Promise<void>((resolve) => (second = resolve))
    const origin = await upstreamServer(async (_req, res) => {
      res.writeHead(200, {'content-type': 'text/event-stream'})
      res.write(`data: {"choices":[{"index":0,"delta":{"content":"first"}}]}\n\n`)
      res.write(`data: {"choices":[{"index":0,"delta":{"content":"key ${KEY.slice(0, 6)}`)
      await secondSent
      res.end(`${KEY.slice(6)}"}}]}\n\ndata: [DONE]\n\n`)
    })
    route = () => ({targets: [{provider: provider('echo', 'chat', origin)}]})
    const res = await chat('{"model":"m","messages":[],"stream":true}')
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    let text = ''
    // the first event arrives before the upstream sends the rest: nothing buffered but the key's start
    while (!text.includes('first')) text += new TextDecoder().decode((await reader.read()).value)
    second()
    for (;;) {
      const {value, done} = await reader.read()
      if (done) break
      text += new TextDecoder().decode(value)
    }
    expect(text).not.toContain(KEY)
    expect(text).toContain('"content":"key [redacted]*******"}')
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true)
  })

  it('a well-formed 200 has no error in its row', async () => {
    const origin = await upstreamServer((_req, res) => chatOk(res))
    route = () => ({targets: [{provider: provider('good', 'chat', origin)}]})
    const res = await chat('{"model":"m","messages":[]}')
    await res.text()
    expect(results[0].error).toBeNull()
  })
})

describe('upstream errors in another shape', () => {
  it('a JSON error that is not in the entrance shape ({"detail": ...}) is wrapped; one in the shape passes as it is', async () => {
    let shaped = false
    const origin = await upstreamServer((_req, res) => {
      const text = shaped
        ? '{"error":{"message":"model overloaded","type":"server_error","code":null}}'
        : '{"detail":"Internal Server Error"}'
      res.writeHead(500, {'content-type': 'application/json'})
      res.end(text)
    })
    route = () => ({targets: [{provider: provider('up', 'chat', origin)}]})
    const wrapped = await chat('{"model":"m","messages":[]}')
    expect(wrapped.status).toBe(500)
    const body = (await wrapped.json()) as {error: {message: string; type: string}}
    expect(body.error.type).toBe('api_error')
    expect(body.error.message).toContain('up: upstream answered 500: {"detail":"Internal Server Error"}')
    shaped = true
    const passed = await chat('{"model":"m","messages":[]}')
    expect(await passed.json()).toEqual({
      error: {message: 'model overloaded', type: 'server_error', code: null},
    })
  })
})

describe('a large body answered before it was read', () => {
  it('does not block the next request (each such body has a connection of its own)', async () => {
    // A raw upstream that answers 413 to a large body and then stops reading the connection (as
    // the simulator did): the unread bytes would sit in front of the next request.
    const sockets: Socket[] = []
    const server = createNetServer((socket) => {
      sockets.push(socket)
      let head = ''
      socket.on('data', (chunk: Buffer) => {
        head += chunk.toString('latin1')
        const end = head.indexOf('\r\n\r\n')
        if (end === -1) return
        const length = Number(/content-length:\s*(\d+)/i.exec(head.slice(0, end))?.[1] ?? 0)
        if (length > 1_000_000) {
          socket.pause()
          const text = '{"error":{"message":"request body too large","type":"invalid_request_error"}}'
          socket.write(
            `HTTP/1.1 413 Payload Too Large\r\ncontent-type: application/json\r\ncontent-length: ${text.length}\r\n\r\n${text}`,
          )
          return
        }
        if (head.length - end - 4 < length) return
        head = ''
        const text =
          '{"id":"c","object":"chat.completion","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}}'
        socket.write(
          `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${text.length}\r\n\r\n${text}`,
        )
      })
    })
    server.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    closers.push(() => {
      for (const s of sockets) s.destroy()
      server.close()
    })
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    route = () => ({
      targets: [{provider: provider('up', 'chat', origin)}],
      // a hang shows as a first-byte timeout (502) rather than a test timeout (a request not
      // streamed waits up to the idle timeout when that is longer: ./pools.ts)
      timeouts: {...DEFAULT_TIMEOUTS, firstByteMs: 3000, idleMs: 3000},
    })
    const big = await chat(`{"model":"m","messages":[{"role":"user","content":"${'x'.repeat(8_000_000)}"}]}`)
    expect(big.status).toBe(413)
    const next = await chat('{"model":"m","messages":[{"role":"user","content":"hi"}]}')
    expect(next.status).toBe(200)
    expect(results.map((r) => r.status)).toEqual([413, 200])
  })
})

describe('an unexpected error in the proxy', () => {
  it('is answered 500 in the entrance shape and logged with a row', async () => {
    const rows: LogEntry[] = []
    const errors: string[] = []
    const router = new Router({
      logStore: {append: (row: LogEntry) => rows.push(row)} as unknown as LogStore,
      onError: (message) => errors.push(message),
    })
    // a base URL that is not a URL makes the proxy throw (the policy check would refuse it at start)
    const providers: ProviderConfig[] = [provider('broken', 'messages', 'not a url')]
    const policy: PolicyConfig = {
      id: 'p',
      routes: {messages: [{provider: 'broken'}]},
      fallbacks: true,
      breaker: DEFAULT_BREAKER,
      timeouts: DEFAULT_TIMEOUTS,
    }
    const server = createServer(async (req, res) => {
      const body = await readBody(req)
      await router.route(
        {
          family: 'messages',
          method: 'POST',
          url: '/v1/messages',
          headers: req.headers,
          body,
          policy,
          providers,
          identity: {agentId: 'agt_1', keyPrefix: 'gw-x', policyId: 'p', project: 'proj'},
        },
        res,
      )
    })
    server.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    closers.push(() => server.close())
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/messages`, {
      method: 'POST',
      body: '{"model":"claude","max_tokens":5,"messages":[]}',
    })
    expect(res.status).toBe(500)
    const body = (await res.json()) as {type: string; error: {type: string}}
    expect(body).toMatchObject({type: 'error', error: {type: 'api_error'}})
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({status: 500, entrance: 'messages', agentId: 'agt_1'})
    expect(rows[0].error).toMatch(/internal error in the gateway/)
    expect(errors).toHaveLength(1)
    // the breaker permit was given back: the provider is not left circuit-broken
    expect(router.breakers.snapshotOf('broken').state).toBe('closed')
    await router.close()
  })
})

describe('a 200 answer the gateway must not pass on unchanged', () => {
  it('masks the provider key quoted back in a JSON 200 (content-length kept) and in a stream, even split across chunks', async () => {
    const key = 'upstream-key-echo'
    const origin = await upstreamServer((req, res, body) => {
      if (JSON.parse(body.toString()).stream) {
        res.writeHead(200, {'content-type': 'text/event-stream'})
        const event = `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"your key is ${key}"}}]}\n\n`
        const cut = event.indexOf(key) + 5
        res.write(event.slice(0, cut))
        setTimeout(() => {
          res.write(event.slice(cut))
          res.end('data: [DONE]\n\n')
        }, 20)
        return
      }
      const text = JSON.stringify({
        id: 'c1',
        object: 'chat.completion',
        choices: [{index: 0, message: {role: 'assistant', content: `echo: ${req.headers.authorization}`}}],
        usage: {prompt_tokens: 3, completion_tokens: 1, total_tokens: 4},
      })
      res.writeHead(200, {'content-type': 'application/json', 'content-length': Buffer.byteLength(text)})
      res.end(text)
    })
    route = () => ({targets: [{provider: provider('echo', 'chat', origin)}]})
    const plain = await chat('{"model":"m","messages":[]}')
    expect(plain.status).toBe(200)
    const body = (await plain.json()) as {choices: Array<{message: {content: string}}>}
    expect(body.choices[0].message.content).toBe(`echo: Bearer [redacted]${'*'.repeat(key.length - 10)}`)
    const stream = await chat('{"model":"m","stream":true,"messages":[]}')
    const text = await stream.text()
    expect(text).not.toContain(key)
    expect(text).toContain(`your key is [redacted]${'*'.repeat(key.length - 10)}"`)
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true)
  })

  it('passes a 200 with malformed JSON on as it came, and flags it in the log row', async () => {
    const origin = await upstreamServer((_req, res) => {
      res.writeHead(200, {'content-type': 'application/json'})
      res.end('{"id":"c1","choices":[{"index":0,')
    })
    route = () => ({targets: [{provider: provider('bad', 'chat', origin)}]})
    const res = await chat('{"model":"m","messages":[]}')
    expect(res.status).toBe(200)
    expect(await res.text()).toBe('{"id":"c1","choices":[{"index":0,')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(results.at(-1)).toMatchObject({status: 200, usage: null})
    expect(results.at(-1)!.error).toMatch(/^bad: upstream answered 200 with malformed JSON \(/)
  })
})

describe('the context window an upstream states when it refuses a long prompt', () => {
  const refuse = (res: ServerResponse, body: unknown): void => {
    const text = JSON.stringify(body)
    res.writeHead(400, {'content-type': 'application/json', 'content-length': Buffer.byteLength(text)})
    res.end(text)
  }
  const windowOf = (name: string) => learnedAdaptations().find((a) => a.provider === name)

  it("is kept for the target that answered (after a fallback), in the entrance's own words too", async () => {
    const failing = await upstreamServer((_req, res) => {
      res.writeHead(500)
      res.end()
    })
    const full = await upstreamServer((_req, res) =>
      refuse(res, {
        error: {
          message:
            "This model's maximum context length is 131072 tokens. However, your messages resulted in 140000 tokens. Please reduce the length of the messages.",
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      }),
    )
    route = () => ({
      targets: [{provider: provider('first', 'chat', failing)}, {provider: provider('second', 'chat', full)}],
    })
    const res = await chat('{"model":"big-model","messages":[{"role":"user","content":"hi"}]}')
    // said in the chat API's own words already: it goes to the client as it came
    expect(res.status).toBe(400)
    expect(((await res.json()) as {error: {code: string}}).error.code).toBe('context_length_exceeded')
    expect(windowOf('first')).toBeUndefined()
    expect(windowOf('second')).toMatchObject({model: 'big-model', window: {tokens: 131072, entrance: 'chat'}})
  })

  it("is kept from Anthropic's own words to a Messages client; not for a request without a model", async () => {
    const origin = await upstreamServer((_req, res) =>
      refuse(res, {
        type: 'error',
        error: {type: 'invalid_request_error', message: 'prompt is too long: 140000 tokens > 131072 maximum'},
      }),
    )
    route = () => ({targets: [{provider: provider('anthropic-like', 'messages', origin)}]})
    const ask = (body: object) =>
      fetch(`${gatewayUrl}/v1/messages`, {
        method: 'POST',
        headers: {'content-type': 'application/json', 'x-test-family': 'messages'},
        body: JSON.stringify(body),
      })
    const anonymous = await ask({max_tokens: 64, messages: [{role: 'user', content: 'hi'}]})
    expect(anonymous.status).toBe(400)
    expect(windowOf('anthropic-like')).toBeUndefined()
    const res = await ask({model: 'claude-x', max_tokens: 64, messages: [{role: 'user', content: 'hi'}]})
    expect(res.status).toBe(400)
    expect(((await res.json()) as {error: {message: string}}).error.message).toBe(
      'prompt is too long: 140000 tokens > 131072 maximum',
    )
    expect(windowOf('anthropic-like')).toMatchObject({
      model: 'claude-x',
      window: {tokens: 131072, entrance: 'messages'},
    })
  })
})
