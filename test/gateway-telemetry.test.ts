/**
 * Telemetry end to end (docs/TELEMETRY.md): the real daemon (`gwctl gateway start --sim`), known
 * traffic through its entrances, then `GET /metrics` scraped and compared to the traffic and to
 * `gwctl usage --json` to the token; an OTLP/HTTP receiver in the test decodes what the official
 * exporter sends (one span per request, GenAI attributes and metrics, no prompt text, no key); a
 * collector that refuses or never answers costs the requests nothing and its drops are counted.
 */
import {spawn} from 'node:child_process'
import type {IncomingMessage, Server} from 'node:http'
import {createServer, request as httpRequest} from 'node:http'
import {existsSync, readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {ROOT, cliEnv, freePort, json, runCli, tempHome} from './helpers/cli.js'
import {killDaemon} from './helpers/gateway.js'

const started: string[] = []
const cleanups: Array<() => void | Promise<void>> = []

afterEach(async () => {
  for (const home of started.splice(0)) {
    await runCli(['gateway', 'stop', '--drain', '1'], {home})
    await killDaemon(home)
  }
  for (const c of cleanups.splice(0)) await c()
})

/** What the test's OTLP/HTTP receiver got: each request's path, headers and JSON body. */
interface Received {
  path: string
  headers: IncomingMessage['headers']
  raw: string
  body: any
}

/** An OTLP/HTTP (JSON) receiver on a free loopback port; `hang` never answers. */
async function receiver(mode: 'accept' | 'hang' = 'accept'): Promise<{url: string; got: Received[]}> {
  const got: Received[] = []
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      let body: unknown
      try {
        body = JSON.parse(raw)
      } catch {
        body = undefined
      }
      got.push({path: req.url ?? '', headers: req.headers, raw, body})
      if (mode === 'hang') return
      res.writeHead(200, {'content-type': 'application/json'})
      res.end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as {port: number}).port
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return {url: `http://127.0.0.1:${port}`, got}
}

async function setup(env: Record<string, string> = {}) {
  const t = tempHome()
  cleanups.push(t.cleanup)
  const port = await freePort()
  const home = t.home
  const allEnv = {GWCTL_GATEWAY_PORT: String(port), ...env}
  const cli = (args: string[]) => runCli(args, {home, env: allEnv})
  started.push(home)
  const start = await cli(['gateway', 'start', '--sim', '--port', String(port)])
  expect(start.exitCode, start.stderr).toBe(0)
  return {home, port, base: `http://127.0.0.1:${port}`, cli}
}

async function issue(base: string, agentName: string, agentType: string) {
  const res = await fetch(`${base}/api/keys/issue`, {
    method: 'POST',
    headers: {'content-type': 'application/json'},
    body: JSON.stringify({employeeName: 'Ada', employeeContact: 'ada@example.com', agentName, agentType}),
  })
  const body = (await res.json()) as any
  expect(res.status, JSON.stringify(body)).toBe(200)
  return {key: body.keyValue as string, agentId: body.agentId as string}
}

const PROMPT = 'zebra-prompt-7731 tell me about the lighthouse'

async function chat(base: string, key: string, model = 'sim-mini'): Promise<{status: number; body: any}> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
    body: JSON.stringify({model, messages: [{role: 'user', content: PROMPT}]}),
  })
  return {status: res.status, body: await res.json()}
}

async function messages(base: string, key: string): Promise<{status: number; body: any}> {
  const res = await fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: {'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json'},
    body: JSON.stringify({model: 'claude-sim', max_tokens: 64, messages: [{role: 'user', content: PROMPT}]}),
  })
  return {status: res.status, body: await res.json()}
}

/** One sample of the Prometheus text format. */
interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    expect(m, `a sample line: ${line}`).not.toBeNull()
    const labels: Record<string, string> = {}
    for (const l of (m![2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2]
    samples.push({name: m![1], labels, value: Number(m![3])})
  }
  return samples
}

/** Sum of the samples named `name` whose labels include `match`. */
function sum(samples: Sample[], name: string, match: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(match).every(([k, v]) => s.labels[k] === v))
    .reduce((a, s) => a + s.value, 0)
}

async function scrape(
  base: string,
): Promise<{status: number; type: string | null; samples: Sample[]; text: string}> {
  const res = await fetch(`${base}/metrics`)
  const text = await res.text()
  return {status: res.status, type: res.headers.get('content-type'), samples: parseMetrics(text), text}
}

/** Waits until `check` returns a value (not undefined), polling. */
async function until<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  ms = 15_000,
): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** A raw GET with a chosen Host header (fetch cannot set it). */
function getWithHost(port: number, path: string, host: string): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({host: '127.0.0.1', port, path, headers: {host}}, (res) => {
      let body = ''
      res.on('data', (c) => (body += c))
      res.on('end', () => resolve({status: res.statusCode ?? 0, body}))
    })
    req.on('error', reject)
    req.end()
  })
}

/** Every span of the receiver's trace payloads, with attributes as a plain object. */
function spansOf(
  got: Received[],
): Array<{name: string; kind: number; attributes: Record<string, any>; status: any}> {
  const spans = []
  for (const r of got.filter((g) => g.path === '/v1/traces'))
    for (const rs of r.body.resourceSpans ?? [])
      for (const ss of rs.scopeSpans ?? [])
        for (const span of ss.spans ?? []) {
          const attributes: Record<string, any> = {}
          for (const a of span.attributes ?? []) {
            const v = a.value
            attributes[a.key] =
              v.stringValue ??
              (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue))
          }
          spans.push({name: span.name, kind: span.kind, attributes, status: span.status})
        }
  return spans
}

function resourceAttributes(got: Received[]): Record<string, any> {
  const first = got.find((g) => g.path === '/v1/traces')!.body.resourceSpans[0].resource.attributes
  return Object.fromEntries(first.map((a: any) => [a.key, a.value.stringValue ?? a.value.intValue]))
}

describe('gateway telemetry', {timeout: 120_000}, () => {
  it('/metrics and the OTLP export count known traffic exactly, equal to usage --json, with no prompt or key in them', async () => {
    const collector = await receiver()
    const {base, port, cli} = await setup({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-token=tok-123',
      OTEL_SERVICE_NAME: 'gw-test',
      OTEL_BSP_SCHEDULE_DELAY: '50',
      OTEL_METRIC_EXPORT_INTERVAL: '300',
    })
    const codex = await issue(base, 'codex-laptop', 'codex')
    const claude = await issue(base, 'claude-laptop', 'claude_code')

    const answers: any[] = []
    for (let i = 0; i < 3; i++) {
      const r = await chat(base, codex.key)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      answers.push({
        entrance: 'chat',
        agentId: codex.agentId,
        input: r.body.usage.prompt_tokens,
        output: r.body.usage.completion_tokens,
      })
    }
    for (let i = 0; i < 2; i++) {
      const r = await messages(base, claude.key)
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      const u = r.body.usage
      answers.push({
        entrance: 'messages',
        agentId: claude.agentId,
        input: u.input_tokens + (u.cache_read_input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0),
        output: u.output_tokens,
      })
    }
    // a refused key: logged and counted too (agent none, 4xx), as `gwctl usage` counts it
    const refused = (await chat(base, 'gw-not-a-real-key')).status
    expect(refused >= 400 && refused < 500, String(refused)).toBe(true)
    const requests = answers.length + 1
    const inputSum = answers.reduce((a, x) => a + x.input, 0)
    const outputSum = answers.reduce((a, x) => a + x.output, 0)

    // the rows reach the metrics within a fold (a scrape folds what is pending)
    const {status, type, samples, text} = await scrape(base)
    expect(status).toBe(200)
    expect(type).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(sum(samples, 'gwctl_requests_total')).toBe(requests)
    expect(
      sum(samples, 'gwctl_requests_total', {entrance: 'chat', agent: codex.agentId, status_class: '2xx'}),
    ).toBe(3)
    expect(
      sum(samples, 'gwctl_requests_total', {
        entrance: 'messages',
        agent: claude.agentId,
        status_class: '2xx',
      }),
    ).toBe(2)
    expect(sum(samples, 'gwctl_requests_total', {agent: 'none', status_class: '4xx'})).toBe(1)
    expect(sum(samples, 'gwctl_tokens_total', {kind: 'input'})).toBe(inputSum)
    expect(sum(samples, 'gwctl_tokens_total', {kind: 'output'})).toBe(outputSum)
    expect(sum(samples, 'gwctl_request_duration_seconds_count')).toBe(requests)
    expect(sum(samples, 'gwctl_time_to_first_byte_seconds_count')).toBe(requests - 1) // none for the refused one
    expect(sum(samples, 'gwctl_request_duration_seconds_bucket', {le: '+Inf'})).toBe(requests)
    expect(sum(samples, 'gwctl_fallbacks_total')).toBe(0)
    expect(sum(samples, 'gwctl_log_rows_dropped_total')).toBe(0)
    // every provider of the sim has its breaker, closed
    const closed = samples.filter((s) => s.name === 'gwctl_breaker_state' && s.labels.state === 'closed')
    expect(closed.length).toBeGreaterThan(0)
    expect(closed.every((s) => s.value === 1)).toBe(true)
    expect(text).not.toContain(codex.key)
    expect(text).not.toContain('zebra-prompt')
    expect(text).not.toContain(codex.key.slice(0, 12)) // no key prefix either

    // the same totals as the log database says
    const usage = json(await cli(['usage', '--json']))
    expect(usage.totals.requests).toBe(requests)
    expect(usage.totals.inputTokens).toBe(sum(samples, 'gwctl_tokens_total', {kind: 'input'}))
    expect(usage.totals.outputTokens).toBe(sum(samples, 'gwctl_tokens_total', {kind: 'output'}))
    expect(usage.totals.cacheReadTokens ?? 0).toBe(sum(samples, 'gwctl_tokens_total', {kind: 'cache_read'}))

    // the management API's loopback and Host rules hold for /metrics
    expect((await getWithHost(port, '/metrics', `127.0.0.1:${port}`)).status).toBe(200)
    const foreign = await getWithHost(port, '/metrics', 'metrics.attacker.example')
    expect(foreign.status).toBe(403)
    expect(foreign.body).not.toContain('gwctl_requests_total')
    const crossOrigin = await fetch(`${base}/metrics`, {headers: {origin: 'https://evil.example'}})
    expect(crossOrigin.status).toBe(403)

    // OTLP: one span per request, GenAI attributes, token sums equal to usage
    const spans = await until('a span per request', () => {
      const s = spansOf(collector.got)
      return s.length >= requests ? s : undefined
    })
    expect(spans.length).toBe(requests)
    expect(spans.every((s) => s.kind === 3)).toBe(true) // SPAN_KIND_CLIENT
    const chatSpans = spans.filter((s) => s.attributes['gwctl.agent'] === codex.agentId)
    expect(chatSpans.length).toBe(3)
    expect(chatSpans[0].name).toBe('chat sim-mini')
    expect(chatSpans[0].attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'sim-mini',
      'gwctl.agent': codex.agentId,
      'gwctl.fallback': false,
      'http.response.status_code': 200,
    })
    expect(typeof chatSpans[0].attributes['gen_ai.provider.name']).toBe('string')
    expect(typeof chatSpans[0].attributes['gen_ai.response.model']).toBe('string')
    expect(typeof chatSpans[0].attributes['gwctl.policy']).toBe('string')
    expect(typeof chatSpans[0].attributes['gwctl.upstream_family']).toBe('string')
    for (const key of ['gen_ai.usage.cache_read.input_tokens', 'gen_ai.usage.cache_creation.input_tokens'])
      expect(typeof chatSpans[0].attributes[key]).toBe('number')
    const spanInput = spans.reduce((a, s) => a + s.attributes['gen_ai.usage.input_tokens'], 0)
    const spanOutput = spans.reduce((a, s) => a + s.attributes['gen_ai.usage.output_tokens'], 0)
    expect(spanInput).toBe(usage.totals.inputTokens)
    expect(spanOutput).toBe(usage.totals.outputTokens)
    expect(resourceAttributes(collector.got)['service.name']).toBe('gw-test')
    // the headers setting reaches the collector
    expect(collector.got[0].headers['x-collector-token']).toBe('tok-123')

    // status --json says how export fares
    const status1 = json(await cli(['status', '--json']))
    const otlp = status1.gateway?.telemetry?.otlp ?? status1.telemetry?.otlp
    expect(otlp).toMatchObject({state: 'exporting', endpoint: collector.url + '/', dropped: 0})
    expect(otlp.exported).toBe(requests)
    expect(JSON.stringify(status1)).not.toContain('tok-123')
    const human = await cli(['status'])
    expect(human.stdout).toMatch(
      new RegExp(
        `telemetry: +metrics at ${base}/metrics; OTLP export to ${collector.url}/ \\(${requests} spans sent, 0 queued, 0 dropped\\)`,
      ),
    )
    // doctor: the collector answers OTLP (an empty export with the headers), the gateway exports
    const doctor = json(await cli(['doctor', '--json']))
    const check = doctor.checks.find((c: any) => c.id === 'telemetry')
    expect(check, JSON.stringify(doctor.checks)).toMatchObject({ok: true})
    expect(check.detail).toContain(`${requests} spans sent`)
    expect(check.detail).toContain(`${collector.url}/v1/traces answers OTLP`)
    expect(JSON.stringify(doctor)).not.toContain('tok-123')

    // GenAI metrics arrive within the export interval: token usage sums equal usage
    const metricPoints = await until('the GenAI metrics', () => {
      const points = new Map<string, any[]>()
      for (const r of collector.got.filter((g) => g.path === '/v1/metrics'))
        for (const rm of r.body.resourceMetrics ?? [])
          for (const sm of rm.scopeMetrics ?? [])
            for (const m of sm.metrics ?? []) points.set(m.name, m.histogram?.dataPoints ?? [])
      const usagePoints = points.get('gen_ai.client.token.usage')
      const count = (usagePoints ?? []).reduce((a, p) => a + Number(p.count), 0)
      return count >= 2 * (requests - 1) ? points : undefined
    })
    const tokenPoints = metricPoints.get('gen_ai.client.token.usage')!
    const tokenSum = (type: string) =>
      tokenPoints
        .filter((p) =>
          p.attributes.some((a: any) => a.key === 'gen_ai.token.type' && a.value.stringValue === type),
        )
        .reduce((a, p) => a + Number(p.sum), 0)
    expect(tokenSum('input')).toBe(usage.totals.inputTokens)
    expect(tokenSum('output')).toBe(usage.totals.outputTokens)
    const durations = metricPoints.get('gen_ai.client.operation.duration')!
    expect(durations.reduce((a, p) => a + Number(p.count), 0)).toBe(requests)

    // nothing of the prompt, the answers or the keys in any payload
    const all = collector.got.map((g) => g.raw).join('\n')
    expect(all).not.toContain('zebra-prompt')
    expect(all).not.toContain('lighthouse')
    expect(all).not.toContain('You said')
    expect(all).not.toContain(codex.key)
    expect(all).not.toContain(claude.key)
  })

  it('/metrics exports each budget: spent and limit by budget, scope, period and unit, equal to budgets list', async () => {
    const {base, cli} = await setup()
    const codex = await issue(base, 'codex-laptop', 'codex')
    const set = async (args: string[]) => {
      const r = await cli(['budgets', 'set', ...args, '--json'])
      expect(r.exitCode, r.stderr).toBe(0)
      return json(r)
    }
    await set(['--agent', 'codex-laptop', '--daily', '1M', '--tokens'])
    await set(['--policy', 'default', '--monthly', '5'])
    await set(['--project', 'nobody-uses-it', '--weekly', '250k', '--tokens'])
    let tokens = 0
    for (let i = 0; i < 3; i++) {
      const r = await chat(base, codex.key, 'gpt-4o') // priced: the USD budget spends too
      expect(r.status, JSON.stringify(r.body)).toBe(200)
      tokens += r.body.usage.prompt_tokens + r.body.usage.completion_tokens
    }
    expect(tokens).toBeGreaterThan(0)
    const list = json(await cli(['budgets', 'list', '--json']))
    const budgets = (list.budgets ?? list) as any[]
    const byScope = (scope: string) => budgets.find((b) => b.scope === scope)
    const samples = await until('the budgets in /metrics', async () => {
      const {samples} = await scrape(base)
      return sum(samples, 'gwctl_budget_spent', {scope: 'agent'}) === tokens ? samples : undefined
    })
    const labels = (b: any) => ({budget: b.id, scope: b.scope, period: b.period, unit: b.unit})
    const gauge = (name: string) =>
      samples
        .filter((x) => x.name === name)
        .map((x): Record<string, string | number> => ({...x.labels, value: x.value}))
        .sort((a, b) => String(a.scope).localeCompare(String(b.scope)))
    expect(gauge('gwctl_budget_spent')).toEqual([
      {...labels(byScope('agent')), value: tokens},
      {...labels(byScope('policy')), value: byScope('policy').spent},
      {...labels(byScope('project')), value: 0},
    ])
    expect(gauge('gwctl_budget_limit')).toEqual([
      {...labels(byScope('agent')), value: 1_000_000},
      {...labels(byScope('policy')), value: 5},
      {...labels(byScope('project')), value: 250_000},
    ])
    expect(byScope('agent')).toMatchObject({period: 'daily', unit: 'tokens', spent: tokens})
    expect(byScope('policy')).toMatchObject({period: 'monthly', unit: 'usd'})
    expect(byScope('policy').spent).toBeGreaterThan(0)
  })

  it('a collector that refuses: the queue stays bounded, the oldest spans are dropped and counted in /metrics, status and doctor', async () => {
    const closedPort = await freePort() // nothing listens there
    const {base, cli} = await setup({
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closedPort}`,
      OTEL_BSP_SCHEDULE_DELAY: '20',
      OTEL_BSP_MAX_QUEUE_SIZE: '5',
    })
    const codex = await issue(base, 'codex-laptop', 'codex')
    for (let i = 0; i < 20; i++) expect((await chat(base, codex.key)).status).toBe(200)
    // every span is either still queued (5, the bound) or dropped (15), none exported
    const samples = await until('the queue at its bound', async () => {
      const {samples} = await scrape(base)
      return sum(samples, 'gwctl_otlp_queue_spans') === 5 &&
        sum(samples, 'gwctl_otlp_spans_dropped_total') === 15 &&
        sum(samples, 'gwctl_otlp_export_failures_total') > 0
        ? samples
        : undefined
    })
    expect(sum(samples, 'gwctl_otlp_spans_exported_total')).toBe(0)
    expect(sum(samples, 'gwctl_requests_total')).toBe(20)
    const status = json(await cli(['status', '--json']))
    const otlp = status.gateway?.telemetry?.otlp ?? status.telemetry?.otlp
    expect(otlp).toMatchObject({state: 'failing', queued: 5, dropped: 15, exported: 0})
    expect(otlp.lastError).toMatch(/ECONNREFUSED|connect/i)
    const doctor = await cli(['doctor', '--json'])
    const checks = json(doctor).checks as any[]
    const telemetryCheck = checks.find((c: any) => c.id === 'telemetry')
    expect(telemetryCheck?.ok, JSON.stringify(checks)).toBe(false)
    expect(telemetryCheck.detail).toMatch(/15 spans dropped/)
  })

  it('a collector that never answers: every request is answered at once while the export hangs, and the stop is prompt', async () => {
    const collector = await receiver('hang')
    const {base, cli} = await setup({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_BSP_SCHEDULE_DELAY: '0',
      OTEL_EXPORTER_OTLP_TIMEOUT: '60000',
    })
    const codex = await issue(base, 'codex-laptop', 'codex')
    expect((await chat(base, codex.key)).status).toBe(200)
    // the first export is under way and will not come back during this test
    await until('an export under way', () =>
      collector.got.some((g) => g.path === '/v1/traces') ? true : undefined,
    )
    const times: number[] = []
    for (let i = 0; i < 30; i++) {
      const t0 = performance.now()
      expect((await chat(base, codex.key)).status).toBe(200)
      times.push(performance.now() - t0)
    }
    // the simulator answers in milliseconds; an export on the request path would hold each
    // request for the collector's 60 s
    expect(Math.max(...times)).toBeLessThan(2000)
    const {samples} = await scrape(base)
    expect(sum(samples, 'gwctl_requests_total')).toBe(31)
    expect(sum(samples, 'gwctl_otlp_spans_exported_total')).toBe(0)
    // not delivered: the span under way and the 30 behind it
    expect(sum(samples, 'gwctl_otlp_queue_spans')).toBe(31)
    // nor does it hold the stop: the last export gets a 3 s bound, then the daemon exits (the
    // collector's 60 s would have it killed at the end of the 20 s drain bound + 5 s)
    const t0 = Date.now()
    const stop = await cli(['gateway', 'stop', '--drain', '20'])
    expect(stop.exitCode, stop.stderr).toBe(0)
    expect(Date.now() - t0).toBeLessThan(15_000)
  })

  it('a bad endpoint setting stops the start with its rule and exit 3', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const port = await freePort()
    const bad = await runCli(['gateway', 'start', '--sim', '--port', String(port)], {
      home: t.home,
      env: {OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://collector.example'},
    })
    started.push(t.home)
    expect(bad.exitCode).toBe(3)
    expect(bad.stderr).toMatch(
      /OTEL_EXPORTER_OTLP_ENDPOINT.*telemetry\.otlp-endpoint.*must be an http\(s\) URL/,
    )
    const set = await runCli(['config', 'set', 'telemetry.otlp-endpoint', 'http://u:p@collector.example'], {
      home: t.home,
    })
    expect(set.exitCode).not.toBe(0)
    expect(set.stderr).toMatch(/must not carry credentials/)
  })
})

/** Lists the files a process loads (ES modules through a resolve hook, CommonJS through the resolver). */
const PRELOAD = `
import {createRequire, register} from 'node:module'
import {appendFileSync} from 'node:fs'
register('data:text/javascript,' + encodeURIComponent(\`
import {appendFileSync} from 'node:fs'
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context)
  if (r.url.startsWith('file:')) appendFileSync(process.env.MODULES_OUT, r.url + '\\\\n')
  return r
}\`))
const require = createRequire(import.meta.url)
const Module = require('node:module')
const {threadId} = require('node:worker_threads')
const resolveFilename = Module._resolveFilename
Module._resolveFilename = function (...args) {
  const file = resolveFilename.apply(this, args)
  if (file.startsWith('/')) {
    appendFileSync(process.env.MODULES_OUT, 'file://' + file + '\\n')
    appendFileSync(process.env.MODULES_OUT + '.threads', threadId + ' ' + file + '\\n')
  }
  return file
}
`

describe('what the daemon loads', {timeout: 60_000}, () => {
  /**
   * Starts dist/daemon/main.js --sim with the preload and waits for /health; `loaded()` lists the
   * packages and gwctl files it has loaded so far.
   */
  async function daemon(env: Record<string, string>) {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const preload = join(t.home, 'preload.mjs')
    const out = join(t.home, 'modules.txt')
    writeFileSync(preload, PRELOAD)
    writeFileSync(out, '')
    const port = await freePort()
    const child = spawn(
      process.execPath,
      ['--import', preload, join(ROOT, 'dist', 'daemon', 'main.js'), '--port', String(port), '--sim'],
      {
        env: {...process.env, ...cliEnv(t.home), MODULES_OUT: out, ...env} as NodeJS.ProcessEnv,
        stdio: 'ignore',
      },
    )
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve))
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    })
    const base = `http://127.0.0.1:${port}`
    await until('the daemon', async () => {
      try {
        return (await fetch(`${base}/health`)).status === 200 ? true : undefined
      } catch {
        return undefined
      }
    })
    const files = () => readFileSync(out, 'utf8').split('\n').filter(Boolean)
    return {
      base,
      /** Packages (node_modules) loaded so far. */
      packages: () =>
        new Set(
          files()
            .filter((l) => l.includes('/node_modules/'))
            .map((l) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(l)![1]),
        ),
      /** The thread ids (0: the main thread) that required files of a package. */
      threadsOf: (pkg: string) =>
        new Set(
          (existsSync(`${out}.threads`) ? readFileSync(`${out}.threads`, 'utf8') : '')
            .split('\n')
            .filter((l) => l.includes(`/node_modules/${pkg}/`))
            .map((l) => Number(l.split(' ')[0])),
        ),
      /** Whether the pricer of `gwctl usage` (services/usage-cost, a chunk of its own) is loaded. */
      pricer: () =>
        files().some((l) => /\/dist\/(?:chunks\/usage-cost-[^/]*|services\/usage-cost)\.js$/.test(l)),
      async stop() {
        child.kill('SIGTERM')
        await exited
      },
    }
  }

  it('without an endpoint: none of @opentelemetry; with one: the SDK and its OTLP exporters', async () => {
    const off = await daemon({})
    await off.stop()
    expect([...off.packages()].filter((p) => p.startsWith('@opentelemetry/'))).toEqual([])
    const on = await daemon({OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9'})
    await on.stop()
    expect(on.packages()).toContain('@opentelemetry/sdk-trace-base')
    expect(on.packages()).toContain('@opentelemetry/exporter-trace-otlp-http')
    expect(on.packages()).toContain('@opentelemetry/sdk-metrics')
    // the SDK runs in the export thread: the thread that answers requests never loads it
    const threads = on.threadsOf('@opentelemetry/sdk-trace-base')
    expect(threads.size).toBeGreaterThan(0)
    expect(threads.has(0)).toBe(false)
  })

  it('until the first scrape: neither prom-client nor the pricer and its price table, even with traffic', async () => {
    const d = await daemon({})
    const {key} = await issue(d.base, 'codex-laptop', 'codex')
    for (let i = 0; i < 3; i++) expect((await chat(d.base, key)).status).toBe(200)
    // past the 200 ms fold: the rows are in the metrics' sums
    await new Promise((r) => setTimeout(r, 400))
    expect(d.packages()).not.toContain('prom-client')
    expect(d.packages()).not.toContain('@pydantic/genai-prices')
    expect(d.pricer()).toBe(false)
    // the first scrape loads them, and counts what came before it
    const {samples} = await scrape(d.base)
    expect(sum(samples, 'gwctl_requests_total', {status_class: '2xx'})).toBe(3)
    expect(d.packages()).toContain('prom-client')
    expect(d.pricer()).toBe(true)
    await d.stop()
  })
})
