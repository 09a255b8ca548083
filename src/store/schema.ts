/**
 * Shapes shared by the state store and the gateway: protocol families, providers, policies and
 * their JSON Schemas. They live below both (storage must not depend on the gateway); import them
 * from here. Change them here only.
 */

/** The four entrance/provider protocol families. */
export const FAMILIES = ['chat', 'responses', 'messages', 'gemini'] as const
export type Family = (typeof FAMILIES)[number]

/**
 * When Codex's namespaces, custom tools and `additional_tools` item go to a Responses provider as
 * plain functions (src/daemon/router/plain-tools.ts): `auto` (the default, never stored) to a
 * server on this machine or the local network from the first request and to any other once it
 * refused them; `always` from the first request whatever the host (a server that mangles them
 * without a word); `never` as they came, nothing learned (a local relay in front of OpenAI).
 */
export const PLAIN_TOOLS = ['auto', 'always', 'never'] as const
export type PlainTools = (typeof PLAIN_TOOLS)[number]

/** How a provider's credential is found: an environment variable name, or a secret kept 0600 in the state. */
export type Credential = {env: string} | {secret: string}

export interface ProviderConfig {
  /** Unique name, e.g. `anthropic`, `openai`, `platform`, `sim-messages`. */
  name: string
  family: Family
  /**
   * Upstream base URL as the vendor gives it for its SDK, e.g. `https://api.anthropic.com`,
   * `https://api.z.ai/api/paas/v4` (joined with a request's path: daemon/router/pools.ts `upstreamPath`).
   */
  baseUrl: string
  credential?: Credential
  /** Requested model -> upstream model. */
  models?: Record<string, string>
  /** Prices per 1M tokens, for usage reports. */
  prices?: {input?: number; output?: number; cachedInput?: number}
  /** Where it came from: added by a user, or a default derived from settings/env/--sim. */
  origin?: 'user' | 'env' | 'platform' | 'sim'
  /** A Responses provider's {@link PlainTools}; left out for `auto`. */
  plainTools?: PlainTools
}

export interface PolicyTarget {
  provider: string
  /** Model rewrite: the upstream model to ask for instead of the requested one. */
  model?: string
  /**
   * The provider may speak another family than the route's: requests and answers are translated
   * (src/protocols). Without it a cross-family target is refused, as the spec says.
   */
  translate?: boolean
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

const credentialSchema = {
  oneOf: [
    {
      type: 'object',
      required: ['env'],
      additionalProperties: false,
      properties: {env: {type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$'}},
    },
    {
      type: 'object',
      required: ['secret'],
      additionalProperties: false,
      properties: {secret: {type: 'string', minLength: 1}},
    },
  ],
} as const

/** JSON Schema of {@link ProviderConfig}. */
export const PROVIDER_SCHEMA = {
  $id: 'gwctl/provider',
  type: 'object',
  required: ['name', 'family', 'baseUrl'],
  additionalProperties: false,
  properties: {
    name: {type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'},
    family: {enum: [...FAMILIES]},
    baseUrl: {type: 'string', pattern: '^https?://[^\\s/?#]+(/[^\\s?#]*)?$'},
    credential: credentialSchema,
    models: {type: 'object', additionalProperties: {type: 'string', minLength: 1}},
    prices: {
      type: 'object',
      additionalProperties: false,
      properties: {
        input: {type: 'number', minimum: 0},
        output: {type: 'number', minimum: 0},
        cachedInput: {type: 'number', minimum: 0},
      },
    },
    origin: {enum: ['user', 'env', 'platform', 'sim']},
    plainTools: {enum: [...PLAIN_TOOLS]},
  },
} as const

const targetSchema = {
  type: 'object',
  required: ['provider'],
  additionalProperties: false,
  properties: {
    provider: {type: 'string', minLength: 1},
    model: {type: 'string', minLength: 1},
    translate: {type: 'boolean'},
  },
} as const

/** JSON Schema of {@link PolicyConfig}. */
export const POLICY_SCHEMA = {
  $id: 'gwctl/policy',
  type: 'object',
  required: ['id', 'routes', 'fallbacks', 'breaker', 'timeouts'],
  additionalProperties: false,
  properties: {
    id: {type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$'},
    description: {type: 'string'},
    routes: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(FAMILIES.map((f) => [f, {type: 'array', items: targetSchema}])),
    },
    fallbacks: {type: 'boolean'},
    breaker: {
      type: 'object',
      required: ['failureThreshold', 'cooldownMs'],
      additionalProperties: false,
      properties: {
        failureThreshold: {type: 'integer', minimum: 1},
        cooldownMs: {type: 'integer', minimum: 0},
      },
    },
    timeouts: {
      type: 'object',
      required: ['connectMs', 'firstByteMs', 'idleMs'],
      additionalProperties: false,
      properties: {
        connectMs: {type: 'integer', minimum: 1},
        firstByteMs: {type: 'integer', minimum: 1},
        idleMs: {type: 'integer', minimum: 1},
      },
    },
  },
} as const
