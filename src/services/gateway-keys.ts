/**
 * Issuing gateway keys from the CLI: through the running daemon (the key works at once), or,
 * when it is stopped, straight into the state file under the cross-process lock.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import {GwError, GatewayDownError, UsageError} from '../core/errors.js'
import type {IssueRequest, IssueResponse} from '../daemon/keys.js'
import {issueKey, validateIssueRequest} from '../daemon/keys.js'
import {runningDaemon} from '../daemon/pidfile.js'
import type {AgentView} from '../daemon/views.js'
import {agentViews} from '../daemon/views.js'
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
}

/** Issues a key: via the daemon when it runs, else into the state file under the lock. */
export async function issueGatewayKey(
  input: IssueKeyInput,
  options: {signal?: AbortSignal} = {},
): Promise<IssuedKey> {
  const request = await withEmployeeDefaults(input)
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
        return {...res.body, via: 'daemon'}
      } catch (error) {
        // a daemon that is still starting answers in a moment
        if (attempt < 50 && (error as GwError).code === 'network') {
          await sleep(100, undefined, {signal: options.signal})
          continue
        }
        throw fromDaemonError(error)
      }
    }
    const response = await withState((store) => {
      // A daemon that started meanwhile owns the keys: hand over to it.
      if (runningDaemon()) return undefined
      return issueKey(store.data, validateIssueRequest(request)).response
    }, homeFile('state'))
    if (response) return {...response, via: 'state-file'}
  }
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
  const message = error.message.replace(/^The platform answered \d+: /, '')
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
