/**
 * The daemon in the foreground (`gwctl gateway run`; `gateway start` spawns it detached):
 * single-instance pid file, the state lock held for life, state load, listen on 127.0.0.1,
 * lazy saves of last-seen times, and a graceful stop on abort (SIGTERM / SIGINT).
 */
import {fstatSync, writeSync} from 'node:fs'
import {availableParallelism} from 'node:os'

import {GwError, ExitCode} from '../core/errors.js'
import {LogStore, logWriterMode} from '../store/log-store.js'
import {checkInWorker, markDamaged, startCheckMaxBytes} from '../store/log-db-check.js'
import {homeFile, pendingFileOf} from '../store/paths.js'
import {getSetting} from '../store/settings.js'
import {StateStore, removeStaleTempFiles} from '../store/state.js'
import {lockFile, lockState} from '../store/state-lock.js'
import {entranceRoutes} from './entrances.js'
import {KeyIndex} from '../gateway/keys.js'
import {managementRoutes} from './management.js'
import {DEFAULT_DRAIN_MS, claimPidFile, releasePidFile} from '../gateway/pidfile.js'
import {describePortTaken} from '../gateway/port-holder.js'
import {Router} from './router/index.js'
import {policyProblems} from '../gateway/policy.js'
import type {Routing} from './routing.js'
import type {HistoryScanner} from './history-scanner.js'
import {startHistoryScanner} from './history-scanner.js'
import {effectivePolicies, effectiveProviders, platformSettings} from '../gateway/effective-providers.js'
import type {GatewayContext, Route} from './server.js'
import {listen} from './server.js'
import {endQuietStartAtFirst} from './quiet-start.js'
import {installBudgets} from './budgets.js'
import {Telemetry, otlpConfig} from './telemetry/telemetry.js'

/**
 * How long the start waits for a command applying the log's side file (ms): the apply waits at
 * most 2 s for logs.db's lock (services/log-pending.ts) and writes 200 000 rows in 3 s on 2 cores,
 * 10 s and more on a loaded one; the start waits for it as long as `gateway start`'s 15 s allow.
 */
const SPILL_LOCK_WAIT_MS = 13_500

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

/**
 * The full check of a log database too large to check before the gateway listens: in a worker
 * thread, while the gateway serves. Damage is marked for the next start to move the file aside,
 * and /health says so meanwhile (as for damage a query meets).
 */
function checkLogDbLater(
  path: string,
  bytes: number,
  context: GatewayContext,
  log: (line: string) => void,
): void {
  const mb = (bytes / 1024 / 1024).toFixed(0)
  void checkInWorker(path).then((result) => {
    const now = new Date().toISOString()
    if (!result.checked)
      log(`${now} warning: log database: its full check could not run: ${result.problems[0]}`)
    else if (result.ok) log(`${now} log database: full check ok (${mb} MB, ${result.ms} ms, after the start)`)
    else {
      const reason = result.problems.join('; ')
      markDamaged(path, reason)
      context.degrade?.('log database', `it is damaged (${reason}); \`gwctl gateway restart\` moves it aside`)
    }
  })
}

/** The daemon could not start. */
export class DaemonStartError extends GwError {}

/**
 * Runs the daemon until SIGTERM or SIGINT (`gateway run` and the detached daemon's entry point).
 * The first signal starts a graceful stop; repeats (some libraries re-raise the signal) must not
 * cut the drain short: the stop has its own bound.
 */
export async function runDaemonUntilSignalled(options: Omit<DaemonOptions, 'signal'>): Promise<void> {
  const stop = new AbortController()
  const onSignal = (): void => stop.abort()
  process.on('SIGTERM', onSignal)
  process.on('SIGINT', onSignal)
  try {
    await runDaemon({...options, signal: stop.signal})
  } finally {
    process.off('SIGTERM', onSignal)
    process.off('SIGINT', onSignal)
  }
}

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
  let stopping = false
  // Until the gateway context exists, a log store problem (a full disk at start) waits here.
  let earlyProblem: string | undefined
  let onLogProblem = (problem: string | undefined): void => {
    earlyProblem = problem
  }
  let routing: Routing | undefined
  let sim: {origin: string; close(): Promise<void>} | undefined
  let historyScanner: HistoryScanner | undefined
  let telemetry: Telemetry | undefined
  try {
    // a bad telemetry setting stops the start here, with its rule (exit 3)
    const otlp = otlpConfig(options.version)
    // Load under the lock, so a CLI change that started before this daemon claimed the pid file is
    // complete (and seen) first.
    // A live holder is a CLI change in progress (milliseconds each, but a burst of them queues on
    // a loaded machine): wait for it, well inside `gateway start`'s 15 s wait for /health.
    const release = await lockState(statePath, {waitMs: 10_000})
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
    // A damaged log database (its header overwritten, a bad page) would keep the gateway down or
    // answer 500 to every usage query: it goes aside and the gateway starts on a new one. Model
    // traffic never needed it; /health, `status` and `doctor` say what happened until a restart.
    let movedAside: {movedTo: string; reason: string} | undefined
    // a large file gets a quick look here and its full check after the gateway listens
    let checkLater: number | undefined
    // The log store's side file (logs.pending) is this daemon's from its log store's open to its
    // close. A command of a stopped gateway applies it under this lock after finding no live
    // daemon in the pid file (claimed above): taken here, a command applying it right now
    // finishes first, and a later one sees this daemon and leaves the file alone
    // (services/log-pending.ts).
    let releaseSpill: () => Promise<void>
    try {
      releaseSpill = await lockFile(pendingFileOf(homeFile('logDb')), {waitMs: SPILL_LOCK_WAIT_MS})
    } catch (error) {
      throw new DaemonStartError(
        'log_pending_locked',
        `The request log's side file ${pendingFileOf(homeFile('logDb'))} stayed locked by another gwctl process for ${SPILL_LOCK_WAIT_MS / 1000} s: ${(error as Error).message}`,
        ExitCode.config,
        {hint: 'Wait for that command to end (it applies the waiting rows to logs.db), then start again.'},
      )
    }
    try {
      movedAside = LogStore.moveAsideIfDamaged(homeFile('logDb'), new Date(), {
        fullCheckMaxBytes: startCheckMaxBytes(),
        deferred: (bytes) => (checkLater = bytes),
      })
    } catch {
      // not damage (locked, unreadable): the open below reports it
    }
    try {
      logs = await LogStore.open(homeFile('logDb'), {
        retentionDays: retentionDays(),
        onWriteProblem: (problem) => onLogProblem(problem),
        // SQLite's writes move to a thread of their own under load on a machine with cores to
        // spare (`auto`, issue 32): they are ~7 % of the request thread at 64 connections on 16
        // cores; the thread costs ~10 MB, paid only by a daemon that gets busy. GWCTL_LOG_WRITER
        // (thread, inline, auto) decides instead
        writer: logWriterMode(process.env.GWCTL_LOG_WRITER, availableParallelism()),
        onWriterThread: (failed) =>
          log(
            failed === undefined
              ? `${new Date().toISOString()} the log is written on a thread of its own from now on (the request rate rose)`
              : `${new Date().toISOString()} warning: the log writer thread did not start (${failed}); the log is written on the request thread`,
          ),
      })
    } catch (error) {
      throw new DaemonStartError(
        'log_db_unreadable',
        `The request log database ${homeFile('logDb')} cannot be opened: ${(error as Error).message}`,
        ExitCode.config,
        {
          hint: `Run \`gwctl doctor\`; to start afresh move it away: mv ${homeFile('logDb')} ${homeFile('logDb')}.bad`,
        },
      )
    } finally {
      await releaseSpill().catch(() => undefined)
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

    telemetry = await Telemetry.start({routing, otlp})
    if (otlp) log(`${new Date().toISOString()} exporting OpenTelemetry spans and metrics to ${otlp.endpoint}`)

    // sources of degradation (`log store`, `state`) and why
    const problems = new Map<string, string>()
    const context: GatewayContext = {
      store,
      index: new KeyIndex(store.data),
      port: options.port,
      version: options.version,
      startedAt: Date.now(),
      log,
      routing,
      telemetry,
      degrade(source, reason) {
        const now = new Date().toISOString()
        if (reason === undefined) {
          if (!problems.delete(source)) return
          log(`${now} ${source}: writing again`)
        } else {
          if (problems.has(source)) return
          problems.set(source, `${source}: ${reason} (since ${now})`)
          log(`${now} error: ${source}: ${reason}`)
        }
        context.degraded = problems.size > 0 ? [...problems.values()].join('; ') : undefined
      },
      touch() {
        if (stopping) return // the final save on stop writes what is left
        timer ??= setTimeout(() => {
          timer = undefined
          store
            .save()
            .then(() => context.degrade?.('state', undefined))
            .catch((error: Error) => {
              context.degrade?.('state', `could not save ${store.path}: ${error.message}`)
              context.touch() // try again later: the last-seen times are still only in memory
            })
        }, TOUCH_SAVE_MS)
      },
    }

    // The log store reports when its writes start failing (a full or read-only disk) and when they
    // work again: each change is logged once, and /health says the gateway is degraded meanwhile
    // (usage rows of the requests in between are lost; model traffic still flows).
    onLogProblem = (problem) => context.degrade?.('log store', problem)
    if (earlyProblem) onLogProblem(earlyProblem)
    // said until the next restart: the rows in the moved file are not in `logs`/`usage` any more
    if (movedAside)
      context.degrade?.(
        'log database',
        `it was damaged (${movedAside.reason}) and was moved aside to ${movedAside.movedTo}; logging goes on in a new one`,
      )

    // Budgets: counters re-read from the log database (none: nothing loaded, nothing per request).
    // A spend that cannot be read is not guessed: the gateway serves without budgets, says so on
    // /health and in its log, and `gwctl budgets set` (a reload) tries again.
    if (store.data.budgets?.length) {
      try {
        await installBudgets(context, store.data.budgets)
      } catch (error) {
        context.degrade?.(
          'budgets',
          `not enforced: their spend could not be read (${(error as Error).message})`,
        )
      }
    }

    let server
    try {
      const routes = gatewayRoutes()
      // TurboFan back with the first model request, when main.ts started without it
      endQuietStartAtFirst(routes.filter((route) => !route.management))
      server = await listen(routes, context, options.port)
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
    if (checkLater !== undefined) checkLogDbLater(homeFile('logDb'), checkLater, context, log)
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
    await store.save().catch((error: Error) => {
      // a read-only or full home: the last-seen times since the last save are lost, nothing else
      log(`${new Date().toISOString()} error: state: could not save ${store.path} on stop: ${error.message}`)
    })
    log(`${new Date().toISOString()} stopped`)
  } finally {
    stopping = true
    if (timer) clearTimeout(timer)
    await historyScanner?.stop().catch(() => undefined)
    await telemetry?.close().catch(() => undefined)
    if (routing) {
      await routing.router.close().catch(() => undefined)
      routing.logs.close() // writes the queued rows first
    }
    await sim?.close().catch(() => undefined)
    if (!releasePidFile())
      log(`${new Date().toISOString()} warning: could not remove the pid file (stale now)`)
    stdoutLog?.flush()
  }
}

/**
 * Daemon log lines to stdout, written together once per event loop turn: every request logs a
 * line, and stdout to a file is one synchronous write per call.
 */
function batchedStdout(): {log: (line: string) => void; flush: () => void} {
  let pending = ''
  let lost = 0
  // A detached daemon's stdout is its log file. Written with writeSync, a full or read-only disk
  // throws here, where it is caught: process.stdout would emit an unhandled 'error' and kill the
  // daemon, which must keep serving. A terminal or a pipe (`gateway run`) keeps process.stdout.
  const toFile = isFile(1)
  const flush = (): void => {
    const text = pending
    pending = ''
    if (!text) return
    if (!toFile) {
      process.stdout.write(text)
      return
    }
    const note =
      lost > 0
        ? `${new Date().toISOString()} warning: ${lost} daemon log lines were lost (the disk was full or unwritable)\n`
        : ''
    try {
      writeSync(1, note + text)
      lost = 0
    } catch {
      lost += text.split('\n').length - 1
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

function isFile(fd: number): boolean {
  try {
    return fstatSync(fd).isFile()
  } catch {
    return false
  }
}
