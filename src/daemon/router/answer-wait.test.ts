/**
 * How long a request not streamed waits for its answer's headers (pools.ts `answerWaitMs`): up to
 * the idle timeout at its last target (a long compaction, a JSON summary), the first-byte timeout
 * when another target is left (the policy's fallback, before a client that gives up first: Qwen
 * Code 0.24.4 at 120 s) and for a count of tokens, which a live upstream answers at once (review71).
 */
import {afterAll, beforeAll, expect, it} from 'vitest'

import type {Simulator} from '../../sim/server.js'
import {startSim} from '../../sim/server.js'
import type {Family, ProviderConfig, TimeoutSettings} from '../../store/schema.js'
import type {ProxyTarget} from './proxy.js'
import {ProxyGateway} from './proxy-fixture.js'

const TIMEOUTS: TimeoutSettings = {connectMs: 1_000, firstByteMs: 500, idleMs: 5_000}
let sim: Simulator
let targets: (family: Family) => ProxyTarget[]
const gateway = new ProxyGateway({route: (family) => ({targets: targets(family), timeouts: TIMEOUTS})})

const simProvider = (name: string, family: Family): ProviderConfig => ({
  name,
  family,
  baseUrl: sim.origin,
  credential: {secret: `upstream-key-${name}`},
  origin: 'sim',
})
/** The same simulator without `origin: 'sim'`: the `x-sim-*` headers (the fault) do not reach it. */
const plainProvider = (name: string, family: Family): ProviderConfig => ({
  ...simProvider(name, family),
  origin: undefined,
})

beforeAll(async () => {
  sim = await startSim()
  await gateway.listen()
})
afterAll(async () => {
  await gateway.close()
  await sim.close()
})

it.each([
  ['messages', '/v1/messages/count_tokens', {model: 'claude-sim', messages: [{role: 'user', content: 'x'}]}],
  ['gemini', '/v1beta/models/gemini-sim:countTokens', {contents: [{role: 'user', parts: [{text: 'x'}]}]}],
] as const)(
  '%s count of tokens from a hung upstream falls back at the first-byte timeout',
  async (family, path, body) => {
    targets = (f) => [{provider: simProvider(`up-${f}`, f)}, {provider: plainProvider(`alt-${f}`, f)}]
    gateway.results.length = 0
    // the first target hangs 3 s before its headers (a hung upstream), the second answers at once
    const res = await fetch(gateway.url + path, {
      method: 'POST',
      headers: {'content-type': 'application/json', 'x-sim-fault': 'delay=3000'},
      body: JSON.stringify(body),
    })
    await res.text()
    const [result] = await gateway.settled()
    // (before: no fallback, the count waited the 3 s hang and the first target answered; it would
    // wait idleMs, 300 s by default). The first-byte timeout named is the proof, not a timing: a
    // loaded machine may take longer than the 500 ms.
    expect(res.status).toBe(200)
    expect(result.error ?? '').toMatch(/first-byte timeout/)
    expect(result.provider).toBe(`alt-${family}`)
  },
)

/**
 * A client whose own request timeout is under the idle timeout (Qwen Code 0.24.4: 120 s,
 * openaiContentGenerator/constants.ts DEFAULT_TIMEOUT, against the default idle 300 s) gives up
 * on a non-streamed request before the gateway tries the next target; the gateway then releases
 * the breaker (client gone), so the client's retries go to the same hung target again. With the
 * first-byte timeout under the client's (a policy's firstByteMs set for that), it fell back before a30f51b.
 */
it('a JSON chat whose client gives up before idleMs still falls back at the first-byte timeout', async () => {
  targets = (f) => [{provider: simProvider(`up-${f}`, f)}, {provider: plainProvider(`alt-${f}`, f)}]
  const res = await fetch(gateway.url + '/v1/chat/completions', {
    method: 'POST',
    headers: {'content-type': 'application/json', 'x-sim-fault': 'delay=4000'},
    body: JSON.stringify({model: 'sim-mini', stream: false, messages: [{role: 'user', content: 'x'}]}),
    // the client's own timeout: 1.5 s (first byte 0.5 s, idle 5 s)
    signal: AbortSignal.timeout(1_500),
  }).then(
    async (r) => ({status: r.status, text: await r.text()}),
    (error: Error) => ({status: 0, text: error.name}),
  )
  const [result] = await gateway.settled()
  // (before: the client's TimeoutError; the gateway never tried alt-chat)
  expect(res.status).toBe(200)
  expect(result.error ?? '').toMatch(/first-byte timeout/)
})

it.each([
  ['messages', '/v1/messages/count_tokens', {model: 'claude-sim', messages: [{role: 'user', content: 'x'}]}],
  [
    'chat',
    '/v1/chat/completions',
    {model: 'sim-mini', stream: false, messages: [{role: 'user', content: 'x'}]},
  ],
] as const)('%s %s at its only target, hung past the first-byte timeout', async (family, path, body) => {
  targets = (f) => [{provider: simProvider(`up-${f}`, f)}]
  const res = await fetch(gateway.url + path, {
    method: 'POST',
    headers: {'content-type': 'application/json', 'x-sim-fault': 'delay=2000'},
    body: JSON.stringify(body),
  })
  await res.text()
  const [result] = await gateway.settled()
  if (path.includes('count_tokens')) {
    // a count: a 504 at the first-byte timeout
    expect(res.status).toBe(504)
    expect(result.error ?? '').toMatch(/first-byte timeout/)
  } else {
    // an answer: waited for (up to the idle timeout, 5 s here)
    expect(res.status).toBe(200)
  }
})
