/**
 * A request not streamed whose client leaves (before the upstream's headers, or during a translated
 * answer) is held (proxy.ts ClientGone): the upstream, which bills the whole answer whether or not
 * anyone reads it, is read to its end, and the 499 row in logs.db holds its usage, which `gwctl
 * usage` counts; within the idle timeout from the leaving. A stream's upstream request is aborted
 * at once (the vendors stop generating a stream whose reader left), but Amazon Bedrock's, which
 * bills it whole: read on so, while it goes on generating (its deadline counts from its last event).
 * Through the Router into logs.db, with a scripted chat upstream (its headers late, or its body in
 * parts; as Bedrock by its host name resolved to this machine).
 */
import {lookup} from 'node:dns'
import {request} from 'node:http'
import type {LookupFunction} from 'node:net'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {LogStore} from '../../store/log-store.js'
import type {Family, PolicyConfig, ProviderConfig} from '../../store/schema.js'
import type {RouterWithLogs, Upstream} from './proxy-fixture.js'
import {CHAT_ANSWER_BILLED, routerWithLogs, startUpstream} from './proxy-fixture.js'

const ANSWER = CHAT_ANSWER_BILLED
const STREAM = [
  {choices: [{index: 0, delta: {role: 'assistant', content: 'done'}, finish_reason: null}]},
  {choices: [{index: 0, delta: {}, finish_reason: 'stop'}]},
  {choices: [], usage: {prompt_tokens: 1200, completion_tokens: 40, total_tokens: 1240}},
]
  .map(
    (chunk) =>
      `data: ${JSON.stringify({id: 'c', object: 'chat.completion.chunk', model: 'm', ...chunk})}\n\n`,
  )
  .concat('data: [DONE]\n\n')
  .join('')

/** Where STREAM's first event ends. */
const FIRST = STREAM.indexOf('\n\n') + 2
/** A 64 KB event of text. */
const BIG_EVENT = `data: ${JSON.stringify({id: 'c', object: 'chat.completion.chunk', model: 'm', choices: [{index: 0, delta: {content: 'x'.repeat(64 * 1024)}, finish_reason: null}]})}\n\n`

/** The row of a client that left, with the usage the upstream billed. */
const BILLED_ROW = {status: 499, error: 'client closed the connection', inputTokens: 1200, outputTokens: 40}

/**
 * What the upstream does: `late` answers 300 ms after the request (headers and all); `split` sends
 * its headers and the first half of the body at once, the rest 300 ms later (JSON, streamed or
 * not); `trickle` the headers and a stream's first event at once, the rest (its usage) 300 ms
 * later (`stall`: never); `never` sends nothing; `refuse` a 400 300 ms later; `fail` a 500 at once.
 * After a stream's first event: `drip` an event every 200 ms for 2 s, then the rest; `blanks` a
 * keep-alive blank every 200 ms for 2.4 s, then the rest; `flood` 8 MB of events at once, the rest
 * 600 ms later; `deluge` 20 MB of events from 300 ms on, as fast as they are read, then the rest.
 */
let mode:
  | 'late'
  | 'split'
  | 'trickle'
  | 'stall'
  | 'drip'
  | 'blanks'
  | 'flood'
  | 'deluge'
  | 'never'
  | 'refuse'
  | 'large'
  | 'fail' = 'late'
/** Called when the upstream got a request, and when it sent its headers. */
let received: () => void = () => undefined
let headersSent: () => void = () => undefined
/** Whether the upstream's last request was closed by the gateway before its answer ended. */
let cutOff = false
let upstreamClosed: Promise<void> = Promise.resolve()

let gateway: RouterWithLogs
let store: LogStore
let upstream: Upstream
let url: string
/**
 * The upstream as a vendor's API (`up`: the simulator's origin, which stands for them; a request
 * held), as a server on this machine (`local`: vLLM, Ollama, LM Studio; never held), or as a vendor
 * whose breaker opens at one failure and lets a trial through 200 ms later (`trial`), or as Amazon
 * Bedrock's OpenAI endpoint (`bedrock`: its name, which `lookup` resolves to this machine; `mantle`
 * its Mantle endpoint's; `shouting` the runtime's name in capitals; `vpce` an interface VPC
 * endpoint's own name, AWS PrivateLink).
 */
type As = 'up' | 'local' | 'trial' | 'bedrock' | 'mantle' | 'shouting' | 'vpce'
/** A chat provider as the upstream, by the name `host` (resolved to this machine: `lookup`). */
const at = (name: As, host: string, path: string): ProviderConfig => ({
  name,
  family: 'chat',
  baseUrl: `http://${host}:${new URL(upstream.origin).port}${path}`,
  credential: {secret: 'k'},
})
const providers = (): ProviderConfig[] => [
  {name: 'up', family: 'chat', baseUrl: upstream.origin, credential: {secret: 'k'}, origin: 'sim'},
  {name: 'local', family: 'chat', baseUrl: upstream.origin, credential: {secret: 'k'}},
  {name: 'trial', family: 'chat', baseUrl: upstream.origin, credential: {secret: 'k'}, origin: 'sim'},
  at('bedrock', 'bedrock-runtime.us-east-1.amazonaws.com', '/openai/v1'),
  at('mantle', 'bedrock-mantle.us-east-1.api.aws', '/v1'),
  at('shouting', 'BEDROCK-RUNTIME.US-EAST-1.AMAZONAWS.COM', '/openai/v1'),
  at('vpce', 'vpce-0a1b2c3d4e5f-k3h2m1.bedrock-runtime.us-east-1.vpce.amazonaws.com', '/openai/v1'),
]
/** Every upstream name to this machine, where the scripted upstream listens. */
const toThisMachine: LookupFunction = (_hostname, options, callback) => lookup('127.0.0.1', options, callback)
const policyOf = (name: As): PolicyConfig => ({
  id: 'p',
  routes: {
    chat: [{provider: name, model: 'm'}],
    messages: [{provider: name, model: 'm', translate: true}],
  },
  fallbacks: true,
  breaker:
    name === 'trial' ? {failureThreshold: 1, cooldownMs: 200} : {failureThreshold: 5, cooldownMs: 30_000},
  timeouts: {connectMs: 2_000, firstByteMs: 2_000, idleMs: 1_000},
})

beforeAll(async () => {
  upstream = await startUpstream((_req, res, body) => {
    const streamed = body.includes('"stream":true')
    cutOff = false
    let ended = false
    res.on('finish', () => (ended = true))
    upstreamClosed = new Promise((resolve) =>
      res.on('close', () => {
        cutOff = !ended
        resolve()
      }),
    )
    const timers: NodeJS.Timeout[] = []
    res.on('close', () => timers.forEach(clearTimeout))
    received()
    if (mode === 'late')
      timers.push(
        setTimeout(() => {
          res.writeHead(200, {'content-type': streamed ? 'text/event-stream' : 'application/json'})
          headersSent()
          res.end(streamed ? STREAM : ANSWER)
        }, 300),
      )
    if (mode === 'large') {
      // 30 MB of JSON (a long string), in 64 KB writes as the gateway reads them
      res.writeHead(200, {'content-type': 'application/json'})
      res.write('{"id":"chatcmpl-1","object":"chat.completion","model":"m","pad":"')
      headersSent()
      const piece = 'a'.repeat(64 * 1024)
      let left = 30 * 16
      const write = (): void => {
        while (left-- > 0) if (!res.write(piece)) return void res.once('drain', write)
        res.end(`",${CHAT_ANSWER_BILLED.slice(1)}`)
      }
      write()
    }
    if (mode === 'fail') {
      res.writeHead(500, {'content-type': 'application/json'})
      res.end(JSON.stringify({error: {message: 'overloaded', type: 'server_error'}}))
    }
    if (mode === 'refuse')
      timers.push(
        setTimeout(() => {
          res.writeHead(400, {'content-type': 'application/json'})
          res.end(JSON.stringify({error: {message: 'bad field', type: 'invalid_request_error'}}))
        }, 300),
      )
    if (mode === 'trickle' || mode === 'stall') {
      res.writeHead(200, {'content-type': 'text/event-stream'})
      res.write(STREAM.slice(0, FIRST))
      headersSent()
      if (mode === 'trickle') timers.push(setTimeout(() => res.end(STREAM.slice(FIRST)), 300))
    }
    if (mode === 'drip' || mode === 'blanks' || mode === 'flood' || mode === 'deluge') {
      res.writeHead(200, {'content-type': 'text/event-stream'})
      res.write(STREAM.slice(0, FIRST))
      // (written before the leaving: the gateway pauses for a client that does not read them)
      if (mode === 'flood') for (let i = 0; i < 128; i++) res.write(BIG_EVENT)
      headersSent()
      // `count` times `piece`, `every` ms apart (0: as fast as the gateway reads them), then the rest
      const paced = (piece: string, count: number, every: number): void => {
        const next = (): void => {
          while (count-- > 0) {
            if (every > 0) {
              res.write(piece)
              return void timers.push(setTimeout(next, every))
            }
            if (!res.write(piece)) return void res.once('drain', next)
          }
          res.end(STREAM.slice(FIRST))
        }
        timers.push(setTimeout(next, every || 300))
      }
      if (mode === 'drip') paced(STREAM.slice(0, FIRST), 10, 200)
      if (mode === 'blanks') paced(': keep-alive\n\n', 12, 200)
      if (mode === 'flood') paced('', 0, 600)
      if (mode === 'deluge') paced(BIG_EVENT, 320, 0)
    }
    if (mode === 'split') {
      res.writeHead(200, {'content-type': 'application/json'})
      res.write(ANSWER.slice(0, 60))
      headersSent()
      timers.push(setTimeout(() => res.end(ANSWER.slice(60)), 300))
    }
  })
  gateway = await routerWithLogs({
    providers: providers(),
    policy: (req) => policyOf((req.headers['x-as'] as As | undefined) ?? 'up'),
    router: {lookup: toThisMachine},
  })
  ;({url, store} = gateway)
})

afterEach(() => {
  mode = 'late'
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

/** A chat (or Messages) request's address and body. */
const requestOf = (entrance: Family, stream: boolean): [string, string] => [
  `${url}/v1/${entrance === 'messages' ? 'messages' : 'chat/completions'}`,
  JSON.stringify(
    entrance === 'messages'
      ? {model: 'claude-x', max_tokens: 64, stream, messages: [{role: 'user', content: 'hi'}]}
      : {model: 'm', stream, messages: [{role: 'user', content: 'hi'}]},
  ),
]

/** Sends a chat (or Messages, translated to chat) request to the upstream as `as`. */
function send(entrance: Family, stream: boolean, as: As, signal?: AbortSignal): Promise<Response> {
  const [to, body] = requestOf(entrance, stream)
  return fetch(to, {method: 'POST', headers: {'content-type': 'application/json', 'x-as': as}, body, signal})
}

/** The log row written after `logged` rows (the last row, should none come). */
async function nextRow(logged: number) {
  for (let i = 0; i < 600 && store.queryLogs().length === logged; i++) {
    await new Promise((resolve) => setTimeout(resolve, 5))
    store.flush()
  }
  return store.queryLogs({limit: 1})[0]!
}

/**
 * Sends a chat (or Messages, translated to chat) request and leaves once the upstream got it
 * (`before`: before its headers) or sent its headers (`after`); the log row it left.
 */
async function leave(entrance: Family, when: 'before' | 'after', stream = false, as: As = 'up') {
  const logged = store.queryLogs().length
  const arrived = new Promise<void>((resolve) =>
    when === 'before' ? (received = resolve) : (headersSent = resolve),
  )
  const controller = new AbortController()
  const answer = send(entrance, stream, as, controller.signal).catch(() => undefined)
  await arrived
  await new Promise((resolve) => setTimeout(resolve, 50))
  controller.abort()
  await answer
  return nextRow(logged)
}

/** The row of a Bedrock stream given up after its client left: the status it got, no usage to come. */
function givenUp(row: Awaited<ReturnType<typeof nextRow>>): void {
  expect(row).toMatchObject({provider: 'bedrock', status: 200, error: 'client closed the connection'})
  expect(row.outputTokens).not.toBe(40)
}

/**
 * Sends a streamed chat (or Messages) request to Bedrock whose client reads none of the answer (the
 * gateway waits for its 'drain'), and leaves 200 ms after the upstream's headers; the log row it left.
 */
async function leaveUnread(entrance: Family) {
  const logged = store.queryLogs().length
  const arrived = new Promise<void>((resolve) => (headersSent = resolve))
  const [to, body] = requestOf(entrance, true)
  const req = request(to, {method: 'POST', headers: {'content-type': 'application/json', 'x-as': 'bedrock'}})
  req.on('error', () => undefined)
  req.on('response', (answer) => answer.pause())
  req.end(body)
  await arrived
  await new Promise((resolve) => setTimeout(resolve, 200))
  req.destroy()
  return nextRow(logged)
}

describe('a request not streamed whose client left: the 499 row holds the usage its upstream billed', () => {
  it('passed through, the client gone before the headers', async () => {
    const row = await leave('chat', 'before')
    expect(row).toMatchObject({
      status: 499,
      error: 'client closed the connection',
      inputTokens: 1200,
      outputTokens: 40,
    })
    expect(cutOff).toBe(false)
  })

  it('translated (Messages to chat), the client gone before the headers', async () => {
    const row = await leave('messages', 'before')
    // (nothing was written to the client: no first byte)
    expect(row).toMatchObject({...BILLED_ROW, upstreamFamily: 'chat', ttfbMs: null})
    expect(cutOff).toBe(false)
  })

  it('translated (Messages to chat), the client gone mid-answer (headers and half the JSON sent)', async () => {
    mode = 'split'
    const row = await leave('messages', 'after')
    expect(row).toMatchObject({...BILLED_ROW, upstreamFamily: 'chat', ttfbMs: null})
    expect(cutOff).toBe(false)
  })

  it('`gwctl usage` counts those tokens under the provider', () => {
    // (the three rows above: 1200 input and 40 output tokens each)
    expect(store.usage({pivot: 'provider'}).find((u) => u.key === 'up')).toMatchObject({
      inputTokens: 3600,
      outputTokens: 120,
    })
  })

  it('an upstream that never answers is given up (its connection let go): a 499 row without usage', async () => {
    mode = 'never'
    const row = await leave('messages', 'before')
    await upstreamClosed
    expect(row).toMatchObject({status: 499, inputTokens: 0, outputTokens: 0})
    expect(cutOff).toBe(true)
  })
})

describe('a translated answer not streamed whose client left, larger than is read on', () => {
  it('is given up past the 16 MB the usage tap keeps: a 499 row without usage', async () => {
    mode = 'large'
    const row = await leave('messages', 'after')
    await upstreamClosed
    expect(cutOff).toBe(true)
    expect(row).toMatchObject({status: 499, error: 'client closed the connection', inputTokens: 0})
  }, 20_000)
})

describe('a request not streamed whose client left before an error answer', () => {
  it.each(['chat', 'messages'] as const)(
    '%s entrance: a 499 row that says so, and what the upstream said',
    async (entrance) => {
      mode = 'refuse'
      const row = await leave(entrance, 'before')
      expect(row.status).toBe(499)
      // (the upstream's words kept, passed through as translated)
      expect(row.error).toBe(
        `client closed the connection; up${entrance === 'chat' ? '' : ' (chat, translated)'}: upstream answered 400: bad field`,
      )
    },
  )
})

describe('a stream whose client left before the headers', () => {
  it('is aborted at once (its upstream stops generating): a 499 row without usage', async () => {
    const row = await leave('chat', 'before', true)
    await upstreamClosed
    expect(cutOff).toBe(true)
    expect(row).toMatchObject({status: 499, error: 'client closed the connection', inputTokens: 0})
  })
})

describe('a JSON answer to a request streamed (an upstream that ignored `stream`)', () => {
  it('whose client left mid-answer is read on: the row holds its usage, the status the client got', async () => {
    mode = 'split'
    const row = await leave('chat', 'after', true)
    expect(row).toMatchObject({
      status: 200,
      error: 'client closed the connection',
      inputTokens: 1200,
      outputTokens: 40,
    })
    expect(cutOff).toBe(false)
  })
})

describe('a JSON answer to a translated request streamed (an upstream that ignored `stream`)', () => {
  it('whose client left mid-answer is read on: a 499 row (nothing went out) with its usage', async () => {
    mode = 'split'
    const row = await leave('messages', 'after', true)
    expect(row).toMatchObject({...BILLED_ROW, upstreamFamily: 'chat', ttfbMs: null})
    expect(cutOff).toBe(false)
  })

  it('whose client stays gets the 502 it got before, the row the usage its upstream billed', async () => {
    mode = 'split'
    const logged = store.queryLogs().length
    const res = await send('messages', true, 'up')
    expect(res.status).toBe(502)
    expect(((await res.json()) as {error: {message: string}}).error.message).toBe(
      'up: upstream answered 200 with application/json, not a stream',
    )
    store.flush()
    expect(store.queryLogs()).toHaveLength(logged + 1)
    expect(store.queryLogs({limit: 1})[0]).toMatchObject({
      status: 502,
      error: 'up: upstream answered 200 with application/json, not a stream',
      inputTokens: 1200,
      outputTokens: 40,
    })
  })
})

describe('a stream to Amazon Bedrock (which goes on generating, and billing, a stream whose reader left)', () => {
  it.each(['bedrock', 'mantle', 'shouting', 'vpce'] as const)(
    'passed through (%s), the client gone mid-stream: read on to its end, the row holds the usage',
    async (as) => {
      mode = 'trickle'
      const row = await leave('chat', 'after', true, as)
      // (the status the client got, its stream begun)
      expect(row).toMatchObject({...BILLED_ROW, provider: as, status: 200})
      expect(cutOff).toBe(false)
    },
  )

  it('passed through, the client gone before the headers: a 499 row with the usage', async () => {
    const row = await leave('chat', 'before', true, 'bedrock')
    expect(row).toMatchObject({...BILLED_ROW, provider: 'bedrock', ttfbMs: null})
    expect(cutOff).toBe(false)
  })

  it('translated (Messages to chat), the client gone mid-stream: the same', async () => {
    mode = 'trickle'
    const row = await leave('messages', 'after', true, 'bedrock')
    expect(row).toMatchObject({...BILLED_ROW, provider: 'bedrock', status: 200, upstreamFamily: 'chat'})
    expect(cutOff).toBe(false)
  })

  it('translated, the client gone before the headers: a 499 row with the usage', async () => {
    const row = await leave('messages', 'before', true, 'bedrock')
    expect(row).toMatchObject({...BILLED_ROW, provider: 'bedrock', upstreamFamily: 'chat', ttfbMs: null})
    expect(cutOff).toBe(false)
  })

  it.each([
    ['chat', 'stall'],
    ['messages', 'stall'],
    ['chat', 'blanks'],
    ['messages', 'blanks'],
  ] as const)(
    '%s entrance, %s: one silent after the leaving, or sending keep-alive blanks alone (none restarts its deadline), is given up at the idle timeout (its connection let go), the row without the usage to come',
    async (entrance, how) => {
      mode = how
      givenUp(await leave(entrance, 'after', true, 'bedrock'))
      await upstreamClosed
      expect(cutOff).toBe(true)
    },
  )

  it.each(['chat', 'messages'] as const)(
    '%s entrance: one still generating past the idle timeout from the leaving (an event every 200 ms for 2 s) is read to its end: its deadline counts from its last event',
    async (entrance) => {
      mode = 'drip'
      const row = await leave(entrance, 'after', true, 'bedrock')
      expect(row).toMatchObject({...BILLED_ROW, provider: 'bedrock', status: 200})
      expect(cutOff).toBe(false)
    },
  )

  it.each(['chat', 'messages'] as const)(
    '%s entrance: one still generating is read on no further than 16 MB after the leaving: given up, the row without the usage to come',
    async (entrance) => {
      mode = 'deluge'
      // (the upstream may have handed its last bytes to the socket's buffers by then: not cut off)
      givenUp(await leave(entrance, 'after', true, 'bedrock'))
    },
    20_000,
  )

  it.each(['chat', 'messages'] as const)(
    '%s entrance: a client that stopped reading (the gateway waiting for its drain) and then left: read on to its end',
    async (entrance) => {
      mode = 'flood'
      const row = await leaveUnread(entrance)
      expect(row).toMatchObject({
        provider: 'bedrock',
        error: 'client closed the connection',
        inputTokens: 1200,
      })
      expect(row.outputTokens).toBe(40)
      expect(cutOff).toBe(false)
    },
  )

  it("another vendor's stream (OpenAI's, Anthropic's stop) is still aborted mid-stream, its usage unread", async () => {
    mode = 'trickle'
    const row = await leave('chat', 'after', true, 'up')
    await upstreamClosed
    expect(cutOff).toBe(true)
    expect(row).toMatchObject({provider: 'up', error: 'client closed the connection', inputTokens: 0})
  })

  it('an SSE answer to a request not streamed (a relay that forces streaming) is aborted at the leaving as before, not read on', async () => {
    mode = 'trickle'
    const row = await leave('chat', 'after', false, 'up')
    await upstreamClosed
    expect(cutOff).toBe(true)
    expect(row).toMatchObject({provider: 'up', error: 'client closed the connection', inputTokens: 0})
  })
})

describe('a server on this machine or network (vLLM, Ollama, LM Studio: it bills nothing)', () => {
  it('a request not streamed whose client left before the headers is not held: aborted at once, a 499 row without usage', async () => {
    const row = await leave('chat', 'before', false, 'local')
    await upstreamClosed
    expect(cutOff).toBe(true)
    expect(row).toMatchObject({
      provider: 'local',
      status: 499,
      error: 'client closed the connection',
      inputTokens: 0,
    })
  })

  it('translated, the same', async () => {
    const row = await leave('messages', 'before', false, 'local')
    await upstreamClosed
    expect(cutOff).toBe(true)
    expect(row).toMatchObject({provider: 'local', status: 499, inputTokens: 0})
  })
})

describe("a held request's half-open breaker trial", () => {
  it('is released when its client leaves: the retry reaches the upstream (no 503), the held answer still logged', async () => {
    const ask = () => send('chat', false, 'trial')
    // one failure opens the breaker; 200 ms later it lets one trial through
    mode = 'fail'
    expect((await ask()).status).toBe(500)
    expect((await ask()).status).toBe(503)
    await new Promise((resolve) => setTimeout(resolve, 250))
    mode = 'late'
    const logged = store.queryLogs().length
    // the trial, held: its client leaves before the upstream's headers (300 ms later)
    const arrived = new Promise<void>((resolve) => (received = resolve))
    const controller = new AbortController()
    const left = send('chat', false, 'trial', controller.signal).catch(() => undefined)
    await arrived
    controller.abort()
    await left
    // (the gateway sees the connection close)
    await new Promise((resolve) => setTimeout(resolve, 50))
    // the agent's retry, at once, while the held trial goes on
    const retry = await ask()
    expect(retry.status).toBe(200)
    expect(await retry.json()).toMatchObject({usage: {prompt_tokens: 1200}})
    for (let i = 0; i < 600 && store.queryLogs().length < logged + 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5))
      store.flush()
    }
    const rows = store.queryLogs({limit: 2})
    expect(rows.map((r) => [r.status, r.inputTokens])).toEqual(
      expect.arrayContaining([
        [499, 1200],
        [200, 1200],
      ]),
    )
  })
})
