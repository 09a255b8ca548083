/**
 * Managing the gateway daemon from the CLI: port resolution, state, detached start, stop,
 * restart, and the client of its management API.
 */
import {spawn} from 'node:child_process'
import type {BudgetView} from '../gateway/budgets.js'
import {closeSync, existsSync, fchmodSync, openSync, readFileSync, rmSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {setTimeout as sleep} from 'node:timers/promises'

import type {LoopbackClient} from '../api/loopback-client.js'
import type {TelemetryStatus} from '../gateway/telemetry.js'
import type {ExitCodeValue} from '../core/errors.js'
import {ExitCode, GatewayDownError, GwError, UsageError} from '../core/errors.js'
import {probeHealth} from '../core/loopback-probe.js'
import {formatDuration} from '../core/output.js'
import {DEFAULT_DRAIN_MS, DEFAULT_PORT, isAlive, readPidFile, runningDaemon} from '../gateway/pidfile.js'
import {describePortTaken, isPortFree} from '../gateway/port-holder.js'
import {ensureHome, homeFile} from '../store/paths.js'
import {getSetting} from '../store/settings.js'

/** The port to use: flag > GWCTL_GATEWAY_PORT > setting `gateway.port` > 4317. */
export function resolvePort(flag?: number): number {
  if (flag !== undefined) return flag
  const value = getSetting('gateway.port')
  if (value === undefined) return DEFAULT_PORT
  const port = Number(value)
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw new UsageError(`The gateway port "${value}" is not a port number.`, {
      code: 'invalid_port',
      hint: 'Set GWCTL_GATEWAY_PORT or `gwctl config set gateway.port` to 1-65535.',
    })
  }
  return port
}

/**
 * A client of the daemon's management API (one attempt, short timeouts: it is local), on node:http
 * and loaded on first use: `status` with the gateway stopped never needs it, and no daemon call
 * pays for loading the platform's undici client (more than the whole answer costs).
 */
export async function daemonClient(port: number): Promise<LoopbackClient> {
  const {LoopbackClient} = await import('../api/loopback-client.js')
  return new LoopbackClient(port)
}

/** What `/api/status` answers. */
export interface DaemonSnapshot {
  status: 'ok'
  pid: number
  port: number
  version: string
  startedAt: number
  uptimeSeconds: number
  agents: number
  enabledAgents: number
  agentsPerRoute: Array<{route: string; policyId: string; family: string; agents: number}>
  latestRequestAt: number | null
  /** Origin of the in-process simulator when started with `--sim`, else null. */
  simOrigin?: string | null
  /** Why the gateway works in a degraded way (as on `/health`), e.g. the log store cannot write. */
  degraded?: string
  /** Budgets as enforced (absent from a gateway older than budgets). */
  budgets?: BudgetView[]
  /** The Prometheus path and how OTLP export fares (docs/TELEMETRY.md). */
  telemetry?: TelemetryStatus
}

export interface GatewayInfo {
  state: 'Running' | 'Stopped' | 'Unhealthy'
  url: string
  port: number
  pid: number | null
  version: string | null
  uptimeSeconds: number | null
  startedAt: number | null
  /** The pid file named a process that is gone (after a crash or `kill -9`). */
  stalePidFile: boolean
  daemon?: DaemonSnapshot
}

/** How long `status`, `doctor` and `restart` wait for a running daemon to answer (ms). */
export const PROBE_TIMEOUT_MS = 2_000

/** What to do about a daemon that is alive but does not answer. */
export const HUNG_HINT =
  'Recover with `gwctl gateway restart`: it stops the unresponsive process (killing it after the --drain bound) and starts a new one.'

/** The gateway's state from the pid file and its `/api/status`. */
export async function getGatewayInfo(
  options: {port?: number; signal?: AbortSignal; probeTimeoutMs?: number} = {},
): Promise<GatewayInfo> {
  const info = readPidFile()
  const running = runningDaemon()
  const port = running?.port || options.port || resolvePort()
  const base = {url: `http://127.0.0.1:${port}`, port, version: null, uptimeSeconds: null, startedAt: null}
  if (!running) {
    return {...base, state: 'Stopped', pid: null, stalePidFile: info !== undefined}
  }
  try {
    // a hung daemon (alive, not answering) must not hold `status` for the client's 10 s
    const res = await (
      await daemonClient(port)
    ).request<DaemonSnapshot>('GET', '/api/status', {
      signal: options.signal,
      headersTimeoutMs: options.probeTimeoutMs ?? PROBE_TIMEOUT_MS,
    })
    const d = res.body
    return {
      ...base,
      state: 'Running',
      pid: d.pid,
      version: d.version,
      uptimeSeconds: d.uptimeSeconds,
      startedAt: d.startedAt,
      stalePidFile: false,
      daemon: d,
    }
  } catch {
    return {...base, state: 'Unhealthy', pid: running.pid, stalePidFile: false}
  }
}

/**
 * Whether the daemon runs and answers (`gwctl status --quiet`): its pid file names a live daemon
 * and `/health` answers ok within the probe timeout. The same answer as `getGatewayInfo`'s
 * state `Running`, without asking for the whole snapshot.
 */
export async function gatewayAnswers(options: {signal?: AbortSignal} = {}): Promise<boolean> {
  return (await gatewayLiveness(options)).healthy
}

/** `gwctl status --quiet --json`: the liveness check's answer, in the snapshot's own words. */
export interface GatewayLiveness {
  healthy: boolean
  gateway: {state: 'Running' | 'Stopped' | 'Unhealthy'; url: string; port: number; pid: number | null}
  problem?: string
  fix?: string
}

/** What `gatewayAnswers` checks (the pid file and `/health`), with the fields a script reads. */
export async function gatewayLiveness(options: {signal?: AbortSignal} = {}): Promise<GatewayLiveness> {
  const running = runningDaemon()
  const port = running?.port || resolvePort()
  const gateway = {url: `http://127.0.0.1:${port}`, port, pid: running?.pid ?? null}
  if (!running) {
    return {
      healthy: false,
      gateway: {state: 'Stopped', ...gateway},
      problem: 'The gateway is not running.',
      fix: 'Start it with `gwctl gateway start`.',
    }
  }
  if (await probeHealth(port, {signal: options.signal, timeoutMs: PROBE_TIMEOUT_MS})) {
    return {healthy: true, gateway: {state: 'Running', ...gateway}}
  }
  return {
    healthy: false,
    gateway: {state: 'Unhealthy', ...gateway},
    problem: `The gateway process (pid ${running.pid}) is alive but did not answer within ${PROBE_TIMEOUT_MS / 1000} s.`,
    fix: HUNG_HINT,
  }
}

/** The daemon's own entry point (no oclif: see `daemon/main.ts`). */
function daemonEntry(): string {
  return fileURLToPath(new URL('../daemon/main.js', import.meta.url))
}

function logTail(path: string, lines = 5): string {
  try {
    return readFileSync(path, 'utf8').trim().split('\n').slice(-lines).join('\n')
  } catch {
    return ''
  }
}

function healthy(port: number, signal?: AbortSignal): Promise<boolean> {
  return probeHealth(port, {signal, timeoutMs: 10_000})
}

export interface StartOptions {
  port?: number
  signal?: AbortSignal
  /** How long to wait for `/health` (ms, default 15000). */
  timeoutMs?: number
  /** Run the simulator in the daemon and route to it (`--sim`). */
  sim?: boolean
}

/** Spawns the daemon detached and waits until `/health` answers. */
export async function startGateway(options: StartOptions = {}): Promise<GatewayInfo> {
  ensureHome()
  const running = runningDaemon()
  if (running) {
    throw new UsageError(`The gateway is already running (pid ${running.pid}, port ${running.port}).`, {
      code: 'already_running',
      hint: 'Use `gwctl gateway restart` to reload policies and providers, or `gwctl gateway stop`.',
    })
  }
  const pidPath = homeFile('pid')
  if (existsSync(pidPath)) rmSync(pidPath, {force: true}) // stale: its process is gone
  // the daemon would refuse a broken state file: say so here, as every other command does (exit 3)
  // (loaded here: `status`, `logs` and `usage` share this module and need no schema validator)
  const {StateCorruptError, inspectStateFile} = await import('../store/state.js')
  const state = inspectStateFile()
  if (state.exists && state.problems.length > 0)
    throw new StateCorruptError(state.path, state.problems.join('; '))
  const port = resolvePort(options.port)
  if (!(await isPortFree(port))) {
    throw new UsageError(describePortTaken(port), {
      code: 'port_in_use',
      hint: 'Stop that process, or choose another port with --port, GWCTL_GATEWAY_PORT or `gwctl config set gateway.port`.',
    })
  }
  const logPath = homeFile('daemonLog')
  const logFd = openSync(logPath, 'a', 0o600)
  try {
    fchmodSync(logFd, 0o600) // also a log an older version (or a user) created with 0644
  } catch {
    // not ours to change
  }
  let exited: number | null | undefined
  try {
    const child = spawn(
      process.execPath,
      [daemonEntry(), '--port', String(port), ...(options.sim ? ['--sim'] : [])],
      {
        detached: true,
        stdio: ['ignore', logFd, logFd],
        env: {...process.env, NO_COLOR: '1'},
      },
    )
    child.on('exit', (code) => (exited = code))
    child.unref()
  } finally {
    closeSync(logFd)
  }
  const deadline = Date.now() + (options.timeoutMs ?? 15_000)
  while (Date.now() < deadline) {
    if (exited !== undefined) {
      // the daemon's own exit code says what kind of failure it was (3: bad state file, ...)
      const code = Object.values(ExitCode).includes(exited as ExitCodeValue) && exited ? exited : 1
      throw new GwError(
        'start_failed',
        `The gateway did not start:\n${logTail(logPath)}`,
        code as ExitCodeValue,
        {
          hint: `See the daemon log ${logPath}.`,
        },
      )
    }
    if (runningDaemon() && (await healthy(port, options.signal))) {
      await recordStart({port, sim: Boolean(options.sim)})
      return getGatewayInfo({port})
    }
    await sleep(100, undefined, {signal: options.signal})
  }
  throw new GatewayDownError(`The gateway did not answer on port ${port} in time.`, {
    code: 'start_timeout',
    hint: `See the daemon log ${logPath}.`,
  })
}

export interface StopOptions {
  /** How long in-flight requests may take to finish (ms). */
  drainMs?: number
  signal?: AbortSignal
}

/** Stops the daemon with SIGTERM (it drains in-flight requests), SIGKILL after the bound. */
export async function stopGateway(
  options: StopOptions = {},
): Promise<{wasRunning: boolean; pid: number | null}> {
  const info = readPidFile()
  const running = runningDaemon()
  if (!running) {
    if (info) removeQuietly(homeFile('pid'))
    return {wasRunning: false, pid: null}
  }
  // a stopped process (SIGSTOP, Ctrl-Z) would hold SIGTERM pending until the kill: let it drain
  try {
    process.kill(running.pid, 'SIGCONT')
  } catch {
    // gone already
  }
  process.kill(running.pid, 'SIGTERM')
  const deadline = Date.now() + (options.drainMs ?? DEFAULT_DRAIN_MS) + 5_000
  while (isAlive(running.pid) && Date.now() < deadline) await sleep(50)
  if (isAlive(running.pid)) {
    process.kill(running.pid, 'SIGKILL')
    while (isAlive(running.pid)) await sleep(50)
  }
  // The daemon removes its pid file itself; one left behind (a read-only or full home refused
  // the unlink, or the daemon was killed) names a dead process, which every command treats as
  // stale and `gateway start` replaces: the stop has succeeded either way.
  if (readPidFile()?.pid === running.pid) removeQuietly(homeFile('pid'))
  return {wasRunning: true, pid: running.pid}
}

/**
 * Stops (if running) and starts again, on the same port unless another is given, and with the
 * simulator when the running daemon had it (a stopped one: when its last start had it) unless
 * `sim` says otherwise.
 */
export async function restartGateway(options: StartOptions & StopOptions = {}): Promise<GatewayInfo> {
  const running = runningDaemon()
  let sim = options.sim
  if (sim === undefined && !running) sim = lastStart()?.sim // stopped: as it last ran
  if (sim === undefined && running) {
    // a busy daemon gets the client's full 10 s here: a missed answer would drop its --sim
    const info = await getGatewayInfo({port: running.port, signal: options.signal, probeTimeoutMs: 10_000})
    sim = Boolean(info.daemon?.simOrigin)
  }
  await stopGateway(options)
  return startGateway({...options, sim, port: options.port ?? running?.port})
}

/** How the gateway was last started (`<home>/gateway-last-start.json`). */
export interface LastStart {
  port: number
  /** Started with the simulator (`--sim`). */
  sim: boolean
  /** Unix ms of that start. */
  at: number
}

/**
 * Records how the gateway was started, so that a later start "as it last ran" (the app's `S`)
 * starts it the same way. Atomic and 0600; a home that refuses the write loses only this memory.
 */
export async function recordStart(start: {port: number; sim: boolean}): Promise<void> {
  try {
    const {writeFileAtomic} = await import('../core/atomic-file.js')
    await writeFileAtomic(homeFile('lastStart'), JSON.stringify({...start, at: Date.now()}) + '\n')
  } catch {
    // a read-only or full home: the next start "as it last ran" falls back to the defaults
  }
}

/** The last start's port and simulator, or undefined when none is recorded (or it is unreadable). */
export function lastStart(): LastStart | undefined {
  try {
    const v = JSON.parse(readFileSync(homeFile('lastStart'), 'utf8')) as Partial<LastStart>
    if (!Number.isInteger(v.port) || v.port! < 1 || v.port! > 65535 || typeof v.sim !== 'boolean')
      return undefined
    return {port: v.port!, sim: v.sim, at: typeof v.at === 'number' ? v.at : 0}
  } catch {
    return undefined
  }
}

/**
 * How a start "as it last ran" starts the gateway: on the port and with the simulator of the last
 * recorded start (`gateway start`, `gateway restart`, the app's `S`), else on the configured port
 * without the simulator. `command` is the `gwctl gateway start` line that does the same.
 */
export function startPlan(): {port: number; sim: boolean; command: string; last: boolean} {
  const last = lastStart()
  const port = last?.port ?? resolvePort()
  const sim = last?.sim ?? false
  const flags = [
    ...(sim ? ['--sim'] : []),
    ...(last && last.port !== resolvePort() ? ['--port', String(port)] : []),
  ]
  return {port, sim, command: ['gwctl gateway start', ...flags].join(' '), last: last !== undefined}
}

/** Starts the gateway as it last ran (`startPlan`): what the app's `S` does. */
export async function startGatewayAsLastRan(
  options: {signal?: AbortSignal} = {},
): Promise<GatewayInfo & {plan: ReturnType<typeof startPlan>}> {
  const plan = startPlan()
  const info = await startGateway({port: plan.port, sim: plan.sim, signal: options.signal})
  return {...info, plan}
}

/** True while a gateway daemon of this GWCTL_HOME runs. */
export function isGatewayRunning(): boolean {
  return runningDaemon() !== undefined
}

/** Asks the running daemon; a GatewayDownError when it is not running. */
export function requireRunning(): {pid: number; port: number} {
  const running = runningDaemon()
  if (!running) {
    throw new GatewayDownError('The gateway is not running.', {hint: 'Start it with `gwctl gateway start`.'})
  }
  return running
}

/** The lines `gwctl gateway` prints, as data. */
export function gatewayStateFields(state: GatewayInfo): Record<string, string | number | undefined> {
  return {
    state: state.state,
    url: state.url,
    pid: state.pid ?? undefined,
    port: state.port,
    uptime: state.uptimeSeconds === null ? undefined : formatDuration(state.uptimeSeconds * 1000),
    version: state.version ?? undefined,
    simulator: state.daemon?.simOrigin ?? undefined,
    note: state.stalePidFile
      ? 'a stale pid file was found (the daemon was killed); `gwctl gateway start` replaces it'
      : state.state === 'Unhealthy'
        ? `the process is alive but did not answer within ${PROBE_TIMEOUT_MS / 1000} s. ${HUNG_HINT}`
        : undefined,
  }
}

/** Removes a stale pid file; a home that refuses (read-only, full) keeps it, which is harmless. */
function removeQuietly(path: string): void {
  try {
    rmSync(path, {force: true})
  } catch {
    // a stale pid file names a dead process: `gateway start` replaces it
  }
}
