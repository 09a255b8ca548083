/**
 * `gwctl usage blocks|daily|monthly|session` and `gwctl statusline` end to end, on a Claude Code
 * history whose dollars are computed by hand (claude-sonnet-4: $3 input, $3.75 5-minute cache
 * write, $6 1-hour cache write, $0.30 cache read, $15 output per 1M; claude-opus-4-1: $15 input,
 * $75 output per 1M), with and without a running gateway.
 */
import {existsSync, mkdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'

import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import {BIN, cliEnv, freePort, json, runCli, tempHome} from './helpers/cli.js'
import {keyIssueArgs, killDaemon} from './helpers/gateway.js'
import {execa} from 'execa'

const MIN = 60_000
const NOW = Date.now()

/** One assistant line of a Claude Code session log. */
function line(
  minutesAgo: number,
  model: string,
  u: {input: number; output: number; c5?: number; c1h?: number; read?: number},
) {
  const ts = new Date(NOW - minutesAgo * MIN).toISOString()
  return JSON.stringify({
    type: 'assistant',
    sessionId: 'sess-w',
    cwd: '/work/repo',
    isSidechain: false,
    requestId: `req_${minutesAgo}`,
    uuid: `u${minutesAgo}`,
    timestamp: ts,
    message: {
      id: `msg_${minutesAgo}`,
      role: 'assistant',
      model,
      content: [],
      usage: {
        input_tokens: u.input,
        output_tokens: u.output,
        cache_read_input_tokens: u.read ?? 0,
        cache_creation_input_tokens: (u.c5 ?? 0) + (u.c1h ?? 0),
        cache_creation: {ephemeral_5m_input_tokens: u.c5 ?? 0, ephemeral_1h_input_tokens: u.c1h ?? 0},
      },
    },
  })
}

// 40 h ago: 1 000 in, 100 out: $0.003 + $0.0015 = $0.0045 (a window of its own, then a gap)
// 90 min ago: 10k in $0.03, 20k 5-min writes $0.075, 30k 1-hour writes $0.18, 50k reads $0.015,
//   2k out $0.03 = $0.33 (the 1-hour writes at the 5-minute price would make it $0.2925)
// 30 min ago, opus: 10k in $0.15, 2k out $0.15 = $0.30
// active window: $0.63 over the 60 minutes between its requests: $0.63/h
const ENTRIES = [
  {ago: 40 * 60, model: 'claude-sonnet-4-20250514', usage: {input: 1000, output: 100}, usd: 0.0045},
  {
    ago: 90,
    model: 'claude-sonnet-4-20250514',
    usage: {input: 10_000, output: 2000, c5: 20_000, c1h: 30_000, read: 50_000},
    usd: 0.33,
  },
  {ago: 30, model: 'claude-opus-4-1', usage: {input: 10_000, output: 2000}, usd: 0.3},
]
const midnight = new Date(NOW).setUTCHours(0, 0, 0, 0)
/** A statusline without the window's time left, which two calls a minute boundary apart read differently. */
const sansClock = (line: string) => line.replace(/\(\d+h\d\dm left\)/, '(left)')
const TODAY_USD = ENTRIES.filter((e) => NOW - e.ago * MIN >= midnight).reduce((s, e) => s + e.usd, 0)

describe('usage windows, reports and the statusline', () => {
  let home: {home: string; cleanup: () => void}
  let env: Record<string, string>
  let port: number
  beforeEach(async () => {
    home = tempHome()
    port = await freePort()
    env = {GWCTL_GATEWAY_PORT: String(port)}
    const file = join(home.home, 'user-home', '.claude', 'projects', '-work-repo', 'sess-w.jsonl')
    mkdirSync(join(file, '..'), {recursive: true})
    writeFileSync(file, ENTRIES.map((e) => line(e.ago, e.model, e.usage)).join('\n') + '\n')
  })
  afterEach(async () => {
    await killDaemon(home.home)
    home.cleanup()
  })
  const cli = (args: string[], input?: string) => runCli(args, {home: home.home, env, input})
  /** `gwctl statusline` as Claude Code runs it: no argument, JSON on stdin (bin/gwctl.cjs's own path). */
  const statusline = async (input: string) => {
    const r = await execa('node', [BIN, 'statusline'], {
      env: cliEnv(home.home, env),
      extendEnv: true,
      input,
      reject: false,
    })
    return {stdout: String(r.stdout), stderr: String(r.stderr), exitCode: r.exitCode}
  }

  it('blocks: the active window with hand-computed dollars, burn rate, projection, a gap, weekly totals', async () => {
    const r = await cli(['usage', 'blocks', '--json', '--since', '3d', '--breakdown'])
    expect(r.exitCode, r.stderr).toBe(0)
    const report = json(r)
    const kinds = report.blocks.map((b: {gap: boolean; active: boolean}) =>
      b.gap ? 'gap' : b.active ? 'active' : 'ended',
    )
    expect(kinds).toEqual(['ended', 'gap', 'active'])
    const active = report.active
    expect(active.requests).toBe(2)
    expect(active.cache1hTokens).toBe(30_000)
    expect(active.costUSD).toBeCloseTo(0.63, 9)
    expect(active.burnRate.costPerHour).toBeCloseTo(0.63, 6)
    expect(active.burnRate.tokensPerMinute).toBeCloseTo((112_000 + 12_000) / 60, 6)
    // the window starts on the hour of the request 90 minutes ago and lasts 5 hours
    const start = Date.parse(active.start)
    expect(start % 3_600_000).toBe(0)
    expect(NOW - 90 * MIN - start).toBeLessThan(3_600_000)
    expect(Date.parse(active.end) - start).toBe(5 * 3_600_000)
    expect(active.projection.costUSD).toBeCloseTo(0.63 + (0.63 / 60) * active.projection.remainingMinutes, 1)
    expect(
      active.breakdown.map((m: {model: string; costUSD: number}) => [m.model, Number(m.costUSD.toFixed(6))]),
    ).toEqual([
      ['claude-sonnet-4-20250514', 0.33],
      ['claude-opus-4-1', 0.3],
    ])
    const weeks = report.weeks as Array<{costUSD: number}>
    expect(weeks.reduce((s, w) => s + w.costUSD, 0)).toBeCloseTo(0.6345, 9)

    const table = await cli(['usage', 'blocks', '--compact'])
    expect(table.stdout).toMatch(/ACTIVE, \d+h\d\dm left/)
    expect(table.stdout).toMatch(/Burn rate: .* tokens\/min, \$0\.63\/h/)
    expect(table.stdout).toMatch(/WEEK OF/)
    for (const l of table.stdout.split('\n')) expect(l.length).toBeLessThan(100)
  })

  it('daily, monthly and session tables and JSON; the plain `usage` is the daily table; bad bounds exit 2', async () => {
    const daily = json(await cli(['usage', 'daily', '--json', '--since', '3d']))
    expect(daily.totals.costUSD).toBeCloseTo(0.6345, 9)
    expect(daily.rows.every((r: {key: string}) => /^\d{4}-\d\d-\d\d$/.test(r.key))).toBe(true)
    const monthly = json(await cli(['usage', 'monthly', '--json', '--breakdown']))
    expect(monthly.rows.every((r: {key: string}) => /^\d{4}-\d\d$/.test(r.key))).toBe(true)
    expect(monthly.totals.costUSD).toBeCloseTo(0.6345, 9)
    expect(
      monthly.rows.flatMap((r: {breakdown: Array<{model: string}>}) => r.breakdown.map((m) => m.model)),
    ).toContain('claude-opus-4-1')
    const session = json(await cli(['usage', 'session', '--json']))
    expect(session.rows.map((r: {key: string}) => r.key)).toEqual(['sess-w'])
    expect(session.rows[0].costUSD).toBeCloseTo(0.6345, 9)

    const plain = await cli(['usage'])
    expect(plain.exitCode).toBe(0)
    expect(plain.stdout).toMatch(/^DAY\s+REQS\s+INPUT\s+OUTPUT/m)
    expect(plain.stdout).toMatch(/^TOTAL\s+3\s.*\$0\.6345$/m)
    const compact = await cli(['usage', 'daily', '--compact', '--since', '3d'])
    for (const l of compact.stdout.split('\n')) expect(l.length).toBeLessThan(100)
    // until a day counts that day whole: nothing is before 1970-01-02
    expect(
      json(await cli(['usage', 'daily', '--json', '--since', '19700101', '--until', '19700101'])).rows,
    ).toEqual([])

    const bad = await cli(['usage', 'daily', '--since', 'yesterday'])
    expect(bad.exitCode).toBe(2)
    expect(bad.stderr).toMatch(/--since "yesterday" is not a time: use a day/)
  })

  it('statusline without a daemon: from logs.db, one line, in bin/gwctl.cjs without oclif', async () => {
    // no daemon scans: the history goes into logs.db as `usage` does it
    expect((await cli(['usage', 'rescan'])).exitCode).toBe(0)
    const input = JSON.stringify({
      session_id: 'sess-w',
      model: {id: 'claude-opus-4-1', display_name: 'Opus 4.1'},
    })
    const r = await statusline(input)
    expect(r.exitCode).toBe(0)
    expect(r.stdout).toMatch(
      new RegExp(
        `^Opus 4\\.1 · session \\$0\\.63 · today \\$${TODAY_USD.toFixed(2).replace('.', '\\.')} · 5h \\$0\\.63 \\(\\d+h\\d\\dm left\\) · \\$0\\.63/h$`,
      ),
    )
    const viaOclif = json(await cli(['statusline', '--json'], input))
    expect(viaOclif.source).toBe('database')
    expect(sansClock(viaOclif.line)).toBe(sansClock(r.stdout.trim()))
    // not JSON on stdin, or nothing: still one line and exit 0 (a prompt never breaks)
    const garbage = await statusline('not json')
    expect(garbage.exitCode).toBe(0)
    expect(garbage.stdout).toMatch(/^today \$\d+\.\d\d · 5h \$0\.63/)
  })

  it('statusline with a daemon: one loopback request to its memory, then the figures it publishes, which follow the requests it serves', async () => {
    expect((await cli(['gateway', 'start', '--sim'])).exitCode).toBe(0)
    // the daemon scans the history at start; wait for its rows (and for its memory: the first
    // call loads it, and one that takes over 750 ms is answered from logs.db meanwhile)
    const input = JSON.stringify({session_id: 'sess-w'})
    let r = json(await cli(['statusline', '--json'], input))
    for (let i = 0; i < 50 && (!/5h \$0\.63/.test(r.line) || r.source !== 'daemon'); i++) {
      await new Promise((resolve) => setTimeout(resolve, 200))
      r = json(await cli(['statusline', '--json'], input))
    }
    expect(r.source).toBe('daemon')
    expect(r.line).toMatch(
      /^session \$0\.63 · today \$\d+\.\d\d · 5h \$0\.63 \(\d+h\d\dm left\) · \$0\.63\/h$/,
    )
    const fast = await statusline(input)
    expect(sansClock(fast.stdout.trim())).toBe(sansClock(r.line))
    // the daemon published this midnight's and session's figures: the next calls read them from a file
    const publishedPath = join(home.home, 'statusline.json')
    const published = () =>
      JSON.parse(readFileSync(publishedPath, 'utf8')) as {
        pid: number
        lines: Record<string, {today: {usd: number; unpriced: boolean}}>
      }
    expect(statSync(publishedPath).mode & 0o777).toBe(0o600)
    const pid = Number(readFileSync(join(home.home, 'gateway.pid'), 'utf8').split(/\s+/)[0])
    expect(published().pid).toBe(pid)
    expect(published().lines[`${midnight} sess-w`].today.unpriced).toBe(false)

    const base = `http://127.0.0.1:${port}`
    const today = () =>
      fetch(`${base}/api/usage/statusline?today=${midnight}`).then(
        (res) => res.json() as Promise<{today: Array<{model: string; requests: number}>}>,
      )
    const before = (await today()).today.find((m) => m.model === 'sim-mini')?.requests ?? 0
    const key = json(await cli([...keyIssueArgs('codex-a', 'codex'), '--json'])).keyValue as string
    const chat = await fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: {authorization: `Bearer ${key}`, 'content-type': 'application/json'},
      body: JSON.stringify({model: 'sim-mini', messages: [{role: 'user', content: 'hi'}]}),
    })
    expect(chat.status).toBe(200)
    await chat.text()
    let after = before
    for (let i = 0; i < 50 && after === before; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      after = (await today()).today.find((m) => m.model === 'sim-mini')?.requests ?? 0
    }
    expect(after).toBe(before + 1)
    // the simulator's model has no price: today's figure says so, never $0 for it; the published
    // figures followed the request (the line is read from them)
    for (let i = 0; i < 50 && !published().lines[`${midnight} sess-w`].today.unpriced; i++)
      await new Promise((resolve) => setTimeout(resolve, 50))
    // (in the first half hour after midnight UTC no priced request of the history is today's)
    expect((await statusline(input)).stdout).toMatch(TODAY_USD > 0 ? /today \$\d+\.\d\d\+/ : /today unpriced/)
    // a stopped daemon takes its file with it
    expect((await cli(['gateway', 'stop'])).exitCode).toBe(0)
    expect(existsSync(publishedPath)).toBe(false)
  }, 60_000)
})
