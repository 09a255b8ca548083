/**
 * Reaching the running gateway's management API for read-only views (logs, usage, providers,
 * dashboard), or learning that it is not there so the caller can fall back to the files.
 */
import type {GwError} from '../core/errors.js'
import {NotFoundError, UpstreamError} from '../core/errors.js'
import {runningDaemon} from '../daemon/pidfile.js'
import {daemonClient, resolvePort} from './gateway.js'
import {fromDaemonError} from './gateway-keys.js'

/**
 * The port of a gateway that answers, or undefined when none does. The pid file names the
 * daemon's port; without one (a lost pid file) the configured port is probed with `/health`.
 */
export async function liveGatewayPort(signal?: AbortSignal): Promise<number | undefined> {
  const running = runningDaemon()
  const port = running?.port || resolvePort()
  try {
    const client = await daemonClient(port)
    const res = await client.request<{status?: string}>('GET', '/health', {signal})
    return res.body?.status === 'ok' ? port : undefined
  } catch (error) {
    if (signal?.aborted) throw error
    return undefined
  }
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
    throw fromManagementError(error)
  }
}

function fromManagementError(error: unknown): GwError {
  const e = error as GwError
  const status = e?.details?.status as number | undefined
  const message = e?.message?.replace(/^The (platform|local gateway) answered \d+: /, '')
  if (status === 404) return new NotFoundError(message)
  if (status !== undefined && status >= 500) {
    return new UpstreamError(`The gateway answered ${status}: ${message}`, {
      code: String(e.details?.upstream_code ?? 'gateway_error'),
      status,
      hint: 'See the daemon log (`gwctl doctor` names it); `gwctl gateway restart` may help.',
    })
  }
  return fromDaemonError(error)
}
