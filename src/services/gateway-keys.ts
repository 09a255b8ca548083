/**
 * Issuing gateway keys from the CLI: through the running daemon (the key works at once), or,
 * when it is stopped, straight into the state file under the cross-process lock.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import {ExitCode, GwError, GatewayDownError, UsageError} from '../core/errors.js'
import type {IssueRequest, IssueResponse} from '../gateway/key-issue.js'
import {issueKey, revokeKeyInState, validateIssueRequest} from '../gateway/key-issue.js'
import {ISSUE_INTERVAL_MS} from '../gateway/keys.js'
import {runningDaemon} from '../gateway/pidfile.js'
import type {AgentView} from '../gateway/views.js'
import {agentViews} from '../gateway/views.js'
import {homeFile} from '../store/paths.js'
import {getSetting} from '../store/settings.js'
import {StateStore, withState} from '../store/state.js'
import {daemonClient} from './gateway.js'

/** The input of `gwctl key issue`: employee fields may be left out (defaults apply). */
export type IssueKeyInput = Omit<IssueRequest, 'employeeName' | 'employeeContact'> & {
  employeeName?: string
  employeeContact?: string
}

async function gitConfig(name: string): Promise<string | undefined> {
  try {
    // execa is ~260 modules: loaded only when a default is really needed, not at start-up of
    // `agents list`, `logs`, `usage` and the other commands that share this service.
    const {execa} = await import('execa')
    const r = await execa('git', ['config', '--get', name], {reject: false, timeout: 3000, stdin: 'ignore'})
    const value = String(r.stdout).trim()
    return r.exitCode === 0 && value ? value : undefined
  } catch {
    return undefined
  }
}

/** Fills employee fields from settings `employee.*`, else git's user.name / user.email. */
export async function withEmployeeDefaults(input: IssueKeyInput): Promise<IssueRequest> {
  const employeeName = input.employeeName ?? getSetting('employee.name') ?? (await gitConfig('user.name'))
  const employeeContact =
    input.employeeContact ?? getSetting('employee.contact') ?? (await gitConfig('user.email'))
  const employeeTeam = input.employeeTeam ?? getSetting('employee.team')
  const employeeRole = input.employeeRole ?? getSetting('employee.role')
  const missing = [
    employeeName ? undefined : '--employee-name (or setting employee.name, or git user.name)',
    employeeContact ? undefined : '--employee-contact (or setting employee.contact, or git user.email)',
  ].filter(Boolean)
  if (missing.length > 0) {
    throw new UsageError(`Missing ${missing.join(' and ')}.`, {
      code: 'missing_fields',
      hint: 'e.g. `gwctl config set employee.name "Ada Lovelace"` and `gwctl config set employee.contact ada@example.com`.',
    })
  }
  const request: Record<string, string | undefined> = {
    ...input,
    employeeName,
    employeeContact,
    employeeTeam,
    employeeRole,
  }
  for (const k of Object.keys(request)) if (request[k] === undefined) delete request[k]
  return request as unknown as IssueRequest
}

/** Where the key was issued. */
export interface IssuedKey extends IssueResponse {
  via: 'daemon' | 'state-file'
  /** The agent existed: its previous key is revoked. */
  rotated: boolean
}

/**
 * What identifies an agent: its name and its employee (plus its parent, for sub-agents). Given
 * without `--employee-*`, a name that exists means that agent: its key is rotated, whoever the
 * default employee (settings, git) is. Several agents of that name, or one of another kind,
 * are refused with the choice, never silently duplicated.
 */
async function resolveAgentIdentity(
  input: IssueKeyInput,
  signal?: AbortSignal,
): Promise<{input: IssueKeyInput; existing: boolean}> {
  let agents: AgentView[]
  try {
    agents = await listAgents({signal})
  } catch (error) {
    // a daemon still starting cannot list yet; the issue below waits for it
    if ((error as GwError).exitCode === ExitCode.gatewayDown || (error as GwError).code === 'network')
      return {input, existing: false}
    throw error
  }
  const named = agents.filter(
    (a) => a.name === input.agentName && (a.parentAgentId ?? '') === (input.parentAgentId ?? ''),
  )
  if (named.length === 0) return {input, existing: false}
  const sameContact = (a: AgentView, contact: string | undefined): boolean =>
    contact !== undefined && a.employee?.contact.toLowerCase() === contact.toLowerCase()
  let chosen: AgentView | undefined
  if (input.employeeContact !== undefined) {
    chosen = named.find((a) => sameContact(a, input.employeeContact))
    if (!chosen) return {input, existing: false} // a new agent of another employee, as asked
  } else if (named.length === 1) {
    chosen = named[0]
  } else {
    const contact = getSetting('employee.contact') ?? (await gitConfig('user.email'))
    chosen = named.find((a) => sameContact(a, contact))
    if (!chosen) {
      throw new UsageError(
        `Several agents are named "${input.agentName}": ${named.map((a) => `${a.agentId} (${a.employee?.contact ?? 'no employee'})`).join(', ')}.`,
        {
          code: 'ambiguous_agent',
          hint: 'An agent is its name plus its employee: pass --employee-contact of the one whose key to rotate.',
        },
      )
    }
  }
  if (chosen.type !== input.agentType) {
    throw new UsageError(
      `Agent "${input.agentName}" of ${chosen.employee?.contact ?? 'no employee'} already exists as ${chosen.type} (${chosen.agentId}), not ${input.agentType}.`,
      {
        code: 'agent_exists',
        hint: `Pass --agent-type ${chosen.type} to rotate its key, or choose another --agent-name.`,
      },
    )
  }
  return {
    input: {
      ...input,
      employeeContact: chosen.employee?.contact ?? input.employeeContact,
      employeeName: input.employeeName ?? chosen.employee?.name,
    },
    existing: true,
  }
}

/**
 * Issues a key: via the daemon when it runs, else into the state file under the lock. With
 * `waitOutRateLimit`, an issue refused by the one-key-per-5-s rule (another issue for the agent
 * just now: a run or an enable killed right after its issue, or one right after another) is sent
 * again once that interval has passed, instead of failing with exit 2.
 */
export async function issueGatewayKey(
  input: IssueKeyInput,
  options: {signal?: AbortSignal; waitOutRateLimit?: boolean} = {},
): Promise<IssuedKey> {
  if (!options.waitOutRateLimit) return issueOnce(input, options)
  try {
    return await issueOnce(input, options)
  } catch (error) {
    if (!(error instanceof GwError) || error.code !== 'rate_limited') throw error
    await sleep(ISSUE_INTERVAL_MS + 100, undefined, {signal: options.signal})
    return issueOnce(input, options)
  }
}

async function issueOnce(input: IssueKeyInput, options: {signal?: AbortSignal}): Promise<IssuedKey> {
  const identity = await resolveAgentIdentity(input, options.signal)
  const request = await withEmployeeDefaults(identity.input)
  try {
    validateIssueRequest(request) // the same rules as the daemon, before anything is sent
  } catch (error) {
    throw withFlagHint(error)
  }
  for (let attempt = 0; ; attempt++) {
    const running = runningDaemon()
    if (running) {
      try {
        const res = await (
          await daemonClient(running.port)
        ).request<IssueResponse>('POST', '/api/keys/issue', {
          body: request,
          signal: options.signal,
        })
        return {...res.body, via: 'daemon', rotated: identity.existing}
      } catch (error) {
        // a daemon that is still starting answers in a moment
        if (attempt < 50 && (error as GwError).code === 'network') {
          await sleep(100, undefined, {signal: options.signal})
          continue
        }
        throw await notLoadedPolicy(fromDaemonError(error), request.policyId)
      }
    }
    const response = await withState((store) => {
      // A daemon that started meanwhile owns the keys: hand over to it.
      if (runningDaemon()) return undefined
      return issueKey(store.data, validateIssueRequest(request)).response
    }, homeFile('state')).catch(async (error: unknown) => {
      throw await notLoadedPolicy(error as GwError, request.policyId)
    })
    if (response) return {...response, via: 'state-file', rotated: identity.existing}
  }
}

/**
 * The running daemon loaded its policies at start. A policy written since (`policies route`, then
 * `agents enable --policy` or `key issue --policy-id`, the README's order) is unknown to it, and
 * its "Unknown policyId" contradicts `policies list`: say that the gateway has not loaded it yet
 * and what loads it. A policy that is nowhere gets a hint to the list of them.
 */
async function notLoadedPolicy(error: GwError, policyId: string | undefined): Promise<GwError> {
  if (!(error instanceof GwError) || error.code !== 'unknown_policy' || !policyId) return error
  let written: boolean
  try {
    const store = await StateStore.open(homeFile('state'))
    written = store.data.policies.some((p) => p.id === policyId)
  } catch {
    return error // an unreadable state file: the daemon's own words
  }
  // a policy that does not exist at all (a typo): where the policies are, and how one is made
  if (!written)
    return new UsageError(error.message, {
      code: error.code,
      hint: 'See `gwctl policies list`; `gwctl policies route ID --family FAMILY --target PROVIDER` creates one.',
    })
  return new UsageError(
    `The running gateway has not loaded policy "${policyId}" yet: it reads policies when it starts, and this one was written since.`,
    {code: 'policy_not_loaded', hint: 'Run `gwctl gateway restart`, then this command again.'},
  )
}

/** The flag of `gwctl key issue` that sets each field of the issue request. */
const FLAG_OF_FIELD: Record<string, string> = {
  agentName: '--agent-name',
  agentType: '--agent-type',
  parentAgentId: '--parent-agent-id',
  parentAgentName: '--parent-agent-name',
  policyId: '--policy-id',
  sourceTool: '--source-tool',
  configPath: '--config-path',
  employeeName: '--employee-name',
  employeeContact: '--employee-contact',
  employeeTeam: '--employee-team',
  employeeRole: '--employee-role',
}

/** The daemon's rules speak of request fields; a CLI user needs the flags that set them. */
function withFlagHint(error: unknown): unknown {
  if (!(error instanceof GwError) || error.hint) return error
  const flags = Object.entries(FLAG_OF_FIELD)
    .filter(([field]) => new RegExp(`\\b${field}\\b`).test(error.message.split('(')[0]))
    .map(([, flag]) => flag)
  if (flags.length === 0) return error
  const parent = flags.includes('--parent-agent-id') ? " (the parent's id is in `gwctl agents list`)" : ''
  return new UsageError(error.message, {code: error.code, hint: `Pass ${flags.join(', ')}${parent}.`})
}

/** Turns an error answer of the daemon into the CLI's error model. */
export function fromDaemonError(error: unknown): GwError {
  if (!(error instanceof GwError)) return error as GwError
  const status = error.details?.status as number | undefined
  const message = error.message.replace(/^The (platform|local gateway) answered \d+: /, '')
  if (status === 429) {
    return new UsageError(message, {
      code: 'rate_limited',
      hint: 'The key issued then is the live one; issuing again after the wait rotates it (one key per agent per 5 s).',
    })
  }
  if (status !== undefined && status >= 400 && status < 500) {
    return new UsageError(message, {code: String(error.details?.upstream_code ?? 'bad_request')})
  }
  if (error.code === 'network') {
    return new GatewayDownError(`The gateway does not answer: ${error.message}`, {
      hint: 'Check it with `gwctl gateway`; restart it with `gwctl gateway restart`.',
    })
  }
  return error
}

/** Agents from the running daemon, or from the state file when it is stopped. */
export async function listAgents(options: {signal?: AbortSignal} = {}): Promise<AgentView[]> {
  const running = runningDaemon()
  if (running) {
    try {
      const res = await (
        await daemonClient(running.port)
      ).request<{agents: AgentView[]}>('GET', '/api/agents', {
        signal: options.signal,
      })
      return res.body.agents
    } catch (error) {
      throw fromDaemonError(error)
    }
  }
  const store = await StateStore.open(homeFile('state'))
  return agentViews(store.data)
}

/**
 * The route a new key of the running gateway cannot use: its agent's policy has no provider for
 * the family its kind speaks (the gateway answers every request 503). Only a running gateway
 * knows its routes (the default ones are made at its start), so a key written to the state file
 * is not judged; a generic agent speaks whichever family it likes, so it is not either.
 */
export async function unroutedKey(
  issued: Pick<IssuedKey, 'agentId' | 'via'>,
  agentType: string,
  options: {signal?: AbortSignal} = {},
): Promise<{policyId: string; family: string} | undefined> {
  if (issued.via !== 'daemon' || agentType === 'generic_agent') return undefined
  try {
    const agent = (await listAgents(options)).find((a) => a.agentId === issued.agentId)
    if (!agent || agent.enabled) return undefined
    return {policyId: agent.policyId, family: agent.route.family}
  } catch {
    return undefined // the key is issued; this is only advice
  }
}

/** Revokes one key: via the daemon when it runs (effective at once), else in the state file. */
export async function revokeGatewayKey(keyId: string, options: {signal?: AbortSignal} = {}): Promise<void> {
  const running = runningDaemon()
  if (running) {
    try {
      await (
        await daemonClient(running.port)
      ).request('POST', '/api/keys/revoke', {
        body: {keyId},
        signal: options.signal,
      })
      return
    } catch (error) {
      const gw = fromDaemonError(error)
      if (gw.exitCode !== 6) throw gw
      // the daemon went away meanwhile: the state file is the owner again
    }
  }
  await withState((store) => {
    revokeKeyInState(store.data, keyId)
  }, homeFile('state'))
}
