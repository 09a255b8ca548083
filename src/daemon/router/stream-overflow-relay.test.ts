/**
 * LM Studio's overflow event in a passed-through chat stream, on the wire, when it comes in more
 * than one read (review75 #1): its `event: error` line written apart from its data, or the data
 * line cut, as a reverse proxy or a LAN hop may split it. The client gets OpenAI's event all the
 * same; bytes that never make a whole event go as they came, at the body's end.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {ProxyTarget} from './proxy.js'
import type {Upstream} from './proxy-fixture.js'
import {chatTarget, ProxyGateway, startUpstream} from './proxy-fixture.js'

/** LM Studio 0.4.21's event data for a prompt past the loaded context (lmstudio-bug-tracker #2322). */
const FIT =
  '{"error":"Input does not fit in context length. The input has 31430 tokens, but the context length only supports 30000 tokens."}'

let targets: ProxyTarget[] = []
let gateway: ProxyGateway
let lm: Upstream
/** The upstream's reads: each written 40 ms after the one before, then the body ends. */
let reads: string[] = []

beforeAll(async () => {
  lm = await startUpstream(async (_req, res) => {
    res.writeHead(200, {'content-type': 'text/event-stream'})
    for (const [i, read] of reads.entries()) {
      if (i > 0) await new Promise((r) => setTimeout(r, 40))
      res.write(read)
    }
    res.end()
  })
  gateway = new ProxyGateway({route: () => ({targets})})
  await gateway.listen()
})

afterAll(async () => {
  await gateway.close()
  lm.close()
})

/** The stream a chat client passed through to LM Studio gets, and the request's result. */
async function chatStream(upstreamReads: string[]) {
  reads = upstreamReads
  targets = [chatTarget('lmstudio', 'qwen3-coder-30b', lm.origin)]
  gateway.results.length = 0
  const res = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: {'content-type': 'application/json', authorization: 'Bearer client-key'},
    body: JSON.stringify({model: 'qwen3-coder-30b', messages: [{role: 'user', content: 'hi'}], stream: true}),
  })
  const text = await res.text()
  const [result] = await gateway.settled()
  return {status: res.status, text, result: result!}
}

/** The stream's first event's data, parsed. */
const firstData = (text: string): unknown => JSON.parse(/^data: (.*)$/m.exec(text)![1]!)

describe('passed-through chat stream: LM Studio overflow event split across reads', () => {
  it("the `event: error` line in one read, its data in the next: OpenAI's event, the window kept", async () => {
    const {status, text, result} = await chatStream(['event: error\n', `data: ${FIT}\n\n`])
    expect(status).toBe(200)
    expect(text).not.toContain('"error":"Input does not fit')
    expect(firstData(text)).toEqual({
      error: {
        message: expect.stringMatching(
          /^This model's maximum context length is 30000 tokens\. However, your messages resulted in 31430 tokens\./,
        ),
        type: 'invalid_request_error',
        param: null,
        code: 'context_length_exceeded',
      },
    })
    expect(result.contextWindow).toBe(30000)
  })

  it('the data line cut in the middle, over three reads: rewritten too', async () => {
    const {text} = await chatStream([
      'event: error\ndata: {"error":"Input does not fit in context len',
      'gth. The input has 31430 tokens, but the context length only ',
      'supports 30000 tokens."}\n\n',
    ])
    expect(text).not.toContain('"error":"Input does not fit')
    expect(firstData(text)).toMatchObject({error: {code: 'context_length_exceeded'}})
  })

  it('an upstream that sends `event: error` and closes: those bytes go as they came, at the end', async () => {
    const {status, text} = await chatStream(['event: error\n'])
    expect(status).toBe(200)
    expect(text.startsWith('event: error\n')).toBe(true)
  })

  it('another error split so: joined, byte for byte as the upstream sent it', async () => {
    const reads = ['event: error\n', 'data: {"error":"Model unloaded"}\n\n']
    const {text} = await chatStream(reads)
    expect(text.startsWith(reads.join(''))).toBe(true)
  })
})
