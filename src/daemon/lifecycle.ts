/**
 * The daemon in the foreground (`gwctl gateway run`; `gateway start` spawns it detached):
 * single-instance pid file, the state lock held for life, state load, listen on 127.0.0.1,
 * lazy saves of last-seen times, and a graceful stop on abort (SIGTERM / SIGINT).
 */
import {GwError, ExitCode} from '../core/errors.js'
import {LogStore} from '../store/log-store.js'
import {homeFile} from '../store/paths.js'
import {getSetting} from '../store/settings.js'
import {StateStore, lockState, removeStaleTempFiles} from '../store/state.js'
import {entranceRoutes} from './entrances.js'
import {KeyIndex} from './keys.js'
import {managementRoutes} from './management.js'
import {DEFAULT_DRAIN_MS, claimPidFile, releasePidFile} from './pidfile.js'
import {describePortTaken} from './port-holder.js'
import {Router} from './router/index.js'
import {policyProblems} from './router/policy.js'
import type {Routing} from './routing.js'
import type {HistoryScanner} from './history-scanner.js'
import {startHistoryScanner} from './history-scanner.js'
import {effectivePolicies, effectiveProviders, platformSettings} from './routing.js'
import type {GatewayContext, Route} from './server.js'
import {listen} from './server.js'

/** Last-seen times are saved at most this often. */
const TOUCH_SAVE_MS = 5_000

export interface DaemonOptions {
  port: number
  version: string
  /** Aborting it stops the daemon gracefully. */
  signal: AbortSignal
  drainMs?: number
  /** One line to the daemon log (default: stdout). */
  log?: (line: string) => void
  /** Start the simulator in-process and add its providers (`--sim`). */
  sim?: boolean
}

/** Days of request logs kept: setting `logs.retention-days`, default 30. */
export const DEFAULT_RETENTION_DAYS = 30

function retentionDays(): number {
  const value = Number(getSetting('logs.retention-days'))
  return Number.isInteger(value) && value > 0 ? value : DEFAULT_RETENTION_DAYS
}

/** Every route of the gateway (management first). */
export function gatewayRoutes(): Route[] {
  return [...managementRoutes(), ...entranceRoutes()]
}

/** The daemon could not start. */
export class DaemonStartError extends GwError {}

/** Runs the daemon until `signal` aborts; resolves after a graceful stop. */
export async function runDaemon(options: DaemonOptions): Promise<void> {
  const stdoutLog = options.log ? undefined : batchedStdout()
  const log = options.log ?? stdoutLog!.log
  const statePath = homeFile('state')

  const claim = claimPidFile(options.port)
  if (!claim.ok) {
    throw new DaemonStartError(
      'already_running',
      `The gateway is already running (pid ${claim.holder.pid}, port ${claim.holder.port}).`,
      ExitCode.usage,
      {hint: 'Stop it with `gwctl gateway stop`, or use `gwctl gateway restart`.'},
    )
  }

  let timer: NodeJS.Timeout | undefined
  let onWarning: ((warning: Error) => void) | undefined
  let routing: Routing | undefined
  let sim: {origin: string; close(): Promise<void>} | undefined
  let historyScanner: HistoryScanner | undefined
  try {
    // Load under the lock, so a CLI change that started before this daemon claimed the pid file is
    // complete (and seen) first.
    const release = await lockState(statePath, {waitMs: 5000})
    let store: StateStore
    try {
      removeStaleTempFiles(statePath)
      store = await StateStore.open(statePath, {mode: 'daemon'})
    } finally {
      await release()
    }
    if (store.created) await store.save()

    if (options.sim) {
      const {startSim} = await import('../sim/server.js')
      sim = await startSim({port: 0, host: '127.0.0.1'})
    }
    const providers = effectiveProviders(store.data, {
      env: process.env,
      platform: platformSettings(),
      simOrigin: sim?.origin,
    })
    const policies = effectivePolicies(store.data.policies, providers)
    for (const policy of policies)
      for (const problem of policyProblems(policy, providers))
        log(`${new Date().toISOString()} warning: ${problem}`)
    let logs: LogStore
    try {
      logs = await LogStore.open(homeFile('logDb'), {retentionDays: retentionDays()})
    } catch (error) {
      throw new DaemonStartError(
        'log_db_unreadable',
        `The request log database ${homeFile('logDb')} cannot be opened: ${(error as Error).message}`,
        ExitCode.unexpected,
        {
          hint: `Run \`gwctl doctor\`; to start afresh move it away: mv ${homeFile('logDb')} ${homeFile('logDb')}.bad`,
        },
      )
    }
    routing = {
      router: new Router({
        logStore: logs,
        onError: (message) => log(`${new Date().toISOString()} error: ${message}`),
      }),
      logs,
      providers,
      policies: new Map(policies.map((p) => [p.id, p])),
      simOrigin: sim?.origin,
    }

    const context: GatewayContext = {
      store,
      index: new KeyIndex(store.data),
      port: options.port,
      version: options.version,
      startedAt: Date.now(),
      log,
      routing,
      touch() {
        timer ??= setTimeout(() => {
          timer = undefined
          store
            .save()
            .catch((error: Error) =>
              log(`${new Date().toISOString()} warning: save failed: ${error.message}`),
            )
        }, TOUCH_SAVE_MS)
      },
    }

    // The log store reports a batch it could not write (a full or read-only disk) as a process
    // warning: the first is logged, and /health says the gateway is degraded from then on.
    onWarning = (warning: Error): void => {
      if (!warning.message.startsWith('gwctl log store:')) return
      if (!context.degraded)
        log(`${new Date().toISOString()} error: ${warning.message} (usage rows are being lost)`)
      context.degraded = `${warning.message.replace(/^gwctl /, '')} (since ${new Date().toISOString()})`
    }
    process.on('warning', onWarning)

    let server
    try {
      server = await listen(gatewayRoutes(), context, options.port)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EADDRINUSE') {
        throw new DaemonStartError('port_in_use', describePortTaken(options.port), ExitCode.usage, {
          hint: 'Stop that process, or pick another port with --port or GWCTL_GATEWAY_PORT.',
        })
      }
      if (code === 'EACCES') {
        throw new DaemonStartError(
          'port_denied',
          `Port ${options.port} may not be used by this user.`,
          ExitCode.unexpected,
          {
            hint: 'Pick a port above 1024 with --port.',
          },
        )
      }
      throw error
    }
    // Agent history into the log database: on start and every 60 s, off the request path.
    historyScanner = await startHistoryScanner({dbPath: homeFile('logDb'), log})
    log(
      `${new Date().toISOString()} gwctl gateway ${options.version} listening on http://127.0.0.1:${server.port} (pid ${process.pid}, ${store.data.agents.length} agents, ${store.data.policies.length} policies, ${providers.length} providers${sim ? `, simulator at ${sim.origin}` : ''})`,
    )

    await new Promise<void>((resolve) => {
      if (options.signal.aborted) resolve()
      else options.signal.addEventListener('abort', () => resolve(), {once: true})
    })
    log(`${new Date().toISOString()} stopping: draining in-flight requests`)
    await server.stop(options.drainMs ?? DEFAULT_DRAIN_MS)
    if (timer) clearTimeout(timer)
    timer = undefined
    await store.save()
    log(`${new Date().toISOString()} stopped`)
  } finally {
    if (timer) clearTimeout(timer)
    if (onWarning) process.off('warning', onWarning)
    await historyScanner?.stop().catch(() => undefined)
    if (routing) {
      await routing.router.close().catch(() => undefined)
      routing.logs.close() // writes the queued rows first
    }
    await sim?.close().catch(() => undefined)
    releasePidFile()
    stdoutLog?.flush()
  }
}

/**
 * Daemon log lines to stdout, written together once per event loop turn: every request logs a
 * line, and stdout to a file is one synchronous write per call.
 */
function batchedStdout(): {log: (line: string) => void; flush: () => void} {
  let pending = ''
  const flush = (): void => {
    const text = pending
    pending = ''
    if (!text) return
    try {
      process.stdout.write(text)
    } catch {
      // stdout is the daemon log file: a full or read-only disk makes this synchronous write
      // throw (ENOSPC, EROFS). The lines are dropped; the gateway keeps serving (issue 14).
    }
  }
  return {
    log(line) {
      if (!pending) setImmediate(flush)
      pending += line + '\n'
    },
    flush,
  }
}
