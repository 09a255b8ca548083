/**
 * The key lifecycle on the command line: `gwctl key list`, `gwctl key revoke AGENT|PREFIX` and
 * `gwctl agents remove AGENT`. Each goes through the running gateway (`GET /api/keys`, `POST
 * /api/keys/revoke`, `POST /api/agents/remove`: effective at once, the same rules as the API), or,
 * when it is stopped, through the state file under the cross-process lock with the very same
 * functions the daemon uses (`revokeKeyInState`, `removeAgentInState`).
 */
import type {GwError} from '../core/errors.js'
import {NotFoundError, UsageError} from '../core/errors.js'
import {removeAgentInState} from '../gateway/key-issue.js'
import {KEY_PREFIX, KEY_PREFIX_ALT} from '../gateway/keys.js'
import {runningDaemon} from '../gateway/pidfile.js'
import type {KeyView} from '../gateway/views.js'
import {keyViews} from '../gateway/views.js'
import {homeFile} from '../store/paths.js'
import type {AgentRecord, BindingRecord, GatewayState} from '../store/state-schema.js'
import {StateStore, withState} from '../store/state.js'
import {daemonClient} from './gateway.js'
import {fromDaemonError, revokeGatewayKey} from './gateway-keys.js'

async function readState(): Promise<GatewayState> {
  return (await StateStore.open(homeFile('state'))).data
}

/** Every key (newest first): from the running gateway, else from the state file. */
async function allKeys(signal?: AbortSignal): Promise<KeyView[]> {
  const running = runningDaemon()
  if (running) {
    try {
      const res = await (
        await daemonClient(running.port)
      ).request<{keys: KeyView[]}>('GET', '/api/keys', {signal})
      return res.body.keys
    } catch (error) {
      const gw = fromDaemonError(error)
      if (gw.exitCode !== 6) throw gw
      // the gateway went away meanwhile: the state file is the owner again
    }
  }
  return keyViews(await readState())
}

/**
 * The agents `name` stands for: its id, else every agent of that name. Several of one name are
 * refused with their ids (an agent is its name plus its employee).
 */
function findAgent(state: GatewayState, name: string, command: string): AgentRecord | undefined {
  const byId = state.agents.find((a) => a.id === name)
  if (byId) return byId
  const named = state.agents.filter((a) => a.name === name)
  if (named.length > 1) {
    const employees = new Map(state.employees.map((e) => [e.id, e.contact]))
    throw new UsageError(
      `Several agents are named "${name}": ${named.map((a) => `${a.id} (${employees.get(a.employeeId) ?? 'no employee'})`).join(', ')}.`,
      {code: 'ambiguous_agent', hint: `Name one by its id, e.g. \`gwctl ${command} ${named[0].id}\`.`},
    )
  }
  return named[0]
}

export interface ListKeysOptions {
  /** Only the keys of this agent (name or id). */
  agent?: string
  signal?: AbortSignal
}

/** `gwctl key list`: every key, newest first, or those of one agent. */
export async function listKeys(options: ListKeysOptions = {}): Promise<KeyView[]> {
  const keys = await allKeys(options.signal)
  if (options.agent === undefined) return keys
  const agent = options.agent
  const mine = keys.filter((k) => k.agentId === agent || k.agentName === agent)
  if (mine.length === 0) {
    const state = await readState()
    if (!state.agents.some((a) => a.id === agent || a.name === agent)) {
      throw new NotFoundError(`No agent named "${agent}".`, {
        code: 'unknown_agent',
        hint: '`gwctl agents list` shows the agents holding keys.',
      })
    }
  }
  return mine
}

export interface RevokeKeyResult {
  /** Keys revoked by this call. */
  revoked: KeyView[]
  /** Keys named that were revoked before (nothing to do). */
  alreadyRevoked: KeyView[]
  /** A coding agent whose config holds a key revoked here: it now gets 401 until rebound. */
  boundTool: string | null
}

/** What a prefix as typed or as listed (`gw-AbC123…`) compares on: no ellipsis, `gw-` spelling. */
function normalPrefix(text: string): string {
  let t = text.replace(/(…|\.\.\.)$/, '')
  if (t.startsWith(KEY_PREFIX_ALT)) t = KEY_PREFIX + t.slice(KEY_PREFIX_ALT.length)
  return t
}

/**
 * `gwctl key revoke TARGET`: TARGET is a key id (`key_…`), a key prefix as `key list` shows it
 * (`gw-AbC123…`, at least `gw-` and 4 characters), or an agent's name or id (its active key).
 * Revoking a revoked key is a success that changes nothing, as in the API.
 */
export async function revokeKey(
  target: string,
  options: {signal?: AbortSignal} = {},
): Promise<RevokeKeyResult> {
  const keys = await allKeys(options.signal)
  const state = await readState()
  let chosen: KeyView[]
  const text = target.trim()
  if (text === '') throw new UsageError('Name a key (its prefix or id) or an agent.', {code: 'missing_key'})
  const asPrefix = normalPrefix(text)
  if (asPrefix.startsWith(KEY_PREFIX)) {
    if (asPrefix.length < KEY_PREFIX.length + 4) {
      throw new UsageError(
        `The key prefix "${text}" is too short: give at least 4 characters after "${KEY_PREFIX}".`,
        {
          code: 'prefix_too_short',
          hint: 'Copy it from `gwctl key list`.',
        },
      )
    }
    // a listed prefix is 6 characters; a longer text (the whole key pasted) matches on those
    chosen = keys.filter((k) => {
      const p = normalPrefix(k.keyPrefix)
      return p.startsWith(asPrefix) || asPrefix.startsWith(p)
    })
    if (chosen.length === 0) {
      throw new NotFoundError(`No key starts with "${text}".`, {
        code: 'unknown_key',
        hint: '`gwctl key list` shows every key with its prefix.',
      })
    }
    const active = chosen.filter((k) => k.status === 'active')
    if (chosen.length > 1 && active.length !== 1) {
      throw new UsageError(
        `The prefix "${text}" matches ${chosen.length} keys: ${chosen.map((k) => `${k.keyId} (${k.agentName ?? k.agentId}, ${k.status})`).join(', ')}.`,
        {code: 'ambiguous_key', hint: 'Give a longer prefix, or the key id.'},
      )
    }
    if (chosen.length > 1) chosen = active
  } else if (/^key_/.test(text)) {
    chosen = keys.filter((k) => k.keyId === text)
    if (chosen.length === 0) {
      throw new NotFoundError(`No key with id "${text}".`, {
        code: 'unknown_key',
        hint: '`gwctl key list --json` shows every key with its id.',
      })
    }
  } else {
    const agent = findAgent(state, text, 'key revoke')
    if (!agent) {
      throw new NotFoundError(`No agent or key named "${text}".`, {
        code: 'unknown_agent',
        hint: `Give an agent's name or id (\`gwctl agents list\`) or a key prefix such as ${KEY_PREFIX}AbC123… (\`gwctl key list\`).`,
      })
    }
    chosen = keys.filter((k) => k.agentId === agent.id)
    const active = chosen.filter((k) => k.status === 'active')
    chosen = active.length > 0 ? active : chosen.slice(0, 1)
    if (chosen.length === 0) {
      return {revoked: [], alreadyRevoked: [], boundTool: null}
    }
  }
  const revoked: KeyView[] = []
  const alreadyRevoked: KeyView[] = []
  for (const key of chosen) {
    if (key.status === 'revoked') {
      alreadyRevoked.push(key)
      continue
    }
    await revokeGatewayKey(key.keyId, {signal: options.signal})
    revoked.push({...key, status: 'revoked', revokedAt: Math.floor(Date.now() / 1000)})
  }
  const binding = (state.bindings ?? []).find((b) => revoked.some((k) => k.keyId === b.keyId))
  return {revoked, alreadyRevoked, boundTool: binding?.tool ?? null}
}

export interface RemoveAgentOptions {
  /** Undo the agent's binding first (`gwctl agents disable`), instead of refusing. */
  disable?: boolean
  signal?: AbortSignal
  env?: NodeJS.ProcessEnv
}

export interface RemoveAgentResult {
  agentId: string
  name: string
  revokedKeyIds: string[]
  /** The tool whose binding was undone first (`--disable`), or null. */
  unbound: string | null
}

function bindingOf(state: GatewayState, agentId: string): BindingRecord | undefined {
  return state.bindings?.find((b) => b.agentId === agentId)
}

/**
 * `gwctl agents remove AGENT`: removes an agent (by name or id) and revokes its keys. Refused
 * while a coding agent's config is bound to it, unless `disable` (which undoes the binding first,
 * as `gwctl agents disable` does), and while it has sub-agents.
 */
export async function removeAgent(
  name: string,
  options: RemoveAgentOptions = {},
): Promise<RemoveAgentResult> {
  let state = await readState()
  const agent = findAgent(state, name, 'agents remove')
  if (!agent) {
    throw new NotFoundError(`No agent named "${name}".`, {
      code: 'unknown_agent',
      hint: '`gwctl agents list` shows the agents holding keys (a coding agent found on this machine but never enabled holds none).',
    })
  }
  let unbound: string | null = null
  const binding = bindingOf(state, agent.id)
  if (binding) {
    if (!options.disable) {
      throw new UsageError(
        `Agent "${agent.name}" is bound: ${binding.tool}'s config points at the gateway with its key, and would be left with a key of nobody.`,
        {
          code: 'agent_bound',
          hint: `Pass --disable to undo the binding first (as \`gwctl agents disable ${binding.tool}\` does), then remove it.`,
        },
      )
    }
    // lazily: the binders (jsonc-parser, smol-toml) are for this path only
    const {disableAgents} = await import('./agent-binding.js')
    await disableAgents({agent: binding.tool, signal: options.signal, env: options.env})
    unbound = binding.tool
    state = await readState()
  }
  const running = runningDaemon()
  if (running) {
    try {
      const res = await (
        await daemonClient(running.port)
      ).request<{agentId: string; revokedKeyIds: string[]}>('POST', '/api/agents/remove', {
        body: {agentId: agent.id},
        signal: options.signal,
      })
      return {agentId: agent.id, name: agent.name, revokedKeyIds: res.body.revokedKeyIds, unbound}
    } catch (error) {
      const gw = fromDaemonError(error)
      if (gw.exitCode !== 6) throw refusal(gw)
    }
  }
  const result = await withState((store) => removeAgentInState(store.data, agent.id), homeFile('state'))
  if (!result.ok) throw refusal(new UsageError(result.message, {code: result.code}))
  return {agentId: agent.id, name: agent.name, revokedKeyIds: result.revokedKeyIds, unbound}
}

/** A refusal of the rules, with what to do next. */
function refusal(error: GwError): GwError {
  if (error.code === 'not_found') return new NotFoundError(error.message, {code: 'unknown_agent'})
  if (error.code === 'agent_has_subagents')
    return new UsageError(error.message, {
      code: error.code,
      hint: 'e.g. `gwctl agents remove <sub-agent id>` for each.',
    })
  if (error.code === 'agent_bound')
    return new UsageError(error.message, {
      code: error.code,
      hint: 'Pass --disable to undo the binding first.',
    })
  return error
}
