import {afterEach, describe, expect, it} from 'vitest'

import type {GatewayEvent} from '../gateway/events.js'
import type {BudgetPricer} from '../gateway/budgets.js'
import type {LogEntry} from '../store/log-store.js'
import type {BudgetRecord} from '../store/state-schema.js'
import type {Family} from '../store/schema.js'
import type {UsageGroup} from '../store/usage-query.js'
import type {Admission} from './budgets.js'
import {
  BudgetBook,
  BudgetExceededError,
  DEFAULT_OUTPUT_ESTIMATE,
  estimateFromFacts,
  estimateRequest,
} from './budgets.js'
import {bodyFacts} from './router/request-body.js'
import {onGatewayEvent} from './events.js'

/** $1 per 1M input tokens, $10 per 1M output. */
const pricer: BudgetPricer = {cost: (_m, t) => (t.inputTokens * 1 + t.outputTokens * 10) / 1e6}

const who = {agentId: 'agt_1', keyPrefix: 'gw-aa…', policyId: 'default', project: 'codex'}

function record(over: Partial<BudgetRecord> = {}): BudgetRecord {
  return {
    id: 'bgt_00000001',
    scope: 'agent',
    target: 'agt_1',
    period: 'daily',
    unit: 'usd',
    limit: 0.01,
    onExceed: {action: 'block'},
    createdAt: 0,
    updatedAt: 0,
    ...over,
  }
}

function entry(time: number, input: number, output: number): LogEntry {
  return {
    time,
    agentId: 'agt_1',
    keyPrefix: 'gw-aa…',
    policyId: 'default',
    entrance: 'responses',
    requestedModel: 'm',
    provider: 'p',
    model: 'm',
    status: 200,
    fallback: false,
    inputTokens: input,
    outputTokens: output,
    cacheReadTokens: 0,
    cacheCreationTokens: 0,
    reasoningTokens: 0,
    latencyMs: 1,
    ttfbMs: 1,
    error: null,
    project: 'codex',
  }
}

// each request is estimated at 1000 in + 1000 out = $0.011, and really uses 100 in + 100 out = $0.0011
const estimate = {provider: 'p', model: 'm', inputTokens: 1000, outputTokens: 1000}
const NOW = Date.parse('2026-11-26T10:00:00Z')

const unsubscribe: Array<() => void> = []
afterEach(() => unsubscribe.splice(0).forEach((u) => u()))

function book(records: BudgetRecord[], spend: UsageGroup[] = [], clock = {now: NOW}) {
  const lines: string[] = []
  const b = new BudgetBook(records, {
    pricer,
    readSpend: () => spend,
    nameOf: () => 'codex',
    log: (l) => lines.push(l),
    now: () => clock.now,
  })
  return {b, lines, clock}
}

describe('BudgetBook: the reservation race', () => {
  it('concurrent requests: once reservations reach the limit the rest are refused, and the spend ends within one reservation of the limit', () => {
    const {b} = book([record({limit: 0.02})])
    const admitted: Admission[] = []
    let refused = 0
    // 10 streams arrive together: none has ended, so none has settled
    for (let i = 0; i < 10; i++) {
      try {
        admitted.push(b.admit(who, estimate)!)
      } catch (error) {
        expect(error).toBeInstanceOf(BudgetExceededError)
        refused++
      }
    }
    // $0 + 0.011 < 0.02: second let through; 0.022 >= 0.02: the rest refused
    expect(admitted.length).toBe(2)
    expect(refused).toBe(8)
    expect(b.views()[0]).toMatchObject({spent: 0, reserved: 0.022})
    for (const a of admitted) b.settle(a.reservations, entry(NOW, 100, 100))
    expect(b.views()[0]).toMatchObject({spent: 0.0022, reserved: 0})
  })

  it("a request's billed tries of another provider (rows of their own) count with its row, the reservation released once", () => {
    const {b} = book([record({limit: 1})])
    const a = b.admit(who, estimate)!
    b.settle(a.reservations, entry(NOW, 100, 100), [{...entry(NOW, 1000, 0), provider: 'q', status: 502}])
    // $0.0011 answered + $0.001 billed for the try, nothing held
    expect(b.views()[0]).toMatchObject({spent: 0.0021, reserved: 0})
  })

  it('without reservations many would pass; with them the overshoot is bounded by the last one let through', () => {
    const {b} = book([record({limit: 0.01})])
    let spent = 0
    // waves of 5 concurrent requests, each really using its whole estimate
    for (let wave = 0; wave < 20; wave++) {
      const inFlight: Admission[] = []
      for (let i = 0; i < 5; i++) {
        try {
          inFlight.push(b.admit(who, {...estimate, inputTokens: 100, outputTokens: 100})!)
        } catch {
          // refused
        }
      }
      for (const a of inFlight) {
        b.settle(a.reservations, entry(NOW, 100, 100))
        spent += 0.0011
      }
    }
    expect(b.views()[0].spent).toBeCloseTo(spent, 12)
    expect(spent).toBeGreaterThanOrEqual(0.01)
    expect(spent).toBeLessThan(0.01 + 0.0011 + 1e-12)
  })

  it('the 429 names the budget, what is spent and the reset, with Retry-After in seconds', () => {
    const {b} = book([record({limit: 0.001})])
    b.settle(b.admit(who, estimate)!.reservations, entry(NOW, 100, 100))
    let thrown: BudgetExceededError | undefined
    try {
      b.admit(who, estimate)
    } catch (error) {
      thrown = error as BudgetExceededError
    }
    expect(thrown?.status).toBe(429)
    expect(thrown?.code).toBe('budget_exceeded')
    expect(thrown?.message).toBe(
      'Budget exceeded: agent "codex" has spent $0.0011 of its daily budget of $0.0010. It resets at 2026-11-27T00:00:00.000Z.',
    )
    expect(thrown?.headers['retry-after']).toBe(String(14 * 3600))
  })
})

describe('BudgetBook: what it starts from, events, periods, fallbacks', () => {
  it('starts from the logged spend, and emits 80 % and 100 % once each per period', () => {
    const events: GatewayEvent[] = []
    unsubscribe.push(onGatewayEvent((e) => events.push(e)))
    const logged: UsageGroup = {
      key: null,
      provider: 'p',
      model: 'm',
      requests: 7,
      errors: 0,
      fallbacks: 0,
      inputTokens: 700,
      outputTokens: 700,
      cacheReadTokens: 0,
      cacheCreationTokens: 0,
      reasoningTokens: 0,
    }
    const {b, lines} = book([record({limit: 0.01})], [logged])
    expect(b.views()[0].spent).toBeCloseTo(0.0077, 12)
    b.settle(b.admit(who, estimate)!.reservations, entry(NOW, 100, 100)) // 0.0088: 80 %
    b.settle(b.admit(who, estimate)!.reservations, entry(NOW, 50, 50)) // 0.00935: no new event
    b.settle(b.admit(who, estimate)!.reservations, entry(NOW, 100, 100)) // 0.01045: 100 %
    const told = events.filter((e) => e.type === 'budget') as Array<Extract<GatewayEvent, {type: 'budget'}>>
    expect(told.map((e) => e.threshold)).toEqual([80, 100])
    expect(told[1].budget).toMatchObject({id: 'bgt_00000001', state: 'exceeded', name: 'codex'})
    expect(lines.filter((l) => l.includes('reached'))).toHaveLength(2)
  })

  it('a new period starts from nothing; a request of the old period does not count in the new one', () => {
    const {b, clock} = book([record({limit: 0.1})])
    const old = b.admit(who, estimate)!
    b.settle(b.admit(who, estimate)!.reservations, entry(NOW, 100, 100))
    expect(b.views()[0]).toMatchObject({spent: 0.0011, reserved: 0.011})
    clock.now = Date.parse('2026-11-27T00:00:01Z')
    expect(b.views()[0]).toMatchObject({spent: 0, reserved: 0})
    b.settle(old.reservations, entry(NOW, 1000, 1000))
    expect(b.views()[0].spent).toBe(0)
    expect(b.admit(who, estimate)).toBeDefined()
  })

  it('a spent budget with a fallback names its target and why, and still counts the request', () => {
    const onExceed = {action: 'fallback' as const, provider: 'cheap', model: 'mini'}
    const {b, lines} = book([record({limit: 0.001, onExceed})])
    b.settle(b.admit(who, estimate)!.reservations, entry(NOW, 100, 100))
    const a = b.admit(who, estimate)!
    expect(a.fallback).toMatchObject({provider: 'cheap', model: 'mini'})
    expect(a.fallback!.reason).toMatch(/^Budget exceeded: .* Sent to fallback:cheap:mini\.$/)
    b.settle(a.reservations, entry(NOW, 100, 100))
    expect(b.views()[0].spent).toBeCloseTo(0.0022, 12)
    b.admit(who, estimate)
    expect(lines.filter((l) => l.includes('requests go to fallback:cheap:mini'))).toHaveLength(1)
  })

  it('requests outside every scope are not looked at; replacing budgets keeps the counters of unchanged ones', () => {
    const {b} = book([
      record(),
      record({id: 'bgt_00000002', scope: 'project', target: 'web', unit: 'tokens', limit: 500}),
    ])
    expect(b.admit({...who, agentId: 'agt_2'}, estimate)).toBeUndefined()
    b.settle(b.admit(who, estimate)!.reservations, entry(NOW, 100, 100))
    b.replace([
      record({limit: 1}),
      record({id: 'bgt_00000003', scope: 'project', target: 'codex', unit: 'tokens', limit: 150}),
    ])
    const [usd, tokens] = b.views()
    expect(usd).toMatchObject({limit: 1, spent: 0.0011})
    expect(tokens).toMatchObject({unit: 'tokens', spent: 0})
    // a token budget reserves input + output estimate: 2000 >= 150 after one request under way
    b.admit(who, estimate)
    expect(() => b.admit(who, estimate)).toThrow(BudgetExceededError)
  })
})

describe('estimateRequest', () => {
  it('reads the output cap of each family, else assumes the default', () => {
    expect(estimateRequest('messages', '/v1/messages', {model: 'c', max_tokens: 32000}, 400)).toEqual({
      requestedModel: 'c',
      inputTokens: 100,
      outputTokens: 32000,
    })
    expect(
      estimateRequest('responses', '/v1/responses', {model: 'g', max_output_tokens: 50}, 10).outputTokens,
    ).toBe(50)
    expect(
      estimateRequest('chat', '/v1/chat/completions', {model: 'g', max_completion_tokens: 7}, 10)
        .outputTokens,
    ).toBe(7)
    expect(
      estimateRequest(
        'gemini',
        '/v1beta/models/gemini-2.5-pro:generateContent',
        {generationConfig: {maxOutputTokens: 9}},
        8,
      ),
    ).toEqual({requestedModel: 'gemini-2.5-pro', inputTokens: 2, outputTokens: 9})
    expect(estimateRequest('chat', '/v1/chat/completions', {model: 'g'}, 0).outputTokens).toBe(
      DEFAULT_OUTPUT_ESTIMATE,
    )
  })

  it('estimates the same from the entrance check of the body as from its parse, or asks for the parse', () => {
    const bodies: Array<[Family, string, string]> = [
      ['messages', '/v1/messages', '{"model":"c","max_tokens":32000,"messages":[{"content":"héllo"}]}'],
      ['responses', '/v1/responses', '{"model":"g","max_output_tokens":50,"max_tokens":null}'],
      ['chat', '/v1/chat/completions', '{"max_completion_tokens":7,"model":"g","max_tokens":"x"}'],
      ['chat', '/v1/chat/completions', '{"model":5,"max_tokens":-1}'],
      [
        'gemini',
        '/v1beta/models/gemini-2.5-pro:generateContent',
        '{"generationConfig":{"maxOutputTokens":9}}',
      ],
      ['gemini', '/v1beta/models/g:generateContent', '{"generationConfig":null,"max_tokens":3}'],
    ]
    for (const [family, url, text] of bodies) {
      const bytes = Buffer.from(text)
      const facts = bodyFacts(JSON.parse(bytes.toString('latin1')))!
      expect(estimateFromFacts(family, url, facts, bytes.length), text).toEqual(
        estimateRequest(family, url, JSON.parse(text), bytes.length),
      )
    }
    // a model name the check cannot read: the caller parses
    const odd = Buffer.from('{"model":"modèle","max_tokens":5}')
    expect(
      estimateFromFacts('chat', '/v1/chat/completions', bodyFacts(JSON.parse(odd.toString('latin1')))!, 9),
    ).toBe(undefined)
  })
})
