/**
 * 1-hour cache writes through the gateway, end to end: the real daemon (`gateway start --sim`),
 * the simulator's `cache-1h` quirk reporting part of a Messages cache write as
 * `cache_creation.ephemeral_1h_input_tokens`, and the dollars `gwctl usage --json`, `usage daily
 * --json` and `budgets list --json` show, against a figure computed here by hand from Anthropic's
 * Claude Sonnet 4.5 prices (USD per 1M tokens: input 3, cache read 0.30, 5-minute write 3.75 =
 * 1.25x input, 1-hour write 6 = 2x input, output 15).
 */
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'

import {withState} from '../src/store/state.js'
import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {issueKeyOverApi, killDaemon, simPolicy} from './helpers/gateway.js'

const started: string[] = []
const cleanups: Array<() => void> = []

afterEach(async () => {
  for (const home of started.splice(0)) {
    await runCli(['gateway', 'stop', '--drain', '1'], {home})
    await killDaemon(home)
  }
  for (const c of cleanups.splice(0)) c()
})

/** Claude Sonnet 4.5 (below its 200k-token tier), USD per token. */
const PRICE = {input: 3e-6, cacheRead: 0.3e-6, write5m: 3.75e-6, write1h: 6e-6, output: 15e-6}

interface WireUsage {
  input_tokens: number
  output_tokens: number
  cache_read_input_tokens: number
  cache_creation_input_tokens: number
  cache_creation?: {ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number}
}

/** The dollars of one answer's usage, as Anthropic bills it. */
function billed(u: WireUsage): number {
  const oneHour = u.cache_creation?.ephemeral_1h_input_tokens ?? 0
  return (
    u.input_tokens * PRICE.input +
    u.cache_read_input_tokens * PRICE.cacheRead +
    (u.cache_creation_input_tokens - oneHour) * PRICE.write5m +
    oneHour * PRICE.write1h +
    u.output_tokens * PRICE.output
  )
}

describe('1-hour cache writes through the gateway', () => {
  it('cost exactly what Anthropic bills in usage, its reports and the budget spent, running and stopped', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const home = t.home
    const port = await freePort()
    const cli = (args: string[]) => runCli(args, {home, env: {GWCTL_GATEWAY_PORT: String(port)}})
    started.push(home)
    const start = await cli(['gateway', 'start', '--sim', '--port', String(port)])
    expect(start.exitCode, start.stderr).toBe(0)
    const base = `http://127.0.0.1:${port}`
    const key = await issueKeyOverApi(base, 'claude', 'claude_code')
    const set = await cli(['budgets', 'set', '--agent', 'claude', '--daily', '50'])
    expect(set.exitCode, set.stderr).toBe(0)

    // a long prompt, so the simulated cache write is large: thousands of tokens
    const prompt = 'Summarise the release notes below.\n' + 'The gateway keeps every request. '.repeat(400)
    const ask = (stream: boolean) =>
      fetch(`${base}/v1/messages`, {
        method: 'POST',
        headers: {
          'x-api-key': key,
          'anthropic-version': '2023-06-01',
          'content-type': 'application/json',
          'x-sim-quirk': 'cache-1h',
        },
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          stream,
          messages: [{role: 'user', content: prompt}],
        }),
      })
    // the usage the client was sent: the JSON answer's, and a stream's message_start + message_delta
    const plain = await ask(false)
    expect(plain.status).toBe(200)
    const plainUsage = ((await plain.json()) as {usage: WireUsage}).usage
    const streamed = await ask(true)
    expect(streamed.status).toBe(200)
    const events = (await streamed.text())
      .split('\n\n')
      .map((block) => /^data: (.*)$/m.exec(block)?.[1])
      .filter((d): d is string => !!d)
      .map((d) => JSON.parse(d) as {type: string; message?: {usage: WireUsage}; usage?: WireUsage})
    const startUsage = events.find((e) => e.type === 'message_start')!.message!.usage
    const deltaUsage = events.find((e) => e.type === 'message_delta')!.usage!
    const streamUsage: WireUsage = {...startUsage, ...deltaUsage, cache_creation: startUsage.cache_creation}

    for (const u of [plainUsage, streamUsage]) {
      expect(u.cache_creation!.ephemeral_1h_input_tokens).toBeGreaterThan(100)
      expect(u.cache_creation!.ephemeral_5m_input_tokens).toBeGreaterThan(100)
    }
    const oneHour = plainUsage.cache_creation!.ephemeral_1h_input_tokens * 2
    const expected = billed(plainUsage) + billed(streamUsage)
    const outputTokens = plainUsage.output_tokens + streamUsage.output_tokens
    const allTokens = [plainUsage, streamUsage].reduce(
      (sum, u) =>
        sum + u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens + u.output_tokens,
      0,
    )
    // what a 5-minute price for every write would have said: the figures below must not be this
    const premium = oneHour * (PRICE.write1h - PRICE.write5m)
    expect(premium).toBeGreaterThan(1e-4)

    // the log rows: each keeps its 1-hour part
    let logs: Array<{cacheCreationTokens: number; cache1hTokens: number}> = []
    for (let i = 0; i < 100 && logs.length < 2; i++) {
      logs = ((await (await fetch(`${base}/api/logs`)).json()) as {logs: typeof logs}).logs
      if (logs.length < 2) await new Promise((r) => setTimeout(r, 50))
    }
    expect(logs.map((l) => [l.cacheCreationTokens, l.cache1hTokens])).toEqual(
      [streamUsage, plainUsage].map((u) => [
        u.cache_creation_input_tokens,
        u.cache_creation!.ephemeral_1h_input_tokens,
      ]),
    )

    const figures = async () => {
      const usage = await cli(['usage', '--source', 'gateway', '--json'])
      expect(usage.exitCode, usage.stderr).toBe(0)
      const plainUsageCli = await cli(['usage', '--json'])
      expect(plainUsageCli.exitCode, plainUsageCli.stderr).toBe(0)
      const daily = await cli(['usage', 'daily', '--json'])
      expect(daily.exitCode, daily.stderr).toBe(0)
      const monthly = await cli(['usage', 'monthly', '--json'])
      expect(monthly.exitCode, monthly.stderr).toBe(0)
      const session = await cli(['usage', 'session', '--json'])
      expect(session.exitCode, session.stderr).toBe(0)
      const blocks = await cli(['usage', 'blocks', '--json'])
      expect(blocks.exitCode, blocks.stderr).toBe(0)
      const budgets = await cli(['budgets', 'list', '--json'])
      expect(budgets.exitCode, budgets.stderr).toBe(0)
      const dailyRows = json(daily).rows as Array<{
        costUSD: number
        cache1hTokens: number
        totalTokens: number
      }>
      expect(dailyRows).toHaveLength(1)
      expect(dailyRows[0].cache1hTokens).toBe(oneHour)
      // every token once: the gateway's answer counts cache tokens inside its inputTokens, the
      // report's beside it; both totals are the same
      expect(dailyRows[0].totalTokens).toBe(allTokens)
      for (const answer of [json(usage), json(plainUsageCli)]) {
        expect(answer.totals.cache1hTokens).toBe(oneHour)
        expect(answer.totals.inputTokens).toBe(allTokens - outputTokens)
        expect(answer.totals.totalTokens).toBe(allTokens)
      }
      return [
        json(usage).totals.costUSD as number,
        json(plainUsageCli).totals.costUSD as number,
        dailyRows[0].costUSD,
        (json(budgets).budgets as Array<{spent: number}>)[0].spent,
        json(monthly).totals.costUSD as number,
        json(session).totals.costUSD as number,
        json(blocks).blocks[0].costUSD as number,
      ]
    }
    // running: the budget's live counter; stopped: its spend read back from logs.db
    const running = await figures()
    const stop = await cli(['gateway', 'stop'])
    expect(stop.exitCode, stop.stderr).toBe(0)
    const stopped = await figures()
    for (const figure of [...running, ...stopped]) expect(figure).toBeCloseTo(expected, 12)
  }, 90_000)

  it('a chat request translated to a Messages upstream keeps the 1-hour part and its price', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const home = t.home
    const port = await freePort()
    // a policy whose chat route is the simulator's Messages upstream, translated
    const previous = process.env.GWCTL_HOME
    process.env.GWCTL_HOME = home
    try {
      await withState(
        (store) =>
          void store.data.policies.push(
            simPolicy('to-messages', {
              chat: [{provider: 'sim-messages', model: 'claude-sonnet-4-5', translate: true}],
            }),
          ),
        join(home, 'state.json'),
      )
    } finally {
      if (previous === undefined) delete process.env.GWCTL_HOME
      else process.env.GWCTL_HOME = previous
    }
    const cli = (args: string[]) => runCli(args, {home, env: {GWCTL_GATEWAY_PORT: String(port)}})
    started.push(home)
    const start = await cli(['gateway', 'start', '--sim', '--port', String(port)])
    expect(start.exitCode, start.stderr).toBe(0)
    const base = `http://127.0.0.1:${port}`
    const issued = await fetch(`${base}/api/keys/issue`, {
      method: 'POST',
      headers: {'content-type': 'application/json'},
      body: JSON.stringify({
        employeeName: 'Ada',
        employeeContact: 'ada@example.com',
        agentName: 'chatty',
        agentType: 'generic_agent',
        policyId: 'to-messages',
      }),
    })
    expect(issued.status).toBe(200)
    const key = ((await issued.json()) as {keyValue: string}).keyValue
    const prompt = 'Translate the notes below.\n' + 'Every request is logged once. '.repeat(300)
    for (const stream of [false, true]) {
      const res = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'x-sim-quirk': 'cache-1h',
        },
        body: JSON.stringify({model: 'gpt-4o', stream, messages: [{role: 'user', content: prompt}]}),
      })
      expect(res.status).toBe(200)
      await res.text()
    }
    type Row = {
      entrance: string
      upstreamFamily: string | null
      model: string
      inputTokens: number
      outputTokens: number
      cacheReadTokens: number
      cacheCreationTokens: number
      cache1hTokens: number
    }
    let logs: Row[] = []
    for (let i = 0; i < 100 && logs.length < 2; i++) {
      logs = ((await (await fetch(`${base}/api/logs`)).json()) as {logs: Row[]}).logs
      if (logs.length < 2) await new Promise((r) => setTimeout(r, 50))
    }
    expect(logs).toHaveLength(2)
    let expected = 0
    for (const row of logs) {
      expect(row).toMatchObject({entrance: 'chat', upstreamFamily: 'messages', model: 'claude-sonnet-4-5'})
      // the simulator's cache-1h quirk: half the write, rounded up, kept one hour
      expect(row.cacheCreationTokens).toBeGreaterThan(100)
      expect(row.cache1hTokens).toBe(Math.ceil(row.cacheCreationTokens / 2))
      const uncached = row.inputTokens - row.cacheReadTokens - row.cacheCreationTokens
      expected +=
        uncached * PRICE.input +
        row.cacheReadTokens * PRICE.cacheRead +
        (row.cacheCreationTokens - row.cache1hTokens) * PRICE.write5m +
        row.cache1hTokens * PRICE.write1h +
        row.outputTokens * PRICE.output
    }
    const usage = await cli(['usage', '--source', 'gateway', '--agent', 'chatty', '--json'])
    expect(usage.exitCode, usage.stderr).toBe(0)
    expect(json(usage).totals.costUSD).toBeCloseTo(expected, 12)
  }, 90_000)
})
