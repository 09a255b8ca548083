/**
 * Dollar amounts in `--json` carry no float noise (0.30000000000000004): every command rounds them
 * alike (core/usd.ts: 15 significant digits, what tables format too), so a sum of $0.10 and $0.20
 * prints 0.3. The gateway's log here holds requests whose dollars add up to a noisy float.
 */
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {roundDollars, roundUsd} from '../src/core/usd.js'
import type {LogEntry} from '../src/store/log-store.js'
import {LogStore} from '../src/store/log-store.js'
import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {killDaemon} from './helpers/gateway.js'
import {logEntry} from './helpers/log-entry.js'

/** Claude Haiku 4.5: $1 input, $5 output per 1M. */
const MODEL = 'claude-haiku-4-5'

const request = (time: number, input: number, project: string, model = MODEL): LogEntry =>
  logEntry({
    time,
    agentId: null,
    keyPrefix: null,
    entrance: 'messages',
    requestedModel: model,
    provider: 'anthropic',
    model,
    inputTokens: input,
    outputTokens: 0,
    ttfbMs: null,
    project,
  })

/** Every number under a dollar key (or a USD budget's amounts) in `value`, with its path. */
function dollars(value: unknown, path = '$', usd = false, out: Array<[string, number]> = []) {
  if (typeof value === 'number') {
    const key = path.split('.').at(-1)!
    if (/usd|cost|perhour/i.test(key) || (usd && ['spent', 'limit', 'reserved'].includes(key)))
      out.push([path, value])
  } else if (Array.isArray(value)) value.forEach((v, i) => dollars(v, `${path}[${i}]`, false, out))
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value))
      dollars(v, `${path}.${k}`, (value as {unit?: string}).unit === 'usd', out)
  return out
}

/** `value` has its float noise: more than 15 significant digits. */
const noisy = (v: number) => v !== Number(v.toPrecision(15))

describe('dollars in --json', () => {
  let home: {home: string; cleanup: () => void}
  beforeEach(() => {
    home = tempHome()
  })
  afterEach(async () => {
    await runCli(['gateway', 'stop', '--drain', '1'], {home: home.home})
    await killDaemon(home.home)
    home.cleanup()
  })

  it('the rule: 15 significant digits, only dollar keys', () => {
    expect(0.1 + 0.2).toBe(0.30000000000000004)
    expect(roundUsd(0.1 + 0.2)).toBe(0.3)
    expect(roundUsd(0)).toBe(0)
    expect(roundUsd(1234.5678)).toBe(1234.5678)
    expect(
      roundDollars({
        costUSD: 0.1 + 0.2,
        ratio: 0.1 + 0.2,
        rows: [{cost: 0.7 + 0.1, usd: 0.1 + 0.7, perHour: 0.2 + 0.1, tokens: 3}],
        budget: {unit: 'usd', spent: 0.1 + 0.2, limit: 5, percent: 0.1 + 0.2},
        tokenBudget: {unit: 'tokens', spent: 3, limit: 10},
        when: null,
      }),
    ).toEqual({
      costUSD: 0.3,
      ratio: 0.30000000000000004,
      rows: [{cost: 0.8, usd: 0.8, perHour: 0.3, tokens: 3}],
      budget: {unit: 'usd', spent: 0.3, limit: 5, percent: 0.30000000000000004},
      tokenBudget: {unit: 'tokens', spent: 3, limit: 10},
      when: null,
    })
  })

  it('usage (every form), usage blocks, budgets list and status print none', async () => {
    const now = Date.now()
    const store = await LogStore.open(join(home.home, 'logs.db'), {batchSize: 1e9, flushMs: 1e9})
    // $0.10, $0.20 and $0.40 of Haiku input in three projects, and $0.21 of Sonnet 4.5 ($3 per 1M)
    store.append(request(now - 60_000, 100_000, 'a'))
    store.append(request(now - 50_000, 200_000, 'b'))
    store.append(request(now - 40_000, 400_000, 'c'))
    store.append(request(now - 30_000, 70_000, 'c', 'claude-sonnet-4-5'))
    store.flush()
    store.close()
    const cli = (args: string[]) => runCli(args, {home: home.home})
    const set = await cli(['budgets', 'set', '--project', 'c', '--daily', '5'])
    expect(set.exitCode, set.stderr).toBe(0)
    const set2 = await cli(['budgets', 'set', '--project', 'a', '--daily', '1.1'])
    expect(set2.exitCode, set2.stderr).toBe(0)
    const set3 = await cli(['budgets', 'set', '--policy', 'default', '--monthly', '30'])
    expect(set3.exitCode, set3.stderr).toBe(0)

    const outputs: Array<[string, unknown]> = []
    for (const args of [
      ['usage', '--json', '--source', 'gateway'],
      ['usage', '--json', '--source', 'gateway', '--pivot', 'project'],
      ['usage', 'daily', '--json', '--source', 'gateway', '--breakdown'],
      ['usage', 'monthly', '--json', '--source', 'gateway', '--breakdown'],
      ['usage', 'blocks', '--json', '--source', 'gateway', '--breakdown'],
      ['budgets', 'list', '--json'],
      ['status', '--json'],
    ]) {
      const run = await cli(args)
      // status: the gateway is not running (exit 6), its one document printed all the same
      expect(run.exitCode, `${args.join(' ')}: ${run.stderr}`).toBe(args[0] === 'status' ? 6 : 0)
      outputs.push([args.join(' '), json(run)])
    }
    const all = outputs.flatMap(([command, value]) =>
      dollars(value).map(([p, v]) => [command, p, v] as const),
    )
    // the figures are there (usage totals, budgets' spent) ...
    const total = dollars(outputs[0][1]).find(([p]) => p === '$.totals.costUSD')![1]
    expect(total).toBe(0.91)
    expect(all.length).toBeGreaterThan(20)
    const status = outputs.at(-1)![1] as {budgets: Array<{target: string; spent: number}>}
    expect(status.budgets.find((b) => b.target === 'c')?.spent).toBe(0.61)
    // ... and none is noisy (unrounded, the totals of usage and blocks were 0.9099999999999999)
    expect(all.filter(([, , v]) => noisy(v))).toEqual([])
    // dashboard --json: the running gateway's budgets (their spend read from the log at its start)
    const port = await freePort()
    const env = {GWCTL_GATEWAY_PORT: String(port)}
    const start = await runCli(['gateway', 'start', '--sim', '--port', String(port)], {home: home.home, env})
    expect(start.exitCode, start.stderr).toBe(0)
    const dashboard = await runCli(['dashboard', '--json'], {home: home.home, env})
    expect(dashboard.exitCode, dashboard.stderr).toBe(0)
    const board = json(dashboard) as {budgets: Array<{target: string; spent: number}>}
    expect(board.budgets.find((b) => b.target === 'default')?.spent).toBe(0.91)
    expect(dollars(board).filter(([, v]) => noisy(v))).toEqual([])
    outputs.push(['dashboard --json', board])
    // the context bands the pricer needs (the 400k request is in one) are not part of any output
    for (const [command, value] of outputs) expect(JSON.stringify(value), command).not.toContain('"bands"')
  })
})
