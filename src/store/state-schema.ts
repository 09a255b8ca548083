/**
 * What the gateway state file holds: its records, the seeded initial state, its JSON Schema and
 * validator (generated at build time, see {@link validateState}), and the upgrade of older files.
 * The file itself (atomic writes, the checked stamp) is state.ts, which re-exports all of this.
 */
import type {randomBytes as RandomBytes} from 'node:crypto'
import {createRequire} from 'node:module'
import type {Ajv as AjvClass, ErrorObject} from 'ajv'

import {describeSchemaErrors} from '../core/schema-errors.js'
import type {Family, PolicyConfig, ProviderConfig} from './schema.js'
import {DEFAULT_BREAKER, DEFAULT_TIMEOUTS, FAMILIES, POLICY_SCHEMA, PROVIDER_SCHEMA} from './schema.js'

/** The human owner of agents. */
export interface EmployeeRecord {
  id: string
  name: string
  /** Contact, e-mail recommended; the natural key of an employee (compared case-insensitively). */
  contact: string
  team?: string
  role?: string
  createdAt: number
  updatedAt: number
}

/** An agent known to the gateway. Times are Unix seconds unless the name says otherwise. */
export interface AgentRecord {
  id: string
  name: string
  type: string
  employeeId: string
  parentAgentId?: string
  parentAgentName?: string
  sourceTool?: string
  configPath?: string
  policyId: string
  createdAt: number
  updatedAt: number
  /** Unix milliseconds of the last key issue (the 5 s issue limit). */
  lastIssuedAtMs?: number
  /** SHA-256 hex of the `retryToken` of the last issue, if it had one (the retry of an enable). */
  lastIssueToken?: string
  lastSeenAt?: number
  /** Entrance family of the agent's latest authenticated request. */
  lastEntrance?: Family
}

/** A key: never the key itself, only its HMAC under the install secret and a display prefix. */
export interface KeyRecord {
  id: string
  agentId: string
  /** HMAC-SHA256(secret, key), hex: the lookup index. */
  hash: string
  /** First characters of the key followed by an ellipsis. */
  prefix: string
  createdAt: number
  revokedAt?: number
  lastUsedAt?: number
}

/**
 * One config file that `gwctl agents enable` changed. `originalHash` is the SHA-256 of the file's
 * bytes before gwctl first touched it ('absent': the file did not exist); the bytes themselves are
 * in the 0600 backup `<GWCTL_HOME>/bindings/<originalHash>.orig` (services/binding-originals.ts),
 * never in this file, as they may hold vendor keys. States written before that have `original`
 * instead (the bytes in base64, null: did not exist); the first load that sees one moves it into a
 * backup (store/binding-backups.ts).
 * Hashes are SHA-256 hex of whole files; the key gwctl wrote is never stored, only the hash of the
 * file that holds it.
 */
export interface BindingFileRecord {
  path: string
  originalHash?: string
  /** Legacy (see above). */
  original?: string | null
  /** Hash of the bytes gwctl wrote last; null while the first write is under way. */
  writtenHash: string | null
  /** A write in progress: the hash of the bytes about to be written ('absent': a delete). */
  pendingHash?: string
  /**
   * The file's mode before gwctl first touched it (absent: gwctl created the file, or the binding
   * predates this field). A file that holds the gateway key is 0600 while bound; disable puts this
   * mode back.
   */
  mode?: number
}

/** A route binding: an agent's own config points at this gateway with this agent's key. */
export interface BindingRecord {
  /** The discovered tool: claude-code, codex or gemini-cli. */
  tool: string
  agentId: string
  keyId: string
  port: number
  /** bound, or a change under way (a crash left it: the next enable/disable reconciles). */
  phase: 'binding' | 'bound' | 'unbinding'
  files: BindingFileRecord[]
  createdAt: number
  updatedAt: number
}

export type BudgetScope = 'agent' | 'key' | 'policy' | 'project'
export type BudgetPeriod = 'daily' | 'weekly' | 'monthly'

/**
 * A spending cap of requests through the gateway (`gwctl budgets`; src/gateway/budgets.ts). One
 * per scope, target, period and unit. Written by the CLI under the lock; the daemon keeps the
 * copy on disk and reloads it when told.
 */
export interface BudgetRecord {
  id: string
  scope: BudgetScope
  /** Agent id, key display prefix, policy id or project name. */
  target: string
  period: BudgetPeriod
  /** usd: estimated cost as `gwctl usage` prices it; tokens: input + output + cache. */
  unit: 'usd' | 'tokens'
  limit: number
  onExceed: {action: 'block'} | {action: 'fallback'; provider: string; model?: string}
  createdAt: number
  updatedAt: number
}

export interface GatewayState {
  version: 1
  /** Per-install HMAC secret (hex); the file is 0600. */
  secret: string
  employees: EmployeeRecord[]
  agents: AgentRecord[]
  keys: KeyRecord[]
  policies: PolicyConfig[]
  providers: ProviderConfig[]
  /** Route bindings of `gwctl agents enable` (absent in files written before them). */
  bindings?: BindingRecord[]
  /** Budgets of `gwctl budgets` (absent in files written before them). */
  budgets?: BudgetRecord[]
}

/** The main coding-agent kind whose agents default to `<kind>_default` (see agent-kinds). */
export const SEEDED_POLICY_IDS = ['default', 'claude_code_default'] as const

function seedPolicy(id: string, description: string): PolicyConfig {
  return {
    id,
    description,
    routes: {},
    fallbacks: true,
    breaker: {...DEFAULT_BREAKER},
    timeouts: {...DEFAULT_TIMEOUTS},
  }
}

/** A fresh state: a new secret, the seeded policies with empty routes, nothing else. */
export function initialState(): GatewayState {
  return {
    version: 1,
    // node:crypto loaded only to seed a new state: commands that read one never need it
    secret: (createRequire(import.meta.url)('node:crypto') as {randomBytes: typeof RandomBytes})
      .randomBytes(32)
      .toString('hex'),
    employees: [],
    agents: [],
    keys: [],
    policies: [
      seedPolicy('default', 'Default policy of every agent kind without its own.'),
      seedPolicy('claude_code_default', 'Default policy of claude_code agents.'),
    ],
    providers: [],
  }
}

const optionalString = {type: 'string'}
const unixSeconds = {type: 'integer', minimum: 0}

function withoutId<T extends {$id: string}>(schema: T): Omit<T, '$id'> {
  const {$id: _id, ...rest} = schema
  return rest
}

/**
 * JSON Schema of the state file. Policies and providers use the router's schemas
 * (`POLICY_SCHEMA`, `PROVIDER_SCHEMA`: one definition for the state, the CLI and the daemon).
 */
export const STATE_SCHEMA = {
  type: 'object',
  required: ['version', 'secret', 'employees', 'agents', 'keys', 'policies', 'providers'],
  properties: {
    version: {const: 1},
    secret: {type: 'string', pattern: '^[0-9a-f]{64}$'},
    employees: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'name', 'contact', 'createdAt', 'updatedAt'],
        properties: {
          id: {type: 'string', minLength: 1},
          name: {type: 'string', minLength: 1},
          contact: {type: 'string', minLength: 1},
          team: optionalString,
          role: optionalString,
          createdAt: unixSeconds,
          updatedAt: unixSeconds,
        },
      },
    },
    agents: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'name', 'type', 'employeeId', 'policyId', 'createdAt', 'updatedAt'],
        properties: {
          id: {type: 'string', minLength: 1},
          name: {type: 'string', minLength: 1},
          type: {type: 'string', minLength: 1},
          employeeId: {type: 'string', minLength: 1},
          parentAgentId: optionalString,
          parentAgentName: optionalString,
          sourceTool: optionalString,
          configPath: optionalString,
          policyId: {type: 'string', minLength: 1},
          createdAt: unixSeconds,
          updatedAt: unixSeconds,
          lastIssuedAtMs: {type: 'integer', minimum: 0},
          lastIssueToken: {type: 'string', pattern: '^[0-9a-f]{64}$'},
          lastSeenAt: unixSeconds,
          lastEntrance: {enum: [...FAMILIES]},
        },
      },
    },
    keys: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'agentId', 'hash', 'prefix', 'createdAt'],
        properties: {
          id: {type: 'string', minLength: 1},
          agentId: {type: 'string', minLength: 1},
          hash: {type: 'string', pattern: '^[0-9a-f]{64}$'},
          prefix: {type: 'string', minLength: 1},
          createdAt: unixSeconds,
          revokedAt: unixSeconds,
          lastUsedAt: unixSeconds,
        },
      },
    },
    policies: {type: 'array', items: withoutId(POLICY_SCHEMA)},
    providers: {type: 'array', items: withoutId(PROVIDER_SCHEMA)},
    bindings: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['tool', 'agentId', 'keyId', 'port', 'phase', 'files', 'createdAt', 'updatedAt'],
        properties: {
          tool: {type: 'string', minLength: 1},
          agentId: {type: 'string', minLength: 1},
          keyId: {type: 'string', minLength: 1},
          port: {type: 'integer', minimum: 1, maximum: 65535},
          phase: {enum: ['binding', 'bound', 'unbinding']},
          files: {
            type: 'array',
            items: {
              type: 'object',
              additionalProperties: false,
              required: ['path', 'writtenHash'],
              anyOf: [{required: ['originalHash']}, {required: ['original']}],
              properties: {
                path: {type: 'string', minLength: 1},
                originalHash: {type: 'string', minLength: 1},
                original: {type: ['string', 'null']},
                writtenHash: {type: ['string', 'null']},
                pendingHash: {type: 'string'},
                mode: {type: 'integer', minimum: 0, maximum: 4095},
              },
            },
          },
          createdAt: unixSeconds,
          updatedAt: unixSeconds,
        },
      },
    },
    budgets: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'scope', 'target', 'period', 'unit', 'limit', 'onExceed', 'createdAt', 'updatedAt'],
        properties: {
          id: {type: 'string', pattern: '^bgt_[0-9a-f]{8,}$'},
          scope: {enum: ['agent', 'key', 'policy', 'project']},
          target: {type: 'string', minLength: 1, maxLength: 200},
          period: {enum: ['daily', 'weekly', 'monthly']},
          unit: {enum: ['usd', 'tokens']},
          limit: {type: 'number', exclusiveMinimum: 0, maximum: 1e13},
          onExceed: {
            type: 'object',
            additionalProperties: false,
            required: ['action'],
            properties: {
              action: {enum: ['block', 'fallback']},
              provider: {type: 'string', minLength: 1},
              model: {type: 'string', minLength: 1},
            },
            if: {properties: {action: {const: 'fallback'}}},
            then: {required: ['provider']},
            else: {not: {anyOf: [{required: ['provider']}, {required: ['model']}]}},
          },
          createdAt: unixSeconds,
          updatedAt: unixSeconds,
        },
      },
    },
  },
} as const

/** A compiled validator: true when valid, else its `errors` say why. */
interface StateValidator {
  (data: unknown): boolean
  errors?: ErrorObject[] | null
}

let validator: StateValidator | undefined

/**
 * The state validator. `npm run build` writes it as ajv standalone code
 * (`dist/store/state-validator.cjs`, by `scripts/gen-validators.js`), so a command that reads the
 * state neither loads ajv's compiler nor compiles the schema (about 40 ms of every `status` and
 * `logs`). Run from the sources (tests), where there is no generated file, it is compiled here.
 */
function stateValidator(): StateValidator {
  const require = createRequire(import.meta.url)
  try {
    // named from one folder below the root of the build (dist/store/, or dist/chunks/ where the
    // bundle puts this module; src/store/ in tests, where there is none)
    return require('../store/state-validator.cjs') as StateValidator
  } catch (error) {
    const missing =
      (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' &&
      String((error as Error).message).includes('state-validator.cjs')
    if (!missing) throw error
  }
  const {Ajv} = require('ajv') as {Ajv: typeof AjvClass}
  return new Ajv(STATE_VALIDATOR_OPTIONS).compile(STATE_SCHEMA)
}

/** The ajv options of the state validator (the build's generator uses the same). */
export const STATE_VALIDATOR_OPTIONS = {allErrors: true, strict: false} as const

/**
 * Fills what older state files may lack, in place: policies without `fallbacks`, `breaker` or
 * `timeouts` get the defaults. Returns `data`.
 */
export function upgradeState(data: unknown): unknown {
  const policies = (data as {policies?: unknown} | null)?.policies
  if (!Array.isArray(policies)) return data
  for (const p of policies as Array<Record<string, unknown>>) {
    if (!p || typeof p !== 'object') continue
    p.fallbacks ??= true
    p.breaker ??= {...DEFAULT_BREAKER}
    p.timeouts ??= {...DEFAULT_TIMEOUTS}
  }
  return data
}

/** Validates a parsed state; returns a list of problems (empty when valid). */
export function validateState(data: unknown): string[] {
  validator ??= stateValidator()
  if (validator(data)) return []
  return describeSchemaErrors('state', validator.errors ?? [])
}
