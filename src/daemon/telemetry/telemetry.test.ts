import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'

import type {BudgetView} from '../../gateway/budgets.js'
import type {LogEntry} from '../../store/log-store.js'
import {emitGatewayEvent} from '../events.js'
import type {SumsPricer, TokenSums} from './metrics.js'
import {BoundedLabel, GatewayMetrics} from './metrics.js'
import {Telemetry, otlpConfig} from './telemetry.js'

function row(overrides: Partial<LogEntry> = {}): LogEntry {
  return {
    time: 1_800_000_000_000,
    agentId: 'agt_1',
    keyPrefix: 'gw-secretpre',
    policyId: 'default-codex',
    entrance: 'chat',
    requestedModel: 'sim-mini',
    provider: 'sim-chat',
    model: 'sim-mini',
    status: 200,
    fallback: false,
    inputTokens: 10,
    outputTokens: 4,
    cacheReadTokens: 2,
    cacheCreationTokens: 0,
    reasoningTokens: 1,
    latencyMs: 120,
    ttfbMs: 30,
    error: null,
    project: 'secret-project',
    requestId: 'req_123',
    ...overrides,
  }
}

describe('BoundedLabel', () => {
  it('keeps values up to its cap, then says other; cuts and cleans what it keeps', () => {
    const label = new BoundedLabel(2)
    expect(label.value(null)).toBe('none')
    expect(label.value('')).toBe('none')
    expect(label.value('a')).toBe('a')
    expect(label.value('x'.repeat(100))).toBe('x'.repeat(64))
    expect(label.value('third')).toBe('other')
    expect(label.value('a')).toBe('a') // known values stay themselves
    expect(new BoundedLabel(5).value('bad\nvalue\u0000é')).toBe('bad_value__')
  })
})

describe('GatewayMetrics', () => {
  it('counts a row into exact series, never with the key prefix, project or request id', async () => {
    const metrics = new GatewayMetrics(
      {
        breakers: () => [
          {
            provider: 'sim-chat',
            state: 'open',
            consecutiveFailures: 3,
            openedAt: 1,
            retryAt: 2,
            retryInMs: 1,
            lastError: 'x',
          },
        ],
        logQueue: () => ({pending: 7, dropped: 3}),
      },
      async () => ({cost: (_model, t) => (t.inputTokens + t.outputTokens ? 0.25 : 0)}),
    )
    metrics.record(row())
    metrics.record(row({status: 502, fallback: true, ttfbMs: null, inputTokens: 0, outputTokens: 0}))
    const text = await metrics.text()
    const route = 'entrance="chat",agent="agt_1",policy="default-codex",provider="sim-chat",model="sim-mini"'
    expect(text).toContain(`gwctl_requests_total{${route},status_class="2xx"} 1`)
    expect(text).toContain(`gwctl_requests_total{${route},status_class="5xx"} 1`)
    expect(text).toContain(`gwctl_tokens_total{${route},kind="input"} 10`)
    expect(text).toContain(`gwctl_tokens_total{${route},kind="cache_read"} 4`)
    expect(text).toContain(`gwctl_tokens_total{${route},kind="reasoning"} 2`)
    expect(text).not.toContain('kind="cache_write"')
    expect(text).toContain(`gwctl_cost_usd_total{${route}} 0.25`)
    expect(text).toContain(
      'gwctl_request_duration_seconds_bucket{le="0.25",entrance="chat",provider="sim-chat",model="sim-mini",status_class="2xx"} 1',
    )
    expect(text).toContain(
      'gwctl_time_to_first_byte_seconds_count{entrance="chat",provider="sim-chat",model="sim-mini"} 1',
    )
    expect(text).toContain('gwctl_fallbacks_total{policy="default-codex",provider="sim-chat"} 1')
    expect(text).toContain('gwctl_breaker_state{provider="sim-chat",state="open"} 1')
    expect(text).toContain('gwctl_breaker_state{provider="sim-chat",state="closed"} 0')
    expect(text).toContain('gwctl_log_queue_rows 7')
    expect(text).toContain('gwctl_log_rows_dropped_total 3')
    expect(text).toContain('gwctl_otlp_spans_dropped_total 0')
    for (const secret of ['gw-secretpre', 'secret-project', 'req_123']) expect(text).not.toContain(secret)
  })

  it('prices each series at the scrape from its sums, as `gwctl usage` prices a group', async () => {
    const calls: Array<{model: string | null; tokens: TokenSums; provider?: string | null}> = []
    const pricer: SumsPricer = {
      cost(model, tokens, provider) {
        calls.push({model, tokens: {...tokens}, provider})
        if (model === 'unpriced') return null
        // USD per token: input 3e-6, output 15e-6, cache read 0.3e-6, cache write 3.75e-6
        return (
          tokens.inputTokens * 3e-6 +
          tokens.outputTokens * 15e-6 +
          tokens.cacheReadTokens * 0.3e-6 +
          tokens.cacheCreationTokens * 3.75e-6
        )
      },
    }
    let loads = 0
    const metrics = new GatewayMetrics({}, async () => (loads++, pricer))
    // input counts the cache (as the log rows): 1000 = 600 uncached + 300 read + 100 written
    metrics.record(row({inputTokens: 1000, cacheReadTokens: 300, cacheCreationTokens: 100, outputTokens: 50}))
    metrics.record(row({inputTokens: 200, cacheReadTokens: 0, outputTokens: 20}))
    metrics.record(row({status: 429, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, ttfbMs: null}))
    metrics.record(row({model: 'unpriced', inputTokens: 10, outputTokens: 1}))
    expect(metrics.loaded).toBe(false) // nothing loaded before a scrape
    expect(loads).toBe(0)
    const [text] = await Promise.all([metrics.text(), metrics.text()])
    expect(loads).toBe(1) // once, even for two scrapes at once
    expect(calls).toContainEqual({
      model: 'sim-mini',
      provider: 'sim-chat',
      tokens: {
        inputTokens: 800,
        outputTokens: 70,
        cacheReadTokens: 300,
        cacheCreationTokens: 100,
        cache1hTokens: 0,
        requests: 3,
      },
    })
    const route = 'entrance="chat",agent="agt_1",policy="default-codex",provider="sim-chat"'
    const usd = 800 * 3e-6 + 70 * 15e-6 + 300 * 0.3e-6 + 100 * 3.75e-6
    const line = text.split('\n').find((l) => l.startsWith(`gwctl_cost_usd_total{${route},model="sim-mini"}`))
    expect(Number(line?.split(' ')[1])).toBeCloseTo(usd, 12)
    expect(text).not.toContain('gwctl_cost_usd_total{' + route + ',model="unpriced"}')
    // later rows are priced at the next scrape
    metrics.record(row({inputTokens: 1000, cacheReadTokens: 0, outputTokens: 0}))
    const again = (await metrics.text())
      .split('\n')
      .find((l) => l.startsWith(`gwctl_cost_usd_total{${route},model="sim-mini"}`))
    expect(Number(again?.split(' ')[1])).toBeCloseTo(usd + 1000 * 3e-6, 12)
    expect(loads).toBe(1)
  })

  it('histograms count each bucket exactly, sum and count included, across scrapes', async () => {
    const metrics = new GatewayMetrics()
    for (const ms of [40, 50, 51, 700, 400_000]) metrics.record(row({latencyMs: ms, ttfbMs: ms / 10}))
    const labels = 'entrance="chat",provider="sim-chat",model="sim-mini",status_class="2xx"'
    const bucket = (text: string, le: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(`gwctl_request_duration_seconds_bucket{le="${le}",${labels}}`))
          ?.split(' ')[1],
      )
    let text = await metrics.text()
    expect(bucket(text, '0.05')).toBe(2) // 40 ms and 50 ms: a bound is inclusive
    expect(bucket(text, '0.1')).toBe(3)
    expect(bucket(text, '1')).toBe(4)
    expect(bucket(text, '300')).toBe(4)
    expect(bucket(text, '+Inf')).toBe(5) // 400 s is past the largest bound
    expect(text).toContain(`gwctl_request_duration_seconds_count{${labels}} 5`)
    const sum = Number(
      text
        .split('\n')
        .find((l) => l.startsWith(`gwctl_request_duration_seconds_sum{${labels}}`))
        ?.split(' ')[1],
    )
    expect(sum).toBeCloseTo(400.841, 9)
    metrics.record(row({latencyMs: 60}))
    text = await metrics.text()
    expect(bucket(text, '0.1')).toBe(4)
    expect(bucket(text, '+Inf')).toBe(6)
  })

  it('a client sending endless model names cannot grow the series past the cap', async () => {
    const metrics = new GatewayMetrics()
    for (let i = 0; i < 1000; i++) metrics.record(row({model: null, requestedModel: `m-${i}`}))
    const text = await metrics.text()
    const models = new Set([...text.matchAll(/gwctl_requests_total\{[^}]*model="([^"]*)"/g)].map((m) => m[1]))
    expect(models.size).toBe(201) // 200 kept, then "other"
    expect(text).toMatch(/gwctl_requests_total\{[^}]*model="other",status_class="2xx"\} 800/)
  })

  it('rows in runs (the last series kept) count as the same rows one by one, in any order', async () => {
    // every field the series of a row depends on, changed alone and together
    const kinds: Array<Partial<LogEntry>> = [
      {},
      {ttfbMs: null},
      {agentId: 'agt_2'},
      {agentId: null},
      {policyId: 'other-policy'},
      {provider: 'sim-messages', model: 'sim-large'},
      {model: null, requestedModel: 'asked-for'},
      {model: null, requestedModel: null},
      {entrance: 'messages'},
      {status: 429},
      {status: 503, fallback: true, ttfbMs: null},
      {status: 200, broken: true},
      {fallback: true, provider: 'sim-messages'},
    ]
    // runs of three of each (the first of a run without a first byte: its later rows make that
    // series); times in eighths of a second, whose sums are exact in any order
    const runs = kinds.flatMap((kind, i) =>
      [0, 1, 2].map((n) =>
        row({ttfbMs: 250, ...kind, latencyMs: 125 * (1 + i + n), ...(n === 0 ? {ttfbMs: null} : {})}),
      ),
    )
    const inRuns = new GatewayMetrics()
    for (const entry of runs) inRuns.record(entry)
    // the same rows interleaved: no row follows one of its own series
    const interleaved = new GatewayMetrics()
    for (let n = 0; n < 3; n++) for (let i = 0; i < kinds.length; i++) interleaved.record(runs[i * 3 + n])
    const text = await inRuns.text()
    expect(text).toBe(await interleaved.text())
    // each row right after a row of the first kind, which differs from it only in that kind's fields
    const first = row({ttfbMs: 250, latencyMs: 125})
    const afterFirst = new GatewayMetrics()
    const firstsThenRows = new GatewayMetrics()
    for (const entry of runs) {
      afterFirst.record(first)
      afterFirst.record(entry)
    }
    for (const _ of runs) firstsThenRows.record(first)
    for (const entry of runs) firstsThenRows.record(entry)
    expect(await afterFirst.text()).toBe(await firstsThenRows.text())
    const route = 'entrance="chat",agent="agt_2",policy="default-codex",provider="sim-chat",model="sim-mini"'
    expect(text).toContain(`gwctl_requests_total{${route},status_class="2xx"} 3`)
    expect(text).toContain(`gwctl_fallbacks_total{policy="default-codex",provider="sim-messages"} 3`)
    expect(text).toMatch(/gwctl_requests_total\{[^}]*model="asked-for",status_class="2xx"\} 3/)
  })
})

describe('budget gauges', () => {
  it('one series per budget, labelled by id, scope, period and unit (never the target); none without budgets', async () => {
    let budgets: BudgetView[] = [
      budget({
        id: 'bgt_0001',
        scope: 'agent',
        target: 'agt_secret',
        spent: 1234,
        limit: 500_000,
        unit: 'tokens',
      }),
      budget({id: 'bgt_0002', scope: 'project', target: 'secret-project', spent: 0.0125, limit: 5}),
    ]
    const metrics = new GatewayMetrics({budgets: () => budgets})
    const lines = (await metrics.text()).split('\n').filter((l) => l.startsWith('gwctl_budget'))
    expect(lines).toEqual([
      'gwctl_budget_spent{budget="bgt_0001",scope="agent",period="daily",unit="tokens"} 1234',
      'gwctl_budget_spent{budget="bgt_0002",scope="project",period="daily",unit="usd"} 0.0125',
      'gwctl_budget_limit{budget="bgt_0001",scope="agent",period="daily",unit="tokens"} 500000',
      'gwctl_budget_limit{budget="bgt_0002",scope="project",period="daily",unit="usd"} 5',
    ])
    expect(lines.join('\n')).not.toContain('secret')
    // a removed budget's series goes with it
    budgets = []
    expect((await metrics.text()).split('\n').filter((l) => l.startsWith('gwctl_budget'))).toEqual([])
    expect(
      (await new GatewayMetrics().text()).split('\n').filter((l) => l.startsWith('gwctl_budget')),
    ).toEqual([])
  })
})

function budget(over: Partial<BudgetView>): BudgetView {
  return {
    id: 'bgt_0000',
    scope: 'agent',
    target: 'agt_1',
    period: 'daily',
    unit: 'usd',
    limit: 1,
    spent: 0,
    reserved: 0,
    percent: 0,
    state: 'ok',
    periodStart: 0,
    resetAt: 86_400_000,
    onExceed: 'block',
    unpricedModels: [],
    source: 'gateway',
    ...over,
  }
}

describe('Telemetry', () => {
  it('folds request events off the request path and counts them on scrape', async () => {
    const telemetry = await Telemetry.start({pricer: async () => undefined})
    try {
      emitGatewayEvent({type: 'request', entry: row()})
      emitGatewayEvent({type: 'request', entry: row()})
      expect(await telemetry.scrape()).toContain('status_class="2xx"} 2')
      expect(telemetry.status()).toEqual({metrics: '/metrics', otlp: {state: 'off'}})
    } finally {
      await telemetry.close()
    }
    // closed: later events are not counted
    emitGatewayEvent({type: 'request', entry: row()})
    expect(await telemetry.scrape()).toContain('status_class="2xx"} 2')
  })
})

describe('otlpConfig', () => {
  let home: string
  const saved = process.env.GWCTL_HOME
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), 'gwctl-otel-'))
    process.env.GWCTL_HOME = home
  })
  afterEach(() => {
    if (saved === undefined) delete process.env.GWCTL_HOME
    else process.env.GWCTL_HOME = saved
    rmSync(home, {recursive: true, force: true})
  })
  const withEnv = (env: Record<string, string>) => {
    const before = {...process.env}
    Object.assign(process.env, env)
    try {
      return otlpConfig('1.0.0', process.env)
    } finally {
      for (const k of Object.keys(env))
        if (before[k] === undefined) delete process.env[k]
        else process.env[k] = before[k]
    }
  }

  it('is off without an endpoint, and when OTEL_SDK_DISABLED says so', () => {
    expect(withEnv({})).toBeUndefined()
    expect(withEnv({OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true'})).toBeUndefined()
  })

  it('adds the signal paths to the base URL as the SDK does; the per-signal variables win', () => {
    const c = withEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/otlp/',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=a%20b,X-Team=ml',
      OTEL_SERVICE_NAME: 'gw',
    })!
    expect(c).toMatchObject({
      endpoint: 'http://c:4318/otlp/',
      tracesUrl: 'http://c:4318/otlp/v1/traces',
      metricsUrl: 'http://c:4318/otlp/v1/metrics',
      headers: {'x-api-key': 'a b', 'x-team': 'ml'},
      serviceName: 'gw',
      maxQueue: 2048,
      delayMs: 5000,
      timeoutMs: 10_000,
    })
    expect(
      withEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:1/x',
      })!.tracesUrl,
    ).toBe('http://t:1/x')
  })

  it('refuses a bad value with its rule and exit 3', () => {
    const envs: Array<Record<string, string>> = [
      {OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://c'},
      {OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_BSP_MAX_QUEUE_SIZE: '-1'},
      {OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'novalue'},
    ]
    for (const env of envs) {
      let error: any
      try {
        withEnv(env)
      } catch (e) {
        error = e
      }
      expect(error?.exitCode, JSON.stringify(env)).toBe(3)
      expect(error.message).toMatch(/must be/)
    }
  })
})
