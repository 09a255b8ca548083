/** Proxy -> log store: the logged usage of an SDK call equals what the simulator reported. */
import Anthropic from '@anthropic-ai/sdk'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {afterAll, beforeAll, expect, it} from 'vitest'

import {tempHome} from '../../../test/helpers/cli.js'
import type {Simulator} from '../../sim/server.js'
import {startSim} from '../../sim/server.js'
import {LogStore} from '../../store/log-store.js'
import {DEFAULT_TIMEOUTS} from '../../store/schema.js'
import {logEntryFor} from './log-entry.js'
import {proxyRequest, UpstreamPools} from './proxy.js'

let sim: Simulator
let store: LogStore
let home: ReturnType<typeof tempHome>
let gatewayUrl: string
const pools = new UpstreamPools()
const server = createServer(async (req, res) => {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const started = Date.now()
  const result = await proxyRequest(
    {
      family: 'messages',
      method: 'POST',
      url: req.url ?? '/',
      headers: req.headers,
      body: Buffer.concat(chunks),
    },
    res,
    {
      targets: [
        {
          provider: {
            name: 'sim-messages',
            family: 'messages',
            baseUrl: sim.origin,
            credential: {secret: 'k'},
          },
        },
      ],
      fallbacks: true,
      timeouts: DEFAULT_TIMEOUTS,
      pools,
    },
  )
  const project = req.headers['x-gw-project']
  store.append(
    logEntryFor(
      'messages',
      {
        agentId: 'agent-1',
        keyPrefix: 'gw-abcd…',
        policyId: 'default',
        project: typeof project === 'string' ? project : 'agent-project',
      },
      result,
      started,
    ),
  )
})

beforeAll(async () => {
  home = tempHome()
  sim = await startSim()
  store = await LogStore.open(join(home.home, 'logs.db'), {flushMs: 10})
  server.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  gatewayUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  server.close()
  store.close()
  await pools.close()
  await sim.close()
  home.cleanup()
})

it('logs one row per request with the exact usage, pivotable by project', async () => {
  const client = new Anthropic({apiKey: 'gw-key', baseURL: gatewayUrl, maxRetries: 0})
  const messages = [{role: 'user' as const, content: 'log me'}]
  const a = await client.messages.stream({model: 'claude-sim', max_tokens: 9, messages}).finalMessage()
  const b = await client.messages.create(
    {model: 'claude-sim', max_tokens: 9, messages: [{role: 'user', content: 'and me, a bit longer'}]},
    {headers: {'x-gw-project': 'web'}},
  )
  for (let i = 0; i < 100 && store.pending + store.queryLogs().length < 2; i++)
    await new Promise((r) => setTimeout(r, 10))
  const rows = store.queryLogs()
  expect(rows).toHaveLength(2)
  const prompt = (m: typeof a): number =>
    m.usage.input_tokens + (m.usage.cache_read_input_tokens ?? 0) + (m.usage.cache_creation_input_tokens ?? 0)
  expect(rows[1]).toMatchObject({
    agentId: 'agent-1',
    entrance: 'messages',
    provider: 'sim-messages',
    model: 'claude-sim',
    requestedModel: 'claude-sim',
    status: 200,
    fallback: false,
    inputTokens: prompt(a),
    outputTokens: a.usage.output_tokens,
    cacheReadTokens: a.usage.cache_read_input_tokens,
    cacheCreationTokens: a.usage.cache_creation_input_tokens,
    project: 'agent-project',
    error: null,
  })
  expect(rows[1].ttfbMs).not.toBeNull()
  expect(store.usage({pivot: 'project'})).toEqual([
    expect.objectContaining({
      key: 'web',
      requests: 1,
      inputTokens: prompt(b),
      outputTokens: b.usage.output_tokens,
    }),
    expect.objectContaining({key: 'agent-project', requests: 1, inputTokens: prompt(a)}),
  ])
})
