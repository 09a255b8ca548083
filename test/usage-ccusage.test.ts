/**
 * `gwctl usage daily` beside `ccusage daily --json --offline` (ccusage 20.0.24) on the same Claude
 * Code history: per day and per model, tokens (input, output, cache read, cache write) and cost
 * are equal, except on the days that hold one of the differences docs/USAGE-CCUSAGE.md documents,
 * where the test asserts that very difference and gwctl's hand-computed figure.
 *
 * ccusage is `CCUSAGE_BIN` when set, else installed with npm into test/.cache/ (git-ignored) on the
 * first run; without the npm registry the test is skipped and says why.
 */
import {spawnSync} from 'node:child_process'
import {existsSync, mkdirSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {beforeAll, describe, expect, it} from 'vitest'

import {ROOT, json, runCli, tempHome} from './helpers/cli.js'

const CCUSAGE = 'ccusage@20.0.24'

/** The ccusage binary, or why there is none. */
function ccusageBin(): {bin: string} | {skip: string} {
  if (process.env.CCUSAGE_BIN) return {bin: process.env.CCUSAGE_BIN}
  const prefix = join(ROOT, 'test', '.cache', 'ccusage-20.0.24')
  const bin = join(prefix, 'node_modules', '.bin', 'ccusage')
  if (existsSync(bin)) return {bin}
  mkdirSync(prefix, {recursive: true})
  const npm = spawnSync(
    'npm',
    [
      'install',
      '--prefix',
      prefix,
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--no-package-lock',
      // an unreachable registry fails in a minute or so instead of retrying for minutes
      '--fetch-retries=1',
      '--fetch-timeout=30000',
      CCUSAGE,
    ],
    {encoding: 'utf8', timeout: 180_000},
  )
  if (npm.status === 0 && existsSync(bin)) return {bin}
  const why = (npm.error?.message ?? npm.stderr ?? '').trim().split('\n').slice(-1)[0]
  return {
    skip: `could not install ${CCUSAGE} from the npm registry (${why || `exit ${npm.status}`}); set CCUSAGE_BIN`,
  }
}

// ---- the fixture: Claude Code session files ------------------------------------------------

/** A small deterministic generator (the same files on every run). */
function random(seed: number): (lo: number, hi: number) => number {
  let s = seed
  return (lo, hi) => {
    s = (s * 1103515245 + 12345) % 2147483648
    return lo + Math.floor((s / 2147483648) * (hi - lo + 1))
  }
}

interface Usage {
  input_tokens: number
  output_tokens: number
  cache_read_input_tokens: number
  cache_creation_input_tokens: number
  cache_creation?: {ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number}
  speed?: string
}

/** Usage with the TTL breakdown of `write` cache-write tokens, `oneHour` of them kept one hour. */
const usage = (input: number, output: number, read: number, write: number, oneHour = 0): Usage => ({
  input_tokens: input,
  cache_creation_input_tokens: write,
  cache_read_input_tokens: read,
  cache_creation: {ephemeral_5m_input_tokens: write - oneHour, ephemeral_1h_input_tokens: oneHour},
  output_tokens: output,
})

/** Models both price tables know at the same prices (USD per 1M: input, 5m write, 1h write, read, output). */
const MODELS = [
  'claude-sonnet-4-20250514',
  'claude-opus-4-1-20250805',
  'claude-opus-4-20250514',
  'claude-opus-4-5-20251101',
  'claude-sonnet-4-5-20250929',
  'claude-3-7-sonnet-20250219',
  'claude-haiku-4-5-20251001',
  'claude-3-5-haiku-20241022',
]

/** Days of the fixture that hold a documented difference, and what each holds. */
const DAY = {
  noRequestId: '2025-11-12',
  zeroBreakdown: '2025-11-14',
  longContext: '2025-11-15',
  recordedCost: '2025-11-16',
  unknownModel: '2025-11-17',
}

/** Writes the history under `claudeDir` (a `CLAUDE_CONFIG_DIR`). */
function writeHistory(claudeDir: string): void {
  const int = random(42)
  const files = new Map<string, string[]>()
  let uuid = 0
  const line = (
    file: string,
    o: {
      msg: string
      req?: string
      ts: string
      model?: string
      usage: Usage
      sidechain?: boolean
      session?: string
      extra?: Record<string, unknown>
    },
  ) => {
    const lines = files.get(file) ?? []
    files.set(file, lines)
    // compact JSON, as Claude Code writes it (ccusage looks for `"usage":{` without a space)
    lines.push(
      JSON.stringify({
        parentUuid: null,
        isSidechain: o.sidechain ?? false,
        userType: 'external',
        cwd: '/work/repo',
        sessionId: o.session ?? 'sess',
        version: '1.0.85',
        type: 'assistant',
        message: {
          id: o.msg,
          type: 'message',
          role: 'assistant',
          model: o.model ?? 'claude-sonnet-4-20250514',
          content: [{type: 'text', text: 'ok'}],
          usage: o.usage,
        },
        ...(o.req === undefined ? {} : {requestId: o.req}),
        ...o.extra,
        uuid: `u${++uuid}`,
        timestamp: o.ts,
      }),
    )
  }
  // Six ordinary days across a month end: every model, 5-minute and 1-hour writes, a request in
  // a sub-agent file, the last request of a session repeated in the next (a resumed session)
  let n = 0
  for (let d = 0; d < 6; d++) {
    const session = `sess-${d}`
    for (const [m, model] of MODELS.entries())
      for (let k = 0; k < 3; k++) {
        n++
        const write = int(0, 5000)
        const oneHour = k === 1 ? int(0, write) : 0
        const ts = new Date(Date.UTC(2025, 9, 29 + d, 1 + m * 2, k * 20, 13)).toISOString()
        const u = usage(int(1, 50), int(1, 900), int(0, 40_000), write, oneHour)
        const file =
          k === 2 ? `-work-repo/${session}/subagents/agent-${d}.jsonl` : `-work-repo/${session}.jsonl`
        line(file, {msg: `msg_${n}`, req: `req_${n}`, ts, model, session, usage: u})
        // Claude Code writes a line per content block of a response: same ids, output growing
        if (k === 0)
          line(file, {
            msg: `msg_${n}`,
            req: `req_${n}`,
            ts,
            model,
            session,
            usage: {...u, output_tokens: Math.floor(u.output_tokens / 3)},
          })
        if (d > 0 && m === 0 && k === 0)
          // the resumed session's file starts with the previous session's last response
          line(`-work-repo/sess-${d - 1}-resumed.jsonl`, {
            msg: `msg_${n}`,
            req: `req_${n}`,
            ts,
            model,
            session: `sess-${d - 1}`,
            usage: u,
          })
      }
  }
  const at = (day: string, hour = 3) => `${day}T${String(hour).padStart(2, '0')}:00:00.000Z`
  // Rules both apply: a sidechain copy loses to the main line even when larger; a /btw replay (a
  // sidechain line with the parent's message id under another request id) is dropped;
  // `<synthetic>` lines have no tokens; a `speed: "fast"` line is its model's `-fast` variant.
  line('-work-repo/special.jsonl', {
    msg: 'sc',
    req: 'r_sc',
    ts: at('2025-11-10'),
    sidechain: true,
    usage: usage(9, 900, 900, 90),
  })
  line('-work-repo/special.jsonl', {
    msg: 'sc',
    req: 'r_sc',
    ts: at('2025-11-10'),
    usage: usage(9, 90, 900, 90),
  })
  line('-work-repo/special.jsonl', {
    msg: 'btw',
    req: 'r_btw',
    ts: at('2025-11-11'),
    usage: usage(5, 10, 100, 20),
  })
  line('-work-repo/special.jsonl', {
    msg: 'btw',
    req: 'r_btw2',
    ts: at('2025-11-11'),
    sidechain: true,
    usage: usage(5, 10, 100, 20),
  })
  line('-work-repo/special.jsonl', {
    msg: 'syn',
    req: 'r_syn',
    ts: at('2025-11-13'),
    model: '<synthetic>',
    usage: usage(0, 0, 0, 0),
  })
  line('-work-repo/special.jsonl', {
    msg: 'fast',
    req: 'r_fast',
    ts: at('2025-11-13'),
    model: 'claude-opus-4-1-20250805',
    usage: {...usage(10, 100, 100, 100), speed: 'fast'},
  })
  // Differences. Two content blocks of one response from a Claude Code that wrote no requestId
  // (same message id, the second a moment later with more output):
  line('-work-repo/diff.jsonl', {msg: 'noreq', ts: at(DAY.noRequestId), usage: usage(11, 30, 0, 0)})
  line('-work-repo/diff.jsonl', {
    msg: 'noreq',
    ts: at(DAY.noRequestId).replace(':00.000Z', ':02.000Z'),
    usage: usage(11, 110, 0, 0),
  })
  // cache writes with the TTL breakdown written as zeros:
  line('-work-repo/diff.jsonl', {
    msg: 'zb',
    req: 'r_zb',
    ts: at(DAY.zeroBreakdown),
    usage: {
      ...usage(4, 40, 0, 4000),
      cache_creation: {ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0},
    },
  })
  // requests over 200k input tokens (Sonnet 4.5 has long-context prices in both tables; Sonnet 4
  // only in ccusage's, gwctl adds Anthropic's), beside a small one an hour later
  line('-work-repo/diff.jsonl', {
    msg: 'big45',
    req: 'r_big45',
    ts: at(DAY.longContext),
    model: 'claude-sonnet-4-5-20250929',
    usage: usage(10, 500, 210_000, 5000),
  })
  line('-work-repo/diff.jsonl', {
    msg: 'small45',
    req: 'r_small45',
    ts: at(DAY.longContext, 4),
    model: 'claude-sonnet-4-5-20250929',
    usage: usage(10, 500, 1000, 500),
  })
  line('-work-repo/diff.jsonl', {
    msg: 'big4',
    req: 'r_big4',
    ts: at(DAY.longContext),
    usage: usage(10, 500, 230_000, 5000, 1000),
  })
  // a line with the cost Claude Code once recorded itself
  line('-work-repo/diff.jsonl', {
    msg: 'cost',
    req: 'r_cost',
    ts: at(DAY.recordedCost),
    usage: usage(10, 100, 100, 100),
    extra: {costUSD: 1.5},
  })
  // a model no price table knows
  line('-work-repo/diff.jsonl', {
    msg: 'unk',
    req: 'r_unk',
    ts: at(DAY.unknownModel),
    model: 'claude-fake-9',
    usage: usage(10, 100, 100, 100),
  })
  for (const [file, lines] of files) {
    const path = join(claudeDir, 'projects', file)
    mkdirSync(dirname(path), {recursive: true})
    writeFileSync(path, lines.join('\n') + '\n')
  }
}

// ---- the comparison -----------------------------------------------------------------------

interface Tokens {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheCreationTokens: number
}
const tokens = (t: Tokens) => [t.inputTokens, t.outputTokens, t.cacheReadTokens, t.cacheCreationTokens]

interface CcusageDay extends Tokens {
  period: string
  totalCost: number
  modelBreakdowns: Array<Tokens & {modelName: string; cost: number}>
}
interface GwctlDay extends Tokens {
  key: string
  costUSD: number | null
  unpricedModels: string[]
  breakdown: Array<Tokens & {model: string | null; costUSD: number | null}>
}

/** USD per token of Claude Sonnet 4 / 4.5 below 200k input tokens, and 4.5's above. */
const SONNET = {input: 3e-6, write5m: 3.75e-6, write1h: 6e-6, read: 0.3e-6, output: 15e-6}
const SONNET_LONG = {input: 6e-6, write5m: 7.5e-6, write1h: 12e-6, read: 0.6e-6, output: 22.5e-6}
const priced = (p: typeof SONNET, u: Usage) => {
  const oneHour = u.cache_creation?.ephemeral_1h_input_tokens ?? 0
  return (
    u.input_tokens * p.input +
    (u.cache_creation_input_tokens - oneHour) * p.write5m +
    oneHour * p.write1h +
    u.cache_read_input_tokens * p.read +
    u.output_tokens * p.output
  )
}

describe('usage daily beside ccusage daily', () => {
  let found: ReturnType<typeof ccusageBin>
  beforeAll(() => {
    found = ccusageBin()
  }, 300_000)

  it('equal tokens and cost per day and model, except the documented differences', async (context) => {
    if ('skip' in found) {
      context.skip(found.skip)
      return
    }
    const t = tempHome()
    try {
      const claudeDir = join(t.home, 'claude-config')
      writeHistory(claudeDir)
      const ccusage = (mode: string) => {
        const run = spawnSync(
          (found as {bin: string}).bin,
          ['daily', '--json', '--offline', '--timezone', 'UTC', '--breakdown', '--mode', mode],
          {
            encoding: 'utf8',
            timeout: 60_000,
            env: {
              ...process.env,
              HOME: join(t.home, 'user-home'),
              CLAUDE_CONFIG_DIR: claudeDir,
              TZ: 'UTC',
              NO_COLOR: '1',
            },
          },
        )
        expect(run.status, run.stderr).toBe(0)
        return (JSON.parse(run.stdout) as {daily: CcusageDay[]}).daily
      }
      const theirs = ccusage('auto')
      const theirsCalculated = ccusage('calculate')
      const gw = await runCli(
        [
          'usage',
          'daily',
          '--json',
          '--source',
          'history',
          '--tool',
          'claude-code',
          '--since',
          '20251001',
          '--until',
          '20251231',
          '--timezone',
          'UTC',
          '--breakdown',
        ],
        {home: t.home, env: {CLAUDE_CONFIG_DIR: claudeDir}},
      )
      expect(gw.exitCode, gw.stderr).toBe(0)
      const ours = new Map((json(gw).rows as GwctlDay[]).map((r) => [r.key, r]))

      // the same days (the six ordinary ones, the rules' and the differences')
      expect([...ours.keys()]).toEqual(theirs.map((d) => d.period))
      expect(ours.size).toBe(6 + 3 + 5)
      const documented = new Set(Object.values(DAY))
      let compared = 0
      for (const day of theirs) {
        const mine = ours.get(day.period)!
        if (documented.has(day.period)) continue
        // per day and per model: every token count equal, cost equal to the float
        expect(tokens(mine), day.period).toEqual(tokens(day))
        expect(mine.costUSD, day.period).toBeCloseTo(day.totalCost, 12)
        // (a model's line of a day may hold no tokens: ccusage lists none such)
        const withTokens = mine.breakdown.filter((m) => tokens(m).some((x) => x > 0))
        expect(withTokens.map((m) => m.model).sort(), day.period).toEqual(
          day.modelBreakdowns.map((m) => m.modelName).sort(),
        )
        for (const model of day.modelBreakdowns) {
          const line = mine.breakdown.find((m) => m.model === model.modelName)!
          expect(tokens(line), `${day.period} ${model.modelName}`).toEqual(tokens(model))
          expect(line.costUSD, `${day.period} ${model.modelName}`).toBeCloseTo(model.cost, 12)
          compared++
        }
      }
      expect(compared).toBe(6 * MODELS.length + 3)
      // a `<synthetic>` line (Claude Code's own, no API call) is no request and no model, as in
      // ccusage: its day holds the one request of the `speed: "fast"` line
      const syntheticDay = ours.get('2025-11-13')!
      expect(syntheticDay.breakdown.map((m) => m.model)).toEqual(['claude-opus-4-1-20250805-fast'])
      expect((syntheticDay as GwctlDay & {requests: number}).requests).toBe(1)
      const theirDay = (period: string, list = theirs) => list.find((d) => d.period === period)!

      // 0. lines sharing a message id without a request id: gwctl keeps the larger, ccusage adds
      // up lines that differ (it counts identical copies once)
      const nr = {mine: ours.get(DAY.noRequestId)!, theirs: theirDay(DAY.noRequestId)}
      expect(tokens(nr.mine)).toEqual([11, 110, 0, 0])
      expect(tokens(nr.theirs)).toEqual([22, 140, 0, 0])
      expect(nr.mine.costUSD).toBeCloseTo(priced(SONNET, usage(11, 110, 0, 0)), 12)

      // 1. TTL breakdown written as zeros: ccusage counts no cache write; gwctl counts the billed
      // cache_creation_input_tokens (4000 at the 5-minute price)
      const zb = {mine: ours.get(DAY.zeroBreakdown)!, theirs: theirDay(DAY.zeroBreakdown)}
      expect(tokens(zb.theirs)).toEqual([4, 40, 0, 0])
      expect(tokens(zb.mine)).toEqual([4, 40, 0, 4000])
      expect(zb.mine.costUSD).toBeCloseTo(priced(SONNET, usage(4, 40, 0, 4000)), 12)
      expect(zb.mine.costUSD! - zb.theirs.totalCost).toBeCloseTo(4000 * SONNET.write5m, 12)

      // 2. over 200k input tokens: Anthropic bills the whole request at the long-context price;
      // ccusage prices only each kind's tokens above 200k at it. Tokens agree.
      const lc = {mine: ours.get(DAY.longContext)!, theirs: theirDay(DAY.longContext)}
      expect(tokens(lc.mine)).toEqual(tokens(lc.theirs))
      const sonnet45 = lc.mine.breakdown.find((m) => m.model === 'claude-sonnet-4-5-20250929')!
      expect(sonnet45.costUSD).toBeCloseTo(
        priced(SONNET_LONG, usage(10, 500, 210_000, 5000)) + priced(SONNET, usage(10, 500, 1000, 500)),
        12,
      )
      const their45 = lc.theirs.modelBreakdowns.find((m) => m.modelName === 'claude-sonnet-4-5-20250929')!
      // ccusage: the 10 000 cache reads above 200k at the long-context read price, the rest not
      expect(their45.cost).toBeCloseTo(
        priced(SONNET, usage(10, 500, 210_000, 5000)) +
          10_000 * (SONNET_LONG.read - SONNET.read) +
          priced(SONNET, usage(10, 500, 1000, 500)),
        12,
      )
      // Sonnet 4: gwctl's table (genai-prices) has no long-context price for it; gwctl applies
      // Anthropic's (as Sonnet 4.5's: the whole request at 2x input and cache, 1.5x output)
      const sonnet4 = lc.mine.breakdown.find((m) => m.model === 'claude-sonnet-4-20250514')!
      expect(sonnet4.costUSD).toBeCloseTo(priced(SONNET_LONG, usage(10, 500, 230_000, 5000, 1000)), 12)

      // 3. a line's recorded costUSD: ccusage's default mode shows it, gwctl prices the tokens as
      // ccusage's `--mode calculate` does
      const rc = {mine: ours.get(DAY.recordedCost)!, theirs: theirDay(DAY.recordedCost)}
      expect(tokens(rc.mine)).toEqual(tokens(rc.theirs))
      expect(rc.theirs.totalCost).toBe(1.5)
      expect(rc.mine.costUSD).toBeCloseTo(priced(SONNET, usage(10, 100, 100, 100)), 12)
      expect(rc.mine.costUSD).toBeCloseTo(theirDay(DAY.recordedCost, theirsCalculated).totalCost, 12)

      // 4. a model without a price: ccusage says $0, gwctl unpriced (null), never $0
      const um = {mine: ours.get(DAY.unknownModel)!, theirs: theirDay(DAY.unknownModel)}
      expect(tokens(um.mine)).toEqual(tokens(um.theirs))
      expect(um.theirs.totalCost).toBe(0)
      expect(um.mine.costUSD).toBeNull()
      expect(um.mine.unpricedModels).toEqual(['claude-fake-9'])
    } finally {
      t.cleanup()
    }
  }, 120_000)
})
