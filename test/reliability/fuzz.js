// Fuzz: generated requests (fast-check) over every endpoint and credential form against
// `gateway start --sim`, each followed by an ordinary request on the same connection (when the
// server kept it open) or on a new one. Checks: no crash, no 500, every error JSON in its
// entrance's shape, every answer within 2 s, the ordinary request after each one answered 200,
// and the daemon healthy afterwards.
import fc from 'fast-check'
import {connect} from 'node:net'
import {Client} from 'undici'

import {familyOfPath, isolatedGateway, issueKey, shapeProblem} from './lib.js'

const ENDPOINTS = [
  ['POST', '/v1/chat/completions', 'chat'],
  ['POST', '/v1/responses', 'responses'],
  ['POST', '/v1/messages', 'messages'],
  ['POST', '/v1/messages?beta=true', 'messages'],
  ['POST', '/v1/messages/count_tokens', 'messages'],
  ['POST', '/v1beta/models/gemini-sim:generateContent', 'gemini'],
  ['POST', '/v1beta/models/gemini-sim:streamGenerateContent?alt=sse', 'gemini'],
  ['POST', '/v1beta/models/gemini-sim:countTokens', 'gemini'],
  ['GET', '/v1/models', 'models'],
  ['GET', '/health', 'mgmt'],
  ['GET', '/help', 'mgmt'],
  ['POST', '/api/keys/issue', 'mgmt'],
  ['GET', '/api/agents', 'mgmt'],
  ['GET', '/api/keys', 'mgmt'],
  ['GET', '/api/logs?limit=5', 'mgmt'],
  ['GET', '/api/usage', 'mgmt'],
  ['GET', '/api/providers', 'mgmt'],
  ['GET', '/api/status', 'mgmt'],
]

const CREDENTIALS = [
  'none',
  'bearer',
  'bearer-garbage',
  'forged',
  'x-api-key',
  'x-goog-api-key',
  'x-vendor-api-key',
  'query',
  'every-header',
]

function validBody(kind, stream) {
  switch (kind) {
    case 'chat':
      return {model: 'sim-mini', stream, messages: [{role: 'user', content: 'fuzz'}]}
    case 'responses':
      return {model: 'sim-mini', stream, input: 'fuzz'}
    case 'messages':
      return {model: 'claude-sim', max_tokens: 16, stream, messages: [{role: 'user', content: 'fuzz'}]}
    case 'gemini':
      return {contents: [{role: 'user', parts: [{text: 'fuzz'}]}]}
    case 'mgmt':
      return {employeeName: 'F', employeeContact: 'f@x', agentName: 'fuzz', agentType: 'generic_agent'}
    default:
      return {}
  }
}

/** `arb` in 1 of `n` cases, else null. */
const rarely = (arb, n) =>
  fc.oneof({weight: n - 1, arbitrary: fc.constant(null)}, {weight: 1, arbitrary: arb})

const deep = (depth, open, close) => open.repeat(depth) + close.repeat(depth)

const caseArb = fc.record({
  endpoint: fc.constantFrom(...ENDPOINTS),
  method: rarely(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'), 4),
  randomPath: rarely(fc.webPath(), 6),
  credential: fc.constantFrom(...CREDENTIALS),
  body: fc.oneof(
    {weight: 4, arbitrary: fc.boolean().map((stream) => ({valid: stream}))},
    fc.constant({raw: ''}),
    fc.constant({raw: 'null'}),
    fc.json({maxDepth: 4}).map((raw) => ({raw})),
    fc.string({maxLength: 200}).map((raw) => ({raw})),
    fc.uint8Array({maxLength: 300}).map((bytes) => ({bytes})),
    fc
      .tuple(fc.integer({min: 1, max: 100_000}), fc.constantFrom(['[', ']'], ['{"a":', '}']))
      .map(([depth, [o, c]]) => ({deep: depth, o, c})),
    fc
      .record({
        model: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
        stream: fc.oneof(fc.boolean(), fc.string(), fc.constant(null)),
      })
      .map((raw) => ({raw: JSON.stringify(raw)})),
  ),
  origin: rarely(fc.constantFrom('same', 'http://evil.example', 'null', 'http://localhost.evil.example'), 5),
  host: rarely(fc.constantFrom('evil.example', 'localhost:1', '127.0.0.1'), 12),
  contentType: fc.constantFrom('application/json', 'application/json', 'text/plain', undefined),
  fault: rarely(fc.constantFrom('reset', 'status=429,retry-after=1', 'status=503'), 12),
  extraHeader: rarely(
    fc.tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), fc.stringMatching(/^[ -~]{0,64}$/)),
    3,
  ),
  probeOnSameConnection: fc.boolean(),
})

function buildRequest(c, ctx) {
  const [defaultMethod, defaultPath, kind] = c.endpoint
  const method = c.method ?? defaultMethod
  let path = c.randomPath ?? defaultPath
  if (!path.startsWith('/')) path = '/' + path
  const headers = {}
  if (c.contentType) headers['content-type'] = c.contentType
  const key = ctx.key
  switch (c.credential) {
    case 'bearer':
      headers.authorization = `Bearer ${key}`
      break
    case 'bearer-garbage':
      headers.authorization = 'Bearer not-a-key'
      break
    case 'forged':
      headers.authorization = `Bearer ${key.slice(0, -4)}AAAA`
      break
    case 'x-api-key':
    case 'x-goog-api-key':
    case 'x-vendor-api-key':
      headers[c.credential] = key
      break
    case 'query':
      path += (path.includes('?') ? '&' : '?') + `key=${key}`
      break
    case 'every-header':
      headers.authorization = `Bearer ${key}`
      headers['x-api-key'] = key
      headers['x-goog-api-key'] = key
      break
    default:
  }
  if (c.origin) headers.origin = c.origin === 'same' ? ctx.base : c.origin
  if (c.host) headers.host = c.host
  if (c.fault) headers['x-sim-fault'] = c.fault
  if (
    c.extraHeader &&
    ![
      'host',
      'content-length',
      'transfer-encoding',
      'connection',
      'expect',
      'upgrade',
      'keep-alive',
    ].includes(c.extraHeader[0])
  )
    headers[c.extraHeader[0]] = c.extraHeader[1]
  let body
  if ('valid' in c.body) body = JSON.stringify(validBody(kind, c.body.valid))
  else if ('raw' in c.body) body = c.body.raw
  else if ('bytes' in c.body) body = Buffer.from(c.body.bytes)
  else
    body = `{"model":"sim-mini","stream":true,"messages":[{"role":"user","content":${deep(c.body.deep, c.body.o, c.body.c)}}]}`
  if (method === 'GET' || method === 'HEAD') body = undefined
  return {method, path, headers, body}
}

const PROBE = JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content: 'probe'}]})

/** Runs the fuzz; returns the figures (and the first failures). */
export async function fuzz({
  count = 10_000,
  concurrency = 8,
  seed = Date.now() % 2 ** 31,
  log = console.log,
} = {}) {
  const gw = await isolatedGateway('fuzz')
  const figures = {
    count,
    seed,
    requests: 0,
    probes: 0,
    byStatus: {},
    failures: [],
    slowest: 0,
    crashed: false,
  }
  try {
    const start = await gw.cli(['gateway', 'start', '--sim'])
    if (start.code !== 0) throw new Error(`gateway start failed: ${start.stderr}`)
    const key = await issueKey(gw.base, 'fuzz-agent')
    const ctx = {base: gw.base, key}
    const cases = fc.sample(caseArb, {numRuns: count, seed})
    const fail = (what, c) => {
      if (figures.failures.length < 50) figures.failures.push({what, case: c})
    }
    let next = 0
    const worker = async () => {
      for (;;) {
        const i = next++
        if (i >= cases.length) return
        const c = cases[i]
        const req = buildRequest(c, ctx)
        const client = new Client(gw.base, {headersTimeout: 10_000, bodyTimeout: 10_000})
        const t0 = performance.now()
        let closedByServer = false
        try {
          const res = await client.request({...req, reset: false})
          const text = await res.body.text()
          const ms = performance.now() - t0
          figures.requests++
          figures.slowest = Math.max(figures.slowest, ms)
          figures.byStatus[res.statusCode] = (figures.byStatus[res.statusCode] ?? 0) + 1
          closedByServer = /close/i.test(String(res.headers.connection ?? ''))
          if (ms > 2000) fail(`slow: ${Math.round(ms)} ms`, req)
          if (res.statusCode === 500) fail(`500: ${text.slice(0, 200)}`, req)
          if (res.statusCode >= 400 && req.method !== 'HEAD') {
            const problem = shapeProblem(familyOfPath(req.path), res.statusCode, text)
            if (problem) fail(`${res.statusCode} ${problem}`, req)
          }
        } catch (error) {
          figures.requests++
          figures.byStatus.error = (figures.byStatus.error ?? 0) + 1
          // a reset asked of the simulator may cut a stream: that is the expected answer
          if (!c.fault?.startsWith('reset')) fail(`request failed: ${error.code ?? error.message}`, req)
          closedByServer = true
        }
        // the next, ordinary request: on the same connection when it is still open, else a new one
        const probeClient =
          c.probeOnSameConnection && !closedByServer ? client : new Client(gw.base, {headersTimeout: 10_000})
        try {
          const res = await probeClient.request({
            method: 'POST',
            path: '/v1/chat/completions',
            headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
            body: PROBE,
          })
          await res.body.text()
          figures.probes++
          if (res.statusCode !== 200) fail(`probe after the case answered ${res.statusCode}`, req)
        } catch (error) {
          fail(`probe after the case failed: ${error.code ?? error.message}`, req)
        }
        await client.destroy().catch(() => undefined)
        if (probeClient !== client) await probeClient.destroy().catch(() => undefined)
        if (i % 1000 === 999) log(`  fuzz: ${i + 1}/${count}`)
      }
    }
    await Promise.all(Array.from({length: concurrency}, worker))
    // raw requests Node's parser refuses
    for (const raw of [
      `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\nX-A: a\u0000b\r\n\r\n`,
      `POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
      `GET /health HTTP/1.1\r\nHost: 127.0.0.1:${gw.port}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    ]) {
      const answer = await new Promise((resolve) => {
        const s = connect(gw.port, '127.0.0.1')
        let text = ''
        s.on('data', (d) => (text += d))
        s.on('end', () => resolve(text))
        s.on('error', () => resolve(text))
        s.write(raw)
      })
      figures.requests++
      const body = answer.slice(answer.indexOf('\r\n\r\n') + 4)
      if (shapeProblem('chat', 400, body)) fail(`malformed request: ${answer.slice(0, 80)}`, raw.slice(0, 80))
    }
    const pid = gw.pid()
    const health = await fetch(`${gw.base}/health`).catch(() => undefined)
    figures.crashed = !pid || !health || health.status !== 200
    figures.healthAfter = health?.status ?? 'no answer'
    return figures
  } finally {
    await gw.cleanup()
  }
}
