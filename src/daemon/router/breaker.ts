/**
 * Per-provider circuit breaker.
 *
 * closed --(N consecutive failures)--> open --(cooldown)--> half-open --(success)--> closed
 *                                                            half-open --(failure)--> open
 *
 * While half-open exactly one trial request is let through; others see the breaker as open.
 */
import type {BreakerSettings} from '../../store/schema.js'
import {DEFAULT_BREAKER} from '../../store/schema.js'

import {emitGatewayEvent} from '../events.js'
import type {BreakerSnapshot, BreakerState} from '../../gateway/events.js'

export type Clock = () => number

export class CircuitBreaker {
  private stateValue: BreakerState = 'closed'
  private failures = 0
  private openedAt: number | null = null
  private trialInFlight = false
  private lastError: string | null = null

  constructor(
    readonly provider: string,
    private settings: BreakerSettings = DEFAULT_BREAKER,
    private readonly clock: Clock = Date.now,
  ) {}

  /** Changes thresholds (e.g. after a restart with another policy), keeping the state. */
  configure(settings: BreakerSettings): void {
    this.settings = settings
  }

  /** The current state, moving open -> half-open when the cooldown has passed. Does not take the trial. */
  get state(): BreakerState {
    if (
      this.stateValue === 'open' &&
      this.openedAt !== null &&
      this.clock() - this.openedAt >= this.settings.cooldownMs
    ) {
      this.stateValue = 'half-open'
      this.trialInFlight = false
    }
    return this.stateValue
  }

  /** True when a request may be sent now without taking it (for "is any target left?" checks). */
  canTry(): boolean {
    const state = this.state
    return state === 'closed' || (state === 'half-open' && !this.trialInFlight)
  }

  /** Asks to send a request: true when closed, or when taking the single half-open trial. */
  tryAcquire(): boolean {
    const state = this.state
    if (state === 'closed') return true
    if (state === 'half-open' && !this.trialInFlight) {
      this.trialInFlight = true
      return true
    }
    return false
  }

  recordSuccess(): void {
    if (this.stateValue !== 'closed') this.changed('closed')
    this.stateValue = 'closed'
    this.failures = 0
    this.openedAt = null
    this.trialInFlight = false
  }

  recordFailure(message?: string): void {
    this.failures++
    if (message) this.lastError = message
    if (this.stateValue === 'half-open' || this.failures >= this.settings.failureThreshold) {
      this.stateValue = 'open'
      this.openedAt = this.clock()
      this.trialInFlight = false
      this.changed('open')
    }
  }

  /** Tells the event stream (`GET /api/events`). */
  private changed(state: BreakerState): void {
    const retryAt =
      state === 'open' && this.openedAt !== null ? this.openedAt + this.settings.cooldownMs : null
    emitGatewayEvent({type: 'breaker', provider: this.provider, state, retryAt})
  }

  /** Releases a half-open trial that ended neither in success nor failure (e.g. client abort). */
  release(): void {
    this.trialInFlight = false
  }

  snapshot(): BreakerSnapshot {
    const state = this.state
    const retryAt =
      state === 'open' && this.openedAt !== null ? this.openedAt + this.settings.cooldownMs : null
    return {
      provider: this.provider,
      state,
      consecutiveFailures: this.failures,
      openedAt: this.openedAt,
      retryAt,
      retryInMs: retryAt === null ? null : Math.max(0, retryAt - this.clock()),
      lastError: this.lastError,
    }
  }
}

/** One breaker per provider name, created on first use. */
export class BreakerRegistry {
  private readonly breakers = new Map<string, CircuitBreaker>()

  constructor(
    private readonly settingsFor: (provider: string) => BreakerSettings = () => DEFAULT_BREAKER,
    private readonly clock: Clock = Date.now,
  ) {}

  get(provider: string, settings?: BreakerSettings): CircuitBreaker {
    let breaker = this.breakers.get(provider)
    if (!breaker) {
      breaker = new CircuitBreaker(provider, settings ?? this.settingsFor(provider), this.clock)
      this.breakers.set(provider, breaker)
    } else if (settings) breaker.configure(settings)
    return breaker
  }

  snapshot(): BreakerSnapshot[] {
    return [...this.breakers.values()].map((b) => b.snapshot())
  }

  /** The snapshot of one provider; a provider never used is closed. */
  snapshotOf(provider: string): BreakerSnapshot {
    return (
      this.breakers.get(provider)?.snapshot() ?? {
        provider,
        state: 'closed',
        consecutiveFailures: 0,
        openedAt: null,
        retryAt: null,
        retryInMs: null,
        lastError: null,
      }
    )
  }
}
