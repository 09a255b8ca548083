/**
 * A real Prometheus scrapes the gateway (issue 27, docs/TELEMETRY.md): Debian's `prometheus`
 * binary (`.ci/run` installs it) runs on a free loopback port with a temp config (scrape every
 * second) and a temp TSDB; the gateway (`--sim`) answers known traffic on its four entrances; the
 * query API's request, token and cost totals equal `gwctl usage --json`, in total and per agent.
 * Skipped, saying why, where the binary is absent.
 */
import type {ChildProcess} from 'node:child_process'
import {spawn, spawnSync} from 'node:child_process'
import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {killDaemon} from './helpers/gateway.js'

const PROMETHEUS = spawnSync('sh', ['-c', 'command -v prometheus'], {encoding: 'utf8'}).stdout.trim()
const SKIPPED = 'no prometheus binary on PATH (Debian: apt-get install prometheus; .ci/run installs it)'
if (!PROMETHEUS) console.warn(`test/prometheus.test.ts skipped: ${SKIPPED}`)

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** Prometheus on a free loopback port, scraping `target` every second; resolves once it is ready. */
async function startPrometheus(dir: string, target: string): Promise<{origin: string; child: ChildProcess}> {
  const port = await freePort()
  mkdirSync(join(dir, 'data'), {recursive: true})
  const config = join(dir, 'prometheus.yml')
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 1s',
      'scrape_configs:',
      '  - job_name: gwctl',
      '    metrics_path: /metrics',
      '    static_configs:',
      `      - targets: ['${target}']`,
      '',
    ].join('\n'),
  )
  let log = ''
  const child = spawn(
    PROMETHEUS,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
    ],
    {stdio: ['ignore', 'ignore', 'pipe']},
  )
  child.stderr!.on('data', (c: Buffer) => (log = (log + c.toString()).slice(-4000)))
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()))
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  })
  const origin = `http://127.0.0.1:${port}`
  await until(`Prometheus ready (${log})`, async () => {
    if (child.exitCode !== null) throw new Error(`prometheus exited ${child.exitCode}: ${log}`)
    return fetch(`${origin}/-/ready`).then(
      (r) => (r.ok ? true : undefined),
      () => undefined,
    )
  })
  return {origin, child}
}

/** An instant query: each series' labels and value. */
async function query(
  origin: string,
  promql: string,
): Promise<Array<{labels: Record<string, string>; value: number}>> {
  const res = await fetch(`${origin}/api/v1/query?query=${encodeURIComponent(promql)}`)
  const body = (await res.json()) as any
  expect(body.status, JSON.stringify(body)).toBe('success')
  return body.data.result.map((r: any) => ({labels: r.metric, value: Number(r.value[1])}))
}

const one = async (origin: string, promql: string): Promise<number | undefined> =>
  (await query(origin, promql))[0]?.value

async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

async function post(url: string, headers: Record<string, string>, body: unknown): Promise<any> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {'content-type': 'application/json', ...headers},
    body: JSON.stringify(body),
  })
  const text = await res.text()
  expect(res.status, text.slice(0, 300)).toBe(200)
  return text.startsWith('{') ? JSON.parse(text) : text
}

describe.skipIf(!PROMETHEUS)(
  `a real Prometheus scraping the gateway${PROMETHEUS ? '' : ` (skipped: ${SKIPPED})`}`,
  {timeout: 90_000},
  () => {
    it('its query API returns request, token and cost totals equal to gwctl usage --json, per agent too', async () => {
      const t = tempHome()
      cleanups.push(t.cleanup)
      const port = await freePort()
      const home = t.home
      const cli = (args: string[]) => runCli(args, {home, env: {GWCTL_GATEWAY_PORT: String(port)}})
      const start = await cli(['gateway', 'start', '--sim', '--port', String(port)])
      cleanups.push(async () => {
        await cli(['gateway', 'stop', '--drain', '1'])
        await killDaemon(home)
      })
      expect(start.exitCode, start.stderr).toBe(0)
      const base = `http://127.0.0.1:${port}`
      const prometheus = await startPrometheus(join(home, 'prometheus'), `127.0.0.1:${port}`)

      const issue = async (agentName: string, agentType: string) => {
        const body = await post(
          `${base}/api/keys/issue`,
          {},
          {employeeName: 'Ada', employeeContact: 'ada@example.com', agentName, agentType},
        )
        return {key: body.keyValue as string, agentId: body.agentId as string}
      }
      const chatAgent = await issue('chat-laptop', 'codex')
      const responsesAgent = await issue('responses-laptop', 'codex')
      const claude = await issue('claude-laptop', 'claude_code')
      const gemini = await issue('gemini-laptop', 'gemini_cli')

      // chat: a conversation (its second turn re-sends the first: cache reads), a model the
      // bundled price table knows (priced), and a stream
      const bearer = (k: string) => ({authorization: `Bearer ${k}`})
      const turn1 = [{role: 'user', content: 'Describe a lighthouse in detail, please.'}]
      const first = await post(`${base}/v1/chat/completions`, bearer(chatAgent.key), {
        model: 'sim-mini',
        messages: turn1,
      })
      await post(`${base}/v1/chat/completions`, bearer(chatAgent.key), {
        model: 'sim-mini',
        messages: [...turn1, first.choices[0].message, {role: 'user', content: 'And a harbour?'}],
      })
      await post(`${base}/v1/chat/completions`, bearer(chatAgent.key), {
        model: 'gpt-4o-mini',
        messages: [{role: 'user', content: 'hello'}],
      })
      const stream = await post(`${base}/v1/chat/completions`, bearer(chatAgent.key), {
        model: 'sim-mini',
        stream: true,
        stream_options: {include_usage: true},
        messages: [{role: 'user', content: 'stream this'}],
      })
      expect(stream).toContain('[DONE]')
      // responses, messages and gemini entrances
      for (const model of ['sim-mini', 'gpt-4o-mini'])
        await post(`${base}/v1/responses`, bearer(responsesAgent.key), {model, input: 'hi'})
      for (let i = 0; i < 2; i++)
        await post(
          `${base}/v1/messages`,
          {'x-api-key': claude.key, 'anthropic-version': '2023-06-01'},
          {model: 'claude-sim', max_tokens: 64, messages: [{role: 'user', content: `hello ${i}`}]},
        )
      for (let i = 0; i < 2; i++)
        await post(
          `${base}/v1beta/models/gemini-sim:generateContent`,
          {'x-goog-api-key': gemini.key},
          {contents: [{role: 'user', parts: [{text: `hello ${i}`}]}]},
        )
      // a refused key: counted under agent none as 4xx, as `gwctl usage` counts it
      const refused = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: {authorization: 'Bearer gw-not-a-real-key', 'content-type': 'application/json'},
        body: JSON.stringify({model: 'sim-mini', messages: turn1}),
      })
      await refused.arrayBuffer()
      expect(refused.status >= 400 && refused.status < 500, String(refused.status)).toBe(true)
      const sent = {chat: 4 + 1, responses: 2, messages: 2, gemini: 2}
      const requests = Object.values(sent).reduce((a, b) => a + b, 0)

      // Prometheus scrapes every second: wait for a scrape that has every request
      expect(await until('the gwctl target up', () => one(prometheus.origin, 'up{job="gwctl"} == 1'))).toBe(1)
      await until('a scrape with every request', async () =>
        (await one(prometheus.origin, 'sum(gwctl_requests_total)')) === requests ? true : undefined,
      )

      const usage = json(await cli(['usage', '--source', 'gateway', '--json']))
      const byAgent = json(await cli(['usage', '--source', 'gateway', '--pivot', 'agent', '--json']))
      const totals = usage.totals
      expect(totals.requests).toBe(requests)

      const byEntrance = await query(prometheus.origin, 'sum by (entrance) (gwctl_requests_total)')
      expect(Object.fromEntries(byEntrance.map((s) => [s.labels.entrance, s.value]))).toEqual(sent)

      const tokens = Object.fromEntries(
        (await query(prometheus.origin, 'sum by (kind) (gwctl_tokens_total)')).map((s) => [
          s.labels.kind,
          s.value,
        ]),
      )
      expect(tokens.output).toBe(totals.outputTokens)
      expect(tokens.output).toBeGreaterThan(0)
      // the conversation's second turn read the cache
      expect(tokens.cache_read).toBeGreaterThan(0)
      expect(tokens.cache_read).toBe(totals.cacheReadTokens)
      expect(tokens.cache_write ?? 0).toBe(totals.cacheCreationTokens)
      // `input` counts the cache, as the log rows and `gwctl usage --source gateway` do
      expect(tokens.input).toBe(totals.inputTokens)

      // per agent: requests and output tokens equal the agent pivot of `gwctl usage`
      const perAgent = async (promql: string) =>
        Object.fromEntries((await query(prometheus.origin, promql)).map((s) => [s.labels.agent, s.value]))
      const agentRequests = await perAgent('sum by (agent) (gwctl_requests_total)')
      const agentOutput = await perAgent('sum by (agent) (gwctl_tokens_total{kind="output"})')
      for (const a of [chatAgent, responsesAgent, claude, gemini]) {
        const row = byAgent.rows.find((r: any) => r.key === a.agentId)
        expect(row, a.agentId).toBeDefined()
        expect(agentRequests[a.agentId]).toBe(row.requests)
        expect(agentOutput[a.agentId]).toBe(row.outputTokens)
      }
      expect(agentRequests.none).toBe(1)

      // cost: priced from the same table as `gwctl usage` (gpt-4o-mini is in it; the sim models not)
      expect(totals.costUSD).toBeGreaterThan(0)
      const cost = await one(prometheus.origin, 'sum(gwctl_cost_usd_total)')
      expect(cost).toBeCloseTo(totals.costUSD, 12)
      const pricedModels = await query(prometheus.origin, 'sum by (model) (gwctl_cost_usd_total)')
      expect(pricedModels.map((s) => s.labels.model)).toEqual(['gpt-4o-mini'])
    })
  },
)
