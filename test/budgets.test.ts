/**
 * Budgets end to end: the real daemon (`gateway start --sim`), `gwctl budgets` to set them, a
 * burst of concurrent streams against one budget (the reservation race), the 429 in the entrance's
 * shape, the fallback target, and the figure enforced against the one `gwctl usage` shows, across
 * a restart and with the gateway stopped.
 */
import {readFileSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {killDaemon} from './helpers/gateway.js'

const started: string[] = []
const cleanups: Array<() => void> = []

afterEach(async () => {
  for (const home of started.splice(0)) {
    await runCli(['gateway', 'stop', '--drain', '1'], {home})
    await killDaemon(home)
  }
  for (const c of cleanups.splice(0)) c()
})

async function setup() {
  const t = tempHome()
  cleanups.push(t.cleanup)
  const port = await freePort()
  const home = t.home
  const cli = (args: string[]) => runCli(args, {home, env: {GWCTL_GATEWAY_PORT: String(port)}})
  started.push(home)
  const start = await cli(['gateway', 'start', '--sim', '--port', String(port)])
  expect(start.exitCode, start.stderr).toBe(0)
  const base = `http://127.0.0.1:${port}`
  const issue = async (agentName: string, agentType = 'codex') => {
    const res = await fetch(`${base}/api/keys/issue`, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: JSON.stringify({employeeName: 'Ada', employeeContact: 'ada@example.com', agentName, agentType}),
    })
    expect(res.status).toBe(200)
    return ((await res.json()) as {keyValue: string}).keyValue
  }
  return {home, port, base, cli, issue}
}

/** One Responses request (a stream when `stream`), its status, headers and body text. */
async function respond(
  base: string,
  key: string,
  options: {stream?: boolean; headers?: Record<string, string>} = {},
): Promise<{status: number; headers: Headers; text: string}> {
  const res = await fetch(`${base}/v1/responses`, {
    method: 'POST',
    headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json', ...options.headers},
    body: JSON.stringify({
      model: 'gpt-4o',
      input: 'Count to three.',
      max_output_tokens: 100,
      stream: !!options.stream,
    }),
  })
  return {status: res.status, headers: res.headers, text: await res.text()}
}

/** Waits until the gateway logged `count` rows (a row is written just after its answer). */
async function logged(base: string, count: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const body = (await (await fetch(`${base}/api/logs?limit=1000`)).json()) as {logs: unknown[]}
    if (body.logs.length >= count) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`fewer than ${count} rows logged`)
}

const startOfDay = () => Math.floor(new Date().setUTCHours(0, 0, 0, 0) / 1000)

/** What `gwctl usage --source gateway` shows for an agent since the day started (USD). */
async function usageCost(cli: (a: string[]) => Promise<any>, agent: string): Promise<number> {
  const usage = await cli([
    'usage',
    '--source',
    'gateway',
    '--agent',
    agent,
    '--since',
    String(startOfDay()),
    '--json',
  ])
  expect(usage.exitCode, usage.stderr).toBe(0)
  return json(usage).totals.costUSD as number
}

async function listed(cli: (a: string[]) => Promise<any>) {
  const list = await cli(['budgets', 'list', '--json'])
  expect(list.exitCode, list.stderr).toBe(0)
  return json(list).budgets as any[]
}

describe('gwctl budgets with a running gateway', () => {
  it('a spent token budget answers 429 in the Messages shape for a Claude Code agent', async () => {
    const {cli, issue, base} = await setup()
    const key = await issue('claude', 'claude_code')
    expect((await cli(['budgets', 'set', '--agent', 'claude', '--daily', '10', '--tokens'])).exitCode).toBe(0)
    const ask = () =>
      fetch(`${base}/v1/messages`, {
        method: 'POST',
        headers: {'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json'},
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          messages: [{role: 'user', content: 'Hi'}],
        }),
      })
    expect((await ask()).status).toBe(200)
    const refused = await ask()
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    const body = (await refused.json()) as any
    expect(body.type).toBe('error')
    expect(body.error.type).toBe('rate_limit_error')
    expect(body.error.message).toMatch(
      /^Budget exceeded: agent "claude" has spent \d+ tokens of its daily budget of 10 tokens\. It resets at /,
    )
  }, 60_000)

  it('refuses bad input with the documented exit codes, before anything is written', async () => {
    const {cli, issue, home} = await setup()
    await issue('codex')
    const noPeriod = await cli(['budgets', 'set', '--agent', 'codex', '5'])
    expect(noPeriod.exitCode).toBe(2)
    expect(noPeriod.stderr).toMatch(/exactly one period: give one of --daily, --weekly or --monthly/)
    const twoScopes = await cli(['budgets', 'set', '--agent', 'codex', '--project', 'web', '--daily', '5'])
    expect(twoScopes.exitCode).toBe(2)
    expect(twoScopes.stderr).toMatch(/exactly one scope/)
    const amount = await cli(['budgets', 'set', '--agent', 'codex', '--daily', 'five'])
    expect(amount.exitCode).toBe(2)
    expect(amount.stderr).toMatch(/"five" is not an amount in USD/)
    const tokens = await cli(['budgets', 'set', '--agent', 'codex', '--daily', '1.5', '--tokens'])
    expect(tokens.exitCode).toBe(2)
    const action = await cli(['budgets', 'set', '--agent', 'codex', '--daily', '5', '--on-exceed', 'deny'])
    expect(action.exitCode).toBe(2)
    const agent = await cli(['budgets', 'set', '--agent', 'nobody', '--daily', '5', '--json'])
    expect(agent.exitCode).toBe(7)
    expect(json(agent).error.code).toBe('unknown_agent')
    const provider = await cli([
      'budgets',
      'set',
      '--agent',
      'codex',
      '--daily',
      '5',
      '--on-exceed',
      'fallback:nope',
    ])
    expect(provider.exitCode).toBe(7)
    expect(provider.stderr).toMatch(/no provider "nope"[\s\S]*sim-chat/)
    const remove = await cli(['budgets', 'remove', '--project', 'web'])
    expect(remove.exitCode).toBe(7)
    expect(JSON.parse(readFileSync(join(home, 'state.json'), 'utf8')).budgets ?? []).toEqual([])
  })

  it('a burst of concurrent streams: reservations refuse the excess with 429, and the enforced figure equals usage, across a restart and a stop', async () => {
    const {cli, issue, base, home} = await setup()
    const key = await issue('codex')
    const set = await cli(['budgets', 'set', '--agent', 'codex', '--daily', '0.004', '--json'])
    expect(set.exitCode, set.stderr).toBe(0)
    expect(json(set)).toMatchObject({
      created: true,
      applied: {gateway: 'applied'},
      budget: {unit: 'usd', limit: 0.004},
    })
    expect(statSync(join(home, 'state.json')).mode & 0o777).toBe(0o600)

    // 12 slow streams at once: each reserves about $0.00105 (its bytes / 4 in, 100 out at gpt-4o
    // prices) and really costs about $0.00016, so reservations, not the spend, refuse the excess
    const slow = {'x-sim-fault': 'chunk-delay=150'}
    const burst = await Promise.all(
      Array.from({length: 12}, () => respond(base, key, {stream: true, headers: slow})),
    )
    const ok = burst.filter((r) => r.status === 200)
    const refused = burst.filter((r) => r.status === 429)
    expect(ok.length + refused.length).toBe(12)
    expect(ok.length).toBeGreaterThanOrEqual(3)
    expect(ok.length).toBeLessThanOrEqual(4)
    for (const r of ok) expect(r.text).toContain('response.completed')
    const body = JSON.parse(refused[0].text)
    expect(body.error).toMatchObject({type: 'rate_limit_error', code: 'budget_exceeded'})
    expect(body.error.message).toMatch(
      /^Budget exceeded: agent "codex" has spent \$0\.0\d+ of its daily budget of \$0\.0040 \(\+ \$0\.00\d+ reserved by requests under way\)\. It resets at \d{4}-\d\d-\d\dT00:00:00\.000Z\.$/,
    )
    const retryAfter = Number(refused[0].headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(86_400)
    await logged(base, 12)
    let [budget] = await listed(cli)
    expect(budget.reserved).toBe(0)
    expect(budget.spent).toBeGreaterThan(0)
    expect(budget.spent).toBeCloseTo(await usageCost(cli, 'codex'), 9)

    // one at a time until the budget refuses: spent reaches the limit, overshooting it by less
    // than one request's reservation
    let sent = 12
    let last = 200
    for (let i = 0; i < 40 && last === 200; i++) {
      last = (await respond(base, key)).status
      sent++
    }
    expect(last).toBe(429)
    await logged(base, sent)
    ;[budget] = await listed(cli)
    expect(budget.state).toBe('exceeded')
    expect(budget.spent).toBeGreaterThanOrEqual(0.004)
    expect(budget.spent).toBeLessThan(0.004 + 0.0011)
    const shown = await usageCost(cli, 'codex')
    expect(budget.spent).toBeCloseTo(shown, 9)

    // status, dashboard --json: spent / limit and the reset time
    const status = json(await cli(['status', '--json']))
    expect(status.budgets[0]).toMatchObject({id: budget.id, limit: 0.004, state: 'exceeded'})
    expect(status.budgets[0].resetAt).toBe(budget.resetAt)
    const dashboard = json(await cli(['dashboard', '--json']))
    expect(dashboard.budgets[0]).toMatchObject({id: budget.id, spent: budget.spent})

    // a restart re-reads the spend from logs.db: still spent, still refused
    const restart = await cli(['gateway', 'restart'])
    expect(restart.exitCode, restart.stderr).toBe(0)
    const [again] = await listed(cli)
    expect(again).toMatchObject({source: 'gateway', state: 'exceeded'})
    expect(again.spent).toBeCloseTo(shown, 9)
    expect((await respond(base, key)).status).toBe(429)

    // stopped: the same figure from the log database
    expect((await cli(['gateway', 'stop', '--drain', '1'])).exitCode).toBe(0)
    const [stopped] = await listed(cli)
    expect(stopped.source).toBe('database')
    expect(stopped.spent).toBeCloseTo(shown, 9)
    const text = await cli(['budgets', 'list'])
    expect(text.stdout).toMatch(
      /agent codex\s+daily\s+\$0\.00\d\d\s+\$0\.0040\s+1\d\d(\.\d)?%\s+\d{4}-\d\d-\d\d 00:00 UTC/,
    )

    const removed = await cli(['budgets', 'remove', '--agent', 'codex', '--daily', '--json'])
    expect(removed.exitCode, removed.stderr).toBe(0)
    expect(json(removed).removed).toHaveLength(1)
    expect(await listed(cli)).toEqual([])
  }, 120_000)

  it('fallback: a spent budget sends requests to the named target and the log row says why; token budgets per project', async () => {
    const {cli, issue, base} = await setup()
    const key = await issue('codex')
    const set = await cli([
      'budgets',
      'set',
      '--agent',
      'codex',
      '--daily',
      '0.00005',
      '--on-exceed',
      'fallback:sim-chat:cheap-model',
    ])
    expect(set.exitCode, set.stderr).toBe(0)
    expect(set.stdout).toMatch(/then fallback:sim-chat:cheap-model/)
    const project = await cli(['budgets', 'set', '--project', 'web', '--weekly', '1M', '--tokens'])
    expect(project.exitCode, project.stderr).toBe(0)

    // the gateway's event stream, read from before the first request
    const events = await fetch(`${base}/api/events`)
    const reader = events.body!.getReader()
    let seen = ''
    const told = (async () => {
      while (!/event: budget\ndata: \{"type":"budget","threshold":100,/.test(seen)) {
        const {value, done} = await reader.read()
        if (done) return
        seen += new TextDecoder().decode(value)
      }
    })()

    const web = {'x-gw-project': 'web'}
    expect((await respond(base, key, {headers: web})).status).toBe(200)
    const second = await respond(base, key, {headers: web})
    expect(second.status).toBe(200)
    expect(JSON.parse(second.text).object).toBe('response')
    await logged(base, 2)
    await Promise.race([told, new Promise((r) => setTimeout(r, 5000))])
    await reader.cancel()
    // one request passed both thresholds: 80 % first, then 100 %, each with the budget's view
    const thresholds = [...seen.matchAll(/event: budget\ndata: (.*)\n/g)].map((m) => JSON.parse(m[1]))
    expect(thresholds.map((e) => e.threshold)).toEqual([80, 100])
    expect(thresholds[1].budget).toMatchObject({
      scope: 'agent',
      name: 'codex',
      state: 'exceeded',
      limit: 0.00005,
    })
    const logs = json(await cli(['logs', '--limit', '2', '--json'])).logs
    expect(logs[0]).toMatchObject({provider: 'sim-chat', model: 'cheap-model', fallback: true, status: 200})
    expect(logs[0].error).toMatch(
      /^Budget exceeded: agent "codex" has spent .* of its daily budget of .* Sent to fallback:sim-chat:cheap-model\.$/,
    )
    expect(logs[1]).toMatchObject({provider: 'sim-responses', fallback: false, error: null})

    const budgets = await listed(cli)
    const tokens = budgets.find((b) => b.scope === 'project')
    expect(tokens).toMatchObject({unit: 'tokens', target: 'web', period: 'weekly'})
    // every token once: the log row's input holds the cached prompt tokens too
    const total = logs.reduce(
      (sum: number, r: any) =>
        sum +
        Math.max(r.inputTokens - r.cacheReadTokens - r.cacheCreationTokens, 0) +
        r.outputTokens +
        r.cacheReadTokens +
        r.cacheCreationTokens,
      0,
    )
    expect(total).toBeGreaterThan(0)
    expect(tokens.spent).toBe(total)
    // and the same as the cross-source report of `gwctl usage` (uncached input + output + cache)
    const usage = json(
      await cli(['usage', '--source', 'gateway', '--pivot', 'project', '--timezone', 'UTC', '--json']),
    )
    expect(usage.rows.find((r: any) => r.key === 'web').totalTokens).toBe(total)
  }, 60_000)
})
