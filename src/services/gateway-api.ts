/**
 * Reaching the running gateway's management API for read-only views (logs, usage, providers,
 * dashboard), or learning that it is not there so the caller can fall back to the files.
 */
import type {GwError} from '../core/errors.js'
import {ConfigError, InterruptedError, NotFoundError, UpstreamError} from '../core/errors.js'
import {probeHealth} from '../core/loopback-probe.js'
import {runningDaemon} from '../gateway/pidfile.js'
import {daemonClient, resolvePort} from './gateway.js'

/**
 * The port of a gateway that answers, or undefined when none does. The pid file names the
 * daemon's port; without one (a lost pid file) the configured port is probed with `/health`.
 */
export async function liveGatewayPort(signal?: AbortSignal): Promise<number | undefined> {
  const running = runningDaemon()
  const port = running?.port || resolvePort()
  // node:http, not the undici management client: when the daemon is stopped the caller reads
  // the files itself and never pays for loading undici.
  const ok = await probeHealth(port, {signal})
  if (signal?.aborted) throw new InterruptedError('Request aborted.')
  return ok ? port : undefined
}

export type Query = Record<string, string | number | undefined>

/** GET on the management API; daemon errors become the CLI's error model (404 -> exit 7). */
export async function gatewayGet<T>(
  port: number,
  path: string,
  query: Query = {},
  signal?: AbortSignal,
): Promise<T> {
  try {
    const res = await (await daemonClient(port)).request<T>('GET', path, {query, signal})
    return res.body
  } catch (error) {
    throw await fromManagementError(error)
  }
}

async function fromManagementError(error: unknown): Promise<GwError> {
  const e = error as GwError
  const status = e?.details?.status as number | undefined
  const message = e?.message?.replace(/^The (platform|local gateway) answered \d+: /, '')
  if (status === 404) return new NotFoundError(message)
  if (e?.details?.upstream_code === 'log_db_damaged') {
    return new ConfigError(message, {
      code: 'log_db_damaged',
      hint: '`gwctl gateway restart` moves the damaged file aside (logs.db.damaged-<time>) and starts a new one; model traffic is not affected.',
    })
  }
  if (status !== undefined && status >= 500) {
    return new UpstreamError(`The gateway answered ${status}: ${message}`, {
      code: String(e.details?.upstream_code ?? 'gateway_error'),
      status,
      hint: 'See the daemon log (`gwctl doctor` names it); `gwctl gateway restart` may help.',
    })
  }
  // gateway-keys pulls in the state store; only an error path needs it.
  const {fromDaemonError} = await import('./gateway-keys.js')
  return fromDaemonError(error)
}
