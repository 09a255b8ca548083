import {describe, expect, it} from 'vitest'

import {BreakerRegistry, CircuitBreaker} from './breaker.js'

function setup(threshold = 3, cooldownMs = 1000) {
  let now = 1_000_000
  const breaker = new CircuitBreaker('p', {failureThreshold: threshold, cooldownMs}, () => now)
  return {breaker, advance: (ms: number) => (now += ms)}
}

describe('CircuitBreaker', () => {
  it('opens after N consecutive failures, not before', () => {
    const {breaker} = setup(3)
    breaker.recordFailure('boom')
    breaker.recordFailure('boom')
    expect(breaker.state).toBe('closed')
    expect(breaker.tryAcquire()).toBe(true)
    breaker.recordFailure('boom 3')
    expect(breaker.state).toBe('open')
    expect(breaker.tryAcquire()).toBe(false)
    expect(breaker.snapshot()).toMatchObject({state: 'open', consecutiveFailures: 3, lastError: 'boom 3'})
  })

  it('a success resets the consecutive count', () => {
    const {breaker} = setup(2)
    breaker.recordFailure()
    breaker.recordSuccess()
    breaker.recordFailure()
    expect(breaker.state).toBe('closed')
  })

  it('half-opens after the cooldown with a single trial, closing on success', () => {
    const {breaker, advance} = setup(1, 1000)
    breaker.recordFailure()
    advance(999)
    expect(breaker.state).toBe('open')
    expect(breaker.snapshot().retryAt).toBe(breaker.snapshot().openedAt! + 1000)
    expect(breaker.snapshot().retryInMs).toBe(1)
    advance(1)
    expect(breaker.state).toBe('half-open')
    expect(breaker.tryAcquire()).toBe(true)
    expect(breaker.tryAcquire()).toBe(false)
    expect(breaker.canTry()).toBe(false)
    breaker.recordSuccess()
    expect(breaker.state).toBe('closed')
    expect(breaker.snapshot().consecutiveFailures).toBe(0)
  })

  it('opens again when the half-open trial fails', () => {
    const {breaker, advance} = setup(3, 500)
    for (let i = 0; i < 3; i++) breaker.recordFailure()
    advance(500)
    expect(breaker.tryAcquire()).toBe(true)
    breaker.recordFailure('still down')
    expect(breaker.state).toBe('open')
    advance(499)
    expect(breaker.tryAcquire()).toBe(false)
    advance(1)
    expect(breaker.tryAcquire()).toBe(true)
  })

  it('the registry keeps one breaker per provider and snapshots unknown ones as closed', () => {
    const registry = new BreakerRegistry(() => ({failureThreshold: 1, cooldownMs: 10}))
    registry.get('a').recordFailure()
    expect(registry.get('a').state).toBe('open')
    expect(registry.snapshotOf('b').state).toBe('closed')
    expect(registry.snapshot().map((s) => s.provider)).toEqual(['a'])
  })
})
