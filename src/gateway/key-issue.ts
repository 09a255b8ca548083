/**
 * Issuing and revoking gateway keys in a state: the issue request's rules, the employee and agent
 * records it creates or updates, rotation (an agent's previous keys are revoked), and the 5 s
 * limit on issuing for the same agent again. The key format and its verification are `keys.ts`.
 */
import {createHash, randomBytes} from 'node:crypto'

import {ExitCode, GwError} from '../core/errors.js'
import type {AgentRecord, EmployeeRecord, GatewayState, KeyRecord} from '../store/state-schema.js'
import {AGENT_KINDS, agentKind} from './agent-kinds.js'
import {displayPrefix, generateKey, hashKey, ISSUE_INTERVAL_MS} from './keys.js'

/** A refused key issue: status 400, 404 or 429. */
export class IssueError extends GwError {
  constructor(
    readonly status: 400 | 429,
    code: string,
    message: string,
    readonly retryAfterSeconds?: number,
    hint?: string,
  ) {
    super(code, message, ExitCode.usage, {hint})
  }
}

/** The body of `POST /api/keys/issue` (spec 2.3). */
export interface IssueRequest {
  employeeName: string
  employeeContact: string
  employeeTeam?: string
  employeeRole?: string
  agentName: string
  agentType: string
  parentAgentId?: string
  parentAgentName?: string
  sourceTool?: string
  configPath?: string
  policyId?: string
  /**
   * A random token of one `agents enable` (gwctl's binding service), kept on disk until its binding
   * is written: the retry of an enable killed after its issue sends it again and is not held to the
   * 5 s limit, as the key issued then went to no one. Any other issue (no token, another token) is.
   */
  retryToken?: string
}

/** The success answer of `POST /api/keys/issue` (spec 2.3). */
export interface IssueResponse {
  employeeId: string
  agentId: string
  policyId: string
  keyId: string
  keyPrefix: string
  keyValue: string
  createdAt: number
}

const REQUIRED = ['employeeName', 'employeeContact', 'agentName', 'agentType'] as const
const OPTIONAL = [
  'employeeTeam',
  'employeeRole',
  'parentAgentId',
  'parentAgentName',
  'sourceTool',
  'configPath',
  'policyId',
  'retryToken',
] as const
const MAX_FIELD = 500
// C0/C1 controls, and the bidirectional marks, embeddings, overrides and isolates (U+202E makes a
// name read backwards in a terminal)
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/

/** Checks an issue body; throws {@link IssueError} 400 naming every missing or bad field. */
export function validateIssueRequest(body: unknown): IssueRequest {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new IssueError(400, 'invalid_body', 'The body must be a JSON object (spec 2.3).')
  }
  const b = body as Record<string, unknown>
  // a field of the wrong type is named with its type, not called missing
  const typeName = (v: unknown): string => {
    const t = Array.isArray(v) ? 'array' : typeof v
    return `${/^[aeiou]/.test(t) ? 'an' : 'a'} ${t}`
  }
  const mistyped = [...REQUIRED, ...OPTIONAL].filter(
    (f) => b[f] !== undefined && b[f] !== null && typeof b[f] !== 'string',
  )
  if (mistyped.length > 0) {
    throw new IssueError(
      400,
      'invalid_fields',
      `Fields must be strings: ${mistyped.map((f) => `${f} is ${typeName(b[f])}`).join(', ')}.`,
    )
  }
  const missing = REQUIRED.filter((f) => typeof b[f] !== 'string' || (b[f] as string).trim() === '')
  if (missing.length > 0) {
    throw new IssueError(
      400,
      'missing_fields',
      `Missing required field${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}.`,
    )
  }
  const tooLong = [...REQUIRED, ...OPTIONAL].filter(
    (f) => typeof b[f] === 'string' && (b[f] as string).length > MAX_FIELD,
  )
  if (tooLong.length > 0) {
    throw new IssueError(
      400,
      'invalid_fields',
      `Fields must be strings of at most ${MAX_FIELD} characters: ${tooLong.join(', ')}.`,
    )
  }
  // Names are printed in terminals (agents list, dashboard): an escape sequence must not get there.
  const control = [...REQUIRED, ...OPTIONAL].filter(
    (f) => typeof b[f] === 'string' && CONTROL_CHARACTERS.test(b[f] as string),
  )
  if (control.length > 0) {
    throw new IssueError(
      400,
      'invalid_fields',
      `Fields must not contain control characters (line breaks, escape sequences, bidirectional overrides): ${control.join(', ')}.`,
    )
  }
  const input: Record<string, string> = {}
  for (const f of [...REQUIRED, ...OPTIONAL]) {
    const v = b[f]
    if (typeof v === 'string' && v.trim() !== '') input[f] = v.trim()
  }
  const kind = agentKind(input.agentType)
  if (!kind) {
    throw new IssueError(
      400,
      'unknown_agent_type',
      `Unknown agentType "${input.agentType}". Known kinds: ${AGENT_KINDS.map((k) => k.type).join(', ')}.`,
    )
  }
  if (kind.subagent && !input.parentAgentId) {
    throw new IssueError(
      400,
      'missing_fields',
      `Missing required field: parentAgentId (agentType ${kind.type} is a sub-agent kind).`,
    )
  }
  return input as unknown as IssueRequest
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

function newId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`
}

/** What an issue changed, for the daemon's index. */
export interface IssueResult {
  response: IssueResponse
  agent: AgentRecord
  key: KeyRecord
}

/**
 * Issues a key in `state` (changing it in place): creates or updates the employee (by contact)
 * and the agent (by employee, kind, name and parent), revokes the agent's previous keys, and
 * records the new key's hash. Refuses a second issue for the same agent within 5 s (429).
 * The caller saves the state before answering.
 */
export function issueKey(state: GatewayState, input: IssueRequest, nowMs = Date.now()): IssueResult {
  const now = Math.floor(nowMs / 1000)
  const kind = agentKind(input.agentType)
  if (!kind) throw new IssueError(400, 'unknown_agent_type', `Unknown agentType "${input.agentType}".`)
  const policyId = input.policyId ?? kind.defaultPolicy
  if (!state.policies.some((p) => p.id === policyId)) {
    throw new IssueError(
      400,
      'unknown_policy',
      `Unknown policyId "${policyId}". Known policies: ${state.policies.map((p) => p.id).join(', ')}.`,
    )
  }
  let parent: AgentRecord | undefined
  if (input.parentAgentId) {
    parent = state.agents.find((a) => a.id === input.parentAgentId)
    if (!parent)
      throw new IssueError(
        400,
        'unknown_parent',
        `parentAgentId "${input.parentAgentId}" is not a known agent.`,
      )
  }

  const contact = input.employeeContact.toLowerCase()
  let employee = state.employees.find((e) => e.contact.toLowerCase() === contact)
  let agent = employee
    ? state.agents.find(
        (a) =>
          a.employeeId === employee!.id &&
          a.type === input.agentType &&
          a.name === input.agentName &&
          (a.parentAgentId ?? '') === (input.parentAgentId ?? ''),
      )
    : undefined

  const tokenHash = input.retryToken === undefined ? undefined : sha256(input.retryToken)
  const retry = tokenHash !== undefined && agent?.lastIssueToken === tokenHash
  if (!retry && agent?.lastIssuedAtMs !== undefined && nowMs - agent.lastIssuedAtMs < ISSUE_INTERVAL_MS) {
    const wait = Math.max(1, Math.ceil((agent.lastIssuedAtMs + ISSUE_INTERVAL_MS - nowMs) / 1000))
    throw new IssueError(
      429,
      'rate_limited',
      `A key was issued for this agent less than 5 seconds ago; retry in ${wait} s.`,
      wait,
      'The key issued then is the live one; issuing again after the wait rotates it (one key per agent per 5 s).',
    )
  }

  if (employee) {
    employee.name = input.employeeName
    if (input.employeeTeam !== undefined) employee.team = input.employeeTeam
    if (input.employeeRole !== undefined) employee.role = input.employeeRole
    employee.updatedAt = now
  } else {
    employee = {
      id: newId('emp'),
      name: input.employeeName,
      contact: input.employeeContact,
      ...(input.employeeTeam === undefined ? {} : {team: input.employeeTeam}),
      ...(input.employeeRole === undefined ? {} : {role: input.employeeRole}),
      createdAt: now,
      updatedAt: now,
    } satisfies EmployeeRecord
    state.employees.push(employee)
  }

  const details = {
    ...(input.parentAgentId === undefined ? {} : {parentAgentId: input.parentAgentId}),
    ...(input.parentAgentName === undefined
      ? parent
        ? {parentAgentName: parent.name}
        : {}
      : {parentAgentName: input.parentAgentName}),
    ...(input.sourceTool === undefined ? {} : {sourceTool: input.sourceTool}),
    ...(input.configPath === undefined ? {} : {configPath: input.configPath}),
  }
  if (agent) {
    Object.assign(agent, details, {policyId, updatedAt: now, lastIssuedAtMs: nowMs})
    if (tokenHash === undefined) delete agent.lastIssueToken
    else agent.lastIssueToken = tokenHash
  } else {
    agent = {
      id: newId('agt'),
      name: input.agentName,
      type: input.agentType,
      employeeId: employee.id,
      ...details,
      policyId,
      createdAt: now,
      updatedAt: now,
      lastIssuedAtMs: nowMs,
      ...(tokenHash === undefined ? {} : {lastIssueToken: tokenHash}),
    } satisfies AgentRecord
    state.agents.push(agent)
  }

  for (const old of state.keys) {
    if (old.agentId === agent.id && old.revokedAt === undefined) old.revokedAt = now
  }
  const value = generateKey()
  const key: KeyRecord = {
    id: newId('key'),
    agentId: agent.id,
    hash: hashKey(state.secret, value),
    prefix: displayPrefix(value),
    createdAt: now,
  }
  state.keys.push(key)
  return {
    response: {
      employeeId: employee.id,
      agentId: agent.id,
      policyId,
      keyId: key.id,
      keyPrefix: key.prefix,
      keyValue: value,
      createdAt: now,
    },
    agent,
    key,
  }
}

/** Revokes the key `keyId` in `state` (in place); revoking a revoked key is a no-op success. */
export function revokeKeyInState(
  state: GatewayState,
  keyId: unknown,
  nowMs = Date.now(),
): {ok: true; key: KeyRecord} | {ok: false; status: 400 | 404; code: string; message: string} {
  if (typeof keyId !== 'string' || keyId === '')
    return {ok: false, status: 400, code: 'missing_fields', message: 'Missing required field: keyId.'}
  const key = state.keys.find((k) => k.id === keyId)
  if (!key) return {ok: false, status: 404, code: 'not_found', message: `No key with id "${keyId}".`}
  key.revokedAt ??= Math.floor(nowMs / 1000)
  return {ok: true, key}
}

/**
 * Removes the agent `agentId` from `state` (in place), for `POST /api/agents/remove` and `gwctl
 * agents remove`. Refused (409) while a coding agent's config is bound to it (`gwctl agents
 * disable` first: its config would hold a key of nobody) and while it has sub-agents (they
 * would point at a parent that no longer exists). Its keys are revoked, not deleted: `key list`
 * keeps their history. The employee stays.
 */
export function removeAgentInState(
  state: GatewayState,
  agentId: unknown,
  nowMs = Date.now(),
):
  | {ok: true; agent: AgentRecord; revokedKeyIds: string[]}
  | {ok: false; status: 400 | 404 | 409; code: string; message: string} {
  if (typeof agentId !== 'string' || agentId === '')
    return {ok: false, status: 400, code: 'missing_fields', message: 'Missing required field: agentId.'}
  const agent = state.agents.find((a) => a.id === agentId)
  if (!agent) return {ok: false, status: 404, code: 'not_found', message: `No agent with id "${agentId}".`}
  const binding = state.bindings?.find((b) => b.agentId === agentId)
  if (binding) {
    return {
      ok: false,
      status: 409,
      code: 'agent_bound',
      message: `Agent "${agent.name}" is bound: ${binding.tool}'s config points at the gateway with its key. Undo the binding first (gwctl agents disable ${binding.tool}).`,
    }
  }
  const children = state.agents.filter((a) => a.parentAgentId === agentId)
  if (children.length > 0) {
    return {
      ok: false,
      status: 409,
      code: 'agent_has_subagents',
      message: `Agent "${agent.name}" has sub-agents (${children.map((c) => `${c.name} ${c.id}`).join(', ')}): remove them first.`,
    }
  }
  const now = Math.floor(nowMs / 1000)
  const revokedKeyIds: string[] = []
  for (const key of state.keys) {
    if (key.agentId !== agentId || key.revokedAt !== undefined) continue
    key.revokedAt = now
    revokedKeyIds.push(key.id)
  }
  state.agents.splice(state.agents.indexOf(agent), 1) // in place: callers may pass a shallow copy
  return {ok: true, agent, revokedKeyIds}
}
