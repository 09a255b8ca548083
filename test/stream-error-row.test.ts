/**
 * Issue 25, item 3, through a real gateway: a streamed chat whose upstream fails mid-stream is
 * an error row (the 200 kept, the stream error with its code, the tokens that streamed), counted
 * by `logs --status 5xx` and by `usage`'s errors.
 */
import {afterEach, describe, expect, it} from 'vitest'

import {freePort, json, runCli, tempHome} from './helpers/cli.js'
import {keyIssueArgs, killDaemon} from './helpers/gateway.js'

const cleanups: Array<() => void | Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

describe('a stream that fails mid-way is logged as an error', () => {
  it('logs --json, logs --status 5xx and usage --json all count it', async () => {
    const t = tempHome()
    cleanups.push(t.cleanup)
    const port = await freePort()
    const cli = (args: string[]) => runCli(args, {home: t.home, env: {GWCTL_GATEWAY_PORT: String(port)}})
    cleanups.push(() => killDaemon(t.home))
    expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
    const key = /keyValue: (\S+)/.exec((await cli(keyIssueArgs('t', 'generic_agent'))).stdout)![1]
    const res = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
      method: 'POST',
      headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
      body: JSON.stringify({
        model: 'sim-mini',
        stream: true,
        messages: [{role: 'user', content: 'tell me [error-mid-stream] now'}],
      }),
    })
    expect(res.status).toBe(200)
    expect(await res.text()).toContain('"code":"provider_stream_error"')
    let row: any
    for (let i = 0; i < 50; i++) {
      row = json(await cli(['logs', '--json', '--limit', '1'])).logs[0]
      if (row) break
      await new Promise((r) => setTimeout(r, 100))
    }
    expect(row).toMatchObject({status: 200, broken: true})
    expect(row.error).toMatch(
      /upstream stream reported an error: provider_stream_error: provider \S+ failed mid-stream/,
    )
    expect(row.outputTokens).toBeGreaterThan(0)
    const bad = json(await cli(['logs', '--status', '5xx', '--json'])).logs
    expect(bad.map((r: any) => r.id)).toEqual([row.id])
    const usage = json(await cli(['usage', '--json']))
    expect(usage.totals).toMatchObject({requests: 1, errors: 1, outputTokens: row.outputTokens})
  }, 60_000)
})
