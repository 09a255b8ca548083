/**
 * What the real daemon sends upstream of an agent's request body on an untranslated route: the
 * client's bytes as they came (no parse and re-encode), with only a policy's model written into
 * them and a chat stream's `stream_options` added; and what it refuses (malformed JSON, 400)
 * before anything goes upstream. The entrance checks a body from its bytes read as Latin-1
 * (`GatewayRequest.latin1Json`), so these bodies carry non-ASCII text, escapes and blanks that a
 * re-encoding would change.
 */
import type {IncomingMessage, Server, ServerResponse} from 'node:http'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {withState} from '../src/store/state.js'
import {freePort, runCli, tempHome} from './helpers/cli.js'
import {issueKeyOverApi, killDaemon} from './helpers/gateway.js'

interface Seen {
  path: string
  body: Buffer
}

let upstream: Server
let seen: Seen[] = []
let home: string
let base: string
let cleanup: () => void
let key: string

function reply(req: IncomingMessage, res: ServerResponse, body: Buffer): void {
  seen.push({path: req.url ?? '', body})
  if (req.url?.startsWith('/v1/messages')) {
    const text = JSON.stringify({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'glm-4.6',
      content: [{type: 'text', text: 'ok'}],
      stop_reason: 'end_turn',
      usage: {input_tokens: 7, output_tokens: 1},
    })
    res.writeHead(200, {'content-type': 'application/json'}).end(text)
    return
  }
  const chunk = (o: object): string =>
    `data: ${JSON.stringify({id: 'c', object: 'chat.completion.chunk', ...o})}\n\n`
  res.writeHead(200, {'content-type': 'text/event-stream'})
  res.write(chunk({choices: [{index: 0, delta: {content: 'ok'}, finish_reason: 'stop'}]}))
  res.write(chunk({choices: [], usage: {prompt_tokens: 9, completion_tokens: 2, total_tokens: 11}}))
  res.end('data: [DONE]\n\n')
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => reply(req, res, Buffer.concat(chunks)))
  })
  upstream.listen(0, '127.0.0.1')
  await new Promise((resolve) => upstream.once('listening', resolve))
  const origin = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`
  const t = tempHome()
  home = t.home
  cleanup = t.cleanup
  const port = await freePort()
  const previous = process.env.GWCTL_HOME
  process.env.GWCTL_HOME = home
  try {
    await withState(
      (store) => {
        store.data.providers.push(
          {name: 'up-messages', family: 'messages', baseUrl: origin, credential: {secret: 'up-key'}},
          {name: 'up-chat', family: 'chat', baseUrl: origin, credential: {secret: 'up-key'}},
        )
        store.data.policies.find((p) => p.id === 'default')!.routes = {
          messages: [{provider: 'up-messages', model: 'glm-4.6'}],
          chat: [{provider: 'up-chat'}],
        }
      },
      join(home, 'state.json'),
    )
  } finally {
    if (previous === undefined) delete process.env.GWCTL_HOME
    else process.env.GWCTL_HOME = previous
  }
  const start = await runCli(['gateway', 'start', '--port', String(port)], {
    home,
    env: {GWCTL_GATEWAY_PORT: String(port)},
  })
  expect(start.exitCode, start.stderr).toBe(0)
  base = `http://127.0.0.1:${port}`
  key = await issueKeyOverApi(base, 'bytes')
})

afterAll(async () => {
  await runCli(['gateway', 'stop', '--drain', '1'], {home})
  await killDaemon(home)
  cleanup()
  upstream.close()
})

const post = (path: string, body: Buffer | string): Promise<Response> =>
  fetch(base + path, {
    method: 'POST',
    headers: {'content-type': 'application/json', 'x-api-key': key, authorization: `Bearer ${key}`},
    body,
  })

// what a re-encoding would change: blanks, `\/`, `\u00e9` against a raw é, an emoji, a raw
// U+2028, numbers, key order
const messagesBody = Buffer.from(
  '{ "model" : "claude-sonnet-4-5" ,\n "max_tokens":64, "stream":false,\n' +
    ' "system":"Réponds \\u00e9 brièvement \\/ 🎉\u2028",\n' +
    ' "messages":[{"role":"user","content":"héllo \\"there\\""}],\n' +
    // numbers a parse would change: a 64-bit integer (rounded to a double), 1.0 (written 1), 1E2
    ' "metadata":{"user_id":"u","seed":12345678901234567891}, "temperature":1.0, "top_k":1E2 }\n',
)

describe('an untranslated route sends the client bytes on', () => {
  it('with only the policy model written into them (messages, non-ASCII, escapes and blanks kept)', async () => {
    seen = []
    const res = await post('/v1/messages', messagesBody)
    expect(res.status).toBe(200)
    expect(((await res.json()) as {content: Array<{text: string}>}).content[0].text).toBe('ok')
    expect(seen).toHaveLength(1)
    const expected = Buffer.from(messagesBody.toString('utf8').replace('"claude-sonnet-4-5"', '"glm-4.6"'))
    expect(seen[0].body.equals(expected)).toBe(true)
  })

  it('re-encodes only a body whose model bytes cannot be told apart: a second `"model"` after the first', async () => {
    seen = []
    // JSON takes the last of two top-level keys: the upstream must get the policy's model there too
    const res = await post('/v1/messages', '{"model":"a","max_tokens":5,"messages":[],"model":"b"}')
    expect(res.status).toBe(200)
    expect(JSON.parse(seen[0].body.toString())).toEqual({model: 'glm-4.6', max_tokens: 5, messages: []})
  })

  it('re-encodes a body with a second model key spelled with escapes: the policy model is the one read upstream', async () => {
    seen = []
    // every parser reads the last `model`: "mod\u0065l" is one; splicing the first would let the
    // client pick its model past the policy's
    const res = await post(
      '/v1/messages',
      '{"model":"cheap","mod\\u0065l":"expensive","max_tokens":5,"messages":[]}',
    )
    expect(res.status).toBe(200)
    expect(JSON.parse(seen[0].body.toString())).toEqual({model: 'glm-4.6', max_tokens: 5, messages: []})
  })

  it('a chat stream that did not ask for usage gets `stream_options` added to its bytes, and no usage chunk back', async () => {
    seen = []
    const body = '{"model":"m","stream":true,"messages":[{"role":"user","content":"naïve \\u2603"}]}\n\n'
    const res = await post('/v1/chat/completions', body)
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).toContain('"content":"ok"')
    expect(text).not.toContain('prompt_tokens')
    expect(seen[0].body.toString('utf8')).toBe(
      '{"model":"m","stream":true,"messages":[{"role":"user","content":"naïve \\u2603"}],"stream_options":{"include_usage":true}}\n\n',
    )
    // one that asked keeps its bytes, and its usage chunk
    seen = []
    const asked = '{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[]}'
    const again = await post('/v1/chat/completions', asked)
    expect(await again.text()).toContain('"prompt_tokens":9')
    expect(seen[0].body.toString('utf8')).toBe(asked)
  })

  it('passes bytes that are not UTF-8 inside a string on as they came (a UTF-8 parse reads them as U+FFFD)', async () => {
    seen = []
    const body = Buffer.concat([
      Buffer.from('{"model":"claude","max_tokens":5,"messages":[{"role":"user","content":"a'),
      Buffer.from([0xc3, 0x28, 0xff, 0xe2, 0x82]),
      Buffer.from('"}]}'),
    ])
    const res = await post('/v1/messages', body)
    expect(res.status).toBe(200)
    const expected = Buffer.from(body.toString('latin1').replace('"claude"', '"glm-4.6"'), 'latin1')
    expect(seen[0].body.equals(expected)).toBe(true)
  })
})

describe('a body that is not JSON is refused before anything goes upstream', () => {
  it.each([
    [
      'a trailing comma after non-ASCII text',
      '{"model":"m","messages":[{"role":"user","content":"héllo"}],}',
    ],
    ['a raw line feed inside a string', '{"model":"m","messages":[{"role":"user","content":"a\nb"}]}'],
    ['a non-ASCII character outside any string', '{"model":"m","max_tokens":5é}'],
    ['a byte order mark before the object', '\uFEFF{"model":"m"}'],
    ['a cut body', '{"model":"m","messages":[{"role":"us'],
  ])('%s: 400 in the entrance shape, naming the JSON error', async (_name, body) => {
    seen = []
    for (const path of ['/v1/messages', '/v1/chat/completions']) {
      const res = await post(path, body)
      expect(res.status).toBe(400)
      const error = ((await res.json()) as {error: {message: string; type: string}}).error
      expect(error.message).toMatch(/^The request body is not valid JSON: /)
      // the message is the UTF-8 text's (a Latin-1 reading would name é as two characters)
      expect(error.message).not.toMatch(/Ã/)
    }
    expect(seen).toHaveLength(0)
  })
})
