/**
 * Shapes shared across the gateway: protocol families, providers, policies. The state store,
 * the router and the commands all use these; change them here only.
 */

/** The four entrance/provider protocol families. */
export const FAMILIES = ['chat', 'responses', 'messages', 'gemini'] as const
export type Family = (typeof FAMILIES)[number]

/** How a provider's credential is found: an environment variable name, or a secret kept 0600 in the state. */
export type Credential = {env: string} | {secret: string}

export interface ProviderConfig {
  /** Unique name, e.g. `anthropic`, `openai`, `platform`, `sim-messages`. */
  name: string
  family: Family
  /** Upstream base URL without the protocol path, e.g. `https://api.anthropic.com`. */
  baseUrl: string
  credential?: Credential
  /** Requested model -> upstream model. */
  models?: Record<string, string>
  /** Prices per 1M tokens, for usage reports. */
  prices?: {input?: number; output?: number; cachedInput?: number}
  /** Where it came from: added by a user, or a default derived from settings/env/--sim. */
  origin?: 'user' | 'env' | 'platform' | 'sim'
}

export interface PolicyTarget {
  provider: string
  /** Model rewrite: the upstream model to ask for instead of the requested one. */
  model?: string
}

export interface BreakerSettings {
  /** Consecutive failures that open the breaker. */
  failureThreshold: number
  /** Milliseconds an open breaker waits before letting one trial request through (half-open). */
  cooldownMs: number
}

export interface TimeoutSettings {
  connectMs: number
  /** Until the upstream's response headers (and so its first byte). */
  firstByteMs: number
  /** Longest silence while a body streams. */
  idleMs: number
}

export interface PolicyConfig {
  id: string
  description?: string
  /** Entrance family -> ordered targets. A target's provider must be of the same family. */
  routes: Partial<Record<Family, PolicyTarget[]>>
  /** Try the next target when one fails before anything was sent to the client. */
  fallbacks: boolean
  breaker: BreakerSettings
  timeouts: TimeoutSettings
}

export const DEFAULT_BREAKER: BreakerSettings = {failureThreshold: 5, cooldownMs: 30_000}
export const DEFAULT_TIMEOUTS: TimeoutSettings = {connectMs: 5_000, firstByteMs: 120_000, idleMs: 300_000}
