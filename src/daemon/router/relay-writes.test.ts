/**
 * The pass-through relay on the wire (a chat client, a chat upstream, untranslated, in this
 * process): what each socket write to the client holds. The events an upstream writes as chunks
 * of their own in one read go to the client as one chunk of the body, byte for byte and in order;
 * a later read goes out as it comes, before the upstream sends the next (nothing waits for the
 * whole answer); the usage tap still reads every byte.
 */
import type {ServerResponse} from 'node:http'
import {request} from 'node:http'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {ProviderConfig} from '../../store/schema.js'
import type {Upstream} from './proxy-fixture.js'
import {ProxyGateway, recordSocketWrites, startUpstream} from './proxy-fixture.js'

const chunk = (payload: Record<string, unknown>): string => `data: ${JSON.stringify(payload)}\n\n`
const delta = (content: string): string =>
  chunk({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'up-model',
    choices: [{index: 0, delta: {content}, logprobs: null, finish_reason: null}],
  })
/** Two reads of the upstream, each event a chunk of its own (as servers write them). */
const READS = [
  [delta('one '), delta('two '), delta('three ')],
  [
    delta('four'),
    chunk({id: 'chatcmpl-1', choices: [{index: 0, delta: {}, finish_reason: 'stop'}]}),
    chunk({id: 'chatcmpl-1', choices: [], usage: {prompt_tokens: 3, completion_tokens: 4}}),
    'data: [DONE]\n\n',
  ],
]

let upstream: Upstream
let provider: ProviderConfig
let next: () => void = () => {}
let writes: string[] = []

/** Records what each write to the client's socket holds. */
function spy(res: ServerResponse): void {
  writes = []
  recordSocketWrites(res, writes)
}

const gateway = new ProxyGateway({
  family: () => 'chat',
  route: () => ({
    targets: [{provider, model: 'up-model'}],
    fallbacks: false,
    timeouts: {connectMs: 2_000, firstByteMs: 2_000, idleMs: 2_000},
  }),
  onResponse: spy,
})
const {results} = gateway

beforeAll(async () => {
  upstream = await startUpstream(async (_req, res) => {
    res.writeHead(200, {'content-type': 'text/event-stream'})
    for (const [i, read] of READS.entries()) {
      if (i > 0) await new Promise<void>((resolve) => (next = resolve))
      // the events of a read in one tick: each a chunk of the chunked body, one socket write
      res.cork()
      for (const event of read) res.write(event)
      if (i === READS.length - 1) res.end()
      else process.nextTick(() => res.uncork())
    }
  })
  provider = {name: 'up', family: 'chat', baseUrl: upstream.origin, credential: {secret: 'upstream-key'}}
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  upstream.close()
})

describe('pass-through stream on the wire', () => {
  it("writes each upstream read's events as one chunk, as the read comes, byte for byte", async () => {
    results.length = 0
    let released = false
    const text = await new Promise<string>((resolve, reject) => {
      const {port} = new URL(gateway.url)
      const req = request(
        {host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', agent: false},
        (res) => {
          let body = ''
          res.on('data', (c: Buffer) => {
            body += c.toString()
            // the second read is sent only once the client has the whole first one
            if (!released && body.includes('three ')) {
              released = true
              next()
            }
          })
          res.on('end', () => resolve(body))
          res.on('error', reject)
        },
      )
      req.on('error', reject)
      req.setHeader('content-type', 'application/json')
      req.end(
        JSON.stringify({
          model: 'm',
          stream: true,
          stream_options: {include_usage: true},
          messages: [{role: 'user', content: 'hi'}],
        }),
      )
    })
    expect(released).toBe(true)
    // the client's body: the upstream's bytes, in order
    expect(text).toBe(READS.flat().join(''))
    // the status line and headers, then one chunk of the body a read (the last with the end)
    const body = writes.filter((w) => !/^HTTP\/1\.1 /.test(w))
    const chunked = writes.join('').split('\r\n\r\n').slice(1).join('\r\n\r\n')
    expect(chunked.match(/(?:^|\r\n)[0-9a-f]+\r\n/g)).toHaveLength(2 + 1)
    expect(body.at(-1)).toMatch(/data: \[DONE\]\n\n\r\n0\r\n\r\n$/)
    expect(results[0]).toMatchObject({status: 200, stream: true, error: null})
    expect(results[0].usage).toMatchObject({inputTokens: 3, outputTokens: 4})
  })
})
