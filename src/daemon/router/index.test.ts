/** The Router object: policy -> targets -> breakers -> proxy -> log row. */
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {tempHome} from '../../../test/helpers/cli.js'
import type {Simulator} from '../../sim/server.js'
import {startSim} from '../../sim/server.js'
import {LogStore} from '../../store/log-store.js'
import type {PolicyConfig, ProviderConfig} from '../../store/schema.js'
import {DEFAULT_TIMEOUTS} from '../../store/schema.js'
import {defaultPolicy, defaultProviders} from '../../gateway/policy.js'
import {Router} from './index.js'

let sim: Simulator
let store: LogStore
let home: ReturnType<typeof tempHome>
let router: Router
let url: string
let providers: ProviderConfig[]
let policies: Record<string, PolicyConfig>

beforeAll(async () => {
  home = tempHome()
  sim = await startSim()
  store = await LogStore.open(join(home.home, 'logs.db'))
  router = new Router({logStore: store})
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
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const policyId = String(req.headers['x-test-policy'] ?? 'default')
    await router.route(
      {
        family: req.url!.startsWith('/v1/messages') ? 'messages' : 'responses',
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks),
        policy: policies[policyId],
        providers,
        identity: {agentId: 'agent-1', keyPrefix: 'gw-ab…', policyId, project: 'repo'},
      },
      res,
    )
  })
  server.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return async () => {
    server.closeAllConnections()
    server.close()
  }
})
afterAll(async () => {
  await router.close()
  store.close()
  await sim.close()
  home.cleanup()
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
    // this harness routes every path but /v1/messages as responses: `broken` has no responses route
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
