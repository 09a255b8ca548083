/** The Router object: policy -> targets -> breakers -> proxy -> log row. */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import type {Simulator} from '../../sim/server.js'
import {startSim} from '../../sim/server.js'
import type {LogStore} from '../../store/log-store.js'
import type {PolicyConfig, ProviderConfig} from '../../store/schema.js'
import {DEFAULT_TIMEOUTS} from '../../store/schema.js'
import {defaultPolicy, defaultProviders} from '../../gateway/policy.js'
import type {Router} from './index.js'
import type {RouterWithLogs} from './proxy-fixture.js'
import {routerWithLogs} from './proxy-fixture.js'

let sim: Simulator
let gateway: RouterWithLogs
let store: LogStore
let router: Router
let url: string
let providers: ProviderConfig[]
let policies: Record<string, PolicyConfig>

beforeAll(async () => {
  sim = await startSim()
  providers = [
    ...defaultProviders({simOrigin: sim.origin, env: {}}),
    {name: 'wrong', family: 'chat', baseUrl: sim.origin},
  ]
  policies = {
    default: defaultPolicy(providers),
    broken: {
      id: 'broken',
      routes: {messages: [{provider: 'wrong'}], gemini: [{provider: 'sim-gemini'}]},
      fallbacks: true,
      breaker: {failureThreshold: 1, cooldownMs: 60_000},
      timeouts: DEFAULT_TIMEOUTS,
    },
  }
  const policyId = (req: {headers: Record<string, unknown>}) =>
    String(req.headers['x-test-policy'] ?? 'default')
  gateway = await routerWithLogs({
    providers,
    policy: (req) => policies[policyId(req)],
    identity: (req) => ({agentId: 'agent-1', keyPrefix: 'gw-ab…', policyId: policyId(req), project: 'repo'}),
  })
  ;({url, store, router} = gateway)
})
afterAll(async () => {
  await gateway.close()
  await sim.close()
})

describe('Router', () => {
  it('routes through the default policy and logs the row with the project header', async () => {
    const res = await fetch(`${url}/v1/responses`, {
      method: 'POST',
      headers: {'x-gw-project': 'side-project'},
      body: JSON.stringify({model: 'gpt-sim', input: 'hi'}),
    })
    const body = (await res.json()) as {usage: {input_tokens: number; output_tokens: number}}
    expect(res.status).toBe(200)
    const [row] = store.queryLogs()
    expect(row).toMatchObject({
      agentId: 'agent-1',
      policyId: 'default',
      entrance: 'responses',
      provider: 'sim-responses',
      status: 200,
      project: 'side-project',
      inputTokens: body.usage.input_tokens,
      outputTokens: body.usage.output_tokens,
    })
  })

  it('answers a cross-family policy target with 400 in the entrance shape, and logs it', async () => {
    const res = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: {'x-test-policy': 'broken'},
      body: JSON.stringify({model: 'm', max_tokens: 1, messages: []}),
    })
    expect(res.status).toBe(400)
    const body = (await res.json()) as {
      type: string
      error: {type: string; message: string}
      request_id: string
    }
    expect(body).toMatchObject({type: 'error', error: {type: 'invalid_request_error'}})
    expect(body.error.message).toContain('"wrong", which speaks chat')
    expect(body.request_id).toBe(res.headers.get('request-id'))
    expect(store.queryLogs({policyId: 'broken'})[0]).toMatchObject({
      status: 400,
      project: 'repo',
      provider: null,
    })
  })

  it('answers a family the policy has no route for with 503 no_provider in the entrance shape, and logs it once', async () => {
    // `broken` has no responses route
    const res = await fetch(`${url}/v1/responses`, {
      method: 'POST',
      headers: {'x-test-policy': 'broken', 'x-gw-project': 'other-repo'},
      body: JSON.stringify({model: 'm', input: 'hi'}),
    })
    expect(res.status).toBe(503)
    const body = (await res.json()) as {error: {code: string; message: string}}
    expect(body.error.code).toBe('no_provider')
    expect(body.error.message).toContain(
      'No provider is configured for this route (policy "broken", responses)',
    )
    const rows = store.queryLogs({policyId: 'broken'}).filter((r) => r.entrance === 'responses')
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({status: 503, project: 'other-repo', provider: null})
  })

  it('answers an unknown policy with 502 and reports breaker states', async () => {
    const res = await fetch(`${url}/v1/responses`, {
      method: 'POST',
      headers: {'x-test-policy': 'nope'},
      body: '{}',
    })
    expect(res.status).toBe(502)
    expect(((await res.json()) as {error: {message: string}}).error.message).toContain(
      'policy "nope" does not exist',
    )
    expect(router.breakerStates(providers.slice(0, 2)).map((s) => [s.provider, s.state])).toEqual([
      ['sim-chat', 'closed'],
      ['sim-responses', 'closed'],
    ])
  })

  it('follows a policy whose route changes, in place or as a new object (targets are resolved once per policy)', async () => {
    const ask = () =>
      fetch(`${url}/v1/messages`, {
        method: 'POST',
        headers: {'x-test-policy': 'changing'},
        body: JSON.stringify({model: 'claude-sim', max_tokens: 1, messages: [{role: 'user', content: 'hi'}]}),
      })
    const messagesProvider = providers.find((p) => p.family === 'messages')!.name
    policies.changing = {
      ...policies.default,
      id: 'changing',
      routes: {messages: [{provider: messagesProvider}]},
    }
    expect((await ask()).status).toBe(200)
    expect((await ask()).status).toBe(200)
    // the same policy object, its route edited in place: now the cross-family target
    policies.changing.routes.messages![0] = {provider: 'wrong'}
    expect((await ask()).status).toBe(400)
    // a new policy object (a reload) routing to the right provider again, with a model rewrite
    policies.changing = {
      ...policies.changing,
      routes: {messages: [{provider: messagesProvider, model: 'claude-sim'}]},
    }
    const res = await ask()
    expect(res.status).toBe(200)
    expect(store.queryLogs({policyId: 'changing'}).map((r) => [r.status, r.provider])).toEqual([
      [200, messagesProvider],
      [400, null],
      [200, messagesProvider],
      [200, messagesProvider],
    ])
  })
})
