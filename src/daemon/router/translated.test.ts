/**
 * The translated relay on the wire (a Messages client, a chat upstream, in this process): what
 * each socket write to the client holds. A stream's first event goes out alone, at once, even
 * when the upstream's first read held many events; the rest of each upstream read goes out in
 * one write, before the upstream sends its next read (nothing waits for the whole answer), the
 * chunks of one read (each event a chunk, as servers write them) as one chunk of the body. The
 * headers the client gets, and a non-stream answer in one write with its exact length.
 */
import type {IncomingMessage, ServerResponse} from 'node:http'
import {request} from 'node:http'
import {afterAll, beforeAll, describe, expect, it, vi} from 'vitest'

import {StreamTranslator} from '../../protocols/translate.js'

import type {ProviderConfig} from '../../store/schema.js'
import type {Upstream} from './proxy-fixture.js'
import {ProxyGateway, recordSocketWrites, startUpstream} from './proxy-fixture.js'

const chunk = (payload: Record<string, unknown>): string => `data: ${JSON.stringify(payload)}\n\n`
const delta = (content: string, extra: Record<string, unknown> = {}): string =>
  chunk({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'up-model',
    choices: [{index: 0, delta: {...extra, content}, logprobs: null, finish_reason: null}],
  })

/** The upstream's stream in three reads: the test sends the next one when the client has the last. */
const READS = [
  delta('', {role: 'assistant'}) + delta('one ') + delta('two ') + delta('three '),
  delta('four ') + delta('five'),
  chunk({id: 'chatcmpl-1', choices: [{index: 0, delta: {}, finish_reason: 'stop'}]}) +
    chunk({id: 'chatcmpl-1', choices: [], usage: {prompt_tokens: 3, completion_tokens: 5}}) +
    'data: [DONE]\n\n',
]
const TEXT = 'héllo "wörld" 😀'
/** A large answer (written as bytes by the relay): 60 000 characters, not ASCII. */
const BIG = `${TEXT} — “line”\n`.repeat(2500)

let upstream: Upstream
let provider: ProviderConfig
/** Releases the upstream's next read. */
let next: () => void = () => {}
/** The socket writes of the last answer, in order (each as text). */
let writes: string[] = []

/** Records what each write to the client's socket holds. */
function spy(res: ServerResponse): void {
  writes = []
  recordSocketWrites(res, writes)
}

const gateway = new ProxyGateway({
  family: () => 'messages',
  route: () => ({
    targets: [{provider, model: 'up-model', translate: true}],
    fallbacks: false,
    timeouts: {connectMs: 2_000, firstByteMs: 2_000, idleMs: 2_000},
  }),
  onResponse: spy,
})
const {results} = gateway

beforeAll(async () => {
  upstream = await startUpstream(async (_req, res, raw) => {
    const body = JSON.parse(raw.toString()) as {
      stream?: boolean
      messages: Array<{content: unknown}>
    }
    if (!body.stream) {
      res.writeHead(200, {
        'content-type': 'application/json; charset=utf-8',
        'x-request-id': 'up-json',
        'cache-control': 'no-store',
        'x-ratelimit-remaining-requests': '41',
        'x-internal': 'not passed',
      })
      const big = JSON.stringify(body.messages).includes('big')
      const json = JSON.stringify({
        id: 'chatcmpl-2',
        model: 'up-model',
        choices: [{index: 0, message: {role: 'assistant', content: big ? BIG : TEXT}, finish_reason: 'stop'}],
        usage: {prompt_tokens: 3, completion_tokens: 4},
      })
      // the large answer starts with a UTF-8 byte order mark, as some servers write one
      res.end(big ? '\ufeff' + json : json)
      return
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'private',
      'x-request-id': 'up-stream',
      'x-ratelimit-remaining-requests': '40',
    })
    if (JSON.stringify(body.messages).includes('linger')) {
      // the whole stream, [DONE] included, in one read; the body ends only when the test says
      res.write(READS.join(''))
      await new Promise<void>((resolve) => (next = resolve))
      res.end(': a comment after [DONE]\n\n')
      return
    }
    if (JSON.stringify(body.messages).includes('per event')) {
      // each event a chunk of its own, as servers write them, all in one read of the gateway
      for (const event of READS.join('').split(/(?<=\n\n)/)) res.write(event)
      res.end()
      return
    }
    for (const [i, read] of READS.entries()) {
      if (i > 0) await new Promise<void>((resolve) => (next = resolve))
      if (i < READS.length - 1) res.write(read)
      else res.end(read)
    }
  })
  provider = {name: 'up', family: 'chat', baseUrl: upstream.origin, credential: {secret: 'upstream-key'}}
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

/** Asks the gateway on a connection of its own; `onData` sees the body as it arrives. */
function ask(
  stream: boolean,
  onData: (text: string) => void = () => {},
  prompt = 'hi',
): Promise<{status: number; headers: IncomingMessage['headers']; body: Buffer}> {
  results.length = 0
  const body = JSON.stringify({
    model: 'claude-x',
    max_tokens: 64,
    stream,
    messages: [{role: 'user', content: prompt}],
  })
  return new Promise((resolve, reject) => {
    const {port} = new URL(gateway.url)
    const req = request(
      {host: '127.0.0.1', port, method: 'POST', path: '/v1/messages', agent: false},
      (res) => {
        const chunks: Buffer[] = []
        let text = ''
        res.on('data', (c: Buffer) => {
          chunks.push(c)
          text += c.toString()
          onData(text)
        })
        res.on('end', () =>
          resolve({status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks)}),
        )
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.setHeader('content-type', 'application/json')
    req.setHeader('anthropic-version', '2023-06-01')
    req.end(body)
  })
}

describe('translated stream on the wire', () => {
  it('writes the first event alone at once, then each upstream read in one write as it comes', async () => {
    let released = 0
    const answer = await ask(true, (text) => {
      // the next upstream read is sent only once the client has the last one's text
      if (released === 0 && text.includes('three ')) {
        released = 1
        next()
      } else if (released === 1 && text.includes('five')) {
        released = 2
        next()
      }
    })
    expect(answer.status).toBe(200)
    expect(released).toBe(2)
    const events = [...answer.body.toString().matchAll(/^event: (\w+)$/gm)].map((m) => m[1])
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      ...Array(5).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])

    // 1: the status line, the headers and message_start, though the upstream's first read held four chunks
    expect(writes[0]).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(writes[0]).toContain('event: message_start')
    expect(writes[0]).not.toContain('content_block')
    // 2: the rest of that read, in one write
    expect(writes[1]).toMatch(/^[0-9a-f]+\r\nevent: content_block_start\n/)
    expect(writes[1].match(/event: content_block_delta/g)).toHaveLength(3)
    expect(writes[1]).toContain('"three "')
    // 3: the second read, in one write (sent before the upstream's third read existed)
    expect(writes[2].match(/event: content_block_delta/g)).toHaveLength(2)
    expect(writes[2]).toContain('"five"')
    expect(writes[2]).not.toContain('message_delta')
    // 4: the third read, [DONE] in it, and the end of the chunked body: one write, no fourth
    expect(writes).toHaveLength(4)
    expect(writes[3]).toContain('event: message_delta')
    expect(writes[3]).toMatch(/event: message_stop\n.*\n\n\r\n0\r\n\r\n$/)

    // headers: the entrance's id header, the stream's own type and cache-control (once)
    expect(answer.headers['content-type']).toBe('text/event-stream')
    expect(answer.headers['cache-control']).toBe('no-cache')
    expect(writes[0].match(/cache-control/gi)).toHaveLength(1)
    expect(answer.headers['request-id']).toBe('up-stream')
    expect(answer.headers['x-request-id']).toBeUndefined()
    expect(answer.headers['x-ratelimit-remaining-requests']).toBe('40')
    expect(results[0]).toMatchObject({status: 200, stream: true, requestId: 'up-stream', error: null})
    expect(results[0].usage).toMatchObject({inputTokens: 3, outputTokens: 5})
  })

  it('translates the chunks of one upstream read together: the first event alone, the rest in one chunk', async () => {
    const answer = await ask(true, () => {}, 'per event')
    expect(answer.status).toBe(200)
    const events = [...answer.body.toString().matchAll(/^event: (\w+)$/gm)].map((m) => m[1])
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      ...Array(5).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    expect(writes).toHaveLength(2)
    expect(writes[0]).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(writes[0]).toContain('event: message_start')
    expect(writes[0]).not.toContain('content_block')
    // every other event of the read in one chunk of the body (one write of the relay), then its end
    expect(writes[1]).toMatch(
      /^[0-9a-f]+\r\nevent: content_block_start\n[^\r]*message_stop[^\r]*\r\n0\r\n\r\n$/,
    )
    expect(results[0]).toMatchObject({status: 200, stream: true, error: null})
    expect(results[0].usage).toMatchObject({inputTokens: 3, outputTokens: 5})
  })

  it('fails the stream, not the gateway, when translating a read throws', async () => {
    // the second read's translation throws, after the first went out
    const real = StreamTranslator.prototype.push
    let calls = 0
    const push = vi.spyOn(StreamTranslator.prototype, 'push').mockImplementation(function (
      this: StreamTranslator,
      data: Uint8Array,
    ) {
      if (++calls === 2) throw new Error('boom')
      return real.call(this, data)
    })
    try {
      const answer = await ask(true, (text) => {
        if (calls === 1 && text.includes('three ')) next()
      })
      expect(answer.status).toBe(200)
      // the client's stream ends with its error event; the row says why
      expect(answer.body.toString()).toContain('"three "')
      expect(answer.body.toString()).toMatch(/event: error\ndata: .*boom/)
      for (let i = 0; i < 100 && results.length === 0; i++) await new Promise((r) => setTimeout(r, 10))
      expect(results[0]).toMatchObject({status: 200, stream: true, broken: true})
      expect(results[0].error).toMatch(/up: stream broke after the first byte: .*boom/)
    } finally {
      push.mockRestore()
    }
  })

  it('the same on the first read, before anything went out: a 502 in the Messages shape', async () => {
    const push = vi.spyOn(StreamTranslator.prototype, 'push').mockImplementationOnce(() => {
      throw new Error('boom')
    })
    try {
      const answer = await ask(true, () => {}, 'per event')
      expect(answer.status).toBe(502)
      expect(JSON.parse(answer.body.toString())).toMatchObject({type: 'error', error: {type: 'api_error'}})
      expect(answer.body.toString()).toContain('boom')
      for (let i = 0; i < 100 && results.length === 0; i++) await new Promise((r) => setTimeout(r, 10))
      expect(results[0]).toMatchObject({status: 502})
      expect(results[0].broken ?? false).toBe(false)
      expect(results[0].error).toMatch(
        /up: upstream answered 200, then its body failed before the first byte: .*boom/,
      )
    } finally {
      push.mockRestore()
    }
  })

  it('ends the answer with its terminal event, though the upstream body ends later', async () => {
    const answer = await ask(true, () => {}, 'linger')
    // the client has the whole answer while the upstream still holds its body open
    expect(results).toHaveLength(0)
    expect(writes).toHaveLength(2)
    expect(writes[0]).toContain('event: message_start')
    expect(writes[1]).toMatch(/event: message_stop\n.*\n\n\r\n0\r\n\r\n$/)
    expect(answer.body.toString()).toMatch(/event: message_stop\ndata: \{"type":"message_stop"\}\n\n$/)
    next()
    for (let i = 0; i < 100 && results.length === 0; i++) await new Promise((r) => setTimeout(r, 10))
    // what came after [DONE] is dropped; the row is a clean answer with its usage
    expect(writes).toHaveLength(2)
    expect(results[0]).toMatchObject({status: 200, stream: true, error: null})
    expect(results[0].broken).toBeFalsy()
    expect(results[0].usage).toMatchObject({inputTokens: 3, outputTokens: 5})
  })
})

describe('translated answer on the wire', () => {
  it('writes the status line, headers and body in one write, its length in bytes', async () => {
    const answer = await ask(false)
    expect(answer.status).toBe(200)
    expect(writes).toHaveLength(1)
    expect(writes[0]).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(Number(answer.headers['content-length'])).toBe(answer.body.length)
    expect(answer.body.length).toBeGreaterThan(answer.body.toString().length) // not ASCII
    const body = JSON.parse(answer.body.toString()) as {id: string; content: unknown; usage: unknown}
    expect(body.id).toBe('chatcmpl-2')
    expect(body.content).toEqual([{type: 'text', text: TEXT}])
    expect(body.usage).toEqual({
      input_tokens: 3,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 4,
    })
    expect(answer.headers['content-type']).toBe('application/json')
    expect(answer.headers['cache-control']).toBe('no-store')
    expect(answer.headers['request-id']).toBe('up-json')
    expect(answer.headers['x-request-id']).toBeUndefined()
    expect(answer.headers['x-internal']).toBeUndefined()
    expect(answer.headers['x-ratelimit-remaining-requests']).toBe('41')
    expect(results[0]).toMatchObject({status: 200, stream: false, requestId: 'up-json', error: null})
  })

  it('writes a large answer (its byte order mark skipped) as its bytes, in the same one write', async () => {
    const answer = await ask(false, () => {}, 'big')
    expect(answer.status).toBe(200)
    expect(writes).toHaveLength(1)
    expect(writes[0]).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(Number(answer.headers['content-length'])).toBe(answer.body.length)
    const body = JSON.parse(answer.body.toString()) as {content: Array<{text: string}>}
    expect(body.content[0].text).toBe(BIG)
    expect(answer.body.length).toBe(Buffer.byteLength(answer.body.toString()))
    expect(results[0]).toMatchObject({status: 200, stream: false, error: null})
  })
})
