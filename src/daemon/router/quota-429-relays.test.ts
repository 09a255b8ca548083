/**
 * review66's two relays, as a user meets them: a relay of the one-api kind that answers a 429 in a
 * 200's body (with a fallback target, later requests must reach the fallback: the 429 goes to it
 * and counts against the relay's breaker, as a 429's status does), and a Messages-family relay that
 * answers OpenAI's `insufficient_quota` in OpenAI's shape (the gateway rewraps it in Anthropic's,
 * and the client must still be told not to retry).
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'

import type {Family} from '../../store/schema.js'
import {CircuitBreaker} from './breaker.js'
import type {GatewayRoute, Upstream} from './proxy-fixture.js'
import {askMessages, CHAT_ANSWER, chatTarget, ProxyGateway, startUpstream} from './proxy-fixture.js'

let route: (family: Family) => GatewayRoute
const gateway = new ProxyGateway({route: (family) => route(family)})
let relay429: Upstream
let good: Upstream
let quotaRelay: Upstream
let relayCalls = 0
let goodCalls = 0

beforeAll(async () => {
  await gateway.listen()
  relay429 = await startUpstream((_req, res) => {
    relayCalls++
    res.writeHead(200, {'content-type': 'application/json'})
    res.end(
      JSON.stringify({error: {message: 'rate limited, try later', type: 'rate_limit_error', code: 429}}),
    )
  })
  good = await startUpstream((_req, res) => {
    goodCalls++
    res.writeHead(200, {'content-type': 'application/json'})
    res.end(CHAT_ANSWER)
  })
  quotaRelay = await startUpstream((_req, res) => {
    res.writeHead(429, {'content-type': 'application/json'})
    res.end(
      JSON.stringify({
        error: {
          message: 'You exceeded your current quota',
          type: 'insufficient_quota',
          code: 'insufficient_quota',
        },
      }),
    )
  })
})
afterEach(() => {
  relayCalls = goodCalls = 0
  gateway.results.length = 0
})
afterAll(async () => {
  relay429.close()
  good.close()
  quotaRelay.close()
  await gateway.close()
})

/** The one-api relay (with `breaker`) as the route's target, the good one after it where `fallback`. */
const relayRoute = (breaker: CircuitBreaker, fallback: boolean): GatewayRoute => ({
  targets: [
    {...chatTarget('relay', 'm', relay429.origin), translate: true, breaker},
    ...(fallback ? [{...chatTarget('good', 'm', good.origin), translate: true as const}] : []),
  ],
  fallbacks: true,
})

describe('a 429 in a 200 body, translated', () => {
  it('goes to the fallback target, and the relay breaker opens', async () => {
    const breaker = new CircuitBreaker('relay')
    route = () => relayRoute(breaker, true)
    const statuses: number[] = []
    for (let i = 0; i < 8; i++) {
      const res = await askMessages(gateway.url)
      await res.text()
      statuses.push(res.status)
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200])
    expect(goodCalls).toBe(8)
    // the relay tried until its breaker opened, then no more
    expect(breaker.snapshot().state).toBe('open')
    expect(relayCalls).toBeLessThan(8)
    expect(gateway.results[0]).toMatchObject({status: 200, provider: 'good', fallback: true})
  })

  it('with no other target: the 429 to the client, the breaker closed', async () => {
    const breaker = new CircuitBreaker('relay')
    route = () => relayRoute(breaker, false)
    for (let i = 0; i < 7; i++) expect((await askMessages(gateway.url)).status).toBe(429)
    expect(relayCalls).toBe(7)
    expect(breaker.snapshot().state).toBe('closed')
  })
})

describe('insufficient_quota in another family, passed through and rewrapped', () => {
  it("reaches a Messages client in Anthropic's shape, with x-should-retry: false", async () => {
    route = () => ({
      targets: [
        {
          provider: {
            name: 'mrelay',
            family: 'messages',
            baseUrl: quotaRelay.origin,
            credential: {secret: 'k'},
          },
        },
      ],
    })
    const res = await askMessages(gateway.url)
    const body = (await res.json()) as {type: string; error: {message: string}}
    expect(res.status).toBe(429)
    expect(res.headers.get('x-should-retry')).toBe('false')
    expect(body.type).toBe('error')
    expect(body.error.message).toContain('You exceeded your current quota')
  })
})
